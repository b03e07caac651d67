//! The verdicts upstream code leads us to expect of `olake-bootstrap`: the regression suite's
//! table, with the reason for each.

use walcheck_model::olake::Variant;
use walcheck_model::pg::Role;
use walcheck_properties::verdict::Verdict;
use walcheck_properties::system::FairnessChoice;

use super::Config;

/// The properties this table has a row for.
pub(super) const ROWS: &[&str] = &[
    "state-matches-slot",
    "no-lsn-mismatch",
    "wal-pointers-ordered",
    "slot-pointers-ordered",
    "bootstrap-eventually-completes",
    "reach-write-ahead-at-read",
    "reach-advance-clamped",
    "reach-bootstrap-complete",
    "reach-standby-bootstrap",
    "reach-connector-crash",
    "reach-pg-crash-after-advance",
];

/// Why `wal-pointers-ordered` holds.
const WAL_ORDERED: &str =
    "PostgreSQL 15 xlog.c keeps insert >= write >= flush; a standby replays only what it flushed";

/// Why `slot-pointers-ordered` holds.
const SLOT_ORDERED: &str =
    "PostgreSQL 15 slotfuncs.c clamps the advance to flush or replay; a slot is saved from memory";

/// What upstream code leads us to expect of `olake-bootstrap`, given every bound that decides it:
/// the variant and role, whether any WAL is written (`statements`), whether a fault can happen
/// (`faults`, `crashes`), and whether a later run validates what a crash left (`syncs`).
pub(super) fn verdict(c: &Config, property: &str) -> (Verdict, &'static str) {
    use Verdict::{Holds, Violated};
    let standby = c.server == Role::Standby;
    let wal = c.statements > 0;
    let connector_crash = c.faults.connector_crash() && c.crashes > 0;
    let pg_crash = c.faults.pg_crash() && c.crashes > 0;
    let later_run = c.syncs > 1;
    let no_standby_read = c.variant == Variant::Pr854 && standby;
    const NO_STANDBY_READ: &str =
        "#854 predates #1070: pg_current_wal_lsn() fails on a standby (recovery is in progress), so it never bootstraps there";
    const NO_WAL: &str =
        "statements=0: no WAL is written, so write never passes flush and the slot never moves";
    const NO_FAULT: &str = "crashes=0: no fault can be injected";
    const NO_LATER_RUN: &str = "syncs=1: no later run validates the state the crash left behind";
    let reached = |possible: bool, why_not: &'static str| {
        if possible {
            (
                Holds,
                "witness: the behaviour the safety verdicts depend on is reachable",
            )
        } else {
            (Violated, why_not)
        }
    };
    match property {
        "wal-pointers-ordered" => return (Holds, WAL_ORDERED),
        "slot-pointers-ordered" => return (Holds, SLOT_ORDERED),
        "reach-write-ahead-at-read" | "reach-advance-clamped" => return reached(wal, NO_WAL),
        "reach-bootstrap-complete" | "reach-standby-bootstrap" => {
            return reached(!no_standby_read, NO_STANDBY_READ)
        }
        "reach-connector-crash" => return reached(connector_crash, NO_FAULT),
        "reach-pg-crash-after-advance" => {
            return match (no_standby_read, wal) {
                (true, _) => (Violated, NO_STANDBY_READ),
                (false, false) => (Violated, NO_WAL),
                (false, true) => reached(pg_crash, NO_FAULT),
            };
        }
        "bootstrap-eventually-completes" => {
            return match (c.fairness, c.variant, standby, wal) {
                (FairnessChoice::None, Variant::Pr1084, false, true) => (
                    Violated,
                    "no fairness: #1084 re-sends the clamped advance every 100 ms and the walwriter may never flush, a cycle that never leaves the bootstrap",
                ),
                (FairnessChoice::None, ..) => {
                    (Holds, "no retry loop here: every bootstrap step leaves the bootstrap or moves on")
                }
                (FairnessChoice::Declared, ..) => (
                    Holds,
                    "weakly fair walwriter: within wal_writer_delay the flush passes W0, and #1084's next advance reaches it",
                ),
            };
        }
        "state-matches-slot" | "no-lsn-mismatch" => {}
        other => unreachable!("olake-bootstrap has no property {other}"),
    }
    // Violated in the crashed run itself; the mismatch needs a later run to validate.
    let crash_window = |why: &'static str| {
        if property == "no-lsn-mismatch" && !later_run {
            (Holds, NO_LATER_RUN)
        } else {
            (Violated, why)
        }
    };
    match (c.variant, standby) {
        _ if no_standby_read => (Holds, NO_STANDBY_READ),
        _ if !wal => (Holds, NO_WAL),
        (Variant::Master, false) => (
            Violated,
            "OLake #1084: the state gets pg_current_wal_lsn() (the write pointer), the advance clamps to flush, end_lsn is discarded",
        ),
        (Variant::Pr854, false) => {
            (Violated, "OLake #854 advances first but still discards end_lsn: the clamp to flush goes unnoticed")
        }
        (Variant::Master, true) if connector_crash || pg_crash => crash_window(
            "OLake #853: master writes the state before the advance; a crash between them leaves the state ahead of the slot",
        ),
        (Variant::Master, true) => {
            (Holds, "on a standby the target is the replay pointer, which the advance's clamp cannot undercut")
        }
        (Variant::Pr1084, _) if pg_crash => crash_window(
            "slotfuncs.c: an advance that does not move restart_lsn is saved only at the next checkpoint; a PostgreSQL crash before it takes the slot back below the state file",
        ),
        (Variant::Pr1084, _) => {
            (Holds, "OLake #1084: advances until end_lsn reaches the target, and only then writes the state")
        }
        (Variant::Pr854, true) => unreachable!("handled as no_standby_read"),
    }
}
