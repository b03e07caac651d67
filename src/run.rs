//! Running catalogue entries: one search per entry, entries spread over threads, results and
//! traces in catalogue order whatever the thread count.

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stateright::Model;
use walcheck_properties::system::{Kind, Live, Variables};
use walcheck_traces::replay::{minimise, Mismatch};
use walcheck_traces::{Header, Step, Trace, SCHEMA};

use crate::catalogue::{Entry, SystemConfig, WithModel};
use crate::checker::{self, Budget, Path as ModelPath, Progress, Verdict};
use crate::liveness;

/// The outcome of one entry.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub entry: Entry,
    pub verdict: Verdict,
    pub states: u64,
    pub unique_states: u64,
    pub max_depth: u64,
    pub elapsed: Duration,
    /// The most heap the entry's search held, in bytes (its stored states, queue and path);
    /// `None` unless the binary counts heap bytes ([`crate::heap`]).
    pub peak_heap_bytes: Option<u64>,
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

    /// Distinct states stored per second of the entry's wall time; `None` when no time passed.
    pub fn states_per_s(&self) -> Option<f64> {
        let seconds = self.elapsed.as_secs_f64();
        (seconds > 0.0).then(|| self.unique_states as f64 / seconds)
    }

    /// Heap bytes per distinct state stored: the search's peak heap over its distinct states;
    /// `None` when heap bytes are not counted or nothing was stored.
    pub fn bytes_per_state(&self) -> Option<f64> {
        let heap = self.peak_heap_bytes?;
        (self.unique_states > 0).then(|| heap as f64 / self.unique_states as f64)
    }

    /// Whether this result's trace is a counterexample to be written and shown.
    pub fn is_counterexample(&self) -> bool {
        self.verdict == Verdict::Violated && self.trace.is_some()
    }
}

/// Watches a catalogue run: told when an entry starts, how its search progresses, and when it
/// ends. Used for progress lines; it never changes a result.
pub trait Observer: Sync {
    /// Entry `index` of the run starts on some thread.
    fn started(&self, index: usize, entry: &Entry);
    /// Entry `index`'s search has got this far.
    fn progress(&self, index: usize, progress: Progress);
    /// Entry `index` has its result.
    fn finished(&self, index: usize, result: &CheckResult);
}

/// The observer that watches nothing.
pub struct Unobserved;

impl Observer for Unobserved {
    fn started(&self, _: usize, _: &Entry) {}
    fn progress(&self, _: usize, _: Progress) {}
    fn finished(&self, _: usize, _: &CheckResult) {}
}

/// Runs one entry within `budget`.
pub fn run_entry(entry: &Entry, budget: &Budget) -> CheckResult {
    run_entry_observed(entry, budget, &mut |_| {})
}

/// [`run_entry`], telling `observe` how far the search has got.
pub fn run_entry_observed(
    entry: &Entry,
    budget: &Budget,
    observe: &mut dyn FnMut(Progress),
) -> CheckResult {
    let start = Instant::now();
    let ((verdict, states, unique_states, max_depth, trace), peak_heap_bytes) =
        crate::heap::measure(|| {
            entry.config.with_model(Search {
                entry,
                budget,
                observe,
            })
        });
    CheckResult {
        entry: entry.clone(),
        verdict,
        states,
        unique_states,
        max_depth,
        elapsed: start.elapsed(),
        peak_heap_bytes,
        trace,
        trace_path: None,
    }
}

/// What a search gives: verdict, states, unique states, depth, and the trace it found.
pub type Searched = (Verdict, u64, u64, u64, Option<Trace>);

/// What a replay gives: the steps replayed, or the first mismatch; or why it could not run.
pub type Replayed = Result<Result<usize, Mismatch>, String>;

/// `entry`'s check on its model: the fair-liveness checker for an `eventually` property, the
/// breadth-first checker otherwise.
pub struct Search<'a> {
    entry: &'a Entry,
    budget: &'a Budget,
    observe: &'a mut dyn FnMut(Progress),
}

impl WithModel for Search<'_> {
    type Output = Searched;

    fn call<M>(self, model: M) -> Searched
    where
        M: Model + Live + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Variables + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Display + Send + Sync + 'static,
    {
        if self.entry.property.kind == Kind::Eventually {
            search_liveness(&model, self.entry, self.budget, self.observe)
        } else {
            search(&model, self.entry, self.budget, self.observe)
        }
    }
}

fn search<M>(
    model: &M,
    entry: &Entry,
    budget: &Budget,
    observe: &mut dyn FnMut(Progress),
) -> Searched
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
    let outcome = checker::check_observed(model, &property, budget, observe)
        .unwrap_or_else(|e| panic!("{e}"));
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

/// Checks `entry`'s liveness property under the model's fairness with the fair-liveness checker;
/// a violation's trace is its lasso.
fn search_liveness<M>(
    model: &M,
    entry: &Entry,
    budget: &Budget,
    observe: &mut dyn FnMut(Progress),
) -> Searched
where
    M: Live,
    M::State: Hash + Eq + Clone + Variables,
    M::Action: Clone + PartialEq + Display + 'static,
{
    let properties = model.liveness();
    let property = properties
        .iter()
        .find(|p| p.id == entry.property.id)
        .unwrap_or_else(|| {
            panic!(
                "{} lists {} but its model does not",
                entry.system(),
                entry.property.id
            )
        });
    let outcome = liveness::check_observed(model, property, model.fairness(), budget, observe);
    let trace = outcome.lasso.as_ref().map(|lasso| {
        let trace = to_trace(entry, outcome.verdict, &lasso.path);
        assert_eq!(
            trace.loop_index(),
            Some(lasso.loop_index),
            "a lasso's loop state is the first state of its trace equal to the last"
        );
        trace
    });
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
    run_all_observed(entries, threads, budget, &Unobserved)
}

/// [`run_all`], with `observer` watching each entry.
pub fn run_all_observed(
    entries: &[Entry],
    threads: usize,
    budget: &Budget,
    observer: &dyn Observer,
) -> Vec<CheckResult> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CheckResult>>> = Mutex::new(vec![None; entries.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = entries.get(i) else { break };
                observer.started(i, entry);
                let result = run_entry_observed(entry, budget, &mut |p| observer.progress(i, p));
                observer.finished(i, &result);
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

/// The entries of shard `index` of `count` (both from 1): every `count`-th entry of `entries`,
/// starting at the `index`-th. The `count` shards of one selection cover each entry exactly once,
/// and [`crate::report::merge`] puts their results back in catalogue order.
pub fn shard(entries: Vec<Entry>, index: usize, count: usize) -> Vec<Entry> {
    assert!((1..=count).contains(&index), "shard {index}/{count}");
    entries.into_iter().skip(index - 1).step_by(count).collect()
}

/// Parses `--shard I/N`: whole numbers with 1 ≤ I ≤ N ≤ 1000.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard takes I/N with 1 <= I <= N <= 1000, e.g. 2/3, not {text:?}");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let number = |t: &str| -> Result<usize, String> {
        if t.is_empty() || t.len() > 4 || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse().map_err(|_| bad())
    };
    let (i, n) = (number(i)?, number(n)?);
    if i == 0 || i > n || n > 1000 {
        return Err(bad());
    }
    Ok((i, n))
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
/// the PostgreSQL model, [`walcheck_sim::observed`]). The outer `Err` is bad input (see
/// [`check_trace`]: exit 2); the inner one is where replay parted from the trace (exit 1). `Ok` is
/// the number of steps replayed.
pub fn replay_trace(trace: &Trace) -> Result<Result<usize, Mismatch>, String> {
    if trace.header.is_observed() {
        // A live run's observations: only the observed variables are constrained.
        return walcheck_sim::observed::replay_observed(trace);
    }
    let config = crate::catalogue::config_from_header(&trace.header)?;
    check_lsns(trace, config.info().view.variables)?;
    config.with_model(Replay(trace))
}

/// [`replay_trace`] on the model of the trace's header.
pub struct Replay<'a>(&'a Trace);

impl WithModel for Replay<'_> {
    type Output = Result<Result<usize, Mismatch>, String>;

    fn call<M>(self, model: M) -> Self::Output
    where
        M: Model + Live + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Variables + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Display + Send + Sync + 'static,
    {
        replay_on(&model, self.0)
    }
}

/// Checks that `trace` is one its header's system can have written, or says in one line why
/// not: a known system, variant, fault set and bounds; a property of that system whose kind the
/// header repeats; a counterexample (`always`, `violated`) or a witness (`sometimes`, `holds`);
/// and exactly that system's variables.
pub fn check_trace(trace: &Trace) -> Result<SystemConfig, String> {
    let config = crate::catalogue::config_from_header(&trace.header)?;
    check_lsns(trace, config.info().view.variables)?;
    config.with_model(CheckAgainst(trace))?;
    Ok(config)
}

/// Checks that every value of a variable declared as an LSN (kind `LSN`, or `LSN or none`) reads
/// as PostgreSQL prints one (`X/Y`, 1 to 8 hex digits each), or says in one line which is not.
pub fn check_lsns(
    trace: &Trace,
    declared: &[walcheck_properties::system::VarInfo],
) -> Result<(), String> {
    for (i, step) in trace.steps.iter().enumerate() {
        for (name, value) in &step.vars {
            let Some(info) = declared.iter().find(|v| v.name == *name) else {
                continue;
            };
            let text = value.to_string();
            let none_allowed = info.kind == "LSN or none" && text == "none";
            if info.kind.starts_with("LSN")
                && !none_allowed
                && text.parse::<walcheck_model::Lsn>().is_err()
            {
                return Err(format!(
                    "state {i}: {name} is {text:?}, not an LSN (X/Y, 1 to 8 hex digits each{})",
                    if info.kind == "LSN or none" {
                        ", or none"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    Ok(())
}

/// [`check_against`] on the model of a configuration.
pub struct CheckAgainst<'a>(&'a Trace);

impl WithModel for CheckAgainst<'_> {
    type Output = Result<(), String>;

    fn call<M>(self, model: M) -> Self::Output
    where
        M: Model + Live + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Variables + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Display + Send + Sync + 'static,
    {
        check_against(&model, self.0)
    }
}

fn check_against<M>(model: &M, trace: &Trace) -> Result<(), String>
where
    M: Model,
    M::State: Variables,
{
    let h = &trace.header;
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == h.property)
        .ok_or_else(|| format!("{} has no property {:?}", h.system, h.property))?;
    let kind = match property.expectation {
        stateright::Expectation::Always => "always",
        stateright::Expectation::Sometimes => "sometimes",
        stateright::Expectation::Eventually => "eventually",
    };
    if h.kind != kind {
        return Err(format!(
            "{} is {kind}, but the trace header says {:?}",
            h.property, h.kind
        ));
    }
    match (kind, h.verdict.as_str()) {
        ("always" | "eventually", "violated") | ("sometimes", "holds") => {}
        (_, "holds" | "violated") => {
            return Err(format!(
                "a trace of an {kind} property is a {}, not {:?}",
                if kind == "sometimes" {
                    "witness (holds)"
                } else {
                    "counterexample (violated)"
                },
                h.verdict
            ));
        }
        (_, other) => return Err(format!("verdict {other:?} is neither holds nor violated")),
    }
    let init = model
        .init_states()
        .into_iter()
        .next()
        .expect("a model has an initial state");
    let expected: Vec<&str> = init.variables().into_iter().map(|(n, _)| n).collect();
    let found: Vec<&str> = trace.steps[0]
        .vars
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    if expected != found {
        return Err(format!(
            "its variables are not those of {} with this configuration ({})",
            h.system,
            expected.join(", ")
        ));
    }
    Ok(())
}

fn replay_on<M>(model: &M, trace: &Trace) -> Result<Result<usize, Mismatch>, String>
where
    M: Live,
    M::State: Variables + PartialEq + Clone,
    M::Action: Clone + Display + 'static,
{
    check_against(model, trace)?;
    let property = model
        .properties()
        .into_iter()
        .find(|p| p.name == trace.header.property)
        .expect("checked");
    Ok(
        walcheck_traces::replay::replay_fair(model, &property, model.fairness(), trace)
            .map(|actions| actions.len()),
    )
}
