//! No function of the workspace's own code is over 70 lines, counted from its `fn` line to its
//! closing brace: the command line stays a function per subcommand, each split by its steps, and
//! so does every crate below it.
//!
//! The code read is every crate of the workspace (the `members` of the root Cargo.toml, so a new
//! crate is covered as soon as it builds) less its tests: files under a `tests/` folder and
//! `#[cfg(test)]` modules. [`LONGER`] lists the functions that were over the limit when the rule
//! came to the whole workspace, at their length then: a listed function may shrink, not grow,
//! and its entry is lowered or removed with it, so the list only ever gets shorter.
//!
//! The code is rustfmt-formatted (CI checks it), so a body ends at the first line after the
//! `fn` line that is a `}` at the `fn` line's indentation.

use std::collections::BTreeMap;
use std::path::Path;

use crate::util::{rust_files, workspace_members, ROOT};

const MAX_LINES: usize = 70;

/// The functions over [`MAX_LINES`] lines: (file from the repository root, function, its length
/// in lines).
const LONGER: &[(&str, &str, usize)] = &[
    ("examples/bench_report.rs", "engine_rows", 75),
    ("examples/bench_report.rs", "main", 118),
    ("lang/src/machine.rs", "answer", 129),
    ("lang/src/program.rs", "stmt", 111),
    ("lang/src/system.rs", "new", 81),
    ("sim/src/observed.rs", "protocol_step", 74),
    ("sim/src/observed.rs", "replay_observed", 178),
    ("sim/src/plot.rs", "draw", 134),
    ("sim/src/report.rs", "to_text", 99),
    ("sim/src/swarm.rs", "to_text", 80),
    ("systems/src/electric_flush/model.rs", "apply", 121),
    ("systems/src/electric_flush/model.rs", "enabled", 91),
    ("systems/src/electric_flush/view.rs", "variables", 105),
    ("systems/src/olake_bootstrap/expected.rs", "verdict", 90),
    ("systems/src/olake_bootstrap/model.rs", "enabled", 72),
    ("systems/src/olake_sync/expected.rs", "verdict", 91),
    ("traces/src/lib.rs", "from_itf", 119),
    ("traces/src/render.rs", "step_table", 78),
    ("traces/src/render.rs", "mermaid", 71),
    ("traces/src/render.rs", "svg", 205),
    ("traces/src/replay.rs", "replay_fair", 113),
];

/// Whether `line` starts a function item: its qualifiers (`pub(crate)`, `const`, `async`,
/// `unsafe`, `extern "C"`), then `fn`.
fn starts_fn(line: &str) -> bool {
    let mut words = line.split_whitespace().skip_while(|w| {
        w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(w)
    });
    words.next() == Some("fn")
}

/// Whether `line` is the attribute of an item compiled only for tests.
fn test_only(line: &str) -> bool {
    let line = line.trim();
    line == "#[cfg(test)]" || line.starts_with("#[cfg(all(test,")
}

/// The index of the line closing the item that starts at `start`: the first line after it that
/// is a `}` at its indentation, or `start` itself for an item on one line or without a body.
fn item_end(lines: &[&str], start: usize) -> Option<usize> {
    let line = lines[start];
    let indent = &line[..line.len() - line.trim_start().len()];
    // The signature ends at a line ending in `{` (a body follows), `;` (a declaration) or
    // `}` (a body on the same line).
    let open = (start..lines.len()).find(|&i| {
        let l = lines[i].trim_end();
        l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
    })?;
    let end = lines[open].trim_end();
    if end.ends_with(';') || (end.ends_with('}') && end.contains('{')) {
        return Some(open);
    }
    let closing = format!("{indent}}}");
    match (open + 1..lines.len()).find(|&i| lines[i] == closing) {
        Some(close) => Some(close),
        None => panic!("line {}: no closing brace at its indentation", start + 1),
    }
}

/// The indices of the lines of `lines` outside test-only items (an attribute of [`test_only`]
/// and the item it applies to): what the workspace's own code is, here and in `layering`.
pub(crate) fn outside_tests(lines: &[&str]) -> Vec<usize> {
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if test_only(lines[i]) {
            // The item the attribute applies to: the next line that is not an attribute.
            let item = (i + 1..lines.len()).find(|&k| {
                let l = lines[k].trim_start();
                !l.starts_with("#[") && !l.starts_with("//")
            });
            i = item.and_then(|k| item_end(lines, k)).unwrap_or(i) + 1;
            continue;
        }
        kept.push(i);
        i += 1;
    }
    kept
}

/// `(line number, name, length in lines)` of each function with a body in `source`, test-only
/// items left out.
fn functions(source: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for i in outside_tests(&lines) {
        let line = lines[i];
        if starts_fn(line) && !line.trim_end().ends_with(';') {
            let name = line
                .split("fn ")
                .nth(1)
                .unwrap_or("")
                .split(['(', '<'])
                .next()
                .unwrap_or("");
            if let Some(close) =
                item_end(&lines, i).filter(|&close| !lines[close].trim_end().ends_with(';'))
            {
                found.push((i + 1, name.to_owned(), close - i + 1));
            }
        }
    }
    found
}

/// The files of the modules that `source`, the file `file` (from the repository root), declares
/// test-only in a file of their own (`#[cfg(test)] mod tests;`), as their paths would be.
fn test_module_files(file: &str, source: &str) -> Vec<String> {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    let base = match name {
        "mod.rs" | "lib.rs" | "main.rs" => dir.to_owned(),
        _ => format!("{dir}/{}", name.trim_end_matches(".rs")),
    };
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let item = lines[i + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.starts_with("#[") && !l.starts_with("//"));
        let module = item
            .map(|l| l.strip_prefix("pub ").unwrap_or(l))
            .and_then(|l| l.strip_prefix("mod "))
            .and_then(|l| l.strip_suffix(';'));
        if let (true, Some(module)) = (test_only(line), module) {
            found.push(format!("{base}/{module}.rs"));
            found.push(format!("{base}/{module}/mod.rs"));
        }
    }
    found
}

/// Every non-test `.rs` file of the workspace's crates, relative to the repository root with `/`
/// between folders, in name order: a crate's files less those under `tests/`, `target/` and the
/// folders of the crates inside it, and the files of test-only modules.
fn workspace_sources() -> Vec<String> {
    let folders = workspace_members();
    let mut files = Vec::new();
    for folder in &folders {
        let dir = Path::new(ROOT).join(folder);
        let nested: Vec<_> = folders
            .iter()
            .filter(|other| *other != folder)
            .map(|other| Path::new(ROOT).join(other))
            .filter(|other| other.starts_with(&dir))
            .collect();
        for file in rust_files(&dir, &["tests", "target"]) {
            if !nested.iter().any(|n| file.starts_with(n)) {
                let relative = file.strip_prefix(ROOT).unwrap();
                let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
                files.push(parts.join("/"));
            }
        }
    }
    files.sort();
    files.dedup();
    let mut tests = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        tests.extend(test_module_files(file, &source));
    }
    files.retain(|file| !tests.contains(file));
    files
}

#[test]
fn the_counter_measures_bodies_from_fn_line_to_closing_brace() {
    let source = "\
trait T {
    fn declared(&self) -> u8;
}

pub(crate) fn one_line() -> u8 { 1 }

impl S {
    pub fn long_signature(
        a: u8,
    ) -> u8 {
        let b = { a };
        b
    }
}

#[cfg(test)]
mod tests {
    fn in_a_test_module() {
        let a = 1;
    }
}

#[cfg(all(test, not(loom)))]
#[allow(unused)]
mod checks {
    fn in_a_test_module_too() {}
}

fn after_them() {
}
";
    assert_eq!(
        functions(source),
        [
            (5, "one_line".to_owned(), 1),
            (8, "long_signature".to_owned(), 6),
            (29, "after_them".to_owned(), 2),
        ]
    );
}

#[test]
fn the_workspace_read_is_every_crates_code_and_no_test() {
    let files = workspace_sources();
    for expected in [
        "build.rs",
        "src/main.rs",
        "benches/checkers.rs",
        "examples/bench_report.rs",
        "examples/textbook-connector/src/main.rs",
        "live/build.rs",
        "live/probe.rs",
        "model/src/lib.rs",
        "sim/src/lib.rs",
    ] {
        assert!(files.iter().any(|f| f == expected), "{expected} not read");
    }
    for file in &files {
        assert!(
            !file
                .split('/')
                .any(|part| part == "tests" || part == "target"),
            "{file} read"
        );
    }
    // A test module in a file of its own is no code either.
    assert_eq!(
        test_module_files(
            "engine/src/compact/mod.rs",
            "#[cfg(test)]\nmod tests;\nmod level;\n"
        ),
        [
            "engine/src/compact/tests.rs",
            "engine/src/compact/tests/mod.rs"
        ]
    );
    assert_eq!(
        test_module_files("sim/src/observed.rs", "#[cfg(test)]\nmod checks;\n"),
        [
            "sim/src/observed/checks.rs",
            "sim/src/observed/checks/mod.rs"
        ]
    );
}

/// A function found in the code: its file (from the repository root), line, name and length.
type Found = (String, usize, String, usize);

/// What is wrong with the functions `found` against the entries `listed`: a function over the
/// limit that no entry allows, or longer than its entry; an entry above its function's length,
/// or naming none, so that it is lowered or removed.
fn ratchet(listed: &[(&str, &str, usize)], found: &[Found]) -> Vec<String> {
    let mut allowed: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for &(file, name, lines) in listed {
        assert!(
            allowed.insert((file, name), lines).is_none(),
            "{file} fn {name} is listed twice"
        );
    }
    let mut problems = Vec::new();
    // The longest function of each name in each file (a name may be an `impl`'s in several).
    let mut longest: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (file, line, name, length) in found {
        let key = (file.as_str(), name.as_str());
        let most = longest.entry(key).or_insert(0);
        *most = (*most).max(*length);
        if *length <= MAX_LINES {
            continue;
        }
        match allowed.get(&key) {
            None => problems.push(format!(
                "{file}:{line} fn {name}: {length} lines, over {MAX_LINES}: split it by its steps"
            )),
            Some(&listed) if *length > listed => problems.push(format!(
                "{file}:{line} fn {name}: {length} lines, longer than the {listed} it is listed \
                 at: split it by its steps"
            )),
            Some(_) => {}
        }
    }
    for (&(file, name), &listed) in &allowed {
        match longest.get(&(file, name)) {
            None => problems.push(format!(
                "{file} fn {name}: no such function now: remove its entry from LONGER"
            )),
            Some(&length) if length <= MAX_LINES => problems.push(format!(
                "{file} fn {name}: {length} lines now, within {MAX_LINES}: remove its entry from \
                 LONGER"
            )),
            Some(&length) if length < listed => problems.push(format!(
                "{file} fn {name}: {length} lines now: lower its entry in LONGER from {listed} to \
                 {length}"
            )),
            Some(_) => {}
        }
    }
    problems
}

#[test]
fn the_ratchet_refuses_a_new_or_grown_function_and_a_loose_entry() {
    let found = |rows: &[(&str, usize, &str, usize)]| -> Vec<Found> {
        rows.iter()
            .map(|&(file, line, name, length)| (file.to_owned(), line, name.to_owned(), length))
            .collect()
    };
    let listed = [("a.rs", "long", 90), ("a.rs", "gone", 80)];
    // Each listed function at its length, the others within the limit: nothing to say.
    let as_listed = found(&[
        ("a.rs", 1, "long", 90),
        ("a.rs", 99, "gone", 80),
        ("b.rs", 1, "long", 70),
    ]);
    assert!(ratchet(&listed, &as_listed).is_empty());
    let changed = found(&[
        ("a.rs", 1, "long", 91),
        ("b.rs", 5, "new", 71),
        ("b.rs", 90, "long", 71),
    ]);
    assert_eq!(
        ratchet(&listed, &changed),
        [
            "a.rs:1 fn long: 91 lines, longer than the 90 it is listed at: split it by its steps",
            "b.rs:5 fn new: 71 lines, over 70: split it by its steps",
            "b.rs:90 fn long: 71 lines, over 70: split it by its steps",
            "a.rs fn gone: no such function now: remove its entry from LONGER",
        ]
    );
    let shrunk = found(&[("a.rs", 1, "long", 85), ("a.rs", 99, "gone", 70)]);
    assert_eq!(
        ratchet(&listed, &shrunk),
        [
            "a.rs fn gone: 70 lines now, within 70: remove its entry from LONGER",
            "a.rs fn long: 85 lines now: lower its entry in LONGER from 90 to 85",
        ]
    );
}

/// A function over the limit is refused unless [`LONGER`] lists it at its length or longer; an
/// entry above a function's length, or naming none, is refused too, so that it is lowered or
/// removed.
#[test]
fn no_function_is_over_70_lines_but_the_listed_ones_at_their_length() {
    let mut found = Vec::new();
    for file in workspace_sources() {
        let source = std::fs::read_to_string(Path::new(ROOT).join(&file)).unwrap();
        for (line, name, length) in functions(&source) {
            found.push((file.clone(), line, name, length));
        }
    }
    let problems = ratchet(LONGER, &found);
    assert!(
        problems.is_empty(),
        "function lengths (tests/function_length.rs):\n{}",
        problems.join("\n")
    );
}
