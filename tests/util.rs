//! What the test modules share: the binaries run as subprocesses and their JSON reports, catalogue
//! entries by spec, a checker's counterexample, Chromium for the browser tests, the Rust files of
//! a folder.

use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;
use stateright::Model;
use walcheck::catalogue::{self, Entry, Selection};
use walcheck::reference;
use walcheck::run::{self, CheckResult};
use walcheck::search::{Budget, Path as SearchPath, Verdict};

/// The root package's folder, the repository root: where the tests run the binaries.
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The `walcheck` binary with `args`, to run in the repository root.
pub fn walcheck_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_walcheck"));
    command.args(args).current_dir(ROOT);
    command
}

/// `walcheck ARGS`, run to its end in the repository root.
pub fn walcheck(args: &[&str]) -> Output {
    walcheck_command(args).output().expect("walcheck runs")
}

/// A run's stdout, as UTF-8.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// A run's stdout read as JSON.
pub fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        let stderr = String::from_utf8_lossy(&output.stderr);
        panic!("the output is no JSON ({e}): {stderr}")
    })
}

/// The per-result keys of a check report that are measurements of the run, not outcomes.
pub const MEASUREMENTS: [&str; 4] = [
    "elapsed_ms",
    "states_per_s",
    "peak_heap_bytes",
    "bytes_per_state",
];

/// A check report without what it measured (timings, memory): what two runs of the same checks
/// agree on to the byte.
pub fn without_measurements(mut report: Value) -> Value {
    report.as_object_mut().unwrap().remove("peak_rss_bytes");
    for row in report["results"].as_array_mut().unwrap() {
        for key in MEASUREMENTS {
            row.as_object_mut().unwrap().remove(key);
        }
    }
    report
}

/// The catalogue entries of `specs` with the fault sets of `faults` (all without) and `bounds`.
pub fn select(specs: &[&str], faults: Option<&str>, bounds: &[&str]) -> Vec<Entry> {
    catalogue::select(&Selection {
        specs: specs.iter().map(|s| (*s).to_owned()).collect(),
        faults: faults.map(str::to_owned),
        bounds: bounds.iter().map(|b| (*b).to_owned()).collect(),
    })
    .unwrap()
}

/// The catalogue entries of `spec` with every fault set, checked on 2 threads, each verdict
/// asserted to be the one its expectation table gives.
pub fn checked_as_expected(spec: &str) -> Vec<CheckResult> {
    let results = run::run_all::<()>(&select(&[spec], None, &[]), 2, &Budget::default());
    for r in &results {
        assert_eq!(
            r.verdict,
            r.entry.expected,
            "{}:{} faults={} {:?}: {} ({})",
            r.entry.system(),
            r.entry.config.variant(),
            r.entry.config.faults(),
            r.entry.config.non_default_bounds(),
            r.entry.property.id,
            r.entry.reason
        );
    }
    results
}

/// The counterexample the checker finds to `property` of `model`, which must be violated.
pub fn counterexample<M>(model: &M, property: &str) -> SearchPath<M::State, M::Action>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone,
{
    let found = model
        .properties()
        .into_iter()
        .find(|p| p.name == property)
        .unwrap_or_else(|| panic!("no property {property}"));
    let outcome = reference::check(model, &found, &Budget::default()).unwrap();
    assert_eq!(outcome.verdict, Verdict::Violated, "{property}");
    outcome.path.unwrap()
}

/// The example crate's binary (`examples/textbook-connector`), built once for all the tests that
/// run it; cargo names its path.
///
/// It is built as `cargo test --workspace` builds the rest: every package of the workspace with its
/// tests. That selection resolves the dependencies' features as the test build did, so the
/// build finds every library already compiled and only links the example; `-p
/// textbook-connector` alone resolves them without the dev-dependencies' features and compiled
/// a second copy of walcheck and much of what it depends on, minutes of every cold test run.
pub fn textbook_connector() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let output = Command::new(env!("CARGO"))
            .args(["build", "-q", "--workspace", "--tests"])
            .args(["--bin", "textbook-connector", "--message-format=json"])
            .current_dir(ROOT)
            .output()
            .expect("cargo runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "cargo build failed: {stderr}");
        String::from_utf8(output.stdout)
            .expect("cargo's messages are UTF-8")
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            // The binary itself, not its unit tests' harness (`--tests` builds both).
            .filter(|message| {
                message["target"]["name"] == "textbook-connector"
                    && message["profile"]["test"] == false
            })
            .find_map(|message| message["executable"].as_str().map(PathBuf::from))
            .expect("cargo reports the example's executable")
    })
}

/// Chromium (`WALCHECK_CHROMIUM`, else `chromium` on PATH), or `Err` saying it is missing; with
/// `WALCHECK_REQUIRE_BROWSER=1` a missing one fails the test instead.
pub fn chromium() -> Result<PathBuf, String> {
    let chromium = std::env::var_os("WALCHECK_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"));
    let found = Command::new(&chromium)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if found {
        Ok(chromium)
    } else {
        Err(missing(format!("no Chromium ({})", chromium.display())))
    }
}

/// `why` a browser test cannot run, after failing where `WALCHECK_REQUIRE_BROWSER=1` requires it.
pub fn missing(why: String) -> String {
    let required = std::env::var("WALCHECK_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    assert!(!required, "WALCHECK_REQUIRE_BROWSER=1 but {why}");
    why
}

/// Headless `chromium` with a profile of its own under `profile`, dumping the page it loads,
/// `budget_ms` of virtual time given to its scripts.
pub fn headless(chromium: &Path, profile: &Path, budget_ms: u32) -> Command {
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom");
    command
}

/// Every `.rs` file under `dir`, in name order, not looking into folders named in `skip`.
pub fn rust_files(dir: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    let mut files = Vec::new();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.') && !skip.contains(&name.as_ref()) {
                files.extend(rust_files(&path, skip));
            }
        } else if name.ends_with(".rs") {
            files.push(path);
        }
    }
    files
}

/// For a test that changes what holds for the whole process (the registry of systems, which the
/// other tests read): whether this is the process of its own it runs in. Called by the test named
/// `name` (its path in this binary), it runs that test alone in a child process of this binary
/// and returns false once the child passed, and true in the child, where the test does its work.
pub fn in_own_process(name: &str) -> bool {
    const ALONE: &str = "WALCHECK_TEST_ALONE";
    if std::env::var_os(ALONE).is_some_and(|test| test == name) {
        return true;
    }
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--test-threads=1"])
        .env(ALONE, name)
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} in a process of its own:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    false
}

/// The folders of the workspace's crates, from the `members` of the root Cargo.toml.
pub fn workspace_members() -> Vec<String> {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let members = manifest
        .split("\nmembers = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the root Cargo.toml lists its workspace members");
    let folders: Vec<String> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect();
    for folder in &folders {
        assert!(
            Path::new(ROOT).join(folder).join("Cargo.toml").is_file(),
            "workspace member {folder} has no Cargo.toml"
        );
    }
    folders
}
