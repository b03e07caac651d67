//! Each system declares every trace variable once, with its kind and a one-line doc
//! (`View::variables`): what the counterexample legend and trace validation read. The golden
//! traces show exactly the declared variables: none undeclared, none declared and never shown.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;
use walcheck::catalogue;

#[test]
fn golden_traces_show_exactly_the_declared_variables() {
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("traces/golden");
    let mut shown: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(golden).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let trace: Value = serde_json::from_str(&text).unwrap();
        let system = trace["#meta"]["walcheck:system"]
            .as_str()
            .unwrap()
            .to_owned();
        let names = shown.entry(system).or_default();
        for state in trace["states"].as_array().unwrap() {
            let keys = state.as_object().unwrap().keys();
            names.extend(
                keys.filter(|k| !k.starts_with('#') && !k.contains("::"))
                    .cloned(),
            );
        }
    }
    assert_eq!(shown.len(), 3, "every built-in system has golden traces");
    for (system, names) in shown {
        let info = catalogue::system(&system).unwrap().info();
        let declared: BTreeSet<String> = info
            .view
            .variables
            .iter()
            .map(|v| v.name.to_owned())
            .collect();
        assert_eq!(
            names, declared,
            "{system}: shown (left) and declared (right)"
        );
        for var in info.view.variables {
            assert!(
                !var.kind.is_empty() && !var.doc.is_empty(),
                "{system}: {var:?}"
            );
        }
        for key in info.view.key_variables.iter().chain(info.view.counters) {
            assert!(declared.contains(*key), "{system}: {key} is not declared");
        }
    }
}

/// A counterexample reads on its own: above its table the property's meaning and the whole
/// configuration, below it a legend line for every column and for the terms it uses.
#[test]
fn a_counterexample_explains_itself() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("traces/golden/olake-bootstrap__master__none__state-matches-slot.itf.json");
    let trace = walcheck_traces::Trace::read(&path).unwrap();
    let config = walcheck::run::check_trace::<()>(&trace).unwrap();
    let text =
        walcheck::report::explained_table(&trace, &config, walcheck_traces::render::Cells::Changes);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("  state-matches-slot: once the state file is seeded"));
    assert_eq!(
        lines[1],
        "  configuration: server=primary page_bytes=8192 wal_buffers_pages=4 stmt_pages_small=1 \
         stmt_pages_bulk=5 statements=2 syncs=2 crashes=1 fairness=declared"
    );
    let legend = &lines[lines.iter().position(|l| *l == "where:").unwrap() + 1..];
    let named: Vec<&str> = legend
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let view = &config.info().view;
    let columns = walcheck_traces::render::columns(&trace, view.key_variables, view.counters);
    assert_eq!(&named[..columns.len()], &columns[..]);
    assert_eq!(
        &named[columns.len()..],
        [
            "W0",
            "restart_moves",
            "pages",
            "commit",
            "*",
            "configuration"
        ]
    );
}

/// A value of a variable declared as an LSN must read as one: a one-line reason otherwise,
/// naming the state and the variable, before any replay.
#[test]
fn a_trace_with_an_invalid_lsn_is_refused() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("traces/golden/olake-bootstrap__master__none__state-matches-slot.itf.json");
    let text = std::fs::read_to_string(path).unwrap();
    for bad in ["ZZ/1", "1/12345678A", "0/", ""] {
        let edited = text.replacen("\"0/100A000\"", &format!("\"{bad}\""), 1);
        let trace = walcheck_traces::Trace::from_text(&edited).unwrap();
        let err = walcheck::run::check_trace::<()>(&trace).unwrap_err();
        assert_eq!(
            err,
            format!("state 1: insert is {bad:?}, not an LSN (X/Y, 1 to 8 hex digits each)")
        );
        assert!(walcheck::run::replay_trace::<()>(&trace).is_err(), "{bad}");
    }
}
