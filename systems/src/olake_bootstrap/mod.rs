//! System `olake-bootstrap`: OLake's first-sync bootstrap against PostgreSQL's WAL and slot.
//!
//! Upstream: OLake master `2b1f68a9` (v0.9.4), PR #854 `8ad23875`, PR #1084 `08e917b4`
//! ([`walcheck_model::olake`]); PostgreSQL 15's WAL pointers and `pg_replication_slot_advance`
//! ([`walcheck_model::pg`]). The bug (OLake #1084): PreCDC takes its target from `pg_current_wal_lsn()`,
//! the *write* pointer, but the advance clamps to the *flush* pointer and reports where it
//! stopped only in `end_lsn`; when write is ahead of flush the state file and
//! `confirmed_flush_lsn` differ and `validateGlobalState` fails the sync for good.
//!
//! State: the server (WAL pointers, slot, a pending synchronous commit), the state file, the
//! connector process, and counters bounding the workload and the faults. Actions interleave a
//! client workload, the walwriter, checkpoints, the connector's steps and the faults; each
//! delegates to one function of [`walcheck_model::pg`] or [`walcheck_model::olake`], so the simulator and the tests
//! run the same semantics.

mod expected;

use std::fmt;

use serde::{Deserialize, Serialize};
use stateright::{Model, Property};

use walcheck_model::olake::{AdvanceCall, BootStep, Connector, Phase, Variant};
use walcheck_model::pg::{CommitMode, Role, Server};
use walcheck_model::Lsn;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{
    number, BoundInfo, BoundValue, FairClass, Fairness, FairnessChoice, Lanes, Live, Liveness,
    PropertyInfo, Var, Variables, FAIRNESS_BOUND,
};
use walcheck_properties::system::{SystemInfo, View};

/// The system's name on the command line and in reports.
pub const NAME: &str = "olake-bootstrap";

/// Where the quiet cluster's WAL and the slot start: `0/1000000`, page-aligned.
pub const INITIAL_LSN: Lsn = Lsn(0x100_0000);

/// Which faults the checker may inject.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Faults {
    None,
    /// The connector process dies between any two of its steps, then restarts from the state file.
    ConnectorCrash,
    /// PostgreSQL crashes (immediate shutdown) and restarts.
    PgCrash,
    All,
}

impl Faults {
    /// Every fault set, in catalogue order.
    pub const ALL: [Faults; 4] = [
        Faults::None,
        Faults::ConnectorCrash,
        Faults::PgCrash,
        Faults::All,
    ];

    /// The name used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Faults::None => "none",
            Faults::ConnectorCrash => "connector-crash",
            Faults::PgCrash => "pg-crash",
            Faults::All => "all",
        }
    }

    /// The fault set called `name`, if any.
    pub fn from_name(name: &str) -> Option<Faults> {
        Faults::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the connector may crash.
    pub const fn connector_crash(self) -> bool {
        matches!(self, Faults::ConnectorCrash | Faults::All)
    }

    /// Whether PostgreSQL may crash.
    pub const fn pg_crash(self) -> bool {
        matches!(self, Faults::PgCrash | Faults::All)
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The bounds and knobs, with defaults and ranges (`walcheck list`).
pub const BOUNDS: &[BoundInfo] = &[
    BoundInfo {
        name: "server",
        default: BoundValue::Name("primary"),
        min: None,
        max: None,
        values: &Role::NAMES,
        unit: "role",
        doc: "the server the connector talks to (standby: PostgreSQL >= 16, OLake #1070); \
              `check` without --bound server= runs both",
        quiet: false,
    },
    number(
        "page_bytes",
        8192,
        1024,
        32768,
        "bytes",
        "WAL page size (XLOG_BLCKSZ, a power of two); pointers move in whole pages",
    ),
    // PostgreSQL 15 `xlog.c:check_wal_buffers` raises a wal_buffers below 4 blocks to 4;
    // `guc.c` caps it at INT_MAX / XLOG_BLCKSZ blocks (262143 at 8 KiB). The simulator runs the
    // default, 4 MiB = 512 pages; the checker's statements stay small whatever the buffers.
    number(
        "wal_buffers_pages",
        4,
        4,
        262_143,
        "pages",
        "wal_buffers (PostgreSQL keeps at least 4 pages); unwritten WAL beyond it is written \
         out by the inserting backend",
    ),
    number(
        "stmt_pages_small",
        1,
        1,
        64,
        "pages",
        "WAL of a small statement",
    ),
    number(
        "stmt_pages_bulk",
        5,
        1,
        64,
        "pages",
        "WAL of a bulk INSERT ... SELECT (by default more than wal_buffers)",
    ),
    number(
        "statements",
        2,
        0,
        6,
        "statements",
        "client statements in the whole run",
    ),
    number(
        "syncs",
        2,
        1,
        4,
        "runs",
        "connector runs: the first sync, restarts and later syncs",
    ),
    number(
        "crashes",
        1,
        0,
        2,
        "crashes",
        "faults injected in all (connector and PostgreSQL together)",
    ),
    FAIRNESS_BOUND,
];

/// The simulator's workload knobs (`walcheck simulate`): not bounds of the checker, which never
/// sets them, but part of a simulated trace's configuration so that `walcheck replay` rebuilds
/// it. Setting any of them switches the model to the [`DrivenWorkload`].
pub const DRIVEN_KNOBS: &[BoundInfo] = &[
    BoundInfo {
        name: "commit",
        default: BoundValue::Name("sync"),
        min: None,
        max: None,
        values: &["sync", "async"],
        unit: "synchronous_commit",
        doc: "how every simulated statement commits (on: sync, off: async)",
        quiet: false,
    },
    number(
        "commit_record_bytes",
        40,
        1,
        1 << 20,
        "bytes",
        "WAL of a commit record",
    ),
    number(
        "insert_chunk_bytes",
        8192,
        1,
        1 << 30,
        "bytes",
        "WAL a running statement inserts in one step (a chunk of its rows)",
    ),
    number(
        "insert_tail_bytes",
        0,
        0,
        1 << 30,
        "bytes",
        "WAL of a statement's last, shorter chunk (0: statements are whole chunks)",
    ),
];

pub const STATE_MATCHES_SLOT: PropertyInfo = PropertyInfo::always(
    "state-matches-slot",
    "once the state file is seeded and the connector is past PreCDC's bootstrap, it equals the slot's confirmed_flush",
);

pub const NO_LSN_MISMATCH: PropertyInfo =
    PropertyInfo::always("no-lsn-mismatch", "validateGlobalState never fails");

pub const WAL_POINTERS_ORDERED: PropertyInfo = PropertyInfo::always(
    "wal-pointers-ordered",
    "replay <= flush <= write <= insert; restart_lsn <= confirmed_flush <= the advance limit; saved <= in memory",
);

pub const BOOTSTRAP_EVENTUALLY_COMPLETES: PropertyInfo = PropertyInfo::eventually(
    "bootstrap-eventually-completes",
    "always (a run is in PreCDC's bootstrap implies eventually it is not): the bootstrap returns, seeded or with its error, instead of retrying forever",
)
.also_with("fairness", "none");

pub const REACH_WRITE_AHEAD_AT_READ: PropertyInfo = PropertyInfo::sometimes(
    "reach-write-ahead-at-read",
    "the bootstrap's target W0 (the write pointer) is ahead of the flush pointer",
)
.needs("server=primary");

pub const REACH_ADVANCE_CLAMPED: PropertyInfo = PropertyInfo::sometimes(
    "reach-advance-clamped",
    "an advance returns end_lsn below its target",
)
.needs("server=primary");

pub const REACH_BOOTSTRAP_COMPLETE: PropertyInfo = PropertyInfo::sometimes(
    "reach-bootstrap-complete",
    "a run bootstraps (or resumes) and passes validateGlobalState",
);

pub const REACH_CONNECTOR_CRASH: PropertyInfo =
    PropertyInfo::sometimes("reach-connector-crash", "the connector crashes mid-run")
        .needs("fault:connector-crash");

pub const REACH_PG_CRASH_AFTER_ADVANCE: PropertyInfo = PropertyInfo::sometimes(
    "reach-pg-crash-after-advance",
    "a PostgreSQL crash takes the slot back below an end_lsn the connector was given",
)
.needs("fault:pg-crash");

pub const REACH_STANDBY_BOOTSTRAP: PropertyInfo = PropertyInfo::sometimes(
    "reach-standby-bootstrap",
    "a bootstrap on a standby passes validateGlobalState",
)
.needs("server=standby");

/// The properties, each declared once above.
pub const PROPERTIES: &[PropertyInfo] = &[
    STATE_MATCHES_SLOT,
    NO_LSN_MISMATCH,
    WAL_POINTERS_ORDERED,
    BOOTSTRAP_EVENTUALLY_COMPLETES,
    REACH_WRITE_AHEAD_AT_READ,
    REACH_ADVANCE_CLAMPED,
    REACH_BOOTSTRAP_COMPLETE,
    REACH_CONNECTOR_CRASH,
    REACH_PG_CRASH_AFTER_ADVANCE,
    REACH_STANDBY_BOOTSTRAP,
];

/// The variables a step table always shows, whether or not they change.
pub const KEY_VARIABLES: &[&str] = &[
    "insert",
    "write",
    "flush",
    "confirmed_flush",
    "saved_confirmed_flush",
    "state_file",
    "connector",
];

/// The sequence-diagram lanes of this system's traces.
pub const LANES: Lanes = Lanes {
    participants: &[
        ("client", "client"),
        ("pg", "PostgreSQL"),
        ("slot", "slot"),
        ("connector", "connector"),
        ("statefile", "state file"),
    ],
    lane: |action| match action {
        "Append" | "CommitFlush" | "InsertWal" | "Commit" => ("client", "pg"),
        "WalWriterWrite" | "WalWriterFlush" | "Replay" | "PgCrash" => ("pg", "pg"),
        "Checkpoint" => ("pg", "slot"),
        "ReadSlot" => ("connector", "pg"),
        "Advance" | "Validate" => ("connector", "slot"),
        "SeedState" => ("connector", "statefile"),
        _ => ("connector", "connector"),
    },
    owner: |var| match var {
        "insert" | "write" | "flush" | "replay" | "commit_pending" => Some("pg"),
        "primary_insert" | "primary_write" | "primary_flush" => Some("pg"),
        "confirmed_flush" | "restart_lsn" | "saved_confirmed_flush" | "saved_restart_lsn" => {
            Some("slot")
        }
        "state_file" => Some("statefile"),
        "connector" | "run" | "end_lsn" => Some("connector"),
        _ => None,
    },
};

/// Bookkeeping counters a step table leaves out (the actions show them); traces keep them.
pub const COUNTERS: &[&str] = &["statements", "crashes"];

/// The `olake-bootstrap` system: its declaration and the model of each configuration.
pub struct OlakeBootstrapSystem;

/// The declaration `walcheck list`, the catalogue and traces read.
pub static INFO: SystemInfo = SystemInfo {
    name: NAME,
    doc: "OLake's PreCDC bootstrap against PostgreSQL 15's WAL pointers and pg_replication_slot_advance",
    variants: &[
        ("master", "OLake master 2b1f68a9 (v0.9.4): state written before the advance, end_lsn discarded"),
        ("pr854", "OLake PR #854 8ad23875: advance first, then the state; end_lsn still discarded"),
        ("pr1084", "OLake PR #1084 08e917b4: advance until the slot confirms the target, then seed the state"),
    ],
    faults: &["none", "connector-crash", "pg-crash", "all"],
    bounds: BOUNDS,
    trace_knobs: DRIVEN_KNOBS,
    properties: PROPERTIES,
    also: Some(("server", "standby")),
    view: View {
        key_variables: KEY_VARIABLES,
        counters: COUNTERS,
        lanes: &LANES,
    },
};

built_in_system!(OlakeBootstrapSystem, OlakeBootstrap);

/// The system's configuration: variant, faults, knobs and bounds (see [`BOUNDS`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: Variant,
    pub faults: Faults,
    pub server: Role,
    pub page_bytes: u64,
    pub wal_buffers_pages: u64,
    pub stmt_pages_small: u64,
    pub stmt_pages_bulk: u64,
    pub statements: u8,
    pub syncs: u8,
    pub crashes: u8,
    /// Which fairness liveness checks assume ([`FAIRNESS`] or none); safety checks ignore it.
    pub fairness: FairnessChoice,
    /// The simulator's workload instead of the checker's [`Action::Append`]; `None` for the
    /// checker, which never sets it.
    pub driven: Option<DrivenWorkload>,
}

/// The workload `walcheck simulate` drives: one client backend runs statements whose rows enter
/// the WAL a chunk at a time ([`Action::InsertWal`]) and that end in a commit record
/// ([`Action::Commit`]). The model offers both whenever no synchronous commit is waiting; the
/// simulator's clock decides which happens when, so buffer-pressure writes happen progressively
/// while a large statement runs, and sizes are bytes, not pages.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DrivenWorkload {
    /// WAL of one chunk of a statement's rows, in bytes.
    pub chunk_bytes: u64,
    /// WAL of a statement's last chunk when it is shorter, in bytes; 0 when there is none.
    pub tail_bytes: u64,
    /// WAL of a commit record, in bytes.
    pub commit_record_bytes: u64,
    /// `synchronous_commit` of every statement.
    pub commit: CommitMode,
}

impl DrivenWorkload {
    /// The knobs' defaults ([`DRIVEN_KNOBS`]).
    pub const DEFAULT: DrivenWorkload = DrivenWorkload {
        chunk_bytes: 8192,
        tail_bytes: 0,
        commit_record_bytes: 40,
        commit: CommitMode::Sync,
    };

    /// The distinct sizes of [`Action::InsertWal`] it offers, chunk first.
    fn insert_sizes(&self) -> impl Iterator<Item = u64> {
        let tail = (self.tail_bytes != 0 && self.tail_bytes != self.chunk_bytes)
            .then_some(self.tail_bytes);
        std::iter::once(self.chunk_bytes).chain(tail)
    }
}

impl Config {
    /// The typed form of a configuration the catalogue validated against [`INFO`].
    pub fn of(config: &GenericConfig) -> Config {
        let mut c = Config::new(
            Variant::from_name(config.variant).expect("a variant of INFO"),
            Faults::from_name(config.faults).expect("a fault set of INFO"),
        );
        for (name, value) in config.values() {
            c.set_knob(name, &value.to_string())
                .expect("a value INFO accepts");
        }
        c
    }

    /// `variant` with `faults` and every bound at its default.
    pub const fn new(variant: Variant, faults: Faults) -> Config {
        Config {
            variant,
            faults,
            server: Role::Primary,
            page_bytes: 8192,
            wal_buffers_pages: 4,
            stmt_pages_small: 1,
            stmt_pages_bulk: 5,
            statements: 2,
            syncs: 2,
            crashes: 1,
            fairness: FairnessChoice::Declared,
            driven: None,
        }
    }

    /// This configuration on a standby.
    pub const fn on_standby(mut self) -> Config {
        self.server = Role::Standby;
        self
    }

    /// Sets bound `name` from its text, or says in one line why not (unknown bound, bad value,
    /// out of range).
    pub fn set_bound(&mut self, name: &str, text: &str) -> Result<(), String> {
        let info = BOUNDS.iter().find(|b| b.name == name).ok_or_else(|| {
            let names: Vec<_> = BOUNDS.iter().map(|b| b.name).collect();
            format!(
                "{NAME} has no bound {name:?}; its bounds are {}",
                names.join(", ")
            )
        })?;
        let number = |v: BoundValue| match v {
            BoundValue::Number(n) => n,
            BoundValue::Name(_) => unreachable!("numeric bound"),
        };
        let value = info.parse(text)?;
        match name {
            "fairness" => {
                self.fairness = if value == BoundValue::Name("none") {
                    FairnessChoice::None
                } else {
                    FairnessChoice::Declared
                }
            }
            "server" => {
                self.server = if value == BoundValue::Name("standby") {
                    Role::Standby
                } else {
                    Role::Primary
                }
            }
            "page_bytes" if !number(value).is_power_of_two() => {
                return Err(format!(
                    "bound page_bytes must be a power of two (XLOG_BLCKSZ), not {text}"
                ));
            }
            "page_bytes" => self.page_bytes = number(value),
            "wal_buffers_pages" => self.wal_buffers_pages = number(value),
            "stmt_pages_small" => self.stmt_pages_small = number(value),
            "stmt_pages_bulk" => self.stmt_pages_bulk = number(value),
            // The ranges above keep these within u8.
            "statements" => self.statements = number(value) as u8,
            "syncs" => self.syncs = number(value) as u8,
            "crashes" => self.crashes = number(value) as u8,
            _ => unreachable!("bound {name} listed but not settable"),
        }
        Ok(())
    }

    /// Sets bound `name` ([`BOUNDS`]) or, for a simulated trace's configuration, workload knob
    /// `name` ([`DRIVEN_KNOBS`], which switches the model to the driven workload); or says in
    /// one line why not. `walcheck check --bound` takes bounds only ([`Config::set_bound`]).
    pub fn set_knob(&mut self, name: &str, text: &str) -> Result<(), String> {
        let Some(info) = DRIVEN_KNOBS.iter().find(|k| k.name == name) else {
            return self.set_bound(name, text);
        };
        let value = info.parse(text)?;
        let driven = self.driven.get_or_insert(DrivenWorkload::DEFAULT);
        match (name, value) {
            ("commit", BoundValue::Name(mode)) => {
                driven.commit = if mode == "async" {
                    CommitMode::Async
                } else {
                    CommitMode::Sync
                }
            }
            ("commit_record_bytes", BoundValue::Number(n)) => driven.commit_record_bytes = n,
            ("insert_chunk_bytes", BoundValue::Number(n)) => driven.chunk_bytes = n,
            ("insert_tail_bytes", BoundValue::Number(n)) => driven.tail_bytes = n,
            _ => unreachable!("knob {name} listed but not settable"),
        }
        Ok(())
    }

    /// Every bound's value, in [`BOUNDS`] order, then the driven workload's knobs if it has one
    /// (in [`DRIVEN_KNOBS`] order).
    pub fn bounds(&self) -> Vec<(&'static str, BoundValue)> {
        let n = BoundValue::Number;
        let mut bounds = vec![
            ("server", BoundValue::Name(self.server.name())),
            ("page_bytes", n(self.page_bytes)),
            ("wal_buffers_pages", n(self.wal_buffers_pages)),
            ("stmt_pages_small", n(self.stmt_pages_small)),
            ("stmt_pages_bulk", n(self.stmt_pages_bulk)),
            ("statements", n(self.statements.into())),
            ("syncs", n(self.syncs.into())),
            ("crashes", n(self.crashes.into())),
        ];
        // Only when set: safety traces, which it cannot change, keep the header they had.
        if self.fairness != FairnessChoice::Declared {
            bounds.push(("fairness", BoundValue::Name(self.fairness.name())));
        }
        if let Some(driven) = self.driven {
            let commit = match driven.commit {
                CommitMode::Sync => "sync",
                CommitMode::Async => "async",
            };
            bounds.extend([
                ("commit", BoundValue::Name(commit)),
                ("commit_record_bytes", n(driven.commit_record_bytes)),
                ("insert_chunk_bytes", n(driven.chunk_bytes)),
                ("insert_tail_bytes", n(driven.tail_bytes)),
            ]);
        }
        bounds
    }

    /// `wal_buffers` in bytes.
    pub fn wal_buffers_bytes(&self) -> u64 {
        self.wal_buffers_pages * self.page_bytes
    }
}

/// A state of the system. Its `Debug` is its [`Variables`], one `name: value` a line, as
/// stateright's Explorer shows it.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    pub server: Server,
    /// The connector's state file: `global.state.lsn`, or none before the first bootstrap.
    pub state_file: Option<Lsn>,
    pub connector: Connector,
    /// Client statements run so far.
    pub statements: u8,
    /// Faults injected so far.
    pub crashes: u8,
}

/// An action of the system. Each is one atomic step of PostgreSQL, the workload or the connector.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    /// A client statement inserts `pages` WAL pages and commits with `commit`
    /// ([`walcheck_model::pg::Wal::append`]; buffer-pressure writes happen inside it).
    Append { pages: u64, commit: CommitMode },
    /// The pending synchronous commit flushes through its record ([`walcheck_model::pg::Wal::commit_flush`]).
    CommitFlush,
    /// Driven workload only: the running statement inserts `bytes` of WAL, a chunk of its rows
    /// ([`walcheck_model::pg::Wal::append`]; buffer-pressure writes happen inside it).
    ///
    /// PostgreSQL 15 `heapam.c:heap_insert` logs each row with `xloginsert.c:XLogInsert`;
    /// `xlog.c:XLogInsertRecord` copies it into `wal_buffers` as the statement runs, and
    /// `AdvanceXLInsertBuffer` writes out (without flushing) the buffer a new page needs.
    InsertWal { bytes: u64 },
    /// Driven workload only: the running statement inserts its commit record of `bytes` and
    /// commits with `commit`; a synchronous commit then waits for [`Action::CommitFlush`].
    ///
    /// PostgreSQL 15 `xact.c:RecordTransactionCommit`: `XactLogCommitRecord`, then
    /// `XLogFlush(XactLastRecEnd)` under `synchronous_commit = on`, or
    /// `XLogSetAsyncXactLSN(XactLastRecEnd)` (no flush; the walwriter's job) when it is off.
    Commit { bytes: u64, commit: CommitMode },
    /// The walwriter writes completed pages without flushing ([`walcheck_model::pg::Wal::walwriter_write`]).
    WalWriterWrite,
    /// The walwriter writes and flushes ([`walcheck_model::pg::Wal::walwriter_flush`]).
    WalWriterFlush,
    /// `CHECKPOINT` ([`Server::checkpoint`]).
    Checkpoint,
    /// The standby replays what the primary flushed ([`walcheck_model::pg::Wal::replay_to_flush`]).
    Replay,
    /// PreCDC's `GetSlotPosition` ([`Connector::read_slot`]).
    ReadSlot,
    /// The state file gets W0 ([`Connector::seed_state`]).
    SeedState,
    /// `pg_replication_slot_advance(slot, W0)`; `restart_moves` is PostgreSQL's choice of whether
    /// `restart_lsn` moves (and the slot is saved) ([`Connector::advance`]).
    Advance { restart_moves: bool },
    /// PR #1084 gives up after its 30 s deadline ([`Connector::give_up_advance`]).
    AdvanceGiveUp,
    /// `StreamChanges`' `validateGlobalState` ([`Connector::validate`]).
    Validate,
    /// The next sync starts after a finished or failed run ([`Connector::start_next_run`]).
    NextSync,
    /// Fault: the connector process dies ([`Connector::crash`]).
    ConnectorCrash,
    /// Fault: PostgreSQL crashes and restarts ([`Server::crash_restart`]).
    PgCrash,
    /// The crashed connector is restarted ([`Connector::start_next_run`]).
    Restart,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Append { pages, commit } => {
                let commit = match commit {
                    CommitMode::Sync => "sync",
                    CommitMode::Async => "async",
                };
                write!(f, "Append{{pages: {pages}, commit: {commit}}}")
            }
            Action::Advance { restart_moves } => {
                write!(f, "Advance{{restart_moves: {restart_moves}}}")
            }
            Action::InsertWal { bytes } => write!(f, "InsertWal{{bytes: {bytes}}}"),
            Action::Commit { bytes, commit } => {
                let commit = match commit {
                    CommitMode::Sync => "sync",
                    CommitMode::Async => "async",
                };
                write!(f, "Commit{{bytes: {bytes}, commit: {commit}}}")
            }
            other => write!(f, "{other:?}"),
        }
    }
}

/// The `olake-bootstrap` model for one configuration.
#[derive(Clone, Debug)]
pub struct OlakeBootstrap {
    pub config: Config,
}

impl OlakeBootstrap {
    pub const fn new(config: Config) -> OlakeBootstrap {
        OlakeBootstrap { config }
    }

    /// The initial state: a quiet cluster with the slot created at [`INITIAL_LSN`], no state
    /// file, the connector about to run its first sync.
    pub fn initial_state(&self) -> State {
        State {
            server: Server::quiet_at(self.config.server, INITIAL_LSN),
            state_file: None,
            connector: Connector::first_run(),
            statements: 0,
            crashes: 0,
        }
    }

    /// Applies `action` to `state`; the same transition the checker, the simulator and the tests
    /// use. The caller must only apply enabled actions ([`Model::actions`]).
    pub fn apply(&self, state: &mut State, action: Action) {
        let cfg = &self.config;
        match action {
            Action::Append { pages, commit } => {
                state.server.wal.append(
                    pages * cfg.page_bytes,
                    cfg.page_bytes,
                    cfg.wal_buffers_bytes(),
                );
                state.server.commit_pending = commit == CommitMode::Sync;
                state.statements += 1;
            }
            Action::CommitFlush => {
                state.server.wal.commit_flush();
                state.server.commit_pending = false;
            }
            Action::InsertWal { bytes } => {
                state
                    .server
                    .wal
                    .append(bytes, cfg.page_bytes, cfg.wal_buffers_bytes());
            }
            Action::Commit { bytes, commit } => {
                state
                    .server
                    .wal
                    .append(bytes, cfg.page_bytes, cfg.wal_buffers_bytes());
                state.server.commit_pending = commit == CommitMode::Sync;
            }
            Action::WalWriterWrite => {
                state.server.wal.walwriter_write(cfg.page_bytes);
            }
            Action::WalWriterFlush => {
                state.server.wal.walwriter_flush();
            }
            Action::Checkpoint => state.server.checkpoint(),
            Action::Replay => {
                state.server.wal.replay_to_flush();
            }
            Action::ReadSlot => {
                state
                    .connector
                    .read_slot(cfg.variant, &state.server, state.state_file)
            }
            Action::SeedState => state
                .connector
                .seed_state(cfg.variant, &mut state.state_file),
            Action::Advance { restart_moves } => {
                state
                    .connector
                    .advance(cfg.variant, &mut state.server, restart_moves)
            }
            Action::AdvanceGiveUp => state.connector.give_up_advance(),
            Action::Validate => state.connector.validate(&state.server, state.state_file),
            Action::NextSync | Action::Restart => state.connector.start_next_run(),
            Action::ConnectorCrash => {
                state.connector.crash();
                state.crashes += 1;
            }
            Action::PgCrash => {
                state.server.crash_restart();
                state.connector.server_crashed();
                state.crashes += 1;
            }
        }
    }

    /// The enabled actions in `state`, in a fixed order (stateright rebuilds paths from indices).
    pub fn enabled(&self, state: &State, actions: &mut Vec<Action>) {
        let cfg = &self.config;
        let server = &state.server;
        let wal = &server.wal;
        match cfg.driven {
            None if state.statements < cfg.statements && !server.commit_pending => {
                let mut sizes = vec![cfg.stmt_pages_small, cfg.stmt_pages_bulk];
                sizes.dedup();
                for pages in sizes {
                    for commit in [CommitMode::Sync, CommitMode::Async] {
                        actions.push(Action::Append { pages, commit });
                    }
                }
            }
            // One backend: while its synchronous commit waits in XLogFlush it inserts nothing.
            Some(driven) if !server.commit_pending => {
                actions.extend(
                    driven
                        .insert_sizes()
                        .map(|bytes| Action::InsertWal { bytes }),
                );
                actions.push(Action::Commit {
                    bytes: driven.commit_record_bytes,
                    commit: driven.commit,
                });
            }
            None | Some(_) => {}
        }
        if server.commit_pending {
            actions.push(Action::CommitFlush);
        }
        if wal.insert.page_floor(cfg.page_bytes) > wal.write {
            actions.push(Action::WalWriterWrite);
        }
        if wal.flush < wal.insert {
            actions.push(Action::WalWriterFlush);
        }
        let slot_dirty = server.slot.saved.confirmed_flush != server.slot.confirmed_flush
            || server.slot.saved.restart_lsn != server.slot.restart_lsn;
        if slot_dirty || (cfg.server == Role::Primary && wal.flush < wal.insert) {
            actions.push(Action::Checkpoint);
        }
        if cfg.server == Role::Standby && wal.replay < wal.flush {
            actions.push(Action::Replay);
        }
        let connector = &state.connector;
        let runs_left = connector.runs < cfg.syncs;
        match connector.phase {
            Phase::PreCdc => actions.push(Action::ReadSlot),
            Phase::Bootstrap {
                next: BootStep::SeedState,
                ..
            } => actions.push(Action::SeedState),
            Phase::Bootstrap {
                next: next @ (BootStep::Advance | BootStep::RetryAdvance),
                w0,
            } => {
                actions.push(Action::Advance {
                    restart_moves: false,
                });
                if server.slot.restart_can_move(w0, server.advance_limit()) {
                    actions.push(Action::Advance {
                        restart_moves: true,
                    });
                }
                if next == BootStep::RetryAdvance {
                    actions.push(Action::AdvanceGiveUp);
                }
            }
            Phase::StreamChanges => actions.push(Action::Validate),
            Phase::Validated | Phase::Failed(_) if runs_left => actions.push(Action::NextSync),
            Phase::Crashed if runs_left => actions.push(Action::Restart),
            Phase::Validated | Phase::Failed(_) | Phase::Crashed => {}
        }
        let crash_left = state.crashes < cfg.crashes;
        if crash_left && cfg.faults.connector_crash() && connector.phase.is_running() {
            actions.push(Action::ConnectorCrash);
        }
        if crash_left && cfg.faults.pg_crash() {
            actions.push(Action::PgCrash);
        }
    }
}

debug_as_variables!(State);

impl Model for OlakeBootstrap {
    type State = State;
    type Action = Action;

    model_plumbing!();

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            STATE_MATCHES_SLOT.check(|_, s: &State| state_matches_slot(s)),
            NO_LSN_MISMATCH.check(|_, s: &State| no_lsn_mismatch(s)),
            WAL_POINTERS_ORDERED.check(|_, s: &State| wal_pointers_ordered(s)),
            BOOTSTRAP_EVENTUALLY_COMPLETES.check(|_, s: &State| !in_bootstrap(s)),
            REACH_WRITE_AHEAD_AT_READ.check(|_, s: &State| write_ahead_at_read(s)),
            REACH_ADVANCE_CLAMPED.check(|_, s: &State| advance_clamped(s)),
            REACH_BOOTSTRAP_COMPLETE.check(|_, s: &State| bootstrap_complete(s)),
            REACH_CONNECTOR_CRASH.check(|_, s: &State| connector_crashed(s)),
            REACH_PG_CRASH_AFTER_ADVANCE.check(|_, s: &State| pg_crash_lost_advance(s)),
            REACH_STANDBY_BOOTSTRAP.check(|m: &OlakeBootstrap, s: &State| {
                m.config.server == Role::Standby && bootstrap_complete(s)
            }),
        ]
    }
}

/// The fairness the `olake-bootstrap` liveness checks assume, each weak (`WF`): an action of the
/// class that stays enabled is eventually taken.
/// - `walwriter`: PostgreSQL 15 `walwriter.c:WalWriterMain` wakes at least every
///   `wal_writer_delay` (200 ms) and `xlog.c:XLogBackgroundFlush` writes and flushes what is
///   unflushed; a server that is up does not skip it forever.
/// - `commit-flush`: a backend waiting in `xlog.c:XLogFlush` for its synchronous commit returns
///   once its fsync does.
/// - `checkpointer`: `checkpointer.c` runs a checkpoint at least every `checkpoint_timeout`.
/// - `startup-replay`: a standby's startup process replays what it has received.
/// - `connector`: a running sync keeps taking its own steps (OLake `cdc.go:PreCDC`, `AdvanceLSN`'s
///   100 ms retries and 30 s deadline, `StreamChanges`).
///
/// Not fair: client statements, the next sync and restarts (scheduled by people), and the faults.
pub const FAIRNESS: &[FairClass<Action>] = &[
    FairClass {
        class: "walwriter",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::WalWriterWrite | Action::WalWriterFlush),
    },
    FairClass {
        class: "commit-flush",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::CommitFlush),
    },
    FairClass {
        class: "checkpointer",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Checkpoint),
    },
    FairClass {
        class: "startup-replay",
        kind: Fairness::Weak,
        member: |a| matches!(a, Action::Replay),
    },
    FairClass {
        class: "connector",
        kind: Fairness::Weak,
        member: |a| {
            matches!(
                a,
                Action::ReadSlot
                    | Action::SeedState
                    | Action::Advance { .. }
                    | Action::AdvanceGiveUp
                    | Action::Validate
            )
        },
    },
];

impl Live for OlakeBootstrap {
    /// The fairness its `fairness` bound selects: [`FAIRNESS`], or none.
    fn fairness(&self) -> &'static [FairClass<Action>] {
        match self.config.fairness {
            FairnessChoice::Declared => FAIRNESS,
            FairnessChoice::None => &[],
        }
    }

    /// The liveness properties, by id (`bootstrap-eventually-completes`).
    fn liveness(&self) -> Vec<Liveness<OlakeBootstrap, State>> {
        vec![Liveness {
            id: BOOTSTRAP_EVENTUALLY_COMPLETES.id,
            trigger: Some(|_, s| in_bootstrap(s)),
            goal: |_, s| !in_bootstrap(s),
        }]
    }
}

/// Whether a run is inside PreCDC's bootstrap (OLake `cdc.go:PreCDC` with no global state): read
/// W0, and still to seed the state or to advance (#1084: until `end_lsn` reaches W0).
pub fn in_bootstrap(state: &State) -> bool {
    matches!(state.connector.phase, Phase::Bootstrap { .. })
}

/// `state-matches-slot`: once the state file holds an LSN and the connector is not inside PreCDC's
/// bootstrap (so it will trust the file: a restarted run skips the bootstrap), the file equals the
/// slot's `confirmed_flush`.
pub fn state_matches_slot(state: &State) -> bool {
    match state.state_file {
        Some(lsn) if !matches!(state.connector.phase, Phase::Bootstrap { .. }) => {
            lsn == state.server.slot.confirmed_flush
        }
        _ => true,
    }
}

/// `no-lsn-mismatch`: `validateGlobalState` has not failed.
pub fn no_lsn_mismatch(state: &State) -> bool {
    !matches!(
        state.connector.phase,
        Phase::Failed(walcheck_model::olake::Failure::LsnMismatch { .. })
    )
}

/// `wal-pointers-ordered`: `replay ≤ flush ≤ write ≤ insert`, the slot's own ordering, and
/// `confirmed_flush` no further than the pointer an advance clamps to.
pub fn wal_pointers_ordered(state: &State) -> bool {
    let server = &state.server;
    server.wal.is_ordered()
        && server.slot.is_ordered()
        && server.slot.confirmed_flush <= server.advance_limit()
}

/// Witness: the bootstrap's target W0 is ahead of the flush pointer.
pub fn write_ahead_at_read(state: &State) -> bool {
    matches!(state.connector.phase, Phase::Bootstrap { w0, .. } if w0 > state.server.wal.flush)
}

/// Witness: the last advance stopped short of its target.
pub fn advance_clamped(state: &State) -> bool {
    matches!(state.connector.last_advance, Some(AdvanceCall { target, end_lsn }) if end_lsn < target)
}

/// Witness: a run passed `validateGlobalState`.
pub fn bootstrap_complete(state: &State) -> bool {
    state.connector.phase == Phase::Validated
}

/// Witness: the connector crashed mid-run.
pub fn connector_crashed(state: &State) -> bool {
    state.connector.phase == Phase::Crashed
}

/// Witness: the slot is below an `end_lsn` this run was given: a PostgreSQL crash took back an
/// advance that was only in memory.
pub fn pg_crash_lost_advance(state: &State) -> bool {
    matches!(state.connector.last_advance, Some(call) if call.end_lsn > state.server.slot.confirmed_flush)
}

impl Variables for State {
    /// On a standby the WAL pointers are the primary's and named so (`primary_insert`, …), beside
    /// the standby's `replay`; on a primary there is no replay pointer.
    fn variables(&self) -> Vec<(&'static str, Var)> {
        let wal = &self.server.wal;
        let slot = &self.server.slot;
        let lsn = |l: Lsn| Var::Text(l.to_string());
        let opt =
            |l: Option<Lsn>| Var::Text(l.map_or_else(|| "none".to_owned(), |l| l.to_string()));
        let mut vars = match self.server.role {
            Role::Primary => vec![
                ("insert", lsn(wal.insert)),
                ("write", lsn(wal.write)),
                ("flush", lsn(wal.flush)),
            ],
            Role::Standby => vec![
                ("primary_insert", lsn(wal.insert)),
                ("primary_write", lsn(wal.write)),
                ("primary_flush", lsn(wal.flush)),
                ("replay", lsn(wal.replay)),
            ],
        };
        vars.extend([
            ("commit_pending", Var::Bool(self.server.commit_pending)),
            ("confirmed_flush", lsn(slot.confirmed_flush)),
            ("restart_lsn", lsn(slot.restart_lsn)),
            ("saved_confirmed_flush", lsn(slot.saved.confirmed_flush)),
            ("saved_restart_lsn", lsn(slot.saved.restart_lsn)),
            ("state_file", opt(self.state_file)),
            ("connector", Var::Text(self.connector.phase.to_string())),
            ("run", Var::Int(self.connector.runs.into())),
            (
                "end_lsn",
                opt(self.connector.last_advance.map(|c| c.end_lsn)),
            ),
            ("statements", Var::Int(self.statements.into())),
            ("crashes", Var::Int(self.crashes.into())),
        ]);
        vars
    }
}
