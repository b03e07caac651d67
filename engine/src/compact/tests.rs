//! The compact engine's tests: the same answers as the reference engine on small models, at any
//! thread count, under every budget, packed or whole.

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use stateright::{Expectation, Model, Property};

use std::hash::Hash;
use std::time::Instant;

use walcheck_properties::codec::Codec;

use super::links::Links;
use super::visited::{Recent, RECENT_SLOTS};
use super::*;
use crate::search::{Budget, Verdict};
use crate::table::NONE;

/// [`check`] with every level packed by [`Codec::postcard`].
fn check_packed<M>(model: &M, options: &Options) -> Result<Report<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State:
        Hash + Eq + Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    M::Action: Clone,
{
    check_packed_by(model, options, Codec::postcard())
}

/// [`check`] with every level packed by `codec`.
fn check_packed_by<M>(
    model: &M,
    options: &Options,
    codec: Codec<M::State>,
) -> Result<Report<M::State, M::Action>, Error>
where
    M: Model + Sync,
    M::State: Hash + Eq + Clone + Send + Sync,
    M::Action: Clone,
{
    let hooks = Hooks {
        select: &|_| true,
        threads: &|| options.threads,
    };
    let options = Options {
        pack_above_bytes: 0,
        ..*options
    };
    let search = Search {
        model,
        fingerprinter: &Xxh64,
        options: &options,
        hooks: &hooks,
        recording: None,
        codec: Some(codec),
    };
    explore_hooked(search, &mut |_| {}).map(|(report, _)| report)
}

/// Runs the compact engine at 1, 2 and 4 threads and several round sizes, its levels held
/// whole and packed, asserts the reports are identical, and that every property's outcome
/// is the one `reference::check` gives.
fn same_as_checker<M>(model: &M, budget: Budget) -> Report<M::State, M::Action>
where
    M: Model + Sync,
    M::State: Hash + Eq + Clone + Send + Sync + std::fmt::Debug,
    M::State: serde::Serialize + serde::de::DeserializeOwned + 'static,
    M::Action: Clone + PartialEq + std::fmt::Debug,
{
    let mut reports = Vec::new();
    let mut packed = Vec::new();
    for threads in [1, 2, 4] {
        for chunk_states in [1, 2, 3, CHUNK_STATES] {
            let options = Options {
                threads,
                budget,
                chunk_states,
                ..Options::default()
            };
            reports.push(check(model, &options).expect("no collision"));
            packed.push(check_packed(model, &options).expect("no collision"));
        }
    }
    // The same report at any thread count, round size and packing, but for the counted
    // memory: packed states take fewer bytes, and a level's blocks are let go (and packed) a
    // round at a time, so it depends on the round size too; never on the thread count.
    let unmeasured = |r: &Report<M::State, M::Action>| {
        format!(
            "{:?}",
            Report {
                memory_bytes: 0,
                ..r.clone()
            }
        )
    };
    let first = unmeasured(&reports[0]);
    for report in reports.iter().chain(&packed) {
        assert_eq!(first, unmeasured(report), "same report");
    }
    for runs in [&reports, &packed] {
        for (i, report) in runs.iter().enumerate() {
            // `runs[i % 4]` is the same round size on one thread.
            let one = runs[i % 4].memory_bytes;
            assert_eq!(report.memory_bytes, one, "same memory at any thread count");
        }
    }
    let report = reports.swap_remove(0);
    let old_budget = Budget {
        max_states: budget.max_states,
        ..Budget::default()
    };
    for (property, checked) in model.properties().iter().zip(&report.properties) {
        assert_eq!(property.name, checked.name);
        let old = crate::reference::check(model, property, &old_budget);
        match (old, &checked.outcome) {
            (Err(_), None) => assert_eq!(property.expectation, Expectation::Eventually),
            (Ok(old), Some(new)) => {
                assert_eq!(old.verdict, new.verdict, "{} verdict", property.name);
                assert_eq!(old.states, new.states, "{} states", property.name);
                assert_eq!(
                    old.unique_states, new.unique_states,
                    "{} unique states",
                    property.name
                );
                assert_eq!(old.max_depth, new.max_depth, "{} depth", property.name);
                assert_eq!(old.path, new.path, "{} path", property.name);
            }
            (old, new) => panic!("{}: checker {old:?}, compact {new:?}", property.name),
        }
    }
    if report.stop == Stop::Decided {
        // The search ends where its last property was decided.
        let last = report
            .properties
            .iter()
            .filter_map(|checked| checked.outcome.as_ref())
            .max_by_key(|outcome| outcome.states);
        if let Some(last) = last {
            assert_eq!(
                (last.states, last.unique_states, last.max_depth),
                (report.states, report.unique_states, report.max_depth)
            );
        }
    }
    report
}

/// A counter from 0 that can step up, step down, and jump to 0; bounded at `max`.
struct Counter {
    max: u8,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Step {
    Up,
    Down,
    Reset,
}

impl Model for Counter {
    type State = u8;
    type Action = Step;
    fn init_states(&self) -> Vec<u8> {
        vec![0]
    }
    fn actions(&self, state: &u8, actions: &mut Vec<Step>) {
        actions.push(Step::Up);
        if *state > 0 {
            actions.push(Step::Down);
            actions.push(Step::Reset);
        }
    }
    fn next_state(&self, state: &u8, action: Step) -> Option<u8> {
        match action {
            Step::Up => Some(state + 1),
            Step::Down => Some(state - 1),
            Step::Reset => Some(0),
        }
    }
    fn within_boundary(&self, state: &u8) -> bool {
        *state <= self.max
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("below 5", |_, s| *s < 5),
            Property::sometimes("reaches 3", |_, s| *s == 3),
            Property::always("not 200", |_, s| *s != 200),
            Property::eventually("reaches max", |m, s| *s == m.max),
        ]
    }
}

#[test]
fn counter_matches_checker() {
    let report = same_as_checker(&Counter { max: 7 }, Budget::default());
    assert_eq!(report.stop, Stop::Exhausted);
    assert_eq!(report.unique_states, 8);
    let below_5 = report.outcome("below 5").expect("decided");
    assert_eq!(below_5.verdict, Verdict::Violated);
    let path = below_5.path.as_ref().expect("a counterexample");
    assert_eq!(path.actions().cloned().collect::<Vec<_>>(), [Step::Up; 5]);
    assert_eq!(*path.last_state(), 5);
    assert_eq!(
        report.outcome("not 200").expect("decided").verdict,
        Verdict::Holds
    );
    assert!(
        report.outcome("reaches max").is_none(),
        "eventually is not decided here"
    );
}

/// Two flags set in either order: the second level is reached twice.
struct Diamond;

impl Model for Diamond {
    type State = (bool, bool);
    type Action = u8;
    fn init_states(&self) -> Vec<(bool, bool)> {
        vec![(false, false)]
    }
    fn actions(&self, state: &(bool, bool), actions: &mut Vec<u8>) {
        if !state.0 {
            actions.push(0);
        }
        if !state.1 {
            actions.push(1);
        }
    }
    fn next_state(&self, state: &(bool, bool), action: u8) -> Option<(bool, bool)> {
        Some(if action == 0 {
            (true, state.1)
        } else {
            (state.0, true)
        })
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("not both", |_, s: &(bool, bool)| !(s.0 && s.1)),
            Property::sometimes("both", |_, s: &(bool, bool)| s.0 && s.1),
            Property::sometimes("only second", |_, s: &(bool, bool)| !s.0 && s.1),
        ]
    }
}

#[test]
fn diamond_matches_checker() {
    let report = same_as_checker(&Diamond, Budget::default());
    assert_eq!(report.stop, Stop::Decided);
    let both = report.outcome("both").expect("decided");
    assert_eq!(both.path.as_ref().expect("a witness").steps.len(), 2);
    // The first parent in order reaches (true, true): by setting the second flag last.
    assert_eq!(
        both.path
            .as_ref()
            .expect("a witness")
            .actions()
            .collect::<Vec<_>>(),
        [&0, &1]
    );
}

/// A grid walk with several initial states (one repeated, one outside the boundary), a
/// disabled action, and properties decided at different depths, one never.
struct Grid;

#[derive(Clone, Debug, PartialEq)]
enum Move {
    Right,
    Up,
    Teleport,
}

impl Model for Grid {
    type State = (u8, u8);
    type Action = Move;
    fn init_states(&self) -> Vec<(u8, u8)> {
        vec![(9, 9), (0, 1), (0, 0), (0, 1)]
    }
    fn actions(&self, _: &(u8, u8), actions: &mut Vec<Move>) {
        actions.extend([Move::Right, Move::Up, Move::Teleport]);
    }
    fn next_state(&self, state: &(u8, u8), action: Move) -> Option<(u8, u8)> {
        match action {
            Move::Right => Some((state.0 + 1, state.1)),
            Move::Up => Some((state.0, state.1 + 1)),
            // Never enabled: not a generated state.
            Move::Teleport => None,
        }
    }
    fn within_boundary(&self, state: &(u8, u8)) -> bool {
        state.0 <= 4 && state.1 <= 4
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("sum below 3", |_, s: &(u8, u8)| s.0 + s.1 < 3),
            Property::sometimes("at (2, 1)", |_, s: &(u8, u8)| *s == (2, 1)),
            Property::sometimes("at the origin", |_, s: &(u8, u8)| *s == (0, 0)),
            Property::sometimes("corner", |_, s: &(u8, u8)| *s == (4, 4)),
            Property::always("inside", |_, s: &(u8, u8)| s.0 <= 4),
            Property::sometimes("beyond", |_, s: &(u8, u8)| s.1 == 9),
            Property::eventually("corner eventually", |_, s: &(u8, u8)| *s == (4, 4)),
        ]
    }
}

#[test]
fn grid_matches_checker() {
    let report = same_as_checker(&Grid, Budget::default());
    assert_eq!(report.stop, Stop::Exhausted);
    assert_eq!(report.unique_states, 25);
    // From (0, 1), the corner is 7 steps away.
    assert_eq!(report.max_depth, 7);
    let origin = report.outcome("at the origin").expect("decided");
    assert_eq!((origin.states, origin.unique_states), (3, 2));
    assert_eq!(
        report.outcome("beyond").expect("decided").verdict,
        Verdict::Violated
    );
}

#[test]
fn grid_under_a_state_budget_matches_checker() {
    for max_states in 0..27 {
        let budget = Budget {
            max_states: Some(max_states),
            ..Budget::default()
        };
        let report = same_as_checker(&Grid, budget);
        if max_states < 25 {
            assert_eq!(report.stop, Stop::Limit(Limit::States), "{max_states}");
        }
    }
}

/// A witness that no reachable state gives: the space is exhausted first.
struct Unreachable;

impl Model for Unreachable {
    type State = u16;
    type Action = u16;
    fn init_states(&self) -> Vec<u16> {
        vec![1]
    }
    fn actions(&self, state: &u16, actions: &mut Vec<u16>) {
        if *state < 1000 {
            actions.extend([2, 3]);
        }
    }
    fn next_state(&self, state: &u16, factor: u16) -> Option<u16> {
        Some(state * factor)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::sometimes("odd above 1", |_, s| *s > 1 && s % 2 == 1 && s % 3 != 0),
            Property::always("small", |_, s| *s < 3000),
        ]
    }
}

#[test]
fn unreachable_witness_matches_checker() {
    let report = same_as_checker(&Unreachable, Budget::default());
    assert_eq!(report.stop, Stop::Exhausted);
    let odd = report.outcome("odd above 1").expect("decided");
    assert_eq!(odd.verdict, Verdict::Violated);
    assert!(odd.path.is_none());
    assert_eq!(odd.states, report.states);
    // Exhausted over 64-bit fingerprints: TLC's estimate, by its formula.
    let c = report.collision;
    let (d, g) = (c.distinct as f64, c.lookups as f64);
    assert_eq!(c.optimistic, d * ((g - d) / 2f64.powi(64)));
    assert!(c.lookups > c.distinct && c.optimistic > 0.0 && c.optimistic < 1e-12);
}

#[test]
fn fingerprints_of_128_bits_give_the_same_outcomes() {
    let options = Options::default();
    let narrow = check(&Grid, &options).expect("no collision");
    let wide = check_with(&Grid, &Xxh128, &options, &mut |_| {}).expect("no collision");
    for (n, w) in narrow.properties.iter().zip(&wide.properties) {
        assert_eq!(format!("{:?}", n.outcome), format!("{:?}", w.outcome));
    }
    assert_eq!(wide.collision.fingerprint_bits, 128);
    assert!(wide.collision.optimistic < narrow.collision.optimistic);
}

#[test]
fn recent_fingerprints_keep_the_last_of_each_place() {
    let mut recent = Recent::<u64>::new();
    recent.put(5 << 32, 1);
    assert_eq!(recent.get(5 << 32), None, "not started: it holds nothing");
    recent.start();
    assert_eq!(recent.get(0), None, "an empty slot is not fingerprint 0's");
    let (first, second) = (7u64 << 32, (7 + RECENT_SLOTS as u64) << 32);
    recent.put(first, 1);
    assert_eq!(recent.get(first), Some(1));
    assert_eq!(recent.get(second), None);
    recent.put(second, 2);
    assert_eq!(recent.get(second), Some(2));
    assert_eq!(recent.get(first), None, "the place's last fingerprint only");
}

/// Gives two chosen counter states one fingerprint, and every other state its own.
struct Merging(u8, u8);

impl Fingerprinter<u8> for Merging {
    type Print = u64;
    fn fingerprint(&self, state: &u8) -> u64 {
        if *state == self.1 {
            self.0.into()
        } else {
            (*state).into()
        }
    }
}

#[test]
fn a_collision_with_a_state_held_whole_is_an_error() {
    // 4 is generated from 3, which is in the level being expanded.
    let error = check_with(
        &Counter { max: 7 },
        &Merging(3, 4),
        &Options::default(),
        &mut |_| {},
    )
    .expect_err("a collision");
    assert_eq!(
        error,
        Error::Collision {
            print: 3,
            stored: 3,
            parent: Some(3),
            action: Some(0),
        }
    );
    // 5 collides with 4 in the level being built, at 2 threads too.
    let options = Options {
        threads: 2,
        ..Options::default()
    };
    let error = check_with(&Counter { max: 7 }, &Merging(4, 5), &options, &mut |_| {});
    assert!(
        matches!(error, Err(Error::Collision { stored: 4, .. })),
        "{error:?}"
    );
}

#[test]
fn a_collision_with_an_older_state_is_an_error_when_verifying_duplicates() {
    // 6 collides with 1, stored five levels earlier and no longer held whole.
    let verifying = Options {
        verify_duplicates: true,
        ..Options::default()
    };
    let error = check_with(&Counter { max: 7 }, &Merging(1, 6), &verifying, &mut |_| {});
    assert!(
        matches!(error, Err(Error::Collision { stored: 1, .. })),
        "{error:?}"
    );
    // Without verifying, the collision prunes 6 and 7, and so it is what the collision
    // estimate is for: this is the failure it estimates.
    let report = check_with(
        &Counter { max: 7 },
        &Merging(1, 6),
        &Options::default(),
        &mut |_| {},
    )
    .expect("undetected");
    assert_eq!(report.unique_states, 6);
}

/// A counter whose actions come in another order each time they are listed, so a stored
/// path does not replay.
struct Fickle {
    calls: AtomicU64,
}

impl Model for Fickle {
    type State = u8;
    type Action = u8;
    fn init_states(&self) -> Vec<u8> {
        vec![0]
    }
    fn actions(&self, _: &u8, actions: &mut Vec<u8>) {
        if self.calls.fetch_add(1, Ordering::Relaxed) % 2 == 0 {
            actions.extend([1, 2]);
        } else {
            actions.extend([2, 1]);
        }
    }
    fn next_state(&self, state: &u8, step: u8) -> Option<u8> {
        Some(state.saturating_add(step))
    }
    fn within_boundary(&self, state: &u8) -> bool {
        *state <= 9
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::sometimes("one", |_, s| *s == 1)]
    }
}

#[test]
fn a_path_that_does_not_replay_is_an_error() {
    let model = Fickle {
        calls: AtomicU64::new(0),
    };
    let error = check(&model, &Options::default()).expect_err("no replay");
    assert_eq!(
        error,
        Error::Rebuild {
            index: 1,
            step: 1,
            why: "the state reached has another fingerprint",
        }
    );
}

#[test]
fn the_memory_budget_ends_a_search_inconclusive() {
    let unbounded = check(&Grid, &Options::default()).expect("no collision");
    assert_eq!(unbounded.stop, Stop::Exhausted);
    let max_memory_bytes = unbounded.memory_bytes - 1;
    let mut reports = Vec::new();
    for threads in [1, 2, 4] {
        let options = Options {
            threads,
            budget: Budget {
                max_memory_bytes: Some(max_memory_bytes),
                ..Budget::default()
            },
            ..Options::default()
        };
        let report = check(&Grid, &options).expect("no collision");
        assert_eq!(report.stop, Stop::Limit(Limit::Memory));
        assert_eq!(Limit::Memory.name(), "max_memory_bytes");
        assert!(report.memory_bytes <= max_memory_bytes);
        assert!(report.unique_states < unbounded.unique_states);
        assert_eq!(
            report.outcome("inside").expect("handled").verdict,
            Verdict::Inconclusive
        );
        // Decided before the budget ran out: as without it.
        assert_eq!(
            format!("{:?}", report.outcome("sum below 3")),
            format!("{:?}", unbounded.outcome("sum below 3"))
        );
        reports.push(format!("{report:?}"));
    }
    assert!(
        reports.windows(2).all(|w| w[0] == w[1]),
        "same at any thread count"
    );
}

#[test]
fn progress_is_observed_without_changing_the_outcome() {
    let mut seen = Vec::new();
    let observed = check_with(&Grid, &Xxh64, &Options::default(), &mut |p| seen.push(p))
        .expect("no collision");
    let plain = check(&Grid, &Options::default()).expect("no collision");
    assert_eq!(format!("{observed:?}"), format!("{plain:?}"));
    let last = seen.last().expect("observed");
    assert_eq!(
        (last.states, last.unique_states, last.max_depth),
        (plain.states, plain.unique_states, plain.max_depth)
    );
}

/// A finite directed graph: states are node ids, actions are edge positions. Some edges are
/// disabled (`next_state` is `None`), some nodes are outside the boundary, and four marks
/// give the properties.
#[derive(Clone, Debug)]
struct Graph {
    inits: Vec<u16>,
    edges: Vec<Vec<(u16, bool)>>,
    outside: Vec<bool>,
    marks: [Vec<bool>; 4],
}

fn unmarked<const K: usize>(graph: &Graph, node: &u16) -> bool {
    !graph.marks[K][usize::from(*node)]
}

fn marked<const K: usize>(graph: &Graph, node: &u16) -> bool {
    graph.marks[K][usize::from(*node)]
}

impl Model for Graph {
    type State = u16;
    type Action = usize;
    fn init_states(&self) -> Vec<u16> {
        self.inits.clone()
    }
    fn actions(&self, node: &u16, actions: &mut Vec<usize>) {
        actions.extend(0..self.edges[usize::from(*node)].len());
    }
    fn next_state(&self, node: &u16, edge: usize) -> Option<u16> {
        let (to, enabled) = self.edges[usize::from(*node)][edge];
        enabled.then_some(to)
    }
    fn within_boundary(&self, node: &u16) -> bool {
        !self.outside[usize::from(*node)]
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("a", unmarked::<0>),
            Property::sometimes("b", marked::<1>),
            Property::eventually("e", marked::<0>),
            Property::always("c", unmarked::<2>),
            Property::sometimes("d", marked::<3>),
        ]
    }
}

fn graphs() -> impl Strategy<Value = (Graph, Option<u64>)> {
    (1usize..60).prop_flat_map(|nodes| {
        let node = 0..nodes as u16;
        let edge = (node.clone(), prop::bool::weighted(0.9));
        let marks = || prop::collection::vec(prop::bool::weighted(0.04), nodes);
        (
            prop::collection::vec(node.clone(), 1..4),
            prop::collection::vec(prop::collection::vec(edge, 0..4), nodes),
            prop::collection::vec(prop::bool::weighted(0.1), nodes),
            [marks(), marks(), marks(), marks()],
            prop::option::weighted(0.3, 0..nodes as u64),
        )
            .prop_map(|(inits, edges, outside, marks, max_states)| {
                (
                    Graph {
                        inits,
                        edges,
                        outside,
                        marks,
                    },
                    max_states,
                )
            })
    })
}

/// From 0, one level of `width` states, 1 to `width`; each of them steps to itself plus
/// 1,000, but for those in `crowded`, which have 65,537 actions.
struct Fan {
    width: u32,
    crowded: &'static [u32],
}

impl Model for Fan {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
        if *state == 0 {
            actions.extend(1..=self.width);
        } else if self.crowded.contains(state) {
            actions.extend(0..65_537);
        } else {
            actions.push(state + 1_000);
        }
    }
    fn next_state(&self, _: &u32, action: u32) -> Option<u32> {
        Some(action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("true", |_, _| true)]
    }
}

#[test]
fn too_many_actions_is_the_first_parent_s_error_at_any_thread_count() {
    let fan = Fan {
        width: 200,
        crowded: &[150, 190],
    };
    for threads in [1, 2, 4] {
        let options = Options {
            threads,
            ..Options::default()
        };
        assert_eq!(
            check(&fan, &options).expect_err("too many actions"),
            Error::TooManyActions {
                index: 150,
                actions: 65_537,
            },
            "{threads} threads"
        );
    }
}

/// Which thread's successor making panics in [`Panicky`].
#[derive(Copy, Clone, PartialEq)]
enum Panics {
    /// The thread that called the search.
    Caller,
    /// A helping thread.
    Helper,
}

/// [`Fan`]'s first level, whose expansion panics on one kind of thread once it has begun
/// on the other: the other kind waits (up to ten seconds) for that panic.
struct Panicky {
    caller: std::thread::ThreadId,
    panics: Panics,
    panicked: std::sync::atomic::AtomicBool,
}

impl Model for Panicky {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
        actions.push(if *state == 0 { 1 } else { state + 1_000 });
        if *state == 0 {
            actions.extend(2..=64);
        }
    }
    fn next_state(&self, state: &u32, action: u32) -> Option<u32> {
        if *state != 0 {
            let on_caller = std::thread::current().id() == self.caller;
            if on_caller == (self.panics == Panics::Caller) {
                self.panicked.store(true, Ordering::SeqCst);
                panic!("a model's panic while making successors");
            }
            let waited = Instant::now();
            while !self.panicked.load(Ordering::SeqCst)
                && waited.elapsed() < std::time::Duration::from_secs(10)
            {
                std::thread::yield_now();
            }
        }
        Some(action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("true", |_, _| true)]
    }
}

#[test]
fn a_panic_while_making_successors_ends_the_search_on_any_thread() {
    for panics in [Panics::Caller, Panics::Helper] {
        let model = Panicky {
            caller: std::thread::current().id(),
            panics,
            panicked: std::sync::atomic::AtomicBool::new(false),
        };
        let options = Options {
            threads: 2,
            ..Options::default()
        };
        let search =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&model, &options)));
        let panic = search.expect_err("the panic reaches the caller");
        assert!(
            model.panicked.load(Ordering::SeqCst),
            "the panic was the model's"
        );
        assert_eq!(
            panic.downcast_ref::<&str>(),
            Some(&"a model's panic while making successors"),
            "with the model's own payload"
        );
    }
}

/// [`Fan`] but for state `panics_at`, which has five actions and panics making its third
/// successor.
struct PanicsAt {
    fan: Fan,
    panics_at: u32,
}

impl Model for PanicsAt {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        self.fan.init_states()
    }
    fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
        if *state == self.panics_at {
            actions.extend(2_000..2_005);
        } else {
            self.fan.actions(state, actions);
        }
    }
    fn next_state(&self, state: &u32, action: u32) -> Option<u32> {
        if action == 2_002 {
            std::panic::panic_any(format!("the model panics at {state}"));
        }
        Some(action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("true", |_, _| true)]
    }
}

/// [`Fan`] whose states from `from` on panic making their successor.
struct PanicsFrom {
    fan: Fan,
    from: u32,
}

impl Model for PanicsFrom {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        self.fan.init_states()
    }
    fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
        self.fan.actions(state, actions);
    }
    fn next_state(&self, state: &u32, action: u32) -> Option<u32> {
        if (self.from..=self.fan.width).contains(state) {
            std::panic::panic_any(format!("the model panics at {state}"));
        }
        Some(action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("true", |_, _| true)]
    }
}

/// The unique states of `model`'s search on `threads` threads under `max_states`, or the
/// message of the panic that ended it (`None` if it was not a `String`).
fn search_caught<M>(
    model: &M,
    threads: usize,
    max_states: Option<u64>,
) -> Result<Result<u64, Error>, Option<String>>
where
    M: Model + Sync,
    M::State: Hash + Eq + Clone + Send + Sync,
    M::Action: Clone,
{
    let options = Options {
        threads,
        budget: Budget {
            max_states,
            ..Budget::default()
        },
        ..Options::default()
    };
    caught(|| check(model, &options))
}

/// The unique states of `search`'s report, or the message of the panic that ended it
/// (`None` if it was not a `String`).
fn caught<S, A>(
    search: impl FnOnce() -> Result<Report<S, A>, Error>,
) -> Result<Result<u64, Error>, Option<String>> {
    let search = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        search().map(|report| report.unique_states)
    }));
    search.map_err(|panic| panic.downcast_ref::<String>().cloned())
}

#[test]
fn the_first_panic_in_order_is_raised_at_any_thread_count() {
    for from in [4, 1_000, 1_996] {
        let model = PanicsFrom {
            fan: Fan {
                width: 2_000,
                crowded: &[],
            },
            from,
        };
        let search = |threads, max_states| search_caught(&model, threads, max_states);
        let at = u64::from(from);
        for max_states in [None, Some(2_000 + at), Some(2_001 + at)] {
            let one = search(1, max_states);
            if max_states.is_none() {
                let expected = format!("the model panics at {from}");
                assert_eq!(one, Err(Some(expected)));
            }
            // Which thread makes which run varies from one search to the next.
            for _ in 0..3 {
                for threads in [2, 3, 4] {
                    let case = (from, threads, max_states);
                    assert_eq!(search(threads, max_states), one, "{case:?}");
                }
            }
        }
    }
}

#[test]
fn a_codec_s_panic_decoding_a_parent_surfaces_where_the_model_s_would() {
    // Levels packed in blocks of 64 states: parent 152, in a full block, is decoded when its
    // round expands it, on one thread as on several. Its index is a multiple of 4, so one
    // thread looks it up alone (see the test below), and the same limits stop all.
    let fan = Fan {
        width: 200,
        crowded: &[],
    };
    let codec = || {
        Codec::new(
            |state: &u32, bytes: &mut Vec<u8>| bytes.extend(state.to_le_bytes()),
            |bytes: &[u8]| {
                let state = u32::from_le_bytes(bytes.try_into().expect("four bytes"));
                if state == 152 {
                    std::panic::panic_any(format!("the codec panics at {state}"));
                }
                state
            },
        )
    };
    let search = |threads, max_states| {
        let options = Options {
            threads,
            chunk_states: 64,
            budget: Budget {
                max_states,
                ..Budget::default()
            },
            ..Options::default()
        };
        caught(|| check_packed_by(&fan, &options, codec()))
    };
    let mut seen = (false, false);
    for max_states in [None].into_iter().chain((346..360).map(Some)) {
        let one = search(1, max_states);
        match &one {
            Ok(_) => seen.0 = true,
            Err(panic) => {
                assert_eq!(panic.as_deref(), Some("the codec panics at 152"));
                seen.1 = true;
            }
        }
        for threads in [2, 4] {
            let at = (threads, max_states);
            assert_eq!(search(threads, max_states), one, "threads, limit: {at:?}");
        }
    }
    assert_eq!(seen, (true, true), "limits before the panic and after");
}

#[test]
fn a_model_s_panic_surfaces_where_one_thread_meets_it() {
    // Parent 152 is expanded alone in the unit tests: each successor is looked up once
    // made, so a helped round raises the panic exactly where one thread does. Parent 150 is
    // batched with 149, whose successors one thread looks up only after making 150's: there
    // the two agree but for limits met by 149's successor or 150's first two.
    for (panics_at, window) in [(152, 0..0), (150, 349..352)] {
        let model = PanicsAt {
            fan: Fan {
                width: 200,
                crowded: &[],
            },
            panics_at,
        };
        let search = |threads, max_states| search_caught(&model, threads, max_states);
        let mut seen = (false, false);
        // Limits that stop the search before the parent that panics, among the successors
        // it makes before it panics, and after.
        let limits = (346..360).filter(|limit| !window.contains(limit));
        for max_states in [None].into_iter().chain(limits.map(Some)) {
            let one = search(1, max_states);
            match &one {
                Ok(_) => seen.0 = true,
                Err(panic) => {
                    let expected = format!("the model panics at {panics_at}");
                    assert_eq!(panic.as_deref(), Some(expected.as_str()));
                    seen.1 = true;
                }
            }
            for threads in [2, 4] {
                let at = (threads, max_states);
                assert_eq!(search(threads, max_states), one, "threads, limit: {at:?}");
            }
        }
        assert_eq!(seen, (true, true), "limits before the panic and after");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn packed_links_read_back(steps in prop::collection::vec((0u32..300, any::<u16>()), 0..400)) {
        let mut links = Links::default();
        let mut stored = Vec::new();
        let mut parent = 0u32;
        for (i, &(step, action)) in steps.iter().enumerate() {
            // A few initial states first, then parents that never decrease, by steps both
            // small and past a varint byte; one in fifty far behind, as no search stores.
            let link = if i < 3 {
                (NONE, 0)
            } else if i % 50 == 49 {
                (parent / 2, action)
            } else {
                parent += step * step;
                (parent, action)
            };
            let before = links.bytes_after(link.0, link.1);
            links.push(link.0, link.1);
            prop_assert_eq!(links.bytes(), before);
            stored.push(link);
        }
        for (i, &(parent, action)) in stored.iter().enumerate() {
            let (read_parent, read_action) = links.get(i);
            if parent != NONE {
                prop_assert_eq!((read_parent, read_action), (parent, action));
            }
        }
    }

    #[test]
    fn graphs_match_checker((graph, max_states) in graphs()) {
        let budget = Budget { max_states, ..Budget::default() };
        same_as_checker(&graph, budget);
    }

    #[test]
    fn graphs_under_a_memory_budget((graph, _) in graphs(), max_memory_bytes in 0u64..600) {
        let unbounded = check(&graph, &Options::default()).expect("no collision");
        let mut reports = Vec::new();
        // Where the budget runs out depends on the round size (a level's blocks are let go
        // a round at a time), never on the thread count.
        for (threads, chunk_states) in [(1, 3), (2, 3), (4, 3), (1, 1), (2, 1)] {
            let options = Options {
                threads,
                chunk_states,
                budget: Budget {
                    max_memory_bytes: Some(max_memory_bytes),
                    ..Budget::default()
                },
                ..Options::default()
            };
            reports.push(format!("{:?}", check(&graph, &options).expect("no collision")));
        }
        prop_assert!(reports[..3].windows(2).all(|w| w[0] == w[1]), "same at any thread count");
        prop_assert_eq!(&reports[3], &reports[4], "same at any thread count");
        let bounded = check(&graph, &Options {
            budget: Budget { max_memory_bytes: Some(max_memory_bytes), ..Budget::default() },
            ..Options::default()
        }).expect("no collision");
        for (b, u) in bounded.properties.iter().zip(&unbounded.properties) {
            match &b.outcome {
                Some(outcome) if outcome.verdict == Verdict::Inconclusive => {
                    prop_assert_eq!(bounded.stop, Stop::Limit(Limit::Memory));
                }
                outcome => prop_assert_eq!(format!("{outcome:?}"), format!("{:?}", u.outcome)),
            }
        }
        if bounded.stop == Stop::Limit(Limit::Memory) {
            prop_assert!(bounded.memory_bytes <= max_memory_bytes);
        }
    }
}
