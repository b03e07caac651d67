//! Heap bytes per thread: a global allocator that counts what each thread holds, so that a
//! search (single-threaded, start to end on one thread) can report the most heap it held, and
//! from that the bytes each stored state costs.
//!
//! Why our own and not a crate: the allocator-statistics crates (`stats_alloc`, `cap`) count for
//! the whole process, and `check --threads 2` runs two searches at once; a per-thread count needs
//! only the two thread-local cells below. A binary opts in with
//! `#[global_allocator] static A: walcheck::heap::Counting = walcheck::heap::Counting;` (the
//! `walcheck` binary, the `bench_report` example and the harness tests do); without it [`measure`]
//! reports `None`.
//!
//! Counts are of bytes requested, not of the allocator's own overhead or of pages the process
//! touched (that is `peak_rss_bytes`). Memory allocated on one thread and freed on another moves
//! the counts of both; a search does neither.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator, counting each thread's live heap bytes and their high-water mark.
pub struct Counting;

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Bytes this thread has allocated and not freed (negative when it frees others' memory).
    static LIVE: Cell<i64> = const { Cell::new(0) };
    /// The most `LIVE` has been since the last [`measure`] began on this thread.
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

/// Notes that allocations go through [`Counting`] (whichever of `alloc` and `alloc_zeroed` comes
/// first; `realloc` and `dealloc` only follow one of them).
fn installed() {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

fn add(bytes: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes as i64;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn sub(bytes: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get() - bytes as i64));
}

// SAFETY: every call is forwarded unchanged to `System`; the counting touches only
// thread-local cells with constant initialisers, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        installed();
        let ptr = System.alloc(layout);
        if !ptr.is_null() {
            add(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        sub(layout.size());
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        installed();
        let ptr = System.alloc_zeroed(layout);
        if !ptr.is_null() {
            add(layout.size());
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = System.realloc(ptr, layout, new_size);
        if !new.is_null() {
            sub(layout.size());
            add(new_size);
        }
        new
    }
}

/// Runs `f` on this thread and returns its result with the most heap, in bytes, this thread held
/// during `f` beyond what it held when `f` began; `None` when [`Counting`] is not the global
/// allocator. Calls do not nest: an inner call restarts the outer one's high-water mark.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Option<u64>) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let value = f();
    let peak = PEAK.with(Cell::get);
    let grown = (peak - before).max(0) as u64;
    (value, INSTALLED.load(Ordering::Relaxed).then_some(grown))
}
