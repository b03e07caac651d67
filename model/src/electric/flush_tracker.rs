//! The FlushTracker inside the ShapeLogCollector: Electric
//! `replication/shape_log_collector/flush_tracker.ex` at 1.4.15 (`64a89a05f`, from #3986) and at
//! #4064 (`6c5068aa2`, unchanged in substance at HEAD).

use serde::{Deserialize, Serialize};

use super::{Fragment, Offset, MAX_SHAPES};

/// A tracked shape's `{last_sent, last_flushed}`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Entry {
    pub last_sent: Offset,
    pub last_flushed: Offset,
}

/// The tracker: shapes with incomplete flushes, the last commit seen (`S`) and the global flushed
/// offset (`G`). `min_incomplete_flush_tree` is the minimum of the entries' `last_flushed`.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct FlushTracker {
    pub entries: [Option<Entry>; MAX_SHAPES],
    pub last_seen_offset: Offset,
    pub last_global_flushed_offset: Offset,
}

/// What a tracker call did, for the properties that watch transitions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrackerEffects {
    /// `{:flush_boundary_updated, lsn}` sent to the ReplicationClient (`notify_fn`), in order.
    pub notified_lsns: Vec<u8>,
    /// An entry completed and was deleted at this offset.
    pub deleted_at: Option<Offset>,
}

impl FlushTracker {
    /// `track_shapes`: a tracked shape's `last_sent` becomes `offset`; a new one enters with
    /// `last_flushed` at `{tx_offset − 1, 0}`, "everything before this transaction".
    fn track_shapes(&mut self, offset: Offset, shapes: impl Iterator<Item = usize>) {
        for s in shapes {
            let entry = self.entries[s].get_or_insert(Entry {
                last_sent: offset,
                last_flushed: Offset::new(offset.tx.saturating_sub(1), 0),
            });
            entry.last_sent = offset;
        }
    }

    /// `handle_txn_fragment` after a publish, with the shapes it was delivered to and those with
    /// changes in it.
    /// - 1.4.15 (#3986, l.104-140): a non-commit fragment tracks its shapes at its
    ///   `last_log_offset`; a commit tracks the shapes with changes in it or already tracked.
    /// - #4064 (l.101-115): only commits, tracking every shape delivered.
    ///
    /// A commit then sets `last_seen_offset`; if nothing is pending the global offset catches up.
    pub fn handle_txn_fragment(
        &mut self,
        commit_only: bool,
        fragment: &Fragment,
        delivered: &[bool; MAX_SHAPES],
    ) -> TrackerEffects {
        let mut effects = TrackerEffects::default();
        let with_changes = |s: usize| fragment.lines[s] > 0;
        if !fragment.commit {
            if !commit_only {
                self.track_shapes(
                    fragment.last_log_offset,
                    (0..MAX_SHAPES).filter(|&s| delivered[s]),
                );
            }
            return effects;
        }
        let tracked = self.entries.map(|e| e.is_some());
        let shapes = (0..MAX_SHAPES)
            .filter(|&s| delivered[s] && (commit_only || with_changes(s) || tracked[s]));
        self.track_shapes(fragment.last_log_offset, shapes);
        self.last_seen_offset = fragment.last_log_offset;
        if self.entries.iter().all(Option::is_none) {
            self.update_global_offset(&mut effects);
        }
        effects
    }

    /// `handle_flush_notification(shape, offset)` (l.159-194): ignored for an untracked shape; an
    /// offset equal to `last_sent` completes the entry; any other becomes `last_flushed`, higher
    /// or lower. Then the global offset is updated — at 1.4.15 only once a commit has been seen.
    pub fn handle_flush_notification(
        &mut self,
        commit_only: bool,
        shape: usize,
        offset: Offset,
    ) -> TrackerEffects {
        let mut effects = TrackerEffects::default();
        let Some(entry) = self.entries[shape].as_mut() else {
            return effects;
        };
        if offset == entry.last_sent {
            self.entries[shape] = None;
            effects.deleted_at = Some(offset);
        } else {
            entry.last_flushed = offset;
        }
        if commit_only || self.last_seen_offset != Offset::BEFORE_ALL {
            self.update_global_offset(&mut effects);
        }
        effects
    }

    /// `handle_shape_removed`: the entry goes and the global offset is recomputed.
    pub fn handle_shape_removed(&mut self, shape: usize) -> TrackerEffects {
        let mut effects = TrackerEffects::default();
        if self.entries[shape].take().is_some() {
            self.update_global_offset(&mut effects);
        }
        effects
    }

    /// `update_global_offset` (l.212-241): with nothing pending `G := S` and notify `S.tx`;
    /// otherwise `G' = max(G, min last_flushed)` and, only if it moved, notify `G'.tx − 1` (one
    /// transaction behind, deliberately).
    fn update_global_offset(&mut self, effects: &mut TrackerEffects) {
        let min_pending = self.entries.iter().flatten().map(|e| e.last_flushed).min();
        match min_pending {
            None => {
                self.last_global_flushed_offset = self.last_seen_offset;
                effects.notified_lsns.push(self.last_seen_offset.tx);
            }
            Some(min) => {
                let next = self.last_global_flushed_offset.max(min);
                if next != self.last_global_flushed_offset {
                    self.last_global_flushed_offset = next;
                    effects.notified_lsns.push(next.tx.saturating_sub(1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(tx: u8, op: u8) -> Offset {
        Offset::new(tx, op)
    }

    fn fragment(tx: u8, commit: bool, lines: [u8; 2], last: Offset) -> Fragment {
        Fragment {
            tx,
            commit,
            lines,
            last_log_offset: last,
        }
    }

    #[test]
    fn a_commit_with_nothing_pending_moves_the_global_offset_and_notifies() {
        let mut t = FlushTracker::default();
        let e = t.handle_txn_fragment(true, &fragment(1, true, [0, 0], o(1, 3)), &[false, false]);
        assert_eq!(
            (t.last_global_flushed_offset, e.notified_lsns),
            (o(1, 3), vec![1])
        );
    }

    #[test]
    fn an_exact_flush_completes_the_entry_and_catches_up() {
        let mut t = FlushTracker::default();
        t.handle_txn_fragment(true, &fragment(1, true, [1, 0], o(1, 3)), &[true, false]);
        assert_eq!(
            t.entries[0],
            Some(Entry {
                last_sent: o(1, 3),
                last_flushed: o(0, 0)
            })
        );
        let e = t.handle_flush_notification(true, 0, o(1, 3));
        assert_eq!(e.deleted_at, Some(o(1, 3)));
        assert_eq!(
            (t.last_global_flushed_offset, e.notified_lsns),
            (o(1, 3), vec![1])
        );
    }

    #[test]
    fn a_partial_flush_moves_the_global_offset_one_transaction_behind() {
        let mut t = FlushTracker::default();
        t.handle_txn_fragment(true, &fragment(2, true, [1, 0], o(2, 3)), &[true, false]);
        let e = t.handle_flush_notification(true, 0, o(2, 1));
        assert_eq!(t.entries[0].unwrap().last_flushed, o(2, 1));
        assert_eq!(
            (t.last_global_flushed_offset, e.notified_lsns),
            (o(2, 1), vec![1])
        );
        assert_eq!(
            t.handle_flush_notification(true, 0, o(2, 1)).notified_lsns,
            Vec::<u8>::new(),
            "no move, no notify"
        );
    }

    #[test]
    fn bug_era_tracks_non_commit_fragments_and_waits_for_a_commit() {
        let mut t = FlushTracker::default();
        t.handle_txn_fragment(false, &fragment(1, false, [1, 0], o(1, 2)), &[true, false]);
        assert_eq!(t.entries[0].unwrap().last_sent, o(1, 2));
        let e = t.handle_flush_notification(false, 0, o(1, 1));
        assert!(e.notified_lsns.is_empty(), "before_all: no global update");
        t.handle_txn_fragment(false, &fragment(1, true, [0, 0], o(1, 3)), &[true, false]);
        assert_eq!(
            t.entries[0].unwrap(),
            Entry {
                last_sent: o(1, 3),
                last_flushed: o(1, 1)
            }
        );
    }

    #[test]
    fn removal_recomputes() {
        let mut t = FlushTracker::default();
        t.handle_txn_fragment(true, &fragment(1, true, [1, 0], o(1, 3)), &[true, false]);
        let e = t.handle_shape_removed(0);
        assert_eq!((t.entries[0], e.notified_lsns), (None, vec![1]));
    }
}
