//! Deciding properties: each new state checked against the pending `always` and `sometimes`
//! properties, and the path to a deciding state rebuilt from the parent links.

use stateright::{Expectation, Model, Property};

use super::level::Level;
use super::report::Error;
use super::space::{Marks, Space, Totals};
use crate::fingerprint::Fingerprinter;
use crate::graph::Graph;
use crate::search::Path;

/// A property the search has still to decide.
pub(super) struct Pending<M: Model> {
    pub(super) property: usize,
    pub(super) condition: fn(&M, &M::State) -> bool,
    /// What decides it: `false` for `always` (a violation), `true` for `sometimes`.
    pub(super) wanted: bool,
}

/// Where a property stands.
#[derive(Copy, Clone)]
pub(super) enum Status {
    NotHandled,
    Pending,
    Decided { index: u32, states: u64, depth: u64 },
}

/// The new states of a round, to check: `next`'s from position `from` on, at `depth`, with
/// the totals once each was stored.
pub(super) struct Round<'a, S> {
    pub(super) next: &'a Level<S>,
    pub(super) from: usize,
    pub(super) depth: u64,
    pub(super) generated: &'a [Totals],
}

/// Checks the new states of `round` against the pending properties, and decides each at its
/// first hit in stored order; with `marks`, adds each new state's marks to `graph`. Returns the
/// position of the last deciding state when no property is left pending.
pub(super) fn decide<M>(
    model: &M,
    pending: &mut Vec<Pending<M>>,
    status: &mut [Status],
    round: Round<'_, M::State>,
    marks: Option<Marks<'_, M::State>>,
    graph: &mut Option<Graph<M::State>>,
) -> Option<usize>
where
    M: Model,
{
    let Round {
        next,
        from,
        depth,
        generated,
    } = round;
    if (pending.is_empty() && marks.is_none()) || from == next.len {
        return None;
    }
    let conditions: Vec<_> = pending.iter().map(|p| (p.condition, p.wanted)).collect();
    let mut hits: Vec<Option<usize>> = vec![None; pending.len()];
    // On one thread: the conditions are cheap, and starting threads for a round's new states
    // costs more than checking them (20 ms on one thread for 1.8 million states; a second more
    // when every round started a thread, on this 2-core machine under load).
    for (start, states) in next.runs_from(from) {
        for (hit, &(condition, wanted)) in hits.iter_mut().zip(&conditions) {
            if hit.is_none() {
                *hit = states
                    .iter()
                    .position(|state| condition(model, state) == wanted)
                    .map(|i| start + i);
            }
        }
        if let (Some(graph), Some(marks)) = (graph.as_mut(), marks) {
            for state in states {
                graph.marks.push(marks(state));
            }
        }
    }
    if pending.is_empty() {
        return None;
    }
    let mut decided = vec![false; pending.len()];
    let mut last = 0;
    for (p, pending) in pending.iter().enumerate() {
        let Some(position) = hits[p] else {
            continue;
        };
        last = last.max(position);
        status[pending.property] = Status::Decided {
            index: next.start + position as u32,
            states: generated[position - from].states,
            depth,
        };
        decided[p] = true;
    }
    let mut decided = decided.into_iter();
    pending.retain(|_| !decided.next().expect("one flag per pending property"));
    pending.is_empty().then_some(last)
}

/// The path to `property`'s deciding state `index`, checked to decide it.
pub(super) fn rebuild_deciding<M, P>(
    space: &Space<'_, M, P>,
    property: &Property<M>,
    index: u32,
) -> Result<Path<M::State, M::Action>, Error>
where
    M: Model,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let path = space.rebuild(index)?;
    let wanted = property.expectation == Expectation::Sometimes;
    if (property.condition)(space.model, path.last_state()) != wanted {
        return Err(Error::NotDeciding {
            property: property.name,
            index: index.into(),
        });
    }
    Ok(path)
}
