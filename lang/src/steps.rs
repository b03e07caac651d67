//! The atomic steps of a file, in file order: what the interpreter's program counter points
//! at, and what a counterexample names (a step's label, or its line and statement text).
//! Simple statements and labelled blocks are steps; so is the receive at the head of a
//! `for each message` loop. `if`, `retry` and procedure calls are not: their statements are.

use std::collections::BTreeSet;

use crate::ast::*;
use crate::outline::{first_line, nested};

/// One atomic step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step<'f> {
    /// Who runs the procedure it is in.
    pub procedure: &'f ProcKind,
    /// The statement: a simple one, a labelled block (all of it), or the `for each message`
    /// loop whose receive this step is.
    pub stmt: &'f Stmt,
    /// Whether the step is weakly fair: not marked `unfair`, nor inside a statement that is.
    pub fair: bool,
}

impl Step<'_> {
    /// How a counterexample names it: its label, or `LINE: TEXT` (the statement's first line,
    /// without its comment and a trailing `{`).
    pub fn name(&self, source: &str) -> String {
        match &self.stmt.label {
            Some(label) => label.node.clone(),
            None => {
                let text = first_line(self.stmt.span.text(source));
                let text = text.strip_suffix('{').unwrap_or(text).trim_end();
                format!("{}: {text}", self.stmt.span.line(source))
            }
        }
    }

    /// Whether this step receives a message (the head of `for each message`).
    pub fn receives(&self) -> bool {
        matches!(self.stmt.kind, StmtKind::ForEach { .. })
    }
}

/// Every step of `file`, procedure by procedure in file order.
pub fn steps(file: &File) -> Vec<Step<'_>> {
    let procedures: BTreeSet<&str> = file
        .procedures()
        .filter_map(|p| match &p.kind {
            ProcKind::Named(n) => Some(n.node.as_str()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for p in file.procedures() {
        let walk = Walk {
            procedure: &p.kind,
            procedures: &procedures,
        };
        walk.block(&p.body, true, &mut out);
    }
    out
}

/// The walk of one procedure's statements.
struct Walk<'f, 'n> {
    procedure: &'f ProcKind,
    procedures: &'n BTreeSet<&'f str>,
}

impl<'f> Walk<'f, '_> {
    fn block(&self, block: &'f Block, fair: bool, out: &mut Vec<Step<'f>>) {
        for stmt in &block.stmts {
            self.stmt(stmt, fair && !stmt.unfair, out);
        }
    }

    fn stmt(&self, stmt: &'f Stmt, fair: bool, out: &mut Vec<Step<'f>>) {
        let step = Step {
            procedure: self.procedure,
            stmt,
            fair,
        };
        match &stmt.kind {
            StmtKind::Call(call) if self.procedures.contains(call.callee.node.as_str()) => {}
            StmtKind::If { .. }
            | StmtKind::Retry { .. }
            | StmtKind::Unbounded { .. }
            | StmtKind::Loop(_)
            | StmtKind::Either(_) => {
                for inner in nested(stmt) {
                    self.block(inner, fair, out);
                }
            }
            StmtKind::ForEach { body, .. } => {
                out.push(step);
                self.block(body, fair, out);
            }
            StmtKind::Call(call) | StmtKind::AssignCall { call, .. } => {
                out.push(step);
                if let Some(handler) = &call.on_error {
                    self.block(handler, fair, out);
                }
            }
            _ => out.push(step),
        }
    }
}
