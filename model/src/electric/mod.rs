//! Electric's shape-log write path and flush tracking, around the missed `:flushed` notification
//! of Electric #4058 (fixed by #4064).
//!
//! Modelled from `packages/sync-service/lib/electric/` at three commits of electric-sql/electric:
//! `64a89a05f` (1.4.15, the bug era), `6c5068aa2` (#4064, the landed fix) and `dc07a1e6c` (1.7.12,
//! HEAD). Each module names the file and function it models:
//! - [`write_loop`]: `shape_cache/pure_file_storage/write_loop.ex` — the buffer and its offsets;
//! - [`storage`]: `shape_cache/pure_file_storage.ex` — the flush timer and hibernate;
//! - [`consumer`]: `shapes/consumer.ex` and `shapes/consumer/state.ex` — txn fragments, the
//!   offset mapping, `:flushed` handling, hibernation and suspension;
//! - [`flush_tracker`]: `replication/shape_log_collector/flush_tracker.ex` — the global offset;
//! - [`replication_client`]: `postgres/replication_client.ex` — what is acknowledged to the slot.

pub mod consumer;
pub mod flush_tracker;
pub mod replication_client;
pub mod storage;
pub mod write_loop;

use std::fmt;

use serde::{Deserialize, Serialize};

/// A position in the replication stream (`Electric.Replication.LogOffset`): the transaction's
/// commit LSN (`tx_offset`) and the change's index in it (`op_offset`). Ordered as the pair.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Offset {
    pub tx: u8,
    pub op: u8,
}

impl Offset {
    /// `LogOffset.before_all()`.
    pub const BEFORE_ALL: Offset = Offset { tx: 0, op: 0 };

    pub const fn new(tx: u8, op: u8) -> Offset {
        Offset { tx, op }
    }
}

/// Printed as Electric prints a `LogOffset`: `tx_op`, e.g. `1_5`.
impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.tx, self.op)
    }
}

impl fmt::Debug for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Which Electric code is modelled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Variant {
    /// `64a89a05f` (1.4.15): `:flushed` always aligned and notified at once; the tracker registers
    /// shapes on non-commit fragments (#3986); suspension unguarded.
    V1_4_15,
    /// `6c5068aa2` (#4064): `:flushed` deferred while a multi-fragment txn is pending; commit-only
    /// tracking.
    Pr4064,
    /// `dc07a1e6c` (1.7.12): #4064 plus suspend guards (#4503), the stall watchdog and consumer
    /// monitoring (#4730), and the keepalive guard (#4731).
    Head,
    /// 1.4.15 + #4058's fix 1: after `Storage.hibernate()`, notify the persisted offset if it is
    /// past the last one notified.
    Fix1NotifyAfterHibernate,
    /// 1.4.15 + #4058's fix 2: `flush_and_close_all` returns the flushed offset and the hibernate
    /// path notifies it inline.
    Fix2CloseReturnsOffset,
    /// 1.4.15 + #4058's fix 3: on the hibernate timeout, re-send `:flushed` when the persisted
    /// offset differs from the last one reported.
    Fix3PeriodicRecheck,
    /// 1.4.15 + #4058's fix 4: `flush_buffer` returns the offset and every caller notifies it
    /// at once instead of sending `:flushed` to itself.
    Fix4FlushReturnsOffset,
}

impl Variant {
    pub const ALL: [Variant; 7] = [
        Variant::V1_4_15,
        Variant::Pr4064,
        Variant::Head,
        Variant::Fix1NotifyAfterHibernate,
        Variant::Fix2CloseReturnsOffset,
        Variant::Fix3PeriodicRecheck,
        Variant::Fix4FlushReturnsOffset,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Variant::V1_4_15 => "v1.4.15",
            Variant::Pr4064 => "pr4064",
            Variant::Head => "head",
            Variant::Fix1NotifyAfterHibernate => "fix1-notify-after-hibernate",
            Variant::Fix2CloseReturnsOffset => "fix2-close-returns-offset",
            Variant::Fix3PeriodicRecheck => "fix3-periodic-recheck",
            Variant::Fix4FlushReturnsOffset => "fix4-flush-returns-offset",
        }
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// #4064: the consumer defers `:flushed` while a multi-fragment transaction is pending, and the
    /// tracker tracks shapes on commit fragments only.
    pub const fn has_4064(self) -> bool {
        matches!(self, Variant::Pr4064 | Variant::Head)
    }

    /// HEAD's suspend guards (#4503, #4730) and hibernate-before-suspend.
    pub const fn guards_suspend(self) -> bool {
        matches!(self, Variant::Head)
    }

    /// HEAD's collector monitors consumers with incomplete entries and invalidates stalled shapes
    /// (#4730).
    pub const fn has_watchdog(self) -> bool {
        matches!(self, Variant::Head)
    }

    /// HEAD's keepalive guard (#4731): `flush_up_to_date?` is `last_confirmed_flush_lsn ==
    /// last_seen_txn_lsn`.
    pub const fn guards_keepalive(self) -> bool {
        matches!(self, Variant::Head)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One transaction fragment as the ReplicationClient receives it (at most `max_batch_size`
/// changes; the last one carries the commit).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Fragment {
    /// The transaction: its commit LSN is `tx`.
    pub tx: u8,
    /// Whether this fragment carries the commit.
    pub commit: bool,
    /// Changes matching each shape's `where` clause in this fragment (lines written).
    pub lines: [u8; MAX_SHAPES],
    /// The fragment's `last_log_offset` (changes for no shape count too).
    pub last_log_offset: Offset,
}

/// The most shapes a workload has.
pub const MAX_SHAPES: usize = 2;

/// A list in a model state, held inline up to `N` items and on the heap only past them, so that
/// cloning a state (every successor starts as a clone) allocates nothing. It hashes, orders,
/// prints and serializes as a `Vec` does.
pub type Inline<T, const N: usize> = tinyvec::TinyVec<[T; N]>;

impl Fragment {
    /// The offset of shape `s`'s `i`-th line in this fragment: shapes' lines come first, in shape
    /// order, numbered from `first_op`.
    pub fn line_offset(&self, first_op: u8, s: usize, i: u8) -> Offset {
        let before: u8 = self.lines[..s].iter().sum();
        Offset::new(self.tx, first_op + before + i)
    }
}

/// The scripted workload: what PostgreSQL sends, in order.
///
/// - T1 (`tx` 1) in `fragments` fragments: the first has one change for shape 0 (below the
///   inline-flush threshold, so only the timer or hibernation flushes it), `inline_flush_lines`
///   changes for shape 1 (an inline flush) and an unrelated change; the others, the commit
///   included, have only unrelated changes — the #4064 shape of a small write inside a large
///   transaction.
/// - T2, T3 (`txns` ≥ 2, 3), one fragment each: one change for shape 1 and an unrelated one —
///   later transactions that do not touch shape 0, so a stuck shape 0 stays stuck while the WAL
///   end moves on.
///
/// Returns each fragment with the op index of its first change.
pub fn workload(
    shapes: usize,
    fragments: u8,
    txns: u8,
    inline_flush_lines: u8,
) -> Vec<(Fragment, u8)> {
    let lines_for = |counts: [u8; MAX_SHAPES]| {
        let mut lines = [0; MAX_SHAPES];
        lines[..shapes].copy_from_slice(&counts[..shapes]);
        lines
    };
    let mut out = Vec::new();
    let mut op = 1;
    for f in 0..fragments {
        let commit = f + 1 == fragments;
        let lines = if f == 0 {
            lines_for([1, inline_flush_lines])
        } else {
            [0; MAX_SHAPES]
        };
        let count: u8 = lines.iter().sum::<u8>() + 1;
        out.push((
            Fragment {
                tx: 1,
                commit,
                lines,
                last_log_offset: Offset::new(1, op + count - 1),
            },
            op,
        ));
        op += count;
    }
    for (tx, counts) in [(2, [0, 1]), (3, [0, 1])]
        .into_iter()
        .take(usize::from(txns.saturating_sub(1)))
    {
        let lines = lines_for(counts);
        let count: u8 = lines.iter().sum::<u8>() + 1;
        out.push((
            Fragment {
                tx,
                commit: true,
                lines,
                last_log_offset: Offset::new(tx, count),
            },
            1,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_workload() {
        let w = workload(2, 2, 2, 2);
        assert_eq!(w.len(), 3);
        assert_eq!(
            (w[0].0.commit, w[0].0.lines, w[0].0.last_log_offset),
            (false, [1, 2], Offset::new(1, 4))
        );
        assert_eq!(w[0].0.line_offset(w[0].1, 0, 0), Offset::new(1, 1));
        assert_eq!(w[0].0.line_offset(w[0].1, 1, 1), Offset::new(1, 3));
        assert_eq!(
            (w[1].0.commit, w[1].0.lines, w[1].0.last_log_offset),
            (true, [0, 0], Offset::new(1, 5))
        );
        assert_eq!(
            (w[2].0.tx, w[2].0.lines, w[2].0.last_log_offset),
            (2, [0, 1], Offset::new(2, 2))
        );
    }

    #[test]
    fn one_shape_three_txns() {
        let w = workload(1, 3, 3, 2);
        assert_eq!(
            w.iter()
                .map(|(f, _)| (f.tx, f.commit, f.lines))
                .collect::<Vec<_>>(),
            [
                (1, false, [1, 0]),
                (1, false, [0, 0]),
                (1, true, [0, 0]),
                (2, true, [0, 0]),
                (3, true, [0, 0]),
            ]
        );
    }
}
