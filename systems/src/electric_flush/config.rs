//! System `electric-flush`: its configuration: fault sets, bounds and knobs, and the typed configuration the model reads.

use serde::{Deserialize, Serialize};
use walcheck_model::electric::consumer::Injection;
use walcheck_model::electric::{workload, Fragment, Variant};
use walcheck_properties::system::choice;
use walcheck_properties::system::{number, BoundInfo, FairnessChoice, FAIRNESS_BOUND};

walcheck_properties::fault_sets! {
    /// Which faults the checker may inject.
    pub enum Faults {
        /// A consumer process dies.
        ConsumerKill = "consumer-kill" => kill,
        /// Consumer suspension is on (`shape_enable_suspend?`): the idle `:timeout` may stop it.
        Suspend = "suspend" => suspend,
    }
}

/// How the flush timer, the idle `:timeout` and the stall check may interleave.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TimerOrder {
    Realistic,
    Any,
}

/// What PostgreSQL sends after the scripted workload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Traffic {
    /// Nothing: the scripted transactions are all there is.
    Finite,
    /// Unrelated transactions forever: each commits changes to tables no shape follows, so it is
    /// routed to no consumer. They all share one abstract LSN past the script's, so the graph
    /// stays finite and their stream is a cycle.
    Steady,
}

/// The bounds and knobs (`walcheck list`).
pub const BOUNDS: &[BoundInfo] = &[
    choice(
        "timer_order",
        "realistic",
        &["realistic", "any"],
        "order",
        "realistic: no :timeout while a 1 s flush timer is armed and unfired; any: every ordering",
    ),
    number("shapes", 2, 1, 2, "shapes", "shapes (shape 0: T1 only; shape 1: every transaction)"),
    number("fragments", 2, 2, 3, "fragments", "fragments of T1, the large transaction"),
    number("txns", 2, 1, 3, "txns", "transactions: T1 large, then small ones that do not touch shape 0"),
    number("inline_flush_lines", 2, 1, 3, "lines", "buffered lines that trigger an inline flush (64 KiB upstream)"),
    number("crashes", 1, 0, 2, "kills", "consumer kills injected in all"),
    FAIRNESS_BOUND,
    choice(
        "traffic",
        "finite",
        &["finite", "steady"],
        "traffic",
        "finite: the scripted transactions only; steady: then unrelated transactions (no shape's) forever, all at one abstract LSN",
    ).quiet(),
];

/// The system's typed configuration: variant, faults, knobs and bounds (see [`BOUNDS`]), as
/// [`ElectricFlushSystem`](super::ElectricFlushSystem)'s `config` reads them (within a
/// [`Scenario`](super::Scenario)).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: Variant,
    pub faults: Faults,
    pub timer_order: TimerOrder,
    pub shapes: u8,
    pub fragments: u8,
    pub txns: u8,
    pub inline_flush_lines: u8,
    pub crashes: u8,
    /// Which fairness liveness checks assume (`FAIRNESS` or none); safety checks ignore it.
    pub fairness: FairnessChoice,
    /// Whether unrelated transactions keep coming after the scripted ones.
    pub traffic: Traffic,
    /// A fault standing for a #4058 hypothesis (`walcheck triage` only).
    pub injection: Injection,
}

impl Config {
    /// `variant` with `faults` and every bound at its default.
    pub const fn new(variant: Variant, faults: Faults) -> Config {
        Config {
            variant,
            faults,
            timer_order: TimerOrder::Realistic,
            shapes: 2,
            fragments: 2,
            txns: 2,
            inline_flush_lines: 2,
            crashes: 1,
            fairness: FairnessChoice::Declared,
            traffic: Traffic::Finite,
            injection: Injection::None,
        }
    }

    /// The scripted fragments, each with the op index of its first change.
    pub fn workload(&self) -> Vec<(Fragment, u8)> {
        workload(
            self.shapes.into(),
            self.fragments,
            self.txns,
            self.inline_flush_lines,
        )
    }
}
