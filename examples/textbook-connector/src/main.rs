//! A textbook CDC connector over a PostgreSQL 15 logical slot, and the one decision that decides
//! whether it loses data: when it acknowledges. A complete system outside walcheck's own crates,
//! checked with walcheck's whole command line: `cargo run -p textbook-connector -- check textbook`.
//!
//! Protocol. Clients commit transactions on a published table. The connector streams them from
//! its logical slot (`START_REPLICATION SLOT … LOGICAL`), commits each one to its destination,
//! and acknowledges it with a standby status update, which moves the slot's `confirmed_flush`.
//! A connector restarted after a crash is streamed again from `confirmed_flush`: a transaction
//! the slot was told is done is never sent again. The two designs are the two variants of system
//! `textbook`:
//!
//! - `ack-after-commit` acknowledges a transaction once the destination's commit durably holds
//!   it. A crash in between streams it again: delivery is at least once.
//! - `ack-on-receipt` acknowledges a transaction as soon as it arrives. A crash before the
//!   destination commit loses it: delivery is at most once.
//!
//! State: PostgreSQL (walcheck's model of its WAL pointers and the slot, `walcheck::pg::Server`),
//! the destination's committed transactions, and the connector process with what it holds in
//! memory: where the stream is, the transaction it received, the acknowledgement it owes.
//!
//! Actions: `CommitTxn` (a client), `Receive` (the walsender sends a transaction), `Write` (the
//! destination commit), `Ack` (the standby status update), the fault `ConnectorCrash`, and
//! `Restart`. `next_state` hands each to one small function; the two designs differ only in
//! where the acknowledgement is queued (`receive` or `write`).
//!
//! Properties: `no-data-loss` (always), and two witnesses showing that a verdict of `holds` is
//! not vacuous: `reach-connector-crash` (the connector is restarted after a crash) and
//! `reach-all-delivered` (every transaction reaches the destination and the slot confirms it).

use std::fmt;

use walcheck::pg::{Role, Server};
use walcheck::stateright::{Model, Property};
use walcheck::system::number;
use walcheck::{Config, Lanes, Live, Lsn, PropertyInfo, System, SystemInfo, Var, Variables, View};

/// Where the slot was created, before the first client transaction.
const INITIAL_LSN: Lsn = Lsn(0x100_0000);
/// WAL of one client transaction, its commit record included: one 8 KiB page.
const TXN_BYTES: u64 = 8192;

const NO_DATA_LOSS: PropertyInfo = PropertyInfo::always(
    "no-data-loss",
    "every committed transaction is in the destination, held by the connector, or past confirmed_flush",
);
const REACH_CONNECTOR_CRASH: PropertyInfo = PropertyInfo::sometimes(
    "reach-connector-crash",
    "the connector is restarted after a crash",
)
.needs("fault:connector-crash");
const REACH_ALL_DELIVERED: PropertyInfo = PropertyInfo::sometimes(
    "reach-all-delivered",
    "every transaction of the run is in the destination and the slot confirmed it",
);

// A declaration table, one entry a line.
#[rustfmt::skip]
static INFO: SystemInfo = SystemInfo {
    name: "textbook",
    doc: "a textbook CDC connector over a PostgreSQL 15 logical slot: when to acknowledge",
    variants: &[
        ("ack-after-commit", "acknowledges a transaction once the destination commit holds it"),
        ("ack-on-receipt", "acknowledges a transaction as soon as it receives it"),
    ],
    faults: &["none", "connector-crash"],
    bounds: &[
        number("txns", 2, 1, 3, "transactions", "client transactions in the whole run"),
        number("crashes", 1, 0, 2, "crashes", "connector crashes injected in all"),
    ],
    trace_knobs: &[],
    properties: &[NO_DATA_LOSS, REACH_CONNECTOR_CRASH, REACH_ALL_DELIVERED],
    also: None,
    view: View {
        key_variables: &["confirmed_flush", "destination", "running"],
        counters: &["txns", "crashes"],
        lanes: &Lanes {
            participants: &[("client", "client"), ("pg", "PostgreSQL"), ("connector", "connector"), ("destination", "destination")],
            lane: |action| match action {
                "CommitTxn" => ("client", "pg"),
                "Receive" => ("pg", "connector"),
                "Write" => ("connector", "destination"),
                "Ack" | "Restart" => ("connector", "pg"),
                _ => ("connector", "connector"),
            },
            owner: |var| match var {
                "confirmed_flush" => Some("pg"),
                "destination" => Some("destination"),
                "txns" | "crashes" => None,
                _ => Some("connector"),
            },
        },
    },
};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    server: Server,
    /// Client transactions committed so far; transaction `i` ends at `txn_end(i)`.
    txns: u64,
    /// The transactions the destination committed, in order (one streamed again appears twice).
    destination: Vec<u64>,
    /// Whether the connector process is up. The next three fields are its memory.
    running: bool,
    /// The end of the last transaction the walsender sent (walsender.c's `sentPtr`).
    sent_ptr: Lsn,
    /// The transaction received and not yet in the destination.
    held: Option<u64>,
    /// The transaction whose acknowledgement is queued.
    unacked: Option<u64>,
    crashes: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Action {
    CommitTxn,
    Receive { txn: u64 },
    Write,
    Ack,
    ConnectorCrash,
    Restart,
}

/// The model of one configuration, which it reads as the behaviours need.
struct TextbookModel {
    config: Config,
}

/// Where transaction `txn` (from 0) ends: its commit record's end.
fn txn_end(txn: u64) -> Lsn {
    INITIAL_LSN.plus((txn + 1) * TXN_BYTES)
}

impl TextbookModel {
    fn acks_on_receipt(&self) -> bool {
        self.config.variant == "ack-on-receipt"
    }

    /// The walsender decodes transaction `txn` and sends it whole, at its commit (PostgreSQL 15
    /// `reorderbuffer.c:ReorderBufferCommit`). `ack-on-receipt` queues its acknowledgement now.
    fn receive(&self, s: &mut State, txn: u64) {
        s.sent_ptr = txn_end(txn);
        s.held = Some(txn);
        if self.acks_on_receipt() {
            s.unacked = Some(txn);
        }
    }

    /// The destination commits the held transaction and from then on holds it durably.
    /// `ack-after-commit` queues its acknowledgement now.
    fn write(&self, s: &mut State) {
        let txn = s
            .held
            .take()
            .expect("Write is enabled only while a transaction is held");
        s.destination.push(txn);
        if !self.acks_on_receipt() {
            s.unacked = Some(txn);
        }
    }
}

/// A client transaction commits synchronously: `pg::Wal::append` (8 KiB pages, 4 MiB of
/// `wal_buffers`), then `pg::Wal::commit_flush` (PostgreSQL 15 `xact.c:RecordTransactionCommit`).
fn commit_txn(s: &mut State) {
    s.server.wal.append(TXN_BYTES, 8192, 4 << 20);
    s.server.wal.commit_flush();
    s.txns += 1;
}

/// A standby status update with flush at the queued transaction's end. PostgreSQL 15
/// `walsender.c:ProcessStandbyReplyMessage` → `logical.c:LogicalConfirmReceivedLocation` moves
/// `confirmed_flush` forward, never back, in shared memory (a connector crash leaves it there).
fn ack(s: &mut State) {
    let txn = s
        .unacked
        .take()
        .expect("Ack is enabled only while one is queued");
    let slot = &mut s.server.slot;
    slot.confirmed_flush = slot.confirmed_flush.max(txn_end(txn));
}

/// Fault: the connector process dies, and its memory with it.
fn connector_crash(s: &mut State) {
    (s.running, s.held, s.unacked) = (false, None, None);
    s.crashes += 1;
}

/// `START_REPLICATION` again. PostgreSQL 15 `logical.c:CreateDecodingContext` moves a start
/// point before the slot's `confirmed_flush` up to it: streaming resumes at `confirmed_flush`.
fn restart(s: &mut State) {
    s.running = true;
    s.sent_ptr = s.server.slot.confirmed_flush;
}

/// `no-data-loss`: no committed transaction is gone from everywhere it could still come from.
fn no_data_loss(s: &State) -> bool {
    let restreamed = |txn| txn_end(txn) > s.server.slot.confirmed_flush;
    (0..s.txns).all(|txn| s.destination.contains(&txn) || s.held == Some(txn) || restreamed(txn))
}

impl Model for TextbookModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            server: Server::quiet_at(Role::Primary, INITIAL_LSN),
            txns: 0,
            destination: Vec::new(),
            running: true,
            sent_ptr: INITIAL_LSN,
            held: None,
            unacked: None,
            crashes: 0,
        }]
    }

    /// The enabled actions: a client's next commit, the connector's next step, and a crash.
    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        if s.txns < self.config.number("txns") {
            actions.push(Action::CommitTxn);
        }
        if !s.running {
            actions.push(Action::Restart);
        } else if s.unacked.is_some() {
            actions.push(Action::Ack);
        } else if s.held.is_some() {
            actions.push(Action::Write);
        } else if let Some(txn) = (0..s.txns).find(|&txn| txn_end(txn) > s.sent_ptr) {
            actions.push(Action::Receive { txn });
        }
        let crash_left = s.crashes < self.config.number("crashes");
        if s.running && crash_left && self.config.faults == "connector-crash" {
            actions.push(Action::ConnectorCrash);
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        let mut s = s.clone();
        match action {
            Action::CommitTxn => commit_txn(&mut s),
            Action::Receive { txn } => self.receive(&mut s, txn),
            Action::Write => self.write(&mut s),
            Action::Ack => ack(&mut s),
            Action::ConnectorCrash => connector_crash(&mut s),
            Action::Restart => restart(&mut s),
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            NO_DATA_LOSS.check(|_, s: &State| no_data_loss(s)),
            REACH_CONNECTOR_CRASH.check(|_, s: &State| s.crashes > 0 && s.running),
            REACH_ALL_DELIVERED.check(|m: &TextbookModel, s: &State| {
                let txns = m.config.number("txns");
                let confirmed = s.server.slot.confirmed_flush == txn_end(txns - 1);
                confirmed && (0..txns).all(|txn| s.destination.contains(&txn))
            }),
        ]
    }
}

/// No liveness property: no fairness either.
impl Live for TextbookModel {}

/// The system `textbook`: its declaration, and the model of each of its configurations.
struct Textbook;

impl System for Textbook {
    type Model = TextbookModel;

    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn model(&self, config: &Config) -> TextbookModel {
        let config = config.clone();
        TextbookModel { config }
    }
}

/// The state's variables, as traces and step tables show them.
impl Variables for State {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        let txn = |txn: Option<u64>| Var::Text(txn.map_or("none".into(), |txn| txn.to_string()));
        vec![
            (
                "confirmed_flush",
                Var::Text(self.server.slot.confirmed_flush.to_string()),
            ),
            ("destination", Var::Text(format!("{:?}", self.destination))),
            ("running", Var::Bool(self.running)),
            ("sent_ptr", Var::Text(self.sent_ptr.to_string())),
            ("held", txn(self.held)),
            ("unacked", txn(self.unacked)),
            ("txns", Var::Int(self.txns)),
            ("crashes", Var::Int(self.crashes)),
        ]
    }
}

/// Actions as traces name them: `Receive{txn: 0}`.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Receive { txn } => write!(f, "Receive{{txn: {txn}}}"),
            other => write!(f, "{other:?}"),
        }
    }
}

fn main() -> std::process::ExitCode {
    walcheck::cli::main(&[&Textbook])
}
