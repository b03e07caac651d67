//! The OLake PostgreSQL connector's first-sync bootstrap and the validation that follows it.
//!
//! Modelled from OLake's `drivers/postgres/internal/cdc.go` (`PreCDC`, `StreamChanges`,
//! `validateGlobalState`) and `pkg/waljs/replicator.go` (`GetSlotPosition`, `AdvanceLSN`):
//! - master `2b1f68a9` (v0.9.4): PreCDC reads the slot and `current_lsn` W0 in one query, writes the
//!   state file with W0 (`SetGlobal`, then `ResetStreams`), then `AdvanceLSN(W0)`, which runs the
//!   advance with `ExecContext` and discards its `end_lsn`.
//! - PR #854 `8ad23875` (never merged): the advance first, then the state file; `end_lsn` still
//!   discarded. It predates #1070, so it reads `pg_current_wal_lsn()` even on a standby.
//! - PR #1084 `08e917b4` (branch `fix-postgres-bootstrap-lsn-clamp`): `AdvanceLSN` reads `end_lsn`
//!   and re-sends the same target every 100 ms until `end_lsn ≥ W0`, giving up after 30 s with a
//!   retryable error; the state file is written only after the slot confirmed W0.
//!
//! In the same run, after the backfill, `StreamChanges` reads the slot again and
//! `validateGlobalState` demands `state == confirmed_flush_lsn` exactly; a difference is
//! non-retryable and every later sync fails the same way. What the sync does after validation
//! (streaming, PostCDC's acknowledgement) is the `olake-sync` system's, not this one's: a validated
//! run ends here.
//!
//! The two state-file writes `SetGlobal` and `ResetStreams` are one step: the first already holds
//! the LSN, and on a first sync there are no stream states for the second to reset.

pub mod sync;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::pg::{AdvanceError, RestartLanding, Server, WalFunctionError};
use crate::Lsn;

/// Which OLake code is modelled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Variant {
    /// OLake master `2b1f68a9` (v0.9.4): state written before the advance, `end_lsn` discarded.
    Master,
    /// OLake PR #854 `8ad23875`: advance first, then the state; `end_lsn` still discarded.
    Pr854,
    /// OLake PR #1084 `08e917b4`: advance until the slot confirms the target, then seed the state.
    Pr1084,
}

impl Variant {
    /// Every variant, in catalogue order.
    pub const ALL: [Variant; 3] = [Variant::Master, Variant::Pr854, Variant::Pr1084];

    /// The name used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Master => "master",
            Variant::Pr854 => "pr854",
            Variant::Pr1084 => "pr1084",
        }
    }

    /// The variant called `name`, if any.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Whether `current_lsn` is `pg_last_wal_replay_lsn()` during recovery (OLake #1070,
    /// `f8f7cf11`, in v0.9.1 and later); before it, `pg_current_wal_lsn()` fails on a standby.
    pub const fn reads_replay_on_standby(self) -> bool {
        !matches!(self, Variant::Pr854)
    }

    /// PreCDC's first bootstrap step after reading the slot.
    const fn first_bootstrap_step(self) -> BootStep {
        match self {
            Variant::Master => BootStep::SeedState,
            Variant::Pr854 | Variant::Pr1084 => BootStep::Advance,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What made a connector run fail. `Display` gives the error text OLake logs; for the mismatch it
/// is `validateGlobalState`'s own message, which OLake logs wrapped as `failed with non retryable
/// error: invalid global state: failed with non retryable error: lsn mismatch, …`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Failure {
    /// `validateGlobalState`: the state file and the slot's `confirmed_flush_lsn` differ.
    /// Non-retryable: the sync, and every later one, fails until the destination is cleared.
    LsnMismatch { state: Lsn, current: Lsn },
    /// `GetSlotPosition` failed (on a standby before #1070: `pg_current_wal_lsn()` during recovery).
    SlotPosition(WalFunctionError),
    /// `pg_replication_slot_advance` raised an error.
    Advance(AdvanceError),
    /// PR #1084's `AdvanceLSN` gave up: the slot stopped short of the target for 30 s. Retryable;
    /// no state was written, so the next sync bootstraps again.
    AdvanceTimeout { end_lsn: Lsn, target: Lsn },
    /// PostgreSQL crashed and restarted under the run: its session, and the call in flight, died.
    ServerCrashed,
}

impl Failure {
    /// Whether OLake's `RetryOnBackoff` may retry (the text does not carry `ErrNonRetryable`).
    pub const fn is_retryable(self) -> bool {
        !matches!(self, Failure::LsnMismatch { .. })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::LsnMismatch { state, current } => write!(
                f,
                "lsn mismatch, please proceed with clear destination. lsn saved in state [{state}] current lsn [{current}]"
            ),
            Failure::SlotPosition(err) => write!(f, "failed to get slot position: {err}"),
            Failure::Advance(err) => write!(f, "failed to advance replication slot: {err}"),
            Failure::AdvanceTimeout { end_lsn, target } => write!(
                f,
                "slot advance stopped at {end_lsn} and could not reach target {target}: context deadline exceeded"
            ),
            Failure::ServerCrashed => f.write_str("server closed the connection unexpectedly"),
        }
    }
}

/// The next step of PreCDC's bootstrap.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum BootStep {
    /// Write W0 to the state file (`SetGlobal`, `ResetStreams`).
    SeedState,
    /// Call `pg_replication_slot_advance(slot, W0)`.
    Advance,
    /// PR #1084 only: the last advance stopped short; advance again after 100 ms, or give up.
    RetryAdvance,
}

/// Where the connector's current run is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// PreCDC's `GetSlotPosition` is next.
    PreCdc,
    /// PreCDC is bootstrapping (the state file had no global state); `w0` is the `current_lsn`
    /// it read, the target of its advance and the LSN it seeds the state with.
    Bootstrap { next: BootStep, w0: Lsn },
    /// PreCDC is over; `StreamChanges`' `GetSlotPosition` and `validateGlobalState` are next.
    StreamChanges,
    /// The run validated the state and goes on streaming (outside this system).
    Validated,
    /// The run failed.
    Failed(Failure),
    /// The connector process died (a fault); the state file is as it was left.
    Crashed,
}

impl Phase {
    /// Whether a run is in progress (neither finished nor crashed).
    pub const fn is_running(self) -> bool {
        matches!(
            self,
            Phase::PreCdc | Phase::Bootstrap { .. } | Phase::StreamChanges
        )
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::PreCdc => f.write_str("PreCDC"),
            Phase::Bootstrap { next, w0 } => {
                let next = match next {
                    BootStep::SeedState => "seed state",
                    BootStep::Advance => "advance",
                    BootStep::RetryAdvance => "retry advance",
                };
                write!(f, "bootstrap W0={w0}, {next} next")
            }
            Phase::StreamChanges => f.write_str("StreamChanges"),
            Phase::Validated => f.write_str("validated"),
            Phase::Failed(failure) if failure.is_retryable() => write!(f, "failed: {failure}"),
            Phase::Failed(failure) => write!(f, "failed, non-retryable: {failure}"),
            Phase::Crashed => f.write_str("crashed"),
        }
    }
}

/// One `pg_replication_slot_advance` call as the server answered it, whether or not the variant
/// reads the answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AdvanceCall {
    pub target: Lsn,
    pub end_lsn: Lsn,
}

/// The connector process: its run's phase, how many runs it has started, and the answer to its
/// last advance in this run. The state file is not here: it outlives the process.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Connector {
    pub phase: Phase,
    /// Runs started so far, the current one included.
    pub runs: u8,
    pub last_advance: Option<AdvanceCall>,
}

impl Connector {
    /// The first sync, about to start PreCDC.
    pub const fn first_run() -> Connector {
        Connector {
            phase: Phase::PreCdc,
            runs: 1,
            last_advance: None,
        }
    }

    /// PreCDC's `GetSlotPosition`: one query reads `confirmed_flush_lsn` and `current_lsn`; with no
    /// global state in the state file the bootstrap begins with W0 = `current_lsn`.
    ///
    /// OLake `pkg/waljs/replicator.go:ReplicationSlotTempl` and `cdc.go:PreCDC`; `current_lsn` is
    /// `pg_current_wal_lsn()` (the write pointer) on a primary and, from #1070 on,
    /// `pg_last_wal_replay_lsn()` on a standby.
    pub fn read_slot(&mut self, variant: Variant, server: &Server, state_file: Option<Lsn>) {
        debug_assert_eq!(self.phase, Phase::PreCdc);
        let current_lsn = if variant.reads_replay_on_standby() {
            Ok(server.current_or_replay_lsn())
        } else {
            server.current_wal_lsn()
        };
        self.phase = match (current_lsn, state_file) {
            (Err(err), _) => Phase::Failed(Failure::SlotPosition(err)),
            (Ok(_), Some(_)) => Phase::StreamChanges,
            (Ok(w0), None) => Phase::Bootstrap {
                next: variant.first_bootstrap_step(),
                w0,
            },
        };
    }

    /// Writes W0 to the state file (`SetGlobal({lsn: W0})` and `ResetStreams()`).
    ///
    /// OLake `types/state.go:LogState`: truncates and rewrites the file, no fsync; master writes it
    /// before the advance, #854 and #1084 after.
    pub fn seed_state(&mut self, variant: Variant, state_file: &mut Option<Lsn>) {
        let Phase::Bootstrap {
            next: BootStep::SeedState,
            w0,
        } = self.phase
        else {
            unreachable!("seed_state outside its step: {:?}", self.phase)
        };
        *state_file = Some(w0);
        self.phase = match variant {
            Variant::Master => Phase::Bootstrap {
                next: BootStep::Advance,
                w0,
            },
            Variant::Pr854 | Variant::Pr1084 => Phase::StreamChanges,
        };
    }

    /// `AdvanceLSN(W0)`: `SELECT * FROM pg_replication_slot_advance(slot, W0)`.
    ///
    /// OLake `pkg/waljs/replicator.go:AdvanceLSN` (the SQL is `waljs.go:AdvanceLSNTemplate`): master and #854 run it with `ExecContext` and drop
    /// the returned `end_lsn`; #1084 scans `end_lsn` and is done only when `end_lsn ≥ W0`.
    pub fn advance(&mut self, variant: Variant, server: &mut Server, landing: RestartLanding) {
        let Phase::Bootstrap {
            next: BootStep::Advance | BootStep::RetryAdvance,
            w0,
        } = self.phase
        else {
            unreachable!("advance outside its step: {:?}", self.phase)
        };
        let end_lsn = match server.slot_advance(w0, landing) {
            Ok(end_lsn) => end_lsn,
            Err(err) => {
                self.phase = Phase::Failed(Failure::Advance(err));
                return;
            }
        };
        self.last_advance = Some(AdvanceCall {
            target: w0,
            end_lsn,
        });
        let next = match variant {
            Variant::Master => {
                self.phase = Phase::StreamChanges;
                return;
            }
            Variant::Pr854 => BootStep::SeedState,
            Variant::Pr1084 if end_lsn >= w0 => BootStep::SeedState,
            Variant::Pr1084 => BootStep::RetryAdvance,
        };
        self.phase = Phase::Bootstrap { next, w0 };
    }

    /// PR #1084's `AdvanceLSN` passes its 30 s deadline while the slot is still short: a
    /// retryable error, and no state written.
    pub fn give_up_advance(&mut self) {
        let (
            Phase::Bootstrap {
                next: BootStep::RetryAdvance,
                w0,
            },
            Some(call),
        ) = (self.phase, self.last_advance)
        else {
            unreachable!("give_up_advance outside its step: {:?}", self.phase)
        };
        self.phase = Phase::Failed(Failure::AdvanceTimeout {
            end_lsn: call.end_lsn,
            target: w0,
        });
    }

    /// `StreamChanges`: `GetSlotPosition`, then `validateGlobalState(state, confirmed_flush_lsn)`.
    ///
    /// OLake `cdc.go:validateGlobalState` demands `parsed == confirmedFlushLSN` exactly; a
    /// difference is `ErrNonRetryable` (`lsn mismatch, please proceed with clear destination…`).
    pub fn validate(&mut self, server: &Server, state_file: Option<Lsn>) {
        debug_assert_eq!(self.phase, Phase::StreamChanges);
        let state = state_file.expect("StreamChanges runs only with a seeded state file");
        let current = server.slot.confirmed_flush;
        self.phase = if state == current {
            Phase::Validated
        } else {
            Phase::Failed(Failure::LsnMismatch { state, current })
        };
    }

    /// The connector process dies between two of its steps (a fault: OOM kill, node loss).
    pub fn crash(&mut self) {
        debug_assert!(self.phase.is_running());
        self.phase = Phase::Crashed;
    }

    /// PostgreSQL crashed under a running sync: the session and the call in flight fail.
    pub fn server_crashed(&mut self) {
        if self.phase.is_running() {
            self.phase = Phase::Failed(Failure::ServerCrashed);
        }
    }

    /// The next sync (after a finished or failed one) or the restarted process (after a crash)
    /// starts a new run from the state file. OLake `drivers/abstract/cdc.go:RunChangeStream`.
    pub fn start_next_run(&mut self) {
        debug_assert!(!self.phase.is_running());
        *self = Connector {
            phase: Phase::PreCdc,
            runs: self.runs + 1,
            last_advance: None,
        };
    }
}
