//! Parent links: each stored state's parent and action position, packed as varints in runs, so
//! that a path is rebuilt from the table without keeping the states.

use std::mem::size_of;

use crate::graph::push_lean;
use crate::table::NONE;

/// States per run of [`Links`]: reading a link decodes at most this many.
pub(super) const LINK_RUN: usize = 64;

/// Each stored state's parent link, packed. States are stored breadth-first, each level's in
/// the order of their parents, whose indices therefore never decrease from one stored state to
/// the next: each link is kept as the difference from the parent before it, then the position
/// of its action, both as LEB128 varints (two bytes for most states, against six unpacked).
/// Every [`LINK_RUN`]-th link's byte offset and the parent before it are kept aside, so that a
/// link is read by decoding at most a run. An initial state's link reads as parent 0, action 0
/// (`Space::roots` says which states are initial, and where they come from).
#[derive(Default)]
pub(super) struct Links {
    pub(super) bytes: Vec<u8>,
    /// Per run: the byte offset of its first link.
    pub(super) run_offsets: Vec<u64>,
    /// Per run: the parent before its first link.
    pub(super) run_parents: Vec<u32>,
    /// Links stored.
    pub(super) len: usize,
    /// The parent of the last link stored (0 before any).
    pub(super) last: u32,
}

impl Links {
    /// Bytes a run's offset and parent take aside.
    pub(super) const RUN_BYTES: usize = size_of::<u64>() + size_of::<u32>();

    /// The parent `parent` as stored: an initial state's [`NONE`] as the parent before it.
    pub(super) fn stored_parent(&self, parent: u32) -> u32 {
        if parent == NONE {
            self.last
        } else {
            parent
        }
    }

    pub(super) fn push(&mut self, parent: u32, action: u16) {
        if self.len % LINK_RUN == 0 {
            push_lean(&mut self.run_offsets, self.bytes.len() as u64);
            push_lean(&mut self.run_parents, self.last);
        }
        let parent = self.stored_parent(parent);
        // Parents never decrease; a wrapped difference would still decode, in five bytes.
        let (before, at) = (self.last, self.bytes.len());
        push_varint(&mut self.bytes, parent.wrapping_sub(self.last));
        push_varint(&mut self.bytes, action.into());
        self.last = parent;
        self.len += 1;
        // The pair of `get`: the link just written reads back as stored.
        debug_assert_eq!(
            Links::read_link(&self.bytes, at, before).0,
            (parent, action),
            "a parent link reads back as stored"
        );
    }

    /// The link whose bytes start at `at`, after the parent `before`, and where the next
    /// link's bytes start.
    pub(super) fn read_link(bytes: &[u8], at: usize, before: u32) -> ((u32, u16), usize) {
        let (delta, read) = read_varint(&bytes[at..]);
        let (position, read_action) = read_varint(&bytes[at + read..]);
        let action = u16::try_from(position).expect("an action position fits 16 bits");
        (
            (before.wrapping_add(delta), action),
            at + read + read_action,
        )
    }

    /// The parent index and action position of link `index`.
    pub(super) fn get(&self, index: usize) -> (u32, u16) {
        debug_assert!(index < self.len);
        let run = index / LINK_RUN;
        let mut at = self.run_offsets[run] as usize;
        let mut parent = self.run_parents[run];
        let mut action = 0;
        for _ in run * LINK_RUN..=index {
            ((parent, action), at) = Links::read_link(&self.bytes, at, parent);
        }
        (parent, action)
    }

    /// The bytes the links take: the packed links and each run's offset and parent.
    pub(super) fn bytes(&self) -> usize {
        self.bytes.len() + self.run_offsets.len() * Links::RUN_BYTES
    }

    /// [`Links::bytes`] once one more link, `(parent, action)`, is stored.
    pub(super) fn bytes_after(&self, parent: u32, action: u16) -> usize {
        let run = if self.len % LINK_RUN == 0 {
            Links::RUN_BYTES
        } else {
            0
        };
        let delta = self.stored_parent(parent).wrapping_sub(self.last);
        self.bytes() + run + varint_len(delta) + varint_len(action.into())
    }
}

/// Appends `value` as a LEB128 varint: seven bits a byte, low bits first, the high bit set on
/// every byte but the last.
pub(super) fn push_varint(bytes: &mut Vec<u8>, value: u32) {
    let (at, mut rest) = (bytes.len(), value);
    while rest >= 0x80 {
        push_lean(bytes, rest as u8 | 0x80);
        rest >>= 7;
    }
    push_lean(bytes, rest as u8);
    // The pair of `read_varint` and `varint_len`, which the memory budget counts with.
    debug_assert_eq!(read_varint(&bytes[at..]), (value, varint_len(value)));
}

/// The varint at the start of `bytes` and the bytes it takes.
pub(super) fn read_varint(bytes: &[u8]) -> (u32, usize) {
    let mut value = 0u32;
    for (i, &byte) in bytes.iter().enumerate() {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return (value, i + 1);
        }
    }
    unreachable!("a varint ends in a byte below 0x80")
}

/// The bytes [`push_varint`] takes for `value`.
pub(super) fn varint_len(value: u32) -> usize {
    (32 - value.leading_zeros() as usize).max(1).div_ceil(7)
}
