//! The search loop: the entry points (`check`, `check_with`, `check_hooked`, `explore_hooked`)
//! and the level-by-level exploration that stores every new state and decides the properties.

use std::hash::Hash;

use stateright::{Expectation, Model, Property};
use walcheck_properties::codec::Codec;

use super::budget::{admit, counted_bytes};
use super::decide::{decide, rebuild_deciding, Pending, Round, Status};
use super::expand::{expand_store, PREFETCH_ABOVE_BYTES};
use super::helped::{expand_store_helped, Run};
use super::level::Level;
use super::options::Options;
use super::report::{Checked, CollisionEstimate, Error, Report, Stop};
use super::space::{Recording, Space, Totals};
use super::successors::Storing;
use super::visited::{Recent, Visited};
use crate::fingerprint::{Fingerprint, Fingerprinter, Xxh64};
use crate::graph::Graph;
use crate::liveness;
use crate::search::{self, Limit, Outcome, Progress, Verdict};
use crate::table::NONE;

/// [`check_with`] with 64-bit [`Xxh64`] fingerprints and no progress reports.
pub fn check<M>(model: &M, options: &Options) -> Result<Report<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State: Hash + Eq + Clone + Send + Sync,
    M::Action: Clone,
{
    check_with(model, &Xxh64, options, &mut |_| {})
}

/// Searches `model` breadth-first once, deciding all its `always` and `sometimes` properties,
/// with `fingerprinter`'s fingerprints, telling `observe` how far it has got after every round.
/// Observing never changes the outcome.
///
/// Returns each property's outcome with the counts [`crate::reference::check`] reports for it (see
/// the module documentation for the rule), or an [`Error`] when a fingerprint collision or a
/// model that does not replay was found: a result that cannot be trusted is never returned.
pub fn check_with<M, P>(
    model: &M,
    fingerprinter: &P,
    options: &Options,
    observe: &mut dyn FnMut(Progress),
) -> Result<Report<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State: Eq + Clone + Send + Sync,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let hooks = Hooks {
        select: &|_| true,
        threads: &|| options.threads,
    };
    check_hooked(model, fingerprinter, options, &hooks, observe)
}

/// What a caller running several searches at once decides for each of them.
pub struct Hooks<'a> {
    /// Whether to decide the property of this name; the search stops once every selected
    /// property is decided, and the others' outcomes are `None`, as an `eventually`'s.
    pub select: &'a dyn Fn(&str) -> bool,
    /// Threads for the next round, asked before each round and each check of a round's new
    /// states (0 is taken as 1); [`Options::threads`] is not read. The results do not depend on
    /// it, so a caller may give a search more threads as others finish.
    pub threads: &'a dyn Fn() -> usize,
}

/// [`check_with`], deciding only the properties `hooks` selects, on the threads it gives.
pub fn check_hooked<M, P>(
    model: &M,
    fingerprinter: &P,
    options: &Options,
    hooks: &Hooks<'_>,
    observe: &mut dyn FnMut(Progress),
) -> Result<Report<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State: Eq + Clone + Send + Sync,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let search = Search {
        model,
        fingerprinter,
        options,
        hooks,
        recording: None,
        codec: None,
    };
    explore_hooked(search, observe).map(|(report, _)| report)
}

/// One search: the model it explores, with what fingerprints, options and hooks, and what it
/// records for the liveness checker.
pub struct Search<'a, M: Model, P> {
    pub model: &'a M,
    pub fingerprinter: &'a P,
    pub options: &'a Options,
    pub hooks: &'a Hooks<'a>,
    /// What to record for the liveness checker, if anything (see [`explore_hooked`]).
    pub recording: Option<&'a Recording<'a, M>>,
    /// The model's codec, if it has one: a level is then held packed once its states would take
    /// more than [`Options::pack_above_bytes`] whole.
    pub codec: Option<Codec<M::State>>,
}

/// [`check_hooked`], also recording the explored graph for the liveness checker when
/// `search.recording` is given: the search then goes on after its properties are decided, until
/// the space is exhausted or a limit stops it, and returns the graph (whose states are numbered
/// as stored, breadth-first, as [`liveness::check_rows`] numbers them), for
/// [`liveness::decide_rows`]. The counted bytes then include the graph's: per state 4 for its
/// edge offset and 1 or 4 each for its enabled classes and marks ([`Graph::state_bytes`]), per
/// edge 4 for its target and 1/2 or 1 for its class set
/// (half a byte while the graph has at most 16 class sets). A recording takes a model with one
/// initial state. With a `codec`, a level is held packed once its states would take more than
/// [`Options::pack_above_bytes`] whole.
pub fn explore_hooked<M, P>(
    search: Search<'_, M, P>,
    observe: &mut dyn FnMut(Progress),
) -> Result<Explored<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State: Eq + Clone + Send + Sync,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let mut explorer = Explorer::new(search);
    explorer.store_inits()?;
    explorer.end_round(0, observe);
    while explorer.stop.is_none() {
        explorer.expand_level(observe)?;
    }
    explorer.finish()
}

/// What [`explore_hooked`] gives: the report and, when recording, the graph with how its
/// exploration ended.
pub type Explored<S, A> = (Report<S, A>, Option<(Graph<S>, liveness::Explored)>);

/// A search under way: what [`explore_hooked`] keeps from one step to the next.
struct Explorer<'a, M: Model, P: Fingerprinter<M::State>> {
    options: &'a Options,
    hooks: &'a Hooks<'a>,
    recording: Option<&'a Recording<'a, M>>,
    properties: Vec<Property<M>>,
    /// Per property, in `properties` order.
    status: Vec<Status>,
    pending: Vec<Pending<M>>,
    space: Space<'a, M, P>,
    graph: Option<Graph<M::State>>,
    totals: Totals,
    unique_states: u64,
    /// Why the search ended, once it has.
    stop: Option<Stop>,
    /// The depth of the level being built.
    depth: u64,
    /// The level being expanded, the level being built, and blocks kept for the latter.
    current: Level<M::State>,
    next: Level<M::State>,
    spare: Vec<Vec<M::State>>,
    /// Per new state of the round being checked: the totals once it was stored.
    generated: Vec<Totals>,
    /// Helped rounds' emptied runs, kept for the next round.
    runs: Vec<Run<M::State, P::Print>>,
}

/// Each property's status when a search starts, and those it has to decide: the `always` and
/// `sometimes` properties `hooks` selects.
fn pending_of<M: Model>(
    properties: &[Property<M>],
    hooks: &Hooks<'_>,
) -> (Vec<Status>, Vec<Pending<M>>) {
    let handled =
        |p: &Property<M>| p.expectation != Expectation::Eventually && (hooks.select)(p.name);
    let status = properties
        .iter()
        .map(|p| {
            if handled(p) {
                Status::Pending
            } else {
                Status::NotHandled
            }
        })
        .collect();
    let pending = properties
        .iter()
        .enumerate()
        .filter(|(_, p)| handled(p))
        .map(|(property, p)| Pending {
            property,
            condition: p.condition,
            wanted: p.expectation == Expectation::Sometimes,
        })
        .collect();
    (status, pending)
}

impl<'a, M, P> Explorer<'a, M, P>
where
    M: Model + Sync,
    M::State: Eq + Clone + Send + Sync,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    /// A search of `search` before its first state: nothing stored, every level empty.
    fn new(search: Search<'a, M, P>) -> Self {
        let Search {
            model,
            fingerprinter,
            options,
            hooks,
            recording,
            codec,
        } = search;
        let properties = model.properties();
        let (status, pending) = pending_of(&properties, hooks);
        let chunk_states = options.chunk_states.max(1);
        let pack_above = options.pack_above_bytes;
        Explorer {
            options,
            hooks,
            recording,
            properties,
            status,
            pending,
            space: Space {
                model,
                fingerprinter,
                visited: Visited::new(),
                recent: Recent::new(),
                roots: Vec::new(),
            },
            graph: recording.map(|_| Graph::default()),
            totals: Totals::default(),
            unique_states: 0,
            stop: None,
            depth: 0,
            current: Level::new(0, chunk_states, codec.clone(), pack_above),
            next: Level::new(0, chunk_states, codec, pack_above),
            spare: Vec::new(),
            generated: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Level 0: the initial states inside the boundary, stored in order until a limit stops
    /// the search. Errors: an initial state unequal to a stored one of the same fingerprint.
    fn store_inits(&mut self) -> Result<(), Error> {
        let model = self.space.model;
        let inits = model.init_states();
        if let Some(graph) = &mut self.graph {
            assert!(
                inits.len() <= 1,
                "the liveness checker takes a model with one initial state"
            );
            graph.init = inits.first().cloned();
        }
        for (position, init) in inits.into_iter().enumerate() {
            self.totals.states += 1;
            if !model.within_boundary(&init) {
                continue;
            }
            self.totals.lookups += 1;
            let print = self.space.fingerprinter.fingerprint(&init);
            match self.space.visited.find(print) {
                Ok(stored) => {
                    if self.next.matches(stored, &init) != Some(true) {
                        return Err(Error::Collision {
                            print: print.widen(),
                            stored: stored.into(),
                            parent: None,
                            action: None,
                        });
                    }
                }
                Err(slot) => {
                    let visited = &mut self.space.visited;
                    let edges = self.graph.as_ref().map(Graph::counted);
                    let levels = (&self.current, &self.next);
                    let new = (edges, print, (NONE, 0));
                    if let Some(limit) = admit(visited, levels, &self.options.budget, new, false) {
                        self.stop = Some(Stop::Limit(limit));
                        break;
                    }
                    visited.insert(slot, print, NONE, 0);
                    self.space.roots.push(position as u32);
                    self.next.push(init, &mut self.spare);
                    let bytes = counted_bytes(visited, &self.current, &self.next, edges);
                    self.totals.memory_bytes = self.totals.memory_bytes.max(bytes);
                    self.generated.push(self.totals);
                }
            }
        }
        Ok(())
    }

    /// The next level: the level built becomes the one expanded, a round per block, until one
    /// stops the search. Or the search's end, when it has no property left to decide (and no
    /// graph to record) or no state to expand.
    fn expand_level(&mut self, observe: &mut dyn FnMut(Progress)) -> Result<(), Error> {
        if self.pending.is_empty() && self.recording.is_none() {
            // Only when no `always` or `sometimes` property is selected.
            self.stop = Some(Stop::Decided);
            return Ok(());
        }
        if self.next.len == 0 {
            self.stop = Some(Stop::Exhausted);
            return Ok(());
        }
        let following = self.next.after(self.space.visited.len());
        self.current = std::mem::replace(&mut self.next, following);
        self.depth += 1;
        for b in 0..self.current.blocks.len() {
            self.round(b, observe)?;
            if self.stop.is_some() {
                break;
            }
        }
        Ok(())
    }

    /// Round `b` of the level being expanded: its parents' successors made and stored, then
    /// the round's end ([`Explorer::end_round`]) and its block let go. Or the search's end
    /// before it, once the deadline has passed or the interrupt is raised.
    fn round(&mut self, b: usize, observe: &mut dyn FnMut(Progress)) -> Result<(), Error> {
        let budget = &self.options.budget;
        if let Some(limit) = search::run_out(budget.deadline, budget.interrupt) {
            self.stop = Some(Stop::Limit(limit));
            return Ok(());
        }
        let round_start = self.next.len;
        self.generated.clear();
        if let Some(limit) = self.expand_block(b)? {
            self.stop = Some(Stop::Limit(limit));
        }
        self.end_round(round_start, observe);
        self.current.release(b, &mut self.spare);
        Ok(())
    }

    /// The successors of block `b`'s parents made and stored, on one thread
    /// ([`expand_store`]) or, when the hooks give more, helped ([`expand_store_helped`]).
    /// Returns the limit that stopped it, if one did.
    fn expand_block(&mut self, b: usize) -> Result<Option<Limit>, Error> {
        let storing = Storing {
            budget: &self.options.budget,
            depth: self.depth,
            generated: &mut self.generated,
            graph: self.graph.as_mut(),
        };
        // Past the caches, duplicates are looked up first among the fingerprints met lately.
        if cfg!(test) || self.space.visited.table.bytes() > PREFETCH_ABOVE_BYTES {
            self.space.recent.start();
        }
        let threads = (self.hooks.threads)().max(1);
        let first = b * self.options.chunk_states.max(1);
        // A packed block is decoded a parent at a time, by the thread that makes that
        // parent's successors.
        let parents = self.current.parents(b);
        let levels = (&self.current, &mut self.next, &mut self.spare);
        let at = (first, parents, self.options.verify_duplicates);
        let (space, recording) = (&mut self.space, self.recording);
        if threads <= 1 {
            expand_store(space, levels, at, recording, storing, &mut self.totals)
        } else {
            let (runs, sharing) = (&mut self.runs, (&mut self.totals, threads));
            expand_store_helped(space, levels, at, recording, runs, storing, sharing)
        }
    }

    /// The end of a round whose new states start at `round_start` in the level being built:
    /// each checked against the properties still pending, and the search ended once none is;
    /// then the level packed, as its options say, and how far the search has got told.
    fn end_round(&mut self, round_start: usize, observe: &mut dyn FnMut(Progress)) {
        self.unique_states = self.space.visited.len() as u64;
        let round = Round {
            next: &self.next,
            from: round_start,
            depth: self.depth,
            generated: &self.generated,
        };
        let (model, marks) = (self.space.model, self.recording.map(|r| r.marks));
        let (pending, status) = (&mut self.pending, &mut self.status);
        let last = decide(model, pending, status, round, marks, &mut self.graph);
        if let (Some(last), None) = (last, self.recording) {
            // The checker stops each property at its deciding state; the search ends where the
            // last of them did, not at the end of the round.
            self.totals = self.generated[last - round_start];
            self.unique_states = u64::from(self.next.start) + last as u64 + 1;
            self.stop = Some(Stop::Decided);
        }
        self.next.pack(&mut self.spare);
        observe(progress(&self.totals, self.unique_states));
    }

    /// What the search gives once it has stopped: each property's outcome, a decided one's with
    /// the path to its deciding state rebuilt, and the graph it recorded, if any.
    fn finish(self) -> Result<Explored<M::State, M::Action>, Error> {
        let Explorer {
            properties,
            status,
            space,
            mut graph,
            totals,
            unique_states,
            stop,
            current,
            next,
            spare,
            ..
        } = self;
        drop((current, next, spare));
        let stop = stop.expect("the loop ends with a reason");
        let mut checked = Vec::with_capacity(properties.len());
        for (property, status) in properties.iter().zip(status) {
            let end = (stop, &totals, unique_states);
            checked.push(checked_of(&space, property, status, end)?);
        }
        if let Some(graph) = &mut graph {
            graph.prints = space.visited.table.prints(space.visited.len());
        }
        let report = Report {
            properties: checked,
            stop,
            states: totals.states,
            unique_states,
            max_depth: totals.max_depth,
            memory_bytes: totals.memory_bytes,
            collision: CollisionEstimate::new(P::Print::BITS, totals.lookups, unique_states),
        };
        Ok((
            report,
            graph.map(|graph| (graph, explored_of(&totals, stop))),
        ))
    }
}

/// `property`'s outcome, from its `status` once the search ended (why, its totals, the states
/// it stored): a decided one's with the path to its deciding state.
fn checked_of<M, P>(
    space: &Space<'_, M, P>,
    property: &Property<M>,
    status: Status,
    (stop, totals, unique_states): (Stop, &Totals, u64),
) -> Result<Checked<M::State, M::Action>, Error>
where
    M: Model,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let wanted = property.expectation == Expectation::Sometimes;
    let outcome = match status {
        Status::NotHandled => None,
        Status::Decided {
            index,
            states,
            depth,
        } => Some(Outcome {
            verdict: if wanted {
                Verdict::Holds
            } else {
                Verdict::Violated
            },
            states,
            unique_states: u64::from(index) + 1,
            max_depth: depth,
            path: Some(rebuild_deciding(space, property, index)?),
        }),
        Status::Pending => Some(Outcome {
            verdict: match stop {
                Stop::Limit(_) => Verdict::Inconclusive,
                Stop::Exhausted if wanted => Verdict::Violated,
                Stop::Exhausted => Verdict::Holds,
                Stop::Decided => unreachable!("a pending property after all were decided"),
            },
            states: totals.states,
            unique_states,
            max_depth: totals.max_depth,
            path: None,
        }),
    };
    Ok(Checked {
        name: property.name,
        outcome,
    })
}

/// How the exploration a graph was recorded in ended, for the liveness checker.
fn explored_of(totals: &Totals, stop: Stop) -> liveness::Explored {
    liveness::Explored {
        states: totals.states,
        max_depth: totals.max_depth,
        limit: match stop {
            Stop::Limit(limit) => Some(limit),
            Stop::Decided | Stop::Exhausted => None,
        },
        memory_bytes: totals.memory_bytes,
    }
}

/// How far the search has got, for its observer: its totals and the states stored.
pub(super) fn progress(totals: &Totals, unique_states: u64) -> Progress {
    Progress {
        states: totals.states,
        unique_states,
        max_depth: totals.max_depth,
    }
}
