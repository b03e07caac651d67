//! Client transactions as they lie in the WAL: their change records, the commit record's start
//! (`commit_lsn`) and end (`end_lsn`), which pgoutput's Begin and Commit messages carry.

use serde::{Deserialize, Serialize};

use super::wal::{CommitMode, Wal};
use crate::Lsn;

/// WAL records start on `MAXALIGN` boundaries (8 bytes on every platform PostgreSQL 15 builds
/// for): `xlog.c:ReserveXLogInsertLocation` reserves `MAXALIGN(size)`.
pub const MAXALIGN_BYTES: u64 = 8;

/// The commit record of a transaction without subtransactions, dropped relations or
/// invalidations: `pg_waldump` shows `rmgr: Transaction len (rec/tot): 46/46 … desc: COMMIT` for
/// a one-row INSERT on PostgreSQL 15 (`xact.c:XactLogCommitRecord`: the 24-byte record header,
/// 2 bytes of data header, the `xl_xact_commit` timestamp, the `xl_xact_xinfo` flags and, under
/// `wal_level = logical`, always the `xl_xact_dbinfo`), so the next record starts 48 bytes after
/// it.
pub const COMMIT_RECORD_BYTES: u64 = 46;

/// One committed client transaction, as logical decoding meets it.
///
/// - `first_lsn`: start of its first change record (`ReorderBufferTXN.first_lsn`).
/// - `changes_end`: end of its last change record: `commit_lsn`, unless other transactions'
///   records lie between its changes and its commit record (it stayed open while they
///   committed: [`Wal::begin_txn`], [`Wal::commit_open`]).
/// - `commit_lsn`: start of its commit record (`ReorderBufferTXN.final_lsn`): pgoutput's Begin
///   carries it as `final_lsn`, its Commit as `commit_lsn` (PostgreSQL 15 `proto.c:
///   logicalrep_write_begin`, `logicalrep_write_commit`).
/// - `end_lsn`: end of the commit record (`ReorderBufferTXN.end_lsn`, the reader's `EndRecPtr`
///   after it): the Commit message's `end_lsn`, and what a client confirms to acknowledge it.
/// - `published_rows`: rows it changed in tables of the publication, in the slot's database. A
///   transaction with none advances the WAL and sends nothing: pgoutput in 15 sends Begin only
///   before the first published change (`pgoutput.c:pgoutput_send_begin`, called from
///   `pgoutput_change`) and skips the Commit of a transaction whose Begin was not sent
///   (`pgoutput_commit_txn`); a transaction of another database is skipped at its commit record
///   before the plugin sees it (`decode.c:DecodeTXNNeedSkip`: `parsed->dbId !=
///   ctx->slot->data.database`).
///
/// Invariant: `first_lsn < changes_end <= commit_lsn < end_lsn`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Txn {
    pub xid: u32,
    pub first_lsn: Lsn,
    pub changes_end: Lsn,
    pub commit_lsn: Lsn,
    pub end_lsn: Lsn,
    pub published_rows: u32,
    pub mode: CommitMode,
}

impl Txn {
    /// Whether pgoutput sends it at all (it changed a published table).
    ///
    /// PostgreSQL 15 `pgoutput.c:pgoutput_commit_txn`: `if (!sent_begin_txn) { elog(DEBUG1,
    /// "skipped replication of an empty transaction ..."); return; }`.
    pub const fn is_published(&self) -> bool {
        self.published_rows > 0
    }

    /// Whether `first_lsn < changes_end <= commit_lsn < end_lsn`.
    pub fn is_ordered(&self) -> bool {
        self.first_lsn < self.changes_end
            && self.changes_end <= self.commit_lsn
            && self.commit_lsn < self.end_lsn
    }

    /// Whether it was still running at a record starting at `at`: its first change lies before
    /// and its commit record at or after it.
    pub fn runs_at(&self, at: Lsn) -> bool {
        self.first_lsn < at && at <= self.commit_lsn
    }

    /// The start of the record that holds published row `row` (0-based) of the transaction: the
    /// LSN decoding gives its change (`ReorderBufferChange.lsn`), which pgoutput's Insert goes
    /// out under.
    ///
    /// PostgreSQL 15 `decode.c`: `DecodeInsert` queues each row's change at its record's start
    /// (`buf->origptr`; `heapam.c:heap_insert` logs one `XLOG_HEAP_INSERT` per row), and
    /// `DecodeMultiInsert` queues every row of one `XLOG_HEAP2_MULTI_INSERT` record
    /// (`heapam.c:heap_multi_insert`, used by `COPY`) at that record's start, so `multi_insert`
    /// rows share the first change's LSN. The model spreads single-row records evenly over the
    /// transaction's change WAL (`first_lsn..changes_end`) at `MAXALIGN` boundaries: each starts
    /// after the one before and before the commit record, where a server puts them one after
    /// another; only their order and their distinctness reach a connector.
    pub fn change_lsn(&self, row: u32, multi_insert: bool) -> Lsn {
        let rows = u64::from(self.published_rows.max(1));
        if multi_insert || rows == 1 {
            return self.first_lsn;
        }
        let span = self.changes_end.bytes() - self.first_lsn.bytes();
        let offset = span * u64::from(row.min(self.published_rows - 1)) / rows;
        self.first_lsn
            .plus(offset / MAXALIGN_BYTES * MAXALIGN_BYTES)
    }

    /// The ends of the transaction's change records, in WAL order: where a walsender's
    /// `sentPtr` stands after it has read each of them and before it reads the commit record —
    /// each later row's record start ([`Txn::change_lsn`]; records follow each other), and
    /// `changes_end` after the last. A keepalive sent then carries an LSN inside the transaction
    /// (PostgreSQL 15 `walsender.c:XLogSendLogical` sets `sentPtr = EndRecPtr` after every
    /// record, change records included, and `WalSndKeepaliveIfNecessary` runs between them).
    pub fn change_record_ends(&self, multi_insert: bool) -> Vec<Lsn> {
        let rows = if multi_insert {
            1
        } else {
            self.published_rows.max(1)
        };
        (1..rows)
            .map(|k| self.change_lsn(k, multi_insert))
            .chain([self.changes_end])
            .collect()
    }
}

/// A client transaction begun and not yet committed: its change records are in the WAL, its
/// commit record not yet ([`Wal::begin_txn`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpenTxn {
    pub xid: u32,
    pub first_lsn: Lsn,
    pub changes_end: Lsn,
    pub published_rows: u32,
}

/// The `restart_lsn` a running-xacts record starting at `at` offers the slot: the first change of
/// the oldest transaction still running there ([`Txn::runs_at`]; `running` are the first changes
/// of those), or with none the record's own position (the snapshot serialized there).
///
/// PostgreSQL 15 `snapbuild.c:SnapBuildProcessRunningXacts`: `txn =
/// ReorderBufferGetOldestTXN(builder->reorder)`; with one,
/// `LogicalIncreaseRestartDecodingForSlot(lsn, txn->restart_decoding_lsn)` — the restart point
/// in force when its first change was decoded (`reorderbuffer.c:ReorderBufferTXNByXid`), which
/// the model, whose records follow each other, puts at that change; with none,
/// `builder->last_serialized_snapshot`, the record's own. Either way the candidate is valid only
/// once a confirmation reaches `at` (`candidate_restart_valid = lsn`).
pub fn running_xacts_restart(at: Lsn, running: impl IntoIterator<Item = Lsn>) -> Lsn {
    running.into_iter().fold(at, Lsn::min)
}

/// Rounds `bytes` up to a multiple of [`MAXALIGN_BYTES`].
pub const fn maxalign(bytes: u64) -> u64 {
    bytes.div_ceil(MAXALIGN_BYTES) * MAXALIGN_BYTES
}

impl Wal {
    /// A client transaction inserts its change records (`change_bytes` in all) and then its
    /// commit record (`commit_bytes`); a synchronous commit flushes through it, an asynchronous
    /// one leaves it to the walwriter. Returns the transaction's LSNs.
    ///
    /// PostgreSQL 15 `xact.c:RecordTransactionCommit` inserts the commit record with
    /// `XactLogCommitRecord` and, under `synchronous_commit = on`, calls `XLogFlush(XactLastRecEnd)`;
    /// otherwise `XLogSetAsyncXactLSN`. Records follow each other at `MAXALIGN` boundaries
    /// (`xlog.c:ReserveXLogInsertLocation`). The model does not lay out page headers: a record
    /// that would cross a page boundary ends `SizeOfXLogShortPHD` bytes later in PostgreSQL.
    /// Never writes more than the buffers' pressure would ([`Wal::append`] is for bulk WAL).
    pub fn commit_txn(
        &mut self,
        xid: u32,
        change_bytes: u64,
        commit_bytes: u64,
        published_rows: u32,
        mode: CommitMode,
    ) -> Txn {
        let first_lsn = self.insert;
        let commit_lsn = first_lsn.plus(maxalign(change_bytes.max(1)));
        let end_lsn = commit_lsn.plus(maxalign(commit_bytes.max(1)));
        self.insert = end_lsn;
        if mode == CommitMode::Sync {
            self.commit_flush();
        }
        debug_assert!(self.is_ordered(), "{self:?}");
        let txn = Txn {
            xid,
            first_lsn,
            changes_end: commit_lsn,
            commit_lsn,
            end_lsn,
            published_rows,
            mode,
        };
        debug_assert!(txn.is_ordered(), "{txn:?}");
        txn
    }

    /// A client transaction inserts its change records (`change_bytes` in all) and stays open:
    /// other transactions may commit before it ([`Wal::commit_open`]), so that commit order is
    /// not begin order and its records interleave with theirs.
    ///
    /// PostgreSQL 15 `heapam.c:heap_insert` logs each row's record when the row is inserted
    /// (`XLogInsert`), not at commit; `xact.c:RecordTransactionCommit` logs the commit record at
    /// `COMMIT`. Nothing is flushed: the walwriter or another commit's flush may carry the
    /// change records to disk before the commit record exists.
    pub fn begin_txn(&mut self, xid: u32, change_bytes: u64, published_rows: u32) -> OpenTxn {
        let first_lsn = self.insert;
        self.insert = first_lsn.plus(maxalign(change_bytes.max(1)));
        OpenTxn {
            xid,
            first_lsn,
            changes_end: self.insert,
            published_rows,
        }
    }

    /// The open transaction `open` commits: its commit record (`commit_bytes`) at the insert
    /// pointer, after whatever committed since it began; a synchronous commit flushes through it
    /// (as in [`Wal::commit_txn`], `xact.c:RecordTransactionCommit`).
    pub fn commit_open(&mut self, open: OpenTxn, commit_bytes: u64, mode: CommitMode) -> Txn {
        let commit_lsn = self.insert;
        let end_lsn = commit_lsn.plus(maxalign(commit_bytes.max(1)));
        self.insert = end_lsn;
        if mode == CommitMode::Sync {
            self.commit_flush();
        }
        let txn = Txn {
            xid: open.xid,
            first_lsn: open.first_lsn,
            changes_end: open.changes_end,
            commit_lsn,
            end_lsn,
            published_rows: open.published_rows,
            mode,
        };
        debug_assert!(txn.is_ordered(), "{txn:?}");
        txn
    }
}

/// The end of the last whole transaction in `txns` (in commit order) whose commit record is
/// flushed, or `None`: what a logical reader bounded by `flush` can decode.
///
/// PostgreSQL 15 `walsender.c:logical_read_xlog_page` (and `xlogutils.c:read_local_xlog_page`
/// for SQL decoding) never return bytes beyond `GetFlushRecPtr()`, so a commit record is
/// decoded only once `end_lsn ≤ flush`.
pub fn last_flushed_commit(txns: &[Txn], flush: Lsn) -> Option<&Txn> {
    txns.iter().rev().find(|t| t.end_lsn <= flush)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Lsn = Lsn(0x153_E240);

    #[test]
    fn a_synchronous_commit_is_flushed_through_its_end() {
        let mut wal = Wal::at(BASE);
        let txn = wal.commit_txn(730, 61, 46, 1, CommitMode::Sync);
        assert_eq!(txn.first_lsn, BASE);
        assert_eq!(txn.commit_lsn, BASE.plus(64));
        assert_eq!(txn.end_lsn, BASE.plus(64 + 48));
        assert_eq!((wal.insert, wal.flush), (txn.end_lsn, txn.end_lsn));
    }

    #[test]
    fn an_asynchronous_commit_is_not_flushed() {
        let mut wal = Wal::at(BASE);
        let txn = wal.commit_txn(730, 61, 46, 1, CommitMode::Async);
        assert_eq!(wal.insert, txn.end_lsn);
        assert_eq!(wal.flush, BASE);
        assert_eq!(last_flushed_commit(&[txn], wal.flush), None);
        wal.walwriter_flush();
        assert_eq!(last_flushed_commit(&[txn], wal.flush), Some(&txn));
    }

    #[test]
    fn a_transaction_on_unpublished_tables_advances_the_wal_and_is_not_published() {
        let mut wal = Wal::at(BASE);
        let txn = wal.commit_txn(731, 61, 46, 0, CommitMode::Sync);
        assert!(!txn.is_published());
        assert!(wal.insert > BASE);
    }

    #[test]
    fn a_commit_record_takes_48_bytes_of_wal() {
        let mut wal = Wal::at(BASE);
        let txn = wal.commit_txn(730, 8192 - 48, COMMIT_RECORD_BYTES, 1, CommitMode::Sync);
        assert_eq!(txn.end_lsn.bytes() - txn.commit_lsn.bytes(), 48);
        assert_eq!(txn.end_lsn, BASE.plus(8192));
    }

    #[test]
    fn single_row_records_follow_each_other_and_multi_insert_rows_share_one() {
        let mut wal = Wal::at(BASE);
        let txn = wal.commit_txn(730, 8192 - 48, COMMIT_RECORD_BYTES, 3, CommitMode::Sync);
        let each: Vec<Lsn> = (0..3).map(|k| txn.change_lsn(k, false)).collect();
        assert_eq!(each[0], txn.first_lsn);
        assert!(each[0] < each[1] && each[1] < each[2] && each[2] < txn.commit_lsn);
        assert!(each.iter().all(|l| l.bytes() % MAXALIGN_BYTES == 0));
        assert!((0..3).all(|k| txn.change_lsn(k, true) == txn.first_lsn));
    }

    #[test]
    fn a_transaction_left_open_commits_after_one_begun_later() {
        let mut wal = Wal::at(BASE);
        let open = wal.begin_txn(730, 8192 - 48, 2);
        let t2 = wal.commit_txn(731, 8192 - 48, COMMIT_RECORD_BYTES, 1, CommitMode::Sync);
        let t1 = wal.commit_open(open, COMMIT_RECORD_BYTES, CommitMode::Sync);
        // Begun first, committed last: its changes before the other's, its commit after.
        assert!(t1.first_lsn < t2.first_lsn && t2.end_lsn <= t1.commit_lsn);
        assert_eq!(t1.changes_end, t2.first_lsn);
        assert!(t1.is_ordered() && t2.is_ordered());
        assert!((0..2).all(|k| t1.change_lsn(k, false) < t1.changes_end));
        assert_eq!(t1.change_record_ends(false).last(), Some(&t1.changes_end));
        // A running-xacts record right after the other's commit finds it still running.
        assert!(t1.runs_at(t2.end_lsn) && !t2.runs_at(t2.end_lsn));
        assert_eq!(
            running_xacts_restart(t2.end_lsn, [t1.first_lsn]),
            t1.first_lsn
        );
        assert_eq!(running_xacts_restart(t1.end_lsn, []), t1.end_lsn);
    }

    #[test]
    fn records_are_maxaligned() {
        assert_eq!(maxalign(1), 8);
        assert_eq!(maxalign(46), 48);
        assert_eq!(maxalign(48), 48);
    }
}
