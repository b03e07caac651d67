//! walcheck-sim's integration tests, in one binary: a module per area. `loom_reference` is built
//! only with `RUSTFLAGS="--cfg loom"` and `reference_model` only without.

mod loom_reference;
mod reference_model;
mod simulate;
