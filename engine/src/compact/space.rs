//! What every part of a search reads or fills: the model and its fingerprints, the states
//! stored (looked up, stored, and their paths rebuilt), the running totals, and what the
//! liveness checker asks to be recorded.

use stateright::Model;
use walcheck_properties::system::FairClass;

use super::report::Error;
use super::visited::{Recent, Visited};
use crate::fingerprint::Fingerprinter;
use crate::search::Path;

/// A stored state's marks for the liveness checker (each row's goal and trigger).
pub type Marks<'a, S> = &'a (dyn Fn(&S) -> u32 + Sync);

/// What the compact engine records for the liveness checker while it explores (see
/// [`explore_hooked`](super::explore_hooked)): each state's edges with their fairness classes,
/// the classes enabled in it, and its marks.
pub struct Recording<'a, M: Model> {
    /// The fairness classes, at most [`liveness::MAX_CLASSES`](crate::liveness::MAX_CLASSES).
    pub fairness: &'a [FairClass<M::Action>],
    /// A stored state's marks (each row's goal and trigger,
    /// [`liveness::decide_rows`](crate::liveness::decide_rows)).
    pub marks: Marks<'a, M::State>,
}

/// The parts of a search the threads read.
pub(super) struct Space<'a, M: Model, P: Fingerprinter<M::State>> {
    pub(super) model: &'a M,
    pub(super) fingerprinter: &'a P,
    pub(super) visited: Visited<P::Print>,
    /// Fingerprints met lately, looked up before the table (see [`Recent`]).
    pub(super) recent: Recent<P::Print>,
    /// Each initial state's position in `init_states()`; they are stored first, at `0..`.
    pub(super) roots: Vec<u32>,
}

/// Running totals of a search.
#[derive(Copy, Clone, Default)]
pub(super) struct Totals {
    pub(super) states: u64,
    pub(super) lookups: u64,
    pub(super) max_depth: u64,
    pub(super) memory_bytes: u64,
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
