//! PureFileStorage's flush timer: Electric `shape_cache/pure_file_storage.ex` at 1.4.15
//! (`64a89a05f`, line numbers below; HEAD is the same logic, shifted).

use serde::{Deserialize, Serialize};

use super::write_loop::{AfterAppend, WriteLoop};
use super::Offset;

/// `write_timer`: the reference of the last timer armed by `schedule_flush`, and whether it has
/// fired (its message queued). A fired timer whose flush found the buffer already flushed stays
/// referenced — the stale `write_timer` that keeps `schedule_flush` from arming a new one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WriteTimer {
    /// `times_flushed` when it was armed: `perform_scheduled_flush`'s argument.
    pub requested: u8,
    pub fired: bool,
}

/// `write_log_items` (l.1202-1216): after an append, `cancel_flush_timer` cancels the timer
/// (`Process.cancel_timer`; a message already queued stays queued) and forgets it;
/// `schedule_flush: old` calls [`schedule_flush`].
pub fn write_log_items(writer: &WriteLoop, timer: &mut Option<WriteTimer>, after: AfterAppend) {
    match after {
        AfterAppend::CancelFlushTimer => *timer = None,
        AfterAppend::ScheduleFlush {
            times_flushed_at_entry,
        } => schedule_flush(writer, timer, times_flushed_at_entry),
    }
}

/// `schedule_flush(old)` (l.1242-1259): arms a new timer (cancelling any other) only if a flush
/// happened since `old` or no timer is referenced; the timer will run
/// `perform_scheduled_flush(times_flushed)` after `flush_period` (1 s).
pub fn schedule_flush(writer: &WriteLoop, timer: &mut Option<WriteTimer>, old: u8) {
    if writer.times_flushed != old || timer.is_none() {
        *timer = Some(WriteTimer {
            requested: writer.times_flushed,
            fired: false,
        });
    }
}

/// The armed timer fires: its `{Storage, {PFS, :perform_scheduled_flush, [n]}}` message is
/// queued (`send_after`). Returns `n`.
pub fn timer_fires(timer: &mut Option<WriteTimer>) -> u8 {
    let t = timer.as_mut().expect("an armed timer");
    debug_assert!(!t.fired);
    t.fired = true;
    t.requested
}

/// `perform_scheduled_flush(requested)` (l.1261-1268): if nothing flushed since `requested`,
/// `flush_buffer` and forget the timer; otherwise change nothing — so `write_timer` keeps the
/// reference of the timer that already fired. Returns what the flush persisted.
pub fn perform_scheduled_flush(
    writer: &mut WriteLoop,
    timer: &mut Option<WriteTimer>,
    requested: u8,
) -> Option<Offset> {
    if writer.times_flushed != requested {
        return None;
    }
    *timer = None;
    writer.flush_buffer()
}

/// `hibernate/1` (l.514) and `terminate/1` (l.518): `close_all_files` → `flush_and_close_all`.
/// Neither touches `write_timer`.
pub fn hibernate(writer: &mut WriteLoop) -> Option<Offset> {
    writer.flush_and_close_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hibernate_flush_under_an_armed_timer_leaves_it_stale() {
        let mut w = WriteLoop::default();
        let mut timer = None;
        let (_, after) = w.append_fragment_to_log(&[Offset::new(1, 1)], 2);
        write_log_items(&w, &mut timer, after);
        assert_eq!(
            timer,
            Some(WriteTimer {
                requested: 0,
                fired: false
            })
        );
        assert_eq!(hibernate(&mut w), Some(Offset::new(1, 1)));
        let n = timer_fires(&mut timer);
        assert_eq!(perform_scheduled_flush(&mut w, &mut timer, n), None);
        assert_eq!(
            timer,
            Some(WriteTimer {
                requested: 0,
                fired: true
            }),
            "stale reference kept"
        );
        // The next append asks for a timer but gets none: no flush since entry, a timer referenced.
        let (_, after) = w.append_fragment_to_log(&[Offset::new(2, 1)], 2);
        write_log_items(&w, &mut timer, after);
        assert_eq!(
            timer,
            Some(WriteTimer {
                requested: 0,
                fired: true
            })
        );
    }

    #[test]
    fn the_timer_flush_forgets_the_timer() {
        let mut w = WriteLoop::default();
        let mut timer = None;
        let (_, after) = w.append_fragment_to_log(&[Offset::new(1, 1)], 2);
        write_log_items(&w, &mut timer, after);
        let n = timer_fires(&mut timer);
        assert_eq!(
            perform_scheduled_flush(&mut w, &mut timer, n),
            Some(Offset::new(1, 1))
        );
        assert_eq!(timer, None);
    }
}
