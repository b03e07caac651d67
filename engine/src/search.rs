//! What every engine shares: a search's budget, the path to a state, a search's outcome and
//! its progress. The verdict itself is [`walcheck_properties::verdict::Verdict`], which
//! systems also declare their expectations in.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use walcheck_properties::verdict::Verdict;

/// How many expanded states pass between deadline (and interrupt) checks and progress reports.
pub const OBSERVE_EVERY: u64 = 256;

/// Limits on one search, every engine's. Exceeding one is an outcome
/// (`Verdict::Inconclusive`), never a hang.
#[derive(Copy, Clone, Debug, Default)]
pub struct Budget {
    /// Stop once this many unique states are stored (initial states are always stored).
    pub max_states: Option<u64>,
    /// Stop at this instant (the compact engine looks between rounds of
    /// [`Options::chunk_states`](crate::compact::Options::chunk_states) parents).
    pub deadline: Option<Instant>,
    /// Stop once this flag is raised (the command line raises it on SIGINT or SIGTERM); looked
    /// at where the deadline is.
    pub interrupt: Option<&'static AtomicBool>,
    /// The compact engine's only: stop before its own stored bytes would exceed this — the
    /// fingerprint table, the parent links, and the states held (the level being built, and the
    /// blocks of the level being expanded not yet let go), whole at the `size_of` their type
    /// reports, packed at their bytes (see
    /// [`Report::memory_bytes`](crate::compact::Report::memory_bytes)). Where it stops depends
    /// on [`Options::chunk_states`](crate::compact::Options::chunk_states) (blocks are let go,
    /// and packed, a round at a time), never on the thread count. The reference engine does not
    /// measure its memory and leaves it unread; the liveness checker's decision takes its bound
    /// as an argument of its own ([`crate::liveness::decide_rows`]).
    pub max_memory_bytes: Option<u64>,
}

impl Budget {
    /// The limit that has run out by now of those a search looks at between states, not at
    /// each one: the interrupt, then the deadline.
    pub fn run_out(&self) -> Option<Limit> {
        run_out(self.deadline, self.interrupt)
    }
}

/// The limit of `deadline` and `interrupt` that has run out by now, if one has: the interrupt
/// first. Neither is looked at per state: a search asks between rounds (or every
/// [`OBSERVE_EVERY`] states).
pub(crate) fn run_out(deadline: Option<Instant>, interrupt: Option<&AtomicBool>) -> Option<Limit> {
    if interrupt.is_some_and(|raised| raised.load(Ordering::Relaxed)) {
        Some(Limit::Interrupt)
    } else if deadline.is_some_and(|d| Instant::now() >= d) {
        Some(Limit::Time)
    } else {
        None
    }
}

/// A path from an initial state: the initial state, then each action with the state it led to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path<S, A> {
    pub init: S,
    pub steps: Vec<(A, S)>,
}

impl<S, A> Path<S, A> {
    /// The state the path ends in.
    pub fn last_state(&self) -> &S {
        self.steps.last().map_or(&self.init, |(_, s)| s)
    }

    /// The actions, in order.
    pub fn actions(&self) -> impl Iterator<Item = &A> {
        self.steps.iter().map(|(a, _)| a)
    }
}

/// The result of one search.
#[derive(Clone, Debug)]
pub struct Outcome<S, A> {
    pub verdict: Verdict,
    /// States generated, duplicates included (initial states count).
    pub states: u64,
    /// Distinct states stored.
    pub unique_states: u64,
    /// Steps from an initial state to the deepest state stored.
    pub max_depth: u64,
    /// The counterexample (`always` violated) or the witness (`sometimes` holds).
    pub path: Option<Path<S, A>>,
}

/// How far a running search has got, for progress lines.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// States generated so far, duplicates included.
    pub states: u64,
    /// Distinct states stored so far.
    pub unique_states: u64,
    /// The deepest state stored so far.
    pub max_depth: u64,
}

/// Which limit ended a search.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    /// [`Budget::max_states`].
    States,
    /// [`Budget::deadline`].
    Time,
    /// [`Budget::max_memory_bytes`](Budget::max_memory_bytes).
    Memory,
    /// The table's 32-bit state indices: `u32::MAX` states are stored.
    Indices,
    /// [`Budget::interrupt`] was raised.
    Interrupt,
}

impl Limit {
    /// The name of the limit, as the budget spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Limit::States => "max_states",
            Limit::Time => "deadline",
            Limit::Memory => "max_memory_bytes",
            Limit::Indices => "32-bit state indices",
            Limit::Interrupt => "interrupt",
        }
    }
}
