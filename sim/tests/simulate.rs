//! The simulator as a library: exact counts of a small seeded run (a regression value), OLake
//! #1084's pattern, same seed same report, and traces of violating attempts that replay.

use stateright::Model;
use walcheck_model::olake::Variant;
use walcheck_sim::engine::{self, AttemptId};
use walcheck_sim::run::{attempt_traces, LevelReport};
use walcheck_sim::{report, simulate, LadderKind, Options, Params};
use walcheck_systems::olake_bootstrap::OlakeBootstrap;
use walcheck_traces::replay::replay;
use walcheck_traces::Trace;

fn options(seed: u64, attempts: u32) -> Options {
    Options {
        variants: Variant::ALL.to_vec(),
        ladders: LadderKind::ALL.to_vec(),
        seed,
        attempts,
        params: Params::default(),
        trace_out: None,
        trace_limit: 1,
        protocol: walcheck_sim::engine::Protocol::Independent,
        level_rounds: 0,
    }
}

/// Per variant: (write ahead at read, stopped short, lsn mismatch, retries).
type Counts = (u64, u64, u64, u64);

fn counts(level: &LevelReport) -> Vec<Counts> {
    level
        .tallies
        .iter()
        .map(|t| {
            (
                t.write_ahead_at_read,
                t.stopped_short,
                t.lsn_mismatch,
                t.retries,
            )
        })
        .collect()
}

/// A regression value: a change to the model, the engine or the random streams that moves any
/// count shows up here. Variants in order master, pr854, pr1084.
#[test]
fn a_small_seeded_run_gives_these_exact_counts() {
    let report = simulate(&options(7, 12)).unwrap();
    let got: Vec<Vec<Vec<Counts>>> = report
        .ladders
        .iter()
        .map(|l| l.levels.iter().map(counts).collect())
        .collect();
    let zero = vec![(0, 0, 0, 0); 3];
    let sync = vec![
        zero.clone(),
        zero.clone(),
        zero,
        vec![(1, 0, 0, 0), (1, 1, 1, 0), (1, 1, 0, 1)],
        vec![(5, 5, 5, 0), (5, 5, 5, 0), (5, 5, 0, 5)],
        vec![(9, 9, 9, 0), (9, 9, 9, 0), (9, 9, 0, 9)],
        vec![(10, 10, 10, 0), (10, 10, 10, 0), (10, 10, 0, 10)],
    ];
    let asynchronous = vec![
        vec![(7, 7, 7, 0), (7, 7, 7, 0), (7, 7, 0, 9)],
        vec![(9, 9, 9, 0), (9, 9, 9, 0), (9, 9, 0, 9)],
        vec![(9, 9, 9, 0), (9, 9, 9, 0), (9, 9, 0, 9)],
        vec![(11, 11, 11, 0), (11, 11, 11, 0), (11, 11, 0, 11)],
        vec![(11, 11, 11, 0), (11, 11, 11, 0), (11, 11, 0, 11)],
        vec![(10, 9, 9, 0), (10, 9, 9, 0), (10, 9, 0, 9)],
        vec![(12, 12, 12, 0), (12, 12, 12, 0), (12, 12, 0, 12)],
    ];
    assert_eq!(got, vec![sync, asynchronous]);
}

/// OLake #1084's pattern: under synchronous commit no mismatch while a statement's WAL fits in
/// wal_buffers (0.5–2 MB), mismatches from 4 MB on; under asynchronous commit mismatches from
/// the lowest rate; the fix never mismatches, and retries instead.
#[test]
fn the_ladders_show_1084s_pattern() {
    let report = simulate(&options(1, 60)).unwrap();
    let (master, pr1084) = (0, 2);
    for ladder in &report.ladders {
        for (i, level) in ladder.levels.iter().enumerate() {
            let below_wal_buffers = ladder.kind == LadderKind::Sync && i < 3;
            let m = &level.tallies[master];
            let f = &level.tallies[pr1084];
            assert_eq!(
                m.lsn_mismatch == 0,
                below_wal_buffers,
                "{}",
                level.level.label
            );
            assert_eq!(f.lsn_mismatch, 0, "{}", level.level.label);
            assert_eq!(f.violating, 0, "{}", level.level.label);
            assert_eq!(f.retries > 0, !below_wal_buffers, "{}", level.level.label);
            assert_eq!(f.gave_up, 0);
            if ladder.kind == LadderKind::Sync && i < 3 {
                assert_eq!(m.write_ahead_at_read, 0);
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_report_and_json() {
    let a = simulate(&options(11, 8)).unwrap();
    let b = simulate(&options(11, 8)).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&report::to_json(&a, 0)).unwrap(),
        serde_json::to_string(&report::to_json(&b, 0)).unwrap()
    );
    assert_eq!(report::to_text(&a), report::to_text(&b));
    let c = simulate(&options(12, 8)).unwrap();
    assert_ne!(a.ladders, c.ladders);
}

#[test]
fn fewer_attempts_are_a_prefix_of_more() {
    // Each attempt has its own random streams: attempt k does not depend on how many run.
    let few = simulate(&options(5, 3)).unwrap();
    let more = simulate(&options(5, 6)).unwrap();
    let firsts = |r: &walcheck_sim::Report| -> Vec<Vec<u32>> {
        r.ladders
            .iter()
            .flat_map(|l| &l.levels)
            .map(|l| l.tallies[0].violating_attempts.clone())
            .collect()
    };
    for (a, b) in firsts(&few).iter().zip(firsts(&more)) {
        assert_eq!(a.as_slice(), &b[..a.len()]);
    }
}

#[test]
fn a_violating_attempt_is_a_trace_that_replays() {
    let options = options(1, 20);
    let report = simulate(&options).unwrap();
    let ladder = &report.ladders[1];
    let level = &ladder.levels[0];
    let attempt = level.tallies[0].violating_attempts[0];
    let id = AttemptId {
        seed: 1,
        ladder: LadderKind::Async,
        level_index: 0,
        attempt,
    };
    let traces = attempt_traces(&options, Variant::Master, &level.level, id).unwrap();
    let properties: Vec<&str> = traces.iter().map(|t| t.header.property.as_str()).collect();
    assert_eq!(properties, ["state-matches-slot", "no-lsn-mismatch"]);
    for trace in &traces {
        let text = trace.to_text();
        let parsed = Trace::from_text(&text).unwrap();
        assert_eq!(&parsed, trace);
        let itf: itf::Trace<itf::Value> = itf::trace_from_str(&text).unwrap();
        assert_eq!(itf.states.len(), trace.steps.len());
        let model = OlakeBootstrap::from(engine::config(
            Variant::Master,
            &options.params,
            &level.level,
        ));
        let property = model
            .properties()
            .into_iter()
            .find(|p| p.name == trace.header.property)
            .unwrap();
        let replayed = replay(&model, &property, trace).unwrap();
        assert_eq!(replayed.len(), trace.len_actions());
        assert!(trace.steps.iter().all(|s| s.time_us.is_some()));
        assert_eq!(trace.header.seed, Some(1));
    }
    // The mismatch trace ends with validateGlobalState's own error text.
    let last = traces[1].steps.last().unwrap();
    let connector = last.var("connector").unwrap().to_string();
    assert!(connector.contains("lsn mismatch, please proceed with clear destination"));
    // pr1084 at the same attempt breaks nothing, so there is no trace.
    assert!(attempt_traces(&options, Variant::Pr1084, &level.level, id)
        .unwrap()
        .is_empty());
}

#[test]
fn bad_options_are_one_line_errors() {
    let mut o = options(1, 0);
    assert!(simulate(&o).unwrap_err().starts_with("--attempts takes"));
    o.attempts = 1;
    o.params.wal_writer_delay_us = 0;
    assert!(simulate(&o)
        .unwrap_err()
        .starts_with("--wal-writer-delay-us"));
    o.params = Params::default();
    o.ladders.clear();
    assert!(simulate(&o).is_err());
    assert!(walcheck_sim::parse_spec("olake-bootstrap:nope")
        .unwrap_err()
        .contains("has no variant"));
    assert!(walcheck_sim::parse_spec("electric-flush")
        .unwrap_err()
        .starts_with("simulate knows system olake-bootstrap"));
    assert_eq!(
        walcheck_sim::parse_spec("olake-bootstrap:pr1084").unwrap(),
        [Variant::Pr1084]
    );
}
