//! System `olake-bootstrap`: its configuration: fault sets, bounds and knobs, and the typed configuration the model reads.

use super::*;

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
    pub(super) fn insert_sizes(&self) -> impl Iterator<Item = u64> {
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
