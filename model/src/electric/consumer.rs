//! The Consumer process of one shape: Electric `shapes/consumer.ex` and
//! `shapes/consumer/state.ex` at 1.4.15 (`64a89a05f`), #4064 (`6c5068aa2`) and HEAD
//! (`dc07a1e6c`), with its WriteLoop and flush timer, which run inside it.
//!
//! Every shape is in `:txn_fragment` write mode (no subqueries), as in the incident.

use serde::{Deserialize, Serialize};

use super::storage::{self, WriteTimer};
use super::write_loop::WriteLoop;
use super::{Fragment, Inline, Offset, Variant};

/// Where the consumer process is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Status {
    /// Running; its idle `:timeout` (`hibernate_after`, 30 s) is armed.
    Running,
    /// Hibernated after the `:timeout`; the next message wakes it.
    Hibernated,
    /// Stopped by suspension; the shape lives on and the next event restarts a consumer from
    /// what storage persisted.
    Suspended,
    /// Killed (a fault); the collector has not noticed yet.
    Dead,
    /// Removed from the collector and the tracker (undeliverable, invalidated).
    Removed,
}

impl Status {
    /// Whether the shape is live: its data still served (a suspended shape is).
    pub const fn is_live(self) -> bool {
        matches!(
            self,
            Status::Running | Status::Hibernated | Status::Suspended
        )
    }

    /// Whether a consumer process is there to handle messages.
    pub const fn has_process(self) -> bool {
        matches!(self, Status::Running | Status::Hibernated)
    }
}

/// A message in the consumer's mailbox. Its `Default` only fills an [`Inline`] list's unused
/// places.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Msg {
    /// `{Storage, :flushed, offset}`, sent by `flush_buffer` to its own process.
    Flushed(Offset),
    /// `{Storage, {PFS, :perform_scheduled_flush, [n]}}` from the flush timer.
    TimerFire(u8),
    /// HEAD's suspend timer, armed after hibernating.
    #[default]
    SuspendTimer,
}

/// A multi-fragment transaction in progress (`pending_txn`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PendingTxn {
    pub tx: u8,
    pub num_changes: u8,
}

/// A fault injected for triage, standing for one of #4058's hypotheses where the faithful code
/// does not do it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Injection {
    None,
    /// H1: the `:flushed` queued by the hibernate flush is lost before it is handled.
    DropFlushedAtHibernate,
    /// H4: the hibernate flush drains the buffer without sending `:flushed`.
    SilentDrainAtHibernate,
}

/// One shape's consumer process: its WriteLoop and flush timer, its transaction bookkeeping and
/// its mailbox.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Consumer {
    pub status: Status,
    pub writer: WriteLoop,
    pub write_timer: Option<WriteTimer>,
    pub pending_txn: Option<PendingTxn>,
    /// The offset of the last change this shape wrote.
    pub latest_offset: Offset,
    /// `txn_offset_mapping`: `(shape log key, txn boundary)` pairs in increasing order.
    pub mapping: Inline<(Offset, Offset), 4>,
    /// #4064's deferred `:flushed` offset.
    pub pending_flush_offset: Option<Offset>,
    /// The last offset this consumer passed to `notify_flushed` (fixes 1 and 3 compare with it).
    pub last_notified: Option<Offset>,
    /// HEAD: the suspend timer is armed and has not fired.
    pub suspend_timer_armed: bool,
    pub mailbox: Inline<Msg, 4>,
}

/// What a consumer step tells the rest of the system.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// `ShapeLogCollector.notify_flushed` casts, in order.
    pub notified: Vec<Offset>,
    /// A timer-driven flush persisted data while a multi-fragment transaction was pending.
    pub timer_flush_in_txn: bool,
    /// A flush persisted data inline (the buffer reached the threshold).
    pub inline_flush: bool,
    /// `align_offset_to_txn_boundary` dropped an entry below the offset without notifying its
    /// boundary (#4058's H2: a later, higher flush — inline, after cancelling the timer — makes
    /// older entries go unnotified).
    pub h2_dropped_entry: bool,
    /// `flush_buffer` ran on an empty buffer while a mapping entry was owed a notification
    /// (#4058's H4 amplifier).
    pub h4_empty_flush_owed: bool,
    /// The hibernate flush persisted data, so a `:flushed` was queued at hibernation (the moment
    /// #4058's H1 worries about).
    pub hibernate_flushed_data: bool,
    /// The hibernate flush's `:flushed` was lost (H1 injected) or never sent (H4 injected).
    pub injected: bool,
}

impl Consumer {
    /// A fresh consumer for a new shape.
    pub fn new() -> Consumer {
        Consumer {
            status: Status::Running,
            writer: WriteLoop::default(),
            write_timer: None,
            pending_txn: None,
            latest_offset: Offset::BEFORE_ALL,
            mapping: Inline::new(),
            pending_flush_offset: None,
            last_notified: None,
            suspend_timer_armed: false,
            mailbox: Inline::new(),
        }
    }

    /// `align_offset_to_txn_boundary` (state.ex l.291-303 at 1.4.15; unchanged at HEAD): drop the
    /// entries whose key is below `offset`; if the next key equals it, drop that one too and return
    /// its boundary; otherwise return `offset` itself, unaligned. The second value is whether an
    /// entry was dropped without its boundary being returned.
    pub fn align_offset_to_txn_boundary(&mut self, offset: Offset) -> (Offset, bool) {
        let below = self
            .mapping
            .iter()
            .take_while(|(key, _)| *key < offset)
            .count();
        self.mapping.drain(..below);
        match self.mapping.first() {
            Some(&(key, boundary)) if key == offset => {
                self.mapping.remove(0);
                (boundary, below > 0)
            }
            _ => (offset, below > 0),
        }
    }

    /// `consider_flushed(c)` (consumer.ex l.981-1006): with no mapping, notify `c` at once;
    /// otherwise relabel the boundary of the last entry below `c` to `c` (nothing if none).
    pub fn consider_flushed(&mut self, c: Offset, effects: &mut Effects) {
        if self.mapping.is_empty() {
            self.notify(c, effects);
            return;
        }
        if let Some(entry) = self
            .mapping
            .iter_mut()
            .rev()
            .find(|(_, boundary)| *boundary < c)
        {
            entry.1 = c;
        }
    }

    fn notify(&mut self, offset: Offset, effects: &mut Effects) {
        self.last_notified = Some(offset);
        effects.notified.push(offset);
    }

    /// `confirm_flushed_and_notify`: align, then `ShapeLogCollector.notify_flushed` (a cast).
    fn confirm_flushed_and_notify(&mut self, offset: Offset, effects: &mut Effects) {
        let (aligned, dropped) = self.align_offset_to_txn_boundary(offset);
        effects.h2_dropped_entry |= dropped;
        self.notify(aligned, effects);
    }

    /// A flush persisted `offset`: upstream sends `{Storage, :flushed, offset}` to its own
    /// process; fix 4 returns it and notifies at once instead.
    fn flushed(&mut self, variant: Variant, offset: Offset, effects: &mut Effects) {
        if variant == Variant::Fix4FlushReturnsOffset {
            self.confirm_flushed_and_notify(offset, effects);
        } else {
            self.mailbox.push(Msg::Flushed(offset));
        }
    }

    /// Whether some mapping entry's key is persisted but its boundary not notified.
    pub fn owes_notification(&self) -> bool {
        self.mapping
            .iter()
            .any(|(key, _)| *key <= self.writer.last_persisted_offset)
    }

    /// The collector's synchronous publish reaches this consumer: `handle_event` for a
    /// transaction fragment — append this shape's lines (flushing inline at the threshold),
    /// cancel or arm the flush timer, and on the commit `maybe_complete_pending_txn`
    /// (consumer.ex l.704-753): `signal_txn_commit!` and append `{latest_offset,
    /// last_log_offset}` to the mapping, or `consider_flushed` when the shape wrote nothing;
    /// with #4064, then `clear_pending_flush_offset`.
    ///
    /// A suspended shape first gets a new consumer resumed from storage. `lines` are this shape's
    /// line offsets in the fragment.
    pub fn handle_fragment(
        &mut self,
        variant: Variant,
        fragment: &Fragment,
        lines: &[Offset],
        inline_flush_lines: u8,
    ) -> Effects {
        let mut effects = Effects::default();
        if self.status == Status::Suspended {
            let writer = self.writer.resumed();
            *self = Consumer {
                writer,
                ..Consumer::new()
            };
        }
        self.status = Status::Running;
        let pending = self.pending_txn.get_or_insert(PendingTxn {
            tx: fragment.tx,
            num_changes: 0,
        });
        pending.num_changes += lines.len() as u8;
        if let Some(&last) = lines.last() {
            self.latest_offset = last;
        }
        let (flushed, after) = self
            .writer
            .append_fragment_to_log(lines, inline_flush_lines);
        for offset in flushed {
            effects.inline_flush = true;
            self.flushed(variant, offset, &mut effects);
        }
        storage::write_log_items(&self.writer, &mut self.write_timer, after);
        if fragment.commit {
            let txn = self.pending_txn.take().expect("a pending transaction");
            if txn.num_changes > 0 {
                self.writer.signal_txn_commit();
                self.mapping
                    .push((self.latest_offset, fragment.last_log_offset));
            } else {
                self.consider_flushed(fragment.last_log_offset, &mut effects);
            }
            if variant.has_4064() {
                if let Some(offset) = self.pending_flush_offset.take() {
                    self.confirm_flushed_and_notify(offset, &mut effects);
                }
            }
        }
        effects
    }

    /// Handles the message at the head of the mailbox (`handle_info`):
    /// - `:flushed` (consumer.ex l.273-278; #4064 l.273-288): align and notify; with #4064, while a
    ///   multi-fragment transaction is pending, keep the highest offset in `pending_flush_offset`.
    /// - the timer's `perform_scheduled_flush` ([`storage::perform_scheduled_flush`]).
    /// - HEAD's suspend timer: suspend if `consumer_can_suspend?` now also holds — no pending
    ///   transaction, no mapping, nothing deferred (consumer.ex l.468-472 at HEAD).
    pub fn handle_message(&mut self, variant: Variant) -> Effects {
        let mut effects = Effects::default();
        let msg = self.mailbox.remove(0);
        self.status = Status::Running;
        match msg {
            Msg::Flushed(offset) => {
                if variant.has_4064() && self.pending_txn.is_some() {
                    self.pending_flush_offset =
                        Some(self.pending_flush_offset.map_or(offset, |p| p.max(offset)));
                } else {
                    self.confirm_flushed_and_notify(offset, &mut effects);
                }
            }
            Msg::TimerFire(requested) => {
                let owed = self.owes_notification();
                let buffered = self.writer.buffer_lines > 0;
                if let Some(offset) = storage::perform_scheduled_flush(
                    &mut self.writer,
                    &mut self.write_timer,
                    requested,
                ) {
                    effects.timer_flush_in_txn = self.pending_txn.is_some();
                    self.flushed(variant, offset, &mut effects);
                } else if !buffered && owed && self.writer.times_flushed == requested {
                    effects.h4_empty_flush_owed = true;
                }
            }
            Msg::SuspendTimer => {
                let can_suspend = self.pending_txn.is_none()
                    && self.mapping.is_empty()
                    && self.pending_flush_offset.is_none();
                if can_suspend && self.mailbox.is_empty() {
                    self.suspend();
                }
            }
        }
        effects
    }

    /// `{:stop, suspend_reason}` → `terminate` → `Storage.terminate` flushes and closes; the
    /// `:flushed` it sends is never handled, since the process is gone (#3982).
    fn suspend(&mut self) {
        let _never_handled = storage::hibernate(&mut self.writer);
        self.status = Status::Suspended;
        self.mailbox.clear();
        self.write_timer = None;
        self.suspend_timer_armed = false;
    }

    /// The idle `:timeout` (consumer.ex l.400-417 at 1.4.15; l.437-446 at HEAD), with an empty
    /// mailbox:
    /// - 1.4.15 and #4064 with suspension on (`suspend`): stop at once (see `suspend`);
    /// - otherwise `Storage.hibernate` (flush and close) and hibernate; HEAD then arms its suspend
    ///   timer when suspension is on.
    ///
    /// Fixes 1–3 act here, after the hibernate flush.
    pub fn handle_timeout(
        &mut self,
        variant: Variant,
        suspend: bool,
        injection: Injection,
    ) -> Effects {
        let mut effects = Effects::default();
        if suspend && !variant.guards_suspend() {
            self.suspend();
            return effects;
        }
        let owed = self.owes_notification();
        let flushed = storage::hibernate(&mut self.writer);
        effects.hibernate_flushed_data = flushed.is_some();
        match (flushed, injection) {
            (Some(_), Injection::DropFlushedAtHibernate | Injection::SilentDrainAtHibernate) => {
                effects.injected = true
            }
            (Some(offset), Injection::None) => {
                self.flushed(variant, offset, &mut effects);
                if variant == Variant::Fix2CloseReturnsOffset {
                    self.confirm_flushed_and_notify(offset, &mut effects);
                }
            }
            (None, _) => effects.h4_empty_flush_owed = owed,
        }
        let persisted = self.writer.last_persisted_offset;
        match variant {
            Variant::Fix1NotifyAfterHibernate
                if self.last_notified.is_some_and(|n| persisted > n) =>
            {
                self.confirm_flushed_and_notify(persisted, &mut effects);
            }
            Variant::Fix3PeriodicRecheck if self.last_notified.is_some_and(|n| persisted != n) => {
                self.mailbox.push(Msg::Flushed(persisted));
            }
            _ => {}
        }
        self.status = Status::Hibernated;
        if suspend && variant.guards_suspend() {
            self.suspend_timer_armed = true;
        }
        effects
    }

    /// The consumer process dies (a fault): its mailbox and unflushed buffer are gone.
    pub fn kill(&mut self) {
        self.status = Status::Dead;
        self.mailbox.clear();
        self.write_timer = None;
        self.suspend_timer_armed = false;
        self.writer.buffer_lines = 0;
        self.writer.buffer_first = None;
    }
}

impl Default for Consumer {
    fn default() -> Consumer {
        Consumer::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(tx: u8, op: u8) -> Offset {
        Offset::new(tx, op)
    }

    fn with_mapping(mapping: &[(Offset, Offset)]) -> Consumer {
        Consumer {
            mapping: mapping.iter().copied().collect(),
            ..Consumer::new()
        }
    }

    #[test]
    fn align_returns_the_boundary_of_an_exact_key() {
        let mut c = with_mapping(&[(o(1, 1), o(1, 3)), (o(2, 1), o(2, 3))]);
        assert_eq!(c.align_offset_to_txn_boundary(o(1, 1)), (o(1, 3), false));
        assert_eq!(c.mapping[..], [(o(2, 1), o(2, 3))]);
    }

    #[test]
    fn align_drops_lower_keys_and_returns_the_boundary_of_an_exact_one() {
        let mut c = with_mapping(&[(o(1, 1), o(1, 3)), (o(2, 1), o(2, 3))]);
        assert_eq!(c.align_offset_to_txn_boundary(o(2, 1)), (o(2, 3), true));
        assert!(c.mapping.is_empty());
    }

    #[test]
    fn align_without_an_exact_key_returns_the_offset_unaligned() {
        let mut c = with_mapping(&[(o(2, 1), o(2, 3))]);
        assert_eq!(c.align_offset_to_txn_boundary(o(1, 2)), (o(1, 2), false));
        assert_eq!(c.mapping[..], [(o(2, 1), o(2, 3))], "a higher key stays");
        let mut empty = Consumer::new();
        assert_eq!(
            empty.align_offset_to_txn_boundary(o(1, 1)),
            (o(1, 1), false)
        );
    }

    #[test]
    fn align_between_keys_drops_the_lower_and_returns_the_offset() {
        let mut c = with_mapping(&[(o(1, 1), o(1, 3)), (o(2, 1), o(2, 3))]);
        assert_eq!(c.align_offset_to_txn_boundary(o(1, 5)), (o(1, 5), true));
        assert_eq!(c.mapping[..], [(o(2, 1), o(2, 3))]);
    }

    #[test]
    fn consider_flushed_notifies_when_nothing_is_owed_and_relabels_otherwise() {
        let mut effects = Effects::default();
        let mut c = Consumer::new();
        c.consider_flushed(o(1, 9), &mut effects);
        assert_eq!(effects.notified, [o(1, 9)]);
        let mut c = with_mapping(&[(o(1, 1), o(1, 3))]);
        let mut effects = Effects::default();
        c.consider_flushed(o(2, 5), &mut effects);
        assert!(effects.notified.is_empty());
        assert_eq!(c.mapping[..], [(o(1, 1), o(2, 5))]);
        let mut c = with_mapping(&[(o(2, 1), o(2, 7))]);
        c.consider_flushed(o(2, 5), &mut effects);
        assert_eq!(
            c.mapping[..],
            [(o(2, 1), o(2, 7))],
            "no lower boundary: unchanged"
        );
    }
}
