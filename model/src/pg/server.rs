//! One PostgreSQL server as a connector sees it: its role, its WAL pointers, the connector's
//! logical slot and room for others beside it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::lifecycle::{create_logical_slot, drop_slot, oldest_kept_segment, slots_required_lsn};
use super::slot::{AdvanceError, RestartLanding, Slot};
use super::wal::{CommitMode, Wal};
use crate::Lsn;

/// How many logical slots the model's server holds besides the connector's own: room for another
/// consumer of the same server, or a slot created to replace one. A fixed array keeps [`Server`]
/// `Copy` (PostgreSQL's `max_replication_slots`, 10 by default, is the real bound).
pub const OTHER_SLOTS_MAX: usize = 3;

/// Whether the connector talks to a primary or to a hot standby.
///
/// Logical slots on a standby exist from PostgreSQL 16 on; OLake reads the replay pointer there
/// since #1070. The rest of the model is PostgreSQL 15's behaviour, which is unchanged for it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Primary,
    Standby,
}

impl Role {
    /// The knob's values as `--bound server=…` spells them.
    pub const NAMES: [&'static str; 2] = ["primary", "standby"];

    /// The knob's spelling.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Standby => "standby",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error a WAL position function raises.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WalFunctionError {
    /// `pg_current_wal_lsn()` during recovery (SQLSTATE 55000).
    RecoveryInProgress,
}

impl WalFunctionError {
    /// The SQLSTATE PostgreSQL raises it with.
    ///
    /// PostgreSQL 15 `xlogfuncs.c:pg_current_wal_lsn`: `errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE)`
    /// (55000), `errmsg("recovery is in progress")`; confirmed on a live 15 standby by
    /// `walcheck live conformance` (rule `standby_wal_functions`).
    pub const fn sqlstate(self) -> &'static str {
        match self {
            WalFunctionError::RecoveryInProgress => "55000",
        }
    }
}

impl fmt::Display for WalFunctionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WalFunctionError::RecoveryInProgress => f.write_str("recovery is in progress"),
        }
    }
}

impl std::error::Error for WalFunctionError {}

/// The server: its role, its WAL pointers, the connector's logical slot and the others, and a
/// backend whose synchronous commit has not flushed yet.
///
/// On a standby, `wal.insert/write/flush` are the primary's pointers (the standby receives what
/// the primary flushed) and `wal.replay` is the standby's own. On a primary `wal.replay` is what
/// `pg_last_wal_replay_lsn()` answers there: `0/0` (NULL) until a crash, then the end of crash
/// recovery ([`Server::last_wal_replay_lsn`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Server {
    pub role: Role,
    pub wal: Wal,
    pub slot: Slot,
    /// The other logical slots by place; `None` is a free place (never used, or dropped). A
    /// server starts without them.
    pub other_slots: [Option<Slot>; OTHER_SLOTS_MAX],
    /// A synchronous commit has inserted its record and waits in `XLogFlush`.
    pub commit_pending: bool,
}

impl Server {
    /// A quiet server whose WAL pointers and connector's slot are all at `at`: the slot at rest
    /// there ([`Slot::at_rest`]), everything flushed, no other slot, no commit waiting; on a
    /// primary `pg_last_wal_replay_lsn()` is NULL (started without recovery). The running-xacts
    /// record that brought the slot to rest (56 bytes after `at`) is below a page: the checker's
    /// pointers, in whole pages, do not lay it out, as they do not lay out checkpoint records.
    pub const fn at_rest(role: Role, at: Lsn) -> Server {
        let mut wal = Wal::at(at);
        if let Role::Primary = role {
            wal.replay = Lsn::INVALID;
        }
        Server {
            role,
            wal,
            slot: Slot::at_rest(at),
            other_slots: [None; OTHER_SLOTS_MAX],
            commit_pending: false,
        }
    }

    /// Every slot, the connector's first, then the other places in order (`None` where free).
    pub fn slots(&self) -> [Option<Slot>; 1 + OTHER_SLOTS_MAX] {
        let mut all = [Some(self.slot); 1 + OTHER_SLOTS_MAX];
        all[1..].copy_from_slice(&self.other_slots);
        all
    }

    /// The oldest WAL any slot needs: the minimum `restart_lsn` over the slots (there is always
    /// the connector's). After [`Server::crash_restart`] every slot is its saved copy, so this is
    /// then the minimum saved `restart_lsn`.
    ///
    /// PostgreSQL 15 `slot.c:ReplicationSlotsComputeRequiredLSN` (see [`slots_required_lsn`]),
    /// run at slot creation, drop, every `restart_lsn` move and `StartupReplicationSlots`.
    pub fn required_lsn(&self) -> Lsn {
        slots_required_lsn(&self.slots()).expect("the connector's slot")
    }

    /// The oldest WAL segment a checkpoint with redo pointer `redo` keeps, given every slot
    /// (see [`oldest_kept_segment`]: PostgreSQL 15 `xlog.c:KeepLogSeg`).
    pub fn oldest_kept_segment(&self, redo: Lsn) -> u64 {
        oldest_kept_segment(&self.slots(), redo)
    }

    /// `pg_create_logical_replication_slot` on an idle primary into the first free place, or
    /// `None` when there is none (PostgreSQL: `all replication slots are in use`). See
    /// [`create_logical_slot`] (PostgreSQL 15 `slot.c:ReplicationSlotReserveWal`,
    /// `logical.c:DecodingContextFindStartpoint`); the new slot's running-xacts record flushes
    /// the WAL.
    pub fn create_slot(&mut self, running_xacts_bytes: u64) -> Option<usize> {
        debug_assert_eq!(
            self.role,
            Role::Primary,
            "logical slots on a standby need 16+"
        );
        let place = self.other_slots.iter().position(Option::is_none)?;
        self.other_slots[place] = Some(create_logical_slot(&mut self.wal, running_xacts_bytes));
        self.commit_pending = false;
        Some(place)
    }

    /// `pg_drop_replication_slot` of the other slot at `place`; returns whether there was one.
    /// See [`drop_slot`] (PostgreSQL 15 `slot.c:ReplicationSlotDropAcquired`).
    pub fn drop_slot(&mut self, place: usize) -> bool {
        drop_slot(&mut self.other_slots, place)
    }

    /// A backend inserts `bytes` of WAL that end in its commit record, and commits under `mode`: a
    /// synchronous commit then waits in `XLogFlush` ([`Server::commit_pending`]) until
    /// [`Server::commit_flush`]; an asynchronous one returns at once and leaves the flush to the
    /// walwriter. Buffer-pressure writes happen inside the insertion ([`Wal::append`]; sizes in
    /// bytes). One backend: the caller inserts nothing while a commit is pending.
    ///
    /// PostgreSQL 15 `xact.c:RecordTransactionCommit`: `XactLogCommitRecord`, then under
    /// `synchronous_commit = on` `XLogFlush(XactLastRecEnd)`, otherwise
    /// `XLogSetAsyncXactLSN(XactLastRecEnd)`. [`Wal::commit_txn`] is the same commit in one step,
    /// its records laid out and a synchronous flush included. Live rule
    /// `sync_commit_waits_for_flush`: a synchronous `COMMIT` returns with its WAL flushed, an
    /// asynchronous one with the flush pointer where it was.
    pub fn insert_commit(
        &mut self,
        bytes: u64,
        mode: CommitMode,
        page_bytes: u64,
        wal_buffers_bytes: u64,
    ) {
        debug_assert!(!self.commit_pending, "a second commit while one waits");
        self.wal.append(bytes, page_bytes, wal_buffers_bytes);
        self.commit_pending = mode == CommitMode::Sync;
    }

    /// The waiting synchronous commit's `XLogFlush` returns: WAL written and flushed through the
    /// insert pointer ([`Wal::commit_flush`]), the backend free again.
    ///
    /// PostgreSQL 15 `xlog.c:XLogFlush` → `XLogWrite` with `WriteRqst.Write = WriteRqst.Flush =`
    /// the insert position.
    pub fn commit_flush(&mut self) {
        self.wal.commit_flush();
        self.commit_pending = false;
    }

    /// Whether a checkpoint now would change what the model keeps: a slot differs from its saved
    /// copy, or, on a primary, WAL is unflushed ([`Server::checkpoint`]). A checker offers no
    /// checkpoint that changes nothing.
    pub fn checkpoint_has_work(&self) -> bool {
        let unsaved = self
            .slots()
            .iter()
            .flatten()
            .any(|s| s.saved != s.positions());
        unsaved || (self.role == Role::Primary && self.wal.flush < self.wal.insert)
    }

    /// `pg_current_wal_lsn()`: the write pointer.
    ///
    /// PostgreSQL 15 `xlogfuncs.c:pg_current_wal_lsn` returns `GetXLogWriteRecPtr()` and fails
    /// with `recovery is in progress` on a standby.
    pub fn current_wal_lsn(&self) -> Result<Lsn, WalFunctionError> {
        match self.role {
            Role::Primary => Ok(self.wal.write),
            Role::Standby => Err(WalFunctionError::RecoveryInProgress),
        }
    }

    /// `pg_last_wal_replay_lsn()`, `None` for NULL: on a standby the replay pointer; on a primary
    /// NULL after a start without recovery and, after a crash, the end of the WAL recovery
    /// replayed, which later WAL does not move ([`Wal::crash_restart`]).
    ///
    /// PostgreSQL 15 `xlogfuncs.c:pg_last_wal_replay_lsn` returns `GetXLogReplayRecPtr()`, NULL
    /// when it is `InvalidXLogRecPtr`; `xlogrecovery.c:PerformWalRecovery` sets it only while
    /// recovery runs. Confirmed live by rules `standby_wal_functions` and `replay_lsn_on_primary`.
    pub fn last_wal_replay_lsn(&self) -> Option<Lsn> {
        match self.role {
            Role::Primary => self.wal.replay.is_valid().then_some(self.wal.replay),
            Role::Standby => Some(self.wal.replay),
        }
    }

    /// `pg_last_wal_replay_lsn()` on a standby, `pg_current_wal_lsn()` on a primary: OLake's
    /// `current_lsn` column since #1070 (`CASE WHEN pg_is_in_recovery() …`).
    ///
    /// PostgreSQL 15 `xlogfuncs.c:pg_last_wal_replay_lsn` returns `GetXLogReplayRecPtr()`.
    pub fn current_or_replay_lsn(&self) -> Lsn {
        match self.role {
            Role::Primary => self.wal.write,
            Role::Standby => self.wal.replay,
        }
    }

    /// The pointer `pg_replication_slot_advance` clamps its target to.
    ///
    /// PostgreSQL 15 `slotfuncs.c:pg_replication_slot_advance`: `GetFlushRecPtr()` unless
    /// `RecoveryInProgress()`, then `GetXLogReplayRecPtr()`.
    pub fn advance_limit(&self) -> Lsn {
        match self.role {
            Role::Primary => self.wal.flush,
            Role::Standby => self.wal.replay,
        }
    }

    /// `pg_replication_slot_advance(slot, target)`; returns `end_lsn`. See [`Slot::slot_advance`];
    /// `landing` picks among [`Slot::advance_restarts`].
    pub fn slot_advance(
        &mut self,
        target: Lsn,
        landing: RestartLanding,
    ) -> Result<Lsn, AdvanceError> {
        let limit = self.advance_limit();
        let restart_after = self.slot.restart_landing(landing, target, limit);
        self.slot.slot_advance(target, limit, restart_after)
    }

    /// `CHECKPOINT` (or a restartpoint on a standby): saves the slot; on a primary the checkpoint
    /// record's flush also flushes all WAL inserted before it.
    ///
    /// PostgreSQL 15 `xlog.c:CreateCheckPoint` → `CheckPointGuts` → `slot.c:CheckPointReplicationSlots`,
    /// then `XLogFlush` of the checkpoint record. On a standby `xlog.c:CreateRestartPoint` saves
    /// slots the same way and writes no WAL, but only once a checkpoint record of the primary has
    /// been replayed since the last restartpoint; the primary checkpoints on its own schedule
    /// (`checkpoint_timeout`), which the model does not track, so it lets a restartpoint happen
    /// at any step: that covers every moment the server saves, and more. Live rules
    /// `checkpoint_flushes_wal` and `restartpoint_on_standby` (a 15 standby declines a
    /// restartpoint with no primary checkpoint replayed and takes one after).
    pub fn checkpoint(&mut self) {
        self.slot.save();
        self.other_slots.iter_mut().flatten().for_each(Slot::save);
        if self.role == Role::Primary {
            self.wal.checkpoint_flush();
            self.commit_pending = false;
        }
    }

    /// Immediate shutdown and restart of the server the connector talks to (not an
    /// operating-system crash): written WAL survives and is flushed by recovery (on a primary
    /// `pg_last_wal_replay_lsn()` is then the end of recovery, [`Wal::crash_restart`]), every
    /// slot returns to its saved copy, every session dies (a waiting synchronous commit with it).
    ///
    /// PostgreSQL 15 `xlog.c:StartupXLOG` and `slot.c:StartupReplicationSlots`. On a standby the
    /// primary's WAL and its sessions are untouched (a synchronous commit goes on waiting for
    /// its flush) and replay resumes where it was: the model does not show the replay pointer
    /// re-passing the redo point during the standby's own recovery.
    pub fn crash_restart(&mut self) {
        if self.role == Role::Primary {
            self.wal.crash_restart();
            self.commit_pending = false;
        }
        self.slot.restore_saved();
        self.other_slots
            .iter_mut()
            .flatten()
            .for_each(Slot::restore_saved);
    }
}

#[cfg(test)]
mod tests {
    use super::super::lifecycle::{segment_of, IDLE_RUNNING_XACTS_BYTES};
    use super::super::wal::{CommitMode, WAL_SEGMENT_BYTES};
    use super::*;

    const AT: Lsn = Lsn(WAL_SEGMENT_BYTES + 0x100);

    #[test]
    fn a_standby_crash_leaves_the_primary_s_synchronous_commit_waiting() {
        for (role, waits) in [(Role::Primary, false), (Role::Standby, true)] {
            let mut server = Server::at_rest(role, AT);
            server.insert_commit(8192, CommitMode::Sync, 8192, 4 * 8192);
            server.crash_restart();
            assert_eq!(server.commit_pending, waits, "{role:?}");
        }
    }

    #[test]
    fn a_server_starts_with_the_connectors_slot_alone() {
        let server = Server::at_rest(Role::Primary, AT);
        assert_eq!(server.slots().iter().flatten().count(), 1);
        assert_eq!(server.required_lsn(), AT);
    }

    #[test]
    fn the_wal_retained_is_that_of_the_oldest_restart_lsn_over_the_slots() {
        let mut server = Server::at_rest(Role::Primary, AT);
        server
            .wal
            .commit_txn(730, 3 * WAL_SEGMENT_BYTES, 46, 1, CommitMode::Sync);
        let place = server.create_slot(IDLE_RUNNING_XACTS_BYTES).unwrap();
        let other = server.other_slots[place].unwrap();
        assert!(other.restart_lsn > AT);
        // The connector's slot is the older: it holds the WAL for both.
        assert_eq!(server.required_lsn(), AT);
        server
            .slot_advance(server.wal.flush, RestartLanding::Furthest)
            .unwrap();
        assert_eq!(server.required_lsn(), other.restart_lsn);
        let redo = server.wal.flush;
        assert_eq!(
            server.oldest_kept_segment(redo),
            segment_of(other.restart_lsn)
        );
        // Dropped, the other slot no longer holds anything back.
        assert!(server.drop_slot(place));
        assert!(!server.drop_slot(place));
        assert_eq!(server.required_lsn(), server.slot.restart_lsn);
    }

    #[test]
    fn slots_are_created_into_free_places_until_none_is_left() {
        let mut server = Server::at_rest(Role::Primary, AT);
        let places: Vec<_> = (0..=OTHER_SLOTS_MAX)
            .map(|_| server.create_slot(IDLE_RUNNING_XACTS_BYTES))
            .collect();
        assert_eq!(places, [Some(0), Some(1), Some(2), None]);
        server.drop_slot(1);
        assert_eq!(server.create_slot(IDLE_RUNNING_XACTS_BYTES), Some(1));
    }

    #[test]
    fn a_crash_returns_every_slot_to_its_saved_copy_and_retention_with_them() {
        let mut server = Server::at_rest(Role::Primary, AT);
        let place = server.create_slot(IDLE_RUNNING_XACTS_BYTES).unwrap();
        let created = server.other_slots[place].unwrap();
        server.wal.commit_txn(730, 200, 46, 1, CommitMode::Sync);
        let flush = server.wal.flush;
        let other = server.other_slots[place].as_mut().unwrap();
        other.slot_advance(flush, flush, None).unwrap();
        server.slot.slot_advance(flush, flush, None).unwrap();
        assert_eq!(server.required_lsn(), AT);
        server.crash_restart();
        assert_eq!(server.other_slots[place], Some(created));
        assert_eq!(server.slot, Slot::at_rest(AT));
        assert_eq!(server.required_lsn(), AT);
    }

    #[test]
    fn a_synchronous_commit_waits_for_its_flush_and_an_asynchronous_one_does_not() {
        let (page, buffers) = (8192, 4 * 8192);
        let mut server = Server::at_rest(Role::Primary, AT);
        server.insert_commit(page, CommitMode::Sync, page, buffers);
        assert!(server.commit_pending);
        assert!(server.wal.flush < server.wal.insert);
        server.commit_flush();
        assert!(!server.commit_pending);
        assert_eq!(server.wal.flush, server.wal.insert);
        server.insert_commit(page, CommitMode::Async, page, buffers);
        assert!(!server.commit_pending);
        assert!(server.wal.flush < server.wal.insert);
    }

    #[test]
    fn a_checkpoint_has_work_while_wal_is_unflushed_or_a_slot_unsaved() {
        let mut server = Server::at_rest(Role::Primary, AT);
        assert!(!server.checkpoint_has_work());
        server.insert_commit(8192, CommitMode::Async, 8192, 4 * 8192);
        assert!(server.checkpoint_has_work());
        server.checkpoint();
        assert!(!server.checkpoint_has_work());
        // An advance that moved restart_lsn saved the slot itself; one that did not left work.
        server
            .slot_advance(server.wal.flush, RestartLanding::Stays)
            .unwrap();
        assert!(server.checkpoint_has_work());
        server.checkpoint();
        assert!(!server.checkpoint_has_work());
        // A standby's restartpoint flushes nothing: only an unsaved slot is work.
        let mut standby = Server::at_rest(Role::Standby, AT);
        standby.insert_commit(8192, CommitMode::Async, 8192, 4 * 8192);
        assert!(!standby.checkpoint_has_work());
    }

    #[test]
    fn replay_lsn_is_null_on_a_primary_until_a_crash_and_then_frozen() {
        let mut primary = Server::at_rest(Role::Primary, AT);
        assert_eq!(primary.last_wal_replay_lsn(), None);
        primary.wal.commit_txn(730, 200, 46, 1, CommitMode::Sync);
        let end_of_recovery = primary.wal.write;
        primary.crash_restart();
        assert_eq!(primary.last_wal_replay_lsn(), Some(end_of_recovery));
        primary.wal.commit_txn(731, 200, 46, 1, CommitMode::Sync);
        assert_eq!(primary.last_wal_replay_lsn(), Some(end_of_recovery));
        primary.wal.clean_restart();
        assert_eq!(primary.last_wal_replay_lsn(), None);
        // A standby answers its replay pointer.
        let standby = Server::at_rest(Role::Standby, AT);
        assert_eq!(standby.last_wal_replay_lsn(), Some(AT));
    }

    #[test]
    fn a_checkpoint_saves_every_slot() {
        let mut server = Server::at_rest(Role::Primary, AT);
        let place = server.create_slot(IDLE_RUNNING_XACTS_BYTES).unwrap();
        server.wal.commit_txn(730, 200, 46, 1, CommitMode::Sync);
        let flush = server.wal.flush;
        let other = server.other_slots[place].as_mut().unwrap();
        other.slot_advance(flush, flush, None).unwrap();
        server.checkpoint();
        server.crash_restart();
        assert_eq!(server.other_slots[place].unwrap().confirmed_flush, flush);
    }
}
