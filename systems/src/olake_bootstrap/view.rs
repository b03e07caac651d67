//! System `olake-bootstrap`: how its traces read: the variables, the step-table key variables and counters, and the sequence-diagram lanes.

use super::*;
use std::fmt;
use walcheck_model::pg::{CommitMode, Role};
use walcheck_model::Lsn;
use walcheck_properties::pg_view;
use walcheck_properties::system::{Var, Variables};

walcheck_properties::view! {
    /// How its traces read: the variables (on a primary `insert`, `write`, `flush`; on a standby
    /// the primary's pointers as `primary_*` and the standby's `replay`; then the rest), each
    /// under the participant that owns it, the sequence-diagram lanes, the terms, and what step
    /// tables show.
    pub const VIEW;
    variables {
        pg {
            pg_view::INSERT;
            pg_view::WRITE;
            pg_view::FLUSH;
            "primary_insert": "LSN", "on a standby: the primary's WAL insert pointer";
            "primary_write": "LSN", "on a standby: the primary's WAL write pointer";
            "primary_flush": "LSN", "on a standby: the primary's WAL flush pointer, how far the standby has received";
            "replay": "LSN", "on a standby: the replay pointer, WAL applied; slot advance clamps here";
            "commit_pending": "bool", "a synchronous commit's WAL is not yet flushed: its backend waits in XLogFlush";
        }
        slot {
            ..pg_view::SLOT;
        }
        statefile {
            "state_file": "LSN or none", "the connector's state file (global.state.lsn): where the next sync starts; none before bootstrap seeds it";
        }
        connector {
            "connector": "text", "the connector's phase: which step of PreCDC's bootstrap or of the sync it is at";
            "run": "count", "connector runs started so far, restarts included";
            "end_lsn": "LSN or none", "the end_lsn the last pg_replication_slot_advance returned; none before one";
        }
        _ {
            "statements": "count", "client statements run so far";
            "crashes": "count", "faults injected so far: connector and PostgreSQL crashes";
        }
    }
    participants: &[("client", "client"), ("pg", "PostgreSQL"), ("slot", "slot"), ("connector", "connector"), ("statefile", "state file")],
    lane: |action| match action {
        "Append" | "CommitFlush" | "InsertWal" | "Commit" => ("client", "pg"),
        "WalWriterWrite" | "WalWriterFlush" | "Replay" | "PgCrash" => ("pg", "pg"),
        "Checkpoint" => ("pg", "slot"),
        "ReadSlot" => ("connector", "pg"),
        "Advance" | "Validate" => ("connector", "slot"),
        "SeedState" => ("connector", "statefile"),
        _ => ("connector", "connector"),
    },
    key_variables: &["insert", "write", "flush", "confirmed_flush", "saved_confirmed_flush", "state_file", "connector"],
    terms: &[
        ("W0", "the bootstrap's target: pg_current_wal_lsn() as PreCDC read it"),
        ("restart_moves", "whether the advance's decoding passed a running-xacts record, moving restart_lsn and saving the slot at once"),
        ("pages", "WAL the statement inserts, in 8 KiB pages"),
        ("commit", "sync: synchronous_commit = on, the commit waits for its flush; async: off, the walwriter flushes later"),
    ],
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
            Action::AdvanceSavesOld => {
                write!(f, "Advance{{restart_moves: true, saved: old_confirmed_flush}}")
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

walcheck_properties::debug_as_variables!(State);

impl Variables for State {
    /// On a standby the WAL pointers are the primary's and named so (`primary_insert`, …), beside
    /// the standby's `replay`; on a primary there is no replay pointer.
    fn variables(&self) -> Vec<(&'static str, Var)> {
        let wal = &self.server.wal;
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
        vars.extend([("commit_pending", Var::Bool(self.server.commit_pending))]);
        vars.extend(pg_view::slot(&self.server.slot));
        vars.extend([
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
