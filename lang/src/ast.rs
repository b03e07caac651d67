//! The syntax tree of a connector file: every node carries the [`Span`] of its text, so that a
//! diagnostic underlines it and a counterexample step names its line and statement.

use std::fmt;

/// A range of a file's text, in bytes from its start: `start..end`, `end` exclusive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    /// The span `start..end` (bytes).
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The text of this span in `source` (empty if the span is not inside it).
    pub fn text(self, source: &str) -> &str {
        source.get(self.start..self.end).unwrap_or("")
    }

    /// The 1-based line of the span's start in `source`.
    pub fn line(self, source: &str) -> usize {
        let start = self.start.min(source.len());
        source.as_bytes()[..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }
}

/// A node and the span of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

/// A name as written (a variable, label, procedure, knob or call), with its span.
pub type Name = Spanned<String>;

/// One connector design: the whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    /// The grammar version of the `walcheck N` line (only 1 exists).
    pub version: Spanned<u32>,
    /// The `connector "…"` line's description, if any.
    pub description: Option<Spanned<String>>,
    pub items: Vec<Item>,
}

/// A top-level declaration, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Knob(Knob),
    Var(VarDecl),
    Procedure(Procedure),
    Expect(Expect),
    Skip(Skip),
    Invariant(Invariant),
}

/// `env NAME = VALUE`: an environment knob's value for this file (overridable with `--bound`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    pub name: Name,
    pub value: Spanned<KnobValue>,
    pub span: Span,
}

/// A knob's value as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KnobValue {
    Number(u64),
    Word(String),
}

impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobValue::Number(n) => write!(f, "{n}"),
            KnobValue::Word(w) => f.write_str(w),
        }
    }
}

/// `durable NAME: TYPE = INIT [, async | , in destination]` or `volatile NAME: TYPE = INIT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    pub storage: Storage,
    pub name: Name,
    pub ty: Spanned<Type>,
    pub init: Expr,
    pub span: Span,
}

/// Where a variable lives, and what a crash does to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Kept by a crash; an assignment is durable once its step ends (a state file, an offset
    /// store written synchronously).
    Durable,
    /// Kept by a crash once flushed: an assignment is pending until a `flush NAME` statement or
    /// the background flush step; a crash before it loses it (a debounced offset commit).
    DurableAsync,
    /// Destination metadata: written only by `destination.commit(NAME = …)`, atomically with
    /// the data of that commit.
    Destination,
    /// Reset to its initial value by a crash (the process's memory).
    Volatile,
}

/// The value types: kept small on purpose.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A WAL position in bytes, or `none` (PostgreSQL's `InvalidXLogRecPtr`, 0/0).
    Lsn,
    Bool,
    /// A client transaction, by its position in commit order, or `none`.
    Txn,
    /// A run of transactions by position (what `pg_logical_slot_get_changes` returns), maybe
    /// empty.
    Txns,
    /// A bounded counter `LO..HI` (inclusive).
    Counter(u64, u64),
    /// What `for each message` binds: a transaction or a keepalive.
    Message,
    /// A call's result row, read by its fields; the name is the call's.
    Row(&'static str),
    /// A call that returns nothing.
    Unit,
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Lsn => f.write_str("lsn"),
            Type::Bool => f.write_str("bool"),
            Type::Txn => f.write_str("txn"),
            Type::Txns => f.write_str("txns"),
            Type::Counter(lo, hi) => write!(f, "{lo}..{hi}"),
            Type::Message => f.write_str("message"),
            Type::Row(call) => write!(f, "the row of {call}()"),
            Type::Unit => f.write_str("nothing"),
        }
    }
}

/// Who runs a procedure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcKind {
    /// `first run { … }`: the pipeline's very first run, before `every run`.
    FirstRun,
    /// `every run { … }`: each run: the first, each restart, each later sync.
    EveryRun,
    /// `after crash { … }`: a connector restarted after a crash, before `every run`.
    AfterCrash,
    /// `procedure NAME { … }`: run where a statement calls `NAME()`.
    Named(Name),
}

/// A procedure: who runs it and its statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Procedure {
    pub kind: ProcKind,
    pub body: Block,
    /// The header's span (`every run`, `procedure NAME`).
    pub head: Span,
    pub span: Span,
}

/// `{ … }`: statements in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

/// A statement line (or a labelled block), with its label and fairness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// `NAME:` before it: the step's name in counterexamples and in `at`/`in` conditions.
    pub label: Option<Name>,
    /// `unfair`: the step may stay enabled forever without being taken.
    pub unfair: bool,
    pub kind: StmtKind,
    pub span: Span,
}

/// What a statement does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `NAME = EXPR`.
    Assign { target: Name, value: Expr },
    /// `NAME = CALL(…)[.FIELD]`.
    AssignCall { target: Name, call: Call },
    /// `CALL(…)` for its effect.
    Call(Call),
    /// `if COND { … } [else { … } | else if …]`.
    If {
        cond: Expr,
        then: Block,
        otherwise: Option<Block>,
    },
    /// `retry N times { … } until COND`: the body at most `N` times, until `COND` holds after it.
    Retry {
        times: Spanned<u64>,
        body: Block,
        until: Expr,
    },
    /// `for each message NAME [until COND] { … }`: receive the next message into `NAME` and run
    /// the body, while `COND` (checked before each message) does not hold.
    ForEach {
        message: Name,
        until: Option<Expr>,
        body: Block,
    },
    /// `fail [fatal] "TEXT"`: a plain fail ends the run (the next run starts); a fatal one ends
    /// the pipeline.
    Fail {
        fatal: bool,
        message: Spanned<String>,
    },
    /// `flush NAME`: an async durable variable's pending value becomes durable.
    Flush(Name),
    /// `LABEL: { … }`: the statements as one atomic step.
    Atomic(Block),
    /// A loop with no bound in its syntax (`while …`, `loop`, `retry` without `N times`): kept
    /// in the tree only so that the checks reject it with a diagnostic.
    Unbounded { keyword: Name, body: Block },
}

/// A call: `NAME(ARGS)` or `destination.NAME(ARGS)`, optionally with one field of its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The callee as written: `pg_replication_slot_advance`, `destination.commit`, a procedure.
    pub callee: Name,
    pub args: Vec<Arg>,
    /// `.end_lsn` after the call: the field of its result the statement keeps.
    pub field: Option<Name>,
    pub span: Span,
}

/// A call's argument, positional or `NAME = EXPR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    pub name: Option<Name>,
    pub value: Expr,
    pub span: Span,
}

/// An expression; pure: it reads variables, never calls PostgreSQL.
pub type Expr = Spanned<ExprKind>;

/// The expression forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// `none`: no LSN, no transaction.
    None,
    Bool(bool),
    /// A number: a counter's value.
    Number(u64),
    /// An LSN as PostgreSQL prints it, `16/B374D848`, in bytes.
    Lsn(u64),
    /// A variable (or, in properties, `slot`, `wal`, `destination`).
    Var(String),
    /// `EXPR.FIELD`: a field of a row, a message or a transaction.
    Field(Box<Expr>, Name),
    /// `min(A, B)` or `max(A, B)` of LSNs.
    MinMax {
        max: bool,
        args: Box<[Expr; 2]>,
    },
    /// `A OP B`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `not A`.
    Not(Box<Expr>),
    /// `in NAME` (properties only): the connector's next step lies in procedure or block NAME.
    In(Name),
    /// `at NAME` (properties only): the connector's next step is NAME (or it stopped there).
    At(Name),
}

/// A binary operator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Add,
    Sub,
}

impl BinOp {
    /// The operator as written.
    pub const fn symbol(self) -> &'static str {
        match self {
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Add => "+",
            BinOp::Sub => "-",
        }
    }
}

/// `expect PROPERTY holds|violated ["why"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    pub property: Name,
    pub violated: bool,
    pub why: Option<Spanned<String>>,
    pub span: Span,
}

/// `skip PROPERTY "why"`: a built-in property this design does not check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    pub property: Name,
    pub why: Spanned<String>,
    pub span: Span,
}

/// A user property: `always ID: COND [when COND]` or `sometimes ID: COND`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invariant {
    pub sometimes: bool,
    pub id: Name,
    pub cond: Expr,
    /// `when COND`: the states `always` checks (all when absent).
    pub when: Option<Expr>,
    pub span: Span,
}

impl File {
    /// The knobs, in file order.
    pub fn knobs(&self) -> impl Iterator<Item = &Knob> {
        self.items.iter().filter_map(|i| match i {
            Item::Knob(k) => Some(k),
            _ => None,
        })
    }

    /// The variable declarations, in file order.
    pub fn vars(&self) -> impl Iterator<Item = &VarDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::Var(v) => Some(v),
            _ => None,
        })
    }

    /// The procedures, in file order.
    pub fn procedures(&self) -> impl Iterator<Item = &Procedure> {
        self.items.iter().filter_map(|i| match i {
            Item::Procedure(p) => Some(p),
            _ => None,
        })
    }

    /// The user properties, in file order.
    pub fn invariants(&self) -> impl Iterator<Item = &Invariant> {
        self.items.iter().filter_map(|i| match i {
            Item::Invariant(inv) => Some(inv),
            _ => None,
        })
    }
}
