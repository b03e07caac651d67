//! System `olake-sync`: OLake's steady-state syncs, and the order of the three side effects that
//! end each one — destination commit, slot acknowledgement, state file write — under crashes.
//!
//! Upstream: OLake tag v0.5.0, master `2b1f68a9` (v0.9.4), PR #854 `8ad23875`, PR #864
//! `07a0df03` ([`walcheck_model::olake::sync`]); PostgreSQL 15's slot and its saved copy ([`walcheck_model::pg`]).
//! A crash between two side effects leaves them disagreeing: state ahead of the slot (#853), slot
//! ahead of the state (the window #998's recovery skip closes), or a PostgreSQL restart that takes
//! back an acknowledgement that was only in memory.
//!
//! State: the server (WAL pointers, slot), what outlives the connector (state file, destination),
//! the connector process, and counters bounding the workload and the faults. The run starts after
//! a bootstrap that left the state file and the slot equal, with the destination empty.
//!
//! There is no `CHECKPOINT` action. PostgreSQL 15 `slot.c:CheckPointReplicationSlots` saves only
//! a slot marked dirty since its last save (`SaveSlotToPath` returns early otherwise), and nothing
//! in this system marks the slot dirty without saving it at once: a walsender acknowledgement
//! either moves `restart_lsn` and saves the slot (`logical.c:LogicalConfirmReceivedLocation`,
//! `ReplicationSlotMarkDirty` + `ReplicationSlotSave`) or moves only `confirmed_flush` and leaves
//! the slot clean (`SyncConnector::ack`). A checkpoint would save nothing, so the action is
//! left out rather than kept as a step that never changes the state. (`olake-bootstrap` keeps
//! its `Checkpoint`: `slotfuncs.c:pg_logical_replication_slot_advance` does mark the slot dirty.)

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
    name: "olake-sync",
    system: OlakeSyncSystem,
    model: OlakeSync,
    checks: [CHECKS],
    doc: "OLake's steady-state sync: StreamChanges' recovery rules and PostCDC's acknowledgement and state write, across crashes",
    variants: &[
        ("v0.5.0", "OLake tag v0.5.0: state file, then acknowledgement; recovery on any metadata difference"),
        ("master", "OLake master 2b1f68a9 (v0.9.4): destination commit, acknowledgement (#870), state file; the skips of #865 and #998"),
        ("pr854", "OLake PR #854 8ad23875: acknowledgement, then state; no destination metadata"),
        ("pr864", "OLake PR #864 07a0df03: v0.5.0's order; forward-only keepalives, >= poll"),
    ],
    faults: crate::olake_bootstrap::Faults::NAMES,
    trace_knobs: &[],
    also: Some(("keepalive", "on")),
}
