//! The WAL pointers of one PostgreSQL cluster: insert ≥ write ≥ flush, and a standby's replay.

use serde::{Deserialize, Serialize};

use crate::Lsn;

/// `wal_segment_size`: 16 MiB, initdb's default. Writing past a segment's end fsyncs it.
pub const WAL_SEGMENT_BYTES: u64 = 16 * 1024 * 1024;

/// How a transaction's commit waits for its WAL (the `synchronous_commit` setting).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommitMode {
    /// `synchronous_commit = on`: the backend flushes through its commit record before returning.
    Sync,
    /// `synchronous_commit = off`: the commit returns unflushed; the walwriter flushes it later.
    Async,
}

/// The WAL pointers, in bytes.
///
/// - `insert`: end of WAL reserved and copied into `wal_buffers` (`pg_current_wal_insert_lsn()`).
/// - `write`: end of WAL written to the kernel (`pg_current_wal_lsn()`).
/// - `flush`: end of WAL fsynced to disk (`pg_current_wal_flush_lsn()`).
/// - `replay`: end of WAL replayed (`pg_last_wal_replay_lsn()`). On a standby it follows what the
///   primary flushed and streamed, so `replay ≤ flush`. On a primary it is `0/0` (NULL) after a
///   start without recovery and the end of crash recovery after an immediate restart, frozen
///   there ([`Wal::crash_restart`], [`Wal::clean_restart`]).
///
/// Invariant, asserted by PostgreSQL 15 `xlog.c` and here after every change:
/// `replay ≤ flush ≤ write ≤ insert`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Wal {
    pub insert: Lsn,
    pub write: Lsn,
    pub flush: Lsn,
    pub replay: Lsn,
}

impl Wal {
    /// A quiet cluster: every pointer at `at`.
    pub const fn at(at: Lsn) -> Wal {
        Wal {
            insert: at,
            write: at,
            flush: at,
            replay: at,
        }
    }

    /// Whether `replay ≤ flush ≤ write ≤ insert`.
    pub fn is_ordered(&self) -> bool {
        self.replay <= self.flush && self.flush <= self.write && self.write <= self.insert
    }

    /// A statement inserts `bytes` of WAL; when the unwritten WAL no longer fits in
    /// `wal_buffers_bytes`, the inserting backend writes the oldest buffers out itself, without
    /// flushing them.
    ///
    /// PostgreSQL 15 `xlog.c:AdvanceXLInsertBuffer`: before a page is copied into the buffer that
    /// still holds unwritten WAL from `wal_buffers` pages earlier, the backend calls
    /// `XLogWrite` with `WriteRqst.Flush = 0` (counted in `pg_stat_wal.wal_buffers_full`). The
    /// page the insert pointer is on needs its buffer, so after the insertion the write pointer
    /// is at least `page_ceil(insert) − wal_buffers_bytes`. The model makes the statement's
    /// insertion and these writes one step: PostgreSQL does them inside the insertion, so no
    /// state with more unwritten WAL than `wal_buffers` is ever visible.
    pub fn append(&mut self, bytes: u64, page_bytes: u64, wal_buffers_bytes: u64) {
        self.insert = self.insert.plus(bytes);
        let must_write = self.insert.page_ceil(page_bytes).minus(wal_buffers_bytes);
        self.write_without_flush(must_write.min(self.insert));
        debug_assert!(self.is_ordered(), "{self:?}");
    }

    /// `XLogWrite` with `WriteRqst.Flush = 0`: write moves to `target`, flush stays, except that
    /// finishing a segment fsyncs it.
    ///
    /// PostgreSQL 15 `xlog.c:XLogWrite`: when a write reaches the end of a segment
    /// (`finishing_seg`) it calls `issue_xlog_fsync` and sets `LogwrtResult.Flush` to the write
    /// position, so flush reaches the last segment boundary the write passed.
    fn write_without_flush(&mut self, target: Lsn) {
        if target <= self.write {
            return;
        }
        let last_boundary = target.page_floor(WAL_SEGMENT_BYTES);
        if last_boundary > self.write {
            self.flush = self.flush.max(last_boundary);
        }
        self.write = target;
        debug_assert!(self.is_ordered(), "{self:?}");
    }

    /// A synchronous commit flushes through its commit record.
    ///
    /// PostgreSQL 15 `xact.c:RecordTransactionCommit` calls `xlog.c:XLogFlush(XactLastRecEnd)`,
    /// which writes and fsyncs up to the current insert position in one `XLogWrite`
    /// (`WriteRqst.Write = WriteRqst.Flush = insertpos`), so afterwards write == flush.
    pub fn commit_flush(&mut self) {
        self.write = self.insert;
        self.flush = self.insert;
        debug_assert!(self.is_ordered(), "{self:?}");
    }

    /// The walwriter writes completed pages out without flushing them: a cycle of
    /// `XLogBackgroundFlush` in which the flush is not yet due.
    ///
    /// PostgreSQL 15 `xlog.c:XLogBackgroundFlush`: it writes up to `LogwrtRqst.Write` rounded down
    /// to a page boundary and flushes only on its first call, when `wal_writer_delay` has passed
    /// since the last flush, or when `wal_writer_flush_after` blocks are unflushed; otherwise
    /// `WriteRqst.Flush = 0` ("no flushing, this time round"). Returns whether anything moved.
    /// Live rule `walwriter_writes_without_flush` (with [`Wal::walwriter_write_pages`]).
    pub fn walwriter_write(&mut self, page_bytes: u64) -> bool {
        let target = self.insert.page_floor(page_bytes);
        if target <= self.write {
            return false;
        }
        self.write_without_flush(target);
        debug_assert!(self.is_ordered(), "{self:?}");
        true
    }

    /// Where a walwriter cycle whose flush is not due writes to, as PostgreSQL's
    /// `XLogBackgroundFlush` chooses: the last whole page when it lies past the flush pointer,
    /// otherwise the insert pointer (`asyncXactLSN`: the last asynchronous commit's partial page,
    /// written without `flexible`).
    ///
    /// PostgreSQL 15 `xlog.c:XLogBackgroundFlush`: `WriteRqst.Write` is `LogwrtRqst.Write` backed
    /// off to a page boundary, replaced by `asyncXactLSN` when it is at or below
    /// `LogwrtResult.Flush`; with the flush not due `WriteRqst.Flush = 0`. The model takes both
    /// as the insert pointer, as [`Wal::walwriter_flush_pages`] does.
    pub fn walwriter_write_target(&self, page_bytes: u64) -> Lsn {
        let whole_pages = self.insert.page_floor(page_bytes);
        if whole_pages > self.flush {
            whole_pages
        } else {
            self.insert
        }
    }

    /// The walwriter writes without flushing through [`Wal::walwriter_write_target`]. Returns
    /// whether anything moved. With page-aligned inserts it is [`Wal::walwriter_write`].
    pub fn walwriter_write_pages(&mut self, page_bytes: u64) -> bool {
        let target = self.walwriter_write_target(page_bytes);
        if target <= self.write {
            return false;
        }
        self.write_without_flush(target);
        debug_assert!(self.is_ordered(), "{self:?}");
        true
    }

    /// The walwriter writes and flushes: a cycle of `XLogBackgroundFlush` in which the flush is
    /// due (see [`Wal::walwriter_write`]); asynchronous commits reach disk this way.
    ///
    /// PostgreSQL 15 `xlog.c:XLogBackgroundFlush`: when completed pages are already flushed it
    /// writes up to `asyncXactLSN` instead, so an asynchronous commit's partial page is flushed
    /// too; the model flushes through the insert pointer. Returns whether anything moved.
    pub fn walwriter_flush(&mut self) -> bool {
        if self.flush == self.insert {
            return false;
        }
        self.commit_flush();
        true
    }

    /// The walwriter writes and flushes as PostgreSQL's `XLogBackgroundFlush` does when the flush
    /// is due: through the last whole page when one lies past the flush pointer, otherwise
    /// through the insert pointer. Returns whether anything moved.
    ///
    /// PostgreSQL 15 `xlog.c:XLogBackgroundFlush`: the target is `LogwrtRqst.Write` backed off to
    /// a page boundary, written and flushed with `flexible`; only when that is already flushed
    /// does it take `asyncXactLSN` (the last asynchronous commit's end, the partial page
    /// included). So a flush with whole pages to write ends on a page boundary, usually inside a
    /// record, and the partial page holding the last commit record waits for a later cycle. The
    /// model takes `LogwrtRqst.Write` and `asyncXactLSN` as the insert pointer
    /// (`XLogInsertRecord` raises `LogwrtRqst.Write` to the end of each record that crosses a
    /// page); the flexible write's stop at the end of the `wal_buffers` ring is not modelled.
    /// With page-aligned inserts it is [`Wal::walwriter_flush`].
    pub fn walwriter_flush_pages(&mut self, page_bytes: u64) -> bool {
        let target = self.walwriter_write_target(page_bytes);
        if target <= self.flush {
            return false;
        }
        self.write = self.write.max(target);
        self.flush = target;
        debug_assert!(self.is_ordered(), "{self:?}");
        true
    }

    /// A checkpoint flushes all WAL inserted so far (its checkpoint record's `XLogFlush`).
    ///
    /// PostgreSQL 15 `xlog.c:CreateCheckPoint` inserts the checkpoint record and calls
    /// `XLogFlush` on it; the record's own bytes are below a page and are not modelled. Live rule
    /// `checkpoint_flushes_wal`.
    pub fn checkpoint_flush(&mut self) {
        self.commit_flush();
    }

    /// Immediate shutdown and restart of a primary (`pg_ctl -m immediate`, not an
    /// operating-system crash): WAL written to the kernel survives, WAL only in `wal_buffers` is
    /// lost, and recovery ends with all surviving WAL flushed. `pg_last_wal_replay_lsn()` is then
    /// the end of the WAL recovery replayed, and stays there however much WAL follows.
    ///
    /// PostgreSQL 15 `xlog.c:StartupXLOG` replays to the end of valid WAL, sets write and flush to
    /// it (`EndOfLog`) and requests an end-of-recovery checkpoint; the kernel page cache kept every
    /// written byte. `EndOfLog` is the end of the last complete record, which can be below the old
    /// write pointer when a written page ends mid-record; the model's whole pages end on records.
    /// `xlogrecovery.c:PerformWalRecovery` sets `lastReplayedEndRecPtr` to the end of each record
    /// it replays and nothing moves it once recovery is over (`xlogfuncs.c:pg_last_wal_replay_lsn`
    /// returns it; rule `replay_lsn_on_primary`).
    pub fn crash_restart(&mut self) {
        self.insert = self.write;
        self.flush = self.write;
        self.replay = self.write;
        debug_assert!(self.is_ordered(), "{self:?}");
    }

    /// An operating-system crash (power loss) and restart of a primary: WAL written to the kernel
    /// but not yet fsynced is lost with the page cache, so recovery ends at the old flush
    /// pointer, and insert, write, flush and replay are all there. PostgreSQL's own immediate
    /// stop keeps written WAL ([`Wal::crash_restart`]).
    ///
    /// PostgreSQL 15 `xlog.c:StartupXLOG` replays to the end of valid WAL on disk, which after a
    /// power loss is what `issue_xlog_fsync` made durable (`LogwrtResult.Flush`), and sets write
    /// and flush to it (`EndOfLog`). Model-only: a live server cannot lose its page cache
    /// without a machine of its own to power off (docs/model.md).
    pub fn os_crash_restart(&mut self) {
        self.write = self.flush;
        self.crash_restart();
    }

    /// A clean stop (`pg_ctl -m fast`) and start of a primary: the shutdown checkpoint flushes all
    /// WAL ([`Wal::checkpoint_flush`]), and the start runs no recovery, so
    /// `pg_last_wal_replay_lsn()` is NULL again (`replay` is `0/0`).
    ///
    /// PostgreSQL 15 `xlog.c:ShutdownXLOG` → `CreateCheckPoint(CHECKPOINT_IS_SHUTDOWN)`; at the
    /// start `StartupXLOG` finds a shutdown checkpoint and does not call
    /// `xlogrecovery.c:PerformWalRecovery`, so `lastReplayedEndRecPtr` stays invalid, which
    /// `xlogfuncs.c:pg_last_wal_replay_lsn` returns as NULL (rule `replay_lsn_on_primary`).
    pub fn clean_restart(&mut self) {
        self.checkpoint_flush();
        self.replay = Lsn::INVALID;
        debug_assert!(self.is_ordered(), "{self:?}");
    }

    /// A standby replays the WAL its primary has flushed and streamed to it.
    ///
    /// PostgreSQL 15 `walsender.c:XLogSendPhysical` sends up to `GetFlushRecPtr()`; the startup
    /// process (`xlogrecovery.c:PerformWalRecovery`) applies it. Returns whether anything moved.
    pub fn replay_to_flush(&mut self) -> bool {
        if self.replay == self.flush {
            return false;
        }
        self.replay = self.flush;
        debug_assert!(self.is_ordered(), "{self:?}");
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 8192;
    const BASE: Lsn = Lsn(0x100_0000);

    #[test]
    fn a_statement_larger_than_wal_buffers_writes_without_flushing() {
        let mut wal = Wal::at(BASE);
        wal.append(3 * PAGE, PAGE, 2 * PAGE);
        assert_eq!(wal.insert, BASE.plus(3 * PAGE));
        assert_eq!(wal.write, BASE.plus(PAGE));
        assert_eq!(wal.flush, BASE);
    }

    #[test]
    fn a_statement_that_fits_writes_nothing() {
        let mut wal = Wal::at(BASE);
        wal.append(2 * PAGE, PAGE, 2 * PAGE);
        assert_eq!(wal.write, BASE);
    }

    #[test]
    fn a_partial_page_still_needs_its_buffer() {
        let mut wal = Wal::at(BASE);
        wal.append(2 * PAGE + 100, PAGE, 2 * PAGE);
        assert_eq!(wal.write, BASE.plus(PAGE));
    }

    #[test]
    fn commit_flush_closes_the_gap() {
        let mut wal = Wal::at(BASE);
        wal.append(3 * PAGE, PAGE, 2 * PAGE);
        wal.commit_flush();
        assert_eq!((wal.write, wal.flush), (wal.insert, wal.insert));
    }

    #[test]
    fn walwriter_writes_whole_pages_only() {
        let mut wal = Wal::at(BASE);
        wal.append(PAGE + 10, PAGE, 4 * PAGE);
        assert!(wal.walwriter_write(PAGE));
        assert_eq!(wal.write, BASE.plus(PAGE));
        assert_eq!(wal.flush, BASE);
        assert!(!wal.walwriter_write(PAGE));
        assert!(wal.walwriter_flush());
        assert_eq!(wal.flush, wal.insert);
    }

    #[test]
    fn a_due_walwriter_flush_stops_at_the_last_whole_page_then_takes_the_partial_one() {
        let mut wal = Wal::at(BASE);
        // An asynchronous commit 2.5 pages long: two whole pages and a partial one.
        wal.append(2 * PAGE + PAGE / 2, PAGE, 512 * PAGE);
        assert!(wal.walwriter_flush_pages(PAGE));
        assert_eq!(
            (wal.write, wal.flush),
            (BASE.plus(2 * PAGE), BASE.plus(2 * PAGE))
        );
        // No whole page past the flush pointer: the next cycle takes asyncXactLSN.
        assert!(wal.walwriter_flush_pages(PAGE));
        assert_eq!((wal.write, wal.flush), (wal.insert, wal.insert));
        assert!(!wal.walwriter_flush_pages(PAGE));
        // Page-aligned inserts (the checker's statements): the same as walwriter_flush.
        let (mut a, mut b) = (Wal::at(BASE), Wal::at(BASE));
        a.append(3 * PAGE, PAGE, 2 * PAGE);
        b.append(3 * PAGE, PAGE, 2 * PAGE);
        assert_eq!(a.walwriter_flush_pages(PAGE), b.walwriter_flush());
        assert_eq!(a, b);
    }

    #[test]
    fn a_walwriter_write_not_due_takes_the_partial_page_once_whole_pages_are_flushed() {
        let mut wal = Wal::at(BASE);
        wal.append(2 * PAGE + PAGE / 2, PAGE, 512 * PAGE);
        // Whole pages past the flush pointer: written, the partial one left.
        assert!(wal.walwriter_write_pages(PAGE));
        assert_eq!((wal.write, wal.flush), (BASE.plus(2 * PAGE), BASE));
        // Already written, not flushed: still the whole pages' target, nothing more to write.
        assert!(!wal.walwriter_write_pages(PAGE));
        // Flushed through them: the asynchronous commit's partial page is written, not flushed.
        assert!(wal.walwriter_flush_pages(PAGE));
        wal.append(100, PAGE, 512 * PAGE);
        assert!(wal.walwriter_write_pages(PAGE));
        assert_eq!((wal.write, wal.flush), (wal.insert, BASE.plus(2 * PAGE)));
        // Page-aligned inserts: the same as walwriter_write.
        let (mut a, mut b) = (Wal::at(BASE), Wal::at(BASE));
        a.append(3 * PAGE, PAGE, 8 * PAGE);
        b.append(3 * PAGE, PAGE, 8 * PAGE);
        assert_eq!(a.walwriter_write_pages(PAGE), b.walwriter_write(PAGE));
        assert_eq!(a, b);
    }

    #[test]
    fn writing_past_a_segment_end_fsyncs_that_segment() {
        let segment = Lsn(WAL_SEGMENT_BYTES);
        let mut wal = Wal::at(segment.minus(PAGE));
        wal.append(4 * PAGE, PAGE, 2 * PAGE);
        assert_eq!(wal.write, segment.plus(PAGE));
        assert_eq!(wal.flush, segment);
    }

    #[test]
    fn crash_keeps_written_wal_and_loses_buffered_wal() {
        let mut wal = Wal::at(BASE);
        wal.append(3 * PAGE, PAGE, 2 * PAGE);
        wal.crash_restart();
        assert_eq!(
            wal,
            Wal {
                insert: BASE.plus(PAGE),
                write: BASE.plus(PAGE),
                flush: BASE.plus(PAGE),
                replay: BASE.plus(PAGE)
            }
        );
    }

    #[test]
    fn an_os_crash_loses_written_wal_that_was_not_flushed() {
        let mut wal = Wal::at(BASE);
        wal.append(3 * PAGE, PAGE, 2 * PAGE);
        assert_eq!((wal.write, wal.flush), (BASE.plus(PAGE), BASE));
        let mut immediate = wal;
        immediate.crash_restart();
        wal.os_crash_restart();
        assert_eq!(wal, Wal::at(BASE));
        assert!(wal.flush < immediate.flush);
    }

    #[test]
    fn a_primarys_replay_lsn_is_null_until_a_crash_and_then_frozen_at_the_end_of_recovery() {
        let mut wal = Wal::at(BASE);
        wal.replay = Lsn::INVALID; // a primary started without recovery: NULL
        wal.append(3 * PAGE, PAGE, 2 * PAGE);
        wal.crash_restart();
        let end_of_recovery = BASE.plus(PAGE);
        assert_eq!(wal.replay, end_of_recovery);
        wal.append(PAGE, PAGE, 2 * PAGE);
        wal.commit_flush();
        assert_eq!(wal.replay, end_of_recovery);
        // A clean restart flushes everything and replays nothing: NULL again.
        wal.append(PAGE, PAGE, 2 * PAGE);
        wal.clean_restart();
        assert_eq!(wal.flush, wal.insert);
        assert_eq!(wal.replay, Lsn::INVALID);
    }
}
