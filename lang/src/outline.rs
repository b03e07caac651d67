//! A file's statements as an indented outline, one line each: where it is (line), what kind of
//! statement, its label and fairness, and its text's first line. The golden tests pin the
//! example files' trees through it; the interpreter's counterexamples name steps the same way
//! (line and statement text).

use std::fmt::Write;

use crate::ast::*;

/// The outline of `file` (parsed from `source`): each procedure's header, then its statements,
/// nested blocks indented two spaces more.
pub fn outline(file: &File, source: &str) -> String {
    let mut out = String::new();
    for p in file.procedures() {
        let _ = writeln!(out, "{}", p.head.text(source));
        block(&mut out, &p.body, source, 1);
    }
    out
}

fn block(out: &mut String, b: &Block, source: &str, depth: usize) {
    for s in &b.stmts {
        stmt(out, s, source, depth);
        let between = match s.kind {
            StmtKind::Either(_) => "or",
            _ => "else",
        };
        for (i, inner) in nested(s).into_iter().enumerate() {
            if i >= 1 {
                let _ = writeln!(out, "    {}{between}", "  ".repeat(depth));
            }
            block(out, inner, source, depth + 1);
        }
    }
}

fn stmt(out: &mut String, s: &Stmt, source: &str, depth: usize) {
    let text = s.span.text(source);
    let first = first_line(text);
    let mut tags = kind_name(&s.kind).to_string();
    if let Some(l) = &s.label {
        let _ = write!(tags, " [{}]", l.node);
    }
    if s.unfair {
        tags += " unfair";
    }
    let indent = "  ".repeat(depth);
    let _ = writeln!(out, "{:>4}{indent}{tags:<24} {first}", s.span.line(source));
}

/// The statement's kind, as one word.
pub fn kind_name(kind: &StmtKind) -> &'static str {
    match kind {
        StmtKind::Assign { .. } => "assign",
        StmtKind::AssignCall { .. } => "assign-call",
        StmtKind::Call(_) => "call",
        StmtKind::If { .. } => "if",
        StmtKind::Retry { .. } => "retry",
        StmtKind::ForEach { .. } => "for-each",
        StmtKind::Fail { fatal: true, .. } => "fail-fatal",
        StmtKind::Fail { .. } => "fail",
        StmtKind::Flush(_) => "flush",
        StmtKind::Atomic(_) => "atomic",
        StmtKind::Unbounded { .. } => "unbounded",
        StmtKind::Loop(_) => "loop",
        StmtKind::Wait(_) => "wait",
        StmtKind::Either(_) => "either",
        StmtKind::Arm(_) => "arm",
        StmtKind::Cancel(_) => "cancel",
    }
}

/// The blocks a statement holds, in order (an `else` after its `then`).
pub fn nested(s: &Stmt) -> Vec<&Block> {
    match &s.kind {
        StmtKind::If {
            then, otherwise, ..
        } => std::iter::once(then).chain(otherwise).collect(),
        StmtKind::Retry { body, .. } | StmtKind::ForEach { body, .. } => vec![body],
        StmtKind::Atomic(body) | StmtKind::Unbounded { body, .. } | StmtKind::Loop(body) => {
            vec![body]
        }
        StmtKind::Either(branches) => branches.iter().collect(),
        StmtKind::Call(call) | StmtKind::AssignCall { call, .. } => call.on_error.iter().collect(),
        _ => Vec::new(),
    }
}

/// The first line of `text`, without its comment and trailing blanks.
pub fn first_line(text: &str) -> &str {
    without_comment(text.lines().next().unwrap_or(""))
}

/// `line` without its `# comment` (a `#` inside a string is text) and trailing blanks.
fn without_comment(line: &str) -> &str {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '#' if !quoted => return line[..i].trim_end(),
            _ => {}
        }
    }
    line.trim_end()
}
