//! A parent's successors: made and fingerprinted ([`make`]), then each looked up in the table
//! and, when new, stored in the level being built ([`settle`]). Both a round on one thread and a
//! helped round go through them, so they store the same states in the same order.

use std::ops::ControlFlow;

use stateright::Model;

use super::budget::{admit, counted_bytes};
use super::level::Levels;
use super::report::Error;
use super::space::{Recording, Space, Totals};
use crate::fingerprint::{Fingerprint, Fingerprinter};
use crate::graph::Graph;
use crate::liveness;
use crate::search::Budget;
use crate::search::Limit;

/// A successor made and fingerprinted (`None` outside the boundary), waiting to be looked up.
pub(super) struct Made<S, F> {
    pub(super) position: usize,
    pub(super) classes: u32,
    pub(super) print: Option<F>,
    pub(super) state: S,
}

/// A made successor as [`settle`] takes it: owned, and moved into the level if it is new, or
/// borrowed from the run or batch that holds it, and cloned into the level if it is new. Either
/// way a duplicate, most successors, is never copied.
pub(super) trait Successor<S, F> {
    fn made(&self) -> &Made<S, F>;
    fn into_state(self) -> S;
}

impl<S, F> Successor<S, F> for Made<S, F> {
    #[inline(always)]
    fn made(&self) -> &Made<S, F> {
        self
    }
    #[inline(always)]
    fn into_state(self) -> S {
        self.state
    }
}

impl<S: Clone, F> Successor<S, F> for &Made<S, F> {
    #[inline(always)]
    fn made(&self) -> &Made<S, F> {
        self
    }
    #[inline(always)]
    fn into_state(self) -> S {
        self.state.clone()
    }
}

/// What storing a round's new states is bound by and fills in besides the search.
pub(super) struct Storing<'a, S> {
    pub(super) budget: &'a Budget,
    pub(super) depth: u64,
    /// Per new state stored, the totals once it was.
    pub(super) generated: &'a mut Vec<Totals>,
    pub(super) graph: Option<&'a mut Graph<S>>,
}

/// Makes the successors of `state`, stored at index `parent`, in action order, each
/// fingerprinted (`None` outside the boundary) and handed to `each`, which may end the making
/// (with a limit, say). Returns the fairness classes enabled in `state`, or what ended it.
///
/// Errors: more than 65,536 actions ([`Error::TooManyActions`]: an action's position is stored
/// in 16 bits), before any successor is made; or an error of `each`.
pub(super) fn make<M, P, E, B>(
    (model, fingerprinter): (&M, &P),
    (parent, state): (u32, &M::State),
    recording: Option<&Recording<'_, M>>,
    actions: &mut Vec<M::Action>,
    mut each: E,
) -> Result<ControlFlow<B, u32>, Error>
where
    M: Model,
    P: Fingerprinter<M::State>,
    E: FnMut(Made<M::State, P::Print>) -> Result<ControlFlow<B>, Error>,
{
    actions.clear();
    model.actions(state, actions);
    if actions.len() > usize::from(u16::MAX) + 1 {
        return Err(Error::TooManyActions {
            index: parent.into(),
            actions: actions.len(),
        });
    }
    let mut enabled = 0;
    for (position, action) in actions.drain(..).enumerate() {
        let classes = recording.map_or(0, |r| liveness::classes_of(r.fairness, &action));
        let Some(successor) = model.next_state(state, action) else {
            continue;
        };
        enabled |= classes;
        let print = model
            .within_boundary(&successor)
            .then(|| fingerprinter.fingerprint(&successor));
        let made = Made {
            position,
            classes,
            print,
            state: successor,
        };
        if let ControlFlow::Break(stop) = each(made)? {
            return Ok(ControlFlow::Break(stop));
        }
    }
    Ok(ControlFlow::Continue(enabled))
}

/// One successor `made` of state `parent` looked up: compared with the state its fingerprint
/// names when that is held whole (or, `verify`ing, rebuilt), or else stored, and with a graph
/// its edge added. Returns the limit that storing it would exceed, if one would. Only a new
/// successor is moved (or, borrowed, cloned) into the level: a duplicate is read in place.
#[inline(always)]
pub(super) fn settle<M, P, D>(
    space: &mut Space<'_, M, P>,
    (current, next, spare): Levels<'_, M::State>,
    (parent, verify): (u32, bool),
    made: D,
    storing: &mut Storing<'_, M::State>,
    totals: &mut Totals,
) -> Result<Option<Limit>, Error>
where
    M: Model,
    M::State: Eq + Clone,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
    D: Successor<M::State, P::Print>,
{
    let one = made.made();
    let (position, classes) = (one.position, one.classes);
    totals.states += 1;
    let Some(print) = one.print else {
        return Ok(None);
    };
    totals.lookups += 1;
    let target = match space.find(print) {
        Ok(stored) => {
            let successor = &one.state;
            let held = current.matches(stored, successor);
            let same = match held.or_else(|| next.matches(stored, successor)) {
                Some(same) => same,
                None if verify => space.rebuild(stored)?.last_state() == successor,
                None => true,
            };
            if !same {
                return Err(Error::Collision {
                    print: print.widen(),
                    stored: stored.into(),
                    parent: Some(parent.into()),
                    action: Some(position as u64),
                });
            }
            stored
        }
        Err(slot) => {
            let edges = storing.graph.as_ref().map(|g| g.counted());
            let (levels, budget) = ((current, &*next), storing.budget);
            let link = (edges, print, (parent, position as u16));
            if let Some(limit) = admit(&space.visited, levels, budget, link, true) {
                return Ok(Some(limit));
            }
            let index = space.insert(slot, print, parent, position as u16);
            next.push(made.into_state(), spare);
            totals.max_depth = storing.depth;
            let bytes = counted_bytes(&space.visited, current, next, edges);
            totals.memory_bytes = totals.memory_bytes.max(bytes);
            storing.generated.push(*totals);
            index
        }
    };
    if let Some(graph) = storing.graph.as_deref_mut() {
        graph.push_edge(target, classes);
    }
    Ok(None)
}

/// Each of `made`, successors of state `parent`, looked up in order as [`settle`] does, a new
/// one cloned into the level. Returns the limit that stopped it, if one did.
#[inline(always)]
pub(super) fn settle_all<M, P>(
    space: &mut Space<'_, M, P>,
    (current, next, spare): Levels<'_, M::State>,
    at: (u32, bool),
    made: &[Made<M::State, P::Print>],
    storing: &mut Storing<'_, M::State>,
    totals: &mut Totals,
) -> Result<Option<Limit>, Error>
where
    M: Model,
    M::State: Eq + Clone,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    for one in made {
        let levels = (current, &mut *next, &mut *spare);
        if let Some(limit) = settle(space, levels, at, one, storing, totals)? {
            return Ok(Some(limit));
        }
    }
    Ok(None)
}
