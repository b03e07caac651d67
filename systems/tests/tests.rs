//! walcheck-systems' integration tests, in one binary: a module per area.

mod driven_workload;
mod random_walks;
