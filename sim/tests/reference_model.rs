//! Model-based tests of the reference shape-log pipeline: proptest-state-machine drives the
//! `electric-flush` model (`pr4064`, no faults) as the `ReferenceStateMachine` — its own enabled
//! actions and transition function, no second semantics — and runs the reference
//! implementation single-threaded as the `StateMachineTest`, comparing what both hold after every
//! step: each shape's buffer, offsets, timer, mailbox, transaction mapping, pending transaction
//! and deferred offset; the collector's mailbox and publish; the tracker's entries and global
//! offset; and the LSN acknowledged (the highest the model's tracker has sent the client).
//! quickcheck states the laws of the pure helpers.
#![cfg(not(loom))]

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::Config;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};
use quickcheck::{quickcheck, TestResult};
use walcheck_model::electric::consumer::{Msg, Status};
use walcheck_model::electric::{Fragment, Offset, Variant, MAX_SHAPES};
use walcheck_sim::reference::shape_log::{
    align_offset_to_txn_boundary, Design, FlushTracker, ShapeLogPipeline, ShapeMsg, Snapshot,
};
use walcheck_systems::electric_flush::{
    Action, Config as ModelConfig, Faults, Scenario, State, TimerOrder,
};

/// The configurations compared: the catalogue's defaults, and a deeper workload with every timer
/// ordering.
fn config(which: u8) -> ModelConfig {
    let mut cfg = ModelConfig::new(Variant::Pr4064, Faults::None);
    if which == 1 {
        (cfg.timer_order, cfg.fragments, cfg.txns) = (TimerOrder::Any, 3, 3);
    }
    cfg
}

/// One step: a model action, or nothing when the model has none enabled.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Step {
    Act(Action),
    Idle,
}

/// The `electric-flush` model as proptest-state-machine's reference.
struct Model<const C: u8>;

impl<const C: u8> ReferenceStateMachine for Model<C> {
    type State = State;
    type Transition = Step;

    fn init_state() -> BoxedStrategy<State> {
        Just(Scenario::new(config(C)).initial_state()).boxed()
    }

    fn transitions(state: &State) -> BoxedStrategy<Step> {
        let mut actions = Vec::new();
        Scenario::new(config(C)).enabled(state, &mut actions);
        if actions.is_empty() {
            Just(Step::Idle).boxed()
        } else {
            proptest::sample::select(actions)
                .prop_map(Step::Act)
                .boxed()
        }
    }

    fn apply(mut state: State, step: &Step) -> State {
        if let Step::Act(action) = *step {
            Scenario::new(config(C)).apply(&mut state, action);
        }
        state
    }

    fn preconditions(state: &State, step: &Step) -> bool {
        let mut actions = Vec::new();
        Scenario::new(config(C)).enabled(state, &mut actions);
        match step {
            Step::Act(action) => actions.contains(action),
            Step::Idle => actions.is_empty(),
        }
    }
}

/// The reference pipeline under test, with the model's workload.
struct Reference {
    pipeline: ShapeLogPipeline,
    workload: Vec<(Fragment, u8)>,
    /// The highest LSN the model's tracker has sent the replication client so far: every
    /// `{:flush_boundary_updated, lsn}` waits in `client.mailbox` after the step that sent it, so
    /// the maximum over every state seen is what the reference must have acknowledged.
    model_acknowledged_lsn: u64,
}

/// What both sides hold, in the same terms.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Observed {
    shapes: Vec<ObservedShape>,
    collector_mailbox: Vec<(usize, Offset)>,
    published: u8,
    delivered: Option<[bool; MAX_SHAPES]>,
    tracker: [Option<(Offset, Offset)>; MAX_SHAPES],
    last_seen_offset: Offset,
    global: Offset,
    acknowledged_lsn: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct ObservedShape {
    hibernated: bool,
    buffer_lines: u8,
    offsets: [Offset; 4],
    times_flushed: u8,
    timer: Option<(u8, bool)>,
    mailbox: Vec<ShapeMsg>,
    mapping: Vec<(Offset, Offset)>,
    pending_txn: Option<(u8, u8)>,
    latest_offset: Offset,
    pending_flush_offset: Option<Offset>,
}

fn observe_model(state: &State, acknowledged_lsn: u64) -> Observed {
    let shapes = state
        .shapes
        .iter()
        .map(|c| {
            assert!(matches!(c.status, Status::Running | Status::Hibernated));
            let w = &c.writer;
            ObservedShape {
                hibernated: c.status == Status::Hibernated,
                buffer_lines: w.buffer_lines,
                offsets: [
                    w.last_seen_offset,
                    w.last_seen_txn_offset,
                    w.last_persisted_offset,
                    w.last_persisted_txn_offset,
                ],
                times_flushed: w.times_flushed,
                timer: c.write_timer.map(|t| (t.requested, t.fired)),
                mailbox: c
                    .mailbox
                    .iter()
                    .map(|m| match *m {
                        Msg::Flushed(o) => ShapeMsg::Flushed(o),
                        Msg::TimerFire(n) => ShapeMsg::TimerFire(n),
                        Msg::SuspendTimer => unreachable!("no suspension without faults"),
                    })
                    .collect(),
                mapping: c.mapping.to_vec(),
                pending_txn: c.pending_txn.map(|p| (p.tx, p.num_changes)),
                latest_offset: c.latest_offset,
                pending_flush_offset: c.pending_flush_offset,
            }
        })
        .collect();
    Observed {
        shapes,
        collector_mailbox: state
            .collector
            .mailbox
            .iter()
            .map(|&(s, o)| (usize::from(s), o))
            .collect(),
        published: state.collector.published,
        delivered: state.collector.delivering.map(|d| d.delivered),
        tracker: state
            .tracker
            .entries
            .map(|e| e.map(|e| (e.last_sent, e.last_flushed))),
        last_seen_offset: state.tracker.last_seen_offset,
        global: state.tracker.last_global_flushed_offset,
        acknowledged_lsn,
    }
}

fn observe_reference(s: &Snapshot) -> Observed {
    let shapes = s
        .shapes
        .iter()
        .map(|c| {
            let w = &c.writer;
            ObservedShape {
                hibernated: c.hibernated,
                buffer_lines: w.buffer_lines,
                offsets: [
                    w.last_seen_offset,
                    w.last_seen_txn_offset,
                    w.last_persisted_offset,
                    w.last_persisted_txn_offset,
                ],
                times_flushed: w.times_flushed,
                timer: w.timer.map(|t| (t.requested, t.fired)),
                mailbox: c.mailbox.iter().copied().collect(),
                mapping: c.txn_offset_mapping.iter().map(|(&k, &b)| (k, b)).collect(),
                pending_txn: c.pending_txn.map(|p| (p.tx, p.num_changes)),
                latest_offset: c.latest_offset,
                pending_flush_offset: c.pending_flush_offset,
            }
        })
        .collect();
    let t = &s.publisher.tracker;
    Observed {
        shapes,
        collector_mailbox: s.collector_mailbox.clone(),
        published: s.publisher.published,
        delivered: s.publisher.delivering.map(|d| d.delivered),
        tracker: std::array::from_fn(|shape| {
            t.entries.get(&shape).map(|e| (e.last_sent, e.last_flushed))
        }),
        last_seen_offset: t.last_seen_offset,
        global: t.last_global_flushed_offset,
        acknowledged_lsn: s.acknowledged_lsn,
    }
}

/// The reference implementation, one model action at a time.
struct ReferenceTest<const C: u8>;

impl<const C: u8> StateMachineTest for ReferenceTest<C> {
    type SystemUnderTest = Reference;
    type Reference = Model<C>;

    fn init_test(_: &State) -> Reference {
        let cfg = config(C);
        Reference {
            pipeline: ShapeLogPipeline::new(
                Design::Pr4064,
                cfg.shapes.into(),
                cfg.inline_flush_lines,
            ),
            workload: cfg.workload(),
            model_acknowledged_lsn: 0,
        }
    }

    fn apply(mut sut: Reference, state: &State, step: Step) -> Reference {
        if let Some(&lsn) = state.client.mailbox.iter().max() {
            sut.model_acknowledged_lsn = sut.model_acknowledged_lsn.max(lsn.into());
        }
        let p = &sut.pipeline;
        let Step::Act(action) = step else { return sut };
        match action {
            Action::Publish => {
                let next = usize::from(p.snapshot().publisher.published);
                let (fragment, first_op) = sut.workload[next];
                p.publish_begin(fragment, first_op);
            }
            Action::Deliver(s) => p.deliver(s.into()),
            Action::TimerFires(s) => assert!(p.timer_fires(s.into()), "no timer armed"),
            Action::Handle(s) => p.handle(s.into()),
            Action::Timeout(s) => p.timeout(s.into()),
            Action::CollectorHandle => assert!(p.collector_handle(), "nothing to handle"),
            // The reference acknowledges through its atomic as the tracker moves; the
            // replication client's own steps are the model's.
            Action::ClientHandle | Action::Keepalive => {}
            other => unreachable!("{other} needs a fault or HEAD"),
        }
        sut
    }

    fn check_invariants(sut: &Reference, state: &State) {
        assert_eq!(
            observe_reference(&sut.pipeline.snapshot()),
            observe_model(state, sut.model_acknowledged_lsn),
            "reference (left) and model (right) differ"
        );
    }
}

prop_state_machine! {
    #![proptest_config(Config { cases: 256, failure_persistence: None, ..Config::default() })]

    /// The catalogue's default configuration.
    #[test]
    fn reference_follows_the_model(sequential 1..60 => ReferenceTest<0>);

    /// T1 in three fragments, three transactions, every timer ordering.
    #[test]
    fn reference_follows_the_model_deeper(sequential 1..80 => ReferenceTest<1>);
}

/// Offsets from small numbers, so that mapping keys and flushed offsets collide often.
fn offset(tx: u8, op: u8) -> Offset {
    Offset::new(tx % 4, op % 6)
}

quickcheck! {
    /// `align_offset_to_txn_boundary`: every key below the offset goes, and so does an equal key,
    /// whose boundary is returned; otherwise the offset comes back unchanged; keys above stay.
    fn align_laws(entries: Vec<(u8, u8, u8)>, tx: u8, op: u8) -> bool {
        let mapping: BTreeMap<Offset, Offset> = entries
            .iter()
            .map(|&(t, o, b)| (offset(t, o), offset(t, o.saturating_add(b % 3))))
            .collect();
        let at = offset(tx, op);
        let mut aligned_mapping = mapping.clone();
        let aligned = align_offset_to_txn_boundary(&mut aligned_mapping, at);
        let expected_rest: BTreeMap<_, _> =
            mapping.iter().filter(|(k, _)| **k > at).map(|(&k, &b)| (k, b)).collect();
        aligned == mapping.get(&at).copied().unwrap_or(at) && aligned_mapping == expected_rest
    }

    /// Aligning twice at the same offset returns the offset itself the second time.
    fn align_is_idempotent_on_the_mapping(entries: Vec<(u8, u8)>, tx: u8, op: u8) -> bool {
        let mut mapping: BTreeMap<Offset, Offset> =
            entries.iter().map(|&(t, o)| (offset(t, o), offset(t, 5))).collect();
        let at = offset(tx, op);
        align_offset_to_txn_boundary(&mut mapping, at);
        let after = mapping.clone();
        align_offset_to_txn_boundary(&mut mapping, at) == at && mapping == after
    }

    /// The tracker's global offset never goes back, whatever commits and flush notifications
    /// arrive in whatever order, as long as no shape reports past the offset it was sent (one
    /// that did could complete its entry below a `last_flushed` it reported earlier). (The LSN it hands on can: `G'.tx - 1` after `S.tx`, so the
    /// pipeline acknowledges with `fetch_max`.)
    fn global_offset_is_monotone(events: Vec<(bool, u8, u8, u8)>) -> TestResult {
        let mut tracker = FlushTracker::default();
        let mut global = tracker.last_global_flushed_offset;
        let mut tx = 1;
        for (commit, shape, t, op) in events {
            let shape = usize::from(shape) % MAX_SHAPES;
            if commit {
                let fragment = Fragment {
                    tx,
                    commit: true,
                    lines: [1, 0],
                    last_log_offset: Offset::new(tx, 1 + op % 4),
                };
                let mut delivered = [false; MAX_SHAPES];
                delivered[shape] = true;
                tx = tx.saturating_add(1);
                tracker.handle_txn_fragment(&fragment, &delivered);
            } else {
                // A shape reports only what it was sent: never past its entry's `last_sent`.
                let reported = Offset::new(t % tx + 1, op % 5);
                let reported = tracker.entries.get(&shape).map_or(reported, |e| reported.min(e.last_sent));
                tracker.handle_flush_notification(shape, reported);
            }
            if tracker.last_global_flushed_offset < global {
                return TestResult::failed();
            }
            global = tracker.last_global_flushed_offset;
        }
        TestResult::passed()
    }
}
