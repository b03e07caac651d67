//! The engines behind `walcheck check`: the compact engine (one search per configuration over
//! fingerprints) gives the reference engine's verdicts, counts and traces on the whole catalogue
//! at any thread count; the memory budget ends a search inconclusive; a fingerprint collision is
//! an error, never a counterexample.

use walcheck::catalogue::{self, Entry, Selection};
use walcheck::run::{self, CheckResult, Engine, Options, Unobserved};
use walcheck::search::{Budget, Verdict};
use walcheck::{ci, report};
use walcheck_properties::system::FairnessChoice;

use crate::util::{select, walcheck, walcheck_command, without_measurements};

fn run(
    entries: &[Entry],
    engine: Engine,
    threads: usize,
    max_memory_bytes: Option<u64>,
) -> Vec<CheckResult> {
    let options = Options {
        engine,
        max_memory_bytes,
        ..Options::new(threads, Budget::default())
    };
    run::run_all_with::<()>(entries, &options, &Unobserved)
}

/// `entries` checked by the compact engine on 2 threads with every level packed by its model's
/// codec (by default only levels past 64 MiB are).
fn run_packed(entries: &[Entry]) -> Vec<CheckResult> {
    let options = Options {
        pack_above_bytes: 0,
        ..Options::new(2, Budget::default())
    };
    run::run_all_with::<()>(entries, &options, &Unobserved)
}

/// What `check --json` reports of a result apart from timings and the compact engine's own
/// fields, with its trace.
fn essence(r: &CheckResult) -> String {
    format!(
        "{} {:?} {} {} {} {:?}",
        r.entry.property.id,
        r.verdict,
        r.states,
        r.unique_states,
        r.max_depth,
        r.trace.as_ref().map(|t| t.to_text())
    )
}

#[test]
fn compact_and_reference_agree_on_every_catalogue_configuration() {
    let entries = catalogue::select(&Selection::default()).unwrap();
    let reference = run(&entries, Engine::Reference, 2, None);
    let compact = run(&entries, Engine::Compact, 2, None);
    // Every level packed with the models' codecs (by default only levels past 64 MiB are,
    // which no catalogue configuration reaches): states decoded from their bytes explore the
    // same space.
    let packed = run_packed(&entries);
    assert_eq!(reference.len(), compact.len());
    for ((r, c), p) in reference.iter().zip(&compact).zip(&packed) {
        assert_eq!(essence(r), essence(c), "{:?}", r.entry);
        assert_eq!(essence(c), essence(p), "packed: {:?}", r.entry);
        assert!(
            r.collision.is_none(),
            "the reference engine has no fingerprints"
        );
        assert!(c.error.is_none() && c.limit.is_none());
    }
    // A holding `always` is proved by exhausting the fingerprints: it carries the estimate.
    let proved = compact
        .iter()
        .find(|c| c.verdict == Verdict::Holds && c.entry.property.kind.name() == "always")
        .expect("the catalogue proves some always property");
    let collision = proved.collision.expect("an exhaustive proof");
    assert_eq!(collision.fingerprint_bits, 64);
    assert!(collision.optimistic > 0.0 && collision.optimistic < run::COLLISION_ADVICE_ABOVE);
    // A holding `eventually` rests on the same fingerprints, through the graph its search
    // recorded: it carries that search's estimate, even where no `always` or `sometimes` check
    // shares the search.
    let alone = compact
        .iter()
        .filter(|c| c.verdict == Verdict::Holds && c.entry.property.kind.name() == "eventually")
        .find(|c| {
            let key = run::search_key(&c.entry);
            !compact
                .iter()
                .any(|o| o.entry.property.kind.name() != "eventually" && o.entry.config == key)
        })
        .expect("the catalogue proves an eventually property searched for alone");
    assert!(
        alone.collision.is_some_and(|c| c.optimistic > 0.0),
        "{:?}",
        alone.entry
    );
    // The rows of one search that carry an estimate carry the same one: an `eventually` row's
    // search is its configuration's with fairness declared, its `fairness=none` row included.
    let mut searches: Vec<(catalogue::SystemConfig, _)> = Vec::new();
    for c in compact.iter().filter(|c| c.collision.is_some()) {
        let key = run::search_key(&c.entry);
        match searches.iter().find(|(k, _)| *k == key) {
            Some((_, estimate)) => assert_eq!(c.collision, *estimate, "{:?}", c.entry),
            None => searches.push((key, c.collision)),
        }
    }
    let unfair =
        |c: &CheckResult| FairnessChoice::of(&c.entry.config.config) == FairnessChoice::None;
    assert!(
        compact.iter().any(|c| c.collision.is_some()
            && c.entry.property.kind.name() == "eventually"
            && unfair(c)),
        "a holding eventually row under fairness=none carries its search's estimate"
    );
    // Counterexamples and witnesses are real paths: no estimate.
    assert!(compact
        .iter()
        .filter(|c| c.trace.is_some())
        .all(|c| c.collision.is_none()));
}

/// A search stopped by a budget exhausted nothing: none of its rows, `eventually` ones
/// included, carries a collision estimate.
#[test]
fn a_search_a_budget_stopped_carries_no_collision_estimate() {
    let entries = select(&["electric-flush:head"], Some("all"), &["timer_order=any"]);
    let budget = Budget {
        max_states: Some(1000),
        ..Budget::default()
    };
    let results = run::run_all_with::<()>(&entries, &Options::new(2, budget), &Unobserved);
    assert!(results
        .iter()
        .any(|r| r.entry.property.kind.name() == "eventually" && r.limit == Some("max-states")));
    for r in &results {
        if r.verdict == Verdict::Inconclusive {
            assert!(r.collision.is_none(), "{:?}", r.entry);
        }
    }
}

/// The entries `walcheck check connectors/` runs for the connector files but
/// `olake-bootstrap-pr1084` (1.8 million states, too slow in a debug build), built from the
/// loaded files without registering them (the other tests read the registry).
fn connector_entries() -> Vec<Entry> {
    let mut files: Vec<_> = std::fs::read_dir("connectors")
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .filter(|p| !p.ends_with("olake-bootstrap-pr1084.wal"))
        .collect();
    files.sort();
    let mut entries = Vec::new();
    for file in files {
        let (system, _) = walcheck_lang::system::load(&file).unwrap();
        let system: &'static dyn catalogue::AnySystem = Box::leak(Box::new(system));
        for faults in system.info().faults {
            let config =
                catalogue::SystemConfig::new(system, walcheck_lang::system::VARIANT, faults)
                    .unwrap();
            entries.extend(catalogue::config_entries(&config, &[]).unwrap());
        }
    }
    entries
}

#[test]
fn connector_files_give_the_same_results_with_every_level_packed() {
    let entries = connector_entries();
    assert!(entries.len() > 20, "{} entries", entries.len());
    let whole = run(&entries, Engine::Compact, 2, None);
    // A connector file's model packs its states with its own program's codec: every level
    // packed explores the same space and finds the same traces.
    let packed = run_packed(&entries);
    assert_eq!(whole.len(), packed.len());
    for (w, p) in whole.iter().zip(&packed) {
        assert!(w.error.is_none() && w.limit.is_none(), "{:?}", w.entry);
        assert_eq!(essence(w), essence(p), "packed: {:?}", w.entry);
    }
}

#[test]
fn compact_results_are_the_same_at_any_thread_count_and_width() {
    let entries = select(&["electric-flush:head"], Some("all"), &[]);
    let one = run(&entries, Engine::Compact, 1, None);
    let json =
        |results: &[CheckResult]| without_measurements(report::check_json(results)).to_string();
    for threads in [2, 4] {
        assert_eq!(
            json(&one),
            json(&run(&entries, Engine::Compact, threads, None))
        );
    }
    let wide = run::run_all_with::<()>(
        &entries,
        &Options {
            fingerprint_bits: 128,
            ..Options::new(2, Budget::default())
        },
        &Unobserved,
    );
    for (n, w) in one.iter().zip(&wide) {
        assert_eq!(essence(n), essence(w));
        if let (Some(n), Some(w)) = (n.collision, w.collision) {
            assert_eq!(w.fingerprint_bits, 128);
            assert!(w.optimistic < n.optimistic);
        }
    }
}

#[test]
fn the_memory_budget_ends_a_run_inconclusive() {
    let entries = select(&["electric-flush:head"], Some("all"), &[]);
    let bounded = run(&entries, Engine::Compact, 1, Some(200_000));
    let unbounded = run(&entries, Engine::Compact, 1, None);
    let mut stopped = 0;
    for (b, u) in bounded.iter().zip(&unbounded) {
        if b.verdict == Verdict::Inconclusive {
            assert_eq!(b.limit, Some("max-memory"), "{:?}", b.entry);
            let search = b.search.map_or(0, |s| s.memory_bytes);
            assert!(search <= 200_000);
            stopped += 1;
        } else {
            // Decided before the budget ran out: as without it.
            assert_eq!(essence(b), essence(u));
        }
    }
    // The safety searches and the liveness checks of both timer orders.
    assert!(stopped >= 12, "{stopped} stopped");
    assert_eq!(report::exit_code(&bounded, false), 3);
    let text = report::check_text(&bounded, false, Default::default(), false);
    assert!(
        text.contains(
            "inconclusive: electric-flush:head faults=all: the memory budget (--max-memory) ran out \
             first: 5 checks stopped: no-lost-flush-notification, notified-offset-is-txn-boundary, \
             ack-within-flushed, global-flush-monotone, wal-retention-bounded\n"
        ),
        "{text}"
    );
    // Where it stops is counted, not measured: the same at any thread count.
    let two = run(&entries, Engine::Compact, 2, Some(200_000));
    for (a, b) in bounded.iter().zip(&two) {
        assert_eq!((essence(a), a.limit), (essence(b), b.limit));
    }
    assert!(run::default_max_memory_bytes() > 0);
}

#[test]
fn check_exits_3_naming_the_memory_budget() {
    let out = tempfile::tempdir().unwrap();
    let output = walcheck_command(&[
        "check",
        "electric-flush:head",
        "--faults",
        "all",
        "--max-memory",
        "200000",
        "--out",
    ])
    .arg(out.path())
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains(": the memory budget (--max-memory) ran out first: "),
        "{stdout}"
    );
    let output = walcheck(&["check", "electric-flush:head", "--fingerprint-bits", "32"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_forced_fingerprint_collision_is_an_error_not_a_counterexample() {
    let entries = select(
        &["olake-bootstrap:master"],
        Some("all"),
        &["server=standby"],
    );
    let honest = run(&entries, Engine::Compact, 1, None);
    assert!(honest.iter().any(CheckResult::is_counterexample));
    // 8-bit fingerprints over hundreds of states: collisions, each compared and found.
    let narrow = run::run_all_with::<()>(
        &entries,
        &Options {
            fingerprint_bits: 8,
            ..Options::new(1, Budget::default())
        },
        &Unobserved,
    );
    let mut errors = 0;
    for (n, h) in narrow.iter().zip(&honest) {
        if h.entry.property.kind.name() == "eventually" {
            continue; // the liveness checker stores states whole
        }
        let error = n.error.as_deref().expect("a collision");
        assert!(error.contains("fingerprint collision"), "{error}");
        assert_eq!(n.verdict, Verdict::Inconclusive);
        assert!(n.trace.is_none() && !n.is_counterexample());
        errors += 1;
    }
    assert!(errors > 0);
    assert_eq!(report::exit_code(&narrow, false), 3);
    let text = report::check_text(&narrow, false, Default::default(), false);
    assert!(
        text.contains(
            "error: olake-bootstrap:master faults=all server=standby: fingerprint collision"
        ),
        "{text}"
    );
    let json = ci::check_report(&narrow, None, None);
    let row = &json["results"][0];
    assert!(row["error"]
        .as_str()
        .unwrap()
        .contains("fingerprint collision"));
    assert_eq!(row["verdict"], "inconclusive");
    assert_eq!(row["trace"], serde_json::Value::Null);
}
