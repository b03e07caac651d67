//! The benchmarks' harness, shared by `cargo bench` (`benches/checkers.rs`) and the
//! performance table of docs/performance.md (`examples/bench_report.rs`): the catalogue grouped
//! into configurations, full explorations with walcheck's breadth-first checker and with
//! stateright's BFS and DFS at any thread count and with the compact engine, the searches for
//! each configuration's expected counterexamples, and a configuration's checks decided by each
//! engine as `walcheck check` decides them.
//!
//! Granularity is the configuration (system, variant, faults, bounds), not the property: every
//! holding `always` property of a configuration is proved by the same full exploration of its
//! reachable states, so one exploration times all of them, and one run of the configuration's
//! expected-violated properties times its counterexamples. The configurations come from
//! [`catalogue::select`], so systems and properties added to the catalogue are measured without
//! touching the benchmarks. They are walcheck's own (built in, or connector files registered):
//! no crate's own [`catalogue::Systems`], `()` where a model is built.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::hash::Hash;
use std::time::{Duration, Instant};

use stateright::{Checker, Expectation, HasDiscoveries, Model, Property};
use walcheck_properties::system::Kind;

use crate::catalogue::{self, Entry, Selection, SystemConfig, WithModel};
use crate::compact::{self, Xxh64};
use crate::reference;
use crate::run::{self, CheckResult, Engine, Options, Unobserved};
use crate::search::{Budget, Verdict};

/// One configuration of the catalogue and what it expects of its `always` properties.
#[derive(Clone, Debug)]
pub struct Configuration {
    pub config: SystemConfig,
    /// `system:variant/faults[/bounds]`, the benchmark's name.
    pub name: String,
    /// `always` properties expected to hold: each one's proof is a full exploration.
    pub holding: Vec<&'static str>,
    /// `always` properties expected to be violated: each has a shortest counterexample.
    pub violated: Vec<&'static str>,
    /// Its `always` and `sometimes` entries: what one compact search decides.
    pub checks: Vec<Entry>,
}

/// Every configuration of the default catalogue, in catalogue order.
pub fn configurations() -> Vec<Configuration> {
    configurations_of(&Selection::default()).expect("the catalogue selects")
}

/// The configurations `selection` names, in catalogue order, or why it names none.
pub fn configurations_of(selection: &Selection) -> Result<Vec<Configuration>, String> {
    let entries = catalogue::select(selection)?;
    let mut out: Vec<Configuration> = Vec::new();
    for entry in entries {
        if out.last().is_none_or(|c| c.config != entry.config) {
            let bounds = entry.config.non_default_bounds().join(",");
            out.push(Configuration {
                config: entry.config.clone(),
                name: format!(
                    "{}:{}/{}{}{}",
                    entry.system(),
                    entry.config.variant(),
                    entry.config.faults(),
                    if bounds.is_empty() { "" } else { "/" },
                    bounds
                ),
                holding: Vec::new(),
                violated: Vec::new(),
                checks: Vec::new(),
            });
        }
        let last = out.last_mut().expect("pushed above");
        if entry.property.kind != Kind::Eventually {
            last.checks.push(entry.clone());
        }
        if entry.property.kind != Kind::Always {
            continue;
        }
        match entry.expected {
            Verdict::Holds => last.holding.push(entry.property.id),
            _ => last.violated.push(entry.property.id),
        }
    }
    Ok(out)
}

/// A search strategy and its thread count.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Search {
    /// walcheck's own breadth-first checker ([`crate::reference`]), one thread.
    Walcheck,
    /// stateright 0.31's BFS with this many threads.
    StaterightBfs(usize),
    /// stateright 0.31's DFS with this many threads.
    StaterightDfs(usize),
    /// walcheck's compact engine ([`crate::compact`]), 64-bit fingerprints, this many threads.
    Compact(usize),
}

impl Search {
    /// Every search the benchmarks compare.
    pub const ALL: [Search; 7] = [
        Search::Walcheck,
        Search::StaterightBfs(1),
        Search::StaterightBfs(2),
        Search::StaterightDfs(1),
        Search::StaterightDfs(2),
        Search::Compact(1),
        Search::Compact(2),
    ];

    /// `walcheck-bfs-1`, `stateright-dfs-2`, ...
    pub fn name(self) -> String {
        match self {
            Search::Walcheck => "walcheck-bfs-1".into(),
            Search::StaterightBfs(n) => format!("stateright-bfs-{n}"),
            Search::StaterightDfs(n) => format!("stateright-dfs-{n}"),
            Search::Compact(n) => format!("compact-bfs-{n}"),
        }
    }
}

/// What one full exploration found and cost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Explored {
    /// Distinct states stored.
    pub unique_states: u64,
    /// States generated, duplicates included.
    pub states: u64,
    /// Wall time of the search.
    pub elapsed: Duration,
}

impl Explored {
    /// Distinct states stored per second of wall time; `None` when no time was measured.
    pub fn states_per_s(&self) -> Option<f64> {
        let seconds = self.elapsed.as_secs_f64();
        (seconds > 0.0).then(|| self.unique_states as f64 / seconds)
    }
}

/// Explores every state of `model` reachable within its boundary with `search`.
///
/// walcheck's checker proves `proof`, an `always` property that must hold (a violation would end
/// the search early: that is a panic here, naming the property). stateright's checkers check all
/// of the model's properties at once and are told to finish only when the space is exhausted.
pub fn explore<M>(model: M, proof: &Property<M>, search: Search) -> Explored
where
    M: Model + Send + Sync + 'static,
    M::State: Hash + Eq + Clone + Debug + Send + Sync + 'static,
    M::Action: Clone + PartialEq + Debug + Send + Sync + 'static,
{
    let start = Instant::now();
    match search {
        Search::Walcheck => {
            let outcome =
                reference::check(&model, proof, &Budget::default()).expect("an always property");
            assert_eq!(
                outcome.verdict,
                Verdict::Holds,
                "{} must hold for a full exploration",
                proof.name
            );
            Explored {
                unique_states: outcome.unique_states,
                states: outcome.states,
                elapsed: start.elapsed(),
            }
        }
        Search::Compact(threads) => {
            let options = compact::Options {
                threads,
                ..compact::Options::default()
            };
            // Only the proof: a full exploration, as walcheck's checker makes for it.
            let hooks = compact::Hooks {
                select: &|name| name == proof.name,
                threads: &|| threads,
            };
            let report = compact::check_hooked(&model, &Xxh64, &options, &hooks, &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            let verdict = report.outcome(proof.name).map(|o| o.verdict);
            assert_eq!(
                verdict,
                Some(Verdict::Holds),
                "{} must hold for a full exploration",
                proof.name
            );
            Explored {
                unique_states: report.unique_states,
                states: report.states,
                elapsed: start.elapsed(),
            }
        }
        Search::StaterightBfs(threads) | Search::StaterightDfs(threads) => {
            // No property has this name, so the checker never finishes early.
            let never = HasDiscoveries::AllOf(BTreeSet::from(["(every state)"]));
            let builder = model.checker().threads(threads).finish_when(never);
            let (unique, states) = if matches!(search, Search::StaterightBfs(_)) {
                let done = builder.spawn_bfs().join();
                (done.unique_state_count(), done.state_count())
            } else {
                let done = builder.spawn_dfs().join();
                (done.unique_state_count(), done.state_count())
            };
            Explored {
                unique_states: unique as u64,
                states: states as u64,
                elapsed: start.elapsed(),
            }
        }
    }
}

/// The property of `model` called `name`.
pub fn property<M: Model>(model: &M, name: &str) -> Property<M> {
    model
        .properties()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no property {name}"))
}

/// A full exploration of `configuration` with `search`, proving its first holding property;
/// `None` when no `always` property of it holds.
pub fn explore_configuration(configuration: &Configuration, search: Search) -> Option<Explored> {
    let proof = configuration.holding.first()?;
    Some(
        configuration
            .config
            .with_model::<(), _>(Explore(proof, search)),
    )
}

/// Decides every `always` and `sometimes` entry of `configuration` as `walcheck check` does with
/// `engine` on `threads` threads: one compact search, or one reference search per entry.
pub fn decide_configuration(
    configuration: &Configuration,
    engine: Engine,
    threads: usize,
) -> Vec<CheckResult> {
    let options = Options {
        engine,
        ..Options::new(threads, Budget::default())
    };
    run::run_all_with::<()>(&configuration.checks, &options, &Unobserved)
}

/// Searches `configuration` with walcheck's checker for each expected-violated `always`
/// property in turn; returns the total length of the shortest counterexamples found (in steps),
/// which is the same on every run. Panics naming a property that is not violated.
pub fn find_counterexamples(configuration: &Configuration) -> usize {
    configuration
        .config
        .with_model::<(), _>(Find(&configuration.violated))
}

/// [`explore_configuration`] on the model of a configuration: the property to prove, and how.
struct Explore<'a>(&'a str, Search);

impl WithModel for Explore<'_> {
    type Output = Explored;
    fn call<M>(self, model: M) -> Explored
    where
        M: Model + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Send + Sync + 'static,
    {
        let proof = property(&model, self.0);
        explore(model, &proof, self.1)
    }
}

/// [`find_counterexamples`] on the model of a configuration: the properties expected violated.
struct Find<'a>(&'a [&'static str]);

impl WithModel for Find<'_> {
    type Output = usize;
    fn call<M>(self, model: M) -> usize
    where
        M: Model + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Send + Sync + 'static,
    {
        let mut steps = 0;
        for name in self.0 {
            let p = property(&model, name);
            debug_assert_eq!(p.expectation, Expectation::Always);
            let outcome =
                reference::check(&model, &p, &Budget::default()).expect("an always property");
            assert_eq!(
                outcome.verdict,
                Verdict::Violated,
                "{name} must be violated"
            );
            steps += outcome.path.map_or(0, |p| p.steps.len());
        }
        steps
    }
}
