//! The teaching example `examples/textbook-connector` as its user runs it: a crate outside
//! walcheck's own that depends on `walcheck` alone and gets the whole command line for its system
//! from `walcheck::cli::main`. The example's binary runs as a subprocess; its discoveries are
//! asserted as data, the counterexample's exact action sequence included.

use std::process::{Command, Output};

use serde_json::Value;

use crate::util::textbook_connector;

fn run(args: &[&str]) -> Output {
    Command::new(textbook_connector())
        .args(args)
        .output()
        .expect("the example runs")
}

/// `check --json`'s report, after asserting the exit code.
fn check_json(args: &[&str], code: i32) -> Value {
    let output = run(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("check --json prints JSON")
}

/// `(faults, property, verdict)` of every row of a report.
fn rows(report: &Value) -> Vec<(String, String, String)> {
    let text = |row: &Value, key: &str| row[key].as_str().expect(key).to_owned();
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|row| {
            let faults = text(row, "faults");
            (faults, text(row, "property"), text(row, "verdict"))
        })
        .collect()
}

#[test]
fn ack_on_receipt_loses_a_received_transaction_when_the_connector_crashes() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let report = check_json(
        &[
            "check",
            "textbook:ack-on-receipt",
            "--faults",
            "connector-crash",
            "--json",
            "--out",
            dir,
        ],
        1,
    );
    let row = |property: &str, verdict: &str| {
        (
            "connector-crash".to_owned(),
            property.to_owned(),
            verdict.to_owned(),
        )
    };
    assert_eq!(
        rows(&report),
        [
            row("no-data-loss", "violated"),
            row("reach-connector-crash", "holds"),
            row("reach-all-delivered", "holds"),
        ]
    );

    let trace = report["results"][0]["trace"].as_str().expect("a trace");
    let itf: Value = serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let states = itf["states"].as_array().expect("states");
    let actions: Vec<&str> = states
        .iter()
        .map(|state| state["mbt::actionTaken"].as_str().expect("an action"))
        .collect();
    // The slot confirmed transaction 0 on receipt, and the crash took the only copy with it.
    assert_eq!(
        actions,
        ["init", "CommitTxn", "Receive", "Ack", "ConnectorCrash"]
    );
    let last = states.last().unwrap();
    // Transaction 0's commit record ends at 0/10000F8: 200 bytes of change, 46 of commit
    // record, each MAXALIGNed, after 0/1000000.
    assert_eq!(last["confirmed_flush"], "0/10000F8");
    assert_eq!(last["destination"], "[]");
    assert_eq!(last["held"], "none");
    assert_eq!(last["next"], 1);
}

#[test]
fn ack_after_commit_holds_and_reaches_every_witness() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let report = check_json(
        &["check", "textbook:ack-after-commit", "--json", "--out", dir],
        0,
    );
    let row =
        |faults: &str, property: &str| (faults.to_owned(), property.to_owned(), "holds".to_owned());
    assert_eq!(
        rows(&report),
        [
            row("none", "no-data-loss"),
            row("none", "reach-all-delivered"),
            row("connector-crash", "no-data-loss"),
            row("connector-crash", "reach-connector-crash"),
            row("connector-crash", "reach-all-delivered"),
        ]
    );
}

#[test]
fn list_shows_the_system_beside_the_built_in_ones() {
    let output = run(&["list"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let systems: Vec<&str> = stdout
        .lines()
        .filter(|line| !line.starts_with(' '))
        .collect();
    for name in [
        "olake-bootstrap",
        "electric-flush",
        "olake-sync",
        "textbook",
    ] {
        assert!(systems.contains(&name), "{name} not in {systems:?}");
    }
    assert!(stdout.contains("  variants: ack-after-commit, ack-on-receipt\n"));
    assert!(stdout.contains("  faults:   none, connector-crash\n"));
}

#[test]
fn bad_input_is_a_one_line_usage_error_naming_the_program() {
    // The program as invoked, as clap's usage lines name it: the user ran this binary.
    for (args, line) in [
        (
            &["check", "textbook:no-such"][..],
            "textbook-connector: error: textbook has no variant \"no-such\"; \
             its variants are ack-after-commit, ack-on-receipt\n",
        ),
        (
            &["check", "--no-such"],
            "textbook-connector: error: unexpected argument '--no-such' found\n",
        ),
        (
            &[],
            "textbook-connector: error: a command is required: list, check, triage, simulate, \
             live, explore, merge, replay or show (see textbook-connector --help)\n",
        ),
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert_eq!(String::from_utf8(output.stderr).unwrap(), line);
    }
}

#[test]
fn check_help_names_the_systems_fault_sets() {
    let output = run(&["check", "--help"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains(
            "Only this fault set: olake-bootstrap and olake-sync none, connector-crash, \
             pg-crash, all; electric-flush none, consumer-kill, suspend, all; textbook none, \
             connector-crash (see `textbook-connector list`)"
        ),
        "{stdout}"
    );
}

#[test]
fn version_names_the_program_and_the_walcheck_it_is_built_on() {
    let output = run(&["--version"]);
    assert!(output.status.success());
    let version = concat!(
        "textbook-connector (walcheck ",
        env!("CARGO_PKG_VERSION"),
        ")\n"
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), version);
}

/// `check`'s text for a system checked plainly: verdicts, not differences from an expectation.
fn check_text(args: &[&str], code: i32) -> String {
    let out = tempfile::tempdir().unwrap();
    let mut args = args.to_vec();
    args.extend(["--out", out.path().to_str().unwrap()]);
    let output = run(&args);
    assert_eq!(output.status.code(), Some(code), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_plain_check_prints_verdicts_and_fails_on_a_violation() {
    let text = check_text(&["check", "textbook"], 1);
    assert!(!text.contains("DIFFERS"), "{text}");
    assert!(
        text.contains(
            "\nack-on-receipt    connector-crash  -       violated (4 steps)  2 of 2 reached\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\n10 checks: checked plainly, with no expectation table (every property should hold, every witness be reached): 9 pass (3 properties proved, 6 witnesses reached), 1 fail (1 counterexample found); "),
        "{text}"
    );
}

#[test]
fn a_plain_check_fails_on_an_unreached_witness() {
    let text = check_text(
        &[
            "check",
            "textbook:ack-after-commit",
            "--faults",
            "connector-crash",
            "--bound",
            "crashes=0",
        ],
        1,
    );
    assert!(
        text.contains("holds         1 of 2 reached; reach-connector-crash not reached\n"),
        "{text}"
    );
    assert!(
        text.contains("\n3 checks: checked plainly, with no expectation table (every property should hold, every witness be reached): 2 pass (1 property proved, 1 witness reached), 1 fail (1 witness not reached); "),
        "{text}"
    );
}

#[test]
fn the_example_is_at_most_150_lines_of_rust() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/textbook-connector/src/main.rs"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let code = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .count();
    assert!(
        code <= 150,
        "{code} lines of Rust, blank and comment lines left out"
    );
}
