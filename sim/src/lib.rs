//! walcheck-sim: timed deterministic simulation.
pub mod engine;
pub mod ladder;
pub mod params;
pub mod queue;
pub mod stats;
