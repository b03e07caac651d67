//! A checked file compiled for the interpreter: its procedures inlined into one list of
//! instructions, each simple statement (or labelled block) a step, `if`, `retry` and `for each`
//! turned into jumps that are taken with the step that follows them. The program counter of
//! [`crate::machine`] is an index into [`Program::code`].

use std::collections::BTreeMap;

use crate::ast::*;
use crate::outline::first_line;

/// A variable's place in a state's variable array, and what a crash does to it.
#[derive(Clone, Debug)]
pub struct Slot {
    /// Its name: a declared variable, a message, or a retry's try counter (`tries@14`, for
    /// the `retry` on line 14: no variable can take that name).
    pub name: &'static str,
    /// Where it lives.
    pub storage: Storage,
    /// Its type.
    pub ty: Type,
    /// Its value at the start (of each run, for a volatile one).
    pub init: ExprKind,
    /// What it is: a trace's legend says so.
    pub kind: SlotKind,
    /// An `async` variable's flushed copy's name in traces: `NAME.flushed` (no variable can
    /// take it).
    pub flushed: Option<&'static str>,
}

/// What a variable slot holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// A variable the file declares.
    Declared,
    /// The message of a `for each message`.
    Message,
    /// The tries a `retry` has made.
    Tries,
}

/// A process besides `every run`: its name and where it starts.
#[derive(Clone, Debug)]
pub struct Process {
    /// `process NAME`.
    pub name: &'static str,
    /// Its trace column: `NAME.step`.
    pub column: &'static str,
    /// Its first instruction.
    pub start: usize,
    /// `killable process`: a kill restarts it alone.
    pub killable: bool,
}

/// One instruction.
#[derive(Clone, Debug)]
pub enum Op {
    /// `var = value`.
    Assign {
        /// The variable.
        var: usize,
        /// The value.
        value: Expr,
    },
    /// `var = call(…)[.field]`.
    AssignCall {
        /// The variable.
        var: usize,
        /// The call.
        call: Call,
    },
    /// `call(…)` for its effect.
    Call(Call),
    /// `fail [fatal] "message"`.
    Fail {
        /// Whether it ends the pipeline.
        fatal: bool,
        /// The error's text.
        message: &'static str,
    },
    /// `flush var`.
    Flush(usize),
    /// The head of `for each message var`: receive the next message.
    Receive {
        /// The message's variable.
        var: usize,
        /// Where the loop ends: where a closed stream goes.
        end: usize,
    },
    /// Control: when `cond` does not hold, go to `otherwise`.
    Branch {
        /// The condition.
        cond: Expr,
        /// Where to go when it does not hold.
        otherwise: usize,
    },
    /// Control: go to the instruction.
    Jump(usize),
    /// Control: a `retry` starts: its try counter to 0.
    RetryStart {
        /// The try counter's variable.
        counter: usize,
    },
    /// Control: after a try: out when `until` holds or the tries are used up, else back to
    /// `body`.
    RetryUntil {
        /// The try counter's variable.
        counter: usize,
        /// The most tries.
        times: u64,
        /// The loop's exit condition.
        until: Expr,
        /// The try's first instruction.
        body: usize,
    },
    /// A run's end, `every run`'s or a retryable failure's: the connector stops here, and its
    /// step, `next run`, starts the next run.
    RunEnd,
    /// Control: `first run` ended: a crash from now on restarts at `after crash`.
    FirstRunDone,
    /// `wait COND`: the step can be taken only when `COND` holds; for `wait TIMER`, the
    /// timer's variable, which firing disarms.
    Wait {
        /// What it waits for.
        cond: Expr,
        /// The timer it fires, if it waits for one.
        timer: Option<usize>,
    },
    /// `either { … } or { … }`: one branch, the connector's choice, its first step taken with
    /// the choice.
    Either(Vec<usize>),
    /// `CHANNEL.send(value)`: waits while the channel is full.
    Send {
        /// The channel's variable (how many it holds); its places follow it.
        channel: usize,
        /// What is sent.
        value: Expr,
    },
    /// `[var =] CHANNEL.receive()`: the oldest value; waits while the channel is empty.
    Take {
        /// The channel's variable.
        channel: usize,
        /// Where the value goes.
        var: Option<usize>,
    },
    /// The end of a process's body: the process has ended.
    ProcessEnd,
    /// The start of a labelled block that opens with an `if`: a step that does nothing by
    /// itself, so that the block is one step whatever its `if`s choose (docs/language.md: "A
    /// labelled block `NAME: { … }` is one step too, however many statements it holds"), and
    /// its conditions are read when the block runs. Without it a block whose `if`s all skip
    /// compiled to no step at all.
    BlockStart,
}

impl Op {
    /// Whether the instruction is control, taken with the step that follows it.
    pub fn is_control(&self) -> bool {
        matches!(
            self,
            Op::Branch { .. }
                | Op::Jump(_)
                | Op::RetryStart { .. }
                | Op::RetryUntil { .. }
                | Op::FirstRunDone
        )
    }
}

/// An instruction and what the interpreter and the properties need to know of where it is.
#[derive(Clone, Debug)]
pub struct Instr {
    /// What it does.
    pub op: Op,
    /// The step's name in traces: its label, or `LINE: TEXT` (a statement of a labelled block
    /// carries the block's); a procedure's step inlined at several calls names the lines of its
    /// calls too (`12: x = pg_current_wal_lsn() (via line 20)`), so that a trace tells every
    /// position of the connector apart.
    pub step: &'static str,
    /// The step's name as the file writes it, the same in every inlined copy: what `at NAME`
    /// compares.
    pub base: &'static str,
    /// The instructions `start..end` of the labelled block this one is part of: one step.
    pub atomic: Option<(usize, usize)>,
    /// The procedures and labelled blocks it is inside, for `in NAME`.
    pub scopes: Vec<&'static str>,
    /// Its own label, for `at NAME`.
    pub label: Option<&'static str>,
    /// Weakly fair (not `unfair`, nor inside something that is).
    pub fair: bool,
    /// Whether the step it starts can neither wait (no receive) nor branch on a PostgreSQL
    /// choice (no advance, no status update): one action, taken without trying it first.
    pub plain: bool,
    /// A call's `on error` handler: where a failed call goes.
    pub on_error: Option<usize>,
    /// Whether the step it starts holds a call that may fail (`env call_failures`): then it is
    /// plain only while no call can fail.
    pub fallible: bool,
}

/// A file compiled: variables, instructions and the entry points.
#[derive(Clone, Debug)]
pub struct Program {
    /// The variables, declared ones first.
    pub slots: Vec<Slot>,
    /// The instructions.
    pub code: Vec<Instr>,
    /// Where the very first run starts (`first run`, or `every run`).
    pub first_run: usize,
    /// Whether the file has a `first run`.
    pub has_first_run: bool,
    /// Where a run after a crash starts (`after crash`, or `every run`).
    pub after_crash: usize,
    /// Where each later run starts: `every run`.
    pub every_run: usize,
    /// The processes besides `every run`, in file order: each starts with every run.
    pub processes: Vec<Process>,
    /// Whether a property reads `destination.duplicated`: only then does a state keep which
    /// transactions the destination committed twice.
    pub duplicates: bool,
    /// Whether the file handles a failed call or sets `env call_failures`: its traces then show
    /// the failures so far.
    pub call_faults: bool,
    /// Whether the file sets `env pg_stops`: its traces then show the clean stops so far.
    pub pg_stops: bool,
    /// Whether the file sets `env stream_drops`: its traces then show the drops so far.
    pub stream_drops: bool,
    /// Whether the file calls `backfill()` anywhere: without it nothing delivers a transaction
    /// committed before the slot was created.
    pub backfills: bool,
    /// The run's end: the instruction the connector stops at between two runs, its step
    /// [`RUN_END_STEP`]; the last instruction.
    pub run_end: usize,
    /// Every name `in` may test: the procedures and labelled blocks.
    pub scopes: Vec<&'static str>,
    /// Each variable's slot by name (the program's, not a state's).
    pub index: rustc_hash::FxHashMap<&'static str, usize>,
    /// Whether a state keeps the WAL removal horizon (`wal.removed_before`): the file names
    /// `no-needed-wal-removed` in an `expect` line, or a property reads it.
    pub horizon: bool,
    /// Whether the file sets `env os_crashes` or a `pg_version` release (`15.12`): its traces
    /// then show the operating-system crashes so far and the checkpoint under way.
    pub wal_faults: bool,
    /// Whether the file sets `env failovers` or `env failover_slots`: its traces then show the
    /// standby, its copy of the slot and the failovers so far.
    pub failover: bool,
}

/// Whether a state keeps the WAL removal horizon: the file names `no-needed-wal-removed` in an
/// `expect` line, or a property reads `wal.removed_before`.
fn keeps_horizon(file: &File, source: &str) -> bool {
    file.items
        .iter()
        .any(|i| matches!(i, Item::Expect(e) if e.property.node == "no-needed-wal-removed"))
        || file
            .invariants()
            .any(|inv| inv.span.text(source).contains("wal.removed_before"))
}

/// Whether the file sets `env os_crashes` or a `pg_version` release (`15.12`).
fn wal_faults(file: &File) -> bool {
    file.knobs().any(|k| {
        k.name.node == "os_crashes"
            || (k.name.node == "pg_version" && k.value.node.to_string().contains('.'))
    })
}

/// Whether the file sets one of the knobs `names` in an `env` line.
fn sets(file: &File, names: &[&str]) -> bool {
    file.knobs().any(|k| names.contains(&k.name.node.as_str()))
}

/// The step a connector takes at a run's end, which starts the next run: not a statement of
/// the file, so walcheck's own witnesses (each step reached) leave it out.
pub const RUN_END_STEP: &str = "next run";

/// Whether some instruction of `code` calls `callee`.
fn calls(code: &[Instr], callee: &str) -> bool {
    code.iter().any(|i| {
        matches!(&i.op, Op::Call(call) | Op::AssignCall { call, .. } if call.callee.node == callee)
    })
}

/// Text kept for the rest of the process: a compiled file's names live as long as the system
/// made from it, which the registry keeps for the whole process.
pub fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

impl Program {
    /// Compiles a file the static checks accepted.
    pub fn compile(file: &File, source: &str) -> Program {
        let mut c = Compiler::new(file, source);
        for v in file.vars() {
            c.slot(
                &v.name.node,
                v.storage,
                v.ty.node,
                v.init.node.clone(),
                SlotKind::Declared,
            );
        }
        let find = |kind: fn(&ProcKind) -> bool| file.procedures().find(|p| kind(&p.kind));
        let every = find(|k| matches!(k, ProcKind::EveryRun));
        let first = c.entry(find(|k| matches!(k, ProcKind::FirstRun)), true);
        let after = c.entry(find(|k| matches!(k, ProcKind::AfterCrash)), false);
        let (processes, members) = c.processes(file);
        let every_run = c.code.len();
        if let Some(p) = every {
            c.block(&p.body, true);
        }
        let run_end = c.push(Op::RunEnd, RUN_END_STEP, true);
        for instr in &mut c.code {
            if let Op::Jump(usize::MAX) = instr.op {
                instr.op = Op::Jump(every_run);
            }
        }
        c.mark_plain();
        c.name_copies();
        // A family's members share their body's step names: each names its member.
        for (start, end, member) in members {
            for instr in &mut c.code[start..end] {
                instr.step = leak(&format!("{} in {member}", instr.step));
            }
        }
        let index = c
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name, i))
            .collect();
        let call_faults = c.code.iter().any(|i| i.on_error.is_some())
            || file.knobs().any(|k| k.name.node == "call_failures");
        Program {
            slots: c.slots,
            backfills: calls(&c.code, "backfill"),
            code: c.code,
            first_run: first.unwrap_or(every_run),
            has_first_run: first.is_some(),
            after_crash: after.unwrap_or(every_run),
            every_run,
            processes,
            call_faults,
            pg_stops: sets(file, &["pg_stops"]),
            stream_drops: sets(file, &["stream_drops"]),
            duplicates: file
                .invariants()
                .any(|inv| inv.span.text(source).contains("destination.duplicated")),
            run_end,
            scopes: c.all_scopes,
            index,
            horizon: keeps_horizon(file, source),
            wal_faults: wal_faults(file),
            failover: sets(file, &["failovers", "failover_slots"]),
        }
    }

    /// The variable named `name`: looked up in a table, as every expression the interpreter
    /// evaluates reads its variables by name.
    pub fn var(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}

impl<'f> Compiler<'f> {
    fn new(file: &'f File, source: &'f str) -> Compiler<'f> {
        Compiler {
            source,
            lines: Lines::of(source),
            procedures: file
                .procedures()
                .filter_map(|p| match &p.kind {
                    ProcKind::Named(n) => Some((n.node.clone(), p)),
                    _ => None,
                })
                .collect(),
            slots: Vec::new(),
            vars: BTreeMap::new(),
            code: Vec::new(),
            scopes: Vec::new(),
            all_scopes: Vec::new(),
            atomic: None,
            calls: Vec::new(),
            copies: Vec::new(),
            timers: file.timers().map(|t| t.name.node.clone()).collect(),
        }
    }

    /// `first run` (`first`: it ends by marking the first run done) or `after crash`: its
    /// body, then a jump to `every run`; where it starts.
    fn entry(&mut self, body: Option<&Procedure>, first: bool) -> Option<usize> {
        let body = body?;
        let start = self.code.len();
        self.block(&body.body, true);
        let step = self.code.last().map_or("run", |i| i.step);
        if first {
            self.push(Op::FirstRunDone, step, true);
        }
        self.push(Op::Jump(usize::MAX), step, true);
        Some(start)
    }
}

struct Compiler<'f> {
    source: &'f str,
    /// Where `source`'s lines start.
    lines: Lines,
    procedures: BTreeMap<String, &'f Procedure>,
    slots: Vec<Slot>,
    vars: BTreeMap<String, usize>,
    code: Vec<Instr>,
    scopes: Vec<&'static str>,
    all_scopes: Vec<&'static str>,
    /// The labelled block being compiled: its first instruction and its step name.
    atomic: Option<(usize, &'static str)>,
    /// The lines of the procedure calls being inlined, outermost first.
    calls: Vec<usize>,
    /// For each instruction, the lines of the calls it was inlined through.
    copies: Vec<Vec<usize>>,
    /// The timers' names.
    timers: std::collections::BTreeSet<String>,
}

impl Compiler<'_> {
    fn slot(
        &mut self,
        name: &str,
        storage: Storage,
        ty: Type,
        init: ExprKind,
        kind: SlotKind,
    ) -> usize {
        if let Some(&i) = self.vars.get(name) {
            return i;
        }
        let i = self.slots.len();
        self.slots.push(Slot {
            name: leak(name),
            storage,
            ty,
            init,
            kind,
            flushed: (storage == Storage::DurableAsync).then(|| leak(&format!("{name}.flushed"))),
        });
        self.vars.insert(name.to_owned(), i);
        i
    }

    fn push(&mut self, op: Op, step: &'static str, fair: bool) -> usize {
        let at = self.code.len();
        self.copies.push(self.calls.clone());
        self.code.push(Instr {
            op,
            step,
            base: step,
            atomic: None,
            scopes: self.scopes.clone(),
            label: None,
            fair,
            plain: false,
            on_error: None,
            fallible: false,
        });
        at
    }

    /// A call's `on error { … }`: the success path jumps past the handler, which a failed call
    /// (the instruction `at`) goes to.
    fn handler(&mut self, at: usize, call: &Call, step: &'static str, fair: bool) {
        let Some(handler) = &call.on_error else {
            return;
        };
        let skip = self.push(Op::Jump(0), step, fair);
        let start = self.code.len();
        self.block(handler, fair);
        let end = self.code.len();
        self.code[skip].op = Op::Jump(end);
        self.code[at].on_error = Some(start);
    }

    /// The file's processes besides `every run`, each body then its end, in file order; and
    /// the instructions of each family member (`consumer[1]`), whose step names name it.
    fn processes(&mut self, file: &File) -> (Vec<Process>, Vec<(usize, usize, &'static str)>) {
        let mut processes = Vec::new();
        let mut members = Vec::new();
        for p in file.processes() {
            let ProcKind::Process(name) = &p.kind else {
                continue;
            };
            let start = self.code.len();
            // A family member `consumer[1]` is in `consumer` too.
            let family = name.node.split('[').next().unwrap_or(&name.node);
            let scopes = if family == name.node { 1 } else { 2 };
            self.scope(family);
            if scopes == 2 {
                self.scope(&name.node);
            }
            self.block(&p.body, true);
            for _ in 0..scopes {
                self.scopes.pop();
            }
            let step = self.code.last().map_or("run", |i| i.step);
            self.push(Op::ProcessEnd, step, true);
            if scopes == 2 {
                members.push((start, self.code.len(), leak(&name.node)));
            }
            processes.push(Process {
                name: leak(&name.node),
                column: leak(&format!("{}.step", name.node)),
                start,
                killable: p.killable,
            });
        }
        (processes, members)
    }

    /// Marks the instructions whose step is plain: nothing in it waits or takes a PostgreSQL
    /// choice.
    fn mark_plain(&mut self) {
        let chooses = |op: &Op| match op {
            Op::Receive { .. }
            | Op::Wait { .. }
            | Op::Either(_)
            | Op::Send { .. }
            | Op::Take { .. } => true,
            Op::Call(call) | Op::AssignCall { call, .. } => matches!(
                call.callee.node.as_str(),
                "pg_replication_slot_advance" | "standby_status_update"
            ),
            _ => false,
        };
        let plain: Vec<bool> = (0..self.code.len())
            .map(|i| {
                let (start, end) = self.code[i].atomic.unwrap_or((i, i + 1));
                !self.code[start..end].iter().any(|k| chooses(&k.op))
            })
            .collect();
        let fallible: Vec<bool> = (0..self.code.len())
            .map(|i| {
                let (start, end) = self.code[i].atomic.unwrap_or((i, i + 1));
                self.code[start..end].iter().any(|k| fallible(&k.op))
            })
            .collect();
        for ((instr, plain), fallible) in self.code.iter_mut().zip(plain).zip(fallible) {
            instr.plain = plain;
            instr.fallible = fallible;
        }
    }

    /// Tells apart the inlined copies of a step: a step name that instructions inlined through
    /// different calls share takes the lines of those calls (`… (via line 20)`, `… (via lines
    /// 20, 5)` through a procedure that calls another).
    fn name_copies(&mut self) {
        let mut chains: BTreeMap<&'static str, Vec<&Vec<usize>>> = BTreeMap::new();
        for (instr, chain) in self.code.iter().zip(&self.copies) {
            let seen = chains.entry(instr.base).or_default();
            if !seen.contains(&chain) {
                seen.push(chain);
            }
        }
        for (instr, chain) in self.code.iter_mut().zip(&self.copies) {
            if chains[instr.base].len() < 2 || chain.is_empty() {
                continue;
            }
            let lines: Vec<String> = chain.iter().map(ToString::to_string).collect();
            let s = if chain.len() > 1 { "s" } else { "" };
            instr.step = leak(&format!(
                "{} (via line{s} {})",
                instr.base,
                lines.join(", ")
            ));
        }
    }

    fn step_name(&self, stmt: &Stmt) -> &'static str {
        if let Some((_, name)) = self.atomic {
            return name;
        }
        match &stmt.label {
            Some(label) => leak(&label.node),
            None => {
                let text = first_line(stmt.span.text(self.source));
                let text = text.strip_suffix('{').unwrap_or(text).trim_end();
                leak(&format!("{}: {text}", self.lines.line(stmt.span)))
            }
        }
    }

    fn block(&mut self, block: &Block, fair: bool) {
        for stmt in &block.stmts {
            self.stmt(stmt, fair && !stmt.unfair);
        }
    }

    fn var(&self, name: &Name) -> usize {
        self.vars[&name.node]
    }

    /// A labelled block: one step, its instructions marked with the region they span.
    fn atomic(&mut self, stmt: &Stmt, block: &Block, first: usize, step: &'static str, fair: bool) {
        let outer = self.atomic;
        if outer.is_none() {
            self.atomic = Some((first, step));
        }
        if let Some(label) = &stmt.label {
            self.scope(&label.node);
        }
        if matches!(
            block.stmts.first(),
            Some(Stmt {
                kind: StmtKind::If { .. },
                ..
            })
        ) {
            self.push(Op::BlockStart, step, fair);
        }
        self.block(block, fair);
        if stmt.label.is_some() {
            self.scopes.pop();
        }
        if outer.is_none() {
            self.atomic = None;
            let end = self.code.len();
            for instr in &mut self.code[first..end] {
                instr.atomic = Some((first, end));
            }
        }
    }

    fn scope(&mut self, name: &str) {
        let name = leak(name);
        if !self.all_scopes.contains(&name) {
            self.all_scopes.push(name);
        }
        self.scopes.push(name);
    }

    /// A call: a procedure of the file inlined, or a call of the vocabulary.
    fn call(&mut self, stmt: &Stmt, call: &Call, step: &'static str, fair: bool) {
        match self.procedures.get(&call.callee.node).copied() {
            Some(procedure) => {
                self.scope(&call.callee.node);
                self.calls.push(self.lines.line(stmt.span));
                self.block(&procedure.body, fair);
                self.calls.pop();
                self.scopes.pop();
            }
            None => match self.channel_op(call, None) {
                Some(op) => {
                    self.push(op, step, fair);
                }
                None => {
                    let at = self.push(Op::Call(call.clone()), step, fair);
                    self.handler(at, call, step, fair);
                }
            },
        }
    }

    /// `CHANNEL.send(v)` or `[var =] CHANNEL.receive()`, when the callee is a channel's.
    fn channel_op(&self, call: &Call, var: Option<usize>) -> Option<Op> {
        let (name, op) = call.callee.node.split_once('.')?;
        let channel = *self.vars.get(name)?;
        if self.slots[channel].kind != SlotKind::Declared {
            return None;
        }
        match op {
            "send" => Some(Op::Send {
                channel,
                value: call.args.first()?.value.clone(),
            }),
            "receive" => Some(Op::Take { channel, var }),
            _ => None,
        }
    }

    /// `either { … } or { … }`: the choice, each branch, each but the last jumping past the
    /// rest.
    fn either(&mut self, branches: &[Block], step: &'static str, fair: bool) {
        let choice = self.push(Op::Either(Vec::new()), step, fair);
        let mut starts = Vec::new();
        let mut jumps = Vec::new();
        for b in branches {
            starts.push(self.code.len());
            self.block(b, fair);
            jumps.push(self.push(Op::Jump(0), step, fair));
        }
        let end = self.code.len();
        for j in jumps {
            self.code[j].op = Op::Jump(end);
        }
        self.code[choice].op = Op::Either(starts);
    }

    /// `retry TIMES times { BODY } until UNTIL`: its try counter, one a `retry` line (the
    /// copies of an inlined one never run at once), to 0, the body, then the test.
    fn retry(
        &mut self,
        stmt: &Stmt,
        (times, body, until): (u64, &Block, &Expr),
        step: &'static str,
        fair: bool,
    ) {
        let name = format!("tries@{}", self.lines.line(stmt.span));
        let ty = Type::Counter(0, times);
        let init = ExprKind::Number(0);
        let counter = self.slot(&name, Storage::Volatile, ty, init, SlotKind::Tries);
        self.push(Op::RetryStart { counter }, step, fair);
        let body_at = self.code.len();
        self.block(body, fair);
        let until = until.clone();
        let body = body_at;
        self.push(
            Op::RetryUntil {
                counter,
                times,
                until,
                body,
            },
            step,
            fair,
        );
    }

    /// `loop`, `wait`, `either`, `arm` and `cancel`.
    fn concurrent(&mut self, stmt: &Stmt, step: &'static str, fair: bool) {
        match &stmt.kind {
            StmtKind::Loop(body) => {
                let head = self.code.len();
                self.block(body, fair);
                self.push(Op::Jump(head), step, fair);
            }
            StmtKind::Wait(cond) => {
                let timer = match &cond.node {
                    ExprKind::Var(name) if self.timers.contains(name) => Some(self.vars[name]),
                    _ => None,
                };
                let cond = cond.clone();
                self.push(Op::Wait { cond, timer }, step, fair);
            }
            StmtKind::Either(branches) => self.either(branches, step, fair),
            StmtKind::Arm(timer) | StmtKind::Cancel(timer) => {
                let var = self.var(timer);
                let armed = matches!(stmt.kind, StmtKind::Arm(_));
                let value = Spanned {
                    node: ExprKind::Bool(armed),
                    span: timer.span,
                };
                self.push(Op::Assign { var, value }, step, fair);
            }
            _ => {}
        }
    }

    /// `var = CALL(…)`: a channel's receive, or a call of the vocabulary with its `on error`.
    fn assign_call(&mut self, target: &Name, call: &Call, step: &'static str, fair: bool) {
        let var = self.var(target);
        let op = self.channel_op(call, Some(var)).unwrap_or(Op::AssignCall {
            var,
            call: call.clone(),
        });
        let at = self.push(op, step, fair);
        self.handler(at, call, step, fair);
    }

    fn stmt(&mut self, stmt: &Stmt, fair: bool) {
        let step = self.step_name(stmt);
        let first = self.code.len();
        match &stmt.kind {
            StmtKind::Assign { target, value } => {
                let var = self.var(target);
                self.push(
                    Op::Assign {
                        var,
                        value: value.clone(),
                    },
                    step,
                    fair,
                );
            }
            StmtKind::AssignCall { target, call } => self.assign_call(target, call, step, fair),
            StmtKind::Call(call) => self.call(stmt, call, step, fair),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let branch = self.push(
                    Op::Branch {
                        cond: cond.clone(),
                        otherwise: 0,
                    },
                    step,
                    fair,
                );
                self.block(then, fair);
                let jump = otherwise
                    .as_ref()
                    .map(|_| self.push(Op::Jump(0), step, fair));
                let else_at = self.code.len();
                if let Op::Branch { otherwise, .. } = &mut self.code[branch].op {
                    *otherwise = else_at;
                }
                if let (Some(block), Some(jump)) = (otherwise, jump) {
                    self.block(block, fair);
                    let end = self.code.len();
                    self.code[jump].op = Op::Jump(end);
                }
            }
            // `retry 0 times` never runs its body (warning W01): nothing to compile.
            StmtKind::Retry { times, .. } if times.node == 0 => {}
            StmtKind::Retry { times, body, until } => {
                self.retry(stmt, (times.node, body, until), step, fair);
            }
            StmtKind::ForEach {
                message,
                until,
                body,
            } => {
                let var = self.slot(
                    &message.node,
                    Storage::Volatile,
                    Type::Message,
                    ExprKind::None,
                    SlotKind::Message,
                );
                let head = self.code.len();
                let branch = until.as_ref().map(|cond| {
                    self.push(
                        Op::Branch {
                            cond: not(cond),
                            otherwise: 0,
                        },
                        step,
                        fair,
                    )
                });
                let receive = self.push(Op::Receive { var, end: 0 }, step, fair);
                self.block(body, fair);
                self.push(Op::Jump(head), step, fair);
                let end = self.code.len();
                if let Op::Receive { end: at, .. } = &mut self.code[receive].op {
                    *at = end;
                }
                if let Some(branch) = branch {
                    if let Op::Branch { otherwise, .. } = &mut self.code[branch].op {
                        *otherwise = end;
                    }
                }
            }
            StmtKind::Fail { fatal, message } => {
                self.push(
                    Op::Fail {
                        fatal: *fatal,
                        message: leak(&message.node),
                    },
                    step,
                    fair,
                );
            }
            StmtKind::Flush(name) => {
                let var = self.var(name);
                self.push(Op::Flush(var), step, fair);
            }
            StmtKind::Atomic(block) => self.atomic(stmt, block, first, step, fair),
            StmtKind::Unbounded { .. } => {}
            StmtKind::Loop(_)
            | StmtKind::Wait(_)
            | StmtKind::Either(_)
            | StmtKind::Arm(_)
            | StmtKind::Cancel(_) => self.concurrent(stmt, step, fair),
        }
        if let (Some(label), Some(instr)) = (&stmt.label, self.code.get_mut(first)) {
            instr.label.get_or_insert(leak(&label.node));
        }
    }
}

/// Whether the instruction calls the vocabulary where a call can fail: a SQL call, the
/// replication protocol's, `backfill` or `destination.commit` (not `destination.write`, which
/// fills the batch in memory).
pub fn fallible(op: &Op) -> bool {
    match op {
        Op::Call(call) | Op::AssignCall { call, .. } => call.callee.node != "destination.write",
        _ => false,
    }
}

/// `not cond`, spanned as `cond`.
fn not(cond: &Expr) -> Expr {
    Spanned {
        node: ExprKind::Not(Box::new(cond.clone())),
        span: cond.span,
    }
}
