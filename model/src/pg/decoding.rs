//! Logical decoding of a slot: where it starts, which transactions it skips, how a confirmation
//! reaches the slot and its saved copy, and the SQL functions `pg_logical_slot_{peek,get}_changes`.

use serde::{Deserialize, Serialize};

use super::slot::{AdvanceError, Slot};
use super::txn::Txn;
use super::version::PgVersion;
use crate::{Lsn, WalPosition};

/// Where decoding starts for a requested position.
///
/// PostgreSQL 15 `logical.c:CreateDecodingContext`: `start_lsn = 0/0` continues from
/// `confirmed_flush`; `start_lsn < confirmed_flush` is "already streamed, forwarding to"
/// `confirmed_flush` (a LOG line, not an error); any later position is taken as it is, even past
/// the end of WAL (nothing checks it against the flush pointer).
pub fn decoding_start(requested: Lsn, confirmed_flush: Lsn) -> Lsn {
    if !requested.is_valid() || requested < confirmed_flush {
        confirmed_flush
    } else {
        requested
    }
}

/// Whether decoding starting at `start_decoding_at` skips the transaction: its commit record
/// *starts* before it.
///
/// PostgreSQL 15 `decode.c:DecodeCommit` → `DecodeTXNNeedSkip` → `snapbuild.c:
/// SnapBuildXactNeedsSkip(builder, buf->origptr)`: `ptr < builder->start_decoding_at`, where
/// `origptr` is the commit record's start. A start inside the commit record skips it.
pub fn txn_needs_skip(txn: &Txn, start_decoding_at: Lsn) -> bool {
    txn.commit_lsn < start_decoding_at
}

/// The candidate `restart_lsn` decoding holds for the next confirmation, given the starts of the
/// `xl_running_xacts` records it has read (in WAL order), each logged with no transaction
/// running: the first one past both `restart_lsn` and `confirmed_flush`. A confirmation reaching
/// it moves `restart_lsn` there and saves the slot ([`DurableSlot::confirm_received`]).
///
/// PostgreSQL 15 `snapbuild.c:SnapBuildProcessRunningXacts` serializes the snapshot at the
/// record (`SnapBuildSerialize(builder, lsn)`, `lsn` its start) and, with no transaction
/// running, offers that snapshot's position: `LogicalIncreaseRestartDecodingForSlot(lsn,
/// builder->last_serialized_snapshot)`. There (`logical.c`) a candidate not above `restart_lsn`
/// is ignored; one at or below `confirmed_flush` is applied while decoding (not a candidate for
/// the next confirmation, and not returned here); otherwise it is kept, valid from `lsn`, only
/// when no earlier candidate is pending ("Only increase if the previous values have been
/// applied"), so the first record wins. With transactions running the candidate is the oldest
/// one's `restart_decoding_lsn` instead, which the model does not track.
pub fn candidate_restart(running_xacts: &[Lsn], slot: &Slot) -> Option<Lsn> {
    running_xacts
        .iter()
        .copied()
        .find(|&lsn| lsn > slot.restart_lsn && lsn > slot.confirmed_flush)
}

/// The slot's `confirmed_flush` after `LogicalConfirmReceivedLocation(lsn)`: `lsn` when that is
/// further, else unchanged. There is no clamp: a position past the end of WAL is taken as it is.
/// Positions are [`WalPosition`]s, so a model counting transactions calls the same rule.
///
/// PostgreSQL 15 `logical.c:LogicalConfirmReceivedLocation` sets
/// `MyReplicationSlot->data.confirmed_flush = lsn` with no bound on `lsn`, only when
/// `lsn > confirmed_flush` ("Prevent moving the confirmed_flush backwards", in 15 since 15.14);
/// confirmed live by rules `status_update_no_clamp` and `status_update_never_backwards`.
pub fn confirmed_flush_after<P: WalPosition>(confirmed_flush: P, lsn: P) -> P {
    if lsn > confirmed_flush {
        lsn
    } else {
        confirmed_flush
    }
}

/// What a change to the slot's in-memory position did to its saved copy.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Persistence {
    /// Nothing to save: memory only, not even dirty (a checkpoint does not save it).
    MemoryOnly,
    /// Marked dirty: the next checkpoint or clean shutdown saves it, a crash loses it.
    Dirty,
    /// Saved to disk at once.
    Saved,
}

/// A slot with its dirty flag: whether the next checkpoint writes it out.
///
/// PostgreSQL 15 `slot.c:SaveSlotToPath` returns at once for a slot that is not dirty, and
/// `CheckPointReplicationSlots` runs it for every slot at each checkpoint, the shutdown
/// checkpoint of a clean (`-m fast`) stop included.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DurableSlot {
    pub slot: Slot,
    pub dirty: bool,
}

impl DurableSlot {
    /// A slot as it was saved, clean: just created, or at rest ([`Slot::at_rest`]).
    pub const fn created(slot: Slot) -> DurableSlot {
        DurableSlot { slot, dirty: false }
    }

    fn persist(&mut self, how: Persistence) -> Persistence {
        match how {
            Persistence::MemoryOnly => {}
            Persistence::Dirty => self.dirty = true,
            Persistence::Saved => {
                self.slot.save();
                self.dirty = false;
            }
        }
        how
    }

    /// `LogicalConfirmReceivedLocation(lsn)`: the client has everything up to `lsn`.
    ///
    /// PostgreSQL 15 `logical.c:LogicalConfirmReceivedLocation`:
    /// - `confirmed_flush` becomes `lsn` only when that moves it forward, with no clamp to the
    ///   WAL's end ([`confirmed_flush_after`]).
    /// - When decoding has found a candidate `restart_lsn` (or `catalog_xmin`) that `lsn` reaches
    ///   — it does after reading an `xl_running_xacts` record (`snapbuild.c:
    ///   SnapBuildProcessRunningXacts` → `LogicalIncreaseRestartDecodingForSlot`) — the slot
    ///   takes it and is saved at once (`ReplicationSlotMarkDirty` + `ReplicationSlotSave`).
    /// - Otherwise only shared memory changes: the slot is not even marked dirty, so neither a
    ///   checkpoint nor a clean shutdown saves it in 15 (17 saves it at shutdown).
    ///
    /// The candidate depends on WAL the model does not track: the caller passes it
    /// (`candidate_restart`, the `restart_lsn` PostgreSQL moves to, as observed).
    pub fn confirm_received(&mut self, lsn: Lsn, candidate_restart: Option<Lsn>) -> Persistence {
        self.confirm_received_on(PgVersion::DEBIAN_15, lsn, candidate_restart)
    }

    /// [`DurableSlot::confirm_received`] on `version`: before the August 2025 minors
    /// ([`PgVersion::confirms_forward_only`]) `confirmed_flush` becomes `lsn` even when that is
    /// behind it, also behind the saved copy.
    pub fn confirm_received_on(
        &mut self,
        version: PgVersion,
        lsn: Lsn,
        candidate_restart: Option<Lsn>,
    ) -> Persistence {
        self.slot.confirmed_flush = if version.confirms_forward_only() {
            confirmed_flush_after(self.slot.confirmed_flush, lsn)
        } else {
            lsn
        };
        let how = match candidate_restart {
            Some(restart) if restart <= self.slot.confirmed_flush => {
                self.slot.restart_lsn = self.slot.restart_lsn.max(restart);
                Persistence::Saved
            }
            _ => Persistence::MemoryOnly,
        };
        debug_assert!(
            self.slot.is_ordered() || !version.confirms_forward_only(),
            "{self:?}"
        );
        self.persist(how)
    }

    /// `pg_replication_slot_advance` (see [`Slot::slot_advance`]): whatever its decoding saved
    /// on the way, the slot ends dirty, so the next checkpoint saves it again — with any later
    /// confirmation that was only in memory.
    ///
    /// PostgreSQL 15 `slotfuncs.c:pg_logical_replication_slot_advance` calls
    /// `LogicalConfirmReceivedLocation(moveto)` (which may save the slot) and then
    /// `ReplicationSlotMarkDirty()` unconditionally; live rule `advance_leaves_slot_dirty`.
    pub fn slot_advance(
        &mut self,
        target: Lsn,
        limit: Lsn,
        restart_after: Option<Lsn>,
    ) -> Result<Lsn, AdvanceError> {
        self.slot_advance_via(target, limit, restart_after.map(|r| (r, r)))
    }

    /// [`DurableSlot::slot_advance`] with the running-xacts record's position and what it offers
    /// ([`Slot::slot_advance_via`]).
    pub fn slot_advance_via(
        &mut self,
        target: Lsn,
        limit: Lsn,
        record: Option<(Lsn, Lsn)>,
    ) -> Result<Lsn, AdvanceError> {
        let end_lsn = self.slot.slot_advance_via(target, limit, record)?;
        self.persist(Persistence::Dirty);
        Ok(end_lsn)
    }

    /// A checkpoint (or the shutdown checkpoint of a clean stop) saves the slot if it is dirty.
    ///
    /// PostgreSQL 15 `slot.c:CheckPointReplicationSlots` → `SaveSlotToPath`, which skips a slot
    /// that is not dirty.
    pub fn checkpoint(&mut self) {
        if self.dirty {
            self.persist(Persistence::Saved);
        }
    }

    /// A clean stop and start (`pg_ctl stop -m fast`): the shutdown checkpoint saves dirty slots,
    /// and the restart reads them back.
    ///
    /// PostgreSQL 15 `xlog.c:ShutdownXLOG` → `CreateCheckPoint(CHECKPOINT_IS_SHUTDOWN)` →
    /// `CheckPointReplicationSlots`; then `slot.c:StartupReplicationSlots`.
    pub fn clean_restart(&mut self) {
        self.clean_restart_on(PgVersion::DEBIAN_15);
    }

    /// [`DurableSlot::clean_restart`] on `version`: from 17 the shutdown checkpoint also saves a
    /// slot whose `confirmed_flush` moved past its saved copy, dirty or not
    /// ([`PgVersion::saves_confirmed_flush_at_shutdown`]; PostgreSQL 17
    /// `slot.c:CheckPointReplicationSlots(is_shutdown)`).
    pub fn clean_restart_on(&mut self, version: PgVersion) {
        if version.saves_confirmed_flush_at_shutdown()
            && self.slot.confirmed_flush > self.slot.saved.confirmed_flush
        {
            self.dirty = true;
        }
        self.checkpoint();
        self.slot.restore_saved();
    }

    /// An immediate stop and restart: the slot is what was saved (see [`Slot::restore_saved`]).
    pub fn crash_restart(&mut self) {
        self.slot.restore_saved();
        self.dirty = false;
    }
}

/// The request of `pg_logical_slot_get_changes(slot, upto_lsn, upto_nchanges)` or its `peek`
/// twin (`confirm = false`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SqlDecode {
    /// `upto_lsn`; `None` is SQL NULL.
    pub upto_lsn: Option<Lsn>,
    /// `upto_nchanges`; `None` is SQL NULL.
    pub upto_nchanges: Option<u32>,
    /// `get` (true) confirms what it read; `peek` (false) does not.
    pub confirm: bool,
}

/// What a SQL decoding call returned and how far it read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SqlChanges {
    /// The transactions whose rows it returned, in commit order.
    pub txns: Vec<Txn>,
    /// The rows it returned.
    pub rows: u32,
    /// The end of the last record it read (`ctx->reader->EndRecPtr`).
    pub read_to: Lsn,
}

/// `pg_logical_slot_get_changes` / `pg_logical_slot_peek_changes` on a slot, given the committed
/// transactions in commit order, the flush pointer at the call (`end_of_wal`), and the rows the
/// output plugin writes for a transaction (`rows_of`; test_decoding: BEGIN, one per change,
/// COMMIT).
///
/// PostgreSQL 15 `logicalfuncs.c:pg_logical_slot_get_changes_guts`:
/// - `end_of_wal = GetFlushRecPtr()` once, at the call: later WAL is not read.
/// - Decoding starts at `confirmed_flush` (`CreateDecodingContext(InvalidXLogRecPtr, …)`), reading
///   from `restart_lsn`; a transaction is output when its commit record is decoded.
/// - The loop reads one record at a time while `EndRecPtr < end_of_wal`, then stops when
///   `upto_lsn ≤ EndRecPtr` (so the record crossing `upto_lsn` is read, and included) or when
///   `upto_nchanges ≤ returned rows` (checked after each record, and rows come whole
///   transactions at a time at their commit).
/// - `get` then calls `LogicalConfirmReceivedLocation(EndRecPtr)` and marks the slot dirty
///   ("so it's written out at the next checkpoint. We'll still lose its position on crash").
///
/// The model knows the records around commits only: a record ends at each `commit_lsn` (the
/// previous record is contiguous with the commit record; not so when the commit record starts a
/// page, after its header), the commit record ends at `end_lsn`, and the last record read ends at
/// `end_of_wal` (flush is at a record end when commits flush it). An `upto_lsn` inside the WAL
/// between commits stops, in the model, at the next commit's start.
pub fn get_changes(
    slot: &mut DurableSlot,
    txns: &[Txn],
    end_of_wal: Lsn,
    request: SqlDecode,
    candidate_restart: Option<Lsn>,
    rows_of: impl Fn(&Txn) -> u32,
) -> SqlChanges {
    let start_decoding_at = decoding_start(Lsn::INVALID, slot.slot.confirmed_flush);
    let mut read_to = slot.slot.restart_lsn;
    let mut out = SqlChanges {
        txns: Vec::new(),
        rows: 0,
        read_to,
    };
    // Record ends the model knows, in WAL order, each with the transaction it commits.
    let ends = txns
        .iter()
        .flat_map(|t| [(t.commit_lsn, None), (t.end_lsn, Some(t))])
        .chain([(end_of_wal, None)]);
    for (end, commits) in ends {
        if read_to >= end_of_wal {
            break;
        }
        if end <= read_to {
            continue;
        }
        // A record crossing `end_of_wal` is read whole (the reader waits for its flush).
        read_to = end;
        if let Some(txn) = commits {
            if !txn_needs_skip(txn, start_decoding_at) && rows_of(txn) > 0 {
                // A plugin that writes no row for it (pgoutput, unpublished) returns nothing.
                out.rows += rows_of(txn);
                out.txns.push(*txn);
            }
        }
        // `upto_lsn` of `0/0` and `upto_nchanges` of 0 are no limit, as SQL NULL is
        // (`upto_lsn != InvalidXLogRecPtr &&`, `upto_nchanges != 0 &&`).
        let upto_lsn_reached = request
            .upto_lsn
            .is_some_and(|upto| upto.is_valid() && upto <= read_to);
        let upto_nchanges_reached = request
            .upto_nchanges
            .is_some_and(|n| n != 0 && n <= out.rows);
        if upto_lsn_reached || upto_nchanges_reached {
            break;
        }
    }
    out.read_to = read_to;
    if request.confirm && read_to.is_valid() {
        // Saved or not by the confirmation, the slot ends dirty (`ReplicationSlotMarkDirty` after
        // `LogicalConfirmReceivedLocation`): the next checkpoint saves it, later walsender
        // confirmations included (live rule `advance_leaves_slot_dirty`).
        slot.confirm_received(read_to, candidate_restart);
        slot.persist(Persistence::Dirty);
    }
    out
}

/// test_decoding's rows for a transaction: `BEGIN`, one per change, `COMMIT` — also for a
/// transaction without decodable changes (a `CREATE TABLE`, measured on 15): `skip-empty-xacts`
/// is off by default (PostgreSQL 15 `test_decoding.c:pg_decode_begin_txn`). test_decoding has no
/// publication: `published_rows` counts the changes of every table.
pub fn test_decoding_rows(txn: &Txn) -> u32 {
    txn.published_rows + 2
}

#[cfg(test)]
mod tests {
    use super::super::wal::{CommitMode, Wal};
    use super::*;

    const CF: Lsn = Lsn(0x153_E240);

    fn wal_of(n: u32, rows: u32) -> (Wal, Vec<Txn>) {
        let mut wal = Wal::at(CF);
        let txns = (0..n)
            .map(|i| wal.commit_txn(730 + i, 200, 46, rows, CommitMode::Sync))
            .collect();
        (wal, txns)
    }

    #[test]
    fn start_at_zero_or_below_confirmed_flush_continues_from_it() {
        assert_eq!(decoding_start(Lsn::INVALID, CF), CF);
        assert_eq!(decoding_start(Lsn(1), CF), CF);
        assert_eq!(decoding_start(CF.minus(8), CF), CF);
    }

    #[test]
    fn start_above_confirmed_flush_is_taken_even_past_the_wal() {
        assert_eq!(decoding_start(CF.plus(8), CF), CF.plus(8));
        assert_eq!(decoding_start(Lsn(u64::MAX), CF), Lsn(u64::MAX));
    }

    #[test]
    fn a_transaction_is_skipped_when_its_commit_record_starts_before_the_start() {
        let (_, txns) = wal_of(1, 1);
        let txn = txns[0];
        assert!(!txn_needs_skip(&txn, txn.commit_lsn));
        assert!(txn_needs_skip(&txn, txn.commit_lsn.plus(1)));
        // Even a start inside the commit record, before end_lsn, skips it.
        assert!(txn_needs_skip(&txn, txn.end_lsn.minus(8)));
    }

    #[test]
    fn a_confirmation_moves_forward_only_and_is_not_clamped() {
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        assert_eq!(
            slot.confirm_received(CF.plus(1 << 30), None),
            Persistence::MemoryOnly
        );
        assert_eq!(slot.slot.confirmed_flush, CF.plus(1 << 30));
        slot.confirm_received(CF.plus(8), None);
        assert_eq!(slot.slot.confirmed_flush, CF.plus(1 << 30));
    }

    #[test]
    fn confirmed_flush_moves_to_a_further_position_only_whatever_the_position_type() {
        // Bytes: no clamp to the end of WAL, never backwards, an equal position changes nothing.
        assert_eq!(
            confirmed_flush_after(CF, CF.plus(1 << 30)),
            CF.plus(1 << 30)
        );
        assert_eq!(confirmed_flush_after(CF, CF.minus(8)), CF);
        assert_eq!(confirmed_flush_after(CF, CF), CF);
        // Transaction numbers (Electric's model): the same rule.
        assert_eq!(confirmed_flush_after(2u8, 3), 3);
        assert_eq!(confirmed_flush_after(2u8, 1), 2);
    }

    #[test]
    fn a_confirmation_without_candidate_survives_neither_checkpoint_nor_restart() {
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        slot.confirm_received(CF.plus(0x100), None);
        assert!(!slot.dirty);
        slot.checkpoint();
        assert_eq!(slot.slot.saved.confirmed_flush, CF);
        slot.clean_restart();
        assert_eq!(slot.slot.confirmed_flush, CF);
    }

    #[test]
    fn a_confirmation_reaching_a_candidate_restart_lsn_is_saved_at_once() {
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let how = slot.confirm_received(CF.plus(0x100), Some(CF.plus(0x80)));
        assert_eq!(how, Persistence::Saved);
        assert_eq!(slot.slot.restart_lsn, CF.plus(0x80));
        slot.crash_restart();
        assert_eq!(slot.slot.confirmed_flush, CF.plus(0x100));
    }

    #[test]
    fn the_candidate_is_the_first_running_xacts_record_past_confirmed_flush() {
        let mut slot = Slot::at_rest(CF);
        slot.restart_lsn = CF.minus(0x38);
        // The record at restart_lsn (the slot's creation) and one at confirmed_flush are no
        // candidates for a confirmation; of the two later ones the first is kept.
        let records = [slot.restart_lsn, CF, CF.plus(0x100), CF.plus(0x200)];
        assert_eq!(candidate_restart(&records, &slot), Some(CF.plus(0x100)));
        assert_eq!(candidate_restart(&records[..2], &slot), None);
        // Reaching it saves the slot with restart_lsn there; falling short does not.
        let mut durable = DurableSlot::created(slot);
        let candidate = candidate_restart(&records, &slot);
        assert_eq!(
            durable.confirm_received(CF.plus(0xF8), candidate),
            Persistence::MemoryOnly
        );
        assert_eq!(
            durable.confirm_received(CF.plus(0x100), candidate),
            Persistence::Saved
        );
        assert_eq!(durable.slot.restart_lsn, CF.plus(0x100));
        assert_eq!(durable.slot.saved.confirmed_flush, CF.plus(0x100));
    }

    #[test]
    fn a_slot_comes_to_rest_when_a_confirmation_reaches_an_idle_running_xacts_record() {
        use super::super::lifecycle::{create_logical_slot, IDLE_RUNNING_XACTS_BYTES};
        let mut wal = Wal::at(CF);
        // A new slot is not at rest: restart_lsn is its running-xacts record's start.
        let created = create_logical_slot(&mut wal, IDLE_RUNNING_XACTS_BYTES);
        assert!(created.restart_lsn < created.confirmed_flush);
        assert_ne!(created, Slot::at_rest(created.confirmed_flush));
        // A transaction, then (the server idle) a running-xacts record right at its end.
        let txn = wal.commit_txn(730, 200, 46, 1, CommitMode::Sync);
        let record = txn.end_lsn;
        let candidate = candidate_restart(&[created.restart_lsn, record], &created);
        assert_eq!(candidate, Some(record));
        // The client acknowledges the transaction: confirmed_flush and restart_lsn meet, saved.
        let mut slot = DurableSlot::created(created);
        assert_eq!(
            slot.confirm_received(txn.end_lsn, candidate),
            Persistence::Saved
        );
        assert_eq!(slot, DurableSlot::created(Slot::at_rest(txn.end_lsn)));
    }

    #[test]
    fn get_confirms_to_the_end_of_wal_and_marks_dirty() {
        let (wal, txns) = wal_of(3, 2);
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let request = SqlDecode {
            upto_lsn: None,
            upto_nchanges: None,
            confirm: true,
        };
        let got = get_changes(
            &mut slot,
            &txns,
            wal.flush,
            request,
            None,
            test_decoding_rows,
        );
        assert_eq!(got.txns, txns);
        assert_eq!(got.rows, 12);
        assert_eq!(got.read_to, wal.flush);
        assert_eq!(slot.slot.confirmed_flush, wal.flush);
        assert!(slot.dirty);
        // Lost in a crash, kept by a checkpoint.
        let mut crashed = slot;
        crashed.crash_restart();
        assert_eq!(crashed.slot.confirmed_flush, CF);
        slot.checkpoint();
        slot.crash_restart();
        assert_eq!(slot.slot.confirmed_flush, wal.flush);
    }

    #[test]
    fn peek_reads_the_same_and_confirms_nothing() {
        let (wal, txns) = wal_of(2, 1);
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let request = SqlDecode {
            upto_lsn: None,
            upto_nchanges: None,
            confirm: false,
        };
        let got = get_changes(
            &mut slot,
            &txns,
            wal.flush,
            request,
            None,
            test_decoding_rows,
        );
        assert_eq!(got.txns.len(), 2);
        assert_eq!(slot, DurableSlot::created(Slot::at_rest(CF)));
    }

    #[test]
    fn upto_lsn_includes_the_record_crossing_it() {
        let (wal, txns) = wal_of(3, 1);
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let at = |upto: Lsn| SqlDecode {
            upto_lsn: Some(upto),
            upto_nchanges: None,
            confirm: false,
        };
        // Up to the second commit's start: the record ending there is the last read.
        let got = get_changes(
            &mut slot,
            &txns,
            wal.flush,
            at(txns[1].commit_lsn),
            None,
            test_decoding_rows,
        );
        assert_eq!(got.txns, vec![txns[0]]);
        assert_eq!(got.read_to, txns[1].commit_lsn);
        // One byte further: the commit record crosses it and is read.
        let got = get_changes(
            &mut slot,
            &txns,
            wal.flush,
            at(txns[1].commit_lsn.plus(1)),
            None,
            test_decoding_rows,
        );
        assert_eq!(got.txns, vec![txns[0], txns[1]]);
        assert_eq!(got.read_to, txns[1].end_lsn);
    }

    #[test]
    fn upto_nchanges_returns_whole_transactions() {
        let (wal, txns) = wal_of(3, 3);
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let request = SqlDecode {
            upto_lsn: None,
            upto_nchanges: Some(1),
            confirm: true,
        };
        let got = get_changes(
            &mut slot,
            &txns,
            wal.flush,
            request,
            None,
            test_decoding_rows,
        );
        assert_eq!(got.txns, vec![txns[0]]);
        assert_eq!(got.rows, 5);
        assert_eq!(slot.slot.confirmed_flush, txns[0].end_lsn);
    }

    #[test]
    fn decoding_is_bounded_by_the_flush_pointer_at_the_call() {
        let mut wal = Wal::at(CF);
        let first = wal.commit_txn(730, 200, 46, 1, CommitMode::Sync);
        let second = wal.commit_txn(731, 200, 46, 1, CommitMode::Async);
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let request = SqlDecode {
            upto_lsn: None,
            upto_nchanges: None,
            confirm: true,
        };
        let got = get_changes(
            &mut slot,
            &[first, second],
            wal.flush,
            request,
            None,
            test_decoding_rows,
        );
        assert_eq!(got.txns, vec![first]);
        assert_eq!(slot.slot.confirmed_flush, first.end_lsn);
    }
}
