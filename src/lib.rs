//! walcheck: the check catalogue, the reports, and the command line's work.
//!
//! The `walcheck` binary only parses arguments and prints; everything it does is a call into this
//! library, which the tests make too. Not for: models (`walcheck-model`, `walcheck-systems`), the
//! checkers (`walcheck-properties`), traces on disk (`walcheck-traces`), timed simulation
//! (`walcheck-sim`) or the live server (`walcheck-live`).

pub use walcheck_properties::{checker, liveness};

pub mod baseline;
pub mod bench;
pub mod catalogue;
pub mod ci;
pub mod explore;
pub mod heap;
pub mod progress;
pub mod report;
pub mod run;
pub mod triage;
