//! Families: a process, variable, timer or channel declared over a small range of indices
//! (`process consumer[s in 1..2] { … }`, `volatile flushed[1..2]: lsn = none`), expanded as the
//! file is parsed into one declaration a member, named `NAME[K]`. In a member process's body, the
//! index name reads as the member's number (`s` is 1 in `consumer[1]`) and a name indexed by it
//! (`flushed[s]`, `mailbox[s].send(v)`) names that member's. A name indexed by a number
//! (`flushed[2]`) names that member anywhere, properties included. Every later pass — the checks,
//! the compiler, the interpreter — sees only the members.

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::limits::FAMILY_MAX;

/// `file` with every family expanded into its members; an error at a family past
/// [`FAMILY_MAX`] members, or empty.
pub fn expand(file: File, source: &str) -> Result<File, Diagnostic> {
    if let Some(d) = clashes(&file) {
        return Err(d);
    }
    let mut items = Vec::with_capacity(file.items.len());
    for item in file.items {
        match item {
            Item::Family(family) => items.extend(members(&family, source)?),
            other => items.push(other),
        }
    }
    Ok(File { items, ..file })
}

/// A family named like another declaration, or a process family's index named like a
/// variable: one name, two meanings (E12).
fn clashes(file: &File) -> Option<Diagnostic> {
    let declared = |name: &str| {
        file.items.iter().any(|item| match item {
            Item::Var(v) => v.name.node == name,
            Item::Timer(t) => t.name.node == name,
            Item::Channel(c) => c.name.node == name,
            Item::Procedure(p) => match &p.kind {
                ProcKind::Named(n) | ProcKind::Process(n) => n.node == name,
                _ => false,
            },
            _ => false,
        })
    };
    let families = file.items.iter().filter_map(|item| match item {
        Item::Family(f) => Some(f),
        _ => None,
    });
    for family in families {
        let name = match family.item.as_ref() {
            Item::Var(v) => &v.name,
            Item::Timer(t) => &t.name,
            Item::Channel(c) => &c.name,
            Item::Procedure(Procedure {
                kind: ProcKind::Process(n),
                ..
            }) => n,
            _ => continue,
        };
        let (what, span) = match &family.param {
            Some(p) if declared(&p.node) => (format!("the index `{}`", p.node), p.span),
            _ if declared(&name.node) => (format!("the family `{}`", name.node), name.span),
            _ => continue,
        };
        let message = format!("{what} is also declared as a variable, timer, channel or process");
        return Some(
            Diagnostic::new(Code::Duplicate, span, message, "one name, two meanings")
                .hint("give it a name of its own"),
        );
    }
    None
}

/// One item a member of `family`.
fn members(family: &Family, source: &str) -> Result<Vec<Item>, Diagnostic> {
    let size = family.hi.checked_sub(family.lo).map(|d| d + 1);
    if size.is_none_or(|n| n > FAMILY_MAX) {
        let message = format!(
            "a family has 1 to {FAMILY_MAX} members, not `{}`",
            family.span.text(source)
        );
        return Err(
            Diagnostic::new(Code::Limit, family.span, message, "its range").hint(
                "each member is a process or variable of every state: a family of 2 or 3 shows the orderings",
            ),
        );
    }
    Ok((family.lo..=family.hi)
        .map(|k| member(&family.item, family.param.as_ref(), k))
        .collect())
}

/// `NAME[k]`, spanned as `NAME`.
fn named(name: &Name, k: u64) -> Name {
    Spanned {
        node: format!("{}[{k}]", name.node),
        span: name.span,
    }
}

/// Member `k` of the declaration `item`.
fn member(item: &Item, param: Option<&Name>, k: u64) -> Item {
    match item {
        Item::Var(v) => Item::Var(VarDecl {
            name: named(&v.name, k),
            ..v.clone()
        }),
        Item::Timer(t) => Item::Timer(TimerDecl {
            name: named(&t.name, k),
            var: VarDecl {
                name: named(&t.var.name, k),
                ..t.var.clone()
            },
            span: t.span,
        }),
        Item::Channel(c) => {
            let name = named(&c.name, k);
            let vars = crate::parser::channel_vars(&name, &c.ty, &c.capacity, c.span);
            Item::Channel(ChannelDecl {
                name,
                vars,
                ..c.clone()
            })
        }
        Item::Procedure(p) => {
            let ProcKind::Process(name) = &p.kind else {
                return item.clone();
            };
            let body = match param {
                Some(param) => Subst { param, k }.block(&p.body),
                None => p.body.clone(),
            };
            Item::Procedure(Procedure {
                kind: ProcKind::Process(named(name, k)),
                body,
                ..p.clone()
            })
        }
        other => other.clone(),
    }
}

/// A member process's body: its index name as its number.
struct Subst<'a> {
    param: &'a Name,
    k: u64,
}

impl Subst<'_> {
    /// `NAME[P]` as `NAME[K]`, in a variable, a target, a timer or a callee (`q[s].send`).
    fn name(&self, name: &Name) -> Name {
        Spanned {
            node: name
                .node
                .replace(&format!("[{}]", self.param.node), &format!("[{}]", self.k)),
            span: name.span,
        }
    }

    fn block(&self, b: &Block) -> Block {
        Block {
            stmts: b.stmts.iter().map(|s| self.stmt(s)).collect(),
            span: b.span,
        }
    }

    fn stmt(&self, s: &Stmt) -> Stmt {
        let kind = match &s.kind {
            StmtKind::Assign { target, value } => StmtKind::Assign {
                target: self.name(target),
                value: self.expr(value),
            },
            StmtKind::AssignCall { target, call } => StmtKind::AssignCall {
                target: self.name(target),
                call: self.call(call),
            },
            StmtKind::Call(call) => StmtKind::Call(self.call(call)),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => StmtKind::If {
                cond: self.expr(cond),
                then: self.block(then),
                otherwise: otherwise.as_ref().map(|b| self.block(b)),
            },
            StmtKind::Retry { times, body, until } => StmtKind::Retry {
                times: times.clone(),
                body: self.block(body),
                until: self.expr(until),
            },
            StmtKind::ForEach {
                message,
                until,
                body,
            } => StmtKind::ForEach {
                message: message.clone(),
                until: until.as_ref().map(|e| self.expr(e)),
                body: self.block(body),
            },
            StmtKind::Flush(name) => StmtKind::Flush(self.name(name)),
            StmtKind::Atomic(body) => StmtKind::Atomic(self.block(body)),
            StmtKind::Loop(body) => StmtKind::Loop(self.block(body)),
            StmtKind::Wait(cond) => StmtKind::Wait(self.expr(cond)),
            StmtKind::Either(branches) => {
                StmtKind::Either(branches.iter().map(|b| self.block(b)).collect())
            }
            StmtKind::Arm(t) => StmtKind::Arm(self.name(t)),
            StmtKind::Cancel(t) => StmtKind::Cancel(self.name(t)),
            StmtKind::Unbounded { keyword, body } => StmtKind::Unbounded {
                keyword: keyword.clone(),
                body: self.block(body),
            },
            StmtKind::Fail { .. } => s.kind.clone(),
        };
        Stmt { kind, ..s.clone() }
    }

    fn call(&self, c: &Call) -> Call {
        Call {
            callee: self.name(&c.callee),
            args: c
                .args
                .iter()
                .map(|a| Arg {
                    value: self.expr(&a.value),
                    ..a.clone()
                })
                .collect(),
            on_error: c.on_error.as_ref().map(|b| self.block(b)),
            ..c.clone()
        }
    }

    fn expr(&self, e: &Expr) -> Expr {
        let node = match &e.node {
            ExprKind::Var(v) if *v == self.param.node => ExprKind::Number(self.k),
            ExprKind::Var(v) => ExprKind::Var(
                self.name(&Spanned {
                    node: v.clone(),
                    span: e.span,
                })
                .node,
            ),
            ExprKind::Field(base, field) => {
                ExprKind::Field(Box::new(self.expr(base)), field.clone())
            }
            ExprKind::MinMax { max, args } => ExprKind::MinMax {
                max: *max,
                args: Box::new([self.expr(&args[0]), self.expr(&args[1])]),
            },
            ExprKind::Binary(op, a, b) => {
                ExprKind::Binary(*op, Box::new(self.expr(a)), Box::new(self.expr(b)))
            }
            ExprKind::Not(a) => ExprKind::Not(Box::new(self.expr(a))),
            other => other.clone(),
        };
        Spanned { node, span: e.span }
    }
}
