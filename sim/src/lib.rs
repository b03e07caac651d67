//! walcheck-sim: timed deterministic simulation of walcheck's models under virtual time, the live
//! PostgreSQL backend, and reference implementations of the fixed designs.
//!
//! Not built yet: each arrives with its own issue, and each will drive the models in
//! `walcheck-model` through their transition functions rather than a second semantics.
