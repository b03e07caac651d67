//! The connector description language: a connector design written in a short file
//! (`connectors/*.wal`), read into a syntax tree, checked statically, and run as a walcheck
//! system.
//!
//! The front end: [`parse`] turns a file's text into a [`ast::File`] whose every node carries
//! its span, and [`check()`] runs the static rules (declared names, known calls and fields,
//! types, bounded loops, known properties, reachable steps), each finding a [`Diagnostic`] that
//! renders with the file's line and column. [`steps::steps`] lists a file's atomic steps as
//! counterexamples name them, [`vocabulary`] holds the calls, knobs and properties the checks
//! know, and [`outline`] prints a tree for review.
//!
//! The interpreter: [`program`] compiles a checked file into one list of instructions,
//! [`machine`] is its semantics (the connector's state beside PostgreSQL's, from walcheck's model
//! of PostgreSQL 15, and the transitions of the file's steps, the workload and the faults), and
//! [`system`] declares a loaded file as a walcheck system, which `walcheck check FILE.wal` checks
//! like a built-in one. docs/language.md is the grammar, the semantics and the rules.

#![warn(missing_docs)]

pub mod ast;
pub mod check;
pub mod diagnostic;
pub mod family;
pub mod limits;
pub mod machine;
pub mod outline;
mod parser;
pub mod program;
pub mod steps;
pub mod system;
pub mod vocabulary;

pub use diagnostic::{Code, Diagnostic, Severity};

/// A file read and checked: its tree when it parsed, and every diagnostic in file order.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The tree, if the file parsed (it may still have errors among `diagnostics`).
    pub file: Option<ast::File>,
    /// Errors and warnings, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    /// Whether any diagnostic is an error: the file cannot be checked.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity() == Severity::Error)
    }

    /// The tree of a file without errors (warnings allowed), or the diagnostics.
    pub fn into_result(self) -> Result<ast::File, Vec<Diagnostic>> {
        match self.file {
            Some(file) if !self.has_errors() => Ok(file),
            _ => Err(self.diagnostics),
        }
    }
}

/// Parses `source` (the whole text of one file): its tree, its families expanded into their
/// members ([`family`]), or the first syntax error.
pub fn parse(source: &str) -> Result<ast::File, Diagnostic> {
    family::expand(parser::parse_file(source)?, source)
}

/// Parses `source` and runs the static checks: the tree and every diagnostic, errors and
/// warnings, ordered by position in the file. Never panics, whatever the text.
pub fn check(source: &str) -> Checked {
    match parse(source) {
        Ok(file) => {
            let diagnostics = check::check_file(&file, source);
            Checked {
                file: Some(file),
                diagnostics,
            }
        }
        Err(d) => Checked {
            file: None,
            diagnostics: vec![d],
        },
    }
}
