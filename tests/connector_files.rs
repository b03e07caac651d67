//! Connector files (`connectors/*.wal`) checked as the command line checks them: the folder as
//! the regression suite (every verdict as its `expect` lines say), the textbook design's exact
//! counterexample, and the OLake bootstrap files against the hand-written `olake-bootstrap`
//! system at the bounds each file's mapping names: two independent models of the same code,
//! the same verdicts, counterexamples of the lengths the mappings explain.

use serde_json::Value;

use crate::util::{walcheck, walcheck_command, ROOT};

/// `check --json` of `args`: `(property, verdict, trace_steps)` of each row, and the report.
pub(crate) fn verdicts(args: &[&str]) -> (Vec<(String, String, Option<u64>)>, Value) {
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

pub(crate) fn row<'a>(
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

/// The zoo: each public bug's buggy design violates what its expect lines say and each fixed
/// design holds (connectors/zoo/README.md).
#[test]
fn the_zoo_of_public_bugs_checks_as_its_files_expect() {
    let output = walcheck(&["check", "connectors/zoo/"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let files = std::fs::read_dir(std::path::Path::new(ROOT).join("connectors/zoo")).unwrap();
    let designs = files
        .filter_map(Result::ok)
        .filter(|f| f.path().extension().is_some_and(|e| e == "wal"))
        .count();
    assert!(designs >= 30, "{designs} designs");
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
            "13: standby_status_update(flush = m.txn.end_lsn) [restart_lsn to 0/1002000]",
            "ConnectorCrash",
        ]
    );
    let (rows, _) = verdicts(&["connectors/textbook-ack-after-commit.wal"]);
    assert!(rows.iter().all(|r| r.1 == "holds"), "{rows:?}");
}

/// One comparison: a file at some bounds against a built-in system at the mapped fault set and
/// bounds, each mapped property as `(ours, theirs, our length, their length)`: the verdicts
/// must agree, the lengths are pinned (`None`: the property holds).
struct Agreement<'a> {
    file: &'a str,
    bounds: &'a [&'a str],
    spec: &'a str,
    faults: &'a str,
    theirs: &'a [&'a str],
    rows: &'a [(&'a str, &'a str, Option<u64>, Option<u64>)],
}

/// The OLake files and the hand-written systems at the bounds of each file's mapping (there
/// `statements`/`txns` are transactions and `crashes` counts both kinds): the same verdict for
/// each mapped property, the lengths each mapping explains — equal where the steps have the
/// same atomicity; after a restart, a bootstrap is two steps shorter here (no `NextSync`, and
/// `validate` reads and compares in one step). A sync that goes on into the next is longer
/// here by a step for the synchronous commit's flush (`CommitFlush`, one step with the commit
/// there) and one for `take` (writing the received transaction, part of `Receive` there), and
/// shorter by one where the hand-written system ends the stream with a step of its own
/// (`EndStream`); both start the next sync with a step of its own (`NextSync`, `next run`),
/// which the file's run took together with its last step until a run's end became a state of
/// its own (then these were a step shorter).
#[test]
fn the_olake_files_agree_with_the_hand_written_systems() {
    const BOOT: &[&str] = &["--bound", "server=primary"];
    const SYNC: &[&str] = &["--bound", "keepalive=off"];
    const NO_CONNECTOR: &[&str] = &["--bound", "connector_crashes=0"];
    const NO_PG: &[&str] = &["--bound", "pg_crashes=0"];
    let boot = |n: u64, m: u64| {
        [
            ("state-matches-slot", "state-matches-slot", Some(n), Some(n)),
            ("no-lsn-mismatch", "no-lsn-mismatch", Some(m), Some(m)),
            ("wal-pointers-ordered", "wal-pointers-ordered", None, None),
        ]
    };
    let sync = |ours: Option<u64>, theirs: Option<u64>| {
        [
            ("no-lsn-mismatch", "no-lsn-mismatch", ours, theirs),
            ("no-ack-timeout", "no-ack-timeout", None, None),
            ("ack-within-durable", "ack-within-destination", None, None),
            ("ack-within-durable", "ack-within-durable", None, None),
        ]
    };
    let (b45, holds) = (
        boot(4, 5),
        [
            ("state-matches-slot", "state-matches-slot", None, None),
            ("no-lsn-mismatch", "no-lsn-mismatch", None, None),
            ("wal-pointers-ordered", "wal-pointers-ordered", None, None),
        ],
    );
    let b1084 = [
        ("state-matches-slot", "state-matches-slot", Some(6), Some(6)),
        ("no-lsn-mismatch", "no-lsn-mismatch", Some(7), Some(9)),
        ("wal-pointers-ordered", "wal-pointers-ordered", None, None),
    ];
    let (s9, s11_10, s11_9, s_holds) = (
        sync(Some(9), Some(9)),
        sync(Some(11), Some(10)),
        sync(Some(11), Some(9)),
        sync(None, None),
    );
    let cases = [
        Agreement {
            file: "olake-bootstrap-master",
            bounds: &[],
            spec: "olake-bootstrap:master",
            faults: "all",
            theirs: BOOT,
            rows: &b45,
        },
        Agreement {
            file: "olake-bootstrap-pr854",
            bounds: &[],
            spec: "olake-bootstrap:pr854",
            faults: "all",
            theirs: BOOT,
            rows: &b45,
        },
        Agreement {
            file: "olake-bootstrap-pr1084",
            bounds: &[],
            spec: "olake-bootstrap:pr1084",
            faults: "connector-crash",
            theirs: BOOT,
            rows: &holds,
        },
        Agreement {
            file: "olake-bootstrap-pr1084",
            bounds: &["--bound", "pg_crashes=1", "--bound", "crashes=1"],
            spec: "olake-bootstrap:pr1084",
            faults: "all",
            theirs: BOOT,
            rows: &b1084,
        },
        Agreement {
            file: "olake-sync-v0.5.0",
            bounds: &[],
            spec: "olake-sync:v0.5.0",
            faults: "all",
            theirs: SYNC,
            rows: &s9,
        },
        Agreement {
            file: "olake-sync-master",
            bounds: &[],
            spec: "olake-sync:master",
            faults: "all",
            theirs: SYNC,
            rows: &s11_10,
        },
        Agreement {
            file: "olake-sync-pr854",
            bounds: &[],
            spec: "olake-sync:pr854",
            faults: "all",
            theirs: SYNC,
            rows: &s9,
        },
        Agreement {
            file: "olake-sync-pr864",
            bounds: &[],
            spec: "olake-sync:pr864",
            faults: "all",
            theirs: SYNC,
            rows: &s9,
        },
        Agreement {
            file: "olake-sync-v0.5.0",
            bounds: NO_PG,
            spec: "olake-sync:v0.5.0",
            faults: "connector-crash",
            theirs: SYNC,
            rows: &s9,
        },
        Agreement {
            file: "olake-sync-master",
            bounds: NO_PG,
            spec: "olake-sync:master",
            faults: "connector-crash",
            theirs: SYNC,
            rows: &s_holds,
        },
        Agreement {
            file: "olake-sync-pr854",
            bounds: NO_PG,
            spec: "olake-sync:pr854",
            faults: "connector-crash",
            theirs: SYNC,
            rows: &s9,
        },
        Agreement {
            file: "olake-sync-pr864",
            bounds: NO_PG,
            spec: "olake-sync:pr864",
            faults: "connector-crash",
            theirs: SYNC,
            rows: &s9,
        },
        Agreement {
            file: "olake-sync-v0.5.0",
            bounds: NO_CONNECTOR,
            spec: "olake-sync:v0.5.0",
            faults: "pg-crash",
            theirs: SYNC,
            rows: &s11_9,
        },
        Agreement {
            file: "olake-sync-master",
            bounds: NO_CONNECTOR,
            spec: "olake-sync:master",
            faults: "pg-crash",
            theirs: SYNC,
            rows: &s11_10,
        },
        Agreement {
            file: "olake-sync-pr854",
            bounds: NO_CONNECTOR,
            spec: "olake-sync:pr854",
            faults: "pg-crash",
            theirs: SYNC,
            rows: &s11_10,
        },
        Agreement {
            file: "olake-sync-pr864",
            bounds: NO_CONNECTOR,
            spec: "olake-sync:pr864",
            faults: "pg-crash",
            theirs: SYNC,
            rows: &s11_9,
        },
    ];
    for case in cases {
        let path = format!("connectors/{}.wal", case.file);
        let mut args = vec![path.as_str()];
        args.extend(case.bounds);
        let (ours, _) = verdicts(&args);
        let mut args = vec![case.spec, "--faults", case.faults];
        args.extend(case.theirs);
        let (theirs, _) = verdicts(&args);
        for &(id, their_id, our_steps, their_steps) in case.rows {
            let (a, b) = (row(&ours, id), row(&theirs, their_id));
            let what = format!(
                "{} {:?} {id} against {} {}",
                case.file, case.bounds, case.spec, case.faults
            );
            assert_eq!(a.1, b.1, "{what}: {a:?} {b:?}");
            assert_eq!((a.2, b.2), (our_steps, their_steps), "{what}: {a:?} {b:?}");
        }
    }
}

/// walcheck's own witnesses: a step no run reaches is a warning on stderr, never a verdict.
#[test]
fn a_step_no_run_reaches_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dead-branch.wal");
    std::fs::write(
        &file,
        "walcheck 1\nenv transactions = 1\nevery run {\n  start_replication(0/0)\n  \
         for each message m {\n    if m.is_keepalive {\n      never: destination.commit()\n    }\n    \
         destination.write(m.txn)\n    destination.commit()\n    \
         standby_status_update(flush = m.txn.end_lsn)\n  }\n}\n",
    )
    .unwrap();
    let output = walcheck(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("dead-branch:design faults=all: step `never` is never reached"),
        "{stderr}"
    );
    assert!(!stderr.contains("no connector crash"), "{stderr}");
}

/// An `either` branch's first step is taken from the `either` line, where the process stands:
/// it is reached when some run takes it, and no warning says otherwise.
#[test]
fn an_either_branch_a_run_takes_is_reached() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("either-branch.wal");
    std::fs::write(
        &file,
        "walcheck 1\nenv transactions = 1\nenv connector_crashes = 0\ntimer t\n\
         every run {\n  start_replication(0/0)\n  for each message m {\n    \
         destination.write(m.txn)\n    arm t\n  }\n}\nprocess flusher {\n  loop {\n    \
         either {\n      fire: wait t\n    } or {\n      idle: wait not t\n    }\n  }\n}\n\
         skip no-data-loss \"a test of the witnesses\"\n",
    )
    .unwrap();
    let output = walcheck(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("never reached"), "{stderr}");
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

#[test]
fn two_files_named_together_print_one_matrix() {
    let output = walcheck(&[
        "check",
        "docs/examples/ack-on-receipt.wal",
        "docs/examples/ack-after-commit.wal",
        "--out",
        "target/tmp-side-by-side",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let matrix: Vec<&str> = stdout.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(matrix.len(), 3, "a header and a row per file: {stdout}");
    assert!(matrix[0].starts_with("design "), "{stdout}");
    fn cells(line: &str) -> Vec<&str> {
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect()
    }
    assert_eq!(
        cells(matrix[1])[..5],
        [
            "ack-on-receipt",
            "all",
            "-",
            "violated (5 steps)",
            "violated (6 steps)"
        ]
    );
    assert_eq!(
        cells(matrix[2])[..5],
        ["ack-after-commit", "all", "-", "holds", "holds"]
    );
}

/// A file written for one test under `target/`, returned as a path relative to the package.
pub(crate) fn scratch_file(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tmp-connector-files");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path.to_string_lossy().into_owned()
}

#[test]
fn retry_zero_times_never_runs_its_body() {
    let file = scratch_file(
        "retry-zero.wal",
        "walcheck 1\n\nevery run {\n  retry 0 times {\n    body: fail fatal \"the body ran\"\n  } until true\n}\n\nexpect eventually-acknowledged holds\n",
    );
    let (rows, _) = verdicts(&[&file, "--out", "target/tmp-connector-files/out"]);
    assert_eq!(row(&rows, "no-fatal-error").1, "holds", "{rows:?}");
}

#[test]
fn a_byte_order_mark_before_the_version_line_is_not_text() {
    let file = scratch_file(
        "bom.wal",
        "\u{feff}walcheck 1\n\nevery run {\n  start_replication(0/0)\n}\n",
    );
    let (rows, _) = verdicts(&[&file, "--out", "target/tmp-connector-files/out"]);
    assert_eq!(row(&rows, "no-fatal-error").1, "holds", "{rows:?}");
}

/// A trace names its connector file as the command line named it, never by where the project
/// lies on the machine: a project checked at its root, moved (or cloned elsewhere), still shows
/// and replays its traces from any folder, the file found from the trace's own folder.
#[test]
fn a_moved_project_still_shows_and_replays_its_traces() {
    let scratch = tempfile::tempdir().expect("scratch folder");
    let first = scratch.path().join("first");
    std::fs::create_dir_all(first.join("connectors")).unwrap();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/ack-on-receipt.wal"),
    )
    .unwrap();
    std::fs::write(first.join("connectors/ack-on-receipt.wal"), text).unwrap();
    let run = |dir: &std::path::Path, args: &[&str]| {
        walcheck_command(args)
            .current_dir(dir)
            .output()
            .expect("walcheck runs")
    };
    let checked = run(
        &first,
        &[
            "check",
            "connectors/ack-on-receipt.wal",
            "--out",
            "traces/out",
        ],
    );
    // The design has no `expect` lines, so its violations are unexpected: exit 1.
    assert_eq!(checked.status.code(), Some(1), "{checked:?}");
    let trace = "traces/out/ack-on-receipt__design__all__no-data-loss.itf.json";
    let header = std::fs::read_to_string(first.join(trace)).unwrap();
    assert!(
        header.contains("\"walcheck:source\": \"connectors/ack-on-receipt.wal#fnv1a64:"),
        "{header}"
    );
    let moved = scratch.path().join("moved");
    std::fs::rename(&first, &moved).unwrap();
    for command in ["show", "replay"] {
        let out = run(scratch.path(), &[command, &format!("moved/{trace}")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        assert!(stderr.is_empty(), "{command}: {stderr}");
    }
    std::fs::remove_file(moved.join("connectors/ack-on-receipt.wal")).unwrap();
    let out = run(scratch.path(), &["show", &format!("moved/{trace}")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("put the file there"), "{stderr}");
}

/// A PostgreSQL ERROR that ends a run shows in the counterexample, at the step that met it:
/// a connector creating its slot on every run meets "already exists" after its first crash.
#[test]
fn an_error_that_ends_a_run_shows_in_the_step_table() {
    let file = scratch_file(
        "create-every-run.wal",
        "walcheck 1\n\nenv transactions = 1\nenv connector_crashes = 1\n\nevery run {\n  pg_create_logical_replication_slot()\n  start_replication(0/0)\n  for each message m {\n    destination.write(m.txn)\n    destination.commit()\n    standby_status_update(flush = m.txn.end_lsn)\n  }\n}\n",
    );
    let output = walcheck(&["check", &file, "--out", "target/tmp-connector-files/out"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let row = stdout
        .lines()
        .find(|l| l.contains("ERROR: replication slot already exists*"))
        .unwrap_or_else(|| panic!("no step met the ERROR: {stdout}"));
    assert!(
        row.contains("pg_create_logical_replication_slot()"),
        "{row}"
    );
}

/// The files whose lasso ended in a state an earlier one looked like (they differed only in
/// the keepalives sent, which no trace column showed): the check panicked on its own trace. Each
/// now gives a verdict for every property, `eventually-acknowledged` violated (none of them
/// acknowledges every transaction), by a lasso that replays as a fair cycle.
#[test]
fn a_lasso_through_states_alike_but_for_keepalives_is_a_verdict() {
    let files = std::fs::read_dir(std::path::Path::new(ROOT).join("lang/tests/defects")).unwrap();
    let mut names: Vec<String> = files
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("lasso-panic-") || n.starts_with('g'))
        .collect();
    names.sort();
    assert_eq!(names.len(), 19, "{names:?}");
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        let path = format!("lang/tests/defects/{name}");
        let mut args = vec![path.as_str(), "--out", dir.path().to_str().unwrap()];
        if name == "lasso-panic-readable.wal" {
            args.extend(["--bound", "keepalives=2"]);
        }
        let (rows, report) = verdicts(&args);
        for result in report["results"].as_array().unwrap() {
            assert!(result["error"].is_null(), "{name}: {result}");
        }
        assert!(
            rows.iter().all(|r| r.1 != "inconclusive"),
            "{name}: {rows:?}"
        );
        assert_eq!(
            row(&rows, "eventually-acknowledged").1,
            "violated",
            "{name}"
        );
        let lasso = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["property"] == "eventually-acknowledged")
            .and_then(|r| r["trace"].as_str())
            .unwrap_or_else(|| panic!("{name}: no lasso written"))
            .to_owned();
        let replay = walcheck(&["replay", &lasso]);
        let said = String::from_utf8_lossy(&replay.stdout);
        assert_eq!(replay.status.code(), Some(0), "{name}: {said}");
    }
}

/// A file past the property limit: a located error, exit 2 (an internal error blaming
/// `eventually-acknowledged` before).
#[test]
fn a_file_past_the_property_limit_is_a_located_error() {
    let output = walcheck(&["check", "lang/tests/defects/properties-60-own.wal"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("[E14] Error: more than 64 properties"),
        "{stderr}"
    );
    assert!(stderr.contains("properties-60-own.wal:73:8"), "{stderr}");
}

/// PostgreSQL's choice in a second advance when the first left `restart_lsn` behind
/// `confirmed_flush`: decoding meets a running-xacts record at or below the old
/// `confirmed_flush` and saves the slot with it (`Slot::slot_advance`; live rule
/// `advance_saves_old_confirmed_flush`). Pinned step by step: before that rule was modelled the
/// saved copy could only be the first advance's start or the second's end, and this property held.
#[test]
fn a_second_advance_can_save_the_slot_with_the_old_confirmed_flush() {
    let file = scratch_file(
        "advance-saves-old.wal",
        "walcheck 1\nconnector \"two advances\"\nenv transactions = 2\nenv pg_crashes = 0\n\
         env connector_crashes = 0\nenv runs = 1\nvolatile x: lsn = none\n\
         volatile end1: lsn = none\nevery run {\n  w1: x = pg_current_wal_lsn()\n  \
         a1: end1 = pg_replication_slot_advance(x).end_lsn\n  w2: x = pg_current_wal_lsn()\n  \
         a2: pg_replication_slot_advance(x)\n}\nalways never-saved-at-the-old: not (end1 != none \
         and end1 > 0/1000000 and slot.confirmed_flush > end1 and slot.saved_confirmed_flush == \
         end1 and slot.restart_lsn == end1)\n",
    );
    let out = "target/tmp-connector-files/out-advance-saves-old";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "never-saved-at-the-old");
    assert_eq!((verdict.as_str(), *steps), ("violated", Some(8)));
    let output = walcheck(&["check", &file, "--out", out]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("never-saved-at-the-old violated"))
        .skip_while(|l| !l.starts_with("#  action"))
        .take(10)
        .collect();
    let actions: Vec<String> = table[1..]
        .iter()
        .map(|l| {
            l.split("  ")
                .filter(|c| !c.is_empty())
                .nth(1)
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .collect();
    assert_eq!(
        actions,
        [
            "(initial state)",
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "w1",
            "a1",
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "w2",
            "a2 [restart_lsn moves, saved at the old confirmed_flush]",
        ],
        "{stdout}"
    );
}

/// A clean stop (`env pg_stops`) waits until the connector confirms what the walsender sent,
/// then the shutdown checkpoint saves the slot: if dirty on 15 and 16, and from 17 also if its
/// `confirmed_flush` moved (`DurableSlot::clean_restart_on`; live rules
/// `shutdown_keepalive_requests_reply` and `status_update_not_saved`). Shown on
/// docs/examples/clean-stop-early.wal with a witness: the confirmation past the open batch on
/// disk while the saved `restart_lsn` has not moved, which only 17's shutdown save gives (a
/// status update reaches disk by itself only when it moves `restart_lsn`). The file's
/// `no-data-loss` is violated on every version, in 9 steps: that shortest loss needs no stop (the
/// confirmation moves `restart_lsn`, so it is saved at once, and a connector crash loses the
/// batch); before losses behind the slot for good were reported at once, it was 11 steps on 17,
/// through the stop.
#[test]
fn a_clean_stop_saves_a_moved_confirmation_from_17_on() {
    let file = scratch_file(
        "clean-stop-early-witness.wal",
        &format!(
            "{}sometimes saved-by-stop: slot.saved_confirmed_flush == 0/1002000 and \
             slot.saved_restart_lsn == 0/1000000\n",
            include_str!("../docs/examples/clean-stop-early.wal")
        ),
    );
    for (version, saved_by_stop) in [("15", false), ("16", false), ("17", true), ("18", true)] {
        let bound = format!("pg_version={version}");
        let (rows, _) = verdicts(&[&file, "--bound", &bound]);
        let (_, verdict, steps) = row(&rows, "no-data-loss");
        assert_eq!(
            (verdict.as_str(), *steps),
            ("violated", Some(9)),
            "{version}: {rows:?}"
        );
        let reached = if saved_by_stop { "holds" } else { "violated" };
        assert_eq!(
            row(&rows, "saved-by-stop").1,
            reached,
            "{version}: {rows:?}"
        );
    }
}

/// A stopping walsender asks once and waits: only a connector that has read its request and not
/// answered is timed out (`walsender.c:WalSndCheckTimeOut` measures from the client's last
/// reply). A connector that answers each request with less than the walsender sent holds the
/// stop for ever, and what it batched stays unacknowledged: before requests were one at a time,
/// the timeout pre-empted it and `eventually-acknowledged` held.
#[test]
fn a_connector_answering_each_stop_request_short_holds_the_stop() {
    let file = scratch_file(
        "stop-low-reply.wal",
        "walcheck 1\nconnector \"answers a reply request with its durable position only\"\n\
         env transactions = 2\nenv pg_stops = 1\nenv keepalives = 1\nenv runs = unbounded\n\
         durable pos: lsn = none, in destination\nvolatile pending: lsn = none\n\
         every run {\n  start_replication(pos)\n  \
         for each message m {\n    if m.is_keepalive {\n      if m.reply_requested {\n        \
         standby_status_update(flush = pos)\n      } else {\n        \
         destination.commit(pos = max(pos, pending))\n        \
         standby_status_update(flush = m.wal_end)\n      }\n    } else {\n      \
         destination.write(m.txn)\n      pending = m.txn.end_lsn\n    }\n  }\n}\n",
    );
    let (rows, _) = verdicts(&[&file, "--out", "target/tmp-connector-files/out-stop-low"]);
    assert_eq!(
        row(&rows, "eventually-acknowledged").1,
        "violated",
        "{rows:?}"
    );
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
}

/// `env slot = exists` starts a file that creates its slot with one already there: it can drop
/// that slot and create a new incarnation, at a new consistent point. What was committed while
/// no slot existed is the backfill's; a design without one loses it, and `no-data-loss` says so
/// at once, whatever keepalives keep the reader busy (pinned step by step: before, with
/// `keepalives = 1` and `runs = unbounded` it held, the reader never quiescent).
#[test]
fn a_file_can_drop_the_slot_it_starts_with_and_create_it_again() {
    let file = scratch_file(
        "recreate.wal",
        "walcheck 1\nconnector \"drop the slot and create it again\"\nenv transactions = 2\n\
         env slot = exists\nenv runs = 3\ndurable pos: lsn = none, in destination\n\
         first run {\n  pg_drop_replication_slot()\n  pg_create_logical_replication_slot()\n}\n\
         every run {\n  start_replication(pos)\n  for each message m {\n    \
         destination.write(m.txn)\n    destination.commit(pos = m.txn.end_lsn)\n    \
         standby_status_update(flush = pos)\n  }\n}\n",
    );
    let out = "target/tmp-connector-files/out-recreate";
    for bounds in [
        &[][..],
        &["--bound", "runs=unbounded", "--bound", "keepalives=1"],
    ] {
        let mut args = vec![file.as_str(), "--out", out];
        args.extend(bounds);
        let (rows, _) = verdicts(&args);
        assert_eq!(row(&rows, "no-data-loss").2, Some(3), "{bounds:?} {rows:?}");
    }
    let path = std::path::Path::new(ROOT)
        .join(out)
        .join("recreate__design__all__no-data-loss.itf.json");
    let trace: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let states = trace["states"].as_array().unwrap();
    let actions: Vec<&str> = states
        .iter()
        .skip(1)
        .map(|s| s["mbt::actionTaken"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "8: pg_drop_replication_slot()",
            "Commit{pages=1, commit=sync}",
            "9: pg_create_logical_replication_slot()",
        ]
    );
    // The first incarnation at rest at the start, the second past the transaction.
    assert_eq!(states[0]["confirmed_flush"], "0/1000000");
    assert_eq!(states[1]["confirmed_flush"], "none");
    assert_eq!(states[3]["confirmed_flush"], "0/1002038");
    // Without `env slot = exists` there is no slot at the start, and the drop fails the run.
    verdicts(&[&file, "--bound", "slot=auto", "--out", out]);
    let path = std::path::Path::new(ROOT)
        .join(out)
        .join("recreate__design__all__no-data-loss__slot=auto.itf.json");
    let trace: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let states = trace["states"].as_array().unwrap();
    assert_eq!(states[0]["confirmed_flush"], "none");
    assert_eq!(states[1]["error"], "ERROR: replication slot does not exist");
}

/// The actions of the counterexample `trace` (an ITF file), its initial state left out.
fn trace_actions(trace: &str) -> Vec<String> {
    let text = std::fs::read(trace).unwrap_or_else(|e| panic!("{trace}: {e}"));
    let trace: Value = serde_json::from_slice(&text).unwrap();
    trace["states"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["mbt::actionTaken"].as_str())
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// A file that advances its slot while, on PostgreSQL 15.12, a checkpoint runs in two steps.
const CHECKPOINT_RACE: &str = "walcheck 1\nconnector \"an advance while a checkpoint runs\"\n\
    env pg_version = 15.12\nenv transactions = 1\nenv pg_crashes = 1\nenv connector_crashes = 0\n\
    env runs = 1\nvolatile x: lsn = none\nevery run {\n  w: x = pg_current_wal_lsn()\n  \
    a: pg_replication_slot_advance(x)\n}\n\
    expect no-needed-wal-removed violated \"the checkpoint ends between the move and the save\"\n\
    skip ack-within-durable \"the file streams nothing\"\nskip no-data-loss \"as above\"\n\
    skip eventually-acknowledged \"as above\"\nskip wal-retention-bounded \"as above\"\n";

/// Before 15.14 a checkpoint saves the slots, then removes WAL by their minimum as it is at its
/// end: an advance that moved `restart_lsn` in between, with PostgreSQL crashing before the
/// advance saved the slot, leaves the saved copy below the removed WAL. On 15.18 the checkpoint
/// is one step (the minimum from its start): it holds.
#[test]
fn a_restart_lsn_move_during_a_checkpoint_before_15_14_needs_removed_wal() {
    let file = scratch_file("checkpoint-race.wal", CHECKPOINT_RACE);
    let out = "target/tmp-connector-files/out-checkpoint-race";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "no-needed-wal-removed");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(5)),
        "{rows:?}"
    );
    let trace = format!("{out}/checkpoint-race__design__all__no-needed-wal-removed.itf.json");
    assert_eq!(
        trace_actions(&trace),
        [
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "w",
            "CheckpointStart",
            "a [restart_lsn moves, the checkpoint ends, PostgreSQL crashes before the save]",
        ]
    );
    let state: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let last = state["states"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["removed_before"], "0/1002000", "{last}");
    assert_eq!(last["saved_restart_lsn"], "0/1000000", "{last}");
    for fixed in ["15.14", "15.18", "16.10", "17.6"] {
        let bound = format!("pg_version={fixed}");
        let (rows, _) = verdicts(&[&file, "--out", out, "--bound", &bound]);
        assert_eq!(row(&rows, "no-needed-wal-removed").1, "holds", "{fixed}");
    }
    // With no immediate stop left, an operating-system crash meets the window the same way.
    let (rows, _) = verdicts(&[
        &file,
        "--out",
        out,
        "--bound",
        "pg_crashes=0",
        "--bound",
        "os_crashes=1",
    ]);
    assert_eq!(row(&rows, "no-needed-wal-removed").1, "violated");
    for before in ["15.13", "16.9", "17.5"] {
        let bound = format!("pg_version={before}");
        let (rows, _) = verdicts(&[&file, "--out", out, "--bound", &bound]);
        assert_eq!(
            row(&rows, "no-needed-wal-removed").1,
            "violated",
            "{before}"
        );
    }
}

/// An asynchronous commit the walwriter wrote but did not flush survives PostgreSQL's immediate
/// stop and is lost by an operating-system crash: the write pointer goes back and T1 is gone.
#[test]
fn an_os_crash_loses_an_async_commit_written_but_not_flushed() {
    let text = "walcheck 1\nconnector \"the write pointer read once\"\nenv commit = async\n\
        env transactions = 1\nenv connector_crashes = 0\nenv pg_crashes = 0\nenv os_crashes = 1\n\
        env runs = 1\ndurable seen: lsn = none\nevery run {\n  s: seen = pg_current_wal_lsn()\n}\nalways write-never-back: wal.write >= seen\n\
        skip ack-within-durable \"the file streams nothing\"\nskip no-data-loss \"as above\"\n\
        skip eventually-acknowledged \"as above\"\nskip wal-retention-bounded \"as above\"\n";
    let file = scratch_file("os-crash.wal", text);
    let out = "target/tmp-connector-files/out-os-crash";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    assert_eq!(row(&rows, "write-never-back").1, "violated", "{rows:?}");
    let trace = format!("{out}/os-crash__design__all__write-never-back.itf.json");
    let actions = trace_actions(&trace);
    assert_eq!(
        actions.last().map(String::as_str),
        Some("OsCrash"),
        "{actions:?}"
    );
    assert!(actions.iter().any(|a| a == "WalWriterWrite"), "{actions:?}");
    let state: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let states = state["states"].as_array().unwrap();
    let (before, after) = (&states[states.len() - 2], &states[states.len() - 1]);
    assert_eq!(before["committed"], "[T1]", "{before}");
    assert_eq!(after["committed"], "[]", "{after}");
    assert_eq!(after["write"], "0/1000000", "{after}");
    assert_eq!(after["os_crashes"], 1, "{after}");
    // PostgreSQL's immediate stop keeps the written WAL: the property holds.
    let bounds = ["--bound", "os_crashes=0", "--bound", "pg_crashes=1"];
    let (rows, _) = verdicts(&[&[file.as_str(), "--out", out][..], &bounds[..]].concat());
    assert_eq!(row(&rows, "write-never-back").1, "holds", "{rows:?}");
}

/// `no-needed-wal-removed` holds in every file of `connectors/`: named in an `expect` line, it
/// is checked with the horizon kept.
#[test]
fn no_needed_wal_removed_holds_in_every_connector_file() {
    let mut files: Vec<_> = std::fs::read_dir(std::path::Path::new(ROOT).join("connectors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .collect();
    files.sort();
    assert!(files.len() >= 14, "{files:?}");
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = format!("{text}\nexpect no-needed-wal-removed holds\n");
        let file = scratch_file(&format!("horizon-{name}"), &text);
        let out = "target/tmp-connector-files/out-horizon";
        let (rows, _) = verdicts(&[&file, "--out", out]);
        let checked: Vec<_> = rows
            .iter()
            .filter(|r| r.0 == "no-needed-wal-removed")
            .collect();
        assert!(!checked.is_empty(), "{name}: {rows:?}");
        assert!(
            checked.iter().all(|r| r.1 == "holds"),
            "{name}: {checked:?}"
        );
    }
}

/// `env max_slot_wal_keep_pages`: a checkpoint invalidates a slot that retains more WAL
/// (`slot.c:InvalidatePossiblyObsoleteSlot`, 15): `restart_lsn` `none`, saved so, every later
/// START_REPLICATION an ERROR, and what the destination lacks is lost at once. Pinned step by
/// step; without the knob the same file holds `no-data-loss`.
#[test]
fn a_checkpoint_invalidates_a_slot_past_max_slot_wal_keep_size() {
    let file = "docs/examples/slot-invalidated.wal";
    let out = "target/tmp-connector-files/out-invalidated";
    let (rows, _) = verdicts(&[file, "--out", out]);
    assert_eq!(row(&rows, "no-data-loss").2, Some(4), "{rows:?}");
    let trace = format!("{out}/slot-invalidated__design__all__no-data-loss.itf.json");
    assert_eq!(
        trace_actions(&trace),
        [
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "Commit{pages=1, commit=sync}",
            "Checkpoint",
        ]
    );
    let trace: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let last = trace["states"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["restart_lsn"], "none", "{last}");
    assert_eq!(last["saved_restart_lsn"], "none", "{last}");
    let lasso = format!("{out}/slot-invalidated__design__all__eventually-acknowledged.itf.json");
    let lasso: Value = serde_json::from_slice(&std::fs::read(lasso).unwrap()).unwrap();
    assert!(lasso["states"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["error"]
            .as_str()
            .unwrap()
            .starts_with("ERROR: cannot read from logical replication slot")));
    let (rows, _) = verdicts(&[file, "--bound", "max_slot_wal_keep_pages=0", "--out", out]);
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
}

/// A release is `MAJOR.MINOR` with its major in range and no leading zero in its minor (`17.05`
/// would name `17.5` apart in trace names): anything else is one line and exit 2, naming both
/// forms.
#[test]
fn a_bad_release_is_one_line_and_exit_2() {
    for bad in ["abc", "17.05", "14.12", "15.", "15.1.2", "15.123"] {
        let bound = format!("pg_version={bad}");
        let output = walcheck(&["check", "docs/examples/clean-stop.wal", "--bound", &bound]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad}: {stderr}");
        assert!(
            stderr.contains("a major version from 15 to 18 or a release MAJOR.MINOR"),
            "{bad}: {stderr}"
        );
    }
}

/// PostgreSQL 15 copies no logical slot to a standby: after a failover the connector of
/// docs/examples/failover.wal finds no slot, creates one and backfills, then resumes from the
/// position its destination recorded on the lost primary's timeline — past the commit record of
/// the promoted server's first transaction, which START_REPLICATION skips. Pinned step by step;
/// the promoted server's `pg_last_wal_replay_lsn()` is the fork, frozen.
#[test]
fn a_failover_without_failover_slots_resumes_past_the_new_timeline() {
    let out = "target/tmp-connector-files/out-failover";
    let (rows, _) = verdicts(&["docs/examples/failover.wal", "--out", out]);
    let (_, verdict, steps) = row(&rows, "no-data-loss");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(17)),
        "{rows:?}"
    );
    let trace = format!("{out}/failover__design__all__no-data-loss.itf.json");
    assert_eq!(
        trace_actions(&trace),
        [
            "25: cf = pg_replication_slots().confirmed_flush_lsn",
            "34: start_replication(pos)",
            "Commit{pages=4, commit=sync}",
            "CommitFlush",
            "35: for each message m",
            "39: destination.write(m.txn)",
            "40: destination.commit(pos = m.txn.end_lsn)",
            "ConnectorCrash",
            "Failover",
            "25: cf = pg_replication_slots().confirmed_flush_lsn",
            "27: destination.commit(resync = true)",
            "28: pg_create_logical_replication_slot()",
            "31: backfill()",
            "32: destination.commit(resync = false)",
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "34: start_replication(pos)",
        ]
    );
    let text = std::fs::read(&trace).unwrap();
    let states: Value = serde_json::from_slice(&text).unwrap();
    let states = states["states"].as_array().unwrap();
    // The failover: the standby had received nothing past 0/1000000, so the WAL ends there,
    // T1 of the lost timeline is gone (from the destination too), and so is the slot.
    let promoted = &states[9];
    assert_eq!(promoted["flush"], "0/1000000", "{promoted}");
    assert_eq!(promoted["replay"], "0/1000000", "{promoted}");
    assert_eq!(promoted["confirmed_flush"], "none", "{promoted}");
    assert_eq!(promoted["committed"], "[]", "{promoted}");
    assert_eq!(promoted["pos"], "0/1008000", "{promoted}");
    // The new timeline's transaction, T2, commits below the recorded position; T1 stays,
    // lost, under its own name (the destination still holds it).
    let last = states.last().unwrap();
    assert_eq!(
        last["transactions"], "T1 sync 0/1000000-0/1008000 lost, T2 sync 0/1000038-0/1002038",
        "{last}"
    );
    assert_eq!(last["committed"], "[T2]", "{last}");
    assert_eq!(last["replay"], "0/1000000", "{last}");
}

/// With PostgreSQL 17's failover slots the same connector holds: the walsender sends nothing the
/// standby lacks (so the recorded position is never past the promoted server's WAL) and the
/// promoted server has the synced copy. Turning the knob off, on the same release, loses data
/// again: the knob is what makes it hold.
#[test]
fn failover_slots_keep_the_position_on_the_promoted_timeline() {
    let out = "target/tmp-connector-files/out-failover-slots";
    let file = "docs/examples/failover-slots.wal";
    let (rows, _) = verdicts(&[file, "--out", out]);
    for (_, verdict, _) in &rows {
        assert_eq!(verdict, "holds", "{rows:?}");
    }
    let (rows, _) = verdicts(&[file, "--out", out, "--bound", "failover_slots=off"]);
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
}

/// The failover knobs' needs are located errors: a failover is the primary's, and failover
/// slots need PostgreSQL 17.
#[test]
fn failover_knobs_a_server_cannot_have_are_located_errors() {
    for (name, env, message) in [
        (
            "failover-standby.wal",
            "env server = standby\nenv pg_version = 16\nenv failovers = 1\n",
            "`failovers` needs `server = primary`",
        ),
        (
            "failover-slots-16.wal",
            "env pg_version = 16\nenv failovers = 1\nenv failover_slots = on\n",
            "failover slots need PostgreSQL 17 or later",
        ),
    ] {
        let text = format!(
            "walcheck 1\n{env}\nevery run {{\n  start_replication(0/0)\n  for each message m {{\n    \
             destination.write(m.txn)\n    destination.commit()\n  }}\n}}\n"
        );
        let file = scratch_file(name, &text);
        let output = walcheck(&["check", &file]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        assert!(stderr.contains(&format!("{name}:")), "{name}: {stderr}");
    }
    // The same combinations by `--bound`, and failover bounds on a file that names neither
    // knob, are one-line errors too, never a silent no-op.
    for (file, bounds, message) in [
        (
            "docs/examples/failover-slots.wal",
            &["--bound", "pg_version=16"][..],
            "failover_slots=on needs pg_version 17 or later",
        ),
        (
            "docs/examples/failover.wal",
            &["--bound", "server=standby", "--bound", "pg_version=16"][..],
            "need server=primary",
        ),
        (
            "docs/examples/clean-stop.wal",
            &["--bound", "failovers=1"][..],
            "need the file to name one of them in an env line",
        ),
    ] {
        let mut args = vec!["check", file];
        args.extend(bounds);
        let output = walcheck(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// A message the connector holds across a failover names the transaction the failover lost,
/// not the promoted server's next one, which reuses its LSNs (before, the lost transactions
/// left the list and the next commit took the held index: this property held).
#[test]
fn a_message_held_across_a_failover_keeps_naming_the_lost_transaction() {
    let text = "walcheck 1\nconnector \"a message held across a failover\"\nenv transactions = 2\n\
        env failovers = 1\nenv connector_crashes = 0\nenv runs = 1\nevery run {\n  \
        start_replication(0/0)\n  for each message m {\n    w: destination.write(m.txn)\n    \
        c: destination.commit()\n  }\n}\n\
        always held-on-timeline: m.txn == none or m.txn.end_lsn <= wal.insert\n";
    let file = scratch_file("held-across-failover.wal", text);
    let out = "target/tmp-connector-files/out-held-across-failover";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "held-on-timeline");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(5)),
        "{rows:?}"
    );
    let trace = format!("{out}/held-across-failover__design__all__held-on-timeline.itf.json");
    assert_eq!(
        trace_actions(&trace),
        [
            "8: start_replication(0/0)",
            "Commit{pages=1, commit=sync}",
            "CommitFlush",
            "9: for each message m",
            "Failover",
        ]
    );
    let text = std::fs::read(&trace).unwrap();
    let states: Value = serde_json::from_slice(&text).unwrap();
    let last = states["states"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["m"], "T1", "{last}");
    assert_eq!(last["committed"], "[]", "{last}");
    assert_eq!(
        last["transactions"], "T1 sync 0/1000000-0/1002000 lost",
        "{last}"
    );
}

/// A connector waiting for its next message, with the walsender caught up and nothing of its
/// own left to deliver, is at rest even though one more idle keepalive can always be read: a
/// transaction committed before the slot, never backfilled, is lost. Before, with
/// `keepalives = 1` no state was ever at rest and `no-data-loss` held.
#[test]
fn a_reader_idle_on_keepalives_is_at_rest_for_no_data_loss() {
    let text = "walcheck 1\nconnector \"a backfill that is never taken\"\nenv transactions = 1\n\
        env keepalives = 1\nenv runs = unbounded\nenv connector_crashes = 0\n\
        volatile never: bool = false\nfirst run {\n  pg_create_logical_replication_slot()\n  \
        if never {\n    backfill()\n  }\n}\nevery run {\n  start_replication(0/0)\n  \
        for each message m {\n    if m.is_keepalive {\n      \
        standby_status_update(flush = m.wal_end)\n    } else {\n      \
        destination.write(m.txn)\n      destination.commit()\n      \
        standby_status_update(flush = m.txn.end_lsn)\n    }\n  }\n}\n";
    let file = scratch_file("idle-reader.wal", text);
    let out = "target/tmp-connector-files/out-idle-reader";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "no-data-loss");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(3)),
        "{rows:?}"
    );
    let trace = format!("{out}/idle-reader__design__all__no-data-loss.itf.json");
    assert_eq!(
        trace_actions(&trace),
        [
            "Commit{pages=1, commit=sync}",
            "9: pg_create_logical_replication_slot()",
            "15: start_replication(0/0)",
        ]
    );
}

/// A restarted walsender reads from `restart_lsn`, and a keepalive it sends before reading up
/// to `confirmed_flush` carries a `sentPtr` below it (live rule
/// `keepalive_below_confirmed_flush`; OLake #862's keepalive). Before, the model read the
/// transactions the start rule skips before offering any keepalive, so with T1 between
/// `restart_lsn` and `confirmed_flush` no keepalive could fall below: this property held.
#[test]
fn a_restarted_walsender_can_send_a_keepalive_below_confirmed_flush() {
    let text = "walcheck 1\nconnector \"a keepalive before the walsender reads on\"\n\
        env transactions = 1\nenv keepalives = 1\nenv runs = 2\n\
        durable pos: lsn = none, in destination\nevery run {\n  start_replication(pos)\n  \
        for each message m {\n    if m.is_keepalive {\n      \
        standby_status_update(flush = max(pos, m.wal_end))\n    } else {\n      \
        destination.write(m.txn)\n      destination.commit(pos = m.txn.end_lsn)\n      \
        standby_status_update(flush = pos)\n    }\n  }\n}\n\
        always keepalive-not-below-slot: not m.is_keepalive or m.wal_end >= slot.confirmed_flush\n";
    let file = scratch_file("keepalive-before-reading.wal", text);
    let out = "target/tmp-connector-files/out-keepalive-before-reading";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "keepalive-not-below-slot");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(10)),
        "{rows:?}"
    );
    let trace =
        format!("{out}/keepalive-before-reading__design__all__keepalive-not-below-slot.itf.json");
    let actions = trace_actions(&trace);
    assert_eq!(actions[7], "ConnectorCrash", "{actions:?}");
    assert_eq!(
        actions[9],
        "9: for each message m [keepalive before reading on]"
    );
    let text = std::fs::read(&trace).unwrap();
    let states: Value = serde_json::from_slice(&text).unwrap();
    let last = states["states"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["m"], "keepalive 0/1000000", "{last}");
    assert_eq!(last["confirmed_flush"], "0/1002000", "{last}");
    // Every built-in property still holds: the connector confirms the larger of the two.
    for id in [
        "ack-within-durable",
        "no-data-loss",
        "eventually-acknowledged",
    ] {
        assert_eq!(row(&rows, id).1, "holds", "{id}");
    }
}

/// Debezium dbz#1554's mechanism, step by step (docs/examples/changes-lsn-only.wal): pgoutput sends the
/// rows of a multi-insert record under one LSN; a connector that resumes past the last LSN it
/// committed skips the second row, sent again after a crash under the first row's LSN. The
/// destination holds one row of T1, so T1 is not in it: before messages one by one existed a
/// transaction was delivered whole and this loss could not be written.
#[test]
fn a_multi_insert_resumed_by_lsn_alone_loses_its_later_rows() {
    let out = "target/tmp-connector-files/out-changes-lsn-only";
    let (rows, _) = verdicts(&["docs/examples/changes-lsn-only.wal", "--out", out]);
    let (_, verdict, steps) = row(&rows, "no-data-loss");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(15)),
        "{rows:?}"
    );
    let trace = format!("{out}/changes-lsn-only__design__all__no-data-loss.itf.json");
    let text = std::fs::read(&trace).unwrap();
    let states: Value = serde_json::from_slice(&text).unwrap();
    let states = states["states"].as_array().unwrap();
    let messages: Vec<&str> = states
        .windows(2)
        .filter(|w| w[1]["m"] != w[0]["m"])
        .filter_map(|w| w[1]["m"].as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "T1 begin 0/1000000",
            "T1 change 1 0/1000000",
            "none",
            "T1 begin 0/1000000",
            "T1 change 1 0/1000000",
            "T1 change 2 0/1000000",
            "T1 commit 0/1002000",
        ],
        "a crash after row 1, then the whole transaction again from its Begin, and at rest \
         once its Commit is confirmed: the keepalives to come deliver nothing"
    );
    let last = states.last().unwrap();
    assert_eq!(last["destination"], "[T1 row 1]", "{last}");
    assert_eq!(last["confirmed_flush"], "0/1002000", "{last}");
    // One record per row: the second row has an LSN of its own, and nothing is lost.
    let (rows, _) = verdicts(&[
        "docs/examples/changes-lsn-only.wal",
        "--bound",
        "multi_insert=off",
    ]);
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
}

/// A transaction is in the destination only once every row of it is: a connector that writes
/// only each transaction's first change loses the second row, and `no-data-loss` says so; the
/// same connector writing every change holds. Counts the rows each way so that a destination
/// taking a transaction at its first row would fail here.
#[test]
fn a_transaction_is_delivered_only_with_all_its_rows() {
    let design = |condition: &str| {
        format!(
            "walcheck 1\nconnector \"rows\"\nenv messages = changes\nenv rows = 2\n\
             env transactions = 1\nenv keepalives = 1\nenv runs = unbounded\n\
             env connector_crashes = 0\nevery run {{\n  start_replication(0/0)\n  \
             for each message m {{\n    if {condition} {{\n      destination.write(m)\n    }}\n    \
             if m.is_commit {{\n      destination.commit()\n      \
             standby_status_update(flush = m.lsn)\n    }}\n  }}\n}}\n"
        )
    };
    let first_only = scratch_file("first-row-only.wal", &design("m.index == 1"));
    let (rows, _) = verdicts(&[&first_only]);
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
    let every_row = scratch_file("every-row.wal", &design("m.is_change"));
    let (rows, _) = verdicts(&[&every_row]);
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
    // A Commit message carries no row: writing it alone delivers nothing.
    let commit_only = scratch_file("commit-message-only.wal", &design("m.is_commit"));
    let (rows, _) = verdicts(&[&commit_only]);
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
}

/// A stream cut part way through a transaction (a connector crash after a change was confirmed)
/// sends the transaction again from its Begin: its commit record lies past the confirmed change,
/// so the start rule does not skip it, and a connector that commits each row as it comes
/// commits the first row twice — `destination.duplicated` names T1.
#[test]
fn a_transaction_cut_part_way_comes_again_from_its_begin() {
    let text = "walcheck 1\nconnector \"each row committed and confirmed as it comes\"\n\
        env messages = changes\nenv rows = 2\nenv transactions = 1\nenv keepalives = 1\n\
        env runs = unbounded\nevery run {\n  start_replication(0/0)\n  \
        for each message m {\n    if m.is_change {\n      destination.write(m)\n      \
        destination.commit()\n      standby_status_update(flush = m.lsn)\n    }\n  }\n}\n\
        always no-row-twice: destination.duplicated == none\n";
    let file = scratch_file("row-twice.wal", text);
    let out = "target/tmp-connector-files/out-row-twice";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, _) = row(&rows, "no-row-twice");
    assert_eq!(verdict, "violated", "{rows:?}");
    let trace = format!("{out}/row-twice__design__all__no-row-twice.itf.json");
    let actions = trace_actions(&trace);
    let crash = actions.iter().position(|a| a == "ConnectorCrash");
    assert!(crash.is_some(), "{actions:?}");
    let text = std::fs::read(&trace).unwrap();
    let states: Value = serde_json::from_slice(&text).unwrap();
    let last = states["states"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["m"], "T1 change 1 0/1000000", "{last}");
}

/// A keepalive can carry an LSN inside a transaction the connector has not received: the
/// walsender moves `sentPtr` after each change record it reads, before the commit record whose
/// decoding sends the transaction. A connector that records a keepalive's position as done and
/// resumes past it skips that transaction's rows. Before, with messages one by one, no
/// keepalive fell inside a transaction and this design was proved.
#[test]
fn a_keepalive_inside_an_unsent_transaction_is_not_done() {
    let text = "walcheck 1\nconnector \"a keepalive's position recorded as done\"\n\
        env messages = changes\nenv rows = 2\nenv transactions = 1\nenv keepalives = 3\n\
        env runs = unbounded\ndurable pos: lsn = none, in destination\nevery run {\n  \
        start_replication(pos)\n  for each message m {\n    \
        if m.is_change and m.lsn >= pos {\n      destination.write(m)\n      \
        destination.commit(pos = m.lsn)\n    }\n    if m.is_keepalive {\n      \
        destination.commit(pos = max(pos, m.lsn))\n      \
        standby_status_update(flush = max(pos, m.lsn))\n    }\n    if m.is_commit {\n      \
        standby_status_update(flush = max(pos, m.lsn))\n    }\n  }\n}\n";
    let file = scratch_file("keepalive-inside.wal", text);
    let out = "target/tmp-connector-files/out-keepalive-inside";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "ack-within-durable");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(11)),
        "{rows:?}"
    );
    let trace = format!("{out}/keepalive-inside__design__all__ack-within-durable.itf.json");
    let actions = trace_actions(&trace);
    assert_eq!(
        actions[4], "11: for each message m [keepalive at 0/1001FD0, inside a transaction]",
        "{actions:?}"
    );
}

/// Two files with a transaction left open (`env interleave = on`) while another commits: one
/// confirms each transaction by a status update, one advances to the write pointer. In every
/// schedule of two one-page transactions `0/1003FD0` is the end of the other transaction's
/// records while the open one still runs (its first change lies below, its commit record at or
/// after), so a running-xacts record there offers the open transaction's first change
/// (`running_xacts_restart`), never `0/1003FD0` itself. Measured before the rule: the status
/// update file moved `restart_lsn` to `0/1003FD0` in 6 steps, the advancing one in 7.
#[test]
fn a_transaction_left_open_holds_restart_lsn_at_its_first_change() {
    let env = "env interleave = on\nenv transactions = 2\nenv pg_crashes = 0\n\
        env connector_crashes = 0\nenv runs = 1\n";
    let held = "always restart-held: slot.restart_lsn != 0/1003FD0\n\
        sometimes restart-moves: slot.restart_lsn == 0/1004000\n";
    let confirming = scratch_file(
        "open-confirming.wal",
        &format!(
            "walcheck 1\nconnector \"confirms each transaction\"\n{env}every run {{\n  \
             start_replication(0/0)\n  for each message m {{\n    if m.is_commit {{\n      \
             standby_status_update(flush = m.lsn)\n    }}\n  }}\n}}\n{held}"
        ),
    );
    let advancing = scratch_file(
        "open-advancing.wal",
        &format!(
            "walcheck 1\nconnector \"advances to the write pointer\"\n{env}volatile x: lsn = none\n\
             every run {{\n  retry 3 times {{\n    w: x = pg_current_wal_lsn()\n    \
             a: pg_replication_slot_advance(x)\n  }} until false\n}}\n{held}\
             skip ack-within-durable \"the file streams nothing\"\nskip no-data-loss \"as above\"\n\
             skip eventually-acknowledged \"as above\"\nskip wal-retention-bounded \"as above\"\n"
        ),
    );
    for file in [confirming, advancing] {
        let (rows, _) = verdicts(&[&file]);
        assert_eq!(row(&rows, "restart-held").1, "holds", "{file}: {rows:?}");
        // Not vacuous: `restart_lsn` does move, once the open transaction has committed.
        assert_eq!(row(&rows, "restart-moves").1, "holds", "{file}: {rows:?}");
    }
}

/// A transaction begun first and committed last is sent after the other, its Begin under its
/// first change below everything of the other: a connector that skips changes at or below the
/// last LSN it committed loses its rows with no fault at all. Pinned: the workload's steps and
/// the messages as the trace shows them.
#[test]
fn a_transaction_committed_after_a_later_one_is_sent_after_it_below_its_lsns() {
    let file = scratch_file(
        "interleave-lsn-only.wal",
        "walcheck 1\nconnector \"row by row, skipping changes at or below the last LSN\"\n\
         env messages = changes\nenv rows = 2\nenv interleave = on\nenv transactions = 2\n\
         env keepalives = 1\nenv runs = unbounded\ndurable pos: lsn = none, in destination\n\
         every run {\n  start_replication(pos)\n  for each message m {\n    \
         if m.is_change and m.lsn > pos {\n      destination.write(m)\n      \
         destination.commit(pos = m.lsn)\n    }\n    if m.is_commit or m.is_keepalive {\n      \
         standby_status_update(flush = max(pos, m.lsn))\n    }\n  }\n}\n",
    );
    let out = "target/tmp-connector-files/out-interleave-lsn-only";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "no-data-loss");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(20)),
        "{rows:?}"
    );
    let trace = format!("{out}/interleave-lsn-only__design__all__no-data-loss.itf.json");
    let actions = trace_actions(&trace);
    assert_eq!(
        actions[1..4],
        [
            "Open{pages=1}",
            "Commit{pages=1, commit=sync}",
            "CommitFlush"
        ],
        "{actions:?}"
    );
    assert!(
        actions.contains(&"CommitOpen{commit=sync}".to_owned()),
        "{actions:?}"
    );
    let output = walcheck(&["check", &file]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.find("T1 begin 0/1001FD0").expect("T1's Begin");
    let second = stdout
        .find("T2 begin 0/1000000")
        .expect("T2's Begin, below T1's");
    assert!(first < second, "{stdout}");
}

/// With `server = standby` a crash is the standby's: the transaction open on the primary goes
/// on and commits (found by review: the crash aborted it, and `CommitOpen`, weakly fair, never
/// came — this property was violated in 5 steps).
/// `identify_system().timeline`: 1, then 2 once a failover promoted the standby; a connector
/// that expects one timeline sees the change in 6 steps (the timeline read, the failover, the
/// next run's read).
#[test]
fn identify_system_reports_the_promoted_server_s_new_timeline() {
    let file = scratch_file(
        "timeline.wal",
        "walcheck 1\nconnector \"expects one timeline\"\nenv transactions = 1\nenv failovers = 1\n\
         env connector_crashes = 0\nenv runs = unbounded\nvolatile tli: 0..3 = 0\n\
         durable seen: 0..3 = 0\nevery run {\n  tli = identify_system().timeline\n  \
         if seen == 0 {\n    seen = tli\n  }\n  start_replication(0/0)\n  \
         for each message m {\n    standby_status_update(flush = m.txn.end_lsn)\n  }\n}\n\
         always one-timeline: seen == 0 or tli == 0 or tli == seen\n",
    );
    let out = "target/tmp-connector-files/out-timeline";
    let (rows, _) = verdicts(&[&file, "--out", out]);
    let (_, verdict, steps) = row(&rows, "one-timeline");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(6)),
        "{rows:?}"
    );
    let text = std::fs::read(format!(
        "{out}/timeline__design__all__one-timeline.itf.json"
    ))
    .unwrap();
    let trace: Value = serde_json::from_slice(&text).unwrap();
    let tli: Vec<&Value> = trace["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["tli"])
        .collect();
    assert_eq!(
        tli.first().map(|v| v.to_string()),
        Some("0".into()),
        "{tli:?}"
    );
    assert!(tli.iter().any(|v| **v == 1), "{tli:?}");
    assert_eq!(
        tli.last().map(|v| v.to_string()),
        Some("2".into()),
        "{tli:?}"
    );
}

/// `env stream_drops`: the walsender ends the stream with PostgreSQL up. `for each message`
/// ends as at the end of the stream (a file taking that for fatal fails in 4 steps: the
/// stream opens, `StreamDrop`, the loop ends, the `fail fatal`); the slot keeps its in-memory
/// `confirmed_flush` (a property that it never falls below what the connector acknowledged
/// holds), where a PostgreSQL crash with no checkpoint takes the slot back (violated).
#[test]
fn a_dropped_stream_ends_the_loop_and_keeps_the_slot_in_memory() {
    let fatal = scratch_file(
        "stream-drop-fatal.wal",
        "walcheck 1\nconnector \"the end of the stream is fatal\"\nenv transactions = 1\n\
         env connector_crashes = 0\nenv stream_drops = 1\nenv runs = unbounded\n\
         every run {\n  start_replication(0/0)\n  for each message m {\n    \
         destination.write(m.txn)\n    destination.commit()\n    \
         standby_status_update(flush = m.txn.end_lsn)\n  }\n  fail fatal \"the stream ended\"\n}\n",
    );
    let out = "target/tmp-connector-files/out-stream-drop";
    let (rows, _) = verdicts(&[&fatal, "--out", out]);
    let (_, verdict, steps) = row(&rows, "no-fatal-error");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(4)),
        "{rows:?}"
    );
    let actions = trace_actions(&format!(
        "{out}/stream-drop-fatal__design__all__no-fatal-error.itf.json"
    ));
    assert_eq!(
        actions,
        [
            "8: start_replication(0/0)",
            "StreamDrop",
            "9: for each message m",
            "14: fail fatal \"the stream ended\"",
        ],
        "{actions:?}"
    );
    let resend = |faults: &str| {
        scratch_file(
            &format!("stream-drop-resend-{faults}.wal"),
            &format!(
                "walcheck 1\nconnector \"acknowledges each transaction once committed\"\n\
                 env transactions = 2\nenv connector_crashes = 0\nenv checkpoints = off\n\
                 env runs = unbounded\nenv {faults} = 1\ndurable acked: lsn = none\n\
                 every run {{\n  start_replication(0/0)\n  \
                 for each message m {{\n    destination.write(m.txn)\n    destination.commit()\n    \
                 standby_status_update(flush = m.txn.end_lsn)\n    acked = m.txn.end_lsn\n  }}\n}}\n\
                 always slot-keeps-ack: acked == none or slot.confirmed_flush >= acked\n"
            ),
        )
    };
    let (rows, _) = verdicts(&[&resend("stream_drops")]);
    assert_eq!(row(&rows, "slot-keeps-ack").1, "holds", "{rows:?}");
    let (rows, _) = verdicts(&[&resend("pg_crashes")]);
    assert_eq!(row(&rows, "slot-keeps-ack").1, "violated", "{rows:?}");
}

/// A stream that skips a transaction the connector still holds whole (in its open batch) loses
/// nothing: this connector reconnects after a dropped stream from the position it received to,
/// past the batch it has not yet committed, and commits the batch at the next keepalive. Before
/// the fix `no-data-loss` was violated in 10 steps (the second `start_replication` skipping T1,
/// then only in the batch). Once the connector drops its copy, the same skip is a loss: with the
/// position saved in a state file before the commit, a connector crash loses the batch and the
/// next run starts past T1.
#[test]
fn a_reconnection_past_a_transaction_the_batch_holds_loses_nothing() {
    let design = |name: &str, storage: &str, faults: &str| {
        scratch_file(
            name,
            &format!(
                "walcheck 1\nconnector \"batches until a keepalive\"\nenv transactions = 2\n\
                 {faults}\nenv runs = unbounded\nenv keepalives = 2\n\
                 durable pos: lsn = none, in destination\n{storage} received: lsn = none\n\
                 every run {{\n  received = max(received, pos)\n  loop {{\n    \
                 start_replication(received)\n    for each message m {{\n      \
                 if m.is_keepalive {{\n        if received != pos {{\n          \
                 destination.commit(pos = received)\n          \
                 standby_status_update(flush = pos)\n        }}\n      }} else {{\n        \
                 destination.write(m.txn)\n        received = m.txn.end_lsn\n      }}\n    }}\n  \
                 }}\n}}\n"
            ),
        )
    };
    let kept = design(
        "reconnect-past-batch.wal",
        "volatile",
        "env stream_drops = 1\nenv connector_crashes = 0",
    );
    let (rows, _) = verdicts(&[&kept]);
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
    let dropped = design(
        "restart-past-lost-batch.wal",
        "durable",
        "env stream_drops = 0\nenv connector_crashes = 1",
    );
    let (rows, _) = verdicts(&[&dropped]);
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
}

/// A connector that reads idle keepalives for ever is at rest once nothing it can do puts more
/// in the destination: a transaction it keeps in a variable and never writes is lost, and so is
/// one a `backfill()` it never reaches would have delivered (a slot dropped and created again
/// past it). Before the look-ahead both files held: the first because the variable held T1,
/// the second because a `for each message` body called `backfill()`. A batch the next
/// keepalive commits is a delivery still to come (holds).
#[test]
fn a_transaction_held_for_ever_or_a_backfill_never_reached_is_lost() {
    let head = "walcheck 1\nconnector \"reader\"\nenv transactions = 2\nenv keepalives = 1\n\
        env connector_crashes = 0\nenv runs = unbounded\n";
    let files = "lang/tests/reference/files";
    let held = format!("{files}/held-for-ever.wal");
    let (rows, _) = verdicts(&[&held]);
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
    let unreached = scratch_file(
        "backfill-never-reached.wal",
        &format!(
            "{head}env slot = exists\ndurable recreated: bool = false\n\
             durable resync: bool = false\nevery run {{\n  if not recreated {{\n    \
             pg_drop_replication_slot()\n    pg_create_logical_replication_slot()\n    \
             recreated = true\n  }}\n  start_replication(0/0)\n  for each message m {{\n    \
             if m.is_keepalive and resync {{\n      backfill()\n    }}\n    \
             if not m.is_keepalive {{\n      destination.write(m.txn)\n      \
             destination.commit()\n      standby_status_update(flush = m.txn.end_lsn)\n    \
             }}\n  }}\n}}\n"
        ),
    );
    let (rows, _) = verdicts(&[&unreached]);
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
    let batched = format!("{files}/batch-until-keepalive.wal");
    let (rows, _) = verdicts(&[&batched]);
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
}

/// A `destination.commit` that fails before taking effect rolls the destination's transaction
/// back: a retry in its `on error` handler commits an empty batch unless the handler writes the
/// transaction again, and the status update after it confirms what the destination lacks.
/// Before, the failed commit kept its batch and both properties held.
#[test]
fn a_failed_destination_commit_loses_its_batch() {
    let files = "lang/tests/reference/files";
    let (rows, _) = verdicts(&[&format!("{files}/commit-retry-bare.wal")]);
    assert_eq!(row(&rows, "ack-within-durable").1, "violated", "{rows:?}");
    assert_eq!(row(&rows, "no-data-loss").1, "violated", "{rows:?}");
    let (rows, _) = verdicts(&[&format!("{files}/commit-retry-rewrite.wal")]);
    assert_eq!(row(&rows, "ack-within-durable").1, "holds", "{rows:?}");
    assert_eq!(row(&rows, "no-data-loss").1, "holds", "{rows:?}");
}

/// A transaction behind the slot for good (`confirmed_flush` past it in memory and on disk, no
/// stream to send it, no failover left), in neither the destination nor the connector, is lost
/// at once, whether or not the connector ever rests: a failed commit ignored, then a heartbeat
/// process that confirms the next commit's position. Before, no-data-loss held (the heartbeat's
/// loop kept the state from being quiescent). firezone #14213's write-pointer poller, which never
/// rests either, is caught the same way (its zoo file now expects it).
#[test]
fn a_transaction_behind_the_slot_for_good_is_lost_at_once() {
    let file = "lang/tests/reference/files/commit-fails-heartbeat-acks.wal";
    let (rows, _) = verdicts(&[file]);
    let (_, verdict, steps) = row(&rows, "no-data-loss");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(17)),
        "{rows:?}"
    );
    let (rows, _) = verdicts(&["connectors/zoo/firezone-14213-write-buggy.wal"]);
    let (_, verdict, steps) = row(&rows, "no-data-loss");
    assert_eq!(
        (verdict.as_str(), *steps),
        ("violated", Some(7)),
        "{rows:?}"
    );
}

/// A standby's crash loses nothing of the primary's: an asynchronous commit the primary has not
/// yet flushed stays committed and is delivered later. Before the fix the crash dropped it as a
/// primary crash does, and `delivered` was violated in 5 steps (Commit, PgCrash, …): the
/// commit vanished from `committed`, taking its obligations with it.
#[test]
fn a_standby_crash_keeps_the_primary_s_unflushed_asynchronous_commit() {
    let file = scratch_file(
        "standby-crash-async.wal",
        "walcheck 1\nconnector \"delivers\"\nenv transactions = 1\nenv commit = async\n\
         env server = standby\nenv pg_version = 16\nenv pg_crashes = 1\n\
         env connector_crashes = 0\nenv checkpoints = off\nenv runs = unbounded\n\
         every run {\n  start_replication(0/0)\n  for each message m {\n    \
         destination.write(m.txn)\n    destination.commit()\n    \
         standby_status_update(flush = m.lsn)\n  }\n}\n\
         eventually delivered: destination.holds != none\n",
    );
    let (rows, _) = verdicts(&[&file]);
    assert_eq!(row(&rows, "delivered").1, "holds", "{rows:?}");
}

#[test]
fn a_standby_crash_leaves_the_primary_s_open_transaction() {
    let file = scratch_file(
        "open-standby-crash.wal",
        "walcheck 1\nconnector \"reads\"\nenv interleave = on\nenv transactions = 1\n\
         env server = standby\nenv pg_version = 16\nenv pg_crashes = 1\n\
         env connector_crashes = 0\nenv runs = 1\nevery run {\n  start_replication(0/0)\n  \
         for each message m {\n    if m.is_commit {\n      \
         standby_status_update(flush = m.lsn)\n    }\n  }\n}\n\
         always open-eventually-commits: wal.insert == 0/1001FD0 leads to wal.insert == 0/1002000\n",
    );
    let (rows, _) = verdicts(&[&file]);
    assert_eq!(row(&rows, "open-eventually-commits").1, "holds", "{rows:?}");
}
