//! `olake-sync` through the checker: the known minimal counterexample of each violated entry, the
//! catalogue's verdicts with their witnesses (non-vacuity), the acceptance table of OLake #853,
//! #998 and #862, and the size of the default search.

use stateright::Model;
use walcheck::catalogue::Entry;
use walcheck::reference;
use walcheck::run;
use walcheck::search::{Budget, Verdict};
use walcheck_model::olake::sync::{SyncFailure, SyncPhase};
use walcheck_model::Lsn;
use walcheck_properties::system::Kind;
use walcheck_systems::olake_sync::{Action, Action::*, OlakeSync, OlakeSyncSystem, State};

use crate::util::{checked_as_expected, select};

fn entry(spec: &str, faults: &str, bounds: &[&str], property: &str) -> Entry {
    let mut found = select(&[spec], Some(faults), bounds);
    let keepalive_given = bounds.iter().any(|b| b.starts_with("keepalive="));
    found.retain(|e| {
        e.property.id == property
            && (keepalive_given
                || !e
                    .config
                    .non_default_bounds()
                    .contains(&"keepalive=on".into()))
    });
    assert_eq!(found.len(), 1, "{spec} {faults} {bounds:?} {property}");
    found.remove(0)
}

fn model_of(entry: &Entry) -> OlakeSync {
    assert_eq!(entry.system(), "olake-sync");
    OlakeSync::of(&OlakeSyncSystem, &entry.config.config)
}

/// The counterexample the checker finds for `entry`, as actions, and its last state.
fn counterexample(entry: &Entry) -> (Vec<Action>, State) {
    let path = crate::util::counterexample(&model_of(entry), entry.property.id);
    let last = path.last_state().clone();
    (path.actions().copied().collect(), last)
}

const NO_MOVE: Action = Ack { restart: None };

/// The head every counterexample shares: one transaction streamed and committed to the
/// destination.
const STREAMED: [Action; 5] = [CommitTxn, Validate, Receive { txn: 0 }, EndStream, Commit];

fn mismatch(state: Lsn, current: Lsn) -> SyncPhase {
    SyncPhase::Failed(SyncFailure::LsnMismatch { state, current })
}

const AT_START: Lsn = Lsn(0x100_0000);
const AFTER_TXN0: Lsn = Lsn(0x100_2000);
const AFTER_TXN1: Lsn = Lsn(0x100_4000);

/// #853: v0.5.0 (and #864, which keeps its order) writes the state before the acknowledgement; a
/// crash between them leaves the state ahead of the slot, and validation fails for good.
#[test]
fn v050_state_ahead_of_slot_after_a_crash_between_state_and_ack() {
    for spec in ["olake-sync:v0.5.0", "olake-sync:pr864"] {
        let (actions, last) =
            counterexample(&entry(spec, "connector-crash", &[], "no-lsn-mismatch"));
        let expected: Vec<Action> = STREAMED
            .into_iter()
            .chain([SaveState, ConnectorCrash, Restart, Validate])
            .collect();
        assert_eq!(actions, expected, "{spec}");
        assert_eq!(
            last.connector.phase,
            mismatch(AFTER_TXN0, AT_START),
            "{spec}"
        );
    }
}

/// The window #998 closes: #854 acknowledges first and has no recovery skip, so a crash between
/// the acknowledgement and the state write leaves the slot ahead of the state.
#[test]
fn pr854_slot_ahead_of_state_after_a_crash_between_ack_and_state() {
    let (actions, last) = counterexample(&entry(
        "olake-sync:pr854",
        "connector-crash",
        &[],
        "no-lsn-mismatch",
    ));
    let expected: Vec<Action> = STREAMED
        .into_iter()
        .chain([NO_MOVE, ConnectorCrash, Restart, Validate])
        .collect();
    assert_eq!(actions, expected);
    assert_eq!(last.connector.phase, mismatch(AT_START, AFTER_TXN0));
}

/// master has the same order as #854 but survives every connector crash: the destination
/// metadata turns the rerun into a recovery sync, which skips validation (#865, #998).
#[test]
fn master_survives_connector_crashes_through_the_recovery_skip() {
    for property in [
        "no-lsn-mismatch",
        "ack-within-durable",
        "ack-within-destination",
    ] {
        for bounds in [&[][..], &["syncs=3", "crashes=2"][..]] {
            let e = entry("olake-sync:master", "connector-crash", bounds, property);
            let result = run::run_entry::<()>(&e, &Budget::default());
            assert_eq!(result.verdict, Verdict::Holds, "{property} {bounds:?}");
        }
    }
    for witness in [
        "reach-crash-after-commit",
        "reach-crash-after-ack",
        "reach-recovery-sync",
    ] {
        let e = entry("olake-sync:master", "connector-crash", &[], witness);
        let result = run::run_entry::<()>(&e, &Budget::default());
        assert_eq!(result.verdict, Verdict::Holds, "{witness}");
    }
}

/// A PostgreSQL restart after an acknowledgement that did not move `restart_lsn` takes the slot
/// back to its saved copy, below the state file: every variant whose acknowledgement comes
/// before the state write fails this way; v0.5.0's order fails sooner, through EOF.
#[test]
fn a_postgresql_restart_takes_back_an_acknowledgement_in_memory() {
    for spec in ["olake-sync:master", "olake-sync:pr854"] {
        let (actions, last) = counterexample(&entry(spec, "pg-crash", &[], "no-lsn-mismatch"));
        let expected: Vec<Action> = STREAMED
            .into_iter()
            .chain([NO_MOVE, SaveState, PgCrash, NextSync, Validate])
            .collect();
        assert_eq!(actions, expected, "{spec}");
        assert_eq!(
            last.connector.phase,
            mismatch(AFTER_TXN0, AT_START),
            "{spec}"
        );
    }
    for spec in ["olake-sync:v0.5.0", "olake-sync:pr864"] {
        let (actions, last) = counterexample(&entry(spec, "pg-crash", &[], "no-lsn-mismatch"));
        let expected = [
            CommitTxn,
            Validate,
            Receive { txn: 0 },
            PgCrash,
            Commit,
            SaveState,
            NO_MOVE,
            NextSync,
            Validate,
        ];
        assert_eq!(actions, expected, "{spec}");
        assert_eq!(
            last.connector.phase,
            mismatch(AFTER_TXN0, AT_START),
            "{spec}"
        );
    }
}

/// #862's symptom (`LSN not updated after 5 minutes`) is out of reach at the default bounds:
/// the loop exits only at `ClientXLogPos >= CurrentWalPosition >= confirmed_flush`. With three
/// transactions, two faults and three runs the model finds a new road to it in v0.5.0: the first
/// sync acknowledges two transactions and PostgreSQL moves `restart_lsn` to a decoding candidate
/// between them, saving the slot; the next stream's keepalive drags `ClientXLogPos` back to it,
/// a PostgreSQL restart cuts the stream short, the connector crashes after the commit, and the
/// recovery sync acknowledges the regressed LSN below the slot. #864's guard closes it. With two
/// transactions there is no candidate below the acknowledged position to keep, and it holds.
#[test]
fn v050_ack_timeout_needs_a_keepalive_regression_eof_and_a_crash() {
    let deep = ["keepalive=on", "txns=3", "syncs=3", "crashes=2"];
    let (actions, last) =
        counterexample(&entry("olake-sync:v0.5.0", "all", &deep, "no-ack-timeout"));
    // The third transaction commits after the first stream took its target, so the second
    // stream has one to wait for while the keepalive drags it back.
    let expected = [
        CommitTxn,
        CommitTxn,
        Validate,
        CommitTxn,
        Receive { txn: 0 },
        Receive { txn: 1 },
        EndStream,
        Commit,
        SaveState,
        Ack {
            restart: Some(AFTER_TXN0),
        },
        NextSync,
        Validate,
        Keepalive,
        PgCrash,
        Commit,
        ConnectorCrash,
        Restart,
        Validate,
        EndStream,
        Commit,
        SaveState,
        NO_MOVE,
    ];
    assert_eq!(actions, expected);
    assert_eq!(
        last.connector.phase,
        SyncPhase::Failed(SyncFailure::AckTimeout {
            sent: AFTER_TXN0,
            slot: AFTER_TXN1
        })
    );
    for spec in ["olake-sync:master", "olake-sync:pr854", "olake-sync:pr864"] {
        let e = entry(spec, "all", &deep, "no-ack-timeout");
        assert_eq!(
            run::run_entry::<()>(&e, &Budget::default()).verdict,
            Verdict::Holds,
            "{spec}"
        );
    }
    let two_txns = ["keepalive=on", "syncs=4", "crashes=2"];
    for (spec, bounds) in [
        ("olake-sync:v0.5.0", &["keepalive=on"][..]),
        ("olake-sync:master", &["keepalive=on"][..]),
        ("olake-sync:v0.5.0", &two_txns[..]),
    ] {
        let e = entry(spec, "all", bounds, "no-ack-timeout");
        assert_eq!(
            run::run_entry::<()>(&e, &Budget::default()).verdict,
            Verdict::Holds,
            "{spec} {bounds:?}"
        );
    }
}

/// The default catalogue of the system: every verdict as expected, every witness of the
/// configurations reached where the catalogue says so, each counterexample replaying to its
/// violation, and a search small enough for the whole system to stay well under 10 s.
#[test]
fn catalogue_verdicts_witnesses_and_size() {
    let results = checked_as_expected("olake-sync");
    assert_eq!(results.len(), 288);
    for r in &results {
        if r.is_counterexample() {
            let trace = r.trace.as_ref().unwrap();
            assert_eq!(
                run::replay_trace::<()>(trace).unwrap(),
                Ok(trace.steps.len() - 1)
            );
        }
    }
    // Every crash point is reached where the variant's order has one.
    let reached = |variant: &str, faults: &str, id: &str| {
        results.iter().any(|r| {
            r.entry.config.variant() == variant
                && r.entry.config.faults() == faults
                && r.entry.property.id == id
                && r.verdict == Verdict::Holds
        })
    };
    for variant in ["v0.5.0", "master", "pr854", "pr864"] {
        assert!(reached(
            variant,
            "connector-crash",
            "reach-crash-after-commit"
        ));
        assert!(reached(variant, "pg-crash", "reach-pg-crash-after-ack"));
        assert!(reached(variant, "none", "reach-sync-complete"));
    }
    for variant in ["master", "pr854"] {
        assert!(reached(variant, "connector-crash", "reach-crash-after-ack"));
        assert!(reached(
            variant,
            "connector-crash",
            "reach-keepalive-regression"
        ));
    }
    for variant in ["v0.5.0", "pr864"] {
        assert!(reached(
            variant,
            "connector-crash",
            "reach-crash-after-state"
        ));
        assert!(reached(variant, "connector-crash", "reach-recovery-sync"));
    }
    assert!(reached("master", "connector-crash", "reach-recovery-sync"));
    assert!(reached("pr854", "connector-crash", "reach-duplicate"));
    assert!(!reached("pr864", "none", "reach-keepalive-regression"));
    // Every witness expected to hold is reached (no vacuous verdict), and the search is small:
    // the proxy for "under 10 s" that does not depend on the machine.
    let witnesses = results
        .iter()
        .filter(|r| r.entry.property.kind == Kind::Sometimes && r.entry.expected == Verdict::Holds)
        .count();
    assert_eq!(witnesses, 110);
    let states: u64 = results.iter().map(|r| r.unique_states).sum();
    assert!(states < 200_000, "{states} distinct states");
}

/// The acceptance table: per variant and fault set, whether `no-lsn-mismatch` holds.
#[test]
fn acceptance_table() {
    use Verdict::{Holds, Violated};
    let rows: [(&str, [Verdict; 4]); 4] = [
        ("v0.5.0", [Holds, Violated, Violated, Violated]),
        ("master", [Holds, Holds, Violated, Violated]),
        ("pr854", [Holds, Violated, Violated, Violated]),
        ("pr864", [Holds, Violated, Violated, Violated]),
    ];
    for (variant, verdicts) in rows {
        for (faults, verdict) in ["none", "connector-crash", "pg-crash", "all"]
            .into_iter()
            .zip(verdicts)
        {
            for keepalive in ["keepalive=off", "keepalive=on"] {
                let e = entry(
                    &format!("olake-sync:{variant}"),
                    faults,
                    &[keepalive],
                    "no-lsn-mismatch",
                );
                let result = run::run_entry::<()>(&e, &Budget::default());
                assert_eq!(result.verdict, verdict, "{variant} {faults} {keepalive}");
                for property in ["ack-within-durable", "ack-within-destination"] {
                    let e = entry(
                        &format!("olake-sync:{variant}"),
                        faults,
                        &[keepalive],
                        property,
                    );
                    assert_eq!(run::run_entry::<()>(&e, &Budget::default()).verdict, Holds);
                }
            }
        }
    }
}

/// Every counterexample of the default catalogue, keepalives on or off, is one of the three known
/// windows: #853's (state, crash before the ack; or state, then the ack fails after a restart's
/// EOF), #998's (ack, crash before the state), or the lost in-memory acknowledgement.
#[test]
fn every_violated_entry_is_a_known_minimal_sequence() {
    let state_then_crash: Vec<Action> = STREAMED
        .into_iter()
        .chain([SaveState, ConnectorCrash, Restart, Validate])
        .collect();
    let eof_then_state = vec![
        CommitTxn,
        Validate,
        Receive { txn: 0 },
        PgCrash,
        Commit,
        SaveState,
        NO_MOVE,
        NextSync,
        Validate,
    ];
    let ack_then_crash: Vec<Action> = STREAMED
        .into_iter()
        .chain([NO_MOVE, ConnectorCrash, Restart, Validate])
        .collect();
    let lost_ack: Vec<Action> = STREAMED
        .into_iter()
        .chain([NO_MOVE, SaveState, PgCrash, NextSync, Validate])
        .collect();
    let known = |variant: &str, faults: &str| -> &Vec<Action> {
        match (variant, faults) {
            ("v0.5.0" | "pr864", "pg-crash") => &eof_then_state,
            ("v0.5.0" | "pr864", _) => &state_then_crash,
            ("pr854", "connector-crash" | "all") => &ack_then_crash,
            ("master" | "pr854", "pg-crash" | "all") => &lost_ack,
            other => panic!("no counterexample expected for {other:?}"),
        }
    };
    let all = select(&["olake-sync"], None, &[]);
    let mut seen = 0;
    for e in all
        .iter()
        .filter(|e| e.property.kind == Kind::Always && e.expected == Verdict::Violated)
    {
        let (actions, _) = counterexample(e);
        let (variant, faults) = (e.config.variant(), e.config.faults());
        assert_eq!(&actions, known(variant, faults), "{variant} {faults}");
        seen += 1;
    }
    assert_eq!(seen, 22);
}

/// `reach-pg-crash-after-ack` is reached by an acknowledgement the slot confirmed and a restart
/// took back, in every variant: not by v0.5.0's shorter EOF path, whose acknowledgement fails
/// on the dead connection and leaves the same positions.
#[test]
fn the_lost_ack_witness_needs_a_confirmed_ack() {
    for spec in [
        "olake-sync:v0.5.0",
        "olake-sync:master",
        "olake-sync:pr854",
        "olake-sync:pr864",
    ] {
        let e = entry(spec, "pg-crash", &[], "reach-pg-crash-after-ack");
        let model = model_of(&e);
        let property = model
            .properties()
            .into_iter()
            .find(|p| p.name == e.property.id)
            .unwrap();
        let outcome = reference::check(&model, &property, &Budget::default()).unwrap();
        assert_eq!(outcome.verdict, Verdict::Holds, "{spec}");
        let actions: Vec<Action> = outcome.path.unwrap().actions().copied().collect();
        let ack = actions.iter().position(|a| matches!(a, Ack { .. }));
        let crash = actions.iter().position(|a| *a == PgCrash);
        assert!(
            matches!((ack, crash), (Some(a), Some(c)) if a < c),
            "{spec}: {actions:?}"
        );
    }
}
