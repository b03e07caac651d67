//! Whatever the text, reading a file never panics: it returns a tree or diagnostics, every
//! diagnostic's span lies inside the text, and every diagnostic renders. Checked over arbitrary
//! strings, strings made of the grammar's own words and symbols, and mutations of the example
//! files under `connectors/` (deleted, repeated and swapped lines, inserted words, cut text).
//! And whatever file passes the checks runs without panicking: generated files and mutations of
//! them and of the examples, each model explored breadth first up to [`RUN_STATES`] states, and
//! its `eventually` and `leads to` properties checked by the fair-liveness checker within as
//! many.

use std::collections::{HashSet, VecDeque};

use proptest::prelude::*;
use proptest::test_runner::Config;
use stateright::Model;
use walcheck_engine::liveness;
use walcheck_engine::search::Budget;
use walcheck_lang::system::{from_source, FileModel};
use walcheck_properties::system::{CheckModel, Config as SystemConfig, System};

/// The example files, read once per case (small).
fn examples() -> Vec<String> {
    crate::common::wal_files(&crate::common::connectors_dir())
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// The contract of [`walcheck_lang::check`] on any text.
fn reads_without_panic(source: &str) -> Result<(), TestCaseError> {
    let checked = walcheck_lang::check(source);
    if checked.file.is_none() {
        prop_assert_eq!(
            checked.diagnostics.len(),
            1,
            "a file that does not parse has one syntax diagnostic"
        );
        prop_assert!(checked.has_errors());
    }
    for d in &checked.diagnostics {
        prop_assert!(
            d.span.start <= d.span.end && d.span.end <= source.len(),
            "span {:?} outside the text",
            d.span
        );
        let text = d.render("mutated.wal", source);
        prop_assert!(text.contains("mutated.wal:"), "no location in {}", text);
        prop_assert!(text.contains(d.code.id()));
    }
    Ok(())
}

/// Words and symbols of the grammar, so that random text gets past the first token.
const WORDS: &[&str] = &[
    "walcheck 1\n",
    "every run ",
    "procedure p ",
    "{",
    "}",
    "\n",
    "(",
    ")",
    "if ",
    "else ",
    "retry 3 times ",
    "until ",
    "for each message m ",
    "fail ",
    "fatal ",
    "\"x\"",
    "flush ",
    "x",
    " = ",
    "==",
    "<",
    ".",
    ",",
    ":",
    "none",
    "true",
    "0/0",
    "16/B374D848",
    "12",
    "min(",
    "max(",
    "and ",
    "or ",
    "not ",
    "in ",
    "at ",
    "#c",
    "volatile x: lsn = none\n",
    "durable y: bool = false, async\n",
    "env transactions = 2\n",
    "expect no-data-loss holds\n",
    "always p: x == none when not in p\n",
    "pg_current_wal_lsn()",
    "destination.commit(y = x)",
    "standby_status_update(flush = x)",
    "unfair ",
    "l: ",
    "while ",
    "…",
    "process w ",
    "loop ",
    "wait ",
    "either ",
    "or ",
    "arm t\n",
    "cancel t\n",
    "timer t\n",
    "channel c: lsn, capacity 2\n",
    "c.send(x)",
    "x = c.receive()",
    "eventually e: x != none\n",
    "always l: t leads to not t\n",
];

fn grammar_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..80).prop_map(|w| w.concat())
}

/// One edit of a line-split file.
#[derive(Clone, Debug)]
enum Edit {
    DeleteLine(usize),
    RepeatLine(usize),
    SwapLines(usize, usize),
    Insert(usize, usize, &'static str),
    CutAt(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::DeleteLine),
        any::<usize>().prop_map(Edit::RepeatLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (any::<usize>(), any::<usize>(), prop::sample::select(WORDS))
            .prop_map(|(l, c, w)| Edit::Insert(l, c, w)),
        any::<usize>().prop_map(Edit::CutAt),
    ]
}

fn apply(text: &str, edit: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    let n = lines.len();
    match *edit {
        Edit::DeleteLine(l) => {
            lines.remove(l % n);
        }
        Edit::RepeatLine(l) => lines.insert(l % n, lines[l % n].clone()),
        Edit::SwapLines(a, b) => lines.swap(a % n, b % n),
        Edit::Insert(l, c, w) => {
            let line = &mut lines[l % n];
            let at = line
                .char_indices()
                .map(|(i, _)| i)
                .chain([line.len()])
                .nth(c % (line.chars().count() + 1));
            line.insert_str(at.unwrap_or(0), w);
        }
        Edit::CutAt(c) => {
            let joined = lines.join("\n");
            let at = joined
                .char_indices()
                .map(|(i, _)| i)
                .nth(c % joined.chars().count().max(1))
                .unwrap_or(0);
            return joined[..at].to_string();
        }
    }
    lines.join("\n") + "\n"
}

/// How many states of a file that passes the checks [`runs_without_panic`] explores.
const RUN_STATES: usize = 2_000;

/// A file that passes the checks is a model whose initial states, actions, steps and properties
/// never panic on the first [`RUN_STATES`] states it reaches, nor its liveness properties'
/// checks within as many (a panic fails the case).
fn runs_without_panic(source: &str) {
    if walcheck_lang::check(source).has_errors() {
        return;
    }
    let (system, _) = from_source("mutated", "mutated.wal", source).expect("a checked file loads");
    let system: &'static _ = Box::leak(Box::new(system));
    let config = SystemConfig::new(system.info(), "design", "all").expect("its configuration");
    let model = FileModel::of(system, &config);
    let properties = model.properties();
    let mut queue: VecDeque<_> = model.init_states().into();
    let mut seen: HashSet<_> = queue.iter().cloned().collect();
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        for p in &properties {
            (p.condition)(&model, &state);
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for action in actions.drain(..) {
            let next = model.next_state(&state, action);
            if let Some(next) = next.filter(|_| seen.len() < RUN_STATES) {
                if seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
    }
    let budget = Budget {
        max_states: Some(RUN_STATES as u64),
        ..Budget::default()
    };
    for p in model.liveness() {
        liveness::check(&model, &p, model.fairness(), &budget);
    }
}

proptest! {
    #![proptest_config(Config { cases: 64, failure_persistence: None, ..Config::default() })]

    #[test]
    fn generated_files_and_their_mutations_run_without_panic(
        choices in prop::collection::vec(any::<u32>(), 8..160),
        edits in prop::collection::vec(edit(), 0..3),
    ) {
        let mut text = crate::reference::generate::file(choices);
        runs_without_panic(&text);
        for e in &edits {
            text = apply(&text, e);
        }
        runs_without_panic(&text);
    }

    #[test]
    fn mutated_examples_run_without_panic(which in any::<usize>(), edits in prop::collection::vec(edit(), 1..3)) {
        let examples = examples();
        let mut text = examples[which % examples.len()].clone();
        for e in &edits {
            text = apply(&text, e);
        }
        runs_without_panic(&text);
    }
}

proptest! {
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        reads_without_panic(&source)?;
    }

    #[test]
    fn grammar_soup_never_panics(source in grammar_soup()) {
        reads_without_panic(&source)?;
    }

    #[test]
    fn mutated_examples_never_panic(which in any::<usize>(), edits in prop::collection::vec(edit(), 1..4)) {
        let examples = examples();
        let mut text = examples[which % examples.len()].clone();
        for e in &edits {
            text = apply(&text, e);
        }
        reads_without_panic(&text)?;
    }
}

/// Deep nesting, and a long chain of operators, is a diagnostic, not a stack overflow.
#[test]
fn deep_nesting_is_a_diagnostic() {
    let deep = format!(
        "walcheck 1\nalways p: {}none{}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let checked = walcheck_lang::check(&deep);
    assert!(checked.has_errors());
    let nots = format!("walcheck 1\nalways p: {}true\n", "not ".repeat(10_000));
    assert!(walcheck_lang::check(&nots).has_errors());
    let blocks = format!(
        "walcheck 1\nevery run {{\n{}\n",
        "if true {\n".repeat(10_000)
    );
    assert!(walcheck_lang::check(&blocks).has_errors());
    // A flat chain folds to the left: as deep as it is long.
    for op in [" and true", " or true", " + 1", ".txn"] {
        let chain = format!("walcheck 1\nalways p: true{}\n", op.repeat(100_000));
        assert!(walcheck_lang::check(&chain).has_errors(), "{op}");
    }
}

/// A long chain of operators or of `else if`s is a diagnostic too: each operator and each
/// `else if` nests one level deeper, where the tree is read.
#[test]
fn long_chains_are_a_diagnostic() {
    let head = "walcheck 1\nvolatile t: 0..3 = 0\nevery run {\n";
    let chains = [
        format!("walcheck 1\nalways p: true{}\n", " or true".repeat(100_000)),
        format!("{head}  t = t{}\n}}\n", " - 0".repeat(100_000)),
        format!("{head}  t = t{}\n}}\n", ".x".repeat(100_000)),
        format!(
            "{head}  if t == 0 {{\n    t = 1\n{}  }}\n}}\n",
            "  } else if t == 1 {\n    t = 2\n".repeat(100_000)
        ),
    ];
    for source in chains {
        let checked = walcheck_lang::check(&source);
        assert!(checked.has_errors(), "{}", &source[..80]);
    }
}
