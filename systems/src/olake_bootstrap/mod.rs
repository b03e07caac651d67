//! System `olake-bootstrap`: OLake's first-sync bootstrap against PostgreSQL's WAL and slot.
//!
//! Upstream: OLake master `2b1f68a9` (v0.9.4), PR #854 `8ad23875`, PR #1084 `08e917b4`
//! ([`walcheck_model::olake`]); PostgreSQL 15's WAL pointers and `pg_replication_slot_advance`
//! ([`walcheck_model::pg`]). The bug (OLake #1084): PreCDC takes its target from `pg_current_wal_lsn()`,
//! the *write* pointer, but the advance clamps to the *flush* pointer and reports where it
//! stopped only in `end_lsn`; when write is ahead of flush the state file and
//! `confirmed_flush_lsn` differ and `validateGlobalState` fails the sync for good.
//!
//! State: the server (WAL pointers, slot, a pending synchronous commit), the state file, the
//! connector process, and counters bounding the workload and the faults. Actions interleave a
//! client workload, the walwriter, checkpoints, the connector's steps and the faults; each
//! delegates to one function of [`walcheck_model::pg`] or [`walcheck_model::olake`], so the simulator and the tests
//! run the same semantics.

mod config;
mod expected;
mod model;
mod properties;
mod view;

pub use config::*;
pub use model::*;
pub use properties::*;
pub use view::*;

built_in_system! {
    name: "olake-bootstrap",
    system: OlakeBootstrapSystem,
    model: OlakeBootstrap,
    checks: [CHECKS],
    doc: "OLake's PreCDC bootstrap against PostgreSQL 15's WAL pointers and pg_replication_slot_advance",
    variants: &[
        ("master", "OLake master 2b1f68a9 (v0.9.4): state written before the advance, end_lsn discarded"),
        ("pr854", "OLake PR #854 8ad23875: advance first, then the state; end_lsn still discarded"),
        ("pr1084", "OLake PR #1084 08e917b4: advance until the slot confirms the target, then seed the state"),
    ],
    faults: Faults::NAMES,
    trace_knobs: DRIVEN_KNOBS,
    also: Some(("server", "standby")),
}
