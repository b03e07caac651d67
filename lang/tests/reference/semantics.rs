//! The reference interpreter: a connector file's meaning, read off docs/language.md one
//! sentence at a time. Clarity over speed: each process's position is a stack of frames that
//! point into the syntax tree (an `either` pushes the chosen branch over a marker of its end,
//! a `loop` a frame that starts its body again), values are plain enums, collections are ordered, and every step
//! is computed as the list of all its outcomes. Each rule quotes the sentence it implements;
//! where the page is silent, the comment says so and what was decided.

use std::collections::{BTreeMap, BTreeSet};

use walcheck_lang::ast::{
    BinOp, Block, Call, Expr, ExprKind, File, Item, KnobValue, ProcKind, Stmt, StmtKind, Storage,
    Type,
};
use walcheck_model::olake::sync::restart_candidates;
use walcheck_model::pg::decoding::{get_changes, txn_needs_skip, DurableSlot, SqlDecode};
use walcheck_model::pg::lifecycle::removal_horizon;
use walcheck_model::pg::slot::{SavedSlot, Slot};
use walcheck_model::pg::stream::{
    identify_system_xlogpos, process_standby_reply_on, Keepalive, StandbyStatusUpdate, Walsender,
};
use walcheck_model::pg::{
    running_xacts_restart, CommitMode, OpenTxn, PgVersion, Role, Server, Txn, Wal,
};
use walcheck_model::Lsn;
use walcheck_properties::cdc;

/// "A quiet primary … at `0/1000000`, the connector's slot at rest there."
const START: Lsn = Lsn(0x100_0000);
/// PostgreSQL's WAL page: `txn_pages` and `wal_buffers_pages` count them.
const PAGE: u64 = 8192;
/// The model's bound on the client transactions a file commits ("`TXNS_MAX`"): a new one is
/// begun only while those committed, with the open one, stay below it.
const TXNS_MAX: usize = 16;
/// A commit record's bytes: "the WAL appends `P * PAGE_BYTES - 48` bytes" for the changes of a
/// transaction left open, 48 for its commit record.
const COMMIT_BYTES: u64 = 48;

/// A value of the language ("Types").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum V {
    /// An LSN; `none` is 0/0 ("`InvalidXLogRecPtr`, 0/0, below every other LSN").
    Lsn(Lsn),
    Bool(bool),
    /// A transaction by its place in commit order, or `none`.
    Txn(Option<usize>),
    /// "a run of transactions, as `pg_logical_slot_get_changes` returns".
    Txns(BTreeSet<usize>),
    /// A counter; a sum outside 0..2^64 is kept exactly here, and is out of range.
    Count(i128),
    /// A received message.
    Msg(Msg),
    /// `none` before it meets a type.
    None,
}

/// A message `for each message` received ("Fields").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Msg {
    /// "`.txn` (`none` for a keepalive)": a Begin, a change and a Commit name theirs.
    pub txn: Option<usize>,
    pub part: Part,
    /// "`.lsn`, the LSN the walsender sent it under (the XLogData's `dataStart`: the same as
    /// `.wal_end`)"; a keepalive's `ServerWALEnd`.
    pub lsn: Lsn,
    pub reply_requested: bool,
}

/// Which message it is: "a whole transaction, or a keepalive", or with `env messages =
/// changes` "pgoutput's messages one by one — Begin, one change per row, Commit".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    Keepalive,
    Whole,
    Begin,
    /// Row `k` of the transaction, from 0 (`m.index` is `k + 1`).
    Change(u32),
    Commit,
}

/// A row of the destination: a transaction and its row, from 0.
pub type Row = (usize, u32);

impl V {
    fn lsn(&self) -> Lsn {
        match self {
            V::Lsn(l) => *l,
            _ => Lsn::INVALID,
        }
    }
    fn truth(&self) -> bool {
        matches!(self, V::Bool(true))
    }
    fn is_none(&self) -> bool {
        match self {
            V::None | V::Txn(None) => true,
            V::Lsn(l) => !l.is_valid(),
            V::Txns(s) => s.is_empty(),
            _ => false,
        }
    }
}

/// Where a block is in the tree: its procedure, then (statement, which block of it) down.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    root: Root,
    path: Vec<(usize, u8)>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Root {
    FirstRun,
    EveryRun,
    AfterCrash,
    Named(String),
    /// `process NAME { … }`.
    Process(String),
}

/// One frame of the connector's position.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Frame {
    /// Running the block `at` from its statement `next`.
    Seq { at: At, next: usize },
    /// The `retry` statement `stmt` of block `at`, its body having run `tries` times before
    /// this one: "tested after each try".
    Retry { at: At, stmt: usize, tries: u64 },
    /// `first run` has ended here ("a crash before … restarts it").
    FirstRunDone,
    /// The `loop` statement `stmt` of block `at`: "repeats its body until the run ends".
    Loop { at: At, stmt: usize },
    /// The end of an `either` branch: while choosing, control that reaches it found no step in
    /// the branch ("the `either` line when the branch has none"); once chosen, it is passed.
    BranchEnd,
}

/// Where the connector is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Where {
    /// Each process's position, process 0 (`every run`'s) first: its next step is the statement
    /// its top frame points at; an empty stack is a process whose body has ended.
    Run(Vec<Vec<Frame>>),
    /// "The state the step that ended it leads to is the run's end, a state of its own."
    RunEnd,
    /// "Otherwise the pipeline is `done` in the run's end."
    Done,
    /// "`fail fatal` ends the pipeline": stopped at this statement (block, index), inside
    /// the labelled block `inside` if any.
    Fatal(At, usize, Option<String>),
}

/// PostgreSQL and the workload, as walcheck's model of PostgreSQL holds them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pg {
    pub wal: Wal,
    pub slot: Option<DurableSlot>,
    pub commit_pending: bool,
    pub txns: Vec<Txn>,
    /// `env interleave = on`: "a published client transaction may insert its rows and stay
    /// open while other transactions commit, committing after them … One open at a time."
    pub open: Option<OpenTxn>,
    pub published: u8,
    pub other: u8,
    pub walsender: Option<Walsender>,
    /// "Between a transaction's Begin and its Commit the walsender sends nothing else": the
    /// transaction it is part way through and the last message of it sent.
    pub sending: Option<(usize, Part)>,
    /// "A PostgreSQL crash closes the replication connection: `for each message` then ends as
    /// at the end of the stream (the client reads EOF)."
    pub stream_closed: bool,
    pub keepalives: u8,
    /// A `start_replication` skipped an undelivered committed publication transaction.
    pub lost: bool,
    /// "With one open, PostgreSQL is *stopping* … until the stream ends".
    pub stopping: bool,
    /// "the connector's last status update … (its `flush`, or its `write` when `flush` is
    /// `none`)" on the stream open now: `start_replication` forgets the last stream's.
    pub replied: Lsn,
    /// "it sends no other message until the connector has replied to it": a request the
    /// connector read and has not answered.
    pub asked: bool,
    /// The physical standby's WAL, "what the standby has received = flushed = replayed" (`0/0`
    /// when no standby is modelled).
    pub standby: Lsn,
    /// "the standby's saved copy of the slot … or none (only with failover_slots on)".
    pub synced: Option<Synced>,
    /// The transactions a failover lost: "gone from `committed`, they keep their names
    /// (`transactions` marks them `lost`) … what the destination and the connector hold of them
    /// stays, and no property counts them".
    pub gone: BTreeSet<usize>,
}

impl Pg {
    /// The replication connection ends, whether one was open: "A stream that ends part way (a
    /// crash, a failed call, a stop, the run's end) leaves the rest unsent".
    fn close_stream(&mut self) -> bool {
        self.sending = None;
        self.walsender.take().is_some()
    }
}

/// The standby's copy of the connector's failover slot, as the slot sync worker saved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Synced {
    pub confirmed_flush: Lsn,
    pub restart_lsn: Lsn,
}

/// A weakly fair class of actions ("Fairness of processes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A process's fair steps: 0 is `connector` (with the background flush), then each
    /// `process NAME`.
    Process(usize),
    Walwriter,
    Checkpointer,
    /// "`PgStopped` (fair)", "`WalSenderTimeout` (fair …)".
    Shutdown,
    /// A synchronous commit's `CommitFlush`, and "CommitOpen is weakly fair: it joins the same
    /// fairness class as `CommitFlush` (class \"commit\")".
    Commit,
    /// "`StandbyReceive` (weakly fair)".
    StandbyReceive,
    /// "`SlotSync` (weakly fair)".
    SlotSync,
    /// A standby's replay ("the replay").
    Replay,
}

/// One state of the file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    pub pg: Pg,
    /// "The destination holds rows": those committed, and those of its open batch.
    pub dest: BTreeSet<Row>,
    pub batch: BTreeSet<Row>,
    pub vars: BTreeMap<String, V>,
    /// Each `async` variable's flushed copy.
    pub flushed: BTreeMap<String, V>,
    /// Each channel's values, the oldest first.
    pub chans: BTreeMap<String, Vec<V>>,
    pub at: Where,
    pub runs: u8,
    pub connector_crashes: u8,
    pub pg_crashes: u8,
    /// "`PgStop`, … counted in the `pg_stops` column".
    pub pg_stops: u8,
    pub first_done: bool,
    /// "`kills` … kills of `killable` processes at most".
    pub kills: u8,
    /// "`call_failures` … calls that fail at most".
    pub call_failures: u8,
    /// "`destination.duplicated` (those it committed more than once)".
    pub dup: BTreeSet<usize>,
    /// "It counts in `os_crashes`".
    pub os_crashes: u8,
    /// "`Failover` (a fault, NOT fair, counted in `failovers`, not in `crashes`)".
    pub failovers: u8,
    /// "`StreamDrop`, not fair, counted in the `stream_drops` column, not in `crashes`".
    pub stream_drops: u8,
    /// "`wal.removed_before` rises to that, never falls (`none` until a checkpoint removed WAL)".
    pub removed_before: Lsn,
    /// A two-step checkpoint under way: its redo pointer and "the slot's `restart_lsn` when it
    /// started" (both `none` without the horizon).
    pub checkpoint: Option<(Lsn, Lsn)>,
}

/// The knobs ("Environment"), defaults from its table.
#[derive(Clone, Debug)]
pub struct Knobs {
    pub transactions: u8,
    pub commits: Vec<CommitMode>,
    pub txn_pages: u64,
    pub wal_buffers_pages: u64,
    pub other_traffic: u8,
    pub runs: u8,
    pub connector_crashes: u8,
    pub pg_crashes: u8,
    pub pg_stops: u8,
    pub crashes: u8,
    pub checkpoints: bool,
    pub keepalives: u8,
    pub kills: u8,
    pub call_failures: u8,
    /// "`unbounded` …: a connector that never stops, whose state does not count its runs".
    pub unbounded: bool,
    /// "`os_crashes` | 0 | 0–3".
    pub os_crashes: u8,
    /// "`pg_version` | 15 | …, or a release `MAJOR.MINOR`": a major is its newest minor.
    pub release: PgVersion,
    /// "A file keeps the horizon … only when it names `no-needed-wal-removed` in an `expect`
    /// line or a property reads `wal.removed_before`".
    pub horizon: bool,
    /// "… sets `os_crashes` or sets a `pg_version` release": traces show those columns.
    pub wal_faults: bool,
    /// "`max_slot_wal_keep_pages` … 0 …: PostgreSQL's -1, no limit".
    pub keep_pages: Option<u64>,
    /// "`failovers` (0–2, default 0): failovers at most".
    pub failovers: u8,
    /// "`failover_slots` (`off` | `on`, default off)": the slot created with `failover = true`,
    /// the standby's slot sync worker, and `synchronized_standby_slots` naming the standby.
    pub failover_slots: bool,
    /// "Trace columns (shown when the file sets `env failovers` or `env failover_slots`)".
    pub failover_columns: bool,
    /// "`stream_drops` | 0 | 0–3 | streams the walsender ends while PostgreSQL stays up at
    /// most".
    pub stream_drops: u8,
    /// The file sets `env stream_drops`: its traces show the `stream_drops` column (the page
    /// names the column; that it shows only then is the rule of `pg_stops` and `failovers`,
    /// which the page spells out for those).
    pub drop_column: bool,
    /// "`messages` | `transactions` | …, `changes`": pgoutput's messages one by one.
    pub by_change: bool,
    /// "`rows` | 1 | 1–4 | rows each published client transaction inserts".
    pub rows: u32,
    /// "`multi_insert` | `off` | …: a transaction's rows are one multi-insert record".
    pub multi_insert: bool,
    /// "`env interleave = off | on` (default off)": `Open` and `CommitOpen`.
    pub interleave: bool,
    /// The file calls `backfill()` somewhere ("no-data-loss").
    pub backfills: bool,
    /// "`server` | primary | primary, standby | the server the connector talks to (standby:
    /// PostgreSQL 16 or later)".
    pub standby: bool,
}

impl Knobs {
    fn of(file: &File) -> Knobs {
        let mut k = Knobs {
            transactions: 2,
            commits: vec![CommitMode::Sync],
            txn_pages: 1,
            wal_buffers_pages: 4,
            other_traffic: 0,
            runs: 2,
            connector_crashes: 1,
            pg_crashes: 0,
            pg_stops: 0,
            // "`crashes` | any": no bound of its own.
            crashes: u8::MAX,
            checkpoints: true,
            keepalives: 0,
            kills: 0,
            call_failures: 0,
            unbounded: false,
            os_crashes: 0,
            release: PgVersion::latest_of(15),
            horizon: false,
            keep_pages: None,
            wal_faults: false,
            failovers: 0,
            failover_slots: false,
            failover_columns: false,
            stream_drops: 0,
            drop_column: false,
            by_change: false,
            rows: 1,
            multi_insert: false,
            interleave: false,
            backfills: false,
            standby: false,
        };
        for item in &file.items {
            let Item::Knob(knob) = item else { continue };
            let n = match &knob.value.node {
                KnobValue::Number(n) => *n,
                KnobValue::Word(_) => 0,
            };
            let word = match &knob.value.node {
                KnobValue::Word(w) => w.as_str(),
                KnobValue::Number(_) => "",
            };
            match knob.name.node.as_str() {
                "transactions" => k.transactions = n as u8,
                "commit" => {
                    k.commits = match word {
                        "async" => vec![CommitMode::Async],
                        "either" => vec![CommitMode::Sync, CommitMode::Async],
                        _ => vec![CommitMode::Sync],
                    }
                }
                "txn_pages" => k.txn_pages = n,
                "wal_buffers_pages" => k.wal_buffers_pages = n,
                "other_traffic" => k.other_traffic = n as u8,
                "runs" if word == "unbounded" => k.unbounded = true,
                "runs" => k.runs = n as u8,
                "kills" => k.kills = n as u8,
                "call_failures" => k.call_failures = n as u8,
                "connector_crashes" => k.connector_crashes = n as u8,
                "pg_crashes" => k.pg_crashes = n as u8,
                "pg_stops" => k.pg_stops = n as u8,
                "crashes" => k.crashes = n as u8,
                "checkpoints" => k.checkpoints = word == "on",
                "keepalives" => k.keepalives = n as u8,
                "max_slot_wal_keep_pages" => k.keep_pages = (n > 0).then_some(n),
                "os_crashes" => {
                    k.os_crashes = n as u8;
                    k.wal_faults = true;
                }
                "pg_version" if word.contains('.') => {
                    let (major, minor) = word.split_once('.').expect("a release");
                    k.release = PgVersion(
                        major.parse::<u32>().unwrap() * 10_000 + minor.parse::<u32>().unwrap(),
                    );
                    k.wal_faults = true;
                }
                "pg_version" => k.release = PgVersion::latest_of(n as u32),
                "failovers" => {
                    k.failovers = n as u8;
                    k.failover_columns = true;
                }
                "failover_slots" => {
                    k.failover_slots = word == "on";
                    k.failover_columns = true;
                }
                "stream_drops" => {
                    k.stream_drops = n as u8;
                    k.drop_column = true;
                }
                "messages" => k.by_change = word == "changes",
                "rows" => k.rows = n as u32,
                "multi_insert" => k.multi_insert = word == "on",
                "interleave" => k.interleave = word == "on",
                "server" => k.standby = word == "standby",
                // The generator writes no bulk transactions.
                _ => {}
            }
        }
        let named = file
            .items
            .iter()
            .any(|i| matches!(i, Item::Expect(e) if e.property.node == "no-needed-wal-removed"));
        // A property reads `wal.removed_before`: its syntax tree names the field.
        let reads = file
            .invariants()
            .any(|inv| format!("{inv:?}").contains("\"removed_before\""));
        k.horizon = named || reads;
        for p in file.procedures() {
            k.backfills |= backfills(&p.body);
        }
        k
    }

    /// "The standby is modelled when `failovers > 0` or `failover_slots = on`."
    fn has_standby(&self) -> bool {
        self.failovers > 0 || self.failover_slots
    }

    /// The server the connector talks to: "A quiet primary (or standby, `env server =
    /// standby`)". A standby's `wal.insert`, `write` and `flush` are its primary's (the model's
    /// `Server`: "the standby receives what the primary flushed"), `wal.replay` its own.
    fn role(&self) -> Role {
        if self.standby {
            Role::Standby
        } else {
            Role::Primary
        }
    }
}

/// Whether `block` calls `backfill()`. Procedures a body calls are not followed.
fn backfills(block: &Block) -> bool {
    block.stmts.iter().any(|stmt| match &stmt.kind {
        StmtKind::Call(call) | StmtKind::AssignCall { call, .. } => {
            call.callee.node == "backfill" || call.on_error.as_ref().is_some_and(backfills)
        }
        StmtKind::If {
            then, otherwise, ..
        } => backfills(then) || otherwise.as_ref().is_some_and(backfills),
        StmtKind::ForEach { body, .. }
        | StmtKind::Retry { body, .. }
        | StmtKind::Atomic(body)
        | StmtKind::Loop(body)
        | StmtKind::Unbounded { body, .. } => backfills(body),
        StmtKind::Either(branches) => branches.iter().any(backfills),
        _ => false,
    })
}

/// The names `for each message NAME` gives its messages in the procedures that run: `first
/// run`, `every run`, `after crash`, the processes, and the procedures they call ("Calling a
/// procedure is not a step": one never called has no message).
pub fn message_names(file: &File) -> BTreeSet<String> {
    let mut called = BTreeSet::new();
    let mut names = BTreeSet::new();
    for p in file.procedures() {
        walk(&p.body, &mut BTreeSet::new(), &mut called);
    }
    for p in file.procedures() {
        let runs = match &p.kind {
            ProcKind::Named(n) => called.contains(&n.node),
            _ => true,
        };
        if runs {
            walk(&p.body, &mut names, &mut BTreeSet::new());
        }
    }
    names
}

/// The message names and the callees in `block`.
fn walk(block: &Block, names: &mut BTreeSet<String>, calls: &mut BTreeSet<String>) {
    for stmt in &block.stmts {
        match &stmt.kind {
            StmtKind::ForEach { message, body, .. } => {
                names.insert(message.node.clone());
                walk(body, names, calls);
            }
            StmtKind::If {
                then, otherwise, ..
            } => {
                walk(then, names, calls);
                if let Some(b) = otherwise {
                    walk(b, names, calls);
                }
            }
            StmtKind::Retry { body, .. } | StmtKind::Atomic(body) | StmtKind::Loop(body) => {
                walk(body, names, calls)
            }
            StmtKind::Either(branches) => branches.iter().for_each(|b| walk(b, names, calls)),
            StmtKind::Call(call) | StmtKind::AssignCall { call, .. } => {
                calls.insert(call.callee.node.clone());
                if let Some(b) = &call.on_error {
                    walk(b, names, calls);
                }
            }
            _ => {}
        }
    }
}

/// A file's declarations, read once.
pub struct Reference<'f> {
    file: &'f File,
    pub knobs: Knobs,
    decls: BTreeMap<String, (Storage, Type, V)>,
    timers: BTreeSet<String>,
    /// Each channel's type and capacity.
    chans: BTreeMap<String, (Type, usize)>,
    /// The processes' bodies in order: `every run`'s first, then each `process NAME`.
    procs: Vec<Root>,
    /// The names `for each message` gives its messages.
    messages: BTreeSet<String>,
}

/// How a statement ended, beside the state it left.
#[derive(Clone, Debug)]
enum Flow {
    /// It went on.
    Next,
    /// A `for each message` received one, into its message name.
    Received,
    /// The stream is over ("ends as at the end of the stream").
    StreamEnd,
    /// "A plain `fail` … ends the run", as does "a call PostgreSQL answers with an `ERROR`".
    Fail,
    /// `fail fatal`, or a counter leaving its range ("stops the pipeline at that step").
    Fatal,
    /// "a failed call assigns nothing and goes on at the handler's first statement".
    Handler,
}

impl<'f> Reference<'f> {
    pub fn new(file: &'f File) -> Reference<'f> {
        let mut decls = BTreeMap::new();
        for item in &file.items {
            if let Item::Var(v) = item {
                let init = constant(&v.init.node, v.ty.node);
                decls.insert(v.name.node.clone(), (v.storage, v.ty.node, init));
            }
        }
        // "A timer … Reading `NAME` gives whether it is armed": a bool, false at each run's start.
        let timers: BTreeSet<String> = file.timers().map(|t| t.name.node.clone()).collect();
        let chans = file
            .channels()
            .map(|c| (c.name.node.clone(), (c.ty.node, c.capacity.node as usize)))
            .collect();
        // "Process 0 is `every run`'s …, then each `process NAME` in file order."
        let procs = std::iter::once(Root::EveryRun)
            .chain(file.processes().map(|p| match &p.kind {
                ProcKind::Process(n) => Root::Process(n.node.clone()),
                _ => unreachable!(),
            }))
            .collect();
        Reference {
            messages: message_names(file),
            file,
            knobs: Knobs::of(file),
            decls,
            timers,
            chans,
            procs,
        }
    }

    fn proc(&self, root: &Root) -> Option<&'f Block> {
        self.file.items.iter().find_map(|i| match i {
            Item::Procedure(p) => {
                let hit = match (&p.kind, root) {
                    (ProcKind::FirstRun, Root::FirstRun)
                    | (ProcKind::EveryRun, Root::EveryRun)
                    | (ProcKind::AfterCrash, Root::AfterCrash) => true,
                    (ProcKind::Named(n), Root::Named(m))
                    | (ProcKind::Process(n), Root::Process(m)) => n.node == *m,
                    _ => false,
                };
                hit.then_some(&p.body)
            }
            _ => None,
        })
    }

    fn killable(&self, root: &Root) -> bool {
        let Root::Process(name) = root else {
            return false;
        };
        self.file
            .processes()
            .any(|p| p.killable && matches!(&p.kind, ProcKind::Process(n) if n.node == *name))
    }

    fn block(&self, at: &At) -> &'f Block {
        let mut block = self.proc(&at.root).expect("a frame's procedure exists");
        for &(stmt, which) in &at.path {
            block = match (&block.stmts[stmt].kind, which) {
                (StmtKind::If { then, .. }, 0) => then,
                (StmtKind::If { otherwise, .. }, _) => otherwise.as_ref().expect("else"),
                (StmtKind::Retry { body, .. }, _)
                | (StmtKind::ForEach { body, .. }, _)
                | (StmtKind::Loop(body), _)
                | (StmtKind::Atomic(body), _) => body,
                (StmtKind::Either(branches), k) => &branches[usize::from(k)],
                // A call's `on error { … }`.
                (StmtKind::Call(call) | StmtKind::AssignCall { call, .. }, _) => {
                    call.on_error.as_ref().expect("a handler")
                }
                other => unreachable!("{other:?} has no block"),
            };
        }
        block
    }

    fn start_of(root: Root) -> Frame {
        Frame::Seq {
            at: At { root, path: vec![] },
            next: 0,
        }
    }

    // ---- the start, runs, crashes ----------------------------------------------------------

    /// "A quiet primary … at `0/1000000`, the connector's slot at rest there"; the first run
    /// "runs `first run` (on the first run only) … then `every run`".
    pub fn initial(&self) -> State {
        let server = Server::at_rest(self.knobs.role(), START);
        let vars: BTreeMap<String, V> = self
            .decls
            .iter()
            .map(|(n, (_, _, init))| (n.clone(), init.clone()))
            .collect();
        let flushed = self
            .decls
            .iter()
            .filter(|(_, (s, _, _))| *s == Storage::DurableAsync)
            .map(|(n, (_, _, init))| (n.clone(), init.clone()))
            .collect();
        let has_first = self.proc(&Root::FirstRun).is_some();
        let mut state = State {
            pg: Pg {
                wal: server.wal,
                slot: Some(DurableSlot::created(server.slot)),
                commit_pending: false,
                txns: vec![],
                open: None,
                published: 0,
                other: 0,
                walsender: None,
                sending: None,
                stream_closed: false,
                keepalives: 0,
                lost: false,
                stopping: false,
                replied: Lsn::INVALID,
                asked: false,
                // "starts at the initial WAL position, `0/0` and unused when no standby is
                // modelled"; no copy until the slot sync worker's first cycle makes one.
                standby: if self.knobs.has_standby() {
                    START
                } else {
                    Lsn::INVALID
                },
                synced: None,
                gone: BTreeSet::new(),
            },
            dest: BTreeSet::new(),
            batch: BTreeSet::new(),
            vars,
            flushed,
            chans: BTreeMap::new(),
            at: Where::Done,
            runs: 1,
            connector_crashes: 0,
            pg_crashes: 0,
            pg_stops: 0,
            first_done: !has_first,
            kills: 0,
            call_failures: 0,
            dup: BTreeSet::new(),
            os_crashes: 0,
            failovers: 0,
            stream_drops: 0,
            removed_before: Lsn::INVALID,
            checkpoint: None,
        };
        self.reset_volatile(&mut state);
        self.start_processes(&mut state, has_first.then_some(Root::FirstRun));
        state
    }

    /// "Every run starts every process: process 0 at `first run`, `after crash` or `every run`
    /// as above, each other at its body's first step."
    fn start_processes(&self, state: &mut State, before: Option<Root>) {
        let mut zero = vec![Self::start_of(Root::EveryRun)];
        match before {
            Some(Root::FirstRun) => {
                zero.push(Frame::FirstRunDone);
                zero.push(Self::start_of(Root::FirstRun));
            }
            Some(root) => zero.push(Self::start_of(root)),
            None => {}
        }
        let mut all = vec![zero];
        all.extend(
            self.procs[1..]
                .iter()
                .map(|r| vec![Self::start_of(r.clone())]),
        );
        state.at = Where::Run(all);
        for i in 0..self.procs.len() {
            self.settle(state, i, false);
        }
        self.end_if_all_ended(state);
    }

    /// "the state in which the last one ends is the run's end".
    fn end_if_all_ended(&self, state: &mut State) {
        if let Where::Run(all) = &state.at {
            if all.iter().all(Vec::is_empty) {
                self.end_run(state);
            }
        }
    }

    /// A run ends: "the replication connection closed and the open batch lost … While `runs`
    /// allows another run, the connector's one step at a run's end is `next run` … Otherwise
    /// the pipeline is `done` in the run's end, its volatile variables as they were."
    fn end_run(&self, state: &mut State) {
        state.pg.close_stream();
        state.pg.stream_closed = false;
        state.batch.clear();
        state.at = if self.knobs.unbounded || state.runs < self.knobs.runs {
            Where::RunEnd
        } else {
            Where::Done
        };
    }

    /// The volatile variables to their initial values; "`next run` and a connector crash …
    /// disarm every timer and empty every channel"; a message name reads `none` "after a crash
    /// or a new run".
    fn reset_volatile(&self, state: &mut State) {
        state.vars.retain(|name, _| self.decls.contains_key(name));
        for (name, (storage, _, init)) in &self.decls {
            if *storage == Storage::Volatile {
                state.vars.insert(name.clone(), init.clone());
            }
        }
        for t in &self.timers {
            state.vars.insert(t.clone(), V::Bool(false));
        }
        state.chans = self.chans.keys().map(|c| (c.clone(), vec![])).collect();
    }

    /// `next run`: "it resets the volatile variables, counts the run, and goes to `every run`'s
    /// first step".
    fn next_run(&self, state: &mut State) {
        // "whose state does not count its runs (the `runs` column stays 1)".
        if !self.knobs.unbounded {
            state.runs += 1;
        }
        self.reset_volatile(state);
        self.start_processes(state, None);
    }

    /// "A connector crash restarts the connector at once at `after crash` (or `every run`), or
    /// at `first run` again when the crash came before `first run` ended, its volatile
    /// variables reset, and does not count as a run." An async variable "keeps the last
    /// flushed value, loses a pending one"; "the destination's open batch is lost" with the
    /// process, and its replication connection drops with it.
    fn connector_crash(&self, state: &mut State) {
        state.connector_crashes += 1;
        self.reset_volatile(state);
        for (name, v) in &state.flushed {
            state.vars.insert(name.clone(), v.clone());
        }
        state.batch.clear();
        state.pg.close_stream();
        state.pg.stream_closed = false;
        let before = if !state.first_done {
            Some(Root::FirstRun)
        } else if self.proc(&Root::AfterCrash).is_some() {
            Some(Root::AfterCrash)
        } else {
            None
        };
        self.start_processes(state, before);
    }

    /// PostgreSQL crashes (immediate shutdown): the model's crash restart of the WAL and the
    /// slot; "A PostgreSQL crash loses the transactions past the flush pointer"; it "closes the
    /// replication connection". The page does not say whether a lost transaction is committed
    /// again: `transactions` counts "client transactions … in the whole run", so it is not.
    ///
    /// "An operating-system crash … is a PostgreSQL crash … whose WAL recovery ends at the flush
    /// pointer, not the write pointer"; "a crash of either kind ends [a checkpoint] unfinished".
    ///
    /// "With `server = standby` the crash (or stop) is the standby's: the primary's commits,
    /// flushed or not, and a synchronous one's wait go on", "and the primary's open transaction
    /// goes on": the slot, the stream, a stop and a checkpoint under way are the standby's and
    /// go as on a primary; the WAL pointers, the committed transactions, a waiting commit and
    /// an open transaction are the primary's and stay. The page does not say where the replay
    /// pointer is after the crash: as the model's `Server::crash_restart` ("replay resumes
    /// where it was"), it stays. Nor does it say what an operating-system crash under a
    /// standby loses: the page calls it "a PostgreSQL crash … whose WAL recovery ends at the
    /// flush pointer", and the WAL is the primary's, so it is the standby's PostgreSQL crash
    /// above, counted as an operating-system crash.
    fn pg_crash(&self, state: &mut State, os: bool) {
        if os {
            state.os_crashes += 1;
        } else {
            state.pg_crashes += 1;
        }
        state.checkpoint = None;
        // "A PostgreSQL crash during a stop ends it."
        state.pg.stopping = false;
        if let Some(slot) = state.pg.slot.as_mut() {
            slot.crash_restart();
        }
        if self.knobs.standby {
            if state.pg.close_stream() {
                state.pg.stream_closed = true;
            }
            return;
        }
        if os {
            state.pg.wal.write = state.pg.wal.flush;
        }
        state.pg.wal.crash_restart();
        state.pg.commit_pending = false;
        // "A PostgreSQL crash (and an OS crash) … drop the open transaction (it never commits;
        // its WAL stays)".
        state.pg.open = None;
        // Those past the flush pointer are the last ones committed, after any a failover lost
        // (which keep their names): the crash takes their names back.
        let flush = state.pg.wal.flush;
        let gone = &state.pg.gone;
        let mut kept = state.pg.txns.len();
        while kept > 0 && !gone.contains(&(kept - 1)) && state.pg.txns[kept - 1].end_lsn > flush {
            kept -= 1;
        }
        debug_assert!(state.pg.txns[..kept]
            .iter()
            .enumerate()
            .all(|(i, t)| gone.contains(&i) || t.end_lsn <= flush));
        state.pg.txns.truncate(kept);
        // Their rows go with them, from the destination too.
        state.dest.retain(|&(i, _)| i < kept);
        state.dup.retain(|&i| i < kept);
        state.batch.retain(|&(i, _)| i < kept);
        if state.pg.close_stream() {
            state.pg.stream_closed = true;
        }
    }

    /// `PgStop`: "The stop flushes all WAL and ends the client's transactions (a synchronous
    /// commit's flush done …). With no replication stream open, the shutdown checkpoint and the
    /// start are the same step. With one open, PostgreSQL is *stopping*".
    ///
    /// On a standby "the crash (or stop) is the standby's: the primary's commits, flushed or
    /// not, and a synchronous one's wait go on": the stop flushes none of the primary's WAL and
    /// leaves its transactions alone. The shutdown and the start are one step only "on a
    /// primary": on a standby `PgStopped` is always a step of its own, with its choice of a
    /// skipped restartpoint.
    fn pg_stop(&self, state: &mut State) {
        state.pg_stops += 1;
        state.pg.stopping = true;
        if self.knobs.standby {
            self.stream_done(state);
            return;
        }
        state.pg.wal.checkpoint_flush();
        state.pg.commit_pending = false;
        // "a clean stop's start (`PgStop`: the backends are terminated) … drop the open
        // transaction".
        state.pg.open = None;
        self.stream_done(state);
        if state.pg.walsender.is_none() && self.standby_has_all(state) {
            self.pg_stopped(state, false);
        }
    }

    /// "a clean stop waits for the standby to receive every flushed byte". The page says so
    /// beside failover slots; PostgreSQL's shutdown waits for every walsender, a physical
    /// standby's too (15 `walsender.c:WalSndDone`), and so does the interpreter: any modelled
    /// standby.
    fn standby_has_all(&self, state: &State) -> bool {
        !self.knobs.has_standby() || state.pg.standby >= state.pg.wal.flush
    }

    /// `PgStopped`: "the shutdown checkpoint and the start: the slot saved if dirty — from
    /// PostgreSQL 17 also if its `confirmed_flush` moved since its last save — and read back …;
    /// a primary's WAL is all flushed and `pg_last_wal_replay_lsn()` is `none`."
    ///
    /// "(on a standby the shutdown restartpoint may also be skipped, PostgreSQL's choice:
    /// `PgStopped [restartpoint skipped]`, the slot as last saved)": `skipped`. A standby's WAL
    /// is its primary's, which the stop leaves alone, and its replay pointer stays.
    fn pg_stopped(&self, state: &mut State, skipped: bool) {
        if !self.knobs.standby {
            state.pg.wal.clean_restart();
        }
        if let Some(slot) = state.pg.slot.as_mut() {
            if skipped {
                slot.crash_restart();
            } else {
                slot.clean_restart_on(self.knobs.release);
            }
        }
        state.pg.stopping = false;
        if state.pg.close_stream() {
            state.pg.stream_closed = true;
        }
    }

    /// `Failover`: "The primary is lost and the standby promoted; the connector's next call
    /// reaches the promoted server" (the model's `failover.rs:promote` and `promoted_slot`,
    /// PostgreSQL 15 `xlog.c:StartupXLOG` on a new timeline, 17 `slotsync.c` for the copy).
    fn failover(&self, state: &mut State) {
        state.failovers += 1;
        let end = state.pg.standby;
        // "insert = write = flush = replay = `standby` (`replay` is … the promoted server's
        // frozen end of replay, NOT none); new transactions' WAL starts there".
        state.pg.wal = Wal {
            insert: end,
            write: end,
            flush: end,
            replay: end,
        };
        // "the transactions past it are lost: gone from `committed`, they keep their names …;
        // what the destination and the connector hold of them stays".
        let lost: Vec<usize> = (0..state.pg.txns.len())
            .filter(|i| state.pg.txns[*i].end_lsn > end)
            .collect();
        state.pg.gone.extend(lost);
        // "with failover_slots on and a copy, the copy (in memory and on disk alike, clean);
        // otherwise none".
        let copy = state.pg.synced.filter(|_| self.knobs.failover_slots);
        state.pg.slot = copy.map(|c| {
            let saved = SavedSlot {
                confirmed_flush: c.confirmed_flush,
                restart_lsn: c.restart_lsn,
            };
            DurableSlot {
                slot: Slot {
                    confirmed_flush: c.confirmed_flush,
                    restart_lsn: c.restart_lsn,
                    saved,
                },
                dirty: false,
            }
        });
        // "the replication connection ends …, a synchronous commit's wait ends …, a clean stop
        // under way ends …, a two-step checkpoint under way ends unfinished, `wal.removed_before`
        // is none again".
        if state.pg.close_stream() {
            state.pg.stream_closed = true;
        }
        state.pg.commit_pending = false;
        // "… and a failover all drop the open transaction".
        state.pg.open = None;
        state.pg.stopping = false;
        state.checkpoint = None;
        state.removed_before = Lsn::INVALID;
        // "a new standby is cloned from the promoted server: `standby` = the new flush pointer,
        // no copy".
        state.pg.standby = end;
        state.pg.synced = None;
    }

    /// `StreamDrop`: "the walsender may end an open stream while PostgreSQL stays up …
    /// `for each message` ends as at the end of the stream, and a status update then fails the
    /// run (no stream is open). Unlike a crash, the slot keeps what it holds in memory"
    /// (PostgreSQL 15 `walsender.c:WalSndCheckTimeOut`, `ProcessRepliesIfAny` on EOF). Nothing
    /// else changes: the WAL, the client's transactions, a checkpoint under way and the standby
    /// go on, and the slot, dirty or not, stays as it is in memory and on disk. A transaction
    /// part way sent is left unsent, as for any stream that "ends part way".
    fn stream_drop(&self, state: &mut State) {
        state.stream_drops += 1;
        let open = state.pg.close_stream();
        debug_assert!(open, "a drop ends an open stream");
        state.pg.stream_closed = true;
    }

    /// The walsender as it is once it has read past what it does not send, and the next
    /// transaction it sends (its index, and the walsender after it), if any: "The stream sends
    /// whole transactions in commit order once the flush pointer … covers them, skipping
    /// unpublished ones and those the start rule skips". With nothing to send, the reader has
    /// read all the WAL its limit ([`Reference::send_limit`]) covers.
    fn next_message(&self, state: &State) -> Option<(Walsender, Option<(usize, Walsender)>)> {
        let mut ws = state.pg.walsender?;
        let flush = self.send_limit(state);
        let mut sent = None;
        for (i, txn) in Self::live(state) {
            if txn.end_lsn <= ws.read_to || txn.end_lsn > flush {
                continue;
            }
            let mut after = ws;
            if after.decode_txn(txn) {
                sent = Some((i, after));
                break;
            }
            ws = after;
        }
        if sent.is_none() {
            ws.send_logical(&[], flush);
        }
        Some((ws, sent))
    }

    /// The committed transactions whose WAL the server has, each with its name: all but those a
    /// failover lost.
    fn live(state: &State) -> impl Iterator<Item = (usize, &Txn)> + '_ {
        state
            .pg
            .txns
            .iter()
            .enumerate()
            .filter(|(i, _)| !state.pg.gone.contains(i))
    }

    /// "no-data-loss fails when a stream skips a committed publication transaction the
    /// destination does not hold (at `start_replication`, or later for one committed after
    /// it …)": the walsender read from `before` to `after`, past the transactions it did not
    /// send.
    fn read_on(&self, state: &mut State, before: Walsender, after: Walsender) {
        let skipped = Self::live(state).any(|(i, t)| {
            t.end_lsn > before.read_to
                && t.end_lsn <= after.read_to
                && t.is_published()
                && !Self::holds(state, i)
                && !Self::holds_whole(state, i)
                && txn_needs_skip(t, after.start_decoding_at)
        });
        state.pg.lost |= skipped;
        state.pg.walsender = Some(after);
    }

    /// How far the walsender may read: the flush pointer; "With failover_slots on, the
    /// walsender sends no transaction the standby has not received: its limit is `min(flush,
    /// standby)`" (the model's `failover.rs:send_limit`, PostgreSQL 17
    /// `walsender.c:WalSndWaitForWal` waiting in `NeedToWaitForStandbys`), and "a caught-up
    /// keepalive's position is that limit". On a standby, "once the flush pointer (a standby's
    /// replay pointer) covers them" ([`Reference::read_limit`]).
    fn send_limit(&self, state: &State) -> Lsn {
        let flush = self.read_limit(state);
        if self.knobs.failover_slots {
            flush.min(state.pg.standby)
        } else {
            flush
        }
    }

    /// How far the server decodes, advances and backfills: the flush pointer, "replay on a
    /// standby" (`pg_replication_slot_advance`'s words; the stream's "a standby's replay
    /// pointer"; `backfill()`'s "on a standby, what it has replayed"). The page says nothing of
    /// SQL decoding on a standby: it reads to the same pointer (PostgreSQL 16
    /// `logicalfuncs.c:pg_logical_slot_get_changes_guts`: `GetXLogReplayRecPtr` during
    /// recovery).
    fn read_limit(&self, state: &State) -> Lsn {
        if self.knobs.standby {
            state.pg.wal.replay
        } else {
            state.pg.wal.flush
        }
    }

    /// "it ends the stream … once the connector's last status update reported exactly that
    /// position (its `flush`, or its `write` when `flush` is `none`) — the check is made at the
    /// status update and at each read": a stopping, caught-up walsender whose client reported
    /// what it sent.
    fn stream_done(&self, state: &mut State) {
        if !state.pg.stopping {
            return;
        }
        if let Some(ws) = self.caught_up(state) {
            if state.pg.replied == ws.sent_ptr {
                state.pg.close_stream();
                state.pg.stream_closed = true;
            }
        }
    }

    /// The walsender once it has caught up: a stream open, no transaction part way ("Between a
    /// transaction's Begin and its Commit the walsender sends nothing else"), and nothing more
    /// the flush pointer lets it send.
    fn caught_up(&self, state: &State) -> Option<Walsender> {
        if state.pg.sending.is_some() {
            return None;
        }
        match self.next_message(state) {
            Some((ws, None)) => Some(ws),
            _ => None,
        }
    }

    // ---- control: from one step to the next --------------------------------------------------

    /// Process `i`'s frames (its position); the state runs.
    fn frames(state: &mut State, i: usize) -> &mut Vec<Frame> {
        let Where::Run(all) = &mut state.at else {
            unreachable!("only a running state has positions")
        };
        &mut all[i]
    }

    /// Moves process `i` through what is not a step to its next step: "The conditions of
    /// `if`, `until` and `for each … until` … [are] taken with the step that follows", and
    /// "Calling a procedure is not a step either: its first statement is." While `choosing` an
    /// `either` branch, it stops at the branch's end.
    fn settle(&self, state: &mut State, i: usize, choosing: bool) {
        loop {
            let Some(top) = Self::frames(state, i).last().cloned() else {
                return;
            };
            match top {
                Frame::FirstRunDone => {
                    Self::frames(state, i).pop();
                    state.first_done = true;
                }
                Frame::BranchEnd if choosing => return,
                Frame::BranchEnd => {
                    Self::frames(state, i).pop();
                }
                // "`loop { … }` repeats its body until the run ends".
                Frame::Loop { at, stmt } => {
                    let body = Self::child(&at, stmt, 0);
                    Self::frames(state, i).push(body);
                }
                Frame::Retry { at, stmt, tries } => {
                    let StmtKind::Retry { times, until, .. } = &self.block(&at).stmts[stmt].kind
                    else {
                        unreachable!()
                    };
                    let tries = tries + 1;
                    let done = self.eval(state, until).truth() || tries >= times.node;
                    let frames = Self::frames(state, i);
                    frames.pop();
                    if !done {
                        let body = Self::child(&at, stmt, 0);
                        frames.push(Frame::Retry { at, stmt, tries });
                        frames.push(body);
                    }
                }
                Frame::Seq { at, next } => {
                    if next >= self.block(&at).stmts.len() {
                        Self::frames(state, i).pop();
                        continue;
                    }
                    if !self.enter(state, i, &at, next) {
                        return;
                    }
                }
            }
        }
    }

    /// The frame that runs block `which` of statement `stmt` of block `at` from its start.
    fn child(at: &At, stmt: usize, which: u8) -> Frame {
        let mut path = at.path.clone();
        path.push((stmt, which));
        Frame::Seq {
            at: At {
                root: at.root.clone(),
                path,
            },
            next: 0,
        }
    }

    /// The statement `next` of block `at` when process `i`'s control reaches it: true when it
    /// is control (an `if`, a `retry`'s or a `loop`'s start, a call of a procedure, a loop
    /// whose `until` holds), which this moves past; false when it is the process's next step.
    fn enter(&self, state: &mut State, i: usize, at: &At, next: usize) -> bool {
        let stmt = &self.block(at).stmts[next];
        let mut push = Vec::new();
        match &stmt.kind {
            StmtKind::If {
                cond, otherwise, ..
            } => {
                if self.eval(state, cond).truth() {
                    push.push(Self::child(at, next, 0));
                } else if otherwise.is_some() {
                    push.push(Self::child(at, next, 1));
                }
            }
            StmtKind::Retry { .. } => {
                push.push(Frame::Retry {
                    at: at.clone(),
                    stmt: next,
                    tries: 0,
                });
                push.push(Self::child(at, next, 0));
            }
            StmtKind::Loop(_) => push.push(Frame::Loop {
                at: at.clone(),
                stmt: next,
            }),
            // "`for each message m until pos >= target` … tested before each message".
            StmtKind::ForEach { until: Some(u), .. } if self.eval(state, u).truth() => {}
            StmtKind::Call(call) if self.is_procedure(&call.callee.node) => {
                push.push(Self::start_of(Root::Named(call.callee.node.clone())));
            }
            _ => return false,
        }
        let frames = Self::frames(state, i);
        if let Some(Frame::Seq { next: n, .. }) = frames.last_mut() {
            *n += 1;
        }
        frames.extend(push);
        true
    }

    /// "With `env call_failures = N`, up to `N` calls fail in all …: a call of PostgreSQL's
    /// vocabulary (SQL, `identify_system`, `start_replication`, `standby_status_update`),
    /// `backfill` or `destination.commit` either fails before it takes effect, or times out
    /// after it took effect (its answer lost …). … a failed call assigns nothing and goes on at
    /// the handler's first statement; without a handler the run ends, as at an `ERROR` …
    /// Inside a labelled block a failed call ends the run at that call … `destination.write`,
    /// channels and procedures do not fail." The page does not say whether a call PostgreSQL
    /// answers with an `ERROR` can time out "after taking effect": an `ERROR` takes none, so
    /// only a call that succeeds has that outcome; either can fail before.
    fn failures(&self, state: &State, call: &Call, label: Option<&str>) -> Vec<(State, Flow)> {
        let callee = call.callee.node.as_str();
        let fails = callee == "destination.commit" || !callee.contains('.');
        if !fails || self.is_procedure(callee) || state.call_failures >= self.knobs.call_failures {
            return vec![];
        }
        let flow = if call.on_error.is_some() && label.is_none() {
            Flow::Handler
        } else {
            Flow::Fail
        };
        let mut before = state.clone();
        before.call_failures += 1;
        // "A `destination.commit` that fails before it takes effect rolls the destination's
        // transaction back: its open batch is gone".
        if callee == "destination.commit" {
            before.batch.clear();
        }
        let mut out = vec![(before, flow.clone())];
        for (mut s, v) in self.call(state.clone(), call) {
            if v.is_some() && !matches!(s.at, Where::Fatal(..)) {
                s.call_failures += 1;
                out.push((s, flow.clone()));
            }
        }
        out
    }

    fn is_procedure(&self, name: &str) -> bool {
        self.proc(&Root::Named(name.to_owned())).is_some()
    }

    // ---- steps ---------------------------------------------------------------------------

    /// The connector's steps as (process, fair, next state): "the connector's steps are each
    /// process's next step that can be taken, process 0's first". `next run` is process 0's
    /// ("fair like any step").
    pub fn moves(&self, state: &State) -> Vec<(usize, bool, State)> {
        match &state.at {
            Where::RunEnd => {
                let mut next = state.clone();
                self.next_run(&mut next);
                vec![(0, true, next)]
            }
            Where::Done | Where::Fatal(..) => vec![],
            Where::Run(all) => (0..all.len())
                .flat_map(|i| {
                    self.proc_step(state, i)
                        .into_iter()
                        .map(move |(fair, s)| (i, fair, s))
                })
                .collect(),
        }
    }

    /// Process `i`'s next step, each outcome with whether the step is fair.
    fn proc_step(&self, state: &State, i: usize) -> Vec<(bool, State)> {
        let Where::Run(all) = &state.at else {
            unreachable!()
        };
        let Some(Frame::Seq { at, next }) = all[i].last().cloned() else {
            return vec![];
        };
        let stmt = &self.block(&at).stmts[next];
        let fair = !stmt.unfair && !self.inside_unfair(&all[i]);
        if let StmtKind::Either(branches) = &stmt.kind {
            return self.either(state, i, &at, next, branches.len(), fair);
        }
        let mut outcomes = Vec::new();
        for (mut s, flow) in self.exec(state.clone(), stmt, &at, next, None) {
            self.after_step(&mut s, i, flow, &at, next);
            outcomes.push((fair, s));
        }
        outcomes
    }

    /// "`unfair` … before an `if` or a loop, for every step inside it": whether a statement
    /// that encloses the position is `unfair`.
    fn inside_unfair(&self, frames: &[Frame]) -> bool {
        frames.iter().any(|f| match f {
            Frame::Seq { at, .. } | Frame::Retry { at, .. } | Frame::Loop { at, .. } => {
                (1..=at.path.len()).any(|depth| {
                    let parent = At {
                        root: at.root.clone(),
                        path: at.path[..depth - 1].to_vec(),
                    };
                    self.block(&parent).stmts[at.path[depth - 1].0].unfair
                })
            }
            _ => false,
        })
    }

    /// "`either` … Its branches are tried in order, each with its first step: an outcome a
    /// branch whose first step can be taken now. … (the `either` line when the branch has
    /// none)".
    fn either(
        &self,
        state: &State,
        i: usize,
        at: &At,
        next: usize,
        branches: usize,
        fair: bool,
    ) -> Vec<(bool, State)> {
        let mut out = Vec::new();
        for k in 0..branches {
            let mut s = state.clone();
            let frames = Self::frames(&mut s, i);
            if let Some(Frame::Seq { next: n, .. }) = frames.last_mut() {
                *n += 1;
            }
            frames.push(Frame::BranchEnd);
            frames.push(Self::child(at, next, k as u8));
            self.settle(&mut s, i, true);
            if Self::frames(&mut s, i).last() == Some(&Frame::BranchEnd) {
                Self::frames(&mut s, i).pop();
                self.settle(&mut s, i, false);
                self.end_if_all_ended(&mut s);
                out.push((fair, s));
            } else {
                // The branch's first step is the step; an `unfair` one stays so.
                out.extend(
                    self.proc_step(&s, i)
                        .into_iter()
                        .map(|(f, s)| (f && fair, s)),
                );
            }
        }
        out
    }

    /// Where process `i` goes once its step (statement `next` of block `at`) is taken.
    fn after_step(&self, state: &mut State, i: usize, flow: Flow, at: &At, next: usize) {
        if !matches!(state.at, Where::Run(_)) {
            return;
        }
        let frames = Self::frames(state, i);
        match flow {
            Flow::Next | Flow::StreamEnd => {
                if let Some(Frame::Seq { next: n, .. }) = frames.last_mut() {
                    *n += 1;
                }
            }
            // The loop's body runs, then control comes back to the loop's statement.
            Flow::Received => frames.push(Self::child(at, next, 0)),
            // The handler runs, then what follows the call.
            Flow::Handler => {
                if let Some(Frame::Seq { next: n, .. }) = frames.last_mut() {
                    *n += 1;
                }
                frames.push(Self::child(at, next, 0));
            }
            // "A `fail` or an `ERROR` in any process ends the run for all".
            Flow::Fail => return self.end_run(state),
            Flow::Fatal => return,
        }
        self.settle(state, i, false);
        self.end_if_all_ended(state);
    }

    /// Executes `stmt` (statement `index` of block `at`), every outcome of PostgreSQL's
    /// choices; `label` is the labelled block it runs in.
    fn exec(
        &self,
        state: State,
        stmt: &Stmt,
        at: &At,
        index: usize,
        label: Option<&str>,
    ) -> Vec<(State, Flow)> {
        let fatal = |mut s: State| {
            let inside = label
                .map(str::to_owned)
                .or_else(|| stmt.label.as_ref().map(|l| l.node.clone()));
            s.pg.close_stream();
            s.at = Where::Fatal(at.clone(), index, inside);
            (s, Flow::Fatal)
        };
        match &stmt.kind {
            StmtKind::Assign { target, value } => {
                let v = self.eval(&state, value);
                self.assign(state, &target.node, v, fatal)
            }
            StmtKind::AssignCall { target, call } => {
                let mut out = self.failures(&state, call, label);
                out.extend(
                    self.call(state, call)
                        .into_iter()
                        .flat_map(|(s, v)| match v {
                            Some(v) => self.assign(s, &target.node, v, fatal),
                            None => vec![(s, Flow::Fail)],
                        }),
                );
                out
            }
            StmtKind::Call(call) => {
                let mut out = self.failures(&state, call, label);
                out.extend(self.call(state, call).into_iter().map(|(s, v)| match v {
                    Some(_) if matches!(s.at, Where::Fatal(..)) => (s, Flow::Fatal),
                    Some(_) => (s, Flow::Next),
                    None => (s, Flow::Fail),
                }));
                out
            }
            StmtKind::Fail { fatal: true, .. } => vec![fatal(state)],
            StmtKind::Fail { fatal: false, .. } => vec![(state, Flow::Fail)],
            StmtKind::Flush(name) => {
                let mut s = state;
                let v = s.vars[&name.node].clone();
                s.flushed.insert(name.node.clone(), v);
                vec![(s, Flow::Next)]
            }
            StmtKind::ForEach { message, .. } => self.receive(state, &message.node),
            StmtKind::Wait(cond) => self.wait(state, cond),
            StmtKind::Arm(name) | StmtKind::Cancel(name) => {
                let mut s = state;
                let armed = matches!(stmt.kind, StmtKind::Arm(_));
                s.vars.insert(name.node.clone(), V::Bool(armed));
                vec![(s, Flow::Next)]
            }
            // Inside a labelled block only (outside, `either` chose): "the choice is part of
            // the block's one step".
            StmtKind::Either(branches) => {
                let mut out = Vec::new();
                for (k, branch) in branches.iter().enumerate() {
                    let mut path = at.path.clone();
                    path.push((index, k as u8));
                    let inner = At {
                        root: at.root.clone(),
                        path,
                    };
                    out.extend(self.exec_block(state.clone(), branch, &inner, label));
                }
                out
            }
            StmtKind::Atomic(body) => {
                let name = stmt.label.as_ref().map(|l| l.node.as_str());
                let mut path = at.path.clone();
                path.push((index, 0));
                let inner = At {
                    root: at.root.clone(),
                    path,
                };
                self.exec_block(state, body, &inner, name)
            }
            // Inside a labelled block only (outside, `settle` took it): an `if` runs the
            // branch its condition picks, within the same step.
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let mut path = at.path.clone();
                if self.eval(&state, cond).truth() {
                    path.push((index, 0));
                    let inner = At {
                        root: at.root.clone(),
                        path,
                    };
                    self.exec_block(state, then, &inner, label)
                } else if let Some(other) = otherwise {
                    path.push((index, 1));
                    let inner = At {
                        root: at.root.clone(),
                        path,
                    };
                    self.exec_block(state, other, &inner, label)
                } else {
                    vec![(state, Flow::Next)]
                }
            }
            other => unreachable!("not a step: {other:?}"),
        }
    }

    /// A labelled block: "one step up to its closing brace, never past the run's end"; its
    /// statements run in order until one fails.
    fn exec_block(
        &self,
        state: State,
        body: &Block,
        at: &At,
        label: Option<&str>,
    ) -> Vec<(State, Flow)> {
        let mut live = vec![state];
        let mut ended = Vec::new();
        for (i, stmt) in body.stmts.iter().enumerate() {
            let mut next = Vec::new();
            for s in live {
                for (s, flow) in self.exec(s, stmt, at, i, label) {
                    match flow {
                        Flow::Next => next.push(s),
                        other => ended.push((s, other)),
                    }
                }
            }
            live = next;
        }
        ended.extend(live.into_iter().map(|s| (s, Flow::Next)));
        ended
    }

    /// `wait COND`: "a step that can be taken only when `COND` holds, and does nothing else";
    /// `wait TIMER` "can be taken only while it is armed, and disarms it".
    fn wait(&self, mut state: State, cond: &Expr) -> Vec<(State, Flow)> {
        if let ExprKind::Var(name) = &cond.node {
            if self.timers.contains(name) {
                if !state.vars[name].truth() {
                    return vec![];
                }
                state.vars.insert(name.clone(), V::Bool(false));
                return vec![(state, Flow::Next)];
            }
        }
        if self.eval(&state, cond).truth() {
            vec![(state, Flow::Next)]
        } else {
            vec![]
        }
    }

    /// An assignment: "an assigned value fits its variable"; "A counter assigned a value
    /// outside its range stops the pipeline at that step".
    fn assign(
        &self,
        mut state: State,
        name: &str,
        v: V,
        fatal: impl Fn(State) -> (State, Flow),
    ) -> Vec<(State, Flow)> {
        let (_, ty, _) = &self.decls[name];
        let v = match (v, ty) {
            (V::Count(n), Type::Counter(lo, hi)) if n < i128::from(*lo) || n > i128::from(*hi) => {
                return vec![fatal(state)];
            }
            (v, ty) => of_type(v, *ty),
        };
        state.vars.insert(name.to_owned(), v);
        vec![(state, Flow::Next)]
    }

    /// `for each message m` "receives the next message (a whole transaction, or a keepalive)
    /// as a step of its own; while nothing is there to receive, the connector waits". "The
    /// stream sends whole transactions in commit order once the flush pointer … covers them,
    /// skipping unpublished ones and those the start rule skips; `m.wal_end` of a keepalive is
    /// the walsender's `sentPtr`"; "whether the walsender sends a keepalive rather than the next
    /// transaction" is PostgreSQL's choice, while `keepalives` allows one.
    fn receive(&self, mut state: State, message: &str) -> Vec<(State, Flow)> {
        self.stream_done(&mut state);
        // "Between a transaction's Begin and its Commit the walsender sends nothing else — no
        // keepalive — and its `sentPtr` … stays where it was until the Commit has gone out".
        let counted = state.pg.keepalives < self.knobs.keepalives;
        // "a counted keepalive (PostgreSQL's choice, while `env keepalives` allows one more, not
        // while stopping) may carry an LSN inside the transaction it sends next or is sending:
        // … between its messages, at its `commit_lsn`".
        let inside = counted && !state.pg.stopping;
        if let Some((i, part)) = state.pg.sending {
            let mut out = Vec::new();
            if inside {
                let mut k = state.clone();
                k.pg.keepalives += 1;
                let at = k.pg.txns[i].commit_lsn;
                k.vars.insert(message.to_owned(), keepalive_at(at));
                out.push((k, Flow::Received));
            }
            let mut s = state;
            let next = self.part_after(&s, i, part);
            if next == Part::Commit {
                let mut ws = s.pg.walsender.expect("a stream sends it");
                let sent = ws.decode_txn(&s.pg.txns[i]);
                debug_assert!(sent, "a transaction it began");
                s.pg.walsender = Some(ws);
                s.pg.sending = None;
            } else {
                s.pg.sending = Some((i, next));
            }
            let m = self.message(&s, i, next);
            s.vars.insert(message.to_owned(), V::Msg(m));
            out.push((s, Flow::Received));
            return out;
        }
        let before = state.pg.walsender;
        if let (true, Some(ws)) = (state.pg.stopping, self.caught_up(&state)) {
            // "once caught up, it answers the connector's next read with a keepalive requesting
            // a reply … at what it has sent …; it sends no other message until the connector
            // has replied to it".
            if state.pg.asked {
                return vec![];
            }
            let mut s = state;
            s.pg.asked = true;
            self.read_on(&mut s, before.expect("a stream"), ws);
            s.vars
                .insert(message.to_owned(), keepalive(ws.keepalive(true)));
            return vec![(s, Flow::Received)];
        }
        let Some((ws, sent)) = self.next_message(&state) else {
            if state.pg.stream_closed {
                return vec![(state, Flow::StreamEnd)];
            }
            // No stream was opened in this run: nothing comes, the connector waits.
            return vec![];
        };
        let before = before.expect("a stream");
        let mut out = Vec::new();
        // "With `env keepalives` of 1 or more, a walsender that has caught up always has one
        // more keepalive for a connector waiting in `for each message`, at its current
        // position, uncounted."
        let idle = sent.is_none() && self.knobs.keepalives > 0;
        if counted || idle {
            let mut s = state.clone();
            if !idle {
                s.pg.keepalives += 1;
            }
            self.read_on(&mut s, before, ws);
            s.vars
                .insert(message.to_owned(), keepalive(ws.keepalive(false)));
            out.push((s, Flow::Received));
        }
        // "A counted keepalive may also come before the walsender reads on to its next message,
        // at `sentPtr` as its last read left it (`[keepalive before reading on]`)".
        if counted && before != ws {
            let mut s = state.clone();
            s.pg.keepalives += 1;
            s.vars
                .insert(message.to_owned(), keepalive(before.keepalive(false)));
            out.push((s, Flow::Received));
        }
        // "… before its Begin, at the end of any of its change records the reader has not yet
        // read past (each later row's record start, or its `commit_lsn` after the last …), the
        // reader then standing there". Where its records end is PostgreSQL's
        // (`Txn::change_record_ends`).
        if let (true, Some((i, _))) = (inside, sent) {
            let ends = state.pg.txns[i].change_record_ends(self.knobs.multi_insert);
            for at in ends.into_iter().filter(|at| *at > ws.sent_ptr) {
                let mut k = state.clone();
                k.pg.keepalives += 1;
                let mut reader = ws;
                reader.read_within(at);
                self.read_on(&mut k, before, reader);
                k.vars.insert(message.to_owned(), keepalive_at(at));
                out.push((k, Flow::Received));
            }
        }
        if let Some((i, after)) = sent {
            let mut s = state;
            let part = if self.knobs.by_change {
                // "its Begin" first: the walsender has read past what it skipped, and its
                // `sentPtr` "stays where it was until the Commit has gone out".
                self.read_on(&mut s, before, ws);
                s.pg.sending = Some((i, Part::Begin));
                Part::Begin
            } else {
                self.read_on(&mut s, before, after);
                Part::Whole
            };
            let m = self.message(&s, i, part);
            s.vars.insert(message.to_owned(), V::Msg(m));
            out.push((s, Flow::Received));
        }
        out
    }

    /// The message after `part` of transaction `i`: "its Begin, one change per row, its
    /// Commit".
    fn part_after(&self, state: &State, i: usize, part: Part) -> Part {
        let rows = state.pg.txns[i].published_rows;
        match part {
            Part::Begin => Part::Change(0),
            Part::Change(k) if k + 1 < rows => Part::Change(k + 1),
            Part::Change(_) => Part::Commit,
            other => unreachable!("nothing follows {other:?}"),
        }
    }

    /// Part `part` of transaction `i` as a message: "The LSN each goes out under (`m.lsn`,
    /// `m.wal_end`): the Begin and the first change, the transaction's first record
    /// (`m.txn.first_lsn`); each later change, its row's record, after the one before and below
    /// the commit record (`env multi_insert = on`: every row in the first record, one LSN for
    /// all); the Commit, the commit record's end (`m.txn.end_lsn`)"; a whole transaction, "a
    /// transaction's end". Where a row's record lies is PostgreSQL's (`Txn::change_lsn`).
    fn message(&self, state: &State, i: usize, part: Part) -> Msg {
        let txn = &state.pg.txns[i];
        let lsn = match part {
            Part::Begin => txn.first_lsn,
            Part::Change(k) => {
                let lsn = txn.change_lsn(k, self.knobs.multi_insert);
                debug_assert!(k > 0 || lsn == txn.first_lsn, "{txn:?}");
                debug_assert!(lsn >= txn.first_lsn && lsn < txn.commit_lsn, "{txn:?}");
                lsn
            }
            Part::Commit | Part::Whole | Part::Keepalive => txn.end_lsn,
        };
        Msg {
            txn: Some(i),
            part,
            lsn,
            reply_requested: false,
        }
    }

    /// Every row of transaction `i`: "rows each published client transaction inserts".
    fn rows_of(state: &State, i: usize) -> impl Iterator<Item = Row> {
        let rows = state.pg.txns.get(i).map_or(1, |t| t.published_rows.max(1));
        (0..rows).map(move |k| (i, k))
    }

    /// "a transaction is in it (`destination.holds`, the properties) once every row of it is
    /// committed".
    fn holds(state: &State, i: usize) -> bool {
        Self::rows_of(state, i).all(|r| state.dest.contains(&r))
    }

    /// The transactions the destination holds whole.
    fn whole(state: &State) -> BTreeSet<usize> {
        (0..state.pg.txns.len())
            .filter(|&i| Self::holds(state, i))
            .collect()
    }

    // ---- calls ---------------------------------------------------------------------------

    fn arg(&self, state: &State, call: &Call, name: &str, position: usize) -> Option<V> {
        let named = call
            .args
            .iter()
            .find(|a| a.name.as_ref().is_some_and(|n| n.node == name));
        let positional = call.args.iter().filter(|a| a.name.is_none()).nth(position);
        named.or(positional).map(|a| self.eval(state, &a.value))
    }

    /// A call: each outcome, with its value, or `None` when PostgreSQL answered an `ERROR`
    /// ("ends the run as a retryable failure").
    fn call(&self, state: State, call: &Call) -> Vec<(State, Option<V>)> {
        let field = call.field.as_ref().map(|f| f.node.as_str());
        let mut s = state;
        let one = |s: State, v: V| vec![(s, Some(v))];
        // "While stopping, every call that needs a session (SQL, `identify_system`,
        // `start_replication`, `backfill`) fails the run".
        let callee = call.callee.node.as_str();
        let session = callee.starts_with("pg_")
            || matches!(callee, "identify_system" | "start_replication" | "backfill");
        if s.pg.stopping && session {
            return vec![(s, None)];
        }
        // "From then on `start_replication` …, `pg_logical_slot_get_changes`/`peek_changes` …
        // and `pg_replication_slot_advance` … fail the run" (the slot invalidated).
        let reads = matches!(
            callee,
            "start_replication"
                | "pg_logical_slot_get_changes"
                | "pg_logical_slot_peek_changes"
                | "pg_replication_slot_advance"
        );
        let invalidated = s.pg.slot.is_some_and(|d| !d.slot.restart_lsn.is_valid());
        if reads && invalidated {
            return vec![(s, None)];
        }
        // "`pg_current_wal_lsn()` … ERROR during recovery" (insert and flush alike): "A call
        // PostgreSQL answers with an `ERROR` (…, `pg_current_wal_lsn()` on a standby) ends the
        // run as a retryable failure".
        let current = callee.starts_with("pg_current_wal_");
        if current && self.knobs.standby {
            return vec![(s, None)];
        }
        match call.callee.node.as_str() {
            "pg_current_wal_lsn" => {
                let v = V::Lsn(s.pg.wal.write);
                one(s, v)
            }
            "pg_current_wal_insert_lsn" => {
                let v = V::Lsn(s.pg.wal.insert);
                one(s, v)
            }
            "pg_current_wal_flush_lsn" => {
                let v = V::Lsn(s.pg.wal.flush);
                one(s, v)
            }
            // "whether the server is a standby".
            "pg_is_in_recovery" => one(s, V::Bool(self.knobs.standby)),
            // "a standby's replay pointer; on a primary `none` until a PostgreSQL crash, then
            // where its crash recovery ended" (the model's `Server::last_wal_replay_lsn`).
            "pg_last_wal_replay_lsn" => {
                let mut server = Server::at_rest(self.knobs.role(), START);
                server.wal = s.pg.wal;
                let v = server.last_wal_replay_lsn().map_or(V::None, V::Lsn);
                one(s, v)
            }
            "pg_replication_slots" => {
                let slot = s.pg.slot.map(|d| d.slot);
                let v = match (slot, field) {
                    (Some(x), Some("restart_lsn")) => x.restart_lsn,
                    (Some(x), _) => x.confirmed_flush,
                    (None, _) => Lsn::INVALID,
                };
                one(s, V::Lsn(v))
            }
            // "the flush pointer (a standby's: what it received and flushed, or replayed if
            // further)": a standby receives what its primary flushed.
            "identify_system" => {
                let mut server = Server::at_rest(self.knobs.role(), START);
                server.wal = s.pg.wal;
                let v = identify_system_xlogpos(&server);
                one(s, V::Lsn(v))
            }
            "pg_replication_slot_advance" => self.advance(s, call),
            "pg_logical_slot_get_changes" => self.sql_decode(s, call, true),
            "pg_logical_slot_peek_changes" => self.sql_decode(s, call, false),
            "start_replication" => {
                // "decodes from `max(from, confirmed_flush)`, skipping every transaction whose
                // commit record starts before it".
                let from = self
                    .arg(&s, call, "from", 0)
                    .map_or(Lsn::INVALID, |v| v.lsn());
                let Some(slot) = s.pg.slot else {
                    return vec![(s, None)];
                };
                let mut ws = Walsender::start_replication(from, &slot.slot);
                ws.read_first_record();
                let flush = self.read_limit(&s);
                let skipped = Self::live(&s).any(|(i, t)| {
                    t.is_published()
                        && !Self::holds(&s, i)
                        && !Self::holds_whole(&s, i)
                        && t.end_lsn <= flush
                        && txn_needs_skip(t, ws.start_decoding_at)
                });
                s.pg.lost |= skipped;
                s.pg.walsender = Some(ws);
                s.pg.sending = None;
                s.pg.stream_closed = false;
                s.pg.replied = Lsn::INVALID;
                s.pg.asked = false;
                one(s, V::None)
            }
            "standby_status_update" => self.status_update(s, call),
            // "the full load: the destination durably holds every publication transaction
            // committed before it": every row of each, the open batch as it was. A synchronous
            // commit still waiting for its `CommitFlush` has not returned to its client, and
            // PostgreSQL shows it to no snapshot before its flush (15 `xact.c:
            // RecordTransactionCommit` flushes before `ProcArrayEndTransaction`): not yet
            // committed for the load. (An asynchronous one not yet flushed is committed by the
            // page's words; the generator writes `backfill()` only with `commit = sync`.) The
            // page does not say whether a backfill that meets rows already held commits them
            // "more than once" (`destination.duplicated`); it is taken as a load, not a
            // commit: no.
            //
            // "on a standby, what it has replayed": those whose commit record it has replayed
            // (a synchronous commit still waiting for its flush is not flushed, so not
            // replayed either).
            "backfill" => {
                let waiting = s.pg.commit_pending.then(|| s.pg.txns.len() - 1);
                let replayed = |t: &Txn| !self.knobs.standby || t.end_lsn <= s.pg.wal.replay;
                let rows: Vec<Row> = Self::live(&s)
                    .filter(|(i, t)| t.is_published() && Some(*i) != waiting && replayed(t))
                    .flat_map(|(i, _)| Self::rows_of(&s, i))
                    .collect();
                s.dest.extend(rows);
                one(s, V::None)
            }
            "destination.write" => {
                // "`destination.write(m)` writes what the message carries: a whole transaction, a
                // change's row, and for a Begin, a Commit or a keepalive nothing
                // (`destination.write(m.txn)` writes the whole transaction)".
                let rows: Vec<Row> = match self.arg(&s, call, "txns", 0) {
                    Some(
                        V::Txn(Some(i))
                        | V::Msg(Msg {
                            txn: Some(i),
                            part: Part::Whole,
                            ..
                        }),
                    ) => Self::rows_of(&s, i).collect(),
                    Some(V::Msg(Msg {
                        txn: Some(i),
                        part: Part::Change(k),
                        ..
                    })) => vec![(i, k)],
                    Some(V::Txns(set)) => set.iter().flat_map(|&i| Self::rows_of(&s, i)).collect(),
                    _ => vec![],
                };
                s.batch.extend(rows);
                one(s, V::None)
            }
            "destination.commit" => {
                // "commits the open batch durably, with the named `in destination` variables in
                // the same commit".
                // "committed twice (`destination.duplicated`) once any row is".
                let batch = std::mem::take(&mut s.batch);
                for &(i, k) in &batch {
                    if s.dest.contains(&(i, k)) {
                        s.dup.insert(i);
                    }
                }
                s.dest.extend(batch);
                let mut values = Vec::new();
                for arg in &call.args {
                    if let Some(name) = &arg.name {
                        values.push((name.node.clone(), self.eval(&s, &arg.value)));
                    }
                }
                for (name, v) in values {
                    let (storage, ty, _) = &self.decls[&name];
                    debug_assert_eq!(*storage, Storage::Destination);
                    if let (V::Count(n), Type::Counter(lo, hi)) = (&v, ty) {
                        if *n < i128::from(*lo) || *n > i128::from(*hi) {
                            s.at = Where::Fatal(
                                At {
                                    root: Root::EveryRun,
                                    path: vec![],
                                },
                                usize::MAX,
                                None,
                            );
                            return one(s, V::None);
                        }
                    }
                    let v = match (v, ty) {
                        (V::None, Type::Lsn) => V::Lsn(Lsn::INVALID),
                        (v, _) => v,
                    };
                    s.vars.insert(name, v);
                }
                one(s, V::None)
            }
            callee => match callee.split_once('.') {
                Some((chan, op)) if self.chans.contains_key(chan) => {
                    self.channel(s, call, chan, op)
                }
                _ => unreachable!("the generator does not write {callee}"),
            },
        }
    }

    /// "`NAME.send(v)` is a step that adds `v` at the end; it waits while the channel is full.
    /// `x = NAME.receive()` takes the oldest value …; it waits while the channel is empty."
    fn channel(&self, mut s: State, call: &Call, chan: &str, op: &str) -> Vec<(State, Option<V>)> {
        let (ty, capacity) = self.chans[chan];
        let held = s.chans.get_mut(chan).expect("every channel is kept");
        if op == "send" {
            if held.len() >= capacity {
                return vec![];
            }
            let v = self.arg(&s, call, "value", 0).unwrap_or(V::None);
            s.chans.get_mut(chan).expect("kept").push(of_type(v, ty));
            return vec![(s, Some(V::None))];
        }
        if held.is_empty() {
            return vec![];
        }
        let v = held.remove(0);
        vec![(s, Some(v))]
    }

    /// `pg_replication_slot_advance(upto_lsn)`: "moves `confirmed_flush` to `min(upto_lsn,
    /// flush)`; ERROR below `confirmed_flush`"; "A SQL function that takes the slot while a
    /// walsender streams it … gets PostgreSQL's `ERROR`"; "whether an advance moves
    /// `restart_lsn` (and saves the slot) — past the old `confirmed_flush` … or … to the old
    /// `confirmed_flush`" is PostgreSQL's choice.
    fn advance(&self, state: State, call: &Call) -> Vec<(State, Option<V>)> {
        let target = self
            .arg(&state, call, "upto_lsn", 0)
            .map_or(Lsn::INVALID, |v| v.lsn());
        // "moves `confirmed_flush` to `min(upto_lsn, flush)` (replay on a standby)".
        let flush = self.read_limit(&state);
        let Some(slot) = state.pg.slot.filter(|_| state.pg.walsender.is_none()) else {
            return vec![(state, None)];
        };
        let mut out = Vec::new();
        // Staying, or each landing PostgreSQL may choose: "a position `at` …; it becomes the
        // record `(at, restart)`", restart_lsn landing where the record at `at` offers.
        let landings = slot.slot.advance_restarts(target, flush);
        let records = landings
            .into_iter()
            .map(|at| Some((at, Self::record_restart(&state, at))));
        for record in std::iter::once(None).chain(records) {
            let mut s = state.clone();
            let d = s.pg.slot.as_mut().expect("checked");
            match d.slot_advance_via(target, flush, record) {
                Ok(end) => {
                    out.extend(self.crash_before_save(&state, &s));
                    out.push((s, Some(V::Lsn(end))));
                }
                Err(_) => out.push((s, None)),
            }
        }
        out
    }

    /// `pg_logical_slot_peek_changes(upto_lsn, upto_nchanges)`: "decodes from
    /// `confirmed_flush`, the slot unchanged"; `pg_logical_slot_get_changes` "the same, and
    /// `confirmed_flush` moves to the end of the last record it read (past unpublished WAL,
    /// even when it returned nothing); the slot is left dirty"; "A SQL function that takes the
    /// slot while a walsender streams it (advance, get/peek changes, drop) gets PostgreSQL's
    /// `ERROR`". The page lists no `restart_lsn` choice for it (only an advance's and a status
    /// update's), so it moves none; the transactions it returns are those with rows in the
    /// publication (the generator writes no other traffic). With failover slots, "SQL decoding
    /// … waits for the standby to confirm the flush pointer before it decodes: … `standby`
    /// first moves to `flush`, then the call decodes as before" (PostgreSQL 17
    /// `logicalfuncs.c:pg_logical_slot_get_changes_guts`, `WaitForStandbyConfirmation` once the
    /// slot is acquired).
    fn sql_decode(&self, state: State, call: &Call, confirm: bool) -> Vec<(State, Option<V>)> {
        let upto_lsn = self
            .arg(&state, call, "upto_lsn", 0)
            .map(|v| v.lsn())
            .filter(|l| l.is_valid());
        let upto_nchanges = match self.arg(&state, call, "upto_nchanges", 1) {
            Some(V::Count(n)) => u32::try_from(n).ok(),
            _ => None,
        };
        if state.pg.slot.is_none() || state.pg.walsender.is_some() {
            return vec![(state, None)];
        }
        let mut s = state;
        if self.knobs.failover_slots {
            // "waits for the standby to receive the flushed WAL it will read (up to
            // `upto_lsn`)".
            let until = upto_lsn.map_or(s.pg.wal.flush, |u| u.min(s.pg.wal.flush));
            s.pg.standby = s.pg.standby.max(until);
        }
        let request = SqlDecode {
            upto_lsn,
            upto_nchanges,
            confirm,
        };
        let flush = self.read_limit(&s);
        let (names, txns): (Vec<usize>, Vec<Txn>) = Self::live(&s).map(|(i, t)| (i, *t)).unzip();
        let d = s.pg.slot.as_mut().expect("checked");
        // "SQL decoding returns it as that many rows and its BEGIN and COMMIT rows (what
        // `upto_nchanges` counts)"; a transaction outside the publication it does not return.
        let rows = |t: &Txn| {
            if t.published_rows > 0 {
                t.published_rows + 2
            } else {
                0
            }
        };
        let changes = get_changes(d, &txns, flush, request, None, rows);
        let returned = changes
            .txns
            .iter()
            .map(|t| names[txns.iter().position(|x| x == t).expect("a committed one")])
            .collect();
        vec![(s, Some(V::Txns(returned)))]
    }

    /// `standby_status_update(write, flush)`: "moves `confirmed_flush` forward to `flush`,
    /// never back"; with no stream open it fails the run ("a `standby_status_update` fails the
    /// run"). The page does not say when the slot takes a new `restart_lsn` on a status update;
    /// the model's candidates (`restart_candidates`: a transaction boundary the update reaches)
    /// are PostgreSQL's choice, as for an advance.
    fn status_update(&self, state: State, call: &Call) -> Vec<(State, Option<V>)> {
        let flush = self
            .arg(&state, call, "flush", 1)
            .map_or(Lsn::INVALID, |v| v.lsn());
        let write = self
            .arg(&state, call, "write", 0)
            .map_or(flush, |v| v.lsn());
        if state.pg.walsender.is_none() {
            return vec![(state, None)];
        }
        let Some(slot) = state.pg.slot else {
            return vec![(state, None)];
        };
        let ends: Vec<Lsn> = Self::live(&state).map(|(_, t)| t.end_lsn).collect();
        // "each candidate `at` maps to: `at` itself when nothing runs there …, else restart =
        // first_lsn of the oldest running, offered only if restart > the slot's restart_lsn and
        // at <= the update's flush (otherwise that candidate is dropped from the choice list)".
        let offered = |at: Lsn| {
            let restart = Self::record_restart(&state, at);
            let held = restart != at;
            (!held || (restart > slot.slot.restart_lsn && at <= flush)).then_some(restart)
        };
        let candidates: Vec<Option<Lsn>> = std::iter::once(None)
            // "up to what it confirms and the flush pointer …: what the walsender can have
            // decoded", which a failover slot's walsender reads only as far as the standby has.
            .chain(
                restart_candidates(flush.min(self.send_limit(&state)), &slot.slot, ends)
                    .filter_map(offered)
                    .map(Some),
            )
            .collect();
        let update = StandbyStatusUpdate {
            write,
            flush,
            apply: flush,
            reply_requested: false,
        };
        // "A release before … lets a status update move `confirmed_flush` back".
        let mut out = Vec::new();
        for candidate in candidates {
            let mut s = state.clone();
            let d = s.pg.slot.as_mut().expect("checked");
            process_standby_reply_on(self.knobs.release, d, &update, candidate);
            out.extend(self.crash_before_save(&state, &s));
            if self.knobs.pg_stops > 0 {
                s.pg.replied = if flush.is_valid() { flush } else { write };
                s.pg.asked = false;
                self.stream_done(&mut s);
            }
            out.push((s, Some(V::None)));
        }
        out
    }

    // ---- expressions -----------------------------------------------------------------------

    /// The value of `expr` ("Expressions").
    pub fn eval(&self, state: &State, expr: &Expr) -> V {
        match &expr.node {
            ExprKind::None => V::None,
            ExprKind::Bool(b) => V::Bool(*b),
            ExprKind::Number(n) => V::Count(i128::from(*n)),
            ExprKind::Lsn(l) => V::Lsn(Lsn(*l)),
            // "Reading `NAME` gives how many values it holds."
            ExprKind::Var(name) if self.chans.contains_key(name) => {
                V::Count(state.chans.get(name).map_or(0, |c| c.len() as i128))
            }
            ExprKind::Var(name) => state.vars.get(name).cloned().unwrap_or(V::None),
            ExprKind::Field(of, field) => self.field(state, of, &field.node),
            ExprKind::MinMax { max, args } => {
                let a = self.eval(state, &args[0]).lsn();
                let b = self.eval(state, &args[1]).lsn();
                V::Lsn(if *max { a.max(b) } else { a.min(b) })
            }
            ExprKind::Not(a) => V::Bool(!self.eval(state, a).truth()),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.eval(state, a), self.eval(state, b));
                binary(*op, a, b)
            }
            ExprKind::In(name) => V::Bool(self.inside(state, &name.node)),
            ExprKind::At(name) => V::Bool(self.at_label(state, &name.node)),
        }
    }

    /// "`in NAME` (the procedure or labelled block `NAME` is running in some process: its
    /// step is next, or a procedure it called is running; a process's name too)". A process
    /// whose body has ended is not running.
    fn inside(&self, state: &State, name: &str) -> bool {
        let Where::Run(all) = &state.at else {
            return false;
        };
        let roots = [Root::Named(name.to_owned()), Root::Process(name.to_owned())];
        // "`in consumer` holds in any member" of a family.
        let member = format!("{name}[");
        all.iter().flatten().any(|f| match f {
            Frame::Seq { at, .. } | Frame::Retry { at, .. } | Frame::Loop { at, .. } => {
                roots.contains(&at.root)
                    || matches!(&at.root, Root::Process(p) if p.starts_with(&member))
            }
            _ => false,
        }) || self.next_labels(state).iter().any(|l| l == name)
    }

    /// The labels of the processes' next steps.
    fn next_labels(&self, state: &State) -> Vec<String> {
        let Where::Run(all) = &state.at else {
            return vec![];
        };
        all.iter()
            .filter_map(|frames| match frames.last() {
                Some(Frame::Seq { at, next }) => self.block(at).stmts[*next].label.clone(),
                _ => None,
            })
            .map(|l| l.node)
            .collect()
    }

    /// "`at NAME` (some process's next step is `NAME`, or the pipeline stopped at the `fail
    /// fatal` labelled `NAME`)". The page does not say whether a `fail fatal` inside the
    /// labelled block `NAME` is "at `NAME`": it is taken so, since the step that stopped is
    /// `NAME`.
    fn at_label(&self, state: &State, name: &str) -> bool {
        match &state.at {
            Where::Fatal(_, _, inside) => inside.as_deref() == Some(name),
            _ => self.next_labels(state).iter().any(|l| l == name),
        }
    }

    fn field(&self, state: &State, of: &Expr, field: &str) -> V {
        if let ExprKind::Var(name) = &of.node {
            if !state.vars.contains_key(name) && (name == "slot" || name == "wal") {
                return V::Lsn(self.observe(state, name, field));
            }
            // "`destination.holds` (the transactions the destination durably holds) and
            // `destination.duplicated` (those it committed more than once), both txns".
            if name == "destination" && !state.vars.contains_key(name) {
                return V::Txns(match field {
                    "holds" => Self::whole(state),
                    _ => state.dup.clone(),
                });
            }
            // "an `async` variable's copy on disk, `NAME.flushed`".
            if field == "flushed" {
                if let Some(v) = state.flushed.get(name) {
                    return v.clone();
                }
            }
        }
        let txn = |i: Option<usize>| match i.and_then(|i| state.pg.txns.get(i)) {
            None => V::None,
            Some(t) => V::Lsn(match field {
                "first_lsn" => t.first_lsn,
                "commit_lsn" => t.commit_lsn,
                _ => t.end_lsn,
            }),
        };
        match self.eval(state, of) {
            // "`.is_begin`, `.is_change`, `.is_commit` (also true of a whole transaction) and
            // `.index`, a change's row in its transaction, from 1 (0 for any other message)".
            V::Msg(m) => match field {
                "txn" => V::Txn(m.txn),
                "is_keepalive" => V::Bool(m.part == Part::Keepalive),
                "wal_end" | "lsn" => V::Lsn(m.lsn),
                "reply_requested" => V::Bool(m.reply_requested),
                "is_begin" => V::Bool(m.part == Part::Begin),
                "is_change" => V::Bool(matches!(m.part, Part::Change(_))),
                "is_commit" => V::Bool(matches!(m.part, Part::Commit | Part::Whole)),
                "index" => V::Count(match m.part {
                    Part::Change(k) => i128::from(k) + 1,
                    _ => 0,
                }),
                _ => V::None,
            },
            V::Txn(i) => txn(i),
            V::Txns(set) => match field {
                "first" => V::Txn(set.first().copied()),
                "last" => V::Txn(set.last().copied()),
                // "txns have `.end_lsn` (of the last, `none` when empty)".
                _ => match set.last() {
                    Some(&i) => txn(Some(i)),
                    None => V::Lsn(Lsn::INVALID),
                },
            },
            // "A field of `none` is `none`".
            _ => V::None,
        }
    }

    /// `slot.…` and `wal.…`, for properties.
    fn observe(&self, state: &State, of: &str, field: &str) -> Lsn {
        let slot = state.pg.slot.map(|d| d.slot);
        match (of, field) {
            ("slot", "confirmed_flush") => slot.map_or(Lsn::INVALID, |s| s.confirmed_flush),
            ("slot", "restart_lsn") => slot.map_or(Lsn::INVALID, |s| s.restart_lsn),
            ("slot", "saved_confirmed_flush") => {
                slot.map_or(Lsn::INVALID, |s| s.saved.confirmed_flush)
            }
            ("slot", "saved_restart_lsn") => slot.map_or(Lsn::INVALID, |s| s.saved.restart_lsn),
            ("wal", "removed_before") => state.removed_before,
            ("wal", "insert") => state.pg.wal.insert,
            ("wal", "write") => state.pg.wal.write,
            ("wal", "flush") => state.pg.wal.flush,
            ("wal", "replay") => state.pg.wal.replay,
            _ => Lsn::INVALID,
        }
    }

    // ---- the environment -------------------------------------------------------------------

    /// Every action of `state` (the connector's steps, and "Between any two steps … the
    /// environment may act") with its weakly fair class, if any: "Process 0's fair steps,
    /// with the background flush of `async` variables, are the weakly fair class `connector`;
    /// each other process's fair steps are a class of their own"; "The walwriter and the
    /// checkpointer are fair; client transactions and faults are not"; the commit flush is fair
    /// ("under weak fairness of the connector's fair steps, the commit flush, the walwriter,
    /// the checkpointer"). A connector step that leaves the state as it was (a `loop` around a
    /// `wait` whose condition holds) is kept, a step taken; an environment action that changes
    /// nothing is left out.
    pub fn labelled(&self, state: &State) -> Vec<(Option<Class>, State)> {
        let mut out: Vec<(Option<Class>, State)> = self
            .moves(state)
            .into_iter()
            .map(|(i, fair, s)| (fair.then_some(Class::Process(i)), s))
            .collect();
        let env = self.environment(state);
        out.extend(env.into_iter().filter(|(_, s)| s != state));
        // A transaction goes out part way only on an open stream.
        debug_assert!(out
            .iter()
            .all(|(_, s)| s.pg.sending.is_none() || s.pg.walsender.is_some()));
        out
    }

    /// The environment's actions, each with its class.
    fn environment(&self, state: &State) -> Vec<(Option<Class>, State)> {
        let k = &self.knobs;
        let mut out = Vec::new();
        let pg = &state.pg;
        // "One client backend: a transaction of `txn_pages` … pages is inserted in one step
        // (`wal_buffers` writes out what does not fit), and a synchronous one then waits for
        // its `CommitFlush` step".
        // "no checkpoint runs, no client commits" while stopping; a standby's stop is its own,
        // and "the primary's commits … go on" (the page says both: the clients are the
        // primary's, which is not stopping).
        if !pg.commit_pending && (!pg.stopping || k.standby) {
            // "The plain `Commit{...}` stays enabled while a transaction is open, but its cap
            // becomes (committed + (1 if one is open)) < TXNS_MAX."
            let room = pg.txns.len() + usize::from(pg.open.is_some()) < TXNS_MAX;
            for (published, left) in [
                (true, pg.published < k.transactions),
                (false, pg.other < k.other_traffic),
            ] {
                if !left || !room {
                    continue;
                }
                for &mode in &k.commits {
                    let mut s = state.clone();
                    self.commit(&mut s, published, mode);
                    out.push((None, s));
                }
            }
            if k.interleave {
                out.extend(self.interleaved(state));
            }
        } else if pg.commit_pending {
            let mut s = state.clone();
            s.pg.wal.commit_flush();
            s.pg.commit_pending = false;
            out.push((Some(Class::Commit), s));
        }
        let mut s = state.clone();
        s.pg.wal.walwriter_write(PAGE);
        out.push((Some(Class::Walwriter), s));
        // The walwriter's flush does not overtake a synchronous commit's own (the docs: "a
        // synchronous one then waits for its `CommitFlush` step").
        if !pg.commit_pending {
            let mut s = state.clone();
            s.pg.wal.walwriter_flush();
            out.push((Some(Class::Walwriter), s));
        }
        if pg.stopping {
            // "`PgStopped` (fair), once no stream is left".
            if pg.walsender.is_none() && self.standby_has_all(state) {
                let choices: &[bool] = if k.standby { &[false, true] } else { &[false] };
                for &skipped in choices {
                    let mut s = state.clone();
                    self.pg_stopped(&mut s, skipped);
                    out.push((Some(Class::Shutdown), s));
                }
            }
            // "`WalSenderTimeout` (fair …) ends a caught-up stream whose connector has read that
            // request and not replied".
            if pg.asked && self.caught_up(state).is_some() {
                let mut s = state.clone();
                s.pg.close_stream();
                s.pg.stream_closed = true;
                out.push((Some(Class::Shutdown), s));
            }
        }
        out.extend(self.standby_actions(state));
        // The replay: fair ("under weak fairness of … the replay"), the model's
        // `Wal::replay_to_flush`; "a standby replays nothing" while stopping.
        if k.standby && !pg.stopping && pg.wal.replay < pg.wal.flush {
            let mut s = state.clone();
            s.pg.wal.replay_to_flush();
            out.push((Some(Class::Replay), s));
        }
        // "no checkpoint runs" while stopping: one under way in two steps still ends.
        if k.checkpoints && (!pg.stopping || state.checkpoint.is_some()) {
            if let Some(s) = self.checkpoint(state) {
                out.push((Some(Class::Checkpointer), s));
            }
        }
        // "then `flush NAME` or the background flush step": not once the pipeline is done.
        if state.at != Where::Done {
            for (name, v) in &state.flushed {
                if state.vars[name] != *v {
                    let mut s = state.clone();
                    s.flushed.insert(name.clone(), s.vars[name].clone());
                    out.push((Some(Class::Process(0)), s));
                }
            }
        }
        out.extend(self.faults(state).into_iter().map(|s| (None, s)));
        out
    }

    /// The standby's fair actions: "`StandbyReceive` … enabled when a standby is modelled and
    /// `standby < flush` …; sets `standby = flush`. Enabled while PostgreSQL is stopping too"
    /// (the model's `failover.rs:standby_receive`); "`SlotSync` … enabled when failover_slots
    /// is on and one cycle of the slot sync worker would change the copy".
    fn standby_actions(&self, state: &State) -> Vec<(Option<Class>, State)> {
        let mut out = Vec::new();
        if self.knobs.has_standby() && state.pg.standby < state.pg.wal.flush {
            let mut s = state.clone();
            s.pg.standby = s.pg.wal.flush;
            out.push((Some(Class::StandbyReceive), s));
        }
        if self.knobs.failover_slots {
            let remote = state.pg.slot.map(|d| d.slot);
            let synced = sync_slot(remote, state.pg.standby, state.pg.synced);
            if synced != state.pg.synced {
                let mut s = state.clone();
                s.pg.synced = synced;
                out.push((Some(Class::SlotSync), s));
            }
        }
        out
    }

    /// The crashes the knobs still allow.
    fn faults(&self, state: &State) -> Vec<State> {
        let k = &self.knobs;
        let mut out = Vec::new();
        // "a kill of a `killable` process whose body has not ended (waiting or not) …: that
        // process alone goes back to its first step", "the other processes and every variable
        // as they were".
        if let Where::Run(all) = &state.at {
            if state.kills < k.kills {
                for (i, frames) in all.iter().enumerate() {
                    if frames.is_empty() || !self.killable(&self.procs[i]) {
                        continue;
                    }
                    let mut s = state.clone();
                    s.kills += 1;
                    *Self::frames(&mut s, i) = vec![Self::start_of(self.procs[i].clone())];
                    self.settle(&mut s, i, false);
                    self.end_if_all_ended(&mut s);
                    out.push(s);
                }
            }
        }
        // "PostgreSQL may stop cleanly and start again (`PgStop`, not fair, …, not in
        // `crashes`)".
        if state.pg_stops < k.pg_stops && !state.pg.stopping {
            let mut s = state.clone();
            self.pg_stop(&mut s);
            out.push(s);
        }
        // "`Failover` (a fault, NOT fair, counted in `failovers`, not in `crashes`): enabled
        // while `failovers < env failovers`".
        if state.failovers < k.failovers {
            let mut s = state.clone();
            self.failover(&mut s);
            out.push(s);
        }
        // "the walsender may end an open stream while PostgreSQL stays up (`StreamDrop`, not
        // fair, counted in the `stream_drops` column, not in `crashes`) … Not while a clean stop
        // waits". An open stream is one `start_replication` opened in this run that nothing has
        // ended yet (on a standby too: the page does not restrict the fault to a primary).
        if state.stream_drops < k.stream_drops && state.pg.walsender.is_some() && !state.pg.stopping
        {
            let mut s = state.clone();
            self.stream_drop(&mut s);
            out.push(s);
        }
        if state.connector_crashes + state.pg_crashes + state.os_crashes < k.crashes {
            // "No connector crash is taken at a run's end"; none once the pipeline stopped.
            if state.connector_crashes < k.connector_crashes && matches!(state.at, Where::Run(_)) {
                let mut s = state.clone();
                self.connector_crash(&mut s);
                out.push(s);
            }
            if state.pg_crashes < k.pg_crashes {
                let mut s = state.clone();
                self.pg_crash(&mut s, false);
                out.push(s);
            }
            if state.os_crashes < k.os_crashes {
                let mut s = state.clone();
                self.pg_crash(&mut s, true);
                out.push(s);
            }
        }
        out
    }

    /// "Checkpoints and WAL removal": the checkpointer's one action in `state`, if enabled.
    fn checkpoint(&self, state: &State) -> Option<State> {
        let k = &self.knobs;
        let mut s = state.clone();
        let restart = state.pg.slot.map(|d| d.slot.restart_lsn);
        // "`CheckpointEnd` flushes and removes by the slot's `restart_lsn` as it is then".
        if let Some((redo, _)) = s.checkpoint.take() {
            self.checkpoint_end(&mut s, redo, restart);
            return Some(s);
        }
        // "enabled when it has work: the slot is dirty, WAL is unflushed (on a primary), or, in
        // a file that keeps the horizon, it would remove WAL".
        // "An invalidated slot … needs no WAL".
        let needs = restart.filter(|l| l.is_valid());
        let redo = self.redo(state);
        let removes = k.horizon && removal_horizon(needs, redo) > state.removed_before;
        let dirty = state.pg.slot.is_some_and(|d| d.dirty);
        let unflushed = !k.standby && state.pg.wal.flush < state.pg.wal.insert;
        // "A checkpoint is enabled when it would invalidate the slot."
        let invalidates = self.obsolete(state, redo);
        if !(dirty || unflushed || removes || invalidates) {
            return None;
        }
        // "It saves a dirty slot" (`CheckpointStart` takes the redo pointer too).
        if let Some(slot) = s.pg.slot.as_mut() {
            slot.checkpoint();
        }
        if k.release.checkpoint_keeps_slot_minimum_from_start() {
            // "removes the WAL before the earlier of its redo pointer … and the slot's
            // `restart_lsn` when it started".
            self.checkpoint_end(&mut s, redo, restart);
        } else if k.horizon || k.keep_pages.is_some() {
            s.checkpoint = Some((redo, restart.unwrap_or(Lsn::INVALID)));
        } else {
            s.checkpoint = Some((Lsn::INVALID, Lsn::INVALID));
        }
        Some(s)
    }

    /// A checkpoint's end: "flushes the WAL (on a primary)", and "`wal.removed_before` rises to"
    /// the earlier of `redo` and `restart`, in a file that keeps the horizon.
    fn checkpoint_end(&self, s: &mut State, redo: Lsn, restart: Option<Lsn>) {
        if !self.knobs.standby {
            s.pg.wal.checkpoint_flush();
            s.pg.commit_pending = false;
        }
        if self.knobs.horizon {
            let needs = restart.filter(|l| l.is_valid());
            s.removed_before = s.removed_before.max(removal_horizon(needs, redo));
        }
        // "Slot invalidation": "a walsender streaming from it is terminated …, `restart_lsn`
        // becomes `none` and the slot is saved so".
        if self.obsolete(s, redo) {
            if let Some(d) = s.pg.slot.as_mut() {
                d.slot.invalidate();
                d.dirty = false;
            }
            if s.pg.close_stream() {
                s.pg.stream_closed = true;
            }
        }
    }

    /// A checkpoint's redo pointer: "the insert pointer when it started; a standby's replay
    /// pointer" (a restartpoint's, `xlog.c:CreateRestartPoint`).
    fn redo(&self, state: &State) -> Lsn {
        if self.knobs.standby {
            state.pg.wal.replay
        } else {
            state.pg.wal.insert
        }
    }

    /// "a checkpoint … whose redo pointer … lies more than `N` pages past the page of the
    /// slot's `restart_lsn` invalidates the slot when its `restart_lsn` is below the start of
    /// the `N`-th page before the redo pointer's".
    fn obsolete(&self, s: &State, redo: Lsn) -> bool {
        let (Some(n), Some(d)) = (self.knobs.keep_pages, s.pg.slot) else {
            return false;
        };
        let restart = d.slot.restart_lsn;
        if !restart.is_valid() {
            return false;
        }
        let (page, restart_page) = (redo.bytes() / PAGE, restart.bytes() / PAGE);
        page > restart_page + n && restart.bytes() < (page - n) * PAGE
    }

    /// "While one is under way, an advance or a status update that moves `restart_lsn` may
    /// meet … the checkpoint's end between its update of the slot in memory and its save, and a
    /// PostgreSQL crash before the save": the outcome beside the call's own, if any.
    fn crash_before_save(&self, before: &State, after: &State) -> Option<(State, Option<V>)> {
        let k = &self.knobs;
        let restart = |s: &State| s.pg.slot.map(|d| d.slot.restart_lsn);
        // "a PostgreSQL crash (an operating-system crash when `pg_crashes` allows none)".
        let os = before.pg_crashes >= k.pg_crashes;
        let crash_left = before.connector_crashes + before.pg_crashes + before.os_crashes
            < k.crashes
            && (!os || before.os_crashes < k.os_crashes);
        let (redo, _) = before.checkpoint?;
        if !(crash_left && restart(after) > restart(before)) {
            return None;
        }
        let mut s = after.clone();
        s.checkpoint = None;
        self.checkpoint_end(&mut s, redo, restart(after));
        // "the crash restores the copy saved before the call".
        if let (Some(d), Some(old)) = (s.pg.slot.as_mut(), before.pg.slot) {
            d.slot.saved = old.slot.saved;
        }
        self.pg_crash(&mut s, os);
        Some((s, None))
    }

    fn commit(&self, s: &mut State, published: bool, mode: CommitMode) {
        let k = &self.knobs;
        let first_lsn = s.pg.wal.insert;
        s.pg.wal
            .append(k.txn_pages * PAGE, PAGE, k.wal_buffers_pages * PAGE);
        let end_lsn = s.pg.wal.insert;
        // The page does not place the commit record inside the transaction's pages: its last
        // 48 bytes, as the built-in `olake-bootstrap` workload lays it out.
        s.pg.txns.push(Txn {
            xid: 730 + s.pg.txns.len() as u32,
            first_lsn,
            changes_end: end_lsn.minus(48),
            commit_lsn: end_lsn.minus(48),
            end_lsn,
            // "rows each published client transaction inserts: the changes it sends, the rows
            // SQL decoding returns for it".
            published_rows: if published { k.rows } else { 0 },
            mode,
        });
        s.pg.commit_pending = mode == CommitMode::Sync;
        if published {
            s.pg.published += 1;
        } else {
            s.pg.other += 1;
        }
    }

    /// `env interleave = on`, once no synchronous commit waits for its flush and no clean stop
    /// is under way: "`Open{pages=P}` … enabled when no transaction is open, published
    /// transactions begun < `transactions` knob, and (committed transactions + 1) < the model's
    /// TXNS_MAX"; "`CommitOpen{commit=sync|async}` (one action per commit mode the `commit` knob
    /// allows): enabled while a transaction is open", weakly fair.
    fn interleaved(&self, state: &State) -> Vec<(Option<Class>, State)> {
        let k = &self.knobs;
        let pg = &state.pg;
        if let Some(open) = pg.open {
            return k
                .commits
                .iter()
                .map(|&mode| {
                    let mut s = state.clone();
                    self.commit_open_txn(&mut s, open, mode);
                    (Some(Class::Commit), s)
                })
                .collect();
        }
        if pg.published >= k.transactions || pg.txns.len() + 1 >= TXNS_MAX {
            return vec![];
        }
        let mut s = state.clone();
        self.open_txn(&mut s);
        vec![(None, s)]
    }

    /// `Open{pages=P}`: "first_lsn = WAL insert pointer; the WAL appends `P * PAGE_BYTES - 48`
    /// bytes …; changes_end = insert pointer after; published_rows = `rows` knob; xid = 1000 +
    /// (published transactions begun before this one); the count of published transactions
    /// begun increases by one (it counts toward `transactions`)."
    fn open_txn(&self, s: &mut State) {
        let k = &self.knobs;
        let first_lsn = s.pg.wal.insert;
        s.pg.wal.append(
            k.txn_pages * PAGE - COMMIT_BYTES,
            PAGE,
            k.wal_buffers_pages * PAGE,
        );
        s.pg.open = Some(OpenTxn {
            xid: 1000 + u32::from(s.pg.published),
            first_lsn,
            changes_end: s.pg.wal.insert,
            published_rows: k.rows,
        });
        s.pg.published += 1;
    }

    /// `CommitOpen{commit=mode}`: "commit_lsn = insert pointer; append 48 bytes …; end_lsn =
    /// insert pointer after; the committed `Txn` … is appended to the committed transactions
    /// (commit order); a sync commit then waits for its flush exactly as a plain sync commit
    /// does".
    fn commit_open_txn(&self, s: &mut State, open: OpenTxn, mode: CommitMode) {
        let k = &self.knobs;
        let commit_lsn = s.pg.wal.insert;
        s.pg.wal
            .append(COMMIT_BYTES, PAGE, k.wal_buffers_pages * PAGE);
        s.pg.txns.push(Txn {
            xid: open.xid,
            first_lsn: open.first_lsn,
            changes_end: open.changes_end,
            commit_lsn,
            end_lsn: s.pg.wal.insert,
            published_rows: open.published_rows,
            mode,
        });
        s.pg.open = None;
        s.pg.commit_pending = mode == CommitMode::Sync;
    }

    /// The `restart_lsn` a running-xacts record at `at` offers: "a running-xacts record the slot
    /// meets inside any transaction (begun before the record, its commit record at or after it)
    /// offers that transaction's first change, not the record's own position" — the open one
    /// if its first change lies before `at`, and every committed one with `first_lsn < at <=
    /// commit_lsn` — else `at` itself.
    fn record_restart(state: &State, at: Lsn) -> Lsn {
        let open = state
            .pg
            .open
            .filter(|o| o.first_lsn < at)
            .map(|o| o.first_lsn);
        let interleaved = Self::live(state)
            .map(|(_, t)| t)
            .filter(|t| t.first_lsn < at && at <= t.commit_lsn)
            .map(|t| t.first_lsn);
        running_xacts_restart(at, open.into_iter().chain(interleaved))
    }

    // ---- properties ------------------------------------------------------------------------

    /// Whether transaction `i` is in the open batch, a variable or a channel's place.
    fn held(s: &State, i: usize) -> bool {
        s.batch.iter().any(|&(j, _)| j == i) || Self::in_a_variable(s, i)
    }

    /// Whether a variable or a channel's place names transaction `i`.
    fn in_a_variable(s: &State, i: usize) -> bool {
        let holds = |v: &V| match v {
            V::Txn(Some(j)) | V::Msg(Msg { txn: Some(j), .. }) => *j == i,
            V::Txns(set) => set.contains(&i),
            _ => false,
        };
        s.vars.values().any(holds) || s.chans.values().flatten().any(holds)
    }

    /// "the connector does not hold whole either — in its open batch (with `env messages =
    /// changes`, every row of it in the batch or the destination), a variable or a channel's
    /// place".
    fn holds_whole(s: &State, i: usize) -> bool {
        Self::rows_of(s, i).all(|r| s.batch.contains(&r) || s.dest.contains(&r))
            || Self::in_a_variable(s, i)
    }

    fn undelivered<'s>(&self, s: &'s State) -> impl Iterator<Item = &'s Txn> + 's {
        // "no property counts" the transactions a failover lost.
        Self::live(s)
            .filter(move |(i, t)| t.is_published() && !Self::holds(s, *i))
            .map(|(_, t)| t)
    }

    /// The built-in property `id` in state `s` ("Properties and expectations").
    pub fn built_in(&self, id: &str, s: &State) -> bool {
        match id {
            "ack-within-durable" => s.pg.slot.is_none_or(|d| {
                cdc::ack_within_durable(d.slot.confirmed_flush, self.undelivered(s))
            }),
            "no-fatal-error" => !matches!(s.at, Where::Fatal(..)),
            // "replay ≤ flush ≤ write ≤ insert (replay on a standby)".
            "wal-pointers-ordered" => cdc::wal_pointers_ordered(&s.pg.wal, self.knobs.role()),
            "no-data-loss" => self.no_data_loss(s),
            "no-needed-wal-removed" => s.pg.slot.is_none_or(|d| {
                !d.slot.restart_lsn.is_valid()
                    || d.slot.restart_lsn >= s.removed_before
                        && d.slot.saved.restart_lsn >= s.removed_before
            }),
            other => unreachable!("{other}"),
        }
    }

    /// "no-data-loss fails when a stream skips a committed publication transaction the
    /// destination does not hold (at `start_replication`, or later for one committed after it
    /// …); in a quiescent state where the destination lacks one: the workload done, the WAL
    /// flushed, no stop under way, and no connector step possible — or none but reading an idle
    /// keepalive …; once every run is over, only those the slot would not send again count. A
    /// stopped pipeline (`fail fatal`) is `no-fatal-error`'s, not this one's."
    fn no_data_loss(&self, s: &State) -> bool {
        if s.pg.lost {
            return false;
        }
        // "at once when … any one while the slot is invalidated, is neither in the destination,
        // nor in its open batch, nor in any variable, in a file that calls `backfill()` nowhere"
        // (the slot is there from the start: no transaction is committed before it).
        let invalidated = s.pg.slot.is_some_and(|d| !d.slot.restart_lsn.is_valid());
        let lost = Self::live(s).any(|(i, t)| {
            t.is_published()
                && !Self::holds(s, i)
                && !Self::held(s, i)
                && (invalidated || self.behind_for_good(s, i, t))
        });
        if lost && !self.knobs.backfills {
            return false;
        }
        let k = &self.knobs;
        let quiescent = s.pg.published >= k.transactions
            && s.pg.other >= k.other_traffic
            && !s.pg.commit_pending
            // "The workload is done" only once no transaction is open (`env interleave`).
            && s.pg.open.is_none()
            && s.pg.wal.flush >= s.pg.wal.insert
            // The specification is silent here: a walsender held back by a failover slot's
            // standby sends once `StandbyReceive` (fair) catches up, so a state where it waits is
            // not quiescent either.
            && self.send_limit(s) >= s.pg.wal.flush
            && !s.pg.stopping
            && self.at_rest(s);
        if !quiescent {
            return true;
        }
        match (s.pg.slot, &s.at) {
            // "(all of them, once it is invalidated)".
            (Some(d), Where::Done) => self.undelivered(s).all(|t| {
                d.slot.restart_lsn.is_valid() && !txn_needs_skip(t, d.slot.confirmed_flush)
            }),
            _ => self.undelivered(s).next().is_none(),
        }
    }

    /// "no connector step possible — or none but reading an idle keepalive, the walsender
    /// having nothing else to send, with no undelivered transaction in the batch or a variable
    /// and no `backfill()` in a `for each message` body".
    fn at_rest(&self, s: &State) -> bool {
        let all = match &s.at {
            Where::Done => return true,
            Where::Fatal(..) | Where::RunEnd => return false,
            Where::Run(all) => all,
        };
        let mut idle = false;
        for (i, frames) in all.iter().enumerate() {
            if self.proc_step(s, i).is_empty() {
                continue;
            }
            let reads = match frames.last() {
                Some(Frame::Seq { at, next }) => {
                    matches!(self.block(at).stmts[*next].kind, StmtKind::ForEach { .. })
                }
                _ => false,
            };
            let caught_up = self.caught_up(s).is_some();
            if !(reads && caught_up && self.knobs.keepalives > 0) {
                return false;
            }
            idle = true;
        }
        !idle || !self.delivers_later(s)
    }

    /// "one behind the slot for good (`confirmed_flush`, in memory and on disk, past its commit
    /// record by the start rule, the stream open now, if any, having sent it or skipping it, and
    /// no failover left)".
    fn behind_for_good(&self, s: &State, i: usize, t: &Txn) -> bool {
        let Some(d) = s.pg.slot else {
            return false;
        };
        let stream_done_with_it = s.pg.walsender.is_none_or(|w| {
            txn_needs_skip(t, w.start_decoding_at)
                || (w.read_to >= t.end_lsn && s.pg.sending.is_none_or(|(j, _)| j != i))
        });
        txn_needs_skip(t, d.slot.confirmed_flush)
            && txn_needs_skip(t, d.slot.saved.confirmed_flush)
            && stream_done_with_it
            && s.failovers >= self.knobs.failovers
    }

    /// "no run of further steps from there — the connector's (idle keepalives read, a batch
    /// committed, a `backfill()`, a new run's stream) and PostgreSQL's background work, but no
    /// fault, no failing call and no client transaction — puts anything more in the
    /// destination (walcheck looks ahead over at most 10,000 states; past that it takes the
    /// connector as able to deliver)".
    fn delivers_later(&self, start: &State) -> bool {
        let counters = |s: &State| {
            (
                [
                    s.connector_crashes,
                    s.pg_crashes,
                    s.os_crashes,
                    s.pg_stops,
                    s.kills,
                    s.call_failures,
                    s.failovers,
                    s.stream_drops,
                ],
                (s.pg.published, s.pg.other, s.pg.open.is_some()),
            )
        };
        let mut seen = BTreeSet::from([start.clone()]);
        let mut todo = vec![start.clone()];
        while let Some(s) = todo.pop() {
            for (_, next) in self.labelled(&s) {
                if counters(&next) != counters(&s) {
                    continue;
                }
                // "a run that reaches the end of every run counts as one that delivers".
                let done = matches!(next.at, Where::Done);
                if done || next.dest != start.dest || seen.len() >= 10_000 {
                    return true;
                }
                if seen.insert(next.clone()) {
                    todo.push(next);
                }
            }
        }
        false
    }

    /// "and `batch` the rows of the open batch" with `env messages = changes`; otherwise its
    /// transactions.
    fn batch_shown(&self, s: &State) -> String {
        let names: Vec<String> = if self.knobs.by_change {
            s.batch
                .iter()
                .map(|&(i, k)| format!("T{} row {}", i + 1, k + 1))
                .collect()
        } else {
            let txns: BTreeSet<usize> = s.batch.iter().map(|&(i, _)| i).collect();
            return txn_set(&txns);
        };
        format!("[{}]", names.join(", "))
    }

    /// A state as the comparison sees it: the file's variables (and each `async` one's copy on
    /// disk), the destination, the WAL pointers and the slot, in the trace's spelling.
    pub fn project(&self, s: &State) -> BTreeMap<String, String> {
        let lsn = |l: Lsn| shown_lsn(l);
        let slot = s.pg.slot.map(|d| d.slot);
        let mut p = BTreeMap::from([
            ("insert".to_owned(), lsn(s.pg.wal.insert)),
            ("write".to_owned(), lsn(s.pg.wal.write)),
            ("flush".to_owned(), lsn(s.pg.wal.flush)),
            // "`replay` … a standby's replay pointer" (compared in a standby's files).
            ("replay".to_owned(), lsn(s.pg.wal.replay)),
            (
                "confirmed_flush".to_owned(),
                lsn(slot.map_or(Lsn::INVALID, |x| x.confirmed_flush)),
            ),
            (
                "restart_lsn".to_owned(),
                lsn(slot.map_or(Lsn::INVALID, |x| x.restart_lsn)),
            ),
            (
                "saved_confirmed_flush".to_owned(),
                lsn(slot.map_or(Lsn::INVALID, |x| x.saved.confirmed_flush)),
            ),
            ("destination".to_owned(), row_set(s)),
            ("batch".to_owned(), self.batch_shown(s)),
            ("pg_stops".to_owned(), s.pg_stops.to_string()),
            ("keepalives".to_owned(), s.pg.keepalives.to_string()),
            (
                "committed".to_owned(),
                txn_set(&Self::live(s).map(|(i, _)| i).collect()),
            ),
            (
                "transactions".to_owned(),
                transactions(&s.pg.txns, &s.pg.gone),
            ),
        ]);
        // "A file that keeps the horizon shows `removed_before`; one that keeps it, sets
        // `os_crashes` or sets a `pg_version` release also shows `os_crashes` … and `checkpoint`".
        let k = &self.knobs;
        if k.horizon {
            p.insert("removed_before".to_owned(), lsn(s.removed_before));
        }
        if k.horizon || k.wal_faults {
            p.insert("os_crashes".to_owned(), s.os_crashes.to_string());
            let checkpoint = match s.checkpoint {
                None => "none".to_owned(),
                Some((redo, restart)) => {
                    format!("redo {}, restart_lsn {}", lsn(redo), lsn(restart))
                }
            };
            p.insert("checkpoint".to_owned(), checkpoint);
        }
        // "Trace columns (shown when the file sets `env failovers` or `env failover_slots`):
        // `standby`, `failovers`; with failover_slots on also `synced_confirmed_flush`,
        // `synced_restart_lsn`."
        if k.failover_columns {
            p.insert("standby".to_owned(), lsn(s.pg.standby));
            p.insert("failovers".to_owned(), s.failovers.to_string());
        }
        // "counted in the `stream_drops` column", in a file that sets the knob.
        if k.drop_column {
            p.insert("stream_drops".to_owned(), s.stream_drops.to_string());
        }
        if k.failover_slots {
            let synced = s.pg.synced;
            p.insert(
                "synced_confirmed_flush".to_owned(),
                lsn(synced.map_or(Lsn::INVALID, |c| c.confirmed_flush)),
            );
            p.insert(
                "synced_restart_lsn".to_owned(),
                lsn(synced.map_or(Lsn::INVALID, |c| c.restart_lsn)),
            );
        }
        // "`none` before a message, and after a crash or a new run".
        for name in &self.messages {
            p.insert(name.clone(), "none".to_owned());
        }
        for (name, v) in &s.vars {
            p.insert(name.clone(), shown(v));
        }
        for (name, v) in &s.flushed {
            p.insert(format!("{name}.flushed"), shown(v));
        }
        // "A channel is its count (`NAME`) and its places `NAME[1]` (the oldest) … `NAME[N]`,
        // an empty place at the type's first value (`none`, `false`, a counter's lowest)."
        for (name, (ty, capacity)) in &self.chans {
            let held = &s.chans[name];
            p.insert(name.clone(), held.len().to_string());
            for k in 0..*capacity {
                let v = held.get(k).cloned().unwrap_or(match ty {
                    Type::Bool => V::Bool(false),
                    Type::Counter(lo, _) => V::Count(i128::from(*lo)),
                    _ => V::None,
                });
                p.insert(format!("{name}[{}]", k + 1), shown(&v));
            }
        }
        p
    }
}

/// One cycle of the standby's slot sync worker: the copy after it reads the primary's slot
/// (`remote`, in memory; `None` when it does not exist) with the standby at `standby` (the
/// model's `failover.rs:sync_slot`, PostgreSQL 17 `slotsync.c:synchronize_slots`).
fn sync_slot(remote: Option<Slot>, standby: Lsn, local: Option<Synced>) -> Option<Synced> {
    // "the primary's slot gone → no copy".
    let remote = remote?;
    // "its in-memory `confirmed_flush` > `standby` → copy unchanged".
    if remote.confirmed_flush > standby {
        return local;
    }
    // "slot invalidated (restart_lsn 0/0) → an existing copy gets restart_lsn 0/0
    // (invalidated), no copy is created".
    if !remote.restart_lsn.is_valid() {
        return local.map(|l| Synced {
            restart_lsn: Lsn::INVALID,
            ..l
        });
    }
    let ahead = |l: &Synced| {
        remote.confirmed_flush > l.confirmed_flush || remote.restart_lsn > l.restart_lsn
    };
    match local {
        // "an invalidated copy stays".
        Some(l) if !l.restart_lsn.is_valid() => Some(l),
        // "when the slot's confirmed_flush or restart_lsn is ahead of the copy's (or there is
        // no copy) the copy takes both".
        Some(l) if !ahead(&l) => Some(l),
        _ => Some(Synced {
            confirmed_flush: remote.confirmed_flush,
            restart_lsn: remote.restart_lsn,
        }),
    }
}

/// `v` as a value of `ty`: `none` takes the type's spelling of it.
fn of_type(v: V, ty: Type) -> V {
    match (v, ty) {
        (V::None | V::Lsn(Lsn::INVALID), Type::Txn) => V::Txn(None),
        (V::None, Type::Lsn) => V::Lsn(Lsn::INVALID),
        (V::None, Type::Txns) => V::Txns(BTreeSet::new()),
        (v, _) => v,
    }
}

/// A declaration's constant initial value ("a constant initial value").
fn constant(init: &ExprKind, ty: Type) -> V {
    match (init, ty) {
        (ExprKind::Bool(b), _) => V::Bool(*b),
        (ExprKind::Number(n), _) => V::Count(i128::from(*n)),
        (ExprKind::Lsn(l), _) => V::Lsn(Lsn(*l)),
        (_, Type::Txn) => V::Txn(None),
        (_, Type::Txns) => V::Txns(BTreeSet::new()),
        _ => V::Lsn(Lsn::INVALID),
    }
}

/// "Counters add and subtract exactly, left to right, within 0 to 2^64 − 1: a sum or difference
/// that leaves those bounds on the way is out of range, and stays so … compared, it is below 0
/// (or above 2^64 − 1)". Kept exact in `i128`, once outside pinned outside.
fn binary(op: BinOp, a: V, b: V) -> V {
    const TOP: i128 = u64::MAX as i128;
    let outside = |n: i128| !(0..=TOP).contains(&n);
    let order = |a: &V, b: &V| match (a, b) {
        (V::Count(x), V::Count(y)) => x.cmp(y),
        _ => a.lsn().cmp(&b.lsn()),
    };
    V::Bool(match op {
        BinOp::Eq | BinOp::Ne => {
            let equal = if a.is_none() || b.is_none() {
                a.is_none() && b.is_none()
            } else {
                a == b
            };
            equal == (op == BinOp::Eq)
        }
        BinOp::Lt => order(&a, &b).is_lt(),
        BinOp::Le => order(&a, &b).is_le(),
        BinOp::Gt => order(&a, &b).is_gt(),
        BinOp::Ge => order(&a, &b).is_ge(),
        BinOp::And => a.truth() && b.truth(),
        BinOp::Or => a.truth() || b.truth(),
        BinOp::Add | BinOp::Sub => {
            let (V::Count(x), V::Count(y)) = (a, b) else {
                return V::Count(-1);
            };
            if outside(x) {
                return V::Count(x);
            }
            let r = if op == BinOp::Add { x + y } else { x - y };
            // Pinned past the side it left by, so that it stays out whatever follows.
            return V::Count(if r > TOP {
                TOP * 4
            } else if r < 0 {
                -TOP * 4
            } else {
                r
            });
        }
    })
}

/// A keepalive at `lsn`, no reply requested.
fn keepalive_at(lsn: Lsn) -> V {
    keepalive(Keepalive {
        wal_end: lsn,
        reply_requested: false,
    })
}

/// A keepalive as a message: "`m.wal_end` of a keepalive is the walsender's `sentPtr`".
fn keepalive(k: Keepalive) -> V {
    V::Msg(Msg {
        txn: None,
        part: Part::Keepalive,
        lsn: k.wal_end,
        reply_requested: k.reply_requested,
    })
}

/// "the trace's `destination` column lists the transactions it holds, then the rows it holds of
/// others (`T2 row 1`)", each transaction's in its place in commit order.
fn row_set(s: &State) -> String {
    let mut names = Vec::new();
    let txns = s.dest.iter().map(|&(i, _)| i).collect::<BTreeSet<_>>();
    for i in txns {
        if Reference::holds(s, i) {
            names.push(format!("T{}", i + 1));
        } else {
            names.extend(
                s.dest
                    .iter()
                    .filter(|&&(j, _)| j == i)
                    .map(|&(_, k)| format!("T{} row {}", i + 1, k + 1)),
            );
        }
    }
    format!("[{}]", names.join(", "))
}

fn shown_lsn(l: Lsn) -> String {
    if l.is_valid() {
        l.to_string()
    } else {
        "none".to_owned()
    }
}

fn txn_set(set: &BTreeSet<usize>) -> String {
    let names: Vec<String> = set.iter().map(|i| format!("T{}", i + 1)).collect();
    format!("[{}]", names.join(", "))
}

/// "`transactions` (each one's commit mode and WAL)": `T1 sync 0/1000000-0/1002000`, ` other`
/// after one outside the publication, ` lost` after one a failover lost.
fn transactions(txns: &[Txn], gone: &BTreeSet<usize>) -> String {
    let each: Vec<String> = txns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mode = match t.mode {
                CommitMode::Sync => "sync",
                CommitMode::Async => "async",
            };
            let other = if t.is_published() { "" } else { " other" };
            let lost = if gone.contains(&i) { " lost" } else { "" };
            format!(
                "T{} {mode} {}-{}{other}{lost}",
                i + 1,
                t.first_lsn,
                t.end_lsn
            )
        })
        .collect();
    each.join(", ")
}

fn shown(v: &V) -> String {
    match v {
        V::Lsn(l) => shown_lsn(*l),
        V::Bool(b) => b.to_string(),
        V::Txn(None) | V::None => "none".to_owned(),
        V::Txn(Some(i)) => format!("T{}", i + 1),
        V::Txns(s) => txn_set(s),
        V::Count(n) => n.to_string(),
        V::Msg(Msg {
            txn: Some(i),
            part,
            lsn,
            ..
        }) => match part {
            Part::Begin => format!("T{} begin {lsn}", i + 1),
            Part::Change(k) => format!("T{} change {} {lsn}", i + 1, k + 1),
            Part::Commit => format!("T{} commit {lsn}", i + 1),
            _ => format!("T{}", i + 1),
        },
        V::Msg(Msg {
            lsn,
            reply_requested: true,
            ..
        }) => format!("keepalive {lsn}, reply requested"),
        V::Msg(Msg { lsn, .. }) => format!("keepalive {lsn}"),
    }
}
