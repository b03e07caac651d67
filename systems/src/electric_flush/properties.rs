//! System `electric-flush`: its properties, each declared once with its predicate, and the fairness its liveness checks assume.

use super::*;
use walcheck_properties::cdc;
use walcheck_properties::system::{FairClass, PropertyInfo};

walcheck_properties::checks! { ElectricFlushSystem:
    /// The properties, each declared once.
    CHECKS => PROPERTIES [
        NO_LOST_FLUSH_NOTIFICATION = PropertyInfo::always("no-lost-flush-notification", "at quiescence no live shape has a tracker entry or a persisted but unnotified txn boundary")
            .when(no_lost_flush_notification);
        NOTIFIED_OFFSET_IS_TXN_BOUNDARY = PropertyInfo::always("notified-offset-is-txn-boundary", "the tracker completes entries only at a commit's last_log_offset and never notifies past the last commit")
            .when(|_, s: &State| s.seen & seen::BAD_BOUNDARY == 0);
        ACK_WITHIN_FLUSHED = PropertyInfo::always("ack-within-flushed", "the acknowledged flush LSN never reaches a received commit whose lines a live shape has not persisted")
            .when(|_, s: &State| ack_within_flushed(s));
        GLOBAL_FLUSH_MONOTONE = PropertyInfo::always("global-flush-monotone", "the global flushed offset, flushed_wal and confirmed_flush never go back")
            .when(|_, s: &State| s.seen & seen::REGRESSED == 0);
        WAL_RETENTION_BOUNDED = PropertyInfo::always("wal-retention-bounded", "at quiescence confirmed_flush is the last commit's LSN")
            .when(wal_retention_bounded);
        /// The shared `eventually-acknowledged`, checked as `eventually` its goal from the
        /// initial state: the goal is the workload's last commit, and `confirmed_flush` never
        /// goes back (`global-flush-monotone` holds in every configuration), so once reached it
        /// stays, and this is the shared `always (not acknowledged implies eventually
        /// acknowledged)`.
        EVENTUALLY_ACKNOWLEDGED = cdc::EVENTUALLY_ACKNOWLEDGED
            .with_knobs(&[("traffic", "steady")])
            .when(all_acknowledged);
        REACH_TIMER_BEFORE_COMMIT = PropertyInfo::sometimes("reach-timer-before-commit", "a timer flush persists lines of a pending multi-fragment txn")
            .when(|_, s: &State| s.seen & seen::TIMER_BEFORE_COMMIT != 0);
        REACH_HIBERNATE_FLUSH = PropertyInfo::sometimes("reach-hibernate-flush", "the idle :timeout runs Storage.hibernate (flush and close)")
            .when(|_, s: &State| s.seen & seen::HIBERNATE != 0);
        REACH_INLINE_FLUSH = PropertyInfo::sometimes("reach-inline-flush", "a buffer reaches the threshold and flushes inline")
            .when(|_, s: &State| s.seen & seen::INLINE_FLUSH != 0);
        REACH_MULTI_FRAGMENT_TXN = PropertyInfo::sometimes("reach-multi-fragment-txn", "a consumer holds a pending txn between fragments")
            .when(|_, s: &State| s.seen & seen::MULTI_FRAGMENT != 0);
        REACH_TWO_SHAPES = PropertyInfo::sometimes("reach-two-shapes", "two shapes are tracked at once")
            .needs("shapes=2")
            .when(|_, s: &State| s.seen & seen::TWO_SHAPES != 0);
    ]
}

walcheck_properties::checks! { ElectricFlushSystem:
    /// Properties only `walcheck triage` uses: whether a hypothesis's mechanism occurs, and a lost
    /// notification on a path where it occurred.
    TRIAGE_CHECKS => TRIAGE_PROPERTIES [
        OCCURS_H1 = PropertyInfo::sometimes("occurs-h1", "#4058 hypothesis H1's mechanism occurs on some path")
            .when(|_, s: &State| s.seen & seen::H1 != 0);
        OCCURS_H2 = PropertyInfo::sometimes("occurs-h2", "#4058 hypothesis H2's mechanism occurs on some path")
            .when(|_, s: &State| s.seen & seen::H2 != 0);
        OCCURS_H3 = PropertyInfo::sometimes("occurs-h3", "#4058 hypothesis H3's mechanism (a timer flush before the commit) occurs on some path")
            .when(|_, s: &State| s.seen & seen::TIMER_BEFORE_COMMIT != 0);
        OCCURS_H4 = PropertyInfo::sometimes("occurs-h4", "#4058 hypothesis H4's mechanism occurs on some path")
            .when(|_, s: &State| s.seen & seen::H4 != 0);
        LOST_AFTER_H1 = PropertyInfo::always("lost-after-h1", "no notification is lost on a path where H1 occurred")
            .when(|m, s| lost_after(m, s, seen::H1));
        LOST_AFTER_H2 = PropertyInfo::always("lost-after-h2", "no notification is lost on a path where H2 occurred")
            .when(|m, s| lost_after(m, s, seen::H2));
        LOST_AFTER_H3 = PropertyInfo::always("lost-after-h3", "no notification is lost on a path where H3 occurred")
            .when(|m, s| lost_after(m, s, seen::TIMER_BEFORE_COMMIT));
        LOST_AFTER_H4 = PropertyInfo::always("lost-after-h4", "no notification is lost on a path where H4 occurred")
            .when(|m, s| lost_after(m, s, seen::H4));
        LOST_AFTER_INJECTION = PropertyInfo::always("lost-after-injection", "no notification is lost on a path where the injected fault occurred")
            .when(|m, s| lost_after(m, s, seen::INJECTED));
    ]
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
    FairClass::weak("publish", |a| {
        matches!(a, Action::Publish | Action::Deliver(_))
    }),
    FairClass::weak("handle-s0", |a| matches!(a, Action::Handle(0))),
    FairClass::weak("handle-s1", |a| matches!(a, Action::Handle(1))),
    FairClass::weak("timer-s0", |a| matches!(a, Action::TimerFires(0))),
    FairClass::weak("timer-s1", |a| matches!(a, Action::TimerFires(1))),
    FairClass::weak("timeout-s0", |a| matches!(a, Action::Timeout(0))),
    FairClass::weak("timeout-s1", |a| matches!(a, Action::Timeout(1))),
    FairClass::weak("suspend-timer-s0", |a| {
        matches!(a, Action::SuspendTimerFires(0))
    }),
    FairClass::weak("suspend-timer-s1", |a| {
        matches!(a, Action::SuspendTimerFires(1))
    }),
    FairClass::weak("collector", |a| matches!(a, Action::CollectorHandle)),
    FairClass::weak("client", |a| matches!(a, Action::ClientHandle)),
    FairClass::weak("keepalive", |a| matches!(a, Action::Keepalive)),
    FairClass::weak("down-s0", |a| matches!(a, Action::Down(0))),
    FairClass::weak("down-s1", |a| matches!(a, Action::Down(1))),
    FairClass::weak("stall-check-s0", |a| matches!(a, Action::StallCheck(0))),
    FairClass::weak("stall-check-s1", |a| matches!(a, Action::StallCheck(1))),
];

/// `eventually-acknowledged`'s goal: the slot's `confirmed_flush` has reached the last commit of
/// the workload, so every committed transaction is acknowledged (Electric
/// `postgres/replication_client.ex:encode_standby_status_update` (1.4.15 `64a89a05f`) sends the
/// flush position PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage` moves the slot to).
pub fn all_acknowledged(model: &ElectricFlush, state: &State) -> bool {
    state.client.confirmed_flush >= model.config.last_commit_lsn()
}

/// Holds unless a notification is lost on a path where history bit `bit` was set.
pub(super) fn lost_after(model: &ElectricFlush, state: &State, bit: u16) -> bool {
    state.seen & bit == 0 || no_lost_flush_notification(model, state)
}

/// `no-lost-flush-notification`: at quiescence no live shape has a tracker entry, and no
/// consumer holds a mapping entry whose key is persisted (its boundary never notified).
pub fn no_lost_flush_notification(model: &ElectricFlush, state: &State) -> bool {
    !model.config.quiescent(state)
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
    !model.config.quiescent(state) || state.client.confirmed_flush >= model.config.last_commit_lsn()
}
