//! `traces/golden/`: one committed trace per expected counterexample of the catalogue. This test
//! regenerates them all and fails on any byte difference, so a model change that alters a
//! counterexample shows up in review. `WALCHECK_BLESS=1 cargo test --test tests golden::`
//! rewrites them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use walcheck::catalogue::{self, Selection};
use walcheck::run;
use walcheck::search::Budget;
use walcheck_traces::Trace;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("traces/golden")
}

fn regenerated() -> BTreeMap<String, String> {
    let entries = catalogue::select(&Selection::default()).unwrap();
    run::run_all::<()>(&entries, 2, &Budget::default())
        .iter()
        .filter(|r| {
            r.is_counterexample() && r.entry.expected == walcheck::search::Verdict::Violated
        })
        .map(|r| {
            (
                run::trace_file_name(&r.entry),
                r.trace.as_ref().unwrap().to_text(),
            )
        })
        .collect()
}

fn committed() -> BTreeMap<String, String> {
    std::fs::read_dir(golden_dir())
        .map(|dir| {
            dir.map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(".itf.json"))
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read_to_string(&p).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn golden_traces_are_current() {
    let fresh = regenerated();
    assert!(fresh.len() >= 20, "{}", fresh.len());
    if std::env::var("WALCHECK_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(golden_dir()).unwrap();
        for name in committed().keys() {
            std::fs::remove_file(golden_dir().join(name)).unwrap();
        }
        for (name, text) in &fresh {
            std::fs::write(golden_dir().join(name), text).unwrap();
        }
        return;
    }
    let golden = committed();
    let missing: Vec<&String> = fresh.keys().filter(|k| !golden.contains_key(*k)).collect();
    let stale: Vec<&String> = golden.keys().filter(|k| !fresh.contains_key(*k)).collect();
    assert!(missing.is_empty() && stale.is_empty(), "golden traces missing {missing:?}, stale {stale:?}; rerun with WALCHECK_BLESS=1 and review the diff");
    for (name, text) in &fresh {
        assert!(
            golden[name] == *text,
            "{name} changed; rerun with WALCHECK_BLESS=1 and review the diff"
        );
    }
}

#[test]
fn golden_traces_parse_as_itf_and_replay() {
    let golden = committed();
    assert!(
        !golden.is_empty(),
        "no golden traces: run WALCHECK_BLESS=1 cargo test --test tests golden::"
    );
    for (name, text) in &golden {
        let parsed: itf::Trace<itf::Value> =
            itf::trace_from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(parsed.states.len() >= 2, "{name}");
        let trace = Trace::from_text(text).unwrap();
        let steps = run::replay_trace::<()>(&trace)
            .unwrap()
            .unwrap_or_else(|m| panic!("{name}: {m}"));
        assert_eq!(steps, trace.len_actions(), "{name}");
    }
}
