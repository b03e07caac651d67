//! One PostgreSQL server as a connector sees it: its role, its WAL pointers, one logical slot.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::slot::{AdvanceError, Slot};
use super::wal::Wal;
use crate::Lsn;

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

/// The server: its role, its WAL pointers, the connector's logical slot, and a backend whose
/// synchronous commit has not flushed yet.
///
/// On a standby, `wal.insert/write/flush` are the primary's pointers (the standby receives what
/// the primary flushed) and `wal.replay` is the standby's own. On a primary `wal.replay` is
/// `0/0`: `pg_last_wal_replay_lsn()` is NULL there.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Server {
    pub role: Role,
    pub wal: Wal,
    pub slot: Slot,
    /// A synchronous commit has inserted its record and waits in `XLogFlush`.
    pub commit_pending: bool,
}

impl Server {
    /// A quiet server whose slot was created at `at`, with every WAL pointer there too.
    pub const fn quiet_at(role: Role, at: Lsn) -> Server {
        let mut wal = Wal::at(at);
        if let Role::Primary = role {
            wal.replay = Lsn::INVALID;
        }
        Server {
            role,
            wal,
            slot: Slot::created_at(at),
            commit_pending: false,
        }
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

    /// `pg_replication_slot_advance(slot, target)`; returns `end_lsn`. See [`Slot::slot_advance`].
    pub fn slot_advance(&mut self, target: Lsn, restart_moves: bool) -> Result<Lsn, AdvanceError> {
        let limit = self.advance_limit();
        self.slot.slot_advance(target, limit, restart_moves)
    }

    /// `CHECKPOINT` (or a restartpoint on a standby): saves the slot; on a primary the checkpoint
    /// record's flush also flushes all WAL inserted before it.
    ///
    /// PostgreSQL 15 `xlog.c:CreateCheckPoint` → `CheckPointGuts` → `slot.c:CheckPointReplicationSlots`,
    /// then `XLogFlush` of the checkpoint record. On a standby `xlog.c:CreateRestartPoint` saves
    /// slots the same way and writes no WAL, but only once a checkpoint record of the primary has
    /// been replayed since the last restartpoint; the primary checkpoints on its own schedule
    /// (`checkpoint_timeout`), which the model does not track, so it lets a restartpoint happen
    /// at any step.
    pub fn checkpoint(&mut self) {
        self.slot.save();
        if self.role == Role::Primary {
            self.wal.checkpoint_flush();
            self.commit_pending = false;
        }
    }

    /// Immediate shutdown and restart of the server the connector talks to (not an
    /// operating-system crash): written WAL survives and is flushed by recovery, the slot returns
    /// to its saved copy, every session dies (a waiting synchronous commit with it).
    ///
    /// PostgreSQL 15 `xlog.c:StartupXLOG` and `slot.c:StartupReplicationSlots`. On a standby the
    /// primary's WAL is untouched and replay resumes where it was: the model does not show the
    /// replay pointer re-passing the redo point during the standby's own recovery.
    pub fn crash_restart(&mut self) {
        if self.role == Role::Primary {
            self.wal.crash_restart();
        }
        self.slot.restore_saved();
        self.commit_pending = false;
    }
}
