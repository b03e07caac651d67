//! System `electric-flush`: its configuration: fault sets, bounds and knobs, and the typed configuration the model reads.

use super::*;

/// Which faults the checker may inject.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Faults {
    None,
    /// A consumer process dies.
    ConsumerKill,
    /// Consumer suspension is on (`shape_enable_suspend?`): the idle `:timeout` may stop it.
    Suspend,
    All,
}

impl Faults {
    pub const ALL: [Faults; 4] = [
        Faults::None,
        Faults::ConsumerKill,
        Faults::Suspend,
        Faults::All,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Faults::None => "none",
            Faults::ConsumerKill => "consumer-kill",
            Faults::Suspend => "suspend",
            Faults::All => "all",
        }
    }

    pub fn from_name(name: &str) -> Option<Faults> {
        Faults::ALL.into_iter().find(|f| f.name() == name)
    }

    pub const fn kill(self) -> bool {
        matches!(self, Faults::ConsumerKill | Faults::All)
    }

    pub const fn suspend(self) -> bool {
        matches!(self, Faults::Suspend | Faults::All)
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
    BoundInfo {
        name: "timer_order",
        default: BoundValue::Name("realistic"),
        min: None,
        max: None,
        values: &["realistic", "any"],
        unit: "order",
        doc: "realistic: no :timeout while a 1 s flush timer is armed and unfired; any: every ordering",
        quiet: false,
    },
    number("shapes", 2, 1, 2, "shapes", "shapes (shape 0: T1 only; shape 1: every transaction)"),
    number("fragments", 2, 2, 3, "fragments", "fragments of T1, the large transaction"),
    number("txns", 2, 1, 3, "txns", "transactions: T1 large, then small ones that do not touch shape 0"),
    number("inline_flush_lines", 2, 1, 3, "lines", "buffered lines that trigger an inline flush (64 KiB upstream)"),
    number("crashes", 1, 0, 2, "kills", "consumer kills injected in all"),
    FAIRNESS_BOUND,
    BoundInfo {
        name: "traffic",
        default: BoundValue::Name("finite"),
        min: None,
        max: None,
        values: &["finite", "steady"],
        unit: "traffic",
        doc: "finite: the scripted transactions only; steady: then unrelated transactions (no shape's) forever, all at one abstract LSN",
        quiet: true,
    },
];

/// The configuration.
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
    /// Which fairness liveness checks assume ([`FAIRNESS`] or none); safety checks ignore it.
    pub fairness: FairnessChoice,
    /// Whether unrelated transactions keep coming after the scripted ones.
    pub traffic: Traffic,
    /// A fault standing for a #4058 hypothesis (`walcheck triage` only).
    pub injection: Injection,
}

impl Config {
    /// The typed form of a configuration the catalogue validated against [`INFO`].
    pub fn of(config: &GenericConfig) -> Config {
        let mut c = Config::new(
            Variant::from_name(config.variant).expect("a variant of INFO"),
            Faults::from_name(config.faults).expect("a fault set of INFO"),
        );
        for (name, value) in config.values() {
            c.set_bound(name, &value.to_string())
                .expect("a value INFO accepts");
        }
        c
    }

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

    /// Sets bound `name` from its text, or says in one line why not.
    pub fn set_bound(&mut self, name: &str, text: &str) -> Result<(), String> {
        let info = BOUNDS.iter().find(|b| b.name == name).ok_or_else(|| {
            let names: Vec<_> = BOUNDS.iter().map(|b| b.name).collect();
            format!(
                "{NAME} has no bound {name:?}; its bounds are {}",
                names.join(", ")
            )
        })?;
        let value = info.parse(text)?;
        let n = |v: BoundValue| match v {
            BoundValue::Number(n) => n as u8,
            BoundValue::Name(_) => unreachable!("numeric bound"),
        };
        match name {
            "timer_order" => {
                self.timer_order = if value == BoundValue::Name("any") {
                    TimerOrder::Any
                } else {
                    TimerOrder::Realistic
                }
            }
            "fairness" => {
                self.fairness = if value == BoundValue::Name("none") {
                    FairnessChoice::None
                } else {
                    FairnessChoice::Declared
                }
            }
            "traffic" => {
                self.traffic = if value == BoundValue::Name("steady") {
                    Traffic::Steady
                } else {
                    Traffic::Finite
                }
            }
            "shapes" => self.shapes = n(value),
            "fragments" => self.fragments = n(value),
            "txns" => self.txns = n(value),
            "inline_flush_lines" => self.inline_flush_lines = n(value),
            "crashes" => self.crashes = n(value),
            _ => unreachable!("bound {name} listed but not settable"),
        }
        Ok(())
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
