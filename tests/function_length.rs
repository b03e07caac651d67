//! No function of the root package's `src/` is over 70 lines, counted from its `fn` line to its
//! closing brace: the command line stays a function per subcommand, each split by its steps.
//!
//! The code is rustfmt-formatted (CI checks it), so a body ends at the first line after the
//! `fn` line that is a `}` at the `fn` line's indentation.

use std::path::Path;

use crate::util::rust_files;

const MAX_LINES: usize = 70;

/// Whether `line` starts a function item: its qualifiers (`pub(crate)`, `const`, `async`,
/// `unsafe`, `extern "C"`), then `fn`.
fn starts_fn(line: &str) -> bool {
    let mut words = line.split_whitespace().skip_while(|w| {
        w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(w)
    });
    words.next() == Some("fn")
}

/// `(line number, name, length in lines)` of each function with a body in `source`.
fn functions(source: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        if !starts_fn(line) {
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let name = line
            .split("fn ")
            .nth(1)
            .unwrap_or("")
            .split(['(', '<'])
            .next();
        // The signature ends at a line ending in `{` (a body follows), `;` (a declaration) or
        // `}` (a body on the same line).
        let Some(open) = (start..lines.len()).find(|&i| {
            let l = lines[i].trim_end();
            l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
        }) else {
            continue;
        };
        let end = lines[open].trim_end();
        let close = if end.ends_with(';') {
            continue;
        } else if end.ends_with('}') && end.contains('{') {
            open
        } else {
            let closing = format!("{indent}}}");
            match (open + 1..lines.len()).find(|&i| lines[i] == closing) {
                Some(close) => close,
                None => panic!("line {}: no closing brace at its indentation", start + 1),
            }
        };
        found.push((start + 1, name.unwrap_or("").to_owned(), close - start + 1));
    }
    found
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
";
    assert_eq!(
        functions(source),
        [
            (5, "one_line".to_owned(), 1),
            (8, "long_signature".to_owned(), 6)
        ]
    );
}

#[test]
fn no_function_in_src_is_over_70_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut too_long = Vec::new();
    for file in rust_files(&src, &[]) {
        let source = std::fs::read_to_string(&file).expect("a source file");
        let shown = file
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(&file);
        for (line, name, length) in functions(&source) {
            if length > MAX_LINES {
                too_long.push(format!(
                    "{}:{line} fn {name}: {length} lines",
                    shown.display()
                ));
            }
        }
    }
    assert!(
        too_long.is_empty(),
        "functions over {MAX_LINES} lines (split them by their steps):\n{}",
        too_long.join("\n")
    );
}
