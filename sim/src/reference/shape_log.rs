//! A concurrent shape-log pipeline with Electric #4064's fix: per shape a writer that buffers
//! lines and flushes on size and on a timer, a consumer that defers `:flushed` offsets while a
//! multi-fragment transaction is pending and aligns them to transaction boundaries, and one
//! [`FlushTracker`] shared by all shapes that computes the global acknowledged offset.
//!
//! The design is the one the `electric-flush` model proves for `pr4064` (electric-sql/electric
//! `6c5068aa2`): `shapes/consumer.ex` `handle_info({Storage, :flushed, _})` and
//! `maybe_complete_pending_txn`, `shape_cache/pure_file_storage/write_loop.ex`, and
//! `replication/shape_log_collector/flush_tracker.ex`. [`Design::V1_4_15`] keeps 1.4.15's order
//! (`64a89a05f`: `:flushed` aligned and notified at once) so that loom can show the bug too.
//!
//! Concurrency: each shape's state sits behind its own `Mutex`; whichever thread holds it handles
//! the shape's mailbox from its head, so every message is handled in order. A timer thread whose
//! timer fires empties it before letting go; the publisher empties it before each delivery and
//! right after it (a delivery leaves what its inline flushes queued for that second pass, or for
//! a timer thread that takes the lock first). Offsets to notify go, still under the shape's lock,
//! to the collector's mailbox (a second `Mutex`), which only the publishing thread drains into the
//! tracker, between publishes — as Electric's ShapeLogCollector handles `notify_flushed` casts
//! between its publishes. Lock order is publisher → shape → collector mailbox (a delivery calls
//! the shape with the publisher's lock held), and the publisher never holds the mailbox while it
//! calls a shape, so there is no cycle. The acknowledged LSN is an atomic written only with
//! `fetch_max` under the publisher's lock: no reader relies on `SeqCst` store/load ordering (loom
//! models those as `AcqRel`, see docs/reference-implementations.md's loom section).

use std::collections::{BTreeMap, VecDeque};

use walcheck_model::electric::{Fragment, Offset, MAX_SHAPES};

use super::sync::{AtomicU64, Mutex, MutexGuard, Ordering};

/// Which order the consumer handles `:flushed` in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Design {
    /// #4064 (`6c5068aa2`): while a multi-fragment transaction is pending, keep the highest
    /// flushed offset and release it, aligned, once the commit has added its mapping entry.
    Pr4064,
    /// 1.4.15 (`64a89a05f`): align and notify at once, even before the commit's mapping entry
    /// exists — the ordering of Electric #4058's lost notification.
    V1_4_15,
}

/// A message in a shape's mailbox.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShapeMsg {
    /// `{Storage, :flushed, offset}`: the writer persisted through `offset`.
    Flushed(Offset),
    /// The flush timer fired; it was armed when the writer had flushed this many times.
    TimerFire(u8),
}

/// The writer's flush timer: armed with the flush count it was armed at, and whether it fired.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlushTimer {
    pub requested: u8,
    pub fired: bool,
}

/// One shape's log writer: buffered lines and the offsets it has seen and persisted.
///
/// Electric `write_loop.ex` (`append_fragment_to_log!`, `flush_buffer`, `signal_txn_commit`) and
/// `pure_file_storage.ex` (`schedule_flush`, `perform_scheduled_flush`) at `6c5068aa2`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShapeWriter {
    pub buffer_lines: u8,
    pub last_seen_offset: Offset,
    pub last_seen_txn_offset: Offset,
    pub last_persisted_offset: Offset,
    pub last_persisted_txn_offset: Offset,
    pub times_flushed: u8,
    pub timer: Option<FlushTimer>,
}

impl ShapeWriter {
    /// Buffers `lines` (skipping any at or below the last committed offset, as a resumed writer
    /// would see them again), flushing whenever `inline_flush_lines` are buffered; then cancels the
    /// timer if the buffer is empty, or arms one if a flush happened meanwhile or none is
    /// referenced. Returns the offsets the inline flushes persisted, in order.
    ///
    /// Electric `write_loop.ex:append_fragment_to_log!` and `pure_file_storage.ex:write_log_items`
    /// / `schedule_flush` at `6c5068aa2`.
    pub fn append(&mut self, lines: &[Offset], inline_flush_lines: u8) -> Vec<Offset> {
        let times_flushed_at_entry = self.times_flushed;
        let mut flushed = Vec::new();
        for &line in lines {
            if line <= self.last_seen_txn_offset {
                continue;
            }
            self.buffer_lines += 1;
            self.last_seen_offset = line;
            if self.buffer_lines >= inline_flush_lines {
                flushed.extend(self.flush());
            }
        }
        if self.buffer_lines == 0 {
            self.timer = None;
        } else if self.times_flushed != times_flushed_at_entry || self.timer.is_none() {
            self.timer = Some(FlushTimer {
                requested: self.times_flushed,
                fired: false,
            });
        }
        flushed
    }

    /// Writes and syncs the buffer: nothing on an empty one; otherwise persists the offsets seen
    /// and returns the last line's offset. Electric `write_loop.ex:flush_buffer`.
    pub fn flush(&mut self) -> Option<Offset> {
        if self.buffer_lines == 0 {
            return None;
        }
        self.buffer_lines = 0;
        self.last_persisted_offset = self.last_seen_offset;
        self.last_persisted_txn_offset = self.last_seen_txn_offset;
        self.times_flushed += 1;
        Some(self.last_seen_offset)
    }

    /// The timer's flush: only if nothing flushed since it was armed (then the timer is
    /// forgotten). Electric `pure_file_storage.ex:perform_scheduled_flush`.
    pub fn scheduled_flush(&mut self, requested: u8) -> Option<Offset> {
        if self.times_flushed != requested {
            return None;
        }
        self.timer = None;
        self.flush()
    }

    /// The transaction committed: its last line is the committed offset, persisted already if
    /// the buffer holds none of it. Electric `write_loop.ex:signal_txn_commit`.
    pub fn commit(&mut self) {
        self.last_seen_txn_offset = self.last_seen_offset;
        if self.last_seen_offset == self.last_persisted_offset {
            self.last_persisted_txn_offset = self.last_seen_offset;
        }
    }
}

/// A multi-fragment transaction the consumer is in the middle of.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PendingTxn {
    pub tx: u8,
    pub num_changes: u8,
}

/// `align_offset_to_txn_boundary`: drops the mapping entries whose key is below `offset`; if the
/// next key is `offset` itself, drops it too and returns its transaction boundary; otherwise
/// returns `offset` unchanged.
///
/// Electric `shapes/consumer/state.ex:align_offset_to_txn_boundary` (1.4.15 `64a89a05f` through
/// 1.7.12 `dc07a1e6c`). `txn_offset_mapping` maps a shape log key (the last line a transaction
/// wrote) to the transaction's boundary (its commit's `last_log_offset`).
pub fn align_offset_to_txn_boundary(
    txn_offset_mapping: &mut BTreeMap<Offset, Offset>,
    offset: Offset,
) -> Offset {
    let mut above = txn_offset_mapping.split_off(&offset);
    let aligned = match above.first_key_value() {
        Some((&key, &boundary)) if key == offset => {
            above.remove(&key);
            boundary
        }
        _ => offset,
    };
    *txn_offset_mapping = above;
    aligned
}

/// One shape: its writer, its consumer's transaction bookkeeping, and its mailbox.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShapeState {
    pub writer: ShapeWriter,
    /// The consumer closed its files and went idle; the next message wakes it.
    pub hibernated: bool,
    pub pending_txn: Option<PendingTxn>,
    /// The offset of the last line this shape wrote.
    pub latest_offset: Offset,
    pub txn_offset_mapping: BTreeMap<Offset, Offset>,
    /// #4064: the highest `:flushed` offset received while a transaction was pending.
    pub pending_flush_offset: Option<Offset>,
    pub mailbox: VecDeque<ShapeMsg>,
}

impl ShapeState {
    /// The consumer handles a fragment routed to it (`lines`: this shape's lines in it): buffer
    /// them, and on the commit record the transaction's boundary, then release any deferred
    /// `:flushed` offset, aligned (only [`Design::Pr4064`] defers one). Returns the offsets to notify the tracker of.
    ///
    /// Electric `shapes/consumer.ex:handle_event` → `maybe_complete_pending_txn` at `6c5068aa2`.
    pub fn handle_fragment(
        &mut self,
        fragment: &Fragment,
        lines: &[Offset],
        inline_flush_lines: u8,
    ) -> Vec<Offset> {
        debug_assert!(
            self.mailbox.is_empty(),
            "earlier messages are handled first"
        );
        self.hibernated = false;
        let mut notify = Vec::new();
        let pending = self.pending_txn.get_or_insert(PendingTxn {
            tx: fragment.tx,
            num_changes: 0,
        });
        pending.num_changes += lines.len() as u8;
        if let Some(&last) = lines.last() {
            self.latest_offset = last;
        }
        for offset in self.writer.append(lines, inline_flush_lines) {
            self.mailbox.push_back(ShapeMsg::Flushed(offset));
        }
        if fragment.commit {
            let txn = self.pending_txn.take().expect("a pending transaction");
            if txn.num_changes > 0 {
                self.writer.commit();
                self.txn_offset_mapping
                    .insert(self.latest_offset, fragment.last_log_offset);
            } else {
                self.consider_flushed(fragment.last_log_offset, &mut notify);
            }
            if let Some(offset) = self.pending_flush_offset.take() {
                notify.push(align_offset_to_txn_boundary(
                    &mut self.txn_offset_mapping,
                    offset,
                ));
            }
        }
        notify
    }

    /// A transaction without lines for this shape committed at `boundary`: notify it at once when
    /// nothing is owed, else let the last owed entry below it stand for it.
    /// Electric `shapes/consumer.ex:consider_flushed`.
    fn consider_flushed(&mut self, boundary: Offset, notify: &mut Vec<Offset>) {
        if self.txn_offset_mapping.is_empty() {
            notify.push(boundary);
        } else if let Some((_, b)) = self
            .txn_offset_mapping
            .iter_mut()
            .rev()
            .find(|(_, b)| **b < boundary)
        {
            *b = boundary;
        }
    }

    /// The flush timer fires: its message is queued. Returns whether a timer was armed.
    pub fn timer_fires(&mut self) -> bool {
        match self.writer.timer.as_mut() {
            Some(t) if !t.fired => {
                t.fired = true;
                let requested = t.requested;
                self.mailbox.push_back(ShapeMsg::TimerFire(requested));
                true
            }
            _ => false,
        }
    }

    /// The consumer handles the message at the head of its mailbox, if any. Returns the offsets to
    /// notify. Electric `shapes/consumer.ex:handle_info` at `6c5068aa2`.
    pub fn handle_message(&mut self, design: Design) -> Vec<Offset> {
        let Some(msg) = self.mailbox.pop_front() else {
            return Vec::new();
        };
        self.hibernated = false;
        match msg {
            ShapeMsg::Flushed(offset) => {
                if design == Design::Pr4064 && self.pending_txn.is_some() {
                    let deferred = self.pending_flush_offset.map_or(offset, |p| p.max(offset));
                    self.pending_flush_offset = Some(deferred);
                    Vec::new()
                } else {
                    vec![align_offset_to_txn_boundary(
                        &mut self.txn_offset_mapping,
                        offset,
                    )]
                }
            }
            ShapeMsg::TimerFire(requested) => {
                if let Some(offset) = self.writer.scheduled_flush(requested) {
                    self.mailbox.push_back(ShapeMsg::Flushed(offset));
                }
                Vec::new()
            }
        }
    }

    /// The idle timeout: flush and close, then hibernate. Electric `shapes/consumer.ex`
    /// `handle_info(:timeout)` → `pure_file_storage.ex:hibernate`.
    pub fn hibernate(&mut self) {
        if let Some(offset) = self.writer.flush() {
            self.mailbox.push_back(ShapeMsg::Flushed(offset));
        }
        self.hibernated = true;
    }

    /// Handles every queued message, in order; returns the offsets to notify.
    pub fn drain(&mut self, design: Design) -> Vec<Offset> {
        let mut notify = Vec::new();
        while !self.mailbox.is_empty() {
            notify.extend(self.handle_message(design));
        }
        notify
    }
}

/// A tracked shape: the boundary last sent to it and the offset it last reported flushed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrackedShape {
    pub last_sent: Offset,
    pub last_flushed: Offset,
}

/// The flush tracker: shapes with incomplete flushes, the last commit seen and the global
/// flushed offset. Electric `replication/shape_log_collector/flush_tracker.ex` at `6c5068aa2`
/// (commit-only tracking).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlushTracker {
    pub entries: BTreeMap<usize, TrackedShape>,
    pub last_seen_offset: Offset,
    pub last_global_flushed_offset: Offset,
}

impl FlushTracker {
    /// A fragment was delivered to the shapes in `delivered`. A commit tracks each of them at its
    /// `last_log_offset` (a new entry starts as "flushed through the previous transaction") and
    /// becomes the last commit seen. Returns the LSN to acknowledge, if the global offset moved.
    /// Electric `flush_tracker.ex:handle_txn_fragment`.
    pub fn handle_txn_fragment(
        &mut self,
        fragment: &Fragment,
        delivered: &[bool; MAX_SHAPES],
    ) -> Option<u8> {
        if !fragment.commit {
            return None;
        }
        let offset = fragment.last_log_offset;
        for shape in (0..MAX_SHAPES).filter(|&s| delivered[s]) {
            self.entries
                .entry(shape)
                .or_insert(TrackedShape {
                    last_sent: offset,
                    last_flushed: Offset::new(offset.tx.saturating_sub(1), 0),
                })
                .last_sent = offset;
        }
        self.last_seen_offset = offset;
        if self.entries.is_empty() {
            self.update_global_offset()
        } else {
            None
        }
    }

    /// `shape` reports `offset` flushed: an untracked shape is ignored; the offset last sent
    /// completes its entry; any other becomes its `last_flushed`. Returns the LSN to acknowledge.
    /// The caller never reports past `last_sent` (a consumer aligns to boundaries it was sent);
    /// the global offset could go back if it did.
    /// Electric `flush_tracker.ex:handle_flush_notification`.
    pub fn handle_flush_notification(&mut self, shape: usize, offset: Offset) -> Option<u8> {
        let entry = self.entries.get_mut(&shape)?;
        if offset == entry.last_sent {
            self.entries.remove(&shape);
        } else {
            entry.last_flushed = offset;
        }
        self.update_global_offset()
    }

    /// With nothing pending the global offset is the last commit and its LSN is acknowledged;
    /// otherwise it moves up to the lowest `last_flushed`, acknowledging the transaction before
    /// it. Electric `flush_tracker.ex:update_global_offset`.
    fn update_global_offset(&mut self) -> Option<u8> {
        match self.entries.values().map(|e| e.last_flushed).min() {
            None => {
                self.last_global_flushed_offset = self.last_seen_offset;
                Some(self.last_seen_offset.tx)
            }
            Some(min) if min > self.last_global_flushed_offset => {
                self.last_global_flushed_offset = min;
                Some(min.tx.saturating_sub(1))
            }
            Some(_) => None,
        }
    }
}

/// The publisher's side of the collector: the tracker, the publish in progress and which shapes
/// the open transaction has touched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Publisher {
    pub tracker: FlushTracker,
    /// Fragments fully published.
    pub published: u8,
    pub delivering: Option<Delivery>,
    /// Shapes with lines in the open transaction: they get its commit.
    pub shapes_in_txn: [bool; MAX_SHAPES],
}

/// A publish in progress: the fragment, the op index of its first change, the shapes it goes to
/// and those it reached.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub fragment: Fragment,
    pub first_op: u8,
    pub routed: [bool; MAX_SHAPES],
    pub delivered: [bool; MAX_SHAPES],
}

impl Delivery {
    /// The next shape to call: the first routed one not yet reached.
    pub fn next_shape(&self) -> Option<usize> {
        (0..MAX_SHAPES).find(|&s| self.routed[s] && !self.delivered[s])
    }
}

/// What the pipeline holds, copied out (for tests and the model comparison).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub shapes: Vec<ShapeState>,
    pub collector_mailbox: Vec<(usize, Offset)>,
    pub publisher: Publisher,
    pub acknowledged_lsn: u64,
}

/// The pipeline: the shapes, the collector's mailbox of flush notifications, the publisher with
/// the tracker, and the acknowledged LSN (what the replication client reports to the slot).
///
/// The step methods ([`Self::publish_begin`], [`Self::deliver`], [`Self::timer_fires`],
/// [`Self::handle`], [`Self::timeout`], [`Self::collector_handle`]) are one step each, as the
/// model's actions; [`Self::publish`], [`Self::fire_timer`] and [`Self::quiesce`] compose them for
/// threads.
#[derive(Debug)]
pub struct ShapeLogPipeline {
    design: Design,
    inline_flush_lines: u8,
    shapes: Vec<Mutex<ShapeState>>,
    collector_mailbox: Mutex<VecDeque<(usize, Offset)>>,
    publisher: Mutex<Publisher>,
    acknowledged_lsn: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock()
        .expect("a reference pipeline lock is never poisoned")
}

impl ShapeLogPipeline {
    /// A pipeline of `shapes` (at most [`MAX_SHAPES`]) idle shapes, flushing inline at
    /// `inline_flush_lines` buffered lines (64 KiB upstream).
    pub fn new(design: Design, shapes: usize, inline_flush_lines: u8) -> ShapeLogPipeline {
        assert!(shapes <= MAX_SHAPES && inline_flush_lines > 0);
        ShapeLogPipeline {
            design,
            inline_flush_lines,
            shapes: (0..shapes)
                .map(|_| Mutex::new(ShapeState::default()))
                .collect(),
            collector_mailbox: Mutex::new(VecDeque::new()),
            publisher: Mutex::new(Publisher::default()),
            acknowledged_lsn: AtomicU64::new(0),
        }
    }

    /// The LSN the pipeline has acknowledged (transaction `t` commits at LSN `t`).
    pub fn acknowledged_lsn(&self) -> u64 {
        self.acknowledged_lsn.load(Ordering::Acquire)
    }

    fn acknowledge(&self, lsn: Option<u8>) {
        if let Some(lsn) = lsn {
            self.acknowledged_lsn
                .fetch_max(u64::from(lsn), Ordering::Release);
        }
    }

    /// Queues shape `s`'s notifications at the collector; called with the shape's lock held, so a
    /// shape's notifications arrive in the order it made them.
    fn notify(&self, s: usize, offsets: Vec<Offset>) {
        if !offsets.is_empty() {
            lock(&self.collector_mailbox).extend(offsets.into_iter().map(|o| (s, o)));
        }
    }

    /// Starts publishing `fragment` (its first change has op index `first_op`): it goes to the
    /// shapes with lines in it and, for a commit, to every shape its transaction touched. A
    /// fragment for no shape goes straight to the tracker.
    pub fn publish_begin(&self, fragment: Fragment, first_op: u8) {
        let mut p = lock(&self.publisher);
        assert!(p.delivering.is_none(), "one publish at a time");
        let mut routed = [false; MAX_SHAPES];
        for (s, r) in routed.iter_mut().enumerate().take(self.shapes.len()) {
            *r = fragment.lines[s] > 0 || (fragment.commit && p.shapes_in_txn[s]);
            p.shapes_in_txn[s] |= fragment.lines[s] > 0;
        }
        p.delivering = Some(Delivery {
            fragment,
            first_op,
            routed,
            delivered: [false; MAX_SHAPES],
        });
        self.finish_if_delivered(&mut p);
    }

    /// The shape the publish in progress calls next, if any.
    pub fn next_delivery(&self) -> Option<usize> {
        lock(&self.publisher)
            .delivering
            .and_then(|d| d.next_shape())
    }

    /// The publish in progress calls shape `s` (the next one; its mailbox must be empty).
    pub fn deliver(&self, s: usize) {
        let mut p = lock(&self.publisher);
        let mut d = p.delivering.expect("a publish in progress");
        assert_eq!(d.next_shape(), Some(s), "shapes are called in order");
        let lines: Vec<Offset> = (0..d.fragment.lines[s])
            .map(|i| d.fragment.line_offset(d.first_op, s, i))
            .collect();
        {
            let mut shape = lock(&self.shapes[s]);
            let notify = shape.handle_fragment(&d.fragment, &lines, self.inline_flush_lines);
            self.notify(s, notify);
        }
        d.delivered[s] = true;
        p.delivering = Some(d);
        self.finish_if_delivered(&mut p);
    }

    /// After the last call of a publish the tracker takes the fragment.
    fn finish_if_delivered(&self, p: &mut Publisher) {
        let Some(d) = p.delivering else { return };
        if d.next_shape().is_some() {
            return;
        }
        p.delivering = None;
        let ack = p.tracker.handle_txn_fragment(&d.fragment, &d.delivered);
        if d.fragment.commit {
            p.shapes_in_txn = [false; MAX_SHAPES];
        }
        p.published += 1;
        self.acknowledge(ack);
    }

    /// Shape `s`'s flush timer fires (its message is queued). Returns whether one was armed.
    pub fn timer_fires(&self, s: usize) -> bool {
        lock(&self.shapes[s]).timer_fires()
    }

    /// Shape `s`'s consumer handles the message at the head of its mailbox.
    pub fn handle(&self, s: usize) {
        let mut shape = lock(&self.shapes[s]);
        let notify = shape.handle_message(self.design);
        self.notify(s, notify);
    }

    /// Shape `s`'s idle timeout: flush, close and hibernate.
    pub fn timeout(&self, s: usize) {
        lock(&self.shapes[s]).hibernate();
    }

    /// The collector hands the oldest flush notification to the tracker. Returns whether there
    /// was one.
    pub fn collector_handle(&self) -> bool {
        let mut p = lock(&self.publisher);
        assert!(p.delivering.is_none(), "between publishes only");
        let Some((s, offset)) = lock(&self.collector_mailbox).pop_front() else {
            return false;
        };
        let ack = p.tracker.handle_flush_notification(s, offset);
        self.acknowledge(ack);
        true
    }

    /// Shape `s`'s consumer handles its whole mailbox.
    pub fn drain(&self, s: usize) {
        let mut shape = lock(&self.shapes[s]);
        let notify = shape.drain(self.design);
        self.notify(s, notify);
    }

    /// Publishes one fragment from start to end, as the collector's thread does: hand the
    /// tracker the notifications queued so far, then call each routed shape (which first handles
    /// what its mailbox holds, then the fragment, then what that queued).
    pub fn publish(&self, fragment: Fragment, first_op: u8) {
        while self.collector_handle() {}
        self.publish_begin(fragment, first_op);
        while let Some(s) = self.next_delivery() {
            self.drain(s);
            self.deliver(s);
            self.drain(s);
        }
    }

    /// The flush timer's thread: fire shape `s`'s timer, if armed, and run its consumer.
    pub fn fire_timer(&self, s: usize) {
        let mut shape = lock(&self.shapes[s]);
        if shape.timer_fires() {
            let notify = shape.drain(self.design);
            self.notify(s, notify);
        }
    }

    /// Everything goes idle: each shape handles its mailbox and, if lines are still buffered,
    /// hibernates (flush and close) and handles what that queued; then the tracker takes every
    /// notification.
    pub fn quiesce(&self) {
        for s in 0..self.shapes.len() {
            let mut shape = lock(&self.shapes[s]);
            let mut notify = shape.drain(self.design);
            if shape.writer.buffer_lines > 0 {
                shape.hibernate();
                notify.extend(shape.drain(self.design));
            }
            self.notify(s, notify);
        }
        while self.collector_handle() {}
    }

    /// A copy of everything the pipeline holds.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            shapes: self.shapes.iter().map(|s| lock(s).clone()).collect(),
            collector_mailbox: lock(&self.collector_mailbox).iter().copied().collect(),
            publisher: lock(&self.publisher).clone(),
            acknowledged_lsn: self.acknowledged_lsn(),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use walcheck_model::electric::workload;

    use super::*;

    fn o(tx: u8, op: u8) -> Offset {
        Offset::new(tx, op)
    }

    /// The timer flush between T1's fragments: 1.4.15 notifies the raw offset before the commit's
    /// mapping entry exists and shape 0 stays tracked; #4064 defers it and releases the boundary.
    fn timer_between_fragments(design: Design) -> Snapshot {
        let p = ShapeLogPipeline::new(design, 2, 2);
        let w = workload(2, 2, 2, 2);
        p.publish(w[0].0, w[0].1);
        p.fire_timer(0);
        for &(f, op) in &w[1..] {
            p.publish(f, op);
        }
        p.quiesce();
        p.snapshot()
    }

    #[test]
    fn pr4064_releases_the_deferred_offset_at_the_commit() {
        let s = timer_between_fragments(Design::Pr4064);
        assert!(s.publisher.tracker.entries.is_empty());
        assert_eq!(s.publisher.tracker.last_global_flushed_offset, o(2, 2));
        assert_eq!(s.acknowledged_lsn, 2);
    }

    #[test]
    fn v1_4_15_loses_shape_0s_notification() {
        let s = timer_between_fragments(Design::V1_4_15);
        assert_eq!(
            s.publisher.tracker.entries.get(&0),
            Some(&TrackedShape {
                last_sent: o(1, 5),
                last_flushed: o(0, 0)
            })
        );
        assert_eq!(s.shapes[0].txn_offset_mapping.get(&o(1, 1)), Some(&o(1, 5)));
        assert_eq!(s.publisher.tracker.last_global_flushed_offset, o(0, 0));
    }

    #[test]
    fn align_examples() {
        let mut m = BTreeMap::from([(o(1, 1), o(1, 3)), (o(2, 1), o(2, 3))]);
        assert_eq!(align_offset_to_txn_boundary(&mut m, o(1, 1)), o(1, 3));
        assert_eq!(m, BTreeMap::from([(o(2, 1), o(2, 3))]));
        assert_eq!(align_offset_to_txn_boundary(&mut m, o(1, 5)), o(1, 5));
        assert_eq!(m.len(), 1, "a higher key stays");
        assert_eq!(align_offset_to_txn_boundary(&mut m, o(3, 1)), o(3, 1));
        assert!(m.is_empty());
    }
}
