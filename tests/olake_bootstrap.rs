//! `olake-bootstrap` through the checker: the known minimal counterexamples, their minimality, the
//! catalogue's verdicts with their witnesses, and agreement with stateright's own checker.

use stateright::{Checker, Model};
use walcheck::catalogue::{self, Entry, Selection};
use walcheck::reference;
use walcheck::run;
use walcheck::search::{Budget, Verdict};
use walcheck_model::olake::Variant;
use walcheck_model::pg::CommitMode::Sync;
use walcheck_systems::olake_bootstrap::{
    Action, Action::*, Config, Faults, OlakeBootstrap, OlakeBootstrapSystem, State,
};

use crate::util::{checked_as_expected, select};

fn entries(spec: &str, faults: &str, bounds: &[&str]) -> Vec<Entry> {
    select(&[spec], Some(faults), bounds)
}

fn entry(spec: &str, faults: &str, bounds: &[&str], property: &str) -> Entry {
    let mut found: Vec<Entry> = entries(spec, faults, bounds);
    found.retain(|e| {
        e.property.id == property
            && (bounds.iter().any(|b| b.starts_with("server="))
                || e.config.non_default_bounds().is_empty())
    });
    assert_eq!(found.len(), 1, "{spec} {faults} {bounds:?} {property}");
    found.remove(0)
}

fn model_of(entry: &Entry) -> OlakeBootstrap {
    assert_eq!(entry.system(), "olake-bootstrap");
    OlakeBootstrap::of(&OlakeBootstrapSystem, &entry.config.config)
}

/// The counterexample the checker finds for `entry`, as actions.
fn counterexample(entry: &Entry) -> Vec<Action> {
    let path = crate::util::counterexample(&model_of(entry), entry.property.id);
    path.actions().copied().collect()
}

fn holds_everywhere(
    model: &OlakeBootstrap,
    property: &str,
    path: &walcheck::search::Path<State, Action>,
) -> bool {
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == property)
        .unwrap();
    std::iter::once(&path.init)
        .chain(path.steps.iter().map(|(_, s)| s))
        .all(|s| (property.condition)(model, s))
}

const MASTER_SEED_ADVANCE: [Action; 4] = [
    Append {
        pages: 5,
        commit: Sync,
    },
    ReadSlot,
    SeedState,
    Advance {
        restart_moves: false,
    },
];

#[test]
fn master_state_mismatch_is_write_ahead_then_clamped_advance() {
    let e = entry("olake-bootstrap:master", "none", &[], "state-matches-slot");
    assert_eq!(counterexample(&e), MASTER_SEED_ADVANCE);
}

#[test]
fn master_lsn_mismatch_ends_at_validate_with_olakes_error() {
    let e = entry("olake-bootstrap:master", "none", &[], "no-lsn-mismatch");
    let mut expected = MASTER_SEED_ADVANCE.to_vec();
    expected.push(Validate);
    assert_eq!(counterexample(&e), expected);

    let result = run::run_entry::<()>(&e, &Budget::default());
    let trace = result.trace.unwrap();
    let last = trace.steps.last().unwrap();
    assert_eq!(last.action.as_deref(), Some("Validate"));
    let connector = &last.vars.iter().find(|(n, _)| n == "connector").unwrap().1;
    assert!(
        connector.to_string().ends_with("lsn mismatch, please proceed with clear destination. lsn saved in state [0/1002000] current lsn [0/1000000]"),
        "{connector}"
    );
}

#[test]
fn both_master_counterexamples_show_write_ahead_of_flush_at_read_slot() {
    for property in ["state-matches-slot", "no-lsn-mismatch"] {
        let e = entry("olake-bootstrap:master", "none", &[], property);
        let path = reference::replay(&model_of(&e), &counterexample(&e)).unwrap();
        let (_, at_read) = path.steps.iter().find(|(a, _)| *a == ReadSlot).unwrap();
        assert!(
            at_read.server.wal.write > at_read.server.wal.flush,
            "{at_read:?}"
        );
    }
}

#[test]
fn state_mismatch_ends_at_the_first_state_where_file_and_slot_differ() {
    let e = entry("olake-bootstrap:master", "none", &[], "state-matches-slot");
    let path = reference::replay(&model_of(&e), &counterexample(&e)).unwrap();
    let last = path.last_state();
    assert_ne!(last.state_file, Some(last.server.slot.confirmed_flush));
    let before = walcheck::search::Path {
        init: path.init.clone(),
        steps: path.steps[..path.steps.len() - 1].to_vec(),
    };
    assert!(holds_everywhere(
        &model_of(&e),
        "state-matches-slot",
        &before
    ));
}

#[test]
fn pr854_advances_first_and_still_mismatches() {
    let e = entry("olake-bootstrap:pr854", "none", &[], "no-lsn-mismatch");
    assert_eq!(
        counterexample(&e),
        [
            Append {
                pages: 5,
                commit: Sync
            },
            ReadSlot,
            Advance {
                restart_moves: false
            },
            SeedState,
            Validate
        ]
    );
}

#[test]
fn pr1084_loses_its_advance_to_a_server_crash_before_a_checkpoint() {
    let e = entry(
        "olake-bootstrap:pr1084",
        "pg-crash",
        &[],
        "state-matches-slot",
    );
    let crash = [
        Append {
            pages: 1,
            commit: Sync,
        },
        CommitFlush,
        ReadSlot,
        Advance {
            restart_moves: false,
        },
        SeedState,
        PgCrash,
    ];
    assert_eq!(counterexample(&e), crash);
    let e = entry("olake-bootstrap:pr1084", "pg-crash", &[], "no-lsn-mismatch");
    let mut expected = crash.to_vec();
    expected.extend([NextSync, ReadSlot, Validate]);
    assert_eq!(counterexample(&e), expected);
}

#[test]
fn master_on_a_standby_fails_only_through_a_crash_between_state_and_advance() {
    let e = entry(
        "olake-bootstrap:master",
        "connector-crash",
        &["server=standby"],
        "no-lsn-mismatch",
    );
    assert_eq!(
        counterexample(&e),
        [
            Append {
                pages: 1,
                commit: Sync
            },
            CommitFlush,
            Replay,
            ReadSlot,
            SeedState,
            ConnectorCrash,
            Restart,
            ReadSlot,
            Validate
        ]
    );
}

/// Every written counterexample is minimal: deleting any one step either disables a later step or
/// removes the violation.
#[test]
fn every_counterexample_is_minimal() {
    let all = catalogue::select(&Selection::default()).unwrap();
    let violated: Vec<&Entry> = all
        .iter()
        .filter(|e| e.system() == "olake-bootstrap")
        .filter(|e| {
            e.expected == Verdict::Violated
                && e.property.kind == walcheck_properties::system::Kind::Always
        })
        .collect();
    assert!(violated.len() >= 20, "{}", violated.len());
    for e in violated {
        let model = model_of(e);
        let actions = counterexample(e);
        for i in 0..actions.len() {
            let mut shorter = actions.clone();
            shorter.remove(i);
            match reference::replay(&model, &shorter) {
                Err(_) => {}
                Ok(path) => assert!(
                    holds_everywhere(&model, e.property.id, &path),
                    "{}:{} {} {}: still violated without step {i} ({:?})",
                    e.system(),
                    e.config.variant(),
                    e.config.faults(),
                    e.property.id,
                    actions[i]
                ),
            }
        }
    }
}

/// The default catalogue: every verdict as expected, and every witness of a holding
/// configuration reached (the proofs are not vacuous).
#[test]
fn catalogue_verdicts_and_witnesses() {
    let results = checked_as_expected("olake-bootstrap");
    for r in results
        .iter()
        .filter(|r| r.entry.config.variant() == "pr1084" && r.entry.config.faults() == "none")
        .filter(|r| {
            !r.entry
                .config
                .non_default_bounds()
                .contains(&"fairness=none".into())
        })
    {
        assert_eq!(r.verdict, Verdict::Holds, "{}", r.entry.property.id);
    }
    let pr1084_witnesses: Vec<&str> = results
        .iter()
        .filter(|r| {
            r.entry.config.variant() == "pr1084"
                && r.entry.config.faults() == "connector-crash"
                && r.entry.config.non_default_bounds().is_empty()
        })
        .filter(|r| r.entry.property.kind == walcheck_properties::system::Kind::Sometimes)
        .map(|r| r.entry.property.id)
        .collect();
    assert_eq!(
        pr1084_witnesses,
        [
            "reach-write-ahead-at-read",
            "reach-advance-clamped",
            "reach-bootstrap-complete",
            "reach-connector-crash"
        ]
    );
}

/// The acceptance table, row by row.
#[test]
fn acceptance_table() {
    use Verdict::{Holds, Violated};
    let rows: [(&str, &str, &str, Verdict); 8] = [
        ("master", "none", "primary", Violated),
        ("pr854", "none", "primary", Violated),
        ("pr1084", "none", "primary", Holds),
        ("pr1084", "connector-crash", "primary", Holds),
        ("pr1084", "pg-crash", "primary", Violated),
        ("master", "none", "standby", Holds),
        ("pr1084", "none", "standby", Holds),
        ("pr854", "none", "standby", Holds),
    ];
    for (variant, faults, server, verdict) in rows {
        for property in ["state-matches-slot", "no-lsn-mismatch"] {
            let e = entry(
                &format!("olake-bootstrap:{variant}"),
                faults,
                &[&format!("server={server}")],
                property,
            );
            let result = run::run_entry::<()>(&e, &Budget::default());
            assert_eq!(
                result.verdict, verdict,
                "{variant} {faults} {server} {property}"
            );
        }
    }
}

/// stateright's own checkers agree with ours on the same model: same counterexample length for
/// master, no discovery and the same state count for pr1084.
#[test]
fn stateright_checkers_agree() {
    let master = OlakeBootstrap::from(Config::new(Variant::Master, Faults::None));
    let checker = master.checker().spawn_bfs().join();
    checker.assert_discovery(
        "no-lsn-mismatch",
        [MASTER_SEED_ADVANCE.to_vec(), vec![Validate]].concat(),
    );

    let fixed = OlakeBootstrap::from(Config::new(Variant::Pr1084, Faults::ConnectorCrash));
    let ours = reference::check(&fixed, &fixed.properties()[0], &Budget::default()).unwrap();
    let bfs = fixed.clone().checker().spawn_bfs().join();
    let dfs = fixed.clone().checker().threads(2).spawn_dfs().join();
    for property in [
        "state-matches-slot",
        "no-lsn-mismatch",
        "wal-pointers-ordered",
    ] {
        assert!(bfs.discovery(property).is_none(), "{property}");
        assert!(dfs.discovery(property).is_none(), "{property}");
    }
    assert_eq!(bfs.unique_state_count() as u64, ours.unique_states);
    assert_eq!(dfs.unique_state_count() as u64, ours.unique_states);
}

/// A budget stops the search and says so.
#[test]
fn budget_makes_a_search_inconclusive() {
    let fixed = OlakeBootstrap::from(Config::new(Variant::Pr1084, Faults::None));
    let outcome = reference::check(
        &fixed,
        &fixed.properties()[0],
        &Budget {
            max_states: Some(50),
            ..Budget::default()
        },
    )
    .unwrap();
    assert_eq!(outcome.verdict, Verdict::Inconclusive);
    assert_eq!(outcome.unique_states, 50);
}

/// Deeper bounds keep the verdicts: three statements, async commits and a second page size.
#[test]
fn deeper_bounds_keep_the_verdicts() {
    let bounds = ["statements=3", "syncs=3", "page_bytes=16384"];
    for (spec, verdict) in [
        ("olake-bootstrap:master", Verdict::Violated),
        ("olake-bootstrap:pr1084", Verdict::Holds),
    ] {
        let e = entry(
            spec,
            "connector-crash",
            &[&bounds[..], &["server=primary"]].concat(),
            "no-lsn-mismatch",
        );
        assert_eq!(
            run::run_entry::<()>(&e, &Budget::default()).verdict,
            verdict,
            "{spec}"
        );
    }
    // With only asynchronous one-page statements the write pointer still runs ahead (walwriter).
    let e = entry(
        "olake-bootstrap:master",
        "none",
        &["stmt_pages_bulk=1", "server=primary"],
        "no-lsn-mismatch",
    );
    let actions = counterexample(&e);
    assert!(actions.contains(&WalWriterWrite), "{actions:?}");
    assert!(actions
        .iter()
        .all(|a| !matches!(a, Append { pages: 5, .. })));
}

/// Delta debugging shrinks a padded story to the minimal canonical one.
#[test]
fn minimise_shrinks_a_padded_counterexample_to_the_canonical_one() {
    use walcheck_model::pg::CommitMode::Async;
    let e = entry("olake-bootstrap:master", "none", &[], "no-lsn-mismatch");
    let model = model_of(&e);
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == "no-lsn-mismatch")
        .unwrap();
    let padded = [
        Append {
            pages: 1,
            commit: Async,
        },
        WalWriterFlush,
        Append {
            pages: 5,
            commit: Sync,
        },
        WalWriterWrite,
        ReadSlot,
        SeedState,
        Advance {
            restart_moves: false,
        },
        Validate,
        NextSync,
    ];
    let minimal = walcheck_traces::replay::minimise(&model, &property, &padded);
    assert_eq!(
        minimal,
        [MASTER_SEED_ADVANCE.to_vec(), vec![Validate]].concat()
    );
}

/// A depth-first discovery (stateright's DFS) minimises to a 1-minimal story: still violating,
/// no longer, and no single step can go. (Only breadth-first search promises the shortest.)
#[test]
fn a_depth_first_counterexample_minimises_to_a_one_minimal_one() {
    let model = OlakeBootstrap::from(Config::new(Variant::Master, Faults::All));
    let dfs = model.clone().checker().spawn_dfs().join();
    let found: Vec<Action> = dfs.discovery("no-lsn-mismatch").unwrap().into_actions();
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == "no-lsn-mismatch")
        .unwrap();
    let minimal = walcheck_traces::replay::minimise(&model, &property, &found);
    assert!(minimal.len() <= found.len(), "{found:?} -> {minimal:?}");
    assert_eq!(
        walcheck_traces::replay::reaches(&model, &property, &minimal),
        Some(minimal.clone())
    );
    for i in 0..minimal.len() {
        let mut shorter = minimal.clone();
        shorter.remove(i);
        assert_eq!(
            walcheck_traces::replay::reaches(&model, &property, &shorter),
            None,
            "{minimal:?} without {i}"
        );
    }
}

/// `--bound` takes several bounds at once as reports and trace headers write a configuration
/// (`server=standby,fairness=none`): the same entries as one flag each; a bound given twice that
/// way is still an error.
#[test]
fn a_bound_flag_takes_a_configuration_as_reports_write_it() {
    let one_each = entries(
        "olake-bootstrap:pr1084",
        "all",
        &["statements=3", "server=standby"],
    );
    let at_once = entries(
        "olake-bootstrap:pr1084",
        "all",
        &["statements=3,server=standby"],
    );
    let configs = |es: &[Entry]| -> Vec<String> {
        es.iter()
            .map(|e| format!("{:?} {}", e.config, e.property.id))
            .collect()
    };
    assert_eq!(configs(&one_each), configs(&at_once));
    let twice = catalogue::select(&Selection {
        specs: vec!["olake-bootstrap".to_owned()],
        faults: None,
        bounds: vec!["statements=3,statements=4".to_owned()],
    });
    assert_eq!(twice.unwrap_err(), "--bound statements is given twice");
}
