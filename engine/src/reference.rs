//! The reference engine: walcheck's own breadth-first checker over any `stateright::Model`,
//! storing every state whole, one search per property. The compact engine ([`crate::compact`])
//! gives its answers, and the tests hold it to them.
//!
//! Why not stateright's BFS: in 0.31 it keeps one discovery per property and overwrites earlier
//! ones while another property is pending, so its paths are often not the shortest; it ignores
//! `.timeout()` with one thread and overshoots `target_state_count`. This checker searches for one
//! property at a time, single-threaded and in action order, so that
//! - a counterexample (or witness) is a shortest path, and among the shortest the one with the
//!   smallest action indices, step by step (breadth-first order is lexicographic order of paths);
//! - the same model gives the same result, byte for byte, on every run;
//! - a budget (`max_states`, a deadline, an interrupt) stops the search at once and reports it
//!   inconclusive.
//!
//! stateright's own checkers (DFS with threads and symmetry, simulation, Explorer) stay usable on
//! the same models.

use std::collections::VecDeque;
use std::hash::Hash;

use indexmap::map::Entry;
use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;
use stateright::{Expectation, Model, Property};

use crate::search::{Budget, Outcome, Path, Progress, Verdict, OBSERVE_EVERY};

/// The stored states, in the order they were first reached, each with the index of its parent and
/// the action that reached it.
///
/// Hashed with rustc's Fx hash, not std's SipHash: states are small structs of integers, and
/// SipHash took 72% of the instructions of `walcheck check olake-bootstrap:master` (callgrind).
/// The hasher decides nothing visible: an `IndexMap` iterates and indexes in insertion order.
type Seen<S, A> = IndexMap<S, Option<(usize, A)>, FxBuildHasher>;
/// Searches `model` breadth-first for `property` within `budget`.
///
/// `always` stops at the first violating state, `sometimes` at the first satisfying one; each
/// returns the path to it. `eventually` is not decided by this checker (fair liveness is a later
/// checker's): it returns `Err` naming the property.
pub fn check<M>(
    model: &M,
    property: &Property<M>,
    budget: &Budget,
) -> Result<Outcome<M::State, M::Action>, String>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    check_observed(model, property, budget, &mut |_| {})
}

/// [`check`], telling `observe` how far the search has got every [`OBSERVE_EVERY`] expanded
/// states. Observing never changes the outcome.
pub fn check_observed<M>(
    model: &M,
    property: &Property<M>,
    budget: &Budget,
    observe: &mut dyn FnMut(Progress),
) -> Result<Outcome<M::State, M::Action>, String>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let mut search = Search::new(model, property)?;
    if let Some(index) = search.store_inits() {
        return Ok(search.found(index));
    }
    let mut actions = Vec::new();
    let mut expanded: u64 = 0;
    while let Some(index) = search.queue.pop_front() {
        expanded += 1;
        if expanded % OBSERVE_EVERY == 0 {
            if budget.run_out().is_some() {
                search.outcome.verdict = Verdict::Inconclusive;
                break;
            }
            observe(Progress {
                states: search.outcome.states,
                unique_states: search.seen.len() as u64,
                max_depth: search.outcome.max_depth,
            });
        }
        match search.expand(index, budget, &mut actions) {
            None => {}
            Some(Ended::Found(index)) => return Ok(search.found(index)),
            Some(Ended::MaxStates) => {
                search.outcome.verdict = Verdict::Inconclusive;
                break;
            }
        }
    }
    search.outcome.unique_states = search.seen.len() as u64;
    Ok(search.outcome)
}

/// One search of [`check_observed`] under way: the states stored, their depths, those waiting
/// to be expanded, and the outcome so far.
struct Search<'a, M: Model> {
    model: &'a M,
    property: &'a Property<M>,
    /// What decides the property: `false` for `always` (a violation), `true` for `sometimes`.
    wanted: bool,
    /// Each stored state with the index of its parent and the action that first reached it.
    seen: Seen<M::State, M::Action>,
    depth: Vec<u32>,
    queue: VecDeque<usize>,
    outcome: Outcome<M::State, M::Action>,
}

/// Why expanding a state ended the search.
enum Ended {
    /// The state stored at this index decides the property.
    Found(usize),
    /// [`Budget::max_states`] states are stored.
    MaxStates,
}

impl<'a, M> Search<'a, M>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    /// A search for `property`, with nothing stored yet; `Err` for an `eventually` property.
    fn new(model: &'a M, property: &'a Property<M>) -> Result<Self, String> {
        let wanted = match property.expectation {
            Expectation::Always => false,
            Expectation::Sometimes => true,
            Expectation::Eventually => {
                return Err(format!("property {:?} is `eventually`: the breadth-first checker decides only always and sometimes", property.name));
            }
        };
        let exhausted_verdict = if wanted {
            Verdict::Violated
        } else {
            Verdict::Holds
        };
        Ok(Search {
            model,
            property,
            wanted,
            seen: Seen::default(),
            depth: Vec::new(),
            queue: VecDeque::new(),
            outcome: Outcome {
                verdict: exhausted_verdict,
                states: 0,
                unique_states: 0,
                max_depth: 0,
                path: None,
            },
        })
    }

    /// Whether the state stored at `index` decides the property.
    #[inline]
    fn decides(&self, index: usize) -> bool {
        let state = self.seen.get_index(index).expect("just stored").0;
        (self.property.condition)(self.model, state) == self.wanted
    }

    /// Stores the initial states inside the boundary, in order, each queued to be expanded.
    /// Returns the index of the first one that decides the property, if one does.
    fn store_inits(&mut self) -> Option<usize> {
        for init in self.model.init_states() {
            self.outcome.states += 1;
            if !self.model.within_boundary(&init) || self.seen.contains_key(&init) {
                continue;
            }
            let (index, _) = self.seen.insert_full(init, None);
            self.depth.push(0);
            if self.decides(index) {
                return Some(index);
            }
            self.queue.push_back(index);
        }
        None
    }

    /// Expands the state stored at `index`: each successor inside the boundary and new stored,
    /// in action order, and queued. Returns what ended the search, if something did: a new
    /// state that decides the property, or `max_states`.
    #[inline]
    fn expand(
        &mut self,
        index: usize,
        budget: &Budget,
        actions: &mut Vec<M::Action>,
    ) -> Option<Ended> {
        let state = self
            .seen
            .get_index(index)
            .expect("queued states are stored")
            .0
            .clone();
        let next_depth = self.depth[index] + 1;
        actions.clear();
        self.model.actions(&state, actions);
        for action in actions.drain(..) {
            let Some(next) = self.model.next_state(&state, action.clone()) else {
                continue;
            };
            self.outcome.states += 1;
            if !self.model.within_boundary(&next) {
                continue;
            }
            // One hash per generated state: the vacant entry is where it would be stored.
            let Entry::Vacant(slot) = self.seen.entry(next) else {
                continue;
            };
            let next_index = slot.index();
            if budget
                .max_states
                .is_some_and(|max| next_index as u64 >= max)
            {
                return Some(Ended::MaxStates);
            }
            slot.insert(Some((index, action)));
            self.depth.push(next_depth);
            self.outcome.max_depth = self.outcome.max_depth.max(next_depth.into());
            if self.decides(next_index) {
                return Some(Ended::Found(next_index));
            }
            self.queue.push_back(next_index);
        }
        None
    }

    /// The outcome once the state stored at `index` decides the property: the path to it.
    fn found(self, index: usize) -> Outcome<M::State, M::Action> {
        let mut outcome = self.outcome;
        outcome.verdict = if self.wanted {
            Verdict::Holds
        } else {
            Verdict::Violated
        };
        outcome.path = Some(path_to(&self.seen, index));
        outcome.unique_states = self.seen.len() as u64;
        outcome
    }
}

fn path_to<S: Clone, A: Clone>(seen: &Seen<S, A>, mut index: usize) -> Path<S, A> {
    let mut steps = Vec::new();
    loop {
        let (state, parent) = seen.get_index(index).expect("parents are stored");
        match parent {
            Some((parent, action)) => {
                steps.push((action.clone(), state.clone()));
                index = *parent;
            }
            None => {
                steps.reverse();
                return Path {
                    init: state.clone(),
                    steps,
                };
            }
        }
    }
}

/// Replays `actions` from `model`'s first initial state. Returns the path, or the index of the
/// first action that is not enabled where it is taken.
pub fn replay<M>(model: &M, actions: &[M::Action]) -> Result<Path<M::State, M::Action>, usize>
where
    M: Model,
    M::Action: Clone + PartialEq,
{
    let init = model
        .init_states()
        .into_iter()
        .next()
        .expect("a model has an initial state");
    let mut path = Path {
        init,
        steps: Vec::new(),
    };
    let mut enabled = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let state = path.last_state();
        enabled.clear();
        model.actions(state, &mut enabled);
        if !enabled.contains(action) {
            return Err(i);
        }
        let next = model.next_state(state, action.clone()).ok_or(i)?;
        path.steps.push((action.clone(), next));
    }
    Ok(path)
}
