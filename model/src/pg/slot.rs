//! A logical replication slot: its in-memory position and the copy saved to disk.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Lsn;

/// The slot's positions as last written to `pg_replslot/<name>/state`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SavedSlot {
    pub confirmed_flush: Lsn,
    pub restart_lsn: Lsn,
}

/// A logical slot (`pg_replication_slots`): `confirmed_flush` and `restart_lsn` in shared memory,
/// and the copy saved to disk, which is what survives a crash.
///
/// Invariants: `restart_lsn ≤ confirmed_flush`; `saved.confirmed_flush ≤ confirmed_flush`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Slot {
    pub confirmed_flush: Lsn,
    pub restart_lsn: Lsn,
    pub saved: SavedSlot,
}

/// Why `pg_replication_slot_advance` raised an error. `Display` gives PostgreSQL's message.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AdvanceError {
    /// The target was `0/0`: `ERROR: invalid target WAL LSN` (SQLSTATE XX000, as measured on
    /// PostgreSQL 15.20).
    InvalidTarget,
    /// The clamped target was below the slot's `confirmed_flush`:
    /// `ERROR: cannot advance replication slot to X, minimum is Y` (SQLSTATE 55000).
    BelowMinimum { moveto: Lsn, minimum: Lsn },
}

impl fmt::Display for AdvanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdvanceError::InvalidTarget => write!(f, "invalid target WAL LSN"),
            AdvanceError::BelowMinimum { moveto, minimum } => {
                write!(
                    f,
                    "cannot advance replication slot to {moveto}, minimum is {minimum}"
                )
            }
        }
    }
}

impl std::error::Error for AdvanceError {}

/// Which landing of [`Slot::advance_restarts`] an advance takes: PostgreSQL's choice, for a
/// model that names it rather than an LSN.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RestartLanding {
    /// `restart_lsn` stays: no running-xacts record met, nothing saved.
    Stays,
    /// The furthest landing: past the old `confirmed_flush` when it can be (saved at `moveto`).
    Furthest,
    /// The nearest: the old `confirmed_flush`, when `restart_lsn` lagged behind it (saved with
    /// the old `confirmed_flush`).
    Nearest,
}

impl Slot {
    /// A slot at rest at `at`: `restart_lsn` and `confirmed_flush` have met there, and that is
    /// what is saved. The checked systems start from it.
    ///
    /// It is not a new slot: `pg_create_logical_replication_slot` puts `restart_lsn` at the start
    /// of the running-xacts record it logs and `confirmed_flush` at its end
    /// ([`crate::pg::lifecycle::create_logical_slot`]). A slot comes to rest when a confirmation
    /// reaches the start of an idle running-xacts record that decoding has read: on an idle
    /// server the bgwriter or a checkpoint logs one right after the last transaction, so a
    /// client acknowledging that transaction's `end_lsn` confirms exactly the record's start,
    /// which is the candidate `restart_lsn` ([`crate::pg::decoding::candidate_restart`]);
    /// `LogicalConfirmReceivedLocation` moves `restart_lsn` there and saves the slot
    /// ([`crate::pg::DurableSlot::confirm_received`]; live rule
    /// `status_update_saved_with_candidate` confirms the candidate and the save). PostgreSQL 15
    /// `snapbuild.c:SnapBuildProcessRunningXacts` → `logical.c:
    /// LogicalIncreaseRestartDecodingForSlot`, then `LogicalConfirmReceivedLocation`.
    pub const fn at_rest(at: Lsn) -> Slot {
        Slot {
            confirmed_flush: at,
            restart_lsn: at,
            saved: SavedSlot {
                confirmed_flush: at,
                restart_lsn: at,
            },
        }
    }

    /// The in-memory positions, as [`Slot::save`] would write them.
    pub const fn positions(&self) -> SavedSlot {
        SavedSlot {
            confirmed_flush: self.confirmed_flush,
            restart_lsn: self.restart_lsn,
        }
    }

    /// Whether `restart_lsn ≤ confirmed_flush` and the saved copy is not ahead of memory.
    pub fn is_ordered(&self) -> bool {
        self.restart_lsn <= self.confirmed_flush
            && self.saved.restart_lsn <= self.saved.confirmed_flush
            && self.saved.confirmed_flush <= self.confirmed_flush
    }

    /// `pg_replication_slot_advance(slot, target)` on a logical slot; returns `end_lsn`.
    ///
    /// PostgreSQL 15 `slotfuncs.c:pg_replication_slot_advance`, in its order:
    /// 1. `target = 0/0` → `invalid target WAL LSN`.
    /// 2. Clamp: `moveto = Min(target, limit)`, where `limit` is `GetFlushRecPtr()` on a primary
    ///    and `GetXLogReplayRecPtr()` during recovery ("We can't move slot past what's been
    ///    flushed/replayed"). The caller passes the right one ([`crate::pg::Server::advance_limit`]).
    /// 3. `moveto < confirmed_flush` → `cannot advance replication slot to moveto, minimum is
    ///    confirmed_flush`; `moveto == confirmed_flush` is allowed and changes nothing.
    /// 4. `slotfuncs.c:pg_logical_replication_slot_advance` decodes in fast-forward mode up to
    ///    `moveto` and calls `logical.c:LogicalConfirmReceivedLocation(moveto)`, which never moves
    ///    `confirmed_flush` backwards; `end_lsn` is the slot's `confirmed_flush` afterwards.
    ///
    /// Whether the advance saves the slot, and with which `confirmed_flush`, depends on the
    /// `xl_running_xacts` records its fast-forward decoding meets between `restart_lsn` and
    /// `moveto`, which the model does not track: the caller passes where `restart_lsn` ends
    /// (`restart_after`, PostgreSQL's choice; `None`, or a position not past `restart_lsn` or
    /// past `moveto`: it stays). PostgreSQL 15 `logical.c:LogicalIncreaseRestartDecodingForSlot`,
    /// offered each record by `snapbuild.c:SnapBuildProcessRunningXacts`:
    /// - a record at or below the *old* `confirmed_flush` is applied at once, during decoding:
    ///   `restart_lsn` moves to it and the slot is saved with the old `confirmed_flush`
    ///   (`LogicalConfirmReceivedLocation(confirmed_flush)` → `ReplicationSlotSave`);
    /// - the first record past it becomes the candidate, which the closing
    ///   `LogicalConfirmReceivedLocation(moveto)` applies: `restart_lsn` moves to it and the slot
    ///   is saved with `confirmed_flush = moveto`.
    ///
    /// So a `restart_after` at or below the old `confirmed_flush` saves `{old confirmed_flush,
    /// restart_after}` and one past it saves `{moveto, restart_after}` (live rule
    /// `advance_saves_old_confirmed_flush`); either way memory holds `moveto`. Without a move only
    /// shared memory changes (the slot is marked dirty, [`crate::pg::DurableSlot::slot_advance`]),
    /// so the new `confirmed_flush` is lost by a crash before the next checkpoint (measured on
    /// PostgreSQL 15.20). [`Slot::advance_restarts`] lists the landings a checker explores.
    ///
    /// `confirmed_flush` never moves backwards here: the clamp-and-minimum check in step 3 sees to
    /// it whatever the minor release (the extra guard in `LogicalConfirmReceivedLocation` arrived
    /// in 15.14). The call is instant in the model; PostgreSQL may wait in `read_local_xlog_page`
    /// for the record straddling `moveto` to be flushed, which does not change `end_lsn`.
    pub fn slot_advance(
        &mut self,
        target: Lsn,
        limit: Lsn,
        restart_after: Option<Lsn>,
    ) -> Result<Lsn, AdvanceError> {
        self.slot_advance_via(target, limit, restart_after.map(|r| (r, r)))
    }

    /// [`Slot::slot_advance`] where the running-xacts record that moves `restart_lsn` lies at
    /// `record.0` and offers `record.1`: below the record when a transaction was still running
    /// there ([`crate::pg::txn::running_xacts_restart`]). Which `confirmed_flush` is saved
    /// depends on the record's position (at or below the old one: the old one; past it:
    /// `moveto`), not on where `restart_lsn` lands.
    pub fn slot_advance_via(
        &mut self,
        target: Lsn,
        limit: Lsn,
        record: Option<(Lsn, Lsn)>,
    ) -> Result<Lsn, AdvanceError> {
        if !target.is_valid() {
            return Err(AdvanceError::InvalidTarget);
        }
        let moveto = target.min(limit);
        if moveto < self.confirmed_flush {
            return Err(AdvanceError::BelowMinimum {
                moveto,
                minimum: self.confirmed_flush,
            });
        }
        let old = self.confirmed_flush;
        self.confirmed_flush = moveto;
        let record = record.filter(|&(at, r)| r > self.restart_lsn && r <= at && at <= moveto);
        if let Some((at, restart)) = record {
            self.restart_lsn = restart;
            self.saved = SavedSlot {
                confirmed_flush: if at <= old { old } else { moveto },
                restart_lsn: restart,
            };
        }
        debug_assert!(self.is_ordered(), "{self:?}");
        Ok(self.confirmed_flush)
    }

    /// Where an advance to `target` under `limit` may leave `restart_lsn` when its decoding
    /// meets running-xacts records, one representative per outcome of [`Slot::slot_advance`]:
    /// the old `confirmed_flush` (a record at or below it, applied at once: saved with the old
    /// `confirmed_flush`), when `restart_lsn` lags behind it; and `moveto` (a record past the old
    /// `confirmed_flush`, the closing confirmation's candidate: saved at `moveto`), when `moveto`
    /// is past both. In PostgreSQL the record lies before `moveto`; the model puts the candidate
    /// at `moveto`, the furthest it can go. Empty when the advance fails or nothing can move.
    pub fn advance_restarts(&self, target: Lsn, limit: Lsn) -> Vec<Lsn> {
        let moveto = target.min(limit);
        if !target.is_valid() || moveto < self.confirmed_flush {
            return Vec::new();
        }
        let at_old = (self.restart_lsn < self.confirmed_flush).then_some(self.confirmed_flush);
        let past_old =
            (moveto > self.confirmed_flush && moveto > self.restart_lsn).then_some(moveto);
        at_old.into_iter().chain(past_old).collect()
    }

    /// The position of `landing` among [`Slot::advance_restarts`] (`None`: it stays, or there
    /// is no such landing), for [`Slot::slot_advance`].
    pub fn restart_landing(&self, landing: RestartLanding, target: Lsn, limit: Lsn) -> Option<Lsn> {
        let landings = self.advance_restarts(target, limit);
        match landing {
            RestartLanding::Stays => None,
            RestartLanding::Furthest => landings.last().copied(),
            RestartLanding::Nearest => landings.first().copied(),
        }
    }

    /// Where an advance that clamped its target to `moveto` leaves `restart_lsn` when its
    /// fast-forward decoding meets `xl_running_xacts` records at `running_xacts` (ascending) with
    /// no transaction open at them: the first record past the old `confirmed_flush`, else the
    /// last one at or below it, else `restart_lsn` unchanged.
    ///
    /// PostgreSQL 15 `slotfuncs.c:pg_logical_replication_slot_advance` decodes from
    /// `restart_lsn` to `moveto`; `snapbuild.c:SnapBuildProcessRunningXacts` offers each record
    /// it meets to `logical.c:LogicalIncreaseRestartDecodingForSlot`, which takes one at or below
    /// `confirmed_flush` at once and keeps the first one past it as the candidate (later ones are
    /// dropped while it is pending); the closing `LogicalConfirmReceivedLocation(moveto)` takes
    /// the candidate. How far the next advance has to decode follows from it. Live rule
    /// `restart_after_advance` (the records' positions from `pg_waldump`).
    pub fn restart_after_advance(&self, moveto: Lsn, running_xacts: &[Lsn]) -> Lsn {
        let decoded = running_xacts
            .iter()
            .copied()
            .filter(|&r| r > self.restart_lsn && r < moveto);
        let mut restart = self.restart_lsn;
        for r in decoded {
            restart = r;
            if r > self.confirmed_flush {
                break;
            }
        }
        restart
    }

    /// Writes the slot's current positions to disk.
    ///
    /// PostgreSQL 15 `slot.c:CheckPointReplicationSlots` saves every dirty slot at each
    /// checkpoint and restartpoint (and at a clean shutdown) through `SaveSlotToPath`.
    pub fn save(&mut self) {
        self.saved = self.positions();
    }

    /// The slot invalidated by a checkpoint ([`super::lifecycle::slot_obsolete`]): `restart_lsn`
    /// is `0/0`, and the slot is saved with it (and with its `confirmed_flush` as it is).
    ///
    /// PostgreSQL 15 `slot.c:InvalidatePossiblyObsoleteSlot`: `s->data.restart_lsn =
    /// InvalidXLogRecPtr`, then `ReplicationSlotMarkDirty()` and `ReplicationSlotSave()`.
    pub fn invalidate(&mut self) {
        self.restart_lsn = Lsn::INVALID;
        self.save();
    }

    /// After a crash the slot is what was saved.
    ///
    /// PostgreSQL 15 `slot.c:StartupReplicationSlots` → `RestoreSlotFromDisk` reads
    /// `pg_replslot/<name>/state`; whatever was only in shared memory is gone.
    pub fn restore_saved(&mut self) {
        self.confirmed_flush = self.saved.confirmed_flush;
        self.restart_lsn = self.saved.restart_lsn;
    }
}

/// How far the flush pointer must reach before `pg_replication_slot_advance` to `moveto` (its
/// target already clamped) returns: the end of the first WAL record that ends at or after
/// `moveto`, or `moveto` itself when `record_ends` (ascending, in LSN bytes) has none there.
///
/// PostgreSQL 15 `slotfuncs.c:pg_logical_replication_slot_advance` reads whole records until one
/// ends at or past `moveto`, and `xlogutils.c:read_local_xlog_page_guts` waits (polling every
/// millisecond) until the flush pointer covers the bytes a record needs. A flush pointer on a
/// page boundary inside a record, where the walwriter leaves it
/// ([`crate::pg::Wal::walwriter_flush_pages`]), makes the call wait for the next flush past that
/// record; `end_lsn` is still `moveto`.
pub fn advance_read_end(moveto: Lsn, record_ends: impl IntoIterator<Item = Lsn>) -> Lsn {
    record_ends
        .into_iter()
        .find(|&end| end >= moveto)
        .unwrap_or(moveto)
}

/// Whether an advance that must read to `read_end` ([`advance_read_end`]) is still waiting with
/// the flush pointer at `flush` (see there).
pub fn advance_waits(flush: Lsn, read_end: Lsn) -> bool {
    flush < read_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advance_into_a_record_reads_to_its_end_and_waits_for_its_flush() {
        // Records ending at 0x1430, 0x2010 (it straddles the page boundary 0x2000), 0x2450.
        let ends = [Lsn(0x1430), Lsn(0x2010), Lsn(0x2450)];
        // The flush pointer on the page boundary: moveto 0x2000 lies inside the second record.
        let read_end = advance_read_end(Lsn(0x2000), ends);
        assert_eq!(read_end, Lsn(0x2010));
        assert!(advance_waits(Lsn(0x2000), read_end));
        assert!(!advance_waits(Lsn(0x2010), read_end));
        // On a record's end: nothing more to read.
        assert_eq!(advance_read_end(Lsn(0x1430), ends), Lsn(0x1430));
        assert!(!advance_waits(Lsn(0x1430), Lsn(0x1430)));
        // Past every known record: moveto itself.
        assert_eq!(advance_read_end(Lsn(0x3000), ends), Lsn(0x3000));
    }

    #[test]
    fn restart_lsn_moves_to_the_first_running_xacts_past_confirmed_flush() {
        let slot = Slot {
            confirmed_flush: Lsn(0x5000),
            restart_lsn: Lsn(0x1000),
            saved: SavedSlot {
                confirmed_flush: Lsn(0x5000),
                restart_lsn: Lsn(0x1000),
            },
        };
        let running = [
            Lsn(0x800),
            Lsn(0x2000),
            Lsn(0x4000),
            Lsn(0x6000),
            Lsn(0x7000),
        ];
        // 0x2000 and 0x4000 are taken at once; 0x6000 becomes the candidate, 0x7000 is dropped.
        assert_eq!(
            slot.restart_after_advance(Lsn(0x9000), &running),
            Lsn(0x6000)
        );
        // Decoding stops at moveto: only the records below it are met.
        assert_eq!(
            slot.restart_after_advance(Lsn(0x5800), &running),
            Lsn(0x4000)
        );
        // None met: restart_lsn stays.
        assert_eq!(
            slot.restart_after_advance(Lsn(0x1800), &running),
            Lsn(0x1000)
        );
    }

    const CF: Lsn = Lsn(0x153_E240);

    fn slot() -> Slot {
        Slot::at_rest(CF)
    }

    #[test]
    fn advance_clamps_to_the_limit_and_returns_confirmed_flush() {
        let mut s = slot();
        let end_lsn = s
            .slot_advance(CF.plus(0x3000), CF.plus(0x1000), None)
            .unwrap();
        assert_eq!(end_lsn, CF.plus(0x1000));
        assert_eq!(s.confirmed_flush, end_lsn);
    }

    #[test]
    fn advance_within_the_limit_reaches_the_target() {
        let mut s = slot();
        assert_eq!(
            s.slot_advance(CF.plus(0x1000), CF.plus(0x3000), None),
            Ok(CF.plus(0x1000))
        );
    }

    #[test]
    fn target_below_confirmed_flush_is_an_error_and_changes_nothing() {
        let mut s = slot();
        let err = s
            .slot_advance(CF.minus(8), CF.plus(0x1000), None)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot advance replication slot to 0/153E238, minimum is 0/153E240"
        );
        assert_eq!(s, slot());
    }

    #[test]
    fn clamped_target_below_confirmed_flush_is_an_error() {
        let mut s = slot();
        let err = s
            .slot_advance(CF.plus(0x1000), CF.minus(0x40), None)
            .unwrap_err();
        assert_eq!(
            err,
            AdvanceError::BelowMinimum {
                moveto: CF.minus(0x40),
                minimum: CF
            }
        );
    }

    #[test]
    fn target_equal_to_confirmed_flush_is_a_no_op() {
        let mut s = slot();
        assert!(s.advance_restarts(CF, CF.plus(0x1000)).is_empty());
        assert_eq!(s.slot_advance(CF, CF.plus(0x1000), None), Ok(CF));
        assert_eq!(s, slot());
    }

    #[test]
    fn equal_target_can_still_save_a_lagging_restart_lsn() {
        let mut s = slot();
        s.slot_advance(CF.plus(0x1000), CF.plus(0x1000), None)
            .unwrap();
        assert_eq!(s.saved.confirmed_flush, CF);
        assert_eq!(
            s.advance_restarts(CF.plus(0x1000), CF.plus(0x1000)),
            [CF.plus(0x1000)]
        );
        assert_eq!(
            s.slot_advance(CF.plus(0x1000), CF.plus(0x1000), Some(CF.plus(0x1000))),
            Ok(CF.plus(0x1000))
        );
        assert_eq!(s.saved.confirmed_flush, CF.plus(0x1000));
    }

    #[test]
    fn invalid_target_is_an_error() {
        let mut s = slot();
        let err = s
            .slot_advance(Lsn::INVALID, CF.plus(0x1000), None)
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid target WAL LSN");
        assert_eq!(s, slot());
    }

    #[test]
    fn target_beyond_the_insert_pointer_is_clamped_without_error() {
        let mut s = slot();
        assert_eq!(
            s.slot_advance(Lsn(u64::MAX), CF.plus(0x2000), None),
            Ok(CF.plus(0x2000))
        );
    }

    #[test]
    fn advance_without_restart_move_is_memory_only() {
        let mut s = slot();
        s.slot_advance(CF.plus(0x1000), CF.plus(0x1000), None)
            .unwrap();
        assert_eq!(s.saved.confirmed_flush, CF);
        s.restore_saved();
        assert_eq!(s.confirmed_flush, CF);
    }

    #[test]
    fn advance_that_moves_restart_lsn_is_saved_at_once() {
        let mut s = slot();
        s.slot_advance(CF.plus(0x1000), CF.plus(0x1000), Some(CF.plus(0x1000)))
            .unwrap();
        assert_eq!(s.saved.confirmed_flush, CF.plus(0x1000));
        s.restore_saved();
        assert_eq!(s.confirmed_flush, CF.plus(0x1000));
    }

    #[test]
    fn a_restart_lsn_moved_at_or_below_the_old_confirmed_flush_saves_the_old_one() {
        // The schedule live rule advance_saves_old_confirmed_flush drives: a first advance
        // leaves restart_lsn behind confirmed_flush (a second running-xacts record below it was
        // dropped while the first was the candidate); the second advance's decoding meets that
        // record at or below the old confirmed_flush and applies it at once, saving the slot
        // with the old confirmed_flush; nothing past it: a crash returns to the old one.
        let mut s = slot();
        let m1 = CF.plus(0x3000);
        s.slot_advance(m1, m1, Some(CF.plus(0x1000))).unwrap();
        assert_eq!(
            s.saved,
            SavedSlot {
                confirmed_flush: m1,
                restart_lsn: CF.plus(0x1000)
            }
        );
        let m2 = CF.plus(0x5000);
        assert_eq!(s.advance_restarts(m2, m2), [m1, m2]);
        assert_eq!(s.slot_advance(m2, m2, Some(CF.plus(0x2000))), Ok(m2));
        assert_eq!(s.confirmed_flush, m2);
        assert_eq!(
            s.saved,
            SavedSlot {
                confirmed_flush: m1,
                restart_lsn: CF.plus(0x2000)
            }
        );
        s.restore_saved();
        assert_eq!(s.confirmed_flush, m1);
    }

    #[test]
    fn a_restart_lsn_moved_past_the_old_confirmed_flush_saves_moveto() {
        let mut s = slot();
        let m = CF.plus(0x3000);
        s.slot_advance(m, m, Some(CF.plus(0x2000))).unwrap();
        assert_eq!(
            s.saved,
            SavedSlot {
                confirmed_flush: m,
                restart_lsn: CF.plus(0x2000)
            }
        );
        // A landing outside (restart_lsn, moveto] moves nothing.
        let mut t = slot();
        t.slot_advance(m, m, Some(m.plus(8))).unwrap();
        assert_eq!(t.saved, slot().saved);
        assert_eq!(t.restart_lsn, CF);
    }

    #[test]
    fn checkpoint_saves_the_slot() {
        let mut s = slot();
        s.slot_advance(CF.plus(0x1000), CF.plus(0x1000), None)
            .unwrap();
        s.save();
        s.restore_saved();
        assert_eq!(s.confirmed_flush, CF.plus(0x1000));
    }
}

#[cfg(test)]
mod quickchecks {
    use quickcheck::{quickcheck, TestResult};

    use super::*;

    quickcheck! {
        /// The advance's whole contract against a direct statement of it: an error iff the clamped
        /// target is below `confirmed_flush` (or the target is `0/0`); otherwise
        /// `end_lsn = confirmed_flush = max(confirmed_flush, min(target, limit))`.
        fn advance_contract(cf: u32, target: u32, limit: u32, restart_moves: bool) -> TestResult {
            let restart_after = restart_moves.then_some(Lsn(target.min(limit).into()));
            let (cf, target, limit) = (Lsn(cf.into()), Lsn(target.into()), Lsn(limit.into()));
            if limit < cf {
                return TestResult::discard(); // PostgreSQL keeps confirmed_flush <= flush/replay.
            }
            let mut slot = Slot::at_rest(cf);
            let result = slot.slot_advance(target, limit, restart_after);
            let moveto = target.min(limit);
            let ok = match result {
                Err(AdvanceError::InvalidTarget) => !target.is_valid(),
                Err(AdvanceError::BelowMinimum { moveto: m, minimum }) => m == moveto && minimum == cf && moveto < cf,
                Ok(end_lsn) => target.is_valid() && moveto >= cf && end_lsn == moveto && slot.confirmed_flush == moveto,
            };
            TestResult::from_bool(ok && slot.is_ordered())
        }
    }
}
