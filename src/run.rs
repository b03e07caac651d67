//! Running catalogue entries: by default one compact search per configuration deciding all of
//! its selected `always` and `sometimes` entries (`--engine compact`), or one reference search per
//! entry (`--engine reference`); `eventually` entries each get the fair-liveness checker. Results
//! and traces come back in catalogue order, the same at any thread count.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stateright::{Model, Property};
use walcheck_engine::compact::{
    self, CollisionEstimate, Fingerprint, Fingerprinter, Xxh128, Xxh64,
};
use walcheck_properties::system::{CheckModel, FairnessChoice, Kind, Variables, FAIRNESS_BOUND};
use walcheck_traces::replay::{minimise, Mismatch};
use walcheck_traces::{Header, Step, Trace, SCHEMA};

use crate::catalogue::{Entry, SystemConfig, Systems, WithModel};
use crate::liveness;
use crate::reference;
use crate::search::{Budget, Path as ModelPath, Progress, Verdict};

/// Above this estimated probability that a fingerprint collision hid a state, the report
/// advises rerunning with 128-bit fingerprints: one in a million.
pub const COLLISION_ADVICE_ABOVE: f64 = 1e-6;

/// Which checker decides the `always` and `sometimes` entries. (The variants' docs are
/// `check --help`'s.)
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// One search per configuration over fingerprints, deciding all its checks at once
    #[default]
    Compact,
    /// One search per check, storing every state whole (eventually checks: the fair-liveness checker, as with compact)
    Reference,
}

impl Engine {
    /// The name `--engine` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Compact => "compact",
            Engine::Reference => "reference",
        }
    }
}

/// How to run a set of entries.
#[derive(Copy, Clone, Debug)]
pub struct Options {
    pub engine: Engine,
    /// Threads shared by the run's searches (see [`run_all_with`]).
    pub threads: usize,
    /// `max_states` and the deadline, for every search.
    pub budget: Budget,
    /// Stop a compact or liveness search before its own stored bytes would exceed this.
    pub max_memory_bytes: Option<u64>,
    /// The compact engine's fingerprint width: 64 or 128 (`check` takes no other). Below 64,
    /// for tests: [`compact::Narrow`] fingerprints of that many bits, every duplicate compared,
    /// so that collisions happen and are found.
    pub fingerprint_bits: u32,
    /// A compact search packs a breadth-first level's states with the model's codec once they
    /// would take more than this many bytes whole ([`compact::Options::pack_above_bytes`]; 0
    /// packs every level). The results do not depend on it.
    pub pack_above_bytes: usize,
}

impl Options {
    /// The default engine on `threads` threads within `budget`, 64-bit fingerprints, no memory
    /// budget, levels packed above [`compact::PACK_ABOVE_BYTES`].
    pub fn new(threads: usize, budget: Budget) -> Options {
        Options {
            engine: Engine::default(),
            threads,
            budget,
            max_memory_bytes: None,
            fingerprint_bits: 64,
            pack_above_bytes: compact::PACK_ABOVE_BYTES,
        }
    }
}

/// `--max-memory`'s default: half the machine's physical memory (`MemTotal` of
/// `/proc/meminfo`), or 4 GiB where that cannot be read. It bounds what one search counts as
/// stored, so that a search too large for the machine ends inconclusive instead of being killed.
pub fn default_max_memory_bytes() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("MemTotal:"))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
        });
    match total_kib {
        Some(kib) if kib > 0 => kib * 1024 / 2,
        _ => 4 << 30,
    }
}

/// The outcome of one entry.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub entry: Entry,
    pub verdict: Verdict,
    pub states: u64,
    pub unique_states: u64,
    pub max_depth: u64,
    /// The wall time of the search that decided the entry (under the compact engine, shared by
    /// the entries of one configuration).
    pub elapsed: Duration,
    /// The most heap the entry's search held, in bytes (its stored states, queue and path);
    /// `None` unless the binary counts heap bytes ([`crate::heap`]), or when the search ran
    /// rounds on several threads (heap is counted per thread).
    pub peak_heap_bytes: Option<u64>,
    /// The counterexample (violated `always`) or witness (holding `sometimes`).
    pub trace: Option<Trace>,
    /// Where the counterexample was written, once it is.
    pub trace_path: Option<PathBuf>,
    /// Why the counterexample could not be written, when [`write_traces`] failed for it: a
    /// one-line error naming the file or directory.
    pub trace_error: Option<String>,
    /// The search that decided the entry, when it decided others too.
    pub search: Option<SearchFigures>,
    /// For a verdict reached by exhausting a space of fingerprints under the compact engine
    /// (`always` or `eventually` holds, `sometimes` violated): the chance that a collision hid a
    /// state.
    pub collision: Option<CollisionEstimate>,
    /// For an inconclusive verdict: the budget that ran out (`max-states`, `timeout`,
    /// `max-memory`, `state-indices`) or `interrupted` (SIGINT or SIGTERM), or `None` when the
    /// search failed ([`CheckResult::error`]).
    pub limit: Option<&'static str>,
    /// Why the search could not give a trustworthy result (a fingerprint collision); the verdict
    /// is then inconclusive.
    pub error: Option<String>,
}

/// Figures of one compact search, shared by the entries it decided.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SearchFigures {
    /// Distinct states the search stored by its end.
    pub unique_states: u64,
    /// The most bytes the search counted as stored ([`compact::Report::memory_bytes`]).
    pub memory_bytes: u64,
    /// The most threads one of its rounds ran on.
    pub threads: usize,
}

impl CheckResult {
    /// Whether the verdict is what the catalogue expects (an inconclusive one is not a mismatch).
    pub fn matches_expectation(&self) -> bool {
        self.verdict == Verdict::Inconclusive || self.verdict == self.entry.expected
    }

    /// Distinct states stored per second of the search's wall time; `None` when no time passed.
    pub fn states_per_s(&self) -> Option<f64> {
        let seconds = self.elapsed.as_secs_f64();
        (seconds > 0.0).then(|| self.searched_states() as f64 / seconds)
    }

    /// Heap bytes per distinct state stored: the search's peak heap over its distinct states;
    /// `None` when heap bytes are not counted or nothing was stored.
    pub fn bytes_per_state(&self) -> Option<f64> {
        let heap = self.peak_heap_bytes?;
        let stored = self.searched_states();
        (stored > 0).then(|| heap as f64 / stored as f64)
    }

    /// The distinct states of the search that decided the entry.
    fn searched_states(&self) -> u64 {
        self.search.map_or(self.unique_states, |s| s.unique_states)
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
    /// Entry `index`'s search starts, deciding `entries` entries at once (the others of its
    /// configuration are not [`Observer::started`]; all are [`Observer::finished`]).
    fn started_search(&self, index: usize, entry: &Entry, entries: usize) {
        let _ = entries;
        self.started(index, entry);
    }
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

/// Runs one entry within `budget` with the default engine. `U`: the binary's own systems beside
/// walcheck's (`()` for none; [`Systems`]), as for every function here that builds a model.
pub fn run_entry<U: Systems>(entry: &Entry, budget: &Budget) -> CheckResult {
    run_all_with::<U>(
        std::slice::from_ref(entry),
        &Options::new(1, *budget),
        &Unobserved,
    )
    .remove(0)
}

/// Runs one entry on its own within `budget`: the reference checker for `always` and
/// `sometimes`, the fair-liveness checker for `eventually` (stopped by `max_memory_bytes`),
/// telling `observe` how far the search has got.
pub fn run_entry_observed<U: Systems>(
    entry: &Entry,
    budget: &Budget,
    max_memory_bytes: Option<u64>,
    observe: &mut dyn FnMut(Progress),
) -> CheckResult {
    let start = Instant::now();
    let ((verdict, states, unique_states, max_depth, trace, limit), peak_heap_bytes) =
        crate::heap::measure(|| {
            entry.config.with_model::<U, _>(SearchEntry {
                entry,
                budget,
                max_memory_bytes,
                observe,
            })
        });
    let (limit, error) = collision_error(limit);
    // The reference checker does not say which limit stopped it: the interrupt or the deadline
    // when one has run out, the state budget otherwise.
    let limit = (verdict == Verdict::Inconclusive && error.is_none())
        .then(|| limit.unwrap_or_else(|| budget.run_out().map_or("max-states", limit_name)));
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
        trace_error: None,
        search: None,
        collision: None,
        limit,
        error,
    }
}

/// What a search of one entry gives: verdict, states, unique states, depth, the trace it found,
/// and the budget that stopped it when it knows which.
type Searched = (Verdict, u64, u64, u64, Option<Trace>, Option<&'static str>);

/// `entry`'s check on its model alone: the fair-liveness checker for an `eventually` property,
/// the reference breadth-first checker otherwise.
struct SearchEntry<'a> {
    entry: &'a Entry,
    budget: &'a Budget,
    max_memory_bytes: Option<u64>,
    observe: &'a mut dyn FnMut(Progress),
}

impl WithModel for SearchEntry<'_> {
    type Output = Searched;

    fn call<M>(self, model: M) -> Searched
    where
        M: CheckModel,
    {
        if self.entry.property.kind == Kind::Eventually {
            search_liveness(
                &model,
                self.entry,
                self.budget,
                self.max_memory_bytes,
                self.observe,
            )
        } else {
            search(&model, self.entry, self.budget, self.observe)
        }
    }
}

/// The property `entry` names, from its model.
fn property_of<M: Model>(model: &M, entry: &Entry) -> Property<M> {
    model
        .properties()
        .into_iter()
        .find(|p| p.name == entry.property.id)
        .unwrap_or_else(|| {
            panic!(
                "{} lists {} but its model does not",
                entry.system(),
                entry.property.id
            )
        })
}

/// The trace of a breadth-first counterexample or witness, the same whichever engine found it.
fn breadth_first_trace<M>(
    model: &M,
    property: &Property<M>,
    entry: &Entry,
    verdict: Verdict,
    path: ModelPath<M::State, M::Action>,
) -> Trace
where
    M: Model,
    M::State: Variables,
    M::Action: Clone + PartialEq + Debug,
{
    // Breadth-first paths are already shortest and canonical (the first deciding state in
    // breadth-first order, reached through the first parent by the first action): debug builds,
    // which the tests run, check it by minimising; release builds trust it.
    if cfg!(debug_assertions) {
        let actions: Vec<M::Action> = path.actions().cloned().collect();
        let minimal = minimise(model, property, &actions);
        assert!(
            minimal == actions,
            "a breadth-first path is shortest and canonical"
        );
    }
    to_trace(model, entry, verdict, &path)
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
    M::Action: Clone + PartialEq + Debug,
{
    let property = property_of(model, entry);
    let outcome = reference::check_observed(model, &property, budget, observe)
        .unwrap_or_else(|e| panic!("{e}"));
    let trace = outcome
        .path
        .map(|path| breadth_first_trace(model, &property, entry, outcome.verdict, path));
    (
        outcome.verdict,
        outcome.states,
        outcome.unique_states,
        outcome.max_depth,
        trace,
        None,
    )
}

/// Checks `entry`'s liveness property under the model's fairness with the fair-liveness checker;
/// a violation's trace is its lasso.
fn search_liveness<M>(
    model: &M,
    entry: &Entry,
    budget: &Budget,
    max_memory_bytes: Option<u64>,
    observe: &mut dyn FnMut(Progress),
) -> Searched
where
    M: CheckModel,
{
    let properties = model.liveness();
    let property = liveness_property(&properties, entry);
    let outcome = liveness::check_bounded(
        model,
        property,
        model.fairness(),
        budget,
        max_memory_bytes,
        observe,
    );
    liveness_searched(model, entry, outcome)
}

/// What a liveness check of `entry` gives: its verdict and counts, and its lasso as a trace.
fn liveness_searched<M: CheckModel>(
    model: &M,
    entry: &Entry,
    outcome: liveness::Outcome<M::State, M::Action>,
) -> Searched {
    let trace = outcome
        .lasso
        .as_ref()
        .map(|lasso| to_trace(model, entry, outcome.verdict, &lasso.path));
    // A trace marks its loop at the first state equal to its last (`Trace::loop_index`): a lasso
    // whose trace shows its loop state earlier (the system's variables do not tell two of its
    // states apart) cannot be written as one.
    let hidden = trace
        .as_ref()
        .zip(outcome.lasso.as_ref())
        .is_some_and(|(t, lasso)| t.loop_index() != Some(lasso.loop_index));
    // A lasso that could not be rebuilt or written is inconclusive, said by its limit's name;
    // the result turns it into an error ([`collision_error`]).
    let limit = match (outcome.collision.as_ref(), hidden) {
        (Some(_), _) => Some(LIVENESS_COLLISION),
        (None, true) => Some(LASSO_HIDDEN),
        (None, false) => outcome.limit.map(limit_name),
    };
    let (verdict, trace) = match hidden {
        true => (Verdict::Inconclusive, None),
        false => (outcome.verdict, trace),
    };
    (
        verdict,
        outcome.states,
        outcome.unique_states,
        outcome.max_depth,
        trace,
        limit,
    )
}

/// The limit a liveness check reports when the lasso it found could not be rebuilt.
const LIVENESS_COLLISION: &str = "liveness-collision";

/// The limit of a search whose model panicked (a system's own code, at bounds registration
/// did not try): its checks are inconclusive with the panic as their error, and `check` exits 2.
pub const MODEL_PANICKED: &str = "model-panicked";

/// The limit a liveness check reports when the lasso it found cannot be written as a trace.
const LASSO_HIDDEN: &str = "lasso-loop-hidden";

/// A result's limit and error from what its search said: a lasso that could not be rebuilt, or
/// written as a trace, is an error, not a budget.
fn collision_error(limit: Option<&'static str>) -> (Option<&'static str>, Option<String>) {
    match limit {
        Some(LIVENESS_COLLISION) => (
            None,
            Some(
                "two states share a 64-bit fingerprint in the liveness graph, so its lasso could \
                 not be rebuilt"
                    .to_owned(),
            ),
        ),
        Some(LASSO_HIDDEN) => (
            None,
            Some(
                "the lasso's trace shows its loop state earlier than the loop: the system's \
                 trace variables do not tell two of its states apart"
                    .to_owned(),
            ),
        ),
        other => (other, None),
    }
}

/// Whether `entry` is checked under its system's fairness: unless its `fairness` knob says
/// `none` (a system without the knob always is).
fn assumes_fairness(entry: &Entry) -> bool {
    !declares_fairness(entry)
        || FairnessChoice::of(&entry.config.config) == FairnessChoice::Declared
}

fn declares_fairness(entry: &Entry) -> bool {
    let bounds = entry.config.info().bounds;
    bounds.iter().any(|b| b.name == FAIRNESS_BOUND.name)
}

/// The limit of a check stopped by an interrupt (SIGINT or SIGTERM), which the budgets' flags
/// do not name.
pub const INTERRUPTED: &str = "interrupted";

/// A compact or liveness search's limit by the flag that sets it.
fn limit_name(limit: compact::Limit) -> &'static str {
    match limit {
        compact::Limit::States => "max-states",
        compact::Limit::Time => "timeout",
        compact::Limit::Memory => "max-memory",
        compact::Limit::Indices => "state-indices",
        compact::Limit::Interrupt => INTERRUPTED,
    }
}

/// The entries of one configuration decided by one compact search: its `always` and
/// `sometimes` entries, and the `eventually` entries decided on the graph it records.
struct Group<'a> {
    safety: &'a [&'a Entry],
    liveness: &'a [&'a Entry],
    options: &'a Options,
    threads: &'a dyn Fn() -> usize,
    observe: &'a mut dyn FnMut(Progress),
}

/// What a [`Group`] search gives: per entry (the safety entries, then the liveness ones) what
/// [`Searched`] says and the collision estimate of a verdict reached by exhaustion, with the
/// search's distinct states and counted bytes; or why the search could not be trusted.
type Grouped = Result<(Vec<(Searched, Option<CollisionEstimate>)>, u64, u64), String>;

impl WithModel for Group<'_> {
    type Output = Grouped;

    fn call<M>(self, model: M) -> Grouped
    where
        M: CheckModel,
    {
        match self.options.fingerprint_bits {
            128 => search_group(&model, &Xxh128, self),
            bits if bits < 64 => search_group(&model, &compact::Narrow { bits }, self),
            _ => search_group(&model, &Xxh64, self),
        }
    }
}

/// `entry`'s liveness property among its model's `properties`; panics when the model does not
/// list it (the catalogue and the model disagree).
fn liveness_property<'a, M: CheckModel>(
    properties: &'a [walcheck_properties::system::Liveness<M, M::State>],
    entry: &Entry,
) -> &'a walcheck_properties::system::Liveness<M, M::State> {
    properties
        .iter()
        .find(|p| p.id == entry.property.id)
        .unwrap_or_else(|| {
            panic!(
                "{} lists {} but its model does not",
                entry.system(),
                entry.property.id
            )
        })
}

/// The liveness rows of `entries` on `model`, each under its fairness.
fn liveness_rows<'a, M: CheckModel>(
    model: &'a M,
    properties: &'a [walcheck_properties::system::Liveness<M, M::State>],
    entries: &[&Entry],
) -> Vec<liveness::Row<'a, M>> {
    entries
        .iter()
        .map(|entry| liveness::Row {
            model,
            property: liveness_property(properties, entry),
            fair: assumes_fairness(entry),
        })
        .collect()
}

/// `group` decided by one compact search of `model` with `fingerprinter`'s fingerprints: its
/// safety entries as the search stores their deciding states, its liveness entries on the graph
/// the search records (one product per property, [`liveness::decide_rows`]).
fn search_group<M, P>(model: &M, fingerprinter: &P, group: Group<'_>) -> Grouped
where
    M: CheckModel,
    P: Fingerprinter<M::State>,
{
    let budget = &group.options.budget;
    let options = compact::Options {
        threads: 1,
        budget: Budget {
            max_memory_bytes: group.options.max_memory_bytes,
            ..*budget
        },
        // A narrow test fingerprint is there to collide: compare every duplicate.
        verify_duplicates: group.options.fingerprint_bits < 64,
        pack_above_bytes: group.options.pack_above_bytes,
        ..compact::Options::default()
    };
    let hooks = compact::Hooks {
        select: &|name| group.safety.iter().any(|e| e.property.id == name),
        threads: group.threads,
    };
    let properties = model.liveness();
    let rows = liveness_rows(model, &properties, group.liveness);
    let fairness = model.fairness();
    liveness::check_limits(&rows, fairness);
    let marks = |state: &M::State| liveness::marks_of(&rows, state);
    let recording = compact::Recording {
        fairness,
        marks: &marks,
    };
    let recording = (!rows.is_empty()).then_some(&recording);
    let search = compact::Search {
        model,
        fingerprinter,
        options: &options,
        hooks: &hooks,
        recording,
        codec: model.codec(),
    };
    let (report, graph) =
        compact::explore_hooked(search, group.observe).map_err(|e| e.to_string())?;
    let mut searched = safety_searched(model, &report, group.safety);
    if let Some((graph, explored)) = graph {
        let max_memory_bytes = group.options.max_memory_bytes;
        let print = |state: &M::State| fingerprinter.fingerprint(state).slot_bits();
        let outcomes =
            liveness::decide_rows(&rows, &graph, &explored, fairness, max_memory_bytes, &print);
        for (entry, outcome) in group.liveness.iter().zip(outcomes) {
            // Holding, the check saw every state the search stored: a collision could have hid
            // a state, and with it a lasso, as it could for an `always` check that holds.
            let exhausted = outcome.verdict == Verdict::Holds
                && outcome.limit.is_none()
                && outcome.collision.is_none();
            let collision = exhausted.then_some(report.collision);
            searched.push((liveness_searched(model, entry, outcome), collision));
        }
    }
    Ok((searched, report.unique_states, report.memory_bytes))
}

/// What `report`, a compact search's, says of each of `entries`, its `always` and `sometimes`
/// entries, with the collision estimate of a verdict reached by exhausting the space.
fn safety_searched<M>(
    model: &M,
    report: &compact::Report<M::State, M::Action>,
    entries: &[&Entry],
) -> Vec<(Searched, Option<CollisionEstimate>)>
where
    M: Model,
    M::State: Variables + Clone,
    M::Action: Clone + PartialEq + Debug,
{
    let limit = match report.stop {
        compact::Stop::Limit(limit) => Some(limit_name(limit)),
        compact::Stop::Decided | compact::Stop::Exhausted => None,
    };
    let mut searched = Vec::with_capacity(entries.len());
    for entry in entries {
        let property = property_of(model, entry);
        let outcome = report
            .outcome(entry.property.id)
            .cloned()
            .expect("a selected always or sometimes property is decided or pending");
        let exhausted = report.stop == compact::Stop::Exhausted
            && outcome.path.is_none()
            && outcome.verdict != Verdict::Inconclusive;
        let verdict = outcome.verdict;
        let trace = outcome
            .path
            .map(|path| breadth_first_trace(model, &property, entry, verdict, path));
        searched.push((
            (
                verdict,
                outcome.states,
                outcome.unique_states,
                outcome.max_depth,
                trace,
                (verdict == Verdict::Inconclusive)
                    .then_some(limit)
                    .flatten(),
            ),
            exhausted.then_some(report.collision),
        ));
    }
    searched
}

/// The trace of `path`, a path of `model`, with `entry`'s header: each action named by the
/// model's `format_action`.
pub fn to_trace<M>(
    model: &M,
    entry: &Entry,
    verdict: Verdict,
    path: &ModelPath<M::State, M::Action>,
) -> Trace
where
    M: Model,
    M::State: Variables,
    M::Action: Debug,
{
    let vars = |s: &M::State| {
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
        action: Some(model.format_action(a)),
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
        source: crate::connector::source_of(entry.system()),
    }
}

/// Runs `entries` on `threads` threads with the default engine. Entries not started by
/// `budget.deadline` (or before `budget.interrupt`) are inconclusive. Results come back in
/// `entries` order.
pub fn run_all<U: Systems>(entries: &[Entry], threads: usize, budget: &Budget) -> Vec<CheckResult> {
    run_all_with::<U>(entries, &Options::new(threads, *budget), &Unobserved)
}

/// [`run_all`] with the default engine, with `observer` watching each entry.
pub fn run_all_observed<U: Systems>(
    entries: &[Entry],
    threads: usize,
    budget: &Budget,
    observer: &dyn Observer,
) -> Vec<CheckResult> {
    run_all_with::<U>(entries, &Options::new(threads, *budget), observer)
}

/// One unit of work: the entries (indices into the run's) that one search decides.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Job {
    /// The entries of one configuration up to its `fairness` knob ([`search_key`]), decided by
    /// one compact search: its `always` and `sometimes` entries, and its `eventually` entries
    /// (on the graph the search records).
    Configuration {
        safety: Vec<usize>,
        liveness: Vec<usize>,
    },
    /// One entry on its own: a reference search, or a liveness check.
    Entry(usize),
}

impl Job {
    fn first(&self) -> usize {
        self.entries()[0]
    }

    fn entries(&self) -> Vec<usize> {
        match self {
            Job::Configuration { safety, liveness } => {
                safety.iter().chain(liveness).copied().collect()
            }
            Job::Entry(index) => vec![*index],
        }
    }
}

/// The configuration whose search decides `entry` under the compact engine: its own with the
/// `fairness` knob at `declared`, whatever its kind. The knob chooses only the fairness an
/// `eventually` check assumes, never a transition, so the configurations it tells apart have
/// one graph: a configuration's `always` and `sometimes` entries and its `eventually` rows of
/// either fairness are one search. That search's model is built from this configuration, so it
/// records the declared fairness an `eventually` row may assume.
pub fn search_key(entry: &Entry) -> SystemConfig {
    let mut key = entry.config.clone();
    if declares_fairness(entry) {
        key.set_knob(FAIRNESS_BOUND.name, FairnessChoice::Declared.name())
            .expect("the fairness knob takes declared");
    }
    key
}

/// The searches `entries` take under `engine`, in the order of their first entry.
fn jobs(entries: &[Entry], engine: Engine) -> Vec<Job> {
    let mut jobs: Vec<(SystemConfig, Job)> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if engine == Engine::Reference {
            jobs.push((entry.config.clone(), Job::Entry(index)));
            continue;
        }
        let key = search_key(entry);
        let at = match jobs.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                let job = Job::Configuration {
                    safety: Vec::new(),
                    liveness: Vec::new(),
                };
                jobs.push((key, job));
                jobs.len() - 1
            }
        };
        if let Job::Configuration { safety, liveness } = &mut jobs[at].1 {
            match entry.property.kind {
                Kind::Eventually => liveness.push(index),
                _ => safety.push(index),
            }
        }
    }
    jobs.into_iter().map(|(_, job)| job).collect()
}

/// Runs `entries` as `options` says, with `observer` watching each entry. Results come back in
/// `entries` order and are the same at any thread count.
///
/// Threads: the run's searches are one per configuration up to its `fairness` knob, for its
/// `always`, `sometimes` and `eventually` entries together ([`search_key`], compact), or one per
/// entry (reference).
/// `min(threads, searches)` workers take them in catalogue order. A compact search spreads
/// each round over `threads / searches running` threads (at least 1), asked again every round,
/// so a configuration searched alone, or the last one still running, gets them all; reference
/// and liveness searches run on their worker alone. Searches not started by the deadline (or
/// before the interrupt) are inconclusive.
pub fn run_all_with<U: Systems>(
    entries: &[Entry],
    options: &Options,
    observer: &dyn Observer,
) -> Vec<CheckResult> {
    let jobs = jobs(entries, options.engine);
    let threads = options.threads.max(1);
    let next = AtomicUsize::new(0);
    let running = AtomicUsize::new(0);
    let share = || (threads / running.load(Ordering::Relaxed).max(1)).max(1);
    let results: Mutex<Vec<Option<CheckResult>>> = Mutex::new(vec![None; entries.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(jobs.len()).max(1) {
            scope.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    running.fetch_add(1, Ordering::Relaxed);
                    let first = job.first();
                    let started = Instant::now();
                    let done = crate::catalogue::quietly(|| match job {
                        Job::Entry(index) => {
                            observer.started(*index, &entries[*index]);
                            vec![run_entry_observed::<U>(
                                &entries[*index],
                                &options.budget,
                                options.max_memory_bytes,
                                &mut |p| observer.progress(first, p),
                            )]
                        }
                        Job::Configuration { safety, liveness } => {
                            let all = safety.len() + liveness.len();
                            observer.started_search(first, &entries[first], all);
                            let pick = |group: &[usize]| -> Vec<&Entry> {
                                group.iter().map(|i| &entries[*i]).collect()
                            };
                            let group = (pick(safety), pick(liveness));
                            let observe = &mut |p| observer.progress(first, p);
                            run_group::<U>(group, options, &share, observe)
                        }
                    })
                    .unwrap_or_else(|panic| {
                        let blank = |i: usize| inconclusive(&entries[i], started.elapsed());
                        let error = Some(format!("its model panicked: {panic}"));
                        let panicked = |i| CheckResult {
                            limit: Some(MODEL_PANICKED),
                            error: error.clone(),
                            ..blank(i)
                        };
                        job.entries().into_iter().map(panicked).collect()
                    });
                    running.fetch_sub(1, Ordering::Relaxed);
                    for (index, result) in job.entries().into_iter().zip(done) {
                        observer.finished(index, &result);
                        results.lock().expect("no thread panics holding the lock")[index] =
                            Some(result);
                    }
                }
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

/// Decides `group`, the safety and liveness entries of one configuration, with one compact
/// search on the threads `share` gives each round.
fn run_group<U: Systems>(
    (safety, liveness): (Vec<&Entry>, Vec<&Entry>),
    options: &Options,
    share: &dyn Fn() -> usize,
    observe: &mut dyn FnMut(Progress),
) -> Vec<CheckResult> {
    let start = Instant::now();
    let most_threads = AtomicUsize::new(0);
    let threads = || {
        let threads = share();
        most_threads.fetch_max(threads, Ordering::Relaxed);
        threads
    };
    let key = search_key(safety.first().unwrap_or_else(|| &liveness[0]));
    let (grouped, heap) = crate::heap::measure(|| {
        key.with_model::<U, _>(Group {
            safety: &safety,
            liveness: &liveness,
            options,
            threads: &threads,
            observe,
        })
    });
    let elapsed = start.elapsed();
    let most_threads = most_threads.into_inner().max(1);
    let blank = |entry: &Entry| inconclusive(entry, elapsed);
    let group = safety.iter().chain(&liveness);
    match grouped {
        Err(error) => group
            .map(|entry| CheckResult {
                error: Some(error.clone()),
                ..blank(entry)
            })
            .collect(),
        Ok((searched, unique_states, memory_bytes)) => group
            .zip(searched)
            .map(
                |(entry, ((verdict, states, unique, max_depth, trace, limit), collision))| {
                    let (limit, error) = collision_error(limit);
                    let undecided = verdict == Verdict::Inconclusive && error.is_none();
                    CheckResult {
                        verdict,
                        states,
                        unique_states: unique,
                        max_depth,
                        peak_heap_bytes: heap.filter(|_| most_threads == 1),
                        trace,
                        search: Some(SearchFigures {
                            unique_states,
                            memory_bytes,
                            threads: most_threads,
                        }),
                        collision,
                        limit: undecided.then(|| limit.unwrap_or("max-states")),
                        error,
                        ..blank(entry)
                    }
                },
            )
            .collect(),
    }
}

/// `entry` undecided after `elapsed`: the result a group's entries start from.
fn inconclusive(entry: &Entry, elapsed: Duration) -> CheckResult {
    CheckResult {
        entry: entry.clone(),
        verdict: Verdict::Inconclusive,
        states: 0,
        unique_states: 0,
        max_depth: 0,
        elapsed,
        peak_heap_bytes: None,
        trace: None,
        trace_path: None,
        trace_error: None,
        search: None,
        collision: None,
        limit: None,
        error: None,
    }
}

/// The entries of shard `index` of `count` (both from 1): every `count`-th entry of `entries`,
/// starting at the `index`-th. The `count` shards of one selection cover each entry exactly once,
/// and `walcheck merge` ([`crate::ci`]) puts their results back in catalogue order.
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
/// beside fresh ones. A counterexample whose path is recorded already was written during the run
/// ([`WritingTraces`]) and is left as it is. Carries on past a failed write and returns the first
/// error, with how many more traces were not written, so that the caller can still report every
/// verdict; each counterexample not written keeps its own error in [`CheckResult::trace_error`].
pub fn write_traces(results: &mut [CheckResult], dir: &Path) -> Result<(), String> {
    if results.iter().any(CheckResult::is_counterexample) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            let error = format!("cannot create trace directory {}: {e}", dir.display());
            for result in results.iter_mut().filter(|r| r.is_counterexample()) {
                result.trace_error = Some(error.clone());
            }
            return Err(error);
        }
    }
    let (mut first_error, mut more) = (None, 0);
    for result in results.iter_mut() {
        let path = dir.join(trace_file_name(&result.entry));
        if !result.is_counterexample() {
            if result.verdict != Verdict::Inconclusive && path.is_file() {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        if result.trace_path.is_some() {
            continue;
        }
        let trace = result.trace.as_ref().expect("counterexamples have traces");
        match trace.write(&path) {
            Ok(()) => result.trace_path = Some(path),
            Err(e) => {
                let error = format!("cannot write trace {}: {e}", path.display());
                match first_error {
                    None => first_error = Some(error.clone()),
                    Some(_) => more += 1,
                }
                result.trace_error = Some(error);
            }
        }
    }
    first_error.map_or(Ok(()), |first| match more {
        0 => Err(first),
        n => Err(format!("{first} (and {n} more traces not written)")),
    })
}

/// Watches a run for `inner` and writes each counterexample under `dir` as soon as the search
/// that decided it ends (a configuration's one search decides all its checks), so that a run
/// stopped early (interrupted, or killed) leaves the traces of what it found; [`WritingTraces::record`] then gives their paths to the results, and [`write_traces`]
/// writes the rest. A write that fails here is left to [`write_traces`] to try again and report.
pub struct WritingTraces<'a> {
    inner: &'a dyn Observer,
    dir: &'a Path,
    /// Per entry of the run, the trace written for it.
    written: Mutex<Vec<Option<PathBuf>>>,
}

impl<'a> WritingTraces<'a> {
    /// Writing under `dir` for a run of `entries` entries watched by `inner`.
    pub fn new(dir: &'a Path, entries: usize, inner: &'a dyn Observer) -> WritingTraces<'a> {
        WritingTraces {
            inner,
            dir,
            written: Mutex::new(vec![None; entries]),
        }
    }

    /// Records in `results` (the run's, in its entries' order) the path of each trace written.
    pub fn record(self, results: &mut [CheckResult]) {
        let written = self
            .written
            .into_inner()
            .expect("no panics holding the lock");
        for (result, path) in results.iter_mut().zip(written) {
            if path.is_some() {
                result.trace_path = path;
            }
        }
    }
}

impl Observer for WritingTraces<'_> {
    fn started(&self, index: usize, entry: &Entry) {
        self.inner.started(index, entry);
    }

    fn started_search(&self, index: usize, entry: &Entry, entries: usize) {
        self.inner.started_search(index, entry, entries);
    }

    fn progress(&self, index: usize, progress: Progress) {
        self.inner.progress(index, progress);
    }

    fn finished(&self, index: usize, result: &CheckResult) {
        if let Some(trace) = result.trace.as_ref().filter(|_| result.is_counterexample()) {
            let path = self.dir.join(trace_file_name(&result.entry));
            if trace.write(&path).is_ok() {
                self.written.lock().expect("no panics holding the lock")[index] = Some(path);
            }
        }
        self.inner.finished(index, result);
    }
}

/// Replays `trace` against the model its header names (an observed trace of a live run against
/// the PostgreSQL model, [`walcheck_sim::observed`]). The outer `Err` is bad input (see
/// [`check_trace`]: exit 2); the inner one is where replay parted from the trace (exit 1). `Ok` is
/// the number of steps replayed.
pub fn replay_trace<U: Systems>(trace: &Trace) -> Result<Result<usize, Mismatch>, String> {
    if trace.header.is_observed() {
        // A live run's observations: only the observed variables are constrained.
        return walcheck_sim::observed::replay_observed(trace);
    }
    let config = crate::catalogue::config_from_header(&trace.header)?;
    check_values(trace, config.info().view.variables)?;
    config.with_model::<U, _>(Replay(trace))
}

/// [`replay_trace`] on the model of the trace's header.
struct Replay<'a>(&'a Trace);

impl WithModel for Replay<'_> {
    type Output = Result<Result<usize, Mismatch>, String>;

    fn call<M>(self, model: M) -> Self::Output
    where
        M: CheckModel,
    {
        replay_on(&model, self.0)
    }
}

/// Checks that `trace` is one its header's system can have written, or says in one line why
/// not: a known system, variant, fault set and bounds; a property of that system whose kind the
/// header repeats; a counterexample (`always`, `violated`) or a witness (`sometimes`, `holds`);
/// and exactly that system's variables.
pub fn check_trace<U: Systems>(trace: &Trace) -> Result<SystemConfig, String> {
    let config = crate::catalogue::config_from_header(&trace.header)?;
    check_values(trace, config.info().view.variables)?;
    config.with_model::<U, _>(CheckAgainst(trace))?;
    Ok(config)
}

/// Checks that every value of a declared variable reads as its kind says, or says in one line
/// which does not: an LSN as PostgreSQL prints one (`X/Y`, 1 to 8 hex digits each; `none` too
/// for `LSN or none`), a `count` a whole number, a `bool` true or false, a `number or none` a
/// whole number in range or `none`.
pub fn check_values(
    trace: &Trace,
    declared: &[walcheck_properties::system::VarInfo],
) -> Result<(), String> {
    for (i, step) in trace.steps.iter().enumerate() {
        for (name, value) in &step.vars {
            let Some(info) = declared.iter().find(|v| v.name == *name) else {
                continue;
            };
            if let Err(why) = value_of_kind(value, info.kind) {
                return Err(format!("state {i}: {name} is {why}"));
            }
        }
    }
    Ok(())
}

/// Whether `value` is one of `kind`, or what it is instead.
fn value_of_kind(value: &walcheck_properties::system::Var, kind: &str) -> Result<(), String> {
    use walcheck_properties::system::Var;
    let text = value.to_string();
    let lsn =
        |or_none: &str| format!("{text:?}, not an LSN (X/Y, 1 to 8 hex digits each{or_none})");
    match (kind, value) {
        ("LSN or none", Var::Text(t)) if t == "none" => Ok(()),
        ("LSN", Var::Text(t)) if t.parse::<walcheck_model::Lsn>().is_ok() => Ok(()),
        ("LSN or none", Var::Text(t)) if t.parse::<walcheck_model::Lsn>().is_ok() => Ok(()),
        ("LSN", _) => Err(lsn("")),
        ("LSN or none", _) => Err(lsn(", or none")),
        ("count", Var::Int(_)) | ("bool", Var::Bool(_)) => Ok(()),
        ("count", _) => Err(format!("{text:?}, not a count (a whole number)")),
        ("bool", _) => Err(format!("{text:?}, not true or false")),
        ("number or none", Var::Text(t)) if t == "none" => Ok(()),
        ("number or none", Var::Text(t)) => walcheck_traces::whole_number(t)
            .map(|_| ())
            .map_err(|why| format!("{text:?}, {why}, nor none")),
        _ => Ok(()),
    }
}

/// `check_against` on the model of a configuration.
struct CheckAgainst<'a>(&'a Trace);

impl WithModel for CheckAgainst<'_> {
    type Output = Result<(), String>;

    fn call<M>(self, model: M) -> Self::Output
    where
        M: CheckModel,
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
    M: CheckModel,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{self, Selection};

    /// `fairness=none` chooses only what an `eventually` check assumes: a configuration's
    /// `always`, `sometimes` and `eventually` entries under it are still one compact search.
    #[test]
    fn a_fairness_none_configuration_is_one_search() {
        let entries = catalogue::select(&Selection {
            specs: vec!["olake-bootstrap:pr1084".into()],
            faults: Some("none".into()),
            bounds: vec!["server=primary".into(), "fairness=none".into()],
        })
        .unwrap();
        let kinds: std::collections::BTreeSet<&str> =
            entries.iter().map(|e| e.property.kind.name()).collect();
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            ["always", "eventually", "sometimes"]
        );
        let jobs_of = |engine| jobs(&entries, engine);
        let compact = jobs_of(Engine::Compact);
        assert_eq!(compact.len(), 1, "{compact:?}");
        let mut decided = compact[0].entries();
        decided.sort_unstable();
        assert_eq!(decided, (0..entries.len()).collect::<Vec<_>>());
        assert_eq!(jobs_of(Engine::Reference).len(), entries.len());
    }
}
