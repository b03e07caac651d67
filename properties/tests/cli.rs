//! The `walcheck` binary as users and CI scripts call it: exit codes, one-line errors, JSON
//! contracts, determinism across runs and thread counts.

use std::process::{Command, Output};

use serde_json::Value;

fn walcheck(args: &[&str], out: &std::path::Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_walcheck"));
    command.args(args);
    if args.first() == Some(&"check") {
        command.arg("--out").arg(out);
    }
    command.output().expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn without_timings(json: &str) -> Value {
    let mut value: Value = serde_json::from_str(json).unwrap();
    for row in value["results"].as_array_mut().unwrap() {
        row.as_object_mut().unwrap().remove("elapsed_ms");
    }
    value
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[&[&str]] = &[
        &["check", "no-such-system"],
        &["check", "olake-bootstrap:no-such-variant"],
        &["check", "olake-bootstrap", "--faults", "meteor"],
        &["check", "--bound", "statements"],
        &["check", "--bound", "=3"],
        &["check", "--bound", "statements=many"],
        &["check", "--bound", "statements=1000"],
        &["check", "--bound", "server=replica"],
        &["check", "--bound", "no_such_bound=1"],
        &["check", "--threads", "0"],
        &["check", "--threads", "many"],
        &["check", "--timeout", "-1"],
        &["check", "--max-states", "0"],
        &["check", "--no-such-flag"],
        &["frobnicate"],
    ];
    for args in cases {
        let output = walcheck(args, dir.path());
        let stderr = String::from_utf8(output.stderr.clone()).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("walcheck: error: "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn an_unwritable_out_dir_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let output = walcheck(
        &["check", "olake-bootstrap:master", "--faults", "none"],
        &file.join("sub"),
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8(output.stderr).unwrap().lines().count(), 1);
}

#[test]
fn check_json_is_the_same_bytes_across_runs_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<Output> = [["1"], ["1"], ["2"]]
        .iter()
        .map(|[threads]| walcheck(&["check", "--json", "--threads", threads], dir.path()))
        .collect();
    for output in &runs {
        assert_eq!(output.status.code(), Some(0));
    }
    let first = without_timings(&stdout(&runs[0]));
    assert_eq!(first, without_timings(&stdout(&runs[1])));
    assert_eq!(first, without_timings(&stdout(&runs[2])));
    // Only elapsed_ms differs: the rest of the text is byte-identical too.
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.contains("\"elapsed_ms\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(stdout(&runs[0])), strip(stdout(&runs[2])));
}

#[test]
fn check_json_follows_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(
        &[
            "check",
            "olake-bootstrap:master",
            "--faults",
            "none",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["schema"], "walcheck.check/1");
    let rows = report["results"].as_array().unwrap();
    let keys = [
        "system",
        "variant",
        "faults",
        "bounds",
        "property",
        "kind",
        "verdict",
        "expected",
        "states",
        "unique_states",
        "max_depth",
        "elapsed_ms",
        "trace",
        "trace_steps",
    ];
    for row in rows {
        for key in keys {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
    }
    let mismatch = rows
        .iter()
        .find(|r| r["property"] == "no-lsn-mismatch" && r["bounds"]["server"] == "primary")
        .unwrap();
    assert_eq!(mismatch["verdict"], "violated");
    assert_eq!(mismatch["trace_steps"], 5);
    let trace_path = mismatch["trace"].as_str().unwrap();
    assert!(
        trace_path.ends_with("olake-bootstrap__master__none__no-lsn-mismatch.itf.json"),
        "{trace_path}"
    );
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(trace_path).unwrap()).unwrap();
    assert_eq!(trace["#meta"]["walcheck"]["property"], "no-lsn-mismatch");
    assert_eq!(trace["states"].as_array().unwrap().len(), 6);
    assert_eq!(trace["states"][5]["mbt::actionTaken"], "Validate");
    // A standby entry has a non-default bound: its file name carries their hash.
    let standby = rows
        .iter()
        .find(|r| r["bounds"]["server"] == "standby" && r["property"] == "state-matches-slot")
        .unwrap();
    assert_eq!(standby["verdict"], "holds");
    assert_eq!(standby["trace"], Value::Null);
}

#[test]
fn check_text_shows_the_interleaving_and_olakes_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(
        &[
            "check",
            "olake-bootstrap:master",
            "--faults",
            "none",
            "--bound",
            "server=primary",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("Append{pages: 3, commit: sync}"), "{text}");
    assert!(text.contains("lsn mismatch, please proceed with clear destination. lsn saved in state [0/1002000] current lsn [0/1000000]"), "{text}");
    assert!(
        text.contains("6 checks: 6 as expected, 0 differ, 0 inconclusive"),
        "{text}"
    );
}

#[test]
fn strict_fails_on_expected_violations() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        walcheck(&["check", "olake-bootstrap:master", "--strict"], dir.path())
            .status
            .code(),
        Some(1)
    );
    let fixed = walcheck(
        &[
            "check",
            "olake-bootstrap:pr1084",
            "--faults",
            "connector-crash",
            "--strict",
        ],
        dir.path(),
    );
    assert_eq!(fixed.status.code(), Some(0));
}

#[test]
fn a_verdict_that_differs_is_exit_1() {
    // With no statements the write pointer never runs ahead: master's expected violation is gone.
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(
        &[
            "check",
            "olake-bootstrap:master",
            "--faults",
            "none",
            "--bound",
            "statements=0",
            "--bound",
            "server=primary",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("DIFFERS: expected violated"));
}

#[test]
fn exhausted_budget_is_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(
        &[
            "check",
            "olake-bootstrap:pr1084",
            "--max-states",
            "10",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(3));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(report["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["verdict"] == "inconclusive"));
}

#[test]
fn list_json_follows_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(&["list", "--json"], dir.path());
    assert_eq!(output.status.code(), Some(0));
    let list: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(list["schema"], "walcheck.list/1");
    let olake = &list["systems"][0];
    assert_eq!(olake["name"], "olake-bootstrap");
    assert_eq!(
        olake["variants"],
        serde_json::json!(["master", "pr854", "pr1084"])
    );
    let statements = olake["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "statements")
        .unwrap();
    assert_eq!(
        (
            statements["default"].as_u64(),
            statements["min"].as_u64(),
            statements["max"].as_u64()
        ),
        (Some(2), Some(0), Some(8))
    );
    let witness = olake["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "reach-connector-crash")
        .unwrap();
    assert_eq!(witness["kind"], "sometimes");
    assert_eq!(witness["needs"], "fault:connector-crash");
}
