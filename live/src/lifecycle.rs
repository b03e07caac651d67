//! The conformance rules of a slot's limits: `max_slot_wal_keep_size` invalidating, at a
//! checkpoint, a slot that retains more WAL than it allows, and every read of the invalidated
//! slot failing.
//!
//! Each drives the server into the schedule that shows the behaviour and predicts with the
//! model's function that the language uses (`walcheck_model::pg::lifecycle::slot_obsolete`,
//! [`walcheck_model::pg::Slot::invalidate`]).

use walcheck_model::pg::lifecycle::slot_obsolete;
use walcheck_model::Lsn;

use crate::durability::throwaway_only;
use crate::pg_error::{db_error, pg_message};
use crate::protocol::{redo_lsn, slot_now};
use crate::replication::ReplicationClient;
use crate::rules::{ensure, pass, Outcome};
use crate::server::PgServer;
use crate::session::{parse_lsn, Session, PUBLICATION};

/// `max_slot_wal_keep_size` in MiB for the rule: two segments of the default 16 MiB.
const KEEP_MB: u64 = 32;

/// The table whose rows give each segment switch some WAL, dropped with the session.
const ROWS_TABLE: &str = "walcheck_keep_rows";

/// SQLSTATE `object_not_in_prerequisite_state`: every read of an invalidated slot.
const NOT_IN_PREREQUISITE_STATE: &str = "55000";

/// `max_slot_wal_keep_size` at a CHECKPOINT: with the slot one segment behind the redo pointer
/// it is kept; three segments later (more than the limit's two) it is invalidated, its
/// `restart_lsn` NULL; then SQL decoding, an advance and `START_REPLICATION` on it each fail
/// with SQLSTATE 55000 (the language's `PgError::ChangesInvalidated`, `AdvanceInvalidated`,
/// `StreamInvalidated`; the message differs by release). Predicted by [`slot_obsolete`] with
/// the checkpoint's redo pointer, and [`walcheck_model::pg::Slot::invalidate`].
pub fn slot_invalidation_rule(server: &PgServer) -> Result<Outcome, String> {
    let what = "it sets max_slot_wal_keep_size and switches WAL segments";
    if let Some(skip) = throwaway_only(server, what) {
        return Ok(skip);
    }
    let mut session = Session::open(server, "walcheck_keep_size")?;
    session.clean_up_with(format!("DROP TABLE IF EXISTS {ROWS_TABLE}"));
    session.alter_system(
        server,
        &[("max_slot_wal_keep_size", &format!("'{KEEP_MB}MB'"))],
    )?;
    let mut client = server.connect()?;
    client
        .batch_execute(&format!("CREATE TABLE {ROWS_TABLE} (id int)"))
        .map_err(|e| format!("create table {ROWS_TABLE}: {}", pg_message(&e)))?;
    let segment = segment_bytes(&mut client)?;
    let keep = (KEEP_MB << 20) / segment;
    let mut slot = slot_now(&mut session)?;
    let mut seen = Vec::new();
    for switches in [1, 3] {
        switch_segments(&mut client, switches)?;
        client
            .batch_execute("CHECKPOINT")
            .map_err(|e| format!("CHECKPOINT: {}", pg_message(&e)))?;
        let redo = redo_lsn(&mut client)?;
        let predicted = slot_obsolete(slot.restart_lsn, redo, Some(keep), segment);
        if predicted {
            slot.invalidate();
        }
        let restart = restart_lsn(&mut client, session.slot_name())?;
        ensure(restart == slot.restart_lsn, || {
            format!(
                "{switches} more segment(s), CHECKPOINT (redo {redo}): restart_lsn {restart}, \
                 the model says {} (invalidated: {predicted})",
                slot.restart_lsn
            )
        })?;
        seen.push((redo, predicted));
    }
    ensure(seen.iter().map(|s| s.1).eq([false, true]), || {
        format!("the schedule did not show a kept slot, then an invalidated one: {seen:?}")
    })?;
    let errors = read_invalidated(server, &mut client, session.slot_name())?;
    pass(
        &session,
        server,
        "slot_invalidated_by_max_slot_wal_keep_size",
        format!(
            "limit {keep} segment(s): kept at redo {}, invalidated at redo {}; {errors}",
            seen[0].0, seen[1].0
        ),
    )
}

/// The server's WAL segment size in bytes.
fn segment_bytes(client: &mut postgres::Client) -> Result<u64, String> {
    let bytes: i64 = client
        .query_one(
            "SELECT pg_size_bytes(current_setting('wal_segment_size'))",
            &[],
        )
        .map_err(|e| format!("wal_segment_size: {}", pg_message(&e)))?
        .get(0);
    u64::try_from(bytes).map_err(|e| e.to_string())
}

/// Ends the current WAL segment `n` times, each after a row of WAL (a switch with nothing
/// written since the last one does nothing).
fn switch_segments(client: &mut postgres::Client, n: usize) -> Result<(), String> {
    for _ in 0..n {
        client
            .batch_execute(&format!(
                "INSERT INTO {ROWS_TABLE} VALUES (1); SELECT pg_switch_wal()"
            ))
            .map_err(|e| format!("pg_switch_wal: {}", pg_message(&e)))?;
    }
    Ok(())
}

/// The slot's `restart_lsn` from `pg_replication_slots`, `0/0` for NULL (invalidated).
fn restart_lsn(client: &mut postgres::Client, slot: &str) -> Result<Lsn, String> {
    let text: Option<String> = client
        .query_one(
            "SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
            &[&slot],
        )
        .map_err(|e| format!("read slot {slot}: {}", pg_message(&e)))?
        .get(0);
    text.map_or(Ok(Lsn::INVALID), |t| parse_lsn(&t))
}

/// SQL decoding, an advance and `START_REPLICATION` on the invalidated slot `slot`: each must
/// fail with SQLSTATE 55000. Returns their messages.
fn read_invalidated(
    server: &PgServer,
    client: &mut postgres::Client,
    slot: &str,
) -> Result<String, String> {
    let mut messages = Vec::new();
    for (call, sql) in [
        (
            "pg_logical_slot_get_changes",
            "SELECT count(*) FROM pg_logical_slot_get_changes($1, NULL, NULL)",
        ),
        (
            "pg_replication_slot_advance",
            "SELECT end_lsn::text FROM pg_replication_slot_advance($1, pg_current_wal_lsn())",
        ),
    ] {
        let (code, message) = match client.query_one(sql, &[&slot]) {
            Ok(_) => return Err(format!("{call} on the invalidated slot succeeded")),
            Err(e) => db_error(&e),
        };
        ensure(code == NOT_IN_PREREQUISITE_STATE, || {
            format!("{call} on the invalidated slot: {code} {message}")
        })?;
        messages.push(format!("{call}: {message}"));
    }
    let mut replication =
        ReplicationClient::connect(&server.replication_target(), "").map_err(|e| e.to_string())?;
    match replication.start_replication(slot, Lsn::INVALID, PUBLICATION) {
        Ok(()) => return Err("START_REPLICATION on the invalidated slot succeeded".into()),
        Err(e) => {
            ensure(e.sqlstate == NOT_IN_PREREQUISITE_STATE, || {
                format!("START_REPLICATION on the invalidated slot: {e}")
            })?;
            messages.push(format!("START_REPLICATION: {}", e.message));
        }
    }
    Ok(messages.join("; "))
}
