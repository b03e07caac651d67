//! One thread's expansion of a round of parents: make each parent's successors, look each up in
//! the table, and store the new ones in order.

use super::*;

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
/// parent's successors have been made: each fetch has that long to arrive.
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
    let mut made: Vec<Made<M::State, P::Print>> = Vec::new();
    let mut ahead = Ahead::default();
    for offset in 0..parents.len() {
        let parent = current.start + (first + offset) as u32;
        // The unit tests' tables are small: they take both ways, three parents batched in a
        // row, then one not.
        let batch =
            space.visited.table.bytes() > PREFETCH_ABOVE_BYTES || (cfg!(test) && parent % 4 != 0);
        if !batch {
            let levels = (current, &mut *next, &mut *spare);
            if let Some(limit) = ahead.settle(space, levels, verify, &mut storing, totals)? {
                return Ok(Some(limit));
            }
        }
        let machine = (space.model, space.fingerprinter);
        let each = |one: Made<M::State, P::Print>| {
            if batch {
                if let Some(print) = one.print {
                    space.fetch_ahead(print);
                }
                made.push(one);
                return Ok(ControlFlow::Continue(()));
            }
            let levels = (current, &mut *next, &mut *spare);
            let at = (parent, verify);
            let limit = settle(space, levels, at, one, &mut storing, totals)?;
            Ok(limit.map_or(ControlFlow::Continue(()), ControlFlow::Break))
        };
        let making = parents.with(offset, |state| {
            make(machine, (parent, state), recording, &mut actions, each)
        });
        if batch {
            // The previous parent's successors are looked up before this parent's error, if any.
            let levels = (current, &mut *next, &mut *spare);
            if let Some(limit) = ahead.settle(space, levels, verify, &mut storing, totals)? {
                return Ok(Some(limit));
            }
        }
        let enabled = match making? {
            ControlFlow::Continue(enabled) => enabled,
            ControlFlow::Break(limit) => return Ok(Some(limit)),
        };
        if batch {
            debug_assert!(
                ahead.made.is_empty(),
                "the previous parent's successors are looked up"
            );
            std::mem::swap(&mut made, &mut ahead.made);
            ahead.parent = Some((parent, enabled));
        } else if let Some(graph) = storing.graph.as_deref_mut() {
            graph.end_state(enabled);
        }
    }
    let levels = (current, &mut *next, &mut *spare);
    ahead.settle(space, levels, verify, &mut storing, totals)
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
