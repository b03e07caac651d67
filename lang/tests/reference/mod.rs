//! A reference semantics of the connector language, and the differential test that holds the
//! interpreter to it.
//!
//! [`semantics`] is a deliberately naive small-step interpreter over the syntax tree, written
//! from docs/language.md ("Steps and interleaving", "Procedures and runs", "Processes, timers
//! and channels", "What a file means when it runs"), not from `lang/src/machine.rs` or `lang/src/program.rs`: its own state
//! (plain structs and ordered maps), its own control (a stack of frames over the tree), its own
//! exploration (a breadth-first search) and its own properties. What PostgreSQL does it asks
//! walcheck's model of PostgreSQL (`walcheck_model::pg`), as the language does, so it is
//! independent for the language's own semantics: steps, runs, crashes, what properties see.
//!
//! [`generate`] writes well-typed files covering the language's constructs, and [`differential`]
//! explores each both ways and compares the reachable states (projected to the file's
//! variables and the message each `for each message` last received, the destination's rows and
//! its open batch, the committed transactions, the keepalives, the WAL pointers, the slot and
//! the standby) and every property's verdict, the file's own `eventually` and `leads to` ones
//! decided by [`liveness`]'s fair-cycle search on the reference's side and by walcheck's
//! fair-liveness checker on the interpreter's.
//! `WALCHECK_LONG=1 cargo test -p walcheck-lang reference` runs the long comparison.

mod differential;
pub(crate) mod generate;
pub mod liveness;
pub mod semantics;
