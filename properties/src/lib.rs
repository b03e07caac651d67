//! walcheck-properties: what a checkable system declares and how its properties are checked.
//!
//! [`system`] is the vocabulary a system is described in: property kinds and declarations,
//! bounds with their ranges, trace variables, sequence-diagram lanes and fairness, and the
//! [`system::System`] trait. [`checker`] is walcheck's deterministic breadth-first checker of
//! `always` and `sometimes` properties over any `stateright::Model`; [`compact`] is its
//! successor over fingerprints, one exploration deciding every safety property and witness at
//! once, on several threads (not yet wired into `walcheck check`); [`liveness`] checks
//! `eventually` properties under fairness on the explored graph. Not for: the models themselves (`walcheck-model`, `walcheck-systems`), traces
//! on disk (`walcheck-traces`) or the command line (`walcheck`).

pub mod checker;
pub mod compact;
pub mod liveness;
pub mod pg_view;
pub mod system;

#[doc(hidden)]
pub use stateright as __stateright;
