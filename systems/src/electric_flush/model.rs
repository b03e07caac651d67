//! System `electric-flush`: its state, actions and transitions.

use super::*;
use serde::{Deserialize, Serialize};
use walcheck_model::electric::consumer::{Consumer, Effects, Msg, Status};
use walcheck_model::electric::flush_tracker::{FlushTracker, TrackerEffects};
use walcheck_model::electric::replication_client::ReplicationClient;
use walcheck_model::electric::{Fragment, Inline, Offset, MAX_SHAPES};

/// The ShapeLogCollector: which fragment it publishes next, where a publish is, and its mailbox.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Collector {
    /// Fragments published so far.
    pub published: u8,
    /// Inside a publish: the next shape to call, and which shapes took the fragment.
    pub delivering: Option<Delivery>,
    /// `notify_flushed` casts: `(shape, offset)`.
    pub mailbox: Inline<(u8, Offset), 4>,
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

/// A state of the system. Its `Debug` is its `Variables`, one `name: value` a line, as
/// stateright's Explorer shows it.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    pub shapes: Inline<Consumer, MAX_SHAPES>,
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

/// A configuration with its scripted workload laid out once: the typed configuration the
/// model of each configuration holds, and its transitions.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub config: Config,
    workload: Vec<(Fragment, u8)>,
    /// The unrelated transaction [`Traffic::Steady`] repeats.
    unrelated: (Fragment, u8),
}

impl Scenario {
    /// `config`, its workload laid out ([`Config::workload`]).
    pub fn new(config: Config) -> Scenario {
        let workload = config.workload();
        let after = workload.iter().map(|(f, _)| f.tx).max().unwrap_or(0) + 1;
        let unrelated = Fragment {
            tx: after,
            commit: true,
            lines: [0; MAX_SHAPES],
            last_log_offset: Offset::new(after, 1),
        };
        Scenario {
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

    pub fn last_commit_lsn(&self) -> u8 {
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
