//! System `olake-bootstrap`: its properties, each declared once with its predicate, and the fairness its liveness checks assume.

use super::*;
use walcheck_model::olake::{AdvanceCall, Phase};
use walcheck_model::pg::Role;
use walcheck_properties::cdc;
use walcheck_properties::system::{FairClass, PropertyInfo};

walcheck_properties::checks! { OlakeBootstrapSystem:
    /// The properties in the order the model checks them, each declared once.
    CHECKS => PROPERTIES [
        STATE_MATCHES_SLOT = PropertyInfo::always("state-matches-slot", "once the state file is seeded and the connector is past PreCDC's bootstrap, it equals the slot's confirmed_flush")
            .when(|_, s| state_matches_slot(s));
        NO_LSN_MISMATCH = PropertyInfo::always("no-lsn-mismatch", "validateGlobalState never fails")
            .when(|_, s| no_lsn_mismatch(s));
        WAL_POINTERS_ORDERED = cdc::WAL_POINTERS_ORDERED
            .when(|_, s| wal_pointers_ordered(s));
        SLOT_POINTERS_ORDERED = PropertyInfo::always("slot-pointers-ordered", "restart_lsn <= confirmed_flush <= the advance limit; saved <= in memory")
            .when(|_, s| slot_pointers_ordered(s));
        /// Its goal; [`OlakeBootstrapSystem`]'s `liveness` gives its trigger.
        BOOTSTRAP_EVENTUALLY_COMPLETES = PropertyInfo::eventually("bootstrap-eventually-completes", "always (a run is in PreCDC's bootstrap implies eventually it is not): the bootstrap returns, seeded or with its error, instead of retrying forever")
            .also_with("fairness", "none")
            .when(|_, s| !in_bootstrap(s));
        REACH_WRITE_AHEAD_AT_READ = PropertyInfo::sometimes("reach-write-ahead-at-read", "the bootstrap's target W0 (the write pointer) is ahead of the flush pointer")
            .needs("server=primary")
            .when(|_, s| write_ahead_at_read(s));
        REACH_ADVANCE_CLAMPED = PropertyInfo::sometimes("reach-advance-clamped", "an advance returns end_lsn below its target")
            .needs("server=primary")
            .when(|_, s| advance_clamped(s));
        REACH_BOOTSTRAP_COMPLETE = PropertyInfo::sometimes("reach-bootstrap-complete", "a run bootstraps (or resumes) and passes validateGlobalState")
            .when(|_, s| bootstrap_complete(s));
        REACH_CONNECTOR_CRASH = PropertyInfo::sometimes("reach-connector-crash", "the connector crashes mid-run")
            .needs("fault:connector-crash")
            .when(|_, s: &State| s.connector.phase == Phase::Crashed);
        REACH_PG_CRASH_AFTER_ADVANCE = PropertyInfo::sometimes("reach-pg-crash-after-advance", "a PostgreSQL crash takes the slot back below an end_lsn the connector was given")
            .needs("fault:pg-crash")
            .when(|_, s| pg_crash_lost_advance(s));
        REACH_STANDBY_BOOTSTRAP = PropertyInfo::sometimes("reach-standby-bootstrap", "a bootstrap on a standby passes validateGlobalState")
            .needs("server=standby")
            .when(|m, s| m.config.server == Role::Standby && bootstrap_complete(s));
    ]
}

/// The fairness the `olake-bootstrap` liveness checks assume, each weak (`WF`): an action of the
/// class that stays enabled is eventually taken.
/// - `walwriter`: PostgreSQL 15 `walwriter.c:WalWriterMain` wakes at least every
///   `wal_writer_delay` (200 ms) and `xlog.c:XLogBackgroundFlush` writes and flushes what is
///   unflushed; a server that is up does not skip it forever.
/// - `commit-flush`: a backend waiting in `xlog.c:XLogFlush` for its synchronous commit returns
///   once its fsync does.
/// - `checkpointer`: `checkpointer.c` runs a checkpoint at least every `checkpoint_timeout`.
/// - `startup-replay`: a standby's startup process replays what it has received.
/// - `connector`: a running sync keeps taking its own steps (OLake `cdc.go:PreCDC`, `AdvanceLSN`'s
///   100 ms retries and 30 s deadline, `StreamChanges`).
///
/// Not fair: client statements, the next sync and restarts (scheduled by people), and the faults.
pub const FAIRNESS: &[FairClass<Action>] = &[
    FairClass::weak("walwriter", |a| {
        matches!(a, Action::WalWriterWrite | Action::WalWriterFlush)
    }),
    FairClass::weak("commit-flush", |a| matches!(a, Action::CommitFlush)),
    FairClass::weak("checkpointer", |a| matches!(a, Action::Checkpoint)),
    FairClass::weak("startup-replay", |a| matches!(a, Action::Replay)),
    FairClass::weak("connector", |a| {
        use Action::*;
        matches!(
            a,
            ReadSlot | SeedState | Advance { .. } | AdvanceGiveUp | Validate
        )
    }),
];

/// Whether a run is inside PreCDC's bootstrap (OLake `cdc.go:PreCDC` with no global state): read
/// W0, and still to seed the state or to advance (#1084: until `end_lsn` reaches W0).
pub fn in_bootstrap(state: &State) -> bool {
    matches!(state.connector.phase, Phase::Bootstrap { .. })
}

/// `state-matches-slot`: once the state file holds an LSN and the connector is not inside PreCDC's
/// bootstrap (so it will trust the file: a restarted run skips the bootstrap), the file equals the
/// slot's `confirmed_flush`.
pub fn state_matches_slot(state: &State) -> bool {
    match state.state_file {
        Some(lsn) if !matches!(state.connector.phase, Phase::Bootstrap { .. }) => {
            lsn == state.server.slot.confirmed_flush
        }
        _ => true,
    }
}

/// `no-lsn-mismatch`: `validateGlobalState` has not failed.
pub fn no_lsn_mismatch(state: &State) -> bool {
    !matches!(
        state.connector.phase,
        Phase::Failed(walcheck_model::olake::Failure::LsnMismatch { .. })
    )
}

/// `wal-pointers-ordered` ([`cdc::wal_pointers_ordered`]) on the server's WAL.
pub fn wal_pointers_ordered(state: &State) -> bool {
    cdc::wal_pointers_ordered(&state.server.wal, state.server.role)
}

/// `slot-pointers-ordered`: `restart_lsn` ≤ `confirmed_flush` ≤ the advance limit, in memory and
/// as saved, and the saved copy no later than memory.
pub fn slot_pointers_ordered(state: &State) -> bool {
    let server = &state.server;
    server.slot.is_ordered() && server.slot.confirmed_flush <= server.advance_limit()
}

/// Witness: the bootstrap's target W0 is ahead of the flush pointer.
pub fn write_ahead_at_read(state: &State) -> bool {
    matches!(state.connector.phase, Phase::Bootstrap { w0, .. } if w0 > state.server.wal.flush)
}

/// Witness: the last advance stopped short of its target.
pub fn advance_clamped(state: &State) -> bool {
    matches!(state.connector.last_advance, Some(AdvanceCall { target, end_lsn }) if end_lsn < target)
}

/// Witness: a run passed `validateGlobalState`.
pub fn bootstrap_complete(state: &State) -> bool {
    state.connector.phase == Phase::Validated
}

/// Witness: the slot is below an `end_lsn` this run was given: a PostgreSQL crash took back an
/// advance that was only in memory.
pub fn pg_crash_lost_advance(state: &State) -> bool {
    matches!(state.connector.last_advance, Some(call) if call.end_lsn > state.server.slot.confirmed_flush)
}
