//! The conformance rules of a slot's and a stream's limits: `max_slot_wal_keep_size`
//! invalidating, at a checkpoint, a slot that retains more WAL than it allows (every read of the
//! invalidated slot then failing), a clean stop waiting for a client that does not confirm
//! until `wal_sender_timeout` ends its stream (new sessions refused meanwhile), and
//! `wal_sender_timeout` ending an idle stream with the server up.
//!
//! Each drives the server into the schedule that shows the behaviour and predicts with the
//! model's functions: the language's own (`walcheck_model::pg::lifecycle::slot_obsolete`,
//! [`walcheck_model::pg::Slot::invalidate`], [`walcheck_model::pg::Walsender::at_shutdown`]),
//! and [`timed_out`], the timed rule the language's untimed `WalSenderTimeout` and `StreamDrop`
//! stand for (they end the stream, and change nothing else).

use std::time::{Duration, Instant};

use walcheck_model::pg::lifecycle::slot_obsolete;
use walcheck_model::pg::stream::timed_out;
use walcheck_model::pg::DurableSlot;
use walcheck_model::Lsn;

use crate::pg_error::{db_error, pg_message};
use crate::protocol::{
    check_update, redo_lsn, slot_now, stream_and_check, stream_ended, three_txns, update,
};
use crate::replication::{CopyMessage, ReplicationClient};
use crate::rules::{ensure, pass, throwaway_only, Outcome};
use crate::server::PgServer;
use crate::session::{parse_lsn, Session, PUBLICATION};

/// `max_slot_wal_keep_size` in MiB for the rule: two segments of the default 16 MiB.
const KEEP_MB: u64 = 32;

/// The table whose rows give each segment switch some WAL, dropped with the session.
const ROWS_TABLE: &str = "walcheck_keep_rows";

/// SQLSTATE `object_not_in_prerequisite_state`: every read of an invalidated slot.
const NOT_IN_PREREQUISITE_STATE: &str = "55000";

/// `max_slot_wal_keep_size` at a CHECKPOINT: with the slot one, then two segments behind the
/// redo pointer it is kept (two is the limit); three behind it is invalidated, its
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
    // One segment at a time: one and two behind are within the limit, three past it.
    for switches in [1, 1, 1] {
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
    ensure(seen.iter().map(|s| s.1).eq([false, false, true]), || {
        format!("the schedule did not show a slot kept at the limit, then invalidated: {seen:?}")
    })?;
    let errors = read_invalidated(server, &mut client, session.slot_name())?;
    pass(
        &session,
        server,
        "slot_invalidated_by_max_slot_wal_keep_size",
        format!(
            "limit {keep} segment(s): kept at redo {} and {}, invalidated at redo {}; {errors}",
            seen[0].0, seen[1].0, seen[2].0
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

/// `wal_sender_timeout` on the rule's replication connection.
const TIMEOUT_MS: u64 = 3_000;

/// What a clean stop did to a stream whose client never replied, in ms after its last message.
#[derive(Debug, Default)]
struct Unanswered {
    /// The first keepalive requesting a reply: its `wal_end`, and when.
    asked: Option<(Lsn, u64)>,
    /// A new session's refusal (its SQLSTATE and message), and when.
    refused: Option<(String, String, u64)>,
    /// When the stream ended.
    ended: Option<u64>,
    /// When `pg_ctl stop` returned.
    stopped: u64,
}

/// A clean stop reaches a stream whose client has not confirmed what it was sent, and the client
/// then stays silent: the walsender asks for a reply and waits, `pg_ctl stop -m fast` with it; a
/// new session is refused meanwhile (SQLSTATE 57P03, the language's `PgError::ShuttingDown`);
/// `wal_sender_timeout` after the client's last message the walsender gives up, the stream
/// ends, and only then does the stop complete (the language's `WalSenderTimeout`, then
/// `PgStopped`). After the start the slot is as the model's clean restart has it. Predicted by
/// [`walcheck_model::pg::Walsender::at_shutdown`], [`timed_out`] and [`DurableSlot::clean_restart_on`].
pub fn shutdown_timeout_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it stops the server") {
        return Ok(skip);
    }
    let mut session = Session::open_pgoutput(server, "walcheck_stop_timeout")?;
    let txns = three_txns(&mut session)?;
    let options = format!("-c wal_sender_timeout={TIMEOUT_MS}ms");
    let mut streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, &options)?;
    let slot = slot_now(&mut session)?;
    let mut model = DurableSlot::created(slot);
    // The client reports the slot's own position: nothing moves, and the timeout starts now.
    // Timed from before the send: the server's `last_reply_timestamp` is taken at or after it.
    let cf = slot.confirmed_flush;
    let replied = Instant::now();
    streamed.client.send_status(cf, cf, cf, false)?;
    let waits = streamed.sender.at_shutdown(cf, cf).is_some();
    let seen = stop_unanswered(server, &mut streamed.client, replied)?;
    check_unanswered(&seen, waits)?;
    let restarted = session.start_after_clean_stop(server)?;
    model.clean_restart_on(session.model_version());
    ensure(restarted == model.slot.confirmed_flush, || {
        format!(
            "after the start confirmed_flush {restarted}, the model says {}",
            model.slot.confirmed_flush
        )
    })?;
    let (asked_at, asked_ms) = seen.asked.unwrap_or_default();
    let (code, message, refused_ms) = seen.refused.unwrap_or_default();
    pass(
        &session,
        server,
        "shutdown_waits_until_wal_sender_timeout",
        format!(
            "wal_sender_timeout {TIMEOUT_MS} ms, confirmed {cf}, sent {asked_at}: reply requested \
             at {asked_ms} ms; a new session at {refused_ms} ms: {code} {message}; stream ended \
             at {} ms, pg_ctl stop returned at {} ms; after the start confirmed_flush {restarted}",
            seen.ended.unwrap_or_default(),
            seen.stopped
        ),
    )
}

/// The server's answer held to the model's: the walsender asked and waited (`waits`), a session
/// was refused while it did, the stream ended once [`timed_out`], and the stop after it.
fn check_unanswered(seen: &Unanswered, waits: bool) -> Result<(), String> {
    let ended = seen
        .ended
        .ok_or_else(|| format!("the stream never ended: {seen:?}"))?;
    ensure(waits && seen.asked.is_some(), || {
        format!("a stopping walsender waits for the reply: the model says {waits}; {seen:?}")
    })?;
    ensure(
        seen.refused
            .as_ref()
            .is_some_and(|r| r.0 == SHUTTING_DOWN && r.2 < ended),
        || format!("no session refused with {SHUTTING_DOWN} while the stream waited: {seen:?}"),
    )?;
    ensure(
        timed_out(ended, TIMEOUT_MS) && !timed_out(ended.saturating_sub(TOLERANCE_MS), TIMEOUT_MS),
        || format!("the stream ended at {ended} ms; the model says at {TIMEOUT_MS} ms"),
    )?;
    ensure(seen.stopped >= ended, || {
        format!(
            "pg_ctl stop returned at {} ms, before the stream ended at {ended} ms",
            seen.stopped
        )
    })
}

/// SQLSTATE `cannot_connect_now`: a new session while the server shuts down.
const SHUTTING_DOWN: &str = "57P03";

/// How late after the timeout the walsender may notice it (its sleep, the reads' 100 ms).
const TOLERANCE_MS: u64 = 1_000;

/// Stops `server` with `pg_ctl stop -m fast` while reading `client`'s stream, never replying,
/// for 20 s at most; each read a new session is tried until one is refused.
fn stop_unanswered(
    server: &PgServer,
    client: &mut ReplicationClient,
    replied: Instant,
) -> Result<Unanswered, String> {
    const STOP_MS_MAX: u64 = 20_000;
    let ms = |at: Instant| at.duration_since(replied).as_millis() as u64;
    std::thread::scope(|scope| -> Result<_, String> {
        let stopping = scope.spawn(|| server.stop("fast").map(|()| Instant::now()));
        let deadline = Instant::now() + Duration::from_millis(STOP_MS_MAX);
        let mut seen = Unanswered::default();
        while Instant::now() < deadline && seen.ended.is_none() {
            match client.recv(Duration::from_millis(100)) {
                Ok(Some(CopyMessage::Keepalive {
                    wal_end,
                    reply_requested: true,
                })) if seen.asked.is_none() => seen.asked = Some((wal_end, ms(Instant::now()))),
                Ok(_) => {}
                // The connection closing: the walsender gave up.
                Err(_) => seen.ended = Some(ms(Instant::now())),
            }
            if seen.ended.is_none() && seen.refused.is_none() {
                // A new session: accepted (and closed at once), or refused.
                if let Err((code, message)) =
                    server.try_connect().map(drop).map_err(|e| db_error(&e))
                {
                    seen.refused = Some((code, message, ms(Instant::now())));
                }
            }
        }
        let stopped = stopping.join().map_err(|_| "pg_ctl stop panicked")??;
        seen.stopped = ms(stopped);
        Ok(seen)
    })
}

/// `wal_sender_timeout` on an idle stream, the server up: the client confirms the second of
/// three transactions, then stays silent; `wal_sender_timeout` after that the walsender ends the
/// stream (the language's `StreamDrop`), releasing the slot with the confirmation in memory, and
/// a new `START_REPLICATION` streams from it at once: the third transaction alone. Predicted by
/// [`timed_out`], the model's status update ([`check_update`]) and its walsender
/// ([`stream_and_check`]).
pub fn idle_timeout_rule(server: &PgServer) -> Result<Outcome, String> {
    const IDLE_TIMEOUT_MS: u64 = 2_000;
    let mut session = Session::open_pgoutput(server, "walcheck_idle_timeout")?;
    let txns = three_txns(&mut session)?;
    let options = format!("-c wal_sender_timeout={IDLE_TIMEOUT_MS}ms");
    let mut streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, &options)?;
    let acked = txns[1].end_lsn;
    // Timed from before the send: the server's `last_reply_timestamp` is taken at or after it.
    let replied = Instant::now();
    let confirmed = check_update(
        &mut session,
        &mut streamed.client,
        update(acked, acked, acked),
    )?;
    let deadline = replied + Duration::from_millis(5 * IDLE_TIMEOUT_MS);
    let mut ended = None;
    while Instant::now() < deadline && ended.is_none() {
        if streamed.client.recv(Duration::from_millis(50)).is_err() {
            ended = Some(replied.elapsed().as_millis() as u64);
        }
    }
    let ended = ended.ok_or("the idle stream was never ended")?;
    ensure(
        timed_out(ended, IDLE_TIMEOUT_MS)
            && !timed_out(ended.saturating_sub(TOLERANCE_MS), IDLE_TIMEOUT_MS),
        || {
            format!("the idle stream ended {ended} ms after the last reply; the model says {IDLE_TIMEOUT_MS} ms")
        },
    )?;
    stream_ended(&mut session)?;
    let kept = session.confirmed_flush()?;
    ensure(kept == confirmed, || {
        format!("after the timeout confirmed_flush {kept}; the model keeps {confirmed} in memory")
    })?;
    let again = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let begins = again.begins.len();
    again.client.close()?;
    stream_ended(&mut session)?;
    pass(
        &session,
        server,
        "wal_sender_timeout_ends_idle_stream",
        format!(
            "wal_sender_timeout {IDLE_TIMEOUT_MS} ms, confirmed {confirmed}, then silent: stream \
             ended {ended} ms after the reply, confirmed_flush {kept} kept; a new stream at once \
             sent {begins} transaction(s)"
        ),
    )
}
