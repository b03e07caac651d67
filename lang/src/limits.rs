//! walcheck's limits on the size of a file, checked before it is compiled, so that a file past
//! one is a located error rather than a stack overflow, an exhausted memory or a program
//! counter that wraps: the instructions its runs compile to, procedures inlined
//! ([`INSTRUCTIONS_MAX`]); how deep its inlined procedures nest ([`NESTING_MAX`], the parser's
//! limit on one body); and how many properties it checks ([`PROPERTIES_MAX`]). Expressions,
//! blocks and numbers are limited where they are read (`parser`).
//!
//! Every pass here is linear in the file: each procedure's size and depth is computed once,
//! callees first, in a post-order found without recursion over the calls.

use std::collections::BTreeMap;

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::parser::NESTING_MAX;
use crate::vocabulary;

/// The most instructions a file compiles to: the interpreter's program counter is 16 bits.
pub const INSTRUCTIONS_MAX: u64 = 1 << 16;

/// The most properties (built-in and the file's own) a file may have: the checker reads each
/// through its own condition function, and a liveness row holds them in 64-bit masks.
pub const PROPERTIES_MAX: usize = 64;

pub use crate::parser::CHANNEL_CAPACITY_MAX;

/// The most processes a file has, `every run` among them.
pub const PROCESSES_MAX: usize = 8;

/// The most members a family has (`process consumer[s in 1..8]`).
pub const FAMILY_MAX: u64 = 8;

/// The most branches an `either` has: its choice takes up to one bit a branch but the last.
pub const BRANCHES_MAX: usize = 16;

/// The most choice bits a labelled block's statements may take together, so that with an
/// `either` before it a step stays within the interpreter's 64 (`machine::CHOICES_MAX`): an
/// `either`'s branches but one, a status update's candidates (one a transaction at most, 12
/// with the knobs' ranges, and one), an advance's one, a receive's one and two a call that may
/// fail.
pub const BLOCK_CHOICES_MAX: u64 = 48;

/// What a procedure adds where it is called: its instructions, procedures inlined, and how
/// deep its body nests, its own block one level.
#[derive(Copy, Clone, Debug, Default)]
struct Size {
    instructions: u64,
    depth: usize,
}

/// The diagnostics of every limit `file` is past, in file order.
pub fn check_limits(file: &File, source: &str) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    inlined(file, source, &mut found);
    properties(file, &mut found);
    concurrency(file, &mut found);
    found
}

/// A channel past [`CHANNEL_CAPACITY_MAX`], processes past [`PROCESSES_MAX`].
fn concurrency(file: &File, found: &mut Vec<Diagnostic>) {
    for c in file.channels() {
        if c.capacity.node > CHANNEL_CAPACITY_MAX {
            let message = format!("a channel holds at most {CHANNEL_CAPACITY_MAX} values");
            let d = Diagnostic::new(Code::Limit, c.capacity.span, message, "too large a channel")
                .hint("a small capacity shows the same orderings: the checker explores every one");
            found.push(d);
        }
        if c.capacity.node == 0 {
            let d = Diagnostic::new(
                Code::Limit,
                c.capacity.span,
                "a channel of capacity 0 holds nothing",
                "no value could ever be sent",
            )
            .hint("give it a capacity of 1 or more");
            found.push(d);
        }
    }
    for p in file.procedures() {
        choices_in(&p.body, false, found);
    }
    if let Some(past) = file.processes().nth(PROCESSES_MAX - 1) {
        let message = format!("more than {PROCESSES_MAX} processes, `every run` among them");
        let d = Diagnostic::new(Code::Limit, past.head, message, "one process too many")
            .hint("each process multiplies the interleavings: merge the ones that take turns");
        found.push(d);
    }
}

/// An `either` past [`BRANCHES_MAX`] and a labelled block past [`BLOCK_CHOICES_MAX`] in
/// `block` (inside a labelled block when `atomic`); the choice bits `block` takes.
fn choices_in(block: &Block, atomic: bool, found: &mut Vec<Diagnostic>) -> u64 {
    let mut bits: u64 = 0;
    for s in &block.stmts {
        let own = match &s.kind {
            StmtKind::Either(branches) => {
                if branches.len() > BRANCHES_MAX {
                    let message = format!("an `either` has at most {BRANCHES_MAX} branches");
                    let d = Diagnostic::new(Code::Limit, s.span, message, "too many branches")
                        .hint("nest them: `either { either { … } or { … } } or { … }`");
                    found.push(d);
                }
                branches.len() as u64 - 1
            }
            StmtKind::Call(call) | StmtKind::AssignCall { call, .. } => {
                match call.callee.node.as_str() {
                    "standby_status_update" => 13 + 2,
                    _ => 1 + 2,
                }
            }
            StmtKind::ForEach { .. } => 1,
            _ => 0,
        };
        let inner: u64 = crate::outline::nested(s)
            .into_iter()
            .map(|b| choices_in(b, atomic || matches!(s.kind, StmtKind::Atomic(_)), found))
            .sum();
        if let (StmtKind::Atomic(_), false) = (&s.kind, atomic) {
            if inner > BLOCK_CHOICES_MAX {
                let d = Diagnostic::new(
                    Code::Limit,
                    s.label.as_ref().map_or(s.span, |l| l.span),
                    "a labelled block that makes too many choices in one step",
                    format!("{inner} choice bits: {BLOCK_CHOICES_MAX} at most"),
                )
                .hint("split the block: each `either` branch, status update and failing call is a choice the checker enumerates");
                found.push(d);
            }
        }
        bits = bits.saturating_add(own.saturating_add(inner));
    }
    bits
}

/// The procedures named in `file`.
fn named(file: &File) -> BTreeMap<&str, &Procedure> {
    file.procedures()
        .filter_map(|p| match &p.kind {
            ProcKind::Named(n) => Some((n.node.as_str(), p)),
            _ => None,
        })
        .collect()
}

/// The procedures of the file `p` calls, in the order it calls them.
fn callees<'f>(p: &'f Procedure, procedures: &BTreeMap<&'f str, &'f Procedure>) -> Vec<&'f str> {
    let mut found = Vec::new();
    let mut blocks = vec![&p.body];
    while let Some(block) = blocks.pop() {
        for stmt in &block.stmts {
            match &stmt.kind {
                StmtKind::Call(call) => {
                    if let Some((name, _)) = procedures.get_key_value(call.callee.node.as_str()) {
                        found.push(*name);
                    }
                    blocks.extend(call.on_error.iter());
                }
                kind => blocks.extend(inner_blocks(kind)),
            }
        }
    }
    found
}

/// The blocks a statement holds.
fn inner_blocks(kind: &StmtKind) -> Vec<&Block> {
    match kind {
        StmtKind::If {
            then, otherwise, ..
        } => std::iter::once(then).chain(otherwise).collect(),
        StmtKind::Retry { body, .. }
        | StmtKind::ForEach { body, .. }
        | StmtKind::Atomic(body)
        | StmtKind::Loop(body)
        | StmtKind::Unbounded { body, .. } => vec![body],
        StmtKind::Either(branches) => branches.iter().collect(),
        StmtKind::Call(call) | StmtKind::AssignCall { call, .. } => call.on_error.iter().collect(),
        _ => Vec::new(),
    }
}

/// The named procedures in post-order of their calls (a callee before its callers), each once;
/// a call back into a procedure being visited (recursion, an error of its own) is left out.
fn post_order<'f>(file: &'f File, procedures: &BTreeMap<&'f str, &'f Procedure>) -> Vec<&'f str> {
    let mut order = Vec::new();
    let mut visited: BTreeMap<&str, bool> = BTreeMap::new();
    for root in file.procedures() {
        let start = callees(root, procedures);
        let mut stack: Vec<(&str, Vec<&str>)> = Vec::new();
        for name in start.into_iter().rev() {
            if visited.contains_key(name) {
                continue;
            }
            visited.insert(name, false);
            stack.push((name, callees(procedures[name], procedures)));
            while let Some((top, pending)) = stack.last_mut() {
                match pending.pop() {
                    Some(next) if !visited.contains_key(next) => {
                        visited.insert(next, false);
                        let more = callees(procedures[next], procedures);
                        stack.push((next, more));
                    }
                    Some(_) => {}
                    None => {
                        visited.insert(top, true);
                        order.push(*top);
                        stack.pop();
                    }
                }
            }
        }
    }
    order
}

/// The instructions a block compiles to and how deep it nests, procedures inlined at the sizes
/// `known`; the first call past a limit reported into `found`.
struct Inliner<'a, 'f> {
    procedures: &'a BTreeMap<&'f str, &'f Procedure>,
    known: BTreeMap<&'f str, Size>,
    found: &'a mut Vec<Diagnostic>,
}

impl<'f> Inliner<'_, 'f> {
    /// The size of `block`, at nesting `level` (its own braces included); an error at the
    /// statement that takes it past [`INSTRUCTIONS_MAX`] when that statement is not past it on
    /// its own (then the error is inside it, or at its procedure).
    fn block(&mut self, block: &'f Block, level: usize) -> Size {
        let mut size = Size {
            instructions: 0,
            depth: level,
        };
        for stmt in &block.stmts {
            let inner = self.stmt(stmt, level);
            let before = size.instructions;
            size.instructions = size.instructions.saturating_add(inner.instructions);
            size.depth = size.depth.max(inner.depth);
            if before <= INSTRUCTIONS_MAX
                && size.instructions > INSTRUCTIONS_MAX
                && inner.instructions <= INSTRUCTIONS_MAX
            {
                self.too_many(stmt.span, "the steps up to here compile".to_owned());
            }
        }
        size
    }

    /// The size of `stmt`, in a block at nesting `level`: the instructions `program` compiles
    /// it to.
    fn stmt(&mut self, stmt: &'f Stmt, level: usize) -> Size {
        let own = |instructions: u64| Size {
            instructions,
            depth: level,
        };
        let plus = |a: Size, b: Size| Size {
            instructions: a.instructions.saturating_add(b.instructions),
            depth: a.depth.max(b.depth),
        };
        match &stmt.kind {
            StmtKind::Call(call) => match self.procedures.get(call.callee.node.as_str()) {
                Some(_) => self.call(stmt, call, level),
                None => self.fallible(call, level),
            },
            StmtKind::AssignCall { call, .. } => self.fallible(call, level),
            StmtKind::If {
                then, otherwise, ..
            } => {
                let then = self.block(then, level + 1);
                match otherwise {
                    Some(other) => plus(plus(own(2), then), self.block(other, level + 1)),
                    None => plus(own(1), then),
                }
            }
            StmtKind::Retry { times, .. } if times.node == 0 => own(0),
            StmtKind::Retry { body, .. } => plus(own(2), self.block(body, level + 1)),
            StmtKind::ForEach { until, body, .. } => {
                let head = if until.is_some() { 3 } else { 2 };
                plus(own(head), self.block(body, level + 1))
            }
            // A labelled block that opens with an `if` starts with `Op::BlockStart`.
            StmtKind::Atomic(body) => {
                let start =
                    matches!(body.stmts.first(), Some(s) if matches!(s.kind, StmtKind::If { .. }));
                let inner = self.block(body, level + 1);
                Size {
                    instructions: inner.instructions.saturating_add(u64::from(start)),
                    ..inner
                }
            }
            StmtKind::Unbounded { .. } => own(0),
            StmtKind::Loop(body) => plus(own(1), self.block(body, level + 1)),
            StmtKind::Either(branches) => {
                let mut size = own(1);
                for branch in branches {
                    size = plus(plus(size, own(1)), self.block(branch, level + 1));
                }
                size
            }
            _ => own(1),
        }
    }

    /// A call of the vocabulary: one instruction, and with `on error`, a jump past its
    /// handler and the handler.
    fn fallible(&mut self, call: &'f Call, level: usize) -> Size {
        let own = Size {
            instructions: 1,
            depth: level,
        };
        match &call.on_error {
            Some(handler) => {
                let inner = self.block(handler, level + 1);
                Size {
                    instructions: inner.instructions.saturating_add(2),
                    depth: inner.depth.max(level),
                }
            }
            None => own,
        }
    }

    /// A call of the file's procedure: its body inlined one level deeper; past a limit, an
    /// error at the call (only where the procedure itself is within it: the innermost call past
    /// it).
    fn call(&mut self, stmt: &Stmt, call: &Call, level: usize) -> Size {
        let callee = self
            .known
            .get(call.callee.node.as_str())
            .copied()
            .unwrap_or_default();
        let size = Size {
            instructions: callee.instructions,
            depth: callee.depth + level,
        };
        let name = &call.callee.node;
        if size.depth > NESTING_MAX && callee.depth <= NESTING_MAX {
            let message = format!("`{name}()` nests its steps more than {NESTING_MAX} levels deep");
            let d = Diagnostic::new(Code::Limit, stmt.span, message, "nested too deep here").hint(
                format!(
                    "a procedure's body nests one level deeper than its call, {} levels here; \
                     call fewer procedures inside each other",
                    size.depth
                ),
            );
            self.found.push(d);
        }
        size
    }

    fn too_many(&mut self, span: Span, what: String) {
        let message =
            format!("{what} to more than {INSTRUCTIONS_MAX} instructions, procedures inlined");
        let d = Diagnostic::new(Code::Limit, span, message, "too large a program").hint(
            "each call copies its procedure's steps: call a procedure in fewer places, or \
             from fewer procedures that are themselves called several times",
        );
        self.found.push(d);
    }
}

/// The instructions and nesting of the program, procedures inlined: an error at the innermost
/// call past a limit, or at the runs when only their sum is.
fn inlined(file: &File, source: &str, found: &mut Vec<Diagnostic>) {
    let procedures = named(file);
    let order = post_order(file, &procedures);
    let mut inliner = Inliner {
        procedures: &procedures,
        known: BTreeMap::new(),
        found,
    };
    for name in order {
        let size = inliner.block(&procedures[name].body, 1);
        inliner.known.insert(name, size);
    }
    // The run's end, and each entry's own control (`first run`'s end, the jump to `every run`).
    let mut total: u64 = 1;
    let mut crossed = None;
    for p in file.procedures() {
        if matches!(p.kind, ProcKind::Named(_)) {
            continue;
        }
        let size = inliner.block(&p.body, 1);
        total = total.saturating_add(size.instructions).saturating_add(2);
        if total > INSTRUCTIONS_MAX {
            crossed = crossed.or(Some(p.head));
        }
    }
    if let (Some(head), true) = (crossed, inliner.found.is_empty()) {
        let what = format!("the runs (up to `{}`) compile", head.text(source));
        inliner.too_many(head, what);
    }
}

/// More properties than [`PROPERTIES_MAX`]: an error at the first of the file's own past it.
fn properties(file: &File, found: &mut Vec<Diagnostic>) {
    let built_in = vocabulary::checked_built_ins(file).count();
    let Some(past) = file
        .invariants()
        .nth(PROPERTIES_MAX.saturating_sub(built_in))
    else {
        return;
    };
    let message = format!("more than {PROPERTIES_MAX} properties");
    let label = format!(
        "property {} of this file, with the {built_in} built-in ones it checks",
        PROPERTIES_MAX - built_in + 1
    );
    let hint = "merge properties with `and`, or `skip` built-in ones this design does not need";
    found.push(Diagnostic::new(Code::Limit, past.id.span, message, label).hint(hint));
}
