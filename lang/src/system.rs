//! A connector file as a walcheck system: [`load`] reads and checks a file, compiles it and
//! declares it through the open `System` trait, so that `walcheck check FILE.wal` (and `list`,
//! `show`, `replay`, `explore`, `merge`) take it like a built-in system.
//!
//! The declaration is built from the file's text when it is loaded and kept for the rest of the
//! process (leaked once), as the registry keeps its systems: the file's name is the system's,
//! its one design the variant `design`, its `env` lines the defaults of the bounds, its
//! properties the built-in ones it does not `skip` and its own, its `expect` lines the
//! expectation table.

use std::collections::BTreeSet;
use std::path::Path;

use walcheck_model::pg::{CommitMode, PgVersion, Role, SavedSlot};
use walcheck_properties::codec::{decode_postcard, encode_postcard, Codec};
use walcheck_properties::system::{
    choice, number, BoundInfo, BoundValue, Config, Declared, FairClass, FairnessChoice, Kind,
    Lanes, Liveness, Model, PropertyInfo, System, SystemInfo, Var, VarInfo, Variables, View,
    FAIRNESS_BOUND,
};
use walcheck_properties::verdict::Verdict;

use crate::ast::{Expr, File, Storage, Type};
use crate::limits::PROCESSES_MAX;
use crate::machine::{
    row_set, txn_set, Action, Env, Machine, Shown, State as MachineState, Status, Value,
};
use crate::program::{leak, Op, Program, SlotKind};
use crate::vocabulary::{self, Domain};

/// The variant every file has: the one design it describes.
pub const VARIANT: &str = "design";

/// What a property of a file checks.
#[derive(Clone, Debug)]
enum Check {
    AckWithinDurable,
    NoDataLoss,
    NoFatalError,
    WalPointersOrdered,
    /// `always ID: cond [when guard]`.
    Always {
        cond: Expr,
        when: Option<Expr>,
    },
    /// `sometimes ID: cond`.
    Sometimes(Expr),
    /// `eventually-acknowledged`'s goal (the fair-liveness checker reads
    /// [`System::liveness`]).
    Acknowledged,
    /// `wal-retention-bounded`'s goal.
    Retained,
    /// `eventually ID: goal` (no trigger) or `always ID: trigger leads to goal`: its goal, and
    /// its trigger for [`TRIGGERS`].
    Eventually {
        goal: Expr,
        trigger: Option<Expr>,
    },
    /// `no-needed-wal-removed`, when the file names it.
    NeededWalKept,
}

/// A connector file loaded as a system.
#[derive(Debug)]
pub struct FileSystem {
    info: &'static SystemInfo,
    program: &'static Program,
    /// The safety properties and witnesses, in [`SystemInfo::properties`] order.
    checks: &'static [Check],
    /// `(property, verdict, why)` for each `expect` line; `None` when the file has none.
    expected: Option<Vec<(&'static str, Verdict, &'static str)>>,
    /// Whether the file creates its slot (then there is none at the start).
    creates_slot: bool,
    /// The fairness classes: [`FAIRNESS`], with one a process.
    fairness: &'static [FairClass<Action>],
}

/// Reads, checks and compiles the file at `path`: the system, or the diagnostics rendered for a
/// terminal (errors reject the file; warnings come back beside the system).
pub fn load(path: &Path) -> Result<(FileSystem, String), String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    load_text(path, &source)
}

/// [`load`] of `source`, the text already read from the file at `path`.
pub fn load_text(path: &Path, source: &str) -> Result<(FileSystem, String), String> {
    // A byte-order mark some editors write is not part of the text.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("{}: a connector file needs a name", path.display()))?;
    from_source(name, &path.display().to_string(), source)
}

/// [`load`] of `source`, the text of a file called `file_name`, as system `name`.
pub fn from_source(
    name: &str,
    file_name: &str,
    source: &str,
) -> Result<(FileSystem, String), String> {
    let checked = crate::check(source);
    let rendered = crate::diagnostic::render_all(&checked.diagnostics, file_name, source);
    let file = checked.into_result().map_err(|_| rendered.clone())?;
    let system = FileSystem::new(name, &file, source);
    Ok((system, rendered))
}

impl FileSystem {
    fn new(name: &str, file: &File, source: &str) -> FileSystem {
        let program: &'static Program = Box::leak(Box::new(Program::compile(file, source)));
        let skipped = |id: &str| {
            file.items.iter().any(|i| match i {
                crate::ast::Item::Skip(s) => s.property.node == id,
                _ => false,
            })
        };
        let mut properties = Vec::new();
        let mut checks = Vec::new();
        for built in vocabulary::checked_built_ins(file) {
            if built.kind == Kind::Eventually {
                continue;
            }
            properties.push(PropertyInfo::always(built.id, built.doc));
            checks.push(check_of(built.id));
        }
        for inv in file.invariants() {
            let (property, check) = own_property(inv, source);
            properties.push(property);
            checks.push(check);
        }
        for (id, check) in [
            ("eventually-acknowledged", Check::Acknowledged),
            ("wal-retention-bounded", Check::Retained),
        ] {
            if !skipped(id) {
                let built = vocabulary::built_in(id).expect("built in");
                properties.push(PropertyInfo::eventually(built.id, built.doc));
                checks.push(check);
            }
        }
        let expects: Vec<_> = file
            .items
            .iter()
            .filter_map(|i| match i {
                crate::ast::Item::Expect(e) => Some(e),
                _ => None,
            })
            .collect();
        let expected = (!expects.is_empty()).then(|| {
            expects
                .iter()
                .map(|e| {
                    let verdict = if e.violated {
                        Verdict::Violated
                    } else {
                        Verdict::Holds
                    };
                    let why = e
                        .why
                        .as_ref()
                        .map_or("as the file expects", |w| leak(&w.node));
                    (leak(&e.property.node), verdict, why)
                })
                .collect()
        });
        let creates_slot = source.contains("pg_create_logical_replication_slot");
        let description = file
            .description
            .as_ref()
            .map_or("a connector design", |d| leak(&d.node));
        let info = SystemInfo {
            name: leak(name),
            doc: description,
            variants: Box::leak(Box::new([(VARIANT, description)])),
            faults: &["all"],
            bounds: Box::leak(bounds(file).into_boxed_slice()),
            properties: Box::leak(properties.into_boxed_slice()),
            view: view(program),
            ..SystemInfo::EMPTY
        };
        FileSystem {
            info: Box::leak(Box::new(info)),
            program,
            checks: Box::leak(checks.into_boxed_slice()),
            expected,
            creates_slot,
            fairness: fairness_of(program),
        }
    }
}

/// A property the file declares, and its check: `always`, `sometimes`, `eventually` or `leads
/// to`, its text the doc.
fn own_property(inv: &crate::ast::Invariant, source: &str) -> (PropertyInfo, Check) {
    let id = leak(&inv.id.node);
    let doc = leak(crate::ast::Span::new(inv.cond.span.start, inv.span.end).text(source));
    if inv.sometimes {
        return (
            PropertyInfo::sometimes(id, doc),
            Check::Sometimes(inv.cond.clone()),
        );
    }
    if inv.eventually || inv.leads_to.is_some() {
        let check = match &inv.leads_to {
            Some(goal) => Check::Eventually {
                goal: goal.clone(),
                trigger: Some(inv.cond.clone()),
            },
            None => Check::Eventually {
                goal: inv.cond.clone(),
                trigger: None,
            },
        };
        return (PropertyInfo::eventually(id, doc), check);
    }
    let check = Check::Always {
        cond: inv.cond.clone(),
        when: inv.when.clone(),
    };
    (PropertyInfo::always(id, doc), check)
}

/// The bounds: every environment knob, its default the file's `env` value or the language's.
fn bounds(file: &File) -> Vec<BoundInfo> {
    let set = |name: &str| {
        file.knobs()
            .find(|k| k.name.node == name)
            .map(|k| k.value.node.to_string())
    };
    vocabulary::KNOBS
        .iter()
        .map(|knob| {
            // `env runs = unbounded` is the bound's 0.
            let given = set(knob.name).map(|g| if g == "unbounded" { "0".to_owned() } else { g });
            let unit = unit(knob.name);
            let set_by_file = given.is_some();
            if knob.name == FAIRNESS_BOUND.name {
                let default = match given.as_deref() {
                    Some("none") => "none",
                    _ => "declared",
                };
                return BoundInfo {
                    default: BoundValue::Name(default),
                    ..FAIRNESS_BOUND
                };
            }
            match knob.domain {
                Domain::Range(min, max) => {
                    let default = given
                        .and_then(|g| g.parse().ok())
                        .unwrap_or_else(|| knob.default.parse().unwrap_or(max));
                    let bound = number(knob.name, default, min, max, unit, knob.doc);
                    let release = set(knob.name).filter(|g| g.contains('.'));
                    numeric_bound(knob.name, bound, set_by_file, release)
                }
                Domain::Words(words) => {
                    let given = given.unwrap_or_else(|| knob.default.to_owned());
                    let default = words
                        .iter()
                        .copied()
                        .find(|w| *w == given)
                        .unwrap_or(words[0]);
                    let bound = choice(knob.name, default, words, unit, knob.doc);
                    match knob.name {
                        // Added with slot lifecycles: listed when a file sets it or away from
                        // its default.
                        "slot" | "failover_slots" | "messages" | "multi_insert" | "interleave"
                            if !set_by_file =>
                        {
                            bound.unlisted()
                        }
                        _ => bound,
                    }
                }
            }
        })
        .collect()
}

/// A numeric knob's bound as configurations list it: `set_by_file` when an `env` line sets it,
/// `release` the `pg_version` a file gives as `MAJOR.MINOR`.
fn numeric_bound(
    name: &str,
    bound: BoundInfo,
    set_by_file: bool,
    release: Option<String>,
) -> BoundInfo {
    match name {
        "runs" => bound.zero_word("unbounded"),
        // Added with processes: left out of a configuration at its default, so that the files
        // and traces before it keep their configuration line.
        "kills" | "call_failures" => bound.quiet(),
        // Added after the catalogue's configurations: listed when a file sets them or away
        // from their default.
        "os_crashes" | "pg_stops" | "failovers" | "rows" | "stream_drops" if !set_by_file => {
            bound.unlisted()
        }
        "max_slot_wal_keep_pages" if !set_by_file => bound.zero_word("unlimited").unlisted(),
        "max_slot_wal_keep_pages" => bound.zero_word("unlimited"),
        // `env pg_version = 15.12`: the release, a name.
        "pg_version" => match release {
            Some(release) => BoundInfo {
                default: BoundValue::Name(leak(&release)),
                ..bound.release()
            },
            None => bound.release(),
        },
        _ => bound,
    }
}

/// The unit `walcheck list` and range errors show for knob `name`.
fn unit(name: &str) -> &'static str {
    match name {
        "transactions" | "other_traffic" => "transactions",
        "txn_pages" | "bulk_txn_pages" | "wal_buffers_pages" => "8 KiB pages",
        "runs" => "runs",
        "connector_crashes" | "pg_crashes" | "crashes" | "os_crashes" => "crashes",
        "keepalives" => "keepalives",
        "pg_stops" => "stops",
        "stream_drops" => "drops",
        "failovers" => "failovers",
        "rows" => "rows",
        "max_slot_wal_keep_pages" => "8 KiB pages",
        "pg_version" => "major version",
        _ => "choice",
    }
}

/// The columns every trace of a file has first: the connector's position, PostgreSQL's
/// pointers and slot, the destination.
const COLUMNS: &[(&str, &str, &str)] = &[
    ("step", "text", "the connector's next step (a label, LINE: statement, or next run at a run's end), done, or where it stopped"),
    ("insert", "LSN", "the WAL insert pointer"),
    ("write", "LSN", "the WAL write pointer (pg_current_wal_lsn)"),
    ("flush", "LSN", "the WAL flush pointer: what a crash keeps and the walsender may send"),
    ("replay", "LSN or none", "a standby's replay pointer"),
    ("confirmed_flush", "LSN or none", "the slot's confirmed_flush_lsn: where a restart streams from"),
    ("restart_lsn", "LSN or none", "the slot's restart_lsn"),
    ("saved_confirmed_flush", "LSN or none", "the slot's confirmed_flush on disk: what a PostgreSQL crash returns to"),
    ("committed", "list", "the client transactions committed (T1, T2, … in commit order)"),
    ("destination", "list", "the transactions the destination durably holds"),
    ("batch", "list", "the destination's open batch (lost by a connector crash)"),
    ("error", "text", "the PostgreSQL ERROR the connector's step met, which ended its run (none when it met none)"),
];

/// The trace view: PostgreSQL's pointers and slot, the connector's position and variables, the
/// destination.
fn view(program: &Program) -> View {
    let info = |&(name, kind, doc): &(&'static str, &'static str, &'static str)| VarInfo {
        name,
        kind,
        doc,
    };
    let mut variables: Vec<VarInfo> = COLUMNS.iter().map(info).collect();
    // Each other process's next step beside `every run`'s, after it.
    let processes = program.processes.iter().map(|p| VarInfo {
        name: p.column,
        kind: "text",
        doc: "the process's next step (ended when its body has ended)",
    });
    variables.splice(1..1, processes);
    variables.extend(program.slots.iter().flat_map(slot_variables));
    variables.extend(BOOKKEEPING.iter().map(info));
    if program.processes.iter().any(|p| p.killable) {
        variables.push(VarInfo {
            name: "kills",
            kind: "count",
            doc: "kills of killable processes so far",
        });
    }
    if program.call_faults {
        variables.push(VarInfo {
            name: "call_failures",
            kind: "count",
            doc: "calls failed so far (env call_failures)",
        });
    }
    if program.pg_stops {
        variables.push(VarInfo {
            name: "pg_stops",
            kind: "count",
            doc: "clean stops of PostgreSQL so far (env pg_stops)",
        });
    }
    if program.stream_drops {
        variables.push(VarInfo {
            name: "stream_drops",
            kind: "count",
            doc: "streams the walsender ended with PostgreSQL up so far (env stream_drops)",
        });
    }
    variables.extend(
        WAL_REMOVAL
            .iter()
            .filter(|c| wal_removal_shown(program, c.0))
            .map(info),
    );
    if program.failover {
        variables.extend(FAILOVER.iter().map(info));
    }
    let key = key_columns(program);
    // A keepalive received changes no other column: a table shows its count when it changes.
    let counters: Vec<&'static str> = BOOKKEEPING
        .iter()
        .map(|&(name, ..)| name)
        .filter(|&name| name != "keepalives")
        .collect();
    View {
        variables: Box::leak(variables.into_boxed_slice()),
        key_variables: Box::leak(key.into_boxed_slice()),
        counters: Box::leak(counters.into_boxed_slice()),
        lanes: &LANES,
        ..SystemInfo::EMPTY.view
    }
}

/// The columns a step table always shows: the connector's and each process's step, the flush
/// pointer, `confirmed_flush`, the destination, the durable variables, and what
/// `no-needed-wal-removed` compares in a file that keeps the horizon.
fn key_columns(program: &Program) -> Vec<&'static str> {
    let mut key = vec!["step"];
    key.extend(program.processes.iter().map(|p| p.column));
    key.extend(["flush", "confirmed_flush", "destination"]);
    // What `no-needed-wal-removed` compares, shown in every row of a file that keeps it.
    if program.horizon {
        key.extend(["restart_lsn", "saved_restart_lsn", "removed_before"]);
    }
    key.extend(
        program
            .slots
            .iter()
            .filter(|s| s.kind == SlotKind::Declared && s.storage != Storage::Volatile)
            .map(|s| s.name),
    );
    key
}

/// The trace variables of a variable slot: its value, and an `async` variable's flushed copy
/// (`NAME.flushed`, a name no variable can take).
fn slot_variables(slot: &crate::program::Slot) -> Vec<VarInfo> {
    let doc = match (slot.kind, slot.storage) {
        (SlotKind::Tries, _) => {
            "the tries the `retry` on that line has made (reset by a crash and each run)"
        }
        (_, Storage::Durable) => "a durable variable of the file (kept by a crash)",
        (_, Storage::DurableAsync) => {
            "an async durable variable of the file (a pending value is lost by a crash)"
        }
        (_, Storage::Destination) => "destination metadata of the file (written with a commit)",
        (_, Storage::Volatile) => "a volatile variable of the file (reset by a crash and each run)",
    };
    let kind = match slot.ty {
        Type::Lsn => "LSN or none",
        Type::Bool => "bool",
        Type::Counter(..) => "count",
        _ => "text",
    };
    let mut vars = vec![VarInfo {
        name: slot.name,
        kind,
        doc,
    }];
    if let Some(name) = slot.flushed {
        vars.push(VarInfo {
            name,
            kind,
            doc: "the async variable's value on disk: what a crash returns it to",
        });
    }
    vars
}

/// The rest of a state, which a trace keeps and step tables leave out (the actions show the
/// counters; the rest is PostgreSQL's and the connector's bookkeeping), but for `keepalives`:
/// with them, two states a trace shows alike are the same state, so that a lasso's loop is the
/// first state equal to its last.
const BOOKKEEPING: &[(&str, &str, &str)] = &[
    (
        "published",
        "count",
        "client transactions on the published tables so far",
    ),
    (
        "other",
        "count",
        "client transactions on other tables so far",
    ),
    ("runs", "count", "connector runs started"),
    ("connector_crashes", "count", "connector crashes so far"),
    ("pg_crashes", "count", "PostgreSQL crashes so far"),
    (
        "keepalives",
        "count",
        "keepalive messages the walsender sent so far",
    ),
    (
        "stream",
        "text",
        "the replication connection: none, closed (by a PostgreSQL crash), or where its walsender \
         decodes from, has read to and has sent to",
    ),
    (
        "saved_restart_lsn",
        "LSN or none",
        "the slot's restart_lsn on disk",
    ),
    (
        "slot_dirty",
        "bool",
        "the slot changed since it was last saved to disk",
    ),
    (
        "commit_pending",
        "bool",
        "a synchronous commit waits for its flush (CommitFlush)",
    ),
    (
        "transactions",
        "text",
        "each committed transaction: its commit mode, its WAL (first to end LSN), and `other` when \
         it is on tables outside the publication",
    ),
    (
        "first_run_done",
        "bool",
        "`first run` has ended (a crash before restarts it)",
    ),
    (
        "slot_origin",
        "LSN",
        "where the slot was created: earlier transactions are the backfill's",
    ),
    (
        "lost",
        "bool",
        "a START_REPLICATION skipped a transaction the destination did not hold",
    ),
];

/// The sequence diagram's participants: the clients, PostgreSQL (its WAL), the slot, the
/// connector and the destination. A step goes from the connector to what its statement calls,
/// as far as its name shows (a labelled step's name does not: it stays on the connector).
static LANES: Lanes = Lanes {
    participants: &[
        ("client", "clients"),
        ("postgres", "PostgreSQL"),
        ("slot", "slot"),
        ("connector", "connector"),
        ("destination", "destination"),
    ],
    lane: |action| match action {
        "Commit" | "CommitOther" | "CommitFlush" => ("client", "postgres"),
        "WalWriterWrite" | "WalWriterFlush" | "Checkpoint" | "Replay" | "PgCrash"
        | "CheckpointStart" | "CheckpointEnd" | "OsCrash" | "PgStop" | "PgStopped"
        | "WalSenderTimeout" | "StandbyReceive" | "SlotSync" | "Failover" | "StreamDrop" => {
            ("postgres", "postgres")
        }
        step if step.starts_with("PgStopped") => ("postgres", "postgres"),
        "ConnectorCrash" | "Flush" => ("connector", "connector"),
        step if step.contains("destination.") => ("connector", "destination"),
        step if step.contains("standby_status_update")
            || step.contains("slot_advance")
            || step.contains("get_changes") =>
        {
            ("connector", "slot")
        }
        step if step.contains("pg_")
            || step.contains("start_replication")
            || step.contains("identify_system")
            || step.contains("for each message") =>
        {
            ("connector", "postgres")
        }
        _ => ("connector", "connector"),
    },
    owner: |var| match var {
        "insert" | "write" | "flush" | "replay" | "committed" => Some("postgres"),
        "confirmed_flush" | "restart_lsn" | "saved_confirmed_flush" => Some("slot"),
        "destination" | "batch" => Some("destination"),
        "published" | "other" | "runs" | "connector_crashes" | "pg_crashes" => None,
        _ => Some("connector"),
    },
};

/// Why the knobs of `config` cannot be checked together, if they cannot: failovers and failover
/// slots are the primary's, failover slots need PostgreSQL 17, and a file checks either only
/// when one of its `env` lines names them (its traces then have the standby's columns, which
/// tell its states apart). A file's own `env` lines are refused by its checks, located.
fn knob_conflict(config: &Config, program: &Program) -> Option<String> {
    let failovers = config.small("failovers") > 0;
    let slots = config.name("failover_slots") == "on";
    if !(failovers || slots) {
        return None;
    }
    if config.name("server") == "standby" {
        return Some("failovers and failover slots need server=primary: the model follows the primary's standby".into());
    }
    let release = release(config);
    if slots && !release.is_some_and(PgVersion::has_failover_slots) {
        return Some("failover_slots=on needs pg_version 17 or later: PostgreSQL 15 and 16 have no failover slots".into());
    }
    if !program.failover {
        return Some("--bound failovers and failover_slots need the file to name one of them in an env line (`env failovers = 0` will do): its traces then show the standby's columns".into());
    }
    None
}

/// The PostgreSQL release `config`'s `pg_version` names (a major is its newest minor), if any.
fn release(config: &Config) -> Option<PgVersion> {
    match config.value("pg_version") {
        Some(BoundValue::Name(release)) => PgVersion::from_release(release),
        Some(BoundValue::Number(major)) => Some(PgVersion::latest_of(major as u32)),
        None => None,
    }
}

/// The environment of `config`.
fn env(config: &Config, creates_slot: bool) -> Env {
    let release = release(config);
    let release = release.unwrap_or(PgVersion::latest_of(15));
    let commits = match config.name("commit") {
        "sync" => vec![CommitMode::Sync],
        "async" => vec![CommitMode::Async],
        _ => vec![CommitMode::Sync, CommitMode::Async],
    };
    Env {
        transactions: config.small("transactions"),
        commits,
        txn_pages: config.number("txn_pages"),
        bulk_txn_pages: config.number("bulk_txn_pages"),
        wal_buffers_pages: config.number("wal_buffers_pages"),
        other_traffic: config.small("other_traffic"),
        runs: config.small("runs"),
        kills: config.small("kills"),
        call_failures: config.small("call_failures"),
        connector_crashes: config.small("connector_crashes"),
        pg_crashes: config.small("pg_crashes"),
        pg_stops: config.small("pg_stops"),
        crashes: config.small("crashes"),
        checkpoints: config.name("checkpoints") == "on",
        role: match config.name("server") {
            "standby" => Role::Standby,
            _ => Role::Primary,
        },
        keepalives: config.small("keepalives"),
        pg_version: release.major() as u8,
        slot_at_start: match config.name("slot") {
            "exists" => true,
            "none" => false,
            _ => !creates_slot,
        },
        os_crashes: config.small("os_crashes"),
        stream_drops: config.small("stream_drops"),
        max_slot_wal_keep_pages: match config.number("max_slot_wal_keep_pages") {
            0 => None,
            pages => Some(pages),
        },
        failovers: config.small("failovers"),
        // Below 17 there are no failover slots (`PgVersion::has_failover_slots`), and a slot on
        // a standby cannot be one: a file saying otherwise is refused by its checks; a
        // `--bound` combination leaves them off.
        failover_slots: config.name("failover_slots") == "on"
            && release.has_failover_slots()
            && config.name("server") != "standby",
        pg_release: release,
        by_change: config.name("messages") == "changes",
        rows: config.number("rows").clamp(1, 4) as u32,
        multi_insert: config.name("multi_insert") == "on",
        interleave: config.name("interleave") == "on",
    }
}

/// A file's typed configuration: the machine that runs its program in the environment the bounds
/// give, and the fairness its liveness check assumes.
#[derive(Clone, Debug)]
pub struct FileConfig {
    machine: Machine,
    fairness: FairnessChoice,
    /// Why the knobs cannot be checked together (a `--bound` combination an `env` line would
    /// have been refused for), reported as the configuration's one-line error.
    error: Option<String>,
}

/// The model of one configuration of a file.
pub type FileModel = Model<FileSystem>;

/// A state, and the program that names its variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    state: MachineState,
    program: ProgramRef,
}

/// The program a state belongs to: every state of a model has the same, so it takes no part in
/// comparing and hashing.
#[derive(Copy, Clone, Debug)]
struct ProgramRef(&'static Program);

impl PartialEq for ProgramRef {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ProgramRef {}

impl std::hash::Hash for ProgramRef {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Variables for State {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        let s = &self.state;
        let program = self.program.0;
        // An LSN as the file's own values show it: `none` for 0/0.
        let lsn = |l| Var::Text(Shown(Value::Lsn(l), &[]).to_string());
        let step = |status: Status| match status {
            Status::Running(pc) => program.code[pc as usize].step.to_owned(),
            Status::Done => "done".to_owned(),
            Status::Fatal(pc) => format!("stopped at {}", program.code[pc as usize].step),
            Status::Ended => "ended".to_owned(),
        };
        let slot = s.slot.map(|d| d.slot);
        let processes = program
            .processes
            .iter()
            .zip(&s.procs)
            .map(|(p, status)| (p.column, Var::Text(step(*status))));
        let mut vars: Vec<(&'static str, Var)> =
            std::iter::once(("step", Var::Text(step(s.status))))
                .chain(processes)
                .collect();
        vars.extend([
            ("insert", lsn(s.wal.insert)),
            ("write", lsn(s.wal.write)),
            ("flush", lsn(s.wal.flush)),
            ("replay", lsn(s.wal.replay)),
            (
                "confirmed_flush",
                lsn(slot.map_or(walcheck_model::Lsn::INVALID, |x| x.confirmed_flush)),
            ),
            (
                "restart_lsn",
                lsn(slot.map_or(walcheck_model::Lsn::INVALID, |x| x.restart_lsn)),
            ),
            (
                "saved_confirmed_flush",
                lsn(slot.map_or(walcheck_model::Lsn::INVALID, |x| x.saved.confirmed_flush)),
            ),
            (
                "committed",
                Var::Text(txn_set(((1u32 << s.txns.len()) - 1) as u16 & !s.gone)),
            ),
            ("destination", Var::Text(row_set(s.dest, s.dest_rows))),
            ("batch", Var::Text(batch_text(s))),
            (
                "error",
                Var::Text(s.error.map_or_else(|| "none".to_owned(), |e| e.to_string())),
            ),
        ]);
        let value = |value: Value| match value {
            Value::Bool(b) => Var::Bool(b),
            Value::Count(n) => Var::Int(n),
            _ => Var::Text(Shown(value, &s.txns).to_string()),
        };
        let mut flushed = s.flushed.iter();
        for (slot, &v) in program.slots.iter().zip(s.vars.iter()) {
            vars.push((slot.name, value(v)));
            if let Some(name) = slot.flushed {
                let on_disk = flushed.next().copied().unwrap_or(Value::None);
                vars.push((name, value(on_disk)));
            }
        }
        vars.extend(bookkeeping(s));
        vars.extend(fault_counts(program, s));
        vars
    }
}

/// The destination's open batch as traces show it: its transactions, or with `env messages =
/// changes` its rows.
fn batch_text(s: &MachineState) -> String {
    match s.batch_rows {
        0 => txn_set(s.batch),
        rows => row_set(0, rows),
    }
}

/// The columns of the WAL's removal: the horizon when the state keeps it, operating-system
/// crashes and the checkpoint under way when the file sets their knobs (or keeps the horizon).
const WAL_REMOVAL: &[(&str, &str, &str)] = &[
    ("removed_before", "LSN or none", "the WAL removal horizon: WAL before it the checkpoints removed (none: nothing yet)"),
    ("os_crashes", "count", "operating-system crashes so far (env os_crashes)"),
    ("checkpoint", "text", "a checkpoint under way in two steps (a release before 15.14, 16.10, 17.6): its redo pointer and the slot's restart_lsn when it started"),
];

/// The columns of a file with `env failovers` or `env failover_slots`.
const FAILOVER: &[(&str, &str, &str)] = &[
    ("standby", "LSN or none", "what the primary's physical standby has received: where a failover's promoted server starts"),
    ("synced_confirmed_flush", "LSN or none", "the standby's copy of the slot (env failover_slots): its confirmed_flush"),
    ("synced_restart_lsn", "LSN or none", "the standby's copy of the slot: its restart_lsn"),
    ("failovers", "count", "failovers so far (env failovers)"),
];

/// Whether a file's traces show [`WAL_REMOVAL`]'s column `name`.
fn wal_removal_shown(program: &Program, name: &str) -> bool {
    match name {
        "removed_before" => program.horizon,
        _ => program.horizon || program.wal_faults,
    }
}

/// The counts of the faults a file may take beyond crashes: kills when it has a `killable`
/// process, failed calls when it handles or sets them.
fn fault_counts(program: &Program, s: &MachineState) -> Vec<(&'static str, Var)> {
    let mut vars = Vec::new();
    if program.processes.iter().any(|p| p.killable) {
        vars.push(("kills", Var::Int(u64::from(s.kills))));
    }
    if program.call_faults {
        vars.push(("call_failures", Var::Int(u64::from(s.call_failures))));
    }
    if program.pg_stops {
        vars.push(("pg_stops", Var::Int(u64::from(s.pg_stops))));
    }
    if program.stream_drops {
        vars.push(("stream_drops", Var::Int(u64::from(s.stream_drops))));
    }
    let lsn = |l| Shown(Value::Lsn(l), &[]).to_string();
    let checkpoint = match s.checkpoint {
        None => "none".to_owned(),
        Some((redo, restart)) => format!(
            "redo {}, restart_lsn {}",
            lsn(redo),
            lsn(restart.unwrap_or(walcheck_model::Lsn::INVALID))
        ),
    };
    let values = [
        ("removed_before", Var::Text(lsn(s.removed_before))),
        ("os_crashes", Var::Int(u64::from(s.os_crashes))),
        ("checkpoint", Var::Text(checkpoint)),
    ];
    vars.extend(
        values
            .into_iter()
            .filter(|(name, _)| wal_removal_shown(program, name)),
    );
    if program.failover {
        let synced = |f: fn(&SavedSlot) -> walcheck_model::Lsn| {
            Var::Text(lsn(s
                .synced
                .as_ref()
                .map_or(walcheck_model::Lsn::INVALID, f)))
        };
        vars.extend([
            ("standby", Var::Text(lsn(s.standby))),
            ("synced_confirmed_flush", synced(|c| c.confirmed_flush)),
            ("synced_restart_lsn", synced(|c| c.restart_lsn)),
            ("failovers", Var::Int(u64::from(s.failovers))),
        ]);
    }
    vars
}

/// `T1 sync 0/1000000-0/1002000, T2 async 0/1002000-0/1004000 other`: what tells the
/// committed transactions apart beyond their names (`lost` after one a failover lost).
fn transactions(txns: &[walcheck_model::pg::Txn], gone: u16) -> String {
    let described: Vec<String> = txns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mode = match t.mode {
                CommitMode::Sync => "sync",
                CommitMode::Async => "async",
            };
            let other = if t.is_published() { "" } else { " other" };
            let lost = if gone & (1 << i) != 0 { " lost" } else { "" };
            format!(
                "T{} {mode} {}-{}{other}{lost}",
                i + 1,
                t.first_lsn,
                t.end_lsn
            )
        })
        .collect();
    described.join(", ")
}

/// The values of [`BOOKKEEPING`], in its order.
fn bookkeeping(s: &MachineState) -> [(&'static str, Var); 14] {
    let lsn = |l| Var::Text(Shown(Value::Lsn(l), &[]).to_string());
    let count = |n: u8| Var::Int(u64::from(n));
    let mut stream = match (s.walsender, s.stream_closed) {
        (Some(w), _) => format!(
            "from {}, read to {}, sent {}",
            w.start_decoding_at, w.read_to, w.sent_ptr
        ),
        (None, true) => "closed".to_owned(),
        (None, false) => "none".to_owned(),
    };
    // With `env messages = changes`: the transaction the walsender is part way through.
    if let Some((i, _)) = s.sending {
        stream.push_str(&format!(", sending T{}", u16::from(i) + 1));
    }
    // A file with `env pg_stops` keeps the client's last reply and the stop under way.
    if s.replied.is_valid() {
        stream.push_str(&format!(", replied {}", s.replied));
    }
    if s.asked {
        stream.push_str(", reply requested");
    }
    if s.stopping {
        stream.push_str(", PostgreSQL stopping");
    }
    let saved_restart = s
        .slot
        .map_or(walcheck_model::Lsn::INVALID, |d| d.slot.saved.restart_lsn);
    [
        ("published", count(s.published)),
        ("other", count(s.other)),
        ("runs", count(s.runs)),
        ("connector_crashes", count(s.connector_crashes)),
        ("pg_crashes", count(s.pg_crashes)),
        ("keepalives", count(s.keepalives)),
        ("stream", Var::Text(stream)),
        ("saved_restart_lsn", lsn(saved_restart)),
        ("slot_dirty", Var::Bool(s.slot.is_some_and(|d| d.dirty))),
        ("commit_pending", Var::Bool(s.commit_pending)),
        ("transactions", Var::Text(transactions(&s.txns, s.gone))),
        ("first_run_done", Var::Bool(s.first_done)),
        ("slot_origin", lsn(s.slot_origin)),
        ("lost", Var::Bool(s.lost)),
    ]
}

impl FileSystem {
    /// Whether property `index` (of [`SystemInfo::properties`]) holds in `state` (for a
    /// witness: is reached there) when the file runs as `config` says.
    fn holds(&self, index: usize, config: &FileConfig, state: &State) -> bool {
        let m = &config.machine;
        let s = &state.state;
        match &self.checks[index] {
            Check::AckWithinDurable => m.ack_within_durable(s),
            Check::NoDataLoss => m.no_data_loss(s),
            Check::NoFatalError => !matches!(s.status, Status::Fatal(_)),
            Check::WalPointersOrdered => m.wal_pointers_ordered(s),
            Check::NeededWalKept => m.needed_wal_kept(s),
            Check::Always { cond, when } => {
                let applies = when.as_ref().is_none_or(|w| m.eval(s, w).truth());
                !applies || m.eval(s, cond).truth()
            }
            Check::Sometimes(cond) => m.eval(s, cond).truth(),
            Check::Acknowledged => m.acknowledged(s),
            Check::Retained => m.retained_to_last_commit(s),
            Check::Eventually { goal, .. } => m.eval(s, goal).truth(),
        }
    }

    /// Whether the trigger of property `index` (`P` of `P leads to Q`) holds in `state`.
    fn triggered(&self, index: usize, config: &FileConfig, state: &State) -> bool {
        match &self.checks[index] {
            Check::Eventually {
                trigger: Some(p), ..
            } => config.machine.eval(&state.state, p).truth(),
            _ => true,
        }
    }
}

/// The conditions of a file's properties by index (`CONDITIONS`), and the triggers of its `leads
/// to` properties (`TRIGGERS`): a property's condition is a function pointer, so each index has
/// its own.
macro_rules! by_index {
    ($($i:literal)*) => {
        const CONDITIONS: &[fn(&FileModel, &State) -> bool] =
            &[$(|m, s| m.system.holds($i, &m.config, s)),*];
        const TRIGGERS: &[fn(&FileModel, &State) -> bool] =
            &[$(|m, s| m.system.triggered($i, &m.config, s)),*];
    };
}
by_index!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);
const _: () = assert!(TRIGGERS.len() == PROPERTIES_MAX);

/// The most properties (built-in and the file's own) a file may have: one condition each above.
pub use crate::limits::PROPERTIES_MAX;
const _: () = assert!(CONDITIONS.len() == PROPERTIES_MAX);

/// The classes of weakly fair actions: the connector's steps not marked `unfair`, a
/// synchronous commit's flush, the walwriter, the checkpointer, a standby's replay, a clean
/// stop's end, the primary's standby (receiving, slot sync) and the background flush of async
/// variables. Client transactions and faults are not fair, but a transaction left open
/// (`env interleave = on`) commits in the end: no client holds one open for ever.
static FAIRNESS: [FairClass<Action>; 7] = [
    FairClass::weak("connector", |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 0,
                ..
            } | Action::FlushPending { .. }
        )
    }),
    FairClass::weak("commit", |a| {
        matches!(a, Action::CommitFlush | Action::CommitOpen { .. })
    }),
    FairClass::weak("walwriter", |a| {
        matches!(a, Action::WalwriterWrite | Action::WalwriterFlush)
    }),
    FairClass::weak("checkpointer", |a| {
        matches!(
            a,
            Action::Checkpoint | Action::CheckpointStart | Action::CheckpointEnd
        )
    }),
    FairClass::weak("replay", |a| matches!(a, Action::Replay)),
    FairClass::weak("shutdown", |a| {
        matches!(a, Action::PgStopped { .. } | Action::WalsenderTimeout)
    }),
    FairClass::weak("standby", |a| {
        matches!(a, Action::StandbyReceive | Action::SlotSync)
    }),
];

/// Whether an action is a fair step of process `k` (1 to 7: the file's processes besides
/// `every run`'s, which [`FAIRNESS`]'s `connector` class holds): a function each, as a class's
/// membership is a function pointer.
const PROCESS_STEPS: [fn(&Action) -> bool; PROCESSES_MAX] = [
    |_| false,
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 1,
                ..
            }
        )
    },
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 2,
                ..
            }
        )
    },
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 3,
                ..
            }
        )
    },
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 4,
                ..
            }
        )
    },
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 5,
                ..
            }
        )
    },
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 6,
                ..
            }
        )
    },
    |a| {
        matches!(
            a,
            Action::Step {
                fair: true,
                process: 7,
                ..
            }
        )
    },
];

/// The fairness classes of a program: [`FAIRNESS`], and one weakly fair class a process
/// (`process NAME`) after `connector` (`every run`'s): each process's fair steps are taken
/// whatever the others do.
fn fairness_of(program: &Program) -> &'static [FairClass<Action>] {
    if program.processes.is_empty() {
        return &FAIRNESS;
    }
    let mut classes = vec![FAIRNESS[0]];
    for (k, p) in program.processes.iter().enumerate() {
        let class = leak(&format!("process {}", p.name));
        classes.push(FairClass::weak(class, PROCESS_STEPS[k + 1]));
    }
    classes.extend(FAIRNESS[1..].iter().copied());
    Box::leak(classes.into_boxed_slice())
}

/// The most states walcheck's own witnesses explore: past it they are not checked (and a line
/// says so), so that they never cost more than the checks themselves on a large configuration.
pub const WITNESS_STATES_MAX: usize = 500_000;

/// What one exploration of a configuration reached: the steps the connector was at, and the
/// steps a connector crash was taken at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// Steps some reachable state has next, or some action takes (an `either` branch's first).
    pub steps: BTreeSet<&'static str>,
    /// Steps some reachable state crashed the connector at.
    pub crash_points: BTreeSet<&'static str>,
    /// Whether the exploration stopped at [`WITNESS_STATES_MAX`] states.
    pub cut: bool,
}

impl FileSystem {
    /// Every step of the file, in file order, once each.
    pub fn step_names(&self) -> Vec<&'static str> {
        let mut seen = BTreeSet::new();
        let own = |instr: &&crate::program::Instr| {
            !instr.op.is_control() && !matches!(instr.op, Op::RunEnd | Op::ProcessEnd)
        };
        let steps = self.program.code.iter().filter(own).map(|i| i.step);
        steps.filter(|step| seen.insert(*step)).collect()
    }

    /// Explores `config` breadth-first and says which steps it reached and which it crashed at:
    /// walcheck's own witnesses ("every step reached, every crash point taken"), reported as
    /// warnings, never as verdicts. States are kept as 64-bit hashes: a collision could hide a
    /// step, which only costs a warning.
    pub fn reached(&self, config: &Config) -> Reached {
        use std::hash::BuildHasher;
        let machine = self.config(config).machine;
        let hasher = rustc_hash::FxBuildHasher;
        let start = machine.initial();
        let mut seen = rustc_hash::FxHashSet::default();
        seen.insert(hasher.hash_one(&start));
        let mut frontier = std::collections::VecDeque::from([start]);
        let mut reached = Reached::default();
        let mut actions = Vec::new();
        let at = |state: &MachineState| -> Vec<&'static str> {
            let code = &self.program.code;
            machine.running(state).map(|pc| code[pc].step).collect()
        };
        while let Some(state) = frontier.pop_front() {
            let here = at(&state);
            reached.steps.extend(here.iter().copied());
            actions.clear();
            machine.actions(&state, &mut actions);
            for &action in &actions {
                let mut next = state.clone();
                if !machine.apply(&mut next, action) {
                    continue;
                }
                if action == Action::ConnectorCrash {
                    reached.crash_points.extend(here.iter().copied());
                    // Where an `either` is next, so are its branches' first steps.
                    let next = actions.iter().filter_map(|a| match a {
                        Action::Step { name, .. } => Some(*name),
                        _ => None,
                    });
                    reached.crash_points.extend(next);
                }
                // An `either`'s branches are taken with it: their first steps are reached
                // as its actions, never as a position.
                if let Action::Step { name, .. } = action {
                    reached.steps.insert(name);
                }
                if seen.insert(hasher.hash_one(&next)) {
                    frontier.push_back(next);
                }
                if seen.len() > WITNESS_STATES_MAX {
                    reached.cut = true;
                    return reached;
                }
            }
        }
        reached
    }

    /// The warnings for what `config` never reached: one line each, naming the file's step.
    pub fn unreached(&self, config: &Config) -> Vec<String> {
        let reached = self.reached(config);
        if reached.cut {
            return vec![format!(
                "walcheck's own witnesses (each step reached, a crash at each) are not checked: \
                 more than {WITNESS_STATES_MAX} states"
            )];
        }
        let crashes = config.number("connector_crashes") > 0 && config.number("crashes") > 0;
        let mut lines = Vec::new();
        for step in self.step_names() {
            if !reached.steps.contains(step) {
                lines.push(format!("step `{step}` is never reached"));
            } else if crashes && !reached.crash_points.contains(step) {
                lines.push(format!("no connector crash is ever taken at step `{step}`"));
            }
        }
        lines
    }
}

impl System for FileSystem {
    type State = State;
    type Action = Action;
    type Config = FileConfig;

    fn info(&self) -> &'static SystemInfo {
        self.info
    }

    fn config(&self, config: &Config) -> FileConfig {
        FileConfig {
            machine: Machine {
                program: self.program,
                env: env(config, self.creates_slot),
            },
            fairness: FairnessChoice::of(config),
            error: knob_conflict(config, self.program),
        }
    }

    fn init_states(&self, config: &FileConfig) -> Vec<State> {
        vec![State {
            state: config.machine.initial(),
            program: ProgramRef(self.program),
        }]
    }

    fn actions(&self, config: &FileConfig, state: &State, actions: &mut Vec<Action>) {
        config.machine.actions(&state.state, actions);
    }

    fn next_state(&self, config: &FileConfig, state: &State, action: Action) -> Option<State> {
        let mut next = state.clone();
        config
            .machine
            .apply(&mut next.state, action)
            .then_some(next)
    }

    /// As its `Display` names it: the file's step, or PostgreSQL's or the workload's action.
    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    /// Each declared property with the condition of its index (`CONDITIONS`).
    fn properties(&self) -> Vec<Declared<Self>> {
        let properties = self.info.properties.iter().zip(CONDITIONS);
        properties
            .map(|(p, condition)| p.when(*condition))
            .collect()
    }

    fn fairness(&self, config: &FileConfig) -> &'static [FairClass<Action>] {
        config.fairness.constraints(self.fairness)
    }

    /// `eventually-acknowledged` unless skipped, and the file's own `eventually` and `leads
    /// to` properties, each with the goal (and trigger) of its index.
    fn liveness(&self) -> Vec<Liveness<FileModel, State>> {
        let mut found = Vec::new();
        for (i, check) in self.checks.iter().enumerate() {
            match check {
                Check::Acknowledged => found.push(Liveness {
                    id: "eventually-acknowledged",
                    trigger: Some(|m: &FileModel, s: &State| {
                        !m.config.machine.acknowledged(&s.state)
                    }),
                    goal: |m: &FileModel, s: &State| m.config.machine.acknowledged(&s.state),
                }),
                Check::Retained => found.push(Liveness {
                    id: "wal-retention-bounded",
                    trigger: Some(|m: &FileModel, s: &State| {
                        !m.config.machine.retained_to_last_commit(&s.state)
                    }),
                    goal: |m: &FileModel, s: &State| {
                        m.config.machine.retained_to_last_commit(&s.state)
                    },
                }),
                Check::Eventually { trigger, .. } => found.push(Liveness {
                    id: self.info.properties[i].id,
                    trigger: trigger.as_ref().map(|_| TRIGGERS[i]),
                    goal: CONDITIONS[i],
                }),
                _ => {}
            }
        }
        found
    }

    /// The machine state serialized by serde in postcard's format; decoding gives it back with
    /// this file's program, which every state names.
    fn codec(&self) -> Option<Codec<State>> {
        let program = ProgramRef(self.program);
        Some(Codec::new(
            |s: &State, out: &mut Vec<u8>| encode_postcard(&s.state, out),
            move |bytes: &[u8]| State {
                state: decode_postcard(bytes),
                program,
            },
        ))
    }

    fn expected(
        &self,
        config: &FileConfig,
        property: &PropertyInfo,
    ) -> Option<Result<(Verdict, &'static str), String>> {
        if let Some(error) = &config.error {
            return Some(Err(error.clone()));
        }
        let table = self.expected.as_ref()?;
        let row = table.iter().find(|(id, _, _)| *id == property.id);
        Some(Ok(row.map_or(
            (Verdict::Holds, "a property with no expect line should hold"),
            |(_, v, why)| (*v, why),
        )))
    }
}

/// The check of the built-in `always` property `id`. A property added to the vocabulary without
/// its check here is an internal error, never another property's check.
fn check_of(id: &str) -> Check {
    match id {
        "ack-within-durable" => Check::AckWithinDurable,
        "no-data-loss" => Check::NoDataLoss,
        "no-fatal-error" => Check::NoFatalError,
        "wal-pointers-ordered" => Check::WalPointersOrdered,
        "no-needed-wal-removed" => Check::NeededWalKept,
        other => unreachable!("vocabulary::BUILT_IN's {other} has no check here"),
    }
}
