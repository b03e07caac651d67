//! The static rules of docs/language.md, run on a parsed file: every name declared once and
//! declared before it is checked, every call and field known, every value of the type its
//! place needs, every loop bounded by its syntax, every `expect` naming a property, and
//! warnings for steps no run can reach. Each finding is a [`Diagnostic`]; they come back in
//! file order.

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::outline::nested;
use crate::vocabulary::{self, Domain, Returns};
use walcheck_model::pg::PgVersion;

/// The only grammar version.
pub const VERSION: u32 = 1;

/// Runs every rule on `file` (parsed from `source`); the diagnostics in file order.
pub fn check_file(file: &File, source: &str) -> Vec<Diagnostic> {
    let mut c = Checker::new(file, source);
    c.version(file);
    c.declarations(file);
    c.procedures(file);
    c.properties(file);
    c.diagnostics
        .extend(crate::limits::check_limits(file, source));
    c.diagnostics
        .sort_by_key(|d| (d.span.start, d.span.end, d.code));
    // A family's members are checked one by one: a finding in their shared body, once.
    c.diagnostics
        .dedup_by(|a, b| (a.span, a.code, &a.message) == (b.span, b.code, &b.message));
    c.diagnostics
}

/// A value's type as the checks infer it: a declared type, or a literal that fits several.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Ty {
    Of(Type),
    /// `none`: an lsn, a txn or a run of them.
    None,
    /// A number literal: a counter's value.
    Number(u64),
}

impl Ty {
    /// How a diagnostic names the type.
    fn describe(self) -> String {
        match self {
            Ty::Of(Type::Lsn) => "an lsn".into(),
            Ty::Of(Type::Bool) => "a bool".into(),
            Ty::Of(Type::Txn) => "a txn".into(),
            Ty::Of(Type::Txns) => "a run of txns".into(),
            Ty::Of(Type::Message) => "a message".into(),
            Ty::Of(Type::Counter(lo, hi)) => format!("a counter {lo}..{hi}"),
            Ty::Of(t) => format!("{t}"),
            Ty::None => "none".into(),
            Ty::Number(n) => format!("the number {n}"),
        }
    }

    /// Whether a value of this type may be stored where `target` is needed.
    fn fits(self, target: Type) -> bool {
        match (self, target) {
            (Ty::Of(Type::Counter(..)), Type::Counter(..)) => true,
            (Ty::Of(t), target) => t == target,
            (Ty::None, Type::Lsn | Type::Txn | Type::Txns) => true,
            (Ty::Number(n), Type::Counter(lo, hi)) => lo <= n && n <= hi,
            _ => false,
        }
    }

    fn is_counter(self) -> bool {
        matches!(self, Ty::Number(_) | Ty::Of(Type::Counter(..)))
    }

    fn is_ordered(self) -> bool {
        self.is_counter() || matches!(self, Ty::None | Ty::Of(Type::Lsn))
    }
}

/// Where an expression is: the code reads only the connector's variables; a property may also
/// observe PostgreSQL (`slot.…`, `wal.…`) and the connector's position (`in`, `at`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Place {
    Code,
    Property,
}

/// What encloses a statement.
#[derive(Clone, Debug, Default)]
struct Scope {
    /// The messages bound by enclosing `for each message` loops.
    messages: Vec<String>,
    /// Inside a labelled block: one atomic step.
    atomic: bool,
    /// The procedure being checked (for recursion).
    procedure: Option<String>,
}

/// The knobs under which PostgreSQL may close a replication stream: a crash of either kind, a
/// clean stop, a failover, a dropped stream, a slot `max_slot_wal_keep_size` invalidates.
const CLOSES_STREAM: &[&str] = &[
    "pg_crashes",
    "os_crashes",
    "pg_stops",
    "failovers",
    "stream_drops",
    "max_slot_wal_keep_pages",
];

struct Checker<'f> {
    source: &'f str,
    vars: BTreeMap<&'f str, &'f VarDecl>,
    procedures: BTreeMap<&'f str, &'f Procedure>,
    labels: BTreeMap<&'f str, Span>,
    /// The timers, by name.
    timers: BTreeSet<&'f str>,
    /// The channels, by name.
    channels: BTreeMap<&'f str, &'f ChannelDecl>,
    /// The processes' names.
    processes: BTreeSet<&'f str>,
    /// The names `for each message` binds anywhere: properties may read them.
    messages: BTreeSet<&'f str>,
    /// Procedures called somewhere, with who calls them: for recursion and unused warnings.
    calls: BTreeMap<String, BTreeSet<String>>,
    /// The file sets one of [`CLOSES_STREAM`] above 0: PostgreSQL may close the replication
    /// stream, so a `for each message` without `until` can end.
    pg_crashes: bool,
    /// The file leaves `env messages` at `transactions`: its messages are whole transactions.
    whole_txns: bool,
    /// Whether a change-only field has been warned of (once a file).
    warned_whole_txns: bool,
    /// The file has an `env messages` line.
    sets_messages: bool,
    diagnostics: Vec<Diagnostic>,
}

impl<'f> Checker<'f> {
    fn new(file: &'f File, source: &'f str) -> Self {
        let mut labels = BTreeMap::new();
        for p in file.procedures() {
            collect_labels(&p.body, &mut labels);
        }
        let procedures = file
            .procedures()
            .filter_map(|p| match &p.kind {
                ProcKind::Named(n) => Some((n.node.as_str(), p)),
                _ => None,
            })
            .collect();
        let mut messages = BTreeSet::new();
        for p in file.procedures() {
            collect_messages(&p.body, &mut messages);
        }
        Checker {
            source,
            vars: BTreeMap::new(),
            procedures,
            labels,
            timers: file.timers().map(|t| t.name.node.as_str()).collect(),
            channels: file.channels().map(|c| (c.name.node.as_str(), c)).collect(),
            // A family member `consumer[1]` is also in `consumer`.
            processes: file
                .processes()
                .filter_map(|p| match &p.kind {
                    ProcKind::Process(n) => Some(n.node.as_str()),
                    _ => None,
                })
                .flat_map(|n| [n, n.split('[').next().unwrap_or(n)])
                .collect(),
            messages,
            calls: BTreeMap::new(),
            pg_crashes: file.items.iter().any(|item| {
                matches!(item, Item::Knob(k) if CLOSES_STREAM.contains(&k.name.node.as_str())
                    && matches!(k.value.node, KnobValue::Number(n) if n > 0))
            }),
            whole_txns: !file
                .knobs()
                .any(|k| k.name.node == "messages" && k.value.node.to_string() == "changes"),
            warned_whole_txns: false,
            sets_messages: file.knobs().any(|k| k.name.node == "messages"),
            diagnostics: Vec::new(),
        }
    }

    /// `span` cut at the end of its first line: a compound statement's header.
    fn first_line(&self, span: Span) -> Span {
        let text = span.text(self.source);
        let end = text
            .find('\n')
            .map_or(span.end, |n| span.start + text[..n].trim_end().len());
        Span::new(span.start, end)
    }

    fn report(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn version(&mut self, file: &File) {
        if file.version.node != VERSION {
            let message = format!("unknown version {}", file.version.node);
            let d = Diagnostic::new(
                Code::UnknownVersion,
                file.version.span,
                message,
                "this walcheck reads version 1",
            )
            .hint("write `walcheck 1`: the only version of the language so far");
            self.report(d);
        }
    }

    // ---- declarations -------------------------------------------------------------------------

    fn declarations(&mut self, file: &'f File) {
        let mut knobs: BTreeMap<&str, Span> = BTreeMap::new();
        for k in file.knobs() {
            if let Some(first) = knobs.insert(&k.name.node, k.name.span) {
                self.duplicate(&k.name, first, "knob");
            }
            self.knob(k);
        }
        self.failover_knobs(file);
        for v in file.vars() {
            self.var_decl(v);
        }
        for d in duplicate_labels(file) {
            self.report(d);
        }
    }

    fn duplicate(&mut self, name: &Name, first: Span, what: &str) {
        let message = format!("{what} `{}` declared twice", name.node);
        let line = first.line(self.source);
        let d = Diagnostic::new(Code::Duplicate, name.span, message, "declared again here")
            .hint(format!("the first is on line {line}: keep one"));
        self.report(d);
    }

    fn knob(&mut self, k: &Knob) {
        let Some(info) = vocabulary::knob_info(&k.name.node) else {
            let message = format!("unknown knob `{}`", k.name.node);
            let hint = did_you_mean(&k.name.node, vocabulary::KNOBS.iter().map(|k| k.name))
                .unwrap_or_else(|| "the knobs are listed in docs/language.md, Environment".into());
            self.report(
                Diagnostic::new(Code::BadKnob, k.name.span, message, "no such knob").hint(hint),
            );
            return;
        };
        let ok = match (&k.value.node, info.domain) {
            (KnobValue::Word(w), _) if info.name == "runs" => w == "unbounded",
            (KnobValue::Word(w), Domain::Range(lo, hi)) if info.name == "pg_version" => {
                PgVersion::from_release(w)
                    .is_some_and(|v| w.contains('.') && (lo..=hi).contains(&u64::from(v.major())))
            }
            (KnobValue::Number(n), Domain::Range(lo, hi)) => (lo..=hi).contains(n),
            (KnobValue::Word(w), Domain::Words(words)) => words.contains(&w.as_str()),
            _ => false,
        };
        if !ok {
            let allowed = match info.domain {
                Domain::Range(lo, hi) if info.name == "pg_version" => {
                    format!("a major version from {lo} to {hi} or a release MAJOR.MINOR")
                }
                Domain::Range(lo, hi) => format!("a number from {lo} to {hi}"),
                Domain::Words(words) => words
                    .iter()
                    .map(|w| format!("`{w}`"))
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            let message = format!("`{}` cannot be {}", info.name, k.value.node);
            let d = Diagnostic::new(
                Code::BadKnob,
                k.value.span,
                message,
                format!("expected {allowed}"),
            )
            .hint(format!(
                "{}: {} (default {})",
                info.name, info.doc, info.default
            ));
            self.report(d);
        }
    }

    /// The failover knobs' needs: a primary whose standby can be promoted, and PostgreSQL 17 for
    /// failover slots (`PgVersion::has_failover_slots`).
    fn failover_knobs(&mut self, file: &File) {
        let value = |name: &str| file.knobs().find(|k| k.name.node == name);
        let word = |name: &str| value(name).map(|k| k.value.node.to_string());
        let on_standby = word("server").as_deref() == Some("standby");
        let failovers = value("failovers").filter(|k| k.value.node != KnobValue::Number(0));
        let slots = value("failover_slots").filter(|k| k.value.node.to_string() == "on");
        for k in [failovers, slots]
            .into_iter()
            .flatten()
            .filter(|_| on_standby)
        {
            let d = Diagnostic::new(
                Code::BadKnob,
                k.span,
                format!("`{}` needs `server = primary`", k.name.node),
                "the model follows the primary's standby",
            )
            .hint("failovers and failover slots are the primary's: drop `env server = standby`");
            self.report(d);
        }
        let Some(k) = slots.filter(|_| !on_standby) else {
            return;
        };
        let release = word("pg_version").and_then(|v| PgVersion::from_release(&v));
        if !release.is_some_and(|v| v.has_failover_slots()) {
            let d = Diagnostic::new(
                Code::BadKnob,
                k.span,
                "failover slots need PostgreSQL 17 or later",
                "PostgreSQL 15 and 16 copy no logical slot to a standby",
            )
            .hint("add `env pg_version = 17` (or 18)");
            self.report(d);
        }
    }

    fn var_decl(&mut self, v: &'f VarDecl) {
        let name = v.name.node.as_str();
        if vocabulary::RESERVED.contains(&name) {
            let message = format!("`{name}` is reserved");
            let d = Diagnostic::new(
                Code::Duplicate,
                v.name.span,
                message,
                "a name walcheck gives to PostgreSQL or the destination",
            )
            .hint("choose another name");
            self.report(d);
            return;
        }
        if let Some(first) = self.vars.get(name) {
            let first = first.name.span;
            self.duplicate(&v.name, first, "variable");
            return;
        }
        if let Type::Counter(lo, hi) = v.ty.node {
            if lo > hi {
                let d = Diagnostic::new(
                    Code::TypeMismatch,
                    v.ty.span,
                    "empty counter range",
                    "its low end is above its high end",
                )
                .hint(format!("write `{hi}..{lo}`"));
                self.report(d);
            }
        }
        let constant = matches!(
            v.init.node,
            ExprKind::None | ExprKind::Bool(_) | ExprKind::Number(_) | ExprKind::Lsn(_)
        );
        if !constant {
            let d = Diagnostic::new(Code::Misplaced, v.init.span, "an initial value must be a constant", "not a constant")
                .hint("start from `none`, `true`, `false`, a number or an LSN, and assign the rest in a run");
            self.report(d);
        } else if let Some(ty) = self.expr(&v.init, &Scope::default(), Place::Code) {
            self.expect_fits(ty, v.ty.node, &v.init, "the initial value");
        }
        self.vars.insert(name, v);
    }

    // ---- procedures and statements -------------------------------------------------------------

    fn procedures(&mut self, file: &'f File) {
        let mut seen: BTreeMap<String, Span> = BTreeMap::new();
        for p in file.procedures() {
            // A process and a procedure share the names `in` tests.
            let key = match &p.kind {
                ProcKind::Named(n) | ProcKind::Process(n) => n.node.clone(),
                other => format!("{other:?}"),
            };
            if let Some(first) = seen.insert(key, p.head) {
                let message = format!("`{}` declared twice", p.head.text(self.source));
                let d = Diagnostic::new(Code::Duplicate, p.head, message, "declared again here")
                    .hint(format!(
                        "merge it into the first one, on line {}",
                        first.line(self.source)
                    ));
                self.report(d);
            }
            let scope = Scope {
                procedure: named(p),
                ..Scope::default()
            };
            self.block(&p.body, &scope);
        }
        if !file.procedures().any(|p| p.kind == ProcKind::EveryRun) {
            let span = file.version.span;
            let d = Diagnostic::new(
                Code::Misplaced,
                span,
                "no `every run` procedure",
                "the file never says what a run does",
            )
            .hint("add `every run { … }` with the connector's steps");
            self.report(d);
        }
        self.recursion(file);
        self.unused_procedures(file);
        self.after_crash_without_crashes(file);
        self.kills_without_killable(file);
    }

    /// `env kills` above 0 in a file with no `killable process`: no kill can happen.
    fn kills_without_killable(&mut self, file: &File) {
        if file.processes().any(|p| p.killable) {
            return;
        }
        let knob = file.knobs().find(|k| {
            k.name.node == "kills" && matches!(k.value.node, KnobValue::Number(n) if n > 0)
        });
        if let Some(k) = knob {
            let d = Diagnostic::new(
                Code::Unreachable,
                k.span,
                "no kill can happen",
                "the file has no `killable process`",
            )
            .hint("mark the process a kill may restart: `killable process NAME { … }`");
            self.report(d);
        }
    }

    fn block(&mut self, block: &'f Block, scope: &Scope) {
        for s in &block.stmts {
            self.stmt(s, scope);
        }
        self.unreachable_after(block);
    }

    fn stmt(&mut self, s: &'f Stmt, scope: &Scope) {
        if let StmtKind::Call(call) | StmtKind::AssignCall { call, .. } = &s.kind {
            if let Some(handler) = &call.on_error {
                self.on_error(call, handler, scope);
            }
        }
        match &s.kind {
            StmtKind::Assign { target, value } => self.assign(target, value, scope),
            StmtKind::AssignCall { target, call } => self.assign_call(target, call, scope),
            StmtKind::Call(call) => {
                // A call on its own line discards what it returns (OLake's `ExecContext`).
                self.call(call, scope, true);
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.condition(cond, scope, Place::Code);
                self.block(then, scope);
                if let Some(b) = otherwise {
                    self.block(b, scope);
                }
            }
            StmtKind::Retry { times, body, until } => self.retry(s, times, body, until, scope),
            StmtKind::ForEach {
                message,
                until,
                body,
            } => self.for_each(s, message, until.as_ref(), body, scope),
            StmtKind::Fail { .. } => {}
            StmtKind::Flush(name) => self.flush(name),
            StmtKind::Atomic(body) => self.atomic(s, body, scope),
            StmtKind::Unbounded { keyword, body } => {
                self.unbounded(keyword);
                self.block(body, scope);
            }
            StmtKind::Loop(body) => {
                self.loop_in_atomic(s, scope);
                self.endless(s, body);
                self.block(body, scope);
            }
            StmtKind::Wait(cond) => self.condition(cond, scope, Place::Code),
            StmtKind::Either(branches) => {
                for b in branches {
                    self.block(b, scope);
                }
            }
            StmtKind::Arm(timer) | StmtKind::Cancel(timer) => self.timer(timer),
        }
    }

    /// `CALL on error { … }`: a call of the vocabulary that can fail (not a procedure's, a
    /// channel's or `destination.write`), outside a labelled block.
    fn on_error(&mut self, call: &'f Call, handler: &'f Block, scope: &Scope) {
        let name = call.callee.node.as_str();
        let channel = name
            .split_once('.')
            .is_some_and(|(c, _)| self.channels.contains_key(c));
        let cannot_fail =
            self.procedures.contains_key(name) || channel || name == "destination.write";
        if cannot_fail || scope.atomic {
            let (message, hint) = if scope.atomic {
                (
                    "`on error` inside one atomic step".to_owned(),
                    "move the call out of the labelled block: its handler's statements are steps of their own",
                )
            } else {
                (
                    format!("`{name}` cannot fail"),
                    "only PostgreSQL's calls and `destination.commit` fail (`env call_failures`)",
                )
            };
            let d =
                Diagnostic::new(Code::Misplaced, handler.span, message, "this handler").hint(hint);
            self.report(d);
        }
        self.block(handler, scope);
    }

    /// A `loop` whose body has a path that takes no step would spin without end between two
    /// steps: every path through it must take one.
    fn endless(&mut self, s: &Stmt, body: &Block) {
        if may_skip(body, &self.procedures) {
            let d = Diagnostic::new(
                Code::UnboundedLoop,
                self.first_line(s.span),
                "a loop with a path that takes no step",
                "it would turn forever between two steps",
            )
            .hint("give every path through the body a step, e.g. `wait COND` first");
            self.report(d);
        }
    }

    /// `arm NAME` and `cancel NAME` name a timer.
    fn timer(&mut self, timer: &Name) {
        if self.timers.contains(timer.node.as_str()) {
            return;
        }
        let message = format!("`{}` is not a timer", timer.node);
        let hint = did_you_mean(&timer.node, self.timers.iter().copied())
            .unwrap_or_else(|| format!("declare it: `timer {}`", timer.node));
        self.report(
            Diagnostic::new(
                Code::UndeclaredVariable,
                timer.span,
                message,
                "no such timer",
            )
            .hint(hint),
        );
    }

    fn atomic(&mut self, s: &'f Stmt, body: &'f Block, scope: &Scope) {
        if s.label.is_none() {
            let d = Diagnostic::new(
                Code::Misplaced,
                body.span,
                "a block without a label",
                "one atomic step needs a name",
            )
            .hint("name the step: `read_slot: { … }`");
            self.report(d);
        }
        let inner = Scope {
            atomic: true,
            ..scope.clone()
        };
        self.block(body, &inner);
    }

    fn unbounded(&mut self, keyword: &Name) {
        let message = format!("unbounded loop `{}`", keyword.node);
        let hint = if keyword.node == "retry" {
            "give it a bound: `retry 300 times { … } until COND`"
        } else {
            "loops are `retry N times { … } until COND` or `for each message m { … }` (bounded by the workload)"
        };
        let d = Diagnostic::new(
            Code::UnboundedLoop,
            keyword.span,
            message,
            "no bound in its syntax",
        )
        .hint(hint);
        self.report(d);
    }

    fn loop_in_atomic(&mut self, s: &Stmt, scope: &Scope) -> bool {
        if scope.atomic {
            let d = Diagnostic::new(
                Code::Misplaced,
                self.first_line(s.span),
                "a loop inside one atomic step",
                "this loop is inside a labelled block",
            )
            .hint("move the loop out of the block: each of its turns is a step of its own");
            self.report(d);
        }
        scope.atomic
    }

    fn retry(
        &mut self,
        s: &'f Stmt,
        times: &Spanned<u64>,
        body: &'f Block,
        until: &Expr,
        scope: &Scope,
    ) {
        self.loop_in_atomic(s, scope);
        if times.node == 0 {
            let d = Diagnostic::new(
                Code::Unreachable,
                times.span,
                "`retry 0 times` never runs its body",
                "zero tries",
            )
            .hint("retry at least once");
            self.report(d);
        }
        if times.node > vocabulary::RETRY_MAX {
            let d = Diagnostic::new(
                Code::UnboundedLoop,
                times.span,
                if times.node == u64::MAX {
                    "a `retry` of a number past 64 bits has too many tries to explore".to_owned()
                } else {
                    format!("`retry {} times` has too many tries to explore", times.node)
                },
                format!("at most {}", vocabulary::RETRY_MAX),
            )
            .hint("a retry until a deadline is a few hundred tries; write fewer (OLake's 30 s of 100 ms tries is 300)");
            self.report(d);
        }
        self.block(body, scope);
        self.condition(until, scope, Place::Code);
    }

    fn for_each(
        &mut self,
        s: &'f Stmt,
        message: &Name,
        until: Option<&Expr>,
        body: &'f Block,
        scope: &Scope,
    ) {
        self.loop_in_atomic(s, scope);
        if self.vars.contains_key(message.node.as_str()) {
            let message_text = format!("`{}` is already a variable", message.node);
            let d = Diagnostic::new(
                Code::Duplicate,
                message.span,
                message_text,
                "the message would hide it",
            )
            .hint(format!(
                "name the message differently, e.g. `{}`",
                ["m", "msg", "message", "received"]
                    .into_iter()
                    .find(|n| !self.vars.contains_key(n))
                    .unwrap_or("m2")
            ));
            self.report(d);
        }
        let mut inner = scope.clone();
        inner.messages.push(message.node.clone());
        if let Some(until) = until {
            self.condition(until, scope, Place::Code);
        }
        self.block(body, &inner);
    }

    fn flush(&mut self, name: &Name) {
        match self.vars.get(name.node.as_str()) {
            None => self.undeclared(name),
            Some(v) if v.storage != Storage::DurableAsync => {
                let message = format!("`flush {}`: not an async durable variable", name.node);
                let d = Diagnostic::new(
                    Code::Misplaced,
                    name.span,
                    message,
                    "nothing is pending here",
                )
                .hint(format!(
                    "declare it `durable {}: …, async` or drop the flush",
                    name.node
                ));
                self.report(d);
            }
            Some(_) => {}
        }
    }

    /// The variable `target` may be assigned: declared, and not destination metadata.
    fn target(&mut self, target: &Name, scope: &Scope, got: Option<Ty>) -> Option<Type> {
        if scope.messages.contains(&target.node) {
            let d = Diagnostic::new(
                Code::Misplaced,
                target.span,
                "a message cannot be assigned",
                "bound by `for each message`",
            )
            .hint("store what you need of it in a declared variable");
            self.report(d);
            return None;
        }
        let Some(v) = self.vars.get(target.node.as_str()) else {
            self.undeclared_holding(target, got);
            return None;
        };
        let (what, how) = if self.timers.contains(target.node.as_str()) {
            ("a timer", format!("`arm {0}` or `cancel {0}`", target.node))
        } else if self.channels.contains_key(target.node.as_str()) {
            (
                "a channel",
                format!("`{0}.send(v)` or `v = {0}.receive()`", target.node),
            )
        } else {
            ("", String::new())
        };
        if !what.is_empty() {
            let message = format!("`{}` is {what}: it cannot be assigned", target.node);
            let d = Diagnostic::new(Code::Misplaced, target.span, message, what.to_owned())
                .hint(format!("change it with {how}"));
            self.report(d);
            return None;
        }
        if v.storage == Storage::Destination {
            let message = format!(
                "`{}` is written only by the destination's commit",
                target.node
            );
            let d = Diagnostic::new(
                Code::Misplaced,
                target.span,
                message,
                "destination metadata",
            )
            .hint(format!(
                "write it in the commit: `destination.commit({} = …)`",
                target.node
            ));
            self.report(d);
            return None;
        }
        Some(v.ty.node)
    }

    fn assign(&mut self, target: &Name, value: &Expr, scope: &Scope) {
        let got = self.expr(value, scope, Place::Code);
        let want = self.target(target, scope, got);
        if let (Some(want), Some(got)) = (want, got) {
            self.expect_fits(got, want, value, &format!("`{}`", target.node));
        }
    }

    fn assign_call(&mut self, target: &Name, call: &'f Call, scope: &Scope) {
        let got = self.call(call, scope, false);
        let want = self.target(target, scope, got.flatten().map(Ty::Of));
        match (want, got) {
            (Some(want), Some(Some(got))) if !Ty::Of(got).fits(want) => {
                let message = format!(
                    "`{}` is {}, and this call gives {}",
                    target.node,
                    Ty::Of(want).describe(),
                    Ty::Of(got).describe()
                );
                let d = Diagnostic::new(
                    Code::TypeMismatch,
                    call.span,
                    message,
                    format!("this is {}", Ty::Of(got).describe()),
                );
                self.report(d);
            }
            (Some(_), Some(None)) => {
                let message = format!("`{}` returns nothing to assign", call.callee.node);
                let d = Diagnostic::new(Code::TypeMismatch, call.span, message, "no value")
                    .hint("call it on its own line");
                self.report(d);
            }
            _ => {}
        }
    }

    /// Checks a call; `Some(result type)` when it is known (`Some(None)`: it returns nothing).
    /// A `discarded` result may be a row with no field chosen.
    fn call(&mut self, call: &'f Call, scope: &Scope, discarded: bool) -> Option<Option<Type>> {
        let name = call.callee.node.as_str();
        if self.procedures.contains_key(name) {
            return self.procedure_call(call, scope);
        }
        if let Some((channel, op)) = name.split_once('.') {
            if let Some(decl) = self.channels.get(channel).copied() {
                return self.channel_call(call, decl, op, scope);
            }
        }
        let Some(info) = vocabulary::call(name) else {
            self.unknown_call(call);
            return None;
        };
        if name == "destination.commit" {
            self.commit_args(call, scope);
        } else {
            self.args(call, info, scope);
        }
        match (info.returns, &call.field) {
            (Returns::Row(_), None) if discarded => Some(None),
            (returns, _) => self.result(call, returns),
        }
    }

    /// `NAME.send(v)` (nothing) or `NAME.receive()` (a value of the channel's type).
    fn channel_call(
        &mut self,
        call: &Call,
        decl: &ChannelDecl,
        op: &str,
        scope: &Scope,
    ) -> Option<Option<Type>> {
        let ty = decl.ty.node;
        let name = &decl.name.node;
        let wanted = match op {
            "send" => 1,
            "receive" => 0,
            _ => {
                let message = format!("a channel has `send` and `receive`, not `{op}`");
                self.report(
                    Diagnostic::new(Code::UnknownCall, call.callee.span, message, "no such call")
                        .hint(format!("`{name}.send(v)` or `v = {name}.receive()`")),
                );
                return None;
            }
        };
        let named = call.args.iter().any(|a| a.name.is_some());
        if call.args.len() != wanted || named || call.field.is_some() {
            let usage = if wanted == 1 {
                format!("`{name}.send(v)`: one value")
            } else {
                format!("`v = {name}.receive()`: no argument")
            };
            self.report(Diagnostic::new(
                Code::BadArguments,
                call.span,
                format!("`{}` takes {usage}", call.callee.node),
                "wrong arguments",
            ));
            return None;
        }
        if let Some(arg) = call.args.first() {
            if let Some(got) = self.expr(&arg.value, scope, Place::Code) {
                self.expect_fits(got, ty, &arg.value, &format!("what `{name}` carries"));
            }
            return Some(None);
        }
        Some(Some(ty))
    }

    fn unknown_call(&mut self, call: &Call) {
        let name = call.callee.node.as_str();
        let message = format!("unknown call `{name}`");
        let known = vocabulary::CALLS
            .iter()
            .map(|c| c.name)
            .chain(self.procedures.keys().copied());
        let hint = did_you_mean(name, known)
            .unwrap_or_else(|| "the calls are listed in docs/language.md, Calls".into());
        let d = Diagnostic::new(
            Code::UnknownCall,
            call.callee.span,
            message,
            "not PostgreSQL's, the destination's or a procedure of this file",
        )
        .hint(hint);
        self.report(d);
    }

    /// A call of the file's procedure: no arguments, no result, never inside one atomic step.
    fn procedure_call(&mut self, call: &Call, scope: &Scope) -> Option<Option<Type>> {
        let name = call.callee.node.clone();
        let caller = scope.procedure.clone().unwrap_or_default();
        self.calls.entry(name.clone()).or_default().insert(caller);
        if !call.args.is_empty() || call.field.is_some() {
            let message = format!("procedure `{name}` takes no arguments and returns nothing");
            self.report(Diagnostic::new(
                Code::BadArguments,
                call.span,
                message,
                "call it as `NAME()`",
            ));
        }
        if scope.atomic {
            let message = format!("procedure `{name}` called inside one atomic step");
            let d = Diagnostic::new(
                Code::Misplaced,
                call.span,
                message,
                "inside a labelled block",
            )
            .hint("call it outside the block: its statements are steps of their own");
            self.report(d);
        }
        Some(None)
    }

    fn args(&mut self, call: &Call, info: &vocabulary::CallInfo, scope: &Scope) {
        let mut given: BTreeSet<&str> = BTreeSet::new();
        for (index, arg) in call.args.iter().enumerate() {
            let param = match &arg.name {
                Some(n) => info.params.iter().find(|p| p.name == n.node),
                None => info.params.get(index),
            };
            let Some(param) = param else {
                self.bad_argument(info, arg);
                continue;
            };
            given.insert(param.name);
            self.arg_type(info, param, arg, scope);
        }
        let missing: Vec<&str> = info
            .params
            .iter()
            .filter(|p| !p.optional && !given.contains(p.name))
            .map(|p| p.name)
            .collect();
        if !missing.is_empty() {
            let message = format!(
                "`{}` needs {}",
                info.name,
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let usage = info
                .params
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ");
            let d = Diagnostic::new(Code::BadArguments, call.span, message, "missing arguments")
                .hint(format!("{}({usage}): {}", info.name, info.doc));
            self.report(d);
        }
    }

    /// The argument's value is of a type its parameter accepts.
    fn arg_type(
        &mut self,
        info: &vocabulary::CallInfo,
        param: &vocabulary::Param,
        arg: &Arg,
        scope: &Scope,
    ) {
        let Some(ty) = self.expr(&arg.value, scope, Place::Code) else {
            return;
        };
        let counter = |t: &Type| ty.is_counter() && matches!(t, Type::Counter(..));
        if param.accepts.iter().any(|t| ty.fits(*t) || counter(t)) {
            return;
        }
        let want = param
            .accepts
            .iter()
            .map(|t| Ty::Of(*t).describe())
            .collect::<Vec<_>>()
            .join(" or ");
        let message = format!(
            "`{}` of `{}` is {want}, not {}",
            param.name,
            info.name,
            ty.describe()
        );
        let label = format!("this is {}", ty.describe());
        self.report(Diagnostic::new(
            Code::TypeMismatch,
            arg.value.span,
            message,
            label,
        ));
    }

    fn bad_argument(&mut self, info: &vocabulary::CallInfo, arg: &Arg) {
        let usage = info
            .params
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ");
        let message = match &arg.name {
            Some(n) => format!("`{}` has no parameter `{}`", info.name, n.node),
            None => format!("too many arguments to `{}`", info.name),
        };
        let d = Diagnostic::new(Code::BadArguments, arg.span, message, "not a parameter")
            .hint(format!("{}({usage})", info.name));
        self.report(d);
    }

    /// `destination.commit(NAME = value, …)`: each name a `durable … in destination` variable.
    fn commit_args(&mut self, call: &Call, scope: &Scope) {
        for arg in &call.args {
            let Some(name) = &arg.name else {
                let d = Diagnostic::new(
                    Code::BadArguments,
                    arg.span,
                    "`destination.commit` takes only `NAME = value`",
                    "no name",
                )
                .hint(
                    "name the destination metadata it sets: `destination.commit(dest_lsn = pos)`",
                );
                self.report(d);
                continue;
            };
            let got = self.expr(&arg.value, scope, Place::Code);
            match self.vars.get(name.node.as_str()).copied() {
                None => self.undeclared(name),
                Some(v) if v.storage != Storage::Destination => {
                    let message = format!("`{}` is not destination metadata", name.node);
                    let d = Diagnostic::new(
                        Code::Misplaced,
                        name.span,
                        message,
                        "not declared `in destination`",
                    )
                    .hint(format!(
                        "declare it `durable {}: …, in destination`",
                        name.node
                    ));
                    self.report(d);
                }
                Some(v) => {
                    if let Some(got) = got {
                        self.expect_fits(got, v.ty.node, &arg.value, &format!("`{}`", name.node));
                    }
                }
            }
        }
    }

    fn result(&mut self, call: &Call, returns: Returns) -> Option<Option<Type>> {
        match (returns, &call.field) {
            (Returns::Nothing, None) => Some(None),
            (Returns::Value(t), None) => Some(Some(t)),
            (Returns::Row(fields), Some(f)) => self.field_of(fields, f, &call.callee.node),
            (Returns::Row(fields), None) => {
                let names = fields
                    .iter()
                    .map(|(n, _)| format!("`.{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let message = format!("`{}` returns a row: say which field", call.callee.node);
                let d =
                    Diagnostic::new(Code::TypeMismatch, call.span, message, "a row, not a value")
                        .hint(format!(
                            "add one of {names}, e.g. `{}(…){}`",
                            call.callee.node,
                            names.split(", ").next().unwrap_or("").trim_matches('`')
                        ));
                self.report(d);
                None
            }
            (Returns::Nothing | Returns::Value(_), Some(f)) => {
                let message = format!("`{}` has no fields", call.callee.node);
                self.report(Diagnostic::new(
                    Code::UnknownField,
                    f.span,
                    message,
                    "no such field",
                ));
                None
            }
        }
    }

    fn field_of(
        &mut self,
        fields: &[(&'static str, Type)],
        f: &Name,
        of: &str,
    ) -> Option<Option<Type>> {
        match fields.iter().find(|(n, _)| *n == f.node) {
            Some((_, t)) => Some(Some(*t)),
            None => {
                self.unknown_field(fields, f, of);
                None
            }
        }
    }

    fn unknown_field(&mut self, fields: &[(&'static str, Type)], f: &Name, of: &str) {
        let message = format!("`{of}` has no field `{}`", f.node);
        let names = fields.iter().map(|(n, _)| *n);
        let hint = did_you_mean(&f.node, names).unwrap_or_else(|| {
            let all = fields
                .iter()
                .map(|(n, _)| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("its fields: {all}")
        });
        self.report(
            Diagnostic::new(Code::UnknownField, f.span, message, "no such field").hint(hint),
        );
    }

    fn undeclared(&mut self, name: &Name) {
        self.undeclared_holding(name, None);
    }

    /// [`Checker::undeclared`] for an assignment's target, whose hint declares it with the type
    /// of the value assigned (`got`) when that is known: a `txn` as a `txn`, not an `lsn`.
    fn undeclared_holding(&mut self, name: &Name, got: Option<Ty>) {
        let declared = match got {
            Some(Ty::Of(Type::Bool)) => "bool = false".to_owned(),
            Some(Ty::Of(Type::Txn)) => "txn = none".to_owned(),
            Some(Ty::Of(Type::Txns)) => "txns = none".to_owned(),
            Some(Ty::Of(Type::Counter(lo, hi))) => format!("{lo}..{hi} = {lo}"),
            Some(Ty::Number(n)) => format!("0..{} = 0", n.max(1)),
            _ => "lsn = none".to_owned(),
        };
        let message = format!("undeclared variable `{}`", name.node);
        let known = self.vars.keys().copied();
        let reserved = vocabulary::RESERVED.contains(&name.node.as_str());
        let hint = did_you_mean(&name.node, known).unwrap_or_else(|| match reserved {
            true => format!(
                "`{}` is reserved: declare a variable of another name",
                name.node
            ),
            false => format!(
                "declare it: `volatile {}: {declared}` (or durable)",
                name.node
            ),
        });
        self.report(
            Diagnostic::new(Code::UndeclaredVariable, name.span, message, "not declared")
                .hint(hint),
        );
    }

    fn expect_fits(&mut self, got: Ty, want: Type, e: &Expr, what: &str) {
        if !got.fits(want) {
            let message = format!(
                "{what} is {}, not {}",
                Ty::Of(want).describe(),
                got.describe()
            );
            let mut d = Diagnostic::new(
                Code::TypeMismatch,
                e.span,
                message,
                format!("this is {}", got.describe()),
            );
            if let (Ty::Number(n), Type::Counter(lo, hi)) = (got, want) {
                d = d.hint(format!("{n} is outside {lo}..{hi}"));
            }
            self.report(d);
        }
    }

    /// A condition: a bool.
    fn condition(&mut self, e: &Expr, scope: &Scope, place: Place) {
        let Some(ty) = self.expr(e, scope, place) else {
            return;
        };
        if ty != Ty::Of(Type::Bool) {
            let message = format!("a condition must be a bool, and this is {}", ty.describe());
            let mut d = Diagnostic::new(
                Code::TypeMismatch,
                e.span,
                message,
                format!("{} used as a bool", ty.describe()),
            );
            if matches!(ty, Ty::Of(Type::Lsn | Type::Txn)) {
                d = d.hint(format!(
                    "compare it: `{} != none`",
                    e.span.text(self.source)
                ));
            }
            self.report(d);
        }
    }
}

// ---- expressions --------------------------------------------------------------------------

impl Checker<'_> {
    /// The type of `e`, or `None` after reporting why it has none.
    fn expr(&mut self, e: &Expr, scope: &Scope, place: Place) -> Option<Ty> {
        match &e.node {
            ExprKind::None => Some(Ty::None),
            ExprKind::Bool(_) => Some(Ty::Of(Type::Bool)),
            ExprKind::Number(n) => Some(Ty::Number(*n)),
            ExprKind::Lsn(_) => Some(Ty::Of(Type::Lsn)),
            ExprKind::Var(v) => self.var(v, e.span, scope, place),
            ExprKind::Field(base, field) => self.field(base, field, scope, place),
            ExprKind::MinMax { max, args } => self.min_max(*max, args, scope, place),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, scope, place),
            ExprKind::Not(inner) => {
                self.condition(inner, scope, place);
                Some(Ty::Of(Type::Bool))
            }
            ExprKind::In(target) | ExprKind::At(target) => self.position(e, target, place),
        }
    }

    fn var(&mut self, v: &str, span: Span, scope: &Scope, place: Place) -> Option<Ty> {
        if scope.messages.iter().any(|m| m == v) {
            return Some(Ty::Of(Type::Message));
        }
        // A property reads the last message a `for each message` received (none before one).
        if place == Place::Property && self.messages.contains(v) && !self.vars.contains_key(v) {
            return Some(Ty::Of(Type::Message));
        }
        if let Some(decl) = self.vars.get(v) {
            return Some(Ty::Of(decl.ty.node));
        }
        let name = Spanned {
            node: v.to_string(),
            span,
        };
        if vocabulary::OBSERVABLES.iter().any(|(o, _)| *o == v) {
            if place == Place::Code {
                self.observed_in_code(&name);
            } else {
                let message = format!("`{v}` is read by its fields");
                self.report(
                    Diagnostic::new(Code::TypeMismatch, span, message, "not a value")
                        .hint(format!("e.g. `{v}.{}`", first_field(v))),
                );
            }
            return None;
        }
        self.undeclared(&name);
        None
    }

    fn observed_in_code(&mut self, name: &Name) {
        let message = format!("the code cannot read `{}` directly", name.node);
        let d = Diagnostic::new(
            Code::Misplaced,
            name.span,
            message,
            "PostgreSQL's state, visible to properties only",
        )
        .hint("read it with a call, e.g. `c = pg_replication_slots().confirmed_flush_lsn`");
        self.report(d);
    }

    fn field(&mut self, base: &Expr, field: &Name, scope: &Scope, place: Place) -> Option<Ty> {
        if let Some(ty) = self.flushed_copy(base, field, place) {
            return ty;
        }
        if let ExprKind::Var(v) = &base.node {
            if let Some((_, fields)) = vocabulary::OBSERVABLES.iter().find(|(o, _)| o == v) {
                if !scope.messages.contains(v) && !self.vars.contains_key(v.as_str()) {
                    if place == Place::Code {
                        self.observed_in_code(&Spanned {
                            node: v.clone(),
                            span: base.span,
                        });
                        return None;
                    }
                    return self.field_of(fields, field, v).flatten().map(Ty::Of);
                }
            }
        }
        let base_ty = self.expr(base, scope, place)?;
        let (fields, of): (&[(&str, Type)], &str) = match base_ty {
            Ty::Of(Type::Message) => {
                self.change_field(field);
                (vocabulary::MESSAGE_FIELDS, "a message")
            }
            Ty::Of(Type::Txn) => (vocabulary::TXN_FIELDS, "a txn"),
            Ty::Of(Type::Txns) => (vocabulary::TXNS_FIELDS, "a run of txns"),
            other => {
                let message = format!("{} has no fields", other.describe());
                self.report(Diagnostic::new(
                    Code::UnknownField,
                    field.span,
                    message,
                    "no such field",
                ));
                return None;
            }
        };
        self.field_of(fields, field, of).flatten().map(Ty::Of)
    }

    /// A field only a message of pgoutput's one by one sets (`.is_begin`, `.is_change`,
    /// `.index`), read in a file whose stream sends whole transactions: it never changes, which
    /// a condition on it hides. Warned of once a file.
    fn change_field(&mut self, field: &Name) {
        let value = match field.node.as_str() {
            "is_begin" | "is_change" => "false",
            "index" => "0",
            _ => return,
        };
        if !self.whole_txns || self.warned_whole_txns {
            return;
        }
        self.warned_whole_txns = true;
        let message = format!("`.{}` is {value} for every message here", field.node);
        let d = Diagnostic::new(
            Code::WholeTransactions,
            field.span,
            message,
            "the stream sends whole transactions",
        )
        .hint(match self.sets_messages {
            true => {
                "set `env messages = changes` to receive Begin, each change and Commit one by one"
            }
            false => {
                "add `env messages = changes` to receive Begin, each change and Commit one by one"
            }
        });
        self.report(d);
    }

    /// `NAME.flushed` of an async durable variable: its copy on disk, for properties only.
    fn flushed_copy(&mut self, base: &Expr, field: &Name, place: Place) -> Option<Option<Ty>> {
        let ExprKind::Var(v) = &base.node else {
            return None;
        };
        let decl = self.vars.get(v.as_str()).copied()?;
        if field.node != "flushed" {
            return None;
        }
        if decl.storage != Storage::DurableAsync {
            let message = format!("`{v}` has no copy on disk: it is not an async variable");
            let d = Diagnostic::new(Code::UnknownField, field.span, message, "no such field")
                .hint("`NAME.flushed` reads the copy on disk of a `durable NAME: …, async`");
            self.report(d);
            return Some(None);
        }
        if place == Place::Code {
            let message = format!("the code cannot read `{v}.flushed`");
            let d = Diagnostic::new(
                Code::Misplaced,
                Span::new(base.span.start, field.span.end),
                message,
                "the copy on disk, visible to properties only",
            )
            .hint(format!(
                "`flush {v}` makes the pending value the copy on disk"
            ));
            self.report(d);
            return Some(None);
        }
        Some(Some(Ty::Of(decl.ty.node)))
    }

    fn min_max(&mut self, max: bool, args: &[Expr; 2], scope: &Scope, place: Place) -> Option<Ty> {
        let mut ok = true;
        for a in args {
            match self.expr(a, scope, place) {
                Some(Ty::Of(Type::Lsn) | Ty::None) => {}
                Some(other) => {
                    let f = if max { "max" } else { "min" };
                    let message = format!("`{f}` takes lsns, not {}", other.describe());
                    self.report(Diagnostic::new(
                        Code::TypeMismatch,
                        a.span,
                        message,
                        format!("this is {}", other.describe()),
                    ));
                    ok = false;
                }
                None => ok = false,
            }
        }
        ok.then_some(Ty::Of(Type::Lsn))
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, scope: &Scope, place: Place) -> Option<Ty> {
        if matches!(op, BinOp::And | BinOp::Or) {
            self.condition(a, scope, place);
            self.condition(b, scope, place);
            return Some(Ty::Of(Type::Bool));
        }
        let (ta, tb) = (self.expr(a, scope, place)?, self.expr(b, scope, place)?);
        let ok = match op {
            BinOp::Eq | BinOp::Ne => comparable(ta, tb),
            BinOp::Add | BinOp::Sub => ta.is_counter() && tb.is_counter(),
            _ => ta.is_ordered() && tb.is_ordered() && comparable(ta, tb),
        };
        if !ok {
            let message = format!(
                "`{}` cannot apply to {} and {}",
                op.symbol(),
                ta.describe(),
                tb.describe()
            );
            let mut d = Diagnostic::new(
                Code::TypeMismatch,
                Span::new(a.span.start, b.span.end),
                message,
                if matches!(op, BinOp::Add | BinOp::Sub) {
                    "these do not add up"
                } else {
                    "these do not compare"
                },
            );
            if matches!(op, BinOp::Add | BinOp::Sub)
                && (ta == Ty::Of(Type::Lsn) || tb == Ty::Of(Type::Lsn))
            {
                d = d.hint(
                    "LSNs are compared, never computed: use min, max or a field such as end_lsn",
                );
            }
            self.report(d);
            return None;
        }
        match op {
            BinOp::Add | BinOp::Sub => Some(if let Ty::Of(t) = ta { Ty::Of(t) } else { tb }),
            _ => Some(Ty::Of(Type::Bool)),
        }
    }

    fn position(&mut self, e: &Expr, target: &Name, place: Place) -> Option<Ty> {
        if place == Place::Code {
            let d = Diagnostic::new(
                Code::Misplaced,
                e.span,
                "`in` and `at` are for properties",
                "the code does not see its own position",
            )
            .hint("keep a volatile bool instead");
            self.report(d);
            return None;
        }
        let known = self.labels.contains_key(target.node.as_str())
            || self.procedures.contains_key(target.node.as_str())
            || self.processes.contains(target.node.as_str());
        if !known {
            let message = format!("no step or procedure `{}`", target.node);
            let names = self
                .labels
                .keys()
                .copied()
                .chain(self.procedures.keys().copied());
            let hint = did_you_mean(&target.node, names)
                .unwrap_or_else(|| "label the step: `NAME: statement`".into());
            self.report(
                Diagnostic::new(
                    Code::UndeclaredVariable,
                    target.span,
                    message,
                    "not a label of this file",
                )
                .hint(hint),
            );
            return None;
        }
        Some(Ty::Of(Type::Bool))
    }
}

/// Whether two types compare with `==`.
fn comparable(a: Ty, b: Ty) -> bool {
    match (a, b) {
        (Ty::None, Ty::None) => true,
        (Ty::None, Ty::Of(t)) | (Ty::Of(t), Ty::None) => {
            matches!(t, Type::Lsn | Type::Txn | Type::Txns | Type::Message)
        }
        _ if a.is_counter() && b.is_counter() => true,
        (Ty::Of(x), Ty::Of(y)) => x == y && !matches!(x, Type::Message | Type::Row(_) | Type::Unit),
        _ => false,
    }
}

fn first_field(observable: &str) -> &'static str {
    vocabulary::OBSERVABLES
        .iter()
        .find(|(o, _)| *o == observable)
        .and_then(|(_, f)| f.first())
        .map_or("", |(n, _)| n)
}

fn named(p: &Procedure) -> Option<String> {
    match &p.kind {
        ProcKind::Named(n) => Some(n.node.clone()),
        _ => None,
    }
}

fn collect_labels<'f>(block: &'f Block, labels: &mut BTreeMap<&'f str, Span>) {
    for s in &block.stmts {
        if let Some(l) = &s.label {
            labels.entry(l.node.as_str()).or_insert(l.span);
        }
        for inner in nested(s) {
            collect_labels(inner, labels);
        }
    }
}

fn duplicate_labels(file: &File) -> Vec<Diagnostic> {
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    let mut out = Vec::new();
    let mut stack: Vec<&Block> = file.procedures().map(|p| &p.body).collect();
    let mut all = Vec::new();
    while let Some(b) = stack.pop() {
        for s in &b.stmts {
            if let Some(l) = &s.label {
                all.push(l);
            }
            stack.extend(nested(s));
        }
    }
    all.sort_by_key(|l| l.span.start);
    let procedures: BTreeSet<&str> = file.procedures().filter_map(|p| named_ref(p)).collect();
    for l in all {
        // A family's members share their body's labels: the same text, not a second label.
        let again = seen
            .get(l.node.as_str())
            .is_some_and(|&first| first != l.span);
        if procedures.contains(l.node.as_str()) || again {
            let message = format!("label `{}` used twice", l.node);
            out.push(
                Diagnostic::new(
                    Code::Duplicate,
                    l.span,
                    message,
                    "a step's name must be unique",
                )
                .hint("rename one of them"),
            );
        }
        seen.entry(l.node.as_str()).or_insert(l.span);
    }
    out
}

fn named_ref(p: &Procedure) -> Option<&str> {
    match &p.kind {
        ProcKind::Named(n) => Some(n.node.as_str()),
        _ => None,
    }
}

// ---- procedures: recursion, use, reachability ----------------------------------------------

impl Checker<'_> {
    /// A procedure that calls itself, directly or not, is an unbounded loop: one in a strongly
    /// connected component of the calls with another, or calling itself (linear in the calls,
    /// without recursion: a chain of thousands of procedures is read in one pass).
    fn recursion(&mut self, file: &File) {
        let mut graph = petgraph::Graph::<&str, ()>::new();
        let mut nodes: BTreeMap<&str, petgraph::graph::NodeIndex> = BTreeMap::new();
        let mut looping: BTreeSet<String> = BTreeSet::new();
        for (callee, callers) in &self.calls {
            for caller in callers {
                if caller == callee {
                    looping.insert(callee.clone());
                }
                let [from, to] =
                    [caller, callee].map(|n| *nodes.entry(n).or_insert_with(|| graph.add_node(n)));
                graph.add_edge(from, to, ());
            }
        }
        for component in petgraph::algo::kosaraju_scc(&graph) {
            if component.len() > 1 {
                looping.extend(component.iter().map(|&i| graph[i].to_owned()));
            }
        }
        for p in file.procedures() {
            let Some(name) = named_ref(p) else { continue };
            if looping.contains(name) {
                let message = format!("procedure `{name}` calls itself");
                let span = p.head;
                let d = Diagnostic::new(
                    Code::UnboundedLoop,
                    span,
                    message,
                    "recursion: a loop with no bound",
                )
                .hint("use `retry N times { … } until COND` for a bounded loop");
                self.report(d);
            }
        }
    }

    /// `after crash` when the environment injects no connector crash.
    fn after_crash_without_crashes(&mut self, file: &File) {
        let zero = |name: &str| {
            file.knobs()
                .any(|k| k.name.node == name && k.value.node == KnobValue::Number(0))
        };
        if !(zero("connector_crashes") || zero("crashes")) {
            return;
        }
        for p in file.procedures().filter(|p| p.kind == ProcKind::AfterCrash) {
            let d = Diagnostic::new(Code::Unreachable, p.head, "`after crash` never runs", "no connector crash can happen")
                .hint("the file sets no connector crashes (`env connector_crashes = 0` or `env crashes = 0`)");
            self.report(d);
        }
    }

    fn unused_procedures(&mut self, file: &File) {
        for p in file.procedures() {
            let Some(name) = named_ref(p) else { continue };
            if !self.calls.contains_key(name) {
                let message = format!("procedure `{name}` is never called");
                let d = Diagnostic::new(
                    Code::Unreachable,
                    p.head,
                    message,
                    "no run reaches its steps",
                )
                .hint(format!(
                    "call it from `every run` as `{name}()`, or delete it"
                ));
                self.report(d);
            }
        }
    }

    /// Warns on the first statement after one that never lets a run go on (a `fail`, an
    /// endless `for each message`, an `if` whose branches all stop).
    fn unreachable_after(&mut self, block: &Block) {
        let pg_crashes = self.pg_crashes;
        let Some(stop) = block
            .stmts
            .iter()
            .position(|s| stops(s) && !(pg_crashes && matches!(s.kind, StmtKind::ForEach { .. })))
        else {
            return;
        };
        let Some(next) = block.stmts.get(stop + 1) else {
            return;
        };
        let why = match &block.stmts[stop].kind {
            StmtKind::ForEach { .. } => {
                "the `for each message` loop above never ends: it has no `until` (only PostgreSQL closes the stream: a crash, a clean stop, a failover, a drop or an invalidated slot, under `env pg_crashes`, `os_crashes`, `pg_stops`, `failovers`, `stream_drops` or `max_slot_wal_keep_pages`)"
            }
            StmtKind::Fail { fatal: true, .. } => "the `fail fatal` above ends the pipeline",
            StmtKind::Fail { .. } => "the `fail` above ends the run",
            StmtKind::Loop(_) => "the `loop` above never ends",
            _ => "every branch of the `if` above fails",
        };
        let line = next.span.line(self.source);
        let message = format!("unreachable step on line {line}");
        let d =
            Diagnostic::new(Code::Unreachable, next.span, message, "no run gets here").hint(why);
        self.report(d);
    }

    // ---- properties, expect and skip --------------------------------------------------------

    fn properties(&mut self, file: &File) {
        let mut ids: BTreeMap<String, Span> = BTreeMap::new();
        for inv in file.invariants() {
            if vocabulary::built_in(&inv.id.node).is_some() || ids.contains_key(&inv.id.node) {
                let message = format!("property `{}` declared twice", inv.id.node);
                let hint = "built-in properties are checked already; give yours another id";
                self.report(
                    Diagnostic::new(Code::Duplicate, inv.id.span, message, "this id is taken")
                        .hint(hint),
                );
            }
            ids.entry(inv.id.node.clone()).or_insert(inv.id.span);
            self.condition(&inv.cond, &Scope::default(), Place::Property);
            for more in [&inv.when, &inv.leads_to].into_iter().flatten() {
                self.condition(more, &Scope::default(), Place::Property);
            }
        }
        let mut expected: BTreeMap<&str, Span> = BTreeMap::new();
        for item in &file.items {
            let (property, span) = match item {
                Item::Expect(e) => (&e.property, e.span),
                Item::Skip(s) => (&s.property, s.span),
                _ => continue,
            };
            self.known_property(property, &ids);
            if let (Item::Skip(_), true) = (item, ids.contains_key(&property.node)) {
                let message = format!(
                    "`skip {}`: only built-in properties are skipped",
                    property.node
                );
                let d = Diagnostic::new(
                    Code::Misplaced,
                    property.span,
                    message,
                    "declared in this file",
                )
                .hint("delete the property's `always` or `sometimes` line instead");
                self.report(d);
            }
            if let Some(first) = expected.insert(&property.node, span) {
                let message = format!("`{}` has two expect or skip lines", property.node);
                let hint = format!("keep one; the first is on line {}", first.line(self.source));
                self.report(
                    Diagnostic::new(Code::Duplicate, property.span, message, "said again here")
                        .hint(hint),
                );
            }
        }
    }

    fn known_property(&mut self, property: &Name, ids: &BTreeMap<String, Span>) {
        if vocabulary::built_in(&property.node).is_some() || ids.contains_key(&property.node) {
            return;
        }
        let message = format!("unknown property `{}`", property.node);
        let names = vocabulary::BUILT_IN
            .iter()
            .map(|p| p.id)
            .chain(ids.keys().map(String::as_str));
        let hint = did_you_mean(&property.node, names).unwrap_or_else(|| {
            let all = vocabulary::BUILT_IN
                .iter()
                .map(|p| p.id)
                .collect::<Vec<_>>()
                .join(", ");
            format!("the built-in properties are {all}; declare your own with `always ID: …`")
        });
        let d = Diagnostic::new(
            Code::UnknownProperty,
            property.span,
            message,
            "neither built in nor declared in this file",
        )
        .hint(hint);
        self.report(d);
    }
}

/// The names `for each message` binds in `block` and the blocks inside it.
fn collect_messages<'f>(block: &'f Block, found: &mut BTreeSet<&'f str>) {
    for s in &block.stmts {
        if let StmtKind::ForEach { message, .. } = &s.kind {
            found.insert(message.node.as_str());
        }
        for inner in nested(s) {
            collect_messages(inner, found);
        }
    }
}

/// Whether some path through `block` takes no step: every statement on it is control (an
/// `if` with a branch that takes none, a `retry` whose body takes none, a `for each message`
/// with an `until` (tested before the receive), a call of a procedure that takes none).
/// Recursion through procedures is the checks' error already; a procedure is read once.
fn may_skip(block: &Block, procedures: &BTreeMap<&str, &Procedure>) -> bool {
    may_skip_in(block, procedures, &mut BTreeMap::new())
}

/// [`may_skip`], each procedure's answer kept in `known` (read once however often called).
fn may_skip_in<'f>(
    block: &'f Block,
    procedures: &BTreeMap<&str, &'f Procedure>,
    known: &mut BTreeMap<String, bool>,
) -> bool {
    block.stmts.iter().all(|s| match &s.kind {
        StmtKind::If {
            then, otherwise, ..
        } => {
            may_skip_in(then, procedures, known)
                || otherwise
                    .as_ref()
                    .is_none_or(|b| may_skip_in(b, procedures, known))
        }
        StmtKind::Retry { times, body, .. } => {
            times.node == 0 || may_skip_in(body, procedures, known)
        }
        StmtKind::ForEach { until, .. } => until.is_some(),
        StmtKind::Either(branches) => branches.iter().any(|b| may_skip_in(b, procedures, known)),
        StmtKind::Loop(_) => false,
        StmtKind::Unbounded { .. } => true,
        StmtKind::Call(call) => match procedures.get(call.callee.node.as_str()) {
            Some(p) => {
                let name = &call.callee.node;
                if let Some(&skips) = known.get(name) {
                    return skips;
                }
                // While it is read (a recursion, rejected anyway), it counts as skipping.
                known.insert(name.clone(), true);
                let skips = may_skip_in(&p.body, procedures, known);
                known.insert(name.clone(), skips);
                skips
            }
            None => false,
        },
        _ => false,
    })
}

/// Whether no statement after `s` in its block runs.
fn stops(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Fail { .. } | StmtKind::Loop(_) => true,
        StmtKind::ForEach { until: None, .. } => true,
        StmtKind::If {
            then,
            otherwise: Some(other),
            ..
        } => block_stops(then) && block_stops(other),
        _ => false,
    }
}

fn block_stops(b: &Block) -> bool {
    b.stmts.iter().any(stops)
}
