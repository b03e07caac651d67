//! walcheck-lang's integration tests, in one binary: a module per area; what they share is in
//! `common`.

mod common;

mod connectors;
mod defects;
mod diagnostics;
mod golden;
mod never_panics;
mod parser;
mod reference;
