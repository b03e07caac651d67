//! The WriteLoop's buffer and offsets: Electric `shape_cache/pure_file_storage/write_loop.ex`,
//! unchanged from #3783 (`48bbbe341`) through 1.4.15 (`64a89a05f`) to HEAD (`dc07a1e6c`).

use serde::{Deserialize, Serialize};

use super::Offset;

/// `writer_acc`: the buffered lines (their count and the oldest one's offset) and the offsets the
/// loop keeps. The inline-flush threshold (64 KiB upstream) is counted in lines.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct WriteLoop {
    pub buffer_lines: u8,
    /// The offset of the oldest buffered line, if any: what a crash or a stuck buffer loses.
    pub buffer_first: Option<Offset>,
    pub last_seen_offset: Offset,
    pub last_seen_txn_offset: Offset,
    pub last_persisted_offset: Offset,
    pub last_persisted_txn_offset: Offset,
    pub times_flushed: u8,
}

/// What `append_fragment_to_log!` asks of its storage after appending.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AfterAppend {
    /// The buffer ended empty: `cancel_flush_timer: true`.
    CancelFlushTimer,
    /// Lines are buffered: `schedule_flush: times_flushed` as it was on entry.
    ScheduleFlush { times_flushed_at_entry: u8 },
}

impl WriteLoop {
    /// A loop resumed from what is on disk (a consumer restarted after suspension): nothing
    /// buffered, everything seen persisted.
    pub fn resumed(&self) -> WriteLoop {
        WriteLoop {
            buffer_lines: 0,
            buffer_first: None,
            last_seen_offset: self.last_persisted_offset,
            last_seen_txn_offset: self.last_persisted_txn_offset,
            ..*self
        }
    }

    /// `append_fragment_to_log!` (write_loop.ex l.98-121): records `times_flushed` on entry, skips
    /// lines at or below `last_seen_txn_offset`, buffers the rest and flushes inline whenever the
    /// buffer reaches the threshold (`@delayed_write`, 64 KiB upstream, `inline_flush_lines`
    /// here). Returns the offsets the inline flushes persisted (each one a `:flushed` to send)
    /// and what to ask of the flush timer. It does not advance `last_seen_txn_offset`.
    pub fn append_fragment_to_log(
        &mut self,
        lines: &[Offset],
        inline_flush_lines: u8,
    ) -> (Vec<Offset>, AfterAppend) {
        let times_flushed_at_entry = self.times_flushed;
        let mut flushed = Vec::new();
        for &line in lines {
            if line <= self.last_seen_txn_offset {
                continue;
            }
            self.buffer_lines += 1;
            self.buffer_first.get_or_insert(line);
            self.last_seen_offset = line;
            if self.buffer_lines >= inline_flush_lines {
                flushed.extend(self.flush_buffer());
            }
        }
        let after = if self.buffer_lines == 0 {
            AfterAppend::CancelFlushTimer
        } else {
            AfterAppend::ScheduleFlush {
                times_flushed_at_entry,
            }
        };
        (flushed, after)
    }

    /// `flush_buffer` (write_loop.ex l.310-342): nothing at all on an empty buffer (no write, no
    /// message, since #3207); otherwise write and `datasync`, persist `last_seen_offset` and
    /// `last_seen_txn_offset`, count the flush, and return `last_seen_offset` — the offset of the
    /// `{Storage, :flushed, offset}` message upstream sends to its own process.
    pub fn flush_buffer(&mut self) -> Option<Offset> {
        if self.buffer_lines == 0 {
            return None;
        }
        self.buffer_lines = 0;
        self.buffer_first = None;
        self.last_persisted_offset = self.last_seen_offset;
        self.last_persisted_txn_offset = self.last_seen_txn_offset;
        self.times_flushed += 1;
        Some(self.last_seen_offset)
    }

    /// `flush_and_close_all` (l.78-86): `flush_buffer`, then close the files. Upstream returns
    /// only the accumulator; the offset is returned here for fix 2 to use.
    pub fn flush_and_close_all(&mut self) -> Option<Offset> {
        self.flush_buffer()
    }

    /// `signal_txn_commit` (l.366-400): `finalize_txn` sets `last_seen_txn_offset :=
    /// last_seen_offset`; `register_complete_txn` also sets `last_persisted_txn_offset` when the
    /// data is already persisted. It neither flushes nor sends anything.
    pub fn signal_txn_commit(&mut self) {
        self.last_seen_txn_offset = self.last_seen_offset;
        if self.last_seen_offset == self.last_persisted_offset {
            self.last_persisted_txn_offset = self.last_seen_offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: u8) -> Vec<Offset> {
        (1..=n).map(|op| Offset::new(1, op)).collect()
    }

    #[test]
    fn empty_flush_is_a_no_op() {
        let mut w = WriteLoop::default();
        assert_eq!(w.flush_buffer(), None);
        assert_eq!(w, WriteLoop::default());
    }

    #[test]
    fn below_threshold_buffers_and_asks_for_a_timer() {
        let mut w = WriteLoop::default();
        let (flushed, after) = w.append_fragment_to_log(&lines(1), 2);
        assert!(flushed.is_empty());
        assert_eq!(
            after,
            AfterAppend::ScheduleFlush {
                times_flushed_at_entry: 0
            }
        );
        assert_eq!((w.buffer_lines, w.last_seen_offset), (1, Offset::new(1, 1)));
    }

    #[test]
    fn reaching_the_threshold_flushes_inline_and_cancels_the_timer() {
        let mut w = WriteLoop::default();
        let (flushed, after) = w.append_fragment_to_log(&lines(2), 2);
        assert_eq!(flushed, [Offset::new(1, 2)]);
        assert_eq!(after, AfterAppend::CancelFlushTimer);
        assert_eq!(
            (w.last_persisted_offset, w.times_flushed),
            (Offset::new(1, 2), 1)
        );
    }

    #[test]
    fn commit_signal_moves_txn_offsets_only() {
        let mut w = WriteLoop::default();
        w.append_fragment_to_log(&lines(1), 2);
        w.signal_txn_commit();
        assert_eq!(w.last_seen_txn_offset, Offset::new(1, 1));
        assert_eq!(w.last_persisted_txn_offset, Offset::BEFORE_ALL);
        w.flush_buffer();
        assert_eq!(w.last_persisted_txn_offset, Offset::new(1, 1));
    }
}
