//! The interpreter against the reference semantics: for each generated file, the states both
//! reach (projected to the file's variables, each `async` one's copy on disk, the message each
//! `for each message` last received, the destination's rows and its open batch, the committed
//! transactions, the keepalives counted, the WAL pointers, the slot and the standby) and every property's
//! verdict must be the same. A file whose states pass the bound on either side is counted and
//! left out, never half compared.
//!
//! `cargo test -p walcheck-lang reference` compares a few hundred files; with `WALCHECK_LONG=1`
//! (and `WALCHECK_CASES=N`, default 5000) it compares many more and prints what it covered.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::Config as RunnerConfig;
use stateright::{Expectation, Model};
use walcheck_engine::liveness;
use walcheck_engine::search::Budget;
use walcheck_lang::ast::File;
use walcheck_lang::system::{from_source, FileModel, State};
use walcheck_model::Lsn;
use walcheck_properties::system::{CheckModel, Config, System, Variables};
use walcheck_properties::verdict::Verdict;

use super::generate;
use super::semantics::Reference;

/// States explored at most on each side.
const STATES_MAX: usize = 20_000;

/// A projected state: name → value as traces print it.
type Projected = BTreeMap<String, String>;

/// What one side found: its projected states and each property's verdict.
struct Found {
    states: BTreeSet<Projected>,
    verdicts: BTreeMap<String, bool>,
}

/// The names a projection keeps: PostgreSQL's pointers and slot, the destination, and the
/// file's declared variables with their copies on disk.
fn kept(file: &File) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = [
        "insert",
        "write",
        "flush",
        "confirmed_flush",
        "restart_lsn",
        "saved_confirmed_flush",
        "destination",
        "batch",
        "committed",
        "transactions",
        "removed_before",
        "os_crashes",
        "checkpoint",
    ]
    .map(str::to_owned)
    .into();
    if file.knobs().any(|k| k.name.node == "pg_stops") {
        names.insert("pg_stops".to_owned());
    }
    // The streams dropped with PostgreSQL up, in a file that sets `env stream_drops`.
    if file.knobs().any(|k| k.name.node == "stream_drops") {
        names.insert("stream_drops".to_owned());
    }
    // A standby's replay pointer, which its walsender, advances, SQL decoding and backfills
    // read to, in a file whose connector talks to one (`env server = standby`).
    let on_standby = |k: &walcheck_lang::ast::Knob| {
        k.name.node == "server"
            && matches!(&k.value.node, walcheck_lang::ast::KnobValue::Word(w) if w == "standby")
    };
    if file.knobs().any(on_standby) {
        names.insert("replay".to_owned());
    }
    // The standby's columns, in a file that sets either failover knob, and its copy of the
    // slot in one that turns failover slots on (the interpreter shows the copy's columns, `none`,
    // in any file that sets either knob).
    if file
        .knobs()
        .any(|k| k.name.node == "failovers" || k.name.node == "failover_slots")
    {
        names.extend(["standby", "failovers"].map(str::to_owned));
    }
    let slots_on = |k: &walcheck_lang::ast::Knob| {
        k.name.node == "failover_slots"
            && matches!(&k.value.node, walcheck_lang::ast::KnobValue::Word(w) if w == "on")
    };
    if file.knobs().any(slots_on) {
        names.extend(["synced_confirmed_flush", "synced_restart_lsn"].map(str::to_owned));
    }
    // A timer's and a channel's variables with the declared ones.
    for v in file.vars() {
        names.insert(v.name.node.clone());
        names.insert(format!("{}.flushed", v.name.node));
    }
    // The messages `for each message` received, and the keepalives counted: with `env messages
    // = changes`, which message of a transaction the connector holds, and under which LSN.
    names.insert("keepalives".to_owned());
    names.extend(super::semantics::message_names(file));
    names
}

/// The interpreter's model of a generated file.
fn file_model(source: &str) -> FileModel {
    let (system, _) = from_source("generated", "generated.wal", source).expect("it loads");
    let system: &'static _ = Box::leak(Box::new(system));
    let config = Config::new(system.info(), "design", "all").expect("its configuration");
    FileModel::of(system, &config)
}

/// The interpreter's side: a breadth-first search over its model.
fn interpreter(source: &str, keep: &BTreeSet<String>) -> Option<Found> {
    let model = file_model(source);
    let init = model.init_states();
    let mut seen: HashSet<State> = init.iter().cloned().collect();
    let mut queue: VecDeque<State> = init.into();
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        actions.clear();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            if let Some(next) = model.next_state(&s, a) {
                if seen.len() > STATES_MAX {
                    return None;
                }
                if seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
    }
    let mut verdicts = BTreeMap::new();
    for p in model.properties() {
        let holds = |s: &State| (p.condition)(&model, s);
        let verdict = match p.expectation {
            Expectation::Always => seen.iter().all(holds),
            Expectation::Sometimes => seen.iter().any(holds),
            Expectation::Eventually => continue,
        };
        verdicts.insert(p.name.to_owned(), verdict);
    }
    // The file's own `eventually` and `leads to`, by walcheck's fair-liveness checker under the
    // file's fairness.
    for p in model.liveness() {
        let outcome = liveness::check(&model, &p, model.fairness(), &Budget::default());
        verdicts.insert(p.id.to_owned(), outcome.verdict == Verdict::Holds);
    }
    let states = seen
        .iter()
        .map(|s| {
            s.variables()
                .into_iter()
                .filter(|(n, _)| keep.contains(*n))
                .map(|(n, v)| (n.to_owned(), v.to_string()))
                .collect()
        })
        .collect();
    Some(Found { states, verdicts })
}

/// The reference's side: its own search and properties.
fn reference(file: &File, keep: &BTreeSet<String>) -> Option<Found> {
    let r = Reference::new(file);
    let graph = super::liveness::explore(&r, STATES_MAX)?;
    let states: BTreeSet<_> = graph.states.iter().cloned().collect();
    if states.iter().any(|s| s.pg.sending.is_some()) {
        PART_WAY.fetch_add(1, Ordering::Relaxed);
    }
    if states.iter().any(commits_out_of_order) {
        INTERLEAVED.fetch_add(1, Ordering::Relaxed);
    }
    if states.iter().any(|s| s.stream_drops > 0) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
    if r.knobs.standby {
        STANDBY.fetch_add(1, Ordering::Relaxed);
        if states.iter().any(|s| s.pg.wal.replay < s.pg.wal.flush) {
            REPLAY_BEHIND.fetch_add(1, Ordering::Relaxed);
        }
    }
    let mut verdicts = BTreeMap::new();
    for id in [
        "ack-within-durable",
        "no-data-loss",
        "no-fatal-error",
        "wal-pointers-ordered",
    ] {
        verdicts.insert(id.to_owned(), states.iter().all(|s| r.built_in(id, s)));
    }
    // "only in a file that names it in an `expect` line".
    let id = "no-needed-wal-removed";
    let named = file
        .items
        .iter()
        .any(|i| matches!(i, walcheck_lang::ast::Item::Expect(e) if e.property.node == id));
    if named {
        verdicts.insert(id.to_owned(), states.iter().all(|s| r.built_in(id, s)));
    }
    for inv in file.invariants() {
        let live = match (&inv.leads_to, inv.eventually) {
            (Some(q), _) => Some((Some(&inv.cond), q)),
            (None, true) => Some((None, &inv.cond)),
            (None, false) => None,
        };
        if let Some((trigger, goal)) = live {
            let violated = super::liveness::violated(&r, &graph, trigger, goal);
            let counter = if violated {
                &LIVE_VIOLATED
            } else {
                &LIVE_HOLDS
            };
            counter.fetch_add(1, Ordering::Relaxed);
            verdicts.insert(inv.id.node.clone(), !violated);
            continue;
        }
        let holds = |s: &_| {
            let guard = inv
                .when
                .as_ref()
                .is_none_or(|w| r.eval(s, w) == super::semantics::V::Bool(true));
            !guard || r.eval(s, &inv.cond) == super::semantics::V::Bool(true)
        };
        let verdict = if inv.sometimes {
            states.iter().any(holds)
        } else {
            states.iter().all(holds)
        };
        verdicts.insert(inv.id.node.clone(), verdict);
    }
    let projected = states
        .iter()
        .map(|s| {
            let mut p = r.project(s);
            p.retain(|n, _| keep.contains(n));
            p
        })
        .collect();
    Some(Found {
        states: projected,
        verdicts,
    })
}

/// Files compared, and files past the bound.
static COMPARED: AtomicUsize = AtomicUsize::new(0);
static TOO_LARGE: AtomicUsize = AtomicUsize::new(0);
/// The file's own liveness verdicts the reference decided: holding, violated.
static LIVE_HOLDS: AtomicUsize = AtomicUsize::new(0);
static LIVE_VIOLATED: AtomicUsize = AtomicUsize::new(0);
/// Files in which the reference's walsender is part way through a transaction (`env messages =
/// changes`).
static PART_WAY: AtomicUsize = AtomicUsize::new(0);
/// Files in which the reference commits a transaction after one begun later (`env interleave =
/// on`).
static INTERLEAVED: AtomicUsize = AtomicUsize::new(0);
/// Files compared whose connector talks to a standby (`env server = standby`), and those of them
/// in which the reference's standby replays behind its primary's flush pointer.
static STANDBY: AtomicUsize = AtomicUsize::new(0);
static REPLAY_BEHIND: AtomicUsize = AtomicUsize::new(0);
/// Files compared in which the reference's walsender ended a stream with PostgreSQL up (`env
/// stream_drops`).
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Whether a transaction of `s` committed after one begun after it: commit order is not begin
/// order.
fn commits_out_of_order(s: &super::semantics::State) -> bool {
    s.pg.txns
        .windows(2)
        .any(|w| w[1].first_lsn < w[0].first_lsn)
}

/// Compares the two on `source`: an error names the file and the first difference.
fn compare(source: &str) -> Result<(), String> {
    let checked = walcheck_lang::check(source);
    // A labelled block whose failing calls and choices pass the checker's bound on one step's
    // outcomes (E14) is a limit of walcheck's, not a generator's mistake: counted as too large.
    if checked
        .diagnostics
        .iter()
        .any(|d| d.code == walcheck_lang::Code::Limit)
    {
        TOO_LARGE.fetch_add(1, Ordering::Relaxed);
        return Ok(());
    }
    let file = checked
        .into_result()
        .map_err(|d| format!("the generator wrote a rejected file: {d:?}\n{source}"))?;
    let keep = kept(&file);
    let (Some(real), Some(refr)) = (interpreter(source, &keep), reference(&file, &keep)) else {
        TOO_LARGE.fetch_add(1, Ordering::Relaxed);
        return Ok(());
    };
    COMPARED.fetch_add(1, Ordering::Relaxed);
    if let Some(s) = real.states.difference(&refr.states).next() {
        return Err(format!(
            "{source}\nthe interpreter reaches a state the reference does not ({} vs {} states):\n{s:#?}",
            real.states.len(),
            refr.states.len()
        ));
    }
    if let Some(s) = refr.states.difference(&real.states).next() {
        return Err(format!(
            "{source}\nthe reference reaches a state the interpreter does not ({} vs {} states):\n{s:#?}",
            real.states.len(),
            refr.states.len()
        ));
    }
    if real.verdicts != refr.verdicts {
        return Err(format!(
            "{source}\nverdicts differ: interpreter {:?}, reference {:?}",
            real.verdicts, refr.verdicts
        ));
    }
    Ok(())
}

fn choices() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(any::<u32>(), 8..160)
}

fn cases() -> u32 {
    match std::env::var("WALCHECK_LONG") {
        Ok(_) => std::env::var("WALCHECK_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(5000),
        Err(_) => 300,
    }
}

proptest! {
    #![proptest_config(RunnerConfig { cases: cases(), failure_persistence: None, ..RunnerConfig::default() })]

    #[test]
    fn interpreter_matches_the_reference(choices in choices()) {
        let source = generate::file(choices);
        if let Err(e) = compare(&source) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// The example connectors that fit the reference's vocabulary, compared as files are.
#[test]
fn report_coverage_of_the_long_run() {
    if std::env::var("WALCHECK_LONG").is_err() {
        return;
    }
    let mut constructs: BTreeMap<&str, usize> = BTreeMap::new();
    let mut runner = proptest::test_runner::TestRunner::new(RunnerConfig {
        cases: cases(),
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let words = [
        "first run",
        "after crash",
        "procedure p",
        "step",
        "if ",
        "else",
        "retry",
        "for each",
        "until",
        "fail \"",
        "fail fatal",
        "flush a",
        "start_replication",
        "standby_status_update",
        "pg_replication_slot_advance",
        "identify_system",
        "pg_replication_slots",
        "pg_logical_slot_get_changes",
        "pg_logical_slot_peek_changes",
        "destination.write",
        "destination.commit(dd",
        "always",
        " when ",
        "sometimes",
        " in ",
        " at ",
        "+ 1",
        "- 1",
        "keepalives = 1",
        "pg_crashes = 1",
        "pg_stops = 1",
        "failovers = 1",
        "failovers = 2",
        "failover_slots = on",
        "commit = either",
        "process w1",
        "process w2",
        "loop {",
        "wait ",
        "wait tm",
        "arm tm",
        "cancel tm",
        "q.send",
        "q.receive",
        "capacity 2",
        "either {",
        "unfair ",
        "eventually ev",
        " leads to ",
        "always msg",
        "killable process",
        "kills = 1",
        "call_failures = 1",
        "on error",
        "process fam[s in 1..2]",
        "f[1..2]",
        "runs = unbounded",
        "destination.holds",
        "destination.duplicated",
        "a.flushed",
        "m == none",
        "messages = changes",
        "rows = 2",
        "rows = 3",
        "multi_insert = on",
        "interleave = on",
        "destination.write(m)",
        "m.is_change",
        "m.is_commit",
        "m.is_begin",
        "m.index",
        "m.lsn",
        "upto_nchanges = 2",
        "backfill()",
        "server = standby",
        "pg_last_wal_replay_lsn",
        "pg_is_in_recovery",
        "wal.replay",
        "stream_drops = 1",
        "stream_drops = 2",
    ];
    let mut failures = Vec::new();
    for _ in 0..cases() {
        let c = choices().new_tree(&mut runner).expect("a case").current();
        let source = generate::file(c);
        for w in words {
            if source.contains(w) {
                *constructs.entry(w).or_default() += 1;
            }
        }
        if let Err(e) = compare(&source) {
            failures.push(e);
        }
    }
    println!(
        "compared {} files, {} past {STATES_MAX} states; liveness verdicts: {} hold, {} violated; \
         {} files sent a transaction message by message; {} committed one after one begun \
         later; {} talked to a standby, {} of them replaying behind its primary's flush; {} \
         dropped a stream with PostgreSQL up; files using each construct: {constructs:#?}",
        COMPARED.load(Ordering::Relaxed),
        TOO_LARGE.load(Ordering::Relaxed),
        LIVE_HOLDS.load(Ordering::Relaxed),
        LIVE_VIOLATED.load(Ordering::Relaxed),
        PART_WAY.load(Ordering::Relaxed),
        INTERLEAVED.load(Ordering::Relaxed),
        STANDBY.load(Ordering::Relaxed),
        REPLAY_BEHIND.load(Ordering::Relaxed),
        DROPPED.load(Ordering::Relaxed),
    );
    // `WALCHECK_MISMATCHES=DIR` keeps every mismatch, a file each, to read them all.
    if let Ok(dir) = std::env::var("WALCHECK_MISMATCHES") {
        for (i, e) in failures.iter().enumerate() {
            let _ = std::fs::write(format!("{dir}/mismatch-{i}.txt"), e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

/// One file compared, both sides' states printed: `WALCHECK_REFERENCE_FILE=F cargo test -p
/// walcheck-lang reference::differential::one_file -- --nocapture`, to read a mismatch.
#[test]
fn one_file() {
    let Ok(path) = std::env::var("WALCHECK_REFERENCE_FILE") else {
        return;
    };
    let source = std::fs::read_to_string(path).expect("the file");
    let file = walcheck_lang::check(&source)
        .into_result()
        .expect("it checks");
    let keep = kept(&file);
    let real = interpreter(&source, &keep).expect("within the bound");
    let refr = reference(&file, &keep).expect("within the bound");
    for s in real.states.difference(&refr.states) {
        println!("interpreter only: {s:?}");
    }
    for s in refr.states.difference(&real.states) {
        println!("reference only: {s:?}");
    }
    if let Some(target) = refr.states.difference(&real.states).next() {
        print_path_to(&source, &file, &keep, target, &real.states);
    }
    println!(
        "verdicts: interpreter {:?}\n          reference {:?}",
        real.verdicts, refr.verdicts
    );
}

/// The reference's shortest path to a state projected as `target`: each state's position,
/// what changed, and whether the interpreter has a state projected alike; with
/// `WALCHECK_SHOW=N`, the interpreter's whole states projected as the path's `N`th and their
/// actions.
fn print_path_to(
    source: &str,
    file: &File,
    keep: &BTreeSet<String>,
    target: &Projected,
    real: &BTreeSet<Projected>,
) {
    let r = Reference::new(file);
    let g = super::liveness::explore(&r, STATES_MAX).expect("within the bound");
    let project = |i: usize| {
        let mut p = r.project(&g.states[i]);
        p.retain(|n, _| keep.contains(n));
        p
    };
    let mut parent = vec![usize::MAX; g.states.len()];
    let mut queue = VecDeque::from([0]);
    parent[0] = 0;
    while let Some(i) = queue.pop_front() {
        for &(j, _) in &g.edges[i] {
            if parent[j] == usize::MAX {
                parent[j] = i;
                queue.push_back(j);
            }
        }
    }
    let Some(mut end) = (0..g.states.len()).find(|&i| project(i) == *target) else {
        return;
    };
    let mut path = vec![end];
    while end != 0 {
        end = parent[end];
        path.push(end);
    }
    path.reverse();
    let mut before = Projected::new();
    for (step, i) in path.into_iter().enumerate() {
        let now = project(i);
        let changed: Vec<_> = now
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .collect();
        let mark = if real.contains(&now) {
            "both"
        } else {
            "REFERENCE ONLY"
        };
        if std::env::var("WALCHECK_SHOW").is_ok_and(|v| v == step.to_string()) {
            show_interpreter_states(source, &now);
        }
        println!("{mark} {step} {:?}\n    {changed:?}", g.states[i].at);
        before = now;
    }
}

/// The interpreter's whole states whose projection is `target`, with their actions.
fn show_interpreter_states(source: &str, target: &Projected) {
    let model = file_model(source);
    let init = model.init_states();
    let mut seen: HashSet<State> = init.iter().cloned().collect();
    let mut queue: VecDeque<State> = init.into();
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        let vars = s.variables();
        let p: Projected = vars
            .iter()
            .filter(|(n, _)| target.contains_key(*n))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        if p == *target {
            let all: Vec<String> = vars.iter().map(|(n, v)| format!("{n}={v}")).collect();
            println!("  interpreter: {}", all.join(" "));
        }
        actions.clear();
        model.actions(&s, &mut actions);
        if p == *target {
            println!("  actions: {actions:?}");
        }
        for a in actions.drain(..) {
            if let Some(next) = model.next_state(&s, a) {
                if seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
    }
}

/// The files of the WAL removal knobs that the generator reaches only now and then: an advance
/// moving `restart_lsn` while a 15.12 checkpoint runs, and an OS crash after an async commit
/// was written, compared as generated files are.
#[test]
fn the_wal_removal_files_match_the_reference() {
    let race = "walcheck 1\nconnector \"race\"\nenv pg_version = 15.12\nenv transactions = 1\n\
        env pg_crashes = 1\nenv connector_crashes = 0\nenv runs = 1\nvolatile x: lsn = none\n\
        every run {\n  w: x = pg_current_wal_lsn()\n  a: pg_replication_slot_advance(x)\n}\n\
        expect no-needed-wal-removed violated \"the checkpoint ends between the move and the save\"\n\
        skip eventually-acknowledged \"liveness is not compared\"\n\
        skip wal-retention-bounded \"liveness is not compared\"\n";
    let os = "walcheck 1\nconnector \"os\"\nenv commit = async\nenv transactions = 1\n\
        env connector_crashes = 0\nenv pg_crashes = 0\nenv os_crashes = 1\nenv runs = 1\n\
        durable seen: lsn = none\nevery run {\n  s: seen = pg_current_wal_lsn()\n}\n\
        always write-never-back: wal.write >= seen\n\
        skip eventually-acknowledged \"liveness is not compared\"\n\
        skip wal-retention-bounded \"liveness is not compared\"\n";
    for source in [race, os, &race.replace("15.12", "15.18")] {
        compare(source).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Failover files the generator reaches only now and then, each compared as generated files
/// are and each reaching a failover on the reference's side: a stream whose destination loses
/// what the standby had not received, and the same stream held back to what the standby has on
/// PostgreSQL 17 with failover slots; with failover slots too, an advance to the
/// flush pointer that the slot sync worker copies only once the standby has it; and SQL
/// decoding that waits for the standby.
#[test]
fn the_failover_files_match_the_reference() {
    let head = "walcheck 1\nconnector \"failover\"\nenv failovers = 1\nenv connector_crashes = 0\n\
        skip eventually-acknowledged \"liveness is not compared\"\n\
        skip wal-retention-bounded \"liveness is not compared\"\n";
    let stream = "env transactions = 2\nenv runs = 2\ndurable pos: lsn = none, in destination\n\
        every run {\n  start_replication(pos)\n  for each message m {\n    destination.write(m.txn)\n\
        destination.commit(pos = m.txn.end_lsn)\n    standby_status_update(flush = pos)\n  }\n}\n";
    let advance = "env transactions = 1\nenv runs = 1\n\
        volatile x: lsn = none\nevery run {\n  w: x = pg_current_wal_flush_lsn()\n\
        a: pg_replication_slot_advance(x)\n}\n";
    let sql = "env transactions = 2\nenv runs = 2\n\
        volatile r: txns = none\nevery run {\n  r = pg_logical_slot_get_changes()\n\
        destination.write(r)\n  destination.commit()\n}\n";
    let slots = "env pg_version = 17\nenv failover_slots = on\n";
    for body in [
        stream.to_owned(),
        format!("{slots}{stream}"),
        format!("{slots}{advance}"),
        format!("{slots}{sql}"),
    ] {
        let source = format!("{head}{body}");
        reaches_and_matches(&source, |s| s.failovers == 1);
    }
}

/// The worked example of a dropped stream (docs/language.md, "A dropped stream"), compared as
/// generated files are: `docs/examples/stream-drop.wal`, which starts a new stream within its
/// run; the same loop on a standby and message by message; and a stream whose run ends with its
/// stream, with a status update after the loop that a drop makes fail. Each reaches, on the
/// reference's side, a state past a drop with the stream ended and the slot's `confirmed_flush`
/// past `0/1000000` (a confirmation the drop kept).
#[test]
fn the_stream_drop_files_match_the_reference() {
    let example = include_str!("../../../docs/examples/stream-drop.wal");
    let skips = LIVENESS_SKIPPED;
    let head = "walcheck 1\nconnector \"drop\"\nenv stream_drops = 1\nenv connector_crashes = 0\n\
        env transactions = 2\nenv runs = 2\ndurable pos: lsn = none, in destination\n";
    let once = "every run {\n  start_replication(pos)\n  for each message m {\n\
        destination.write(m.txn)\n    destination.commit(pos = m.txn.end_lsn)\n\
        standby_status_update(flush = pos)\n  }\n  standby_status_update(flush = pos)\n}\n";
    let standby = example.replace(
        "env stream_drops = 1",
        "env stream_drops = 1\nenv server = standby\nenv pg_version = 16",
    );
    let by_change = example.replace(
        "env transactions = 2",
        "env transactions = 1\nenv messages = changes\nenv rows = 2",
    );
    for source in [
        format!("{example}{skips}"),
        format!("{standby}{skips}"),
        format!("{by_change}{skips}"),
        format!("{head}{skips}{once}"),
    ] {
        reaches_and_matches(&source, |s| {
            s.stream_drops == 1
                && s.pg.walsender.is_none()
                && s.pg
                    .slot
                    .is_some_and(|d| d.slot.confirmed_flush > Lsn(0x100_0000))
        });
    }
}

/// A reconnection past a transaction the connector holds whole in its open batch (the
/// no-data-loss rule's exception), compared as generated files are: after a dropped stream, from
/// the position received to (holds); with whole transactions and with two rows each sent one by
/// one (where a batch holding one row of a transaction does not hold it whole); and with that
/// position in a state file and a connector crash that loses the batch (violated). The first two
/// reach, on the reference's side, a stream that starts past a transaction in the open batch,
/// the third a start past the transaction the crash took out of it.
#[test]
fn the_held_batch_files_match_the_reference() {
    let design = |storage: &str, faults: &str, messages: &str| {
        format!(
            "walcheck 1\nconnector \"batch\"\nenv transactions = 2\n{faults}\n{messages}\
             env runs = unbounded\nenv keepalives = 2\n\
             durable pos: lsn = none, in destination\n{storage} received: lsn = none\n\
             skip eventually-acknowledged \"liveness is not compared\"\n\
             skip wal-retention-bounded \"liveness is not compared\"\n\
             every run {{\n  received = max(received, pos)\n  loop {{\n    \
             start_replication(received)\n    for each message m {{\n      \
             if m.is_keepalive {{\n        if received != pos {{\n          \
             destination.commit(pos = received)\n          \
             standby_status_update(flush = pos)\n        }}\n      }} else {{\n        \
             destination.write(m)\n        received = m.lsn\n      }}\n    }}\n  }}\n}}\n"
        )
    };
    let drop = "env stream_drops = 1\nenv connector_crashes = 0";
    let crash = "env stream_drops = 0\nenv connector_crashes = 1";
    let changes = "env messages = changes\nenv rows = 2\n";
    for source in [
        design("volatile", drop, ""),
        design("volatile", drop, changes),
    ] {
        reaches_and_matches(&source, |s| {
            s.pg.walsender.is_some_and(|w| {
                s.batch
                    .iter()
                    .any(|&(i, _)| s.pg.txns[i].commit_lsn < w.start_decoding_at)
            })
        });
    }
    reaches_and_matches(&design("durable", crash, ""), |s| s.pg.lost);
}

/// A reader of idle keepalives at rest once nothing it can do delivers more (the no-data-loss
/// rule's look-ahead), compared as generated files are: a transaction kept for ever in a
/// variable, a `backfill()` never reached after a transaction was skipped and confirmed (both
/// violated), and a batch each keepalive commits (holds). Each reaches, on the
/// reference's side, a state where the destination lacks a committed transaction while the
/// connector reads keepalives.
#[test]
fn the_look_ahead_files_match_the_reference() {
    let head = "walcheck 1\nconnector \"reader\"\nenv transactions = 2\nenv keepalives = 1\n\
        env connector_crashes = 0\nenv runs = unbounded\n";
    let skips = LIVENESS_SKIPPED;
    let held = format!("{}{skips}", include_str!("files/held-for-ever.wal"));
    let unreached = format!(
        "{head}durable resync: bool = false\nevery run {{\n  start_replication(0/0)\n  \
         for each message m {{\n    if m.is_keepalive and resync {{\n      backfill()\n    \
         }}\n    if not m.is_keepalive {{\n      if m.txn.end_lsn > 0/1002000 {{\n        \
         destination.write(m.txn)\n        destination.commit()\n      }}\n      \
         standby_status_update(flush = m.txn.end_lsn)\n    }}\n  }}\n}}\n{skips}"
    );
    let batched = format!("{}{skips}", include_str!("files/batch-until-keepalive.wal"));
    for source in [held, unreached, batched] {
        reaches_and_matches(&source, |s| {
            s.pg.published == 2
                && s.pg.walsender.is_some()
                && s.pg
                    .txns
                    .iter()
                    .enumerate()
                    .any(|(i, _)| !s.dest.contains(&(i, 0)))
        });
    }
}

/// A transaction behind the slot for good, lost at once (the no-data-loss rule's at-once
/// clause), compared as generated files are: a failed commit ignored and a heartbeat process
/// confirming the next commit's position. It reaches, on the reference's side, a state where
/// `confirmed_flush` in memory and on disk is past T1, which the destination lacks.
#[test]
fn the_behind_for_good_file_matches_the_reference() {
    let file = include_str!("files/commit-fails-heartbeat-acks.wal");
    reaches_and_matches(&format!("{file}{LIVENESS_SKIPPED}"), |s| {
        let t1 = s.pg.txns.first();
        s.pg.slot.zip(t1).is_some_and(|(d, t1)| {
            d.slot.saved.confirmed_flush > t1.commit_lsn && !s.dest.contains(&(0, 0))
        })
    });
}

/// A `destination.commit` that fails before taking effect loses its open batch, compared as
/// generated files are: a retry that commits again without writing (violated) and one that
/// writes the transaction again first (holds). Each reaches, on the reference's side, a failed
/// commit that left the batch empty.
#[test]
fn the_failed_commit_files_match_the_reference() {
    let skips = LIVENESS_SKIPPED;
    for file in [
        include_str!("files/commit-retry-bare.wal"),
        include_str!("files/commit-retry-rewrite.wal"),
    ] {
        reaches_and_matches(&format!("{file}{skips}"), |s| {
            s.call_failures == 1 && s.batch.is_empty() && s.dest.is_empty() && s.pg.published > 0
        });
    }
}

/// The worked example of messages one by one (docs/language.md, "Messages one by one"), compared
/// as generated files are: `docs/examples/changes.wal`, which counts the rows committed at one
/// LSN and holds, and `changes-lsn-only.wal`, which keeps the LSN alone and loses the second
/// row of a multi-insert. Each reaches, on the reference's side, a state where the destination
/// holds part of a transaction, and the verdicts are those the page shows.
#[test]
fn the_changes_files_match_the_reference() {
    let files = [
        (
            "changes.wal",
            include_str!("../../../docs/examples/changes.wal"),
            true,
        ),
        (
            "changes-lsn-only.wal",
            include_str!("../../../docs/examples/changes-lsn-only.wal"),
            false,
        ),
    ];
    // The built-in liveness properties are the interpreter's alone (as in generated files).
    let skips = LIVENESS_SKIPPED;
    for (name, text, holds) in files {
        let source = &format!("{text}{skips}");
        let file = walcheck_lang::check(source)
            .into_result()
            .unwrap_or_else(|d| panic!("{name}: {d:?}"));
        let r = Reference::new(&file);
        let graph = super::liveness::explore(&r, STATES_MAX).expect("within the bound");
        assert!(
            graph
                .states
                .iter()
                .any(|s| r.project(s)["destination"].contains(" row ")),
            "{name} holds part of a transaction somewhere"
        );
        for id in ["ack-within-durable", "no-data-loss"] {
            let verdict = graph.states.iter().all(|s| r.built_in(id, s));
            assert_eq!(verdict, holds, "{name}: {id}");
        }
        let before = COMPARED.load(Ordering::Relaxed);
        compare(source).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(COMPARED.load(Ordering::Relaxed) > before, "{name} compared");
    }
}

/// Interleaved transactions (`env interleave = on`) in files the generator reaches only now and
/// then, compared as generated files are: a stream that acknowledges each transaction it
/// writes, whole or message by message, and a bootstrap that advances the slot to the flush
/// pointer. Each reaches, on the reference's side, a commit after a transaction begun later.
#[test]
fn the_interleave_files_match_the_reference() {
    let head = "walcheck 1\nconnector \"interleave\"\nenv interleave = on\nenv transactions = 2\n\
        env commit = either\n\
        skip eventually-acknowledged \"liveness is not compared\"\n\
        skip wal-retention-bounded \"liveness is not compared\"\n";
    let stream = "env runs = 2\ndurable pos: lsn = none, in destination\n\
        every run {\n  start_replication(pos)\n  for each message m {\n    destination.write(m.txn)\n\
        destination.commit(pos = m.txn.end_lsn)\n    standby_status_update(flush = pos)\n  }\n}\n";
    let changes = "env messages = changes\nenv rows = 2\nenv connector_crashes = 0\nenv runs = 1\n\
        durable pos: lsn = none, in destination\n\
        every run {\n  start_replication(pos)\n  for each message m {\n    destination.write(m)\n\
        if m.is_commit {\n      destination.commit(pos = m.lsn)\n      \
        standby_status_update(flush = pos)\n    }\n  }\n}\n";
    let advance = "env runs = 2\nvolatile x: lsn = none\n\
        every run {\n  w: x = pg_current_wal_flush_lsn()\n  a: pg_replication_slot_advance(x)\n}\n";
    for body in [stream, changes, advance] {
        let source = format!("{head}{body}");
        reaches_and_matches(&source, commits_out_of_order);
    }
}

/// "CommitOpen is weakly fair": a transaction left open commits in the end, however long the
/// connector keeps taking steps. With one published transaction of one page, WAL inserted past
/// the start (by `Open` or a plain commit) leads to the whole page inserted, its commit record
/// last; the reference decides it holds, and the file is compared as generated files are.
#[test]
fn an_open_transaction_commits_in_the_end() {
    let source = "walcheck 1\nconnector \"open\"\nenv interleave = on\nenv transactions = 1\n\
        env commit = either\nenv runs = 1\nenv connector_crashes = 0\n\
        skip eventually-acknowledged \"liveness is not compared\"\n\
        skip wal-retention-bounded \"liveness is not compared\"\n\
        volatile x: lsn = none\nevery run {\n  loop {\n    x = pg_current_wal_lsn()\n  }\n}\n\
        always committed: wal.insert > 0/1000000 leads to wal.insert >= 0/1002000\n";
    let file = walcheck_lang::check(source)
        .into_result()
        .unwrap_or_else(|d| panic!("{d:?}\n{source}"));
    let r = Reference::new(&file);
    let graph = super::liveness::explore(&r, STATES_MAX).expect("within the bound");
    assert!(graph.states.iter().any(|s| s.pg.open.is_some()), "an Open");
    let inv = file.invariants().next().expect("the property");
    let goal = inv.leads_to.as_ref().expect("a leads to");
    assert!(
        !super::liveness::violated(&r, &graph, Some(&inv.cond), goal),
        "{source}"
    );
    compare(source).unwrap_or_else(|e| panic!("{e}"));
}

/// Files on a standby (`env server = standby`) the generator reaches only now and then, each
/// compared as generated files are: a stream over asynchronous commits whose standby crashes
/// (the primary's unflushed commit goes on, so the standby replays it in the end: the reference
/// reaches a crashed standby beside one, and decides that `replayed` holds), a bootstrap that advances the slot to the replay pointer across a clean stop, SQL
/// decoding with a backfill, and a WAL function that fails there. Each reaches, on the
/// reference's side, a state whose replay pointer is behind the primary's flush pointer.
#[test]
fn the_standby_files_match_the_reference() {
    let head =
        "walcheck 1\nconnector \"standby\"\nenv server = standby\nenv connector_crashes = 0\n\
        skip eventually-acknowledged \"liveness is not compared\"\n\
        skip wal-retention-bounded \"liveness is not compared\"\n";
    let stream = "env pg_version = 16\nenv commit = async\nenv pg_crashes = 1\n\
        env transactions = 2\nenv runs = 2\ndurable pos: lsn = none, in destination\n\
        every run {\n  start_replication(pos)\n  for each message m {\n    destination.write(m.txn)\n\
        destination.commit(pos = m.txn.end_lsn)\n    standby_status_update(flush = pos)\n  }\n}\n\
        always replayed: wal.insert > 0/1000000 leads to wal.replay > 0/1000000\n";
    let advance = "env pg_version = 17\nenv pg_stops = 1\nenv transactions = 1\nenv runs = 2\n\
        volatile x: lsn = none\nevery run {\n  w: x = pg_last_wal_replay_lsn()\n\
        a: pg_replication_slot_advance(x)\n}\n";
    let sql = "env pg_version = 18\nenv transactions = 2\nenv runs = 2\n\
        volatile r: txns = none\nfirst run {\n  backfill()\n}\nevery run {\n\
        r = pg_logical_slot_get_changes()\n  destination.write(r)\n  destination.commit()\n}\n";
    let fails = "env pg_version = 16\nenv transactions = 1\nenv runs = 2\n\
        volatile x: lsn = none\nvolatile b: bool = false\nevery run {\n  b = pg_is_in_recovery()\n\
        x = pg_current_wal_lsn()\n}\nalways never-read: x == none\n";
    for body in [stream, advance, sql, fails] {
        let source = format!("{head}{body}");
        reaches_and_matches(&source, |s| s.pg.wal.replay < s.pg.wal.flush);
    }
    // The standby's crash leaves the primary's unflushed asynchronous commit alone.
    let file = walcheck_lang::check(&format!("{head}{stream}"))
        .into_result()
        .expect("it checks");
    let r = Reference::new(&file);
    let graph = super::liveness::explore(&r, STATES_MAX).expect("within the bound");
    assert!(graph.states.iter().any(|s| s.pg_crashes == 1
        && s.pg.wal.flush
            < s.pg
                .txns
                .last()
                .map_or(walcheck_model::Lsn::INVALID, |t| t.end_lsn)));
}

/// Checks `source`, asserts the reference reaches a state where `reached` holds (so the file
/// shows what it was written for), then compares it as generated files are.
/// The skip lines of a file compared by hand: its liveness checks are not compared.
const LIVENESS_SKIPPED: &str = "skip eventually-acknowledged \"liveness is not compared\"\n\
    skip wal-retention-bounded \"liveness is not compared\"\n";

fn reaches_and_matches(source: &str, reached: impl Fn(&super::semantics::State) -> bool) {
    let file = walcheck_lang::check(source)
        .into_result()
        .unwrap_or_else(|d| panic!("{d:?}\n{source}"));
    let r = Reference::new(&file);
    let graph = super::liveness::explore(&r, STATES_MAX).expect("within the bound");
    assert!(graph.states.iter().any(reached), "{source}");
    let before = COMPARED.load(Ordering::Relaxed);
    compare(source).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        COMPARED.load(Ordering::Relaxed) > before,
        "compared:\n{source}"
    );
}
