//! How to run one search of the compact engine: its limits ([`Budget`]) and its options
//! ([`Options`]): threads, round size, duplicate verification and packing.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::search;

/// Parents expanded per round when [`Options::chunk_states`] is left at its default. It bounds
/// the successors a round holds whole, made and waiting to be looked up (on several threads,
/// helpers may make a whole round ahead of the thread storing it).
pub const CHUNK_STATES: usize = 4096;

/// Bytes of whole states a level being built holds before it packs them, when the model has a
/// [`Codec`](walcheck_properties::codec::Codec): below it a search pays nothing for packing (the
/// whole catalogue is below it); above it each state is encoded once and decoded once more to be
/// expanded, and a packed state is not compared with a duplicate of its fingerprint.
pub const PACK_ABOVE_BYTES: usize = 64 << 20;

/// Limits on one search. Exceeding one is an outcome
/// ([`Verdict::Inconclusive`](crate::search::Verdict::Inconclusive)), never a hang.
#[derive(Copy, Clone, Debug, Default)]
pub struct Budget {
    /// Stop once this many unique states are stored (initial states are always stored).
    pub max_states: Option<u64>,
    /// Stop at this instant (looked at between rounds of [`Options::chunk_states`] parents).
    pub deadline: Option<Instant>,
    /// Stop once this flag is raised (looked at where the deadline is).
    pub interrupt: Option<&'static AtomicBool>,
    /// Stop before the engine's own stored bytes would exceed this: the fingerprint table, the
    /// parent links, and the states held (the level being built, and the blocks of the level
    /// being expanded not yet let go), whole at the `size_of` their type reports, packed at
    /// their bytes (see [`Report::memory_bytes`]). Where it stops depends on
    /// [`Options::chunk_states`] (blocks are let go, and packed, a round at a time), never on
    /// the thread count.
    ///
    /// [`Report::memory_bytes`]: super::Report::memory_bytes
    pub max_memory_bytes: Option<u64>,
}

impl From<search::Budget> for Budget {
    fn from(budget: search::Budget) -> Budget {
        Budget {
            max_states: budget.max_states,
            deadline: budget.deadline,
            interrupt: budget.interrupt,
            max_memory_bytes: None,
        }
    }
}

/// How to run one search.
#[derive(Copy, Clone, Debug)]
pub struct Options {
    /// Threads that make each round's successors (at least 1; 0 is taken as 1; one of them
    /// stores them and checks the round). The results do not depend on it. [`check_hooked`]
    /// asks its [`Hooks::threads`] instead.
    ///
    /// [`check_hooked`]: super::check_hooked
    /// [`Hooks::threads`]: super::Hooks::threads
    pub threads: usize,
    pub budget: Budget,
    /// Parents expanded per round (at least 1). The results do not depend on it; it bounds the
    /// successors held whole, made and waiting to be looked up.
    pub chunk_states: usize,
    /// Also compare a new state with an older stored state whose fingerprint it shares, by
    /// rebuilding the older one from the initial state (one re-execution of its path per such
    /// duplicate). Without it only duplicates of states still held whole, in the two levels
    /// being worked on and not packed, are compared. For tests and small models.
    pub verify_duplicates: bool,
    /// A level being built packs its states with the model's [`Codec`], when it has one, once
    /// they would take more than this many bytes whole ([`PACK_ABOVE_BYTES`] by default; 0
    /// packs every level, `usize::MAX` none). The results do not depend on it.
    ///
    /// [`Codec`]: walcheck_properties::codec::Codec
    pub pack_above_bytes: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: 1,
            budget: Budget::default(),
            chunk_states: CHUNK_STATES,
            verify_duplicates: false,
            pack_above_bytes: PACK_ABOVE_BYTES,
        }
    }
}
