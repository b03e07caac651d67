//! System `olake-sync`: its state, actions and transitions.

use super::*;
use crate::olake_bootstrap::INITIAL_LSN;
use serde::{Deserialize, Serialize};
use walcheck_model::olake::sync::{
    restart_candidates, Durable, PostStep, SyncConnector, SyncPhase,
};
use walcheck_model::pg::txn::COMMIT_RECORD_BYTES;
use walcheck_model::pg::{CommitMode, Role, Server};
use walcheck_model::Lsn;

/// A state of the system. Its `Debug` is its `Variables`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    pub server: Server,
    pub durable: Durable,
    pub connector: SyncConnector,
    /// Client transactions committed so far.
    pub txns: u8,
    /// Faults injected so far.
    pub crashes: u8,
}

/// An action of the system. Each is one atomic step of PostgreSQL, the workload or the connector.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    /// A client transaction changes the published table and commits synchronously
    /// ([`walcheck_model::pg::Wal::commit_txn`], laid out as [`Config::txn`]).
    CommitTxn,
    /// `StreamChanges` up to the loop ([`SyncConnector::validate`]).
    Validate,
    /// The walsender decodes transaction `txn` ([`SyncConnector::receive`] of [`Config::txn`]).
    Receive { txn: u8 },
    /// A primary keepalive carrying `sentPtr` ([`SyncConnector::keepalive`]).
    Keepalive,
    /// The stream loop reaches its target ([`SyncConnector::end_stream`]).
    EndStream,
    /// The destination commit ([`SyncConnector::commit`]).
    Commit,
    /// `AcknowledgeLSN` and its poll; `restart` is PostgreSQL's choice of candidate for
    /// `restart_lsn`, which saves the slot, or none ([`SyncConnector::ack`],
    /// [`restart_candidates`]).
    Ack { restart: Option<Lsn> },
    /// `SetGlobal` ([`SyncConnector::save_state`]).
    SaveState,
    /// The next sync starts after a finished or failed one ([`SyncConnector::start_next_run`]).
    NextSync,
    /// Fault: the connector process dies ([`SyncConnector::crash`]).
    ConnectorCrash,
    /// Fault: PostgreSQL crashes and restarts ([`Server::crash_restart`]).
    PgCrash,
    /// The crashed connector is restarted ([`SyncConnector::start_next_run`]).
    Restart,
}

/// The transitions of a configuration: its initial state, its enabled actions and what each
/// does.
impl Config {
    /// The initial state: a quiet primary with the slot at rest at [`INITIAL_LSN`]
    /// ([`Server::at_rest`]), the state file
    /// there too (the bootstrap is done), an empty destination, the first sync about to start.
    pub fn initial_state(&self) -> State {
        State {
            server: Server::at_rest(Role::Primary, INITIAL_LSN),
            durable: Durable {
                state_file: INITIAL_LSN,
                dest_meta: None,
                dest_lsn: INITIAL_LSN,
                dest_txns: 0,
                duplicates: 0,
            },
            connector: SyncConnector::first_run(),
            txns: 0,
            crashes: 0,
        }
    }

    /// Applies `action` to `state`. The caller must only apply enabled actions.
    pub fn apply(&self, state: &mut State, action: Action) {
        let variant = self.variant;
        match action {
            Action::CommitTxn => {
                let next = self.txn(state.txns);
                let txn = state.server.wal.commit_txn(
                    next.xid,
                    self.change_bytes(),
                    COMMIT_RECORD_BYTES,
                    next.published_rows,
                    CommitMode::Sync,
                );
                // Every commit is flushed, so a PostgreSQL restart loses none: the WAL holds
                // exactly the transactions of `Config::txn`.
                debug_assert_eq!(txn, next);
                state.txns += 1;
            }
            Action::Validate => state
                .connector
                .validate(variant, &state.server, &state.durable),
            Action::Receive { txn } => state.connector.receive(txn, &self.txn(txn)),
            Action::Keepalive => state.connector.keepalive(variant),
            Action::EndStream => state.connector.end_stream(false),
            Action::Commit => state.connector.commit(variant, &mut state.durable),
            Action::Ack { restart } => state.connector.ack(variant, &mut state.server, restart),
            Action::SaveState => state.connector.save_state(&mut state.durable),
            Action::NextSync | Action::Restart => state.connector.start_next_run(),
            Action::ConnectorCrash => {
                state.connector.crash(variant);
                state.crashes += 1;
            }
            Action::PgCrash => {
                state.server.crash_restart();
                state.connector.server_crashed();
                state.crashes += 1;
            }
        }
    }

    /// The transaction the walsender decodes next, the first committed one ending after what it
    /// has read (`read_to`), if any.
    fn next_txn(&self, read_to: Lsn, committed: u8) -> Option<u8> {
        (0..committed).find(|&i| self.txn(i).end_lsn > read_to)
    }

    /// The enabled actions in `state`, in a fixed order (stateright rebuilds paths from indices).
    pub fn enabled(&self, state: &State, actions: &mut Vec<Action>) {
        let server = &state.server;
        if state.txns < self.txns {
            actions.push(Action::CommitTxn);
        }
        let connector = &state.connector;
        let runs_left = connector.runs < self.syncs;
        match connector.phase {
            SyncPhase::Validate => actions.push(Action::Validate),
            // `pgoutput.go:StreamChanges` checks the exit before every receive: once
            // `ClientXLogPos >= CurrentWalPosition` the loop ends without reading on.
            SyncPhase::Streaming(s) if s.client_pos >= s.target => {
                actions.push(Action::EndStream);
            }
            SyncPhase::Streaming(s) => {
                if let Some(txn) = self.next_txn(s.walsender.read_to, state.txns) {
                    actions.push(Action::Receive { txn });
                }
                if self.keepalive && s.client_pos != s.walsender.keepalive(false).wal_end {
                    actions.push(Action::Keepalive);
                }
            }
            SyncPhase::Post { stream, .. } => match connector.next_post_step(self.variant) {
                Some(PostStep::Commit) => actions.push(Action::Commit),
                Some(PostStep::Ack) => {
                    actions.push(Action::Ack { restart: None });
                    let boundaries = (0..state.txns).map(|i| self.txn(i).end_lsn);
                    actions.extend(
                        restart_candidates(stream.client_pos, &server.slot, boundaries)
                            .map(|to| Action::Ack { restart: Some(to) }),
                    );
                }
                Some(PostStep::SaveState) => actions.push(Action::SaveState),
                None => unreachable!("PostCDC with every step done"),
            },
            SyncPhase::Done | SyncPhase::Failed(_) if runs_left => actions.push(Action::NextSync),
            SyncPhase::Crashed { .. } if runs_left => actions.push(Action::Restart),
            SyncPhase::Done | SyncPhase::Failed(_) | SyncPhase::Crashed { .. } => {}
        }
        let crashes = [Action::ConnectorCrash, Action::PgCrash];
        let (crash_left, running) = (state.crashes < self.crashes, connector.phase.is_running());
        self.faults
            .offer_crashes(crash_left, running, crashes, actions);
    }
}
