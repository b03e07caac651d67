//! The fingerprint table: an open-addressing map from fingerprints to the indices of their
//! states, in segments that grow one at a time, backed by huge pages where the system has them.
//! The compact engine stores every state's fingerprint here, and the liveness checker its graph's.

use std::mem::size_of;

use crate::fingerprint::Fingerprint;

/// A table slot's index when the slot is empty, and a root's parent.
pub(crate) const NONE: u32 = u32::MAX;

/// The fingerprint table's segments are picked by this many of a fingerprint's top bits: few
/// enough that a large table's segments are megabytes, backed by huge pages, and enough that
/// the one segment moving while it grows is a small part of the table.
pub(crate) const SEGMENT_BITS: u32 = 6;

/// Segments in the fingerprint table.
pub(crate) const SEGMENTS: usize = 1 << SEGMENT_BITS;

/// Slots in an empty segment.
pub(crate) const SEGMENT_SLOTS: usize = 8;

/// Segments at least this large grow by a quarter when more than 85 % full; smaller ones
/// double when more than 3/4 full.
pub(crate) const LARGE_SEGMENT_SLOTS: usize = 1 << 14;

/// One slot of the fingerprint table: a fingerprint and the index of its state, side by side so
/// that a probe reads one cache line, and packed to 4-byte alignment so that a 64-bit
/// fingerprint's slot is 12 bytes, not 16.
#[derive(Copy, Clone)]
#[repr(C, packed(4))]
pub(crate) struct Slot<F> {
    pub(crate) print: F,
    /// The stored index, or [`NONE`] in an empty slot.
    pub(crate) index: u32,
}

/// An open-addressing table from fingerprints to the indices of their states, in
/// [`SEGMENTS`] segments picked by a fingerprint's top bits, each probed linearly from a place
/// its low 32 bits pick, and each grown when it would be more than 3/4 full (more than 85 %, and
/// then by a quarter, once it is large: see [`grows`]). A table of one array that doubles holds
/// its old array and its new one at once while it moves, and is between 3/8 and 3/4 full;
/// segments move one at a time (1/64 of the table), and large ones stay between 68 % and 85 %
/// full.
pub(crate) struct Table<F> {
    segments: Vec<Vec<Slot<F>>>,
    /// Fingerprints stored in each segment.
    counts: Vec<u32>,
    /// Slots in all segments.
    slots: usize,
}

impl<F: Fingerprint> Table<F> {
    /// Bytes a slot takes.
    pub(crate) const SLOT_BYTES: usize = size_of::<Slot<F>>();

    pub(crate) fn new() -> Table<F> {
        Table {
            segments: (0..SEGMENTS).map(|_| empty_slots(SEGMENT_SLOTS)).collect(),
            counts: vec![0; SEGMENTS],
            slots: SEGMENTS * SEGMENT_SLOTS,
        }
    }

    /// Bytes its slots take.
    pub(crate) fn bytes(&self) -> usize {
        self.slots * Self::SLOT_BYTES
    }

    /// Slots in the table.
    pub(crate) fn slot_count(&self) -> usize {
        self.slots
    }

    pub(crate) fn segment_of(print: F) -> usize {
        (print.slot_bits() >> (64 - SEGMENT_BITS)) as usize
    }

    /// Slots the table will have once `print`, a new fingerprint, is stored.
    pub(crate) fn slots_after_insert(&self, print: F) -> usize {
        let segment = Table::<F>::segment_of(print);
        let slots = self.segments[segment].len();
        if grows(self.counts[segment] as usize + 1, slots) {
            self.slots - slots + grown(slots)
        } else {
            self.slots
        }
    }

    /// The segment of `print` and the slot its probe starts at.
    #[inline]
    pub(crate) fn home(&self, print: F) -> (usize, usize) {
        let segment = Table::<F>::segment_of(print);
        let len = self.segments[segment].len() as u64;
        (
            segment,
            (((print.slot_bits() & 0xffff_ffff) * len) >> 32) as usize,
        )
    }

    /// Asks the processor to fetch the slot `print`'s probe starts at into the cache, so that a
    /// [`Table::find`] soon after finds it there.
    #[inline]
    pub(crate) fn prefetch(&self, print: F) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let (segment, slot) = self.home(print);
            let at = self.segments[segment].as_ptr().wrapping_add(slot);
            // SAFETY: a prefetch is a hint that reads nothing the program sees and cannot fault,
            // whatever the address; SSE, its instruction set, is part of every x86_64 target.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = print;
    }

    /// The stored index of `print`, or the place of the empty slot where it would go.
    #[inline]
    pub(crate) fn find(&self, print: F) -> Result<u32, usize> {
        let (segment, mut slot) = self.home(print);
        let slots = &self.segments[segment];
        let len = slots.len();
        loop {
            let Slot {
                print: stored,
                index,
            } = slots[slot];
            if index == NONE {
                return Err(segment << 40 | slot);
            }
            if stored == print {
                return Ok(index);
            }
            slot += 1;
            if slot == len {
                slot = 0;
            }
        }
    }

    /// Stores `print` for `index` at `place` (from [`Table::find`]), growing its segment first
    /// if it would be too full ([`grows`]).
    pub(crate) fn insert(&mut self, mut place: usize, print: F, index: u32) {
        debug_assert_ne!(index, NONE, "indices fit below NONE");
        let segment = place >> 40;
        if grows(
            self.counts[segment] as usize + 1,
            self.segments[segment].len(),
        ) {
            self.grow(segment);
            place = self.find(print).expect_err("a new fingerprint");
        }
        // The pair of `find`'s `Err(place)`: the place is an empty slot of the print's own
        // segment, and the print is found at its index once stored.
        debug_assert_eq!(
            segment,
            self.home(print).0,
            "a place in the print's segment"
        );
        let slot = &mut self.segments[segment][place & ((1 << 40) - 1)];
        debug_assert_eq!({ slot.index }, NONE, "a place is an empty slot");
        *slot = Slot { print, index };
        self.counts[segment] += 1;
        debug_assert_eq!(self.find(print), Ok(index), "a stored print is found");
    }

    pub(crate) fn grow(&mut self, segment: usize) {
        let old_len = self.segments[segment].len();
        let slots = empty_slots(grown(old_len));
        let old = std::mem::replace(&mut self.segments[segment], slots);
        self.slots = self.slots - old_len + grown(old_len);
        for entry in old {
            if entry.index != NONE {
                let print = entry.print;
                let place = self.find(print).expect_err("fingerprints are distinct");
                self.segments[segment][place & ((1 << 40) - 1)] = entry;
            }
        }
    }

    /// The low 64 bits of each stored fingerprint, by index, for indices `0..count`.
    pub(crate) fn prints(&self, count: usize) -> Vec<u64> {
        let mut prints = vec![0; count];
        for entry in self.segments.iter().flatten() {
            let index = entry.index;
            if index != NONE && (index as usize) < count {
                prints[index as usize] = entry.print.slot_bits();
            }
        }
        prints
    }
}

/// Whether a segment of `slots` slots grows to hold `stored` fingerprints: past 3/4 full while
/// small, past 85 % once large. Linear probing stays cheap that full because a probe's next
/// slots are in the cache line it has just read, or the next one.
pub(crate) fn grows(stored: usize, slots: usize) -> bool {
    if slots < LARGE_SEGMENT_SLOTS {
        stored * 4 > slots * 3
    } else {
        stored * 20 > slots * 17
    }
}

/// The slots of a segment of `slots` slots once grown: doubled while small (a small search
/// moves few fingerprints), by a quarter once large (a large one keeps its table between 68 %
/// and 85 % full).
pub(crate) fn grown(slots: usize) -> usize {
    if slots < LARGE_SEGMENT_SLOTS {
        slots * 2
    } else {
        slots + slots / 4
    }
}

pub(crate) fn empty_slots<F: Fingerprint>(count: usize) -> Vec<Slot<F>> {
    let mut slots: Vec<Slot<F>> = Vec::with_capacity(count);
    advise_huge_pages(slots.as_mut_ptr().cast(), count * size_of::<Slot<F>>());
    let empty = Slot {
        print: F::default(),
        index: NONE,
    };
    slots.resize(count, empty);
    slots
}

/// Asks Linux to back the 2 MiB-aligned part of `bytes` bytes at `start`, memory not yet
/// written, with huge pages: a probe of a table larger than the caches then seldom misses the
/// processor's page-translation cache as well. Below a few megabytes it is not worth asking.
pub(crate) fn advise_huge_pages(start: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE_BYTES: usize = 2 << 20;
        if bytes < 2 * HUGE_PAGE_BYTES {
            return;
        }
        let first = (start as usize).next_multiple_of(HUGE_PAGE_BYTES);
        let end = (start as usize + bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
        if end > first {
            // SAFETY: the range lies inside one live allocation of this table; the advice
            // changes how the kernel backs its pages, never their contents, and a refusal (an
            // error return) is harmless.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}
