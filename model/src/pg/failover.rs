//! A physical standby of the primary: the WAL it has received, its copy of a failover slot
//! (PostgreSQL 17 and later), and its promotion when the primary is lost.
//!
//! The standby streams from the primary asynchronously (no `synchronous_standby_names`): it has
//! at most what the primary flushed, and a promotion loses what it had not received.

use super::decoding::DurableSlot;
use super::slot::{SavedSlot, Slot};
use super::wal::Wal;
use crate::Lsn;

/// The standby receives the WAL the primary flushed: it writes, flushes and replays it. The
/// model makes the three one step, as it does for a standby the connector reads from
/// ([`Wal::replay_to_flush`]).
///
/// PostgreSQL 15 `walsender.c:XLogSendPhysical` sends up to `GetFlushRecPtr()`;
/// `walreceiver.c:XLogWalRcvFlush` flushes what it received and reports it in its next status
/// update (which moves the physical slot's `restart_lsn`, `PhysicalConfirmReceivedLocation`).
pub fn standby_receive(standby: Lsn, primary_flush: Lsn) -> Lsn {
    standby.max(primary_flush)
}

/// How far a logical walsender on the primary may send: the flush pointer, and with a failover
/// slot while `synchronized_standby_slots` names the standby's physical slot, no further than
/// the standby has confirmed (`waits_for_standby`).
///
/// PostgreSQL 17 `walsender.c:WalSndWaitForWal` returns `RecentFlushPtr` only once
/// `NeedToWaitForStandbys` finds every standby slot caught up to it
/// (`slot.c:StandbySlotsHaveCaughtup`); `logicalfuncs.c:pg_logical_slot_get_changes_guts`
/// waits in `WaitForStandbyConfirmation` the same way before it decodes. PostgreSQL waits for
/// the standby to confirm the whole flushed WAL it read; the model sends what the standby has
/// confirmed, which is the same once the standby catches up and sends no transaction the
/// standby lacks either way.
pub fn send_limit(flush: Lsn, standby: Lsn, waits_for_standby: bool) -> Lsn {
    match waits_for_standby {
        true => flush.min(standby),
        false => flush,
    }
}

/// One cycle of the standby's slot sync worker for the connector's failover slot: the standby's
/// copy (`local`) after it reads the primary's slot as `pg_replication_slots` shows it
/// (`remote`, `None` when it does not exist), with the standby holding WAL up to
/// `standby_flush`.
///
/// PostgreSQL 17 `slotsync.c:synchronize_slots`: a remote slot that is gone drops the local
/// copy (`drop_local_obsolete_slots`); `synchronize_one_slot` skips a remote slot whose
/// `confirmed_flush` lies past the standby's flush ("skipping slot synchronization because the
/// received slot sync LSN … is ahead of the standby position"), copies an invalidation, creates
/// no copy of an invalidated slot, and `update_local_synced_slot` copies `restart_lsn` and
/// `confirmed_flush` when the remote slot is ahead, saving the copy (`ReplicationSlotSave`). A new
/// copy is temporary until the remote slot reaches the WAL it reserved and a consistent point;
/// the model persists it at the first cycle that can copy it (the primary's slot is at rest or
/// was created on an idle server, where both hold at once), and a failover before that cycle
/// finds no copy.
pub fn sync_slot(
    remote: Option<&Slot>,
    standby_flush: Lsn,
    local: Option<SavedSlot>,
) -> Option<SavedSlot> {
    let remote = remote?;
    if remote.confirmed_flush > standby_flush {
        return local;
    }
    if !remote.restart_lsn.is_valid() {
        return local.map(|l| SavedSlot {
            restart_lsn: Lsn::INVALID,
            ..l
        });
    }
    match local {
        Some(l) if !l.restart_lsn.is_valid() => Some(l),
        Some(l)
            if remote.confirmed_flush <= l.confirmed_flush
                && remote.restart_lsn <= l.restart_lsn =>
        {
            Some(l)
        }
        _ => Some(SavedSlot {
            confirmed_flush: remote.confirmed_flush,
            restart_lsn: remote.restart_lsn,
        }),
    }
}

/// The standby promoted: its WAL ends where what it received ends (`standby`), and a new
/// timeline starts there, so the next transaction's WAL takes the LSNs of whatever the lost
/// primary wrote past that point. `pg_last_wal_replay_lsn()` stays at the end of the WAL it
/// replayed.
///
/// PostgreSQL 15 `xlogrecovery.c:PerformWalRecovery` replays all WAL received before the
/// promotion ends recovery; `xlog.c:StartupXLOG` then sets the insert, write and flush pointers
/// to `EndOfLog` on the new timeline (`XLogInitNewTimeline`), and nothing moves
/// `lastReplayedEndRecPtr` afterwards (`xlogfuncs.c:pg_last_wal_replay_lsn`). The
/// end-of-recovery record is below a page and not modelled, as checkpoint records are not.
pub fn promote(standby: Lsn) -> Wal {
    Wal::at(standby)
}

/// The timeline the promoted standby starts: one past the newest it knows (a fresh cluster is
/// on timeline 1; its standby follows it), which `IDENTIFY_SYSTEM` then reports.
///
/// PostgreSQL 15 `xlog.c:StartupXLOG`: `newTLI = findNewestTimeLine(recoveryTargetTLI) + 1`
/// once recovery ends by promotion; `walsender.c:IdentifySystem` returns `currTLI` from
/// `GetFlushRecPtr`. Live rule `promotion`.
pub fn promoted_timeline(timeline: u32) -> u32 {
    timeline + 1
}

/// The connector's slot on the promoted standby: its synced copy, saved, when there is one;
/// none otherwise (PostgreSQL 15 and 16 copy no logical slot to a physical standby, nor does 17
/// without `failover`).
///
/// PostgreSQL 17: a synced slot persisted by `slotsync.c:update_and_persist_local_synced_slot`
/// survives the promotion (`ShutDownSlotSync`; the slot sync worker's temporary slots are
/// dropped with it), and `slot.c:ReplicationSlotAcquire` refuses a synced slot only while
/// `RecoveryInProgress()`.
pub fn promoted_slot(synced: Option<SavedSlot>) -> Option<DurableSlot> {
    synced.map(|saved| {
        DurableSlot::created(Slot {
            confirmed_flush: saved.confirmed_flush,
            restart_lsn: saved.restart_lsn,
            saved,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(confirmed_flush: u64, restart_lsn: u64) -> Slot {
        let (confirmed_flush, restart_lsn) = (Lsn(confirmed_flush), Lsn(restart_lsn));
        Slot {
            confirmed_flush,
            restart_lsn,
            saved: SavedSlot {
                confirmed_flush,
                restart_lsn,
            },
        }
    }

    #[test]
    fn a_remote_slot_ahead_of_the_standby_is_not_copied() {
        let remote = slot(0x3000, 0x2000);
        assert_eq!(sync_slot(Some(&remote), Lsn(0x2800), None), None);
        let copied = sync_slot(Some(&remote), Lsn(0x3000), None).unwrap();
        assert_eq!(
            (copied.confirmed_flush, copied.restart_lsn),
            (Lsn(0x3000), Lsn(0x2000))
        );
    }

    #[test]
    fn a_copy_moves_forward_only_and_follows_a_drop_and_an_invalidation() {
        let old = sync_slot(Some(&slot(0x3000, 0x2000)), Lsn(0x4000), None);
        assert_eq!(
            sync_slot(Some(&slot(0x2800, 0x2000)), Lsn(0x4000), old),
            old
        );
        assert_eq!(sync_slot(None, Lsn(0x4000), old), None);
        let mut invalid = slot(0x3000, 0x2000);
        invalid.invalidate();
        let copy = sync_slot(Some(&invalid), Lsn(0x4000), old).unwrap();
        assert!(!copy.restart_lsn.is_valid());
        assert_eq!(sync_slot(Some(&invalid), Lsn(0x4000), None), None);
    }

    #[test]
    fn a_promoted_standby_starts_its_timeline_where_it_received_to() {
        let wal = promote(Lsn(0x5000));
        assert_eq!(
            (wal.insert, wal.write, wal.flush, wal.replay),
            (Lsn(0x5000), Lsn(0x5000), Lsn(0x5000), Lsn(0x5000))
        );
        assert_eq!(send_limit(Lsn(0x6000), Lsn(0x5000), true), Lsn(0x5000));
        assert_eq!(send_limit(Lsn(0x6000), Lsn(0x5000), false), Lsn(0x6000));
    }
}
