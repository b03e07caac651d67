//! walcheck: the command line and the library it calls: the registry and check catalogue,
//! check runs, reports, JUnit, connector files loaded as systems, stateright's Explorer, triage,
//! and the benchmarks' harness (with its two-phase-commit baseline, [`baseline`]).
//!
//! The `walcheck` binary is [`cli::main`] over the built-in systems; a crate that defines its own
//! [`System`] gets the same command line for it with `walcheck::cli::main(&MySystem)`. What a
//! system is built from is re-exported here, so that such a crate depends on `walcheck` alone:
//! [`pg`] (PostgreSQL 15's WAL pointers and slots), [`Lsn`], [`stateright`], [`serde`], the
//! vocabulary of [`system`], and the engines' [`compact`], [`liveness`], [`reference`] and
//! [`search`]. Not for: the models of upstream behaviour (`walcheck-model`, `walcheck-systems`),
//! the connector language (`walcheck-lang`), traces on disk (`walcheck-traces`), timed simulation
//! (`walcheck-sim`) or the live server (`walcheck-live`).

pub use walcheck_engine::{compact, liveness, reference, search};
pub use walcheck_model::pg;
pub use walcheck_model::{Lsn, ParseLsnError};
pub use walcheck_properties::system;
pub use walcheck_properties::system::{
    BoundInfo, BoundValue, Config, Declared, FairClass, Fairness, Kind, Lanes, Liveness,
    PropertyInfo, System, SystemInfo, ToVar, Var, VarInfo, Variables, View,
};
pub use walcheck_properties::{checks, debug_as_variables, fault_sets, variables, view};
pub use walcheck_properties::{codec, pg_view, verdict};
pub use {serde, stateright};

pub mod baseline;
pub mod bench;
pub mod catalogue;
pub mod ci;
pub mod cli;
pub mod connector;
pub mod explore;
pub mod heap;
pub mod input;
pub mod program;
pub mod progress;
pub mod report;
pub mod run;
pub mod triage;
