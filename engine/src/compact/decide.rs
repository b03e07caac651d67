//! Deciding properties: each new state checked against the pending `always` and `sometimes`
//! properties, and the path to a deciding state rebuilt from the parent links.

use super::*;

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

impl<M: Model, P: Fingerprinter<M::State>> Space<'_, M, P> {
    /// The index stored with `print`, looked up first among the fingerprints met lately, or the
    /// table slot to store it at (as [`Visited::find`]). A fingerprint found is met again.
    #[inline]
    pub(super) fn find(&mut self, print: P::Print) -> Result<u32, usize> {
        let found = match self.recent.get(print) {
            Some(stored) => Ok(stored),
            None => self.visited.find(print),
        };
        if let Ok(stored) = found {
            self.recent.put(print, stored);
        }
        found
    }

    /// Stores `print` at `slot` (from [`Space::find`]) with its parent link; its index.
    #[inline]
    pub(super) fn insert(&mut self, slot: usize, print: P::Print, parent: u32, action: u16) -> u32 {
        let index = self.visited.insert(slot, print, parent, action);
        self.recent.put(print, index);
        index
    }

    /// Fetches `print`'s table slot ahead of its look-up, unless it was met lately.
    #[inline]
    pub(super) fn fetch_ahead(&self, print: P::Print) {
        if self.recent.get(print).is_none() {
            self.visited.table.prefetch(print);
        }
    }
}

impl<M, P> Space<'_, M, P>
where
    M: Model,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    /// Re-executes the stored path to state `index` from its initial state, checking that each
    /// state reached has the fingerprint stored at its place on the path.
    pub(super) fn rebuild(&self, index: u32) -> Result<Path<M::State, M::Action>, Error> {
        let mut chain = Vec::new();
        let mut at = index;
        while at as usize >= self.roots.len() {
            let (parent, action) = self.visited.links.get(at as usize);
            chain.push((at, action));
            at = parent;
        }
        chain.reverse();
        let fail = |step, why| Error::Rebuild {
            index: index.into(),
            step,
            why,
        };
        let init = self
            .model
            .init_states()
            .into_iter()
            .nth(self.roots[at as usize] as usize)
            .ok_or_else(|| fail(0, "the initial state is no longer generated"))?;
        if self.visited.find(self.fingerprinter.fingerprint(&init)) != Ok(at) {
            return Err(fail(
                0,
                "the initial state's fingerprint is not the stored one",
            ));
        }
        let mut path = Path {
            init,
            steps: Vec::with_capacity(chain.len()),
        };
        let mut actions = Vec::new();
        for (step, &(stored, position)) in chain.iter().enumerate() {
            let state = path.last_state();
            actions.clear();
            self.model.actions(state, &mut actions);
            let action = actions
                .get(usize::from(position))
                .cloned()
                .ok_or_else(|| fail(step + 1, "the stored action is no longer enabled"))?;
            let next = self
                .model
                .next_state(state, action.clone())
                .ok_or_else(|| fail(step + 1, "the stored action no longer leads anywhere"))?;
            if self.visited.find(self.fingerprinter.fingerprint(&next)) != Ok(stored) {
                return Err(fail(step + 1, "the state reached has another fingerprint"));
            }
            path.steps.push((action, next));
        }
        Ok(path)
    }
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
