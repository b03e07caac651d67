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
    let wanted = match property.expectation {
        Expectation::Always => false,
        Expectation::Sometimes => true,
        Expectation::Eventually => {
            return Err(format!("property {:?} is `eventually`: the breadth-first checker decides only always and sometimes", property.name));
        }
    };
    let found = |s: &M::State| (property.condition)(model, s) == wanted;
    let found_verdict = if wanted {
        Verdict::Holds
    } else {
        Verdict::Violated
    };
    let exhausted_verdict = if wanted {
        Verdict::Violated
    } else {
        Verdict::Holds
    };

    // Each stored state with the index of its parent and the action that first reached it.
    let mut seen: Seen<M::State, M::Action> = Seen::default();
    let mut depth: Vec<u32> = Vec::new();
    let mut queue = VecDeque::new();
    let mut outcome = Outcome {
        verdict: exhausted_verdict,
        states: 0,
        unique_states: 0,
        max_depth: 0,
        path: None,
    };

    let finish = |seen: &Seen<M::State, M::Action>,
                  index: usize,
                  mut outcome: Outcome<M::State, M::Action>| {
        outcome.verdict = found_verdict;
        outcome.path = Some(path_to(seen, index));
        outcome.unique_states = seen.len() as u64;
        outcome
    };

    for init in model.init_states() {
        outcome.states += 1;
        if !model.within_boundary(&init) || seen.contains_key(&init) {
            continue;
        }
        let (index, _) = seen.insert_full(init, None);
        depth.push(0);
        if found(seen.get_index(index).expect("just stored").0) {
            return Ok(finish(&seen, index, outcome));
        }
        queue.push_back(index);
    }

    let mut actions = Vec::new();
    let mut expanded: u64 = 0;
    'search: while let Some(index) = queue.pop_front() {
        expanded += 1;
        if expanded % OBSERVE_EVERY == 0 {
            if budget.run_out().is_some() {
                outcome.verdict = Verdict::Inconclusive;
                break;
            }
            observe(Progress {
                states: outcome.states,
                unique_states: seen.len() as u64,
                max_depth: outcome.max_depth,
            });
        }
        let state = seen
            .get_index(index)
            .expect("queued states are stored")
            .0
            .clone();
        let next_depth = depth[index] + 1;
        actions.clear();
        model.actions(&state, &mut actions);
        for action in actions.drain(..) {
            let Some(next) = model.next_state(&state, action.clone()) else {
                continue;
            };
            outcome.states += 1;
            if !model.within_boundary(&next) {
                continue;
            }
            // One hash per generated state: the vacant entry is where it would be stored.
            let Entry::Vacant(slot) = seen.entry(next) else {
                continue;
            };
            let next_index = slot.index();
            if budget
                .max_states
                .is_some_and(|max| next_index as u64 >= max)
            {
                outcome.verdict = Verdict::Inconclusive;
                break 'search;
            }
            slot.insert(Some((index, action)));
            depth.push(next_depth);
            outcome.max_depth = outcome.max_depth.max(next_depth.into());
            if found(seen.get_index(next_index).expect("just stored").0) {
                return Ok(finish(&seen, next_index, outcome));
            }
            queue.push_back(next_index);
        }
    }
    outcome.unique_states = seen.len() as u64;
    Ok(outcome)
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
