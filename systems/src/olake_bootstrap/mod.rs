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

use walcheck_model::olake::Variant;
use walcheck_model::pg::{CommitMode, Role};
use walcheck_properties::codec::Codec;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{Declared, FairClass, FairnessChoice, Liveness, Model};
use walcheck_properties::system::{PropertyInfo, System, SystemInfo};
use walcheck_properties::verdict::Verdict;

/// The system's name on the command line and in reports.
pub const NAME: &str = "olake-bootstrap";

/// The declaration `walcheck list`, the catalogue and traces read.
pub static INFO: SystemInfo = SystemInfo {
    name: NAME,
    doc: "OLake's PreCDC bootstrap against PostgreSQL 15's WAL pointers and pg_replication_slot_advance",
    variants: &[
        ("master", "OLake master 2b1f68a9 (v0.9.4): state written before the advance, end_lsn discarded"),
        ("pr854", "OLake PR #854 8ad23875: advance first, then the state; end_lsn still discarded"),
        ("pr1084", "OLake PR #1084 08e917b4: advance until the slot confirms the target, then seed the state"),
    ],
    faults: Faults::NAMES,
    bounds: BOUNDS,
    trace_knobs: DRIVEN_KNOBS,
    properties: PROPERTIES,
    also: Some(("server", "standby")),
    view: VIEW,
};

/// The `olake-bootstrap` system: its declaration and the model of each configuration.
pub struct OlakeBootstrapSystem;

/// The model of one configuration: `OlakeBootstrap::from(config)`.
pub type OlakeBootstrap = Model<OlakeBootstrapSystem>;

impl From<Config> for OlakeBootstrap {
    fn from(config: Config) -> OlakeBootstrap {
        Model::new(&OlakeBootstrapSystem, config)
    }
}

impl System for OlakeBootstrapSystem {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    /// The typed configuration; with the simulator's workload when it sets any trace knob.
    fn config(&self, config: &GenericConfig) -> Config {
        let driven = config.has_trace_knobs().then(|| DrivenWorkload {
            chunk_bytes: config.number("insert_chunk_bytes"),
            tail_bytes: config.number("insert_tail_bytes"),
            commit_record_bytes: config.number("commit_record_bytes"),
            commit: match config.name("commit") {
                "async" => CommitMode::Async,
                _ => CommitMode::Sync,
            },
        });
        Config {
            variant: Variant::from_name(config.variant).expect("a variant of INFO"),
            faults: Faults::from_name(config.faults).expect("a fault set of INFO"),
            server: match config.name("server") {
                "standby" => Role::Standby,
                _ => Role::Primary,
            },
            page_bytes: config.number("page_bytes"),
            wal_buffers_pages: config.number("wal_buffers_pages"),
            stmt_pages_small: config.number("stmt_pages_small"),
            stmt_pages_bulk: config.number("stmt_pages_bulk"),
            statements: config.small("statements"),
            syncs: config.small("syncs"),
            crashes: config.small("crashes"),
            fairness: FairnessChoice::of(config),
            driven,
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

    /// The fairness its `fairness` bound selects: [`FAIRNESS`], or none.
    fn fairness(&self, config: &Config) -> &'static [FairClass<Action>] {
        config.fairness.constraints(FAIRNESS)
    }

    /// The liveness properties, by id (`bootstrap-eventually-completes`).
    fn liveness(&self) -> Vec<Liveness<OlakeBootstrap, State>> {
        vec![BOOTSTRAP_EVENTUALLY_COMPLETES.liveness(Some(|_, s| in_bootstrap(s)))]
    }

    /// Packed with serde's derive in postcard's format (its LSNs as varints).
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
