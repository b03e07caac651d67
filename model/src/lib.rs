//! walcheck's models: pure state machines of PostgreSQL's WAL pointers and logical slots and of
//! the CDC connectors that acknowledge them, from which the checkable systems (`walcheck-systems`)
//! are built; connector files (`walcheck-lang`) run on its PostgreSQL model (`pg`) too.
//!
//! This crate has no I/O, no clock and no randomness: the checker, the simulator and the
//! model-based tests all drive the same transition functions. It is not a PostgreSQL emulator:
//! it keeps only the pointers and positions the acknowledgement logic depends on, and every
//! function that models upstream behaviour names the source file, function and version.

pub mod electric;
pub mod lsn;
pub mod olake;
pub mod pg;

pub use lsn::{Lsn, ParseLsnError, WalPosition};
