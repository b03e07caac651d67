//! System `olake-sync`: OLake's steady-state syncs, and the order of the three side effects that
//! end each one — destination commit, slot acknowledgement, state file write — under crashes.
//!
//! Upstream: OLake tag v0.5.0, master `2b1f68a9` (v0.9.4), PR #854 `8ad23875`, PR #864
//! `07a0df03` ([`walcheck_model::olake::sync`]); PostgreSQL 15's slot and its saved copy ([`walcheck_model::pg`]).
//! A crash between two side effects leaves them disagreeing: state ahead of the slot (#853), slot
//! ahead of the state (the window #998's recovery skip closes), or a PostgreSQL restart that takes
//! back an acknowledgement that was only in memory.
//!
//! State: the server (WAL pointers, slot), what outlives the connector (state file, destination),
//! the connector process, and counters bounding the workload and the faults. The run starts after
//! a bootstrap that left the state file and the slot equal, with the destination empty.
//!
//! There is no `CHECKPOINT` action. PostgreSQL 15 `slot.c:CheckPointReplicationSlots` saves only
//! a slot marked dirty since its last save (`SaveSlotToPath` returns early otherwise), and nothing
//! in this system marks the slot dirty without saving it at once: a walsender acknowledgement
//! either moves `restart_lsn` and saves the slot (`logical.c:LogicalConfirmReceivedLocation`,
//! `ReplicationSlotMarkDirty` + `ReplicationSlotSave`) or moves only `confirmed_flush` and leaves
//! the slot clean ([`SyncConnector::ack`]). A checkpoint would save nothing, so the action is
//! left out rather than kept as a step that never changes the state. (`olake-bootstrap` keeps
//! its `Checkpoint`: `slotfuncs.c:pg_logical_replication_slot_advance` does mark the slot dirty.)

mod expected;

use std::fmt;

use serde::{Deserialize, Serialize};
use stateright::{Model, Property};

use crate::olake_bootstrap::{Faults, INITIAL_LSN};
use walcheck_model::olake::sync::{
    restart_candidates, Durable, PostStep, SyncConnector, SyncPhase, SyncVariant,
};
use walcheck_model::pg::{Role, Server};
use walcheck_model::Lsn;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{
    number, BoundInfo, BoundValue, Lanes, PropertyInfo, Var, Variables,
};
use walcheck_properties::system::{SystemInfo, View};

/// The system's name on the command line and in reports.
pub const NAME: &str = "olake-sync";

/// `wal_buffers` of the model's server: large enough that a transaction never waits for it.
const WAL_BUFFERS_BYTES: u64 = 4 * 1024 * 1024;

/// `XLOG_BLCKSZ`, PostgreSQL's default WAL page.
const PAGE_BYTES: u64 = 8192;

/// The bounds and knobs, with defaults and ranges (`walcheck list`).
pub const BOUNDS: &[BoundInfo] = &[
    BoundInfo {
        name: "keepalive",
        default: BoundValue::Name("off"),
        min: None,
        max: None,
        values: &["off", "on"],
        unit: "switch",
        doc: "whether the walsender's keepalives (ServerWALEnd = sentPtr) reach the stream loop; \
              `check` without --bound keepalive= runs both",
        quiet: false,
    },
    number(
        "txns",
        2,
        0,
        6,
        "transactions",
        "client transactions on the published table in the whole run (one change each)",
    ),
    number(
        "txn_bytes",
        8192,
        1,
        1 << 20,
        "bytes",
        "WAL of one transaction, committed synchronously",
    ),
    number(
        "syncs",
        2,
        1,
        4,
        "runs",
        "connector runs: syncs and restarts after a crash",
    ),
    number(
        "crashes",
        1,
        0,
        2,
        "crashes",
        "faults injected in all (connector and PostgreSQL together)",
    ),
];

pub const NO_LSN_MISMATCH: PropertyInfo = PropertyInfo::always(
    "no-lsn-mismatch",
    "validateGlobalState never fails a sync (the non-retryable lsn mismatch)",
);

pub const NO_DATA_LOSS: PropertyInfo = PropertyInfo::always(
    "no-data-loss",
    "every transaction that ends at or below the slot's confirmed_flush is in the destination",
);

pub const ACK_WITHIN_DESTINATION: PropertyInfo = PropertyInfo::always(
    "ack-within-destination",
    "the slot's confirmed_flush is never past the highest LSN the destination committed",
);

pub const NO_ACK_TIMEOUT: PropertyInfo = PropertyInfo::always(
    "no-ack-timeout",
    "AcknowledgeLSN's poll always sees the slot at the position sent (no `LSN not updated after 5 minutes`)",
);

pub const REACH_SYNC_COMPLETE: PropertyInfo = PropertyInfo::sometimes(
    "reach-sync-complete",
    "a sync commits a transaction to the destination, acknowledges it and writes the state",
);

pub const REACH_DUPLICATE: PropertyInfo = PropertyInfo::sometimes(
    "reach-duplicate",
    "a transaction is written to the destination twice (at-least-once; a figure, not a violation)",
);

pub const REACH_CRASH_AFTER_COMMIT: PropertyInfo = PropertyInfo::sometimes(
    "reach-crash-after-commit",
    "the connector crashes right after the destination commit",
)
.needs("fault:connector-crash");

pub const REACH_CRASH_AFTER_ACK: PropertyInfo = PropertyInfo::sometimes(
    "reach-crash-after-ack",
    "the connector crashes right after the slot acknowledgement",
)
.needs("fault:connector-crash");

pub const REACH_CRASH_AFTER_STATE: PropertyInfo = PropertyInfo::sometimes(
    "reach-crash-after-state",
    "the connector crashes right after the state file write",
)
.needs("fault:connector-crash");

pub const REACH_RECOVERY_SYNC: PropertyInfo = PropertyInfo::sometimes(
    "reach-recovery-sync",
    "a run starts a 2PC recovery sync (destination metadata ahead of the state)",
)
.needs("fault:connector-crash");

pub const REACH_PG_CRASH_AFTER_ACK: PropertyInfo = PropertyInfo::sometimes(
    "reach-pg-crash-after-ack",
    "a PostgreSQL restart takes the slot back below a position the destination committed and the slot confirmed",
)
.needs("fault:pg-crash");

pub const REACH_KEEPALIVE_REGRESSION: PropertyInfo = PropertyInfo::sometimes(
    "reach-keepalive-regression",
    "a keepalive drags ClientXLogPos below the slot's confirmed_flush during the stream",
)
.needs("keepalive=on");

/// The properties, each declared once above.
pub const PROPERTIES: &[PropertyInfo] = &[
    NO_LSN_MISMATCH,
    NO_DATA_LOSS,
    ACK_WITHIN_DESTINATION,
    NO_ACK_TIMEOUT,
    REACH_SYNC_COMPLETE,
    REACH_DUPLICATE,
    REACH_CRASH_AFTER_COMMIT,
    REACH_CRASH_AFTER_ACK,
    REACH_CRASH_AFTER_STATE,
    REACH_RECOVERY_SYNC,
    REACH_PG_CRASH_AFTER_ACK,
    REACH_KEEPALIVE_REGRESSION,
];

/// The variables a step table always shows, whether or not they change.
pub const KEY_VARIABLES: &[&str] = &[
    "flush",
    "confirmed_flush",
    "saved_confirmed_flush",
    "state_file",
    "dest_meta",
    "connector",
];

/// Bookkeeping counters a step table leaves out (the actions show them); traces keep them.
pub const COUNTERS: &[&str] = &["txns", "crashes"];

/// The sequence-diagram lanes of this system's traces.
pub const LANES: Lanes = Lanes {
    participants: &[
        ("client", "client"),
        ("pg", "PostgreSQL"),
        ("slot", "slot"),
        ("connector", "connector"),
        ("destination", "destination"),
        ("statefile", "state file"),
    ],
    lane: |action| match action {
        "CommitTxn" => ("client", "pg"),
        "PgCrash" => ("pg", "pg"),
        "Receive" | "Keepalive" => ("pg", "connector"),
        "Validate" | "Ack" => ("connector", "slot"),
        "Commit" => ("connector", "destination"),
        "SaveState" => ("connector", "statefile"),
        _ => ("connector", "connector"),
    },
    owner: |var| match var {
        "insert" | "flush" => Some("pg"),
        "confirmed_flush" | "restart_lsn" | "saved_confirmed_flush" | "saved_restart_lsn" => {
            Some("slot")
        }
        "state_file" => Some("statefile"),
        "dest_meta" | "dest_lsn" | "dest_txns" | "duplicates" => Some("destination"),
        "connector" | "run" | "client_pos" | "buffer" => Some("connector"),
        _ => None,
    },
};

/// The `olake-sync` system: its declaration and the model of each configuration.
pub struct OlakeSyncSystem;

/// The declaration `walcheck list`, the catalogue and traces read.
pub static INFO: SystemInfo = SystemInfo {
    name: NAME,
    doc: "OLake's steady-state sync: StreamChanges' recovery rules and PostCDC's acknowledgement and state write, across crashes",
    variants: &[
        ("v0.5.0", "OLake tag v0.5.0: state file, then acknowledgement; recovery on any metadata difference"),
        ("master", "OLake master 2b1f68a9 (v0.9.4): destination commit, acknowledgement (#870), state file; the skips of #865 and #998"),
        ("pr854", "OLake PR #854 8ad23875: acknowledgement, then state; no destination metadata"),
        ("pr864", "OLake PR #864 07a0df03: v0.5.0's order; forward-only keepalives, >= poll"),
    ],
    faults: &["none", "connector-crash", "pg-crash", "all"],
    bounds: BOUNDS,
    trace_knobs: &[],
    properties: PROPERTIES,
    also: Some(("keepalive", "on")),
    view: View {
        key_variables: KEY_VARIABLES,
        counters: COUNTERS,
        lanes: &LANES,
    },
};

built_in_system!(OlakeSyncSystem, OlakeSync);

/// The system's configuration: variant, faults, knobs and bounds (see [`BOUNDS`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: SyncVariant,
    pub faults: Faults,
    /// Whether keepalives reach the stream loop (default off).
    pub keepalive: bool,
    /// Client transactions in the whole run (default 2, at most 6).
    pub txns: u8,
    /// WAL of one transaction, in bytes (default 8192).
    pub txn_bytes: u64,
    /// Connector runs, restarts included (default 2).
    pub syncs: u8,
    /// Faults injected in all (default 1).
    pub crashes: u8,
}

impl Config {
    /// The typed form of a configuration the catalogue validated against [`INFO`].
    pub fn of(config: &GenericConfig) -> Config {
        let mut c = Config::new(
            SyncVariant::from_name(config.variant).expect("a variant of INFO"),
            Faults::from_name(config.faults).expect("a fault set of INFO"),
        );
        for (name, value) in config.values() {
            c.set_bound(name, &value.to_string())
                .expect("a value INFO accepts");
        }
        c
    }

    /// `variant` with `faults` and every bound at its default.
    pub const fn new(variant: SyncVariant, faults: Faults) -> Config {
        Config {
            variant,
            faults,
            keepalive: false,
            txns: 2,
            txn_bytes: 8192,
            syncs: 2,
            crashes: 1,
        }
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
        let value = info.parse(text)?;
        let number = || match value {
            BoundValue::Number(n) => n,
            BoundValue::Name(_) => unreachable!("numeric bound"),
        };
        match name {
            "keepalive" => self.keepalive = value == BoundValue::Name("on"),
            // The ranges above keep these within u8.
            "txns" => self.txns = number() as u8,
            "txn_bytes" => self.txn_bytes = number(),
            "syncs" => self.syncs = number() as u8,
            "crashes" => self.crashes = number() as u8,
            _ => unreachable!("bound {name} listed but not settable"),
        }
        Ok(())
    }

    /// Where transaction `txn` (from 0) ends: its commit record's end, in LSN bytes.
    pub fn txn_end(&self, txn: u8) -> Lsn {
        INITIAL_LSN.plus((u64::from(txn) + 1) * self.txn_bytes)
    }
}

/// A state of the system. Its `Debug` is its [`Variables`].
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct State {
    pub server: Server,
    pub durable: Durable,
    pub connector: SyncConnector,
    /// Client transactions committed so far.
    pub txns: u8,
    /// Faults injected so far.
    pub crashes: u8,
}

/// An action of the system. Each is one atomic step of PostgreSQL, the workload or the connector.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    /// A client transaction changes the published table and commits synchronously
    /// ([`walcheck_model::pg::Wal::append`], then [`walcheck_model::pg::Wal::commit_flush`]).
    CommitTxn,
    /// `StreamChanges` up to the loop ([`SyncConnector::validate`]).
    Validate,
    /// The walsender decodes transaction `txn` ([`SyncConnector::receive`]).
    Receive { txn: u8 },
    /// A primary keepalive carrying `sentPtr` ([`SyncConnector::keepalive`]).
    Keepalive,
    /// The stream loop reaches its target ([`SyncConnector::end_stream`]).
    EndStream,
    /// The destination commit ([`SyncConnector::commit`]).
    Commit,
    /// `AcknowledgeLSN` and its poll; `restart` is PostgreSQL's choice of candidate for
    /// `restart_lsn`, which saves the slot, or none ([`SyncConnector::ack`],
    /// [`restart_candidates`]).
    Ack { restart: Option<Lsn> },
    /// `SetGlobal` ([`SyncConnector::save_state`]).
    SaveState,
    /// The next sync starts after a finished or failed one ([`SyncConnector::start_next_run`]).
    NextSync,
    /// Fault: the connector process dies ([`SyncConnector::crash`]).
    ConnectorCrash,
    /// Fault: PostgreSQL crashes and restarts ([`Server::crash_restart`]).
    PgCrash,
    /// The crashed connector is restarted ([`SyncConnector::start_next_run`]).
    Restart,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Receive { txn } => write!(f, "Receive{{txn: {txn}}}"),
            Action::Ack { restart: None } => f.write_str("Ack{restart_lsn: stays}"),
            Action::Ack { restart: Some(to) } => write!(f, "Ack{{restart_lsn: {to}}}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The `olake-sync` model for one configuration.
#[derive(Clone, Debug)]
pub struct OlakeSync {
    pub config: Config,
}

impl OlakeSync {
    pub const fn new(config: Config) -> OlakeSync {
        OlakeSync { config }
    }

    /// The initial state: a quiet primary with the slot at [`INITIAL_LSN`], the state file
    /// there too (the bootstrap is done), an empty destination, the first sync about to start.
    pub fn initial_state(&self) -> State {
        State {
            server: Server::quiet_at(Role::Primary, INITIAL_LSN),
            durable: Durable {
                state_file: INITIAL_LSN,
                dest_meta: None,
                dest_lsn: INITIAL_LSN,
                dest_txns: 0,
                duplicates: 0,
            },
            connector: SyncConnector::first_run(),
            txns: 0,
            crashes: 0,
        }
    }

    /// Applies `action` to `state`. The caller must only apply enabled actions.
    pub fn apply(&self, state: &mut State, action: Action) {
        let cfg = &self.config;
        let variant = cfg.variant;
        match action {
            Action::CommitTxn => {
                let wal = &mut state.server.wal;
                wal.append(cfg.txn_bytes, PAGE_BYTES, WAL_BUFFERS_BYTES);
                wal.commit_flush();
                state.txns += 1;
            }
            Action::Validate => state
                .connector
                .validate(variant, &state.server, &state.durable),
            Action::Receive { txn } => state.connector.receive(txn, cfg.txn_end(txn)),
            Action::Keepalive => state.connector.keepalive(variant),
            Action::EndStream => state.connector.end_stream(false),
            Action::Commit => state.connector.commit(variant, &mut state.durable),
            Action::Ack { restart } => state.connector.ack(variant, &mut state.server, restart),
            Action::SaveState => state.connector.save_state(&mut state.durable),
            Action::NextSync | Action::Restart => state.connector.start_next_run(),
            Action::ConnectorCrash => {
                state.connector.crash(variant);
                state.crashes += 1;
            }
            Action::PgCrash => {
                state.server.crash_restart();
                state.connector.server_crashed();
                state.crashes += 1;
            }
        }
    }

    /// The transaction the walsender decodes next in `stream`, if one is committed.
    fn next_txn(&self, sent_ptr: Lsn, committed: u8) -> Option<u8> {
        (0..committed).find(|&i| self.config.txn_end(i) > sent_ptr)
    }

    /// The enabled actions in `state`, in a fixed order (stateright rebuilds paths from indices).
    pub fn enabled(&self, state: &State, actions: &mut Vec<Action>) {
        let cfg = &self.config;
        let server = &state.server;
        if state.txns < cfg.txns {
            actions.push(Action::CommitTxn);
        }
        let connector = &state.connector;
        let runs_left = connector.runs < cfg.syncs;
        match connector.phase {
            SyncPhase::Validate => actions.push(Action::Validate),
            // `pgoutput.go:StreamChanges` checks the exit before every receive: once
            // `ClientXLogPos >= CurrentWalPosition` the loop ends without reading on.
            SyncPhase::Streaming(s) if s.client_pos >= s.target => {
                actions.push(Action::EndStream);
            }
            SyncPhase::Streaming(s) => {
                if let Some(txn) = self.next_txn(s.sent_ptr, state.txns) {
                    actions.push(Action::Receive { txn });
                }
                if cfg.keepalive && s.client_pos != s.sent_ptr {
                    actions.push(Action::Keepalive);
                }
            }
            SyncPhase::Post { stream, .. } => match connector.next_post_step(cfg.variant) {
                Some(PostStep::Commit) => actions.push(Action::Commit),
                Some(PostStep::Ack) => {
                    actions.push(Action::Ack { restart: None });
                    let boundaries = (0..state.txns).map(|i| cfg.txn_end(i));
                    actions.extend(
                        restart_candidates(stream.client_pos, &server.slot, boundaries)
                            .map(|to| Action::Ack { restart: Some(to) }),
                    );
                }
                Some(PostStep::SaveState) => actions.push(Action::SaveState),
                None => unreachable!("PostCDC with every step done"),
            },
            SyncPhase::Done | SyncPhase::Failed(_) if runs_left => actions.push(Action::NextSync),
            SyncPhase::Crashed { .. } if runs_left => actions.push(Action::Restart),
            SyncPhase::Done | SyncPhase::Failed(_) | SyncPhase::Crashed { .. } => {}
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

/// No liveness property: the defaults (no fairness, no properties).
impl walcheck_properties::system::Live for OlakeSync {}

impl Model for OlakeSync {
    type State = State;
    type Action = Action;

    model_plumbing!();

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            NO_LSN_MISMATCH.check(|_, s: &State| no_lsn_mismatch(s)),
            NO_DATA_LOSS.check(|m: &OlakeSync, s: &State| no_data_loss(&m.config, s)),
            ACK_WITHIN_DESTINATION.check(|_, s: &State| ack_within_destination(s)),
            NO_ACK_TIMEOUT.check(|_, s: &State| no_ack_timeout(s)),
            REACH_SYNC_COMPLETE.check(|_, s: &State| sync_complete(s)),
            REACH_DUPLICATE.check(|_, s: &State| s.durable.duplicates > 0),
            REACH_CRASH_AFTER_COMMIT.check(|_, s: &State| crashed_after(s, PostStep::Commit)),
            REACH_CRASH_AFTER_ACK.check(|_, s: &State| crashed_after(s, PostStep::Ack)),
            REACH_CRASH_AFTER_STATE.check(|_, s: &State| crashed_after(s, PostStep::SaveState)),
            REACH_RECOVERY_SYNC.check(|_, s: &State| recovery_sync(s)),
            REACH_PG_CRASH_AFTER_ACK.check(|_, s: &State| pg_crash_lost_ack(s)),
            REACH_KEEPALIVE_REGRESSION.check(|_, s: &State| keepalive_regression(s)),
        ]
    }
}

/// `no-lsn-mismatch`: `validateGlobalState` has not failed the run.
pub fn no_lsn_mismatch(state: &State) -> bool {
    !matches!(
        state.connector.phase,
        SyncPhase::Failed(walcheck_model::olake::sync::SyncFailure::LsnMismatch { .. })
    )
}

/// `no-data-loss`: every committed transaction ending at or below the slot's `confirmed_flush`
/// is in the destination: PostgreSQL will never send it again.
pub fn no_data_loss(config: &Config, state: &State) -> bool {
    let cf = state.server.slot.confirmed_flush;
    (0..state.txns)
        .filter(|&i| config.txn_end(i) <= cf)
        .all(|i| state.durable.dest_txns & (1 << i) != 0)
}

/// `ack-within-destination`: the slot's `confirmed_flush` is not past the highest LSN a
/// destination commit covered (the bootstrap's LSN before any commit).
pub fn ack_within_destination(state: &State) -> bool {
    state.server.slot.confirmed_flush <= state.durable.dest_lsn
}

/// `no-ack-timeout`: `AcknowledgeLSN` has not given up on the slot.
pub fn no_ack_timeout(state: &State) -> bool {
    !matches!(
        state.connector.phase,
        SyncPhase::Failed(walcheck_model::olake::sync::SyncFailure::AckTimeout { .. })
    )
}

/// Witness: a sync finished with at least one transaction in the destination.
pub fn sync_complete(state: &State) -> bool {
    state.connector.phase == SyncPhase::Done && state.durable.dest_txns != 0
}

/// Witness: the connector crashed right after `step`.
pub fn crashed_after(state: &State, step: PostStep) -> bool {
    state.connector.phase == SyncPhase::Crashed { after: Some(step) }
}

/// Witness: a run streams in 2PC recovery mode.
pub fn recovery_sync(state: &State) -> bool {
    matches!(state.connector.phase, SyncPhase::Streaming(s) if s.recovery.is_some())
}

/// Witness: the slot is below a position the destination committed and the slot had confirmed:
/// a PostgreSQL restart took back an acknowledgement that was only in memory. The sync is done,
/// so its acknowledgement was seen; a sync whose acknowledgement failed on the dead connection
/// (the EOF path) leaves the same positions but never had the slot confirm them.
pub fn pg_crash_lost_ack(state: &State) -> bool {
    state.crashes > 0
        && state.server.slot.confirmed_flush < state.durable.dest_lsn
        && state.durable.state_file == state.durable.dest_lsn
        && state.connector.phase == SyncPhase::Done
}

/// Witness: during the stream `ClientXLogPos` is below the slot's `confirmed_flush`.
pub fn keepalive_regression(state: &State) -> bool {
    matches!(state.connector.phase, SyncPhase::Streaming(s) if s.client_pos < state.server.slot.confirmed_flush)
}

/// A set of transactions (bit `i`: the `i`-th) as `{0,1}`.
fn txn_set(bits: u8) -> Var {
    let members: Vec<String> = (0..8)
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| i.to_string())
        .collect();
    Var::Text(format!("{{{}}}", members.join(",")))
}

impl Variables for State {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        let wal = &self.server.wal;
        let slot = &self.server.slot;
        let d = &self.durable;
        let lsn = |l: Lsn| Var::Text(l.to_string());
        let opt =
            |l: Option<Lsn>| Var::Text(l.map_or_else(|| "none".to_owned(), |l| l.to_string()));
        let stream = match self.connector.phase {
            SyncPhase::Streaming(s) | SyncPhase::Post { stream: s, .. } => Some(s),
            _ => None,
        };
        vec![
            ("insert", lsn(wal.insert)),
            ("flush", lsn(wal.flush)),
            ("confirmed_flush", lsn(slot.confirmed_flush)),
            ("restart_lsn", lsn(slot.restart_lsn)),
            ("saved_confirmed_flush", lsn(slot.saved.confirmed_flush)),
            ("saved_restart_lsn", lsn(slot.saved.restart_lsn)),
            ("state_file", lsn(d.state_file)),
            ("dest_meta", opt(d.dest_meta)),
            ("dest_lsn", lsn(d.dest_lsn)),
            ("dest_txns", txn_set(d.dest_txns)),
            ("duplicates", Var::Int(d.duplicates.into())),
            ("connector", Var::Text(self.connector.phase.to_string())),
            ("run", Var::Int(self.connector.runs.into())),
            ("client_pos", opt(stream.map(|s| s.client_pos))),
            ("buffer", txn_set(self.connector.buffer)),
            ("txns", Var::Int(self.txns.into())),
            ("crashes", Var::Int(self.crashes.into())),
        ]
    }
}
