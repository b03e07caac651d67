//! A compact breadth-first engine: one search decides every `always` and `sometimes` property of a
//! model, storing a fingerprint and a parent link per state instead of the state itself.
//!
//! [`crate::reference`] stores every distinct state whole and searches once per property. This
//! engine keeps states only for the two levels it is working on (the frontier being expanded
//! and the level being built), whole, or packed by the model's [`Codec`] once a level would take
//! more than [`Options::pack_above_bytes`] whole; every state ever reached is otherwise a
//! fingerprint in an open-addressing table plus the index of its parent and the position of the
//! action that first reached it. A counterexample or witness is rebuilt at the end by
//! re-executing those actions from the initial state, checking each state reached against its
//! stored fingerprint.
//!
//! Not for: `eventually` properties (fair liveness is [`crate::liveness`]'s). `walcheck check`
//! runs it by default (`--engine compact`), one search per configuration for the properties its
//! selected entries name.
//!
//! # Same answers as [`crate::reference`]
//!
//! Breadth-first order does not depend on the property: level by level, and within a level in
//! the order states were generated (parent order, then action order). So the first state that
//! decides a property here is the one [`crate::reference::check`] stops at, the path to it is the
//! same, and so are the counts, by this rule:
//!
//! - `states` counts every state the model generates: each of `init_states()` in order, and each
//!   `Some` that `next_state` returns, duplicates and states outside the boundary included. A
//!   `None` from `next_state` is not a state and is not counted.
//! - A generated state inside the boundary whose fingerprint is new is stored, and a property is
//!   checked on a state when it is stored (on generation, not on expansion). The first stored
//!   state that violates an `always` or satisfies a `sometimes` decides it.
//! - A decided property's counts are those at the moment its deciding state was stored: `states`
//!   up to and including it, `unique_states` including it, `max_depth` its depth (states are
//!   stored in order of depth, so none stored before it is deeper).
//! - A property still undecided when the space is exhausted gets the totals.
//! - `max_states` and `max_memory_bytes` are checked when a new state is about to be stored; the
//!   state that would exceed one is counted in `states` but not stored, and every undecided
//!   property ends there, inconclusive. As in the checker, initial states are not held to
//!   `max_states` (they are to `max_memory_bytes`). The deadline and the interrupt are looked at
//!   between rounds of [`Options::chunk_states`] parents, so where a timed-out or interrupted
//!   search stops depends on the clock.
//!
//! # Threads
//!
//! A level is expanded in rounds of [`Options::chunk_states`] parents. On one thread a round
//! makes each parent's successors and looks them up in order, storing each new one as it is met
//! ([`expand_store`]). On N threads the round is *helped* ([`expand_store_helped`]): its parents
//! are cut into runs of 64, which all N threads take in turn to make their successors (decoding
//! each parent first when its block is packed; actions, `next_state`, fingerprint), while the
//! thread that owns the round looks the runs up and stores them, run after run in order, as one
//! thread does. Only that thread touches the table and the level being built, so the stored
//! order, and with it every count, path and verdict, is the same at any thread count; there is
//! no merge and no barrier within a round. The new states of the round are then checked against
//! the undecided properties on that thread (the conditions are cheap), keeping the first hit of
//! each property in stored order.
//!
//! The storing thread is what limits it: looking successors up and storing them is about 45 %
//! of one core's work on the large OLake configurations, so one search gains at most about 2.2×
//! from any number of threads (docs/checker.md, "Threads").
//!
//! # Across machines (design, not built)
//!
//! Distributed, the fingerprint table would be partitioned by fingerprint range, as distributed
//! TLC partitions its fingerprint set: worker `w` of `W` owns the fingerprints whose top bits
//! select `w` and holds those states' parent links, so a state's owner is a pure function of its
//! fingerprint. Each worker expands the part of the level it owns, sends every successor (its
//! fingerprint, parent and action position, and the state itself) to the successor's owner, and
//! after a barrier each owner merges what it received in (parent's global position, action
//! position) order — a parent's global position being its owner's offset in the level plus its
//! position there — which gives every machine the same order as one thread. Parent links would
//! then name (owner, local index); rebuilding a path asks each owner along the chain for one
//! link. Deciding a property is a reduction over workers of the first hit in global order at the
//! end of a level.

use std::hash::Hash;
use std::mem::size_of;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use stateright::{Expectation, Model, Property};

use walcheck_properties::codec::{Codec, Decode};
use walcheck_properties::system::FairClass;

pub use crate::fingerprint::{Fingerprint, Fingerprinter, Narrow, Xxh128, Xxh64};
use crate::graph::{push_lean, Graph, MAX_EDGES};
use crate::liveness;

pub use crate::search::Limit;
use crate::search::{self, Outcome, Path, Progress, Verdict};
use crate::table::{Slot, Table, NONE};

mod budget;
mod decide;
mod expand;
mod explore;
mod helped;
mod level;
mod links;
#[cfg(test)]
mod tests;
mod visited;

use budget::*;
use decide::*;
use expand::*;
pub use explore::*;
use helped::*;
use level::*;
use links::*;
use visited::*;

/// Parents expanded per round when [`Options::chunk_states`] is left at its default. It bounds
/// the successors a round holds whole, made and waiting to be looked up (on several threads,
/// helpers may make a whole round ahead of the thread storing it).
pub const CHUNK_STATES: usize = 4096;

/// Bytes of whole states a level being built holds before it packs them, when the model has a
/// [`Codec`]: below it a search pays nothing for packing (the whole catalogue is below it);
/// above it each state is encoded once and decoded once more to be expanded, and a packed
/// state is not compared with a duplicate of its fingerprint.
pub const PACK_ABOVE_BYTES: usize = 64 << 20;

/// Limits on one search. Exceeding one is an outcome ([`Verdict::Inconclusive`]), never a hang.
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

/// Why a search ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every `always` and `sometimes` property was decided.
    Decided,
    /// Every reachable state inside the boundary was stored.
    Exhausted,
    /// A limit ran out; every property not yet decided is [`Verdict::Inconclusive`].
    Limit(Limit),
}

/// One property's result.
#[derive(Clone, Debug)]
pub struct Checked<S, A> {
    pub name: &'static str,
    /// `None` for an `eventually` property, which this engine does not decide, and for one
    /// [`Hooks::select`] left out.
    pub outcome: Option<Outcome<S, A>>,
}

/// An estimate of the probability that two distinct states shared a fingerprint during the
/// search, assuming fingerprints behave as uniformly random `fingerprint_bits`-bit values.
///
/// It matters for the verdicts reached by exhausting the space (`always` holds, `sometimes`
/// violated): a collision may have pruned the state that would have decided otherwise. A
/// violation or witness is always a real path, rebuilt and checked.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CollisionEstimate {
    pub fingerprint_bits: u32,
    /// `g`: fingerprint look-ups, one per generated state inside the boundary.
    pub lookups: u64,
    /// `d`: distinct fingerprints stored.
    pub distinct: u64,
    /// TLC's "calculated (optimistic)" estimate, `d · (g − d) / 2^bits`: each of the `g − d`
    /// look-ups that found its fingerprint already stored could have been a new state that
    /// collided with one of the `d` stored, each with probability `2^−bits`.
    pub optimistic: f64,
    /// The birthday bound over the stored states, `d · (d − 1) / 2 / 2^bits`: the probability
    /// that some two of `d` distinct states share a fingerprint.
    pub birthday: f64,
}

impl CollisionEstimate {
    fn new(fingerprint_bits: u32, lookups: u64, distinct: u64) -> CollisionEstimate {
        let space = 2f64.powi(fingerprint_bits as i32);
        let d = distinct as f64;
        let g = lookups as f64;
        CollisionEstimate {
            fingerprint_bits,
            lookups,
            distinct,
            optimistic: d * ((g - d) / space),
            birthday: d * (d - 1.0).max(0.0) / 2.0 / space,
        }
    }
}

/// The result of one search over all the properties of a model.
#[derive(Clone, Debug)]
pub struct Report<S, A> {
    /// One entry per property, in `Model::properties` order.
    pub properties: Vec<Checked<S, A>>,
    pub stop: Stop,
    /// States generated, duplicates included. The search's counts are those of its end: when
    /// every property was decided, the moment the last of them was (whatever the round size);
    /// otherwise where it was exhausted or a limit stopped it.
    pub states: u64,
    /// Distinct states stored.
    pub unique_states: u64,
    /// Steps from an initial state to the deepest state stored.
    pub max_depth: u64,
    /// The most bytes the engine counted as stored at any point up to the search's end, by the
    /// rule of [`Budget::max_memory_bytes`]: table slots × (fingerprint + 4), the parent links
    /// packed (parent index, action position: about 2 bytes a state), states held whole ×
    /// `size_of` the state, states held packed at their bytes + 4. Heap memory a state owns,
    /// and a round's own buffers (successors made and waiting to be looked up, a packed block decoded to be
    /// expanded, the counts of its new states), are not counted.
    pub memory_bytes: u64,
    pub collision: CollisionEstimate,
}

impl<S, A> Report<S, A> {
    /// The outcome of the property called `name`; `None` if there is none or it is `eventually`.
    pub fn outcome(&self, name: &str) -> Option<&Outcome<S, A>> {
        self.properties
            .iter()
            .find(|checked| checked.name == name)
            .and_then(|checked| checked.outcome.as_ref())
    }
}

/// A search that could not give a trustworthy result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Two different states share a fingerprint: a new state, generated from the stored state
    /// `parent` by the action at `action` (`None` for an initial state), compared unequal to
    /// the stored state `stored` with the same fingerprint.
    Collision {
        print: u128,
        stored: u64,
        parent: Option<u64>,
        action: Option<u64>,
    },
    /// Re-executing the stored path to state `index` did not reproduce it at `step` (0 is the
    /// initial state): the model is not deterministic, or fingerprints collided.
    Rebuild {
        index: u64,
        step: usize,
        why: &'static str,
    },
    /// The rebuilt path to `property`'s deciding state ends in a state that does not decide it,
    /// so the stored fingerprint belonged to another state.
    NotDeciding { property: &'static str, index: u64 },
    /// State `index` has more enabled actions than a parent link can name (65,536).
    TooManyActions { index: u64, actions: usize },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Collision {
                print,
                stored,
                parent: Some(parent),
                action: Some(action),
            } => write!(
                f,
                "fingerprint collision: the successor of state {parent} by action {action} \
                 differs from stored state {stored}, both fingerprinted {print:#x}"
            ),
            Error::Collision { print, stored, .. } => write!(
                f,
                "fingerprint collision: an initial state differs from stored state {stored}, \
                 both fingerprinted {print:#x}"
            ),
            Error::Rebuild { index, step, why } => {
                write!(
                    f,
                    "rebuilding the path to state {index}, step {step}: {why}"
                )
            }
            Error::NotDeciding { property, index } => write!(
                f,
                "the rebuilt path to state {index} does not decide {property:?}: a fingerprint \
                 collision"
            ),
            Error::TooManyActions { index, actions } => write!(
                f,
                "state {index} has {actions} actions; a parent link names at most 65536"
            ),
        }
    }
}

impl std::error::Error for Error {}
