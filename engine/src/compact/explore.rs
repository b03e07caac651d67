//! The search loop: the entry points (`check`, `check_with`, `check_hooked`, `explore_hooked`)
//! and the level-by-level exploration that stores every new state and decides the properties.

use super::*;

/// A stored state's marks for the liveness checker (each row's goal and trigger).
pub type Marks<'a, S> = &'a (dyn Fn(&S) -> u32 + Sync);

/// What the compact engine records for the liveness checker while it explores (see
/// [`explore_hooked`]): each state's edges with their fairness classes, the classes enabled in
/// it, and its marks.
pub struct Recording<'a, M: Model> {
    /// The fairness classes, at most [`liveness::MAX_CLASSES`].
    pub fairness: &'a [FairClass<M::Action>],
    /// A stored state's marks (each row's goal and trigger, [`liveness::decide_rows`]).
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

/// A property the search has still to decide.
pub(super) struct Pending<M: Model> {
    pub(super) property: usize,
    pub(super) condition: fn(&M, &M::State) -> bool,
    /// What decides it: `false` for `always` (a violation), `true` for `sometimes`.
    pub(super) wanted: bool,
}

/// Where a property stands.
#[derive(Copy, Clone)]
pub(super) enum Status {
    NotHandled,
    Pending,
    Decided { index: u32, states: u64, depth: u64 },
}

/// Running totals of a search.
#[derive(Copy, Clone, Default)]
pub(super) struct Totals {
    pub(super) states: u64,
    pub(super) lookups: u64,
    pub(super) max_depth: u64,
    pub(super) memory_bytes: u64,
}

/// The sizes [`Budget::max_memory_bytes`] counts.
#[derive(Copy, Clone)]
pub(super) struct Sizes {
    /// Table slots.
    pub(super) slots: usize,
    /// States stored.
    pub(super) stored: usize,
    /// Bytes of the packed parent links ([`Links::bytes`]).
    pub(super) links: usize,
    /// Bytes of the states held of the level being expanded ([`Level::held_bytes`]).
    pub(super) current: usize,
    /// Bytes of the states of the level being built ([`Level::held_bytes`]).
    pub(super) next: usize,
    /// When a graph is recorded: the bytes a stored state takes in it, and its edges' bytes
    /// ([`Graph::counted`]).
    pub(super) graph: Option<(usize, usize)>,
}

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
    explore_hooked(model, fingerprinter, options, hooks, None, None, observe)
        .map(|(report, _)| report)
}

/// [`check_hooked`], also recording the explored graph for the liveness checker when
/// `recording` is given: the search then goes on after its properties are decided, until the
/// space is exhausted or a limit stops it, and returns the graph (whose states are numbered as
/// stored, breadth-first, as [`liveness::check_rows`] numbers them), for
/// [`liveness::decide_rows`]. The counted bytes then include the graph's: per state 4 for its
/// edge offset and 1 or 4 each for its enabled classes and marks ([`Graph::state_bytes`]), per
/// edge 4 for its target and 1/2 or 1 for its class set
/// (half a byte while the graph has at most 16 class sets). A recording takes a model with one
/// initial state. With a `codec`, a level is held packed once its states would take more than
/// [`Options::pack_above_bytes`] whole.
pub fn explore_hooked<M, P>(
    model: &M,
    fingerprinter: &P,
    options: &Options,
    hooks: &Hooks<'_>,
    recording: Option<&Recording<'_, M>>,
    codec: Option<Codec<M::State>>,
    observe: &mut dyn FnMut(Progress),
) -> Result<Explored<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State: Eq + Clone + Send + Sync,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let threads = || (hooks.threads)().max(1);
    let chunk_states = options.chunk_states.max(1);
    let budget = &options.budget;
    let properties = model.properties();
    let handled =
        |p: &Property<M>| p.expectation != Expectation::Eventually && (hooks.select)(p.name);
    let mut status: Vec<Status> = properties
        .iter()
        .map(|p| {
            if handled(p) {
                Status::Pending
            } else {
                Status::NotHandled
            }
        })
        .collect();
    let mut pending: Vec<Pending<M>> = properties
        .iter()
        .enumerate()
        .filter(|(_, p)| handled(p))
        .map(|(property, p)| Pending {
            property,
            condition: p.condition,
            wanted: p.expectation == Expectation::Sometimes,
        })
        .collect();

    let mut space = Space {
        model,
        fingerprinter,
        visited: Visited::new(),
        recent: Recent::new(),
        roots: Vec::new(),
    };
    let mut graph = recording.map(|_| Graph::default());
    let mut totals = Totals::default();
    let mut stop = None;
    let mut spare = Vec::new();
    // Per new state of the round being checked: the totals once it was stored.
    let mut generated: Vec<Totals> = Vec::new();
    // Helped rounds' emptied runs, kept for the next round.
    let mut runs = Vec::new();

    // Level 0: the initial states, in order.
    let pack_above = options.pack_above_bytes;
    let mut current: Level<M::State> = Level::new(0, chunk_states, codec.clone(), pack_above);
    let mut next: Level<M::State> = Level::new(0, chunk_states, codec, pack_above);
    let inits = model.init_states();
    if let Some(graph) = &mut graph {
        assert!(
            inits.len() <= 1,
            "the liveness checker takes a model with one initial state"
        );
        graph.init = inits.first().cloned();
    }
    for (position, init) in inits.into_iter().enumerate() {
        totals.states += 1;
        if !model.within_boundary(&init) {
            continue;
        }
        totals.lookups += 1;
        let print = fingerprinter.fingerprint(&init);
        match space.visited.find(print) {
            Ok(stored) => {
                if next.matches(stored, &init) != Some(true) {
                    return Err(Error::Collision {
                        print: print.widen(),
                        stored: stored.into(),
                        parent: None,
                        action: None,
                    });
                }
            }
            Err(slot) => {
                let edges = graph.as_ref().map(Graph::counted);
                let levels = (&current, &next);
                let new = (edges, print, (NONE, 0));
                if let Some(limit) = admit(&space.visited, levels, budget, new, false) {
                    stop = Some(Stop::Limit(limit));
                    break;
                }
                space.visited.insert(slot, print, NONE, 0);
                space.roots.push(position as u32);
                next.push(init, &mut spare);
                let bytes = counted_bytes(&space.visited, &current, &next, edges);
                totals.memory_bytes = totals.memory_bytes.max(bytes);
                generated.push(totals);
            }
        }
    }
    let mut unique_states = space.visited.len() as u64;
    let marks = recording.map(|r| r.marks);
    let round = Round {
        next: &next,
        from: 0,
        depth: 0,
        generated: &generated,
    };
    let last = decide(model, &mut pending, &mut status, round, marks, &mut graph);
    if let (Some(last), None) = (last, recording) {
        totals = generated[last];
        unique_states = next.start as u64 + last as u64 + 1;
        stop = Some(Stop::Decided);
    }
    next.pack(&mut spare);
    observe(progress(&totals, unique_states));

    let mut depth = 0;
    while stop.is_none() {
        if pending.is_empty() && recording.is_none() {
            // Only when no `always` or `sometimes` property is selected.
            stop = Some(Stop::Decided);
            break;
        }
        if next.len == 0 {
            stop = Some(Stop::Exhausted);
            break;
        }
        let following = next.after(space.visited.len());
        current = std::mem::replace(&mut next, following);
        depth += 1;
        for b in 0..current.blocks.len() {
            if let Some(limit) = search::run_out(budget.deadline, budget.interrupt) {
                stop = Some(Stop::Limit(limit));
                break;
            }
            let round_start = next.len;
            generated.clear();
            let verify = options.verify_duplicates;
            let storing = Storing {
                budget,
                depth,
                generated: &mut generated,
                graph: graph.as_mut(),
            };
            // Past the caches, duplicates are looked up first among the fingerprints met lately.
            if cfg!(test) || space.visited.table.bytes() > PREFETCH_ABOVE_BYTES {
                space.recent.start();
            }
            let round_threads = threads();
            let first = b * chunk_states;
            // A packed block is decoded a parent at a time, by the thread that makes that
            // parent's successors.
            let parents = current.parents(b);
            let limit = if round_threads <= 1 {
                let levels = (&current, &mut next, &mut spare);
                expand_store(
                    &mut space,
                    levels,
                    (first, parents, verify),
                    recording,
                    storing,
                    &mut totals,
                )?
            } else {
                let levels = (&current, &mut next, &mut spare);
                let at = (first, parents, verify);
                let sharing = (&mut totals, round_threads);
                let runs = &mut runs;
                expand_store_helped(&mut space, levels, at, recording, runs, storing, sharing)?
            };
            if let Some(limit) = limit {
                stop = Some(Stop::Limit(limit));
            }
            unique_states = space.visited.len() as u64;
            let round = Round {
                next: &next,
                from: round_start,
                depth,
                generated: &generated,
            };
            let last = decide(model, &mut pending, &mut status, round, marks, &mut graph);
            if let (Some(last), None) = (last, recording) {
                // The checker stops each property at its deciding state; the search ends where
                // the last of them did, not at the end of the round.
                totals = generated[last - round_start];
                unique_states = u64::from(next.start) + last as u64 + 1;
                stop = Some(Stop::Decided);
            }
            next.pack(&mut spare);
            observe(progress(&totals, unique_states));
            current.release(b, &mut spare);
            if stop.is_some() {
                break;
            }
        }
    }
    drop((current, next, spare));
    let stop = stop.expect("the loop ends with a reason");
    let mut checked = Vec::with_capacity(properties.len());
    for (property, status) in properties.iter().zip(status) {
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
                path: Some(rebuild_deciding(&space, property, index)?),
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
        checked.push(Checked {
            name: property.name,
            outcome,
        });
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
    let graph = graph.map(|graph| {
        let explored = liveness::Explored {
            states: totals.states,
            max_depth: totals.max_depth,
            limit: match stop {
                Stop::Limit(limit) => Some(limit),
                Stop::Decided | Stop::Exhausted => None,
            },
            memory_bytes: totals.memory_bytes,
        };
        (graph, explored)
    });
    Ok((report, graph))
}

/// What [`explore_hooked`] gives: the report and, when recording, the graph with how its
/// exploration ended.
pub type Explored<S, A> = (Report<S, A>, Option<(Graph<S>, liveness::Explored)>);

pub(super) fn progress(totals: &Totals, unique_states: u64) -> Progress {
    Progress {
        states: totals.states,
        unique_states,
        max_depth: totals.max_depth,
    }
}
