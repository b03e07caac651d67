//! The `walcheck` binary as users and CI scripts call it: exit codes, one-line errors, JSON
//! contracts, determinism across runs and thread counts.

use std::process::{Command, Output};

use serde_json::Value;

use crate::util::{json, stdout, walcheck_command, without_measurements, MEASUREMENTS};

/// `walcheck ARGS`, with `--out OUT` for a `check`.
fn walcheck(args: &[&str], out: &std::path::Path) -> Output {
    let mut command = walcheck_command(args);
    if args.first() == Some(&"check") {
        command.arg("--out").arg(out);
    }
    command.output().expect("the binary runs")
}

/// Bad usage: exit 2, one line on stderr starting `walcheck: error:`, no panic, nothing on stdout.
fn assert_usage_error(args: &[&str], output: &Output) {
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

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[&[&str]] = &[
        &["check", "no-such-system"],
        &["check", "olake-bootstrap:no-such-variant"],
        &["check", "olake-bootstrap", "--faults", "meteor"],
        &["check", "--bound", "statements"],
        &["check", "--bound", "=3"],
        &[
            "check",
            "docs/examples/changes.wal",
            "--bound",
            "interleave=on,off",
        ],
        &["check", "--bound", "statements=many"],
        &["check", "--bound", "statements=1000"],
        &["check", "--bound", "server=replica"],
        &["check", "--bound", "no_such_bound=1"],
        &["check", "--threads", "0"],
        &["check", "--threads", "many"],
        &["check", "--timeout", "-1"],
        &["check", "--max-states", "0"],
        &["check", "--no-such-flag"],
        // The reference engine's note on the flags it ignores is for a run that goes ahead.
        &[
            "check",
            "--engine",
            "reference",
            "--max-memory",
            "5",
            "no-such-system",
        ],
        &["frobnicate"],
    ];
    for args in cases {
        assert_usage_error(args, &walcheck(args, dir.path()));
    }
}

/// Bad values are refused in the project's words, naming what was wrong: not the standard
/// library's parse error, nor a negative number taken for a flag.
#[test]
fn bad_values_are_named_in_the_project_s_words() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["check", "--threads", "-1"],
            "invalid value '-1' for '--threads <THREADS>': not a whole number (digits only)",
        ),
        (
            &["check", "--max-memory", "1e9"],
            "invalid value '1e9' for '--max-memory <BYTES>': not a whole number (digits only)",
        ),
        (
            &["check", "--max-states", "-5"],
            "invalid value '-5' for '--max-states <N>': not a whole number (digits only)",
        ),
        (
            &["check", "--shard", "-1/3"],
            "--shard takes I/N with 1 <= I <= N <= 1000, e.g. 2/3, not \"-1/3\"",
        ),
        (
            &["check", "--timeout", "-inf"],
            "--timeout takes seconds above 0 and at most 1000000",
        ),
        (
            &["check", "--faults", "bogus"],
            "no system has the fault set \"bogus\"; fault sets: none, connector-crash,",
        ),
        (
            &["check", "--bound", "nosuch=1"],
            "no system has a bound named \"nosuch\" (see walcheck list)",
        ),
    ];
    for (args, says) in cases {
        let output = walcheck(args, dir.path());
        assert_usage_error(args, &output);
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn an_unwritable_out_dir_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let args = ["check", "olake-bootstrap:master", "--faults", "none"];
    let output = walcheck(&args, &file.join("sub"));
    // Found before the search: nothing is printed but the error.
    assert_usage_error(&args, &output);
}

/// An `--out` directory that cannot be made or written in, or a `--junit` file that cannot be
/// written, is one line and exit 2 before anything is checked: no report on stdout, text or
/// JSON, and no file left behind.
#[test]
fn unwritable_output_targets_fail_before_the_search() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "kept").unwrap();
    let good_out = dir.path().join("traces");
    let in_file = file.join("j.xml");
    let (in_file, a_dir) = (in_file.to_str().unwrap(), dir.path().to_str().unwrap());
    let dotdot = format!("{a_dir}/missing/..");
    let slashed = format!("{a_dir}/missing/");
    let dotted = format!("{a_dir}/missing/.");
    let not_a_dir = format!("cannot write {in_file}: Not a directory (os error 20)");
    let cases: [(&str, &str, String); 9] = [
        (
            "--junit",
            &dotdot,
            format!("cannot write {dotdot}: not a file's path"),
        ),
        (
            "--junit",
            &slashed,
            format!("cannot write {slashed}: not a file's path"),
        ),
        (
            "--junit",
            &dotted,
            format!("cannot write {dotted}: not a file's path"),
        ),
        (
            "--out",
            "/proc/wcout",
            "cannot create trace directory /proc/wcout: No such file or directory (os error 2)"
                .into(),
        ),
        (
            "--out",
            "/proc",
            "cannot write in trace directory /proc: No such file or directory (os error 2)".into(),
        ),
        (
            "--junit",
            "/proc/nonexistent-dir/j.xml",
            "cannot write /proc/nonexistent-dir/j.xml: No such file or directory (os error 2)"
                .into(),
        ),
        ("--junit", in_file, not_a_dir),
        (
            "--junit",
            a_dir,
            format!("cannot write {a_dir}: Is a directory (os error 21)"),
        ),
        (
            "--out",
            file.to_str().unwrap(),
            format!("cannot create trace directory {}: ", file.display()),
        ),
    ];
    for (flag, target, says) in &cases {
        for json in [false, true] {
            let mut args = vec!["check", "olake-bootstrap:master", flag, target];
            if json {
                args.push("--json");
            }
            if *flag == "--junit" {
                args.extend(["--out", good_out.to_str().unwrap()]);
            }
            let output = walcheck_command(&args).output().unwrap();
            assert_usage_error(&args, &output);
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert!(stderr.contains(says.as_str()), "{args:?}: {stderr}");
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
    assert!(
        !good_out.exists(),
        "a trace directory made for a run that did not start"
    );
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["a-file"], "nothing but the file was left");
}

/// A run that writes no counterexample leaves no trace directory it had to make; one that
/// writes some leaves them there, and its --junit file beside.
#[test]
fn the_trace_directory_made_for_a_run_stays_only_with_traces() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new").join("traces");
    let junit = dir.path().join("walcheck.xml");
    let junit = junit.to_str().unwrap();
    let holds = [
        "check",
        "olake-bootstrap:pr1084",
        "--faults",
        "none",
        "--bound",
        "server=standby",
    ];
    let output = walcheck(&holds, &out);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(!dir.path().join("new").exists(), "no trace, no directory");
    let output = walcheck(&["check", "olake-bootstrap:master", "--junit", junit], &out);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(std::fs::read_dir(&out).unwrap().count() > 0);
    assert!(std::fs::read_to_string(junit)
        .unwrap()
        .contains("<testsuites"));
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
    let first = without_measurements(json(&runs[0]));
    assert_eq!(first, without_measurements(json(&runs[1])));
    assert_eq!(first, without_measurements(json(&runs[2])));
    // Only the measurements differ: the rest of the text is byte-identical too.
    let strip = |s: String| {
        s.lines()
            .filter(|l| {
                !l.contains("\"peak_rss_bytes\"")
                    && !MEASUREMENTS.iter().any(|k| l.contains(&format!("\"{k}\"")))
            })
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
    let report = json(&output);
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
        "states_per_s",
        "peak_heap_bytes",
        "bytes_per_state",
        "trace",
        "trace_steps",
    ];
    for row in rows {
        for key in keys {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
        // The walcheck binary counts heap bytes: every search stores at least its initial state.
        assert!(row["peak_heap_bytes"].as_u64().unwrap() > 0, "{row}");
        assert!(row["bytes_per_state"].as_u64().unwrap() > 0, "{row}");
    }
    let mismatch = rows
        .iter()
        .find(|r| r["property"] == "no-lsn-mismatch" && r["bounds"]["server"] == "primary")
        .unwrap();
    assert_eq!(mismatch["verdict"], "violated");
    assert_eq!(mismatch["trace_steps"], 5);
    // What explains the counterexample, as the text prints it: the whole configuration, what
    // the property means, the legend of its table.
    assert_eq!(
        mismatch["configuration"],
        "server=primary page_bytes=8192 wal_buffers_pages=4 stmt_pages_small=1 stmt_pages_bulk=5 \
         statements=2 syncs=2 crashes=1 fairness=declared"
    );
    assert_eq!(mismatch["property_doc"], "validateGlobalState never fails");
    let legend = mismatch["legend"].as_array().unwrap();
    assert_eq!(
        legend[0],
        serde_json::json!({"name": "insert", "kind": "LSN", "doc": "the WAL insert pointer: the end of the WAL reserved so far"})
    );
    let w0 = legend.iter().find(|l| l["name"] == "W0").unwrap();
    assert_eq!(w0["kind"], Value::Null);
    let trace_path = mismatch["trace"].as_str().unwrap();
    assert!(
        trace_path.ends_with("olake-bootstrap__master__none__no-lsn-mismatch.itf.json"),
        "{trace_path}"
    );
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(trace_path).unwrap()).unwrap();
    assert_eq!(trace["#meta"]["walcheck:property"], "no-lsn-mismatch");
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
    assert!(text.contains("Append{pages: 5, commit: sync}"), "{text}");
    assert!(text.contains("lsn mismatch, please proceed with clear destination. lsn saved in state [0/1002000] current lsn [0/1000000]"), "{text}");
    assert!(
        text.contains("\n9 checks, all as expected: 2 counterexamples found in the designs known to be broken, 4 properties proved, 3 witnesses reached; "),
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
            // The default catalogue also checks its liveness without fairness, which fails.
            "--bound",
            "fairness=declared",
            "--strict",
        ],
        dir.path(),
    );
    assert_eq!(fixed.status.code(), Some(0));
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
    let report = json(&output);
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
    let list = json(&output);
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
        (Some(2), Some(0), Some(6))
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

/// Writes master's no-lsn-mismatch counterexample into `dir` and returns its path.
fn master_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let output = walcheck(
        &[
            "check",
            "olake-bootstrap:master",
            "--faults",
            "none",
            "--bound",
            "server=primary",
        ],
        dir,
    );
    assert_eq!(output.status.code(), Some(0));
    dir.join("olake-bootstrap__master__none__no-lsn-mismatch.itf.json")
}

#[test]
fn replay_reproduces_a_written_trace_and_names_an_edited_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = master_trace(dir.path());
    let output = walcheck(&["replay", path.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output)
        .contains("every step enabled and as recorded; no-lsn-mismatch violated at step 5"));

    // Edit one LSN: the state file written at step 3.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut itf: Value = serde_json::from_str(&text).unwrap();
    itf["states"][3]["state_file"] = Value::String("0/1002001".into());
    let edited = dir.path().join("edited.itf.json");
    std::fs::write(&edited, serde_json::to_string_pretty(&itf).unwrap()).unwrap();
    let output = walcheck(&["replay", edited.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(
            "step 3 (SeedState) differs: state_file recorded 0/1002001 but replayed 0/1002000"
        ),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");

    // An action that is not enabled there.
    itf["states"][3]["state_file"] = Value::String("0/1002000".into());
    itf["states"][2]["mbt::actionTaken"] = Value::String("Validate".into());
    std::fs::write(&edited, serde_json::to_string_pretty(&itf).unwrap()).unwrap();
    let output = walcheck(&["replay", edited.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).starts_with(&format!(
            "replay of {} failed: step 2: Validate is not enabled there",
            edited.display()
        )),
        "{}",
        stdout(&output)
    );
}

/// A live conformance rule's trace (system `pg-live`, which no registered system declares) is
/// shown with every variable it recorded, in text and as a diagram.
#[test]
fn show_renders_a_live_rules_trace() {
    let dir = std::env::temp_dir().join(format!("walcheck-show-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pg-live__hand-made.itf.json");
    std::fs::write(
        &path,
        r##"{"#meta": {"format": "ITF", "source": "walcheck", "walcheck:schema": "walcheck.trace/1",
  "walcheck:system": "pg-live", "walcheck:variant": "postgresql-15", "walcheck:faults": "none",
  "walcheck:config": "rule=hand-made", "walcheck:property": "model_predicts_server",
  "walcheck:kind": "observed", "walcheck:verdict": "holds", "walcheck:seed": "none"},
 "vars": ["insert", "flush", "last_wal_replay_lsn"],
 "states": [{"#meta": {"index": 0}, "mbt::actionTaken": "init", "insert": "0/1000", "flush": "0/1000"},
  {"#meta": {"index": 1}, "mbt::actionTaken": "Observe", "insert": "0/1000", "flush": "0/1000", "last_wal_replay_lsn": "NULL"}]}"##,
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let text = walcheck(&["show", file], &dir);
    assert_eq!(text.status.code(), Some(0));
    assert_eq!(
        stdout(&text),
        "pg-live: model_predicts_server (observed) holds\n  observed on a live server \
         (postgresql-15): rule=hand-made; `walcheck replay FILE` checks it against the model\n\
         #  action           insert  flush   last_wal_replay_lsn\n\
         0  (initial state)  0/1000  0/1000\n\
         1  Observe                          NULL*\n"
    );
    let mermaid = walcheck(&["show", "--format", "mermaid", file], &dir);
    assert_eq!(mermaid.status.code(), Some(0));
    assert!(stdout(&mermaid).starts_with("sequenceDiagram\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn show_renders_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = master_trace(dir.path());
    let path = path.to_str().unwrap();
    let text = walcheck(&["show", path], dir.path());
    assert_eq!(text.status.code(), Some(0));
    let text = stdout(&text);
    assert!(
        text.starts_with(
            "olake-bootstrap:master faults=none: no-lsn-mismatch (always) violated after 5 steps\n"
        ),
        "{text}"
    );
    assert!(text.contains("0/1002000*"), "{text}");
    let mermaid = stdout(&walcheck(
        &["show", path, "--format", "mermaid"],
        dir.path(),
    ));
    assert!(mermaid.starts_with("sequenceDiagram\n"));
    assert!(
        mermaid.contains("connector->>slot: 5. Validate"),
        "{mermaid}"
    );
    // The diagram explains itself as the text does: what the property means and the whole
    // configuration before the steps, the verdict, then a legend of what the notes show.
    let notes: Vec<&str> = mermaid
        .lines()
        .filter_map(|l| l.strip_prefix("    Note over client,statefile: "))
        .collect();
    assert_eq!(
        notes[..2],
        [
            "no-lsn-mismatch: validateGlobalState never fails",
            "configuration: server=primary page_bytes=8192 wal_buffers_pages=4 stmt_pages_small=1 \
             stmt_pages_bulk=5 statements=2 syncs=2 crashes=1 fairness=declared"
        ],
        "{mermaid}"
    );
    let verdict = notes
        .iter()
        .position(|n| *n == "no-lsn-mismatch VIOLATED (always) after step 5")
        .expect("the verdict note");
    assert_eq!(notes[verdict + 1], "where:", "{mermaid}");
    let legend = &notes[verdict + 2..];
    assert!(
        legend.contains(&"commit_pending (bool): a synchronous commit's WAL is not yet flushed: its backend waits in XLogFlush"),
        "{mermaid}"
    );
    assert!(
        legend
            .iter()
            .any(|n| n.starts_with("W0: the bootstrap's target")),
        "{mermaid}"
    );
    assert!(!mermaid.contains(';'), "{mermaid}");
    let svg = stdout(&walcheck(&["show", path, "--format", "svg"], dir.path()));
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    for line in [
        "no-lsn-mismatch: validateGlobalState never fails",
        "configuration: server=primary page_bytes=8192",
        "where:",
        "commit_pending (bool): a synchronous commit's WAL is not yet flushed",
    ] {
        assert!(svg.contains(line), "{line} missing in {svg}");
    }
    let itf = stdout(&walcheck(&["show", path, "--format", "itf"], dir.path()));
    assert_eq!(itf, std::fs::read_to_string(path).unwrap());
}

#[test]
fn bad_trace_files_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(master_trace(dir.path())).unwrap();
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("not-json", "this is not json".into()),
        ("truncated", good[..good.len() / 2].to_owned()),
        ("not-itf", r#"{"hello": "world"}"#.into()),
        (
            "other-schema",
            good.replace("walcheck.trace/1", "walcheck.trace/9"),
        ),
        (
            "unknown-system",
            good.replace(
                "\"walcheck:system\": \"olake-bootstrap\"",
                "\"walcheck:system\": \"kafka-connect\"",
            ),
        ),
        (
            "unknown-variant",
            good.replace(
                "\"walcheck:variant\": \"master\"",
                "\"walcheck:variant\": \"pr9999\"",
            ),
        ),
        (
            "unknown-property",
            good.replace(
                "\"walcheck:property\": \"no-lsn-mismatch\"",
                "\"walcheck:property\": \"no-such\"",
            ),
        ),
        ("bad-bound", good.replace("statements=2", "statements=lots")),
        ("binary", "\u{0}\u{1}\u{2}".into()),
        ("verdict-holds", good.replace("\"walcheck:verdict\": \"violated\"", "\"walcheck:verdict\": \"holds\"")),
        ("verdict-banana", good.replace("\"walcheck:verdict\": \"violated\"", "\"walcheck:verdict\": \"banana\"")),
        ("kind-sometimes", good.replace("\"walcheck:kind\": \"always\"", "\"walcheck:kind\": \"sometimes\"")),
        ("other-system", good.replace("\"walcheck:system\": \"olake-bootstrap\"", "\"walcheck:system\": \"electric-flush\"").replace("\"walcheck:variant\": \"master\"", "\"walcheck:variant\": \"v1.4.15\"").replace("\"walcheck:property\": \"no-lsn-mismatch\"", "\"walcheck:property\": \"no-lost-flush-notification\"").replace("\"walcheck:config\": \"crashes=1,page_bytes=8192,server=primary,statements=2,stmt_pages_bulk=5,stmt_pages_small=1,syncs=2,wal_buffers_pages=4\"", "\"walcheck:config\": \"\"")),
    ];
    for (name, text) in cases {
        let path = dir.path().join(format!("{name}.itf.json"));
        std::fs::write(&path, text).unwrap();
        for command in ["replay", "show"] {
            let output = walcheck(&[command, path.to_str().unwrap()], dir.path());
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert_eq!(output.status.code(), Some(2), "{command} {name}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{command} {name}: {stderr}");
            assert!(
                stderr.starts_with("walcheck: error: "),
                "{command} {name}: {stderr}"
            );
        }
    }
    let missing = walcheck(
        &["replay", dir.path().join("nope.json").to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(missing.status.code(), Some(2));
}

/// A value in a trace that is not what its variable holds is named, with the state, in one
/// line, exit 2, by `replay` and `show` alike: an invalid LSN (anywhere a variable declared as one
/// holds it), a number out of range, a value of the wrong kind.
#[test]
fn bad_values_in_a_trace_are_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(master_trace(dir.path())).unwrap();
    let out_of_range = "out of range for a whole number (0 to 18446744073709551615)";
    let lsn = "not an LSN (X/Y, 1 to 8 hex digits each)";
    let cases: Vec<(String, String)> = vec![
        (
            good.replacen("\"insert\": \"0/1000000\"", "\"insert\": \"ZZ/1\"", 1),
            format!("state 0: insert is \"ZZ/1\", {lsn}"),
        ),
        (
            // 17 hex digits.
            good.replacen(
                "\"flush\": \"0/1000000\"",
                "\"flush\": \"00000000/000000001\"",
                1,
            ),
            format!("state 0: flush is \"00000000/000000001\", {lsn}"),
        ),
        (
            good.replacen("\"end_lsn\": \"none\"", "\"end_lsn\": \"0/\"", 1),
            "state 0: end_lsn is \"0/\", not an LSN (X/Y, 1 to 8 hex digits each, or none)"
                .to_owned(),
        ),
        (
            good.replacen("\"run\": 1", "\"run\": 18446744073709551616", 1),
            format!("state 0: run is {out_of_range}"),
        ),
        (
            good.replacen("\"run\": 1", "\"run\": -1", 1),
            format!("state 0: run is -1, {out_of_range}"),
        ),
        (
            good.replacen(
                "\"run\": 1",
                "\"run\": {\"#bigint\": \"99999999999999999999\"}",
                1,
            ),
            format!("state 0: run is {{\"#bigint\": \"99999999999999999999\"}}, {out_of_range}"),
        ),
        (
            good.replacen("\"run\": 1", "\"run\": 1.5", 1),
            "state 0: run is 1.5, not a whole number".to_owned(),
        ),
        (
            good.replacen("\"run\": 1", "\"run\": \"one\"", 1),
            "state 0: run is \"one\", not a count (a whole number)".to_owned(),
        ),
        (
            good.replacen("\"commit_pending\": false", "\"commit_pending\": \"no\"", 1),
            "state 0: commit_pending is \"no\", not true or false".to_owned(),
        ),
        (
            good.replacen("\"run\": 1", "\"run\": [1]", 1),
            "state 0: run is [1], not a string, boolean or whole number".to_owned(),
        ),
        (
            good.replace(
                "\"walcheck:seed\": \"none\"",
                "\"walcheck:seed\": \"18446744073709551616\"",
            ),
            format!("walcheck:seed \"18446744073709551616\" is {out_of_range}, and not none"),
        ),
        (
            good.replace("statements=2", "statements=18446744073709551616"),
            "bound statements=18446744073709551616 is outside its range".to_owned(),
        ),
    ];
    let path = dir.path().join("edited.itf.json");
    for (text, reason) in cases {
        std::fs::write(&path, &text).unwrap();
        for command in ["replay", "show"] {
            let args = [command, path.to_str().unwrap()];
            let output = walcheck(&args, dir.path());
            assert_usage_error(&args, &output);
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert!(
                stderr.contains(&reason),
                "{command}: {stderr} lacks {reason}"
            );
        }
    }
}

#[test]
fn counterexamples_are_identical_across_thread_counts() {
    let trace_files = |threads: &str| {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            walcheck(&["check", "--threads", threads], dir.path())
                .status
                .code(),
            Some(0)
        );
        let mut files: Vec<(String, String)> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let one = trace_files("1");
    assert!(one.len() >= 20);
    assert_eq!(one, trace_files("2"));
    assert_eq!(one, trace_files("4"));
}

#[test]
fn simulate_bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg");
    let svg = svg.to_str().unwrap();
    let sim = |extra: &[&'static str]| -> Vec<&str> {
        let mut args = vec![
            "simulate",
            "olake-bootstrap",
            "--ladder",
            "sync",
            "--attempts",
            "2",
        ];
        args.extend_from_slice(extra);
        args
    };
    let cases: Vec<Vec<&str>> = vec![
        vec!["simulate", "olake-bootstrap", "--ladder", "sideways"],
        vec!["simulate", "olake-bootstrap"],
        vec!["simulate", "electric-flush", "--ladder", "sync"],
        vec!["simulate", "olake-bootstrap:pr9", "--ladder", "sync"],
        sim(&["--wal-buffers-bytes", "-4194304"]),
        sim(&["--row-wal-bytes", "-1"]),
        sim(&["--wal-writer-delay-us", "0"]),
        sim(&["--fsync-latency-us", "0"]),
        sim(&["--wal-buffers-bytes", "10000"]),
        sim(&["--page-bytes", "3000"]),
        sim(&["--jitter-pct", "100"]),
        sim(&["--rows-per-s", "fast"]),
        sim(&["--attempts", "0"]),
        sim(&["--attempts", "-3"]),
        sim(&["--seed", "-1"]),
        sim(&["--seed", "one"]),
        sim(&["--seeds", "9..3"]),
        sim(&["--seeds", "3"]),
        sim(&["--seed", "1", "--seeds", "1..3"]),
        vec![
            "simulate",
            "olake-bootstrap",
            "--ladder",
            "sync",
            "--seeds",
            "1..3",
            "--plot",
            svg,
        ],
        sim(&["--trace-limit", "0", "--trace-out", "out"]),
        // A limit on traces nothing writes.
        sim(&["--trace-limit", "3"]),
        sim(&["--no-such-parameter", "1"]),
        // A plot in a folder that does not exist: refused before the run.
        sim(&["--plot", "no-such-folder/ladders.svg"]),
        // A folder named like a connector file, holding none.
        vec!["check", "empty.wal"],
        vec!["check", "empty-folder"],
    ];
    std::fs::create_dir_all(dir.path().join("empty.wal")).unwrap();
    std::fs::create_dir_all(dir.path().join("empty-folder")).unwrap();
    for args in &cases {
        assert_usage_error(args, &walcheck(args, dir.path()));
    }
}

#[test]
fn simulate_json_is_the_same_bytes_for_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "simulate",
        "olake-bootstrap",
        "--ladder",
        "both",
        "--seed",
        "3",
        "--attempts",
        "10",
        "--json",
    ];
    let runs: Vec<Output> = (0..2).map(|_| walcheck(&args, dir.path())).collect();
    for output in &runs {
        assert_eq!(output.status.code(), Some(0));
    }
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.contains("\"elapsed_ms\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(stdout(&runs[0])), strip(stdout(&runs[1])));
    let report = json(&runs[0]);
    assert_eq!(report["schema"], "walcheck.simulate/1");
    assert_eq!(report["seed"], 3);
    assert!(report["elapsed_ms"].is_u64());
    assert_eq!(report["parameters"]["wal_buffers_bytes"], 4_194_304);
    let ladders = report["ladders"].as_array().unwrap();
    assert_eq!(ladders.len(), 2);
    let sync_levels = ladders[0]["levels"].as_array().unwrap();
    assert_eq!(sync_levels.len(), 7);
    let row = &sync_levels[6]["variants"][2];
    for key in [
        "variant",
        "attempts",
        "write_ahead_at_read",
        "stopped_short",
        "lsn_mismatch",
        "gave_up",
        "hit_probability",
        "hit_ci95",
        "retries",
        "traces",
    ] {
        assert!(row.get(key).is_some(), "{key} missing in {row}");
    }
    assert_eq!(row["variant"], "pr1084");
    assert_eq!(row["lsn_mismatch"], 0);
    assert!(row["retries"]["total"].as_u64().unwrap() > 0);
    // Another seed is another run.
    let other = walcheck(
        &[
            "simulate",
            "olake-bootstrap",
            "--ladder",
            "both",
            "--seed",
            "4",
            "--attempts",
            "10",
            "--json",
        ],
        dir.path(),
    );
    assert_ne!(strip(stdout(&other)), strip(stdout(&runs[0])));
}

#[test]
fn simulated_violations_are_traces_that_walcheck_replays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sim-traces");
    let svg = dir.path().join("ladders.svg");
    let output = walcheck(
        &[
            "simulate",
            "olake-bootstrap:master",
            "--ladder",
            "async",
            "--attempts",
            "4",
            "--trace-out",
            out.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{:?}", output.stderr);
    let text = stdout(&output);
    assert!(text.contains("ladder async"), "{text}");
    assert!(text.contains("traces of violating attempts:"), "{text}");
    let mut files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("olake-bootstrap__master__none__"),
            "{name}"
        );
        let replayed = walcheck(&["replay", file.to_str().unwrap()], dir.path());
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{name}: {:?}",
            replayed.stderr
        );
        assert!(stdout(&replayed).contains("every step enabled and as recorded"));
        let shown = walcheck(&["show", file.to_str().unwrap()], dir.path());
        assert_eq!(shown.status.code(), Some(0));
        assert!(stdout(&shown).contains("InsertWal{bytes: 115000}"));
    }
    // Edit one recorded pointer: replay names the step.
    let mismatch = files
        .iter()
        .find(|f| f.to_string_lossy().contains("no-lsn-mismatch"))
        .unwrap();
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(mismatch).unwrap()).unwrap();
    let states = trace["states"].as_array().unwrap();
    let last = states.len() - 1;
    let mut edited = trace.clone();
    edited["states"][last - 1]["state_file"] = Value::String("0/1".into());
    let edited_path = dir.path().join("edited.itf.json");
    std::fs::write(&edited_path, serde_json::to_string(&edited).unwrap()).unwrap();
    let replayed = walcheck(&["replay", edited_path.to_str().unwrap()], dir.path());
    assert_eq!(replayed.status.code(), Some(1));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
    assert!(svg.contains("simulated master: lsn mismatch"));
}

#[test]
fn swarm_reports_each_seeds_worst_level() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "simulate",
        "olake-bootstrap",
        "--ladder",
        "sync",
        "--seeds",
        "0..4",
        "--attempts",
        "4",
        "--wal-buffers-bytes",
        "1048576",
        "--json",
    ];
    let output = walcheck(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{:?}", output.stderr);
    let report = json(&output);
    assert_eq!(report["schema"], "walcheck.swarm/1");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for result in results {
        // A parameter given on the command line is not drawn.
        assert_eq!(result["parameters"]["wal_buffers_bytes"], 1_048_576);
        let fixed = &result["variants"][2];
        assert_eq!(fixed["variant"], "pr1084");
        assert_eq!(fixed["lsn_mismatch"], 0);
        assert_eq!(fixed["worst"], Value::Null);
    }
    let again = walcheck(&args, dir.path());
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.contains("\"elapsed_ms\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(stdout(&output)), strip(stdout(&again)));
    let text = walcheck(&args[..args.len() - 1], dir.path());
    assert!(stdout(&text).contains("pr1084: no lsn mismatch in any of 4 seeds"));
}

#[test]
fn overlapping_specs_check_each_entry_once() {
    let dir = tempfile::tempdir().unwrap();
    let rows = |args: &[&str]| -> usize {
        let mut all = vec!["check", "--json"];
        all.extend_from_slice(args);
        let output = walcheck(&all, dir.path());
        let report = json(&output);
        report["results"].as_array().unwrap().len()
    };
    let whole = rows(&["olake-bootstrap"]);
    assert_eq!(rows(&["olake-bootstrap:master", "olake-bootstrap"]), whole);
    assert_eq!(rows(&["olake-bootstrap", "olake-bootstrap:master"]), whole);
}

/// Runs the binary with `args` in `dir`, killing it should it run past a deadline (a read that
/// hangs): its output, or `None` after the kill.
fn walcheck_within(
    args: &[&str],
    dir: &std::path::Path,
    limit: std::time::Duration,
) -> Option<Output> {
    let mut child = walcheck_command(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// A trace (`show`, `replay`), a report (`merge`) or a connector file (`check`, given itself or
/// in a folder) that is not a regular file, a FIFO, `/dev/zero` or `/dev/urandom`, or that is
/// past its size limit, is one line on stderr and exit 2: never a wait for a FIFO's writer, nor
/// a read without end.
#[test]
fn inputs_that_are_not_regular_files_or_too_large_are_one_line_and_exit_2() {
    use walcheck::input::{CONNECTOR_MAX_BYTES, REPORT_MAX_BYTES, TRACE_MAX_BYTES};
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let fifo = |name: &str| {
        let made = Command::new("mkfifo").arg(path(name)).status();
        assert!(made.expect("mkfifo runs").success());
    };
    // Sparse: its length is past the limit without a byte written.
    let too_large = |name: &str, max_bytes: u64| {
        let file = std::fs::File::create(path(name)).unwrap();
        file.set_len(max_bytes + 1).unwrap();
    };
    // A connector file is one by its name: the devices stand behind links named `.wal`.
    let device = |name: &str, device: &str| std::os::unix::fs::symlink(device, path(name)).unwrap();
    std::fs::create_dir(path("folder-fifo")).unwrap();
    std::fs::create_dir(path("folder-zero")).unwrap();
    std::fs::create_dir(path("folder-large")).unwrap();
    for name in [
        "fifo.itf.json",
        "fifo.json",
        "fifo.wal",
        "folder-fifo/a.wal",
    ] {
        fifo(name);
    }
    too_large("large.itf.json", TRACE_MAX_BYTES);
    too_large("large.json", REPORT_MAX_BYTES);
    too_large("large.wal", CONNECTOR_MAX_BYTES);
    too_large("folder-large/a.wal", CONNECTOR_MAX_BYTES);
    device("zero.wal", "/dev/zero");
    device("urandom.wal", "/dev/urandom");
    device("folder-zero/a.wal", "/dev/zero");

    let mut cases: Vec<[&str; 2]> = Vec::new();
    for command in ["show", "replay"] {
        for trace in [
            "fifo.itf.json",
            "/dev/zero",
            "/dev/urandom",
            "large.itf.json",
        ] {
            cases.push([command, trace]);
        }
    }
    for report in ["fifo.json", "/dev/zero", "/dev/urandom", "large.json"] {
        cases.push(["merge", report]);
    }
    for connector in ["fifo.wal", "zero.wal", "urandom.wal", "large.wal"] {
        cases.push(["check", connector]);
    }
    for folder in ["folder-fifo", "folder-zero", "folder-large"] {
        cases.push(["check", folder]);
    }
    for args in cases {
        let output = walcheck_within(&args, dir.path(), std::time::Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{args:?} still ran after 30 s"));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("walcheck: error: cannot read ")
                && (stderr.contains(", not a regular file") || stderr.contains(", the most a ")),
            "{args:?}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}
