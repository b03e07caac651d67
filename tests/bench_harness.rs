//! The benchmarks' harness and baseline measure what they say: the two-phase-commit baseline has
//! the classic state counts and witnesses, every search explores the same states, and the
//! catalogue's configurations are all there.

use walcheck::baseline::{Action, TwoPhaseCommit, RM_COUNT};
use walcheck::bench::{self, Search};
use walcheck::catalogue::{self, Selection};
use walcheck::reference;
use walcheck::search::{Budget, Verdict};

#[test]
fn heap_bytes_are_counted_per_thread() {
    let ((), held) = walcheck::heap::measure(|| {
        let block = vec![1u8; 1 << 20];
        assert_eq!(block.iter().map(|b| u64::from(*b)).sum::<u64>(), 1 << 20);
    });
    let held = held.expect("the counting allocator is installed");
    assert!(held >= 1 << 20, "{held}");
    // Another thread's allocations are not this thread's.
    let (_, held) = walcheck::heap::measure(|| {
        std::thread::spawn(|| vec![1u8; 1 << 22].len())
            .join()
            .unwrap()
    });
    assert!(held.unwrap() < 1 << 22, "{held:?}");
}

#[test]
fn two_phase_commit_has_the_classic_state_counts() {
    // TLA+'s TwoPhase (Gray and Lamport) with 3 resource managers has 288 distinct states;
    // stateright's own two-phase-commit example has 288 and, with 5, 8,832.
    for (rm_count, expected) in [(3, 288), (5, 8_832), (RM_COUNT, 50_816)] {
        let model = TwoPhaseCommit { rm_count };
        let consistent = bench::property(&model, "consistent");
        for search in Search::ALL {
            let explored = bench::explore(model, &consistent, search);
            assert_eq!(
                explored.unique_states,
                expected,
                "{rm_count} RMs, {}",
                search.name()
            );
        }
    }
}

#[test]
fn two_phase_commit_reaches_both_agreements_by_the_shortest_path() {
    use Action::*;
    let model = TwoPhaseCommit { rm_count: 3 };
    let witness = |name: &str| {
        let outcome =
            reference::check(&model, &bench::property(&model, name), &Budget::default()).unwrap();
        assert_eq!(outcome.verdict, Verdict::Holds, "{name}");
        outcome.path.unwrap().actions().copied().collect::<Vec<_>>()
    };
    assert_eq!(
        witness("abort-agreement"),
        [RmChooseToAbort(0), RmChooseToAbort(1), RmChooseToAbort(2)]
    );
    assert_eq!(
        witness("commit-agreement"),
        [
            // Among the shortest, the smallest action indices: the TM hears each RM at once.
            RmPrepare(0),
            TmRcvPrepared(0),
            RmPrepare(1),
            TmRcvPrepared(1),
            RmPrepare(2),
            TmRcvPrepared(2),
            TmCommit,
            RmRcvCommitMsg(0),
            RmRcvCommitMsg(1),
            RmRcvCommitMsg(2),
        ]
    );
}

#[test]
fn configurations_cover_the_catalogue() {
    let entries = catalogue::select(&Selection::default()).unwrap();
    let configurations = bench::configurations();
    for entry in &entries {
        assert!(
            configurations.iter().any(|c| c.config == entry.config),
            "{:?} has no configuration",
            entry.config
        );
    }
    let always = entries
        .iter()
        .filter(|e| e.property.kind == walcheck_properties::system::Kind::Always)
        .count();
    let split: usize = configurations
        .iter()
        .map(|c| c.holding.len() + c.violated.len())
        .sum();
    assert_eq!(split, always, "each always entry is holding or violated");
    // One benchmark per configuration: criterion refuses a group with a repeated id.
    let mut names: Vec<&str> = configurations.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "configuration names are unique");
}

#[test]
fn every_search_explores_the_same_states_of_a_catalogue_model() {
    let configurations = bench::configurations();
    let master = configurations
        .iter()
        .find(|c| c.name == "olake-bootstrap:master/none")
        .expect("olake-bootstrap:master/none is in the catalogue");
    assert_eq!(
        master.holding,
        ["wal-pointers-ordered", "slot-pointers-ordered"]
    );
    assert_eq!(master.violated, ["state-matches-slot", "no-lsn-mismatch"]);
    // Shortest counterexamples: 4 steps and 5 steps (the README's "Watch it find the bug").
    assert_eq!(bench::find_counterexamples(master), 9);
    let counts: Vec<u64> = Search::ALL
        .iter()
        .map(|s| {
            bench::explore_configuration(master, *s)
                .unwrap()
                .unique_states
        })
        .collect();
    assert!(counts.iter().all(|n| *n == counts[0]), "{counts:?}");
    assert!(counts[0] > 1, "{counts:?}");
}
