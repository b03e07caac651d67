//! The in-process rows of the README's performance table, as markdown: states/s and heap bytes
//! per stored state on the catalogue's largest holding configuration and on the two-phase-commit
//! baseline, their ratio, and the simulator's attempts/s. `benches/report.sh` runs it
//! after the whole-process timings; `cargo run --release -p walcheck --example bench_report`
//! runs it alone.
//!
//! Every time is the minimum of [`RUNS`] runs (the machine is shared; the minimum is the run
//! least disturbed). States/s counts distinct states stored per second of the search.

use std::time::{Duration, Instant};

use walcheck::baseline::{TwoPhaseCommit, RM_COUNT};
use walcheck::bench::{self, Configuration, Explored, Search};
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
    for search in &Search::ALL[1..] {
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
    for (name, kind) in [("sync", LadderKind::Sync), ("async", LadderKind::Async)] {
        let options = Options {
            variants: Variant::ALL.to_vec(),
            ladders: vec![kind],
            seed: 1,
            attempts: 200,
            params: Params::default(),
            trace_out: None,
            trace_limit: 0,
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
