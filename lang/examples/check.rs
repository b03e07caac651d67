//! Reads connector files and prints their diagnostics: the static checks of the language
//! before `walcheck check FILE` runs them.
//! `cargo run -p walcheck-lang --example check -- connectors/*.wal` exits 0 when no file has an
//! error, 2 otherwise (warnings are printed, and pass).

use std::process::ExitCode;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: check FILE.wal...");
        return ExitCode::from(2);
    }
    let mut failed = false;
    for file in &files {
        let source = match std::fs::read_to_string(file) {
            Ok(source) => source,
            Err(e) => {
                eprintln!("{file}: {e}");
                failed = true;
                continue;
            }
        };
        let checked = walcheck_lang::check(&source);
        print!(
            "{}",
            walcheck_lang::diagnostic::render_all(&checked.diagnostics, file, &source)
        );
        let warnings = checked.diagnostics.len();
        match checked.has_errors() {
            true => failed = true,
            false => println!("{file}: ok ({warnings} warnings)"),
        }
    }
    ExitCode::from(if failed { 2 } else { 0 })
}
