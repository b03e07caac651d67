//! walcheck: the check catalogue, the checkers, the reports, and the command line's work.
//!
//! The `walcheck` binary only parses arguments and prints; everything it does is a call into this
//! library, which the tests make too. Not for: models (`walcheck-model`), traces on disk
//! (`walcheck-traces`) or timed simulation (`walcheck-sim`).

pub mod baseline;
pub mod bench;
pub mod catalogue;
pub mod checker;
pub mod ci;
pub mod compact;
pub mod explore;
pub mod heap;
pub mod liveness;
pub mod progress;
pub mod report;
pub mod run;
pub mod triage;
