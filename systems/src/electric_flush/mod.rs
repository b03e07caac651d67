//! System `electric-flush`: Electric's shape-log write path, from PostgreSQL's transaction
//! fragments through each shape's Consumer and WriteLoop to the FlushTracker and the slot's
//! acknowledged flush LSN — the path of the missed `:flushed` notification of Electric #4058
//! (fixed by #4064). See [`walcheck_model::electric`] for the upstream commits and files.
//!
//! State: one [`Consumer`] per shape (with its WriteLoop, flush timer and mailbox), the
//! ShapeLogCollector (where its publish is, its mailbox of `notify_flushed` casts), the
//! [`FlushTracker`], the [`ReplicationClient`] with PostgreSQL's WAL end and `confirmed_flush`,
//! a fault counter, and history bits for the properties that look at transitions.
//!
//! Time has no clock here: the flush period (1 s) is far shorter than the idle `:timeout` (30 s)
//! and the stall grace period (1 min). `timer_order = realistic` keeps that order (no `:timeout`
//! while a flush timer is armed and unfired; the stall check only once all else is quiet);
//! `timer_order = any` lets everything interleave.

mod expected;

use std::fmt;

use serde::{Deserialize, Serialize};
use stateright::{Model, Property};

use walcheck_model::electric::consumer::{Consumer, Effects, Injection, Msg, Status};
use walcheck_model::electric::flush_tracker::{FlushTracker, TrackerEffects};
use walcheck_model::electric::replication_client::ReplicationClient;
use walcheck_model::electric::{workload, Fragment, Offset, Variant, MAX_SHAPES};
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{
    number, BoundInfo, BoundValue, FairClass, Fairness, FairnessChoice, Lanes, Live, Liveness,
    PropertyInfo, Var, Variables, FAIRNESS_BOUND,
};
use walcheck_properties::system::{SystemInfo, View};

/// The system's name on the command line and in reports.
pub const NAME: &str = "electric-flush";

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

pub const NO_LOST_FLUSH_NOTIFICATION: PropertyInfo = PropertyInfo::always(
    "no-lost-flush-notification",
    "at quiescence no live shape has a tracker entry or a persisted but unnotified txn boundary",
);

pub const NOTIFIED_OFFSET_IS_TXN_BOUNDARY: PropertyInfo = PropertyInfo::always(
    "notified-offset-is-txn-boundary",
    "the tracker completes entries only at a commit's last_log_offset and never notifies past the last commit",
);

pub const ACK_WITHIN_FLUSHED: PropertyInfo = PropertyInfo::always(
    "ack-within-flushed",
    "the acknowledged flush LSN never reaches a received commit whose lines a live shape has not persisted",
);

pub const GLOBAL_FLUSH_MONOTONE: PropertyInfo = PropertyInfo::always(
    "global-flush-monotone",
    "the global flushed offset, flushed_wal and confirmed_flush never go back",
);

pub const WAL_RETENTION_BOUNDED: PropertyInfo = PropertyInfo::always(
    "wal-retention-bounded",
    "at quiescence confirmed_flush is the last commit's LSN",
);

pub const EVENTUALLY_ACKNOWLEDGED: PropertyInfo = PropertyInfo::eventually(
    "eventually-acknowledged",
    "eventually confirmed_flush reaches the last commit: every committed txn is acknowledged to PostgreSQL",
)
.with_knobs(&[("traffic", "steady")]);

pub const REACH_TIMER_BEFORE_COMMIT: PropertyInfo = PropertyInfo::sometimes(
    "reach-timer-before-commit",
    "a timer flush persists lines of a pending multi-fragment txn",
);

pub const REACH_HIBERNATE_FLUSH: PropertyInfo = PropertyInfo::sometimes(
    "reach-hibernate-flush",
    "the idle :timeout runs Storage.hibernate (flush and close)",
);

pub const REACH_INLINE_FLUSH: PropertyInfo = PropertyInfo::sometimes(
    "reach-inline-flush",
    "a buffer reaches the threshold and flushes inline",
);

pub const REACH_MULTI_FRAGMENT_TXN: PropertyInfo = PropertyInfo::sometimes(
    "reach-multi-fragment-txn",
    "a consumer holds a pending txn between fragments",
);

pub const REACH_TWO_SHAPES: PropertyInfo =
    PropertyInfo::sometimes("reach-two-shapes", "two shapes are tracked at once").needs("shapes=2");

/// The properties, each declared once above.
pub const PROPERTIES: &[PropertyInfo] = &[
    NO_LOST_FLUSH_NOTIFICATION,
    NOTIFIED_OFFSET_IS_TXN_BOUNDARY,
    ACK_WITHIN_FLUSHED,
    GLOBAL_FLUSH_MONOTONE,
    WAL_RETENTION_BOUNDED,
    EVENTUALLY_ACKNOWLEDGED,
    REACH_TIMER_BEFORE_COMMIT,
    REACH_HIBERNATE_FLUSH,
    REACH_INLINE_FLUSH,
    REACH_MULTI_FRAGMENT_TXN,
    REACH_TWO_SHAPES,
];

pub const OCCURS_H1: PropertyInfo = PropertyInfo::sometimes(
    "occurs-h1",
    "#4058 hypothesis H1's mechanism occurs on some path",
);

pub const OCCURS_H2: PropertyInfo = PropertyInfo::sometimes(
    "occurs-h2",
    "#4058 hypothesis H2's mechanism occurs on some path",
);

pub const OCCURS_H3: PropertyInfo = PropertyInfo::sometimes(
    "occurs-h3",
    "#4058 hypothesis H3's mechanism (a timer flush before the commit) occurs on some path",
);

pub const OCCURS_H4: PropertyInfo = PropertyInfo::sometimes(
    "occurs-h4",
    "#4058 hypothesis H4's mechanism occurs on some path",
);

pub const LOST_AFTER_H1: PropertyInfo = PropertyInfo::always(
    "lost-after-h1",
    "no notification is lost on a path where H1 occurred",
);

pub const LOST_AFTER_H2: PropertyInfo = PropertyInfo::always(
    "lost-after-h2",
    "no notification is lost on a path where H2 occurred",
);

pub const LOST_AFTER_H3: PropertyInfo = PropertyInfo::always(
    "lost-after-h3",
    "no notification is lost on a path where H3 occurred",
);

pub const LOST_AFTER_H4: PropertyInfo = PropertyInfo::always(
    "lost-after-h4",
    "no notification is lost on a path where H4 occurred",
);

pub const LOST_AFTER_INJECTION: PropertyInfo = PropertyInfo::always(
    "lost-after-injection",
    "no notification is lost on a path where the injected fault occurred",
);

/// Properties only `walcheck triage` uses: whether a hypothesis's mechanism occurs, and a lost
/// notification on a path where it occurred.
pub const TRIAGE_PROPERTIES: &[PropertyInfo] = &[
    OCCURS_H1,
    OCCURS_H2,
    OCCURS_H3,
    OCCURS_H4,
    LOST_AFTER_H1,
    LOST_AFTER_H2,
    LOST_AFTER_H3,
    LOST_AFTER_H4,
    LOST_AFTER_INJECTION,
];

/// Variables every step table shows.
pub const KEY_VARIABLES: &[&str] = &[
    "s0.mailbox",
    "s0.mapping",
    "tracker.s0",
    "tracker.global",
    "confirmed_flush",
    "retained_wal",
    "s0.consumer",
];

/// Bookkeeping counters step tables leave out.
pub const COUNTERS: &[&str] = &["crashes", "published"];

/// The sequence-diagram lanes of this system's traces.
pub const LANES: Lanes = Lanes {
    participants: &[
        ("pg", "PostgreSQL"),
        ("collector", "ShapeLogCollector"),
        ("s0", "Consumer s0"),
        ("s1", "Consumer s1"),
        ("tracker", "FlushTracker"),
        ("client", "ReplicationClient"),
    ],
    lane: |action| match action {
        "Publish" => ("pg", "collector"),
        "Deliver" | "DeliverS0" => ("collector", "s0"),
        "DeliverS1" => ("collector", "s1"),
        "CollectorHandle" => ("collector", "tracker"),
        "ClientHandle" | "Keepalive" => ("client", "pg"),
        a if a.ends_with("S1") => ("s1", "s1"),
        _ => ("s0", "s0"),
    },
    owner: |var| match var {
        v if v.starts_with("s0.") => Some("s0"),
        v if v.starts_with("s1.") => Some("s1"),
        v if v.starts_with("tracker.") => Some("tracker"),
        "collector.mailbox" => Some("collector"),
        "flushed_wal" | "client.mailbox" => Some("client"),
        "confirmed_flush" | "wal_end" | "retained_wal" => Some("pg"),
        _ => None,
    },
};

/// The `electric-flush` system: its declaration and the model of each configuration.
pub struct ElectricFlushSystem;

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
    faults: &["none", "consumer-kill", "suspend", "all"],
    bounds: BOUNDS,
    trace_knobs: &[],
    properties: PROPERTIES,
    also: Some(("timer_order", "any")),
    view: View {
        key_variables: KEY_VARIABLES,
        counters: COUNTERS,
        lanes: &LANES,
    },
};

built_in_system!(ElectricFlushSystem, ElectricFlush);

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

/// The ShapeLogCollector: which fragment it publishes next, where a publish is, and its mailbox.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Collector {
    /// Fragments published so far.
    pub published: u8,
    /// Inside a publish: the next shape to call, and which shapes took the fragment.
    pub delivering: Option<Delivery>,
    /// `notify_flushed` casts: `(shape, offset)`.
    pub mailbox: Vec<(u8, Offset)>,
}

/// A publish in progress (`ConsumerRegistry.publish`, synchronous calls in shape order).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Delivery {
    pub next_shape: u8,
    pub delivered: [bool; MAX_SHAPES],
}

/// History bits: what has happened on the path to a state.
pub mod seen {
    pub const TIMER_BEFORE_COMMIT: u16 = 1 << 0;
    pub const HIBERNATE: u16 = 1 << 1;
    pub const INLINE_FLUSH: u16 = 1 << 2;
    pub const MULTI_FRAGMENT: u16 = 1 << 3;
    pub const TWO_SHAPES: u16 = 1 << 4;
    pub const H2: u16 = 1 << 5;
    pub const H4: u16 = 1 << 6;
    pub const INJECTED: u16 = 1 << 7;
    /// The tracker completed an entry off a commit boundary, or notified past the last commit.
    pub const BAD_BOUNDARY: u16 = 1 << 8;
    /// The global offset, `flushed_wal` or `confirmed_flush` went back.
    pub const REGRESSED: u16 = 1 << 9;
    /// A hibernate flush persisted data and queued a `:flushed`.
    pub const H1: u16 = 1 << 10;
}

/// A state of the system. Its `Debug` is its [`Variables`], one `name: value` a line, as
/// stateright's Explorer shows it.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    pub shapes: Vec<Consumer>,
    pub collector: Collector,
    pub tracker: FlushTracker,
    pub client: ReplicationClient,
    pub crashes: u8,
    pub seen: u16,
}

/// An action: one step of one process.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    /// The ReplicationClient receives the next fragment and starts publishing it.
    Publish,
    /// The collector's synchronous call reaches the next shape's consumer (its earlier messages
    /// handled); after the last, the tracker takes the fragment.
    Deliver(u8),
    /// A shape's flush timer fires.
    TimerFires(u8),
    /// A consumer handles the message at the head of its mailbox.
    Handle(u8),
    /// A consumer's idle `:timeout`.
    Timeout(u8),
    /// HEAD: a consumer's suspend timer fires.
    SuspendTimerFires(u8),
    /// The collector handles a `notify_flushed` cast.
    CollectorHandle,
    /// The ReplicationClient handles `{:flush_boundary_updated, lsn}`.
    ClientHandle,
    /// A primary keepalive outside a transaction.
    Keepalive,
    /// Fault: a consumer process dies.
    Kill(u8),
    /// HEAD (#4730): the collector sees a monitored consumer go down and removes its shape.
    Down(u8),
    /// HEAD (#4730): the stall check invalidates a shape whose flush made no progress.
    StallCheck(u8),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Publish => f.write_str("Publish"),
            Action::CollectorHandle => f.write_str("CollectorHandle"),
            Action::ClientHandle => f.write_str("ClientHandle"),
            Action::Keepalive => f.write_str("Keepalive"),
            Action::Deliver(s) => write!(f, "DeliverS{s}"),
            Action::TimerFires(s) => write!(f, "TimerFiresS{s}"),
            Action::Handle(s) => write!(f, "HandleS{s}"),
            Action::Timeout(s) => write!(f, "TimeoutS{s}"),
            Action::SuspendTimerFires(s) => write!(f, "SuspendTimerFiresS{s}"),
            Action::Kill(s) => write!(f, "KillS{s}"),
            Action::Down(s) => write!(f, "DownS{s}"),
            Action::StallCheck(s) => write!(f, "StallCheckS{s}"),
        }
    }
}

/// The `electric-flush` model for one configuration.
#[derive(Clone, Debug)]
pub struct ElectricFlush {
    pub config: Config,
    workload: Vec<(Fragment, u8)>,
    /// The unrelated transaction [`Traffic::Steady`] repeats.
    unrelated: (Fragment, u8),
}

impl ElectricFlush {
    pub fn new(config: Config) -> ElectricFlush {
        let workload = config.workload();
        let after = workload.iter().map(|(f, _)| f.tx).max().unwrap_or(0) + 1;
        let unrelated = Fragment {
            tx: after,
            commit: true,
            lines: [0; MAX_SHAPES],
            last_log_offset: Offset::new(after, 1),
        };
        ElectricFlush {
            workload,
            unrelated: (unrelated, 1),
            config,
        }
    }

    /// The initial state: idle consumers, an empty tracker, an up-to-date client, nothing sent.
    pub fn initial_state(&self) -> State {
        State {
            shapes: (0..self.config.shapes).map(|_| Consumer::new()).collect(),
            collector: Collector::default(),
            tracker: FlushTracker::default(),
            client: ReplicationClient::new(),
            crashes: 0,
            seen: 0,
        }
    }

    /// The fragment being or next to be published.
    fn fragment(&self, state: &State) -> Option<&(Fragment, u8)> {
        let index = usize::from(state.collector.published);
        self.workload
            .get(index)
            .or(
                (self.config.traffic == Traffic::Steady && index == self.workload.len())
                    .then_some(&self.unrelated),
            )
    }

    /// The shapes a fragment is routed to (EventRouter): those with changes in it and, for a
    /// commit, every shape in the transaction (`shapes_in_txn`).
    fn routed(&self, index: usize, shape: usize) -> bool {
        let Some((fragment, _)) = self.workload.get(index) else {
            return false; // an unrelated transaction: no shape's
        };
        fragment.lines[shape] > 0
            || (fragment.commit
                && self.workload[..index]
                    .iter()
                    .any(|(f, _)| f.tx == fragment.tx && f.lines[shape] > 0))
    }

    /// The next shape at or after `from` that the current fragment is routed to.
    fn next_routed(&self, state: &State, from: u8) -> Option<u8> {
        let index = usize::from(state.collector.published);
        (from..self.config.shapes).find(|&s| self.routed(index, s.into()))
    }

    fn last_commit_lsn(&self) -> u8 {
        self.workload
            .iter()
            .filter(|(f, _)| f.commit)
            .map(|(f, _)| f.tx)
            .max()
            .unwrap_or(0)
    }

    fn is_commit_offset(&self, offset: Offset) -> bool {
        self.workload
            .iter()
            .any(|(f, _)| f.commit && f.last_log_offset == offset)
    }

    /// Quiescence: every mailbox empty, no flush or suspend timer armed and unfired, no pending
    /// transaction, nothing left to publish — only the idle `:timeout` could still fire
    /// (keepalives aside), and it would flush nothing (a running consumer with buffered lines is
    /// waiting for that flush, which is a delay, not a loss). HEAD's watchdog would still act on a
    /// dead consumer or a stalled shape, so those states are not quiescent there.
    pub fn quiescent(&self, state: &State) -> bool {
        self.settled(state)
            && !(self.config.variant.has_watchdog()
                && (0..state.shapes.len()).any(|s| self.watchdog_acts(state, s)))
    }

    /// Quiescence but for HEAD's watchdog: what the watchdog waits for before it acts.
    fn settled(&self, state: &State) -> bool {
        let settled = state.shapes.iter().all(|c| {
            !c.status.has_process()
                || (c.mailbox.is_empty()
                    && c.write_timer.is_none_or(|t| t.fired)
                    && c.pending_txn.is_none()
                    && !c.suspend_timer_armed
                    // A running consumer with buffered lines still has its :timeout's flush to
                    // come: counting that state would call a wait for the idle timeout a loss.
                    && !(c.status == Status::Running && c.writer.buffer_lines > 0))
        });
        settled
            && state.collector.delivering.is_none()
            && usize::from(state.collector.published) == self.workload.len()
            && state.collector.mailbox.is_empty()
            && state.client.mailbox.is_empty()
    }

    /// HEAD's watchdog would act on shape `s`: its consumer is down, or its entry is stalled and
    /// it is not deliberately deferring.
    fn watchdog_acts(&self, state: &State, s: usize) -> bool {
        let c = &state.shapes[s];
        c.status == Status::Dead
            || (c.status.is_live()
                && state.tracker.entries[s].is_some()
                && c.pending_flush_offset.is_none())
    }

    /// Applies `action` (which must be enabled) to `state`.
    pub fn apply(&self, state: &mut State, action: Action) {
        let cfg = &self.config;
        let variant = cfg.variant;
        let before = (
            state.tracker.last_global_flushed_offset,
            state.client.flushed_wal,
            state.client.confirmed_flush,
        );
        match action {
            Action::Publish => {
                let (fragment, _) = *self.fragment(state).expect("a fragment to publish");
                state.client.wal_written(fragment.tx);
                state.collector.delivering = Some(Delivery {
                    next_shape: 0,
                    delivered: [false; MAX_SHAPES],
                });
                if self.next_routed(state, 0).is_none() {
                    self.finish_publish(state);
                }
            }
            Action::Deliver(s) => {
                let index = usize::from(state.collector.published);
                let (fragment, first_op) = self.workload[index];
                let shape = &mut state.shapes[usize::from(s)];
                let mut delivery = state.collector.delivering.expect("inside a publish");
                match shape.status {
                    Status::Dead => {
                        // #4011: an undeliverable shape is removed before the tracker update.
                        shape.status = Status::Removed;
                        let effects = state.tracker.handle_shape_removed(s.into());
                        self.tracker_effects(state, effects);
                    }
                    Status::Removed => {}
                    _ => {
                        let lines: Vec<Offset> = (0..fragment.lines[usize::from(s)])
                            .map(|i| fragment.line_offset(first_op, s.into(), i))
                            .collect();
                        let effects = shape.handle_fragment(
                            variant,
                            &fragment,
                            &lines,
                            cfg.inline_flush_lines,
                        );
                        if shape.pending_txn.is_some() {
                            state.seen |= seen::MULTI_FRAGMENT;
                        }
                        delivery.delivered[usize::from(s)] = true;
                        self.consumer_effects(state, s, effects);
                    }
                }
                delivery.next_shape = s + 1;
                state.collector.delivering = Some(delivery);
                if self.next_routed(state, s + 1).is_none() {
                    self.finish_publish(state);
                }
            }
            Action::TimerFires(s) => {
                let shape = &mut state.shapes[usize::from(s)];
                let requested =
                    walcheck_model::electric::storage::timer_fires(&mut shape.write_timer);
                shape.mailbox.push(Msg::TimerFire(requested));
            }
            Action::Handle(s) => {
                let effects = state.shapes[usize::from(s)].handle_message(variant);
                self.consumer_effects(state, s, effects);
            }
            Action::Timeout(s) => {
                let effects = state.shapes[usize::from(s)].handle_timeout(
                    variant,
                    cfg.faults.suspend(),
                    cfg.injection,
                );
                if state.shapes[usize::from(s)].status == Status::Hibernated {
                    state.seen |= seen::HIBERNATE;
                }
                self.consumer_effects(state, s, effects);
            }
            Action::SuspendTimerFires(s) => {
                let shape = &mut state.shapes[usize::from(s)];
                shape.suspend_timer_armed = false;
                shape.mailbox.push(Msg::SuspendTimer);
            }
            Action::CollectorHandle => {
                let (s, offset) = state.collector.mailbox.remove(0);
                let effects =
                    state
                        .tracker
                        .handle_flush_notification(variant.has_4064(), s.into(), offset);
                self.tracker_effects(state, effects);
            }
            Action::ClientHandle => {
                let lsn = state.client.mailbox.remove(0);
                state
                    .client
                    .flush_boundary_updated(variant.guards_keepalive(), lsn);
            }
            Action::Keepalive => {
                state.client.keepalive(variant.guards_keepalive());
            }
            Action::Kill(s) => {
                state.shapes[usize::from(s)].kill();
                state.crashes += 1;
            }
            Action::Down(s) | Action::StallCheck(s) => {
                state.shapes[usize::from(s)].status = Status::Removed;
                let effects = state.tracker.handle_shape_removed(s.into());
                self.tracker_effects(state, effects);
            }
        }
        if state.tracker.entries.iter().filter(|e| e.is_some()).count() >= 2 {
            state.seen |= seen::TWO_SHAPES;
        }
        let after = (
            state.tracker.last_global_flushed_offset,
            state.client.flushed_wal,
            state.client.confirmed_flush,
        );
        if after.0 < before.0 || after.1 < before.1 || after.2 < before.2 {
            state.seen |= seen::REGRESSED;
        }
    }

    /// After the last call of a publish: the tracker takes the fragment (its `notify_fn` messages
    /// queue at the client), then the client finishes `handle_data`.
    fn finish_publish(&self, state: &mut State) {
        let (fragment, _) = *self.fragment(state).expect("a fragment being published");
        let delivery = state.collector.delivering.take().expect("inside a publish");
        let effects = state.tracker.handle_txn_fragment(
            self.config.variant.has_4064(),
            &fragment,
            &delivery.delivered,
        );
        self.tracker_effects(state, effects);
        state.client.after_fragment(
            self.config.variant.guards_keepalive(),
            fragment.tx,
            fragment.commit,
        );
        if usize::from(state.collector.published) < self.workload.len() {
            state.collector.published += 1;
        }
    }

    fn consumer_effects(&self, state: &mut State, s: u8, effects: Effects) {
        let bits = [
            (effects.timer_flush_in_txn, seen::TIMER_BEFORE_COMMIT),
            (effects.inline_flush, seen::INLINE_FLUSH),
            (effects.h2_dropped_entry, seen::H2),
            (effects.h4_empty_flush_owed, seen::H4),
            (effects.injected, seen::INJECTED),
            (effects.hibernate_flushed_data, seen::H1),
        ];
        for (happened, bit) in bits {
            if happened {
                state.seen |= bit;
            }
        }
        state
            .collector
            .mailbox
            .extend(effects.notified.into_iter().map(|o| (s, o)));
    }

    fn tracker_effects(&self, state: &mut State, effects: TrackerEffects) {
        if effects
            .deleted_at
            .is_some_and(|o| !self.is_commit_offset(o))
            || effects
                .notified_lsns
                .iter()
                .any(|&lsn| lsn > state.tracker.last_seen_offset.tx)
        {
            state.seen |= seen::BAD_BOUNDARY;
        }
        state.client.mailbox.extend(effects.notified_lsns);
    }

    /// The enabled actions, in a fixed order.
    pub fn enabled(&self, state: &State, actions: &mut Vec<Action>) {
        let cfg = &self.config;
        let variant = cfg.variant;
        match state.collector.delivering {
            // An unrelated transaction arrives after the client's earlier messages (one
            // mailbox, in order), so they never pile up.
            None if self.fragment(state).is_some()
                && state.collector.mailbox.is_empty()
                && (usize::from(state.collector.published) < self.workload.len()
                    || state.client.mailbox.is_empty()) =>
            {
                actions.push(Action::Publish)
            }
            Some(delivery) => {
                if let Some(s) = self.next_routed(state, delivery.next_shape) {
                    let shape = &state.shapes[usize::from(s)];
                    if !shape.status.has_process() || shape.mailbox.is_empty() {
                        actions.push(Action::Deliver(s));
                    }
                }
            }
            None => {}
        }
        for (s, shape) in state.shapes.iter().enumerate() {
            let s = s as u8;
            if !shape.status.has_process() {
                continue;
            }
            let timer_armed = shape.write_timer.is_some_and(|t| !t.fired);
            if timer_armed {
                actions.push(Action::TimerFires(s));
            }
            if !shape.mailbox.is_empty() {
                actions.push(Action::Handle(s));
            }
            let delivering_to_s = state
                .collector
                .delivering
                .is_some_and(|d| self.next_routed(state, d.next_shape) == Some(s));
            let timeout_allowed = cfg.timer_order == TimerOrder::Any || !timer_armed;
            if shape.status == Status::Running
                && shape.mailbox.is_empty()
                && !delivering_to_s
                && timeout_allowed
            {
                actions.push(Action::Timeout(s));
            }
            if shape.suspend_timer_armed {
                actions.push(Action::SuspendTimerFires(s));
            }
        }
        if state.collector.delivering.is_none() && !state.collector.mailbox.is_empty() {
            actions.push(Action::CollectorHandle);
        }
        // The client is the caller of a publish: it handles its mailbox only between fragments.
        if state.collector.delivering.is_none() && !state.client.mailbox.is_empty() {
            actions.push(Action::ClientHandle);
        }
        if state.collector.delivering.is_none() && !state.client.in_transaction {
            let mut probe = state.client.clone();
            if probe.keepalive(variant.guards_keepalive()) {
                actions.push(Action::Keepalive);
            }
        }
        if cfg.faults.kill() && state.crashes < cfg.crashes {
            for (s, shape) in state.shapes.iter().enumerate() {
                if shape.status.has_process() {
                    actions.push(Action::Kill(s as u8));
                }
            }
        }
        // The collector handles DOWN messages and its stall check between publishes.
        if variant.has_watchdog() && state.collector.delivering.is_none() {
            for (s, shape) in state.shapes.iter().enumerate() {
                if shape.status == Status::Dead {
                    actions.push(Action::Down(s as u8));
                }
            }
            let quiet = cfg.timer_order == TimerOrder::Any || self.settled(state);
            for s in 0..state.shapes.len() {
                let c = &state.shapes[s];
                if quiet
                    && c.status.is_live()
                    && state.tracker.entries[s].is_some()
                    && c.pending_flush_offset.is_none()
                {
                    actions.push(Action::StallCheck(s as u8));
                }
            }
        }
    }
}

debug_as_variables!(State);

impl Model for ElectricFlush {
    type State = State;
    type Action = Action;

    model_plumbing!();

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            NO_LOST_FLUSH_NOTIFICATION
                .check(|m: &ElectricFlush, s: &State| no_lost_flush_notification(m, s)),
            NOTIFIED_OFFSET_IS_TXN_BOUNDARY.check(|_, s: &State| s.seen & seen::BAD_BOUNDARY == 0),
            ACK_WITHIN_FLUSHED.check(|_, s: &State| ack_within_flushed(s)),
            GLOBAL_FLUSH_MONOTONE.check(|_, s: &State| s.seen & seen::REGRESSED == 0),
            WAL_RETENTION_BOUNDED.check(|m: &ElectricFlush, s: &State| wal_retention_bounded(m, s)),
            EVENTUALLY_ACKNOWLEDGED.check(|m: &ElectricFlush, s: &State| all_acknowledged(m, s)),
            REACH_TIMER_BEFORE_COMMIT.check(|_, s: &State| s.seen & seen::TIMER_BEFORE_COMMIT != 0),
            REACH_HIBERNATE_FLUSH.check(|_, s: &State| s.seen & seen::HIBERNATE != 0),
            REACH_INLINE_FLUSH.check(|_, s: &State| s.seen & seen::INLINE_FLUSH != 0),
            REACH_MULTI_FRAGMENT_TXN.check(|_, s: &State| s.seen & seen::MULTI_FRAGMENT != 0),
            REACH_TWO_SHAPES.check(|_, s: &State| s.seen & seen::TWO_SHAPES != 0),
            OCCURS_H1.check(|_, s: &State| s.seen & seen::H1 != 0),
            OCCURS_H2.check(|_, s: &State| s.seen & seen::H2 != 0),
            OCCURS_H3.check(|_, s: &State| s.seen & seen::TIMER_BEFORE_COMMIT != 0),
            OCCURS_H4.check(|_, s: &State| s.seen & seen::H4 != 0),
            LOST_AFTER_H1.check(|m: &ElectricFlush, s: &State| lost_after(m, s, seen::H1)),
            LOST_AFTER_H2.check(|m: &ElectricFlush, s: &State| lost_after(m, s, seen::H2)),
            LOST_AFTER_H3
                .check(|m: &ElectricFlush, s: &State| lost_after(m, s, seen::TIMER_BEFORE_COMMIT)),
            LOST_AFTER_H4.check(|m: &ElectricFlush, s: &State| lost_after(m, s, seen::H4)),
            LOST_AFTER_INJECTION
                .check(|m: &ElectricFlush, s: &State| lost_after(m, s, seen::INJECTED)),
        ]
    }
}

/// The fairness the `electric-flush` liveness checks assume, each weak (`WF`) and per shape where
/// a process is per shape (a starved consumer is not excused by a busy neighbour):
/// - `publish`: PostgreSQL keeps streaming the WAL it has and the collector's synchronous
///   `ConsumerRegistry.publish` calls return (`Publish`, `Deliver`).
/// - `handle-sN`: a BEAM process with a message in its mailbox eventually handles it
///   (`Consumer.handle_info`/`handle_cast`); so do the collector and the ReplicationClient.
/// - `timer-sN`, `timeout-sN`, `suspend-timer-sN`: `Process.send_after` timers (the 1 s flush
///   timer, the idle `:timeout`, the suspend timer) fire once armed.
/// - `keepalive`: the primary sends keepalives every `wal_sender_timeout / 2`.
/// - `down-sN`, `stall-check-sN`: HEAD's monitor and stall check (#4730) run.
///
/// Not fair: consumer kills (the fault).
pub const FAIRNESS: &[FairClass<Action>] = &[
    FairClass {
        class: "publish",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Publish | Action::Deliver(_)),
    },
    FairClass {
        class: "handle-s0",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Handle(0)),
    },
    FairClass {
        class: "handle-s1",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Handle(1)),
    },
    FairClass {
        class: "timer-s0",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::TimerFires(0)),
    },
    FairClass {
        class: "timer-s1",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::TimerFires(1)),
    },
    FairClass {
        class: "timeout-s0",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Timeout(0)),
    },
    FairClass {
        class: "timeout-s1",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Timeout(1)),
    },
    FairClass {
        class: "suspend-timer-s0",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::SuspendTimerFires(0)),
    },
    FairClass {
        class: "suspend-timer-s1",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::SuspendTimerFires(1)),
    },
    FairClass {
        class: "collector",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::CollectorHandle),
    },
    FairClass {
        class: "client",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::ClientHandle),
    },
    FairClass {
        class: "keepalive",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Keepalive),
    },
    FairClass {
        class: "down-s0",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Down(0)),
    },
    FairClass {
        class: "down-s1",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Down(1)),
    },
    FairClass {
        class: "stall-check-s0",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::StallCheck(0)),
    },
    FairClass {
        class: "stall-check-s1",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::StallCheck(1)),
    },
];

impl Live for ElectricFlush {
    /// The fairness its `fairness` bound selects: [`FAIRNESS`], or none.
    fn fairness(&self) -> &'static [FairClass<Action>] {
        match self.config.fairness {
            FairnessChoice::Declared => FAIRNESS,
            FairnessChoice::None => &[],
        }
    }

    /// The liveness properties, by id (`eventually-acknowledged`).
    fn liveness(&self) -> Vec<Liveness<ElectricFlush, State>> {
        vec![Liveness {
            id: EVENTUALLY_ACKNOWLEDGED.id,
            trigger: None,
            goal: all_acknowledged,
        }]
    }
}

/// `eventually-acknowledged`'s goal: the slot's `confirmed_flush` has reached the last commit of
/// the workload, so every committed transaction is acknowledged (Electric
/// `postgres/replication_client.ex:encode_standby_status_update` (1.4.15 `64a89a05f`) sends the
/// flush position PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage` moves the slot to).
pub fn all_acknowledged(model: &ElectricFlush, state: &State) -> bool {
    state.client.confirmed_flush >= model.last_commit_lsn()
}

/// Holds unless a notification is lost on a path where history bit `bit` was set.
fn lost_after(model: &ElectricFlush, state: &State, bit: u16) -> bool {
    state.seen & bit == 0 || no_lost_flush_notification(model, state)
}

/// `no-lost-flush-notification`: at quiescence no live shape has a tracker entry, and no
/// consumer holds a mapping entry whose key is persisted (its boundary never notified).
pub fn no_lost_flush_notification(model: &ElectricFlush, state: &State) -> bool {
    !model.quiescent(state)
        || state.shapes.iter().enumerate().all(|(s, c)| {
            !c.status.is_live()
                || (state.tracker.entries[s].is_none()
                    && !(c.status.has_process() && c.owes_notification()))
        })
}

/// `ack-within-flushed`: the slot's `confirmed_flush` stays below the commit LSN of every received
/// transaction with lines a live shape has not persisted.
pub fn ack_within_flushed(state: &State) -> bool {
    state.shapes.iter().all(|c| match c.writer.buffer_first {
        Some(line) if c.status.is_live() && line.tx <= state.client.last_seen_txn_lsn => {
            state.client.confirmed_flush < line.tx
        }
        _ => true,
    })
}

/// `wal-retention-bounded`: at quiescence `confirmed_flush` has reached the last scripted commit's
/// LSN (unrelated transactions after it, [`Traffic::Steady`], may take it further).
pub fn wal_retention_bounded(model: &ElectricFlush, state: &State) -> bool {
    !model.quiescent(state) || state.client.confirmed_flush >= model.last_commit_lsn()
}

impl Variables for State {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        const NAMES: [[&str; 6]; 2] = [
            [
                "s0.consumer",
                "s0.buffer",
                "s0.timer",
                "s0.mailbox",
                "s0.mapping",
                "s0.pending_flush",
            ],
            [
                "s1.consumer",
                "s1.buffer",
                "s1.timer",
                "s1.mailbox",
                "s1.mapping",
                "s1.pending_flush",
            ],
        ];
        const TRACKED: [&str; 2] = ["tracker.s0", "tracker.s1"];
        let text = |s: String| Var::Text(s);
        let mut vars = Vec::new();
        for (s, c) in self.shapes.iter().enumerate() {
            let status = match c.status {
                Status::Running => "running",
                Status::Hibernated => "hibernated",
                Status::Suspended => "suspended",
                Status::Dead => "dead",
                Status::Removed => "removed",
            };
            let pending = c
                .pending_txn
                .map_or(String::new(), |p| format!(", pending T{}", p.tx));
            let timer = match c.write_timer {
                None => "none".to_owned(),
                Some(t) if t.fired => format!("fired({})", t.requested),
                Some(t) => format!("armed({})", t.requested),
            };
            let mailbox: Vec<String> = c
                .mailbox
                .iter()
                .map(|m| match m {
                    Msg::Flushed(o) => format!("flushed {o}"),
                    Msg::TimerFire(n) => format!("timer({n})"),
                    Msg::SuspendTimer => "suspend".to_owned(),
                })
                .collect();
            let mapping: Vec<String> = c.mapping.iter().map(|(k, b)| format!("{k}->{b}")).collect();
            let names = NAMES[s];
            vars.push((names[0], text(format!("{status}{pending}"))));
            vars.push((
                names[1],
                text(format!(
                    "{} lines, persisted {}",
                    c.writer.buffer_lines, c.writer.last_persisted_offset
                )),
            ));
            vars.push((names[2], text(timer)));
            vars.push((names[3], text(format!("[{}]", mailbox.join(", ")))));
            vars.push((names[4], text(format!("[{}]", mapping.join(", ")))));
            vars.push((
                names[5],
                text(
                    c.pending_flush_offset
                        .map_or("none".to_owned(), |o| o.to_string()),
                ),
            ));
            let entry = self.tracker.entries[s].map_or("none".to_owned(), |e| {
                format!("sent {} flushed {}", e.last_sent, e.last_flushed)
            });
            vars.push((TRACKED[s], text(entry)));
        }
        let casts: Vec<String> = self
            .collector
            .mailbox
            .iter()
            .map(|(s, o)| format!("s{s} {o}"))
            .collect();
        vars.extend([
            ("published", Var::Int(self.collector.published.into())),
            ("collector.mailbox", text(format!("[{}]", casts.join(", ")))),
            (
                "tracker.global",
                text(self.tracker.last_global_flushed_offset.to_string()),
            ),
            ("client.mailbox", text(format!("{:?}", self.client.mailbox))),
            ("flushed_wal", Var::Int(self.client.flushed_wal.into())),
            ("wal_end", Var::Int(self.client.wal_end.into())),
            (
                "confirmed_flush",
                Var::Int(self.client.confirmed_flush.into()),
            ),
            (
                "retained_wal",
                Var::Int(
                    self.client
                        .wal_end
                        .saturating_sub(self.client.confirmed_flush)
                        .into(),
                ),
            ),
            ("crashes", Var::Int(self.crashes.into())),
        ]);
        vars
    }
}
