//! One simulated bootstrap attempt under virtual time.
//!
//! A client backend runs the ladder level's statements, the walwriter wakes on its timer or on an
//! asynchronous commit's latch, and at a random instant the connector starts its first sync.
//! Every event becomes one action of the `olake-bootstrap` model, applied through its
//! configuration's [`Config::apply`] and only when [`Config::enabled`] lists it: the simulator
//! decides *when* things happen, the model alone decides *what* they do. What the model leaves to
//! time — the walwriter's last flush and hibernation, `asyncXactLSN`, the client's pacing, the
//! connector's deadline — lives here, each citing the PostgreSQL or OLake code it follows.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use walcheck_model::olake::{BootStep, Connector, Failure, Phase, Variant};
use walcheck_model::pg::wal::WAL_SEGMENT_BYTES;
use walcheck_model::pg::{advance_read_end, advance_waits, CommitMode, Slot};
use walcheck_model::Lsn;
use walcheck_systems::olake_bootstrap::{
    self as system, Action, Config, DrivenWorkload, Faults, OlakeBootstrap, State,
};

use crate::ladder::{LadderKind, Level};
use crate::params::Params;
use crate::queue::EventQueue;

/// PostgreSQL 15 `walwriter.c`: `LOOPS_UNTIL_HIBERNATE`, idle cycles before the walwriter
/// lengthens its sleep.
pub const LOOPS_UNTIL_HIBERNATE: u32 = 50;

/// PostgreSQL 15 `walwriter.c`: `HIBERNATE_FACTOR`, how much longer a hibernating walwriter
/// sleeps (`wal_writer_delay × 25`: 5 s at the default).
pub const HIBERNATE_FACTOR: u64 = 25;

/// The most events one attempt may take before it is reported as not finishing.
pub const MAX_EVENTS_PER_ATTEMPT: u64 = 20_000_000;

/// PostgreSQL 15 `bgwriter.c`: `LOG_SNAPSHOT_INTERVAL_MS`, how often the background writer logs
/// an `xl_running_xacts` record while WAL is being written (`LogStandbySnapshot`), in
/// microseconds. Logical decoding moves a slot's `restart_lsn` only to such records.
pub const LOG_SNAPSHOT_INTERVAL_US: u64 = 15_000_000;

/// PostgreSQL 15 `xlogutils.c:read_local_xlog_page_guts`: how long a backend waiting for WAL to
/// be flushed sleeps between looks at the flush pointer (`pg_usleep(1000L)`), in microseconds.
pub const READ_LOCAL_POLL_US: u64 = 1_000;

/// How many client statements' record layouts a run keeps for [`Records`].
const RECORDS_KEPT: usize = 256;

/// How many `xl_running_xacts` positions a run keeps.
const RUNNING_XACTS_KEPT: usize = 64;

/// How bootstraps meet the workload.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Each attempt is a run of its own: a quiet cluster, the workload warming up, then one
    /// bootstrap per variant from the same instant, each on a fresh slot (OLake #1084's
    /// bootstraps, which its harness ran apart).
    #[default]
    Independent,
    /// `walcheck live ladder`'s: one run per level, the first bootstrap after the warm-up and
    /// each later one as soon as the one before ended, the variants taking turns on a slot each;
    /// the client paced as `live/src/load.rs` paces it (a statement every `1/rate` at most).
    BackToBack,
}

impl Protocol {
    /// The name `--protocol` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Protocol::Independent => "independent",
            Protocol::BackToBack => "back-to-back",
        }
    }

    /// The protocol `--protocol NAME` selects, or a one-line error.
    pub fn parse(name: &str) -> Result<Protocol, String> {
        match name {
            "independent" => Ok(Protocol::Independent),
            "back-to-back" => Ok(Protocol::BackToBack),
            other => Err(format!(
                "unknown protocol {other:?}; protocols are independent and back-to-back"
            )),
        }
    }
}

/// The safety properties every step is checked against, in the model's order.
pub const SAFETY: [&str; 4] = [
    system::STATE_MATCHES_SLOT.info.id,
    system::NO_LSN_MISMATCH.info.id,
    system::WAL_POINTERS_ORDERED.info.id,
    system::SLOT_POINTERS_ORDERED.info.id,
];

fn safety_holds(index: usize, state: &State) -> bool {
    match index {
        0 => system::state_matches_slot(state),
        1 => system::no_lsn_mismatch(state),
        2 => system::wal_pointers_ordered(state),
        _ => system::slot_pointers_ordered(state),
    }
}

/// Which attempt: its place in the run, which fixes its random streams.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AttemptId {
    pub seed: u64,
    pub ladder: LadderKind,
    pub level_index: usize,
    pub attempt: u32,
}

impl AttemptId {
    /// The generator of one source of randomness (0 workload and walwriter, 1 connector) of this
    /// attempt: ChaCha8 seeded from the run's seed, one stream per (ladder, level, attempt,
    /// source). Streams make every attempt independent of the others and of the order they run
    /// in, and give every variant the same workload and the same bootstrap instant.
    fn rng(&self, source: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let stream = (self.ladder.index() << 60)
            | ((self.level_index as u64 & 0xff) << 52)
            | (u64::from(self.attempt) << 4)
            | source;
        rng.set_stream(stream);
        rng
    }
}

/// What one attempt did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The bootstrap's target W0 (the write pointer) was ahead of the flush pointer when read.
    pub write_ahead_at_read: bool,
    /// An advance returned `end_lsn` below its target.
    pub stopped_short: bool,
    /// `validateGlobalState` failed: `lsn mismatch`.
    pub lsn_mismatch: bool,
    /// pr1084's `AdvanceLSN` passed its deadline (retryable; the next sync bootstraps again).
    pub gave_up: bool,
    /// `pg_replication_slot_advance` calls.
    pub advance_calls: u32,
    /// From the first advance to the one that confirmed the target, in microseconds; `None`
    /// when no advance confirmed it.
    pub confirm_us: Option<u64>,
    /// Per safety property ([`SAFETY`]), the step at which it first failed.
    pub first_violation: [Option<usize>; 3],
    /// From each advance's call to its return (decoding, and waiting for the flush pointer to
    /// pass the record its clamp point lies in), summed over the attempt's advances, in
    /// microseconds.
    pub advance_us: u64,
    /// Model steps taken.
    pub steps: usize,
    /// Virtual time the attempt ended at, in microseconds.
    pub end_us: u64,
}

impl Outcome {
    /// Whether any safety property failed.
    pub fn violated(&self) -> bool {
        self.first_violation.iter().any(Option::is_some)
    }
}

/// The client workload before the bootstrap started, the same for every variant.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Warmup {
    /// When the connector's first step ran, in microseconds.
    pub bootstrap_at_us: u64,
    /// Statements committed before it.
    pub statements: u64,
    /// Whole statement cycles (one statement's start to the next one's) before it, and their
    /// total length in microseconds: the client's achieved rate without the edges' bias.
    pub cycles: u64,
    pub cycles_us: u64,
}

/// A recorded step: the action (none for the initial state), the state after it, its time.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub action: Option<Action>,
    pub state: State,
    pub time_us: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Event {
    /// The client sends its next statement.
    StatementStart,
    /// The running statement has produced its next chunk of rows.
    InsertChunk,
    /// The synchronous commit's `XLogFlush` has written and fsynced.
    CommitFlushed,
    /// The walwriter wakes, on its timer or its latch; one of an older generation was superseded.
    WalWriterWake { generation: u64 },
    /// The connector's next step is due.
    ConnectorStep,
    /// The running statement, held up creating a WAL segment, inserts its commit record.
    CommitRecord,
    /// The connector's `pg_replication_slot_advance` returns.
    AdvanceReturned,
    /// The background writer logs an `xl_running_xacts` record.
    BgWriterSnapshot,
    /// The walwriter, busy creating WAL segments, finishes its write (`flush`: and flush).
    WalWriterApply { flush: bool },
}

/// The WAL records the client wrote, per statement: its rows' records and its commit record,
/// for where an advance's read ends ([`advance_read_end`]).
#[derive(Clone, Debug, Default)]
struct Records {
    statements: VecDeque<StatementRecords>,
}

/// One statement's records: `rows` records of `row_bytes` from `start`, then its commit record
/// ending at `commit_end` once written.
#[derive(Copy, Clone, Debug)]
struct StatementRecords {
    start: Lsn,
    row_bytes: u64,
    rows: u64,
    commit_end: Option<Lsn>,
}

impl Records {
    fn start(&mut self, start: Lsn, row_bytes: u64) {
        if self.statements.len() == RECORDS_KEPT {
            self.statements.pop_front();
        }
        self.statements.push_back(StatementRecords {
            start,
            row_bytes,
            rows: 0,
            commit_end: None,
        });
    }

    fn rows(&mut self, rows: u64) {
        if let Some(last) = self.statements.back_mut() {
            last.rows += rows;
        }
    }

    fn commit(&mut self, end: Lsn) {
        if let Some(last) = self.statements.back_mut() {
            last.commit_end = Some(end);
        }
    }

    /// The end of the record that contains `lsn` or ends there, if the kept layout covers it.
    fn end_at_or_after(&self, lsn: Lsn) -> Option<Lsn> {
        let statement = self.statements.iter().rev().find(|s| s.start <= lsn)?;
        let rows_end = statement.start.plus(statement.rows * statement.row_bytes);
        if lsn <= rows_end {
            let into = lsn.bytes() - statement.start.bytes();
            let records = into.div_ceil(statement.row_bytes.max(1));
            return Some(statement.start.plus(records * statement.row_bytes));
        }
        statement.commit_end.filter(|&end| lsn <= end)
    }
}

/// An advance waiting for the flush pointer to reach `read_end`, not returning before
/// `not_before_us` (its decoding).
#[derive(Copy, Clone, Debug)]
struct AdvanceWait {
    read_end: Lsn,
    not_before_us: u64,
}

/// The walwriter's own state, which the model leaves to time.
#[derive(Clone, Debug)]
struct WalWriter {
    /// `xlog.c:XLogBackgroundFlush`'s static `lastflush`, in microseconds; `None` before its
    /// first call.
    last_flush_us: Option<u64>,
    /// `walwriter.c:WalWriterMain`'s `left_till_hibernate`.
    left_till_hibernate: u32,
    /// `XLogCtl->WalWriterSleeping`, as advertised at the top of its loop.
    sleeping: bool,
    /// The generation of its one pending wake-up.
    generation: u64,
    /// Creating WAL segments inside a write, until this time; a latch set meanwhile wakes it
    /// once it is done.
    busy_until_us: Option<u64>,
    latch_set: bool,
}

/// One attempt's simulation: the model's state, the clock, the queue, the timing state the model
/// leaves out.
#[derive(Clone, Debug)]
pub struct Sim {
    params: Params,
    level: Level,
    state: State,
    now_us: u64,
    queue: EventQueue<Event>,
    workload_rng: ChaCha8Rng,
    connector_rng: ChaCha8Rng,
    /// Draws that the first version of the simulator did not make (the background writer's
    /// phase, a waiting advance's poll), in their own stream so that the others keep theirs.
    side_rng: ChaCha8Rng,
    protocol: Protocol,
    walwriter: WalWriter,
    records: Records,
    /// The end of the last WAL segment file that exists: a write past it creates segments.
    wal_files_end: Lsn,
    /// Where the background writer logged `xl_running_xacts` records, the latest last.
    running_xacts: VecDeque<Lsn>,
    /// Where the current slot's fast-forward decoding starts (its `restart_lsn`, which the
    /// model, choosing `restart_moves: false`, leaves in place).
    decode_restart: Lsn,
    /// The connector's advance in progress: called at this time, maybe waiting for a flush.
    advance_called_us: Option<u64>,
    advance_wait: Option<AdvanceWait>,
    /// The rows of the running statement inserted so far.
    statement_started_us: u64,
    /// `XLogCtl->asyncXactLSN`: the end of the latest asynchronous commit record.
    async_xact_lsn: Lsn,
    /// Rows of the running statement not inserted yet.
    rows_left: u64,
    statements: u64,
    /// When the client sent its first and its latest statement, and how many it sent.
    first_start_us: Option<u64>,
    last_start_us: u64,
    starts: u64,
    events: u64,
    bootstrap_at_us: u64,
    /// pr1084's `AdvanceLSN`: when its first advance ran and its deadline.
    first_advance_us: Option<u64>,
    advance_deadline_us: u64,
    outcome: Outcome,
    record: Option<Vec<Recorded>>,
    enabled: Vec<Action>,
    done: bool,
}

/// The model configuration of one attempt: `variant` on a primary, no faults, one sync, the
/// driven workload of `level`.
pub fn config(variant: Variant, params: &Params, level: &Level) -> Config {
    let mut config = Config::new(variant, Faults::None);
    config.page_bytes = params.page_bytes;
    config.wal_buffers_pages = params.wal_buffers_bytes / params.page_bytes;
    config.statements = 0;
    config.syncs = 1;
    config.crashes = 0;
    let chunk_rows = params.chunk_rows.min(level.rows);
    config.driven = Some(DrivenWorkload {
        chunk_bytes: chunk_rows * params.row_wal_bytes,
        tail_bytes: (level.rows % chunk_rows) * params.row_wal_bytes,
        commit_record_bytes: params.commit_record_bytes,
        commit: level.commit,
    });
    config
}

impl Sim {
    /// A new attempt at time 0: a quiet cluster, the client's first statement and the walwriter's
    /// first wake-up at random instants within their first cycle, and the connector's first step
    /// at a uniform instant in `[warmup, 2 × warmup)`.
    pub fn new(model: &OlakeBootstrap, params: &Params, level: &Level, id: AttemptId) -> Sim {
        Sim::with_protocol(model, params, level, id, Protocol::Independent)
    }

    /// [`Sim::new`] under `protocol`: with [`Protocol::BackToBack`] the connector's first step is
    /// at exactly `warmup_us` (the live ladder sleeps that long after starting the load).
    pub fn with_protocol(
        model: &OlakeBootstrap,
        params: &Params,
        level: &Level,
        id: AttemptId,
        protocol: Protocol,
    ) -> Sim {
        let mut workload_rng = id.rng(0);
        let connector_rng = id.rng(1);
        let mut side_rng = id.rng(2);
        let mut queue = EventQueue::new();
        let drawn_start = params.warmup_us + workload_rng.random_range(0..params.warmup_us);
        let bootstrap_at_us = match protocol {
            Protocol::Independent => drawn_start,
            Protocol::BackToBack => params.warmup_us,
        };
        queue.push(bootstrap_at_us, Event::ConnectorStep);
        let first_statement = workload_rng.random_range(0..=params.statement_gap_us);
        queue.push(first_statement, Event::StatementStart);
        let first_wake = workload_rng.random_range(0..params.wal_writer_delay_us);
        queue.push(first_wake, Event::WalWriterWake { generation: 0 });
        if params.decode_bytes_per_s > 0 {
            let first_snapshot = side_rng.random_range(0..LOG_SNAPSHOT_INTERVAL_US);
            queue.push(first_snapshot, Event::BgWriterSnapshot);
        }
        Sim {
            params: *params,
            level: level.clone(),
            state: model.config.initial_state(),
            now_us: 0,
            queue,
            workload_rng,
            connector_rng,
            side_rng,
            protocol,
            walwriter: WalWriter {
                last_flush_us: None,
                left_till_hibernate: LOOPS_UNTIL_HIBERNATE,
                sleeping: false,
                generation: 0,
                busy_until_us: None,
                latch_set: false,
            },
            records: Records::default(),
            wal_files_end: system::INITIAL_LSN
                .page_floor(WAL_SEGMENT_BYTES)
                .plus(WAL_SEGMENT_BYTES),
            running_xacts: VecDeque::new(),
            decode_restart: system::INITIAL_LSN,
            advance_called_us: None,
            advance_wait: None,
            statement_started_us: 0,
            async_xact_lsn: system::INITIAL_LSN,
            rows_left: 0,
            statements: 0,
            first_start_us: None,
            last_start_us: 0,
            starts: 0,
            events: 0,
            bootstrap_at_us,
            first_advance_us: None,
            advance_deadline_us: u64::MAX,
            outcome: Outcome::default(),
            record: None,
            enabled: Vec::with_capacity(8),
            done: false,
        }
    }

    /// Records every step from now on (the initial state first), for a trace.
    pub fn recording(mut self) -> Sim {
        self.record = Some(vec![Recorded {
            action: None,
            state: self.state.clone(),
            time_us: self.now_us,
        }]);
        self
    }

    /// The model state now.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The recorded steps, if recording.
    pub fn recorded(&self) -> Option<&[Recorded]> {
        self.record.as_deref()
    }

    /// Runs the events due before the bootstrap starts: the same for every variant, so one
    /// warm-up can be cloned for each.
    pub fn warm_up(&mut self, model: &OlakeBootstrap) -> Result<Warmup, String> {
        while self
            .queue
            .peek_time_us()
            .is_some_and(|t| t < self.bootstrap_at_us)
        {
            self.next_event(model)?;
        }
        Ok(Warmup {
            bootstrap_at_us: self.bootstrap_at_us,
            statements: self.statements,
            cycles: self.starts.saturating_sub(1),
            cycles_us: self.last_start_us - self.first_start_us.unwrap_or(self.last_start_us),
        })
    }

    /// Runs until the connector's sync has validated or failed.
    pub fn finish(mut self, model: &OlakeBootstrap) -> Result<(Outcome, Sim), String> {
        while !self.done {
            self.next_event(model)?;
        }
        self.outcome.end_us = self.now_us;
        Ok((self.outcome.clone(), self))
    }

    fn next_event(&mut self, model: &OlakeBootstrap) -> Result<(), String> {
        self.events += 1;
        if self.events > MAX_EVENTS_PER_ATTEMPT {
            return Err(format!(
                "an attempt at level {} took more than {MAX_EVENTS_PER_ATTEMPT} events without the bootstrap ending; the parameters make it too long to simulate",
                self.level.label
            ));
        }
        let Some((at_us, event)) = self.queue.pop() else {
            return Err("the event queue ran dry before the bootstrap ended".into());
        };
        debug_assert!(at_us >= self.now_us, "time runs forward");
        self.now_us = at_us;
        match event {
            Event::StatementStart => self.statement_start(),
            Event::InsertChunk => self.insert_chunk(model)?,
            Event::CommitFlushed => {
                self.apply(model, Action::CommitFlush)?;
                self.statement_done();
            }
            Event::WalWriterWake { generation } if generation == self.walwriter.generation => {
                self.walwriter_cycle()?;
            }
            Event::WalWriterWake { .. } => {}
            Event::ConnectorStep => self.connector_step(model)?,
            Event::CommitRecord => self.commit_record(model)?,
            Event::AdvanceReturned => self.advance_returned(),
            Event::BgWriterSnapshot => self.bgwriter_snapshot(),
            Event::WalWriterApply { flush } => self.walwriter_apply(model, flush)?,
        }
        Ok(())
    }

    /// Applies `action` through the model, which must list it as enabled, then checks the safety
    /// properties and records the step.
    fn apply(&mut self, model: &OlakeBootstrap, action: Action) -> Result<(), String> {
        self.enabled.clear();
        model.config.enabled(&self.state, &mut self.enabled);
        if !self.enabled.contains(&action) {
            return Err(format!(
                "internal: the simulator chose {action} at {} us, which the model does not enable",
                self.now_us
            ));
        }
        model.config.apply(&mut self.state, action);
        self.outcome.steps += 1;
        self.check_advance_wait();
        let step = match &mut self.record {
            Some(record) => {
                record.push(Recorded {
                    action: Some(action),
                    state: self.state.clone(),
                    time_us: self.now_us,
                });
                record.len() - 1
            }
            None => self.outcome.steps,
        };
        for (i, first) in self.outcome.first_violation.iter_mut().enumerate() {
            if first.is_none() && !safety_holds(i, &self.state) {
                *first = Some(step);
            }
        }
        Ok(())
    }

    /// `base` microseconds give or take `jitter_pct` percent, drawn from `rng`.
    fn jittered(rng: &mut ChaCha8Rng, jitter_pct: u64, base: u64) -> u64 {
        if jitter_pct == 0 || base == 0 {
            return base;
        }
        let factor = 100 - jitter_pct + rng.random_range(0..=2 * jitter_pct);
        (base * factor / 100).max(1)
    }

    fn workload_delay(&mut self, base_us: u64) -> u64 {
        Self::jittered(&mut self.workload_rng, self.params.jitter_pct, base_us)
    }

    // The client.

    /// The client sends the level's statement: its rows start going into the WAL.
    fn statement_start(&mut self) {
        self.first_start_us.get_or_insert(self.now_us);
        self.last_start_us = self.now_us;
        self.starts += 1;
        self.rows_left = self.level.rows;
        self.statement_started_us = self.now_us;
        self.records
            .start(self.state.server.wal.insert, self.params.row_wal_bytes);
        let held_up = self.preempted();
        self.schedule_chunk(held_up);
    }

    /// How long other work on the machine holds a statement or a walwriter wake-up up, in
    /// microseconds: with probability `preempt_pct` a time uniform in `[0, preempt_us]`,
    /// otherwise 0 (no draw when either is 0).
    fn preempted(&mut self) -> u64 {
        if self.params.preempt_pct == 0 || self.params.preempt_us == 0 {
            return 0;
        }
        if self.side_rng.random_range(0..100) >= self.params.preempt_pct {
            return 0;
        }
        self.side_rng.random_range(0..=self.params.preempt_us)
    }

    /// The next chunk's rows are in after the time the backend takes to insert them, and after
    /// `stall_us` more.
    fn schedule_chunk(&mut self, stall_us: u64) {
        let rows = self.params.chunk_rows.min(self.rows_left);
        let base_us = (rows * 1_000_000 / self.params.rows_per_s).max(1);
        let delay = self.workload_delay(base_us);
        self.queue
            .push(self.now_us + stall_us + delay, Event::InsertChunk);
    }

    /// The time it takes to create the WAL segment files that a write up to `upto` reaches and
    /// that do not exist yet, in microseconds; from now on they exist.
    ///
    /// PostgreSQL 15 `xlog.c:XLogWrite` opens each new segment with `XLogFileInit`; without a
    /// recycled file (`RemoveOldXlogFiles` recycles only at checkpoints)
    /// `XLogFileInitInternal` writes the whole segment with zeros (`wal_init_zero`) and fsyncs
    /// it, holding `WALWriteLock`, before the write goes on. Pointers are published at the end
    /// of `XLogWrite`, so meanwhile the server shows the write and flush pointers of before.
    fn create_segments(&mut self, upto: Lsn) -> u64 {
        if upto <= self.wal_files_end {
            return 0;
        }
        let segments = (upto.bytes() - self.wal_files_end.bytes()).div_ceil(WAL_SEGMENT_BYTES);
        self.wal_files_end = self.wal_files_end.plus(segments * WAL_SEGMENT_BYTES);
        segments * self.params.wal_init_us
    }

    /// A process's delay between its timer or latch firing and its running, in microseconds:
    /// uniform in `[0, wake_latency_us]`, 0 when that is 0 (no draw then).
    fn wake_latency(&mut self) -> u64 {
        match self.params.wake_latency_us {
            0 => 0,
            max => self.side_rng.random_range(0..=max),
        }
    }

    /// A chunk of rows enters the WAL; after the last, the commit record, and a synchronous
    /// commit starts its flush, which takes `fsync_latency_us`.
    ///
    /// PostgreSQL 15 `xact.c:RecordTransactionCommit`: with `synchronous_commit = on` the backend
    /// waits in `xlog.c:XLogFlush` (one `XLogWrite` that writes and fsyncs, publishing write and
    /// flush together at its end); with it off, `XLogSetAsyncXactLSN` and the statement returns.
    ///
    /// A write the chunk forces (`wal_buffers` full) that reaches a new WAL segment stalls the
    /// statement while the segment is created ([`Sim::create_segments`]); so does the commit's
    /// flush.
    fn insert_chunk(&mut self, model: &OlakeBootstrap) -> Result<(), String> {
        let rows = self.params.chunk_rows.min(self.rows_left);
        self.apply(
            model,
            Action::InsertWal {
                bytes: rows * self.params.row_wal_bytes,
            },
        )?;
        self.records.rows(rows);
        self.rows_left -= rows;
        let stall_us = self.create_segments(self.state.server.wal.write);
        if self.rows_left > 0 {
            self.schedule_chunk(stall_us);
            return Ok(());
        }
        if stall_us > 0 {
            self.queue.push(self.now_us + stall_us, Event::CommitRecord);
            return Ok(());
        }
        self.commit_record(model)
    }

    /// The statement's commit record; a synchronous commit then flushes through it, which takes
    /// `fsync_latency_us` and any segment creation on the way.
    fn commit_record(&mut self, model: &OlakeBootstrap) -> Result<(), String> {
        self.apply(
            model,
            Action::Commit {
                bytes: self.params.commit_record_bytes,
                commit: self.level.commit,
            },
        )?;
        self.records.commit(self.state.server.wal.insert);
        match self.level.commit {
            CommitMode::Sync => {
                let fsync = self.workload_delay(self.params.fsync_latency_us);
                let created_us = self.create_segments(self.state.server.wal.insert);
                self.queue
                    .push(self.now_us + fsync + created_us, Event::CommitFlushed);
            }
            CommitMode::Async => {
                self.set_async_xact_lsn();
                self.statement_done();
            }
        }
        Ok(())
    }

    /// The statement returned to the client, which sends the next one after its round trip and,
    /// on a throttled level, a sleep of `1 s / rate`. The sleep-after-each-statement pacing is
    /// inferred from #1084's achieved rates (100 → ~84, 250 → ~174 statements/s).
    ///
    /// Under [`Protocol::BackToBack`] the client paces as `live/src/load.rs` does: it sleeps
    /// what is left of `1 s / rate` since it sent the statement, waking `wake_latency_us` late
    /// at most, and sends the next one; a statement longer than that is followed by the next
    /// after the round trip alone.
    fn statement_done(&mut self) {
        self.statements += 1;
        let next_us = match (self.protocol, self.level.rate_per_s) {
            (Protocol::BackToBack, Some(rate)) => {
                let gap = self.workload_delay(self.params.statement_gap_us);
                let paced = self.last_start_us + 1_000_000 / rate + self.wake_latency();
                paced.max(self.now_us + gap)
            }
            _ => {
                let mut pause = self.workload_delay(self.params.statement_gap_us);
                if let Some(rate) = self.level.rate_per_s {
                    pause += self.workload_delay(1_000_000 / rate);
                }
                self.now_us + pause
            }
        };
        self.queue.push(next_us, Event::StatementStart);
    }

    // The walwriter.

    /// An asynchronous commit publishes its LSN and nudges the walwriter.
    ///
    /// PostgreSQL 15 `xlog.c:XLogSetAsyncXactLSN`: raises `asyncXactLSN`; unless the walwriter
    /// is sleeping (hibernating), returns when no full page past the flush pointer is
    /// unflushed; otherwise sets the walwriter's latch, which wakes it at once.
    fn set_async_xact_lsn(&mut self) {
        let wal = self.state.server.wal;
        self.async_xact_lsn = self.async_xact_lsn.max(wal.insert);
        if !self.walwriter.sleeping
            && self.async_xact_lsn.page_floor(self.params.page_bytes) <= wal.flush
        {
            return;
        }
        if self.walwriter.busy_until_us.is_some() {
            self.walwriter.latch_set = true;
            return;
        }
        let latency = self.wake_latency() + self.preempted();
        self.wake_walwriter_at(self.now_us + latency);
    }

    /// The walwriter's next wake-up; the pending one is superseded.
    fn wake_walwriter_at(&mut self, at_us: u64) {
        self.walwriter.generation += 1;
        self.queue.push(
            at_us,
            Event::WalWriterWake {
                generation: self.walwriter.generation,
            },
        );
    }

    /// One cycle of the walwriter's loop.
    ///
    /// PostgreSQL 15 `walwriter.c:WalWriterMain`: advertise `WalWriterSleeping` when
    /// `left_till_hibernate <= 1`; run `XLogBackgroundFlush`; if it found work reset
    /// `left_till_hibernate` to `LOOPS_UNTIL_HIBERNATE`, else count it down; then
    /// `WaitLatch(wal_writer_delay)`, or `wal_writer_delay × HIBERNATE_FACTOR` once it reached 0.
    fn walwriter_cycle(&mut self) -> Result<(), String> {
        self.walwriter.sleeping = self.walwriter.left_till_hibernate <= 1;
        if self.background_flush()? {
            self.walwriter.left_till_hibernate = LOOPS_UNTIL_HIBERNATE;
        } else {
            self.walwriter.left_till_hibernate =
                self.walwriter.left_till_hibernate.saturating_sub(1);
        }
        if self.walwriter.busy_until_us.is_none() {
            self.sleep_walwriter();
        }
        Ok(())
    }

    /// The walwriter's `WaitLatch` at the end of a cycle: `wal_writer_delay`, or its hibernating
    /// sleep, or at once when its latch was set while it was busy.
    fn sleep_walwriter(&mut self) {
        let timeout = if std::mem::take(&mut self.walwriter.latch_set) {
            0
        } else if self.walwriter.left_till_hibernate > 0 {
            self.params.wal_writer_delay_us
        } else {
            self.params.wal_writer_delay_us * HIBERNATE_FACTOR
        };
        let latency = self.wake_latency() + self.preempted();
        self.wake_walwriter_at(self.now_us + timeout + latency);
    }

    /// The walwriter's write (and flush, with `flush`) after creating the WAL segments it
    /// reached; then its cycle ends.
    fn walwriter_apply(&mut self, model: &OlakeBootstrap, flush: bool) -> Result<(), String> {
        self.walwriter.busy_until_us = None;
        let action = if flush {
            Action::WalWriterFlush
        } else {
            Action::WalWriterWrite
        };
        self.enabled.clear();
        model.config.enabled(&self.state, &mut self.enabled);
        if self.enabled.contains(&action) {
            self.apply(model, action)?;
        }
        self.sleep_walwriter();
        Ok(())
    }

    /// `XLogBackgroundFlush`: returns whether it found WAL to write.
    ///
    /// PostgreSQL 15 `xlog.c:XLogBackgroundFlush`: the target is `LogwrtRqst.Write` (the insert
    /// pointer, to the record) backed off to a page boundary, or `asyncXactLSN` when that is
    /// already flushed; nothing to do when the target is flushed. It flushes on its first call,
    /// when `wal_writer_flush_after` is 0, when `wal_writer_delay` has passed since `lastflush`,
    /// or when the target is `wal_writer_flush_after` pages past the flush pointer; otherwise it
    /// writes without flushing. The model's flush and write go through the last whole page, or
    /// through the insert pointer (`asyncXactLSN`'s partial page) when no whole page is past the
    /// flush pointer ([`walcheck_model::pg::Wal::walwriter_flush_pages`],
    /// [`walcheck_model::pg::Wal::walwriter_write_pages`]). Its flush takes
    /// `fsync_latency_us`, and a write that reaches a WAL segment not created yet keeps it busy
    /// creating it ([`Sim::create_segments`]); `XLogWrite` publishes the new pointers only at its
    /// end, so they move when it is done.
    ///
    /// While a backend's synchronous commit is in `XLogFlush` it holds `WALWriteLock`; the
    /// walwriter waits for it and then finds its target written and flushed, so it does nothing
    /// this cycle (the wait itself, an fsync long, is not simulated).
    fn background_flush(&mut self) -> Result<bool, String> {
        let wal = self.state.server.wal;
        let page = self.params.page_bytes;
        let mut target = wal.insert.page_floor(page);
        if target <= wal.flush {
            target = self.async_xact_lsn;
        }
        if target <= wal.flush {
            return Ok(false);
        }
        let unflushed_pages = target.0 / page - wal.flush.0 / page;
        let flush_after_pages = self.params.wal_writer_flush_after_bytes / page;
        let due = match self.walwriter.last_flush_us {
            None => true,
            Some(_) if flush_after_pages == 0 => true,
            Some(last) => {
                self.now_us - last >= self.params.wal_writer_delay_us
                    || unflushed_pages >= flush_after_pages
            }
        };
        if due {
            self.walwriter.last_flush_us = Some(self.now_us);
        }
        if self.state.server.commit_pending {
            return Ok(true);
        }
        let write_target = wal.walwriter_write_target(page);
        if !due && write_target <= wal.write {
            return Ok(true);
        }
        let created_us = self.create_segments(write_target);
        let fsync_us = if due {
            Self::jittered(
                &mut self.side_rng,
                self.params.jitter_pct,
                self.params.fsync_latency_us,
            )
        } else {
            0
        };
        let busy_us = created_us + fsync_us;
        self.walwriter.busy_until_us = Some(self.now_us + busy_us);
        self.queue
            .push(self.now_us + busy_us, Event::WalWriterApply { flush: due });
        Ok(true)
    }

    // The connector.

    fn connector_delay(&mut self) -> u64 {
        Self::jittered(
            &mut self.connector_rng,
            self.params.jitter_pct,
            self.params.connector_step_us,
        )
    }

    /// The connector's next step, chosen by its phase; the next one follows after its latency,
    /// or, after a pr1084 advance that stopped short, after the retry delay.
    ///
    /// OLake `drivers/postgres/internal/cdc.go:PreCDC` and `StreamChanges` (see
    /// [`walcheck_model::olake`]); PR #1084 `pkg/waljs/replicator.go:AdvanceLSN` runs under
    /// `context.WithTimeout(ctx, 30s)` from its first call, sleeps 100 ms after each short
    /// `end_lsn`, and returns `slot advance stopped at …` once the deadline passes.
    fn connector_step(&mut self, model: &OlakeBootstrap) -> Result<(), String> {
        let action = match self.state.connector.phase {
            Phase::PreCdc => Action::ReadSlot,
            Phase::Bootstrap {
                next: BootStep::SeedState,
                ..
            } => Action::SeedState,
            Phase::Bootstrap {
                next: BootStep::RetryAdvance,
                ..
            } if self.now_us >= self.advance_deadline_us => Action::AdvanceGiveUp,
            // No crash is simulated, so whether the advance also saves the slot changes nothing.
            Phase::Bootstrap { .. } => Action::Advance {
                restart_moves: false,
            },
            Phase::StreamChanges => Action::Validate,
            Phase::Validated | Phase::Failed(_) | Phase::Crashed => {
                self.done = true;
                return Ok(());
            }
        };
        if let Action::Advance { .. } = action {
            if self.first_advance_us.is_none() {
                self.first_advance_us = Some(self.now_us);
                self.advance_deadline_us = self.now_us + self.params.advance_timeout_us;
            }
            self.outcome.advance_calls += 1;
        }
        let slot_before = self.state.server.slot;
        self.apply(model, action)?;
        let state = &self.state;
        match action {
            Action::ReadSlot => {
                self.outcome.write_ahead_at_read = system::write_ahead_at_read(state)
            }
            Action::Advance { .. } => {
                let call = state.connector.last_advance;
                if system::advance_clamped(state) {
                    self.outcome.stopped_short = true;
                } else if call.is_some() && self.outcome.confirm_us.is_none() {
                    let first = self.first_advance_us.unwrap_or(self.now_us);
                    self.outcome.confirm_us = Some(self.now_us - first);
                }
                if let Some(call) = call {
                    return self.advance_called(slot_before, call.end_lsn);
                }
            }
            // The live ladder keeps its state in memory: no query, no file write.
            Action::SeedState if self.protocol == Protocol::BackToBack => {
                self.queue.push(self.now_us, Event::ConnectorStep);
                return Ok(());
            }
            _ => {}
        }
        self.schedule_connector();
        Ok(())
    }

    /// The advance that clamped its target to `moveto` (its `end_lsn`) returns once it has
    /// decoded from the slot's restart point to the record `moveto` lies in and that record is
    /// flushed ([`advance_read_end`], [`advance_waits`]): at once, after its decoding, or when
    /// the flush pointer passes the record.
    fn advance_called(&mut self, slot_before: Slot, moveto: Lsn) -> Result<(), String> {
        let read_end = advance_read_end(moveto, self.records.end_at_or_after(moveto));
        let decode_us = match self.params.decode_bytes_per_s {
            0 => 0,
            rate => {
                let bytes = read_end.bytes().saturating_sub(self.decode_restart.bytes());
                let decoding = Slot {
                    restart_lsn: self.decode_restart,
                    ..slot_before
                };
                let running: Vec<Lsn> = self.running_xacts.iter().copied().collect();
                self.decode_restart = decoding.restart_after_advance(moveto, &running);
                ((u128::from(bytes) * 1_000_000) / u128::from(rate)) as u64
            }
        };
        self.advance_called_us = Some(self.now_us);
        if advance_waits(self.state.server.wal.flush, read_end) {
            self.advance_wait = Some(AdvanceWait {
                read_end,
                not_before_us: self.now_us + decode_us,
            });
        } else if decode_us > 0 {
            self.queue
                .push(self.now_us + decode_us, Event::AdvanceReturned);
        } else {
            self.advance_returned();
        }
        Ok(())
    }

    /// A waiting advance sees the flush pointer pass its record at its next poll.
    ///
    /// PostgreSQL 15 `xlogutils.c:read_local_xlog_page_guts`: `pg_usleep(1000L)` between looks
    /// at `GetFlushRecPtr()`.
    fn check_advance_wait(&mut self) {
        let Some(wait) = self.advance_wait else {
            return;
        };
        if advance_waits(self.state.server.wal.flush, wait.read_end) {
            return;
        }
        self.advance_wait = None;
        let poll = self.side_rng.random_range(0..=READ_LOCAL_POLL_US) + self.wake_latency();
        let at = (self.now_us + poll).max(wait.not_before_us);
        self.queue.push(at, Event::AdvanceReturned);
    }

    /// The advance's answer reaches the connector.
    fn advance_returned(&mut self) {
        if let Some(called) = self.advance_called_us.take() {
            self.outcome.advance_us += self.now_us - called;
        }
        self.schedule_connector();
    }

    /// After a connector step: the run ends, or pr1084 retries after its delay, or the next step
    /// follows after the connector's latency.
    fn schedule_connector(&mut self) {
        match self.state.connector.phase {
            Phase::Validated | Phase::Failed(_) | Phase::Crashed => {
                self.outcome.lsn_mismatch = !system::no_lsn_mismatch(&self.state);
                self.outcome.gave_up = matches!(
                    self.state.connector.phase,
                    Phase::Failed(Failure::AdvanceTimeout { .. })
                );
                self.done = true;
            }
            Phase::Bootstrap {
                next: BootStep::RetryAdvance,
                ..
            } => {
                let retry_at =
                    (self.now_us + self.params.retry_delay_us).min(self.advance_deadline_us);
                self.queue.push(retry_at, Event::ConnectorStep);
            }
            _ => {
                let delay = self.connector_delay();
                self.queue.push(self.now_us + delay, Event::ConnectorStep);
            }
        }
    }

    /// The background writer logs an `xl_running_xacts` record at the insert pointer, and again
    /// every [`LOG_SNAPSHOT_INTERVAL_US`].
    ///
    /// PostgreSQL 15 `bgwriter.c:BackgroundWriterMain`: `LogStandbySnapshot()` once
    /// `LOG_SNAPSHOT_INTERVAL_MS` has passed and important WAL was written since the last one.
    /// The record's own few bytes are not modelled.
    fn bgwriter_snapshot(&mut self) {
        let insert = self.state.server.wal.insert;
        if self.running_xacts.back() != Some(&insert) {
            if self.running_xacts.len() == RUNNING_XACTS_KEPT {
                self.running_xacts.pop_front();
            }
            self.running_xacts.push_back(insert);
        }
        self.queue.push(
            self.now_us + LOG_SNAPSHOT_INTERVAL_US,
            Event::BgWriterSnapshot,
        );
    }
}

/// Runs attempt `id` for every variant in `variants`: one warm-up, cloned for each variant.
/// Returns the warm-up and one outcome per variant, in `variants` order.
pub fn run_attempt(
    variants: &[Variant],
    params: &Params,
    level: &Level,
    id: AttemptId,
) -> Result<(Warmup, Vec<Outcome>), String> {
    let models: Vec<OlakeBootstrap> = variants
        .iter()
        .map(|v| OlakeBootstrap::from(config(*v, params, level)))
        .collect();
    let Some(first) = models.first() else {
        return Ok((Warmup::default(), Vec::new()));
    };
    let mut sim = Sim::new(first, params, level, id);
    let warmup = sim.warm_up(first)?;
    let mut outcomes = Vec::with_capacity(models.len());
    for model in &models {
        let (outcome, _) = sim.clone().finish(model)?;
        outcomes.push(outcome);
    }
    Ok((warmup, outcomes))
}

/// Runs one level under [`Protocol::BackToBack`]: after the warm-up, `rounds` rounds in which
/// each variant of `variants` in turn bootstraps on its own slot as soon as the previous
/// bootstrap ended, as `walcheck live ladder` does (`live/src/ladder.rs`). Returns the client's
/// statement cycles over the whole run and, per variant, one outcome per round.
pub fn run_back_to_back(
    variants: &[Variant],
    params: &Params,
    level: &Level,
    id: AttemptId,
    rounds: u32,
) -> Result<(Warmup, Vec<Vec<Outcome>>), String> {
    let models: Vec<OlakeBootstrap> = variants
        .iter()
        .map(|v| OlakeBootstrap::from(config(*v, params, level)))
        .collect();
    let Some(first) = models.first() else {
        return Ok((Warmup::default(), Vec::new()));
    };
    let mut sim = Sim::with_protocol(first, params, level, id, Protocol::BackToBack);
    sim.warm_up(first)?;
    // Each variant's slot, created before the level started, and where its decoding starts.
    let mut slots = vec![(sim.state.server.slot, sim.decode_restart); models.len()];
    let mut outcomes = vec![Vec::with_capacity(rounds as usize); models.len()];
    for round in 0..rounds {
        for (v, model) in models.iter().enumerate() {
            (sim.state.server.slot, sim.decode_restart) = slots[v];
            sim.state.connector = Connector::first_run();
            sim.state.state_file = None;
            sim.outcome = Outcome::default();
            sim.first_advance_us = None;
            sim.advance_deadline_us = u64::MAX;
            sim.done = false;
            if round > 0 || v > 0 {
                let delay = sim.connector_delay();
                sim.queue.push(sim.now_us + delay, Event::ConnectorStep);
            }
            while !sim.done {
                sim.next_event(model)?;
            }
            sim.outcome.end_us = sim.now_us;
            outcomes[v].push(std::mem::take(&mut sim.outcome));
            slots[v] = (sim.state.server.slot, sim.decode_restart);
        }
    }
    let warmup = Warmup {
        bootstrap_at_us: sim.bootstrap_at_us,
        statements: sim.statements,
        cycles: sim.starts.saturating_sub(1),
        cycles_us: sim.last_start_us - sim.first_start_us.unwrap_or(sim.last_start_us),
    };
    Ok((warmup, outcomes))
}

/// Runs attempt `id` for `variant` alone, recording every step, for a trace.
pub fn record_attempt(
    variant: Variant,
    params: &Params,
    level: &Level,
    id: AttemptId,
) -> Result<(Outcome, Vec<Recorded>, OlakeBootstrap), String> {
    let model = OlakeBootstrap::from(config(variant, params, level));
    let mut sim = Sim::new(&model, params, level, id).recording();
    sim.warm_up(&model)?;
    let (outcome, sim) = sim.finish(&model)?;
    let recorded = sim.record.unwrap_or_default();
    Ok((outcome, recorded, model))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ladder::LadderKind;

    fn id(ladder: LadderKind, level_index: usize, attempt: u32) -> AttemptId {
        AttemptId {
            seed: 1,
            ladder,
            level_index,
            attempt,
        }
    }

    #[test]
    fn an_attempt_is_the_same_run_twice_and_recorded_or_not() {
        let params = Params::default();
        let level = &LadderKind::Sync.levels(&params)[4];
        let variants = [Variant::Master, Variant::Pr1084];
        let a = run_attempt(&variants, &params, level, id(LadderKind::Sync, 4, 3)).unwrap();
        let b = run_attempt(&variants, &params, level, id(LadderKind::Sync, 4, 3)).unwrap();
        assert_eq!(a, b);
        let (recorded, steps, _) =
            record_attempt(Variant::Master, &params, level, id(LadderKind::Sync, 4, 3)).unwrap();
        assert_eq!(recorded.end_us, a.1[0].end_us);
        assert_eq!(recorded.lsn_mismatch, a.1[0].lsn_mismatch);
        assert_eq!(recorded.steps + 1, steps.len());
        assert!(steps.windows(2).all(|w| w[0].time_us <= w[1].time_us));
    }

    #[test]
    fn small_statements_never_leave_write_ahead_of_flush() {
        let params = Params::default();
        let level = &LadderKind::Sync.levels(&params)[0];
        for attempt in 0..40 {
            let (_, outcomes) = run_attempt(
                &[Variant::Master],
                &params,
                level,
                id(LadderKind::Sync, 0, attempt),
            )
            .unwrap();
            assert!(!outcomes[0].write_ahead_at_read);
            assert!(!outcomes[0].lsn_mismatch);
        }
    }

    #[test]
    fn an_idle_walwriter_hibernates_and_an_async_commit_wakes_it() {
        let params = Params::default();
        // One-row statements: less than a page of WAL each.
        let level = Level {
            rows: 1,
            wal_bytes: params.row_wal_bytes,
            ..LadderKind::Async.levels(&params)[0].clone()
        };
        let model = OlakeBootstrap::from(config(Variant::Master, &params, &level));
        let mut sim = Sim::new(&model, &params, &level, id(LadderKind::Async, 0, 0));
        sim.queue = EventQueue::new();
        for cycle in 1..=LOOPS_UNTIL_HIBERNATE {
            sim.walwriter_cycle().unwrap();
            // walwriter.c advertises sleeping at the top of the cycle that may hibernate.
            assert_eq!(sim.walwriter.sleeping, cycle == LOOPS_UNTIL_HIBERNATE);
            let (at_us, event) = sim.queue.pop().unwrap();
            let timeout = if cycle < LOOPS_UNTIL_HIBERNATE {
                params.wal_writer_delay_us
            } else {
                params.wal_writer_delay_us * HIBERNATE_FACTOR
            };
            assert_eq!(at_us, sim.now_us + timeout);
            assert!(
                matches!(event, Event::WalWriterWake { generation } if generation == sim.walwriter.generation)
            );
            sim.now_us = at_us;
        }
        assert_eq!(sim.now_us, 49 * 200_000 + 5_000_000);
        // A small asynchronous commit, less than a page: only a sleeping walwriter is woken.
        sim.rows_left = 1;
        sim.insert_chunk(&model).unwrap();
        let (at_us, event) = sim.queue.pop().unwrap();
        assert_eq!(at_us, sim.now_us, "{event:?}");
        assert!(
            matches!(event, Event::WalWriterWake { generation } if generation == sim.walwriter.generation)
        );
        // Its first cycle after the long sleep flushes (wal_writer_delay has passed): its write
        // and fsync take fsync_latency_us, after which the pointers move and it sleeps again.
        sim.walwriter_cycle().unwrap();
        assert_eq!(sim.walwriter.left_till_hibernate, LOOPS_UNTIL_HIBERNATE);
        let (at_us, event) = sim.queue.pop().unwrap();
        assert_eq!(event, Event::WalWriterApply { flush: true });
        assert!(at_us >= sim.now_us + params.fsync_latency_us * 9 / 10);
        assert!(sim.state.server.wal.flush < sim.state.server.wal.insert);
        sim.now_us = at_us;
        sim.walwriter_apply(&model, true).unwrap();
        assert_eq!(sim.state.server.wal.flush, sim.state.server.wal.insert);
        let (at_us, _) = sim.queue.pop().unwrap();
        assert_eq!(at_us, sim.now_us + params.wal_writer_delay_us);
    }

    #[test]
    fn a_record_layout_gives_the_end_of_the_record_an_lsn_lies_in() {
        let mut records = Records::default();
        let start = Lsn(0x100_0000);
        records.start(start, 1_000);
        records.rows(3);
        // Inside the second row's record, on its end, past the rows: none written yet.
        assert_eq!(
            records.end_at_or_after(start.plus(1_500)),
            Some(start.plus(2_000))
        );
        assert_eq!(
            records.end_at_or_after(start.plus(2_000)),
            Some(start.plus(2_000))
        );
        assert_eq!(records.end_at_or_after(start.plus(3_010)), None);
        records.commit(start.plus(3_040));
        assert_eq!(
            records.end_at_or_after(start.plus(3_010)),
            Some(start.plus(3_040))
        );
        // Before the first statement kept: unknown.
        assert_eq!(records.end_at_or_after(Lsn(0x10_0000)), None);
    }

    /// The live ladder's finding: when each bootstrap follows the last, an advance waits for the
    /// flush past the record its clamp point lies in, and the next read comes just after that
    /// flush, so it sees write ahead of flush far less often than bootstraps at random instants.
    #[test]
    fn back_to_back_bootstraps_read_just_after_the_flush_their_advance_waited_for() {
        let params = Params::this_machine();
        let level = &LadderKind::Async.levels(&params)[1];
        let variants = [Variant::Master];
        let (_, back_to_back) =
            run_back_to_back(&variants, &params, level, id(LadderKind::Async, 1, 0), 60).unwrap();
        let outcomes = &back_to_back[0];
        assert_eq!(outcomes.len(), 60);
        let ahead_b2b = outcomes.iter().filter(|o| o.write_ahead_at_read).count();
        let ahead_independent = (0..60)
            .filter(|&a| {
                run_attempt(&variants, &params, level, id(LadderKind::Async, 1, a))
                    .unwrap()
                    .1[0]
                    .write_ahead_at_read
            })
            .count();
        assert!(
            ahead_b2b * 3 < ahead_independent,
            "back to back {ahead_b2b} of 60, independent {ahead_independent} of 60"
        );
        // The advances waited for the walwriter's next flush: tens of milliseconds, not a
        // query's round trip.
        let advance_us: u64 = outcomes.iter().map(|o| o.advance_us).sum();
        let calls: u64 = outcomes.iter().map(|o| u64::from(o.advance_calls)).sum();
        assert!(advance_us / calls > 50_000, "{} us", advance_us / calls);
    }

    /// Creating WAL segments (no checkpoint recycles them) stalls a statement's buffer-pressure
    /// writes and its commit's flush while the write pointer is ahead of the flush pointer: at
    /// 4,000 rows a bootstrap sees write ahead of flush more often.
    #[test]
    fn creating_wal_segments_keeps_write_ahead_of_flush_longer() {
        let recycled = Params {
            wal_init_us: 0,
            ..Params::this_machine()
        };
        let created = Params::this_machine();
        let ahead = |params: &Params| {
            let level = &LadderKind::Sync.levels(params)[3];
            (0..80)
                .filter(|&a| {
                    run_attempt(
                        &[Variant::Master],
                        params,
                        level,
                        id(LadderKind::Sync, 3, a),
                    )
                    .unwrap()
                    .1[0]
                        .write_ahead_at_read
                })
                .count()
        };
        let (without, with) = (ahead(&recycled), ahead(&created));
        assert!(
            with > without,
            "with segment creation {with} of 80, without {without}"
        );
    }

    #[test]
    fn pr1084_retries_until_the_slot_confirms() {
        let params = Params::default();
        let level = &LadderKind::Async.levels(&params)[2];
        let mut retried = 0;
        for attempt in 0..40 {
            let (_, outcomes) = run_attempt(
                &[Variant::Master, Variant::Pr1084],
                &params,
                level,
                id(LadderKind::Async, 2, attempt),
            )
            .unwrap();
            let (master, fixed) = (&outcomes[0], &outcomes[1]);
            assert_eq!(master.write_ahead_at_read, fixed.write_ahead_at_read);
            assert!(!fixed.lsn_mismatch && !fixed.violated());
            if fixed.stopped_short {
                retried += 1;
                assert!(fixed.advance_calls >= 2);
                assert!(fixed.confirm_us.unwrap() >= params.retry_delay_us);
            }
        }
        assert!(retried > 0);
    }
}
