//! How to run one search of the compact engine: its options ([`Options`]): its limits (every
//! engine's [`Budget`]), threads, round size, duplicate verification and packing.

use crate::search::Budget;

/// Parents expanded per round when [`Options::chunk_states`] is left at its default. It bounds
/// the successors a round holds whole, made and waiting to be looked up (on several threads,
/// helpers may make a whole round ahead of the thread storing it).
pub const CHUNK_STATES: usize = 4096;

/// Bytes of whole states a level being built holds before it packs them, when the model has a
/// [`Codec`](walcheck_properties::codec::Codec): below it a search pays nothing for packing (the
/// whole catalogue is below it); above it each state is encoded once and decoded once more to be
/// expanded, and a packed state is not compared with a duplicate of its fingerprint.
pub const PACK_ABOVE_BYTES: usize = 64 << 20;

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
