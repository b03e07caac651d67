//! Running catalogue entries: one search per entry, entries spread over threads, results and
//! traces in catalogue order whatever the thread count.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stateright::Model;
use walcheck_model::systems::electric_flush::ElectricFlush;
use walcheck_model::systems::olake_bootstrap::OlakeBootstrap;
use walcheck_model::systems::Variables;
use walcheck_traces::replay::{minimise, Mismatch};
use walcheck_traces::{Header, Step, Trace, SCHEMA};

use crate::catalogue::{Entry, SystemConfig};
use crate::checker::{self, Budget, Path as ModelPath, Verdict};

/// The outcome of one entry.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub entry: Entry,
    pub verdict: Verdict,
    pub states: u64,
    pub unique_states: u64,
    pub max_depth: u64,
    pub elapsed: Duration,
    /// The counterexample (violated `always`) or witness (holding `sometimes`).
    pub trace: Option<Trace>,
    /// Where the counterexample was written, once it is.
    pub trace_path: Option<PathBuf>,
}

impl CheckResult {
    /// Whether the verdict is what the catalogue expects (an inconclusive one is not a mismatch).
    pub fn matches_expectation(&self) -> bool {
        self.verdict == Verdict::Inconclusive || self.verdict == self.entry.expected
    }

    /// Whether this result's trace is a counterexample to be written and shown.
    pub fn is_counterexample(&self) -> bool {
        self.verdict == Verdict::Violated && self.trace.is_some()
    }
}

/// Runs one entry within `budget`.
pub fn run_entry(entry: &Entry, budget: &Budget) -> CheckResult {
    let start = Instant::now();
    let (verdict, states, unique_states, max_depth, trace) = match entry.config {
        SystemConfig::OlakeBootstrap(config) => {
            let model = OlakeBootstrap::new(config);
            search(&model, entry, budget)
        }
        SystemConfig::ElectricFlush(config) => {
            let model = ElectricFlush::new(config);
            search(&model, entry, budget)
        }
    };
    CheckResult {
        entry: entry.clone(),
        verdict,
        states,
        unique_states,
        max_depth,
        elapsed: start.elapsed(),
        trace,
        trace_path: None,
    }
}

type Searched = (Verdict, u64, u64, u64, Option<Trace>);

fn search<M>(model: &M, entry: &Entry, budget: &Budget) -> Searched
where
    M: Model,
    M::State: std::hash::Hash + Eq + Clone + Variables,
    M::Action: Clone + PartialEq + std::fmt::Display,
{
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == entry.property.id)
        .unwrap_or_else(|| {
            panic!(
                "{} lists {} but its model does not",
                entry.system(),
                entry.property.id
            )
        });
    let outcome = checker::check(model, &property, budget).unwrap_or_else(|e| panic!("{e}"));
    let path = outcome.path.map(|path| {
        // Breadth-first paths are already shortest and canonical; minimising keeps that promise
        // for any path, and checks it.
        let actions: Vec<M::Action> = path.actions().cloned().collect();
        let minimal = minimise(model, &property, &actions);
        debug_assert!(
            minimal == actions,
            "a breadth-first path is shortest and canonical"
        );
        checker::replay(model, &minimal).expect("a minimised path replays")
    });
    let trace = path
        .as_ref()
        .map(|path| to_trace(entry, outcome.verdict, path));
    (
        outcome.verdict,
        outcome.states,
        outcome.unique_states,
        outcome.max_depth,
        trace,
    )
}

/// The trace of `path`, with `entry`'s header.
pub fn to_trace<S: Variables, A: std::fmt::Display>(
    entry: &Entry,
    verdict: Verdict,
    path: &ModelPath<S, A>,
) -> Trace {
    let vars = |s: &S| {
        s.variables()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect()
    };
    let mut steps = vec![Step {
        action: None,
        vars: vars(&path.init),
        time_us: None,
    }];
    steps.extend(path.steps.iter().map(|(a, s)| Step {
        action: Some(a.to_string()),
        vars: vars(s),
        time_us: None,
    }));
    Trace {
        header: header(entry, verdict),
        steps,
    }
}

fn header(entry: &Entry, verdict: Verdict) -> Header {
    Header {
        schema: SCHEMA.to_owned(),
        system: entry.system().to_owned(),
        variant: entry.config.variant().to_owned(),
        faults: entry.config.faults().to_owned(),
        config: entry
            .config
            .bounds()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v.to_string()))
            .collect(),
        property: entry.property.id.to_owned(),
        kind: entry.property.kind.name().to_owned(),
        verdict: verdict.name().to_owned(),
        seed: None,
        simulation: None,
    }
}

/// Runs `entries` on `threads` threads. Entries not started by `budget.deadline` are
/// inconclusive. Results come back in `entries` order.
pub fn run_all(entries: &[Entry], threads: usize, budget: &Budget) -> Vec<CheckResult> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CheckResult>>> = Mutex::new(vec![None; entries.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = entries.get(i) else { break };
                let result = run_entry(entry, budget);
                results.lock().expect("no thread panics holding the lock")[i] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|r| r.expect("every entry ran"))
        .collect()
}

/// The file name of `entry`'s counterexample: `SYSTEM__VARIANT__FAULTS__PROPERTY.itf.json`, with
/// `__` and the non-default bounds (`__server=standby,statements=3`) before `.itf.json` when there
/// are any, or a short hash of them when they would make the name long.
pub fn trace_file_name(entry: &Entry) -> String {
    let mut name = format!(
        "{}__{}__{}__{}",
        entry.system(),
        entry.config.variant(),
        entry.config.faults(),
        entry.property.id
    );
    let non_default = entry.config.non_default_bounds().join(",");
    if non_default.len() > 48 {
        name.push_str(&format!("__{:08x}", fnv1a32(non_default.as_bytes())));
    } else if !non_default.is_empty() {
        name.push_str(&format!("__{non_default}"));
    }
    name + ".itf.json"
}

/// FNV-1a, 32 bits: stable across versions and platforms, unlike `std`'s hasher.
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Writes every counterexample under `dir` (created if missing) and records its path; removes the
/// file of every checked entry that no longer has a counterexample, so no stale trace stays
/// beside fresh ones. Carries on past a failed write and returns the first error, so that the
/// caller can still report every verdict.
pub fn write_traces(results: &mut [CheckResult], dir: &Path) -> Result<(), String> {
    let mut first_error = None;
    if results.iter().any(CheckResult::is_counterexample) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return Err(format!(
                "cannot create trace directory {}: {e}",
                dir.display()
            ));
        }
    }
    for result in results.iter_mut() {
        let path = dir.join(trace_file_name(&result.entry));
        if !result.is_counterexample() {
            if result.verdict != Verdict::Inconclusive && path.is_file() {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        let trace = result.trace.as_ref().expect("counterexamples have traces");
        match trace.write(&path) {
            Ok(()) => result.trace_path = Some(path),
            Err(e) => {
                first_error
                    .get_or_insert_with(|| format!("cannot write trace {}: {e}", path.display()));
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Replays `trace` against the model its header names (an observed trace of a live run against
/// the PostgreSQL model, [`walcheck_sim::observed`]). The outer `Err` is bad input (an unknown
/// system, variant, fault set, bound or property in the header: exit 2); the inner one is where
/// replay parted from the trace (exit 1). `Ok` is the number of steps replayed.
pub fn replay_trace(trace: &Trace) -> Result<Result<usize, Mismatch>, String> {
    if trace.header.is_observed() {
        // A live run's observations: only the observed variables are constrained.
        return walcheck_sim::observed::replay_observed(trace);
    }
    match crate::catalogue::config_from_header(&trace.header)? {
        SystemConfig::OlakeBootstrap(config) => replay_on(&OlakeBootstrap::new(config), trace),
        SystemConfig::ElectricFlush(config) => replay_on(&ElectricFlush::new(config), trace),
    }
}

fn replay_on<M>(model: &M, trace: &Trace) -> Result<Result<usize, Mismatch>, String>
where
    M: Model,
    M::State: Variables,
    M::Action: Clone + std::fmt::Display,
{
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == trace.header.property)
        .ok_or_else(|| {
            format!(
                "{} has no property {:?}",
                trace.header.system, trace.header.property
            )
        })?;
    Ok(walcheck_traces::replay::replay(model, &property, trace).map(|actions| actions.len()))
}
