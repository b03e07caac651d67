//! `cargo bench -p walcheck`: how fast walcheck finds and proves, beside a lean baseline.
//!
//! Groups (criterion ids `GROUP/PARAMETER`):
//! - `first-counterexample/CONFIG`: walcheck's breadth-first checker, one thread, finding the
//!   shortest counterexample of every expected-violated `always` property of one configuration
//!   (system, variant, faults, bounds) in turn.
//! - `proof/SEARCH/CONFIG`: one full exploration of a configuration that has a holding `always`
//!   property, which is what proving each of them costs; SEARCH is walcheck's BFS (one thread) or
//!   stateright's BFS or DFS with 1 or 2 threads. Throughput is distinct states, so criterion
//!   prints states/s.
//!   The compact engine (`compact-bfs-1`, `compact-bfs-2`) is measured beside them.
//! - `engine/ENGINE/CONFIG`: every `always` and `sometimes` entry of one configuration decided as
//!   `walcheck check` decides them: `reference` (one search per entry, one thread), `compact-1`
//!   and `compact-2` (one search for all of them on 1 or 2 threads), traces included.
//! - `simulate/LADDER`: the simulator's sync and async ladders, every variant, 20 attempts per
//!   level; throughput is attempts (one attempt runs every variant on the same workload).
//! - `connector-file/SPEC`: the proof of `wal-pointers-ordered` (one full exploration, walcheck's
//!   BFS on one thread) of the OLake bootstrap written in the connector description language
//!   (`connectors/olake-bootstrap-master.wal`) beside the hand-written `olake-bootstrap:master`
//!   at the file's mapped bounds (faults `all`, `server=primary`): states/s of the interpreter
//!   against a system written in Rust.
//! - `baseline-2pc/SEARCH`: two-phase commit with [`RM_COUNT`] resource managers
//!   ([`walcheck::baseline`]), the same searches as `proof`.
//!
//! Granularity is the configuration, not the property: the proofs of a configuration's holding
//! properties are the same exploration, and per-property benchmarks would multiply the run time
//! by about eight for no new figure. Configurations come from the catalogue itself
//! ([`walcheck::bench::configurations`]), so new systems and properties are measured as they land.
//!
//! Criterion is set for a 2-core machine and a whole run under five minutes: ten samples per
//! benchmark, each of as few iterations as fill 60 ms, criterion's default analysis. Filter with
//! `cargo bench -p walcheck -- proof/walcheck` and so on.

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use walcheck::baseline::TwoPhaseCommit;
use walcheck::bench::{self, Search};
use walcheck::run::Engine;
use walcheck_model::olake::Variant;
use walcheck_sim::{LadderKind, Options, Params};

/// Resource managers in the baseline: 6 gives 50,816 states, the size of the catalogue's largest
/// holding configurations (48,987 and 67,584), so both tables grow alike.
const RM_COUNT: usize = walcheck::baseline::RM_COUNT;

/// Attempts per level in the `simulate` group.
const SIM_ATTEMPTS: u32 = 20;

fn first_counterexample(c: &mut Criterion) {
    let mut group = c.benchmark_group("first-counterexample");
    group.sampling_mode(SamplingMode::Flat);
    for configuration in bench::configurations() {
        if configuration.violated.is_empty() {
            continue;
        }
        group.bench_function(BenchmarkId::from_parameter(&configuration.name), |b| {
            b.iter(|| black_box(bench::find_counterexamples(&configuration)))
        });
    }
    group.finish();
}

fn proof(c: &mut Criterion) {
    let configurations = bench::configurations();
    for search in Search::ALL {
        let mut group = c.benchmark_group(format!("proof/{}", search.name()));
        group.sampling_mode(SamplingMode::Flat);
        for configuration in &configurations {
            let Some(explored) = bench::explore_configuration(configuration, search) else {
                continue;
            };
            group.throughput(Throughput::Elements(explored.unique_states));
            group.bench_function(BenchmarkId::from_parameter(&configuration.name), |b| {
                b.iter(|| black_box(bench::explore_configuration(configuration, search)))
            });
        }
        group.finish();
    }
}

fn engine(c: &mut Criterion) {
    let configurations = bench::configurations();
    for (name, engine, threads) in [
        ("reference", Engine::Reference, 1),
        ("compact-1", Engine::Compact, 1),
        ("compact-2", Engine::Compact, 2),
    ] {
        let mut group = c.benchmark_group(format!("engine/{name}"));
        group.sampling_mode(SamplingMode::Flat);
        for configuration in &configurations {
            if configuration.checks.is_empty() {
                continue;
            }
            group.bench_function(BenchmarkId::from_parameter(&configuration.name), |b| {
                b.iter(|| black_box(bench::decide_configuration(configuration, engine, threads)))
            });
        }
        group.finish();
    }
}

fn simulate(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sampling_mode(SamplingMode::Flat);
    for (name, kind) in [("sync", LadderKind::Sync), ("async", LadderKind::Async)] {
        let options = Options {
            variants: Variant::ALL.to_vec(),
            ladders: vec![kind],
            seed: 1,
            attempts: SIM_ATTEMPTS,
            params: Params::default(),
            trace_out: None,
            trace_limit: 0,
            protocol: walcheck_sim::engine::Protocol::Independent,
            level_rounds: 0,
        };
        let levels = kind.levels(&options.params).len() as u64;
        group.throughput(Throughput::Elements(levels * u64::from(SIM_ATTEMPTS)));
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| black_box(walcheck_sim::simulate(&options).expect("valid options")))
        });
    }
    group.finish();
}

fn baseline_2pc(c: &mut Criterion) {
    let model = TwoPhaseCommit { rm_count: RM_COUNT };
    let proof = bench::property(&model, "consistent");
    let mut group = c.benchmark_group("baseline-2pc");
    group.sampling_mode(SamplingMode::Flat);
    for search in Search::ALL {
        let explored = bench::explore(model, &proof, search);
        group.throughput(Throughput::Elements(explored.unique_states));
        group.bench_function(BenchmarkId::from_parameter(search.name()), |b| {
            b.iter(|| black_box(bench::explore(model, &proof, search)))
        });
    }
    group.finish();
}

/// Runs first: it registers the files before anything reads the registry. The Electric files
/// beside `electric-flush` at its default bounds, no faults (the files' default), the scripted
/// transactions only: the measure of a design written as a file against the
/// hand-written system (at most 3× its states and time is the goal).
fn connector_file(c: &mut Criterion) {
    let load = |file: &str| -> &'static walcheck_lang::system::FileSystem {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("connectors/{file}.wal"));
        let (system, _) = walcheck_lang::system::load(&path).expect("the example file loads");
        Box::leak(Box::new(system))
    };
    let files = (
        load("olake-bootstrap-master"),
        load("electric-v1.4.15"),
        load("electric-pr4064"),
    );
    walcheck::catalogue::register(&files).expect("the files register");
    let electric = || {
        vec![
            "timer_order=realistic".to_owned(),
            "traffic=finite".to_owned(),
        ]
    };
    let mut group = c.benchmark_group("connector-file");
    group.sampling_mode(SamplingMode::Flat);
    for (spec, faults, bounds) in [
        ("olake-bootstrap-master", "all", vec![]),
        (
            "olake-bootstrap:master",
            "all",
            vec!["server=primary".to_owned()],
        ),
        ("electric-v1.4.15", "all", vec![]),
        ("electric-flush:v1.4.15", "none", electric()),
        ("electric-pr4064", "all", vec![]),
        ("electric-flush:pr4064", "none", electric()),
    ] {
        let selection = walcheck::catalogue::Selection {
            specs: vec![spec.to_owned()],
            faults: Some(faults.to_owned()),
            bounds,
        };
        let configurations = bench::configurations_of(&selection).expect("the spec selects");
        let configuration = &configurations[0];
        let explored = bench::explore_configuration(configuration, Search::Walcheck)
            .expect("a property holds: its proof explores every state");
        group.throughput(Throughput::Elements(explored.unique_states));
        group.bench_function(BenchmarkId::from_parameter(spec), |b| {
            b.iter(|| {
                black_box(bench::explore_configuration(
                    configuration,
                    Search::Walcheck,
                ))
            })
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(20))
        .measurement_time(Duration::from_millis(60))
        .without_plots()
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = connector_file, first_counterexample, proof, engine, simulate, baseline_2pc
}
criterion_main!(benches);
