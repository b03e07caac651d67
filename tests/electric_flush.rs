//! `electric-flush` through the checker: the known minimal counterexample of 1.4.15 (the #4064
//! mechanism), WAL retention growing behind it, the catalogue's verdicts with their witnesses,
//! and the triage's conclusions.

use stateright::Model;
use walcheck::reference;
use walcheck::run;
use walcheck::search::{Budget, Verdict};
use walcheck_model::electric::consumer::{Msg, Status};
use walcheck_model::electric::{Offset, Variant};
use walcheck_systems::electric_flush::{
    Action, Action::*, Config, ElectricFlush, ElectricFlushSystem, Faults, State,
};

use crate::util::{checked_as_expected, select};

fn counterexample(config: Config, property: &str) -> Vec<Action> {
    let path = crate::util::counterexample(&ElectricFlush::from(config), property);
    path.actions().copied().collect()
}

/// The #4064 mechanism, step by step: shape 0's one line in T1's first fragment is flushed by the
/// timer, and its `:flushed` handled (notified raw) before the commit fragment appends the mapping
/// entry; shape 1's inline flush goes the same way and T2 completes it; shape 0 stays pinned.
const V1_4_15_LOST: [Action; 19] = [
    Publish,
    Deliver(0),
    Deliver(1),
    Publish,
    TimerFires(0),
    Handle(0),
    Handle(0),
    Deliver(0),
    Handle(1),
    Deliver(1),
    CollectorHandle,
    CollectorHandle,
    Publish,
    Deliver(1),
    TimerFires(1),
    Handle(1),
    Handle(1),
    CollectorHandle,
    ClientHandle,
];

#[test]
fn v1_4_15_loses_shape_0s_notification_by_the_4064_mechanism() {
    let config = Config::new(Variant::V1_4_15, Faults::None);
    assert_eq!(
        counterexample(config, "no-lost-flush-notification"),
        V1_4_15_LOST
    );
    assert_eq!(
        counterexample(config, "wal-retention-bounded"),
        V1_4_15_LOST
    );

    let model = ElectricFlush::from(config);
    let path = reference::replay(&model, &V1_4_15_LOST).unwrap();
    // Shape 0's :flushed (1:1) is handled at step 7, before its commit is delivered at step 8.
    let before_commit = &path.steps[6].1;
    assert!(before_commit.shapes[0].mapping.is_empty());
    assert_eq!(
        before_commit.collector.mailbox[..],
        [(0, Offset::new(1, 1))]
    );
    let after_commit = &path.steps[7].1;
    assert_eq!(
        after_commit.shapes[0].mapping[..],
        [(Offset::new(1, 1), Offset::new(1, 5))]
    );
    // The end: quiescent, shape 0's entry pinned at its partial flush, nothing left to send it.
    let last = path.last_state();
    assert!(model.config.quiescent(last));
    let entry = last.tracker.entries[0].unwrap();
    assert_eq!(
        (entry.last_sent, entry.last_flushed),
        (Offset::new(1, 5), Offset::new(1, 1))
    );
    assert_eq!(last.shapes[0].writer.buffer_lines, 0);
    assert!(last.shapes[0]
        .mailbox
        .iter()
        .all(|m| !matches!(m, Msg::Flushed(_))));
    assert_eq!(last.client.confirmed_flush, 0);
}

/// Runs every enabled action except the idle :timeout, keepalives and faults, in order, until
/// nothing is left: the system's own progress with PostgreSQL sending what it has.
fn settle(model: &ElectricFlush, mut state: State) -> State {
    for _ in 0..1000 {
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let Some(action) = actions
            .into_iter()
            .find(|a| !matches!(a, Timeout(_) | Keepalive | Kill(_) | SuspendTimerFires(_)))
        else {
            return state;
        };
        state = model.next_state(&state, action).unwrap();
    }
    panic!("did not settle");
}

#[test]
fn later_unrelated_transactions_grow_retained_wal_while_the_entry_stays_pinned() {
    let mut retained = Vec::new();
    for txns in [2, 3] {
        let model = ElectricFlush::from(Config {
            txns,
            ..Config::new(Variant::V1_4_15, Faults::None)
        });
        let path = reference::replay(&model, &V1_4_15_LOST[..13]).unwrap();
        let last = settle(&model, path.last_state().clone());
        assert!(model.config.quiescent(&last), "txns={txns}");
        assert_eq!(
            last.tracker.entries[0].unwrap().last_sent,
            Offset::new(1, 5),
            "txns={txns}: still pinned"
        );
        assert_eq!(last.client.wal_end, txns);
        retained.push(last.client.wal_end - last.client.confirmed_flush);
    }
    assert!(
        retained[1] > retained[0],
        "retained WAL grows: {retained:?}"
    );
    assert_eq!(retained, [2, 3]);
}

#[test]
fn pr4064_defers_the_early_flush_and_releases_it_aligned() {
    let model = ElectricFlush::from(Config::new(Variant::Pr4064, Faults::None));
    let state = reference::replay(&model, &V1_4_15_LOST[..7])
        .unwrap()
        .last_state()
        .clone();
    assert_eq!(
        state.shapes[0].pending_flush_offset,
        Some(Offset::new(1, 1)),
        "deferred, not notified"
    );
    assert!(state.collector.mailbox.is_empty());
    let state = model.next_state(&state, Deliver(0)).unwrap();
    assert_eq!(
        state.collector.mailbox[..],
        [(0, Offset::new(1, 5))],
        "released at the commit, aligned"
    );
    assert!(state.shapes[0].mapping.is_empty());
}

#[test]
fn electric_catalogue_verdicts_and_witnesses() {
    let results = checked_as_expected("electric-flush");
    // pr4064 with no faults: both headline properties hold, and every witness is reached.
    let pr4064: Vec<_> = results
        .iter()
        .filter(|r| {
            r.entry.config.variant() == "pr4064"
                && r.entry.config.faults() == "none"
                && r.entry.config.non_default_bounds().is_empty()
        })
        .collect();
    for r in &pr4064 {
        let must_hold = r.entry.property.id.starts_with("reach-")
            || ["no-lost-flush-notification", "wal-retention-bounded"]
                .contains(&r.entry.property.id);
        if must_hold {
            assert_eq!(r.verdict, Verdict::Holds, "{}", r.entry.property.id);
        }
    }
    assert_eq!(
        pr4064
            .iter()
            .filter(|r| r.entry.property.id.starts_with("reach-"))
            .count(),
        5
    );
}

/// With `fairness=none` no step need ever be taken, so `eventually-acknowledged` is violated
/// even in HEAD's design, by a lasso whose cycle repeats Publish; the table expects it, and the
/// `always` and `sometimes` verdicts are those under the declared fairness.
#[test]
fn without_fairness_eventually_acknowledged_is_violated_everywhere() {
    let selection = |bounds: &[&str]| {
        let entries = select(&["electric-flush:head"], Some("none"), bounds);
        run::run_all::<()>(&entries, 2, &Budget::default())
    };
    let unfair = selection(&["fairness=none"]);
    let eventually: Vec<_> = unfair
        .iter()
        .filter(|r| r.entry.property.id == "eventually-acknowledged")
        .collect();
    assert!(!eventually.is_empty());
    for r in &unfair {
        assert!(
            r.matches_expectation(),
            "{}: {}",
            r.entry.property.id,
            r.entry.reason
        );
    }
    for r in eventually {
        assert_eq!(r.verdict, Verdict::Violated);
        let trace = r.trace.as_ref().expect("a lasso");
        assert_eq!(trace.actions().last(), Some("Publish"));
    }
    let fair = selection(&[]);
    let verdicts = |results: &[run::CheckResult]| -> Vec<(String, Verdict)> {
        results
            .iter()
            .filter(|r| r.entry.property.id != "eventually-acknowledged")
            .map(|r| (r.entry.property.id.to_owned(), r.verdict))
            .collect()
    };
    assert_eq!(verdicts(&unfair), verdicts(&fair));
}

#[test]
fn head_removes_a_dead_consumers_shape() {
    let model = ElectricFlush::from(Config::new(Variant::Head, Faults::ConsumerKill));
    let state = reference::replay(&model, &[Publish, Deliver(0), Deliver(1), Kill(0)])
        .unwrap()
        .last_state()
        .clone();
    let mut actions = Vec::new();
    model.actions(&state, &mut actions);
    assert!(actions.contains(&Down(0)));
    let state = model.next_state(&state, Down(0)).unwrap();
    assert_eq!(state.shapes[0].status, Status::Removed);
}

#[test]
fn triage_settles_the_hypotheses_and_fixes() {
    let (hypotheses, fixes) = walcheck::triage::triage(&Budget::default());
    let fix = |v: Variant, order: &str| {
        fixes
            .iter()
            .find(|f| f.variant == v && f.timer_order == order)
            .unwrap()
    };
    for v in [
        Variant::Fix1NotifyAfterHibernate,
        Variant::Fix2CloseReturnsOffset,
        Variant::Fix3PeriodicRecheck,
        Variant::Fix4FlushReturnsOffset,
    ] {
        assert!(!fix(v, "realistic").prevents(), "{v}");
        assert!(!fix(v, "any").prevents(), "{v}");
    }
    assert!(fix(Variant::Pr4064, "realistic").prevents());
    assert!(fix(Variant::Head, "realistic").prevents());
    assert!(fix(Variant::Head, "any").prevents());
    let row = |id: &str, order: &str| {
        hypotheses
            .iter()
            .find(|h| h.id == id && h.timer_order == order)
            .unwrap()
    };
    // H1: no hibernate flush carries data under realistic timing, so nothing can be lost there.
    assert_eq!(row("H1", "realistic").occurs.verdict, Verdict::Violated);
    // H3 is the race #4064 fixed: it happens, 1.4.15 loses after it, #4064's deferral removes it.
    let h3 = row("H3", "realistic");
    assert_eq!(
        (
            h3.occurs.verdict,
            h3.possible.verdict,
            h3.sufficient.verdict
        ),
        (Verdict::Holds, Verdict::Violated, Verdict::Holds)
    );
    // H2's dropped entries lose nothing on their own.
    assert_eq!(row("H2", "realistic").sufficient.verdict, Verdict::Holds);
}

/// Every electric-flush counterexample is minimal: deleting any one step either disables a later
/// step or removes the violation.
#[test]
fn every_electric_counterexample_is_minimal() {
    let entries = select(&["electric-flush"], None, &[]);
    let mut checked = 0;
    for e in entries.iter().filter(|e| {
        e.expected == Verdict::Violated
            && e.property.kind == walcheck_properties::system::Kind::Always
    }) {
        let model = ElectricFlush::of(&ElectricFlushSystem, &e.config.config);
        let property = model
            .properties()
            .into_iter()
            .find(|p| p.name == e.property.id)
            .unwrap();
        let path = crate::util::counterexample(&model, e.property.id);
        let actions: Vec<Action> = path.actions().copied().collect();
        for i in 0..actions.len() {
            let mut shorter = actions.clone();
            shorter.remove(i);
            assert_eq!(
                walcheck_traces::replay::reaches(&model, &property, &shorter),
                None,
                "{} {} {:?} {}: still violated without step {i}",
                e.config.variant(),
                e.config.faults(),
                e.config.non_default_bounds(),
                e.property.id
            );
        }
        checked += 1;
    }
    assert!(checked >= 100, "{checked}");
}
