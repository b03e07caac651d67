//! walcheck-properties: what a checkable system declares — the authoring API every system, built
//! in, a user's or a connector file's, is written in.
//!
//! [`cdc`] holds the CDC invariants designs are checked against (`no-data-loss`,
//! `ack-within-durable`, `wal-pointers-ordered`, `eventually-acknowledged`), each declared once
//! and shared by the built-in systems and the connector language. [`system`] is the one trait
//! every system implements, [`system::System`] (stateright's `Model` in shape, with a typed
//! configuration), the model walcheck makes of each configuration ([`system::Model`]) and the
//! trait the engines take ([`system::CheckModel`]), and the vocabulary a system is described
//! in: property kinds and declarations, bounds with their ranges, trace variables,
//! sequence-diagram lanes and fairness. [`verdict`] is what a search concludes and a system expects;
//! [`codec`] how a system's states may be packed into bytes; [`pg_view`] PostgreSQL's trace
//! variables. Not for: searching (the engines are `walcheck-engine`, which depends on this crate
//! and never the other way), the models themselves (`walcheck-model`, `walcheck-systems`),
//! traces on disk (`walcheck-traces`) or the command line (`walcheck`).

pub mod cdc;
pub mod codec;
pub mod declaration;
pub mod pg_view;
pub mod property;
pub mod system;
pub mod verdict;
pub mod view;

#[doc(hidden)]
pub use stateright as __stateright;
