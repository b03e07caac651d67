//! Streaming a logical slot over the replication protocol: `IDENTIFY_SYSTEM`,
//! `START_REPLICATION SLOT s LOGICAL X`, the XLogData and keepalive messages the walsender sends,
//! and the standby status updates it receives.

use serde::{Deserialize, Serialize};

use super::decoding::{
    confirmed_flush_after, decoding_start, txn_needs_skip, DurableSlot, Persistence,
};
use super::server::{Role, Server};
use super::slot::Slot;
use super::txn::Txn;
use super::version::PgVersion;
use crate::{Lsn, WalPosition};

/// `IDENTIFY_SYSTEM`'s `xlogpos`.
///
/// PostgreSQL 15 `walsender.c:IdentifySystem`: `GetFlushRecPtr()` on a primary,
/// `GetStandbyFlushRecPtr()` during recovery: what the walreceiver received and flushed, or what
/// was replayed if that is further. The model's standby has received what the primary flushed
/// (its `flush`), so that is `max(flush, replay)`; live rule `identify_system_on_standby`, with
/// replay paused.
pub fn identify_system_xlogpos(server: &Server) -> Lsn {
    match server.role {
        Role::Primary => server.wal.flush,
        Role::Standby => server.wal.flush.max(server.wal.replay),
    }
}

/// A pgoutput message (protocol version 1) as the model predicts it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PgOutput {
    /// 'B': `final_lsn` (the commit record's start) and the xid.
    Begin { final_lsn: Lsn, xid: u32 },
    /// 'R': the relation's description, once per relation and session before its first change.
    Relation,
    /// 'I': one inserted row.
    Insert,
    /// 'C': the commit record's start and end.
    Commit { commit_lsn: Lsn, end_lsn: Lsn },
}

/// One XLogData ('w') message: `wal_start` and `wal_end` as the walsender fills them in, and the
/// pgoutput message it carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct XLogData {
    pub wal_start: Lsn,
    pub wal_end: Lsn,
    pub message: PgOutput,
}

/// The XLogData messages for one transaction of `published_rows` inserts into one table, the
/// first change's record at `first_change_lsn` (`relation_known`: the session already sent that
/// table's Relation; `multi_insert`: its rows lie in one multi-insert record): its
/// [`TxnPart`]s in order, each under [`TxnPart::lsn`], the Relation after the Begin.
///
/// PostgreSQL 15 `walsender.c:WalSndPrepareWrite` writes `dataStart = walEnd = lsn` when the
/// plugin's write is its last for that position and `0/0` otherwise ("can't have sync rep
/// confused by sending the same LSN several times"); `lsn` is `ctx->write_location`, which
/// `logical.c`'s callback wrappers set to the change's LSN (`change_cb_wrapper`) and to
/// `txn->end_lsn` for the commit (`commit_cb_wrapper`). pgoutput sends Begin lazily from the
/// first change (`pgoutput.c:pgoutput_send_begin`, so under that change's LSN), the Relation with
/// `last_write = false` (`send_relation_and_attrs`), each Insert and the Commit with
/// `last_write = true`.
pub fn pgoutput_txn(
    txn: &Txn,
    first_change_lsn: Lsn,
    relation_known: bool,
    multi_insert: bool,
) -> Vec<XLogData> {
    if !txn.is_published() {
        return Vec::new();
    }
    let txn = Txn {
        first_lsn: first_change_lsn,
        ..*txn
    };
    let at = |lsn: Lsn, message| XLogData {
        wal_start: lsn,
        wal_end: lsn,
        message,
    };
    let mut out = Vec::new();
    let mut part = Some(TxnPart::Begin);
    while let Some(p) = part {
        let message = match p {
            TxnPart::Begin => PgOutput::Begin {
                final_lsn: txn.commit_lsn,
                xid: txn.xid,
            },
            TxnPart::Change(_) => PgOutput::Insert,
            TxnPart::Commit => PgOutput::Commit {
                commit_lsn: txn.commit_lsn,
                end_lsn: txn.end_lsn,
            },
        };
        out.push(at(p.lsn(&txn, multi_insert), message));
        if p == TxnPart::Begin && !relation_known {
            out.push(at(Lsn::INVALID, PgOutput::Relation));
        }
        part = p.next(&txn);
    }
    out
}

/// One message of a transaction a walsender sends message by message, as pgoutput writes it
/// (its Relation messages left out): Begin, one change per published row, Commit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TxnPart {
    /// 'B', sent with the first change.
    Begin,
    /// 'I': published row `k` (0-based).
    Change(u32),
    /// 'C'.
    Commit,
}

impl TxnPart {
    /// The LSN the walsender sends it under, the XLogData's `dataStart` (and `walEnd`): the
    /// first change's for the Begin, the change's record start ([`Txn::change_lsn`]), the
    /// commit record's end for the Commit ([`pgoutput_txn`] sends them so). Live rule
    /// `pgoutput_change_lsns` confirms the order and equality of these LSNs, not the later
    /// rows' absolute ones, which the model spreads evenly.
    ///
    /// PostgreSQL 15 `logical.c:change_cb_wrapper` (`ctx->write_location = change->lsn`),
    /// `commit_cb_wrapper` (`txn->end_lsn`), `pgoutput.c:pgoutput_send_begin` (from the first
    /// change), `walsender.c:WalSndPrepareWrite`.
    pub fn lsn(self, txn: &Txn, multi_insert: bool) -> Lsn {
        match self {
            TxnPart::Begin => txn.change_lsn(0, multi_insert),
            TxnPart::Change(k) => txn.change_lsn(k, multi_insert),
            TxnPart::Commit => txn.end_lsn,
        }
    }

    /// The message sent after this one, `None` after the Commit: pgoutput writes a decoded
    /// transaction's messages in one go, at its commit record
    /// (`reorderbuffer.c:ReorderBufferReplay`), the changes in their WAL order.
    pub fn next(self, txn: &Txn) -> Option<TxnPart> {
        let rows = txn.published_rows.max(1);
        match self {
            TxnPart::Begin => Some(TxnPart::Change(0)),
            TxnPart::Change(k) if k + 1 < rows => Some(TxnPart::Change(k + 1)),
            TxnPart::Change(_) => Some(TxnPart::Commit),
            TxnPart::Commit => None,
        }
    }
}

/// A keepalive ('k'): `ServerWALEnd` and whether a reply is requested.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Keepalive {
    pub wal_end: Lsn,
    pub reply_requested: bool,
}

/// `sentPtr` once the walsender's reader has read a record ending at `end_rec_ptr` (for a
/// transaction, its commit record: its `end_lsn`): that end, whatever `sentPtr` was. As the
/// reader moves forward it only grows, except that the first record read from a `restart_lsn`
/// lagging behind `confirmed_flush` takes it below where it started
/// ([`Walsender::read_first_record`]). Keepalives carry it as `ServerWALEnd`
/// ([`Walsender::keepalive`]). Generic over [`WalPosition`] for a model that counts transactions.
///
/// PostgreSQL 15 `walsender.c:XLogSendLogical`: `sentPtr = logical_decoding_ctx->reader->
/// EndRecPtr` after each record; rules `start_at_zero_from_confirmed_flush` and
/// `unpublished_txn_sends_nothing` confirm live that keepalives follow it.
pub fn sent_ptr_after_read<P: WalPosition>(end_rec_ptr: P) -> P {
    end_rec_ptr
}

/// A walsender streaming one logical slot.
///
/// - `start_decoding_at`: transactions whose commit record starts before it are skipped.
/// - `sent_ptr`: `walsender.c`'s `sentPtr`, what keepalives report as `ServerWALEnd`.
/// - `read_to`: the end of the last record its reader has read (it starts at `restart_lsn`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Walsender {
    pub start_decoding_at: Lsn,
    pub sent_ptr: Lsn,
    pub read_to: Lsn,
}

impl Walsender {
    /// `START_REPLICATION SLOT s LOGICAL requested`. It never moves `confirmed_flush`.
    ///
    /// PostgreSQL 15 `walsender.c:StartLogicalReplication`: `CreateDecodingContext(requested, …)`
    /// (see [`decoding_start`]), the reader positioned at the slot's `restart_lsn`
    /// (`XLogBeginRead(…, MyReplicationSlot->data.restart_lsn)`), and `sentPtr =
    /// MyReplicationSlot->data.confirmed_flush`.
    pub fn start_replication(requested: Lsn, slot: &Slot) -> Walsender {
        Walsender {
            start_decoding_at: decoding_start(requested, slot.confirmed_flush),
            sent_ptr: slot.confirmed_flush,
            read_to: slot.restart_lsn,
        }
    }

    /// The walsender reads and decodes every record up to `wal_end` (the end of the last whole
    /// record the flush pointer covers) and sends the transactions committed there: published,
    /// not skipped, in commit order. `sent_ptr` follows the end of each record read, so after
    /// catching up it is `wal_end` — below `confirmed_flush` when that was confirmed past the end
    /// of WAL.
    ///
    /// PostgreSQL 15 `walsender.c:XLogSendLogical`: `sentPtr = logical_decoding_ctx->reader->
    /// EndRecPtr` after each record; `logical_read_xlog_page` → `WalSndWaitForWal` waits for
    /// `GetFlushRecPtr()` to cover the page; a transaction goes out at its commit record
    /// (`decode.c:DecodeCommit` → `ReorderBufferCommit`).
    pub fn send_logical<'a>(&mut self, txns: &'a [Txn], wal_end: Lsn) -> Vec<&'a Txn> {
        if wal_end <= self.read_to {
            return Vec::new();
        }
        let read_to = self.read_to;
        let sent: Vec<&Txn> = txns
            .iter()
            .filter(|t| t.end_lsn > read_to && t.end_lsn <= wal_end)
            .filter(|t| self.decode_txn(t))
            .collect();
        self.read_to = wal_end;
        self.sent_ptr = sent_ptr_after_read(wal_end);
        sent
    }

    /// The walsender reads the records of the next committed transaction through its commit
    /// record and says whether it sends it: it does when the transaction is published and not
    /// skipped. Either way `sent_ptr` and `read_to` are then its `end_lsn`.
    ///
    /// PostgreSQL 15 `walsender.c:XLogSendLogical` (`sentPtr = logical_decoding_ctx->reader->
    /// EndRecPtr` after each record); at the commit record `decode.c:DecodeCommit` skips the
    /// transaction when `DecodeTXNNeedSkip` (see [`txn_needs_skip`]) and otherwise replays it to
    /// the output plugin, which sends nothing for an unpublished one ([`Txn::is_published`]).
    /// The caller passes transactions in commit order, each ending after `read_to`, and only
    /// once the flush pointer covers their commit record (`logical_read_xlog_page`).
    pub fn decode_txn(&mut self, txn: &Txn) -> bool {
        debug_assert!(txn.end_lsn > self.read_to, "{txn:?} read again by {self:?}");
        self.read_to = txn.end_lsn;
        self.sent_ptr = sent_ptr_after_read(txn.end_lsn);
        txn.is_published() && !txn_needs_skip(txn, self.start_decoding_at)
    }

    /// The reader has read the next transaction's records up to `upto`, the end of one of its
    /// change records ([`Txn::change_record_ends`]), and not yet its commit record: `sent_ptr`
    /// and `read_to` are there, inside the transaction, which it still sends once it reads the
    /// commit record ([`Walsender::decode_txn`]).
    ///
    /// PostgreSQL 15 `walsender.c:XLogSendLogical` (`sentPtr = EndRecPtr` after each record).
    pub fn read_within(&mut self, upto: Lsn) {
        debug_assert!(upto >= self.read_to, "{upto} read back from {self:?}");
        self.read_to = upto;
        self.sent_ptr = sent_ptr_after_read(upto);
    }

    /// `sent_ptr` once the reader has read its first record, for a slot whose `restart_lsn` lags
    /// behind `confirmed_flush`: that record's end, below `confirmed_flush`, so a keepalive now
    /// reports less than the stream started from (OLake #862). A model at transaction
    /// granularity knows no record end between `restart_lsn` and the next transaction's end and
    /// puts it at `restart_lsn` (`read_to`); with `restart_lsn = confirmed_flush` nothing moves.
    ///
    /// PostgreSQL 15 `walsender.c:StartLogicalReplication` begins reading at `restart_lsn`
    /// (`XLogBeginRead`) with `sentPtr = confirmed_flush`; `XLogSendLogical` sets `sentPtr =
    /// EndRecPtr` after the first record; rule `keepalive_below_confirmed_flush` confirms live
    /// that keepalives then fall below `confirmed_flush`.
    pub fn read_first_record(&mut self) {
        self.sent_ptr = self.sent_ptr.min(self.read_to);
    }

    /// The keepalive the walsender sends while it waits for WAL, or when a reply is due.
    ///
    /// PostgreSQL 15 `walsender.c:WalSndKeepalive` sends `sentPtr`; `WalSndWaitForWal` sends one
    /// without requesting a reply when the client's last reported write and flush are below
    /// `sentPtr`, and `WalSndKeepaliveIfNecessary` one requesting a reply (see [`keepalive_due`]).
    pub fn keepalive(&self, reply_requested: bool) -> Keepalive {
        Keepalive {
            wal_end: self.sent_ptr,
            reply_requested,
        }
    }

    /// A clean shutdown reaches the caught-up walsender: it ends the stream (CopyDone, then
    /// CommandComplete; `None`) once the client has reported everything sent, and otherwise sends
    /// a keepalive requesting a reply and waits for one. `write` and `flush` are the client's
    /// last reported positions (`0/0` before any status update).
    ///
    /// PostgreSQL 15 `walsender.c:WalSndDone`: `replicatedPtr = XLogRecPtrIsInvalid(MyWalSnd->
    /// flush) ? MyWalSnd->write : MyWalSnd->flush`; `if (WalSndCaughtUp && sentPtr ==
    /// replicatedPtr …) { EndCommand(…); proc_exit(0); }`, else `WalSndKeepalive(true, …)` unless
    /// a reply is already awaited. Only the shutdown checkpoint waits for it
    /// (`WalSndWaitStopping`), so `pg_ctl stop -m fast` waits for the client.
    pub fn at_shutdown(&self, write: Lsn, flush: Lsn) -> Option<Keepalive> {
        let replicated = if flush.is_valid() { flush } else { write };
        (replicated != self.sent_ptr).then(|| self.keepalive(true))
    }
}

/// Whether the walsender asks for a reply: half of `wal_sender_timeout` has passed since the
/// client's last message.
///
/// PostgreSQL 15 `walsender.c:WalSndKeepaliveIfNecessary`: `ping_time =
/// TimestampTzPlusMilliseconds(last_reply_timestamp, wal_sender_timeout / 2)`; a keepalive with
/// `requestReply = true` once `now ≥ ping_time` (and none while `wal_sender_timeout = 0`).
pub fn keepalive_due(ms_since_last_reply: u64, wal_sender_timeout_ms: u64) -> bool {
    wal_sender_timeout_ms > 0 && ms_since_last_reply >= wal_sender_timeout_ms / 2
}

/// Whether the walsender gives up on its client: `wal_sender_timeout` has passed since the
/// client's last message (the language's `WalSenderTimeout`, untimed there: enabled once a
/// stopping walsender's request for a reply is unanswered).
///
/// PostgreSQL 15 `walsender.c:WalSndCheckTimeOut`: `timeout =
/// TimestampTzPlusMilliseconds(last_reply_timestamp, wal_sender_timeout)`; once `now >= timeout`
/// (and `wal_sender_timeout > 0`) "terminating walsender process due to replication timeout",
/// `WalSndShutdown`: the connection closes, nothing more is sent. Live rule
/// `shutdown_waits_until_wal_sender_timeout`.
pub fn timed_out(ms_since_last_reply: u64, wal_sender_timeout_ms: u64) -> bool {
    wal_sender_timeout_ms > 0 && ms_since_last_reply >= wal_sender_timeout_ms
}

/// A standby status update ('r'): the client's write, flush and apply positions, [`Lsn`]s unless
/// the model counts positions otherwise ([`WalPosition`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StandbyStatusUpdate<P = Lsn> {
    pub write: P,
    pub flush: P,
    pub apply: P,
    pub reply_requested: bool,
}

/// The position a standby status update confirms to the slot: its `flush` field, unless that is
/// `0/0` (then none). `write` and `apply` never reach the slot.
///
/// PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage`: `if (MyReplicationSlot && flushPtr !=
/// InvalidXLogRecPtr)` → `LogicalConfirmReceivedLocation(flushPtr)` (logical slots); `writePtr`
/// and `applyPtr` only feed `pg_stat_replication` and synchronous replication. Confirmed live by
/// rules `status_update_only_flush` and `status_update_zero_flush_ignored`.
pub fn reply_confirms<P: WalPosition>(update: &StandbyStatusUpdate<P>) -> Option<P> {
    update.flush.is_valid_position().then_some(update.flush)
}

/// The slot's `confirmed_flush` after a standby status update, for a model that keeps only that
/// position (no `restart_lsn`, no saved copy): the update's flush when it is valid and further
/// ([`reply_confirms`], then [`confirmed_flush_after`]). [`process_standby_reply`] is the same
/// rule on a [`DurableSlot`], with what it does to the saved copy.
///
/// PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage` → `logical.c:
/// LogicalConfirmReceivedLocation`.
pub fn confirmed_flush_after_reply<P: WalPosition>(
    confirmed_flush: P,
    update: &StandbyStatusUpdate<P>,
) -> P {
    reply_confirms(update).map_or(confirmed_flush, |flush| {
        confirmed_flush_after(confirmed_flush, flush)
    })
}

/// What `pg_stat_replication` shows for the walsender after an update: `(write_lsn, flush_lsn,
/// replay_lsn)`, the three fields as sent.
///
/// PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage` stores `writePtr`, `flushPtr`,
/// `applyPtr` in `MyWalSnd->write/flush/apply` unconditionally; `pg_stat_get_wal_senders` shows
/// them (an invalid one as NULL).
pub fn stat_replication(update: &StandbyStatusUpdate) -> (Lsn, Lsn, Lsn) {
    (update.write, update.flush, update.apply)
}

/// The slot side of a standby status update: only `flush` reaches it; `0/0` is ignored.
///
/// PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage`: `if (MyReplicationSlot && flushPtr
/// != InvalidXLogRecPtr)` → `LogicalConfirmReceivedLocation(flushPtr)` (see
/// [`DurableSlot::confirm_received`]: forward only, no clamp, saved at once only when a candidate
/// `restart_lsn` applies). `write` and `apply` only feed `pg_stat_replication` and synchronous
/// replication.
pub fn process_standby_reply(
    slot: &mut DurableSlot,
    update: &StandbyStatusUpdate,
    candidate_restart: Option<Lsn>,
) -> Persistence {
    process_standby_reply_on(PgVersion::DEBIAN_15, slot, update, candidate_restart)
}

/// [`process_standby_reply`] on `version` ([`DurableSlot::confirm_received_on`]).
pub fn process_standby_reply_on(
    version: PgVersion,
    slot: &mut DurableSlot,
    update: &StandbyStatusUpdate,
    candidate_restart: Option<Lsn>,
) -> Persistence {
    match reply_confirms(update) {
        Some(flush) => slot.confirm_received_on(version, flush, candidate_restart),
        None => Persistence::MemoryOnly,
    }
}

#[cfg(test)]
mod tests {
    use super::TxnPart;

    #[test]
    fn a_transaction_goes_out_as_begin_its_rows_in_wal_order_and_commit() {
        let mut wal = crate::pg::Wal::at(Lsn(0x153_E240));
        let txn = wal.commit_txn(730, 8192 - 48, 46, 2, crate::pg::CommitMode::Sync);
        let mut parts = vec![TxnPart::Begin];
        while let Some(next) = parts.last().and_then(|p| p.next(&txn)) {
            parts.push(next);
        }
        assert_eq!(
            parts,
            [
                TxnPart::Begin,
                TxnPart::Change(0),
                TxnPart::Change(1),
                TxnPart::Commit
            ]
        );
        let lsns: Vec<Lsn> = parts.iter().map(|p| p.lsn(&txn, false)).collect();
        assert_eq!(lsns[0], txn.first_lsn);
        assert_eq!(lsns[1], txn.first_lsn);
        assert!(lsns[2] > lsns[1] && lsns[2] < txn.commit_lsn);
        assert_eq!(lsns[3], txn.end_lsn);
        assert_eq!(TxnPart::Change(1).lsn(&txn, true), txn.first_lsn);
        for multi_insert in [false, true] {
            let sent: Vec<(Lsn, PgOutput)> = pgoutput_txn(&txn, txn.first_lsn, true, multi_insert)
                .iter()
                .map(|x| (x.wal_start, x.message))
                .collect();
            let kinds: Vec<PgOutput> = sent.iter().map(|(_, m)| *m).collect();
            assert_eq!(kinds[1..3], [PgOutput::Insert, PgOutput::Insert]);
            let lsns: Vec<Lsn> = sent.iter().map(|(l, _)| *l).collect();
            let each: Vec<Lsn> = parts.iter().map(|p| p.lsn(&txn, multi_insert)).collect();
            assert_eq!(lsns, each);
        }
    }

    use super::super::wal::{CommitMode, Wal};
    use super::*;

    const CF: Lsn = Lsn(0x153_E240);

    fn three_txns() -> (Wal, Vec<Txn>) {
        let mut wal = Wal::at(CF);
        let txns = vec![
            wal.commit_txn(730, 200, 46, 1, CommitMode::Sync),
            wal.commit_txn(731, 200, 46, 0, CommitMode::Sync),
            wal.commit_txn(732, 200, 46, 2, CommitMode::Sync),
        ];
        (wal, txns)
    }

    #[test]
    fn identify_system_reports_the_flush_pointer_on_a_primary() {
        let mut server = Server::at_rest(Role::Primary, CF);
        server.wal.commit_txn(730, 200, 46, 1, CommitMode::Async);
        assert_eq!(identify_system_xlogpos(&server), CF);
    }

    #[test]
    fn streaming_from_zero_sends_published_transactions_after_confirmed_flush() {
        let (wal, txns) = three_txns();
        let slot = Slot::at_rest(CF);
        let mut sender = Walsender::start_replication(Lsn::INVALID, &slot);
        assert_eq!(sender.sent_ptr, CF);
        let sent = sender.send_logical(&txns, wal.flush);
        assert_eq!(sent, vec![&txns[0], &txns[2]]);
        assert_eq!(sender.keepalive(false).wal_end, wal.flush);
    }

    #[test]
    fn streaming_from_a_commit_start_sends_it_and_one_byte_later_skips_it() {
        let (wal, txns) = three_txns();
        let slot = Slot::at_rest(CF);
        let mut at_commit = Walsender::start_replication(txns[2].commit_lsn, &slot);
        assert_eq!(at_commit.send_logical(&txns, wal.flush), vec![&txns[2]]);
        let mut past = Walsender::start_replication(txns[2].commit_lsn.plus(1), &slot);
        assert!(past.send_logical(&txns, wal.flush).is_empty());
        // Neither start moved the slot.
        assert_eq!(slot, Slot::at_rest(CF));
    }

    #[test]
    fn decoding_a_transaction_moves_sent_ptr_to_its_end_and_sends_it_unless_skipped() {
        let (_, txns) = three_txns();
        let slot = Slot::at_rest(CF);
        let mut sender = Walsender::start_replication(txns[1].commit_lsn.plus(1), &slot);
        let sent: Vec<bool> = txns.iter().map(|t| sender.decode_txn(t)).collect();
        // The first is skipped (commit before the start), the second unpublished and skipped,
        // the third sent.
        assert_eq!(sent, [false, false, true]);
        assert_eq!(
            (sender.sent_ptr, sender.read_to),
            (txns[2].end_lsn, txns[2].end_lsn)
        );
    }

    #[test]
    fn the_first_record_below_confirmed_flush_drags_sent_ptr_down() {
        let (_, txns) = three_txns();
        let mut lagging = Slot::at_rest(txns[0].end_lsn);
        lagging.confirmed_flush = txns[2].end_lsn;
        let mut sender = Walsender::start_replication(lagging.confirmed_flush, &lagging);
        assert_eq!(sender.keepalive(false).wal_end, txns[2].end_lsn);
        sender.read_first_record();
        assert_eq!(sender.keepalive(false).wal_end, txns[0].end_lsn);
        // Re-read transactions are skipped and bring sentPtr back to confirmed_flush.
        assert!(!sender.decode_txn(&txns[1]) && !sender.decode_txn(&txns[2]));
        assert_eq!(sender.keepalive(false).wal_end, lagging.confirmed_flush);
        // A slot whose restart_lsn is confirmed_flush: nothing moves.
        let mut level = Walsender::start_replication(Lsn::INVALID, &Slot::at_rest(CF));
        level.read_first_record();
        assert_eq!(level.sent_ptr, CF);
    }

    #[test]
    fn only_flushed_commits_are_sent() {
        let mut wal = Wal::at(CF);
        let txn = wal.commit_txn(730, 200, 46, 1, CommitMode::Async);
        let mut sender = Walsender::start_replication(Lsn::INVALID, &Slot::at_rest(CF));
        assert!(sender.send_logical(&[txn], wal.flush).is_empty());
        wal.walwriter_flush();
        assert_eq!(sender.send_logical(&[txn], wal.flush), vec![&txn]);
    }

    #[test]
    fn keepalive_falls_below_a_confirmed_flush_past_the_wal_end() {
        let (wal, txns) = three_txns();
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let past = wal.flush.plus(1 << 20);
        let update = StandbyStatusUpdate {
            write: past,
            flush: past,
            apply: past,
            reply_requested: false,
        };
        process_standby_reply(&mut slot, &update, None);
        assert_eq!(slot.slot.confirmed_flush, past);
        let mut sender = Walsender::start_replication(Lsn::INVALID, &slot.slot);
        assert_eq!(sender.keepalive(false).wal_end, past);
        assert!(sender.send_logical(&txns, wal.flush).is_empty());
        assert_eq!(sender.keepalive(false).wal_end, wal.flush);
        assert!(sender.keepalive(false).wal_end < slot.slot.confirmed_flush);
    }

    #[test]
    fn only_the_flush_field_reaches_the_slot_and_zero_is_ignored() {
        let mut slot = DurableSlot::created(Slot::at_rest(CF));
        let write_only = StandbyStatusUpdate {
            write: CF.plus(0x100),
            flush: Lsn::INVALID,
            apply: CF.plus(0x100),
            reply_requested: false,
        };
        process_standby_reply(&mut slot, &write_only, None);
        assert_eq!(slot.slot.confirmed_flush, CF);
        assert_eq!(
            stat_replication(&write_only),
            (CF.plus(0x100), Lsn::INVALID, CF.plus(0x100))
        );
        let flush_only = StandbyStatusUpdate {
            flush: CF.plus(0x80),
            ..write_only
        };
        process_standby_reply(&mut slot, &flush_only, None);
        assert_eq!(slot.slot.confirmed_flush, CF.plus(0x80));
    }

    #[test]
    fn a_status_update_confirms_its_flush_field_alone_whatever_the_position_type() {
        fn update<P>(write: P, flush: P, apply: P) -> StandbyStatusUpdate<P> {
            StandbyStatusUpdate {
                write,
                flush,
                apply,
                reply_requested: false,
            }
        }
        // Only flush counts; write and apply ahead of it are not confirmed.
        let ahead = update(CF.plus(0x100), CF.plus(0x80), CF.plus(0x100));
        assert_eq!(reply_confirms(&ahead), Some(CF.plus(0x80)));
        assert_eq!(confirmed_flush_after_reply(CF, &ahead), CF.plus(0x80));
        // A flush of 0/0 confirms nothing, however far write and apply are.
        let zero = update(CF.plus(0x100), Lsn::INVALID, CF.plus(0x100));
        assert_eq!(reply_confirms(&zero), None);
        assert_eq!(confirmed_flush_after_reply(CF, &zero), CF);
        // Behind confirmed_flush: unchanged. Past the end of WAL: taken as it is.
        let behind = update(CF.minus(8), CF.minus(8), CF.minus(8));
        assert_eq!(confirmed_flush_after_reply(CF, &behind), CF);
        let far = update(Lsn(u64::MAX), Lsn(u64::MAX), Lsn(u64::MAX));
        assert_eq!(confirmed_flush_after_reply(CF, &far), Lsn(u64::MAX));
        // Transaction numbers (Electric's model): the same rule, 0 standing for 0/0.
        assert_eq!(confirmed_flush_after_reply(1u8, &update(3, 2, 2)), 2);
        assert_eq!(confirmed_flush_after_reply(1u8, &update(3, 0, 0)), 1);
        assert_eq!(confirmed_flush_after_reply(2u8, &update(3, 1, 1)), 2);
    }

    #[test]
    fn sent_ptr_is_the_end_of_the_last_record_read() {
        let (wal, txns) = three_txns();
        let mut sender = Walsender::start_replication(Lsn::INVALID, &Slot::at_rest(CF));
        for txn in &txns {
            sender.decode_txn(txn);
            assert_eq!(sender.sent_ptr, sent_ptr_after_read(txn.end_lsn));
        }
        assert_eq!(sender.keepalive(false).wal_end, wal.flush);
        assert_eq!(sent_ptr_after_read(3u8), 3);
    }

    #[test]
    fn at_shutdown_the_stream_ends_only_once_the_client_reported_everything_sent() {
        let (wal, txns) = three_txns();
        let mut sender = Walsender::start_replication(Lsn::INVALID, &Slot::at_rest(CF));
        sender.send_logical(&txns, wal.flush);
        let asked = Keepalive {
            wal_end: wal.flush,
            reply_requested: true,
        };
        assert_eq!(sender.at_shutdown(Lsn::INVALID, Lsn::INVALID), Some(asked));
        assert_eq!(
            sender.at_shutdown(txns[2].end_lsn, txns[0].end_lsn),
            Some(asked)
        );
        assert_eq!(sender.at_shutdown(wal.flush, wal.flush), None);
        // A client reporting write only (flush 0/0) is judged by its write.
        assert_eq!(sender.at_shutdown(wal.flush, Lsn::INVALID), None);
    }

    #[test]
    fn a_reply_is_requested_after_half_the_sender_timeout() {
        assert!(!keepalive_due(999, 2_000));
        assert!(keepalive_due(1_000, 2_000));
        assert!(!keepalive_due(u64::MAX, 0));
    }

    #[test]
    fn pgoutput_sends_begin_under_the_first_change_and_commit_under_end_lsn() {
        let (_, txns) = three_txns();
        let messages = pgoutput_txn(&txns[0], txns[0].first_lsn, false, false);
        let kinds: Vec<_> = messages.iter().map(|m| m.message).collect();
        assert_eq!(
            kinds,
            vec![
                PgOutput::Begin {
                    final_lsn: txns[0].commit_lsn,
                    xid: 730
                },
                PgOutput::Relation,
                PgOutput::Insert,
                PgOutput::Commit {
                    commit_lsn: txns[0].commit_lsn,
                    end_lsn: txns[0].end_lsn
                },
            ]
        );
        assert_eq!(messages[0].wal_start, txns[0].first_lsn);
        assert_eq!(messages[1].wal_start, Lsn::INVALID);
        assert_eq!(messages[3].wal_start, txns[0].end_lsn);
        assert!(pgoutput_txn(&txns[1], txns[1].first_lsn, true, false).is_empty());
    }
}
