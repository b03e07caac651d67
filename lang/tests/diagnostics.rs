//! Each kind of diagnostic, pinned as the exact text `render` prints: every `NAME.wal` under
//! `tests/diagnostics/` is checked and its rendered diagnostics compared with `NAME.out` beside
//! it (the code, the message, file, line and column, the underline, the hint). A change to any
//! of them shows up in review. `WALCHECK_BLESS=1 cargo test -p walcheck-lang` rewrites the
//! `.out` files that differ.

use std::fs;
use std::path::{Path, PathBuf};

/// The case files, in name order.
fn cases() -> Vec<PathBuf> {
    crate::common::wal_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics"))
}

/// The rendered diagnostics of one case file, named as a user would give its path.
fn rendered(path: &Path) -> String {
    let source = fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    let checked = walcheck_lang::check(&source);
    walcheck_lang::diagnostic::render_all(&checked.diagnostics, &name, &source)
}

#[test]
fn every_diagnostic_renders_as_pinned() {
    let bless = std::env::var_os("WALCHECK_BLESS").is_some();
    let mut differ = Vec::new();
    for case in cases() {
        let out = case.with_extension("out");
        let got = rendered(&case);
        let want = fs::read_to_string(&out).unwrap_or_default();
        if got != want {
            if bless {
                fs::write(&out, &got).unwrap();
            } else {
                differ.push(format!("{}:\n{got}", case.display()));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "rendered diagnostics differ (WALCHECK_BLESS=1 rewrites):\n{}",
        differ.join("\n")
    );
}

/// Every case file produces at least one diagnostic, and together they cover every code.
#[test]
fn the_cases_cover_every_code() {
    use walcheck_lang::Code::*;
    let all = [
        Syntax,
        MissingVersion,
        UnknownVersion,
        UndeclaredVariable,
        UnknownCall,
        UnknownField,
        TypeMismatch,
        BadArguments,
        UnboundedLoop,
        UnknownProperty,
        BadKnob,
        Duplicate,
        Misplaced,
        Limit,
        Unreachable,
    ];
    let mut seen = std::collections::BTreeSet::new();
    for case in cases() {
        let checked = walcheck_lang::check(&fs::read_to_string(&case).unwrap());
        assert!(
            !checked.diagnostics.is_empty(),
            "{} has no diagnostic",
            case.display()
        );
        seen.extend(checked.diagnostics.iter().map(|d| d.code));
    }
    let missing: Vec<_> = all.iter().filter(|c| !seen.contains(c)).collect();
    assert!(missing.is_empty(), "no case file for {missing:?}");
}

/// Rendering is plain text: no terminal escape, whatever the terminal.
#[test]
fn rendering_has_no_colour() {
    for case in cases() {
        assert!(!rendered(&case).contains('\u{1b}'), "{}", case.display());
    }
}

#[test]
fn a_postgresql_crash_ends_an_endless_stream() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/diagnostics/endless-stream-unreachable.wal");
    let source = fs::read_to_string(path).unwrap();
    assert!(!walcheck_lang::check(&source).diagnostics.is_empty());
    let with_crashes = source.replacen("\nvolatile", "\nenv pg_crashes = 1\n\nvolatile", 1);
    let checked = walcheck_lang::check(&with_crashes);
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
}
