//! System `olake-sync`: how its traces read: the variables, the step-table key variables and counters, and the sequence-diagram lanes.

use super::*;
use std::fmt;
use walcheck_model::olake::sync::SyncPhase;
use walcheck_model::Lsn;
use walcheck_properties::pg_view;
use walcheck_properties::system::{Var, Variables};

walcheck_properties::view! {
    /// How its traces read: every variable a state shows, each under the participant that owns
    /// it, the sequence-diagram lanes, the terms, and what step tables show.
    pub const VIEW;
    variables {
        pg {
            pg_view::INSERT;
            pg_view::FLUSH;
        }
        slot {
            ..pg_view::SLOT;
        }
        statefile {
            "state_file": "LSN", "the connector's state file (global.state.lsn): where the next sync starts";
        }
        destination {
            "dest_meta": "LSN or none", "the destination's metadata state: the LSN its last commit recorded, or none";
            "dest_lsn": "LSN", "the highest LSN a destination commit covered, with metadata or not";
            "dest_txns": "set", "the client transactions the destination holds, by number (T0, T1, …)";
            "duplicates": "count", "transactions written to the destination more than once (at-least-once delivery)";
        }
        connector {
            "connector": "text", "the connector's phase: which step of StreamChanges or PostCDC it is at";
            "run": "count", "syncs started so far, the one after each crash included";
            "client_pos": "LSN or none", "the stream's ClientXLogPos: what its next status update reports; none outside the stream";
            "buffer": "set", "transactions received in this run and not yet committed to the destination";
        }
        _ {
            "txns": "count", "client transactions committed so far";
            "crashes": "count", "crashes injected so far, of the connector or of PostgreSQL";
        }
    }
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
    key_variables: &["flush", "confirmed_flush", "saved_confirmed_flush", "state_file", "dest_meta", "connector"],
    terms: &[
        ("txn", "a client transaction, by number from 0"),
        ("restart_lsn", "in Ack: where the acknowledgement moves restart_lsn (a decoding candidate applies, saving the slot at once) or stays"),
    ],
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
