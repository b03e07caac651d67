//! Breadth-first levels: the states of the level being expanded and the level being built, held
//! whole or, past `Options::pack_above_bytes`, packed by the system's codec.

use std::mem::size_of;

use walcheck_properties::codec::{Codec, Decode};

/// A block of a level: whole states, or the same states packed by a [`Codec`] (`ends[i]` is
/// where state `i`'s bytes end in `bytes`).
pub(super) enum Block<S> {
    Whole(Vec<S>),
    Packed { bytes: Vec<u8>, ends: Vec<u32> },
}

/// A block of the level being expanded, as the threads of a round read its parents.
pub(super) enum Parents<'a, S> {
    Whole(&'a [S]),
    /// Packed: parent `i` is `decode(&bytes[ends[i - 1]..ends[i]])`.
    Packed {
        bytes: &'a [u8],
        ends: &'a [u32],
        decode: &'a Decode<S>,
    },
}

impl<S> Parents<'_, S> {
    pub(super) fn len(&self) -> usize {
        match self {
            Parents::Whole(states) => states.len(),
            Parents::Packed { ends, .. } => ends.len(),
        }
    }

    /// `f` of parent `i`: read where it is held whole, or decoded first.
    pub(super) fn with<R>(&self, i: usize, f: impl FnOnce(&S) -> R) -> R {
        match self {
            Parents::Whole(states) => f(&states[i]),
            Parents::Packed {
                bytes,
                ends,
                decode,
            } => {
                let begin = i.checked_sub(1).map_or(0, |before| ends[before] as usize);
                // The pair of `Level::pack`: a packed block's ends rise to its bytes' length.
                debug_assert!(begin <= ends[i] as usize);
                debug_assert_eq!(ends.last().map(|&end| end as usize), Some(bytes.len()));
                f(&decode(&bytes[begin..ends[i] as usize]))
            }
        }
    }
}

impl<S> Default for Block<S> {
    fn default() -> Self {
        Block::Whole(Vec::new())
    }
}

/// One level of states, stored at indices `start..start + len`, in blocks of `block` states.
/// The level being expanded is expanded a block a round, and each block is let go once its
/// round is over: the states held are the rest of that level and the level being built. A
/// level with a codec packs its full blocks at the end of a round once its states, whole,
/// would take more than `pack_above` bytes; the round's new states stay whole until then, to
/// be checked.
pub(super) struct Level<S> {
    pub(super) start: u32,
    pub(super) len: usize,
    pub(super) block: usize,
    pub(super) blocks: Vec<Block<S>>,
    /// Whole states held (in blocks not let go).
    pub(super) whole: usize,
    /// Bytes of the packed blocks held, 4 a state for its end included.
    pub(super) packed_bytes: usize,
    pub(super) codec: Option<Codec<S>>,
    pub(super) pack_above: usize,
}

impl<S> Level<S> {
    pub(super) fn new(
        start: usize,
        block: usize,
        codec: Option<Codec<S>>,
        pack_above: usize,
    ) -> Level<S> {
        Level {
            start: start as u32,
            len: 0,
            block,
            blocks: Vec::new(),
            whole: 0,
            packed_bytes: 0,
            codec,
            pack_above,
        }
    }

    /// The next level, stored from index `start`: empty, packing as this one does.
    pub(super) fn after(&self, start: usize) -> Level<S> {
        Level::new(start, self.block, self.codec.clone(), self.pack_above)
    }

    /// Stores `state` at the level's end, in a block from `spare` when a new one is needed.
    pub(super) fn push(&mut self, state: S, spare: &mut Vec<Vec<S>>) {
        let block = self.block;
        let open = match self.blocks.last_mut() {
            Some(Block::Whole(states)) if states.len() < block => Some(states),
            _ => None,
        };
        match open {
            Some(states) => states.push(state),
            None => {
                // A level's first block grows as a small search needs; once a level has filled
                // one, its next blocks are taken whole, not grown by copying.
                let capacity = if self.blocks.is_empty() {
                    block.min(64)
                } else {
                    block
                };
                let mut states = spare.pop().unwrap_or_else(|| Vec::with_capacity(capacity));
                states.push(state);
                self.blocks.push(Block::Whole(states));
            }
        }
        self.len += 1;
        self.whole += 1;
    }

    /// The states of block `b` as a round's threads read them: whole, or packed, each decoded
    /// by the thread that needs it.
    pub(super) fn parents(&self, b: usize) -> Parents<'_, S> {
        match &self.blocks[b] {
            Block::Whole(states) => Parents::Whole(states),
            Block::Packed { bytes, ends } => {
                let codec = self.codec.as_ref().expect("a packed block has a codec");
                Parents::Packed {
                    bytes,
                    ends,
                    decode: &codec.decode,
                }
            }
        }
    }

    /// The states from position `from` on, as `(position, states)` runs, one per block. They
    /// are whole: a round's new states are packed only once its properties are checked.
    pub(super) fn runs_from(&self, from: usize) -> impl Iterator<Item = (usize, &[S])> {
        let block = self.block;
        self.blocks
            .iter()
            .enumerate()
            .skip(from / block)
            .map(move |(b, held)| {
                let Block::Whole(states) = held else {
                    unreachable!("the states of the round being checked are whole")
                };
                let skip = from.saturating_sub(b * block).min(states.len());
                (b * block + skip, &states[skip..])
            })
    }

    /// Packs the full blocks held whole, if the level has a codec and its states, whole, would
    /// take more than `pack_above` bytes; the emptied blocks go to `spare`.
    pub(super) fn pack(&mut self, spare: &mut Vec<Vec<S>>) {
        let Some(codec) = &self.codec else {
            return;
        };
        if self.len.saturating_mul(size_of::<S>()) <= self.pack_above {
            return;
        }
        for held in &mut self.blocks {
            let Block::Whole(states) = held else {
                continue;
            };
            if states.len() < self.block {
                continue;
            }
            let mut bytes = Vec::new();
            let mut ends = Vec::with_capacity(states.len());
            for state in states.iter() {
                (codec.encode)(state, &mut bytes);
                ends.push(u32::try_from(bytes.len()).expect("a packed block under 4 GiB"));
            }
            bytes.shrink_to_fit();
            self.whole -= states.len();
            self.packed_bytes += bytes.len() + 4 * ends.len();
            if let Block::Whole(states) = std::mem::replace(held, Block::Packed { bytes, ends }) {
                recycle(states, spare);
            }
        }
    }

    /// Bytes of the states held: whole ones at `size_of` the state, packed ones at their bytes
    /// and 4 for their end.
    pub(super) fn held_bytes(&self) -> usize {
        self.whole * size_of::<S>() + self.packed_bytes
    }

    /// Lets block `b` go (it has been expanded), keeping a whole block's allocation in `spare`
    /// for the next level's blocks.
    pub(super) fn release(&mut self, b: usize, spare: &mut Vec<Vec<S>>) {
        match std::mem::take(&mut self.blocks[b]) {
            Block::Whole(states) => {
                self.whole -= states.len();
                recycle(states, spare);
            }
            Block::Packed { bytes, ends } => {
                self.packed_bytes -= bytes.len() + 4 * ends.len();
            }
        }
    }
}

/// Keeps a block's allocation, emptied, in `spare` for the next blocks (two at most).
pub(super) fn recycle<S>(mut states: Vec<S>, spare: &mut Vec<Vec<S>>) {
    states.clear();
    if spare.len() < 2 {
        spare.push(states);
    }
}

impl<S: PartialEq> Level<S> {
    /// Whether the state stored at `index` is `state`, if it is in this level and held whole.
    /// A packed one is not compared (`None`, as for a state no longer held): encoding every
    /// duplicate to compare its bytes would cost more than the rest of its look-up.
    pub(super) fn matches(&self, index: u32, state: &S) -> Option<bool> {
        let i = index.checked_sub(self.start)? as usize;
        match self.blocks.get(i / self.block)? {
            Block::Whole(states) => states.get(i % self.block).map(|whole| whole == state),
            Block::Packed { .. } => None,
        }
    }
}

/// The level being expanded, the level being built, and blocks kept for its next blocks.
pub(super) type Levels<'a, S> = (&'a Level<S>, &'a mut Level<S>, &'a mut Vec<Vec<S>>);
