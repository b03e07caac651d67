//! The trees of the example files under `connectors/`, pinned as outlines in
//! `tests/golden/NAME.outline` (each statement's line, kind, label and text). A parser change
//! that moves a statement, a span or a nesting shows up here. `WALCHECK_BLESS=1` rewrites them.

use std::fs;
use std::path::Path;

use crate::common::{connectors_dir, wal_files};

#[test]
fn example_trees_match_their_golden_outlines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = wal_files(&connectors_dir());
    let bless = std::env::var_os("WALCHECK_BLESS").is_some();
    let mut differ = Vec::new();
    for path in paths {
        let source = fs::read_to_string(&path).unwrap();
        let file = walcheck_lang::parse(&source).unwrap();
        let got = walcheck_lang::outline::outline(&file, &source);
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let golden = root.join("tests/golden").join(format!("{stem}.outline"));
        if fs::read_to_string(&golden).unwrap_or_default() != got {
            if bless {
                fs::write(&golden, &got).unwrap();
            } else {
                differ.push(format!("{stem}:\n{got}"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "outlines differ (WALCHECK_BLESS=1 rewrites):\n{}",
        differ.join("\n")
    );
}

/// A statement's span is its own text: from its first word to its last token, never the
/// comment after it.
#[test]
fn statement_spans_stop_before_comments() {
    let source = "walcheck 1\nvolatile w0: lsn = none\nevery run {\n  w0 = pg_current_wal_lsn()   # the write pointer\n}\n";
    let file = walcheck_lang::parse(source).unwrap();
    let run = file.procedures().next().unwrap();
    assert_eq!(
        run.body.stmts[0].span.text(source),
        "w0 = pg_current_wal_lsn()"
    );
}

/// The steps of OLake's master bootstrap as a counterexample will name them, with their
/// fairness: the same four connector steps as `olake-bootstrap`'s ReadSlot, SeedState, Advance
/// and Validate.
#[test]
fn steps_are_named_by_label_or_line_and_text() {
    let source = fs::read_to_string(connectors_dir().join("olake-bootstrap-master.wal")).unwrap();
    let file = walcheck_lang::parse(&source).unwrap();
    let names: Vec<String> = walcheck_lang::steps::steps(&file)
        .iter()
        .map(|s| s.name(&source))
        .collect();
    assert_eq!(names, ["read_slot", "seed", "advance", "validate"]);
    let source = "walcheck 1\nevery run {\n  start_replication(0/0)\n  for each message m {   # the stream\n    unfair ack: standby_status_update(flush = m.wal_end)\n  }\n}\n";
    let file = walcheck_lang::parse(source).unwrap();
    let steps = walcheck_lang::steps::steps(&file);
    let named: Vec<(String, bool, bool)> = steps
        .iter()
        .map(|s| (s.name(source), s.fair, s.receives()))
        .collect();
    assert_eq!(
        named,
        [
            ("3: start_replication(0/0)".to_string(), true, false),
            ("4: for each message m".to_string(), true, true),
            ("ack".to_string(), false, false),
        ]
    );
}
