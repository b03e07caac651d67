//! No import loop between the files of a crate: within each crate of the workspace, the graph
//! whose nodes are its top-level modules (`src/NAME.rs`, or a folder `src/NAME/`) and whose edges
//! are the `crate::NAME` paths one module's files name has no cycle, so a crate reads from its
//! leaves up. Between crates, Cargo already refuses a cycle.
//!
//! [`KNOWN_LOOPS`] lists the loops there were when this rule came, each as the modules it joins:
//! a listed loop may lose modules or go, never grow, and a new one fails.
//!
//! How to see the graph by hand: `grep -rno 'crate::[a-z_]*' src/ | sort -u`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

use crate::function_length::outside_tests;
use crate::util::{rust_files, workspace_members, ROOT};

/// The loops there were when the rule came, as (crate folder, the modules of its loop): none
/// now. The root crate's went when the registry stopped naming the commands (a command's job
/// reaches a model through `catalogue::Systems`) and what the modules shared moved to where it
/// belongs (`program`, `SystemConfig`'s `Display`); the live backend's when a rule's helpers went
/// to `rules` and the server errors to `pg_error`. A loop listed here may lose modules or go,
/// never grow, and a new one fails.
const KNOWN_LOOPS: &[(&str, &[&str])] = &[];

#[test]
fn no_crate_has_a_new_import_loop() {
    let mut problems = Vec::new();
    for folder in workspace_members() {
        let known: BTreeSet<&str> = KNOWN_LOOPS
            .iter()
            .filter(|(f, _)| *f == folder)
            .flat_map(|(_, modules)| modules.iter().copied())
            .collect();
        for cycle in loops(&folder) {
            let outside: Vec<&String> = cycle
                .iter()
                .filter(|m| !known.contains(m.as_str()))
                .collect();
            if !outside.is_empty() {
                problems.push(format!(
                    "{folder}: modules {cycle:?} import each other in a loop"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_known_loop_is_listed_as_it_is_now() {
    for (folder, modules) in KNOWN_LOOPS {
        let now: BTreeSet<String> = loops(folder).into_iter().flatten().collect();
        let listed: BTreeSet<String> = modules.iter().map(|m| m.to_string()).collect();
        assert_eq!(
            now, listed,
            "{folder}: the loop now joins these modules; KNOWN_LOOPS lists them as they are (a \
             module leaving the loop is removed from it; one joining it is a new loop)"
        );
    }
}

/// The engines read a system through the authoring API only: `walcheck-properties` names no
/// engine, and the engine's own modules import each other in no loop.
#[test]
fn the_authoring_api_names_no_engine() {
    for file in rust_files(&Path::new(ROOT).join("properties"), &["target"]) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !code_lines(&text)
                .iter()
                .any(|line| line.contains("walcheck_engine")),
            "{} names walcheck_engine",
            file.display()
        );
    }
    assert!(loops("engine").is_empty(), "the engine's modules loop");
}

/// The loops (strongly connected components of more than one module) of `folder`'s crate,
/// each as its modules' names in order.
fn loops(folder: &str) -> Vec<Vec<String>> {
    let edges = module_edges(folder);
    let mut graph = DiGraph::<&str, ()>::new();
    let mut nodes = BTreeMap::new();
    for (from, tos) in &edges {
        for name in std::iter::once(from).chain(tos) {
            nodes
                .entry(name.as_str())
                .or_insert_with(|| graph.add_node(name.as_str()));
        }
    }
    for (from, tos) in &edges {
        for to in tos {
            graph.add_edge(nodes[from.as_str()], nodes[to.as_str()], ());
        }
    }
    let mut found: Vec<Vec<String>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let mut names: Vec<String> = scc.iter().map(|&n| graph[n].to_owned()).collect();
            names.sort();
            names
        })
        .collect();
    found.sort();
    found
}

/// Each top-level module of `folder`'s `src/` with the other top-level modules its files name,
/// outside comments and test modules: as `crate::NAME`, in a `use crate::{NAME, ...}` group, or
/// as `super::NAME` from a top-level module's own file. `lib.rs` and `main.rs` are the crate's
/// root, not a module.
fn module_edges(folder: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(ROOT).join(folder).join("src");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if !src.is_dir() {
        return edges;
    }
    for file in rust_files(&src, &[]) {
        let relative = file.strip_prefix(&src).unwrap();
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let module = parts[0].trim_end_matches(".rs").to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        // `super::` from `src/NAME.rs` or `src/NAME/mod.rs` is the crate's root.
        let top = parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod.rs");
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_lines(&text).join("\n");
        let named = edges.entry(module.clone()).or_default();
        let prefixes: &[&str] = if top {
            &["crate::", "super::"]
        } else {
            &["crate::"]
        };
        for prefix in prefixes {
            for name in paths_after(&code, prefix) {
                if name != module && is_module(&src, &name) {
                    named.insert(name);
                }
            }
        }
    }
    edges
}

/// The first names of the paths `code` writes after `prefix` (`crate::` or `super::`): `a` of
/// `crate::a::b`, and `a` and `b` of `crate::{a::x, b}`. A `prefix` right after an identifier
/// character or `$` (`$crate::`, `walcheck_crate::`) is another crate's.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut names = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| ident(c) || c == '$')
        {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut segment_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => break,
                    '}' => depth -= 1,
                    ',' if depth == 1 => segment_start = true,
                    c if segment_start && ident(c) => {
                        let name: String = group[i..].chars().take_while(|&c| ident(c)).collect();
                        names.push(name);
                        segment_start = false;
                    }
                    c if c.is_whitespace() => {}
                    _ => segment_start = false,
                }
            }
        } else {
            let name: String = rest.chars().take_while(|&c| ident(c)).collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// Whether `name` is a top-level module of the crate whose sources are in `src`.
fn is_module(src: &Path, name: &str) -> bool {
    src.join(format!("{name}.rs")).is_file() || src.join(name).join("mod.rs").is_file()
}

/// The lines of `text` that are code: not `//` comments (doc comments included), nor the items
/// `#[cfg(test)]` marks ([`outside_tests`]): tests may reach anywhere.
fn code_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    outside_tests(&lines)
        .into_iter()
        .map(|i| lines[i])
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect()
}
