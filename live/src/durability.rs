//! The conformance rules of when WAL and slots reach disk that the other rules leave out: the
//! walwriter's write that flushes nothing, the flush a CHECKPOINT does, a synchronous `COMMIT`
//! that returns only once its WAL is flushed, where an advance's decoding leaves `restart_lsn`
//! among the running-xacts records it meets, and a standby's restartpoint saving its slots.
//!
//! Each drives the server into the schedule that shows the behaviour, predicts with the model's
//! function that the systems, the language or the simulator use, and, on a primary, records an
//! observed trace whose replay runs the same function ([`walcheck_sim::observed`]).

use std::time::{Duration, Instant};

use walcheck_model::pg::{CommitMode, RestartLanding, Role, SavedSlot, Server, Slot, Wal};
use walcheck_model::Lsn;
use walcheck_properties::system::Var;

use crate::pg_error::pg_message;
use crate::protocol::wal_buffers_setting;
use crate::rules::{ensure, pass, throwaway_only, Outcome};
use crate::server::PgServer;
use crate::session::{Pointers, Session};
use crate::waldump;

/// The table these rules commit rows to, dropped with the session that made it.
const ROWS_TABLE: &str = "walcheck_rows";

fn lsn_var(l: Lsn) -> Var {
    Var::Text(l.to_string())
}

/// The model's primary with the pointers `p`, started without recovery, its slot at rest at the
/// flush pointer (these rules compare pointers only).
fn primary_at(p: Pointers) -> Server {
    let mut server = Server::at_rest(Role::Primary, p.flush);
    server.wal.write = p.write;
    server.wal.insert = p.insert;
    server
}

/// An LSN a query on `client` answers (NULL is an error).
pub(crate) fn lsn_of(client: &mut postgres::Client, sql: &str) -> Result<Lsn, String> {
    let text: Option<String> = client
        .query_one(sql, &[])
        .map_err(|e| format!("{sql}: {}", pg_message(&e)))?
        .get(0);
    let text = text.ok_or_else(|| format!("{sql}: NULL"))?;
    text.parse()
        .map_err(|e| format!("{sql}: {}", pg_message(&e)))
}

/// One transaction on `client` inserting `rows` rows of `row_bytes` bytes into [`ROWS_TABLE`]
/// under `synchronous_commit = on` (`Sync`) or `off`; returns its xid once `COMMIT` returned.
fn commit_rows(
    client: &mut postgres::Client,
    rows: u32,
    row_bytes: u32,
    mode: CommitMode,
) -> Result<u32, String> {
    let setting = match mode {
        CommitMode::Sync => "on",
        CommitMode::Async => "off",
    };
    client
        .batch_execute(&format!(
            "BEGIN; SET LOCAL synchronous_commit = {setting}; INSERT INTO {ROWS_TABLE} \
             SELECT g, repeat('w', {row_bytes}) FROM generate_series(1, {rows}) g"
        ))
        .map_err(|e| format!("insert into {ROWS_TABLE}: {}", pg_message(&e)))?;
    let xid: String = client
        .query_one("SELECT txid_current()::text", &[])
        .map_err(|e| format!("txid_current(): {}", pg_message(&e)))?
        .get(0);
    client
        .batch_execute("COMMIT")
        .map_err(|e| format!("commit: {}", pg_message(&e)))?;
    xid.parse()
        .map_err(|e| format!("xid {xid}: {}", pg_message(&e)))
}

/// Creates [`ROWS_TABLE`] for `session` (dropped with it) and commits rows to it synchronously,
/// so that the WAL is flushed up to the insert pointer.
fn rows_table(session: &mut Session) -> Result<(), String> {
    session
        .client()
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {ROWS_TABLE} (id int, payload text)"
        ))
        .map_err(|e| format!("create {ROWS_TABLE}: {}", pg_message(&e)))?;
    session.clean_up_with(format!("DROP TABLE IF EXISTS {ROWS_TABLE}"));
    commit_rows(session.client(), 200, 200, CommitMode::Sync).map(|_| ())
}

/// Whether a write from `from` to `to` passes the end of the `wal_buffers` ring, where
/// `xlog.c:XLogWrite` (15) stops a `flexible` write (the next buffer is not contiguous), which
/// the model does not follow ([`Wal::walwriter_flush_pages`] says so).
fn crosses_ring_end(from: Lsn, to: Lsn, wal_buffers_bytes: u64) -> bool {
    let ring_end = (from.bytes() / wal_buffers_bytes + 1) * wal_buffers_bytes;
    ring_end < to.bytes()
}

/// One walwriter cycle of [`walwriter_write_rule`]: the pointers before, the insert pointer
/// right after an asynchronous commit of about three pages, and the pointers once the walwriter
/// it woke has written.
#[derive(Copy, Clone)]
struct Cycle {
    before: Pointers,
    inserted: Lsn,
    after: Pointers,
}

/// An asynchronous commit of 24 rows of 1000 bytes, which crosses pages and so wakes the
/// walwriter (`xlog.c:XLogSetAsyncXactLSN`, 15), and the pointers once it has written (2 s at
/// most).
fn walwriter_cycle(session: &mut Session) -> Result<Cycle, String> {
    let before = session.observe()?;
    commit_rows(session.client(), 24, 1000, CommitMode::Async)?;
    let inserted = session.pointers()?.insert;
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut after = session.pointers()?;
    while after.write == before.write && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        after = session.pointers()?;
    }
    Ok(Cycle {
        before,
        inserted,
        after,
    })
}

/// A walwriter cycle whose flush is not due writes the completed pages out and flushes nothing
/// (`xlog.c:XLogBackgroundFlush`, 15: "no flushing, this time round"). With `wal_writer_delay`
/// 10 s and `wal_writer_flush_after` 1 GB a cycle flushes only when it is the walwriter's first
/// or 10 s have passed since its last flush. Each attempt commits about three pages
/// asynchronously, which wakes the walwriter: a cycle that flushed was due, and the next attempt,
/// within 10 s of it, is not. The model's [`Wal::walwriter_write_pages`] (the systems' and the
/// simulator's) and [`Wal::walwriter_write`] (the language's) put the write pointer at the last
/// whole page below the insert pointer and leave the flush pointer; the trace records the commit
/// (`CommitReturned`, its insert pointer) and the cycle (`WalwriterWrite`). An attempt in which
/// other WAL was logged, or whose write passed the end of the `wal_buffers` ring, is repeated.
pub fn walwriter_write_rule(server: &PgServer) -> Result<Outcome, String> {
    const ATTEMPTS: u32 = 6;
    if let Some(skip) = throwaway_only(
        server,
        "it sets wal_writer_delay and wal_writer_flush_after with ALTER SYSTEM",
    ) {
        return Ok(skip);
    }
    let mut session = Session::open(server, "walcheck_walwriter")?;
    let settings = [
        ("wal_writer_delay", "'10s'"),
        ("wal_writer_flush_after", "'1GB'"),
    ];
    session.alter_system(server, &settings)?;
    let (page_bytes, wal_buffers_bytes) = wal_buffers_setting(session.client())?;
    rows_table(&mut session)?;
    let (mut flushed_at, mut disturbed): (Option<Instant>, u32) = (None, 0);
    for attempt in 1..=ATTEMPTS {
        let cycle = walwriter_cycle(&mut session)?;
        let Cycle {
            before, inserted, ..
        } = cycle;
        let mut model = primary_at(before).wal;
        model.insert = inserted;
        let mut pages = model;
        pages.walwriter_write_pages(page_bytes);
        model.walwriter_write(page_bytes);
        let ring = crosses_ring_end(before.write, model.write, wal_buffers_bytes);
        if cycle.after.insert != inserted || ring {
            disturbed += 1;
            continue;
        }
        if cycle.after.flush != before.flush {
            // A due cycle, unless the walwriter flushed less than 10 s ago.
            if flushed_at.is_some_and(|t| t.elapsed() < Duration::from_secs(9)) {
                return Err(format!(
                    "the walwriter flushed to {} within 10 s of its last flush \
                     (wal_writer_delay 10 s, wal_writer_flush_after 1 GB)",
                    cycle.after.flush
                ));
            }
            flushed_at = Some(Instant::now());
            continue;
        }
        let sizes = (page_bytes, wal_buffers_bytes);
        return walwriter_wrote(&mut session, server, attempt, cycle, (model, pages), sizes);
    }
    Err(format!(
        "in {ATTEMPTS} attempts no walwriter cycle wrote without flushing ({disturbed} disturbed \
         by other WAL or the end of the wal_buffers ring)"
    ))
}

/// The cycle of attempt `attempt` wrote without flushing: both of the model's writes must put
/// the pointers where the server has them; records the commit and the cycle.
fn walwriter_wrote(
    session: &mut Session,
    server: &PgServer,
    attempt: u32,
    cycle: Cycle,
    (model, pages): (Wal, Wal),
    (page_bytes, wal_buffers_bytes): (u64, u64),
) -> Result<Outcome, String> {
    let Cycle {
        before,
        inserted,
        after,
    } = cycle;
    ensure(
        (after.write, after.flush) == (model.write, model.flush) && pages == model,
        || {
            format!(
                "after an asynchronous commit to {inserted} (write {}, flush {}) the walwriter \
                 wrote to {} and flushed to {}; the model says write {} (pages: {}), flush {} \
                 (pages: {})",
                before.write,
                before.flush,
                after.write,
                after.flush,
                model.write,
                pages.write,
                model.flush,
                pages.flush
            )
        },
    )?;
    let bytes = inserted.bytes() - before.insert.bytes();
    session.record(
        format!(
            "CommitReturned{{bytes: {bytes}, mode: async, page_bytes: {page_bytes}, \
             wal_buffers_bytes: {wal_buffers_bytes}}}"
        ),
        vec![("insert".into(), lsn_var(inserted))],
    );
    session.record(
        format!("WalwriterWrite{{page_bytes: {page_bytes}}}"),
        Session::pointer_vars(after),
    );
    pass(
        session,
        server,
        "walwriter_writes_without_flush",
        format!(
            "asynchronous commit to {inserted} (attempt {attempt}) with write = flush = {}: the \
             walwriter wrote to {} and left flush at {}",
            before.flush, after.write, after.flush
        ),
    )
}

/// Where the last checkpoint record starts (`pg_control_checkpoint()`'s `checkpoint_lsn`).
fn checkpoint_record(client: &mut postgres::Client) -> Result<Lsn, String> {
    lsn_of(
        client,
        "SELECT checkpoint_lsn::text FROM pg_control_checkpoint()",
    )
}

/// What one attempt of [`checkpoint_flush_rule`] saw: the pointers before and after the
/// CHECKPOINT, the slot's `confirmed_flush` after it, and where its checkpoint record starts.
#[derive(Copy, Clone)]
struct CheckpointSeen {
    before: Pointers,
    after: Pointers,
    confirmed_flush: Lsn,
    record: Lsn,
}

/// A synchronous commit (the WAL flushed), a transaction left open on `open` with ten rows
/// inserted, then a CHECKPOINT; the open transaction is rolled back afterwards.
fn checkpoint_attempt(
    session: &mut Session,
    open: &mut postgres::Client,
) -> Result<CheckpointSeen, String> {
    commit_rows(session.client(), 1, 100, CommitMode::Sync)?;
    open.batch_execute(&format!(
        "BEGIN; INSERT INTO {ROWS_TABLE} SELECT g, repeat('o', 100) FROM generate_series(1, 10) g"
    ))
    .map_err(|e| format!("open transaction: {}", pg_message(&e)))?;
    let before = session.observe()?;
    session
        .client()
        .batch_execute("CHECKPOINT")
        .map_err(|e| format!("CHECKPOINT: {}", pg_message(&e)))?;
    let after = session.pointers()?;
    let confirmed_flush = session.confirmed_flush()?;
    let record = checkpoint_record(session.client())?;
    open.batch_execute("ROLLBACK")
        .map_err(|e| format!("rollback: {}", pg_message(&e)))?;
    Ok(CheckpointSeen {
        before,
        after,
        confirmed_flush,
        record,
    })
}

/// A CHECKPOINT on a primary flushes all WAL inserted before it: `xlog.c:CreateCheckPoint` (15)
/// logs a running-xacts record and its checkpoint record and calls `XLogFlush` on the latter.
/// A transaction left open leaves WAL past the flush pointer (no commit wakes the walwriter, and
/// it flushes whole pages at most); after the CHECKPOINT the pointers are what the model's
/// [`Server::checkpoint`] (the systems') makes of them, the checkpoint's own records counted as
/// WAL inserted before its flush: write and flush at the insert pointer. Recorded as an
/// `InsertWal` step (its insert pointer) and a `Checkpoint` step with the pointers after it,
/// whose replay runs [`Wal::checkpoint_flush`]. An attempt in which another backend logged WAL
/// after the checkpoint record was flushed, or flushed the open transaction's WAL before the
/// CHECKPOINT, is repeated.
pub fn checkpoint_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    const ATTEMPTS: u32 = 4;
    let mut session = Session::open(server, "walcheck_checkpoint_flush")?;
    let (page_bytes, wal_buffers_bytes) = wal_buffers_setting(session.client())?;
    rows_table(&mut session)?;
    let mut open = server.connect()?;
    for attempt in 1..=ATTEMPTS {
        let seen = checkpoint_attempt(&mut session, &mut open)?;
        let CheckpointSeen { before, after, .. } = seen;
        let mut model = primary_at(before);
        let bytes = after.insert.bytes() - before.insert.bytes();
        model.wal.append(bytes, page_bytes, wal_buffers_bytes);
        model.checkpoint();
        if (after.write, after.flush) != (model.wal.write, model.wal.flush) {
            let logged_after = after.flush > seen.record && after.insert > after.flush;
            ensure(logged_after, || {
                format!(
                    "WAL to {} unflushed (flush {}), CHECKPOINT (its record at {}): write {}, \
                     flush {}, insert {}; the model says write {}, flush {}",
                    before.insert,
                    before.flush,
                    seen.record,
                    after.write,
                    after.flush,
                    after.insert,
                    model.wal.write,
                    model.wal.flush
                )
            })?;
            continue;
        }
        if before.flush == before.insert {
            continue;
        }
        let sizes = (bytes, page_bytes, wal_buffers_bytes);
        return checkpoint_flushed(&mut session, server, attempt, &seen, sizes);
    }
    Err(format!(
        "in {ATTEMPTS} attempts the open transaction's WAL was flushed before the CHECKPOINT, or \
         other WAL was logged right after it"
    ))
}

/// Records what [`checkpoint_flush_rule`] saw in the attempt that showed the flush.
fn checkpoint_flushed(
    session: &mut Session,
    server: &PgServer,
    attempt: u32,
    seen: &CheckpointSeen,
    (bytes, page_bytes, wal_buffers_bytes): (u64, u64, u64),
) -> Result<Outcome, String> {
    let CheckpointSeen {
        before,
        after,
        confirmed_flush,
        record,
    } = *seen;
    session.record(
        format!(
            "InsertWal{{bytes: {bytes}, page_bytes: {page_bytes}, wal_buffers_bytes: \
             {wal_buffers_bytes}}}"
        ),
        vec![("insert".into(), lsn_var(after.insert))],
    );
    let mut vars = Session::pointer_vars(after);
    vars.push(("confirmed_flush".into(), lsn_var(confirmed_flush)));
    session.record("Checkpoint".into(), vars);
    pass(
        session,
        server,
        "checkpoint_flushes_wal",
        format!(
            "open transaction's WAL to {}, flushed to {} (attempt {attempt}); CHECKPOINT (its \
             record at {record}): write = flush = insert = {}",
            before.insert, before.flush, after.insert
        ),
    )
}

/// Two CHECKPOINTs (each logs a running-xacts record) with a synchronous commit after each,
/// then an advance of `session`'s slot to the flush pointer. Returns `moveto`, the starts of
/// the running-xacts records logged with no transaction running that `pg_waldump` shows from
/// `slot`'s `restart_lsn` to it (as the protocol rules take them: a record logged while a
/// transaction ran names another restart point), and the slot's `restart_lsn` after the advance.
fn advance_over_records(
    server: &PgServer,
    session: &mut Session,
    slot: &Slot,
) -> Result<(Lsn, Vec<Lsn>, Lsn), String> {
    for _ in 0..2 {
        session.checkpoint()?;
        commit_rows(session.client(), 10, 100, CommitMode::Sync)?;
    }
    let target = session.observe()?.flush;
    let moveto = session
        .advance(target)?
        .result
        .map_err(|(code, msg)| format!("advance to {target}: {code} {msg}"))?;
    let (_, restart) = session.slot_lsns()?;
    let records = waldump::parse(&server.waldump(slot.restart_lsn, moveto)?);
    let running = records
        .iter()
        .filter(|r| r.is_idle_running_xacts())
        .map(|r| r.lsn)
        .collect();
    Ok((moveto, running, restart))
}

fn joined(lsns: &[Lsn]) -> String {
    lsns.iter()
        .map(Lsn::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Where an advance leaves `restart_lsn`, from the running-xacts records its fast-forward
/// decoding meets (`logical.c:LogicalIncreaseRestartDecodingForSlot`, offered each by
/// `snapbuild.c:SnapBuildProcessRunningXacts`, 15): [`Slot::restart_after_advance`] (the
/// simulator's), given the records' positions from `pg_waldump`. Two advances: the first meets
/// two records past the new slot's `confirmed_flush` and keeps the first as its candidate (the
/// second is dropped while it is pending); the second meets that dropped record at or below the
/// old `confirmed_flush` (taken at once) and two more past it, and keeps the first of those. The
/// trace's `Advance` steps carry where `restart_lsn` went, which replay turns into the save
/// [`Slot::slot_advance`] makes.
pub fn restart_after_advance_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it reads the WAL with pg_waldump") {
        return Ok(skip);
    }
    let mut session = Session::open(server, "walcheck_restart_after")?;
    rows_table(&mut session)?;
    let (confirmed_flush, restart_lsn) = session.slot_lsns()?;
    let mut slot = Slot {
        confirmed_flush,
        restart_lsn,
        saved: SavedSlot {
            confirmed_flush,
            restart_lsn,
        },
    };
    let mut details = Vec::new();
    for advance in 1..=2 {
        let (moveto, running, restart) = advance_over_records(server, &mut session, &slot)?;
        let predicted = slot.restart_after_advance(moveto, &running);
        let met: Vec<Lsn> = running
            .iter()
            .copied()
            .filter(|&r| r > slot.restart_lsn && r < moveto)
            .collect();
        let past = met.iter().filter(|&&r| r > slot.confirmed_flush).count();
        let at_or_below = met.len() - past;
        ensure(restart == predicted, || {
            format!(
                "advance {advance} from restart_lsn {} (confirmed_flush {}) to {moveto} over \
                 running-xacts records [{}]: restart_lsn {restart}; the model says {predicted}",
                slot.restart_lsn,
                slot.confirmed_flush,
                joined(&met)
            )
        })?;
        let schedule = match advance {
            1 => past >= 2,
            _ => past >= 1 && at_or_below >= 1,
        };
        ensure(schedule, || {
            format!(
                "advance {advance} to {moveto} met running-xacts records [{}] (confirmed_flush \
                 {}): not the schedule (two past confirmed_flush the first time; one at or \
                 below it and one past it the second)",
                joined(&met),
                slot.confirmed_flush
            )
        })?;
        details.push(format!(
            "advance {advance} {} -> {moveto} over [{}]: restart_lsn {} -> {restart}",
            slot.confirmed_flush,
            joined(&met),
            slot.restart_lsn
        ));
        slot.slot_advance(moveto, moveto, Some(restart))
            .map_err(|e| format!("the model refuses the advance to {moveto}: {e}"))?;
    }
    pass(
        &session,
        server,
        "restart_after_advance",
        details.join("; "),
    )
}

/// What one `COMMIT` of [`commit_waits_for_flush_rule`] showed: its xid and the pointers read
/// before its transaction and right after `COMMIT` returned.
#[derive(Copy, Clone)]
struct Returned {
    xid: u32,
    before: Pointers,
    after: Pointers,
    attempt: u32,
}

/// The end of transaction `xid`'s commit record in the WAL from `from` to `flush`, if it is
/// there (`pg_waldump`).
fn commit_end(server: &PgServer, xid: u32, from: Lsn, flush: Lsn) -> Result<Option<Lsn>, String> {
    let records = waldump::parse(&server.waldump(from, flush)?);
    Ok(waldump::commit_record(&records, xid).map(|(_, end)| end))
}

/// A one-row transaction committed under `mode`, repeated until the pointers read right after
/// `COMMIT` returned are the model's ([`Server::insert_commit`], then, the backend being free
/// again, [`Server::commit_flush`] when it waited); recorded as a `CommitReturned` step. A
/// synchronous commit that returned with its record unflushed fails at once; another mismatch
/// (WAL logged after it, a walwriter cycle) is repeated.
fn commit_returned(
    server: &PgServer,
    session: &mut Session,
    mode: CommitMode,
    (page_bytes, wal_buffers_bytes): (u64, u64),
) -> Result<Returned, String> {
    const ATTEMPTS: u32 = 4;
    let mut seen = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let before = session.observe()?;
        let xid = commit_rows(session.client(), 1, 100, mode)?;
        let after = session.pointers()?;
        let bytes = after.insert.bytes() - before.insert.bytes();
        let mut model = primary_at(before);
        model.insert_commit(bytes, mode, page_bytes, wal_buffers_bytes);
        // COMMIT returned, which the model's backend does only once it is free again.
        if model.commit_pending {
            model.commit_flush();
        }
        if (after.write, after.flush) == (model.wal.write, model.wal.flush) {
            session.record(
                format!(
                    "CommitReturned{{bytes: {bytes}, mode: {}, page_bytes: {page_bytes}, \
                     wal_buffers_bytes: {wal_buffers_bytes}}}",
                    mode_name(mode)
                ),
                Session::pointer_vars(after),
            );
            return Ok(Returned {
                xid,
                before,
                after,
                attempt,
            });
        }
        if mode == CommitMode::Sync {
            let end = commit_end(server, xid, before.insert, after.flush)?;
            ensure(end.is_some() && after.insert > after.flush, || {
                format!(
                    "a synchronous COMMIT returned with write {}, flush {}, insert {} (the end of \
                     its record, if flushed: {end:?}); the model says write {}, flush {}",
                    after.write, after.flush, after.insert, model.wal.write, model.wal.flush
                )
            })?;
        }
        seen.push(format!(
            "write {} flush {} (the model: {} {})",
            after.write, after.flush, model.wal.write, model.wal.flush
        ));
    }
    Err(format!(
        "in {ATTEMPTS} {} commits the pointers right after COMMIT were never the model's: {}",
        mode_name(mode),
        seen.join("; ")
    ))
}

fn mode_name(mode: CommitMode) -> &'static str {
    match mode {
        CommitMode::Sync => "sync",
        CommitMode::Async => "async",
    }
}

/// A `COMMIT` under `synchronous_commit = on` returns only once its WAL is flushed
/// (`xact.c:RecordTransactionCommit` → `xlog.c:XLogFlush(XactLastRecEnd)`, 15), and under `off`
/// with its commit record unflushed (`XLogSetAsyncXactLSN`). The model's backend waits in
/// `XLogFlush` after [`Server::insert_commit`] (`commit_pending`) until [`Server::commit_flush`]
/// frees it (the systems' `CommitFlush`); the pointers read right after each `COMMIT` must be
/// the model's once its backend is free, recorded as `CommitReturned` steps that replay the
/// same. The walwriter sleeps 10 s and each transaction is one row, so nothing else flushes an
/// asynchronous commit meanwhile (unless it crossed a page, which wakes the walwriter: repeated).
pub fn commit_waits_for_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(
        server,
        "it sets wal_writer_delay with ALTER SYSTEM and reads the WAL with pg_waldump",
    ) {
        return Ok(skip);
    }
    let mut session = Session::open(server, "walcheck_commit_wait")?;
    session.alter_system(server, &[("wal_writer_delay", "'10s'")])?;
    let sizes = wal_buffers_setting(session.client())?;
    rows_table(&mut session)?;
    let sync = commit_returned(server, &mut session, CommitMode::Sync, sizes)?;
    let unsync = commit_returned(server, &mut session, CommitMode::Async, sizes)?;
    // Where both commit records lie, once a synchronous commit flushed them.
    commit_rows(session.client(), 1, 100, CommitMode::Sync)?;
    let flushed = session.pointers()?.flush;
    let end_of = |r: &Returned| -> Result<Lsn, String> {
        commit_end(server, r.xid, r.before.insert, flushed)?
            .ok_or_else(|| format!("pg_waldump shows no commit record of xid {}", r.xid))
    };
    let (sync_end, unsync_end) = (end_of(&sync)?, end_of(&unsync)?);
    ensure(
        sync.after.flush >= sync_end && unsync.after.flush < unsync_end,
        || {
            format!(
                "synchronous commit ending at {sync_end} returned with flush {}; asynchronous \
                 one ending at {unsync_end} with flush {}",
                sync.after.flush, unsync.after.flush
            )
        },
    )?;
    pass(
        &session,
        server,
        "sync_commit_waits_for_flush",
        format!(
            "synchronous commit record ending at {sync_end}: COMMIT returned with flush {} \
             (attempt {}); asynchronous one ending at {unsync_end}: returned with flush {} \
             (attempt {})",
            sync.after.flush, sync.attempt, unsync.after.flush, unsync.attempt
        ),
    )
}

/// The physical slot [`restartpoint_rule`] creates on the standby.
const PHYSICAL_SLOT: &str = "walcheck_standby_physical";

/// A CHECKPOINT on the standby: its last restartpoint's redo pointer before and after, and its
/// `(received, replayed)` pointers before and after.
struct StandbyCheckpoint {
    redo: (Lsn, Lsn),
    before: (Lsn, Lsn),
    after: (Lsn, Lsn),
}

/// A standby and a connection to it.
struct Standby {
    server: PgServer,
    client: postgres::Client,
}

impl Standby {
    /// The standby's physical slot's `restart_lsn`.
    fn slot_restart(&mut self) -> Result<Lsn, String> {
        lsn_of(
            &mut self.client,
            &format!(
                "SELECT restart_lsn::text FROM pg_replication_slots \
                 WHERE slot_name = '{PHYSICAL_SLOT}'"
            ),
        )
    }

    /// The redo pointer of the standby's last restartpoint (`pg_control_checkpoint()`).
    fn redo(&mut self) -> Result<Lsn, String> {
        lsn_of(
            &mut self.client,
            "SELECT redo_lsn::text FROM pg_control_checkpoint()",
        )
    }

    /// `(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())`.
    fn received_replayed(&mut self) -> Result<(Lsn, Lsn), String> {
        Ok((
            lsn_of(&mut self.client, "SELECT pg_last_wal_receive_lsn()::text")?,
            lsn_of(&mut self.client, "SELECT pg_last_wal_replay_lsn()::text")?,
        ))
    }

    /// Waits (10 s at most) until the standby has replayed up to `to`; returns its replay
    /// pointer.
    fn replayed_to(&mut self, to: Lsn) -> Result<Lsn, String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, replayed) = self.received_replayed()?;
            if replayed >= to {
                return Ok(replayed);
            }
            if Instant::now() > deadline {
                return Err(format!("the standby replayed only to {replayed}, not {to}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `pg_ctl stop -m immediate` of the standby and a start; a new connection.
    fn crash_restart(&mut self) -> Result<(), String> {
        self.server.restart_immediate()?;
        self.client = self.server.connect()?;
        Ok(())
    }

    /// `CHECKPOINT` on the standby, and what moved.
    fn checkpoint(&mut self) -> Result<StandbyCheckpoint, String> {
        let (redo, before) = (self.redo()?, self.received_replayed()?);
        self.client
            .batch_execute("CHECKPOINT")
            .map_err(|e| format!("CHECKPOINT on the standby: {}", pg_message(&e)))?;
        Ok(StandbyCheckpoint {
            redo: (redo, self.redo()?),
            before,
            after: self.received_replayed()?,
        })
    }
}

/// The primary commits rows synchronously; once the standby has replayed them, the standby's
/// physical slot is advanced to its replay pointer, and the model's standby slot with it
/// ([`Server::slot_advance`], clamped to the replay pointer, meeting no running-xacts record).
fn advance_on_standby(
    primary: &mut postgres::Client,
    standby: &mut Standby,
    model: &mut Server,
) -> Result<Lsn, String> {
    commit_rows(primary, 10, 100, CommitMode::Sync)?;
    let flush = lsn_of(primary, "SELECT pg_current_wal_flush_lsn()::text")?;
    let replay = standby.replayed_to(flush)?;
    model.wal = Wal {
        insert: flush,
        write: flush,
        flush,
        replay,
    };
    let end_lsn = lsn_of(
        &mut standby.client,
        &format!(
            "SELECT end_lsn::text FROM pg_replication_slot_advance('{PHYSICAL_SLOT}', '{replay}')"
        ),
    )?;
    let predicted = model
        .slot_advance(replay, RestartLanding::Stays)
        .map_err(|e| format!("the model refuses the advance to {replay}: {e}"))?;
    ensure(end_lsn == predicted, || {
        format!("advance on the standby to {replay}: end_lsn {end_lsn}, the model says {predicted}")
    })?;
    Ok(end_lsn)
}

/// A CHECKPOINT on the standby with no checkpoint of the primary replayed since its last
/// restartpoint (the base backup's) is no restartpoint: the redo pointer stays, the slot is not
/// saved, and an immediate stop returns it to its saved copy, as the model's slot returns when
/// no checkpoint step was taken ([`Server::crash_restart`]).
fn no_restartpoint(standby: &mut Standby, model: &mut Server) -> Result<String, String> {
    let (redo, redo_after) = standby.checkpoint()?.redo;
    ensure(redo_after == redo, || {
        format!("with no primary checkpoint replayed, CHECKPOINT moved the standby's redo {redo} -> {redo_after}")
    })?;
    let in_memory = standby.slot_restart()?;
    standby.crash_restart()?;
    model.crash_restart();
    let after = standby.slot_restart()?;
    ensure(after == model.slot.confirmed_flush, || {
        format!(
            "the standby's slot advanced to {in_memory}, CHECKPOINT with no primary checkpoint \
             replayed, immediate stop: restart_lsn {after}; the model says {}",
            model.slot.confirmed_flush
        )
    })?;
    Ok(format!(
        "advanced to {in_memory}; CHECKPOINT with no primary checkpoint replayed: redo stays \
         {redo}, immediate stop: {after}"
    ))
}

/// After a CHECKPOINT of the primary has been replayed, a CHECKPOINT on the standby is a
/// restartpoint: the redo pointer moves, the slot is saved ([`Server::checkpoint`] on a
/// standby) and the WAL pointers stay (the model's; the standby's replay pointer unless more WAL
/// arrived), so an immediate stop keeps the slot.
fn restartpoint(
    primary: &mut postgres::Client,
    standby: &mut Standby,
    model: &mut Server,
) -> Result<String, String> {
    primary
        .batch_execute("CHECKPOINT")
        .map_err(|e| format!("CHECKPOINT on the primary: {}", pg_message(&e)))?;
    let flush = lsn_of(primary, "SELECT pg_current_wal_flush_lsn()::text")?;
    standby.replayed_to(flush)?;
    let StandbyCheckpoint {
        redo: (redo, redo_after),
        before: (received, replayed),
        after: (received_after, replayed_after),
    } = standby.checkpoint()?;
    let wal = model.wal;
    model.checkpoint();
    ensure(redo_after > redo && model.wal == wal, || {
        format!(
            "CHECKPOINT on the standby after the primary's was replayed: redo {redo} -> \
             {redo_after}; the model's WAL {wal:?} -> {:?}",
            model.wal
        )
    })?;
    ensure(
        replayed_after == replayed || received_after > received,
        || format!("the restartpoint moved the replay pointer {replayed} -> {replayed_after}"),
    )?;
    let in_memory = standby.slot_restart()?;
    standby.crash_restart()?;
    model.crash_restart();
    let after = standby.slot_restart()?;
    ensure(after == model.slot.confirmed_flush, || {
        format!(
            "the standby's slot advanced to {in_memory}, restartpoint at redo {redo_after}, \
             immediate stop: restart_lsn {after}; the model says {}",
            model.slot.confirmed_flush
        )
    })?;
    Ok(format!(
        "advanced to {in_memory}; the primary's CHECKPOINT replayed, CHECKPOINT: a restartpoint \
         (redo {redo} -> {redo_after}, replay {replayed_after}), immediate stop: {after}"
    ))
}

/// A CHECKPOINT on a standby is a restartpoint (`xlog.c:CreateRestartPoint`, 15) only once a
/// checkpoint record of the primary has been replayed since the last one; a restartpoint saves
/// the slots (`CheckPointGuts` → `slot.c:CheckPointReplicationSlots`) and, during recovery,
/// writes no WAL. On 15 a standby has no logical slots, so a physical one stands for them: its
/// one position, `restart_lsn`, moves in memory only when advanced
/// (`slotfuncs.c:pg_physical_replication_slot_advance` marks the slot dirty), as a logical
/// slot's `confirmed_flush` does in the model when the advance meets no running-xacts record;
/// the model's standby slot follows it. The model ([`Server::checkpoint`] on a standby) lets a
/// restartpoint happen at any step, which covers when the server takes one; here the server
/// declines one with no primary checkpoint replayed, and takes one after. No observed trace:
/// its steps are a primary's.
pub fn restartpoint_rule(primary: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(primary, "it builds a standby") {
        return Ok(skip);
    }
    let server = PgServer::start_standby(primary)?;
    let client = server.connect()?;
    let mut standby = Standby { server, client };
    let mut on_primary = primary.connect()?;
    on_primary
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {ROWS_TABLE} (id int, payload text)"
        ))
        .map_err(|e| format!("create {ROWS_TABLE}: {}", pg_message(&e)))?;
    let created = lsn_of(
        &mut standby.client,
        &format!(
            "SELECT lsn::text FROM pg_create_physical_replication_slot('{PHYSICAL_SLOT}', true)"
        ),
    )?;
    let mut model = Server::at_rest(Role::Standby, created);
    advance_on_standby(&mut on_primary, &mut standby, &mut model)?;
    let declined = no_restartpoint(&mut standby, &mut model)?;
    advance_on_standby(&mut on_primary, &mut standby, &mut model)?;
    let taken = restartpoint(&mut on_primary, &mut standby, &mut model)?;
    on_primary
        .batch_execute(&format!("DROP TABLE IF EXISTS {ROWS_TABLE}"))
        .map_err(|e| format!("drop {ROWS_TABLE}: {}", pg_message(&e)))?;
    Ok(Outcome::Pass {
        detail: format!("physical slot on the standby at {created}: {declined}; {taken}"),
        trace: None,
    })
}
