//! The Electric files (`connectors/electric-*.wal`) against the hand-written `electric-flush`
//! system: two independent models of Electric's shape-log write path, compared at every
//! configuration the files' mappings name — each variant a file covers, × the fault sets none,
//! consumer-kill, suspend and all, × `timer_order` realistic and any. A file states its
//! configuration in three variables (`kills_left`, `suspend_on`, `any_order`), which this test
//! sets in a copy of the file for each check.
//!
//! Mapped: every property and witness of `electric-flush` but the triage's, by the same id;
//! `eventually-acknowledged` against electric-flush's `traffic=steady` row (the only one that
//! checks it: the file's stream is finite, see the mapping). Not mapped: `traffic=steady`'s
//! endless unrelated transactions (a file's workload is at most six transactions), the four #4058
//! fixes (no file), and electric-flush's bounds other than their defaults
//! (`shapes`, `fragments`, `txns`, `inline_flush_lines`: the file's scripted workload is the
//! default one). The file's own built-in properties (`no-fatal-error`, `wal-pointers-ordered`)
//! have no counterpart and must hold.
//!
//! Counterexample lengths: the file's atomicity differs from electric-flush's in steps that
//! every counterexample of these configurations takes, so each is longer by exactly ten —
//! `start_replication`, T1's and T2's `Commit` and `CommitFlush` (PostgreSQL's, four), the
//! stream's receive of each transaction (two: electric-flush's `Publish` is the receive), and
//! the tracker's own step after each of the three fragments (part of the last `Deliver` there)
//! — and a keepalive is two steps here (the stream's receive, then the client's `keepalive`
//! step) where it is one there (`Keepalive`). Liveness counterexamples are not compared by
//! length: `eventually-acknowledged`'s lassos in electric-flush run on into its steady
//! unrelated traffic, the file's stutter once its finite stream is done; and the file's
//! `wal-retention-bounded` is the language's built-in, decided as liveness (a lasso), where
//! electric-flush's is its safety form (a path to a quiescent state): the same verdicts.

use std::fmt::Write as _;

/// The mapped properties a file decides as liveness: compared by verdict only.
const LIVENESS: [&str; 2] = ["eventually-acknowledged", "wal-retention-bounded"];

use serde_json::Value;

use crate::util::{walcheck, ROOT};

/// A mapped check's outcome: its verdict and its counterexample's length (steps, a lasso's
/// prefix and loop together), and for a file the keepalives its counterexample takes.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    verdict: String,
    steps: Option<u64>,
    keepalives: usize,
}

/// The properties and witnesses both models check, by id.
const MAPPED: &[&str] = &[
    "no-lost-flush-notification",
    "notified-offset-is-txn-boundary",
    "ack-within-flushed",
    "global-flush-monotone",
    "wal-retention-bounded",
    "eventually-acknowledged",
    "reach-timer-before-commit",
    "reach-hibernate-flush",
    "reach-inline-flush",
    "reach-multi-fragment-txn",
    "reach-two-shapes",
];

/// The file's own built-in properties with no counterpart in electric-flush: they must hold.
const FILE_ONLY: &[&str] = &["no-fatal-error", "wal-pointers-ordered"];

/// The fault sets, each as the file's `kills_left` and `suspend_on`.
const FAULTS: &[(&str, u8, bool)] = &[
    ("none", 0, false),
    ("consumer-kill", 1, false),
    ("suspend", 0, true),
    ("all", 1, true),
];

const ORDERS: &[&str] = &["realistic", "any"];

/// The files and the variant each models.
const FILES: &[(&str, &str)] = &[
    ("electric-v1.4.15", "v1.4.15"),
    ("electric-pr4064", "pr4064"),
    ("electric-head", "head"),
];

/// Differences between the two models that a mapping explains: none.
const EXPECTED_DIFFERENCES: &[(&str, &str, &str, &str)] = &[];

/// Where `--out DIR` wrote the trace a report names.
fn in_out(out: &std::path::Path, trace: &str) -> std::path::PathBuf {
    out.join(
        std::path::Path::new(trace)
            .file_name()
            .expect("a trace file"),
    )
}

fn check_json(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["check", "--json"];
    all.extend(args);
    let output = walcheck(&all);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        let stderr = String::from_utf8_lossy(&output.stderr);
        panic!("check {args:?} printed no JSON ({e}): {stderr}")
    });
    report["results"].as_array().expect("results").clone()
}

fn outcome(row: &Value, keepalives: usize) -> Outcome {
    Outcome {
        verdict: row["verdict"].as_str().expect("verdict").to_owned(),
        steps: row["trace_steps"].as_u64(),
        keepalives,
    }
}

/// The keepalive steps a counterexample takes (actions named `keepalive` in a file's,
/// `Keepalive` in electric-flush's).
fn keepalives_in(trace: &std::path::Path) -> usize {
    let Ok(bytes) = std::fs::read(trace) else {
        return 0;
    };
    let trace: Value = serde_json::from_slice(&bytes).expect("an ITF trace");
    trace["states"]
        .as_array()
        .expect("states")
        .iter()
        .filter(|s| {
            s["mbt::actionTaken"]
                .as_str()
                .is_some_and(|a| a.eq_ignore_ascii_case("keepalive"))
        })
        .count()
}

/// The file's text with its configuration variables set.
fn configured(text: &str, kills: u8, suspend: bool, any: bool) -> String {
    let set = |text: String, from: &str, to: String| {
        assert!(text.contains(from), "the file declares `{from}`");
        text.replace(from, &to)
    };
    let text = set(
        text.to_owned(),
        "volatile kills_left: 0..1 = 0",
        format!("volatile kills_left: 0..1 = {kills}"),
    );
    let text = set(
        text,
        "volatile suspend_on: bool = false",
        format!("volatile suspend_on: bool = {suspend}"),
    );
    set(
        text,
        "volatile any_order: bool = false",
        format!("volatile any_order: bool = {any}"),
    )
}

/// electric-flush's outcome of `property` at `faults` and `order`: the `traffic=finite` row, or
/// for `eventually-acknowledged` the `traffic=steady` one.
fn theirs(
    rows: &[Value],
    out: &std::path::Path,
    faults: &str,
    order: &str,
    property: &str,
) -> Option<Outcome> {
    let traffic = if property == "eventually-acknowledged" {
        "steady"
    } else {
        "finite"
    };
    rows.iter()
        .find(|r| {
            r["faults"] == faults
                && r["bounds"]["timer_order"] == order
                && r["property"] == property
                && r["configuration"]
                    .as_str()
                    .is_some_and(|c| c.ends_with(&format!("traffic={traffic}")))
        })
        .map(|r| {
            outcome(
                r,
                r["trace"]
                    .as_str()
                    .map_or(0, |t| keepalives_in(&in_out(out, t))),
            )
        })
}

#[test]
fn the_electric_files_agree_with_electric_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = String::new();
    let mut differences = Vec::new();
    for &(file, variant) in FILES {
        let text = std::fs::read_to_string(format!("{ROOT}/connectors/{file}.wal")).unwrap();
        let builtin_out = dir.path().join(variant);
        let builtin = check_json(&[
            &format!("electric-flush:{variant}"),
            "--out",
            builtin_out.to_str().unwrap(),
        ]);
        for &(faults, kills, suspend) in FAULTS {
            for &order in ORDERS {
                let name = format!("{file}-{faults}-{order}");
                let path = dir.path().join(format!("{name}.wal"));
                std::fs::write(&path, configured(&text, kills, suspend, order == "any")).unwrap();
                let out = dir.path().join(&name);
                let rows = check_json(&[path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
                let ours = |property: &str| {
                    rows.iter().find(|r| r["property"] == property).map(|r| {
                        let trace = r["trace"].as_str();
                        outcome(r, trace.map_or(0, |t| keepalives_in(&in_out(&out, t))))
                    })
                };
                let _ = writeln!(
                    table,
                    "{file} = electric-flush:{variant} faults={faults} timer_order={order}"
                );
                for &property in MAPPED {
                    let (mine, other) = (
                        ours(property),
                        theirs(&builtin, &builtin_out, faults, order, property),
                    );
                    let _ = writeln!(
                        table,
                        "  {property:34} file {mine:?}  electric-flush {other:?}"
                    );
                    let agree = match (&mine, &other) {
                        (Some(m), Some(o)) => {
                            m.verdict == o.verdict
                                && match (m.steps, o.steps) {
                                    (Some(a), Some(b)) => {
                                        LIVENESS.contains(&property)
                                            || a + o.keepalives as u64
                                                == b + 10 + 2 * m.keepalives as u64
                                    }
                                    (None, None) => true,
                                    _ => false,
                                }
                        }
                        _ => false,
                    };
                    let expected = EXPECTED_DIFFERENCES
                        .iter()
                        .any(|d| (d.0, d.1, d.2) == (file, faults, property) && d.3 == order);
                    if !agree && !expected {
                        differences.push(format!("{file} {faults} {order} {property}"));
                    }
                }
                for &property in FILE_ONLY {
                    let mine = ours(property);
                    let _ = writeln!(table, "  {property:34} file {mine:?}  (no counterpart)");
                    if mine.as_ref().map(|m| m.verdict.as_str()) != Some("holds") {
                        differences.push(format!("{file} {faults} {order} {property}"));
                    }
                }
            }
        }
    }
    assert!(
        differences.is_empty(),
        "differences no mapping explains: {differences:?}\n{table}"
    );
}
