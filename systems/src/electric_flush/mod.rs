//! System `electric-flush`: Electric's shape-log write path, from PostgreSQL's transaction
//! fragments through each shape's Consumer and WriteLoop to the FlushTracker and the slot's
//! acknowledged flush LSN — the path of the missed `:flushed` notification of Electric #4058
//! (fixed by #4064). See [`walcheck_model::electric`] for the upstream commits and files.
//!
//! State: one `Consumer` per shape (with its WriteLoop, flush timer and mailbox), the
//! ShapeLogCollector (where its publish is, its mailbox of `notify_flushed` casts), the
//! `FlushTracker`, the `ReplicationClient` with PostgreSQL's WAL end and `confirmed_flush`,
//! a fault counter, and history bits for the properties that look at transitions.
//!
//! Time has no clock here: the flush period (1 s) is far shorter than the idle `:timeout` (30 s)
//! and the stall grace period (1 min). `timer_order = realistic` keeps that order (no `:timeout`
//! while a flush timer is armed and unfired; the stall check only once all else is quiet);
//! `timer_order = any` lets everything interleave.

mod config;
mod expected;
mod model;
mod properties;
mod view;

pub use config::*;
pub use model::*;
pub use properties::*;
pub use view::*;

use walcheck_model::electric::consumer::Injection;
use walcheck_model::electric::Variant;
use walcheck_properties::codec::Codec;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{Declared, FairClass, FairnessChoice, Liveness, Model};
use walcheck_properties::system::{PropertyInfo, System, SystemInfo};
use walcheck_properties::verdict::Verdict;

/// The system's name on the command line and in reports.
pub const NAME: &str = "electric-flush";

/// The declaration `walcheck list`, the catalogue and traces read.
pub static INFO: SystemInfo = SystemInfo {
    name: NAME,
    doc: "Electric's shape-log flush path: WriteLoop buffers, flush timers, Consumer hibernation and the FlushTracker (#4058)",
    variants: &[
        ("v1.4.15", "Electric 64a89a05f (1.4.15): :flushed always aligned and notified at once"),
        ("pr4064", "Electric 6c5068aa2 (#4064): :flushed deferred while a multi-fragment txn is pending"),
        ("head", "Electric dc07a1e6c (1.7.12): #4064 plus #4503, #4730 and #4731"),
        ("fix1-notify-after-hibernate", "1.4.15 + #4058's fix 1: notify the persisted offset after Storage.hibernate()"),
        ("fix2-close-returns-offset", "1.4.15 + #4058's fix 2: flush_and_close_all returns the flushed offset"),
        ("fix3-periodic-recheck", "1.4.15 + #4058's fix 3: re-send :flushed on the hibernate timeout"),
        ("fix4-flush-returns-offset", "1.4.15 + #4058's fix 4: flush_buffer returns the offset, callers notify it"),
    ],
    faults: Faults::NAMES,
    bounds: BOUNDS,
    trace_knobs: &[],
    properties: PROPERTIES,
    also: Some(("timer_order", "any")),
    view: VIEW,
};

/// The `electric-flush` system: its declaration and the model of each configuration.
pub struct ElectricFlushSystem;

/// The model of one configuration: `ElectricFlush::from(config)`.
pub type ElectricFlush = Model<ElectricFlushSystem>;

impl From<Config> for ElectricFlush {
    fn from(config: Config) -> ElectricFlush {
        Model::new(&ElectricFlushSystem, Scenario::new(config))
    }
}

impl System for ElectricFlushSystem {
    type State = State;
    type Action = Action;
    type Config = Scenario;

    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn config(&self, config: &GenericConfig) -> Scenario {
        Scenario::new(Config {
            shapes: config.small("shapes"),
            fragments: config.small("fragments"),
            txns: config.small("txns"),
            inline_flush_lines: config.small("inline_flush_lines"),
            crashes: config.small("crashes"),
            variant: Variant::from_name(config.variant).expect("a variant of INFO"),
            faults: Faults::from_name(config.faults).expect("a fault set of INFO"),
            timer_order: match config.name("timer_order") {
                "any" => TimerOrder::Any,
                _ => TimerOrder::Realistic,
            },
            fairness: FairnessChoice::of(config),
            traffic: match config.name("traffic") {
                "steady" => Traffic::Steady,
                _ => Traffic::Finite,
            },
            injection: Injection::None,
        })
    }

    fn init_states(&self, scenario: &Scenario) -> Vec<State> {
        vec![scenario.initial_state()]
    }

    fn actions(&self, scenario: &Scenario, state: &State, actions: &mut Vec<Action>) {
        scenario.enabled(state, actions);
    }

    /// [`Scenario::apply`] on a copy: every enabled action is taken.
    fn next_state(&self, scenario: &Scenario, state: &State, action: Action) -> Option<State> {
        let mut next = state.clone();
        scenario.apply(&mut next, action);
        Some(next)
    }

    /// As its `Display` names it (written beside the trace view, `view.rs`).
    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    /// The declared properties, then those only `walcheck triage` reads.
    fn properties(&self) -> Vec<Declared<Self>> {
        CHECKS.iter().chain(&TRIAGE_CHECKS).copied().collect()
    }

    /// The fairness its `fairness` bound selects: [`FAIRNESS`], or none.
    fn fairness(&self, scenario: &Scenario) -> &'static [FairClass<Action>] {
        scenario.config.fairness.constraints(FAIRNESS)
    }

    /// The liveness properties, by id (`eventually-acknowledged`).
    fn liveness(&self) -> Vec<Liveness<ElectricFlush, State>> {
        vec![EVENTUALLY_ACKNOWLEDGED.liveness(None)]
    }

    /// Packed with serde's derive in postcard's format (its LSNs as varints).
    fn codec(&self) -> Option<Codec<State>> {
        Some(Codec::postcard())
    }

    fn expected(
        &self,
        scenario: &Scenario,
        property: &PropertyInfo,
    ) -> Option<Result<(Verdict, &'static str), String>> {
        let verdict = || expected::verdict(&scenario.config, property.id);
        crate::expectation(&INFO, expected::ROWS, property, verdict)
    }
}
