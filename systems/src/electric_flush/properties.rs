//! System `electric-flush`: its properties, each declared once with its predicate, and the fairness its liveness checks assume.

use super::*;
use walcheck_properties::system::{FairClass, Fairness, Live, Liveness, PropertyInfo};

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
        self.config.fairness.constraints(FAIRNESS)
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
pub(super) fn lost_after(model: &ElectricFlush, state: &State, bit: u16) -> bool {
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
