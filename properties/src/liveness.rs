//! The fair-liveness checker: `eventually P` and `always (Q implies eventually P)` under weak and
//! strong fairness, with a lasso counterexample, as TLC checks them.
//!
//! Why not stateright's `eventually`: in 0.31 it treats only terminal states as the end of a
//! path, so a violation that ends in a cycle (a retry loop that spins forever) goes unreported
//! (its own test `fixme_can_miss_counterexample_when_revisiting_a_state`), and it has no fairness.
//!
//! How: explore the bounded reachable graph breadth-first and store it compactly (state ids,
//! edge lists with action indices and fairness classes); take the product with a one-bit monitor
//! (an obligation `P` is pending); find the strongly connected components of the pending part
//! with petgraph's Tarjan; keep those that are fair (Emerson–Lei: a weakly fair class enabled in
//! every state must be taken inside; a strongly fair class enabled in some state must be taken
//! inside, or the states enabling it are removed and the components recomputed). A state with no
//! enabled action stutters forever (a self-loop), as in TLA+. The property is violated iff a fair
//! pending component is reachable; the counterexample is the shortest prefix to it plus a cycle
//! inside it that takes every fair class the component takes and passes a state disabling every
//! weakly fair class it does not.
//!
//! One reading differs from TLA+'s `WF_vars(A)`, which only an `A` step that changes the state
//! satisfies: here an action counts as taken even when its step leaves the state as it was (a
//! retry that returns the same result is a self-loop, and a real step of the process). A class
//! that mixes such an action with another can therefore be satisfied without the other ever
//! being taken. Reading self-loops as TLA+ does gives the same verdicts on the whole catalogue.

use std::collections::VecDeque;
use std::hash::Hash;
use std::mem::size_of;
use std::time::Instant;

use crate::system::{FairClass, Fairness, Liveness};
use indexmap::IndexSet;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::FxBuildHasher;
use stateright::Model;

use crate::checker::{Budget, Path, Progress, Verdict, OBSERVE_EVERY};
use crate::compact::{Fingerprinter, Fold64, Limit};

/// The most fairness classes a system may declare (they are bits of a `u32`).
pub const MAX_CLASSES: usize = 32;

/// The explored graph: every reachable state once, as its 64-bit fingerprint, its outgoing edges
/// in action order; the states themselves are held only until they are expanded, and a lasso
/// is rebuilt by taking its actions again from the initial state.
struct Graph<S> {
    /// The initial state, where a lasso's actions are taken again from.
    init: Option<S>,
    /// Each state's fingerprint ([`Fold64`]), by id; ids are breadth-first insertion order, so
    /// the hash never shows in the output. Hashed with rustc's Fx hash.
    states: IndexSet<u64, FxBuildHasher>,
    /// Per state, bit `2r`: row `r`'s goal holds there; bit `2r + 1`: its trigger does.
    marks: Vec<u32>,
    /// How a state's fingerprint is computed ([`Fold64`] unless a test narrows it).
    print: fn(&S) -> u64,
    /// Edges of state `i` are `edges[first[i]..first[i + 1]]`.
    first: Vec<u32>,
    edges: Vec<Edge>,
    /// Per state, the fairness classes with an enabled action there.
    enabled: Vec<u32>,
}

#[derive(Copy, Clone, Debug)]
struct Edge {
    target: u32,
    /// The action's index in the model's `actions()` list for the source state.
    action: u16,
    /// The fairness classes the action belongs to.
    classes: u32,
}

impl<S> Graph<S> {
    fn out(&self, state: usize) -> &[Edge] {
        &self.edges[self.first[state] as usize..self.first[state + 1] as usize]
    }

    fn is_terminal(&self, state: usize) -> bool {
        self.first[state] == self.first[state + 1]
    }
}

/// A lasso: the path to the loop state, then the cycle back to it (empty when the loop state
/// has no enabled action and stutters forever).
#[derive(Clone, Debug)]
pub struct Lasso<S, A> {
    /// The whole trace: the prefix, then the cycle; it ends in the loop state.
    pub path: Path<S, A>,
    /// The index of the loop state among the path's states (0 is the initial state): the
    /// cycle is the steps after it. Equal to the number of steps when the last state stutters.
    pub loop_index: usize,
}

/// The result of one liveness check.
#[derive(Clone, Debug)]
pub struct Outcome<S, A> {
    pub verdict: Verdict,
    /// States generated, duplicates included.
    pub states: u64,
    /// Distinct states stored.
    pub unique_states: u64,
    /// Steps from the initial state to the deepest state stored.
    pub max_depth: u64,
    /// Monitor-product nodes reached (at most twice the states).
    pub product_nodes: u64,
    /// The counterexample when violated.
    pub lasso: Option<Lasso<S, A>>,
    /// The most bytes the check counted as stored (see [`check_bounded`]).
    pub memory_bytes: u64,
    /// For an inconclusive verdict: the budget that ran out.
    pub limit: Option<Limit>,
    /// For an inconclusive verdict: why the lasso found could not be rebuilt (two states share a
    /// fingerprint), never a wrong counterexample.
    pub collision: Option<String>,
}

/// Checks `property` on `model` under `fairness` within `budget`.
pub fn check<M>(
    model: &M,
    property: &Liveness<M, M::State>,
    fairness: &[FairClass<M::Action>],
    budget: &Budget,
) -> Outcome<M::State, M::Action>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    check_observed(model, property, fairness, budget, &mut |_| {})
}

/// [`check`], telling `observe` how far the exploration has got.
pub fn check_observed<M>(
    model: &M,
    property: &Liveness<M, M::State>,
    fairness: &[FairClass<M::Action>],
    budget: &Budget,
    observe: &mut dyn FnMut(Progress),
) -> Outcome<M::State, M::Action>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    check_bounded(model, property, fairness, budget, None, observe)
}

/// [`check_observed`], inconclusive before the bytes it counts as stored would exceed
/// `max_memory_bytes`: per state its `size_of`, 8 for its hash, 9 for its index-table slot and 12
/// for its edge offset, fairness mask and depth; 12 per edge; and, before the monitor product is
/// built, 14 per product node (parent link, reached flag) and 2 per state (goal, trigger). Heap a
/// state owns is not counted; where the check stops depends only on the model.
pub fn check_bounded<M>(
    model: &M,
    property: &Liveness<M, M::State>,
    fairness: &[FairClass<M::Action>],
    budget: &Budget,
    max_memory_bytes: Option<u64>,
    observe: &mut dyn FnMut(Progress),
) -> Outcome<M::State, M::Action>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let rows = [Row {
        model,
        property,
        fair: true,
    }];
    check_rows(&rows, fairness, budget, max_memory_bytes, observe).remove(0)
}

/// One liveness check of [`check_rows`]: a property, the model that evaluates it, and whether it
/// assumes the exploration's fairness (`fair`) or none.
pub struct Row<'a, M: Model> {
    pub model: &'a M,
    pub property: &'a Liveness<M, M::State>,
    pub fair: bool,
}

/// Several liveness checks over one explored graph: the graph of the first row's model, explored
/// once with `fairness`'s classes; each row then decided under `fairness` or, where not `fair`,
/// under none. Every row's model must have the first's transitions (the configurations of one
/// system that differ only in the `fairness` knob): what each row gets is then exactly what
/// [`check_bounded`] gives it alone, counts included, for one exploration.
pub fn check_rows<M>(
    rows: &[Row<'_, M>],
    fairness: &[FairClass<M::Action>],
    budget: &Budget,
    max_memory_bytes: Option<u64>,
    observe: &mut dyn FnMut(Progress),
) -> Vec<Outcome<M::State, M::Action>>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    check_rows_printed(rows, fairness, (budget, max_memory_bytes), observe, fold64)
}

/// 64-bit fingerprints ([`Fold64`]) as a function.
fn fold64<S: Hash>(state: &S) -> u64 {
    Fold64.fingerprint(state)
}

/// [`check_rows`] with states fingerprinted by `print`: for tests of what a collision does
/// (a narrow fingerprint such as [`crate::compact::Narrow`]'s). A lasso whose states do not
/// rebuild to their fingerprints is reported as [`Outcome::collision`], inconclusive, never as
/// a counterexample.
pub fn check_rows_printed<M>(
    rows: &[Row<'_, M>],
    fairness: &[FairClass<M::Action>],
    (budget, max_memory_bytes): (&Budget, Option<u64>),
    observe: &mut dyn FnMut(Progress),
    print: fn(&M::State) -> u64,
) -> Vec<Outcome<M::State, M::Action>>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    assert!(
        fairness.len() <= MAX_CLASSES,
        "at most {MAX_CLASSES} fairness classes"
    );
    assert!(
        rows.len() <= 16,
        "at most 16 rows on one graph (two bits each)"
    );
    let limits = (budget, max_memory_bytes);
    let (graph, explored) = explore(rows, fairness, limits, observe, print);
    let masks = |fair: bool| match fair {
        true => (
            class_mask(fairness, Fairness::Weak),
            class_mask(fairness, Fairness::Strong),
        ),
        false => (0, 0),
    };
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            let (weak, strong) = masks(row.fair);
            let fair = Fair { weak, strong };
            decide((r, row), &graph, &explored, fair, max_memory_bytes)
        })
        .collect()
}

/// The fairness a row is decided under, as masks of the graph's classes.
#[derive(Copy, Clone)]
struct Fair {
    weak: u32,
    strong: u32,
}

/// One row's verdict on the explored graph.
fn decide<M>(
    (r, row): (usize, &Row<'_, M>),
    graph: &Graph<M::State>,
    explored: &Explored,
    fair: Fair,
    max_memory_bytes: Option<u64>,
) -> Outcome<M::State, M::Action>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let (model, property) = (row.model, row.property);
    let n = graph.states.len();
    let graph_bytes = graph_bytes(n, graph.edges.len());
    let product_bytes =
        graph_bytes + (2 * n * (size_of::<Option<(u32, u32)>>() + 1) + 2 * n) as u64;
    let mut outcome = Outcome {
        verdict: Verdict::Holds,
        states: explored.states,
        unique_states: n as u64,
        max_depth: explored.max_depth,
        product_nodes: 0,
        lasso: None,
        memory_bytes: graph_bytes.max(explored.memory_bytes),
        limit: explored.limit,
        collision: None,
    };
    if outcome.limit.is_none() && max_memory_bytes.is_some_and(|max| product_bytes > max) {
        outcome.limit = Some(Limit::Memory);
    }
    if outcome.limit.is_some() {
        outcome.verdict = Verdict::Inconclusive;
        return outcome;
    }
    outcome.memory_bytes = product_bytes;

    // The monitor: node `2 * state + pending`.
    let goal: Vec<bool> = graph.marks.iter().map(|m| m >> (2 * r) & 1 == 1).collect();
    let trigger: Vec<bool> = graph
        .marks
        .iter()
        .map(|m| m >> (2 * r + 1) & 1 == 1)
        .collect();
    let pending_after = |pending: bool, t: usize| (pending || trigger[t]) && !goal[t];
    let start = usize::from((property.trigger.is_none() || trigger[0]) && !goal[0]);

    // Breadth-first over the product, remembering how each node was first reached.
    let mut parent: Vec<Option<(u32, u32)>> = vec![None; 2 * n];
    let mut reached = vec![false; 2 * n];
    let mut order = Vec::new();
    let mut queue = VecDeque::from([start]);
    reached[start] = true;
    while let Some(node) = queue.pop_front() {
        order.push(node);
        let (state, pending) = (node / 2, node % 2 == 1);
        let base = graph.first[state];
        for (i, edge) in graph.out(state).iter().enumerate() {
            let t = edge.target as usize;
            let next = 2 * t + usize::from(pending_after(pending, t));
            if !reached[next] {
                reached[next] = true;
                parent[next] = Some((node as u32, base + i as u32));
                queue.push_back(next);
            }
        }
    }
    outcome.product_nodes = order.len() as u64;

    // The pending part and its fair strongly connected components.
    let pending_nodes: Vec<usize> = order.iter().copied().filter(|v| v % 2 == 1).collect();
    let Fair { weak, strong } = fair;
    let mut bad = vec![false; 2 * n];
    let mut bad_sccs: Vec<Vec<usize>> = Vec::new();
    let mut work = vec![pending_nodes];
    while let Some(nodes) = work.pop() {
        for scc in components(graph, &nodes) {
            let inside = |v: usize| scc.binary_search(&v).is_ok();
            let mut taken = 0u32;
            let mut cyclic = scc.len() > 1;
            for &v in &scc {
                let state = v / 2;
                if graph.is_terminal(state) {
                    cyclic = true; // stutters
                }
                for edge in graph.out(state) {
                    if inside(2 * edge.target as usize + 1) {
                        taken |= edge.classes;
                        cyclic |= edge.target as usize == state;
                    }
                }
            }
            if !cyclic {
                continue;
            }
            let all = scc
                .iter()
                .fold(u32::MAX, |acc, &v| acc & graph.enabled[v / 2]);
            let any = scc.iter().fold(0, |acc, &v| acc | graph.enabled[v / 2]);
            if weak & all & !taken != 0 {
                continue; // a weakly fair class is enabled throughout and never taken
            }
            let starved = strong & any & !taken;
            if starved != 0 {
                // Only paths avoiding the states that enable a starved class can be fair.
                let rest: Vec<usize> = scc
                    .iter()
                    .copied()
                    .filter(|&v| graph.enabled[v / 2] & starved == 0)
                    .collect();
                if !rest.is_empty() {
                    work.push(rest);
                }
                continue;
            }
            for &v in &scc {
                bad[v] = true;
            }
            bad_sccs.push(scc);
        }
    }
    let Some(&loop_node) = order.iter().find(|&&v| bad[v]) else {
        return outcome;
    };
    let scc = bad_sccs
        .iter()
        .find(|c| c.binary_search(&loop_node).is_ok())
        .expect("a bad node is in a bad component");
    match lasso(model, graph, &parent, start, loop_node, scc, weak, strong) {
        Ok(lasso) => {
            outcome.verdict = Verdict::Violated;
            outcome.lasso = Some(lasso);
        }
        Err(collision) => {
            outcome.verdict = Verdict::Inconclusive;
            outcome.collision = Some(collision);
        }
    }
    outcome
}

struct Explored {
    states: u64,
    max_depth: u64,
    limit: Option<Limit>,
    /// The most bytes counted while exploring: the graph and the states waiting to be expanded.
    memory_bytes: u64,
}

/// The bytes [`check_bounded`] counts for a graph of `states` states and `edges` edges: per
/// state its fingerprint, the index's stored hash and table slot, and its edge offset, fairness
/// mask and marks; per edge its 12 bytes.
fn graph_bytes(states: usize, edges: usize) -> u64 {
    let per_state = 8 + 8 + 9 + 3 * size_of::<u32>();
    (states * per_state + edges * size_of::<Edge>()) as u64
}

/// The bytes of `waiting` states held whole until they are expanded, with their depth.
fn waiting_bytes<S>(waiting: usize) -> u64 {
    (waiting * size_of::<(u32, S)>()) as u64
}

/// Row `r`'s marks for `state`: its goal and trigger, two bits a row.
fn marks_of<M: Model>(rows: &[Row<'_, M>], state: &M::State) -> u32 {
    rows.iter().enumerate().fold(0, |marks, (r, row)| {
        let goal = (row.property.goal)(row.model, state);
        let trigger = row.property.trigger.is_some_and(|q| q(row.model, state));
        marks | u32::from(goal) << (2 * r) | u32::from(trigger) << (2 * r + 1)
    })
}

fn class_mask<A>(fairness: &[FairClass<A>], kind: Fairness) -> u32 {
    fairness
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == kind)
        .fold(0, |acc, (i, _)| acc | 1 << i)
}

fn classes_of<A>(fairness: &[FairClass<A>], action: &A) -> u32 {
    fairness
        .iter()
        .enumerate()
        .filter(|(_, c)| (c.member)(action))
        .fold(0, |acc, (i, _)| acc | 1 << i)
}

/// Breadth-first exploration of every reachable state within `budget`, with the first row's
/// model; every row's goal and trigger are evaluated on each state as it is stored.
fn explore<M>(
    rows: &[Row<'_, M>],
    fairness: &[FairClass<M::Action>],
    (budget, max_memory_bytes): (&Budget, Option<u64>),
    observe: &mut dyn FnMut(Progress),
    print: fn(&M::State) -> u64,
) -> (Graph<M::State>, Explored)
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let model = rows.first().expect("at least one row").model;
    let mut graph = Graph {
        print,
        init: None,
        states: IndexSet::default(),
        marks: Vec::new(),
        first: vec![0],
        edges: Vec::new(),
        enabled: Vec::new(),
    };
    let mut explored = Explored {
        states: 0,
        max_depth: 0,
        limit: None,
        memory_bytes: 0,
    };
    // The product, the lasso's prefix and replay all start from the one initial state; a second
    // one would be left out silently, so it is refused instead.
    let inits = model.init_states();
    assert!(
        inits.len() <= 1,
        "the liveness checker takes a model with one initial state"
    );
    // The states stored and not yet expanded, in id order (breadth-first), with their depth.
    let mut waiting: VecDeque<(u32, M::State)> = VecDeque::new();
    for init in inits {
        explored.states += 1;
        graph.states.insert((graph.print)(&init));
        graph.marks.push(marks_of(rows, &init));
        graph.init = Some(init.clone());
        waiting.push_back((0, init));
    }
    let mut actions = Vec::new();
    let mut index = 0u64;
    while let Some((depth, state)) = waiting.pop_front() {
        if index % OBSERVE_EVERY == OBSERVE_EVERY - 1 {
            if budget.deadline.is_some_and(|d| Instant::now() >= d) {
                explored.limit = Some(Limit::Time);
                break;
            }
            observe(Progress {
                states: explored.states,
                unique_states: graph.states.len() as u64,
                max_depth: explored.max_depth,
            });
        }
        actions.clear();
        model.actions(&state, &mut actions);
        let mut enabled = 0;
        for (i, action) in actions.drain(..).enumerate() {
            let classes = classes_of(fairness, &action);
            let Some(next) = model.next_state(&state, action) else {
                continue;
            };
            enabled |= classes;
            explored.states += 1;
            if !model.within_boundary(&next) {
                continue;
            }
            // One hash per generated state: insert, and take it back if the budget is spent.
            let (target, new) = graph.states.insert_full((graph.print)(&next));
            if new {
                let stored = graph.states.len();
                // The edge about to be pushed, and this state's own edge offset included.
                let bytes = graph_bytes(stored, graph.edges.len() + 1)
                    + waiting_bytes::<M::State>(waiting.len() + 1);
                explored.memory_bytes = explored.memory_bytes.max(bytes);
                let limit = if budget.max_states.is_some_and(|max| stored as u64 > max) {
                    Some(Limit::States)
                } else if max_memory_bytes.is_some_and(|max| bytes > max) {
                    Some(Limit::Memory)
                } else {
                    None
                };
                if limit.is_some() {
                    graph.states.pop();
                    explored.limit = limit;
                    return (graph, explored);
                }
                explored.max_depth = explored.max_depth.max((depth + 1).into());
                graph.marks.push(marks_of(rows, &next));
                waiting.push_back((depth + 1, next));
            }
            graph.edges.push(Edge {
                target: target as u32,
                action: i as u16,
                classes,
            });
        }
        graph.enabled.push(enabled);
        graph.first.push(graph.edges.len() as u32);
        index += 1;
    }
    (graph, explored)
}

/// The strongly connected components of the product restricted to `nodes` (pending nodes,
/// sorted or not), each sorted, in a deterministic order.
fn components<S>(graph: &Graph<S>, nodes: &[usize]) -> Vec<Vec<usize>> {
    let mut sorted = nodes.to_vec();
    sorted.sort_unstable();
    let mut g: DiGraph<usize, ()> = DiGraph::with_capacity(sorted.len(), sorted.len());
    let ids: Vec<NodeIndex> = sorted.iter().map(|&v| g.add_node(v)).collect();
    for (k, &v) in sorted.iter().enumerate() {
        for edge in graph.out(v / 2) {
            let w = 2 * edge.target as usize + 1;
            if let Ok(j) = sorted.binary_search(&w) {
                g.add_edge(ids[k], ids[j], ());
            }
        }
    }
    let mut sccs: Vec<Vec<usize>> = tarjan_scc(&g)
        .into_iter()
        .map(|c| {
            let mut c: Vec<usize> = c.into_iter().map(|i| g[i]).collect();
            c.sort_unstable();
            c
        })
        .collect();
    sccs.sort();
    sccs
}

/// The lasso to `loop_node` and around `scc`.
#[allow(clippy::too_many_arguments)]
fn lasso<M>(
    model: &M,
    graph: &Graph<M::State>,
    parent: &[Option<(u32, u32)>],
    start: usize,
    loop_node: usize,
    scc: &[usize],
    weak: u32,
    strong: u32,
) -> Result<Lasso<M::State, M::Action>, String>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    // The prefix, from the parents of the breadth-first search.
    let mut prefix_edges = Vec::new();
    let mut node = loop_node;
    while node != start {
        let (from, edge) = parent[node].expect("reached nodes have parents");
        prefix_edges.push((from as usize / 2, edge as usize));
        node = from as usize;
    }
    prefix_edges.reverse();

    // The cycle: take each fair class the component takes, pass a state disabling each weakly
    // fair class it does not take, and come back.
    let inside = |v: usize| scc.binary_search(&v).is_ok();
    let internal = |state: usize| {
        let base = graph.first[state] as usize;
        graph
            .out(state)
            .iter()
            .enumerate()
            .filter(move |(_, e)| inside(2 * e.target as usize + 1))
            .map(move |(i, e)| (base + i, e.target as usize))
    };
    let mut targets: Vec<Target> = Vec::new();
    let mut taken = 0u32;
    for &v in scc {
        for (e, _) in internal(v / 2) {
            taken |= graph.edges[e].classes;
        }
    }
    for bit in 0..MAX_CLASSES {
        let class = 1u32 << bit;
        if (weak | strong) & class == 0 {
            continue;
        }
        if taken & class != 0 {
            let (from, edge) = scc
                .iter()
                .flat_map(|&v| internal(v / 2).map(move |(e, _)| (v / 2, e)))
                .find(|&(_, e)| graph.edges[e].classes & class != 0)
                .expect("a taken class has an edge");
            targets.push(Target::Edge(from, edge));
        } else if weak & class != 0 {
            let state = scc
                .iter()
                .map(|&v| v / 2)
                .find(|&s| graph.enabled[s] & class == 0)
                .expect("a fair component disables what it does not take");
            targets.push(Target::State(state));
        }
    }
    let loop_state = loop_node / 2;
    let mut cycle_edges: Vec<(usize, usize)> = Vec::new();
    let mut at = loop_state;
    for target in targets {
        match target {
            Target::Edge(from, edge) => {
                cycle_edges.extend(route(&internal, at, from));
                cycle_edges.push((from, edge));
                at = graph.edges[edge].target as usize;
            }
            Target::State(state) => {
                cycle_edges.extend(route(&internal, at, state));
                at = state;
            }
        }
    }
    cycle_edges.extend(route(&internal, at, loop_state));
    if cycle_edges.is_empty() && !graph.is_terminal(loop_state) {
        // No class to take: any cycle through the loop state will do, the shortest.
        let (e, next) = internal(loop_state).next().expect("a cyclic component");
        cycle_edges.push((loop_state, e));
        cycle_edges.extend(route(&internal, next, loop_state));
    }

    let edges: Vec<(usize, usize)> = prefix_edges.iter().chain(&cycle_edges).copied().collect();
    let path = rebuild(model, graph, &edges)?;
    let loop_index = prefix_edges.len();
    let loop_state = path
        .steps
        .get(loop_index.wrapping_sub(1))
        .map_or(&path.init, |s| &s.1);
    if path.last_state() != loop_state {
        return Err(format!(
            "the lasso's last state is not its loop state, though their fingerprints are equal \
             ({:#018x}): a fingerprint collision",
            (graph.print)(loop_state)
        ));
    }
    Ok(Lasso { path, loop_index })
}

/// The path that takes `edges` (`(source state, edge index)`, each from where the last one
/// ended) from the initial state, its states made again by the model, each checked against the
/// fingerprint stored for it: a state whose fingerprint differs is an error, never a path.
fn rebuild<M>(
    model: &M,
    graph: &Graph<M::State>,
    edges: &[(usize, usize)],
) -> Result<Path<M::State, M::Action>, String>
where
    M: Model,
    M::State: Hash + Clone,
    M::Action: Clone,
{
    let init = graph
        .init
        .clone()
        .expect("a graph with states has its initial state");
    let mut path = Path {
        init,
        steps: Vec::new(),
    };
    let mut actions = Vec::new();
    for &(from, edge) in edges {
        let state = path.last_state();
        let stored = graph.states.get_index(from).copied();
        if stored != Some((graph.print)(state)) {
            return Err(format!(
                "the lasso's rebuilt state {from} has another fingerprint: a fingerprint collision"
            ));
        }
        actions.clear();
        model.actions(state, &mut actions);
        let edge = graph.edges[edge];
        let action = actions[edge.action as usize].clone();
        let next = model
            .next_state(state, action.clone())
            .ok_or("the model refused an action it took while exploring")?;
        path.steps.push((action, next));
    }
    Ok(path)
}

enum Target {
    Edge(usize, usize),
    State(usize),
}

/// The shortest path of internal edges from state `from` to state `to` (empty when equal), as
/// `(source state, edge index)` pairs; ties go to the smaller action index.
fn route<I>(internal: &dyn Fn(usize) -> I, from: usize, to: usize) -> Vec<(usize, usize)>
where
    I: Iterator<Item = (usize, usize)>,
{
    if from == to {
        return Vec::new();
    }
    let mut back: std::collections::BTreeMap<usize, (usize, usize)> = Default::default();
    let mut queue = VecDeque::from([from]);
    while let Some(s) = queue.pop_front() {
        for (e, t) in internal(s) {
            if t == from || back.contains_key(&t) {
                continue;
            }
            back.insert(t, (s, e));
            if t == to {
                let mut path = Vec::new();
                let mut at = to;
                while at != from {
                    let (s, e) = back[&at];
                    path.push((s, e));
                    at = s;
                }
                path.reverse();
                return path;
            }
            queue.push_back(t);
        }
    }
    unreachable!("a strongly connected component connects its states")
}
