//! The in-process rows of docs/performance.md's performance table, as markdown: states/s and heap bytes
//! per stored state on the catalogue's largest holding configuration and on the two-phase-commit
//! baseline, their ratio, and the simulator's attempts/s. `benches/report.sh` runs it
//! after the whole-process timings; `cargo run --release -p walcheck --example bench_report`
//! runs it alone.
//!
//! With `WALCHECK_BENCH_LARGE=1` it also measures the large configuration of issue 18
//! (`olake-bootstrap:pr1084 --faults all --bound statements=6 --bound syncs=4 --bound crashes=2
//! --bound server=primary`, 43,978,484 states).
//!
//! Every time is the minimum of [`RUNS`] runs (the machine is shared; the minimum is the run
//! least disturbed). States/s counts distinct states stored per second of the search.

use std::time::{Duration, Instant};

use walcheck::baseline::{TwoPhaseCommit, RM_COUNT};
use walcheck::bench::{self, Configuration, Explored, Search};
use walcheck::catalogue::Selection;
use walcheck::run::Engine;
use walcheck_model::olake::Variant;
use walcheck_sim::{LadderKind, Options, Params};

#[global_allocator]
static ALLOC: walcheck::heap::Counting = walcheck::heap::Counting;

/// Runs per figure; the fastest is reported.
const RUNS: usize = 5;

fn fastest(mut run: impl FnMut() -> Explored) -> Explored {
    (0..RUNS)
        .map(|_| run())
        .min_by_key(|e| e.elapsed)
        .expect("RUNS > 0")
}

fn rate(explored: &Explored) -> f64 {
    explored.states_per_s().unwrap_or(0.0)
}

fn thousands(n: f64) -> String {
    let digits = format!("{:.0}", n);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The bounds of the large configuration measured with `WALCHECK_BENCH_LARGE=1` (with
/// `olake-bootstrap:pr1084 --faults all`): 43,978,484 distinct states.
const LARGE_BOUNDS: [&str; 4] = ["statements=6", "syncs=4", "crashes=2", "server=primary"];

/// The compact engine beside the reference checker on `configuration`: a full exploration
/// (the proof of its first holding property) at 1 and 2 threads with heap bytes per state, then
/// all its `always` and `sometimes` checks decided as `walcheck check` decides them. One run each
/// when the space is large, else the fastest of [`RUNS`].
fn engine_rows(configuration: &Configuration, what: &str) {
    let measure = |search: Search| {
        let (explored, heap) = walcheck::heap::measure(|| {
            bench::explore_configuration(configuration, search).expect("holding")
        });
        (explored, heap)
    };
    let (reference, reference_heap) = measure(Search::Walcheck);
    let large = reference.unique_states > 1_000_000;
    let runs = if large { 1 } else { RUNS };
    let best = |search: Search| {
        (0..runs)
            .map(|_| bench::explore_configuration(configuration, search).expect("holding"))
            .min_by_key(|e| e.elapsed)
            .expect("runs > 0")
    };
    let reference = if large {
        reference
    } else {
        best(Search::Walcheck)
    };
    let (compact1, compact_heap) = measure(Search::Compact(1));
    let compact1 = if large {
        compact1
    } else {
        best(Search::Compact(1))
    };
    let compact2 = best(Search::Compact(2));
    let per_state = |heap: Option<u64>, e: &Explored| {
        heap.map_or("-".into(), |h| {
            format!("{:.1}", h as f64 / e.unique_states as f64)
        })
    };
    println!(
        "| {what} ({}, {} states): states/s, reference / compact 1 thread / compact 2 threads | {} / {} / {} | >= 1,000,000 per core | same |",
        configuration.name,
        thousands(reference.unique_states as f64),
        thousands(rate(&reference)),
        thousands(rate(&compact1)),
        thousands(rate(&compact2)),
    );
    println!(
        "| {what}: compact 2 threads over 1 thread | {:.2}x | >= 1.8x | same |",
        rate(&compact2) / rate(&compact1)
    );
    println!(
        "| {what}: peak heap bytes per distinct state, full exploration, reference / compact | {} / {} | <= 32 (stretch 16) | same |",
        per_state(reference_heap, &reference),
        per_state(compact_heap, &compact1),
    );
    let decide = |engine: Engine, threads: usize| {
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                bench::decide_configuration(configuration, engine, threads);
                start.elapsed()
            })
            .min()
            .expect("runs > 0")
    };
    let (r, c1, c2) = (
        decide(Engine::Reference, 1),
        decide(Engine::Compact, 1),
        decide(Engine::Compact, 2),
    );
    println!(
        "| {what}: its {} always and sometimes checks as `check` decides them, reference / compact 1 thread / compact 2 threads | {:.1} / {:.1} / {:.1} ms ({:.1}x / {:.1}x faster) | >= 4x | same |",
        configuration.checks.len(),
        r.as_secs_f64() * 1e3,
        c1.as_secs_f64() * 1e3,
        c2.as_secs_f64() * 1e3,
        r.as_secs_f64() / c1.as_secs_f64(),
        r.as_secs_f64() / c2.as_secs_f64(),
    );
}

fn main() {
    let configurations = bench::configurations();
    let holding: Vec<&Configuration> = configurations
        .iter()
        .filter(|c| !c.holding.is_empty())
        .collect();
    // The largest holding configuration, by the distinct states its proof explores.
    let largest = holding
        .iter()
        .map(|c| {
            let explored = bench::explore_configuration(c, Search::Walcheck).expect("holding");
            (explored.unique_states, *c)
        })
        .max_by_key(|(states, _)| *states)
        .map(|(_, c)| c)
        .expect("the catalogue has a holding configuration");
    // The OLake counterexamples of "Watch it find the bug", searched in this process.
    let olake = configurations
        .iter()
        .find(|c| c.name == "olake-bootstrap:master/none")
        .expect("olake-bootstrap:master/none is in the catalogue");
    let find = (0..RUNS * 20)
        .map(|_| {
            let start = Instant::now();
            bench::find_counterexamples(olake);
            start.elapsed()
        })
        .min()
        .expect("RUNS > 0");
    let model = TwoPhaseCommit { rm_count: RM_COUNT };
    let consistent = bench::property(&model, "consistent");

    let ours =
        fastest(|| bench::explore_configuration(largest, Search::Walcheck).expect("holding"));
    let base = fastest(|| bench::explore(model, &consistent, Search::Walcheck));
    let (_, ours_heap) =
        walcheck::heap::measure(|| bench::explore_configuration(largest, Search::Walcheck));
    let (_, base_heap) =
        walcheck::heap::measure(|| bench::explore(model, &consistent, Search::Walcheck));
    let per_state = |heap: Option<u64>, e: &Explored| {
        heap.map_or("-".into(), |h| thousands(h as f64 / e.unique_states as f64))
    };
    let ratio = rate(&ours) / rate(&base);

    println!(
        "| OLake counterexamples in process ({}: {}, walcheck BFS, shortest) | {:.0} µs (min of {}) | - | `cargo run --release -p walcheck --example bench_report` |",
        olake.name,
        olake.violated.join(" and "),
        find.as_secs_f64() * 1e6,
        RUNS * 20
    );
    println!(
        "| states/s, largest holding model ({}, {} states), walcheck BFS | {} | - | same |",
        largest.name,
        thousands(ours.unique_states as f64),
        thousands(rate(&ours))
    );
    println!(
        "| states/s, 2PC baseline ({RM_COUNT} RMs, {} states), walcheck BFS | {} | - | same |",
        thousands(base.unique_states as f64),
        thousands(rate(&base))
    );
    println!("| ratio to the 2PC baseline's states/s | {ratio:.2}x | >= 0.5x | same |");
    println!(
        "| heap bytes per stored state, largest holding model / 2PC | {} / {} | - | same |",
        per_state(ours_heap, &ours),
        per_state(base_heap, &base)
    );
    for search in &Search::ALL[1..5] {
        let ours = fastest(|| bench::explore_configuration(largest, *search).expect("holding"));
        let base = fastest(|| bench::explore(model, &consistent, *search));
        println!(
            "| states/s with {}, largest holding model / 2PC | {} / {} ({:.2}x) | - | same |",
            search.name(),
            thousands(rate(&ours)),
            thousands(rate(&base)),
            rate(&ours) / rate(&base)
        );
    }
    engine_rows(largest, "largest holding model");
    if std::env::var_os("WALCHECK_BENCH_LARGE").is_some() {
        let large = bench::configurations_of(&Selection {
            specs: vec!["olake-bootstrap:pr1084".into()],
            faults: Some("all".into()),
            bounds: LARGE_BOUNDS.iter().map(|b| (*b).to_owned()).collect(),
        })
        .expect("the issue's configuration selects")
        .remove(0);
        engine_rows(&large, "the large configuration");
    }
    for (name, kind) in [("sync", LadderKind::Sync), ("async", LadderKind::Async)] {
        let options = Options {
            variants: Variant::ALL.to_vec(),
            ladders: vec![kind],
            seed: 1,
            attempts: 200,
            params: Params::default(),
            trace_out: None,
            trace_limit: 0,
            protocol: walcheck_sim::engine::Protocol::Independent,
            level_rounds: 0,
        };
        let attempts = kind.levels(&options.params).len() as f64 * 200.0;
        let elapsed: Duration = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                walcheck_sim::simulate(&options).expect("valid options");
                start.elapsed()
            })
            .min()
            .expect("RUNS > 0");
        println!(
            "| simulator attempts/s, {name} ladder ({} variants each) | {} | - | same |",
            Variant::ALL.len(),
            thousands(attempts / elapsed.as_secs_f64())
        );
    }
}
