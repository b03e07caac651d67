//! CI property runs as a CI job makes them: budgets that end in `inconclusive` and exit 3, shards
//! that cover the catalogue once and merge back into the unsharded report, the JUnit file checked
//! against the JUnit schema, and bad flags refused with exit 2.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use walcheck::catalogue::{self, Selection};
use walcheck::run;

use crate::util::{json, walcheck, walcheck_command, without_measurements};

/// The identity of a catalogue entry in a report row.
fn key(row: &Value) -> String {
    format!(
        "{} {} {} {} {}",
        row["system"], row["variant"], row["faults"], row["bounds"], row["property"]
    )
}

#[test]
fn shards_cover_the_catalogue_exactly_once() {
    let entries = catalogue::select(&Selection::default()).unwrap();
    let id = |e: &walcheck::catalogue::Entry| run::trace_file_name(e) + e.property.kind.name();
    let ids: Vec<String> = entries.iter().map(id).collect();
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "entries are told apart");
    for count in [1, 2, 3, 7, entries.len(), entries.len() + 5] {
        let mut seen = vec![0u32; entries.len()];
        for index in 1..=count {
            for entry in run::shard(entries.clone(), index, count) {
                seen[ids.iter().position(|i| *i == id(&entry)).unwrap()] += 1;
            }
        }
        assert!(seen.iter().all(|n| *n == 1), "{count} shards: {seen:?}");
    }
}

#[test]
fn sharded_reports_merge_into_the_unsharded_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces");
    let out = out.to_str().unwrap();
    let whole = walcheck(&["check", "--threads", "2", "--json", "--out", out]);
    assert_eq!(whole.status.code(), Some(0));
    let whole = json(&whole);
    assert!(whole["peak_rss_bytes"].as_u64().unwrap() > 0);

    let mut files = Vec::new();
    let mut covered: BTreeMap<String, u32> = BTreeMap::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let output = walcheck(&[
            "check",
            "--threads",
            "2",
            "--json",
            "--shard",
            shard,
            "--out",
            out,
        ]);
        assert_eq!(output.status.code(), Some(0), "shard {shard}");
        let report = json(&output);
        assert_eq!(report["shard"]["count"], 3);
        for row in report["results"].as_array().unwrap() {
            *covered.entry(key(row)).or_default() += 1;
        }
        let file = dir.path().join(format!("shard-{}.json", &shard[..1]));
        std::fs::write(&file, &output.stdout).unwrap();
        files.push(file.to_str().unwrap().to_owned());
    }
    let rows = whole["results"].as_array().unwrap();
    assert_eq!(covered.len(), rows.len());
    assert!(covered.values().all(|n| *n == 1));

    // Any order of the shard files gives the same report.
    let merged = walcheck(&["merge", &files[2], &files[0], &files[1]]);
    assert_eq!(
        merged.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(
        without_measurements(json(&merged)),
        without_measurements(whole)
    );

    // Not one run's shards: exit 2 with one line.
    for bad in [
        vec![files[0].as_str(), files[1].as_str()],
        vec![files[0].as_str(), files[0].as_str(), files[1].as_str()],
    ] {
        let mut args = vec!["merge"];
        args.extend(bad);
        let output = walcheck(&args);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.starts_with("walcheck: error: ") && stderr.lines().count() == 1);
    }
}

#[test]
fn sharded_swarm_reports_merge_into_the_unsharded_report() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = |shard: Option<&str>| {
        let mut args = vec![
            "simulate",
            "olake-bootstrap",
            "--ladder",
            "sync",
            "--seeds",
            "0..7",
            "--attempts",
            "5",
            "--json",
        ];
        if let Some(shard) = shard {
            args.extend(["--shard", shard]);
        }
        let output = walcheck(&args);
        assert_eq!(output.status.code(), Some(0), "{shard:?}");
        output
    };
    let without_elapsed = |mut v: Value| {
        v.as_object_mut().unwrap().remove("elapsed_ms");
        v
    };
    let whole = json(&swarm(None));
    let mut files = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let file = dir.path().join(format!("swarm-{}.json", &shard[..1]));
        std::fs::write(&file, swarm(Some(shard)).stdout).unwrap();
        files.push(file.to_str().unwrap().to_owned());
    }
    let merged = walcheck(&["merge", &files[1], &files[2], &files[0]]);
    assert_eq!(merged.status.code(), Some(0));
    assert_eq!(without_elapsed(json(&merged)), without_elapsed(whole));

    // --shard needs a swarm; a check report and a swarm report do not merge.
    let output = walcheck(&[
        "simulate",
        "olake-bootstrap",
        "--ladder",
        "sync",
        "--shard",
        "1/3",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let check = dir.path().join("check.json");
    let report = walcheck(&[
        "check",
        "olake-bootstrap:pr1084",
        "--json",
        "--shard",
        "2/3",
        "--out",
        dir.path().join("traces").to_str().unwrap(),
    ]);
    std::fs::write(&check, report.stdout).unwrap();
    let output = walcheck(&["merge", &files[0], check.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));

    // A swarm shard with a seed's row removed, or a row from another place, does not merge.
    let shard2: Value = serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    let mut short = shard2.clone();
    short["results"].as_array_mut().unwrap().remove(0);
    let mut moved = shard2;
    moved["results"][0]["seed"] = 0.into();
    for (report, says) in [
        (
            short,
            "shard 2/3 has 1 results, not the 2 of seeds 0..7 it runs",
        ),
        (moved, "results[0] has seed 0, not 1"),
    ] {
        let file = dir.path().join("doctored.json");
        std::fs::write(&file, report.to_string()).unwrap();
        let output = walcheck(&["merge", &files[0], file.to_str().unwrap(), &files[2]]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.lines().count() == 1 && stderr.contains(says),
            "{stderr}"
        );
        assert!(stderr.contains("doctored.json: "), "{stderr}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_small_state_budget_is_inconclusive_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(&[
        "check",
        "--max-states",
        "1000",
        "--threads",
        "2",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3));
    let report = json(&output);
    let rows = report["results"].as_array().unwrap();
    let inconclusive: Vec<&Value> = rows
        .iter()
        .filter(|r| r["verdict"] == "inconclusive")
        .collect();
    assert!(!inconclusive.is_empty());
    for row in inconclusive {
        // The states reached are reported; the budget held.
        assert_eq!(row["unique_states"], 1000);
        assert!(row["states"].as_u64().unwrap() >= 1000);
        assert_eq!(row["trace"], Value::Null);
    }
    assert!(report["peak_rss_bytes"].as_u64().unwrap() > 0);
}

/// The text of a run a budget stopped names the budget (states, time, memory) and the checks
/// it left inconclusive, and the summary counts them as such.
#[test]
fn a_budget_that_runs_out_is_named_with_the_checks_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let states = walcheck(&[
        "check",
        "olake-bootstrap:master",
        "--faults",
        "none",
        "--bound",
        "server=primary",
        "--max-states",
        "10",
        "--out",
        out,
    ]);
    assert_eq!(states.status.code(), Some(3));
    let text = String::from_utf8(states.stdout).unwrap();
    let stopped: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("inconclusive: "))
        .collect();
    assert!(!stopped.is_empty(), "{text}");
    for line in &stopped {
        assert!(line.starts_with("inconclusive: olake-bootstrap:master faults=none"));
        let (_, checks) = line
            .split_once(": the state budget (--max-states) ran out first: ")
            .unwrap_or_else(|| panic!("{line}"));
        let (count, ids) = checks.split_once(" stopped: ").unwrap();
        let ids: Vec<&str> = ids.split(", ").collect();
        assert_eq!(
            count,
            format!(
                "{} check{}",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" }
            )
        );
    }
    assert!(
        text.contains("inconclusive (a budget ran out first, as said above); "),
        "{text}"
    );
    let time = walcheck(&[
        "check",
        "olake-bootstrap",
        "--faults",
        "all",
        "--bound",
        "statements=6",
        "--timeout",
        "0.2",
        "--out",
        out,
    ]);
    assert_eq!(time.status.code(), Some(3));
    let text = String::from_utf8(time.stdout).unwrap();
    assert!(
        text.contains(": the time budget (--timeout) ran out first: "),
        "{text}"
    );
}

#[test]
fn a_timeout_returns_soon_after_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = walcheck(&[
        "check",
        "olake-bootstrap",
        "--faults",
        "all",
        "--bound",
        "statements=6",
        "--timeout",
        "1",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(3));
    // The limit is 1 s; the acceptance allows 2 s more for everything after it (process start,
    // the searches noticing the deadline, writing the report).
    assert!(
        elapsed < Duration::from_secs(3),
        "returned after {elapsed:?}"
    );
    assert!(json(&output)["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["verdict"] == "inconclusive"));
}

/// The counterexamples written under `out` so far (not the temporary files they are written
/// through), by file name.
fn traces_in(out: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(out)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|name| !name.starts_with('.') && name.ends_with(".itf.json"))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits for `child` until `deadline`, polling `ready` (which is told whether the child has
/// ended); panics naming `what` should the deadline pass first, once the child is killed.
fn wait_for(
    child: &mut std::process::Child,
    deadline: Instant,
    what: &str,
    mut ready: impl FnMut(bool) -> bool,
) {
    loop {
        let ended = child.try_wait().unwrap().is_some();
        if ready(ended) {
            return;
        }
        if ended || Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: not by the deadline, or the run ended first");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `check --json --junit F --out DIR`, interrupted by SIGINT or SIGTERM once its first search
/// has written a counterexample and while a long one runs, with either engine: exit 130; on
/// stdout the report of the checks decided, with their verdicts, the rest inconclusive with the
/// limit `interrupted`; the JUnit file of that report; the decided counterexamples in DIR; one
/// line on stderr. Until the run ends, the JUnit file (or the file a link there names) is not
/// an earlier run's report but one `<error>` saying that the run did not finish, which is what
/// a run killed outright leaves.
#[test]
fn an_interrupted_check_reports_what_it_decided_and_exits_130() {
    for (signal, engine) in [
        ("INT", "compact"),
        ("TERM", "compact"),
        ("INT", "reference"),
    ] {
        let case = format!("SIG{signal}, --engine {engine}");
        let dir = tempfile::tempdir().unwrap();
        let (junit, out) = (dir.path().join("walcheck.xml"), dir.path().join("traces"));
        let earlier = "<testsuites name='walcheck check' tests='0'/>";
        if signal == "TERM" {
            // A link to the report file, as a CI job's workspace may give: written through.
            let target = dir.path().join("report.xml");
            std::fs::write(&target, earlier).unwrap();
            std::os::unix::fs::symlink(&target, &junit).unwrap();
        } else {
            std::fs::write(&junit, earlier).unwrap();
        }
        let file = |name: &str| std::fs::File::create(dir.path().join(name)).unwrap();
        // The first configuration (faults none) takes seconds, the last (faults all) minutes.
        let mut child = walcheck_command(&["check", "olake-bootstrap:master"])
            .args(["--bound", "statements=6"])
            .args(["--bound", "syncs=4", "--bound", "crashes=2", "--bound"])
            .args(["server=primary", "--engine", engine, "--json", "--junit"])
            .args([junit.as_os_str(), "--out".as_ref(), out.as_os_str()])
            .stdout(file("stdout"))
            .stderr(file("stderr"))
            .spawn()
            .expect("the binary runs");
        let deadline = Instant::now() + Duration::from_secs(600);
        wait_for(&mut child, deadline, "a first trace", |_| {
            !traces_in(&out).is_empty()
        });
        let placeholder = std::fs::read_to_string(&junit).unwrap();
        validate_junit(&placeholder).unwrap();
        assert!(
            placeholder.contains("type=\"run-not-finished\""),
            "{case}: {placeholder}"
        );

        let kill = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status();
        assert!(kill.expect("kill runs").success());
        wait_for(&mut child, deadline, "the end of the run", |ended| ended);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{case}");

        let stdout = std::fs::read(dir.path().join("stdout")).unwrap();
        let report: Value = serde_json::from_slice(&stdout).expect("the report is JSON");
        let rows = report["results"].as_array().unwrap();
        let stopped: Vec<&Value> = rows
            .iter()
            .filter(|r| r["limit"] == "interrupted")
            .collect();
        assert!(!stopped.is_empty() && stopped.len() < rows.len(), "{case}");
        assert!(
            stopped.iter().all(|r| r["verdict"] == "inconclusive"),
            "{case}"
        );
        let mut written = std::collections::BTreeSet::new();
        for row in rows.iter().filter(|r| r["limit"] != "interrupted") {
            assert_eq!(row["verdict"], row["expected"], "{case}: {row}");
            if let Some(trace) = row["trace"].as_str() {
                written.insert(
                    Path::new(trace)
                        .file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_owned(),
                );
            }
        }
        assert!(!written.is_empty(), "{case}");
        assert_eq!(traces_in(&out), written, "{case}");

        let xml = std::fs::read_to_string(&junit).unwrap();
        validate_junit(&xml).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let cases = doc.descendants().filter(|n| n.has_tag_name("testcase"));
        assert_eq!(cases.count(), rows.len(), "{case}");
        let skipped: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("skipped"))
            .collect();
        assert_eq!(skipped.len(), stopped.len(), "{case}");
        let message = skipped[0].attribute("message").unwrap();
        assert!(
            message.starts_with("inconclusive: the run was interrupted (SIGINT or SIGTERM) after "),
            "{case}: {message}"
        );

        let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
        let line = format!(
            "walcheck: interrupted: {} of {} checks stopped inconclusive; the report gives the \
             other {}\n",
            stopped.len(),
            rows.len(),
            rows.len() - stopped.len()
        );
        assert_eq!(stderr, line, "{case}");
    }
}

#[test]
fn bad_ci_flags_are_exit_2() {
    for args in [
        &["check", "--shard", "0/3"][..],
        &["check", "--shard", "4/3"],
        &["check", "--shard", "1/0"],
        &["check", "--shard", "1"],
        &["check", "--shard", "-1/3"],
        &["check", "--timeout", "-1"],
        &["check", "--timeout", "nan"],
        &["merge"],
        &["merge", "no-such-report.json"],
        &["explore", "electric-flush", "--addr", "0.0.0.0:3000"],
        &["explore", "electric-flush", "--addr", "127.0.0.1:0"],
        &["explore", "electric-flush", "--addr", "not an address"],
        &["explore", "no-such-system"],
    ] {
        let output = walcheck(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.starts_with("walcheck: error: ") && stderr.lines().count() == 1,
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn no_progress_lines_off_a_terminal() {
    // The tests' stdout is a pipe: progress lines would go nowhere, so there are none.
    let dir = tempfile::tempdir().unwrap();
    let output = walcheck(&[
        "check",
        "olake-bootstrap:pr1084",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert!(!String::from_utf8(output.stdout)
        .unwrap()
        .contains("states/s"));
}

/// The JUnit XML schema CI tools read: Jenkins xunit-plugin's `junit-10.xsd` (Surefire's format,
/// which GitLab and the GitHub JUnit reporters also take), as data: each element with the
/// elements it may appear under, its required and its optional attributes. Elements walcheck
/// never writes (`properties`, `system-out`, reruns) are left out, so they fail too.
struct Rule {
    element: &'static str,
    parents: &'static [&'static str],
    required: &'static [&'static str],
    optional: &'static [&'static str],
}

const JUNIT_SCHEMA: &[Rule] = &[
    Rule {
        element: "testsuites",
        parents: &[],
        required: &[],
        optional: &["name", "time", "tests", "failures", "errors"],
    },
    Rule {
        element: "testsuite",
        parents: &["testsuites", "testsuite"],
        required: &["name", "tests", "failures", "errors"],
        optional: &[
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        ],
    },
    Rule {
        element: "testcase",
        parents: &["testsuite"],
        required: &["name"],
        optional: &["time", "classname", "group"],
    },
    Rule {
        element: "failure",
        parents: &["testcase"],
        required: &[],
        optional: &["type", "message"],
    },
    Rule {
        element: "skipped",
        parents: &["testcase"],
        required: &[],
        optional: &["type", "message"],
    },
    Rule {
        element: "error",
        parents: &["testcase"],
        required: &[],
        optional: &["type", "message"],
    },
];

/// Attributes walcheck writes as counts (the schema types them as strings; consumers parse them).
const COUNTS: &[&str] = &["tests", "failures", "errors", "skipped"];

/// The schema's `SUREFIRE_TIME` on suites (digits, optional thousands commas, an optional
/// fraction); walcheck writes plain decimals, which is what this accepts.
fn surefire_time(v: &str) -> bool {
    let (whole, fraction) = v.split_once('.').unwrap_or((v, ""));
    whole.bytes().all(|b| b.is_ascii_digit()) && fraction.bytes().all(|b| b.is_ascii_digit())
}

/// Checks `xml` against [`JUNIT_SCHEMA`]: well-formed, only known elements under their parents,
/// required attributes present, no unknown ones, counts whole numbers, times decimals, and each
/// suite's counts equal to its test cases.
fn validate_junit(xml: &str) -> Result<(), String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("not XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "testsuites" {
        return Err(format!("root is <{}>", root.tag_name().name()));
    }
    for node in root.descendants().filter(|n| n.is_element()) {
        let name = node.tag_name().name();
        let rule = JUNIT_SCHEMA
            .iter()
            .find(|r| r.element == name)
            .ok_or_else(|| format!("unknown element <{name}>"))?;
        let parent = node.parent_element().map(|p| p.tag_name().name());
        match parent {
            None if rule.parents.is_empty() => {}
            Some(p) if rule.parents.contains(&p) => {}
            _ => return Err(format!("<{name}> under {parent:?}")),
        }
        for required in rule.required {
            if node.attribute(*required).is_none() {
                return Err(format!("<{name}> lacks {required}"));
            }
        }
        for attribute in node.attributes() {
            let a = attribute.name();
            if !rule.required.contains(&a) && !rule.optional.contains(&a) {
                return Err(format!("<{name}> has unknown attribute {a}"));
            }
            let v = attribute.value();
            if COUNTS.contains(&a) && v.parse::<u64>().is_err() {
                return Err(format!("<{name} {a}={v:?}> is not a whole number"));
            }
            if a == "time" && name != "testcase" && !surefire_time(v) {
                return Err(format!("<{name} time={v:?}> is not a SUREFIRE_TIME"));
            }
            if a == "time" && !v.parse::<f64>().is_ok_and(|t| t.is_finite() && t >= 0.0) {
                return Err(format!("<{name} time={v:?}> is not a decimal"));
            }
        }
        if name == "testsuite" || name == "testsuites" {
            let cases: Vec<_> = node
                .descendants()
                .filter(|n| n.has_tag_name("testcase"))
                .collect();
            let with = |child: &str| {
                cases
                    .iter()
                    .filter(|c| c.children().any(|n| n.has_tag_name(child)))
                    .count()
                    .to_string()
            };
            for (attribute, count) in [
                ("tests", cases.len().to_string()),
                ("failures", with("failure")),
                ("errors", with("error")),
                ("skipped", with("skipped")),
            ] {
                if node.attribute(attribute).is_some_and(|v| v != count) {
                    return Err(format!(
                        "<{name}> says {attribute}={v:?}, has {count}",
                        v = node.attribute(attribute)
                    ));
                }
            }
        }
        if name == "testcase"
            && node
                .children()
                .filter(|n| {
                    n.has_tag_name("failure")
                        || n.has_tag_name("skipped")
                        || n.has_tag_name("error")
                })
                .count()
                > 1
        {
            return Err("a testcase has more than one of failure, error and skipped".into());
        }
    }
    Ok(())
}

/// `walcheck check olake-bootstrap:master FLAGS --junit JUNIT --out OUT`: its output, and the
/// JUnit file it wrote, checked against the schema.
fn master_with_junit(flags: &[&str], junit: &Path, out: &Path) -> (Output, String) {
    let paths = [
        "--junit",
        junit.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let output = walcheck(&[&["check", "olake-bootstrap:master"], flags, &paths].concat());
    let xml = std::fs::read_to_string(junit).unwrap();
    validate_junit(&xml).unwrap();
    (output, xml)
}

/// A counterexample whose trace cannot be written (here a directory stands where its file goes)
/// is an `<error>` of the JUnit file, counted in `errors`, as the run exits 2; the other
/// counterexamples are written.
#[test]
fn a_trace_not_written_is_a_junit_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces");
    let blocked = out.join("olake-bootstrap__master__all__no-lsn-mismatch.itf.json");
    std::fs::create_dir_all(&blocked).unwrap();
    let junit = dir.path().join("walcheck.xml");
    let (output, xml) = master_with_junit(&[], &junit, &out);
    assert_eq!(output.status.code(), Some(2));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().attribute("errors"), Some("1"));
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    let error = doc
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .expect("an error");
    assert_eq!(
        error.parent_element().unwrap().attribute("name"),
        Some("master/all/no-lsn-mismatch")
    );
    assert_eq!(error.attribute("type"), Some("trace-not-written"));
    let message = error.attribute("message").unwrap();
    assert!(
        message.starts_with("cannot write trace ")
            && message.ends_with("Is a directory (os error 21)"),
        "{message}"
    );
    let written = std::fs::read_dir(&out).unwrap().count();
    assert_eq!(
        written, 14,
        "the 13 other counterexamples are written beside the directory"
    );
    // The suite's time counts each of the 8 searches once, not once per testcase.
    let seconds = |n: roxmltree::Node| n.attribute("time").unwrap().parse::<f64>().unwrap();
    let per_case: f64 = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(seconds)
        .sum();
    let suites = seconds(doc.root_element());
    assert!(suites < per_case / 2.0, "{suites} {per_case}");

    // Two traces not written: the error line says how many more.
    let second = out.join("olake-bootstrap__master__none__no-lsn-mismatch.itf.json");
    std::fs::remove_file(&second).unwrap();
    std::fs::create_dir(&second).unwrap();
    let (output, _) = master_with_junit(&[], &junit, &out);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.ends_with(" (and 1 more traces not written)\n"),
        "{stderr}"
    );
    std::fs::remove_dir(&second).unwrap();

    // With --strict the violation is a failure; its text says the trace was not written.
    let (output, xml) = master_with_junit(&["--strict"], &junit, &out);
    assert_eq!(output.status.code(), Some(2));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().attribute("errors"), Some("0"));
    let text = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .filter_map(|n| n.text())
        .find(|t| t.contains("no-lsn-mismatch on olake-bootstrap:master faults=all"))
        .expect("the blocked entry's failure");
    assert!(
        text.contains("trace: not written: cannot write trace "),
        "{text}"
    );
}

/// A control character in the `--out` path, which reaches the JUnit file through the error of a
/// trace not written, is replaced there: the file stays well-formed XML.
#[test]
fn a_control_character_in_a_path_keeps_the_junit_file_xml() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o\u{1b}x");
    std::fs::create_dir_all(out.join("olake-bootstrap__master__all__no-lsn-mismatch.itf.json"))
        .unwrap();
    let junit = dir.path().join("walcheck.xml");
    let (output, xml) = master_with_junit(&[], &junit, &out);
    assert_eq!(output.status.code(), Some(2));
    assert!(xml.contains("o\u{fffd}x"));
}

#[test]
fn the_junit_file_validates_with_a_testcase_per_entry() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("walcheck.xml");
    let output = walcheck(&[
        "check",
        "--max-states",
        "1000",
        "--junit",
        junit.to_str().unwrap(),
        "--out",
        dir.path().join("traces").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(3));
    let xml = std::fs::read_to_string(&junit).unwrap();
    validate_junit(&xml).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let entries = catalogue::select(&Selection::default()).unwrap();
    assert_eq!(cases.len(), entries.len());
    let names: std::collections::BTreeSet<(&str, &str)> = cases
        .iter()
        .map(|c| {
            (
                c.attribute("classname").unwrap(),
                c.attribute("name").unwrap(),
            )
        })
        .collect();
    assert_eq!(names.len(), cases.len(), "testcase names are unique");
    // A skipped case names the budget that ran out.
    let skipped = cases
        .iter()
        .flat_map(|c| c.children())
        .find(|n| n.has_tag_name("skipped"))
        .expect("a skipped testcase");
    let message = skipped.attribute("message").unwrap();
    assert!(
        message.starts_with("inconclusive: the state budget (--max-states) ran out after "),
        "{message}"
    );

    // --strict turns every violation into a failure naming the mismatch and the trace.
    let strict = dir.path().join("strict.xml");
    let output = walcheck(&[
        "check",
        "electric-flush:v1.4.15",
        "--faults",
        "none",
        "--strict",
        "--junit",
        strict.to_str().unwrap(),
        "--out",
        dir.path().join("traces").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let xml = std::fs::read_to_string(&strict).unwrap();
    validate_junit(&xml).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("a failure");
    let text = failure.text().unwrap();
    assert!(
        text.contains("verdict violated, expected violated"),
        "{text}"
    );
    let trace = text
        .lines()
        .find_map(|l| l.strip_prefix("trace: "))
        .and_then(|l| l.split(' ').next())
        .unwrap();
    assert!(std::path::Path::new(trace).is_file(), "{text}");

    // The validator itself rejects what consumers reject.
    assert!(validate_junit(
        "<testsuites><testsuite name='s' tests='1' failures='0' errors='0'>\
         <testcase name='x'><error/></testcase></testsuite></testsuites>"
    )
    .is_err());
    assert!(validate_junit("<testsuites><testcase name='x'/></testsuites>").is_err());
    assert!(validate_junit(
        "<testsuites><testsuite name='s' tests='2'><testcase name='x'/></testsuite></testsuites>"
    )
    .is_err());
    assert!(validate_junit(
        "<testsuites><testsuite name='s' tests='1'><testcase/></testsuite></testsuites>"
    )
    .is_err());
}

/// Each shard report names its run (`shard.selection`, `shard.strict`): `merge` refuses shards of
/// different selections or strictness, and fails a merged `--strict` run on any violation, as the
/// unsharded `--strict` run does.
#[test]
fn merge_joins_only_one_runs_shards_and_keeps_its_strictness() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces");
    let out = out.to_str().unwrap();
    let run = |name: &str, args: &[&str]| -> (Option<i32>, String) {
        let mut all = vec!["check", "--json", "--out", out];
        all.extend(args);
        let output = walcheck(&all);
        let file = dir.path().join(name);
        std::fs::write(&file, &output.stdout).unwrap();
        (output.status.code(), file.to_str().unwrap().to_owned())
    };
    let (_, master1) = run("m1.json", &["olake-bootstrap:master", "--shard", "1/2"]);
    let (_, master2) = run("m2.json", &["olake-bootstrap:master", "--shard", "2/2"]);
    let (_, pr854_2) = run("p2.json", &["olake-bootstrap:pr854", "--shard", "2/2"]);
    let reference = [
        "olake-bootstrap:master",
        "--engine",
        "reference",
        "--max-memory",
    ];
    let (_, reference2) = run(
        "r2.json",
        &[&reference[..], &["9000000", "--shard", "2/2"]].concat(),
    );
    let shard: Value =
        serde_json::from_str(&std::fs::read_to_string(&reference2).unwrap()).unwrap();
    assert_eq!(
        shard["shard"]["selection"],
        "olake-bootstrap:master --engine reference --max-memory 9000000"
    );
    let strict = ["olake-bootstrap:master", "--strict", "--shard"];
    let (code1, strict1) = run("s1.json", &[&strict[..], &["1/2"]].concat());
    let (_, strict2) = run("s2.json", &[&strict[..], &["2/2"]].concat());
    assert_eq!(code1, Some(1), "master violates: --strict fails the shard");
    let shard: Value = serde_json::from_str(&std::fs::read_to_string(&strict1).unwrap()).unwrap();
    assert_eq!(shard["shard"]["selection"], "olake-bootstrap:master");
    assert_eq!(shard["shard"]["strict"], true);

    assert_eq!(
        walcheck(&["merge", &master1, &master2]).status.code(),
        Some(0)
    );
    assert_eq!(
        walcheck(&["merge", &strict2, &strict1]).status.code(),
        Some(1)
    );
    for (a, b, what) in [
        (&master1, &pr854_2, "selection"),
        (&master1, &reference2, "selection"),
        (&strict1, &master2, "strict"),
    ] {
        let output = walcheck(&["merge", a, b]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.lines().count() == 1 && stderr.contains(&format!("shard {what}")),
            "{stderr}"
        );
        assert!(stderr.contains("not the same run"), "{stderr}");
    }
}

/// Each check shard report says how many entries it holds and the whole selection holds
/// (`shard.entries`, `shard.selection_entries`): `merge` joins rows by position, so it refuses a
/// shard with a row removed or added, a count edited, or a row it could not read back, with one
/// line naming the file and exit 2.
#[test]
fn merge_refuses_incomplete_or_doctored_shards() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces");
    let mut shards = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let output = walcheck(&[
            "check",
            "olake-bootstrap:master",
            "--json",
            "--shard",
            shard,
            "--out",
            out.to_str().unwrap(),
        ]);
        shards.push(json(&output));
    }
    let whole = walcheck(&[
        "check",
        "olake-bootstrap:master",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let total = json(&whole)["results"].as_array().unwrap().len();
    assert!(total >= 6, "{total} entries");
    for (i, shard) in shards.iter().enumerate() {
        let held = shard["results"].as_array().unwrap().len();
        assert_eq!(shard["shard"]["entries"], held, "shard {}", i + 1);
        assert_eq!(shard["shard"]["selection_entries"], total);
    }
    let merge = |third: &Value| {
        let mut files = Vec::new();
        for (i, report) in [&shards[0], &shards[1], third].into_iter().enumerate() {
            let file = dir.path().join(format!("shard-{}.json", i + 1));
            std::fs::write(&file, report.to_string()).unwrap();
            files.push(file.to_str().unwrap().to_owned());
        }
        walcheck(&["merge", &files[0], &files[1], &files[2]])
    };
    assert_eq!(merge(&shards[2]).status.code(), Some(0));

    let third = shards[2]["results"].as_array().unwrap().len();
    let edited = |edit: &dyn Fn(&mut Value)| {
        let mut report = shards[2].clone();
        edit(&mut report);
        report
    };
    let cases = [
        (
            edited(&|r| drop(r["results"].as_array_mut().unwrap().remove(1))),
            format!(
                "shard 3/3 has {} results, not the {third} entries it holds",
                third - 1
            ),
        ),
        (
            edited(&|r| {
                let row = r["results"][0].clone();
                r["results"].as_array_mut().unwrap().push(row);
            }),
            format!(
                "shard 3/3 has {} results, not the {third} entries it holds",
                third + 1
            ),
        ),
        (
            edited(&|r| r["shard"]["entries"] = (third - 1).into()),
            format!("its shard says it holds {} entries, but shard 3/3 of {total} entries holds {third}", third - 1),
        ),
        (
            edited(&|r| drop(r["shard"].as_object_mut().unwrap().remove("entries"))),
            "its shard has no whole entries count".to_owned(),
        ),
        (
            edited(&|r| r["shard"]["selection_entries"] = (total + 1).into()),
            "its shard selection_entries".to_owned(),
        ),
        (
            edited(&|r| r["results"][1]["verdict"] = "bogus".into()),
            r#"results[1] has verdict "bogus", not one of holds, violated, inconclusive"#
                .to_owned(),
        ),
        (
            edited(&|r| r["results"][0]["expected"] = "inconclusive".into()),
            r#"results[0] has expected "inconclusive", not one of holds, violated"#.to_owned(),
        ),
        (
            edited(&|r| r["results"][0]["states"] = (-4).into()),
            "results[0] has states -4, not a whole number from 0".to_owned(),
        ),
        (
            edited(&|r| r["results"][0]["trace_steps"] = 1.5.into()),
            "results[0] has trace_steps 1.5, not a whole number from 0 or null".to_owned(),
        ),
        (
            edited(&|r| drop(r["results"][0].as_object_mut().unwrap().remove("property"))),
            "results[0] has property null, not a string".to_owned(),
        ),
        (
            edited(&|r| r["results"][0] = "row".into()),
            "results[0] is not an object".to_owned(),
        ),
    ];
    for (report, says) in cases {
        let output = merge(&report);
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{says}: {stderr}");
        assert!(output.stdout.is_empty(), "{says}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("walcheck: error: ") && stderr.contains("shard-3.json: "),
            "{stderr}"
        );
        assert!(stderr.contains(&says), "{says}: {stderr}");
    }
}
