//! System `olake-bootstrap`: its state, actions and transitions.

use super::*;
use serde::{Deserialize, Serialize};
use walcheck_model::olake::{BootStep, Connector, Phase};
use walcheck_model::pg::{CommitMode, RestartLanding, Role, Server, Wal};
use walcheck_model::Lsn;

/// Where the quiet cluster's WAL and the slot start: `0/1000000`, page-aligned.
pub const INITIAL_LSN: Lsn = Lsn(0x100_0000);

/// A state of the system. Its `Debug` is its `Variables`, one `name: value` a line, as
/// stateright's Explorer shows it.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    pub server: Server,
    /// The connector's state file: `global.state.lsn`, or none before the first bootstrap.
    pub state_file: Option<Lsn>,
    pub connector: Connector,
    /// Client statements run so far.
    pub statements: u8,
    /// Faults injected so far.
    pub crashes: u8,
}

/// An action of the system. Each is one atomic step of PostgreSQL, the workload or the connector.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    /// A client statement inserts `pages` WAL pages and commits with `commit`
    /// ([`walcheck_model::pg::Wal::append`]; buffer-pressure writes happen inside it).
    Append { pages: u64, commit: CommitMode },
    /// The pending synchronous commit flushes through its record ([`walcheck_model::pg::Wal::commit_flush`]).
    CommitFlush,
    /// Driven workload only: the running statement inserts `bytes` of WAL, a chunk of its rows
    /// ([`walcheck_model::pg::Wal::append`]; buffer-pressure writes happen inside it).
    ///
    /// PostgreSQL 15 `heapam.c:heap_insert` logs each row with `xloginsert.c:XLogInsert`;
    /// `xlog.c:XLogInsertRecord` copies it into `wal_buffers` as the statement runs, and
    /// `AdvanceXLInsertBuffer` writes out (without flushing) the buffer a new page needs.
    InsertWal { bytes: u64 },
    /// Driven workload only: the running statement inserts its commit record of `bytes` and
    /// commits with `commit`; a synchronous commit then waits for [`Action::CommitFlush`].
    ///
    /// PostgreSQL 15 `xact.c:RecordTransactionCommit`: `XactLogCommitRecord`, then
    /// `XLogFlush(XactLastRecEnd)` under `synchronous_commit = on`, or
    /// `XLogSetAsyncXactLSN(XactLastRecEnd)` (no flush; the walwriter's job) when it is off.
    Commit { bytes: u64, commit: CommitMode },
    /// The walwriter writes without flushing: completed pages, or once they are flushed the last
    /// asynchronous commit's partial page ([`walcheck_model::pg::Wal::walwriter_write_pages`]).
    WalWriterWrite,
    /// The walwriter writes and flushes, through the last whole page when one is past the flush
    /// pointer ([`walcheck_model::pg::Wal::walwriter_flush_pages`]).
    WalWriterFlush,
    /// `CHECKPOINT` ([`Server::checkpoint`]).
    Checkpoint,
    /// The standby replays what the primary flushed ([`walcheck_model::pg::Wal::replay_to_flush`]).
    Replay,
    /// PreCDC's `GetSlotPosition` ([`Connector::read_slot`]).
    ReadSlot,
    /// The state file gets W0 ([`Connector::seed_state`]).
    SeedState,
    /// `pg_replication_slot_advance(slot, W0)`; `restart_moves` is PostgreSQL's choice of whether
    /// `restart_lsn` moves (and the slot is saved), past the old `confirmed_flush` when it can
    /// ([`Connector::advance`], [`RestartLanding::Furthest`]).
    Advance { restart_moves: bool },
    /// The same advance with `restart_lsn` moved to a running-xacts record at or below the old
    /// `confirmed_flush`, which it lagged behind: the slot is saved with the *old*
    /// `confirmed_flush` ([`RestartLanding::Nearest`]; offered when the other landing exists too).
    AdvanceSavesOld,
    /// PR #1084 gives up after its 30 s deadline ([`Connector::give_up_advance`]).
    AdvanceGiveUp,
    /// `StreamChanges`' `validateGlobalState` ([`Connector::validate`]).
    Validate,
    /// The next sync starts after a finished or failed run ([`Connector::start_next_run`]).
    NextSync,
    /// Fault: the connector process dies ([`Connector::crash`]).
    ConnectorCrash,
    /// Fault: PostgreSQL crashes and restarts ([`Server::crash_restart`]).
    PgCrash,
    /// The crashed connector is restarted ([`Connector::start_next_run`]).
    Restart,
}

impl Action {
    /// Where an advance action leaves `restart_lsn` ([`Server::slot_advance`]).
    fn landing(self) -> RestartLanding {
        match self {
            Action::Advance {
                restart_moves: true,
            } => RestartLanding::Furthest,
            Action::AdvanceSavesOld => RestartLanding::Nearest,
            _ => RestartLanding::Stays,
        }
    }
}

/// The advances PostgreSQL may answer a `pg_replication_slot_advance(slot, w0)` with: `restart_lsn`
/// stays, or moves to each landing of [`walcheck_model::pg::Slot::advance_restarts`].
fn push_advances(actions: &mut Vec<Action>, server: &Server, w0: Lsn) {
    actions.push(Action::Advance {
        restart_moves: false,
    });
    let landings = server.slot.advance_restarts(w0, server.advance_limit());
    if !landings.is_empty() {
        actions.push(Action::Advance {
            restart_moves: true,
        });
    }
    if landings.len() > 1 {
        actions.push(Action::AdvanceSavesOld);
    }
}

/// The transitions of a configuration: its initial state, its enabled actions and what each
/// does.
impl Config {
    /// The initial state: a quiet cluster with the slot at rest at [`INITIAL_LSN`]
    /// ([`Server::at_rest`]), no state
    /// file, the connector about to run its first sync.
    pub fn initial_state(&self) -> State {
        State {
            server: Server::at_rest(self.server, INITIAL_LSN),
            state_file: None,
            connector: Connector::first_run(),
            statements: 0,
            crashes: 0,
        }
    }

    /// Applies `action` to `state`; the same transition the checker, the simulator and the tests
    /// use. The caller must only apply enabled actions ([`Config::enabled`]).
    pub fn apply(&self, state: &mut State, action: Action) {
        match action {
            Action::Append { pages, commit } => {
                state.server.insert_commit(
                    pages * self.page_bytes,
                    commit,
                    self.page_bytes,
                    self.wal_buffers_bytes(),
                );
                state.statements += 1;
            }
            Action::CommitFlush => state.server.commit_flush(),
            Action::InsertWal { bytes } => {
                state
                    .server
                    .wal
                    .append(bytes, self.page_bytes, self.wal_buffers_bytes());
            }
            Action::Commit { bytes, commit } => {
                state.server.insert_commit(
                    bytes,
                    commit,
                    self.page_bytes,
                    self.wal_buffers_bytes(),
                );
            }
            Action::WalWriterWrite => {
                state.server.wal.walwriter_write_pages(self.page_bytes);
            }
            Action::WalWriterFlush => {
                state.server.wal.walwriter_flush_pages(self.page_bytes);
            }
            Action::Checkpoint => state.server.checkpoint(),
            Action::Replay => {
                state.server.wal.replay_to_flush();
            }
            Action::ReadSlot => {
                state
                    .connector
                    .read_slot(self.variant, &state.server, state.state_file)
            }
            Action::SeedState => state
                .connector
                .seed_state(self.variant, &mut state.state_file),
            Action::Advance { .. } | Action::AdvanceSavesOld => {
                let landing = action.landing();
                state
                    .connector
                    .advance(self.variant, &mut state.server, landing)
            }
            Action::AdvanceGiveUp => state.connector.give_up_advance(),
            Action::Validate => state.connector.validate(&state.server, state.state_file),
            Action::NextSync | Action::Restart => state.connector.start_next_run(),
            Action::ConnectorCrash => {
                state.connector.crash();
                state.crashes += 1;
            }
            Action::PgCrash => {
                state.server.crash_restart();
                state.connector.server_crashed();
                state.crashes += 1;
            }
        }
    }

    /// The enabled actions in `state`, in a fixed order (stateright rebuilds paths from indices).
    pub fn enabled(&self, state: &State, actions: &mut Vec<Action>) {
        let server = &state.server;
        let wal = &server.wal;
        match self.driven {
            None if state.statements < self.statements && !server.commit_pending => {
                let mut sizes = vec![self.stmt_pages_small, self.stmt_pages_bulk];
                sizes.dedup();
                for pages in sizes {
                    for commit in [CommitMode::Sync, CommitMode::Async] {
                        actions.push(Action::Append { pages, commit });
                    }
                }
            }
            // One backend: while its synchronous commit waits in XLogFlush it inserts nothing.
            Some(driven) if !server.commit_pending => {
                actions.extend(
                    driven
                        .insert_sizes()
                        .map(|bytes| Action::InsertWal { bytes }),
                );
                actions.push(Action::Commit {
                    bytes: driven.commit_record_bytes,
                    commit: driven.commit,
                });
            }
            None | Some(_) => {}
        }
        if server.commit_pending {
            actions.push(Action::CommitFlush);
        }
        // PostgreSQL's own steps are offered when they would change something: each function
        // says whether it did, here on a copy of the pointers.
        let moves = |step: &dyn Fn(&mut Wal) -> bool| step(&mut { *wal });
        if moves(&|w| w.walwriter_write_pages(self.page_bytes)) {
            actions.push(Action::WalWriterWrite);
        }
        if moves(&|w| w.walwriter_flush_pages(self.page_bytes)) {
            actions.push(Action::WalWriterFlush);
        }
        if server.checkpoint_has_work() {
            actions.push(Action::Checkpoint);
        }
        if self.server == Role::Standby && moves(&Wal::replay_to_flush) {
            actions.push(Action::Replay);
        }
        let connector = &state.connector;
        let runs_left = connector.runs < self.syncs;
        match connector.phase {
            Phase::PreCdc => actions.push(Action::ReadSlot),
            Phase::Bootstrap {
                next: BootStep::SeedState,
                ..
            } => actions.push(Action::SeedState),
            Phase::Bootstrap {
                next: next @ (BootStep::Advance | BootStep::RetryAdvance),
                w0,
            } => {
                push_advances(actions, server, w0);
                if next == BootStep::RetryAdvance {
                    actions.push(Action::AdvanceGiveUp);
                }
            }
            Phase::StreamChanges => actions.push(Action::Validate),
            Phase::Validated | Phase::Failed(_) if runs_left => actions.push(Action::NextSync),
            Phase::Crashed if runs_left => actions.push(Action::Restart),
            Phase::Validated | Phase::Failed(_) | Phase::Crashed => {}
        }
        let crashes = [Action::ConnectorCrash, Action::PgCrash];
        let (crash_left, running) = (state.crashes < self.crashes, connector.phase.is_running());
        self.faults
            .offer_crashes(crash_left, running, crashes, actions);
    }
}
