//! The OLake PostgreSQL connector's steady-state sync: `StreamChanges` (destination-metadata
//! recovery, `validateGlobalState`, the stream loop) and the three side effects that end every
//! sync — the destination commit, the slot acknowledgement, the state file write.
//!
//! Modelled from OLake's `drivers/postgres/internal/cdc.go` (`StreamChanges`, `PostCDC`),
//! `drivers/abstract/cdc.go:streamChanges` (PostCDC is deferred first and
//! `abstract.go:handleWriterCleanup` second, so the destination commit runs before PostCDC), and
//! `pkg/waljs/{pgoutput,replicator}.go` (the stream loop, keepalives, `AcknowledgeLSN`):
//! - v0.5.0 (tag `v0.5.0`, 2PC refactor `2c441ebc`): PostCDC writes the state file
//!   (`SetGlobal(ClientXLogPos)`) and then `AcknowledgeLSN`. Destination metadata that differs
//!   from the state (`mtState.LSN != state.LSN`) starts a recovery sync; validation always runs.
//! - master `2b1f68a9` (v0.9.4): PostCDC acknowledges first (#870, `d6057d3b`), then writes the
//!   state. Recovery only when the metadata is ahead (`parsedMetaLSN > parsedStateLSN`).
//!   Validation is skipped when no stream remains (#865, `5851bc2f`) or when `confirmed_flush`
//!   equals the recovery LSN (#998, `f63ca253`).
//! - PR #854 `8ad23875` (never merged): acknowledges first, then the state; written before the
//!   2PC refactor, so the destination commit carries no metadata and there is no recovery.
//! - PR #864 `07a0df03` (closed): v0.5.0's PostCDC order, plus a keepalive only moves
//!   `ClientXLogPos` forward and `AcknowledgeLSN` polls with `>=` (OLake #862).
//!
//! Not modelled: the fake acknowledgement the loop sends when a keepalive requests a reply
//! (`AcknowledgeLSN(fakeAck=true)` sends the stream's start, which never moves the slot), and
//! the 3 s / 5 min timing of the poll (one step that sees the slot right after the update).
//!
//! The workload is one published table (one stream, one writer). Each client transaction is one
//! change with one commit record; pgoutput sends it as one XLogData whose `WALStart` is the
//! commit's end (`walsender.c:WalSndPrepareWrite` takes `ctx->write_location`, which
//! `logical.c:commit_cb_wrapper` sets to `txn->end_lsn`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::pg::stream::{identify_system_xlogpos, process_standby_reply};
use crate::pg::{DurableSlot, Server, Slot, StandbyStatusUpdate, Txn, Walsender};
use crate::Lsn;

/// Which OLake code is modelled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SyncVariant {
    /// OLake tag `v0.5.0`: state file, then acknowledgement; recovery on any metadata difference.
    V050,
    /// OLake master `2b1f68a9` (v0.9.4): destination commit, acknowledgement (#870), state file;
    /// the recovery skips of #865 and #998.
    Master,
    /// OLake PR #854 `8ad23875`: acknowledgement, then state; no destination metadata.
    Pr854,
    /// OLake PR #864 `07a0df03`: v0.5.0's order; forward-only keepalives, `>=` poll.
    Pr864,
}

impl SyncVariant {
    /// Every variant, in catalogue order.
    pub const ALL: [SyncVariant; 4] = [
        SyncVariant::V050,
        SyncVariant::Master,
        SyncVariant::Pr854,
        SyncVariant::Pr864,
    ];

    /// The names as the command line spells them.
    pub const NAMES: [&'static str; 4] = ["v0.5.0", "master", "pr854", "pr864"];

    /// The name used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            SyncVariant::V050 => "v0.5.0",
            SyncVariant::Master => "master",
            SyncVariant::Pr854 => "pr854",
            SyncVariant::Pr864 => "pr864",
        }
    }

    /// The variant called `name`, if any.
    pub fn from_name(name: &str) -> Option<SyncVariant> {
        SyncVariant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The order of the three side effects that end a sync.
    ///
    /// The destination commit comes first in every variant: `streamChanges` defers `PostCDC`
    /// before `handleWriterCleanup`, and deferred calls run last-in first-out; #854
    /// (`8ad23875`) passes PostCDC to `handleWriterCleanup`, which calls it after closing the
    /// writers.
    pub const fn post_order(self) -> [PostStep; 3] {
        match self {
            SyncVariant::V050 | SyncVariant::Pr864 => {
                [PostStep::Commit, PostStep::SaveState, PostStep::Ack]
            }
            SyncVariant::Master | SyncVariant::Pr854 => {
                [PostStep::Commit, PostStep::Ack, PostStep::SaveState]
            }
        }
    }

    /// Whether the destination commit records the LSN it committed (the 2PC metadata state).
    pub const fn has_metadata(self) -> bool {
        !matches!(self, SyncVariant::Pr854)
    }

    /// Whether a keepalive only moves `ClientXLogPos` forward and the poll accepts `>=` (#864).
    pub const fn forward_only(self) -> bool {
        matches!(self, SyncVariant::Pr864)
    }
}

impl fmt::Display for SyncVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One of the three side effects at the end of a sync.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PostStep {
    /// The destination writer's `Close`: data and (2PC) metadata committed together.
    Commit,
    /// `AcknowledgeLSN(ClientXLogPos)`: the standby status update, then the poll.
    Ack,
    /// `SetGlobal({lsn: ClientXLogPos})`: the state file.
    SaveState,
}

impl PostStep {
    /// The name used in phases and witnesses.
    pub const fn name(self) -> &'static str {
        match self {
            PostStep::Commit => "destination commit",
            PostStep::Ack => "ack",
            PostStep::SaveState => "state write",
        }
    }
}

/// What made a sync fail.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SyncFailure {
    /// `validateGlobalState`: `lsn mismatch, please proceed with clear destination`;
    /// non-retryable.
    LsnMismatch { state: Lsn, current: Lsn },
    /// `AcknowledgeLSN`'s poll never saw the slot at the acknowledged position:
    /// `LSN not updated after 5 minutes`; non-retryable.
    AckTimeout { sent: Lsn, slot: Lsn },
    /// PostgreSQL restarted: the replication connection is gone and the acknowledgement cannot be
    /// sent (`failed to send standby status message`); retryable.
    ServerCrashed,
}

impl fmt::Display for SyncFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyncFailure::LsnMismatch { state, current } => write!(
                f,
                "lsn mismatch, please proceed with clear destination. lsn saved in state [{state}] current lsn [{current}]"
            ),
            SyncFailure::AckTimeout { sent, slot } => {
                write!(f, "LSN not updated after 5 minutes (sent {sent}, slot at {slot})")
            }
            SyncFailure::ServerCrashed => f.write_str("failed to send standby status message"),
        }
    }
}

/// The stream of one sync: where it started, where it stops, and where the client is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Stream {
    /// `CurrentWalPosition`: the loop ends once `ClientXLogPos` reaches it.
    pub target: Lsn,
    /// `ClientXLogPos`.
    pub client_pos: Lsn,
    /// The walsender serving `START_REPLICATION SLOT … LOGICAL ConfirmedFlushLSN`, the slot's
    /// `confirmed_flush` as `GetSlotPosition` read it: where decoding starts
    /// (`start_decoding_at`), how far it read from the slot's `restart_lsn` (`read_to`) and its
    /// `sentPtr`, which keepalives carry ([`Walsender`]).
    pub walsender: Walsender,
    /// A recovery sync (2PC): the destination already holds everything up to this LSN, the
    /// stream's changes are not written again, and the sync ends pinned to it.
    pub recovery: Option<Lsn>,
}

/// Where the connector's current run is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SyncPhase {
    /// `StreamChanges`' metadata read, `GetSlotPosition`, `NewReplicator`, validation are next.
    Validate,
    /// The stream loop runs.
    Streaming(Stream),
    /// The loop ended; `done` of the variant's three side effects are done. `session_lost`: the
    /// replication connection died under the run (a PostgreSQL restart).
    Post {
        stream: Stream,
        done: u8,
        session_lost: bool,
    },
    /// The sync finished.
    Done,
    /// The sync failed.
    Failed(SyncFailure),
    /// The connector process died after the side effect named (or before any).
    Crashed { after: Option<PostStep> },
}

impl SyncPhase {
    /// Whether a run is in progress.
    pub const fn is_running(self) -> bool {
        matches!(
            self,
            SyncPhase::Validate | SyncPhase::Streaming(_) | SyncPhase::Post { .. }
        )
    }
}

impl fmt::Display for SyncPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let recovery = |s: &Stream| match s.recovery {
            Some(m) => format!(", recovery to {m}"),
            None => String::new(),
        };
        match self {
            SyncPhase::Validate => f.write_str("StreamChanges"),
            SyncPhase::Streaming(s) => write!(
                f,
                "streaming from {} to {}{}",
                s.walsender.start_decoding_at,
                s.target,
                recovery(s)
            ),
            SyncPhase::Post { done, .. } => write!(f, "PostCDC, {done} of 3 side effects done"),
            SyncPhase::Done => f.write_str("sync done"),
            SyncPhase::Failed(failure @ SyncFailure::ServerCrashed) => {
                write!(f, "failed: {failure}")
            }
            SyncPhase::Failed(failure) => write!(f, "failed, non-retryable: {failure}"),
            SyncPhase::Crashed { after: None } => f.write_str("crashed"),
            SyncPhase::Crashed { after: Some(step) } => write!(f, "crashed after {}", step.name()),
        }
    }
}

/// What outlives the connector process: the state file and the destination.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Durable {
    /// `global.state.lsn` in the state file.
    pub state_file: Lsn,
    /// The destination metadata state (the LSN of its last commit), or none.
    pub dest_meta: Option<Lsn>,
    /// The highest LSN a destination commit covered, metadata or not: committed data stays.
    pub dest_lsn: Lsn,
    /// Which transactions (bit `i`: the `i`-th) the destination holds.
    pub dest_txns: u8,
    /// Transactions written to the destination more than once (at-least-once delivery).
    pub duplicates: u8,
}

/// The `restart_lsn` candidates an acknowledgement of `sent` can apply to `slot`: PostgreSQL's
/// choice, from WAL content the model does not track (where decoding met `xl_running_xacts`
/// records). `boundaries` are the transaction ends committed so far, in increasing order; the
/// candidates come out in that order.
///
/// PostgreSQL 15 `snapbuild.c:SnapBuildProcessRunningXacts` →
/// `logical.c:LogicalIncreaseRestartDecodingForSlot` keeps one pending candidate: a
/// `candidate_restart_lsn` (the start of the oldest transaction running at the record, or with
/// none running the record's own serialized snapshot, `last_serialized_snapshot`) valid from the
/// record's position `candidate_restart_valid`. A record at or below `confirmed_flush` is applied
/// while decoding, which saves the slot without an acknowledgement (not modelled: a stream that
/// re-reads from a lagging `restart_lsn` may so save an in-memory `confirmed_flush`); one above it
/// waits for an acknowledgement at or past its position (`logical.c:LogicalConfirmReceivedLocation`). In this workload no transaction spans a record,
/// so a candidate is a transaction boundary from the previous `confirmed_flush` (a record right
/// after the last acknowledged commit) up to the position sent (a record right after the last
/// commit sent), and it moves `restart_lsn` only when above it. The acknowledgement moves
/// nothing unless it moves `confirmed_flush`; no candidate at all is always possible (no record
/// decoded since the last one applied).
pub fn restart_candidates(
    sent: Lsn,
    slot: &Slot,
    boundaries: impl IntoIterator<Item = Lsn>,
) -> impl Iterator<Item = Lsn> {
    let previous = slot.confirmed_flush;
    let restart_lsn = slot.restart_lsn;
    boundaries
        .into_iter()
        .filter(move |&b| sent > previous && b >= previous && b <= sent && b > restart_lsn)
}

/// The connector process.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SyncConnector {
    pub phase: SyncPhase,
    /// Runs started so far, the current one included.
    pub runs: u8,
    /// Transactions received in this run and not yet committed (bit `i`: the `i`-th).
    pub buffer: u8,
}

impl SyncConnector {
    /// The first steady-state sync, after a bootstrap that left state and slot equal.
    pub const fn first_run() -> SyncConnector {
        SyncConnector {
            phase: SyncPhase::Validate,
            runs: 1,
            buffer: 0,
        }
    }

    /// `StreamChanges` up to the stream loop: reads the destination metadata, picks a recovery
    /// sync, `GetSlotPosition`, `NewReplicator`, and `validateGlobalState` unless skipped.
    ///
    /// OLake `drivers/postgres/internal/cdc.go:StreamChanges`. A stream is finished (recovery)
    /// when its metadata LSN differs from the state's (v0.5.0, #864) or is ahead of it (master).
    /// master skips validation when no stream remains (#865) or when `confirmed_flush` equals the
    /// recovery LSN (#998); the others always validate (strict equality). The target is the
    /// recovery LSN, else `IDENTIFY_SYSTEM`'s `XLogPos` ([`identify_system_xlogpos`]) as
    /// `pkg/waljs/replicator.go:NewReplicator` sets it on v0.5.0, master and #864; #854's
    /// `NewReplicator` (`8ad23875`) takes `slot.CurrentLSN`, `pg_current_wal_lsn()` (the write
    /// pointer, [`Server::current_wal_lsn`]).
    ///
    /// The stream is `START_REPLICATION SLOT … LOGICAL ConfirmedFlushLSN`: PostgreSQL 15
    /// `walsender.c:StartLogicalReplication` ([`Walsender::start_replication`]), decoding from
    /// `confirmed_flush` and reading from `restart_lsn`; its first record read puts `sentPtr`
    /// below `confirmed_flush` when `restart_lsn` lags ([`Walsender::read_first_record`]).
    /// All LSNs are WAL bytes. Fails the run with [`SyncFailure::LsnMismatch`] (non-retryable)
    /// when validation runs and the state differs from `confirmed_flush`.
    pub fn validate(&mut self, variant: SyncVariant, server: &Server, durable: &Durable) {
        debug_assert_eq!(self.phase, SyncPhase::Validate);
        let state = durable.state_file;
        let recovery = match (variant, durable.dest_meta) {
            (SyncVariant::Pr854, _) | (_, None) => None,
            (SyncVariant::Master, Some(m)) => (m > state).then_some(m),
            (_, Some(m)) => (m != state).then_some(m),
        };
        let current = server.slot.confirmed_flush;
        // One stream: a recovery sync has no stream left to run.
        let remaining = recovery.is_none();
        let validates = match variant {
            SyncVariant::Master => remaining && recovery != Some(current),
            _ => true,
        };
        if validates && state != current {
            self.phase = SyncPhase::Failed(SyncFailure::LsnMismatch { state, current });
            return;
        }
        let xlogpos = identify_system_xlogpos(server);
        let target = match (recovery, variant) {
            (Some(m), _) => m,
            (None, SyncVariant::Pr854) => server.current_wal_lsn().unwrap_or(xlogpos),
            (None, _) => xlogpos,
        };
        let mut walsender = Walsender::start_replication(current, &server.slot);
        walsender.read_first_record();
        self.phase = SyncPhase::Streaming(Stream {
            target,
            client_pos: current,
            walsender,
            recovery,
        });
    }

    /// The walsender decodes the next committed transaction `txn` (the `index`-th); pgoutput
    /// sends it (XLogData, `ClientXLogPos = WALStart = end_lsn`) unless decoding skips it (its
    /// commit record starts before the stream's start), and either way `sentPtr` moves to its
    /// end ([`Walsender::decode_txn`]).
    ///
    /// PostgreSQL 15 `walsender.c:XLogSendLogical` and `decode.c:DecodeTXNNeedSkip`; OLake
    /// `pkg/waljs/pgoutput.go:StreamChanges`. In a recovery sync the stream is finished and its
    /// changes are filtered out. `index` is below 8 (the buffer is a bit set).
    pub fn receive(&mut self, index: u8, txn: &Txn) {
        let SyncPhase::Streaming(mut s) = self.phase else {
            unreachable!("receive outside the stream: {:?}", self.phase)
        };
        if s.walsender.decode_txn(txn) {
            s.client_pos = txn.end_lsn;
            if s.recovery.is_none() {
                self.buffer |= 1 << index;
            }
        }
        self.phase = SyncPhase::Streaming(s);
    }

    /// A primary keepalive: `ClientXLogPos = ServerWALEnd` (`sentPtr`) on every variant but
    /// #864, which keeps the larger of the two.
    ///
    /// OLake `pkg/waljs/pgoutput.go:StreamChanges` (`PrimaryKeepaliveMessageByteID`); PostgreSQL
    /// 15 `walsender.c:WalSndKeepalive` sends `sentPtr` ([`Walsender::keepalive`]).
    pub fn keepalive(&mut self, variant: SyncVariant) {
        let SyncPhase::Streaming(mut s) = self.phase else {
            unreachable!("keepalive outside the stream: {:?}", self.phase)
        };
        let wal_end = s.walsender.keepalive(false).wal_end;
        s.client_pos = if variant.forward_only() {
            s.client_pos.max(wal_end)
        } else {
            wal_end
        };
        self.phase = SyncPhase::Streaming(s);
    }

    /// The loop's exit: `ClientXLogPos >= CurrentWalPosition` with the transaction complete
    /// (always, at the model's granularity), or the connection closed (`EOF`: return nil).
    /// A recovery sync pins `ClientXLogPos` to the recovery LSN.
    ///
    /// OLake `pgoutput.go:StreamChanges` and `cdc.go:StreamChanges` (the recovery pin).
    pub fn end_stream(&mut self, session_lost: bool) {
        let SyncPhase::Streaming(mut s) = self.phase else {
            unreachable!("end_stream outside the stream: {:?}", self.phase)
        };
        if let Some(m) = s.recovery {
            s.client_pos = m;
        }
        self.phase = SyncPhase::Post {
            stream: s,
            done: 0,
            session_lost,
        };
    }

    /// The next side effect of PostCDC, in the variant's order.
    pub fn next_post_step(&self, variant: SyncVariant) -> Option<PostStep> {
        match self.phase {
            SyncPhase::Post { done, .. } => variant.post_order().get(usize::from(done)).copied(),
            _ => None,
        }
    }

    /// The last side effect done, if any (where a crash now would fall).
    pub fn last_post_step(&self, variant: SyncVariant) -> Option<PostStep> {
        match self.phase {
            SyncPhase::Post { done, .. } if done > 0 => {
                Some(variant.post_order()[usize::from(done) - 1])
            }
            _ => None,
        }
    }

    fn post_done(&mut self) {
        let SyncPhase::Post {
            stream,
            done,
            session_lost,
        } = self.phase
        else {
            unreachable!("post step outside PostCDC: {:?}", self.phase)
        };
        self.phase = if done == 2 {
            SyncPhase::Done
        } else {
            SyncPhase::Post {
                stream,
                done: done + 1,
                session_lost,
            }
        };
    }

    fn stream(&self) -> Stream {
        match self.phase {
            SyncPhase::Post { stream, .. } => stream,
            other => unreachable!("no stream in {other:?}"),
        }
    }

    /// The destination commit: every buffered change and, with 2PC, the metadata state
    /// `{lsn: ClientXLogPos}` in one commit.
    ///
    /// OLake `drivers/abstract/abstract.go:handleWriterCleanup` → `WriterThread.Close` with the
    /// state `StreamChanges` returned.
    pub fn commit(&mut self, variant: SyncVariant, durable: &mut Durable) {
        let pos = self.stream().client_pos;
        durable.duplicates += (self.buffer & durable.dest_txns).count_ones() as u8;
        durable.dest_txns |= self.buffer;
        durable.dest_lsn = durable.dest_lsn.max(pos);
        if variant.has_metadata() {
            durable.dest_meta = Some(pos);
        }
        self.buffer = 0;
        self.post_done();
    }

    /// `AcknowledgeLSN(ClientXLogPos, fakeAck=false)`: a standby status update with
    /// write = flush = apply = `ClientXLogPos` (pglogrepl's `SendStandbyStatusUpdate` fills an
    /// unset flush or apply with the write position), then a poll of the slot every 3 s for
    /// 5 minutes until it equals the position (`>=` on #864). `restart` is PostgreSQL's choice of
    /// candidate for `restart_lsn`, if any ([`restart_candidates`]).
    ///
    /// OLake `pkg/waljs/replicator.go:AcknowledgeLSN`; PostgreSQL 15
    /// `walsender.c:ProcessStandbyReplyMessage` ([`process_standby_reply`]) →
    /// `logical.c:LogicalConfirmReceivedLocation` ([`DurableSlot::confirm_received`]): forward
    /// only; with a candidate the slot takes it and is saved at once; otherwise only
    /// `confirmed_flush` moves, in memory, and the slot is not even marked dirty, so no
    /// checkpoint saves it in 15 either. The slot is clean here: nothing in this system marks it
    /// dirty without saving it. Fails the run with [`SyncFailure::AckTimeout`] (non-retryable)
    /// when the poll's condition does not hold, and with [`SyncFailure::ServerCrashed`]
    /// (retryable) when PostgreSQL restarted under the run.
    pub fn ack(&mut self, variant: SyncVariant, server: &mut Server, restart: Option<Lsn>) {
        let SyncPhase::Post { session_lost, .. } = self.phase else {
            unreachable!("ack outside PostCDC: {:?}", self.phase)
        };
        if session_lost {
            self.phase = SyncPhase::Failed(SyncFailure::ServerCrashed);
            return;
        }
        let sent = self.stream().client_pos;
        let before = server.slot;
        debug_assert!(restart.is_none_or(|c| {
            sent > before.confirmed_flush && c >= before.confirmed_flush && c <= sent
        }));
        let update = StandbyStatusUpdate {
            write: sent,
            flush: sent,
            apply: sent,
            reply_requested: false,
        };
        let mut slot = DurableSlot {
            slot: before,
            dirty: false,
        };
        process_standby_reply(&mut slot, &update, restart);
        server.slot = slot.slot;
        let confirmed = server.slot.confirmed_flush;
        let seen = if variant.forward_only() {
            confirmed >= sent
        } else {
            confirmed == sent
        };
        if seen {
            self.post_done();
        } else {
            self.phase = SyncPhase::Failed(SyncFailure::AckTimeout {
                sent,
                slot: confirmed,
            });
        }
    }

    /// `SetGlobal({lsn: ClientXLogPos})`: truncates and rewrites the state file.
    ///
    /// OLake `cdc.go:PostCDC` → `types/state.go:SetGlobal` → `LogState`.
    pub fn save_state(&mut self, durable: &mut Durable) {
        durable.state_file = self.stream().client_pos;
        self.post_done();
    }

    /// The connector process dies between two of its steps.
    pub fn crash(&mut self, variant: SyncVariant) {
        debug_assert!(self.phase.is_running());
        let after = self.last_post_step(variant);
        self.phase = SyncPhase::Crashed { after };
        self.buffer = 0;
    }

    /// PostgreSQL restarted under the run. Before the stream, `StreamChanges` fails; in the
    /// stream, `ReceiveMessage` sees EOF and the loop returns nil (`pgoutput.go`), so PostCDC
    /// runs with the connection gone; after it, nothing changes until the acknowledgement.
    pub fn server_crashed(&mut self) {
        match self.phase {
            SyncPhase::Validate => self.phase = SyncPhase::Failed(SyncFailure::ServerCrashed),
            SyncPhase::Streaming(_) => self.end_stream(true),
            SyncPhase::Post {
                stream,
                done,
                session_lost: _,
            } => {
                self.phase = SyncPhase::Post {
                    stream,
                    done,
                    session_lost: true,
                }
            }
            SyncPhase::Done | SyncPhase::Failed(_) | SyncPhase::Crashed { .. } => {}
        }
    }

    /// The next sync, or the restarted process, starts a new run from the state file.
    /// OLake `drivers/abstract/cdc.go:RunChangeStream`.
    pub fn start_next_run(&mut self) {
        debug_assert!(!self.phase.is_running());
        *self = SyncConnector {
            phase: SyncPhase::Validate,
            runs: self.runs + 1,
            buffer: 0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::Role;

    const START: Lsn = Lsn(0x100_0000);
    const END: Lsn = Lsn(0x100_2000);

    fn in_post(client_pos: Lsn, done: u8) -> SyncConnector {
        SyncConnector {
            phase: SyncPhase::Post {
                stream: Stream {
                    target: START,
                    client_pos,
                    walsender: Walsender::start_replication(START, &Slot::at_rest(START)),
                    recovery: None,
                },
                done,
                session_lost: false,
            },
            runs: 1,
            buffer: 0,
        }
    }

    /// `LogicalConfirmReceivedLocation` never moves `confirmed_flush` back: an acknowledgement
    /// below it leaves the slot where it is, and master's `==` poll then times out while #864's
    /// `>=` poll returns.
    #[test]
    fn an_ack_below_the_slot_times_out_only_under_strict_equality() {
        for (variant, timed_out) in [(SyncVariant::Master, true), (SyncVariant::Pr864, false)] {
            let mut server = Server::at_rest(Role::Primary, START);
            server.wal.insert = END;
            server.wal.write = END;
            server.wal.flush = END;
            server.slot.confirmed_flush = END;
            let step = variant
                .post_order()
                .iter()
                .position(|s| *s == PostStep::Ack)
                .unwrap() as u8;
            let mut connector = in_post(START, step);
            connector.ack(variant, &mut server, None);
            assert_eq!(server.slot.confirmed_flush, END);
            assert_eq!(
                matches!(
                    connector.phase,
                    SyncPhase::Failed(SyncFailure::AckTimeout { .. })
                ),
                timed_out,
                "{variant}"
            );
        }
    }

    /// An acknowledgement that moves `restart_lsn` saves the slot at once, with the new
    /// `confirmed_flush` and `restart_lsn` at the candidate; one that does not only changes
    /// memory, which a restart takes back.
    #[test]
    fn an_ack_is_saved_only_when_restart_lsn_moves() {
        const MID: Lsn = Lsn(0x100_1000);
        for (restart, kept, restart_lsn) in [
            (None, START, START),
            (Some(MID), END, MID),
            (Some(END), END, END),
        ] {
            let mut server = Server::at_rest(Role::Primary, START);
            server.wal.insert = END;
            server.wal.write = END;
            server.wal.flush = END;
            let mut connector = in_post(END, 1);
            connector.ack(SyncVariant::Master, &mut server, restart);
            assert_eq!(connector.phase, in_post(END, 2).phase);
            server.crash_restart();
            assert_eq!(server.slot.confirmed_flush, kept, "{restart:?}");
            assert_eq!(server.slot.restart_lsn, restart_lsn, "{restart:?}");
        }
    }

    /// The candidates lie between the previous `confirmed_flush` and the position sent, above
    /// `restart_lsn`, and only an acknowledgement that moves `confirmed_flush` applies one.
    #[test]
    fn restart_candidates_lie_between_the_last_ack_and_the_position_sent() {
        const MID: Lsn = Lsn(0x100_1000);
        let boundaries = [MID, END, END.plus(0x1000)];
        let mut slot = crate::pg::Slot::at_rest(START);
        let of = |sent: Lsn, slot: &crate::pg::Slot| -> Vec<Lsn> {
            restart_candidates(sent, slot, boundaries).collect()
        };
        assert_eq!(of(END, &slot), [MID, END]);
        slot.confirmed_flush = MID;
        assert_eq!(of(END, &slot), [MID, END]);
        slot.restart_lsn = MID;
        assert_eq!(of(END, &slot), [END]);
        assert_eq!(of(MID, &slot), []);
        slot.confirmed_flush = END;
        assert_eq!(of(MID, &slot), []);
    }

    /// Each variant's order of the three side effects.
    #[test]
    fn post_orders() {
        use PostStep::{Ack, Commit, SaveState};
        assert_eq!(SyncVariant::V050.post_order(), [Commit, SaveState, Ack]);
        assert_eq!(SyncVariant::Pr864.post_order(), [Commit, SaveState, Ack]);
        assert_eq!(SyncVariant::Master.post_order(), [Commit, Ack, SaveState]);
        assert_eq!(SyncVariant::Pr854.post_order(), [Commit, Ack, SaveState]);
    }
}
