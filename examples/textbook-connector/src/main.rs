//! A textbook CDC connector over a PostgreSQL 15 logical slot, and the one decision that decides
//! whether it loses data: when it acknowledges. A complete system outside walcheck's own crates,
//! checked with walcheck's whole command line: `cargo run -p textbook-connector -- check textbook`.
//!
//! Protocol. Clients commit transactions on a published table. The connector streams them from
//! its logical slot (`START_REPLICATION SLOT … LOGICAL 0/0`), commits each one to its
//! destination, and acknowledges it with a standby status update, which moves the slot's
//! `confirmed_flush`. A connector restarted after a crash is streamed again from
//! `confirmed_flush`: a transaction the slot was told is done is never sent again. The two
//! designs are the two variants of system `textbook`:
//!
//! - `ack-after-commit` acknowledges a transaction once the destination's commit durably holds
//!   it. A crash in between streams it again: delivery is at least once.
//! - `ack-on-receipt` acknowledges a transaction as soon as it arrives. A crash before the
//!   destination commit loses it: delivery is at most once.
//!
//! State: PostgreSQL's WAL and slot (walcheck's model of PostgreSQL 15, `walcheck::pg`), the
//! client transactions committed so far, the destination's committed transactions, and the
//! connector's memory: where its stream is, what it received, what acknowledgement it owes.
//!
//! Actions: `CommitTxn` (a client), `Receive` (the walsender sends the next transaction),
//! `Write` (the destination commit), `Ack` (the standby status update) and the fault
//! `ConnectorCrash` (the process dies and its supervisor starts it again). `next_state` hands
//! each to one small function whose guard comes first: it returns `None` where the action is not
//! enabled, and the enabled actions are those that return a state. The two designs differ only in where
//! the acknowledgement is queued (`receive` or `write`).
//!
//! Properties: `no-data-loss` (always), and two witnesses showing that a verdict of `holds` is
//! not vacuous: `reach-connector-crash` and `reach-all-delivered`.

use walcheck::pg::{decoding, CommitMode::Sync, DurableSlot, Slot, Txn, Wal};
use walcheck::system::{number, Declared, Lsn, PropertyInfo, System, SystemInfo, View};

/// Where the WAL and the slot are at rest at the start, before the first client transaction.
const INITIAL_LSN: Lsn = Lsn(0x100_0000);

// A declaration table, one entry a line; what it leaves out is empty.
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
    properties: PROPERTIES,
    view: View::new(VARIABLES, &["confirmed_flush", "destination", "held"]),
    ..SystemInfo::EMPTY
};

/// A configuration, read once from the bounds, variant and fault set `INFO` declares.
#[derive(Clone, Debug)]
struct Config {
    ack_on_receipt: bool,
    crash: bool,
    txns: u64,
    crashes: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    wal: Wal,
    slot: DurableSlot,
    /// The client transactions committed so far, in commit order.
    txns: Vec<Txn>,
    /// The transactions (by position in `txns`) the destination committed, in order.
    destination: Vec<u64>,
    /// The connector's memory, lost in a crash: the next transaction its stream sends, the one
    /// it received and has not yet written, the one whose acknowledgement it owes.
    next: u64,
    held: Option<u64>,
    unacked: Option<u64>,
    crashes: u64,
}

walcheck::variables! { State as VARIABLES {
    confirmed_flush: Lsn = |s| s.slot.slot.confirmed_flush, "the slot's confirmed_flush_lsn: where a new stream starts";
    destination: Vec<u64> = |s| s.destination.clone(), "the transactions the destination committed, in order";
    next: u64 = |s| s.next, "the next transaction the connector's stream sends";
    held: Option<u64> = |s| s.held, "the transaction the connector received and has not yet written";
    unacked: Option<u64> = |s| s.unacked, "the transaction whose acknowledgement the connector owes";
    txns: u64 = |s| s.txns.len() as u64, "client transactions committed so far";
    crashes: u64 = |s| s.crashes, "connector crashes so far";
}}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Action {
    CommitTxn,
    Receive,
    Write,
    Ack,
    ConnectorCrash,
}

/// A client transaction of one published row commits synchronously (PostgreSQL 15
/// `xact.c:RecordTransactionCommit`, through `pg::Wal::commit_txn`).
fn commit_txn(c: &Config, mut s: State) -> Option<State> {
    (s.txns.len() < c.txns as usize).then_some(())?;
    let xid = 730 + s.txns.len() as u32;
    s.txns.push(s.wal.commit_txn(xid, 200, 46, 1, Sync));
    Some(s)
}

/// The walsender sends the next committed transaction whole, at its commit (PostgreSQL 15
/// `reorderbuffer.c:ReorderBufferCommit`). `ack-on-receipt` queues its acknowledgement now.
fn receive(c: &Config, mut s: State) -> Option<State> {
    (s.held.is_none() && s.unacked.is_none() && s.next < s.txns.len() as u64).then_some(())?;
    (s.held, s.next) = (Some(s.next), s.next + 1);
    s.unacked = s.held.filter(|_| c.ack_on_receipt);
    Some(s)
}

/// The destination commits the held transaction and from then on holds it durably.
/// `ack-after-commit` queues its acknowledgement now (`ack-on-receipt` keeps the one it owes).
fn write(c: &Config, mut s: State) -> Option<State> {
    let txn = s.held.take()?;
    s.destination.push(txn);
    s.unacked = s.unacked.or(Some(txn).filter(|_| !c.ack_on_receipt));
    Some(s)
}

/// A standby status update with flush at the queued transaction's end: PostgreSQL 15
/// `walsender.c:ProcessStandbyReplyMessage` → `logical.c:LogicalConfirmReceivedLocation`
/// moves `confirmed_flush` forward, never back, in shared memory (a crash leaves it there).
fn ack(mut s: State) -> Option<State> {
    let end = s.txns[s.unacked.take()? as usize].end_lsn;
    s.slot.confirm_received(end, None);
    Some(s)
}

/// Fault: the connector process dies and is started again. Its memory is gone; its new
/// stream starts where the slot says.
fn connector_crash(c: &Config, mut s: State) -> Option<State> {
    (c.crash && s.crashes < c.crashes).then_some(())?;
    (s.next, s.held, s.unacked, s.crashes) = (restart_at(&s), None, None, s.crashes + 1);
    Some(s)
}

/// Where `START_REPLICATION … LOGICAL 0/0` starts sending: PostgreSQL 15 `logical.c:
/// CreateDecodingContext` decodes from `confirmed_flush` and skips every transaction whose
/// commit record starts before it (`snapbuild.c:SnapBuildXactNeedsSkip`).
fn restart_at(s: &State) -> u64 {
    let start = decoding::decoding_start(Lsn::INVALID, s.slot.slot.confirmed_flush);
    // Transactions are in commit order: the skipped ones come first.
    s.txns
        .partition_point(|txn| decoding::txn_needs_skip(txn, start)) as u64
}

walcheck::checks! { Textbook:
    /// The properties, each declared once with its condition: `INFO` lists them, the model
    /// checks them.
    CHECKS => PROPERTIES [
        /// No committed transaction is gone from everywhere it could still come from.
        NO_DATA_LOSS = PropertyInfo::always("no-data-loss", "every committed transaction is in the destination, held by the connector, or still to be streamed")
            .when(|_, s: &State| (0..s.txns.len() as u64).all(|txn| s.destination.contains(&txn) || s.held == Some(txn) || txn >= restart_at(s)));
        REACH_CONNECTOR_CRASH = PropertyInfo::sometimes("reach-connector-crash", "the connector crashed and was restarted")
            .needs("fault:connector-crash")
            .when(|_, s: &State| s.crashes > 0);
        REACH_ALL_DELIVERED = PropertyInfo::sometimes("reach-all-delivered", "every transaction of the run is in the destination and the slot confirmed it")
            .when(|m, s| restart_at(s) == m.config.txns && (0..m.config.txns).all(|txn| s.destination.contains(&txn)));
    ]
}

/// The system `textbook`: its declaration, configuration, steps and properties.
struct Textbook;

impl System for Textbook {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn info(&self) -> &'static SystemInfo {
        &INFO
    }

    fn config(&self, config: &walcheck::Config) -> Config {
        Config {
            ack_on_receipt: config.is_variant("ack-on-receipt"),
            crash: config.meets(Some("fault:connector-crash")),
            txns: config.number("txns"),
            crashes: config.number("crashes"),
        }
    }

    /// PostgreSQL at the slot's creation, no transaction committed, the connector about to
    /// stream.
    fn init_states(&self, _: &Config) -> Vec<State> {
        vec![State {
            wal: Wal::at(INITIAL_LSN),
            slot: DurableSlot::created(Slot::at_rest(INITIAL_LSN)),
            txns: Vec::new(),
            destination: Vec::new(),
            next: 0,
            held: None,
            unacked: None,
            crashes: 0,
        }]
    }

    /// The enabled actions: those whose step is taken.
    fn actions(&self, c: &Config, s: &State, actions: &mut Vec<Action>) {
        use Action::*;
        let enabled = |a: &Action| self.next_state(c, s, *a).is_some();
        let all = [CommitTxn, Receive, Write, Ack, ConnectorCrash];
        actions.extend(all.into_iter().filter(enabled));
    }

    /// Each action's step, on a copy of `s`.
    fn next_state(&self, c: &Config, s: &State, action: Action) -> Option<State> {
        let s = s.clone();
        match action {
            Action::CommitTxn => commit_txn(c, s),
            Action::Receive => receive(c, s),
            Action::Write => write(c, s),
            Action::Ack => ack(s),
            Action::ConnectorCrash => connector_crash(c, s),
        }
    }

    fn properties(&self) -> Vec<Declared<Self>> {
        CHECKS.to_vec()
    }
}

fn main() -> std::process::ExitCode {
    walcheck::cli::main(&Textbook)
}
