//! The memory budget: the bytes the engine counts for its table, links, levels and graph, and
//! the admission of a state under `Budget::max_memory_bytes`.

use std::mem::size_of;

use super::level::Level;
use super::visited::Visited;
use crate::fingerprint::Fingerprint;
use crate::graph::MAX_EDGES;
use crate::search::Budget;
use crate::search::Limit;
use crate::table::{Table, NONE};

/// The sizes [`Budget::max_memory_bytes`] counts.
#[derive(Copy, Clone)]
pub(super) struct Sizes {
    /// Table slots.
    pub(super) slots: usize,
    /// States stored.
    pub(super) stored: usize,
    /// Bytes of the packed parent links ([`Links::bytes`](super::links::Links::bytes)).
    pub(super) links: usize,
    /// Bytes of the states held of the level being expanded ([`Level::held_bytes`]).
    pub(super) current: usize,
    /// Bytes of the states of the level being built ([`Level::held_bytes`]).
    pub(super) next: usize,
    /// When a graph is recorded: the bytes a stored state takes in it, and its edges' bytes
    /// ([`Graph::counted`](crate::graph::Graph::counted)).
    pub(super) graph: Option<(usize, usize)>,
}

/// What the memory budget counts of a graph being recorded ([`Graph::counted`]): its edges,
/// the bytes a stored state takes in it, and its edges' bytes.
///
/// [`Graph::counted`]: crate::graph::Graph::counted
pub(super) type GraphCounts = (usize, usize, usize);

/// The bytes [`Budget::max_memory_bytes`] counts, as they stand.
pub(super) fn counted_bytes<F: Fingerprint, S>(
    visited: &Visited<F>,
    current: &Level<S>,
    next: &Level<S>,
    edges: Option<GraphCounts>,
) -> u64 {
    bytes::<F>(Sizes {
        slots: visited.table.slot_count(),
        stored: visited.len(),
        links: visited.links.bytes(),
        current: current.held_bytes(),
        next: next.held_bytes(),
        graph: edges.map(|(_, state, edges)| (state, edges)),
    })
}

/// The rule of [`Report::memory_bytes`]: table slots × (fingerprint + 4), the packed parent
/// links' bytes ([`Links::bytes`]), the bytes of the states held of the level being expanded
/// (its blocks not yet let go) and of the level being built ([`Level::held_bytes`]), and when
/// a graph is recorded, per stored state its bytes ([`Graph::state_bytes`]) and its edges' bytes
/// ([`Graph::edge_bytes`]).
///
/// [`Report::memory_bytes`]: super::Report::memory_bytes
/// [`Links::bytes`]: super::links::Links::bytes
/// [`Graph::state_bytes`]: crate::graph::Graph::state_bytes
/// [`Graph::edge_bytes`]: crate::graph::Graph::edge_bytes
pub(super) fn bytes<F: Fingerprint>(sizes: Sizes) -> u64 {
    let graph = sizes.graph.map_or(0, |(per_state, edge_bytes)| {
        sizes.stored * per_state + edge_bytes
    });
    (sizes.slots * Table::<F>::SLOT_BYTES + sizes.links + sizes.current + sizes.next + graph) as u64
}

/// The limit that storing one more state (into `next`), of fingerprint `print`, would exceed,
/// if any.
pub(super) fn admit<F: Fingerprint, S>(
    visited: &Visited<F>,
    (current, next): (&Level<S>, &Level<S>),
    budget: &Budget,
    (edges, print, (parent, action)): (Option<GraphCounts>, F, (u32, u16)),
    counts_to_max_states: bool,
) -> Option<Limit> {
    let stored = visited.len();
    if counts_to_max_states && budget.max_states.is_some_and(|max| stored as u64 >= max) {
        return Some(Limit::States);
    }
    let edges_full = edges.is_some_and(|(e, _, _)| e >= MAX_EDGES - 65_536);
    if stored >= NONE as usize - 1 || edges_full {
        return Some(Limit::Indices);
    }
    if let Some(max) = budget.max_memory_bytes {
        let after = bytes::<F>(Sizes {
            slots: visited.table.slots_after_insert(print),
            stored: stored + 1,
            links: visited.links.bytes_after(parent, action),
            current: current.held_bytes(),
            next: next.held_bytes() + size_of::<S>(),
            graph: edges.map(|(_, state, edges)| (state, edges)),
        });
        if after > max {
            return Some(Limit::Memory);
        }
    }
    None
}
