//! walcheck-sim: timed deterministic simulation of walcheck's models.
//!
//! `walcheck simulate` drives the `olake-bootstrap` model under a virtual clock in microseconds:
//! an event queue ordered by (time, scheduling order), one ChaCha8 generator per attempt seeded
//! from a u64, and a client workload, the walwriter and the connector whose events become the
//! model's own actions, applied only when the model enables them. It reproduces OLake #1084's
//! when-it-appears tables (the sync and async load ladders) in a fraction of a second, exports any
//! violating attempt as an ITF trace that `walcheck replay` re-executes, and in swarm mode draws
//! the parameters per seed.
//!
//! The live backend (crate `walcheck-live`) is the other half: it starts throwaway PostgreSQL
//! servers, checks each modelled rule against one, runs the ladders live, and records what it
//! observes as traces that [`observed`] replays against the model.
//!
//! [`reference`](mod@reference) holds concurrent Rust implementations of the fixed designs (OLake #1084's
//! bootstrap, Electric's shape-log pipeline with #4064), checked with loom under `--cfg loom` and
//! against the model step by step.
//!
//! Not for: deciding what a step does (the model does), or searching every interleaving (the
//! checker does).

pub mod engine;
pub mod ladder;
pub mod observed;
pub mod params;
pub mod plot;
pub mod queue;
pub mod reference;
pub mod report;
pub mod run;
pub mod stats;
pub mod swarm;

pub use ladder::LadderKind;
pub use params::{Params, PARAMS, PARAMS_SETS};
pub use run::{parse_spec, simulate, Options, Report};
