//! The syntax tree of a connector file: every node carries the [`Span`] of its text, so that a
//! diagnostic underlines it and a counterexample step names its line and statement.

use std::fmt;

/// A range of a file's text, in bytes from its start: `start..end`, `end` exclusive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// The byte after the last.
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

/// Where each line of a text starts: a span's line found in logarithmic time, where
/// [`Span::line`] counts the text before it.
#[derive(Clone, Debug)]
pub struct Lines(Vec<usize>);

impl Lines {
    /// The lines of `source`.
    pub fn of(source: &str) -> Lines {
        let after_newlines = source
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i + 1);
        Lines(std::iter::once(0).chain(after_newlines).collect())
    }

    /// The 1-based line of `span`'s start, as [`Span::line`] gives it.
    pub fn line(&self, span: Span) -> usize {
        self.0.partition_point(|&start| start <= span.start)
    }
}

/// A node and the span of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    /// The node.
    pub node: T,
    /// Its text in the file.
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
    /// The declarations after the version and connector lines, in file order.
    pub items: Vec<Item>,
}

/// A top-level declaration, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `env NAME = VALUE`.
    Knob(Knob),
    /// `durable …` or `volatile …`.
    Var(VarDecl),
    /// `every run`, `first run`, `after crash` or `procedure NAME`.
    Procedure(Procedure),
    /// `expect …`.
    Expect(Expect),
    /// `skip …`.
    Skip(Skip),
    /// `always …`, `sometimes …` or `eventually …`.
    Invariant(Invariant),
    /// `timer NAME`.
    Timer(TimerDecl),
    /// `channel NAME: TYPE, capacity N`.
    Channel(ChannelDecl),
    /// A family: a declaration `NAME[LO..HI]` (a variable, timer or channel a member) or a
    /// process `NAME[P in LO..HI]`; the parser expands it into one item a member, named
    /// `NAME[K]` ([`crate::family`]), so no other pass sees one.
    Family(Family),
}

/// A family of declarations over `lo..=hi`: `volatile flushed[1..2]: lsn = none`, `process
/// consumer[s in 1..2] { … }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    /// The process's index name (`s`), which each member's body reads as its number.
    pub param: Option<Name>,
    /// The first member's index.
    pub lo: u64,
    /// The last member's index.
    pub hi: u64,
    /// `[…]` as written.
    pub span: Span,
    /// The declaration, named as written (`flushed`, `consumer`).
    pub item: Box<Item>,
}

/// `timer NAME`: a timer a process arms (`arm NAME`), cancels (`cancel NAME`) and waits for
/// (`wait NAME`, which fires it); disarmed at the start of every run and by a crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerDecl {
    /// Its name.
    pub name: Name,
    /// The whole line.
    pub span: Span,
    /// The timer as a variable: `volatile NAME: bool = false`, true while it is armed.
    pub var: VarDecl,
}

/// `channel NAME: TYPE, capacity N`: a bounded, ordered queue between processes, emptied at the
/// start of every run and by a crash; `NAME.send(v)` waits while it is full, `v = NAME.receive()`
/// while it is empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelDecl {
    /// Its name.
    pub name: Name,
    /// The type of what it carries.
    pub ty: Spanned<Type>,
    /// How many values it holds at most.
    pub capacity: Spanned<u64>,
    /// The whole line.
    pub span: Span,
    /// The channel as variables: `volatile NAME: 0..N = 0`, how many values it holds, then its
    /// places `NAME[1]` … `NAME[N]` (names no file can write), the oldest value first.
    pub vars: Vec<VarDecl>,
}

/// `env NAME = VALUE`: an environment knob's value for this file (overridable with `--bound`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    /// The knob's name.
    pub name: Name,
    /// Its value.
    pub value: Spanned<KnobValue>,
    /// The whole line, without its comment.
    pub span: Span,
}

/// A knob's value as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KnobValue {
    /// A whole number.
    Number(u64),
    /// A word: `sync`, `standby`.
    Word(String),
}

impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The parser reads a number past 64 bits as `u64::MAX`.
            KnobValue::Number(u64::MAX) => f.write_str("a number past 64 bits"),
            KnobValue::Number(n) => write!(f, "{n}"),
            KnobValue::Word(w) => f.write_str(w),
        }
    }
}

/// `durable NAME: TYPE = INIT [, async | , in destination]` or `volatile NAME: TYPE = INIT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    /// Where it lives.
    pub storage: Storage,
    /// Its name.
    pub name: Name,
    /// Its type.
    pub ty: Spanned<Type>,
    /// Its value at the start (of every run, for a volatile one).
    pub init: Expr,
    /// The whole declaration, without its comment.
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
    /// `true` or `false`.
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
    /// `process NAME { … }`: a process of the connector, started with every run beside
    /// `every run`, its steps interleaved with theirs.
    Process(Name),
}

/// A procedure: who runs it and its statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Procedure {
    /// Who runs it.
    pub kind: ProcKind,
    /// Its statements.
    pub body: Block,
    /// The header's span (`every run`, `procedure NAME`).
    pub head: Span,
    /// The header and the block.
    pub span: Span,
    /// `killable process NAME`: a kill (`env kills`) may restart it alone.
    pub killable: bool,
}

/// `{ … }`: statements in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The statements, in order.
    pub stmts: Vec<Stmt>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A statement line (or a labelled block), with its label and fairness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// `NAME:` before it: the step's name in counterexamples and in `at`/`in` conditions.
    pub label: Option<Name>,
    /// `unfair`: the step may stay enabled forever without being taken.
    pub unfair: bool,
    /// What it does.
    pub kind: StmtKind,
    /// From its first word (`unfair`, the label) to its last token, without the comment.
    pub span: Span,
}

/// What a statement does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `NAME = EXPR`.
    Assign {
        /// The variable assigned.
        target: Name,
        /// The value.
        value: Expr,
    },
    /// `NAME = CALL(…)[.FIELD]`.
    AssignCall {
        /// The variable assigned.
        target: Name,
        /// The call whose value (or field) it gets.
        call: Call,
    },
    /// `CALL(…)` for its effect.
    Call(Call),
    /// `if COND { … } [else { … } | else if …]`.
    If {
        /// The condition.
        cond: Expr,
        /// What runs when it holds.
        then: Block,
        /// What runs when it does not (`else`).
        otherwise: Option<Block>,
    },
    /// `retry N times { … } until COND`: the body at most `N` times, until `COND` holds after it.
    Retry {
        /// `N`: the most tries.
        times: Spanned<u64>,
        /// One try.
        body: Block,
        /// Tested after each try: the loop ends when it holds.
        until: Expr,
    },
    /// `for each message NAME [until COND] { … }`: receive the next message into `NAME` and run
    /// the body, while `COND` (checked before each message) does not hold.
    ForEach {
        /// The message's name in the body.
        message: Name,
        /// Tested before each message: the loop ends when it holds.
        until: Option<Expr>,
        /// What runs for each message.
        body: Block,
    },
    /// `fail [fatal] "TEXT"`: a plain fail ends the run (the next run starts); a fatal one ends
    /// the pipeline.
    Fail {
        /// Whether the fail ends the pipeline rather than the run.
        fatal: bool,
        /// The error's text.
        message: Spanned<String>,
    },
    /// `flush NAME`: an async durable variable's pending value becomes durable.
    Flush(Name),
    /// `LABEL: { … }`: the statements as one atomic step.
    Atomic(Block),
    /// `loop { … }` (in a process only): the body again and again, until the run ends.
    Loop(Block),
    /// `wait COND`: a step that can be taken only when `COND` holds; `wait TIMER` fires an
    /// armed timer (and disarms it).
    Wait(Expr),
    /// `either { … } or { … } …`: the connector takes the first step of one branch, any whose
    /// first step can be taken.
    Either(Vec<Block>),
    /// `arm TIMER`.
    Arm(Name),
    /// `cancel TIMER`.
    Cancel(Name),
    /// A loop with no bound in its syntax (`while …`, `loop`, `retry` without `N times`): kept
    /// in the tree only so that the checks reject it with a diagnostic.
    Unbounded {
        /// `while`, `loop`, `for` or `retry`.
        keyword: Name,
        /// The loop's body.
        body: Block,
    },
}

/// A call: `NAME(ARGS)` or `destination.NAME(ARGS)`, optionally with one field of its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The callee as written: `pg_replication_slot_advance`, `destination.commit`, a procedure.
    pub callee: Name,
    /// The arguments, in order.
    pub args: Vec<Arg>,
    /// `.end_lsn` after the call: the field of its result the statement keeps.
    pub field: Option<Name>,
    /// From the callee to `)` or the field.
    pub span: Span,
    /// `on error { … }` after the call: what runs when it fails (`env call_failures`); without
    /// it, a failed call ends the run.
    pub on_error: Option<Block>,
}

/// A call's argument, positional or `NAME = EXPR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// `NAME` of `NAME = value`, if given.
    pub name: Option<Name>,
    /// The value.
    pub value: Expr,
    /// The name (if any) and the value.
    pub span: Span,
}

/// An expression; pure: it reads variables, never calls PostgreSQL.
pub type Expr = Spanned<ExprKind>;

/// The expression forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// `none`: no LSN, no transaction.
    None,
    /// `true` or `false`.
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
        /// `max` rather than `min`.
        max: bool,
        /// The two operands.
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
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `and`
    And,
    /// `or`
    Or,
    /// `+` (counters)
    Add,
    /// `-` (counters)
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
    /// The property's id.
    pub property: Name,
    /// `violated` rather than `holds`.
    pub violated: bool,
    /// Why, as the file says.
    pub why: Option<Spanned<String>>,
    /// The whole line.
    pub span: Span,
}

/// `skip PROPERTY "why"`: a built-in property this design does not check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// The property's id.
    pub property: Name,
    /// Why it is not checked.
    pub why: Spanned<String>,
    /// The whole line.
    pub span: Span,
}

/// A user property: `always ID: COND [when COND]`, `sometimes ID: COND`, `eventually ID: COND`
/// or `always ID: COND leads to COND`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invariant {
    /// `sometimes` (a witness) rather than `always`.
    pub sometimes: bool,
    /// `eventually ID: COND`: every fair behaviour reaches a state where `COND` holds.
    pub eventually: bool,
    /// `always ID: P leads to Q`: `Q`, which every fair behaviour reaches from each state where
    /// `P` (the property's `cond`) holds.
    pub leads_to: Option<Expr>,
    /// The property's id.
    pub id: Name,
    /// What must hold (`always`) or be reached (`sometimes`).
    pub cond: Expr,
    /// `when COND`: the states `always` checks (all when absent).
    pub when: Option<Expr>,
    /// The whole line.
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

    /// The variable declarations, in file order: a timer's variable and a channel's with them.
    pub fn vars(&self) -> impl Iterator<Item = &VarDecl> {
        self.items.iter().flat_map(|i| match i {
            Item::Var(v) => std::slice::from_ref(v),
            Item::Timer(t) => std::slice::from_ref(&t.var),
            Item::Channel(c) => &c.vars[..],
            _ => &[],
        })
    }

    /// The processes besides `every run`, in file order.
    pub fn processes(&self) -> impl Iterator<Item = &Procedure> {
        self.procedures()
            .filter(|p| matches!(p.kind, ProcKind::Process(_)))
    }

    /// The procedures, in file order.
    pub fn procedures(&self) -> impl Iterator<Item = &Procedure> {
        self.items.iter().filter_map(|i| match i {
            Item::Procedure(p) => Some(p),
            _ => None,
        })
    }

    /// The timers, in file order.
    pub fn timers(&self) -> impl Iterator<Item = &TimerDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::Timer(t) => Some(t),
            _ => None,
        })
    }

    /// The channels, in file order.
    pub fn channels(&self) -> impl Iterator<Item = &ChannelDecl> {
        self.items.iter().filter_map(|i| match i {
            Item::Channel(c) => Some(c),
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
