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
//!
//! # Files
//!
//! Each file imports what it uses from the files below it, never from one above, so they read
//! from the leaves up: `options.rs` (the budget and options) and `report.rs` (what a search
//! gives); `links.rs` (parent links), `visited.rs` (the fingerprint table and its cache),
//! `level.rs` (the two levels' states); `space.rs` (what every part of a round reads: the model,
//! the states stored, the running totals); `budget.rs` (the memory budget); `successors.rs` (a
//! parent's successors made, looked up and stored); `expand.rs` (a round on one thread) and
//! `helped.rs` (on several); `decide.rs` (the properties decided, a path rebuilt); and
//! `explore.rs`, the entry points and the search from level to level.
//!
//! [`Codec`]: walcheck_properties::codec::Codec
//! [`expand_store`]: expand::expand_store
//! [`expand_store_helped`]: helped::expand_store_helped

mod budget;
mod decide;
mod expand;
mod explore;
mod helped;
mod level;
mod links;
mod options;
mod report;
mod space;
mod successors;
#[cfg(test)]
mod tests;
mod visited;

pub use crate::fingerprint::{Fingerprint, Fingerprinter, Narrow, Xxh128, Xxh64};
pub use crate::search::Limit;
pub use explore::{check, check_hooked, check_with, explore_hooked, Explored, Hooks, Search};
pub use options::{Options, CHUNK_STATES, PACK_ABOVE_BYTES};
pub use report::{Checked, CollisionEstimate, Error, Report, Stop};
pub use space::{Marks, Recording};
