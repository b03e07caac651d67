//! Connector files (`connectors/*.wal`) checked as the command line checks them: the folder as
//! the regression suite (every verdict as its `expect` lines say), the textbook design's exact
//! counterexample, and the OLake bootstrap files against the hand-written `olake-bootstrap`
//! system at the bounds each file's mapping names: two independent models of the same code,
//! the same verdicts, counterexamples of the lengths the mappings explain.

use std::process::{Command, Output};

use serde_json::Value;

fn walcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_walcheck"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("walcheck runs")
}

/// `check --json` of `args`: `(property, verdict, trace_steps)` of each row, and the report.
fn verdicts(args: &[&str]) -> (Vec<(String, String, Option<u64>)>, Value) {
    let mut all = vec!["check", "--json"];
    all.extend(args);
    let output = walcheck(&all);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("check {args:?} printed no JSON ({e}): {stderr}"));
    let rows = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["property"].as_str().unwrap().to_owned(),
                r["verdict"].as_str().unwrap().to_owned(),
                r["trace_steps"].as_u64(),
            )
        })
        .collect();
    (rows, report)
}

fn row<'a>(
    rows: &'a [(String, String, Option<u64>)],
    id: &str,
) -> &'a (String, String, Option<u64>) {
    rows.iter()
        .find(|r| r.0 == id)
        .unwrap_or_else(|| panic!("no row for {id}: {rows:?}"))
}

#[test]
fn the_connectors_folder_is_a_passing_regression_suite() {
    let output = walcheck(&["check", "connectors/"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("all as expected"), "{stdout}");
}

#[test]
fn acknowledging_on_receipt_loses_the_transaction_a_crash_interrupts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (rows, _) = verdicts(&["connectors/textbook-ack-on-receipt.wal", "--out", out]);
    assert_eq!(row(&rows, "ack-within-durable").1, "violated");
    assert_eq!(row(&rows, "no-data-loss").1, "violated");
    let trace = dir
        .path()
        .join("textbook-ack-on-receipt__design__all__no-data-loss.itf.json");
    let trace: Value = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    let actions: Vec<&str> = trace["states"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["mbt::actionTaken"].as_str())
        .skip(1)
        .collect();
    assert_eq!(
        actions,
        [
            "11: start_replication(0/0)",
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "12: for each message m",
            "13: standby_status_update(flush = m.txn.end_lsn)",
            "ConnectorCrash",
            "11: start_replication(0/0)",
        ]
    );
    let (rows, _) = verdicts(&["connectors/textbook-ack-after-commit.wal"]);
    assert!(rows.iter().all(|r| r.1 == "holds"), "{rows:?}");
}

/// The OLake bootstrap files and `olake-bootstrap` at the bounds of each file's mapping (its
/// `statements` are transactions, its `crashes` counts both kinds): the same verdict for each
/// mapped property, counterexamples of the same length where the steps have the same
/// atomicity, and two steps shorter where a later run validates (there `NextSync` is a step and
/// the slot read a step of its own; here the next run starts at once and `validate` reads and
/// compares in one step).
#[test]
fn the_olake_bootstrap_files_agree_with_the_hand_written_system() {
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a str,
        &'a str,
        &'a [(&'a str, i64)],
    );
    let cases: [Case; 4] = [
        (
            "master",
            &[],
            "olake-bootstrap:master",
            "all",
            &[("state-matches-slot", 0), ("no-lsn-mismatch", 0)],
        ),
        (
            "pr854",
            &[],
            "olake-bootstrap:pr854",
            "all",
            &[("state-matches-slot", 0), ("no-lsn-mismatch", 0)],
        ),
        (
            "pr1084",
            &[],
            "olake-bootstrap:pr1084",
            "connector-crash",
            &[("state-matches-slot", 0), ("no-lsn-mismatch", 0)],
        ),
        (
            "pr1084",
            &["--bound", "pg_crashes=1", "--bound", "crashes=1"],
            "olake-bootstrap:pr1084",
            "all",
            &[("state-matches-slot", 0), ("no-lsn-mismatch", -2)],
        ),
    ];
    for (file, bounds, spec, faults, properties) in cases {
        let path = format!("connectors/olake-bootstrap-{file}.wal");
        let mut args = vec![path.as_str()];
        args.extend(bounds);
        let (ours, _) = verdicts(&args);
        let (theirs, _) = verdicts(&[spec, "--faults", faults, "--bound", "server=primary"]);
        for &(id, shorter) in properties {
            let (a, b) = (row(&ours, id), row(&theirs, id));
            assert_eq!(
                a.1, b.1,
                "{file} {bounds:?} {id}: {a:?} against {spec}'s {b:?}"
            );
            let lengths = (a.2.map(|n| n as i64), b.2.map(|n| n as i64 + shorter));
            assert_eq!(
                lengths.0, lengths.1,
                "{file} {bounds:?} {id}: {a:?} against {b:?}"
            );
        }
    }
}

#[test]
fn a_file_with_an_error_is_a_diagnostic_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.wal");
    std::fs::write(
        &bad,
        "walcheck 1\nevery run {\n  x = pg_current_wal_lsn()\n}\n",
    )
    .unwrap();
    let output = walcheck(&["check", bad.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("[E04] Error: undeclared variable `x`"),
        "{stderr}"
    );
    assert!(stderr.contains("bad.wal:3:3"), "{stderr}");
    assert!(output.stdout.is_empty());
}
