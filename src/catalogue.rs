//! The check catalogue: every (system, variant, faults, knobs, property) walcheck checks by
//! default, with the verdict upstream code leads us to expect and the upstream reason.
//!
//! It is the project's regression suite: `walcheck check` with no SPEC runs all of it, and exits
//! 1 when a verdict differs from its expectation. Selecting with SPEC, `--faults` and `--bound`
//! narrows or reconfigures it; expectations are a function of the configuration, so a
//! reconfigured entry still has one.

use walcheck_model::electric;
use walcheck_model::olake::sync::SyncVariant;
use walcheck_model::olake::Variant;
use walcheck_model::pg::Role;
use walcheck_properties::system::{
    BoundInfo, BoundValue, FairnessChoice, Lanes, Live, PropertyInfo, Variables,
};
use walcheck_systems::electric_flush;
use walcheck_systems::olake_bootstrap::{self, Config, Faults};
use walcheck_systems::olake_sync;
use walcheck_traces::Header;

use std::fmt::{Debug, Display};
use std::hash::Hash;

use stateright::Model;

use crate::checker::Verdict;

/// A system as `walcheck list` describes it.
#[derive(Copy, Clone, Debug)]
pub struct SystemInfo {
    pub name: &'static str,
    pub variants: &'static [&'static str],
    pub faults: &'static [&'static str],
    pub bounds: &'static [BoundInfo],
    pub properties: &'static [PropertyInfo],
    /// Variables every step table shows.
    pub key_variables: &'static [&'static str],
    /// Variables step tables leave out.
    pub counters: &'static [&'static str],
    /// How its traces are drawn.
    pub lanes: &'static Lanes,
    /// A knob the default catalogue runs at its default and at this other value (unless
    /// `--bound` sets it): olake-bootstrap's `server=standby`, electric-flush's `timer_order=any`.
    pub also: (&'static str, &'static str),
}

/// Every system walcheck knows.
pub const SYSTEMS: &[SystemInfo] = &[
    SystemInfo {
        name: olake_bootstrap::NAME,
        variants: &["master", "pr854", "pr1084"],
        faults: &["none", "connector-crash", "pg-crash", "all"],
        bounds: olake_bootstrap::BOUNDS,
        properties: olake_bootstrap::PROPERTIES,
        key_variables: olake_bootstrap::KEY_VARIABLES,
        counters: olake_bootstrap::COUNTERS,
        lanes: &olake_bootstrap::LANES,
        also: ("server", "standby"),
    },
    SystemInfo {
        name: electric_flush::NAME,
        variants: &[
            "v1.4.15",
            "pr4064",
            "head",
            "fix1-notify-after-hibernate",
            "fix2-close-returns-offset",
            "fix3-periodic-recheck",
            "fix4-flush-returns-offset",
        ],
        faults: &["none", "consumer-kill", "suspend", "all"],
        bounds: electric_flush::BOUNDS,
        properties: electric_flush::PROPERTIES,
        key_variables: electric_flush::KEY_VARIABLES,
        counters: electric_flush::COUNTERS,
        lanes: &electric_flush::LANES,
        also: ("timer_order", "any"),
    },
    SystemInfo {
        name: olake_sync::NAME,
        variants: &SyncVariant::NAMES,
        faults: &["none", "connector-crash", "pg-crash", "all"],
        bounds: olake_sync::BOUNDS,
        properties: olake_sync::PROPERTIES,
        key_variables: olake_sync::KEY_VARIABLES,
        counters: olake_sync::COUNTERS,
        lanes: &olake_sync::LANES,
        also: ("keepalive", "on"),
    },
];

/// The system called `name`, or a one-line error listing the systems.
pub fn system(name: &str) -> Result<&'static SystemInfo, String> {
    SYSTEMS.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<_> = SYSTEMS.iter().map(|s| s.name).collect();
        format!("unknown system {name:?}; systems are {}", names.join(", "))
    })
}

/// The configuration a trace header names, or a one-line error saying which part is unknown.
pub fn config_from_header(header: &Header) -> Result<SystemConfig, String> {
    let info = system(&header.system)?;
    let mut config = SystemConfig::new(info, &header.variant, &header.faults)?;
    for (name, value) in &header.config {
        // A simulated trace also carries the simulator's workload knobs.
        config.set_knob(name, value)?;
    }
    Ok(config)
}

/// The configuration of one system.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SystemConfig {
    OlakeBootstrap(Config),
    ElectricFlush(electric_flush::Config),
    OlakeSync(olake_sync::Config),
}

/// A computation over any of walcheck's models (a closure cannot be generic over them), run by
/// [`SystemConfig::with_model`] on the model of a configuration.
pub trait WithModel {
    type Output;
    fn call<M>(self, model: M) -> Self::Output
    where
        M: Model + Live + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Variables + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Display + Send + Sync + 'static;
}

impl SystemConfig {
    /// Calls `f` with the model of this configuration: the one place that turns a configuration
    /// into its model, so a system added to [`SystemConfig`] needs an arm here only (the match has
    /// no catch-all, so the compiler says so).
    pub fn with_model<R>(&self, f: impl WithModel<Output = R>) -> R {
        match *self {
            SystemConfig::OlakeBootstrap(c) => f.call(olake_bootstrap::OlakeBootstrap::new(c)),
            SystemConfig::ElectricFlush(c) => f.call(electric_flush::ElectricFlush::new(c)),
            SystemConfig::OlakeSync(c) => f.call(olake_sync::OlakeSync::new(c)),
        }
    }

    /// `info`'s system with the variant and fault set named, every bound at its default, or a
    /// one-line error naming what is unknown.
    pub fn new(info: &SystemInfo, variant: &str, faults: &str) -> Result<SystemConfig, String> {
        let no_variant = || {
            format!(
                "{} has no variant {variant:?}; its variants are {}",
                info.name,
                info.variants.join(", ")
            )
        };
        let no_faults = || {
            format!(
                "{} has no fault set {faults:?}; its fault sets are {}",
                info.name,
                info.faults.join(", ")
            )
        };
        Ok(match info.name {
            olake_bootstrap::NAME => SystemConfig::OlakeBootstrap(Config::new(
                Variant::from_name(variant).ok_or_else(no_variant)?,
                Faults::from_name(faults).ok_or_else(no_faults)?,
            )),
            olake_sync::NAME => SystemConfig::OlakeSync(olake_sync::Config::new(
                SyncVariant::from_name(variant).ok_or_else(no_variant)?,
                Faults::from_name(faults).ok_or_else(no_faults)?,
            )),
            _ => SystemConfig::ElectricFlush(electric_flush::Config::new(
                electric::Variant::from_name(variant).ok_or_else(no_variant)?,
                electric_flush::Faults::from_name(faults).ok_or_else(no_faults)?,
            )),
        })
    }

    /// The system's description.
    pub fn info(&self) -> &'static SystemInfo {
        match self {
            SystemConfig::OlakeBootstrap(_) => &SYSTEMS[0],
            SystemConfig::ElectricFlush(_) => &SYSTEMS[1],
            SystemConfig::OlakeSync(_) => &SYSTEMS[2],
        }
    }

    pub fn variant(&self) -> &'static str {
        match self {
            SystemConfig::OlakeBootstrap(c) => c.variant.name(),
            SystemConfig::ElectricFlush(c) => c.variant.name(),
            SystemConfig::OlakeSync(c) => c.variant.name(),
        }
    }

    pub fn faults(&self) -> &'static str {
        match self {
            SystemConfig::OlakeBootstrap(c) => c.faults.name(),
            SystemConfig::ElectricFlush(c) => c.faults.name(),
            SystemConfig::OlakeSync(c) => c.faults.name(),
        }
    }

    /// Every bound's value, in the system's order.
    pub fn bounds(&self) -> Vec<(&'static str, BoundValue)> {
        match self {
            SystemConfig::OlakeBootstrap(c) => c.bounds(),
            SystemConfig::ElectricFlush(c) => c.bounds(),
            SystemConfig::OlakeSync(c) => c.bounds(),
        }
    }

    /// The bounds whose value is not the default, as `name=value`.
    pub fn non_default_bounds(&self) -> Vec<String> {
        let info = self.info();
        self.bounds()
            .into_iter()
            .filter(|(name, value)| {
                info.bounds
                    .iter()
                    .any(|b| b.name == *name && b.default != *value)
            })
            .map(|(name, value)| format!("{name}={value}"))
            .collect()
    }

    /// Sets a bound from its text, or says in one line why not.
    pub fn set_bound(&mut self, name: &str, value: &str) -> Result<(), String> {
        match self {
            SystemConfig::OlakeBootstrap(c) => c.set_bound(name, value),
            SystemConfig::ElectricFlush(c) => c.set_bound(name, value),
            SystemConfig::OlakeSync(c) => c.set_bound(name, value),
        }
    }

    /// Sets a bound, or a knob only traces carry (the simulator's workload), from its text.
    pub fn set_knob(&mut self, name: &str, value: &str) -> Result<(), String> {
        match self {
            SystemConfig::OlakeBootstrap(c) => c.set_knob(name, value),
            SystemConfig::ElectricFlush(c) => c.set_bound(name, value),
            SystemConfig::OlakeSync(c) => c.set_bound(name, value),
        }
    }

    /// Whether `property` applies to this configuration (a witness's knob or fault is there).
    pub fn applies(&self, property: &PropertyInfo) -> bool {
        match self {
            SystemConfig::OlakeBootstrap(c) => c.meets(property.needs),
            SystemConfig::ElectricFlush(c) => c.meets(property.needs),
            SystemConfig::OlakeSync(c) => c.meets(property.needs),
        }
    }

    /// The verdict expected for `property`, and why.
    pub fn expected(&self, property: &PropertyInfo) -> (Verdict, &'static str) {
        match self {
            SystemConfig::OlakeBootstrap(c) => olake_expected(c, property.id),
            SystemConfig::ElectricFlush(c) => electric_expected(c, property.id),
            SystemConfig::OlakeSync(c) => olake_sync_expected(c, property.id),
        }
    }
}

/// What upstream code leads us to expect of `olake-bootstrap`, given every bound that decides it:
/// the variant and role, whether any WAL is written (`statements`), whether a fault can happen
/// (`faults`, `crashes`), and whether a later run validates what a crash left (`syncs`).
fn olake_expected(c: &Config, property: &str) -> (Verdict, &'static str) {
    use Verdict::{Holds, Violated};
    let standby = c.server == Role::Standby;
    let wal = c.statements > 0;
    let connector_crash = c.faults.connector_crash() && c.crashes > 0;
    let pg_crash = c.faults.pg_crash() && c.crashes > 0;
    let later_run = c.syncs > 1;
    let no_standby_read = c.variant == Variant::Pr854 && standby;
    const NO_STANDBY_READ: &str =
        "#854 predates #1070: pg_current_wal_lsn() fails on a standby (recovery is in progress), so it never bootstraps there";
    const NO_WAL: &str =
        "statements=0: no WAL is written, so write never passes flush and the slot never moves";
    const NO_FAULT: &str = "crashes=0: no fault can be injected";
    const NO_LATER_RUN: &str = "syncs=1: no later run validates the state the crash left behind";
    let reached = |possible: bool, why_not: &'static str| {
        if possible {
            (
                Holds,
                "witness: the behaviour the safety verdicts depend on is reachable",
            )
        } else {
            (Violated, why_not)
        }
    };
    match property {
        "wal-pointers-ordered" => {
            return (Holds, "PostgreSQL 15 xlog.c keeps insert >= write >= flush; the advance clamps to flush or replay");
        }
        "reach-write-ahead-at-read" | "reach-advance-clamped" => return reached(wal, NO_WAL),
        "reach-bootstrap-complete" | "reach-standby-bootstrap" => {
            return reached(!no_standby_read, NO_STANDBY_READ)
        }
        "reach-connector-crash" => return reached(connector_crash, NO_FAULT),
        "reach-pg-crash-after-advance" => {
            return match (no_standby_read, wal) {
                (true, _) => (Violated, NO_STANDBY_READ),
                (false, false) => (Violated, NO_WAL),
                (false, true) => reached(pg_crash, NO_FAULT),
            };
        }
        "bootstrap-eventually-completes" => {
            return match (c.fairness, c.variant, standby, wal) {
                (FairnessChoice::None, Variant::Pr1084, false, true) => (
                    Violated,
                    "no fairness: #1084 re-sends the clamped advance every 100 ms and the walwriter may never flush, a cycle that never leaves the bootstrap",
                ),
                (FairnessChoice::None, ..) => {
                    (Holds, "no retry loop here: every bootstrap step leaves the bootstrap or moves on")
                }
                (FairnessChoice::Declared, ..) => (
                    Holds,
                    "weakly fair walwriter: within wal_writer_delay the flush passes W0, and #1084's next advance reaches it",
                ),
            };
        }
        "state-matches-slot" | "no-lsn-mismatch" => {}
        other => unreachable!("olake-bootstrap has no property {other}"),
    }
    // Violated in the crashed run itself; the mismatch needs a later run to validate.
    let crash_window = |why: &'static str| {
        if property == "no-lsn-mismatch" && !later_run {
            (Holds, NO_LATER_RUN)
        } else {
            (Violated, why)
        }
    };
    match (c.variant, standby) {
        _ if no_standby_read => (Holds, NO_STANDBY_READ),
        _ if !wal => (Holds, NO_WAL),
        (Variant::Master, false) => (
            Violated,
            "OLake #1084: the state gets pg_current_wal_lsn() (the write pointer), the advance clamps to flush, end_lsn is discarded",
        ),
        (Variant::Pr854, false) => {
            (Violated, "OLake #854 advances first but still discards end_lsn: the clamp to flush goes unnoticed")
        }
        (Variant::Master, true) if connector_crash || pg_crash => crash_window(
            "OLake #853: master writes the state before the advance; a crash between them leaves the state ahead of the slot",
        ),
        (Variant::Master, true) => {
            (Holds, "on a standby the target is the replay pointer, which the advance's clamp cannot undercut")
        }
        (Variant::Pr1084, _) if pg_crash => crash_window(
            "slotfuncs.c: an advance that does not move restart_lsn is saved only at the next checkpoint; a PostgreSQL crash before it takes the slot back below the state file",
        ),
        (Variant::Pr1084, _) => {
            (Holds, "OLake #1084: advances until end_lsn reaches the target, and only then writes the state")
        }
        (Variant::Pr854, true) => unreachable!("handled as no_standby_read"),
    }
}

/// What upstream code leads us to expect of `olake-sync` (olake-postgres.md §1, §3;
/// postgres-live.md §3), given every bound that decides it: the variant (the order of the three
/// side effects, the recovery rules), whether a change is ever streamed (`txns`), whether a fault
/// can happen (`faults`, `crashes`), whether a later run validates what it left (`syncs`), and
/// whether keepalives reach the stream loop (`keepalive`).
fn olake_sync_expected(c: &olake_sync::Config, property: &str) -> (Verdict, &'static str) {
    use SyncVariant::{Master, Pr854, Pr864, V050};
    use Verdict::{Holds, Violated};
    let data = c.txns > 0;
    let connector_crash = c.faults.connector_crash() && c.crashes > 0;
    let pg_crash = c.faults.pg_crash() && c.crashes > 0;
    let later_run = c.syncs > 1;
    // A keepalive regression needs a stream that starts above restart_lsn and still has a
    // transaction to wait for: a second transaction after an acknowledged first one.
    let regression = c.keepalive && c.txns >= 2 && later_run;
    const NO_DATA: &str =
        "txns=0: no change is streamed, so every position stays where the bootstrap left it";
    const NO_FAULT: &str = "no fault can be injected (faults or crashes=0)";
    const NO_LATER_RUN: &str = "syncs=1: no later run validates what the crash left behind";
    const WITNESS: &str = "witness: the behaviour the safety verdicts depend on is reachable";
    let reached = |possible: bool, why_not: &'static str| {
        if possible {
            (Holds, WITNESS)
        } else {
            (Violated, why_not)
        }
    };
    match property {
        "no-data-loss" => (Holds, "every variant commits the destination before it acknowledges: handleWriterCleanup is deferred after PostCDC and runs first (#854 calls PostCDC from handleWriterCleanup, after the writers close)"),
        "ack-within-destination" => (Holds, "the acknowledgement sends ClientXLogPos after the destination committed it (a recovery sync pins it to the committed LSN)"),
        "no-ack-timeout" => {
            // Found by the model beyond the default bounds: a first sync acknowledges two
            // transactions and PostgreSQL moves restart_lsn to a decoding candidate between them
            // (saving the slot), a keepalive of the next stream (waiting for a third
            // transaction) drags ClientXLogPos back to restart_lsn, a PostgreSQL restart ends the
            // loop with EOF (return nil), the destination commits the regressed LSN, the
            // connector crashes, and v0.5.0's recovery (metadata != state) pins the next ack
            // below the slot.
            let window = c.variant == V050
                && regression
                && c.txns >= 3
                && connector_crash
                && pg_crash
                && c.crashes >= 2
                && c.syncs >= 3;
            if window {
                (Violated, "new (the #862 symptom by another road): an ack saved with restart_lsn at a decoding candidate below confirmed_flush (logical.c:LogicalConfirmReceivedLocation), a keepalive regression to it, EOF on a PostgreSQL restart, a connector crash after the commit; v0.5.0's recovery acknowledges the regressed metadata LSN below the slot and the == poll never matches")
            } else {
                (Holds, "the loop exits only at ClientXLogPos >= CurrentWalPosition >= confirmed_flush, so #862's keepalive regression never reaches AcknowledgeLSN (within these bounds; the road found needs txns >= 3, syncs >= 3, crashes = 2, keepalive=on, v0.5.0)")
            }
        }
        "no-lsn-mismatch" => {
            if !data {
                return (Holds, NO_DATA);
            }
            if !later_run {
                return (Holds, NO_LATER_RUN);
            }
            match c.variant {
                V050 | Pr864 if connector_crash => (Violated, "OLake #853: the state file is written before the acknowledgement; a crash between them leaves the state ahead of the slot"),
                Pr854 if connector_crash => (Violated, "the #998 window: #854 acknowledges before the state write and has no 2PC recovery skip, so a crash between them leaves the slot ahead of the state"),
                V050 | Pr864 if pg_crash => (Violated, "OLake #853 through a PostgreSQL restart: EOF ends the stream loop with nil, PostCDC writes the state, then the acknowledgement fails on the dead connection (a restart after a completed ack takes it back as well)"),
                _ if pg_crash => (Violated, "postgres-live.md §3: an acknowledgement that does not move restart_lsn lives in memory only (a walsender acknowledgement does not even dirty the slot, so a checkpoint does not save it); a PostgreSQL restart takes the slot back below the state file"),
                Master if connector_crash => (Holds, "OLake #870 + #865/#998: ack before state, and a crash after the commit is a recovery sync that skips validation"),
                _ => (Holds, NO_FAULT),
            }
        }
        "reach-sync-complete" => reached(data, NO_DATA),
        "reach-duplicate" => match c.variant {
            Pr854 => reached(data && later_run && (connector_crash || pg_crash), NO_FAULT),
            // A keepalive regression cut short by a PostgreSQL restart (EOF) commits and writes
            // the regressed LSN as state; a third run validates it and streams again.
            V050 if regression && pg_crash && c.syncs >= 3 => (Holds, WITNESS),
            _ => (Violated, "2PC: the destination metadata makes a rerun a recovery sync that writes nothing again, so this single-stream workload never duplicates"),
        },
        "reach-crash-after-commit" => reached(connector_crash, NO_FAULT),
        "reach-crash-after-ack" => match c.variant {
            V050 | Pr864 => (Violated, "v0.5.0's order ends with the acknowledgement: a crash after it is a crash after the sync"),
            Master | Pr854 => reached(connector_crash, NO_FAULT),
        },
        "reach-crash-after-state" => match c.variant {
            Master | Pr854 => (Violated, "#870's order ends with the state write: a crash after it is a crash after the sync"),
            V050 | Pr864 => reached(connector_crash, NO_FAULT),
        },
        "reach-recovery-sync" => match c.variant {
            Pr854 => (Violated, "#854 predates the 2PC refactor: the destination records no LSN, so there is no recovery sync"),
            _ => reached(connector_crash && data && later_run, NO_FAULT),
        },
        "reach-pg-crash-after-ack" => reached(pg_crash && data, NO_FAULT),
        "reach-keepalive-regression" => match c.variant {
            Pr864 => (Violated, "#864: a keepalive only moves ClientXLogPos forward"),
            _ => reached(regression, "a regression needs a second stream that starts above restart_lsn and waits for a later transaction (txns >= 2, syncs >= 2)"),
        },
        other => unreachable!("olake-sync has no property {other}"),
    }
}

/// What Electric's code leads us to expect of `electric-flush` (electric.md §2–4), given the
/// bounds that decide it.
fn electric_expected(c: &electric_flush::Config, property: &str) -> (Verdict, &'static str) {
    use electric_flush::TimerOrder;
    use Verdict::{Holds, Violated};
    let bug_era = !c.variant.has_4064();
    let head = c.variant == electric::Variant::Head;
    let kill = c.faults.kill() && c.crashes > 0;
    let suspend = c.faults.suspend();
    let any_order = c.timer_order == TimerOrder::Any;
    // T2's one line for shape 1 stays buffered (below the threshold) while keepalives may come.
    let small_txn = c.shapes == 2 && c.txns >= 2 && c.inline_flush_lines >= 2;
    const MECHANISM: &str = "#4064 mechanism: a non-commit fragment's :flushed is handled before the commit appends its mapping entry; align returns the raw offset, and nothing re-notifies";
    const SUSPEND_LOSS: &str = "#3982: a suspended consumer's terminate flushes, and its :flushed is never handled (reachable only when the :timeout may fire under an armed flush timer)";
    const DEAD_PINS: &str = "#3975: a dead consumer's entry pins the global offset until a publish finds it undeliverable (#4011); HEAD's monitor removes it (#4730)";
    const KEEPALIVE: &str = "#4731: outside a transaction a keepalive acknowledges wal_end while flush_up_to_date? is still true from the previous transaction";
    match property {
        "no-lost-flush-notification" | "wal-retention-bounded" | "eventually-acknowledged" => {
            if head {
                (Holds, "HEAD: #4064 plus the suspend guards (#4503) and the watchdog (#4730)")
            } else if bug_era {
                (Violated, MECHANISM)
            } else if suspend && any_order && c.inline_flush_lines >= 2 {
                (Violated, SUSPEND_LOSS)

            } else if kill && property != "no-lost-flush-notification" && (c.inline_flush_lines >= 2 || (c.shapes == 2 && c.txns >= 2)) {
                (Violated, DEAD_PINS)
            } else {
                (Holds, "#4064: :flushed is deferred while the transaction is pending and released aligned at its commit")
            }
        }
        "ack-within-flushed" => {
            // In the bug era with two shapes, no suspension and T2 last, a stuck shape always keeps
            // the client from being up to date before T2, so no keepalive acknowledges past it.
            let masked = bug_era && c.shapes == 2 && !suspend && c.txns <= 2;
            if head {
                (Holds, "HEAD #4731: flush_up_to_date? is last_confirmed_flush_lsn == last_seen_txn_lsn")
            } else if !small_txn {
                (Holds, "no small transaction follows a fully flushed one (txns=1 or an inline flush at every line)")
            } else if masked {
                (Holds, "masked: the stuck shape keeps the client from ever being up to date")
            } else {
                (Violated, KEEPALIVE)
            }
        }
        "notified-offset-is-txn-boundary" => {
            (Holds, "entries complete only at last_sent, a commit's last_log_offset in every tracked fragment of this workload")
        }
        "global-flush-monotone" => (Holds, "update_global_offset takes the max; the client takes the max"),
        "reach-hibernate-flush" if suspend && !head => {
            (Violated, "with suspension on, every idle :timeout before HEAD stops the consumer instead of hibernating it")
        }
        "reach-timer-before-commit" if c.inline_flush_lines < 2 => {
            (Violated, "inline_flush_lines=1: every line flushes inline, no timer flush happens")
        }
        "reach-inline-flush" if c.shapes < 2 && c.inline_flush_lines >= 2 => {
            (Violated, "with one shape no fragment reaches the inline-flush threshold")
        }
        _ => (Holds, "witness: the behaviour the safety verdicts depend on is reachable"),
    }
}

/// Liveness properties the default catalogue also checks without fairness (`fairness=none`,
/// unless `--bound fairness=` is given), beside the declared fairness: where fairness decides
/// the verdict, both outcomes stay in the regression suite.
pub const ALSO_UNFAIR: &[&str] = &["bootstrap-eventually-completes"];

/// Knobs the default catalogue sets for a liveness property (unless `--bound` sets them):
/// `eventually-acknowledged` runs with unrelated transactions arriving forever after the scripted
/// ones (`traffic=steady`), as on a database in use, so a stuck entry shows as a cycle of them.
pub const LIVENESS_KNOBS: &[(&str, &str, &str)] =
    &[("eventually-acknowledged", "traffic", "steady")];

/// One check: a configuration, a property, and what is expected of it.
#[derive(Clone, Debug)]
pub struct Entry {
    pub config: SystemConfig,
    pub property: &'static PropertyInfo,
    pub expected: Verdict,
    pub reason: &'static str,
}

impl Entry {
    pub fn system(&self) -> &'static str {
        self.config.info().name
    }
}

/// `--bound NAME=VALUE` split at its first `=`, or a one-line error.
pub fn split_bound(bound: &str) -> Result<(&str, &str), String> {
    bound
        .split_once('=')
        .filter(|(n, _)| !n.is_empty())
        .ok_or_else(|| {
            format!("malformed --bound {bound:?}: expected NAME=VALUE, e.g. statements=3")
        })
}

/// What to check: `system[:variant]` specs (none: everything), an optional fault set, and
/// `--bound name=value` settings.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub specs: Vec<String>,
    pub faults: Option<String>,
    pub bounds: Vec<String>,
}

/// The entries `selection` names, in catalogue order, or a one-line reason it names none.
///
/// Each selected system runs every variant named (all without `:variant`), every fault set (or
/// the one `--faults` names), at its `also` knob's default and other value unless `--bound` sets it,
/// and every property that applies, with the other bounds set as given.
pub fn select(selection: &Selection) -> Result<Vec<Entry>, String> {
    let mut wanted: Vec<(&'static SystemInfo, Option<&'static str>)> = Vec::new();
    if selection.specs.is_empty() {
        wanted.extend(SYSTEMS.iter().map(|s| (s, None)));
    }
    for spec in &selection.specs {
        let (name, variant) = match spec.split_once(':') {
            Some((name, variant)) => (name, Some(variant)),
            None => (spec.as_str(), None),
        };
        let info = system(name)?;
        let variant = match variant {
            None => None,
            Some(v) => Some(*info.variants.iter().find(|n| **n == v).ok_or_else(|| {
                format!(
                    "{} has no variant {v:?}; its variants are {}",
                    info.name,
                    info.variants.join(", ")
                )
            })?),
        };
        if !wanted
            .iter()
            .any(|(s, v)| s.name == info.name && (v.is_none() || *v == variant))
        {
            if variant.is_none() {
                // The whole system covers any of its variants named before.
                wanted.retain(|(s, _)| s.name != info.name);
            }
            wanted.push((info, variant));
        }
    }
    let mut bounds: Vec<(String, String)> = Vec::new();
    for bound in &selection.bounds {
        let (name, value) = split_bound(bound)?;
        if bounds.iter().any(|(n, _)| n == name) {
            return Err(format!("--bound {name} is given twice"));
        }
        bounds.push((name.to_owned(), value.to_owned()));
    }

    // Without a SPEC, --faults and --bound apply to the systems that have them.
    if selection.specs.is_empty() {
        let fits = |info: &SystemInfo| {
            selection
                .faults
                .as_deref()
                .is_none_or(|f| info.faults.contains(&f))
                && bounds
                    .iter()
                    .all(|(name, _)| info.bounds.iter().any(|b| b.name == name))
        };
        wanted.retain(|(info, _)| fits(info));
        if wanted.is_empty() {
            return Err("no system has all of the --faults and --bound given; name one with a SPEC (see walcheck list)".into());
        }
    }
    let mut entries = Vec::new();
    for (info, variant) in wanted {
        if let Some(faults) = &selection.faults {
            if !info.faults.contains(&faults.as_str()) {
                return Err(format!(
                    "{} has no fault set {faults:?}; its fault sets are {}",
                    info.name,
                    info.faults.join(", ")
                ));
            }
        }
        for config in configurations(info, variant, selection.faults.as_deref(), &bounds)? {
            let mut later = Vec::new();
            for property in info.properties {
                if !config.applies(property) {
                    continue;
                }
                // A liveness property's own knobs make it a configuration of its own, listed after
                // the one it comes from.
                let mut own = config;
                for (id, knob, value) in LIVENESS_KNOBS {
                    if *id == property.id && !bounds.iter().any(|(n, _)| n == knob) {
                        own.set_bound(knob, value)?;
                    }
                }
                let (expected, reason) = own.expected(property);
                let entry = Entry {
                    config: own,
                    property,
                    expected,
                    reason,
                };
                if own == config {
                    entries.push(entry);
                } else {
                    later.push(entry);
                }
                if ALSO_UNFAIR.contains(&property.id)
                    && !bounds.iter().any(|(n, _)| n == "fairness")
                {
                    let mut unfair = own;
                    unfair.set_bound("fairness", "none")?;
                    let (expected, reason) = unfair.expected(property);
                    later.push(Entry {
                        config: unfair,
                        property,
                        expected,
                        reason,
                    });
                }
            }
            entries.append(&mut later);
        }
    }
    Ok(entries)
}

fn configurations(
    info: &SystemInfo,
    variant: Option<&str>,
    faults: Option<&str>,
    bounds: &[(String, String)],
) -> Result<Vec<SystemConfig>, String> {
    let mut configs = Vec::new();
    let alsos: [Option<&str>; 2] = [None, Some(info.also.1)];
    for v in info
        .variants
        .iter()
        .filter(|v| variant.is_none_or(|name| **v == name))
    {
        for f in info
            .faults
            .iter()
            .filter(|f| faults.is_none_or(|name| **f == name))
        {
            for also in alsos {
                let mut config = SystemConfig::new(info, v, f)?;
                if let Some(value) = also {
                    config.set_bound(info.also.0, value)?;
                }
                for (name, value) in bounds {
                    config.set_bound(name, value)?;
                }
                if !configs.contains(&config) {
                    configs.push(config);
                }
            }
        }
    }
    Ok(configs)
}
