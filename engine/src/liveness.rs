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
//! with Tarjan's algorithm; keep those that are fair (Emerson–Lei: a weakly fair class enabled in
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

use stateright::Model;
use walcheck_properties::system::{FairClass, Fairness, Liveness};

use crate::fingerprint::{Fingerprinter, Xxh64};
use crate::graph::{push_lean, Graph, MAX_EDGES, NO};
use crate::search::{Budget, Limit, Path, Progress, Verdict, OBSERVE_EVERY};
use crate::table::Table;

/// The most fairness classes a system may declare (they are bits of a `u32`).
pub const MAX_CLASSES: usize = 32;

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
/// `max_memory_bytes`. While exploring it counts the fingerprint table's slots (12 bytes
/// each), per state 4 for its edge offset and 1 or 4 each for its enabled classes and marks
/// ([`Graph::state_bytes`]), per edge 4 for its target and half a byte for its class set (a
/// byte once the graph has more than 16 class sets; 5 for the edge about to be added), and
/// each state waiting to be expanded at its `size_of` with its depth; once explored, per state
/// 8 for its fingerprint instead of the table, and for the monitor product 8 per product node
/// (parent link, place in the breadth-first order) and 21 per state (the strongly connected
/// components' working arrays). Heap a state owns is not counted; where the check stops
/// depends only on the model.
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

/// 64-bit fingerprints ([`Xxh64`]) as a function.
fn fold64<S: Hash>(state: &S) -> u64 {
    Xxh64.fingerprint(state)
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
    check_limits(rows, fairness);
    let limits = (budget, max_memory_bytes);
    let (graph, explored) = explore(rows, fairness, limits, observe, print);
    decide_rows(rows, &graph, &explored, fairness, max_memory_bytes, &print)
}

/// The limits on what one graph takes: fairness classes are bits of a `u32`, rows two bits each.
/// Panics when `rows` or `fairness` exceed them ([`MAX_CLASSES`], 16 rows): a system declaring
/// more is refused where it is declared.
pub fn check_limits<M: Model>(rows: &[Row<'_, M>], fairness: &[FairClass<M::Action>]) {
    assert!(
        fairness.len() <= MAX_CLASSES,
        "at most {MAX_CLASSES} fairness classes"
    );
    assert!(
        rows.len() <= 16,
        "at most 16 rows on one graph (two bits each)"
    );
}

/// How an exploration of the graph ended.
#[derive(Copy, Clone, Debug, Default)]
pub struct Explored {
    /// States generated, duplicates included.
    pub states: u64,
    /// The deepest state stored.
    pub max_depth: u64,
    /// The budget that ran out first, if one did: the graph is then incomplete.
    pub limit: Option<Limit>,
    /// The most bytes counted while exploring.
    pub memory_bytes: u64,
}

/// Each of `rows` decided on `graph`, explored as `explored` says (by [`check_rows`] or by the
/// compact engine), its states fingerprinted by `print`.
pub fn decide_rows<M>(
    rows: &[Row<'_, M>],
    graph: &Graph<M::State>,
    explored: &Explored,
    fairness: &[FairClass<M::Action>],
    max_memory_bytes: Option<u64>,
    print: &dyn Fn(&M::State) -> u64,
) -> Vec<Outcome<M::State, M::Action>>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let masks = |fair: bool| match fair {
        true => (
            class_mask(fairness, Fairness::Weak),
            class_mask(fairness, Fairness::Strong),
        ),
        false => (0, 0),
    };
    // Rows of one property share its monitor product and the product's components: only the
    // fairness they are decided under differs.
    let mut products: Vec<(&str, Product)> = Vec::new();
    let mut outcomes = Vec::with_capacity(rows.len());
    for (r, row) in rows.iter().enumerate() {
        let (weak, strong) = masks(row.fair);
        let fair = Fair { weak, strong };
        let mut outcome = start_outcome(graph, explored, max_memory_bytes);
        if outcome.verdict == Verdict::Inconclusive {
            outcomes.push(outcome);
            continue;
        }
        let id = row.property.id;
        let at = match products.iter().position(|(p, _)| *p == id) {
            Some(at) => at,
            None => {
                products.push((id, Product::new(graph, r, row.property.trigger.is_some())));
                products.len() - 1
            }
        };
        decide(row, graph, &products[at].1, fair, print, &mut outcome);
        outcomes.push(outcome);
    }
    outcomes
}
/// The fairness a row is decided under, as masks of the graph's classes.
#[derive(Copy, Clone)]
struct Fair {
    weak: u32,
    strong: u32,
}

/// The bytes the monitor product of a graph of `states` states adds to it.
fn product_bytes(states: usize) -> u64 {
    let per_node = 2 * size_of::<u32>();
    let per_state = 5 * size_of::<u32>() + size_of::<bool>();
    (2 * states * per_node + states * per_state) as u64
}

/// A row's outcome before its graph is judged: the exploration's counts, and inconclusive when
/// a budget ran out while exploring, or would before the monitor product is built.
fn start_outcome<S, A>(
    graph: &Graph<S>,
    explored: &Explored,
    max_memory_bytes: Option<u64>,
) -> Outcome<S, A> {
    let n = graph.len();
    let product_bytes = graph.bytes() + product_bytes(n);
    let mut outcome = Outcome {
        verdict: Verdict::Holds,
        states: explored.states,
        unique_states: n as u64,
        max_depth: explored.max_depth,
        product_nodes: 0,
        lasso: None,
        memory_bytes: explored.memory_bytes,
        limit: explored.limit,
        collision: None,
    };
    if outcome.limit.is_none() && max_memory_bytes.is_some_and(|max| product_bytes > max) {
        outcome.limit = Some(Limit::Memory);
    }
    if outcome.limit.is_some() {
        outcome.verdict = Verdict::Inconclusive;
    } else {
        outcome.memory_bytes = explored.memory_bytes.max(product_bytes);
    }
    outcome
}

/// The product of the graph with one property's monitor (node `2 * state + pending`), explored
/// breadth-first, and the strongly connected components of its pending part.
struct Product {
    start: usize,
    /// Per node, the edge it was first reached by and whether that edge's source node was
    /// pending (`edge << 1 | pending`), or [`NO`].
    parent: Vec<u32>,
    /// The nodes reached, breadth-first.
    order: Vec<u32>,
    /// The components of the pending nodes reached that can hold a cycle, and per state the
    /// index of its pending node's component ([`NO`] when in none of them).
    components: Sccs,
    component_of: Vec<u32>,
}

impl Product {
    /// The product for the property of row `r` (whose marks are bits `2r` and `2r + 1`), which
    /// has a trigger or not.
    fn new<S>(graph: &Graph<S>, r: usize, has_trigger: bool) -> Product {
        let n = graph.len();
        let goal = |t: usize| graph.marks.get(t) >> (2 * r) & 1 == 1;
        let trigger = |t: usize| graph.marks.get(t) >> (2 * r + 1) & 1 == 1;
        let pending_after = |pending: bool, t: usize| (pending || trigger(t)) && !goal(t);
        let start = usize::from((!has_trigger || trigger(0)) && !goal(0));
        // `order` is the queue; a node other than `start` is reached once it has a parent.
        let mut parent: Vec<u32> = vec![NO; 2 * n];
        let mut order: Vec<u32> = Vec::with_capacity(n);
        order.push(start as u32);
        let mut head = 0;
        while let Some(&node) = order.get(head) {
            head += 1;
            let (state, pending) = (node as usize / 2, node % 2 == 1);
            for edge in graph.out(state) {
                let t = graph.targets[edge] as usize;
                let next = 2 * t + usize::from(pending_after(pending, t));
                if parent[next] == NO && next != start {
                    parent[next] = (edge as u32) << 1 | u32::from(pending);
                    push_lean(&mut order, next as u32);
                }
            }
        }
        let pending_nodes: Vec<u32> = order.iter().copied().filter(|v| v % 2 == 1).collect();
        let mut split = Components::new(n);
        let components = split.of(graph, &pending_nodes);
        Product {
            start,
            parent,
            order,
            components,
            component_of: split.tag,
        }
    }
}

/// One row's verdict on the explored graph and its property's product, into `outcome`.
fn decide<M>(
    row: &Row<'_, M>,
    graph: &Graph<M::State>,
    product: &Product,
    fair: Fair,
    print: &dyn Fn(&M::State) -> u64,
    outcome: &mut Outcome<M::State, M::Action>,
) where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    outcome.product_nodes = product.order.len() as u64;
    let (bad, bad_sccs) = fair_components(graph, product, fair);
    let Some(&loop_node) = product
        .order
        .iter()
        .find(|&&v| v % 2 == 1 && bad[v as usize / 2])
    else {
        return;
    };
    let mut scc = bad_sccs
        .into_iter()
        .find(|c| c.contains(&loop_node))
        .expect("a bad node is in a bad component");
    // The cycle is built from the component's nodes in order.
    scc.sort_unstable();
    let ends = Ends {
        start: product.start,
        loop_node: loop_node as usize,
    };
    match lasso(row.model, graph, &product.parent, ends, &scc, fair, print) {
        Ok(lasso) => {
            outcome.verdict = Verdict::Violated;
            outcome.lasso = Some(lasso);
        }
        Err(collision) => {
            outcome.verdict = Verdict::Inconclusive;
            outcome.collision = Some(collision);
        }
    }
}

/// The fair strongly connected components of the product's pending part under `fair`, and per
/// state whether its pending node is in one of them: the product's components judged
/// ([`judge`]), and those a strongly fair class starves split again without the states
/// enabling it, until none is left to split.
fn fair_components<S>(
    graph: &Graph<S>,
    product: &Product,
    fair: Fair,
) -> (Vec<bool>, Vec<Vec<u32>>) {
    let n = graph.len();
    let mut bad = vec![false; n];
    let mut bad_sccs: Vec<Vec<u32>> = Vec::new();
    let mut work: Vec<Vec<u32>> = Vec::new();
    let mut take =
        |scc: &[u32], inside: &dyn Fn(usize) -> bool, work: &mut Vec<Vec<u32>>| match judge(
            graph, scc, inside, fair,
        ) {
            Judged::Fair => {
                for &v in scc {
                    bad[v as usize / 2] = true;
                }
                bad_sccs.push(scc.to_vec());
            }
            Judged::Unfair => {}
            Judged::Without(rest) => {
                if !rest.is_empty() {
                    work.push(rest);
                }
            }
        };
    for id in 0..product.components.len() {
        let inside = |state: usize| product.component_of[state] == id as u32;
        take(product.components.get(id), &inside, &mut work);
    }
    let mut scratch: Option<Components> = None;
    while let Some(nodes) = work.pop() {
        let scratch = scratch.get_or_insert_with(|| Components::new(n));
        let sccs = scratch.of(graph, &nodes);
        for id in 0..sccs.len() {
            let inside = |state: usize| scratch.tag[state] == id as u32;
            take(sccs.get(id), &inside, &mut work);
        }
        scratch.clear(&nodes);
    }
    (bad, bad_sccs)
}

/// What fairness makes of a pending component.
enum Judged {
    /// A fair path can stay in it forever: the property is violated.
    Fair,
    /// No fair path stays in it: it cannot stutter or cycle, or a weakly fair class is enabled
    /// throughout and never taken.
    Unfair,
    /// A strongly fair class enabled in it is never taken inside: only its states that do not
    /// enable such a class (these, maybe none) can hold a fair cycle.
    Without(Vec<u32>),
}

/// Whether `scc`, a component of pending nodes (`inside` says whose pending node is in it, by
/// state), holds a fair cycle (Emerson–Lei).
fn judge<S>(
    graph: &Graph<S>,
    scc: &[u32],
    inside: &dyn Fn(usize) -> bool,
    Fair { weak, strong }: Fair,
) -> Judged {
    let mut taken = 0u32;
    let mut cyclic = scc.len() > 1;
    for &v in scc {
        let state = v as usize / 2;
        if graph.is_terminal(state) {
            cyclic = true; // stutters
        }
        for edge in graph.out(state) {
            let target = graph.targets[edge] as usize;
            if inside(target) {
                taken |= graph.classes(edge);
                cyclic |= target == state;
            }
        }
    }
    if !cyclic {
        return Judged::Unfair;
    }
    let all = scc
        .iter()
        .fold(u32::MAX, |acc, &v| acc & graph.enabled.get(v as usize / 2));
    let any = scc
        .iter()
        .fold(0, |acc, &v| acc | graph.enabled.get(v as usize / 2));
    if weak & all & !taken != 0 {
        return Judged::Unfair;
    }
    let starved = strong & any & !taken;
    if starved != 0 {
        let rest: Vec<u32> = scc
            .iter()
            .copied()
            .filter(|&v| graph.enabled.get(v as usize / 2) & starved == 0)
            .collect();
        return Judged::Without(rest);
    }
    Judged::Fair
}

/// Tarjan's strongly connected components over sets of pending product nodes, iteratively (a
/// recursion as deep as the graph would overflow the stack), with working arrays allocated
/// once for the graph's states.
struct Components {
    /// Per state, the place of its pending node in the set being split, or [`NO`].
    place: Vec<u32>,
    /// Per state, the index of its pending node's component in the last split, or [`NO`].
    tag: Vec<u32>,
}

impl Components {
    fn new(states: usize) -> Components {
        Components {
            place: vec![NO; states],
            tag: vec![NO; states],
        }
    }

    /// The strongly connected components of the product restricted to `nodes` (pending nodes,
    /// in any order) that can hold a cycle (all but single nodes without a self-loop that are
    /// not terminal), in no particular order but the same on every run; each of their nodes'
    /// component index is then in `tag` until [`Components::clear`].
    fn of<S>(&mut self, graph: &Graph<S>, nodes: &[u32]) -> Sccs {
        for (i, &v) in nodes.iter().enumerate() {
            self.place[v as usize / 2] = i as u32;
        }
        let m = nodes.len();
        let mut walk = Walk {
            index: vec![NO; m],
            low: vec![0; m],
            on_stack: vec![false; m],
            stack: Vec::new(),
            path: Vec::new(),
            counter: 0,
        };
        let mut sccs = Sccs::default();
        let first_edge = |v: usize| graph.first[nodes[v] as usize / 2];
        for root in 0..m {
            if walk.index[root] != NO {
                continue;
            }
            walk.visit(root, first_edge(root));
            while let Some(&(v, edge)) = walk.path.last() {
                let v = v as usize;
                let state = nodes[v] as usize / 2;
                if edge < graph.first[state + 1] {
                    walk.path.last_mut().expect("on the path").1 += 1;
                    let w = self.place[graph.targets[edge as usize] as usize];
                    if w == NO {
                        continue;
                    }
                    let w = w as usize;
                    if walk.index[w] == NO {
                        walk.visit(w, first_edge(w));
                    } else if walk.on_stack[w] {
                        walk.low[v] = walk.low[v].min(walk.index[w]);
                    }
                    continue;
                }
                walk.path.pop();
                if let Some(&(u, _)) = walk.path.last() {
                    walk.low[u as usize] = walk.low[u as usize].min(walk.low[v]);
                }
                if walk.low[v] == walk.index[v] {
                    let begin = sccs.nodes.len();
                    loop {
                        let w = walk.stack.pop().expect("v is on the stack") as usize;
                        walk.on_stack[w] = false;
                        push_lean(&mut sccs.nodes, nodes[w]);
                        if w == v {
                            break;
                        }
                    }
                    let loops = |s: usize| graph.out(s).any(|e| graph.targets[e] as usize == s);
                    if sccs.nodes.len() == begin + 1 && !graph.is_terminal(state) && !loops(state) {
                        sccs.nodes.truncate(begin);
                        continue;
                    }
                    let id = sccs.len() as u32;
                    for &w in &sccs.nodes[begin..] {
                        self.tag[w as usize / 2] = id;
                    }
                    push_lean(&mut sccs.ends, sccs.nodes.len() as u32);
                }
            }
        }
        for &v in nodes {
            self.place[v as usize / 2] = NO;
        }
        sccs
    }

    /// Forgets the components of the last split of `nodes`.
    fn clear(&mut self, nodes: &[u32]) {
        for &v in nodes {
            self.tag[v as usize / 2] = NO;
        }
    }
}

/// Strongly connected components, flat: component `i` is `nodes[ends[i - 1]..ends[i]]`.
#[derive(Default)]
struct Sccs {
    nodes: Vec<u32>,
    ends: Vec<u32>,
}

impl Sccs {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &[u32] {
        let begin = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.nodes[begin..self.ends[i] as usize]
    }
}

/// Tarjan's working state over the places of one set of nodes.
struct Walk {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    stack: Vec<u32>,
    /// The depth-first path: a node's place and the next of its edges to follow.
    path: Vec<(u32, u32)>,
    counter: u32,
}

impl Walk {
    fn visit(&mut self, v: usize, first_edge: u32) {
        self.index[v] = self.counter;
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v as u32);
        self.on_stack[v] = true;
        self.path.push((v as u32, first_edge));
    }
}

/// Row `r`'s marks for `state`: its goal and trigger, two bits a row.
pub fn marks_of<M: Model>(rows: &[Row<'_, M>], state: &M::State) -> u32 {
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

/// The fairness classes `action` belongs to, as bits.
pub(crate) fn classes_of<A>(fairness: &[FairClass<A>], action: &A) -> u32 {
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
    let mut exploring = Exploring {
        model: rows.first().expect("at least one row").model,
        rows,
        fairness,
        limits: (budget, max_memory_bytes),
        print,
        graph: Graph::default(),
        table: Table::new(),
        explored: Explored::default(),
        waiting: VecDeque::new(),
    };
    exploring.store_init();
    let mut actions = Vec::new();
    let mut index = 0u64;
    while let Some((depth, state)) = exploring.waiting.pop_front() {
        if index % OBSERVE_EVERY == OBSERVE_EVERY - 1 {
            if let Some(limit) = budget.run_out() {
                exploring.explored.limit = Some(limit);
                break;
            }
            observe(Progress {
                states: exploring.explored.states,
                unique_states: exploring.graph.len() as u64,
                max_depth: exploring.explored.max_depth,
            });
        }
        if let Err(limit) = exploring.expand(depth, &state, &mut actions) {
            exploring.explored.limit = Some(limit);
            break;
        }
        index += 1;
    }
    let Exploring {
        mut graph,
        table,
        explored,
        ..
    } = exploring;
    graph.prints = table.prints(graph.len());
    (graph, explored)
}

/// An exploration under way ([`explore`]): the graph and fingerprint table it fills, the states
/// stored and not yet expanded, in id order (breadth-first), with their depth, and its limits.
struct Exploring<'a, 'r, M: Model> {
    model: &'r M,
    rows: &'a [Row<'r, M>],
    fairness: &'a [FairClass<M::Action>],
    limits: (&'a Budget, Option<u64>),
    print: fn(&M::State) -> u64,
    graph: Graph<M::State>,
    table: Table<u64>,
    explored: Explored,
    waiting: VecDeque<(u32, M::State)>,
}

impl<M> Exploring<'_, '_, M>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    /// Stores the initial state. The product, the lasso's prefix and replay all start from the
    /// one initial state; a second one would be left out silently, so it is refused instead.
    fn store_init(&mut self) {
        let inits = self.model.init_states();
        assert!(
            inits.len() <= 1,
            "the liveness checker takes a model with one initial state"
        );
        for init in inits {
            self.explored.states += 1;
            let at = (self.print)(&init);
            let slot = self.table.find(at).expect_err("an empty table");
            self.table.insert(slot, at, 0);
            self.graph.marks.push(marks_of(self.rows, &init));
            self.graph.init = Some(init.clone());
            self.waiting.push_back((0, init));
        }
    }

    /// Expands `state`, stored at `depth`: each successor inside the boundary stored if it is
    /// new ([`Exploring::store`]) and its edge added, in action order, then the state's edges
    /// ended. Errors: the limit that storing a new one would exceed.
    #[inline]
    fn expand(
        &mut self,
        depth: u32,
        state: &M::State,
        actions: &mut Vec<M::Action>,
    ) -> Result<(), Limit> {
        actions.clear();
        self.model.actions(state, actions);
        let mut enabled = 0;
        for action in actions.drain(..) {
            let classes = classes_of(self.fairness, &action);
            let Some(next) = self.model.next_state(state, action) else {
                continue;
            };
            enabled |= classes;
            self.explored.states += 1;
            if !self.model.within_boundary(&next) {
                continue;
            }
            let at = (self.print)(&next);
            let target = match self.table.find(at) {
                Ok(target) => target,
                Err(slot) => self.store(slot, at, depth + 1, next)?,
            };
            self.graph.push_edge(target, classes);
        }
        self.graph.end_state(enabled);
        Ok(())
    }

    /// Stores `next`, new, of fingerprint `at`, at table slot `slot` and at `depth`, to be
    /// expanded; returns its id. Errors: the limit storing it would exceed, the edge about to be
    /// added to it counted.
    #[inline]
    fn store(&mut self, slot: usize, at: u64, depth: u32, next: M::State) -> Result<u32, Limit> {
        let (budget, max_memory_bytes) = self.limits;
        let stored = self.graph.len() + 1;
        let slots = self.table.slots_after_insert(at);
        let edge_bytes = self.graph.edge_bytes() + Graph::<()>::EDGE_BYTES;
        let bytes = exploring_bytes(slots, stored * self.graph.state_bytes(), edge_bytes)
            + waiting_bytes::<M::State>(self.waiting.len() + 1);
        if budget.max_states.is_some_and(|max| stored as u64 > max) {
            return Err(Limit::States);
        } else if max_memory_bytes.is_some_and(|max| bytes > max) {
            return Err(Limit::Memory);
        } else if self.graph.edges() + 1 >= MAX_EDGES || stored >= NO as usize {
            return Err(Limit::Indices);
        }
        self.explored.memory_bytes = self.explored.memory_bytes.max(bytes);
        let target = self.graph.len() as u32;
        self.table.insert(slot, at, target);
        self.explored.max_depth = self.explored.max_depth.max(depth.into());
        self.graph.marks.push(marks_of(self.rows, &next));
        self.waiting.push_back((depth, next));
        Ok(target)
    }
}

/// The bytes counted while exploring, once states taking `state_bytes` and edges taking
/// `edge_bytes` are stored in a table of `slots` slots.
fn exploring_bytes(slots: usize, state_bytes: usize, edge_bytes: usize) -> u64 {
    (slots * Table::<u64>::SLOT_BYTES + state_bytes + edge_bytes) as u64
}

/// The bytes of `waiting` states held whole until they are expanded, with their depth.
fn waiting_bytes<S>(waiting: usize) -> u64 {
    (waiting * size_of::<(u32, S)>()) as u64
}

/// Where a lasso starts and loops: product nodes.
#[derive(Copy, Clone)]
struct Ends {
    start: usize,
    loop_node: usize,
}

/// The lasso to `ends.loop_node` and around `scc`.
fn lasso<M>(
    model: &M,
    graph: &Graph<M::State>,
    parent: &[u32],
    ends: Ends,
    scc: &[u32],
    fair: Fair,
    print: &dyn Fn(&M::State) -> u64,
) -> Result<Lasso<M::State, M::Action>, String>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let prefix_edges = prefix(graph, parent, ends);
    let cycle_edges = cycle(graph, scc, ends.loop_node / 2, fair);
    let edges: Vec<(usize, usize)> = prefix_edges.iter().chain(&cycle_edges).copied().collect();
    let path = rebuild(model, graph, &edges, print)?;
    let loop_index = prefix_edges.len();
    let loop_state = path
        .steps
        .get(loop_index.wrapping_sub(1))
        .map_or(&path.init, |s| &s.1);
    if path.last_state() != loop_state {
        return Err(format!(
            "the lasso's last state is not its loop state, though their fingerprints are equal \
             ({:#018x}): a fingerprint collision",
            print(loop_state)
        ));
    }
    Ok(Lasso { path, loop_index })
}

/// The lasso's prefix, from the parents of the product's breadth-first search: the edges
/// (`(source state, edge index)`) from `ends.start` to `ends.loop_node`.
fn prefix<S>(graph: &Graph<S>, parent: &[u32], ends: Ends) -> Vec<(usize, usize)> {
    let mut prefix_edges = Vec::new();
    let mut node = ends.loop_node;
    while node != ends.start {
        let link = parent[node];
        debug_assert_ne!(link, NO, "reached nodes have parents");
        let edge = (link >> 1) as usize;
        let from = graph.source(edge);
        prefix_edges.push((from, edge));
        node = 2 * from + (link & 1) as usize;
    }
    prefix_edges.reverse();
    prefix_edges
}

/// The lasso's cycle, from `loop_state` back to it inside `scc` (edges as in [`prefix`]): it
/// takes each fair class the component takes, passes a state disabling each weakly fair class
/// it does not take ([`cycle_targets`]), and comes back.
fn cycle<S>(graph: &Graph<S>, scc: &[u32], loop_state: usize, fair: Fair) -> Vec<(usize, usize)> {
    let inside = |v: usize| scc.binary_search(&(v as u32)).is_ok();
    let internal = |state: usize| {
        graph
            .out(state)
            .map(move |e| (e, graph.targets[e] as usize))
            .filter(move |&(_, t)| inside(2 * t + 1))
    };
    let mut cycle_edges: Vec<(usize, usize)> = Vec::new();
    let mut at = loop_state;
    for target in cycle_targets(graph, scc, &internal, fair) {
        match target {
            Target::Edge(from, edge) => {
                cycle_edges.extend(route(&internal, at, from));
                cycle_edges.push((from, edge));
                at = graph.targets[edge] as usize;
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
    cycle_edges
}

/// What the cycle around `scc` must pass, in class order: for each fair class the component
/// takes, an edge of that class inside it; for each weakly fair class it does not take, a state
/// that disables it. `internal` gives a state's edges inside the component.
fn cycle_targets<S, I>(
    graph: &Graph<S>,
    scc: &[u32],
    internal: &dyn Fn(usize) -> I,
    Fair { weak, strong }: Fair,
) -> Vec<Target>
where
    I: Iterator<Item = (usize, usize)>,
{
    let mut targets: Vec<Target> = Vec::new();
    let mut taken = 0u32;
    for &v in scc {
        for (e, _) in internal(v as usize / 2) {
            taken |= graph.classes(e);
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
                .flat_map(|&v| internal(v as usize / 2).map(move |(e, _)| (v as usize / 2, e)))
                .find(|&(_, e)| graph.classes(e) & class != 0)
                .expect("a taken class has an edge");
            targets.push(Target::Edge(from, edge));
        } else if weak & class != 0 {
            let state = scc
                .iter()
                .map(|&v| v as usize / 2)
                .find(|&s| graph.enabled.get(s) & class == 0)
                .expect("a fair component disables what it does not take");
            targets.push(Target::State(state));
        }
    }
    targets
}

/// The path that takes `edges` (`(source state, edge index)`, each from where the last one
/// ended) from the initial state, its states made again by the model, each checked against the
/// fingerprint stored for it: a state whose fingerprint differs is an error, never a path. An
/// edge's action is found again as the edge's place among the source state's successors inside
/// the boundary, in action order, as the exploration stored them.
fn rebuild<M>(
    model: &M,
    graph: &Graph<M::State>,
    edges: &[(usize, usize)],
    print: &dyn Fn(&M::State) -> u64,
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
        let stored = graph.prints.get(from).copied();
        if stored != Some(print(state)) {
            return Err(format!(
                "the lasso's rebuilt state {from} has another fingerprint: a fingerprint collision"
            ));
        }
        actions.clear();
        model.actions(state, &mut actions);
        let mut place = edge - graph.first[from] as usize;
        let mut taken = None;
        for action in actions.drain(..) {
            let Some(next) = model.next_state(state, action.clone()) else {
                continue;
            };
            if !model.within_boundary(&next) {
                continue;
            }
            if place == 0 {
                taken = Some((action, next));
                break;
            }
            place -= 1;
        }
        let step = taken.ok_or("the model refused an action it took while exploring")?;
        path.steps.push(step);
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
