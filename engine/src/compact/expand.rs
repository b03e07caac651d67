//! One thread's expansion of a round of parents: make each parent's successors, look each up in
//! the table, and store the new ones in order.

use std::ops::ControlFlow;

use stateright::Model;

use super::level::{Levels, Parents};
use super::report::Error;
use super::space::{Recording, Space, Totals};
use super::successors::{make, settle, settle_all, Made, Storing};
use super::visited::Visited;
use crate::fingerprint::{Fingerprint, Fingerprinter};
use crate::search::Limit;

/// Tables larger than this (in bytes) are past the processor's caches: successors are then
/// looked up a parent's worth at a time, their slots fetched ahead together.
pub(super) const PREFETCH_ABOVE_BYTES: usize = 8 << 20;

/// Round `b` of the level being expanded, on one thread: each parent's successors are made
/// ([`make`]) and looked up in order, and each new one is stored as it is met, so a round stores
/// what a helped round ([`expand_store_helped`]) stores, in the same order and with the same
/// counts. Returns the limit that stopped it, if one did.
///
/// In a table larger than the caches each look-up waits for memory, so a parent's successors
/// then have their slots fetched ahead as they are made, and are looked up only once the next
/// parent's successors have been made: each fetch has that long to arrive ([`expand_batched`];
/// [`expand_direct`] otherwise).
///
/// [`expand_store_helped`]: super::helped::expand_store_helped
pub(super) fn expand_store<M, P>(
    space: &mut Space<'_, M, P>,
    (current, next, spare): Levels<'_, M::State>,
    (first, parents, verify): (usize, Parents<'_, M::State>, bool),
    recording: Option<&Recording<'_, M>>,
    mut storing: Storing<'_, M::State>,
    totals: &mut Totals,
) -> Result<Option<Limit>, Error>
where
    M: Model,
    M::State: Eq + Clone,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let mut actions = Vec::new();
    let mut ahead = Ahead::default();
    for offset in 0..parents.len() {
        let parent = current.start + (first + offset) as u32;
        let levels = (current, &mut *next, &mut *spare);
        let at = (parent, offset, verify);
        let making = (&parents, recording, &mut actions);
        let limit = if batched(&space.visited, parent) {
            expand_batched(space, levels, at, making, &mut ahead, &mut storing, totals)?
        } else {
            expand_direct(space, levels, at, making, &mut ahead, &mut storing, totals)?
        };
        if limit.is_some() {
            return Ok(limit);
        }
    }
    let levels = (current, &mut *next, &mut *spare);
    ahead.settle(space, levels, verify, &mut storing, totals)
}

/// Whether parent `parent`'s successors are looked up a parent late, their slots fetched ahead:
/// once the table is past the caches. The unit tests' tables are small: they take both ways,
/// three parents batched in a row, then one not.
#[inline(always)]
fn batched<F: Fingerprint>(visited: &Visited<F>, parent: u32) -> bool {
    visited.table.bytes() > PREFETCH_ABOVE_BYTES || (cfg!(test) && parent % 4 != 0)
}

/// What a parent's successors are made from: the round's parents, the recording, and a buffer
/// for the actions.
type Making<'a, 'r, M> = (
    &'a Parents<'r, <M as Model>::State>,
    Option<&'a Recording<'r, M>>,
    &'a mut Vec<<M as Model>::Action>,
);

/// Parent `parent` (at `offset` in the round) expanded in a table within the caches: the
/// successors of the parent before it, if they wait in `ahead`, are looked up first, then each
/// of its own as it is made, and its edges ended in a graph.
#[inline(always)]
fn expand_direct<M, P>(
    space: &mut Space<'_, M, P>,
    (current, next, spare): Levels<'_, M::State>,
    (parent, offset, verify): (u32, usize, bool),
    (parents, recording, actions): Making<'_, '_, M>,
    ahead: &mut Ahead<M::State, P::Print>,
    storing: &mut Storing<'_, M::State>,
    totals: &mut Totals,
) -> Result<Option<Limit>, Error>
where
    M: Model,
    M::State: Eq + Clone,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let levels = (current, &mut *next, &mut *spare);
    if let Some(limit) = ahead.settle(space, levels, verify, storing, totals)? {
        return Ok(Some(limit));
    }
    let machine = (space.model, space.fingerprinter);
    let each = |one: Made<M::State, P::Print>| {
        let levels = (current, &mut *next, &mut *spare);
        let limit = settle(space, levels, (parent, verify), one, storing, totals)?;
        Ok(limit.map_or(ControlFlow::Continue(()), ControlFlow::Break))
    };
    let making = parents.with(offset, |state| {
        make(machine, (parent, state), recording, actions, each)
    });
    let enabled = match making? {
        ControlFlow::Continue(enabled) => enabled,
        ControlFlow::Break(limit) => return Ok(Some(limit)),
    };
    if let Some(graph) = storing.graph.as_deref_mut() {
        graph.end_state(enabled);
    }
    Ok(None)
}

/// Parent `parent` (at `offset` in the round) expanded in a table past the caches: its
/// successors are made with their slots fetched ahead, then those of the parent before it are
/// looked up, and its own wait in `ahead` for the next parent's to be made.
#[inline(always)]
fn expand_batched<M, P>(
    space: &mut Space<'_, M, P>,
    levels: Levels<'_, M::State>,
    (parent, offset, verify): (u32, usize, bool),
    (parents, recording, actions): Making<'_, '_, M>,
    ahead: &mut Ahead<M::State, P::Print>,
    storing: &mut Storing<'_, M::State>,
    totals: &mut Totals,
) -> Result<Option<Limit>, Error>
where
    M: Model,
    M::State: Eq + Clone,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let machine = (space.model, space.fingerprinter);
    let made = &mut ahead.making;
    let each = |one: Made<M::State, P::Print>| {
        if let Some(print) = one.print {
            space.fetch_ahead(print);
        }
        made.push(one);
        Ok(ControlFlow::<std::convert::Infallible>::Continue(()))
    };
    let making = parents.with(offset, |state| {
        make(machine, (parent, state), recording, actions, each)
    });
    // The previous parent's successors are looked up before this parent's error, if any.
    if let Some(limit) = ahead.settle(space, levels, verify, storing, totals)? {
        return Ok(Some(limit));
    }
    let enabled = match making? {
        ControlFlow::Continue(enabled) => enabled,
        ControlFlow::Break(never) => match never {},
    };
    debug_assert!(
        ahead.made.is_empty(),
        "the previous parent's successors are looked up"
    );
    std::mem::swap(&mut ahead.making, &mut ahead.made);
    ahead.parent = Some((parent, enabled));
    Ok(None)
}

/// A parent's successors made, fingerprinted and fetched ahead, waiting to be looked up.
pub(super) struct Ahead<S, F> {
    pub(super) made: Vec<Made<S, F>>,
    /// The parent's index and its enabled classes, while there are successors waiting (once a
    /// limit or an error ends their look-up, `made` may keep the rest: the round is over).
    pub(super) parent: Option<(u32, u32)>,
    /// Where the next parent's successors are made, while `made` waits: the two swap once
    /// `made` is looked up.
    pub(super) making: Vec<Made<S, F>>,
}

impl<S, F> Default for Ahead<S, F> {
    fn default() -> Self {
        Ahead {
            made: Vec::new(),
            parent: None,
            making: Vec::new(),
        }
    }
}

impl<S, F> Ahead<S, F> {
    /// Looks up the waiting successors in order, as [`settle`] does, and ends their parent's
    /// edges in a graph. Returns the limit that stopped it, if one did.
    pub(super) fn settle<M, P>(
        &mut self,
        space: &mut Space<'_, M, P>,
        (current, next, spare): Levels<'_, S>,
        verify: bool,
        storing: &mut Storing<'_, S>,
        totals: &mut Totals,
    ) -> Result<Option<Limit>, Error>
    where
        M: Model<State = S>,
        S: Eq + Clone,
        M::Action: Clone,
        P: Fingerprinter<S, Print = F>,
    {
        let Some((parent, enabled)) = self.parent.take() else {
            return Ok(None);
        };
        let levels = (current, &mut *next, &mut *spare);
        if let Some(limit) =
            settle_all(space, levels, (parent, verify), &self.made, storing, totals)?
        {
            return Ok(Some(limit));
        }
        self.made.clear();
        if let Some(graph) = storing.graph.as_deref_mut() {
            graph.end_state(enabled);
        }
        Ok(None)
    }
}
