//! What a file can call, set and name: the PostgreSQL vocabulary of walcheck's model
//! (`walcheck_model::pg`), the destination's operations, the environment knobs, the built-in
//! properties, and what a property may observe. The checks read these tables; the interpreter
//! will give each entry its semantics from the same model functions.

use crate::ast::{File, Item, Type};
use walcheck_properties::cdc;
use walcheck_properties::system::PropertyInfo;

/// A parameter of a call: its name (for `name = value`), the types it accepts, and whether it
/// may be left out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The name `name = value` uses.
    pub name: &'static str,
    /// The types it accepts.
    pub accepts: &'static [Type],
    /// Whether it may be left out.
    pub optional: bool,
}

/// What a call returns.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Returns {
    /// Nothing: the call is made for its effect.
    Nothing,
    /// One value.
    Value(Type),
    /// A row, read one field at a time: `pg_replication_slot_advance(w0).end_lsn`.
    Row(&'static [(&'static str, Type)]),
}

/// A call of the vocabulary.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CallInfo {
    /// The name a statement calls.
    pub name: &'static str,
    /// Its parameters, in positional order.
    pub params: &'static [Param],
    /// What it returns.
    pub returns: Returns,
    /// What it does, and the PostgreSQL source it follows.
    pub doc: &'static str,
}

const fn param(name: &'static str, accepts: &'static [Type]) -> Param {
    Param {
        name,
        accepts,
        optional: false,
    }
}

const fn optional(name: &'static str, accepts: &'static [Type]) -> Param {
    Param {
        name,
        accepts,
        optional: true,
    }
}

const LSN: &[Type] = &[Type::Lsn];
const WRITTEN: &[Type] = &[Type::Txn, Type::Txns, Type::Message];
const COUNT: &[Type] = &[Type::Counter(0, u64::MAX)];

/// Every call a statement can make, by name. A call PostgreSQL answers with an ERROR fails the
/// run (retryable), with PostgreSQL's message.
pub const CALLS: &[CallInfo] = &[
    CallInfo {
        name: "pg_current_wal_lsn",
        params: &[],
        returns: Returns::Value(Type::Lsn),
        doc: "the WAL write pointer (xlogfuncs.c: GetXLogWriteRecPtr); an ERROR during recovery (a standby)",
    },
    CallInfo {
        name: "pg_current_wal_insert_lsn",
        params: &[],
        returns: Returns::Value(Type::Lsn),
        doc: "the WAL insert pointer (GetXLogInsertRecPtr); an ERROR during recovery",
    },
    CallInfo {
        name: "pg_current_wal_flush_lsn",
        params: &[],
        returns: Returns::Value(Type::Lsn),
        doc: "the WAL flush pointer (GetFlushRecPtr); an ERROR during recovery",
    },
    CallInfo {
        name: "pg_last_wal_replay_lsn",
        params: &[],
        returns: Returns::Value(Type::Lsn),
        doc: "a standby's replay pointer (GetXLogReplayRecPtr); none on a primary",
    },
    CallInfo {
        name: "pg_is_in_recovery",
        params: &[],
        returns: Returns::Value(Type::Bool),
        doc: "whether the server is a standby",
    },
    CallInfo {
        name: "pg_replication_slots",
        params: &[],
        returns: Returns::Row(&[("confirmed_flush_lsn", Type::Lsn), ("restart_lsn", Type::Lsn)]),
        doc: "the connector's slot's row of pg_replication_slots",
    },
    CallInfo {
        name: "pg_replication_slot_advance",
        params: &[param("upto_lsn", LSN)],
        returns: Returns::Row(&[("end_lsn", Type::Lsn)]),
        doc: "slotfuncs.c: moves confirmed_flush to min(upto_lsn, flush) (replay on a standby); an ERROR below confirmed_flush; end_lsn is where it stopped",
    },
    CallInfo {
        name: "pg_create_logical_replication_slot",
        params: &[],
        returns: Returns::Row(&[("lsn", Type::Lsn)]),
        doc: "creates the connector's slot at a consistent point; lsn is its confirmed_flush",
    },
    CallInfo {
        name: "pg_drop_replication_slot",
        params: &[],
        returns: Returns::Nothing,
        doc: "drops the connector's slot",
    },
    CallInfo {
        name: "pg_logical_slot_peek_changes",
        params: &[optional("upto_lsn", LSN), optional("upto_nchanges", COUNT)],
        returns: Returns::Value(Type::Txns),
        doc: "logicalfuncs.c: the transactions decoded from confirmed_flush, the slot unchanged",
    },
    CallInfo {
        name: "pg_logical_slot_get_changes",
        params: &[optional("upto_lsn", LSN), optional("upto_nchanges", COUNT)],
        returns: Returns::Value(Type::Txns),
        doc: "the same, and confirmed_flush moves to the end of what it returned",
    },
    CallInfo {
        name: "identify_system",
        params: &[],
        returns: Returns::Row(&[("xlogpos", Type::Lsn), ("timeline", Type::Counter(1, 3))]),
        doc: "IDENTIFY_SYSTEM: xlogpos is the flush pointer (a standby's: what it flushed); timeline is the server's (1, one more after each failover)",
    },
    CallInfo {
        name: "start_replication",
        params: &[param("from", LSN)],
        returns: Returns::Nothing,
        doc: "START_REPLICATION SLOT … LOGICAL from: decodes from max(from, confirmed_flush) and skips every transaction whose commit record starts before it",
    },
    CallInfo {
        name: "standby_status_update",
        params: &[optional("write", LSN), param("flush", LSN)],
        returns: Returns::Nothing,
        doc: "a standby status update; walsender.c moves confirmed_flush forward to flush (write defaults to flush)",
    },
    CallInfo {
        name: "backfill",
        params: &[],
        returns: Returns::Nothing,
        doc: "the full load: the destination durably holds every publication transaction committed before it",
    },
    CallInfo {
        name: "destination.write",
        params: &[param("txns", WRITTEN)],
        returns: Returns::Nothing,
        doc: "writes transactions into the destination's open (uncommitted) batch: a txn, txns, or what a message carries (its transaction; with env messages = changes a change's row, a Begin or a Commit nothing)",
    },
    CallInfo {
        name: "destination.commit",
        params: &[],
        returns: Returns::Nothing,
        doc: "commits the open batch durably; `NAME = value` arguments set `durable … in destination` variables in the same commit",
    },
];

/// The call named `name`, if the vocabulary has it.
pub fn call(name: &str) -> Option<&'static CallInfo> {
    CALLS.iter().find(|c| c.name == name)
}

/// The fields of a message bound by `for each message`.
pub const MESSAGE_FIELDS: &[(&str, Type)] = &[
    ("txn", Type::Txn),
    ("is_keepalive", Type::Bool),
    ("wal_end", Type::Lsn),
    ("reply_requested", Type::Bool),
    ("lsn", Type::Lsn),
    ("is_begin", Type::Bool),
    ("is_change", Type::Bool),
    ("is_commit", Type::Bool),
    ("index", Type::Counter(0, 4)),
];

/// The fields of a transaction (none for `none`): its commit record's start and end.
pub const TXN_FIELDS: &[(&str, Type)] = &[
    ("first_lsn", Type::Lsn),
    ("commit_lsn", Type::Lsn),
    ("end_lsn", Type::Lsn),
];

/// The fields of a run of transactions: its last transaction's end (none when empty), its ends.
pub const TXNS_FIELDS: &[(&str, Type)] = &[
    ("end_lsn", Type::Lsn),
    ("first", Type::Txn),
    ("last", Type::Txn),
];

/// What a property (never the code) may observe of PostgreSQL: `slot.confirmed_flush`.
pub const OBSERVABLES: &[(&str, &[(&str, Type)])] = &[
    (
        "slot",
        &[
            ("confirmed_flush", Type::Lsn),
            ("restart_lsn", Type::Lsn),
            ("saved_confirmed_flush", Type::Lsn),
            ("saved_restart_lsn", Type::Lsn),
        ],
    ),
    (
        "wal",
        &[
            ("insert", Type::Lsn),
            ("write", Type::Lsn),
            ("flush", Type::Lsn),
            ("replay", Type::Lsn),
            ("removed_before", Type::Lsn),
        ],
    ),
    (
        "destination",
        &[("holds", Type::Txns), ("duplicated", Type::Txns)],
    ),
];

/// The names no declaration may take: the observables, `destination`, and the columns every
/// trace of a file shows (`step`, the WAL pointers, the slot's positions, the destination's
/// batch, the workload's and the faults' counters).
pub const RESERVED: &[&str] = &[
    "slot",
    "wal",
    "destination",
    "step",
    "insert",
    "write",
    "replay",
    "confirmed_flush",
    "restart_lsn",
    "saved_confirmed_flush",
    "committed",
    "batch",
    "published",
    "other",
    "runs",
    "connector_crashes",
    "pg_crashes",
    "kills",
    "call_failures",
    "saved_restart_lsn",
    "removed_before",
    "os_crashes",
    "checkpoint",
];

/// The most tries a `retry` may make: each try is a state of its own, and 1000 keeps a
/// retry's states (and the liveness checker's paths through them) within reach.
pub const RETRY_MAX: u64 = 1000;

/// A knob's values.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    /// A whole number in `LO..=HI`.
    Range(u64, u64),
    /// One of these words.
    Words(&'static [&'static str]),
}

/// An environment knob: its name, default (as written), values, unit and meaning.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KnobInfo {
    /// The name `env` sets.
    pub name: &'static str,
    /// Its value when the file does not set it.
    pub default: &'static str,
    /// Its values.
    pub domain: Domain,
    /// What it sets.
    pub doc: &'static str,
}

const fn knob(
    name: &'static str,
    default: &'static str,
    domain: Domain,
    doc: &'static str,
) -> KnobInfo {
    KnobInfo {
        name,
        default,
        domain,
        doc,
    }
}

/// The environment knobs, their defaults and ranges. `crashes` defaults to no cap beyond
/// `connector_crashes` and `pg_crashes`.
pub const KNOBS: &[KnobInfo] = &[
    knob("transactions", "2", Domain::Range(0, 6), "client transactions on the published tables in the whole run"),
    knob("commit", "sync", Domain::Words(&["sync", "async", "either"]), "synchronous_commit of the client transactions (on: sync, off: async; either: each one chooses)"),
    knob("txn_pages", "1", Domain::Range(1, 64), "WAL of one client transaction, in 8 KiB pages"),
    knob("bulk_txn_pages", "0", Domain::Range(0, 64), "WAL of a bulk transaction (INSERT … SELECT), in pages; 0: none, otherwise each transaction is small or bulk"),
    knob("wal_buffers_pages", "4", Domain::Range(4, 262_143), "wal_buffers in pages: WAL beyond it is written out (not flushed) by the inserting backend"),
    knob("other_traffic", "0", Domain::Range(0, 6), "transactions on tables outside the publication"),
    knob("runs", "2", Domain::Range(0, 4), "connector runs in all: the first, restarts and later syncs; unbounded (or 0): a connector that never stops, whose state does not count its runs"),
    knob("connector_crashes", "1", Domain::Range(0, 3), "connector crashes injected at most"),
    knob("pg_crashes", "0", Domain::Range(0, 3), "PostgreSQL crashes (immediate shutdown) injected at most"),
    knob("crashes", "any", Domain::Range(0, 6), "crashes of either kind together at most (olake-bootstrap's `crashes`)"),
    knob("checkpoints", "on", Domain::Words(&["on", "off"]), "whether checkpoints run (each saves the slot)"),
    knob("server", "primary", Domain::Words(&["primary", "standby"]), "the server the connector talks to (standby: PostgreSQL 16 or later)"),
    knob("keepalives", "0", Domain::Range(0, 3), "keepalive messages the walsender sends at most before a transaction it could send; once caught up it sends keepalives for ever (none when 0)"),
    knob("call_failures", "0", Domain::Range(0, 3), "calls that fail at most: a SQL call, the replication protocol's, backfill or destination.commit fails before taking effect, or times out after it"),
    knob("kills", "0", Domain::Range(0, 3), "kills of `killable` processes at most: the process alone restarts at its first step"),
    knob("pg_version", "15", Domain::Range(15, 18), "PostgreSQL major version (each confirmed live: docs/live.md), its newest minor; or a release, MAJOR.MINOR (15.12): before 15.14, 16.10 and 17.6 a status update may move confirmed_flush back and a checkpoint is two steps that may remove WAL the saved slot needs"),
    knob("pg_stops", "0", Domain::Range(0, 3), "clean stops of PostgreSQL (pg_ctl stop -m fast, then a start) at most: the walsender waits for the connector's confirmation"),
    knob("max_slot_wal_keep_pages", "0", Domain::Range(0, 64), "max_slot_wal_keep_size in WAL pages: a checkpoint invalidates a slot retaining more; 0 (or unlimited): -1, no limit"),
    knob("slot", "auto", Domain::Words(&["auto", "exists", "none"]), "whether the connector's slot exists at the start; auto: it does unless the file calls pg_create_logical_replication_slot"),
    knob("fairness", "declared", Domain::Words(&["declared", "none"]), "declared: every step not marked unfair is weakly fair (liveness means \"if the connector keeps running\"); none: no fairness"),
    knob("failovers", "0", Domain::Range(0, 2), "failovers at most: the primary is lost and its asynchronous physical standby promoted (server = primary); the connector's next connection reaches the promoted server"),
    knob("failover_slots", "off", Domain::Words(&["off", "on"]), "PostgreSQL 17 or later: the slot is a failover slot the standby's slot sync worker copies, and synchronized_standby_slots holds the walsender to what the standby has received"),
    knob("messages", "transactions", Domain::Words(&["transactions", "changes"]), "what `for each message` receives: whole transactions, or pgoutput's messages one by one (Begin, one per published row, Commit), each under its own LSN"),
    knob("rows", "1", Domain::Range(1, 4), "rows each published client transaction inserts: changes it sends, rows SQL decoding returns"),
    knob("multi_insert", "off", Domain::Words(&["off", "on"]), "on: a transaction's rows are one multi-insert record (COPY), so their changes share one LSN; off: one record per row"),
    knob("interleave", "off", Domain::Words(&["off", "on"]), "on: a published transaction may insert its rows and stay open while others commit, committing after them: commit order is not begin order, its records interleave with theirs (one open at a time)"),
    knob("os_crashes", "0", Domain::Range(0, 3), "operating-system crashes (power loss) under PostgreSQL injected at most: as a PostgreSQL crash, and WAL written but not flushed is lost too"),
    knob("stream_drops", "0", Domain::Range(0, 3), "streams the walsender ends with PostgreSQL up at most (wal_sender_timeout without a reply, a dropped connection): for each message ends, the slot stays as it is in memory"),
];

/// Whether call `name` needs a session of its own with PostgreSQL (SQL, or a replication
/// command): while PostgreSQL stops cleanly it fails. A status update goes over the stream
/// already open, which a stopping walsender keeps until the client has confirmed.
pub fn needs_session(name: &str) -> bool {
    name.starts_with("pg_") || matches!(name, "identify_system" | "start_replication" | "backfill")
}

/// The knob named `name`, if any.
pub fn knob_info(name: &str) -> Option<&'static KnobInfo> {
    KNOBS.iter().find(|k| k.name == name)
}

/// The properties walcheck checks in every file unless a `skip` line turns them off: the shared
/// CDC invariants of [`cdc`], declared there once, and the language's own `no-fatal-error`.
pub const BUILT_IN: &[PropertyInfo] = &[
    cdc::ACK_WITHIN_DURABLE,
    cdc::NO_DATA_LOSS,
    PropertyInfo::always("no-fatal-error", "no `fail fatal` is reached"),
    cdc::WAL_POINTERS_ORDERED,
    cdc::EVENTUALLY_ACKNOWLEDGED,
    WAL_RETENTION_BOUNDED,
];

/// `wal-retention-bounded`, the language's form of `electric-flush`'s property of that id ("at
/// quiescence confirmed_flush is the last commit's LSN"): a connector's steps never stop while
/// the walsender sends keepalives, so it is decided as liveness, which `tests/liveness.rs`
/// shows gives electric-flush's safety verdict on every configuration of its catalogue.
pub const WAL_RETENTION_BOUNDED: PropertyInfo = PropertyInfo::eventually(
    "wal-retention-bounded",
    "confirmed_flush eventually reaches the last commit, unpublished traffic included: the slot does not retain the WAL of finished traffic for ever",
);

/// The built-in properties a file checks only when it names them in an `expect` line: keeping
/// what they read adds states, which the other files do not pay for.
pub const OPT_IN: &[PropertyInfo] = &[cdc::NO_NEEDED_WAL_REMOVED];

/// The built-in properties `file` checks: [`BUILT_IN`]'s but those it skips, then [`OPT_IN`]'s
/// it names in an `expect` line.
pub fn checked_built_ins(file: &File) -> impl Iterator<Item = &'static PropertyInfo> + '_ {
    let named = move |id: &str, skip: bool| {
        file.items.iter().any(|i| match i {
            Item::Skip(s) => skip && s.property.node == id,
            Item::Expect(e) => !skip && e.property.node == id,
            _ => false,
        })
    };
    let by_default = BUILT_IN.iter().filter(move |p| !named(p.id, true));
    by_default.chain(OPT_IN.iter().filter(move |p| named(p.id, false)))
}

/// The built-in property `id`, if any (checked by default or [`OPT_IN`]).
pub fn built_in(id: &str) -> Option<&'static PropertyInfo> {
    BUILT_IN.iter().chain(OPT_IN).find(|p| p.id == id)
}
