//! Reference implementations of the fixed designs: small concurrent Rust code a connector author
//! can port, tied to the model so the two cannot drift.
//!
//! - [`bootstrap`]: OLake #1084's bootstrap, [`bootstrap::advance_until_confirmed`], over a
//!   [`bootstrap::SlotApi`] that the model's PostgreSQL, a live server (`live`, not under
//!   `cfg(loom)`) and a scripted fake implement.
//! - [`shape_log`]: Electric's shape-log pipeline with #4064's fix — a writer per shape that
//!   buffers and flushes on size and on a timer, a consumer that defers `:flushed` offsets while a
//!   transaction is pending and aligns them to transaction boundaries, and one flush tracker
//!   computing the global acknowledged offset.
//!
//! Under `--cfg loom` the pipeline's `Mutex`, `Arc` and atomics are loom's
//! (`sim/tests/loom_reference.rs` explores every interleaving of its threads); otherwise std's.
//! `sim/tests/reference_model.rs` runs the pipeline single-threaded against the `electric-flush`
//! model, step by step, with proptest-state-machine.
//!
//! Not for: deciding what upstream does (the model does); these are the designs the model
//! proves, written as code.

pub mod bootstrap;
pub mod shape_log;
pub mod sync;
