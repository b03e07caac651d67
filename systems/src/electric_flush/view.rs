//! System `electric-flush`: how its traces read: the variables, the step-table key variables and counters, and the sequence-diagram lanes.

use super::*;
use std::fmt;
use walcheck_model::electric::consumer::{Msg, Status};
use walcheck_properties::system::{Var, Variables};

walcheck_properties::view! {
    /// How its traces read: the variables (six for each shape `sN`, two shapes at most, then the
    /// collector's, the FlushTracker's and the ReplicationClient's), each under the participant
    /// that owns it, the sequence-diagram lanes, the terms, and what step tables show.
    pub const VIEW;
    variables {
        s0 {
            "s0.consumer": "text", "shape 0's Consumer: running, hibernated, suspended, dead or removed, and a pending multi-fragment txn";
            "s0.buffer": "text", "shape 0's WriteLoop: lines buffered and the last offset persisted to the shape log";
            "s0.timer": "text", "shape 0's WriteLoop flush timer: none, armed(n) or fired(n) for the n-th request";
            "s0.mailbox": "list", "messages waiting in shape 0's Consumer mailbox (flushed offsets, timer fires, suspend)";
            "s0.mapping": "list", "shape 0's txn_offset_mapping: shape-log key -> txn boundary pairs";
            "s0.pending_flush": "offset or none", "shape 0's :flushed offset deferred while a txn is pending (#4064)";
        }
        tracker {
            "tracker.s0": "text", "the FlushTracker's entry for shape 0: last offset sent to it and last it flushed, or none";
        }
        s1 {
            "s1.consumer": "text", "shape 1's Consumer (as s0.consumer)";
            "s1.buffer": "text", "shape 1's WriteLoop buffer (as s0.buffer)";
            "s1.timer": "text", "shape 1's flush timer (as s0.timer)";
            "s1.mailbox": "list", "shape 1's Consumer mailbox (as s0.mailbox)";
            "s1.mapping": "list", "shape 1's txn_offset_mapping (as s0.mapping)";
            "s1.pending_flush": "offset or none", "shape 1's deferred :flushed offset (as s0.pending_flush)";
        }
        tracker {
            "tracker.s1": "text", "the FlushTracker's entry for shape 1 (as tracker.s0)";
        }
        _ {
            "published": "count", "txn fragments the ShapeLogCollector has published";
        }
        collector {
            "collector.mailbox": "list", "notify_flushed casts waiting at the ShapeLogCollector: shape and offset";
        }
        tracker {
            "tracker.global": "offset", "the FlushTracker's last_global_flushed_offset: the minimum every shape has flushed";
        }
        client {
            "client.mailbox": "list", "{:flush_boundary_updated, lsn} messages waiting at the ReplicationClient";
            "flushed_wal": "count", "the WAL position (in transactions) the ReplicationClient last acknowledged as flushed";
        }
        pg {
            "wal_end": "count", "the end of the WAL received so far, in transactions";
            "confirmed_flush": "count", "the slot's confirmed_flush, in transactions";
            "retained_wal": "count", "WAL PostgreSQL must keep for the slot: wal_end - confirmed_flush, in transactions";
        }
        _ {
            "crashes": "count", "consumer kills injected so far";
        }
    }
    participants: &[("pg", "PostgreSQL"), ("collector", "ShapeLogCollector"), ("s0", "Consumer s0"), ("s1", "Consumer s1"), ("tracker", "FlushTracker"), ("client", "ReplicationClient")],
    lane: |action| match action {
        "Publish" => ("pg", "collector"),
        "Deliver" | "DeliverS0" => ("collector", "s0"),
        "DeliverS1" => ("collector", "s1"),
        "CollectorHandle" => ("collector", "tracker"),
        "ClientHandle" | "Keepalive" => ("client", "pg"),
        a if a.ends_with("S1") => ("s1", "s1"),
        _ => ("s0", "s0"),
    },
    key_variables: &["s0.mailbox", "s0.mapping", "tracker.s0", "tracker.global", "confirmed_flush", "retained_wal", "s0.consumer"],
    terms: &[
        ("S0", "in an action: which shape's process takes the step (S0, S1)"),
        ("T1", "transaction 1, the large one, in fragments; offsets read txn_op (1_3: transaction 1, op 3)"),
    ],
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Publish => f.write_str("Publish"),
            Action::CollectorHandle => f.write_str("CollectorHandle"),
            Action::ClientHandle => f.write_str("ClientHandle"),
            Action::Keepalive => f.write_str("Keepalive"),
            Action::Deliver(s) => write!(f, "DeliverS{s}"),
            Action::TimerFires(s) => write!(f, "TimerFiresS{s}"),
            Action::Handle(s) => write!(f, "HandleS{s}"),
            Action::Timeout(s) => write!(f, "TimeoutS{s}"),
            Action::SuspendTimerFires(s) => write!(f, "SuspendTimerFiresS{s}"),
            Action::Kill(s) => write!(f, "KillS{s}"),
            Action::Down(s) => write!(f, "DownS{s}"),
            Action::StallCheck(s) => write!(f, "StallCheckS{s}"),
        }
    }
}

walcheck_properties::debug_as_variables!(State);

impl Variables for State {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        const NAMES: [[&str; 6]; 2] = [
            [
                "s0.consumer",
                "s0.buffer",
                "s0.timer",
                "s0.mailbox",
                "s0.mapping",
                "s0.pending_flush",
            ],
            [
                "s1.consumer",
                "s1.buffer",
                "s1.timer",
                "s1.mailbox",
                "s1.mapping",
                "s1.pending_flush",
            ],
        ];
        const TRACKED: [&str; 2] = ["tracker.s0", "tracker.s1"];
        let text = |s: String| Var::Text(s);
        let mut vars = Vec::new();
        for (s, c) in self.shapes.iter().enumerate() {
            let status = match c.status {
                Status::Running => "running",
                Status::Hibernated => "hibernated",
                Status::Suspended => "suspended",
                Status::Dead => "dead",
                Status::Removed => "removed",
            };
            let pending = c
                .pending_txn
                .map_or(String::new(), |p| format!(", pending T{}", p.tx));
            let timer = match c.write_timer {
                None => "none".to_owned(),
                Some(t) if t.fired => format!("fired({})", t.requested),
                Some(t) => format!("armed({})", t.requested),
            };
            let mailbox: Vec<String> = c
                .mailbox
                .iter()
                .map(|m| match m {
                    Msg::Flushed(o) => format!("flushed {o}"),
                    Msg::TimerFire(n) => format!("timer({n})"),
                    Msg::SuspendTimer => "suspend".to_owned(),
                })
                .collect();
            let mapping: Vec<String> = c.mapping.iter().map(|(k, b)| format!("{k}->{b}")).collect();
            let names = NAMES[s];
            vars.push((names[0], text(format!("{status}{pending}"))));
            vars.push((
                names[1],
                text(format!(
                    "{} lines, persisted {}",
                    c.writer.buffer_lines, c.writer.last_persisted_offset
                )),
            ));
            vars.push((names[2], text(timer)));
            vars.push((names[3], text(format!("[{}]", mailbox.join(", ")))));
            vars.push((names[4], text(format!("[{}]", mapping.join(", ")))));
            vars.push((
                names[5],
                text(
                    c.pending_flush_offset
                        .map_or("none".to_owned(), |o| o.to_string()),
                ),
            ));
            let entry = self.tracker.entries[s].map_or("none".to_owned(), |e| {
                format!("sent {} flushed {}", e.last_sent, e.last_flushed)
            });
            vars.push((TRACKED[s], text(entry)));
        }
        let casts: Vec<String> = self
            .collector
            .mailbox
            .iter()
            .map(|(s, o)| format!("s{s} {o}"))
            .collect();
        vars.extend([
            ("published", Var::Int(self.collector.published.into())),
            ("collector.mailbox", text(format!("[{}]", casts.join(", ")))),
            (
                "tracker.global",
                text(self.tracker.last_global_flushed_offset.to_string()),
            ),
            ("client.mailbox", text(format!("{:?}", self.client.mailbox))),
            ("flushed_wal", Var::Int(self.client.flushed_wal.into())),
            ("wal_end", Var::Int(self.client.wal_end.into())),
            (
                "confirmed_flush",
                Var::Int(self.client.confirmed_flush.into()),
            ),
            (
                "retained_wal",
                Var::Int(
                    self.client
                        .wal_end
                        .saturating_sub(self.client.confirmed_flush)
                        .into(),
                ),
            ),
            ("crashes", Var::Int(self.crashes.into())),
        ]);
        vars
    }
}
