//! A logical slot's life: creation at a consistent point, drop, and the WAL the slots retain.
//! (`pg_last_wal_replay_lsn()` across a primary's restarts is [`super::Server::last_wal_replay_lsn`].)

use super::slot::{SavedSlot, Slot};
use super::version::PgVersion;
use super::wal::{Wal, WAL_SEGMENT_BYTES};
use crate::Lsn;

/// The size of the `xl_running_xacts` record an idle primary logs when a slot is created
/// (no running transactions: a 24-byte header and 26 bytes of data, MAXALIGNed), as
/// `pg_waldump` shows it on PostgreSQL 15 (`len (rec/tot): 50/50`).
pub const IDLE_RUNNING_XACTS_BYTES: u64 = 56;

/// `pg_create_logical_replication_slot(name, plugin)` on an idle primary: the slot's
/// `restart_lsn` is the insert pointer, a running-xacts record is logged and flushed (and with it
/// every asynchronous commit before it), and `confirmed_flush` is its end, the consistent point.
/// The new slot is saved before the function returns.
///
/// PostgreSQL 15 `slot.c:ReplicationSlotReserveWal` sets `restart_lsn = GetXLogInsertRecPtr()`,
/// then `LogStandbySnapshot()` and `XLogFlush()` of it; `logical.c:DecodingContextFindStartpoint`
/// reads from `restart_lsn` until the snapshot is consistent (at once when no transaction runs)
/// and sets `confirmed_flush = ctx->reader->EndRecPtr`; `slotfuncs.c:create_logical_replication_slot`
/// → `ReplicationSlotPersist` saves it. With transactions running, creation waits for them to end
/// and the consistent point is later; the model creates slots on an idle server.
pub fn create_logical_slot(wal: &mut Wal, running_xacts_bytes: u64) -> Slot {
    let restart_lsn = wal.insert;
    wal.insert = wal.insert.plus(running_xacts_bytes);
    wal.commit_flush();
    let confirmed_flush = wal.insert;
    let slot = Slot {
        confirmed_flush,
        restart_lsn,
        saved: SavedSlot {
            confirmed_flush,
            restart_lsn,
        },
    };
    debug_assert!(slot.is_ordered() && wal.is_ordered(), "{slot:?} {wal:?}");
    slot
}

/// `pg_drop_replication_slot(name)`: the slot is gone from `slots` (the others keep their
/// places); what it retained is released at the next checkpoint. Returns whether it existed.
///
/// PostgreSQL 15 `slotfuncs.c:pg_drop_replication_slot` → `slot.c:ReplicationSlotDrop` →
/// `ReplicationSlotDropAcquired` removes `pg_replslot/<name>` and recomputes the required LSN
/// (`ReplicationSlotsComputeRequiredLSN`).
pub fn drop_slot<const N: usize>(slots: &mut [Option<Slot>; N], index: usize) -> bool {
    slots.get_mut(index).and_then(Option::take).is_some()
}

/// The oldest LSN any slot needs: the minimum `restart_lsn`, or `None` without slots.
///
/// PostgreSQL 15 `slot.c:ReplicationSlotsComputeRequiredLSN` (`XLogGetReplicationSlotMinimumLSN`).
pub fn slots_required_lsn(slots: &[Option<Slot>]) -> Option<Lsn> {
    slots.iter().flatten().map(|s| s.restart_lsn).min()
}

/// The WAL segment number an LSN lies in (`XLByteToSeg`).
pub const fn segment_of(lsn: Lsn) -> u64 {
    lsn.bytes() / WAL_SEGMENT_BYTES
}

/// The oldest segment a checkpoint with redo pointer `redo` keeps: that of `redo` or of the
/// oldest slot's `restart_lsn`, whichever is earlier (with `wal_keep_size = 0` and
/// `max_slot_wal_keep_size = -1`, the defaults).
///
/// PostgreSQL 15 `xlog.c:CreateCheckPoint` → `KeepLogSeg(recptr, &_logSegNo)` lowers the
/// segment to the slots' minimum, then `RemoveOldXlogFiles` removes (or recycles) every segment
/// before it.
pub fn oldest_kept_segment(slots: &[Option<Slot>], redo: Lsn) -> u64 {
    segment_of(removal_horizon(slots_required_lsn(slots), redo))
}

/// The oldest LSN a checkpoint with redo pointer `redo` keeps, given the slots' minimum
/// `restart_lsn` it read (`None` without slots): the earlier of the two (with `wal_keep_size = 0`
/// and `max_slot_wal_keep_size = -1`, the defaults). WAL before it may be removed.
///
/// PostgreSQL 15 `xlog.c:KeepLogSeg` lowers the segment of `redo` to that of `slotsMinReqLSN`;
/// `RemoveOldXlogFiles` then removes every segment before the result. This is the horizon at
/// the LSN itself, as if every byte were a segment: it is never below PostgreSQL's (the start of
/// its segment), so a slot that needs no WAL before it needs no removed segment either; a slot
/// that needs WAL before it has lost a segment once a segment boundary lies in between (with
/// 16 MiB segments, once the slot moved past one).
pub fn removal_horizon(slots_min: Option<Lsn>, redo: Lsn) -> Lsn {
    slots_min.map_or(redo, |required| required.min(redo))
}

/// The removal horizon of a checkpoint with redo pointer `redo` ([`removal_horizon`]), on
/// `version`: from the fixed minors the slots' minimum as it was when the checkpoint started,
/// before it saved the slots (`at_start`); before them the in-memory minimum when it ends
/// (`at_end`), which a slot that moved while the checkpoint ran has raised past its saved copy.
///
/// PostgreSQL 15.18 `xlog.c:CreateCheckPoint`: `slotsMinReqLSN =
/// XLogGetReplicationSlotMinimumLSN()` before `CheckPointGuts`, then `KeepLogSeg(recptr,
/// slotsMinReqLSN, &_logSegNo)`; 15.13 and earlier: `KeepLogSeg(recptr, &_logSegNo)`, which
/// calls `XLogGetReplicationSlotMinimumLSN()` itself after `CheckPointGuts` has saved the
/// slots (see [`PgVersion::checkpoint_keeps_slot_minimum_from_start`]; `CreateRestartPoint`
/// the same).
pub fn checkpoint_horizon(
    version: PgVersion,
    redo: Lsn,
    at_start: Option<Lsn>,
    at_end: Option<Lsn>,
) -> Lsn {
    if version.checkpoint_keeps_slot_minimum_from_start() {
        removal_horizon(at_start, redo)
    } else {
        removal_horizon(at_end, redo)
    }
}

/// Whether a checkpoint with redo pointer `redo` invalidates a slot whose `restart_lsn` is
/// `restart_lsn` under `max_slot_wal_keep_size` of `max_keep_segments` segments of
/// `segment_bytes` each (`None`: -1, no limit): the slots keep at most that many segments
/// before the redo pointer's, and a slot needing older WAL is invalidated. An invalidated slot
/// (`restart_lsn` `0/0`) is not invalidated again.
///
/// PostgreSQL 15 `xlog.c:KeepLogSeg` caps the slots' oldest segment at `currSegNo -
/// slot_keep_segs`; `CreateCheckPoint` then calls `slot.c:InvalidateObsoleteReplicationSlots`,
/// whose `InvalidatePossiblyObsoleteSlot` invalidates a slot with `restart_lsn` below that
/// segment's start: it terminates a walsender holding it, sets `restart_lsn` to
/// `InvalidXLogRecPtr` (`invalidated_at` keeps the old one) and saves the slot.
pub fn slot_obsolete(
    restart_lsn: Lsn,
    redo: Lsn,
    max_keep_segments: Option<u64>,
    segment_bytes: u64,
) -> bool {
    let Some(keep) = max_keep_segments else {
        return false;
    };
    if !restart_lsn.is_valid() || restart_lsn >= redo {
        return false;
    }
    let current = redo.bytes() / segment_bytes;
    let oldest_kept = current.saturating_sub(keep) * segment_bytes;
    current - restart_lsn.bytes() / segment_bytes > keep && restart_lsn.bytes() < oldest_kept
}

#[cfg(test)]
mod tests {
    use super::super::wal::CommitMode;
    use super::*;

    const BASE: Lsn = Lsn(0x152_3748);

    #[test]
    fn a_slot_is_created_at_the_end_of_its_running_xacts_record() {
        let mut wal = Wal::at(BASE);
        let slot = create_logical_slot(&mut wal, IDLE_RUNNING_XACTS_BYTES);
        assert_eq!(slot.restart_lsn, BASE);
        assert_eq!(slot.confirmed_flush, Lsn(0x152_3780));
        assert_eq!(slot.saved.confirmed_flush, slot.confirmed_flush);
        assert_eq!(wal.flush, slot.confirmed_flush);
    }

    #[test]
    fn creating_a_slot_flushes_asynchronous_commits() {
        let mut wal = Wal::at(BASE);
        let txn = wal.commit_txn(726, 61, 46, 1, CommitMode::Async);
        assert!(wal.flush < txn.end_lsn);
        let slot = create_logical_slot(&mut wal, IDLE_RUNNING_XACTS_BYTES);
        assert!(wal.flush >= txn.end_lsn);
        assert_eq!(slot.restart_lsn, txn.end_lsn);
    }

    #[test]
    fn a_checkpoint_keeps_the_wal_of_its_redo_or_of_the_oldest_slot() {
        let redo = Lsn(0x100_8000);
        assert_eq!(removal_horizon(None, redo), redo);
        assert_eq!(
            removal_horizon(Some(Lsn(0x100_2000)), redo),
            Lsn(0x100_2000)
        );
        assert_eq!(removal_horizon(Some(Lsn(0x101_0000)), redo), redo);
    }

    /// The slot is saved at 0/1002000 when the checkpoint starts, then advanced to 0/1006000
    /// before it ends: before 15.14 the end's minimum removes WAL the saved copy needs.
    #[test]
    fn before_the_fix_a_slot_moved_during_the_checkpoint_loses_its_saved_copys_wal() {
        let redo = Lsn(0x100_8000);
        let (saved, moved) = (Some(Lsn(0x100_2000)), Some(Lsn(0x100_6000)));
        assert_eq!(
            checkpoint_horizon(PgVersion(150_012), redo, saved, moved),
            Lsn(0x100_6000)
        );
        assert_eq!(
            checkpoint_horizon(PgVersion(150_018), redo, saved, moved),
            Lsn(0x100_2000)
        );
    }

    #[test]
    fn a_slot_retaining_more_than_max_slot_wal_keep_size_is_invalidated() {
        let seg = WAL_SEGMENT_BYTES;
        let redo = Lsn(5 * seg + 0x28);
        // Unlimited (-1): never.
        assert!(!slot_obsolete(Lsn(seg), redo, None, seg));
        // Two segments kept before the redo pointer's (segments 3, 4 and 5): 2 is too old.
        assert!(slot_obsolete(Lsn(2 * seg + 0x100), redo, Some(2), seg));
        assert!(!slot_obsolete(Lsn(3 * seg), redo, Some(2), seg));
        // Already invalidated, or at the redo pointer: nothing to do.
        assert!(!slot_obsolete(Lsn::INVALID, redo, Some(0), seg));
        assert!(!slot_obsolete(redo, redo, Some(0), seg));
        // `max_slot_wal_keep_size = 0`: only the redo pointer's segment is kept.
        assert!(slot_obsolete(Lsn(4 * seg + 0x10), redo, Some(0), seg));
        assert!(!slot_obsolete(Lsn(5 * seg), redo, Some(0), seg));
    }

    #[test]
    fn the_oldest_slot_holds_the_wal_until_it_is_dropped() {
        let old = Slot::at_rest(Lsn(WAL_SEGMENT_BYTES + 0x100));
        let new = Slot::at_rest(Lsn(4 * WAL_SEGMENT_BYTES + 0x100));
        let mut slots = [Some(old), Some(new)];
        let redo = Lsn(5 * WAL_SEGMENT_BYTES + 0x28);
        assert_eq!(oldest_kept_segment(&slots, redo), 1);
        assert!(drop_slot(&mut slots, 0));
        assert!(!drop_slot(&mut slots, 0));
        assert_eq!(oldest_kept_segment(&slots, redo), 4);
        assert!(drop_slot(&mut slots, 1));
        assert_eq!(oldest_kept_segment(&slots, redo), 5);
    }
}
