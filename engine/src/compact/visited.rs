//! The states stored so far: each one's fingerprint in the table with its parent link, and a
//! small cache of the fingerprints looked up most recently.

use super::links::Links;
use crate::fingerprint::Fingerprint;
use crate::table::{Slot, Table, NONE};

/// Every state stored, in the order stored: its fingerprint in a [`Table`], and its parent link.
pub(super) struct Visited<F> {
    pub(super) table: Table<F>,
    pub(super) links: Links,
}

impl<F: Fingerprint> Visited<F> {
    pub(super) fn new() -> Visited<F> {
        Visited {
            table: Table::new(),
            links: Links::default(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.links.len
    }

    pub(super) fn find(&self, print: F) -> Result<u32, usize> {
        self.table.find(print)
    }

    /// Stores `print` at `slot` (from [`Visited::find`]) and returns its index.
    pub(super) fn insert(&mut self, slot: usize, print: F, parent: u32, action: u16) -> u32 {
        debug_assert!(self.len() < NONE as usize, "indices fit below NONE");
        let index = self.len() as u32;
        self.table.insert(slot, print, index);
        self.links.push(parent, action);
        index
    }
}

/// Slots in [`Recent`]: 12 bytes each with 64-bit fingerprints (384 KiB, within a core's
/// second-level cache), 20 with 128-bit ones (640 KiB).
pub(super) const RECENT_SLOTS: usize = 1 << 15;

/// Fingerprints looked up or stored lately, with their states' indices, in a direct-mapped
/// array that stays in the processor's caches. Most duplicates are of a state met shortly
/// before (two parents in a level reach one state); found here, they cost no fetch from a
/// table larger than the caches. It only repeats what the table holds, so no result depends
/// on it. It holds nothing, and takes no memory, until [`Recent::start`]: a table within the
/// caches gains nothing from it.
pub(super) struct Recent<F> {
    pub(super) slots: Vec<Slot<F>>,
}

impl<F: Fingerprint> Recent<F> {
    pub(super) fn new() -> Recent<F> {
        Recent { slots: Vec::new() }
    }

    /// Makes room for [`RECENT_SLOTS`] fingerprints, if it has not yet.
    pub(super) fn start(&mut self) {
        if self.slots.is_empty() {
            let empty = Slot {
                print: F::default(),
                index: NONE,
            };
            self.slots = vec![empty; RECENT_SLOTS];
        }
    }

    pub(super) fn place(print: F) -> usize {
        (print.slot_bits() >> 32) as usize & (RECENT_SLOTS - 1)
    }

    /// The index stored with `print`, if it was met lately.
    pub(super) fn get(&self, print: F) -> Option<u32> {
        let &Slot { print: held, index } = self.slots.get(Self::place(print))?;
        (index != NONE && held == print).then_some(index)
    }

    pub(super) fn put(&mut self, print: F, index: u32) {
        if let Some(slot) = self.slots.get_mut(Self::place(print)) {
            *slot = Slot { print, index };
        }
    }
}
