//! What one search of the compact engine gives: each property's outcome, why the search ended,
//! its counts and the chance that a fingerprint collision hid a state; or why its result cannot
//! be trusted ([`Error`]).

use crate::search::{Limit, Outcome};

/// Why a search ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every `always` and `sometimes` property was decided.
    Decided,
    /// Every reachable state inside the boundary was stored.
    Exhausted,
    /// A limit ran out; every property not yet decided is
    /// [`Verdict::Inconclusive`](crate::search::Verdict::Inconclusive).
    Limit(Limit),
}

/// One property's result.
#[derive(Clone, Debug)]
pub struct Checked<S, A> {
    pub name: &'static str,
    /// `None` for an `eventually` property, which this engine does not decide, and for one
    /// [`Hooks::select`](super::Hooks::select) left out.
    pub outcome: Option<Outcome<S, A>>,
}

/// An estimate of the probability that two distinct states shared a fingerprint during the
/// search, assuming fingerprints behave as uniformly random `fingerprint_bits`-bit values.
///
/// It matters for the verdicts reached by exhausting the space (`always` holds, `sometimes`
/// violated): a collision may have pruned the state that would have decided otherwise. A
/// violation or witness is always a real path, rebuilt and checked.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CollisionEstimate {
    pub fingerprint_bits: u32,
    /// `g`: fingerprint look-ups, one per generated state inside the boundary.
    pub lookups: u64,
    /// `d`: distinct fingerprints stored.
    pub distinct: u64,
    /// TLC's "calculated (optimistic)" estimate, `d · (g − d) / 2^bits`: each of the `g − d`
    /// look-ups that found its fingerprint already stored could have been a new state that
    /// collided with one of the `d` stored, each with probability `2^−bits`.
    pub optimistic: f64,
    /// The birthday bound over the stored states, `d · (d − 1) / 2 / 2^bits`: the probability
    /// that some two of `d` distinct states share a fingerprint.
    pub birthday: f64,
}

impl CollisionEstimate {
    pub(super) fn new(fingerprint_bits: u32, lookups: u64, distinct: u64) -> CollisionEstimate {
        let space = 2f64.powi(fingerprint_bits as i32);
        let d = distinct as f64;
        let g = lookups as f64;
        CollisionEstimate {
            fingerprint_bits,
            lookups,
            distinct,
            optimistic: d * ((g - d) / space),
            birthday: d * (d - 1.0).max(0.0) / 2.0 / space,
        }
    }
}

/// The result of one search over all the properties of a model.
#[derive(Clone, Debug)]
pub struct Report<S, A> {
    /// One entry per property, in `Model::properties` order.
    pub properties: Vec<Checked<S, A>>,
    pub stop: Stop,
    /// States generated, duplicates included. The search's counts are those of its end: when
    /// every property was decided, the moment the last of them was (whatever the round size);
    /// otherwise where it was exhausted or a limit stopped it.
    pub states: u64,
    /// Distinct states stored.
    pub unique_states: u64,
    /// Steps from an initial state to the deepest state stored.
    pub max_depth: u64,
    /// The most bytes the engine counted as stored at any point up to the search's end, by the
    /// rule of [`Budget::max_memory_bytes`](super::Budget::max_memory_bytes): table slots ×
    /// (fingerprint + 4), the parent links
    /// packed (parent index, action position: about 2 bytes a state), states held whole ×
    /// `size_of` the state, states held packed at their bytes + 4. Heap memory a state owns,
    /// and a round's own buffers (successors made and waiting to be looked up, a packed block decoded to be
    /// expanded, the counts of its new states), are not counted.
    pub memory_bytes: u64,
    pub collision: CollisionEstimate,
}

impl<S, A> Report<S, A> {
    /// The outcome of the property called `name`; `None` if there is none or it is `eventually`.
    pub fn outcome(&self, name: &str) -> Option<&Outcome<S, A>> {
        self.properties
            .iter()
            .find(|checked| checked.name == name)
            .and_then(|checked| checked.outcome.as_ref())
    }
}

/// A search that could not give a trustworthy result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Two different states share a fingerprint: a new state, generated from the stored state
    /// `parent` by the action at `action` (`None` for an initial state), compared unequal to
    /// the stored state `stored` with the same fingerprint.
    Collision {
        print: u128,
        stored: u64,
        parent: Option<u64>,
        action: Option<u64>,
    },
    /// Re-executing the stored path to state `index` did not reproduce it at `step` (0 is the
    /// initial state): the model is not deterministic, or fingerprints collided.
    Rebuild {
        index: u64,
        step: usize,
        why: &'static str,
    },
    /// The rebuilt path to `property`'s deciding state ends in a state that does not decide it,
    /// so the stored fingerprint belonged to another state.
    NotDeciding { property: &'static str, index: u64 },
    /// State `index` has more enabled actions than a parent link can name (65,536).
    TooManyActions { index: u64, actions: usize },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Collision {
                print,
                stored,
                parent: Some(parent),
                action: Some(action),
            } => write!(
                f,
                "fingerprint collision: the successor of state {parent} by action {action} \
                 differs from stored state {stored}, both fingerprinted {print:#x}"
            ),
            Error::Collision { print, stored, .. } => write!(
                f,
                "fingerprint collision: an initial state differs from stored state {stored}, \
                 both fingerprinted {print:#x}"
            ),
            Error::Rebuild { index, step, why } => {
                write!(
                    f,
                    "rebuilding the path to state {index}, step {step}: {why}"
                )
            }
            Error::NotDeciding { property, index } => write!(
                f,
                "the rebuilt path to state {index} does not decide {property:?}: a fingerprint \
                 collision"
            ),
            Error::TooManyActions { index, actions } => write!(
                f,
                "state {index} has {actions} actions; a parent link names at most 65536"
            ),
        }
    }
}

impl std::error::Error for Error {}
