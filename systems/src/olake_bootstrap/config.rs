//! System `olake-bootstrap`: its configuration: fault sets, bounds and knobs, and the typed configuration the model reads.

use walcheck_model::olake::Variant;
use walcheck_model::pg::{CommitMode, Role};
use walcheck_properties::system::choice;
use walcheck_properties::system::{number, BoundInfo, BoundValue, FairnessChoice, FAIRNESS_BOUND};

walcheck_properties::fault_sets! {
    /// Which faults the checker may inject.
    pub enum Faults {
        /// The connector process dies between any two of its steps, then restarts from the state
        /// file.
        ConnectorCrash = "connector-crash" => connector_crash,
        /// PostgreSQL crashes (immediate shutdown) and restarts.
        PgCrash = "pg-crash" => pg_crash,
    }
}

impl Faults {
    /// Offers the crashes an OLake system may inject now, in this order: the connector's while a
    /// run is going, PostgreSQL's at any time; each only while `crash_left`. The actions are the
    /// system's `[ConnectorCrash, PgCrash]`.
    pub fn offer_crashes<A>(
        self,
        crash_left: bool,
        connector_running: bool,
        [connector_crash, pg_crash]: [A; 2],
        actions: &mut Vec<A>,
    ) {
        if crash_left && self.connector_crash() && connector_running {
            actions.push(connector_crash);
        }
        if crash_left && self.pg_crash() {
            actions.push(pg_crash);
        }
    }
}

/// The bounds and knobs, with defaults and ranges (`walcheck list`).
pub const BOUNDS: &[BoundInfo] = &[
    choice(
        "server",
        "primary",
        &Role::NAMES,
        "role",
        "the server the connector talks to (standby: PostgreSQL >= 16, OLake #1070); \
              `check` without --bound server= runs both",
    ),
    number(
        "page_bytes",
        8192,
        1024,
        32768,
        "bytes",
        "WAL page size (XLOG_BLCKSZ, a power of two); pointers move in whole pages",
    )
    .power_of_two(),
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
    choice(
        "commit",
        "sync",
        &["sync", "async"],
        "synchronous_commit",
        "how every simulated statement commits (on: sync, off: async)",
    ),
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

/// The system's typed configuration: variant, faults, knobs and bounds (see [`BOUNDS`]), as
/// [`OlakeBootstrapSystem`](super::OlakeBootstrapSystem)'s `config` reads them.
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
    /// Which fairness liveness checks assume (`FAIRNESS` or none); safety checks ignore it.
    pub fairness: FairnessChoice,
    /// The simulator's workload instead of the checker's `Action::Append`; `None` for the
    /// checker, which never sets it.
    pub driven: Option<DrivenWorkload>,
}

/// The workload `walcheck simulate` drives: one client backend runs statements whose rows enter
/// the WAL a chunk at a time (`Action::InsertWal`) and that end in a commit record
/// (`Action::Commit`). The model offers both whenever no synchronous commit is waiting; the
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
    pub(super) fn insert_sizes(&self) -> impl Iterator<Item = u64> {
        let tail = (self.tail_bytes != 0 && self.tail_bytes != self.chunk_bytes)
            .then_some(self.tail_bytes);
        std::iter::once(self.chunk_bytes).chain(tail)
    }
}

impl Config {
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
