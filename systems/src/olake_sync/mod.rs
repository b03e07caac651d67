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

use crate::olake_bootstrap::Faults;
use walcheck_model::olake::sync::SyncVariant;
use walcheck_properties::codec::Codec;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{Declared, Model, PropertyInfo, System, SystemInfo};
use walcheck_properties::verdict::Verdict;

/// The system's name on the command line and in reports.
pub const NAME: &str = "olake-sync";

/// The declaration `walcheck list`, the catalogue and traces read.
pub static INFO: SystemInfo = SystemInfo {
    name: NAME,
    doc: "OLake's steady-state sync: StreamChanges' recovery rules and PostCDC's acknowledgement and state write, across crashes",
    variants: &[
        ("v0.5.0", "OLake tag v0.5.0: state file, then acknowledgement; recovery on any metadata difference"),
        ("master", "OLake master 2b1f68a9 (v0.9.4): destination commit, acknowledgement (#870), state file; the skips of #865 and #998"),
        ("pr854", "OLake PR #854 8ad23875: acknowledgement, then state; no destination metadata"),
        ("pr864", "OLake PR #864 07a0df03: v0.5.0's order; forward-only keepalives, >= poll"),
    ],
    faults: Faults::NAMES,
    bounds: BOUNDS,
    trace_knobs: &[],
    properties: PROPERTIES,
    also: Some(("keepalive", "on")),
    view: VIEW,
};

/// The `olake-sync` system: its declaration and the model of each configuration.
pub struct OlakeSyncSystem;

/// The model of one configuration: `OlakeSync::from(config)`.
pub type OlakeSync = Model<OlakeSyncSystem>;

impl From<Config> for OlakeSync {
    fn from(config: Config) -> OlakeSync {
        Model::new(&OlakeSyncSystem, config)
    }
}

impl System for OlakeSyncSystem {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn config(&self, config: &GenericConfig) -> Config {
        Config {
            variant: SyncVariant::from_name(config.variant).expect("a variant of INFO"),
            faults: Faults::from_name(config.faults).expect("a fault set of INFO"),
            keepalive: config.name("keepalive") == "on",
            txns: config.small("txns"),
            txn_bytes: config.number("txn_bytes"),
            syncs: config.small("syncs"),
            crashes: config.small("crashes"),
        }
    }

    fn init_states(&self, config: &Config) -> Vec<State> {
        vec![config.initial_state()]
    }

    fn actions(&self, config: &Config, state: &State, actions: &mut Vec<Action>) {
        config.enabled(state, actions);
    }

    /// [`Config::apply`] on a copy: every enabled action is taken.
    fn next_state(&self, config: &Config, state: &State, action: Action) -> Option<State> {
        let mut next = state.clone();
        config.apply(&mut next, action);
        Some(next)
    }

    /// As its `Display` names it (written beside the trace view, `view.rs`).
    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn properties(&self) -> Vec<Declared<Self>> {
        CHECKS.to_vec()
    }

    /// No liveness property: no fairness either. Packed with serde's derive in postcard's
    /// format.
    fn codec(&self) -> Option<Codec<State>> {
        Some(Codec::postcard())
    }

    fn expected(
        &self,
        config: &Config,
        property: &PropertyInfo,
    ) -> Option<Result<(Verdict, &'static str), String>> {
        let verdict = || expected::verdict(config, property.id);
        crate::expectation(&INFO, expected::ROWS, property, verdict)
    }
}
