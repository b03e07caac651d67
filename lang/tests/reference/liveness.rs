//! The reference's liveness: `eventually ID: COND` and `always ID: P leads to Q` decided by a
//! naive fair-cycle search over the reference's own state graph, as docs/language.md reads them
//! ("every behaviour of the design, under its fairness, reaches a state where `COND` holds";
//! "from every reachable state where `P` holds, every fair behaviour reaches a state (that one
//! included) where `Q` holds").
//!
//! A behaviour that never reaches the goal stays, from some point on, inside one strongly
//! connected component of the states that do not meet it, or ends in a state with no enabled
//! action, which "stutters forever". Under weak fairness alone ("Fairness of processes": each
//! class weakly fair) such a component has a fair behaviour exactly when every class enabled in
//! all of its states is taken by some edge inside it: a cycle through all its states and edges
//! is then fair, and a component that fails this holds no fair cycle either. No budget: the
//! graph is the comparison's, already bounded.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use petgraph::graph::{DiGraph, NodeIndex};
use walcheck_lang::ast::Expr;

use super::semantics::{Class, Reference, State, V};

/// The reachable graph: each state's actions as (target, class).
pub struct Graph {
    pub states: Vec<State>,
    pub edges: Vec<Vec<(usize, Option<Class>)>>,
}

/// Explores the reachable graph breadth first, up to `bound` states: `None` past it.
pub fn explore(r: &Reference, bound: usize) -> Option<Graph> {
    let init = r.initial();
    let mut index = BTreeMap::from([(init.clone(), 0)]);
    let mut g = Graph {
        states: vec![init],
        edges: vec![],
    };
    let mut next = 0;
    while next < g.states.len() {
        let mut out = Vec::new();
        for (class, s) in r.labelled(&g.states[next]) {
            let id = match index.get(&s) {
                Some(&id) => id,
                None => {
                    if g.states.len() >= bound {
                        return None;
                    }
                    index.insert(s.clone(), g.states.len());
                    g.states.push(s);
                    g.states.len() - 1
                }
            };
            out.push((id, class));
        }
        g.edges.push(out);
        next += 1;
    }
    Some(g)
}

/// Whether `goal`, after `trigger` (from the initial state when `None`), can be avoided forever
/// by a fair behaviour: the property is violated.
pub fn violated(r: &Reference, g: &Graph, trigger: Option<&Expr>, goal: &Expr) -> bool {
    let holds = |e: &Expr, s: &State| r.eval(s, e) == V::Bool(true);
    let met: Vec<bool> = g.states.iter().map(|s| holds(goal, s)).collect();
    let seeds: Vec<usize> = match trigger {
        None => vec![0],
        Some(p) => (0..g.states.len())
            .filter(|&i| holds(p, &g.states[i]))
            .collect(),
    };
    // The states a behaviour reaches from a seed without meeting the goal.
    let mut pending = BTreeSet::new();
    let mut queue: VecDeque<usize> = seeds.into_iter().filter(|&i| !met[i]).collect();
    pending.extend(queue.iter().copied());
    while let Some(i) = queue.pop_front() {
        for &(j, _) in &g.edges[i] {
            if !met[j] && pending.insert(j) {
                queue.push_back(j);
            }
        }
    }
    let mut sub: DiGraph<usize, ()> = DiGraph::new();
    let node: BTreeMap<usize, NodeIndex> = pending.iter().map(|&i| (i, sub.add_node(i))).collect();
    for &i in &pending {
        for &(j, _) in &g.edges[i] {
            if let Some(&nj) = node.get(&j) {
                sub.add_edge(node[&i], nj, ());
            }
        }
    }
    petgraph::algo::tarjan_scc(&sub)
        .iter()
        .any(|component| fair_cycle(g, &component.iter().map(|&n| sub[n]).collect()))
}

/// Whether the component `c` holds a fair behaviour: a state with no action at all (it
/// stutters), or a cycle that takes every class enabled in all of its states.
fn fair_cycle(g: &Graph, c: &BTreeSet<usize>) -> bool {
    let inside: Vec<Option<Class>> = c
        .iter()
        .flat_map(|&i| g.edges[i].iter().filter(|(j, _)| c.contains(j)))
        .map(|&(_, class)| class)
        .collect();
    if inside.is_empty() {
        // A single state without a self-loop: a behaviour stays only if nothing can go on.
        return c.len() == 1 && g.edges[*c.first().expect("a state")].is_empty();
    }
    let enabled_everywhere = c
        .iter()
        .map(|&i| {
            g.edges[i]
                .iter()
                .filter_map(|&(_, k)| k)
                .collect::<BTreeSet<_>>()
        })
        .reduce(|a, b| &a & &b)
        .unwrap_or_default();
    enabled_everywhere
        .iter()
        .all(|class| inside.contains(&Some(*class)))
}
