//! Replaying a trace against a model, and minimising an action sequence that reaches a
//! property's violation (or a witness's example).
//!
//! Both drive the model through its own `actions` and `next_state`: a step is replayed only if its
//! action is enabled where it is taken.

use std::fmt;

use stateright::{Expectation, Model, Property};
use walcheck_properties::system::{FairClass, Fairness, Var, Variables};

use crate::Trace;

/// A recorded value that the model does not reproduce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDiff {
    pub name: String,
    pub recorded: Option<Var>,
    pub replayed: Option<Var>,
}

/// Where replay parted from the trace. `Display` is one line naming the step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// The action of step `step` is not enabled in the state before it.
    NotEnabled {
        step: usize,
        action: String,
        enabled: Vec<String>,
    },
    /// The state of step `step` is not what the model computes.
    StateDiffers {
        step: usize,
        action: Option<String>,
        diffs: Vec<VarDiff>,
    },
    /// Every step reproduced, but the last state does not show the recorded verdict.
    VerdictDiffers { property: String, recorded: String },
    /// A lasso's last state is not the model state its loop starts from (or, for a stuttering
    /// end, has an enabled action), or its goal holds on the cycle.
    LoopDiffers { property: String, loop_index: usize },
    /// A lasso's cycle closes, but it is not a fair behaviour: a fairness class of the model
    /// is enabled throughout it (weak) or somewhere on it (strong) and never taken.
    UnfairLoop {
        loop_index: usize,
        class: String,
        kind: Fairness,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::NotEnabled {
                step,
                action,
                enabled,
            } => {
                write!(
                    f,
                    "step {step}: {action} is not enabled there (enabled: {})",
                    enabled.join(", ")
                )
            }
            Mismatch::StateDiffers {
                step,
                action,
                diffs,
            } => {
                let action = action.as_deref().unwrap_or("initial state");
                let diffs: Vec<String> = diffs
                    .iter()
                    .map(|d| {
                        let show = |v: &Option<Var>| {
                            v.as_ref()
                                .map_or_else(|| "(none)".into(), ToString::to_string)
                        };
                        format!(
                            "{} recorded {} but replayed {}",
                            d.name,
                            show(&d.recorded),
                            show(&d.replayed)
                        )
                    })
                    .collect();
                write!(f, "step {step} ({action}) differs: {}", diffs.join("; "))
            }
            Mismatch::LoopDiffers {
                property,
                loop_index,
            } => write!(
                f,
                "every step reproduced, but the steps after state {loop_index} are not a cycle on which {property} stays unmet"
            ),
            Mismatch::UnfairLoop {
                loop_index,
                class,
                kind,
            } => write!(
                f,
                "every step reproduced, but the cycle after state {loop_index} is not fair: {class} ({} fairness) is enabled {} and never taken",
                kind.name(),
                match kind {
                    Fairness::Weak => "throughout it",
                    Fairness::Strong => "on it",
                }
            ),
            Mismatch::VerdictDiffers { property, recorded } => {
                write!(
                    f,
                    "every step reproduced, but the last state does not show {property} {recorded}"
                )
            }
        }
    }
}

/// Whether the state at the end of a path shows the property's recorded outcome: a violation for
/// `always`, an example for `sometimes`.
fn shows<M: Model>(model: &M, property: &Property<M>, state: &M::State) -> bool {
    match property.expectation {
        Expectation::Sometimes => (property.condition)(model, state),
        Expectation::Always | Expectation::Eventually => !(property.condition)(model, state),
    }
}

fn diff<S: Variables>(recorded: &[(String, Var)], state: &S) -> Vec<VarDiff> {
    let replayed = state.variables();
    let mut diffs = Vec::new();
    for (name, value) in recorded {
        let ours = replayed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone());
        if ours.as_ref() != Some(value) {
            diffs.push(VarDiff {
                name: name.clone(),
                recorded: Some(value.clone()),
                replayed: ours,
            });
        }
    }
    for (name, value) in &replayed {
        if !recorded.iter().any(|(n, _)| n == name) {
            diffs.push(VarDiff {
                name: (*name).to_owned(),
                recorded: None,
                replayed: Some(value.clone()),
            });
        }
    }
    diffs
}

/// Re-executes `trace` against `model`: from the first initial state, each recorded action must be
/// enabled (matched by its name, the model's `format_action`) and lead to the recorded state, and the last state must
/// show the recorded outcome for `property`. A lasso ([`Trace::loop_index`]) must also close its
/// cycle: its last state is, as a model state, the state at the loop index (or, when they are the
/// same step, has no enabled action, and stutters), and the goal holds nowhere on the cycle.
/// Returns the actions replayed. Assumes no fairness; see [`replay_fair`].
pub fn replay<M>(
    model: &M,
    property: &Property<M>,
    trace: &Trace,
) -> Result<Vec<M::Action>, Mismatch>
where
    M: Model,
    M::State: Variables + PartialEq + Clone,
    M::Action: fmt::Debug + Clone,
{
    replay_fair(model, property, &[], trace)
}

/// [`replay`], and a lasso's cycle must also be fair under `fairness` (the constraints the
/// trace's configuration assumes): every weakly fair class enabled in each state of the cycle,
/// and every strongly fair class enabled in some state of it, is taken on it.
pub fn replay_fair<M>(
    model: &M,
    property: &Property<M>,
    fairness: &[FairClass<M::Action>],
    trace: &Trace,
) -> Result<Vec<M::Action>, Mismatch>
where
    M: Model,
    M::State: Variables + PartialEq + Clone,
    M::Action: fmt::Debug + Clone,
{
    let mut state = model
        .init_states()
        .into_iter()
        .next()
        .expect("a model has an initial state");
    let first = trace.steps.first().expect("a parsed trace has a state");
    let diffs = diff(&first.vars, &state);
    if !diffs.is_empty() {
        return Err(Mismatch::StateDiffers {
            step: 0,
            action: None,
            diffs,
        });
    }
    let loop_index = trace.loop_index();
    let mut states = vec![state.clone()];
    let mut replayed = Vec::new();
    let mut enabled = Vec::new();
    for (i, step) in trace.steps.iter().enumerate().skip(1) {
        let recorded = step.action.clone().unwrap_or_default();
        enabled.clear();
        model.actions(&state, &mut enabled);
        let Some(action) = enabled.iter().find(|a| model.format_action(a) == recorded) else {
            return Err(Mismatch::NotEnabled {
                step: i,
                action: recorded,
                enabled: enabled.iter().map(|a| model.format_action(a)).collect(),
            });
        };
        let Some(next) = model.next_state(&state, action.clone()) else {
            return Err(Mismatch::NotEnabled {
                step: i,
                action: recorded,
                enabled: Vec::new(),
            });
        };
        let diffs = diff(&step.vars, &next);
        if !diffs.is_empty() {
            return Err(Mismatch::StateDiffers {
                step: i,
                action: Some(recorded),
                diffs,
            });
        }
        state = next;
        if loop_index.is_some() {
            states.push(state.clone());
        }
        replayed.push(action.clone());
    }
    if let Some(index) = loop_index {
        let last = states.len() - 1;
        enabled.clear();
        model.actions(&state, &mut enabled);
        let closes = if index == last {
            enabled.is_empty()
        } else {
            states[index] == state
        };
        let unmet = states[index..]
            .iter()
            .all(|s| !(property.condition)(model, s));
        if !closes || !unmet {
            return Err(Mismatch::LoopDiffers {
                property: trace.header.property.clone(),
                loop_index: index,
            });
        }
        // A stuttering end enables nothing; otherwise the cycle is states[index..last].
        let cycle = &states[index..last];
        for class in fairness {
            if replayed[index..].iter().any(|a| (class.member)(a)) {
                continue;
            }
            let enables = |s: &M::State| {
                enabled.clear();
                model.actions(s, &mut enabled);
                enabled
                    .iter()
                    .any(|a| (class.member)(a) && model.next_state(s, a.clone()).is_some())
            };
            let starved = match class.kind {
                Fairness::Weak => !cycle.is_empty() && cycle.iter().all(enables),
                Fairness::Strong => cycle.iter().any(enables),
            };
            if starved {
                return Err(Mismatch::UnfairLoop {
                    loop_index: index,
                    class: class.class.to_owned(),
                    kind: class.kind,
                });
            }
        }
    }
    if !shows(model, property, &state) {
        return Err(Mismatch::VerdictDiffers {
            property: trace.header.property.clone(),
            recorded: trace.header.verdict.clone(),
        });
    }
    Ok(replayed)
}

/// Runs `actions` from the first initial state; if every action is enabled and some state shows
/// `property`'s outcome, returns the prefix that ends at the first such state.
pub fn reaches<M>(
    model: &M,
    property: &Property<M>,
    actions: &[M::Action],
) -> Option<Vec<M::Action>>
where
    M: Model,
    M::Action: Clone + PartialEq,
{
    let mut state = model.init_states().into_iter().next()?;
    if shows(model, property, &state) {
        return Some(Vec::new());
    }
    let mut enabled = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        enabled.clear();
        model.actions(&state, &mut enabled);
        if !enabled.contains(action) {
            return None;
        }
        state = model.next_state(&state, action.clone())?;
        if shows(model, property, &state) {
            return Some(actions[..=i].to_vec());
        }
    }
    None
}

/// Minimises `actions`, which must reach `property`'s outcome ([`reaches`]):
/// 1. delta debugging (Zeller's ddmin): remove chunks of steps, halving the chunk size, while what
///    is left still has every step enabled and still reaches the outcome;
/// 2. canonical form: at each position, in order, the smallest-index enabled action that keeps the
///    rest reaching the outcome, so equal-length stories always end up as the same one.
///
/// The result is 1-minimal (no single step can be removed). Breadth-first counterexamples are
/// already shortest and canonical, and come back unchanged.
pub fn minimise<M>(model: &M, property: &Property<M>, actions: &[M::Action]) -> Vec<M::Action>
where
    M: Model,
    M::Action: Clone + PartialEq,
{
    let Some(mut current) = reaches(model, property, actions) else {
        return actions.to_vec();
    };
    let mut chunks = 2;
    while current.len() >= 2 {
        let size = current.len().div_ceil(chunks);
        let mut reduced = false;
        for start in (0..current.len()).step_by(size) {
            let mut candidate = current[..start].to_vec();
            candidate.extend_from_slice(&current[(start + size).min(current.len())..]);
            if let Some(shorter) = reaches(model, property, &candidate) {
                current = shorter;
                chunks = (chunks - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if chunks >= current.len() {
                break;
            }
            chunks = (chunks * 2).min(current.len());
        }
    }
    // Canonical form: walk the path, trying smaller-index actions first at each step.
    let mut i = 0;
    while i < current.len() {
        let mut state = model
            .init_states()
            .into_iter()
            .next()
            .expect("a model has an initial state");
        for action in &current[..i] {
            state = model
                .next_state(&state, action.clone())
                .expect("the path replays");
        }
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        let position = enabled
            .iter()
            .position(|a| *a == current[i])
            .expect("the path replays");
        for smaller in &enabled[..position] {
            let mut candidate = current[..i].to_vec();
            candidate.push(smaller.clone());
            candidate.extend_from_slice(&current[i + 1..]);
            if let Some(found) = reaches(model, property, &candidate) {
                if found.len() <= current.len() {
                    current = found;
                    break;
                }
            }
        }
        i += 1;
    }
    current
}
