//! The verdicts upstream code leads us to expect of `olake-sync`: the regression suite's table,
//! with the reason for each.

use walcheck_model::olake::sync::SyncVariant;
use walcheck_properties::verdict::Verdict;

use super::Config;

/// The properties this table has a row for.
pub(super) const ROWS: &[&str] = &[
    "no-lsn-mismatch",
    "ack-within-durable",
    "ack-within-destination",
    "no-ack-timeout",
    "reach-sync-complete",
    "reach-duplicate",
    "reach-crash-after-commit",
    "reach-crash-after-ack",
    "reach-crash-after-state",
    "reach-recovery-sync",
    "reach-pg-crash-after-ack",
    "reach-keepalive-regression",
];

/// What upstream code leads us to expect of `olake-sync` (olake-postgres.md §1, §3;
/// postgres-live.md §3), given every bound that decides it: the variant (the order of the three
/// side effects, the recovery rules), whether a change is ever streamed (`txns`), whether a fault
/// can happen (`faults`, `crashes`), whether a later run validates what it left (`syncs`), and
/// whether keepalives reach the stream loop (`keepalive`).
pub(super) fn verdict(c: &Config, property: &str) -> (Verdict, &'static str) {
    use SyncVariant::{Master, Pr854, Pr864, V050};
    use Verdict::{Holds, Violated};
    let data = c.txns > 0;
    let connector_crash = c.faults.connector_crash() && c.crashes > 0;
    let pg_crash = c.faults.pg_crash() && c.crashes > 0;
    let later_run = c.syncs > 1;
    // A keepalive regression needs a stream that starts above restart_lsn and still has a
    // transaction to wait for: a second transaction after an acknowledged first one.
    let regression = c.keepalive && c.txns >= 2 && later_run;
    const NO_DATA: &str =
        "txns=0: no change is streamed, so every position stays where the bootstrap left it";
    const NO_FAULT: &str = "no fault can be injected (faults or crashes=0)";
    const NO_LATER_RUN: &str = "syncs=1: no later run validates what the crash left behind";
    const WITNESS: &str = "witness: the behaviour the safety verdicts depend on is reachable";
    let reached = |possible: bool, why_not: &'static str| {
        if possible {
            (Holds, WITNESS)
        } else {
            (Violated, why_not)
        }
    };
    match property {
        "ack-within-durable" => (Holds, "every variant commits the destination before it acknowledges: handleWriterCleanup is deferred after PostCDC and runs first (#854 calls PostCDC from handleWriterCleanup, after the writers close)"),
        "ack-within-destination" => (Holds, "the acknowledgement sends ClientXLogPos after the destination committed it (a recovery sync pins it to the committed LSN)"),
        "no-ack-timeout" => {
            // Found by the model beyond the default bounds: a first sync acknowledges two
            // transactions and PostgreSQL moves restart_lsn to a decoding candidate between them
            // (saving the slot), a keepalive of the next stream (waiting for a third
            // transaction) drags ClientXLogPos back to restart_lsn, a PostgreSQL restart ends the
            // loop with EOF (return nil), the destination commits the regressed LSN, the
            // connector crashes, and v0.5.0's recovery (metadata != state) pins the next ack
            // below the slot.
            let window = c.variant == V050
                && regression
                && c.txns >= 3
                && connector_crash
                && pg_crash
                && c.crashes >= 2
                && c.syncs >= 3;
            if window {
                (Violated, "new (the #862 symptom by another road): an ack saved with restart_lsn at a decoding candidate below confirmed_flush (logical.c:LogicalConfirmReceivedLocation), a keepalive regression to it, EOF on a PostgreSQL restart, a connector crash after the commit; v0.5.0's recovery acknowledges the regressed metadata LSN below the slot and the == poll never matches")
            } else {
                (Holds, "the loop exits only at ClientXLogPos >= CurrentWalPosition >= confirmed_flush, so #862's keepalive regression never reaches AcknowledgeLSN (within these bounds; the road found needs txns >= 3, syncs >= 3, crashes = 2, keepalive=on, v0.5.0)")
            }
        }
        "no-lsn-mismatch" => {
            if !data {
                return (Holds, NO_DATA);
            }
            if !later_run {
                return (Holds, NO_LATER_RUN);
            }
            match c.variant {
                V050 | Pr864 if connector_crash => (Violated, "OLake #853: the state file is written before the acknowledgement; a crash between them leaves the state ahead of the slot"),
                Pr854 if connector_crash => (Violated, "the #998 window: #854 acknowledges before the state write and has no 2PC recovery skip, so a crash between them leaves the slot ahead of the state"),
                V050 | Pr864 if pg_crash => (Violated, "OLake #853 through a PostgreSQL restart: EOF ends the stream loop with nil, PostCDC writes the state, then the acknowledgement fails on the dead connection (a restart after a completed ack takes it back as well)"),
                _ if pg_crash => (Violated, "postgres-live.md §3: an acknowledgement that does not move restart_lsn lives in memory only (a walsender acknowledgement does not even dirty the slot, so a checkpoint does not save it); a PostgreSQL restart takes the slot back below the state file"),
                Master if connector_crash => (Holds, "OLake #870 + #865/#998: ack before state, and a crash after the commit is a recovery sync that skips validation"),
                _ => (Holds, NO_FAULT),
            }
        }
        "reach-sync-complete" => reached(data, NO_DATA),
        "reach-duplicate" => match c.variant {
            Pr854 => reached(data && later_run && (connector_crash || pg_crash), NO_FAULT),
            // A keepalive regression cut short by a PostgreSQL restart (EOF) commits and writes
            // the regressed LSN as state; a third run validates it and streams again.
            V050 if regression && pg_crash && c.syncs >= 3 => (Holds, WITNESS),
            _ => (Violated, "2PC: the destination metadata makes a rerun a recovery sync that writes nothing again, so this single-stream workload never duplicates"),
        },
        "reach-crash-after-commit" => reached(connector_crash, NO_FAULT),
        "reach-crash-after-ack" => match c.variant {
            V050 | Pr864 => (Violated, "v0.5.0's order ends with the acknowledgement: a crash after it is a crash after the sync"),
            Master | Pr854 => reached(connector_crash, NO_FAULT),
        },
        "reach-crash-after-state" => match c.variant {
            Master | Pr854 => (Violated, "#870's order ends with the state write: a crash after it is a crash after the sync"),
            V050 | Pr864 => reached(connector_crash, NO_FAULT),
        },
        "reach-recovery-sync" => match c.variant {
            Pr854 => (Violated, "#854 predates the 2PC refactor: the destination records no LSN, so there is no recovery sync"),
            _ => reached(connector_crash && data && later_run, NO_FAULT),
        },
        "reach-pg-crash-after-ack" => reached(pg_crash && data, NO_FAULT),
        "reach-keepalive-regression" => match c.variant {
            Pr864 => (Violated, "#864: a keepalive only moves ClientXLogPos forward"),
            _ => reached(regression, "a regression needs a second stream that starts above restart_lsn and waits for a later transaction (txns >= 2, syncs >= 2)"),
        },
        other => unreachable!("olake-sync has no property {other}"),
    }
}
