//! The semantics of a connector file: a state of the connector, PostgreSQL and the destination,
//! and the transitions the file's steps, the workload and the faults take. Every PostgreSQL
//! behaviour is a call into walcheck's model of PostgreSQL 15 (`walcheck_model::pg`), the same
//! functions the built-in systems use and `walcheck live conformance` confirms.

use serde::{Deserialize, Serialize};
use smallvec::{smallvec, SmallVec};
use std::fmt;
use std::sync::Arc;

use walcheck_model::olake::sync::restart_candidates;
use walcheck_model::pg::decoding::{self, txn_needs_skip, DurableSlot, SqlDecode};
use walcheck_model::pg::failover::{
    promote, promoted_slot, promoted_timeline, send_limit, standby_receive, sync_slot,
};
use walcheck_model::pg::lifecycle::{
    checkpoint_horizon, create_logical_slot, removal_horizon, slot_obsolete,
    IDLE_RUNNING_XACTS_BYTES,
};
use walcheck_model::pg::stream::{
    identify_system_xlogpos, process_standby_reply_on, StandbyStatusUpdate, TxnPart, Walsender,
};
use walcheck_model::pg::{
    running_xacts_restart, AdvanceError, CommitMode, OpenTxn, PgVersion, Role, SavedSlot, Server,
    Slot, Txn, Wal,
};
use walcheck_model::Lsn;

use crate::vocabulary;
use walcheck_properties::cdc;

use crate::ast::{BinOp, Call, Expr, ExprKind, Storage, Type};
use crate::program::{Op, Program};

/// Where the quiet cluster's WAL and the slot start: `0/1000000`, as in `olake-bootstrap`.
pub const INITIAL_LSN: Lsn = Lsn(0x100_0000);

/// PostgreSQL's WAL page, `XLOG_BLCKSZ`: 8 KiB.
pub const PAGE_BYTES: u64 = 8192;

/// The most client transactions a state holds (published and other together): the bit sets of
/// the destination are `u16`.
pub const TXNS_MAX: usize = 16;

/// A value of the language.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Value {
    /// `none` before it meets a type.
    None,
    /// An LSN in bytes; `none` is `Lsn::INVALID` (0/0).
    Lsn(Lsn),
    /// `true` or `false`.
    Bool(bool),
    /// A transaction by its place in the commit log, or `none`.
    Txn(Option<u8>),
    /// A run of transactions, as a set of places in the commit log.
    Txns(u16),
    /// A counter's value.
    Count(u64),
    /// A sum or difference of counters that left `0..=18446744073709551615` on the way: below
    /// 0 (`false`) or past the top (`true`). Never held by a variable: assigned, it stops the
    /// pipeline ([`Stop::OutOfRange`]); compared, it is below (above) every counter.
    Outside(bool),
    /// A received message.
    Message(Message),
}

/// What `for each message` receives: a whole transaction, one message of a transaction sent
/// message by message (`env messages = changes`), or a keepalive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Message {
    /// The transaction, `None` for a keepalive.
    pub txn: Option<u8>,
    /// A keepalive's `ServerWALEnd`; a whole transaction's end; the LSN a message of a
    /// transaction goes out under ([`TxnPart::lsn`]).
    pub wal_end: Lsn,
    /// Whether the walsender asks for a reply.
    pub reply_requested: bool,
    /// Which message of its transaction; `None` for a whole transaction or a keepalive.
    pub part: Option<TxnPart>,
}

impl Value {
    /// The value as an LSN, `none` below every other.
    fn lsn(self) -> Lsn {
        match self {
            Value::Lsn(lsn) => lsn,
            _ => Lsn::INVALID,
        }
    }

    fn is_none(self) -> bool {
        matches!(
            self,
            Value::None | Value::Lsn(Lsn::INVALID) | Value::Txn(None) | Value::Txns(0)
        )
    }

    /// Whether the value is `true` (anything else is false).
    pub fn truth(self) -> bool {
        matches!(self, Value::Bool(true))
    }

    fn count(self) -> u64 {
        match self {
            Value::Count(n) => n,
            Value::Outside(true) => u64::MAX,
            _ => 0,
        }
    }

    /// A counter's place in the order of counters: below 0, a value, or past the top.
    fn rank(self) -> (i8, u64) {
        match self {
            Value::Outside(false) => (-1, 0),
            Value::Outside(true) => (1, 0),
            other => (0, other.count()),
        }
    }
}

/// Shows a value as traces print it.
pub struct Shown<'a>(pub Value, pub &'a [Txn]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::None | Value::Txn(None) => f.write_str("none"),
            Value::Lsn(lsn) if !lsn.is_valid() => f.write_str("none"),
            Value::Lsn(lsn) => write!(f, "{lsn}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Txn(Some(i)) => write!(f, "T{}", u16::from(i) + 1),
            Value::Txns(set) => f.write_str(&txn_set(set)),
            Value::Count(n) => write!(f, "{n}"),
            Value::Outside(_) => f.write_str("out of range"),
            Value::Message(m) => match (m.txn, m.part) {
                (Some(i), None) => write!(f, "T{}", u16::from(i) + 1),
                (Some(i), Some(part)) => {
                    write!(f, "T{} ", u16::from(i) + 1)?;
                    match part {
                        TxnPart::Begin => f.write_str("begin")?,
                        TxnPart::Change(k) => write!(f, "change {}", k + 1)?,
                        TxnPart::Commit => f.write_str("commit")?,
                    }
                    write!(f, " {}", m.wal_end)
                }
                (None, _) if m.reply_requested => {
                    write!(f, "keepalive {}, reply requested", m.wal_end)
                }
                (None, _) => write!(f, "keepalive {}", m.wal_end),
            },
        }
    }
}

/// `[T1, T2 row 1]`: the transactions in `whole`, then the rows in `rows` (bit `4 × i + k`) of
/// the others — a destination's rows with `env messages = changes`.
pub fn row_set(whole: u16, rows: u64) -> String {
    let names: Vec<String> = (0..16)
        .flat_map(|i| {
            let named = whole & (1 << i) != 0;
            let own = if named { 0 } else { (rows >> (4 * i)) & 0xF };
            let txn = named.then(|| format!("T{}", i + 1));
            let parts = (0..4)
                .filter(move |k| own & (1 << k) != 0)
                .map(move |k| format!("T{} row {}", i + 1, k + 1));
            txn.into_iter().chain(parts)
        })
        .collect();
    format!("[{}]", names.join(", "))
}

/// `[T1, T3]`.
pub fn txn_set(set: u16) -> String {
    let names: Vec<String> = (0..16)
        .filter(|i| set & (1 << i) != 0)
        .map(|i| format!("T{}", i + 1))
        .collect();
    format!("[{}]", names.join(", "))
}

/// Where the connector is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Status {
    /// Its next step is the instruction.
    Running(u16),
    /// Every run is over.
    Done,
    /// Stopped for good at the `fail fatal` instruction.
    Fatal(u16),
    /// This process's body has ended while another process of the run goes on; the run ends
    /// when every process has.
    Ended,
}

/// One state of the connector, PostgreSQL and the destination.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    /// The WAL pointers (the primary's; `replay` a standby's).
    pub wal: Wal,
    /// The connector's slot; `None` before it is created or after it is dropped.
    pub slot: Option<DurableSlot>,
    /// A synchronous commit waits for its flush.
    pub commit_pending: bool,
    /// The committed client transactions, in commit order.
    pub txns: Arc<[Txn]>,
    /// Client transactions begun: on the published tables, and on others.
    pub published: u8,
    /// Client transactions on tables outside the publication.
    pub other: u8,
    /// Transactions durably in the destination, and in its open batch.
    pub dest: u16,
    /// The destination's open batch.
    pub batch: u16,
    /// Transactions the destination committed more than once: kept only when a property reads
    /// `destination.duplicated` ([`Program::duplicates`]), so that other files' states are as
    /// they were.
    pub duplicated: u16,
    /// The variables, in [`Program::slots`] order: what the process holds.
    pub vars: Arc<[Value]>,
    /// The durable copy of each `async` variable, in slot order.
    pub flushed: Vec<Value>,
    /// Where the connector is: `every run`'s process, and the pipeline (done, stopped).
    pub status: Status,
    /// Where each of the file's other processes is, in file order (`Status::Ended` once its
    /// body has ended).
    pub procs: Vec<Status>,
    /// Runs started, and crashes so far.
    pub runs: u8,
    /// Connector crashes so far.
    pub connector_crashes: u8,
    /// PostgreSQL crashes so far.
    pub pg_crashes: u8,
    /// Kills of `killable` processes so far.
    pub kills: u8,
    /// Calls failed so far.
    pub call_failures: u8,
    /// The connector's replication connection.
    pub walsender: Option<Walsender>,
    /// A PostgreSQL crash closed the replication connection: `for each message` ends as at the
    /// end of the stream (the client reads EOF), until `start_replication` opens a new one.
    pub stream_closed: bool,
    /// Whether `first run` has ended (a crash before restarts it).
    pub first_done: bool,
    /// Where the connector's slot was created: transactions committed before it are the
    /// backfill's, not the stream's.
    pub slot_origin: Lsn,
    /// Keepalives received so far.
    pub keepalives: u8,
    /// A START_REPLICATION skipped a transaction the destination did not hold.
    pub lost: bool,
    /// The PostgreSQL ERROR the connector's last step met, which ended its run; cleared by its
    /// next step.
    pub error: Option<PgError>,
    /// Clean stops (`env pg_stops`) so far.
    pub pg_stops: u8,
    /// A clean stop is under way: it waits for the connector's walsender to end.
    pub stopping: bool,
    /// What the client last reported to its walsender (a status update's flush, its write when
    /// the flush is `0/0`), which a stopping walsender compares with `sentPtr`; kept only while
    /// a stream is open in a file with `env pg_stops`, `0/0` otherwise.
    pub replied: Lsn,
    /// The stopping walsender's request for a reply was read and not yet answered: it sends no
    /// other message until the connector replies, and only then can `wal_sender_timeout` end it.
    pub asked: bool,
    /// Operating-system crashes so far.
    pub os_crashes: u8,
    /// Streams dropped with PostgreSQL up (`env stream_drops`) so far.
    pub stream_drops: u8,
    /// The WAL removal horizon: WAL before it the checkpoints removed (`none`: nothing yet).
    /// Kept only when a property reads it ([`Program::horizon`]), so that other files' states
    /// are as they were.
    pub removed_before: Lsn,
    /// A checkpoint under way in two steps (before the fixed minors): its redo pointer and the
    /// slot's `restart_lsn` when it started (kept only with [`Program::horizon`], `0/0` and
    /// `None` otherwise).
    pub checkpoint: Option<(Lsn, Option<Lsn>)>,
    /// What the primary's physical standby has received (written, flushed and replayed), when
    /// the model follows one ([`Env::has_standby`]; `0/0` otherwise).
    pub standby: Lsn,
    /// The standby's saved copy of the failover slot (`env failover_slots`).
    pub synced: Option<SavedSlot>,
    /// Failovers so far.
    pub failovers: u8,
    /// The transactions lost with a failed-over primary, one bit each in commit order: kept in
    /// `txns` (so that a message or a set the connector still holds names them, not the
    /// promoted server's transactions that reuse their LSNs), committed no more.
    pub gone: u16,
    /// The transaction the walsender is sending message by message (`env messages =
    /// changes`), by its place in commit order, and the last of its messages sent; `None`
    /// between transactions.
    pub sending: Option<(u8, TxnPart)>,
    /// Rows durably in the destination (`env messages = changes`; 0 otherwise): bit `4 × i + k` for row `k` of transaction `i` ([`row_bits`]).
    pub dest_rows: u64,
    /// The rows in the destination's open batch, as `dest_rows` holds them.
    pub batch_rows: u64,
    /// A published transaction begun and not yet committed (`env interleave = on`): its change
    /// records are in the WAL, others may commit before it.
    pub open: Option<OpenTxn>,
}

impl State {
    /// The replication connection ends from PostgreSQL's side (a crash, a clean stop, a
    /// timeout, an invalidated slot): a `for each message` reading it ends as at the end of the
    /// stream. Nothing happens when no stream is open.
    pub fn end_stream(&mut self) {
        self.stream_closed |= self.walsender.take().is_some();
        self.sending = None;
    }

    /// The replication connection closes from the connector's side (its run ends, it crashes,
    /// it stops), or a new one replaces it: no transaction is half sent on it any more.
    fn close_stream(&mut self) {
        self.walsender = None;
        self.sending = None;
    }

    /// The destination's open batch is lost (the run that held it ended).
    fn drop_batch(&mut self) {
        self.batch = 0;
        self.batch_rows = 0;
    }

    /// The committed transactions, with their index in `txns`: those a failover lost left out.
    pub fn live(&self) -> impl Iterator<Item = (usize, &Txn)> + '_ {
        let gone = self.gone;
        self.txns
            .iter()
            .enumerate()
            .filter(move |(i, _)| gone & (1 << i) == 0)
    }

    /// The variables to write: shared with the states this one was copied from until the
    /// first write, which copies them once (one allocation, header and values together).
    pub fn vars_mut(&mut self) -> &mut [Value] {
        if Arc::get_mut(&mut self.vars).is_none() {
            self.vars = Arc::from(&self.vars[..]);
        }
        Arc::get_mut(&mut self.vars).expect("a fresh copy is unshared")
    }
}

/// The environment a file is checked in: its knobs' values.
#[derive(Clone, Debug)]
pub struct Env {
    /// Client transactions on the published tables.
    pub transactions: u8,
    /// The commit modes a transaction may take.
    pub commits: Vec<CommitMode>,
    /// A transaction's WAL, in pages.
    pub txn_pages: u64,
    /// A bulk transaction's WAL, in pages (0: none).
    pub bulk_txn_pages: u64,
    /// `wal_buffers`, in pages.
    pub wal_buffers_pages: u64,
    /// Client transactions on other tables.
    pub other_traffic: u8,
    /// Runs at most; 0: unbounded, and the state does not count them.
    pub runs: u8,
    /// Kills of `killable` processes at most.
    pub kills: u8,
    /// Calls that fail at most (`env call_failures`).
    pub call_failures: u8,
    /// Connector crashes so far.
    /// Connector crashes at most.
    pub connector_crashes: u8,
    /// PostgreSQL crashes so far.
    /// PostgreSQL crashes at most.
    pub pg_crashes: u8,
    /// Crashes of both kinds at most.
    pub crashes: u8,
    /// Whether checkpoints run.
    pub checkpoints: bool,
    /// The server the connector talks to.
    pub role: Role,
    /// Keepalives the walsender sends at most.
    pub keepalives: u8,
    /// PostgreSQL's major version: below 16 a standby has no logical decoding.
    pub pg_version: u8,
    /// Whether the slot exists at the start: it does unless the file creates it.
    pub slot_at_start: bool,
    /// Clean stops (`pg_ctl stop -m fast`, then a start) at most.
    pub pg_stops: u8,
    /// Operating-system crashes at most.
    pub os_crashes: u8,
    /// Streams the walsender ends with PostgreSQL up at most (`wal_sender_timeout`, a dropped
    /// connection).
    pub stream_drops: u8,
    /// PostgreSQL's release (`env pg_version` 15.12; a major alone is its newest minor): the
    /// rules that changed in a minor follow it.
    pub pg_release: PgVersion,
    /// `max_slot_wal_keep_size` in WAL pages (`None`: -1, no limit).
    pub max_slot_wal_keep_pages: Option<u64>,
    /// Failovers at most: the primary lost, its standby promoted.
    pub failovers: u8,
    /// The slot is a failover slot (PostgreSQL 17 or later): the standby's slot sync worker
    /// copies it, and `synchronized_standby_slots` holds the walsender to the standby.
    pub failover_slots: bool,
    /// `env messages = changes`: the stream sends pgoutput's messages one by one.
    pub by_change: bool,
    /// `env rows`: rows each published client transaction inserts.
    pub rows: u32,
    /// `env multi_insert = on`: a transaction's rows are one multi-insert record.
    pub multi_insert: bool,
    /// `env interleave = on`: a published transaction may stay open while others commit.
    pub interleave: bool,
}

impl Env {
    /// Whether the primary has a physical standby the model follows: for a failover, or for
    /// failover slots.
    pub fn has_standby(&self) -> bool {
        (self.failovers > 0 || self.failover_slots) && self.role == Role::Primary
    }
}

/// The most states [`Machine::delivers_later`] looks ahead over before it assumes the connector
/// can still deliver.
pub const LOOKAHEAD_STATES: usize = 10_000;

/// An action: a step of the connector, of the workload, of PostgreSQL, or a fault.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// The connector takes its next step; `choices` are PostgreSQL's (whether `restart_lsn`
    /// moves) and the stream's (a keepalive rather than a transaction), one bit each.
    Step {
        /// The step's name.
        name: &'static str,
        /// PostgreSQL's choices, one bit each.
        choices: u64,
        /// What they chose, when not the usual.
        detail: Option<Detail>,
        /// Whether the step is weakly fair.
        fair: bool,
        /// The process taking it: 0 is `every run`'s, then the file's processes in order.
        process: u8,
    },
    /// A client transaction of `pages` WAL pages commits, synchronously or not (on tables
    /// outside the publication when `published` is false).
    Commit {
        /// Its WAL, in pages.
        pages: u64,
        /// `synchronous_commit` on or off.
        mode: CommitMode,
        /// On the published tables.
        published: bool,
    },
    /// A published client transaction of `pages` WAL pages inserts its rows and stays open
    /// (`env interleave = on`).
    Open {
        /// Its WAL, in pages, the commit record's included.
        pages: u64,
    },
    /// The open transaction commits, synchronously or not.
    CommitOpen {
        /// `synchronous_commit` on or off.
        mode: CommitMode,
    },
    /// The synchronous commit's `XLogFlush`.
    CommitFlush,
    /// The walwriter writes whole pages.
    WalwriterWrite,
    /// The walwriter flushes.
    WalwriterFlush,
    /// A checkpoint: dirty slots saved, WAL flushed.
    Checkpoint,
    /// The standby replays what the primary flushed.
    Replay,
    /// The background flush of an `async` durable variable.
    FlushPending {
        /// The variable.
        var: &'static str,
    },
    /// Fault: the connector process dies and is restarted.
    ConnectorCrash,
    /// Fault: PostgreSQL crashes (immediate shutdown) and restarts.
    PgCrash,
    /// A clean stop begins (`pg_ctl stop -m fast`): sessions end, the WAL is flushed, and a
    /// walsender streaming to the connector sends what is left, then waits for its reply. With no
    /// walsender, the stop and the start after it are this one step.
    PgStop,
    /// The stop ends once no walsender is left: the shutdown checkpoint, then the start. On a
    /// standby the shutdown restartpoint may find no primary checkpoint replayed since the last
    /// one, and skip (`saves` false).
    PgStopped {
        /// Whether the shutdown checkpoint (restartpoint) runs and saves dirty slots.
        saves: bool,
    },
    /// A stopping walsender that waited `wal_sender_timeout` for the client's reply exits.
    WalsenderTimeout,
    /// Fault: a `killable` process is killed, and restarts alone at its first step.
    Kill {
        /// The process: 1 for the file's first `process`.
        process: u8,
        /// Its name.
        name: &'static str,
    },
    /// A checkpoint before the fixed minors, first step: redo pointer taken, dirty slots saved.
    CheckpointStart,
    /// Its last step: WAL flushed, old WAL removed by the slot's `restart_lsn` as it is now.
    CheckpointEnd,
    /// Fault: the operating system under PostgreSQL crashes (power loss): written but unflushed
    /// WAL is lost too.
    OsCrash,
    /// The primary's physical standby receives what the primary flushed.
    StandbyReceive,
    /// The standby's slot sync worker copies the failover slot.
    SlotSync,
    /// Fault: the primary is lost and its standby promoted; the connector's next connection
    /// reaches the promoted server.
    Failover,
    /// Fault: the walsender ends the stream while PostgreSQL stays up: `wal_sender_timeout`
    /// passed without a reply from the connector, or the connection dropped.
    StreamDrop,
}

impl Action {
    /// A fault (a crash, a kill, a stop, a failover, a dropped stream) or a client transaction
    /// of the workload: what [`Machine::delivers_later`] leaves out.
    fn is_fault_or_workload(&self) -> bool {
        matches!(
            self,
            Action::ConnectorCrash
                | Action::PgCrash
                | Action::OsCrash
                | Action::PgStop
                | Action::Kill { .. }
                | Action::Failover
                | Action::StreamDrop
                | Action::Commit { .. }
                | Action::Open { .. }
                | Action::CommitOpen { .. }
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Step { name, detail, .. } => match detail {
                Some(detail) => write!(f, "{name} [{detail}]"),
                None => write!(f, "{name}"),
            },
            Action::Commit {
                pages,
                mode,
                published,
            } => {
                let what = if *published { "Commit" } else { "CommitOther" };
                let mode = match mode {
                    CommitMode::Sync => "sync",
                    CommitMode::Async => "async",
                };
                write!(f, "{what}{{pages={pages}, commit={mode}}}")
            }
            Action::Open { pages } => write!(f, "Open{{pages={pages}}}"),
            Action::CommitOpen { mode } => match mode {
                CommitMode::Sync => f.write_str("CommitOpen{commit=sync}"),
                CommitMode::Async => f.write_str("CommitOpen{commit=async}"),
            },
            Action::CommitFlush => f.write_str("CommitFlush"),
            Action::WalwriterWrite => f.write_str("WalWriterWrite"),
            Action::WalwriterFlush => f.write_str("WalWriterFlush"),
            Action::Checkpoint => f.write_str("Checkpoint"),
            Action::Replay => f.write_str("Replay"),
            Action::FlushPending { var } => write!(f, "Flush{{{var}}}"),
            Action::ConnectorCrash => f.write_str("ConnectorCrash"),
            Action::PgCrash => f.write_str("PgCrash"),
            Action::PgStop => f.write_str("PgStop"),
            Action::PgStopped { saves: true } => f.write_str("PgStopped"),
            Action::PgStopped { saves: false } => f.write_str("PgStopped [restartpoint skipped]"),
            Action::WalsenderTimeout => f.write_str("WalSenderTimeout"),
            Action::StreamDrop => f.write_str("StreamDrop"),
            Action::Kill { name, .. } => write!(f, "Kill{{{name}}}"),
            Action::CheckpointStart => f.write_str("CheckpointStart"),
            Action::CheckpointEnd => f.write_str("CheckpointEnd"),
            Action::OsCrash => f.write_str("OsCrash"),
            Action::StandbyReceive => f.write_str("StandbyReceive"),
            Action::SlotSync => f.write_str("SlotSync"),
            Action::Failover => f.write_str("Failover"),
        }
    }
}

/// PostgreSQL's choices within one step, replayed from an action's bits or enumerated.
struct Chooser {
    script: u64,
    made: u8,
    /// What the last outcome other than the first was, for the action's name.
    detail: Option<Detail>,
    /// The instruction of the step an `either` went on to: the action's name and fairness.
    branch: Option<usize>,
}

/// What PostgreSQL chose within a step, as the step's action names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Detail {
    /// The advance moved `restart_lsn`, and the slot was saved.
    RestartMoves,
    /// The advance moved `restart_lsn` to a running-xacts record at or below the old
    /// `confirmed_flush`, and the slot was saved with that old `confirmed_flush`.
    RestartMovesBelowConfirmedFlush,
    /// The walsender sent a keepalive rather than the next transaction.
    Keepalive,
    /// The walsender sent a keepalive before reading the WAL up to its next message.
    KeepaliveBeforeReading,
    /// The walsender sent a keepalive at this `sentPtr`, inside the transaction it sends next
    /// or is sending: it had read the transaction's change records up to there.
    KeepaliveInside(Lsn),
    /// The status update met a candidate `restart_lsn`: the slot took it and was saved.
    Candidate(Lsn),
    /// The call failed before it took effect (`env call_failures`).
    CallFails,
    /// The call took effect, but its answer was lost (a statement timeout, a dropped
    /// connection): the connector sees it fail.
    CallTimesOut,
    /// The call moved `restart_lsn` while a checkpoint was under way (before the fixed minors):
    /// the checkpoint ended, and PostgreSQL crashed before the slot was saved.
    CrashBeforeSave,
}

/// The most binary choices one step makes: an `either` of `n` branches takes up to `n - 1`,
/// PostgreSQL's outcomes and a failing call one or two each.
pub const CHOICES_MAX: usize = 64;

/// What one outcome of a step is: PostgreSQL's choices and the connector's, as bits, what
/// PostgreSQL chose, and where an `either` went: the instruction of the chosen branch's first
/// step, which names the action and says whether it is fair.
type Outcome = (u64, Option<Detail>, Option<usize>);

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::RestartMoves => f.write_str("restart_lsn moves"),
            Detail::RestartMovesBelowConfirmedFlush => {
                f.write_str("restart_lsn moves, saved at the old confirmed_flush")
            }
            Detail::Keepalive => f.write_str("keepalive"),
            Detail::KeepaliveBeforeReading => f.write_str("keepalive before reading on"),
            Detail::KeepaliveInside(lsn) => write!(f, "keepalive at {lsn}, inside a transaction"),
            Detail::Candidate(lsn) => write!(f, "restart_lsn to {lsn}"),
            Detail::CallFails => f.write_str("the call fails"),
            Detail::CallTimesOut => f.write_str("the call times out after taking effect"),
            Detail::CrashBeforeSave => f.write_str(
                "restart_lsn moves, the checkpoint ends, PostgreSQL crashes before the save",
            ),
        }
    }
}

impl Chooser {
    /// The next choice's bit. A step has [`CHOICES_MAX`] at most: past them a step's outcomes
    /// could not all be told apart, and enumerating them would silently drop some, so it is
    /// the design's error, reported where the step is tried ([`Machine::outcomes`]).
    fn bit(&mut self) -> bool {
        let Some(mask) = 1u64.checked_shl(u32::from(self.made)) else {
            self.made = self.made.saturating_add(1);
            return false;
        };
        self.made += 1;
        self.script & mask != 0
    }

    /// Whether PostgreSQL takes the outcome `detail` rather than the usual one.
    fn choose(&mut self, detail: Detail) -> bool {
        let taken = self.bit();
        if taken {
            self.detail = Some(detail);
        }
        taken
    }

    /// One of `n` outcomes, `0..n`, as binary choices (the first outcome takes one bit).
    fn among(&mut self, n: usize) -> usize {
        (0..n.saturating_sub(1))
            .find(|_| !self.bit())
            .unwrap_or(n.saturating_sub(1))
    }
}

/// The `restart_lsn` a running-xacts record at `at` offers `slot`, as a status update confirming
/// `flush` applies it: `at` itself, or with a transaction running there the first change of the
/// oldest ([`running_xacts_restart`]; `running` are the transactions that may be running at some
/// record, as `(first_lsn, commit_lsn)`, the open one's commit at `Lsn::MAX`); `None` when it
/// does not move `restart_lsn` (`logical.c:LogicalIncreaseRestartDecodingForSlot`, 15, keeps no
/// candidate at or below it), or when the record lies past what the update confirms (the
/// candidate then waits: `candidate_restart_valid`).
fn restart_offered(slot: &Slot, at: Lsn, running: &[(Lsn, Lsn)], flush: Lsn) -> Option<Lsn> {
    let restart = running_restart(at, running);
    if restart == at {
        // No transaction running there: as before, the record's own position, which
        // `DurableSlot::confirm_received_on` takes once confirmed.
        return Some(at);
    }
    (restart > slot.restart_lsn && at <= flush).then_some(restart)
}

/// What a running-xacts record at `at` offers as `restart_lsn` ([`running_xacts_restart`]),
/// with `running` the transactions that may run there (see [`restart_offered`]).
fn running_restart(at: Lsn, running: &[(Lsn, Lsn)]) -> Lsn {
    let firsts = running
        .iter()
        .filter(|(first, commit)| *first < at && at <= *commit)
        .map(|(first, _)| *first);
    running_xacts_restart(at, firsts)
}

/// Where PostgreSQL's choice leaves `restart_lsn` after an advance ([`Slot::advance_restarts`]):
/// with one landing, it moves there or stays; with two, past the old `confirmed_flush` (saved at
/// `moveto`), or to it (saved with the old `confirmed_flush`), or it stays.
fn advance_restart(slot: &Slot, target: Lsn, limit: Lsn, chooser: &mut Chooser) -> Option<Lsn> {
    match slot.advance_restarts(target, limit)[..] {
        [] => None,
        [only] => chooser.choose(Detail::RestartMoves).then_some(only),
        [at_old, past_old, ..] => {
            if chooser.choose(Detail::RestartMoves) {
                Some(past_old)
            } else {
                chooser
                    .choose(Detail::RestartMovesBelowConfirmedFlush)
                    .then_some(at_old)
            }
        }
    }
}

/// Why a step stopped early.
enum Stop {
    /// The step cannot be taken now (nothing to receive).
    Blocked,
    /// A retryable error ends the run: PostgreSQL's, or the file's own `fail` (`None`).
    Fail(Option<PgError>),
    /// A `fail fatal` at the instruction.
    Fatal(usize),
    /// A counter left its range: the design's error, a fatal stop at the step.
    OutOfRange,
}

/// A PostgreSQL ERROR a call can meet; it ends the connector's run (a retryable error), and the
/// trace's `error` column shows it at the step that met it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PgError {
    /// A WAL function on a standby: `xlogfuncs.c:pg_current_wal_lsn` (15), SQLSTATE 55000.
    RecoveryInProgress,
    /// The slot does not exist (not yet created, or dropped): `slot.c:ReplicationSlotAcquire`
    /// (15), SQLSTATE 42704.
    NoSlot,
    /// A SQL function on a slot a walsender streams from: `slot.c:ReplicationSlotAcquire` (15),
    /// SQLSTATE 55006.
    SlotActive,
    /// Logical decoding on a PostgreSQL 15 standby:
    /// `logical.c:CheckLogicalDecodingRequirements` (15), SQLSTATE 55000.
    DecodingInRecovery,
    /// Creating a slot that exists: `slot.c:ReplicationSlotCreate` (15), SQLSTATE 42710.
    SlotExists,
    /// `pg_replication_slot_advance` refused its target (`slotfuncs.c`, 15).
    Advance(AdvanceError),
    /// A standby status update with no stream open: the message has no COPY to go to.
    NoStream,
    /// A call failed (`env call_failures`), before or after taking effect, and the file does
    /// not handle it.
    CallFailed,
    /// A call while PostgreSQL stops cleanly: its session was ended, a new one is refused
    /// (`postmaster.c:ProcessStartupPacket`, `CAC_SHUTDOWN`, 15), SQLSTATE 57P03.
    ShuttingDown,
    /// START_REPLICATION on a slot `max_slot_wal_keep_size` invalidated
    /// (`walsender.c:StartLogicalReplication`, 15), SQLSTATE 55000.
    StreamInvalidated,
    /// SQL decoding of an invalidated slot (`logicalfuncs.c:pg_logical_slot_get_changes_guts`,
    /// 15), SQLSTATE 55000.
    ChangesInvalidated,
    /// Advancing an invalidated slot (`slotfuncs.c:pg_replication_slot_advance`, 15), SQLSTATE
    /// 55000.
    AdvanceInvalidated,
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgError::RecoveryInProgress => f.write_str("ERROR: recovery is in progress"),
            PgError::NoSlot => f.write_str("ERROR: replication slot does not exist"),
            PgError::SlotActive => {
                f.write_str("ERROR: replication slot is active for another process")
            }
            PgError::DecodingInRecovery => {
                f.write_str("ERROR: logical decoding cannot be used while in recovery")
            }
            PgError::SlotExists => f.write_str("ERROR: replication slot already exists"),
            PgError::Advance(e) => write!(f, "ERROR: {e}"),
            PgError::NoStream => f.write_str("no replication stream is open"),
            PgError::CallFailed => {
                f.write_str("the call failed (connection lost or statement timeout)")
            }
            PgError::ShuttingDown => f.write_str("FATAL: the database system is shutting down"),
            PgError::StreamInvalidated => f.write_str(
                "ERROR: cannot read from logical replication slot (invalidated: it exceeded the maximum reserved size)",
            ),
            PgError::ChangesInvalidated => {
                f.write_str("ERROR: can no longer get changes from replication slot")
            }
            PgError::AdvanceInvalidated => f.write_str("ERROR: replication slot cannot be advanced"),
        }
    }
}

/// The file's model: the program and the environment.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The compiled file.
    pub program: &'static Program,
    /// The knobs' values.
    pub env: Env,
}

impl Machine {
    /// The initial state: a quiet cluster at [`INITIAL_LSN`] with the slot (unless the file
    /// creates it), an empty destination, the connector at its first step.
    pub fn initial(&self) -> State {
        let server = Server::at_rest(self.env.role, INITIAL_LSN);
        let vars: Vec<Value> = self.program.slots.iter().map(init).collect();
        let flushed = self
            .program
            .slots
            .iter()
            .zip(&vars)
            .filter(|(s, _)| s.storage == Storage::DurableAsync)
            .map(|(_, v)| *v)
            .collect();
        let mut state = State {
            wal: server.wal,
            slot: self
                .env
                .slot_at_start
                .then(|| DurableSlot::created(server.slot)),
            commit_pending: false,
            txns: Arc::from([]),
            published: 0,
            other: 0,
            dest: 0,
            batch: 0,
            duplicated: 0,
            vars: Arc::from(vars),
            flushed,
            status: Status::Running(0),
            procs: vec![Status::Ended; self.program.processes.len()],
            runs: 1,
            connector_crashes: 0,
            pg_crashes: 0,
            kills: 0,
            call_failures: 0,
            walsender: None,
            stream_closed: false,
            first_done: !self.program.has_first_run,
            slot_origin: INITIAL_LSN,
            keepalives: 0,
            lost: false,
            error: None,
            pg_stops: 0,
            stopping: false,
            replied: Lsn::INVALID,
            asked: false,
            os_crashes: 0,
            stream_drops: 0,
            removed_before: Lsn::INVALID,
            checkpoint: None,
            standby: match self.env.has_standby() {
                true => INITIAL_LSN,
                false => Lsn::INVALID,
            },
            synced: None,
            failovers: 0,
            gone: 0,
            sending: None,
            dest_rows: 0,
            batch_rows: 0,
            open: None,
        };
        self.start(&mut state, self.program.first_run);
        state
    }

    /// Where process `p` is (0 when it has no next step).
    fn pc_of(&self, state: &State, p: usize) -> usize {
        match self.status(state, p) {
            Status::Running(pc) => pc as usize,
            _ => 0,
        }
    }

    /// The status of process `p` (0: `every run`'s).
    pub fn status(&self, state: &State, p: usize) -> Status {
        match p {
            0 => state.status,
            _ => state.procs[p - 1],
        }
    }

    fn set_status(&self, state: &mut State, p: usize, status: Status) {
        match p {
            0 => state.status = status,
            _ => state.procs[p - 1] = status,
        }
    }

    /// Every process at its first step: `every run`'s at `main` (or the entry before it), each
    /// other at its body's.
    fn start(&self, state: &mut State, main: usize) {
        state.status = Status::Running(main as u16);
        for (k, process) in self.program.processes.iter().enumerate() {
            state.procs[k] = Status::Running(process.start as u16);
        }
        self.go(state, 0, main);
        for (k, process) in self.program.processes.iter().enumerate() {
            if state.procs[k] == Status::Running(process.start as u16) {
                self.go(state, k + 1, process.start);
            }
        }
    }

    /// Process `p`'s body has ended: the run ends once every process's has.
    fn ended(&self, state: &mut State, p: usize) {
        self.set_status(state, p, Status::Ended);
        let all = state.status == Status::Ended && state.procs.iter().all(|s| *s == Status::Ended);
        if all {
            self.end_run(state);
        }
    }

    fn limit(&self, state: &State) -> Lsn {
        match self.env.role {
            Role::Primary => state.wal.flush,
            Role::Standby => state.wal.replay,
        }
    }

    /// How far the connector's walsender may send: [`Machine::limit`], and with failover slots
    /// no further than the standby received ([`send_limit`]).
    fn send_limit(&self, state: &State) -> Lsn {
        send_limit(self.limit(state), state.standby, self.env.failover_slots)
    }

    fn server(&self, state: &State) -> Server {
        let mut server = Server::at_rest(self.env.role, INITIAL_LSN);
        server.wal = state.wal;
        if let Some(slot) = state.slot {
            server.slot = slot.slot;
        }
        server
    }

    // ---- the connector's control flow --------------------------------------------------

    /// Moves process `p` to `pc` and through the control instructions there, to its next
    /// step (or the end of its body).
    fn go(&self, state: &mut State, p: usize, mut pc: usize) {
        loop {
            match &self.program.code[pc].op {
                Op::Branch { cond, otherwise } => {
                    pc = if self.eval(state, cond).truth() {
                        pc + 1
                    } else {
                        *otherwise
                    };
                }
                Op::Jump(to) => pc = *to,
                Op::RetryStart { counter } => {
                    state.vars_mut()[*counter] = Value::Count(0);
                    pc += 1;
                }
                Op::RetryUntil {
                    counter,
                    times,
                    until,
                    body,
                } => {
                    let tries = state.vars[*counter].count() + 1;
                    state.vars_mut()[*counter] = Value::Count(tries);
                    pc = if self.eval(state, until).truth() || tries >= *times {
                        pc + 1
                    } else {
                        *body
                    };
                }
                Op::RunEnd | Op::ProcessEnd => return self.ended(state, p),
                Op::FirstRunDone => {
                    state.first_done = true;
                    pc += 1;
                }
                _ => {
                    self.set_status(state, p, Status::Running(pc as u16));
                    return;
                }
            }
        }
    }

    /// A run ended (its end, or a retryable fail): its replication connection closes and its
    /// open batch is lost, its memory stays as its last step left it. The state is the run's
    /// end, a state of its own that every property sees: the connector's next step there is
    /// `next run` ([`Machine::next_run`]), or, when `runs` allows no other, the pipeline is done.
    fn end_run(&self, state: &mut State) {
        state.close_stream();
        state.stream_closed = false;
        state.drop_batch();
        state.procs.fill(Status::Ended);
        state.status = if self.env.runs != 0 && state.runs >= self.env.runs {
            Status::Done
        } else {
            Status::Running(self.program.run_end as u16)
        };
    }

    /// The step `next run`, from a run's end: the next run starts with the volatile variables
    /// at their initial values, at `every run`'s first step.
    fn next_run(&self, state: &mut State) {
        debug_assert!(
            self.env.runs == 0 || state.runs < self.env.runs,
            "a run's end with no run left is done"
        );
        if self.env.runs != 0 {
            state.runs += 1;
        }
        self.reset_volatile(state);
        self.start(state, self.program.every_run);
    }

    /// Whether a run is under way: some process has a step of it to take, or waits.
    fn in_run(&self, state: &State) -> bool {
        !matches!(state.status, Status::Done | Status::Fatal(_)) && !self.at_run_end(state)
    }

    /// The pipeline stops for good at instruction `pc` (a `fail fatal`, a counter out of
    /// range): every process stops.
    fn stop(&self, state: &mut State, pc: usize) {
        state.close_stream();
        state.procs.fill(Status::Ended);
        state.status = Status::Fatal(pc as u16);
    }

    /// Whether the connector is at a run's end: its run is over, the next not started.
    pub fn at_run_end(&self, state: &State) -> bool {
        state.status == Status::Running(self.program.run_end as u16)
    }

    fn reset_volatile(&self, state: &mut State) {
        for (slot, value) in self.program.slots.iter().zip(state.vars_mut().iter_mut()) {
            if slot.storage == Storage::Volatile {
                *value = init(slot);
            }
        }
    }

    /// The connector's next steps, those it can take now: each process's, one action per
    /// outcome of PostgreSQL's (and the connector's) choices, in choice order.
    pub fn steps(&self, state: &State, actions: &mut Vec<Action>) {
        for p in 0..=self.program.processes.len() {
            self.steps_of(state, p, actions);
        }
    }

    fn steps_of(&self, state: &State, p: usize, actions: &mut Vec<Action>) {
        let Status::Running(pc) = self.status(state, p) else {
            return;
        };
        let instr = &self.program.code[pc as usize];
        let process = p as u8;
        if instr.plain && !(instr.fallible && self.env.call_failures > 0) {
            actions.push(Action::Step {
                name: instr.step,
                choices: 0,
                detail: None,
                fair: instr.fair,
                process,
            });
            return;
        }
        actions.extend(
            self.outcomes(state, p)
                .into_iter()
                .map(|(choices, detail, branch)| {
                    let step = branch.map_or(instr, |pc| &self.program.code[pc]);
                    Action::Step {
                        name: step.step,
                        choices,
                        detail,
                        fair: step.fair,
                        process,
                    }
                }),
        );
    }

    /// The outcomes of process `p`'s next step, the choices as bits and what they chose, in
    /// choice order: each tried on a copy of `state`, those that can be taken kept.
    fn outcomes(&self, state: &State, p: usize) -> SmallVec<[Outcome; 4]> {
        // On the stack: a step has few choices, and this runs for every state explored.
        let mut pending: SmallVec<[(u64, u8); 8]> = smallvec![(0u64, 0u8)];
        let mut found: SmallVec<[Outcome; 4]> = SmallVec::new();
        while let Some((script, fixed)) = pending.pop() {
            let mut next = state.clone();
            let mut chooser = Chooser {
                script,
                made: 0,
                detail: None,
                branch: None,
            };
            let blocked = self.run_step(&mut next, p, &mut chooser);
            assert!(
                usize::from(chooser.made) <= CHOICES_MAX,
                "step `{}` makes more than {CHOICES_MAX} choices (`either` branches, PostgreSQL's \
                 outcomes, failing calls): split it into steps",
                self.program.code[self.pc_of(state, p)].step
            );
            for bit in fixed..chooser.made {
                pending.push((script | (1 << bit), bit + 1));
            }
            if !blocked {
                found.push((script, chooser.detail, chooser.branch));
            }
        }
        found.sort_unstable();
        found
    }

    /// Takes process `p`'s step with the `choices`; false when it cannot be taken.
    pub fn take_step(&self, state: &mut State, p: usize, choices: u64) -> bool {
        let mut chooser = Chooser {
            script: choices,
            made: 0,
            detail: None,
            branch: None,
        };
        !self.run_step(state, p, &mut chooser)
    }

    /// Runs the step at process `p`'s position; true when it was blocked (the state is then
    /// to be thrown away).
    fn run_step(&self, state: &mut State, p: usize, chooser: &mut Chooser) -> bool {
        let Status::Running(pc) = self.status(state, p) else {
            return true;
        };
        state.error = None;
        let mut pc = pc as usize;
        if p == 0 && pc == self.program.run_end {
            self.next_run(state);
            return false;
        }
        let mut region = self.program.code[pc].atomic;
        loop {
            let mut next = pc + 1;
            match self.exec(state, pc, chooser) {
                Ok(to) => next = to.unwrap_or(next),
                Err(Stop::Blocked) => return true,
                Err(Stop::Fail(error)) => {
                    state.error = error;
                    self.end_run(state);
                    return false;
                }
                Err(Stop::OutOfRange) => {
                    self.stop(state, pc);
                    return false;
                }
                Err(Stop::Fatal(at)) => {
                    self.stop(state, at);
                    return false;
                }
            }
            let chose = matches!(self.program.code[pc].op, Op::Either(_));
            let (choice, start) = (pc, next);
            self.go(state, p, next);
            let Status::Running(next) = self.status(state, p) else {
                return false;
            };
            let next = next as usize;
            // A labelled block is one step: its instructions run forward (the static checks
            // allow no loop and no call in it) until control leaves it. A run's end is outside
            // every block, so one step never reaches into the next run.
            match region {
                Some((start, end)) if next > pc && next < end => {
                    debug_assert!(next >= start);
                    pc = next;
                }
                // An `either` outside a block takes the chosen branch's first step with it; a
                // branch with none is the `either`'s step alone, never one after it.
                None if chose && self.in_branch(choice, start, next) => {
                    chooser.branch = Some(next);
                    region = self.program.code[next].atomic;
                    pc = next;
                }
                _ => return false,
            }
        }
    }

    /// Whether instruction `next` lies inside the branch starting at `start` of the `either`
    /// at `choice`: each branch but the last ends where the next starts, the last where the
    /// branches' closing jumps go.
    fn in_branch(&self, choice: usize, start: usize, next: usize) -> bool {
        let code = &self.program.code;
        let Op::Either(starts) = &code[choice].op else {
            return false;
        };
        let k = starts.iter().position(|&s| s == start);
        let end = match k {
            Some(k) if k + 1 < starts.len() => starts[k + 1],
            _ => match code[starts[1] - 1].op {
                Op::Jump(end) => end,
                _ => unreachable!("each branch but the last ends with a jump past the rest"),
            },
        };
        (start..end).contains(&next)
    }

    /// Executes one effect instruction.
    fn exec(
        &self,
        state: &mut State,
        pc: usize,
        chooser: &mut Chooser,
    ) -> Result<Option<usize>, Stop> {
        match &self.program.code[pc].op {
            Op::Receive { var, end } => {
                if state.stopping {
                    self.walsender_done(state);
                }
                if state.walsender.is_none() && state.stream_closed {
                    return Ok(Some(*end));
                }
                let message = self.receive(state, chooser).ok_or(Stop::Blocked)?;
                state.vars_mut()[*var] = Value::Message(message);
                Ok(None)
            }
            Op::Either(branches) => Ok(Some(branches[chooser.among(branches.len())])),
            Op::Call(call) | Op::AssignCall { call, .. } if self.call_fails(state, chooser, pc) => {
                self.failed_call(state, call, pc, chooser)
            }
            _ => self.exec_effect(state, pc, chooser).map(|()| None),
        }
    }

    /// Whether the call at `pc` fails: one of the `env call_failures` left, the connector's
    /// environment's choice.
    fn call_fails(&self, state: &State, chooser: &mut Chooser, pc: usize) -> bool {
        state.call_failures < self.env.call_failures
            && crate::program::fallible(&self.program.code[pc].op)
            && chooser.choose(Detail::CallFails)
    }

    /// A failed call: before taking effect, or after (its answer lost); then its `on error`
    /// handler, or the end of the run. A `destination.commit` that fails before taking effect
    /// rolls the destination's transaction back: its open batch is gone, and a retry commits
    /// only what the handler writes again.
    fn failed_call(
        &self,
        state: &mut State,
        call: &Call,
        pc: usize,
        chooser: &mut Chooser,
    ) -> Result<Option<usize>, Stop> {
        state.call_failures += 1;
        if chooser.choose(Detail::CallTimesOut) {
            self.call(state, call, chooser)?;
        } else if call.callee.node == "destination.commit" {
            state.drop_batch();
        }
        match self.program.code[pc].on_error {
            Some(handler) => Ok(Some(handler)),
            None => Err(Stop::Fail(Some(PgError::CallFailed))),
        }
    }

    /// `wait COND`: blocked unless `COND` holds; a timer it waits for fires (is disarmed).
    fn wait(&self, state: &mut State, cond: &Expr, timer: Option<usize>) -> Result<(), Stop> {
        if !self.eval(state, cond).truth() {
            return Err(Stop::Blocked);
        }
        if let Some(timer) = timer {
            state.vars_mut()[timer] = Value::Bool(false);
        }
        Ok(())
    }

    /// `CHANNEL.send(value)`: into the first free place; blocked while the channel is full.
    fn send(&self, state: &mut State, channel: usize, value: &Expr) -> Result<(), Stop> {
        let Type::Counter(_, capacity) = self.program.slots[channel].ty else {
            return Err(Stop::Blocked);
        };
        let held = state.vars[channel].count();
        if held >= capacity {
            return Err(Stop::Blocked);
        }
        let v = self.eval(state, value);
        self.set(state, channel + 1 + held as usize, v)?;
        state.vars_mut()[channel] = Value::Count(held + 1);
        Ok(())
    }

    /// `[var =] CHANNEL.receive()`: the oldest value, the others moved up a place; blocked
    /// while the channel is empty.
    fn take(&self, state: &mut State, channel: usize, var: Option<usize>) -> Result<(), Stop> {
        let held = state.vars[channel].count() as usize;
        if held == 0 {
            return Err(Stop::Blocked);
        }
        let first = state.vars[channel + 1];
        let vars = state.vars_mut();
        vars.copy_within(channel + 2..channel + 1 + held, channel + 1);
        vars[channel + held] = init(&self.program.slots[channel + held]);
        vars[channel] = Value::Count(held as u64 - 1);
        match var {
            Some(var) => self.set(state, var, first),
            None => Ok(()),
        }
    }

    fn exec_effect(&self, state: &mut State, pc: usize, chooser: &mut Chooser) -> Result<(), Stop> {
        match &self.program.code[pc].op {
            Op::Assign { var, value } => {
                let v = self.eval(state, value);
                self.set(state, *var, v)
            }
            Op::AssignCall { var, call } => {
                let v = self.call(state, call, chooser)?;
                self.set(state, *var, v)
            }
            Op::Call(call) => self.call(state, call, chooser).map(|_| ()),
            Op::Fail { fatal: true, .. } => Err(Stop::Fatal(pc)),
            Op::Fail { fatal: false, .. } => Err(Stop::Fail(None)),
            Op::Flush(var) => {
                self.flush(state, *var);
                Ok(())
            }
            Op::Wait { cond, timer } => self.wait(state, cond, *timer),
            Op::Send { channel, value } => self.send(state, *channel, value),
            Op::Take { channel, var } => self.take(state, *channel, *var),
            _ => Ok(()),
        }
    }

    /// Assigns, converting `none` to the variable's kind; a counter leaving its range is a
    /// fatal error of the design.
    fn set(&self, state: &mut State, var: usize, value: Value) -> Result<(), Stop> {
        match (value, self.program.slots[var].ty) {
            (Value::Count(n), Type::Counter(lo, hi)) if n < lo || n > hi => {
                return Err(Stop::OutOfRange)
            }
            (Value::Outside(_), _) => return Err(Stop::OutOfRange),
            _ => {}
        }
        let value = match (value, state.vars[var]) {
            (Value::None, Value::Lsn(_)) => Value::Lsn(Lsn::INVALID),
            (Value::None, Value::Txn(_)) => Value::Txn(None),
            (Value::None, Value::Txns(_)) => Value::Txns(0),
            (Value::Lsn(lsn), Value::Txn(_)) if !lsn.is_valid() => Value::Txn(None),
            (v, _) => v,
        };
        state.vars_mut()[var] = value;
        Ok(())
    }

    fn flush(&self, state: &mut State, var: usize) {
        if let Some(k) = self.async_index(var) {
            state.flushed[k] = state.vars[var];
        }
    }

    fn async_index(&self, var: usize) -> Option<usize> {
        let slots = &self.program.slots;
        (slots[var].storage == Storage::DurableAsync).then(|| {
            slots[..var]
                .iter()
                .filter(|s| s.storage == Storage::DurableAsync)
                .count()
        })
    }

    /// The next message on the replication connection: the next transaction the walsender
    /// sends, or (PostgreSQL's choice, while keepalives are left) a keepalive.
    fn receive(&self, state: &mut State, chooser: &mut Chooser) -> Option<Message> {
        let start = state.walsender?;
        let (ws, next) = self.to_send(state)?;
        // What the walsender reads past before this message, it skipped for good.
        let read_to = next.map_or(ws.read_to, |(_, after)| after.read_to);
        state.lost |= self.skips_owed(state, &ws, read_to);
        if let Some(k) = self.keepalive_inside(state, &ws, next, chooser) {
            return Some(k);
        }
        if let Some((i, last)) = state.sending {
            debug_assert_eq!(next.map(|(n, _)| n), Some(usize::from(i)));
            return self.next_part(state, ws, next?, Some(last));
        }
        let keepalive_left = state.keepalives < self.env.keepalives;
        if let Some(early) = self.keepalive_before_reading(state, &start, &ws, chooser) {
            return Some(early);
        }
        let keepalive = match next {
            Some(_) if keepalive_left => chooser.choose(Detail::Keepalive),
            Some(_) => false,
            // A stopping walsender that has caught up asks for a reply, whatever the knob:
            // `walsender.c:WalSndDone` (15) sends `WalSndKeepalive(true, …)` until the client
            // has reported `sentPtr` ([`Machine::walsender_done`] ends the stream then).
            None if state.stopping => {
                // One request at a time: none while one is unanswered (`waiting_for_ping_response`).
                if state.asked {
                    return None;
                }
                state.walsender = Some(ws);
                state.asked = true;
                let k = ws.at_shutdown(state.replied, state.replied)?;
                return Some(Message {
                    txn: None,
                    wal_end: k.wal_end,
                    reply_requested: k.reply_requested,
                    part: None,
                });
            }
            // Caught up, an idle walsender sends a keepalive every wal_sender_timeout / 2
            // (PostgreSQL 15 walsender.c:WalSndKeepaliveIfNecessary), for ever: one more at its
            // position is always there, and not counted, so that a connector waiting for its
            // next message is never stalled by the model's bound.
            None if self.env.keepalives > 0 => true,
            None => return None,
        };
        if keepalive && next.is_some() {
            state.keepalives += 1;
        }
        if keepalive {
            state.walsender = Some(ws);
            let k = ws.keepalive(false);
            return Some(Message {
                txn: None,
                wal_end: k.wal_end,
                reply_requested: k.reply_requested,
                part: None,
            });
        }
        let (i, after) = next?;
        if self.env.by_change {
            return self.next_part(state, ws, (i, after), None);
        }
        state.walsender = Some(after);
        Some(Message {
            txn: Some(i as u8),
            wal_end: state.txns[i].end_lsn,
            reply_requested: false,
            part: None,
        })
    }

    /// With `env messages = changes`, a counted keepalive (PostgreSQL's choice) whose `sentPtr`
    /// lies inside the next transaction `next`: before its Begin, at the end of any of its change
    /// records the reader may have read before the commit record ([`Txn::change_record_ends`]),
    /// the reader then standing there; between its messages, at its `commit_lsn`, the end of the
    /// record before the commit record whose decoding sends them. PostgreSQL 15
    /// `walsender.c:XLogSendLogical` moves `sentPtr` after every record, and
    /// `WalSndKeepaliveIfNecessary` runs between records (`WalSndLoop`) and while a decoded
    /// transaction's output waits for the socket (`WalSndWriteData` → `ProcessPendingWrites`).
    fn keepalive_inside(
        &self,
        state: &mut State,
        ws: &Walsender,
        next: Option<(usize, Walsender)>,
        chooser: &mut Chooser,
    ) -> Option<Message> {
        let (i, _) = next?;
        let left = state.keepalives < self.env.keepalives;
        if !left || state.stopping {
            return None;
        }
        let txn = state.txns[i];
        let at = if state.sending.is_some() {
            vec![txn.commit_lsn]
        } else {
            txn.change_record_ends(self.env.multi_insert)
        };
        let before = state.sending.is_none();
        // Before the Begin, only what the reader has not yet read past.
        let p = at
            .into_iter()
            .filter(|p| !before || *p > ws.sent_ptr)
            .find(|p| chooser.choose(Detail::KeepaliveInside(*p)))?;
        state.keepalives += 1;
        if before {
            let mut read = *ws;
            read.read_within(p);
            state.walsender = Some(read);
        }
        Some(Message {
            txn: None,
            wal_end: p,
            reply_requested: false,
            part: None,
        })
    }

    /// The next message of transaction `i`, sent message by message (`env messages =
    /// changes`), after `last` (`None`: its Begin first): until its Commit the walsender stays
    /// before the transaction (`ws`), then is past it (`after`). PostgreSQL 15
    /// `walsender.c:XLogSendLogical` moves `sentPtr` only once the decoding of the commit record
    /// has sent the whole transaction ([`TxnPart::next`], [`TxnPart::lsn`]).
    fn next_part(
        &self,
        state: &mut State,
        ws: Walsender,
        (i, after): (usize, Walsender),
        last: Option<TxnPart>,
    ) -> Option<Message> {
        let txn = state.txns[i];
        let part = last.map_or(Some(TxnPart::Begin), |p| p.next(&txn))?;
        if part == TxnPart::Commit {
            state.sending = None;
            state.walsender = Some(after);
        } else {
            state.sending = Some((i as u8, part));
            state.walsender = Some(ws);
        }
        Some(Message {
            txn: Some(i as u8),
            wal_end: part.lsn(&txn, self.env.multi_insert),
            reply_requested: false,
            part: Some(part),
        })
    }

    /// A keepalive before the walsender reads on to its next message (`ws`), at `sentPtr` as its
    /// last read left it (`start`) — after START_REPLICATION the end of the first record, below
    /// `confirmed_flush` when `restart_lsn` lags (OLake #862; live rule
    /// `keepalive_below_confirmed_flush`): PostgreSQL 15 `walsender.c:WalSndKeepaliveIfNecessary`
    /// runs between records, whenever half of `wal_sender_timeout` has passed. Counted, and
    /// PostgreSQL's choice.
    fn keepalive_before_reading(
        &self,
        state: &mut State,
        start: &Walsender,
        ws: &Walsender,
        chooser: &mut Chooser,
    ) -> Option<Message> {
        let left = state.keepalives < self.env.keepalives;
        if !left || state.stopping || start.sent_ptr >= ws.sent_ptr {
            return None;
        }
        if !chooser.choose(Detail::KeepaliveBeforeReading) {
            return None;
        }
        state.keepalives += 1;
        let k = start.keepalive(false);
        Some(Message {
            txn: None,
            wal_end: k.wal_end,
            reply_requested: k.reply_requested,
            part: None,
        })
    }

    /// The connector's walsender as it stands before its next message: past the WAL it
    /// decodes and does not send, and, when nothing is left to send below the flush pointer
    /// (a standby's replay pointer), caught up at it; with the next transaction it sends (its
    /// index, and the walsender after it), if any. `None` without a stream.
    fn to_send(&self, state: &State) -> Option<(Walsender, Option<(usize, Walsender)>)> {
        let mut ws = state.walsender?;
        let limit = self.send_limit(state);
        let mut next = None;
        for (i, txn) in state.live() {
            if txn.end_lsn <= ws.read_to || txn.end_lsn > limit {
                continue;
            }
            let mut after = ws;
            if after.decode_txn(txn) {
                next = Some((i, after));
                break;
            }
            ws = after;
        }
        if next.is_none() {
            // Caught up: the reader has read to the end of the WAL it may send.
            if limit > ws.read_to {
                ws.read_to = limit;
                ws.sent_ptr = limit;
            }
        }
        Some((ws, next))
    }

    /// A stopping walsender exits once it has sent everything and the client has reported
    /// `sentPtr` ([`Walsender::at_shutdown`]): the stream ends (CopyDone), as at the end of the
    /// stream for `for each message`.
    ///
    /// PostgreSQL 15 `walsender.c:XLogSendLogical` sets `got_SIGUSR2` once caught up with
    /// `got_STOPPING`; `WalSndDone` then exits when `sentPtr == replicatedPtr`. Live rule
    /// `shutdown_keepalive_requests_reply`.
    fn walsender_done(&self, state: &mut State) {
        let Some((ws, None)) = self.to_send(state) else {
            return;
        };
        if state.stopping && ws.at_shutdown(state.replied, state.replied).is_none() {
            state.end_stream();
        }
    }

    // ---- calls ---------------------------------------------------------------------------

    fn arg(&self, state: &State, call: &Call, name: &str, position: usize) -> Option<Value> {
        let named = call
            .args
            .iter()
            .find(|a| a.name.as_ref().is_some_and(|n| n.node == name));
        let positional = call.args.iter().filter(|a| a.name.is_none()).nth(position);
        named.or(positional).map(|a| self.eval(state, &a.value))
    }

    /// A call: its value (a row's field when the call names one), or how it failed. While
    /// PostgreSQL stops cleanly, a call that needs a session of its own fails.
    fn call(&self, state: &mut State, call: &Call, chooser: &mut Chooser) -> Result<Value, Stop> {
        if state.stopping && vocabulary::needs_session(&call.callee.node) {
            return Err(Stop::Fail(Some(PgError::ShuttingDown)));
        }
        if let Some(error) = self.invalidated(state, &call.callee.node) {
            return Err(Stop::Fail(Some(error)));
        }
        self.answer(state, call, chooser)
    }

    /// The ERROR a call that reads the slot meets once `max_slot_wal_keep_size` invalidated it
    /// (`restart_lsn` `0/0`): streaming, SQL decoding and advancing all check it after taking the
    /// slot (PostgreSQL 15 `walsender.c:StartLogicalReplication`,
    /// `logicalfuncs.c:pg_logical_slot_get_changes_guts`, `slotfuncs.c:pg_replication_slot_advance`).
    fn invalidated(&self, state: &State, callee: &str) -> Option<PgError> {
        let slot = state.slot?;
        let no_decoding = self.env.role == Role::Standby && self.env.pg_version < 16;
        if slot.slot.restart_lsn.is_valid() || no_decoding || state.walsender.is_some() {
            return None;
        }
        match callee {
            "start_replication" => Some(PgError::StreamInvalidated),
            "pg_logical_slot_get_changes" | "pg_logical_slot_peek_changes" => {
                Some(PgError::ChangesInvalidated)
            }
            "pg_replication_slot_advance" => Some(PgError::AdvanceInvalidated),
            _ => None,
        }
    }

    /// `pg_replication_slot_advance(upto_lsn)`: [`DurableSlot::slot_advance_via`], PostgreSQL
    /// choosing where `restart_lsn` lands ([`advance_restart`]); a transaction running at the
    /// running-xacts record holds it at its first change ([`running_restart`]).
    fn slot_advance(
        &self,
        state: &mut State,
        call: &Call,
        chooser: &mut Chooser,
    ) -> Result<Value, Stop> {
        let target = self
            .arg(state, call, "upto_lsn", 0)
            .map_or(Lsn::INVALID, Value::lsn);
        let limit = self.limit(state);
        self.slot_usable(state)?;
        let running = self.running_txns(state);
        let slot = state
            .slot
            .as_mut()
            .ok_or(Stop::Fail(Some(PgError::NoSlot)))?;
        let (was, record) = (*slot, advance_restart(&slot.slot, target, limit, chooser));
        // A transaction running at the record holds `restart_lsn` at its first change.
        let record = record.map(|at| (at, running_restart(at, &running)));
        let end_lsn = slot
            .slot_advance_via(target, limit, record)
            .map_err(|e| Stop::Fail(Some(PgError::Advance(e))))?;
        self.crash_unsaved(state, was, chooser)
            .and(Ok(Value::Lsn(end_lsn)))
    }

    /// What the vocabulary's call answers, and does ([`Machine::call`]).
    fn answer(&self, state: &mut State, call: &Call, chooser: &mut Chooser) -> Result<Value, Stop> {
        let field = call.field.as_ref().map(|f| f.node.as_str());
        let lsn = |l: Lsn| Ok(Value::Lsn(l));
        let on_primary = |l: Lsn| match self.env.role {
            Role::Primary => Ok(Value::Lsn(l)),
            Role::Standby => Err(Stop::Fail(Some(PgError::RecoveryInProgress))),
        };
        match call.callee.node.as_str() {
            "pg_current_wal_lsn" => on_primary(state.wal.write),
            "pg_current_wal_insert_lsn" => on_primary(state.wal.insert),
            "pg_current_wal_flush_lsn" => on_primary(state.wal.flush),
            // NULL, 0/0 here, on a primary until a crash, then the end of recovery.
            "pg_last_wal_replay_lsn" => lsn(self
                .server(state)
                .last_wal_replay_lsn()
                .unwrap_or(Lsn::INVALID)),
            "pg_is_in_recovery" => Ok(Value::Bool(self.env.role == Role::Standby)),
            "pg_replication_slots" => {
                let slot = state.slot.map(|s| s.slot);
                lsn(match (slot, field) {
                    (Some(s), Some("restart_lsn")) => s.restart_lsn,
                    (Some(s), _) => s.confirmed_flush,
                    (None, _) => Lsn::INVALID,
                })
            }
            "pg_replication_slot_advance" => self.slot_advance(state, call, chooser),
            "pg_create_logical_replication_slot" => {
                if self.env.role == Role::Standby && self.env.pg_version < 16 {
                    return Err(Stop::Fail(Some(PgError::DecodingInRecovery)));
                }
                if state.slot.is_some() {
                    return Err(Stop::Fail(Some(PgError::SlotExists)));
                }
                // The consistent point waits for the transactions running when it started:
                // `snapbuild.c:SnapBuildFindSnapshot` (15) waits until every xid in the
                // running-xacts record has finished, so the call returns only once the open
                // transaction has committed (or aborted).
                if state.open.is_some() {
                    return Err(Stop::Blocked);
                }
                let slot = create_logical_slot(&mut state.wal, IDLE_RUNNING_XACTS_BYTES);
                state.commit_pending = false;
                state.slot = Some(DurableSlot::created(slot));
                state.slot_origin = slot.confirmed_flush;
                lsn(slot.confirmed_flush)
            }
            "pg_drop_replication_slot" => {
                self.slot_usable(state)?;
                state.slot.take().ok_or(Stop::Fail(Some(PgError::NoSlot)))?;
                state.close_stream();
                Ok(Value::None)
            }
            "pg_logical_slot_peek_changes" | "pg_logical_slot_get_changes" => {
                let confirm = call.callee.node == "pg_logical_slot_get_changes";
                let request = SqlDecode {
                    upto_lsn: self.arg(state, call, "upto_lsn", 0).map(Value::lsn),
                    upto_nchanges: self
                        .arg(state, call, "upto_nchanges", 1)
                        .map(|v| v.count().min(u64::from(u32::MAX)) as u32),
                    confirm,
                };
                self.slot_usable(state)?;
                self.wait_for_standby(state, request.upto_lsn);
                let end_of_wal = self.limit(state);
                let live: Vec<Txn> = state.live().map(|(_, t)| *t).collect();
                let slot = state
                    .slot
                    .as_mut()
                    .ok_or(Stop::Fail(Some(PgError::NoSlot)))?;
                // Rows as the plugin writes them: BEGIN, one per change, COMMIT (live rule
                // `sql_upto_nchanges_whole_txns`); none for a transaction outside the
                // publication, which the call does not return.
                let changes = decoding::get_changes(slot, &live, end_of_wal, request, None, |t| {
                    if t.is_published() {
                        decoding::test_decoding_rows(t)
                    } else {
                        0
                    }
                });
                let set = changes
                    .txns
                    .iter()
                    .filter_map(|t| state.txns.iter().position(|u| u == t))
                    .fold(0u16, |set, i| set | (1 << i));
                Ok(Value::Txns(set))
            }
            "identify_system" => Ok(self.identify_system(state, field)),
            "start_replication" => {
                let from = self
                    .arg(state, call, "from", 0)
                    .map_or(Lsn::INVALID, Value::lsn);
                if self.env.role == Role::Standby && self.env.pg_version < 16 {
                    return Err(Stop::Fail(Some(PgError::DecodingInRecovery)));
                }
                let slot = state.slot.ok_or(Stop::Fail(Some(PgError::NoSlot)))?;
                let mut ws = Walsender::start_replication(from, &slot.slot);
                ws.read_first_record();
                let limit = self.limit(state);
                state.lost |= self.skips_owed(state, &ws, limit);
                state.close_stream();
                state.walsender = Some(ws);
                state.stream_closed = false;
                Ok(Value::None)
            }
            "standby_status_update" => self.status_update(state, call, chooser),
            "backfill" => {
                self.backfill(state);
                Ok(Value::None)
            }
            "destination.write" => {
                let written = self.arg(state, call, "txns", 0);
                self.write(state, written);
                Ok(Value::None)
            }
            "destination.commit" => {
                self.commit_batch(state);
                for arg in &call.args {
                    if let Some(name) = &arg.name {
                        if let Some(var) = self.program.var(&name.node) {
                            let v = self.eval(state, &arg.value);
                            self.set(state, var, v)?;
                        }
                    }
                }
                Ok(Value::None)
            }
            _ => Ok(Value::None),
        }
    }

    /// `destination.write(x)`: a transaction, a set of them, or what a message carries — its
    /// transaction whole, or (`env messages = changes`) a change's row, a Begin or a Commit
    /// nothing — joins the destination's open batch.
    fn write(&self, state: &mut State, written: Option<Value>) {
        let (txns, rows) = match written {
            Some(Value::Txn(Some(i))) => (1 << i, row_bits(1 << i, self.env.rows)),
            Some(Value::Txns(set)) => (set, row_bits(set, self.env.rows)),
            Some(Value::Message(Message {
                txn: Some(i), part, ..
            })) => match part {
                None => (1 << i, row_bits(1 << i, self.env.rows)),
                Some(TxnPart::Change(k)) => (1 << i, 1 << (4 * u32::from(i) + k)),
                Some(_) => (0, 0),
            },
            _ => (0, 0),
        };
        state.batch |= txns;
        if self.env.by_change {
            state.batch_rows |= rows;
        }
    }

    /// `destination.commit(…)` makes the open batch durable: a transaction is in the
    /// destination once every row of it is (`env messages = changes`), and committed twice once
    /// any row of it is.
    fn commit_batch(&self, state: &mut State) {
        if self.env.by_change {
            if self.program.duplicates {
                state.duplicated |= txns_of_rows(state.batch_rows & state.dest_rows);
            }
            state.dest_rows |= state.batch_rows;
            state.dest |= whole_txns(state.dest_rows, self.env.rows);
        } else {
            if self.program.duplicates {
                state.duplicated |= state.dest & state.batch;
            }
            state.dest |= state.batch;
        }
        state.drop_batch();
    }

    /// `backfill()`: the destination gets every committed publication transaction a snapshot
    /// of the published tables sees.
    fn backfill(&self, state: &mut State) {
        let limit = self.limit(state);
        // An asynchronous commit is visible before its WAL is flushed, a synchronous one only
        // after (PostgreSQL 15 `xact.c:RecordTransactionCommit`: `XLogFlush` under
        // `synchronous_commit`, `XLogSetAsyncXactLSN` otherwise, then the commit marked in the
        // CLOG and `ProcArrayEndTransaction`); a standby shows what it has replayed.
        let visible = |t: &Txn| {
            t.end_lsn <= limit || (self.env.role == Role::Primary && t.mode == CommitMode::Async)
        };
        let read = state
            .live()
            .filter(|(_, t)| t.is_published() && visible(t))
            .fold(0u16, |set, (i, _)| set | (1 << i));
        state.dest |= read;
        if self.env.by_change {
            state.dest_rows |= row_bits(read, self.env.rows);
        }
    }

    /// SQL decoding of a failover slot waits until the standby has the WAL it will read, up to
    /// `upto_lsn` (PostgreSQL 17 `logicalfuncs.c:pg_logical_slot_get_changes_guts` →
    /// `WaitForStandbyConfirmation(Min(upto_lsn, end_of_wal))`): the model makes the wait part of
    /// the call's step, the standby receiving that far first.
    fn wait_for_standby(&self, state: &mut State, upto_lsn: Option<Lsn>) {
        if self.env.failover_slots && state.slot.is_some() {
            let flush = state.wal.flush;
            let wait_for = upto_lsn
                .filter(|l| l.is_valid())
                .map_or(flush, |l| l.min(flush));
            state.standby = standby_receive(state.standby, wait_for);
        }
    }

    /// `standby_status_update(write, flush)`: PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage`
    /// through [`process_standby_reply`], the slot taking a candidate `restart_lsn` it met
    /// (PostgreSQL's choice, [`restart_candidates`]); no stream open is the run's error.
    fn status_update(
        &self,
        state: &mut State,
        call: &Call,
        chooser: &mut Chooser,
    ) -> Result<Value, Stop> {
        let flush = self
            .arg(state, call, "flush", 1)
            .map_or(Lsn::INVALID, Value::lsn);
        let write = self.arg(state, call, "write", 0).map_or(flush, Value::lsn);
        if state.walsender.is_none() {
            return Err(Stop::Fail(Some(PgError::NoStream)));
        }
        let ends: Vec<Lsn> = state.live().map(|(_, t)| t.end_lsn).collect();
        let running = self.running_txns(state);
        // A candidate comes from a running-xacts record the walsender decoded: never past the
        // WAL it may read (`logical.c:LogicalIncreaseRestartDecodingForSlot`, 15).
        let decoded = flush.min(self.send_limit(state));
        let slot = state
            .slot
            .as_mut()
            .ok_or(Stop::Fail(Some(PgError::NoSlot)))?;
        let update = StandbyStatusUpdate {
            write,
            flush,
            apply: flush,
            reply_requested: false,
        };
        let candidates: Vec<Lsn> = restart_candidates(decoded, &slot.slot, ends)
            .filter_map(|at| restart_offered(&slot.slot, at, &running, flush))
            .collect();
        let candidate = chooser.among(candidates.len() + 1).checked_sub(1);
        if let Some(i) = candidate {
            chooser.detail = Some(Detail::Candidate(candidates[i]));
        }
        let (before, candidate) = (*slot, candidate.map(|i| candidates[i]));
        process_standby_reply_on(self.env.pg_release, slot, &update, candidate);
        self.crash_unsaved(state, before, chooser)?;
        if self.env.pg_stops > 0 {
            // `walsender.c:ProcessStandbyReplyMessage` (15) keeps the reply in `MyWalSnd`; any
            // reply resets `last_reply_timestamp` and `waiting_for_ping_response`.
            state.replied = if flush.is_valid() { flush } else { write };
            state.asked = false;
            self.walsender_done(state);
        }
        Ok(Value::None)
    }

    /// Before the fixed minors, a call that moved `restart_lsn` while a checkpoint is under way
    /// may have the checkpoint end between its update in shared memory and its save, and
    /// PostgreSQL crash before the save (PostgreSQL's choice, while a PostgreSQL crash is left):
    /// the checkpoint removes WAL by the moved `restart_lsn`, the crash restores the copy saved
    /// before it, and the call fails (its connection is gone).
    ///
    /// PostgreSQL 15.13 `logical.c:LogicalConfirmReceivedLocation` sets `data.restart_lsn` under
    /// the slot's spinlock, then `ReplicationSlotSave` ("the checkpointer can see the updated
    /// restart_lsn value in the shared memory; then, a crash can happen before we manage to
    /// write that value to the disk"); `xlog.c:CreateCheckPoint` → `KeepLogSeg` reads the
    /// slots' minimum at its end ([`checkpoint_horizon`]). PostgreSQL reads the minimum last
    /// published by `slot.c:ReplicationSlotsComputeRequiredLSN`, which the connector's own call
    /// publishes only after the save but another slot's creation or drop, or a physical
    /// standby's reply, publishes at any moment: the model reads the slot itself.
    fn crash_unsaved(
        &self,
        state: &mut State,
        before: DurableSlot,
        chooser: &mut Chooser,
    ) -> Result<(), Stop> {
        let moved = state
            .slot
            .is_some_and(|s| s.slot.restart_lsn > before.slot.restart_lsn);
        // An immediate stop where one is left, otherwise an operating-system crash.
        let os = state.pg_crashes >= self.env.pg_crashes;
        let crash_left = state.connector_crashes + state.pg_crashes + state.os_crashes
            < self.env.crashes
            && (!os || state.os_crashes < self.env.os_crashes);
        let under_way = state.checkpoint.is_some();
        if !(moved && crash_left && under_way && chooser.choose(Detail::CrashBeforeSave)) {
            return Ok(());
        }
        self.checkpoint_end(state);
        if let Some(slot) = state.slot.as_mut() {
            slot.slot.saved = before.slot.saved;
        }
        self.pg_crash(state, os);
        Err(Stop::Fail(Some(PgError::CallFailed)))
    }

    /// The slot may be taken by a SQL function: it exists, and no walsender holds it (PostgreSQL
    /// 15 `slot.c:ReplicationSlotAcquire`: "replication slot … is active for PID …"); on a
    /// standby, decoding needs PostgreSQL 16 (`logical.c:CheckLogicalDecodingRequirements`:
    /// "logical decoding cannot be used while in recovery").
    fn slot_usable(&self, state: &State) -> Result<(), Stop> {
        if self.env.role == Role::Standby && self.env.pg_version < 16 {
            return Err(Stop::Fail(Some(PgError::DecodingInRecovery)));
        }
        if state.slot.is_none() {
            return Err(Stop::Fail(Some(PgError::NoSlot)));
        }
        if state.walsender.is_some() {
            return Err(Stop::Fail(Some(PgError::SlotActive)));
        }
        Ok(())
    }

    // ---- expressions ---------------------------------------------------------------------

    /// The value of `expr` in `state` (properties may read PostgreSQL and the position).
    pub fn eval(&self, state: &State, expr: &Expr) -> Value {
        match &expr.node {
            ExprKind::None => Value::None,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Number(n) => Value::Count(*n),
            ExprKind::Lsn(l) => Value::Lsn(Lsn(*l)),
            ExprKind::Var(name) => self
                .program
                .var(name)
                .map_or(Value::None, |i| state.vars[i]),
            ExprKind::Field(of, field) => self.field(state, of, &field.node),
            ExprKind::MinMax { max, args } => {
                let (a, b) = (
                    self.eval(state, &args[0]).lsn(),
                    self.eval(state, &args[1]).lsn(),
                );
                Value::Lsn(if *max { a.max(b) } else { a.min(b) })
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.eval(state, a), self.eval(state, b));
                binary(*op, a, b)
            }
            ExprKind::Not(a) => Value::Bool(!self.eval(state, a).truth()),
            ExprKind::In(name) => Value::Bool(self.running(state).any(|pc| {
                let instr = &self.program.code[pc];
                instr.scopes.contains(&name.node.as_str())
            })),
            ExprKind::At(name) => Value::Bool(self.at(state, &name.node)),
        }
    }

    /// Where the processes that have a next step are, `every run`'s first.
    pub fn running<'s>(&self, state: &'s State) -> impl Iterator<Item = usize> + 's {
        std::iter::once(&state.status)
            .chain(&state.procs)
            .filter_map(|s| match s {
                Status::Running(pc) => Some(*pc as usize),
                _ => None,
            })
    }

    /// `at NAME`: a process's next step is NAME, or the pipeline stopped at the fatal fail NAME.
    fn at(&self, state: &State, name: &str) -> bool {
        if let Status::Fatal(pc) = state.status {
            let instr = &self.program.code[pc as usize];
            return instr.label == Some(name) || instr.base == name;
        }
        self.running(state).any(|pc| {
            let instr = &self.program.code[pc];
            instr.label == Some(name) || (instr.atomic.is_some() && instr.base == name)
        })
    }

    fn field(&self, state: &State, of: &Expr, field: &str) -> Value {
        if let ExprKind::Var(name) = &of.node {
            match self.program.var(name) {
                None => return self.observe(state, name, field),
                // A property reads an async variable's copy on disk as `NAME.flushed`.
                Some(i) if field == "flushed" => {
                    if let Some(k) = self.async_index(i) {
                        return state.flushed[k];
                    }
                }
                Some(_) => {}
            }
        }
        let txn = |i: Option<u8>| -> Value {
            let Some(t) = i.and_then(|i| state.txns.get(i as usize)) else {
                return Value::None;
            };
            match field {
                "first_lsn" => Value::Lsn(t.first_lsn),
                "commit_lsn" => Value::Lsn(t.commit_lsn),
                _ => Value::Lsn(t.end_lsn),
            }
        };
        match self.eval(state, of) {
            Value::Message(m) => match field {
                "txn" => Value::Txn(m.txn),
                "is_keepalive" => Value::Bool(m.txn.is_none()),
                "wal_end" | "lsn" => Value::Lsn(m.wal_end),
                "reply_requested" => Value::Bool(m.reply_requested),
                "is_begin" => Value::Bool(m.part == Some(TxnPart::Begin)),
                "is_change" => Value::Bool(matches!(m.part, Some(TxnPart::Change(_)))),
                "is_commit" => {
                    Value::Bool(m.txn.is_some() && matches!(m.part, None | Some(TxnPart::Commit)))
                }
                "index" => Value::Count(match m.part {
                    Some(TxnPart::Change(k)) => u64::from(k) + 1,
                    _ => 0,
                }),
                _ => Value::None,
            },
            Value::Txn(i) => txn(i),
            Value::Txns(set) => {
                let first = (set != 0).then(|| set.trailing_zeros() as u8);
                let last = (set != 0).then(|| 15 - set.leading_zeros() as u8);
                match field {
                    "first" => Value::Txn(first),
                    "last" => Value::Txn(last),
                    _ => match last {
                        Some(_) => txn(last),
                        None => Value::Lsn(Lsn::INVALID),
                    },
                }
            }
            _ => Value::None,
        }
    }

    /// `slot.…`, `wal.…` and `destination.…`, for properties.
    fn observe(&self, state: &State, of: &str, field: &str) -> Value {
        match (of, field) {
            ("destination", "holds") => return Value::Txns(state.dest),
            ("destination", "duplicated") => return Value::Txns(state.duplicated),
            _ => {}
        }
        let slot = state
            .slot
            .map(|s| s.slot)
            .unwrap_or(Slot::at_rest(Lsn::INVALID));
        Value::Lsn(match (of, field) {
            ("slot", "confirmed_flush") => slot.confirmed_flush,
            ("slot", "restart_lsn") => slot.restart_lsn,
            ("slot", "saved_confirmed_flush") => slot.saved.confirmed_flush,
            ("slot", "saved_restart_lsn") => slot.saved.restart_lsn,
            ("wal", "removed_before") => state.removed_before,
            ("wal", "insert") => state.wal.insert,
            ("wal", "write") => state.wal.write,
            ("wal", "flush") => state.wal.flush,
            ("wal", "replay") => state.wal.replay,
            _ => Lsn::INVALID,
        })
    }

    // ---- the environment -----------------------------------------------------------------

    /// Every enabled action, in a fixed order: the connector's step first, then the workload,
    /// PostgreSQL's background work, then the faults.
    pub fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        self.steps(state, actions);
        let env = &self.env;
        let committing = state.txns.len() + usize::from(state.open.is_some());
        if !state.commit_pending && !state.stopping && committing < TXNS_MAX {
            let both = env.bulk_txn_pages > 0 && env.bulk_txn_pages != env.txn_pages;
            let sizes = &[env.txn_pages, env.bulk_txn_pages][..if both { 2 } else { 1 }];
            for (published, left) in [
                (true, state.published < env.transactions),
                (false, state.other < env.other_traffic),
            ] {
                if !left {
                    continue;
                }
                for &pages in sizes {
                    for &mode in &env.commits {
                        actions.push(Action::Commit {
                            pages,
                            mode,
                            published,
                        });
                    }
                }
            }
        }
        self.interleaved(state, actions);
        if state.commit_pending {
            actions.push(Action::CommitFlush);
        }
        if state.wal.insert.page_floor(PAGE_BYTES) > state.wal.write {
            actions.push(Action::WalwriterWrite);
        }
        if state.wal.flush < state.wal.insert && !state.commit_pending {
            actions.push(Action::WalwriterFlush);
        }
        if env.checkpoints && state.checkpoint.is_some() {
            actions.push(Action::CheckpointEnd);
        } else if env.checkpoints
            && !state.stopping
            && (state.slot.is_some_and(|s| s.dirty)
                || (env.role == Role::Primary && state.wal.flush < state.wal.insert)
                || self.obsolete(state, self.redo(state))
                || self.horizon(state) > state.removed_before)
        {
            actions.push(
                match env.pg_release.checkpoint_keeps_slot_minimum_from_start() {
                    true => Action::Checkpoint,
                    false => Action::CheckpointStart,
                },
            );
        }
        if env.role == Role::Standby && !state.stopping && state.wal.replay < state.wal.flush {
            actions.push(Action::Replay);
        }
        self.standby_steps(state, actions);
        self.shutdown(state, actions);
        for (i, slot) in self.program.slots.iter().enumerate() {
            if let Some(k) = self.async_index(i) {
                if state.flushed[k] != state.vars[i] && state.status != Status::Done {
                    actions.push(Action::FlushPending { var: slot.name });
                }
            }
        }
        self.faults(state, actions);
    }

    /// A clean stop's steps enabled in `state`: its end once no walsender is left, the
    /// walsender's timeout while it waits for the client's reply.
    fn shutdown(&self, state: &State, actions: &mut Vec<Action>) {
        if !state.stopping {
            return;
        }
        match self.to_send(state) {
            // The standby's walsender too waits until the standby has every flushed byte.
            None if self.standby_behind(state) => {}
            None => {
                actions.push(Action::PgStopped { saves: true });
                if self.env.role == Role::Standby {
                    actions.push(Action::PgStopped { saves: false });
                }
            }
            // `walsender.c:WalSndCheckTimeOut` (15): `wal_sender_timeout` after the client's
            // last reply; a connector that answers each request is never timed out.
            Some((_, None)) if state.asked => actions.push(Action::WalsenderTimeout),
            Some(_) => {}
        }
    }

    /// Whether the primary's standby has not yet received everything flushed: a clean stop waits
    /// for it (PostgreSQL 15 `walsender.c:WalSndDone`: a physical walsender exits once the
    /// standby has flushed `sentPtr`, and `xlog.c:ShutdownXLOG` waits for every walsender).
    fn standby_behind(&self, state: &State) -> bool {
        self.env.has_standby() && state.standby < state.wal.flush
    }

    /// The primary's standby's steps enabled in `state`: receiving what the primary flushed, and
    /// a slot sync cycle that would change its copy of the slot.
    fn standby_steps(&self, state: &State, actions: &mut Vec<Action>) {
        if !self.env.has_standby() {
            return;
        }
        if state.standby < state.wal.flush {
            actions.push(Action::StandbyReceive);
        }
        if self.env.failover_slots && self.synced_after_sync(state) != state.synced {
            actions.push(Action::SlotSync);
        }
    }

    /// `IDENTIFY_SYSTEM`'s `field`: `xlogpos` ([`identify_system_xlogpos`]), or `timeline`: a
    /// fresh cluster (and its standby) is on timeline 1, and each failover's promotion starts
    /// the next ([`promoted_timeline`]).
    fn identify_system(&self, state: &State, field: Option<&str>) -> Value {
        match field {
            Some("timeline") => Value::Count(u64::from(
                (0..state.failovers).fold(1, |t, _| promoted_timeline(t)),
            )),
            _ => Value::Lsn(identify_system_xlogpos(&self.server(state))),
        }
    }

    /// The standby's copy of the slot after a cycle of its slot sync worker ([`sync_slot`]).
    fn synced_after_sync(&self, state: &State) -> Option<SavedSlot> {
        let remote = state.slot.map(|s| s.slot);
        sync_slot(remote.as_ref(), state.standby, state.synced)
    }

    /// The faults enabled in `state`: a connector crash, a PostgreSQL crash, a kill of each
    /// `killable` process under way.
    fn faults(&self, state: &State, actions: &mut Vec<Action>) {
        let env = &self.env;
        let crashes = state.connector_crashes + state.pg_crashes + state.os_crashes;
        if crashes < env.crashes {
            // A crash needs a run in progress: at a run's end the connector has no step under
            // way, and a crash at the next run's first step is the same fault.
            if state.connector_crashes < env.connector_crashes && self.in_run(state) {
                actions.push(Action::ConnectorCrash);
            }
            if state.pg_crashes < env.pg_crashes {
                actions.push(Action::PgCrash);
            }
            if state.os_crashes < env.os_crashes {
                actions.push(Action::OsCrash);
            }
        }
        if state.pg_stops < env.pg_stops && !state.stopping {
            actions.push(Action::PgStop);
        }
        if state.failovers < env.failovers && env.has_standby() {
            actions.push(Action::Failover);
        }
        if state.stream_drops < env.stream_drops && state.walsender.is_some() && !state.stopping {
            actions.push(Action::StreamDrop);
        }
        if state.kills < env.kills && self.in_run(state) {
            for (k, process) in self.program.processes.iter().enumerate() {
                if process.killable && matches!(state.procs[k], Status::Running(_)) {
                    actions.push(Action::Kill {
                        process: k as u8 + 1,
                        name: process.name,
                    });
                }
            }
        }
    }

    /// Applies an enabled action; `false` if it cannot be taken.
    pub fn apply(&self, state: &mut State, action: Action) -> bool {
        let applied = self.apply_action(state, action);
        if state.walsender.is_none() {
            // The reply a walsender kept, and its request, end with it.
            state.replied = Lsn::INVALID;
            state.asked = false;
        }
        applied
    }

    fn apply_action(&self, state: &mut State, action: Action) -> bool {
        match action {
            Action::Step {
                choices, process, ..
            } => return self.take_step(state, process as usize, choices),
            Action::Commit {
                pages,
                mode,
                published,
            } => self.commit(state, pages, mode, published),
            Action::Open { pages } => self.open(state, pages),
            Action::CommitOpen { mode } => self.commit_open(state, mode),
            Action::CommitFlush => {
                state.wal.commit_flush();
                state.commit_pending = false;
            }
            Action::WalwriterWrite => {
                state.wal.walwriter_write(PAGE_BYTES);
            }
            Action::WalwriterFlush => {
                state.wal.walwriter_flush();
            }
            Action::Checkpoint => {
                self.checkpoint_start(state);
                self.checkpoint_end(state);
            }
            Action::CheckpointStart => self.checkpoint_start(state),
            Action::CheckpointEnd => self.checkpoint_end(state),
            Action::Replay => {
                state.wal.replay_to_flush();
            }
            Action::FlushPending { var } => {
                if let Some(i) = self.program.var(var) {
                    self.flush(state, i);
                }
            }
            Action::ConnectorCrash => self.connector_crash(state),
            Action::Kill { process, .. } => {
                // The process alone dies and is restarted (a supervisor's restart): the
                // others and the shared variables are as they were.
                state.kills += 1;
                let p = process as usize;
                self.go(state, p, self.program.processes[p - 1].start);
            }
            Action::PgStop => self.pg_stop(state),
            Action::PgStopped { saves } => self.pg_stopped(state, saves),
            Action::WalsenderTimeout => state.end_stream(),
            // `walsender.c:WalSndCheckTimeOut` (15): "terminating walsender process due to
            // replication timeout", `WalSndShutdown`; a lost connection ends it the same way
            // (`ProcessRepliesIfAny`: EOF). The slot stays as it is in memory, released.
            Action::StreamDrop => {
                state.stream_drops += 1;
                state.end_stream();
            }
            Action::PgCrash => self.pg_crash(state, false),
            Action::OsCrash => self.pg_crash(state, true),
            Action::StandbyReceive => {
                state.standby = standby_receive(state.standby, state.wal.flush)
            }
            Action::SlotSync => state.synced = self.synced_after_sync(state),
            Action::Failover => self.failover(state),
        }
        true
    }

    /// A client transaction of `pages` WAL pages commits: its WAL inserted in one step
    /// ([`Wal::append`]), its commit record the last 48 bytes; a synchronous one then waits for
    /// its flush ([`Action::CommitFlush`]).
    fn commit(&self, state: &mut State, pages: u64, mode: CommitMode, published: bool) {
        let bytes = pages * PAGE_BYTES;
        let first_lsn = state.wal.insert;
        let buffers = self.env.wal_buffers_pages * PAGE_BYTES;
        state.wal.append(bytes, PAGE_BYTES, buffers);
        let end_lsn = state.wal.insert;
        let txn = Txn {
            xid: 730 + state.txns.len() as u32,
            first_lsn,
            changes_end: end_lsn.minus(48),
            commit_lsn: end_lsn.minus(48),
            end_lsn,
            published_rows: if published { self.env.rows } else { 0 },
            mode,
        };
        state.txns = state.txns.iter().copied().chain([txn]).collect();
        state.commit_pending = mode == CommitMode::Sync;
        if published {
            state.published += 1;
        } else {
            state.other += 1;
        }
    }

    /// With `env interleave = on`, the open transaction's commit, or a published transaction
    /// begun and left open (one at a time): while it is open other transactions commit, so its
    /// records interleave with theirs and it commits after them.
    fn interleaved(&self, state: &State, actions: &mut Vec<Action>) {
        let env = &self.env;
        if !env.interleave || state.commit_pending || state.stopping {
            return;
        }
        if state.open.is_some() {
            actions.extend(env.commits.iter().map(|&mode| Action::CommitOpen { mode }));
        } else if state.published < env.transactions && state.txns.len() + 1 < TXNS_MAX {
            actions.push(Action::Open {
                pages: env.txn_pages,
            });
        }
    }

    /// A published client transaction of `pages` WAL pages begins: its change records inserted
    /// ([`Wal::append`], all but the commit record's 48 bytes), its commit to come
    /// ([`Machine::commit_open`]). PostgreSQL 15 `heapam.c:heap_insert` logs each row when it is
    /// inserted ([`walcheck_model::pg::Wal::begin_txn`] is the same step).
    fn open(&self, state: &mut State, pages: u64) {
        let first_lsn = state.wal.insert;
        let buffers = self.env.wal_buffers_pages * PAGE_BYTES;
        state
            .wal
            .append(pages * PAGE_BYTES - 48, PAGE_BYTES, buffers);
        state.open = Some(OpenTxn {
            // Told apart from the transactions committing while it is open.
            xid: 1000 + u32::from(state.published),
            first_lsn,
            changes_end: state.wal.insert,
            published_rows: self.env.rows,
        });
        state.published += 1;
    }

    /// The open transaction commits: its 48-byte commit record at the insert pointer, after
    /// the transactions that committed since it began ([`walcheck_model::pg::Wal::commit_open`]:
    /// `xact.c:RecordTransactionCommit`, 15); a synchronous one then waits for its flush.
    fn commit_open(&self, state: &mut State, mode: CommitMode) {
        let Some(open) = state.open.take() else {
            return;
        };
        let commit_lsn = state.wal.insert;
        let buffers = self.env.wal_buffers_pages * PAGE_BYTES;
        state.wal.append(48, PAGE_BYTES, buffers);
        let txn = Txn {
            xid: open.xid,
            first_lsn: open.first_lsn,
            changes_end: open.changes_end,
            commit_lsn,
            end_lsn: state.wal.insert,
            published_rows: open.published_rows,
            mode,
        };
        state.txns = state.txns.iter().copied().chain([txn]).collect();
        state.commit_pending = mode == CommitMode::Sync;
    }

    /// The transactions a running-xacts record may find running, as `(first_lsn, commit_lsn)`
    /// ([`Txn::runs_at`]): every committed one over its records (a record inside a transaction's
    /// WAL was logged while it ran), and the open one (`env interleave = on`; its commit still
    /// to come, `Lsn::MAX`).
    fn running_txns(&self, state: &State) -> Vec<(Lsn, Lsn)> {
        let spanning = state.live().map(|(_, t)| (t.first_lsn, t.commit_lsn));
        let open = state.open.map(|o| (o.first_lsn, Lsn(u64::MAX)));
        spanning.chain(open).collect()
    }

    /// The connector process dies and is restarted: its volatile variables reset, each `async`
    /// one back to its flushed copy, its open batch and replication connection lost; it starts
    /// again at `after crash` (or `every run`), or at `first run` while that has not ended.
    fn connector_crash(&self, state: &mut State) {
        state.connector_crashes += 1;
        self.reset_volatile(state);
        for (i, slot) in self.program.slots.iter().enumerate() {
            if let (Some(k), Storage::DurableAsync) = (self.async_index(i), slot.storage) {
                let flushed = state.flushed[k];
                state.vars_mut()[i] = flushed;
            }
        }
        state.drop_batch();
        state.close_stream();
        state.stream_closed = false;
        let restart = if state.first_done {
            self.program.after_crash
        } else {
            self.program.first_run
        };
        self.start(state, restart);
    }

    /// A clean stop begins (`pg_ctl stop -m fast`): the client backends end (a synchronous
    /// commit's flush done), the WAL is flushed, and a walsender streaming to the connector
    /// stops once it has sent the rest and the connector has confirmed it
    /// ([`Machine::walsender_done`]); with none, the stop ends at once ([`Machine::pg_stopped`]).
    ///
    /// PostgreSQL 15 `postmaster.c:pmdie` (SIGINT) terminates the backends; `xlog.c:ShutdownXLOG`
    /// calls `walsender.c:WalSndInitStopping` and waits in `WalSndWaitStopping` for every logical
    /// walsender to exit (one streaming never enters `WALSNDSTATE_STOPPING`) before the shutdown
    /// checkpoint; a stopping walsender flushes the WAL inserted (`WalSndWaitForWal`:
    /// `XLogFlush(GetXLogInsertEndRecPtr())`).
    fn pg_stop(&self, state: &mut State) {
        state.pg_stops += 1;
        if self.env.role == Role::Primary {
            state.wal.checkpoint_flush();
        }
        // The fast stop terminates the backends: an open transaction is rolled back (on a
        // primary; a standby's stop leaves the primary's sessions alone).
        if self.env.role == Role::Primary {
            state.commit_pending = false;
            state.open = None;
        }
        state.stopping = true;
        self.walsender_done(state);
        // A standby's shutdown restartpoint may skip: [`Action::PgStopped`] chooses.
        if state.walsender.is_none()
            && self.env.role == Role::Primary
            && !self.standby_behind(state)
        {
            self.pg_stopped(state, true);
        }
    }

    /// The stop ends: the shutdown checkpoint saves the dirty slot (from 17 also one whose
    /// `confirmed_flush` moved), and the start reads it back ([`DurableSlot::clean_restart_on`]);
    /// a primary starts with its WAL flushed and no recovery ([`Wal::clean_restart`]).
    ///
    /// PostgreSQL 15 `xlog.c:ShutdownXLOG` → `CreateCheckPoint(CHECKPOINT_IS_SHUTDOWN)` (a
    /// standby: `CreateRestartPoint`, which skips when no primary checkpoint was replayed since
    /// the last: `saves` false, the slot as last saved); `slot.c:StartupReplicationSlots`. Live
    /// rules `shutdown_keepalive_requests_reply`, `status_update_not_saved` and
    /// `restartpoint_on_standby`.
    fn pg_stopped(&self, state: &mut State, saves: bool) {
        if self.env.role == Role::Primary {
            state.wal.clean_restart();
        }
        if let Some(slot) = state.slot.as_mut() {
            if saves {
                slot.clean_restart_on(self.env.pg_release);
            } else {
                slot.crash_restart();
            }
        }
        state.stopping = false;
        state.end_stream();
    }

    /// The horizon a checkpoint taken now would remove WAL before (a primary's redo pointer is
    /// the insert pointer, a standby's restartpoint's at most its replay pointer), when the
    /// state keeps it ([`Program::horizon`]); `0/0` otherwise.
    fn horizon(&self, state: &State) -> Lsn {
        if !self.program.horizon {
            return Lsn::INVALID;
        }
        // An invalidated slot needs no WAL (`XLogGetReplicationSlotMinimumLSN` skips it).
        let restart = state
            .slot
            .map(|s| s.slot.restart_lsn)
            .filter(|l| l.is_valid());
        removal_horizon(restart, self.redo(state))
    }

    /// A checkpoint's redo pointer if it started now: the insert pointer on a primary, on a
    /// standby the newest a restartpoint could take, its replay pointer.
    fn redo(&self, state: &State) -> Lsn {
        match self.env.role {
            Role::Primary => state.wal.insert,
            Role::Standby => state.wal.replay,
        }
    }

    /// A checkpoint's start: its redo pointer and the slot's minimum taken (when the state keeps
    /// the horizon), then the dirty slot saved (PostgreSQL 15 `xlog.c:CreateCheckPoint` →
    /// `CheckPointGuts` → `slot.c:CheckPointReplicationSlots`). A one-step checkpoint
    /// ([`Action::Checkpoint`]) ends at once ([`Machine::checkpoint_end`]).
    fn checkpoint_start(&self, state: &mut State) {
        let keeps = self.program.horizon || self.env.max_slot_wal_keep_pages.is_some();
        state.checkpoint = Some(match keeps {
            true => (self.redo(state), state.slot.map(|s| s.slot.restart_lsn)),
            false => (Lsn::INVALID, None),
        });
        if let Some(slot) = state.slot.as_mut() {
            slot.checkpoint();
        }
    }

    /// A checkpoint's end: the checkpoint record's `XLogFlush` on a primary
    /// ([`Wal::checkpoint_flush`]), then old WAL removed ([`checkpoint_horizon`] on the
    /// release: the slot's minimum from the start, or as it is now before the fixed minors).
    fn checkpoint_end(&self, state: &mut State) {
        let Some((redo, at_start)) = state.checkpoint.take() else {
            return;
        };
        if self.env.role == Role::Primary {
            state.wal.checkpoint_flush();
            state.commit_pending = false;
        }
        let now = state
            .slot
            .map(|s| s.slot.restart_lsn)
            .filter(|l| l.is_valid());
        if self.program.horizon {
            let at_start = at_start.filter(|l| l.is_valid());
            let horizon = checkpoint_horizon(self.env.pg_release, redo, at_start, now);
            state.removed_before = state.removed_before.max(horizon);
        }
        self.invalidate_obsolete(state, redo);
    }

    /// Whether a checkpoint whose redo pointer is `redo` invalidates the slot
    /// ([`slot_obsolete`], `env max_slot_wal_keep_pages`: the model's WAL pages as segments).
    fn obsolete(&self, state: &State, redo: Lsn) -> bool {
        let keep = self.env.max_slot_wal_keep_pages;
        state
            .slot
            .is_some_and(|s| slot_obsolete(s.slot.restart_lsn, redo, keep, PAGE_BYTES))
    }

    /// A checkpoint's end invalidates a slot that retains more WAL than
    /// `max_slot_wal_keep_size`: its walsender terminated, `restart_lsn` `0/0`, saved
    /// ([`Slot::invalidate`]).
    fn invalidate_obsolete(&self, state: &mut State, redo: Lsn) {
        if !self.obsolete(state, redo) {
            return;
        }
        if let Some(slot) = state.slot.as_mut() {
            slot.slot.invalidate();
            slot.dirty = false;
        }
        state.end_stream();
    }

    /// PostgreSQL crashes (immediate shutdown) and restarts: PostgreSQL 15
    /// `xlog.c:StartupXLOG`'s recovery to the flush pointer (`Wal::crash_restart`), the slot
    /// from its copy on disk (`slot.c:RestoreSlotFromDisk`), the transactions past the flush
    /// pointer lost, the replication connection closed.
    /// An operating-system crash (`os`) is the same but for the WAL: written and unflushed WAL
    /// is lost too (`Wal::os_crash_restart`). Either ends a checkpoint under way unfinished.
    fn pg_crash(&self, state: &mut State, os: bool) {
        match os {
            true => state.os_crashes += 1,
            false => state.pg_crashes += 1,
        }
        match (self.env.role, os) {
            (Role::Primary, false) => state.wal.crash_restart(),
            (Role::Primary, true) => state.wal.os_crash_restart(),
            (Role::Standby, _) => {}
        }
        state.checkpoint = None;
        if let Some(slot) = state.slot.as_mut() {
            slot.crash_restart();
        }
        state.stopping = false;
        // On a primary, a transaction still open is aborted (it never commits), a synchronous
        // commit's wait ends with its session, and the commits past the flush pointer are lost.
        // A standby's crash leaves the primary alone: its sessions, its commits (flushed or
        // not) and its WAL; the standby recovers what it received.
        if self.env.role == Role::Primary {
            state.open = None;
            state.commit_pending = false;
            lose_past(state, state.wal.flush);
        }
        state.end_stream();
    }

    /// The primary is lost and its standby promoted ([`promote`]): the WAL ends where the
    /// standby received to, on a new timeline, and the transactions past it are lost
    /// ([`State::gone`]: the destination, the batch and the connector keep what they hold of
    /// them, which no property counts); the slot
    /// is the standby's synced copy ([`promoted_slot`], with `env failover_slots`) or none; the
    /// replication connection ends, and anything under way on the lost primary with it (a
    /// synchronous commit's wait, a clean stop, a checkpoint). A new standby is then cloned from
    /// the promoted server. The removal horizon starts again: the standby's own WAL removal is
    /// not modelled, and a synced copy keeps the WAL it needs on the standby.
    fn failover(&self, state: &mut State) {
        state.failovers += 1;
        let fork = state.standby;
        state.wal = promote(fork);
        state.slot = match self.env.failover_slots {
            true => promoted_slot(state.synced),
            false => None,
        };
        state.synced = None;
        state.checkpoint = None;
        state.commit_pending = false;
        state.open = None;
        state.stopping = false;
        state.removed_before = Lsn::INVALID;
        let lost = state
            .live()
            .filter(|(_, t)| t.end_lsn > fork)
            .fold(0u16, |set, (i, _)| set | (1 << i));
        state.gone |= lost;
        state.end_stream();
    }

    // ---- built-in properties -------------------------------------------------------------

    /// The committed publication transactions the destination does not durably hold, each with
    /// its index in `txns`.
    fn undelivered<'s>(&self, state: &'s State) -> impl Iterator<Item = (usize, &'s Txn)> + 's {
        let dest = state.dest;
        state
            .live()
            .filter(move |(i, t)| t.is_published() && dest & (1 << i) == 0)
    }

    /// Whether walsender `ws`, reading to `upto`, skips by the start rule a transaction the
    /// stream owes: at `START_REPLICATION` for what is already flushed, and at each read for
    /// what was committed since (after a failover, a position recorded on the lost timeline can
    /// lie past the new timeline's commits).
    ///
    /// A transaction the connector still holds whole ([`Machine::holds_whole`]) is not lost by
    /// a skip: the connector can still deliver it (a reconnection from its in-memory position
    /// while its batch waits for the commit); if it drops it instead, a later restart past it or
    /// the quiescent check reports the loss.
    fn skips_owed(&self, state: &State, ws: &Walsender, upto: Lsn) -> bool {
        self.owed_by_stream(state).any(|(i, t)| {
            t.end_lsn <= upto
                && txn_needs_skip(t, ws.start_decoding_at)
                && !self.holds_whole(state, i)
        })
    }

    /// Whether the connector holds transaction `i` whole: in its open batch (with `env messages
    /// = changes`, every row of it in the batch or already in the destination), or in a
    /// variable or a channel's place ([`Machine::held`]).
    fn holds_whole(&self, state: &State, i: usize) -> bool {
        let in_batch = if self.env.by_change {
            let rows = row_bits(1 << i, self.env.rows);
            (state.batch_rows | state.dest_rows) & rows == rows
        } else {
            state.batch & (1 << i) != 0
        };
        in_batch || self.held(state, i)
    }

    /// The undelivered transactions the stream owes: those committed after the slot was
    /// created (earlier ones are the backfill's).
    fn owed_by_stream<'s>(&self, state: &'s State) -> impl Iterator<Item = (usize, &'s Txn)> + 's {
        let origin = state.slot_origin;
        self.undelivered(state)
            .filter(move |(_, t)| t.commit_lsn >= origin)
    }

    /// `ack-within-durable`: `confirmed_flush` is not past (by the start rule) the commit
    /// record of a publication transaction the destination does not durably hold.
    pub fn ack_within_durable(&self, state: &State) -> bool {
        let Some(slot) = state.slot else { return true };
        cdc::ack_within_durable(
            slot.slot.confirmed_flush,
            self.owed_by_stream(state).map(|(_, t)| t),
        )
    }

    /// `no-needed-wal-removed` ([`cdc::needed_wal_kept`]): the slot's `restart_lsn`, in memory
    /// and saved, is not below the WAL the checkpoints removed.
    pub fn needed_wal_kept(&self, state: &State) -> bool {
        let valid = |s: &Slot| s.restart_lsn.is_valid();
        let Some(slot) = state.slot.map(|s| s.slot).filter(valid) else {
            return true;
        };
        cdc::needed_wal_kept(
            slot.restart_lsn,
            slot.saved.restart_lsn,
            state.removed_before,
        )
    }

    /// Whether the workload is done (no transaction left open either) and the connector has
    /// nothing left to do.
    pub fn quiescent(&self, state: &State) -> bool {
        let env = &self.env;
        if state.published < env.transactions
            || state.other < env.other_traffic
            || state.commit_pending
            || state.open.is_some()
            || state.stopping
            || state.wal.flush < state.wal.insert
            || (env.role == Role::Standby && state.wal.replay < state.wal.flush)
            || self.standby_behind(state)
        {
            return false;
        }
        match state.status {
            Status::Done => true,
            Status::Fatal(_) => false,
            Status::Running(_) | Status::Ended => {
                let mut probe = Vec::new();
                self.steps(state, &mut probe);
                probe.is_empty() || self.idle_reader(state, &probe)
            }
        }
    }

    /// Whether the connector only waits for messages the walsender has none of but its idle
    /// keepalives (`probe`: every step it can take reads a `for each message`), and nothing it
    /// can do from here puts more in the destination ([`Machine::delivers_later`]): what the
    /// destination lacks stays lacking unless a fault restarts it. A waiting connector is always
    /// able to read one more keepalive (`env keepalives`), which without this would keep every
    /// state from being quiescent.
    fn idle_reader(&self, state: &State, probe: &[Action]) -> bool {
        if !matches!(self.to_send(state), Some((_, None))) {
            return false;
        }
        let reads = |a: &Action| match *a {
            Action::Step { process, .. } => {
                let pc = self.pc_of(state, process as usize);
                matches!(self.program.code[pc].op, Op::Receive { .. })
            }
            _ => false,
        };
        probe.iter().all(reads) && !self.delivers_later(state)
    }

    /// Whether some run of steps from `start` puts more in the destination: the connector's
    /// steps (idle keepalives read, a batch committed, a `backfill()`, a new run's stream) and
    /// PostgreSQL's background work, but no fault, no failing call and no client transaction.
    /// A run that reaches the end of every run counts as delivering: the check at that state
    /// decides, by what the slot would send again. A look-ahead over at most
    /// [`LOOKAHEAD_STATES`] states; past that, assumed so. It replaces a reading of the text (a
    /// `backfill()` somewhere in a stream's body, a transaction held in the batch or a
    /// variable), which took a call that never runs, or a transaction held for ever, for a
    /// delivery still to come.
    fn delivers_later(&self, start: &State) -> bool {
        let mut seen = std::collections::BTreeSet::from([start.clone()]);
        let mut frontier = vec![start.clone()];
        let mut actions = Vec::new();
        while let Some(state) = frontier.pop() {
            actions.clear();
            self.actions(&state, &mut actions);
            for &action in actions.iter().filter(|a| !a.is_fault_or_workload()) {
                let mut next = state.clone();
                if !self.apply(&mut next, action) || next.call_failures != state.call_failures {
                    continue;
                }
                // Every run over: the check there decides, by what the slot would send again.
                let done = next.status == Status::Done;
                if done || next.dest != start.dest || next.dest_rows != start.dest_rows {
                    return true;
                }
                if seen.len() >= LOOKAHEAD_STATES {
                    return true;
                }
                if seen.insert(next.clone()) {
                    frontier.push(next);
                }
            }
        }
        false
    }

    /// Whether a variable of the connector (a message, a transaction, a set of them) names
    /// transaction `i`.
    fn held(&self, state: &State, i: usize) -> bool {
        state.vars.iter().any(|v| match *v {
            Value::Txn(t) | Value::Message(Message { txn: t, .. }) => t == Some(i as u8),
            Value::Txns(set) => set & (1 << i) != 0,
            _ => false,
        })
    }

    /// `no-data-loss`: no restart resumed past an undelivered transaction, and once quiescent
    /// the destination holds every committed publication transaction (or, when every run is
    /// over, every one the slot will not send again).
    pub fn no_data_loss(&self, state: &State) -> bool {
        if state.lost || self.stranded(state) {
            return false;
        }
        if !self.quiescent(state) {
            return true;
        }
        let Some(slot) = state.slot else {
            return self.undelivered(state).next().is_none();
        };
        let (confirmed, origin) = (slot.slot.confirmed_flush, state.slot_origin);
        match state.status {
            // An invalidated slot sends nothing again.
            Status::Done => self.undelivered(state).all(|(_, t)| {
                slot.slot.restart_lsn.is_valid()
                    && t.commit_lsn >= origin
                    && !txn_needs_skip(t, confirmed)
            }),
            _ => self.undelivered(state).next().is_none(),
        }
    }

    /// A publication transaction nothing can deliver any more: committed before the slot was
    /// created, with the slot invalidated, or behind the slot for good
    /// ([`Machine::behind_for_good`]) (so no stream of this slot, or of a later one, sends it),
    /// not in the destination, its open batch or any variable, in a file that never calls
    /// `backfill()`.
    fn stranded(&self, state: &State) -> bool {
        let Some(slot) = state.slot.filter(|_| !self.program.backfills) else {
            return false;
        };
        let invalidated = !slot.slot.restart_lsn.is_valid();
        let held = |i: usize| state.batch & (1 << i) != 0 || self.held(state, i);
        let origin = state.slot_origin;
        self.undelivered(state).any(|(i, t)| {
            (t.commit_lsn < origin || invalidated || self.behind_for_good(state, i, t)) && !held(i)
        })
    }

    /// Whether no stream of the slot will send transaction `i` (`t`) again: `confirmed_flush`,
    /// in memory and on disk (what a PostgreSQL crash returns to), is past its commit record by
    /// the start rule, the stream open now (if any) has sent it or skips it, and no failover
    /// is left to bring back an older copy of the slot.
    fn behind_for_good(&self, state: &State, i: usize, t: &Txn) -> bool {
        let Some(slot) = state.slot.map(|d| d.slot) else {
            return false;
        };
        let sent_or_skipped = |ws: &Walsender| {
            txn_needs_skip(t, ws.start_decoding_at)
                || (ws.read_to >= t.end_lsn
                    && state.sending.is_none_or(|(j, _)| usize::from(j) != i))
        };
        txn_needs_skip(t, slot.confirmed_flush)
            && txn_needs_skip(t, slot.saved.confirmed_flush)
            && state.walsender.as_ref().is_none_or(sent_or_skipped)
            && state.failovers >= self.env.failovers
    }

    /// `wal-pointers-ordered` ([`cdc::wal_pointers_ordered`]) on the server's WAL.
    pub fn wal_pointers_ordered(&self, state: &State) -> bool {
        cdc::wal_pointers_ordered(&state.wal, self.env.role)
    }

    /// `wal-retention-bounded`'s goal: every committed transaction, on the published tables or
    /// not, is behind `confirmed_flush` (by the start rule): the slot keeps none of their WAL.
    pub fn retained_to_last_commit(&self, state: &State) -> bool {
        let Some(slot) = state.slot else { return false };
        cdc::acknowledged(slot.slot.confirmed_flush, state.live().map(|(_, t)| t))
    }

    /// `eventually-acknowledged`'s goal: every committed publication transaction is behind
    /// `confirmed_flush` (by the start rule).
    pub fn acknowledged(&self, state: &State) -> bool {
        let Some(slot) = state.slot else { return false };
        let published = state.live().map(|(_, t)| t).filter(|t| t.is_published());
        cdc::acknowledged(slot.slot.confirmed_flush, published)
    }
}

/// A crash loses the transactions whose WAL ends past `end`: the last ones committed (those a
/// failover lost are older, and stay), gone from the committed list, and from the destination,
/// its batch and the duplicated set, whose bits follow commit order. The connector cannot hold
/// one: the walsender and SQL decoding send nothing past the flush pointer.
fn lose_past(state: &mut State, end: Lsn) {
    let mut len = state.txns.len();
    while len > 0 && state.gone & (1 << (len - 1)) == 0 && state.txns[len - 1].end_lsn > end {
        len -= 1;
    }
    debug_assert!(state.live().all(|(i, t)| i < len || t.end_lsn > end));
    if len < state.txns.len() {
        state.txns = Arc::from(&state.txns[..len]);
    }
    let kept = (1u32 << len) - 1;
    state.dest &= kept as u16;
    state.batch &= kept as u16;
    state.duplicated &= kept as u16;
    let kept_rows = row_bits(kept as u16, 4);
    state.dest_rows &= kept_rows;
    state.batch_rows &= kept_rows;
}

/// The rows of the transactions in `set`, `rows` each, as a destination's row set holds them:
/// bit `4 × i + k` for row `k` of transaction `i`.
fn row_bits(set: u16, rows: u32) -> u64 {
    let each = (1u64 << rows.min(4)) - 1;
    (0..16)
        .filter(|i| set & (1 << i) != 0)
        .fold(0, |bits, i| bits | (each << (4 * i)))
}

/// The transactions with a row in `rows`.
fn txns_of_rows(rows: u64) -> u16 {
    (0..16)
        .filter(|i| (rows >> (4 * i)) & 0xF != 0)
        .fold(0, |set, i| set | (1 << i))
}

/// The transactions all of whose `rows` rows are in `held`.
fn whole_txns(held: u64, rows: u32) -> u16 {
    let each = (1u64 << rows.min(4)) - 1;
    (0..16)
        .filter(|i| (held >> (4 * i)) & each == each)
        .fold(0, |set, i| set | (1 << i))
}

/// A variable's initial value.
fn init(slot: &crate::program::Slot) -> Value {
    match (&slot.init, slot.ty) {
        (ExprKind::Bool(b), _) => Value::Bool(*b),
        (ExprKind::Number(n), _) => Value::Count(*n),
        (ExprKind::Lsn(l), _) => Value::Lsn(Lsn(*l)),
        (_, Type::Lsn) => Value::Lsn(Lsn::INVALID),
        (_, Type::Txn) => Value::Txn(None),
        (_, Type::Txns) => Value::Txns(0),
        (_, Type::Bool) => Value::Bool(false),
        (_, Type::Counter(lo, _)) => Value::Count(lo),
        _ => Value::None,
    }
}

/// `a + b` (`add`) or `a - b` of counters, as [`Value::Outside`] when it leaves 64 bits.
fn counter_sum(add: bool, a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Outside(side), _) => Value::Outside(side),
        (_, Value::Outside(side)) => Value::Outside(side == add),
        _ if add => a
            .count()
            .checked_add(b.count())
            .map_or(Value::Outside(true), Value::Count),
        _ => a
            .count()
            .checked_sub(b.count())
            .map_or(Value::Outside(false), Value::Count),
    }
}

fn binary(op: BinOp, a: Value, b: Value) -> Value {
    let counter = |v: Value| matches!(v, Value::Count(_) | Value::Outside(_));
    let ordered = |a: Value, b: Value| match (counter(a), counter(b)) {
        (true, true) => a.rank().cmp(&b.rank()),
        _ => a.lsn().cmp(&b.lsn()),
    };
    let equal = || {
        if a.is_none() || b.is_none() {
            a.is_none() && b.is_none()
        } else {
            a == b
        }
    };
    Value::Bool(match op {
        BinOp::Eq => equal(),
        BinOp::Ne => !equal(),
        BinOp::Lt => ordered(a, b).is_lt(),
        BinOp::Le => ordered(a, b).is_le(),
        BinOp::Gt => ordered(a, b).is_gt(),
        BinOp::Ge => ordered(a, b).is_ge(),
        BinOp::And => a.truth() && b.truth(),
        BinOp::Or => a.truth() || b.truth(),
        // Exact within 64 bits, left to right; a result outside them stays outside (the side of
        // the first operand outside): assigned, it stops the pipeline there.
        BinOp::Add | BinOp::Sub => return counter_sum(op == BinOp::Add, a, b),
    })
}
