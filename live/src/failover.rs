//! The conformance rules of a physical standby taking over from its primary
//! (`walcheck_model::pg::failover`): the WAL the standby received and its promotion, the copy of
//! a failover slot that PostgreSQL 17's slot sync keeps on the standby, and the primary's
//! logical decoding waiting for the standby named in `synchronized_standby_slots`.
//!
//! Each builds a standby of the primary ([`PgServer::start_standby_with`]), drives both into the
//! schedule that shows the behaviour, and compares what the servers answer with the model's
//! function. No observed trace: the observed trace's steps are one server's, and these rules
//! read two.

use std::time::{Duration, Instant};

use walcheck_model::pg::failover::{
    promote, promoted_slot, promoted_timeline, send_limit, standby_receive, sync_slot,
};
use walcheck_model::pg::{PgVersion, SavedSlot, Slot};
use walcheck_model::Lsn;

use crate::durability::lsn_of;
use crate::pg_error::{db_error, pg_message};
use crate::replication::ReplicationClient;
use crate::rules::{ensure, throwaway_only, Outcome};
use crate::server::PgServer;
use crate::session::QUERY_CANCELED;

/// The table these rules commit rows to, dropped when each ends.
const ROWS_TABLE: &str = "walcheck_failover_rows";
/// The primary's logical slot in [`promotion_rule`]: a plain one, no failover.
const PLAIN_SLOT: &str = "walcheck_promotion";
/// The primary's logical slot with `failover` on (17+).
const FAILOVER_SLOT: &str = "walcheck_failover";
/// The primary's physical slot the standby streams through, named in
/// `synchronized_standby_slots`.
const STANDBY_SLOT: &str = "walcheck_failover_standby";
/// How long a rule waits for a standby to receive WAL, in seconds.
const WAIT_S: u64 = 10;
/// How long [`failover_slot_waits_rule`] lets its decoding call wait before cancelling it.
const DECODING_WAIT_MS: u64 = 1_000;

/// What a rule changed on the primary, undone when the rule ends, passed or failed (declared
/// before the standby, so that the standby is stopped first and its walsender gone): the
/// primary started again if the rule stopped it, its settings reset, its slots and table
/// dropped.
struct OnPrimary<'a> {
    primary: &'a PgServer,
    settings: &'static [&'static str],
    slots: &'static [&'static str],
}

impl Drop for OnPrimary<'_> {
    fn drop(&mut self) {
        if !self.primary.is_running() {
            let _ = self.primary.start();
        }
        let Ok(mut client) = self.primary.connect() else {
            return;
        };
        for name in self.settings {
            let _ = client.batch_execute(&format!("ALTER SYSTEM RESET {name}"));
        }
        let _ = client.batch_execute("SELECT pg_reload_conf()");
        for slot in self.slots {
            // A standby's walsender may outlive the standby's stop by a moment.
            let deadline = Instant::now() + Duration::from_secs(5);
            while client
                .batch_execute(&format!(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots \
                     WHERE slot_name = '{slot}'"
                ))
                .is_err()
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = client.batch_execute(&format!("DROP TABLE IF EXISTS {ROWS_TABLE}"));
    }
}

/// Waits (at most [`WAIT_S`]) until `done` says so; `what` names it in the error.
fn wait_for(what: &str, mut done: impl FnMut() -> Result<bool, String>) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(WAIT_S);
    while !done()? {
        if Instant::now() > deadline {
            return Err(format!("{what}: not within {WAIT_S} s"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Runs `sql` on `client`, its error worded as PostgreSQL's.
fn execute(client: &mut postgres::Client, sql: &str) -> Result<(), String> {
    client
        .batch_execute(sql)
        .map_err(|e| format!("{sql}: {}", pg_message(&e)))
}

/// One transaction of ten rows into [`ROWS_TABLE`], committed synchronously: its xid.
fn commit_rows(client: &mut postgres::Client) -> Result<String, String> {
    execute(
        client,
        &format!("BEGIN; INSERT INTO {ROWS_TABLE} SELECT generate_series(1, 10)"),
    )?;
    let xid: String = client
        .query_one("SELECT txid_current()::text", &[])
        .map_err(|e| format!("txid_current(): {}", pg_message(&e)))?
        .get(0);
    execute(client, "COMMIT")?;
    Ok(xid)
}

/// `pg_last_wal_receive_lsn()` on the standby `client`.
fn received(client: &mut postgres::Client) -> Result<Lsn, String> {
    lsn_of(client, "SELECT pg_last_wal_receive_lsn()::text")
}

/// The standby receiving the primary's flushed WAL: ten rows committed on the primary, then
/// the standby's receive pointer read until it equals the primary's flush pointer, read after
/// it (so that the two readings cannot cross). It must then be `standby_receive`'s, from what it
/// had before the commit. Returns the primary's flush pointer.
fn standby_receives_flushed(
    on_primary: &mut postgres::Client,
    on_standby: &mut postgres::Client,
) -> Result<Lsn, String> {
    let before = received(on_standby)?;
    commit_rows(on_primary)?;
    let (mut now, mut flush) = (before, Lsn::INVALID);
    wait_for("the standby receiving the primary's flushed WAL", || {
        now = received(on_standby)?;
        flush = lsn_of(on_primary, "SELECT pg_current_wal_flush_lsn()::text")?;
        Ok(now == flush)
    })?;
    let predicted = standby_receive(before, flush);
    ensure(now == predicted, || {
        format!(
            "the standby received {now} (from {before}) with the primary flushed to {flush}; \
             the model says {predicted}"
        )
    })?;
    Ok(flush)
}

/// The primary's plain logical slot [`PLAIN_SLOT`] and a transaction on [`ROWS_TABLE`] after
/// it.
fn plain_slot_and_rows(primary: &PgServer) -> Result<(), String> {
    let mut on_primary = primary.connect()?;
    // Apart: a logical slot cannot be created in a transaction that has written.
    execute(
        &mut on_primary,
        &format!("CREATE TABLE {ROWS_TABLE} (id int)"),
    )?;
    execute(
        &mut on_primary,
        &format!("SELECT pg_create_logical_replication_slot('{PLAIN_SLOT}', 'test_decoding')"),
    )?;
    commit_rows(&mut on_primary)?;
    Ok(())
}

/// A transaction on the promoted server: `pg_last_wal_replay_lsn()` must stay at `replay`.
/// Returns where the WAL was written to.
fn replay_frozen(on_promoted: &mut postgres::Client, replay: Lsn) -> Result<Lsn, String> {
    commit_rows(on_promoted)?;
    let written = lsn_of(on_promoted, "SELECT pg_current_wal_lsn()::text")?;
    let after = lsn_of(on_promoted, "SELECT pg_last_wal_replay_lsn()::text")?;
    ensure(after == replay, || {
        format!(
            "after the promoted server wrote to {written}, pg_last_wal_replay_lsn() moved from \
             {replay} to {after}"
        )
    })?;
    Ok(written)
}

/// A promoted standby's WAL (`failover::promote`): a primary with a logical slot (no failover)
/// and some WAL; a standby of it receives the primary's flushed WAL, up to its flush pointer
/// ([`standby_receives_flushed`]); the primary is stopped and the standby promoted. Then
/// `pg_last_wal_replay_lsn()` is where the WAL received ends (the model's replay pointer),
/// `pg_current_wal_lsn()` at or past it (the new timeline's end-of-recovery and checkpoint
/// records, below a page and not modelled), the replay pointer stays there while the promoted
/// server writes, and the primary's logical slot is not on it (`promoted_slot(None)`: 15 and 16
/// copy no logical slot to a standby, 17 only a failover slot, and only with slot sync).
///
/// The replay pointer is the end of the last record replayed (`lastReplayedEndRecPtr`), the
/// receive pointer the end of the bytes received: the walsender sends up to the primary's flush
/// pointer, which may lie inside a record (the walwriter flushes whole pages), and then the
/// promotion replays up to the record before it and starts the new timeline there
/// (`xlogrecovery.c:FinishWalRecovery`'s `EndOfLog`). Measured on 17.10, with the primary's
/// flush pointer on a page boundary inside an asynchronous commit's record and the primary
/// stopped with `-m immediate`: received 0/1590000, promoted with `pg_last_wal_replay_lsn()`
/// 0/158FE18 and the new timeline's WAL from there (`pg_current_wal_lsn()` 0/158FE50). The
/// model's WAL is whole records, so the rule stops the primary with `-m fast`: its WAL then ends
/// with the shutdown checkpoint's record, and its walsender sends all of it and waits for the
/// standby to have written it before it exits (`walsender.c:WalSndDone`, 15), so what the
/// standby received ends with a whole record and the two pointers are compared exactly.
pub fn promotion_rule(primary: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(primary, "it stops the primary and promotes a standby") {
        return Ok(skip);
    }
    let _undo = OnPrimary {
        primary,
        settings: &[],
        slots: &[PLAIN_SLOT],
    };
    plain_slot_and_rows(primary)?;
    let standby = PgServer::start_standby(primary)?;
    let mut on_standby = standby.connect()?;
    let flush = standby_receives_flushed(&mut primary.connect()?, &mut on_standby)?;
    let before = timeline_of(primary)?;
    primary.stop("fast")?;
    let received = received(&mut on_standby)?;
    standby.promote()?;
    let predicted = promote(received);
    let after = timeline_of(&standby)?;
    ensure(after == promoted_timeline(before), || {
        format!(
            "IDENTIFY_SYSTEM's timeline {before} on the primary, {after} once promoted; the model \
             says {}",
            promoted_timeline(before)
        )
    })?;
    let replay = lsn_of(&mut on_standby, "SELECT pg_last_wal_replay_lsn()::text")?;
    let current = lsn_of(&mut on_standby, "SELECT pg_current_wal_lsn()::text")?;
    ensure(
        replay == predicted.replay && current >= predicted.flush,
        || {
            format!(
                "promoted with {received} received: pg_last_wal_replay_lsn() {replay}, \
                 pg_current_wal_lsn() {current}; the model says replay {} and the WAL from {}",
                predicted.replay, predicted.flush
            )
        },
    )?;
    let written = replay_frozen(&mut on_standby, replay)?;
    let slot = slot_on(&mut on_standby, PLAIN_SLOT)?;
    let predicted_slot = promoted_slot(None);
    ensure(slot.is_none() && predicted_slot.is_none(), || {
        format!("the primary's slot {PLAIN_SLOT} is on the promoted server: {slot:?}")
    })?;
    Ok(Outcome::Pass {
        detail: format!(
            "the standby received the primary's flush {flush}; primary stopped (fast): \
             received {received}; promoted: timeline {before} -> {after}, pg_last_wal_replay_lsn() {replay}, \
             pg_current_wal_lsn() {current} (+{} bytes); after a commit to {written}: replay \
             still there; slot {PLAIN_SLOT} (failover {}): not there",
            current.bytes() - replay.bytes(),
            if PgVersion(primary.version_num()).has_failover_slots() {
                "off"
            } else {
                "not before 17"
            }
        ),
        trace: None,
    })
}

/// The timeline `IDENTIFY_SYSTEM` reports on `server`.
fn timeline_of(server: &PgServer) -> Result<u32, String> {
    let mut client = ReplicationClient::connect(&server.replication_target(), "")?;
    let timeline = client.identify_system()?.timeline;
    client.close()?;
    Ok(timeline)
}

/// `(confirmed_flush_lsn, restart_lsn)` of slot `name` on `client`'s server, `None` when it has
/// no such slot.
fn slot_on(client: &mut postgres::Client, name: &str) -> Result<Option<SavedSlot>, String> {
    let rows = client
        .query(
            "SELECT confirmed_flush_lsn::text, restart_lsn::text FROM pg_replication_slots \
             WHERE slot_name = $1::text",
            &[&name],
        )
        .map_err(|e| format!("pg_replication_slots: {}", pg_message(&e)))?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let lsn = |i: usize| -> Result<Lsn, String> {
        let text: Option<String> = row.get(i);
        text.unwrap_or_else(|| "0/0".into())
            .parse()
            .map_err(|e| format!("slot {name}: {}", pg_message(&e)))
    };
    Ok(Some(SavedSlot {
        confirmed_flush: lsn(0)?,
        restart_lsn: lsn(1)?,
    }))
}

/// Why a failover rule does not run on `primary`, when it cannot.
fn failover_skip(primary: &PgServer) -> Option<Outcome> {
    if !PgVersion(primary.version_num()).has_failover_slots() {
        return Some(Outcome::Skip {
            reason: format!(
                "failover slots, slot sync and synchronized_standby_slots need PostgreSQL >= 17; \
                 this server is {}",
                primary.version_num()
            ),
        });
    }
    throwaway_only(
        primary,
        "it builds a standby and sets synchronized_standby_slots",
    )
}

/// A standby streaming from `primary` as 17's slot sync needs it: through the physical slot
/// [`STANDBY_SLOT`] (`primary_slot_name`), with `hot_standby_feedback` (every server here has
/// it) and a `dbname` in `primary_conninfo`; then `synchronized_standby_slots` naming that slot
/// on the primary (set after the standby is made, so that a copied standby does not have it),
/// and [`ROWS_TABLE`] there. Returns the standby and a session on the primary that sees the
/// setting.
fn failover_standby(primary: &PgServer) -> Result<(PgServer, postgres::Client), String> {
    let mut on_primary = primary.connect()?;
    execute(
        &mut on_primary,
        &format!("CREATE TABLE {ROWS_TABLE} (id int)"),
    )?;
    execute(
        &mut on_primary,
        &format!("SELECT pg_create_physical_replication_slot('{STANDBY_SLOT}', true)"),
    )?;
    let conninfo = format!("'{} dbname=postgres'", primary.standby_conninfo());
    let slot = format!("'{STANDBY_SLOT}'");
    let standby = PgServer::start_standby_with(
        primary,
        &[
            ("primary_conninfo", &conninfo),
            ("primary_slot_name", &slot),
        ],
    )?;
    let mut on_primary = primary.connect()?;
    execute(
        &mut on_primary,
        &format!("ALTER SYSTEM SET synchronized_standby_slots = '{STANDBY_SLOT}'"),
    )?;
    execute(&mut on_primary, "SELECT pg_reload_conf()")?;
    // The reload reaches a running session at its next command: wait until this one has it.
    wait_for("synchronized_standby_slots set on the primary", || {
        let value: String = on_primary
            .query_one("SELECT current_setting('synchronized_standby_slots')", &[])
            .map_err(|e| pg_message(&e))?
            .get(0);
        Ok(value == STANDBY_SLOT)
    })?;
    Ok((standby, on_primary))
}

/// The primary's failover slot at rest, as the model reads it (`Slot`): ten rows committed, a
/// running-xacts record logged after them (`pg_log_standby_snapshot()`) and flushed, and all of
/// it consumed with `pg_logical_slot_get_changes`, so that `confirmed_flush` is at the record's
/// end and `restart_lsn` at its start, `catalog_xmin` the next transaction's.
fn failover_slot_at_rest(on_primary: &mut postgres::Client) -> Result<Slot, String> {
    execute(
        on_primary,
        &format!(
            "SELECT pg_create_logical_replication_slot('{FAILOVER_SLOT}', 'test_decoding', \
             false, false, true)"
        ),
    )?;
    commit_rows(on_primary)?;
    // The record is flushed by the walwriter, which it wakes (`XLogSetAsyncXactLSN`); SQL
    // decoding reads only flushed WAL.
    let logged = lsn_of(on_primary, "SELECT pg_log_standby_snapshot()::text")?;
    wait_for("the running-xacts record flushed", || {
        Ok(lsn_of(on_primary, "SELECT pg_current_wal_flush_lsn()::text")? >= logged)
    })?;
    execute(
        on_primary,
        &format!("SELECT count(*) FROM pg_logical_slot_get_changes('{FAILOVER_SLOT}', NULL, NULL)"),
    )?;
    let saved = slot_on(on_primary, FAILOVER_SLOT)?
        .ok_or_else(|| format!("the primary has no slot {FAILOVER_SLOT}"))?;
    Ok(Slot {
        confirmed_flush: saved.confirmed_flush,
        restart_lsn: saved.restart_lsn,
        saved,
    })
}

/// A failover slot's copy on a standby and after its promotion (17+). The primary's slot,
/// created with `failover` and at rest ([`failover_slot_at_rest`]); the standby, streaming
/// through its physical slot ([`failover_standby`]), has received the primary's flushed WAL;
/// `pg_sync_replication_slots()` (one cycle of the slot sync worker) makes the copy `sync_slot`
/// predicts from the primary's slot and the standby's flush: `synced`, not temporary, with the
/// primary's `confirmed_flush` and `restart_lsn`. Promoted, the standby keeps it with those
/// positions (`promoted_slot`) and decodes from it (`pg_logical_slot_peek_changes` returns a
/// transaction committed after the promotion).
///
/// The slot at rest is the model's case. PostgreSQL keeps a new copy temporary (no copy for a
/// promotion) while the primary's slot has a `catalog_xmin` older than the standby's oldest
/// safe one (`slotsync.c:update_local_synced_slot`, "could lead to data loss"), as after a
/// transaction the slot decoded with no running-xacts record since; `sync_slot` copies it at
/// once. Seen live on 17.10, not modelled: the rule logs the record first.
pub fn failover_slot_synced_rule(primary: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = failover_skip(primary) {
        return Ok(skip);
    }
    let _undo = OnPrimary {
        primary,
        settings: &["synchronized_standby_slots"],
        slots: &[FAILOVER_SLOT, STANDBY_SLOT],
    };
    let (standby, mut on_primary) = failover_standby(primary)?;
    let remote = failover_slot_at_rest(&mut on_primary)?;
    let flush = lsn_of(&mut on_primary, "SELECT pg_current_wal_flush_lsn()::text")?;
    let mut on_standby = standby.connect()?;
    wait_for("the standby receiving the primary's flushed WAL", || {
        Ok(received(&mut on_standby)? >= flush)
    })?;
    // The standby's flush as the slot sync worker reads it (`GetStandbyFlushRecPtr`).
    let standby_flush = lsn_of(
        &mut on_standby,
        "SELECT greatest(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::text",
    )?;
    execute(&mut on_standby, "SELECT pg_sync_replication_slots()")?;
    let (copy, synced) = synced_copy(&mut on_standby)?;
    let predicted = sync_slot(Some(&remote), standby_flush, None);
    ensure(copy == predicted && synced, || {
        format!(
            "primary's slot: confirmed_flush {}, restart_lsn {}; standby flush {standby_flush}: \
             the copy is {copy:?} (synced and persistent: {synced}); the model says {predicted:?}",
            remote.confirmed_flush, remote.restart_lsn
        )
    })?;
    standby.promote()?;
    let promoted = slot_on(&mut on_standby, FAILOVER_SLOT)?;
    let predicted = promoted_slot(copy).map(|durable| SavedSlot {
        confirmed_flush: durable.slot.confirmed_flush,
        restart_lsn: durable.slot.restart_lsn,
    });
    ensure(promoted == predicted, || {
        format!("after the promotion the slot is {promoted:?}; the model says {predicted:?}")
    })?;
    let xid = commit_rows(&mut on_standby)?;
    let decoded: i64 = on_standby
        .query_one(
            &format!(
                "SELECT count(*) FROM pg_logical_slot_peek_changes('{FAILOVER_SLOT}', NULL, NULL) \
                 WHERE xid::text = $1::text"
            ),
            &[&xid],
        )
        .map_err(|e| format!("peek on the promoted server: {}", pg_message(&e)))?
        .get(0);
    // BEGIN, ten rows, COMMIT.
    ensure(decoded == 12, || {
        format!("peek on the promoted server: {decoded} rows of transaction {xid}, not 12")
    })?;
    Ok(Outcome::Pass {
        detail: format!(
            "primary's slot confirmed_flush {}, restart_lsn {}; standby flush {standby_flush}: \
             pg_sync_replication_slots() copied both (synced, persistent); promoted: the slot \
             kept them, and peek decodes a transaction committed since ({decoded} rows)",
            remote.confirmed_flush, remote.restart_lsn
        ),
        trace: None,
    })
}

/// The standby's copy of [`FAILOVER_SLOT`], and whether it is a synced, persistent one.
fn synced_copy(on_standby: &mut postgres::Client) -> Result<(Option<SavedSlot>, bool), String> {
    let copy = slot_on(on_standby, FAILOVER_SLOT)?;
    let synced = on_standby
        .query(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1::text AND synced \
             AND NOT temporary",
            &[&FAILOVER_SLOT],
        )
        .map_err(|e| format!("pg_replication_slots on the standby: {}", pg_message(&e)))?;
    Ok((copy, !synced.is_empty()))
}

/// What `pg_logical_slot_get_changes` answered: each `COMMIT` row's xid and LSN (the
/// transaction's `end_lsn`, `logical.c:commit_cb_wrapper`), or the SQLSTATE and message it
/// failed with.
type Commits = Result<Vec<(String, Lsn)>, (String, String)>;

/// `pg_logical_slot_get_changes(slot)` on `client`, cancelled by `statement_timeout` after
/// `timeout_ms` when given.
fn get_commits(
    client: &mut postgres::Client,
    slot: &str,
    timeout_ms: Option<u64>,
) -> Result<Commits, String> {
    if let Some(ms) = timeout_ms {
        execute(client, &format!("SET statement_timeout = {ms}"))?;
    }
    let rows = client.query(
        "SELECT xid::text, lsn::text FROM pg_logical_slot_get_changes($1::text, NULL, NULL) \
         WHERE data LIKE 'COMMIT%'",
        &[&slot],
    );
    if timeout_ms.is_some() {
        execute(client, "RESET statement_timeout")?;
    }
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return Ok(Err(db_error(&e))),
    };
    let mut commits = Vec::new();
    for row in rows {
        let lsn: Lsn = row
            .get::<_, String>(1)
            .parse()
            .map_err(|e| pg_message(&e))?;
        commits.push((row.get::<_, String>(0), lsn));
    }
    Ok(Ok(commits))
}

/// The standby's physical slot's `restart_lsn` on the primary: what the standby confirmed.
fn standby_confirmed(on_primary: &mut postgres::Client) -> Result<Lsn, String> {
    lsn_of(
        on_primary,
        &format!(
            "SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = '{STANDBY_SLOT}'"
        ),
    )
}

/// What [`failover_slot_waits_rule`] saw with the standby stopped: where its physical slot
/// stayed, the transaction committed then (its xid and `end_lsn`) and the flush pointer after.
struct Held {
    behind: Lsn,
    xid: String,
    flush: Lsn,
    end_lsn: Lsn,
}

/// A failover slot and a plain one on the primary; the standby stopped; a transaction
/// committed: the failover slot's get must still be waiting when it is cancelled, the plain
/// slot's return the transaction, as `send_limit` says for each.
fn held_while_standby_stopped(
    on_primary: &mut postgres::Client,
    standby: &PgServer,
) -> Result<Held, String> {
    execute(
        on_primary,
        &format!(
            "SELECT pg_create_logical_replication_slot('{FAILOVER_SLOT}', 'test_decoding', \
             false, false, true)"
        ),
    )?;
    execute(
        on_primary,
        &format!("SELECT pg_create_logical_replication_slot('{PLAIN_SLOT}', 'test_decoding')"),
    )?;
    standby.stop("fast")?;
    let behind = standby_confirmed(on_primary)?;
    let xid = commit_rows(on_primary)?;
    let flush = lsn_of(on_primary, "SELECT pg_current_wal_flush_lsn()::text")?;
    let waited = get_commits(on_primary, FAILOVER_SLOT, Some(DECODING_WAIT_MS))?;
    let plain = get_commits(on_primary, PLAIN_SLOT, None)?
        .map_err(|(code, message)| format!("get on {PLAIN_SLOT}: {code} {message}"))?;
    let end_lsn = plain
        .iter()
        .find(|(x, _)| *x == xid)
        .map(|(_, lsn)| *lsn)
        .ok_or_else(|| format!("{PLAIN_SLOT} did not return transaction {xid}: {plain:?}"))?;
    let (held, free) = (
        send_limit(flush, behind, true),
        send_limit(flush, behind, false),
    );
    ensure(
        matches!(&waited, Err((code, _)) if code == QUERY_CANCELED)
            && held < end_lsn
            && free >= end_lsn,
        || {
            format!(
                "standby stopped at {behind}, transaction {xid} ending at {end_lsn}, flush \
                 {flush}: the failover slot's get answered {waited:?}; the model sends up to \
                 {held} (failover) and {free} (without)"
            )
        },
    )?;
    Ok(Held {
        behind,
        xid,
        flush,
        end_lsn,
    })
}

/// SQL decoding of a failover slot waits for the standby named in `synchronized_standby_slots`
/// (17+): with the standby stopped, its physical slot behind, a transaction committed on the
/// primary is not returned by `pg_logical_slot_get_changes` on the failover slot, which is
/// still waiting when `statement_timeout` cancels it (SQLSTATE 57014), while a slot without
/// `failover` returns it at once: `send_limit(flush, standby, true)` lies below the
/// transaction's `end_lsn`, `send_limit(flush, standby, false)` past it. Once the standby runs
/// again and its slot has caught up, the call returns the transaction.
///
/// PostgreSQL waits until the standby has confirmed the whole WAL flushed at the call
/// (`logicalfuncs.c:pg_logical_slot_get_changes_guts`, `WaitForStandbyConfirmation`), the
/// model only up to what it sends; with the standby below the transaction both hold it back.
pub fn failover_slot_waits_rule(primary: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = failover_skip(primary) {
        return Ok(skip);
    }
    let _undo = OnPrimary {
        primary,
        settings: &["synchronized_standby_slots"],
        slots: &[FAILOVER_SLOT, PLAIN_SLOT, STANDBY_SLOT],
    };
    let (standby, mut on_primary) = failover_standby(primary)?;
    let Held {
        behind,
        xid,
        flush,
        end_lsn,
    } = held_while_standby_stopped(&mut on_primary, &standby)?;
    standby.start()?;
    wait_for("the standby confirming the primary's flushed WAL", || {
        Ok(standby_confirmed(&mut on_primary)? >= flush)
    })?;
    let caught_up = standby_confirmed(&mut on_primary)?;
    let returned = get_commits(&mut on_primary, FAILOVER_SLOT, None)?
        .map_err(|(code, message)| format!("get once the standby caught up: {code} {message}"))?;
    let sent = send_limit(flush, caught_up, true);
    let found = returned.contains(&(xid.clone(), end_lsn));
    ensure(found && sent >= end_lsn, || {
        format!(
            "standby caught up to {caught_up}: the failover slot's get returned {returned:?} \
             (transaction {xid} ending at {end_lsn}: {found}); the model sends up to {sent}"
        )
    })?;
    Ok(Outcome::Pass {
        detail: format!(
            "standby stopped, its slot at {behind}; transaction {xid} ending at {end_lsn} (flush \
             {flush}): get on the failover slot still waiting after {DECODING_WAIT_MS} ms \
             (SQLSTATE {QUERY_CANCELED}), on a plain slot returned at once; standby caught up \
             to {caught_up}: returned"
        ),
        trace: None,
    })
}
