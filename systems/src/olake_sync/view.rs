//! System `olake-sync`: how its traces read: the variables, the step-table key variables and counters, and the sequence-diagram lanes.

use super::*;
use std::fmt;
use walcheck_model::olake::sync::SyncPhase;
use walcheck_model::Lsn;
use walcheck_properties::pg_view;
use walcheck_properties::system::{var, VarInfo};
use walcheck_properties::system::{Lanes, Var, Variables};

/// Every variable a state shows.
#[rustfmt::skip]
pub const VARIABLES: &[VarInfo] = &[
    pg_view::INSERT, pg_view::FLUSH,
    pg_view::CONFIRMED_FLUSH, pg_view::RESTART_LSN, pg_view::SAVED_CONFIRMED_FLUSH, pg_view::SAVED_RESTART_LSN,
    var("state_file", "LSN", "the connector's state file (global.state.lsn): where the next sync starts"),
    var("dest_meta", "LSN or none", "the destination's metadata state: the LSN its last commit recorded, or none"),
    var("dest_lsn", "LSN", "the highest LSN a destination commit covered, with metadata or not"),
    var("dest_txns", "set", "the client transactions the destination holds, by number (T0, T1, …)"),
    var("duplicates", "count", "transactions written to the destination more than once (at-least-once delivery)"),
    var("connector", "text", "the connector's phase: which step of StreamChanges or PostCDC it is at"),
    var("run", "count", "syncs started so far, the one after each crash included"),
    var("client_pos", "LSN or none", "the stream's ClientXLogPos: what its next status update reports; none outside the stream"),
    var("buffer", "set", "transactions received in this run and not yet committed to the destination"),
    var("txns", "count", "client transactions committed so far"),
    var("crashes", "count", "crashes injected so far, of the connector or of PostgreSQL"),
];

/// The sequence-diagram lanes of this system's traces.
#[rustfmt::skip]
pub const LANES: Lanes = Lanes {
    participants: &[("client", "client"), ("pg", "PostgreSQL"), ("slot", "slot"), ("connector", "connector"), ("destination", "destination"), ("statefile", "state file")],
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
        name if pg_view::SLOT_NAMES.contains(&name) => Some("slot"),
        "state_file" => Some("statefile"),
        "dest_meta" | "dest_lsn" | "dest_txns" | "duplicates" => Some("destination"),
        "connector" | "run" | "client_pos" | "buffer" => Some("connector"),
        _ => None,
    },
};

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

walcheck_properties::debug_as_variables!(State);

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
        let d = &self.durable;
        let lsn = |l: Lsn| Var::Text(l.to_string());
        let opt =
            |l: Option<Lsn>| Var::Text(l.map_or_else(|| "none".to_owned(), |l| l.to_string()));
        let stream = match self.connector.phase {
            SyncPhase::Streaming(s) | SyncPhase::Post { stream: s, .. } => Some(s),
            _ => None,
        };
        let mut vars = vec![("insert", lsn(wal.insert)), ("flush", lsn(wal.flush))];
        vars.extend(pg_view::slot(&self.server.slot));
        vars.extend([
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
        ]);
        vars
    }
}
