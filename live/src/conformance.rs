//! One conformance check per PostgreSQL rule the model uses: each runs on a throwaway server,
//! records what it saw as an observed trace, asserts the model's prediction against the server,
//! and replays the trace against the model ([`walcheck_sim::observed::replay_observed`]).
//!
//! The figures are measurements of one run on one machine, not deterministic.

use std::time::{Duration, Instant};

use walcheck_model::pg::stream::identify_system_xlogpos;
use walcheck_model::pg::{
    advance_read_end, advance_waits, AdvanceError, RestartLanding, Role, Server, Slot,
    WalFunctionError,
};
use walcheck_model::Lsn;
use walcheck_traces::Trace;

use crate::durability;
use crate::failover;
use crate::lifecycle;
use crate::load::{Load, Workload};
use crate::pg_error::{db_error, pg_message};
use crate::protocol;
use crate::replication::ReplicationClient;
pub use crate::rules::Outcome;
use crate::rules::{ensure, pass};
use crate::server::PgServer;
use crate::session::{Advanced, Pointers, Session, SETUP_ERROR};
use crate::waldump;

/// A modelled rule and its live check. `Err` is a failed prediction (or a server that could not be
/// driven), with what the server did.
pub struct Rule {
    pub name: &'static str,
    /// The PostgreSQL source the model cites for it.
    pub source: &'static str,
    pub check: fn(&PgServer) -> Result<Outcome, String>,
}

/// Every rule, in report order.
pub const RULES: &[Rule] = &[
    Rule {
        name: "clamp_to_flush",
        source: "slotfuncs.c:pg_replication_slot_advance (15): moveto = Min(target, GetFlushRecPtr())",
        check: clamp_to_flush,
    },
    Rule {
        name: "end_lsn_is_confirmed_flush",
        source: "slotfuncs.c:pg_replication_slot_advance (15): end_lsn = MyReplicationSlot->data.confirmed_flush",
        check: end_lsn_is_confirmed_flush,
    },
    Rule {
        name: "advance_waits_for_record_end",
        source: "slotfuncs.c:pg_logical_replication_slot_advance, xlogutils.c:read_local_xlog_page_guts (15): reads the record moveto lies in once it is flushed",
        check: advance_waits_for_record_end,
    },
    Rule {
        name: "below_confirmed_flush_error",
        source: "slotfuncs.c:pg_replication_slot_advance (15): moveto < minlsn -> ereport(ERROR)",
        check: below_confirmed_flush_error,
    },
    Rule {
        name: "equal_target_no_op",
        source: "slotfuncs.c:pg_replication_slot_advance (15): moveto == minlsn is allowed",
        check: equal_target_no_op,
    },
    Rule {
        name: "invalid_target",
        source: "slotfuncs.c:pg_replication_slot_advance (15): XLogRecPtrIsInvalid(moveto)",
        check: invalid_target,
    },
    Rule {
        name: "beyond_insert_clamped",
        source: "slotfuncs.c:pg_replication_slot_advance (15): the clamp, with no upper check",
        check: beyond_insert_clamped,
    },
    Rule {
        name: "crash_before_checkpoint",
        source: "slotfuncs.c:pg_logical_replication_slot_advance, slot.c:CheckPointReplicationSlots, RestoreSlotFromDisk (15)",
        check: crash_before_checkpoint,
    },
    Rule {
        name: "advance_saves_old_confirmed_flush",
        source: "logical.c:LogicalIncreaseRestartDecodingForSlot, LogicalConfirmReceivedLocation (15): a running-xacts record at or below confirmed_flush is applied at once and saved with the old confirmed_flush",
        check: advance_saves_old_confirmed_flush,
    },
    Rule {
        name: "advance_leaves_slot_dirty",
        source: "slotfuncs.c:pg_logical_replication_slot_advance (15): ReplicationSlotMarkDirty() after LogicalConfirmReceivedLocation, saved or not",
        check: protocol::advance_leaves_slot_dirty_rule,
    },
    Rule {
        name: "get_changes_leaves_slot_dirty",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts (15): ReplicationSlotMarkDirty() after LogicalConfirmReceivedLocation, saved or not",
        check: protocol::get_changes_leaves_slot_dirty_rule,
    },
    Rule {
        name: "identify_system_on_standby",
        source: "walsender.c:IdentifySystem, GetStandbyFlushRecPtr (15): received or replayed, whichever is further",
        check: identify_system_on_standby,
    },
    Rule {
        name: "standby_wal_functions",
        source: "xlogfuncs.c:pg_current_wal_lsn, pg_last_wal_replay_lsn (15)",
        check: standby_wal_functions,
    },
    Rule {
        name: "standby_slot_clamp",
        source: "slotfuncs.c:pg_replication_slot_advance (16+): moveto = Min(target, GetXLogReplayRecPtr())",
        check: standby_slot_clamp,
    },
    Rule {
        name: "identify_system_xlogpos",
        source: "walsender.c:IdentifySystem (15): xlogpos = GetFlushRecPtr()",
        check: protocol::identify_system_xlogpos_rule,
    },
    Rule {
        name: "start_at_zero_from_confirmed_flush",
        source: "logical.c:CreateDecodingContext (15): start_lsn 0/0 -> confirmed_flush; walsender.c:StartLogicalReplication sentPtr",
        check: protocol::start_at_zero_rule,
    },
    Rule {
        name: "start_below_confirmed_flush",
        source: "logical.c:CreateDecodingContext (15): start_lsn < confirmed_flush is forwarded to it",
        check: protocol::start_below_confirmed_flush_rule,
    },
    Rule {
        name: "start_skips_by_commit_start",
        source: "decode.c:DecodeTXNNeedSkip, snapbuild.c:SnapBuildXactNeedsSkip (15): commit origptr < start_decoding_at",
        check: protocol::start_skips_by_commit_start_rule,
    },
    Rule {
        name: "start_past_flush_accepted",
        source: "logical.c:CreateDecodingContext (15): a later start_lsn is taken as it is; START_REPLICATION never confirms",
        check: protocol::start_past_flush_rule,
    },
    Rule {
        name: "pgoutput_begin_commit_lsns",
        source: "walsender.c:WalSndPrepareWrite, logical.c:*_cb_wrapper write_location, pgoutput.c:pgoutput_send_begin (15)",
        check: protocol::pgoutput_lsns_rule,
    },
    Rule {
        name: "pgoutput_change_lsns",
        source: "decode.c:DecodeInsert, DecodeMultiInsert, logical.c:change_cb_wrapper, walsender.c:WalSndPrepareWrite (15): each change under its record's start, a multi-insert's rows under one",
        check: protocol::pgoutput_change_lsns_rule,
    },
    Rule {
        name: "interleaved_commit_order",
        source: "heapam.c:heap_insert, xact.c:RecordTransactionCommit, decode.c:DecodeCommit, reorderbuffer.c:ReorderBufferTXNByXid, snapbuild.c:SnapBuildProcessRunningXacts (15): changes logged when made, sent in commit order at the commit record; restart_lsn held by the oldest running transaction",
        check: protocol::interleaved_commit_order_rule,
    },
    Rule {
        name: "unpublished_txn_sends_nothing",
        source: "pgoutput.c:pgoutput_commit_txn (15): skipped replication of an empty transaction",
        check: protocol::unpublished_txn_rule,
    },
    Rule {
        name: "other_database_txn_sends_nothing",
        source: "decode.c:DecodeTXNNeedSkip (15): txn_dbid != ctx->slot->data.database",
        check: protocol::other_database_txn_rule,
    },
    Rule {
        name: "async_commit_streamed_after_flush",
        source: "walsender.c:logical_read_xlog_page, WalSndWaitForWal (15): read only up to GetFlushRecPtr()",
        check: protocol::async_commit_streamed_after_flush_rule,
    },
    Rule {
        name: "wal_buffers_written_unflushed",
        source: "xlog.c:AdvanceXLInsertBuffer, XLogWrite (15): a full wal_buffers is written out, Flush = 0, a finished segment fsynced",
        check: protocol::wal_buffers_rule,
    },
    Rule {
        name: "keepalive_below_confirmed_flush",
        source: "walsender.c:XLogSendLogical (15): sentPtr = reader->EndRecPtr, from restart_lsn",
        check: protocol::keepalive_below_confirmed_flush_rule,
    },
    Rule {
        name: "keepalive_inside_unsent_transaction",
        source: "walsender.c:XLogSendLogical, WalSndWaitForWal (15): sentPtr = EndRecPtr after each change record, a keepalive before the commit record",
        check: protocol::keepalive_inside_unsent_transaction_rule,
    },
    Rule {
        name: "keepalive_reply_requested",
        source: "walsender.c:WalSndKeepaliveIfNecessary (15): ping at last_reply + wal_sender_timeout/2",
        check: protocol::keepalive_reply_requested_rule,
    },
    Rule {
        name: "shutdown_keepalive_requests_reply",
        source: "walsender.c:WalSndDone (15): keepalive requesting a reply until the client reports sentPtr",
        check: protocol::shutdown_keepalive_rule,
    },
    Rule {
        name: "status_update_only_flush",
        source: "walsender.c:ProcessStandbyReplyMessage (15): LogicalConfirmReceivedLocation(flushPtr)",
        check: protocol::status_update_only_flush_rule,
    },
    Rule {
        name: "status_update_zero_flush_ignored",
        source: "walsender.c:ProcessStandbyReplyMessage (15): flushPtr != InvalidXLogRecPtr",
        check: protocol::status_update_zero_flush_rule,
    },
    Rule {
        name: "status_update_no_clamp",
        source: "logical.c:LogicalConfirmReceivedLocation (15): no bound on lsn",
        check: protocol::status_update_no_clamp_rule,
    },
    Rule {
        name: "status_update_never_backwards",
        source: "logical.c:LogicalConfirmReceivedLocation (15.14+): never moves confirmed_flush backwards",
        check: protocol::status_update_never_backwards_rule,
    },
    Rule {
        name: "status_update_lost_in_crash",
        source: "logical.c:LogicalConfirmReceivedLocation (15): saved only with a candidate restart_lsn/xmin",
        check: protocol::status_update_lost_in_crash_rule,
    },
    Rule {
        name: "status_update_not_saved",
        source: "logical.c:LogicalConfirmReceivedLocation (15): not marked dirty; slot.c:SaveSlotToPath skips clean slots",
        check: protocol::status_update_not_saved_rule,
    },
    Rule {
        name: "status_update_saved_with_candidate",
        source: "snapbuild.c:SnapBuildProcessRunningXacts, logical.c:LogicalIncreaseRestartDecodingForSlot, LogicalConfirmReceivedLocation (15): ReplicationSlotSave",
        check: protocol::status_update_saved_with_candidate_rule,
    },
    Rule {
        name: "sql_peek_confirms_nothing",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts (15): confirm = false",
        check: protocol::sql_peek_rule,
    },
    Rule {
        name: "sql_get_confirms_and_marks_dirty",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts (15): LogicalConfirmReceivedLocation(EndRecPtr), ReplicationSlotMarkDirty",
        check: protocol::sql_get_rule,
    },
    Rule {
        name: "sql_upto_lsn_includes_crossing_record",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts (15): break once upto_lsn <= EndRecPtr",
        check: protocol::sql_upto_lsn_rule,
    },
    Rule {
        name: "sql_upto_nchanges_whole_txns",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts (15): upto_nchanges <= returned_rows after each record",
        check: protocol::sql_upto_nchanges_rule,
    },
    Rule {
        name: "sql_decoding_bounded_by_flush",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts (15): end_of_wal = GetFlushRecPtr() at the call",
        check: protocol::sql_bounded_by_flush_rule,
    },
    Rule {
        name: "create_slot_at_consistent_point",
        source: "slot.c:ReplicationSlotReserveWal, logical.c:DecodingContextFindStartpoint (15)",
        check: protocol::create_slot_rule,
    },
    Rule {
        name: "wal_retention_min_restart_lsn",
        source: "xlog.c:KeepLogSeg, slot.c:ReplicationSlotsComputeRequiredLSN (15)",
        check: protocol::wal_retention_rule,
    },
    Rule {
        name: "slot_invalidated_by_max_slot_wal_keep_size",
        source: "xlog.c:KeepLogSeg, slot.c:InvalidateObsoleteReplicationSlots (15): a slot behind the cap's segment invalidated at a checkpoint; logicalfuncs.c, slotfuncs.c, walsender.c: reads then fail (55000)",
        check: lifecycle::slot_invalidation_rule,
    },
    Rule {
        name: "shutdown_waits_until_wal_sender_timeout",
        source: "walsender.c:WalSndDone, WalSndCheckTimeOut, postmaster.c:ProcessStartupPacket (15): a stopping walsender waits for the reply until wal_sender_timeout; new sessions refused (57P03)",
        check: lifecycle::shutdown_timeout_rule,
    },
    Rule {
        name: "wal_sender_timeout_ends_idle_stream",
        source: "walsender.c:WalSndCheckTimeOut, slot.c:ReplicationSlotRelease (15): an idle client silent for wal_sender_timeout is cut off; the slot, released, keeps its confirmed_flush in memory",
        check: lifecycle::idle_timeout_rule,
    },
    Rule {
        name: "replay_lsn_on_primary",
        source: "xlogfuncs.c:pg_last_wal_replay_lsn, xlogrecovery.c:PerformWalRecovery (15)",
        check: protocol::replay_lsn_on_primary_rule,
    },
    Rule {
        name: "walwriter_writes_without_flush",
        source: "xlog.c:XLogBackgroundFlush (15): completed pages written, WriteRqst.Flush = 0 when no flush is due",
        check: durability::walwriter_write_rule,
    },
    Rule {
        name: "checkpoint_flushes_wal",
        source: "xlog.c:CreateCheckPoint (15): XLogFlush of the checkpoint record",
        check: durability::checkpoint_flush_rule,
    },
    Rule {
        name: "sync_commit_waits_for_flush",
        source: "xact.c:RecordTransactionCommit (15): XLogFlush(XactLastRecEnd) before COMMIT returns; XLogSetAsyncXactLSN when off",
        check: durability::commit_waits_for_flush_rule,
    },
    Rule {
        name: "restart_after_advance",
        source: "snapbuild.c:SnapBuildProcessRunningXacts, logical.c:LogicalIncreaseRestartDecodingForSlot (15): the first running-xacts record past confirmed_flush, else the last at or below it",
        check: durability::restart_after_advance_rule,
    },
    Rule {
        name: "restartpoint_on_standby",
        source: "xlog.c:CreateRestartPoint (15): only after a replayed checkpoint record; CheckPointGuts saves the slots",
        check: durability::restartpoint_rule,
    },
    Rule {
        name: "promotion",
        source: "walsender.c:XLogSendPhysical, xlogrecovery.c:FinishWalRecovery, xlog.c:StartupXLOG (15): the standby has the primary's flushed WAL; promoted, replay stays at its end and the new timeline starts there",
        check: failover::promotion_rule,
    },
    Rule {
        name: "failover_slot_synced",
        source: "slotsync.c:synchronize_one_slot, update_local_synced_slot, slot.c:ReplicationSlotAcquire (17): a failover slot's copy on the standby, usable once promoted",
        check: failover::failover_slot_synced_rule,
    },
    Rule {
        name: "failover_slot_waits_for_standby",
        source: "logicalfuncs.c:pg_logical_slot_get_changes_guts, slot.c:WaitForStandbyConfirmation (17): a failover slot decodes only what synchronized_standby_slots confirmed",
        check: failover::failover_slot_waits_rule,
    },
];

/// Looks a rule up by name.
pub fn rule(name: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.name == name)
}

/// Some synchronously committed WAL, so that pointers and slot have room to move.
fn some_wal(session: &mut Session) -> Result<(), String> {
    session
        .client()
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS walcheck_rows (id int, payload text); \
             INSERT INTO walcheck_rows SELECT g, repeat('y', 200) FROM generate_series(1, 200) g",
        )
        .map_err(|e| format!("insert rows: {}", pg_message(&e)))?;
    // Dropped with the session: a --pg-url server keeps nothing of the run.
    session.clean_up_with("DROP TABLE IF EXISTS walcheck_rows".into());
    Ok(())
}

/// The model's answer for an advance from a slot at `confirmed_flush` with every pointer at
/// `pointers_at` (an idle primary).
fn predict_idle(confirmed_flush: Lsn, pointers_at: Lsn, target: Lsn) -> Result<Lsn, AdvanceError> {
    let mut server = Server::at_rest(Role::Primary, pointers_at);
    server.slot = Slot::at_rest(confirmed_flush);
    server.slot_advance(target, RestartLanding::Stays)
}

/// Under bulk statements larger than `wal_buffers`, `pg_current_wal_lsn()` runs ahead of the
/// flush pointer, and an advance to it stops at the flush pointer read around the call.
fn clamp_to_flush(server: &PgServer) -> Result<Outcome, String> {
    const MAX_ATTEMPTS: u32 = 400;
    const MAX_MS: u64 = 8_000;
    const CLAMPS_WANTED: u32 = 5;
    let mut session = Session::open(server, "walcheck_clamp")?;
    let load = Load::start(server, Workload::Bulk { rows: 20_000 }, MAX_MS)?;
    let deadline = Instant::now() + Duration::from_millis(MAX_MS);
    let (mut attempts, mut clamps, mut gap_bytes_max) = (0u32, 0u32, 0u64);
    while attempts < MAX_ATTEMPTS && clamps < CLAMPS_WANTED && Instant::now() < deadline {
        attempts += 1;
        let before = session.observe()?;
        let target = before.write;
        let advanced = session.advance(target)?;
        let end_lsn = advanced
            .result
            .map_err(|(code, msg)| format!("advance to {target}: {code} {msg}"))?;
        ensure(end_lsn <= target, || {
            format!("end_lsn {end_lsn} beyond target {target}")
        })?;
        if end_lsn < target {
            clamps += 1;
            gap_bytes_max = gap_bytes_max.max(target.bytes() - end_lsn.bytes());
            // The model's rule: the limit is the flush pointer, read between the two observations.
            ensure(
                before.flush <= end_lsn && end_lsn <= advanced.after.flush,
                || {
                    format!(
                        "end_lsn {end_lsn} outside the flush pointer's range {}..{}",
                        before.flush, advanced.after.flush
                    )
                },
            )?;
        }
    }
    let statements = load.finish()?;
    ensure(clamps > 0, || {
        format!(
            "the load ({statements} statements) never opened write > flush in {attempts} attempts"
        )
    })?;
    pass(
        &session,
        server,
        "clamp_to_flush",
        format!(
            "{clamps} of {attempts} advances to pg_current_wal_lsn() stopped at the flush pointer \
             (largest gap {gap_bytes_max} bytes) under {statements} bulk statements of 20000 rows"
        ),
    )
}

/// After every advance, `end_lsn` equals `confirmed_flush_lsn`; under asynchronous commits the
/// target is the insert pointer, which the flush pointer trails.
fn end_lsn_is_confirmed_flush(server: &PgServer) -> Result<Outcome, String> {
    const ATTEMPTS: u32 = 40;
    let mut session = Session::open(server, "walcheck_end_lsn")?;
    let load = Load::start(
        server,
        Workload::Async {
            rows: 100,
            per_s: None,
        },
        5_000,
    )?;
    let mut clamps = 0;
    for _ in 0..ATTEMPTS {
        let before = session.observe()?;
        let advanced = session.advance(before.insert)?;
        let end_lsn = advanced
            .result
            .map_err(|(code, msg)| format!("advance to {}: {code} {msg}", before.insert))?;
        ensure(end_lsn == advanced.confirmed_flush, || {
            format!(
                "end_lsn {end_lsn} but confirmed_flush_lsn {}",
                advanced.confirmed_flush
            )
        })?;
        clamps += u32::from(end_lsn < before.insert);
    }
    let statements = load.finish()?;
    pass(
        &session,
        server,
        "end_lsn_is_confirmed_flush",
        format!(
            "{ATTEMPTS} of {ATTEMPTS} advances had end_lsn = confirmed_flush_lsn ({clamps} clamped \
             below the insert pointer) under {statements} asynchronous 100-row statements"
        ),
    )
}

/// An advance whose clamp point lies inside a WAL record returns only once that record is
/// flushed. The walwriter flushes at each cycle (`wal_writer_flush_after = 0`) and sleeps 10 s
/// between them unless an asynchronous commit wakes it, so an asynchronous 100-row transaction
/// leaves the flush pointer on a page boundary with its last page unflushed. An advance to that
/// flush pointer must read the record straddling it: the model says it waits, and the server's
/// call is still running when `statement_timeout` cancels it after a second, the slot unchanged.
/// After a synchronous commit flushes past the record, the same advance returns at once with
/// `end_lsn` at the clamp point. An attempt in which the flush pointer fell on a record's end,
/// or in which something else flushed during the call, is checked as it came and repeated.
fn advance_waits_for_record_end(server: &PgServer) -> Result<Outcome, String> {
    const ATTEMPTS: u32 = 8;
    if !server.is_throwaway() {
        return Ok(Outcome::Skip {
            reason: "needs a throwaway server (it sets wal_writer_delay and wal_writer_flush_after with ALTER SYSTEM); not run with --pg-url".into(),
        });
    }
    let mut session = Session::open(server, "walcheck_record_end")?;
    // The walwriter flushes at each cycle and sleeps 10 s between them.
    let walwriter = [
        ("wal_writer_delay", "'10s'"),
        ("wal_writer_flush_after", "0"),
    ];
    session.alter_system(server, &walwriter)?;
    some_wal(&mut session)?;
    let mut returned_at_boundary = 0;
    for attempt in 1..=ATTEMPTS {
        let tried = record_end_attempt(server, &mut session)?;
        let Some(done) = &tried.advanced else {
            return record_end_waited(server, &mut session, attempt, &tried);
        };
        // It returned: the model must say the record was flushed by then.
        ensure(!tried.waits, || {
            format!(
                "the advance to {} returned {:?} with the record it needs (ending at {}) \
                 unflushed (flush {})",
                tried.target, done.result, tried.read_end, tried.after.flush
            )
        })?;
        returned_at_boundary += u32::from(tried.read_end == tried.target);
    }
    Err(format!(
        "in {ATTEMPTS} attempts the flush pointer never stayed inside a record for \
         {RECORD_END_WAIT_MS} ms ({returned_at_boundary} fell on a record's end)"
    ))
}

/// How long [`advance_waits_for_record_end`] lets an advance run before it cancels it.
const RECORD_END_WAIT_MS: u64 = 1_000;

/// One attempt of [`advance_waits_for_record_end`]: an advance to the flush pointer, and where
/// the record it has to read ends.
struct RecordEnd {
    /// The flush pointer the advance went to.
    target: Lsn,
    /// What the advance answered; `None` when it was cancelled while still running.
    advanced: Option<Advanced>,
    /// The pointers and the slot's `confirmed_flush` right after it.
    after: Pointers,
    confirmed_flush: Lsn,
    /// The pointers once everything was flushed.
    flushed: Pointers,
    /// The end of the record `target` lies in, and whether the model says the advance waits.
    read_end: Lsn,
    waits: bool,
}

/// An asynchronous 100-row transaction, the walwriter's flush it wakes waited for (two seconds
/// at most), then an advance to the flush pointer cancelled after [`RECORD_END_WAIT_MS`];
/// then everything flushed, and `pg_waldump` asked where the record the advance had to read
/// ends.
fn record_end_attempt(server: &PgServer, session: &mut Session) -> Result<RecordEnd, String> {
    let before = session.pointers()?;
    session
        .client()
        .batch_execute(
            "BEGIN; SET LOCAL synchronous_commit = off; \
             INSERT INTO walcheck_rows SELECT g, repeat('z', 1000) FROM generate_series(1, 100) g; \
             COMMIT",
        )
        .map_err(|e| format!("asynchronous insert: {}", pg_message(&e)))?;
    // The commit set the walwriter's latch: wait for its flush (bounded), then read.
    let deadline = Instant::now() + Duration::from_secs(2);
    while session.pointers()?.flush <= before.flush && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(50));
    let seen = session.observe()?;
    let target = seen.flush;
    let advanced = session.advance_within(target, Some(RECORD_END_WAIT_MS))?;
    let after = session.pointers()?;
    let confirmed_flush = session.confirmed_flush()?;
    // Flush everything; pg_waldump then shows the record the clamp point lies in.
    some_wal(session)?;
    let flushed = session.pointers()?;
    // From the flush pointer before the insert (older WAL cannot hold the record the target
    // lies in), at most 64 KiB back; when the walwriter did not flush in time the target is
    // that same pointer, and the record ending there must be read too.
    let back = target.minus(target.bytes().min(64 * 1024));
    let from = if before.flush < target {
        back.max(before.flush)
    } else {
        back
    };
    let records = waldump::parse(&server.waldump(from, flushed.flush)?);
    // The advance reads while `EndRecPtr < moveto`, and `EndRecPtr` is MAXALIGNed: a record
    // ending in a page's last bytes ends, for the reader, on the page boundary.
    let ends = records
        .iter()
        .map(|r| r.aligned_end())
        .filter(|end| *end > from);
    let read_end = advance_read_end(target, ends);
    Ok(RecordEnd {
        target,
        advanced,
        after,
        confirmed_flush,
        flushed,
        read_end,
        waits: advance_waits(after.flush, read_end),
    })
}

/// The attempt `tried`, whose advance was cancelled while running: the model must say it was
/// waiting. Recorded as waiting, the same advance returns at once now that the record is
/// flushed, with `end_lsn` at the target.
fn record_end_waited(
    server: &PgServer,
    session: &mut Session,
    attempt: u32,
    tried: &RecordEnd,
) -> Result<Outcome, String> {
    let RecordEnd {
        target, read_end, ..
    } = *tried;
    ensure(tried.waits, || {
        format!(
            "the advance to {target} was still running after {RECORD_END_WAIT_MS} ms, but the \
             record it needs ends at {read_end}, flushed (flush {})",
            tried.after.flush
        )
    })?;
    session.record_waiting(target, read_end, tried.after, tried.confirmed_flush);
    session.observe()?;
    let again = session.advance(target)?;
    let end_lsn = again
        .result
        .map_err(|(code, msg)| format!("advance to {target}: {code} {msg}"))?;
    ensure(end_lsn == target, || {
        format!("after the flush the advance to {target} returned {end_lsn}")
    })?;
    pass(
        session,
        server,
        "advance_waits_for_record_end",
        format!(
            "flush {target} on a page boundary inside a record ending at {read_end} (attempt \
             {attempt}): the advance to it still ran after {RECORD_END_WAIT_MS} ms, \
             confirmed_flush {}; flushed to {}: end_lsn {end_lsn} at once",
            tried.confirmed_flush, tried.flushed.flush
        ),
    )
}

/// Advances the fresh slot to the current flush pointer on an idle server; returns it.
fn advance_to_flush(session: &mut Session) -> Result<Lsn, String> {
    some_wal(session)?;
    let p = session.observe()?;
    let advanced = session.advance(p.flush)?;
    advanced
        .result
        .map_err(|(code, msg)| format!("advance to {}: {code} {msg}", p.flush))
}

/// A target below `confirmed_flush` fails with the model's exact message and changes nothing.
fn below_confirmed_flush_error(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open(server, "walcheck_below")?;
    let cf = advance_to_flush(&mut session)?;
    let p = session.observe()?;
    let target = cf.minus(8);
    let predicted = predict_idle(cf, p.flush, target);
    let advanced = session.advance(target)?;
    let (code, message) = match advanced.result {
        Ok(end_lsn) => return Err(format!("advance to {target} succeeded with {end_lsn}")),
        Err(e) => e,
    };
    let expected = predicted
        .err()
        .ok_or_else(|| "the model predicts success".to_owned())?
        .to_string();
    ensure(message == expected && code == "55000", || {
        format!("server said {code} {message:?}, model says 55000 {expected:?}")
    })?;
    ensure(advanced.confirmed_flush == cf, || {
        format!("confirmed_flush moved to {}", advanced.confirmed_flush)
    })?;
    pass(
        &session,
        server,
        "below_confirmed_flush_error",
        format!("ERROR {code}: {message}"),
    )
}

/// A target equal to `confirmed_flush` returns it and changes nothing.
fn equal_target_no_op(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open(server, "walcheck_equal")?;
    let cf = advance_to_flush(&mut session)?;
    session.observe()?;
    let advanced = session.advance(cf)?;
    ensure(
        advanced.result == Ok(cf) && advanced.confirmed_flush == cf,
        || {
            format!(
                "advance to {cf} gave {:?}, confirmed_flush {}",
                advanced.result, advanced.confirmed_flush
            )
        },
    )?;
    pass(
        &session,
        server,
        "equal_target_no_op",
        format!("end_lsn {cf}, confirmed_flush unchanged"),
    )
}

/// `0/0` fails with `invalid target WAL LSN`.
fn invalid_target(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open(server, "walcheck_invalid")?;
    session.observe()?;
    let advanced = session.advance(Lsn::INVALID)?;
    let expected = AdvanceError::InvalidTarget.to_string();
    match advanced.result {
        Err((code, message)) if message == expected => pass(
            &session,
            server,
            "invalid_target",
            format!("ERROR {code}: {message}"),
        ),
        other => Err(format!(
            "advance to 0/0 gave {other:?}, model says {expected:?}"
        )),
    }
}

/// Targets beyond the insert pointer are clamped without error.
fn beyond_insert_clamped(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open(server, "walcheck_beyond")?;
    some_wal(&mut session)?;
    let mut details = Vec::new();
    for target_of in [|p: Lsn| p.plus(1 << 30), |_| Lsn(u64::MAX)] {
        let p = session.observe()?;
        let target = target_of(p.insert);
        let cf = session.confirmed_flush()?;
        let predicted = predict_idle(cf, p.flush, target);
        let advanced = session.advance(target)?;
        let end_lsn = advanced
            .result
            .map_err(|(code, msg)| format!("advance to {target}: {code} {msg}"))?;
        ensure(
            Ok(end_lsn) == predicted || (p.flush <= end_lsn && end_lsn <= advanced.after.flush),
            || format!("advance to {target} gave {end_lsn}, model says {predicted:?}"),
        )?;
        details.push(format!("{target} -> {end_lsn}"));
    }
    pass(
        &session,
        server,
        "beyond_insert_clamped",
        details.join(", "),
    )
}

/// Whether the last recorded advance moved `restart_lsn` (PostgreSQL's choice, in the action).
fn last_advance_moved_restart(session: &Session) -> bool {
    session
        .trace("", 0)
        .steps
        .iter()
        .rev()
        .find_map(|s| {
            s.action
                .as_deref()
                .filter(|a| a.starts_with("Advance"))
                .map(|a| a.contains("restart_moves: true"))
        })
        .unwrap_or(false)
}

/// An advance, then an immediate shutdown before any checkpoint: after the restart the slot is
/// where the model's saved copy is; then an advance, a CHECKPOINT and a crash keep the slot.
fn crash_before_checkpoint(server: &PgServer) -> Result<Outcome, String> {
    if !server.is_throwaway() {
        return Ok(Outcome::Skip {
            reason: "needs a throwaway server (it stops the server with -m immediate); not run with --pg-url".into(),
        });
    }
    let mut session = Session::open(server, "walcheck_crash")?;
    let created = session.confirmed_flush()?;
    let cf = advance_to_flush(&mut session)?;
    let restart_moved = last_advance_moved_restart(&session);
    let after_crash = session.crash_restart(server)?;
    let predicted = if restart_moved { cf } else { created };
    ensure(after_crash == predicted, || {
        format!(
            "after the crash confirmed_flush is {after_crash}; the model says {predicted} \
             (restart_lsn moved: {restart_moved})"
        )
    })?;
    // Then the same with a CHECKPOINT between the advance and the crash.
    let cf2 = advance_to_flush(&mut session)?;
    session.checkpoint()?;
    let after_second = session.crash_restart(server)?;
    ensure(after_second == cf2, || {
        format!("after CHECKPOINT and a crash confirmed_flush is {after_second}, not {cf2}")
    })?;
    // Then with running-xacts records (each CHECKPOINT logs one) between restart_lsn and the
    // target, so that the advance's decoding can move restart_lsn and save the slot at once.
    session.checkpoint()?;
    some_wal(&mut session)?;
    session.checkpoint()?;
    let cf3 = advance_to_flush(&mut session)?;
    let moved3 = last_advance_moved_restart(&session);
    let after_third = session.crash_restart(server)?;
    let predicted3 = if moved3 { cf3 } else { cf2 };
    ensure(after_third == predicted3, || {
        format!(
            "after the third crash confirmed_flush is {after_third}; the model says {predicted3} \
             (restart_lsn moved: {moved3})"
        )
    })?;
    pass(
        &session,
        server,
        "crash_before_checkpoint",
        format!(
            "advance {created} -> {cf} (restart_lsn moved: {restart_moved}), crash: {after_crash}; \
             advance -> {cf2}, CHECKPOINT, crash: {after_second}; CHECKPOINT twice, advance -> \
             {cf3} (restart_lsn moved: {moved3}), crash: {after_third}"
        ),
    )
}

/// An advance whose decoding meets a running-xacts record at or below the slot's old
/// `confirmed_flush` applies it at once and saves the slot with that *old* `confirmed_flush`
/// (`logical.c:LogicalIncreaseRestartDecodingForSlot`, 15); `moveto` reaches disk only with a
/// candidate past the old `confirmed_flush`. The schedule: a first advance over two records
/// takes the first as its candidate and drops the second (one candidate at a time); the second
/// advance, over WAL with no record of its own, meets that second record below the old
/// `confirmed_flush`. An immediate stop then returns the slot to the first advance's end.
fn advance_saves_old_confirmed_flush(server: &PgServer) -> Result<Outcome, String> {
    if !server.is_throwaway() {
        return Ok(Outcome::Skip {
            reason: "needs a throwaway server (it stops the server with -m immediate); not run with --pg-url".into(),
        });
    }
    let mut session = Session::open(server, "walcheck_saves_old")?;
    let mut model = protocol::slot_now(&mut session)?;
    let restart0 = model.restart_lsn;
    some_wal(&mut session)?;
    session.checkpoint()?;
    some_wal(&mut session)?;
    session.checkpoint()?;
    let mut ends = Vec::new();
    let mut restarts = Vec::new();
    for _ in 0..2 {
        let end = advance_to_flush(&mut session)?;
        let (_, restart) = session.slot_lsns()?;
        model
            .slot_advance(end, end, Some(restart))
            .map_err(|e| format!("the model refuses the advance to {end}: {e}"))?;
        ends.push(end);
        restarts.push(restart);
    }
    let (m1, m2) = (ends[0], ends[1]);
    ensure(
        restart0 < restarts[0] && restarts[0] < restarts[1] && restarts[1] <= m1,
        || {
            format!(
            "the schedule did not happen: restart_lsn {restart0} -> {} -> {} with the first advance ending at {m1} (a running-xacts record logged in between?)",
            restarts[0], restarts[1]
        )
        },
    )?;
    let after = session.crash_restart(server)?;
    model.restore_saved();
    ensure(after == model.confirmed_flush, || {
        format!(
            "advances to {m1} (restart_lsn {}) and {m2} (restart_lsn {}), immediate stop: confirmed_flush {after}, the model says {}",
            restarts[0], restarts[1], model.confirmed_flush
        )
    })?;
    pass(
        &session,
        server,
        "advance_saves_old_confirmed_flush",
        format!(
            "advance -> {m1} (restart_lsn {restart0} -> {}, saved at {m1}); advance -> {m2} (restart_lsn -> {}, at or below {m1}: saved with {m1}); immediate stop: {after}",
            restarts[0], restarts[1]
        ),
    )
}

/// `IDENTIFY_SYSTEM` on a standby answers what it received and flushed, also while replay is
/// paused behind it (`walsender.c:IdentifySystem` → `GetStandbyFlushRecPtr`, 15).
fn identify_system_on_standby(primary: &PgServer) -> Result<Outcome, String> {
    if !primary.is_throwaway() {
        return Ok(Outcome::Skip {
            reason: "needs a throwaway server (it builds a standby); not run with --pg-url".into(),
        });
    }
    let standby = PgServer::start_standby(primary)?;
    let mut client = standby.connect()?;
    client
        .batch_execute("SELECT pg_wal_replay_pause()")
        .map_err(|e| format!("pg_wal_replay_pause(): {}", pg_message(&e)))?;
    let mut primary_client = primary.connect()?;
    primary_client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS walcheck_standby_rows (id int); INSERT INTO walcheck_standby_rows SELECT generate_series(1, 100)",
        )
        .map_err(|e| format!("insert on the primary: {}", pg_message(&e)))?;
    let flushed: String = primary_client
        .query_one("SELECT pg_current_wal_flush_lsn()::text", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    let flushed: Lsn = flushed.parse().map_err(|e| pg_message(&e))?;
    let lsn_of = |client: &mut postgres::Client, sql: &str| -> Result<Lsn, String> {
        let text: Option<String> = client
            .query_one(sql, &[])
            .map_err(|e| format!("{sql}: {}", pg_message(&e)))?
            .get(0);
        text.unwrap_or_else(|| "0/0".into())
            .parse()
            .map_err(|e| format!("{sql}: {}", pg_message(&e)))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while lsn_of(&mut client, "SELECT pg_last_wal_receive_lsn()::text")? < flushed {
        if Instant::now() > deadline {
            return Err(format!(
                "the standby did not receive the primary's WAL up to {flushed}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let identified = ReplicationClient::connect(&standby.replication_target(), "")?
        .identify_system()?
        .xlogpos;
    let received = lsn_of(&mut client, "SELECT pg_last_wal_receive_lsn()::text")?;
    let replayed = lsn_of(&mut client, "SELECT pg_last_wal_replay_lsn()::text")?;
    client
        .batch_execute("SELECT pg_wal_replay_resume()")
        .map_err(|e| format!("pg_wal_replay_resume(): {}", pg_message(&e)))?;
    ensure(replayed < received, || {
        format!("replay {replayed} is not behind the received {received}: replay was not paused")
    })?;
    let mut model = Server::at_rest(Role::Standby, received);
    model.wal.replay = replayed;
    let predicted = identify_system_xlogpos(&model);
    ensure(identified == predicted, || {
        format!(
            "IDENTIFY_SYSTEM on the standby: xlogpos {identified} (received {received}, replayed {replayed}); the model says {predicted}"
        )
    })?;
    Ok(Outcome::Pass {
        detail: format!(
            "replay paused at {replayed}, received {received}: IDENTIFY_SYSTEM xlogpos {identified}"
        ),
        trace: None,
    })
}

/// On a standby (pg_basebackup of the primary), `pg_current_wal_lsn()` fails as the model says
/// and `pg_last_wal_replay_lsn()` answers, as OLake #1070's query needs.
fn standby_wal_functions(primary: &PgServer) -> Result<Outcome, String> {
    if !primary.is_throwaway() {
        return Ok(Outcome::Skip {
            reason: "needs a throwaway server (it builds a standby with pg_basebackup); not run with --pg-url".into(),
        });
    }
    let standby = PgServer::start_standby(primary)?;
    let mut client = standby.connect()?;
    let (code, message) = match client.query_one("SELECT pg_current_wal_lsn()::text", &[]) {
        Ok(row) => {
            let lsn: String = row.get(0);
            return Err(format!("pg_current_wal_lsn() answered {lsn} on a standby"));
        }
        Err(e) => db_error(&e),
    };
    let expected = WalFunctionError::RecoveryInProgress.to_string();
    ensure(
        message == expected && code == WalFunctionError::RecoveryInProgress.sqlstate(),
        || {
            format!(
                "standby said {code} {message:?}; the model says {} {expected:?}",
                WalFunctionError::RecoveryInProgress.sqlstate()
            )
        },
    )?;
    let row = client
        .query_one(
            "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
             ELSE pg_current_wal_lsn() END::text",
            &[],
        )
        .map_err(|e| format!("OLake #1070's query: {}", pg_message(&e)))?;
    let replay: Option<String> = row.get(0);
    let replay = replay.ok_or("pg_last_wal_replay_lsn() is NULL on the standby")?;
    let replay: Lsn = replay
        .parse()
        .map_err(|e| format!("{replay}: {}", pg_message(&e)))?;
    let primary_flush: String = primary
        .connect()?
        .query_one("SELECT pg_current_wal_flush_lsn()::text", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    let primary_flush: Lsn = primary_flush.parse().map_err(|e| pg_message(&e))?;
    ensure(replay <= primary_flush, || {
        format!("replay {replay} beyond the primary's flush {primary_flush}")
    })?;
    Ok(Outcome::Pass {
        detail: format!(
            "pg_current_wal_lsn(): ERROR {code}: {message}; pg_last_wal_replay_lsn() = {replay} \
             (primary flush {primary_flush})"
        ),
        trace: None,
    })
}

/// Logical slots on a standby exist from PostgreSQL 16: the advance clamps to the replay pointer.
fn standby_slot_clamp(primary: &PgServer) -> Result<Outcome, String> {
    if primary.version_num() < 160_000 {
        return Ok(Outcome::Skip {
            reason: format!(
                "logical slots on a standby need PostgreSQL >= 16; this server is {} \
                 (Debian 12 ships 15): the standby clamp is checked by the model only",
                primary.version_num()
            ),
        });
    }
    if !primary.is_throwaway() {
        return Ok(Outcome::Skip {
            reason: "needs a throwaway server (it builds a standby); not run with --pg-url".into(),
        });
    }
    let standby = PgServer::start_standby(primary)?;
    // PostgreSQL 16 creates a slot on a standby once it replays a running-xacts record.
    let logger = {
        let mut client = primary.connect()?;
        std::thread::spawn(move || {
            for _ in 0..50 {
                let _ = client.batch_execute("SELECT pg_log_standby_snapshot()");
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let mut client = standby.connect()?;
    client
        .execute(
            "SELECT pg_create_logical_replication_slot('walcheck_standby', 'test_decoding')",
            &[],
        )
        .map_err(|e| format!("create slot on standby: {}", pg_message(&e)))?;
    let _ = logger.join();
    let row = client
        .query_one(
            "SELECT end_lsn::text, pg_last_wal_replay_lsn()::text \
             FROM pg_replication_slot_advance('walcheck_standby', 'FFFFFFFF/FFFFFFFF')",
            &[],
        )
        .map_err(|e| format!("advance on standby: {}", pg_message(&e)))?;
    let end_lsn: Lsn = row
        .get::<_, String>(0)
        .parse()
        .map_err(|e| pg_message(&e))?;
    let replay: Lsn = row
        .get::<_, String>(1)
        .parse()
        .map_err(|e| pg_message(&e))?;
    ensure(end_lsn <= replay, || {
        format!("end_lsn {end_lsn} beyond the replay pointer {replay}")
    })?;
    Ok(Outcome::Pass {
        detail: format!(
            "advance to FFFFFFFF/FFFFFFFF on the standby: {end_lsn} <= replay {replay}"
        ),
        trace: None,
    })
}

/// A missing PostgreSQL: the reason, and whether it must fail (`WALCHECK_REQUIRE_PG=1`).
pub fn skip_or_fail(reason: &str) -> Result<String, String> {
    if crate::server::pg_required() {
        Err(format!("WALCHECK_REQUIRE_PG=1 but {reason}"))
    } else {
        Ok(format!("skipped: {reason}"))
    }
}

/// Whether a rule's error is a setup error ([`SETUP_ERROR`]), not a failed prediction.
pub fn is_setup_error(error: &str) -> bool {
    error.starts_with(SETUP_ERROR)
}

/// One rule's run: its outcome, and for a rule that did not pass the trace its last session
/// had observed (for `walcheck replay`), when it had one.
pub struct RuleRun {
    pub rule: &'static Rule,
    pub result: Result<Outcome, String>,
    pub failed_trace: Option<Box<Trace>>,
}

/// Runs `rule` on `server`; a failure keeps the observed trace of the session it ended.
pub fn run_rule(rule: &'static Rule, server: &PgServer) -> RuleRun {
    crate::session::forget_last_trace();
    let result = match crate::versions::version_skip(rule.name, server.version_num()) {
        Some(reason) => Ok(Outcome::Skip { reason }),
        None => (rule.check)(server),
    };
    // The rule's own message goes with its trace, which says `violated`.
    let failed_trace = result.as_ref().err().and_then(|e| {
        let mut trace = crate::session::take_last_trace(rule.name)?;
        trace.header.config.insert("failure".to_owned(), e.clone());
        Some(Box::new(trace))
    });
    RuleRun {
        rule,
        result,
        failed_trace,
    }
}

/// Runs every rule on `server`, in order. Each rule uses its own slot and drops nothing it does
/// not own. An interrupt (SIGINT) stops it before the next rule ([`crate::server::interrupted`]).
pub fn run_all(server: &PgServer) -> Vec<RuleRun> {
    let mut runs = Vec::new();
    for rule in RULES {
        if crate::server::interrupted() {
            break;
        }
        runs.push(run_rule(rule, server));
    }
    runs
}

/// The conformance report: one row per rule (pass, skip, FAIL, or ERROR when the server could
/// not be set up for it, and what the server did).
pub fn to_text(server: &PgServer, runs: &[RuleRun]) -> String {
    let mut out = format!(
        "live conformance on PostgreSQL {} (server_version_num; measured on this machine)\n",
        server.version_num()
    );
    for run in runs {
        let (status, detail) = match &run.result {
            Ok(Outcome::Pass { detail, .. }) => ("pass", detail.clone()),
            Ok(Outcome::Skip { reason }) => ("skip", reason.clone()),
            Err(e) if is_setup_error(e) => ("ERROR", e.clone()),
            Err(e) => ("FAIL", e.clone()),
        };
        out.push_str(&format!(
            "{status:<4}  {:<28} {detail}\n      model: {}\n",
            run.rule.name, run.rule.source
        ));
    }
    let count = |f: &dyn Fn(&Result<Outcome, String>) -> bool| {
        runs.iter().filter(|run| f(&run.result)).count()
    };
    let setup_errors = count(&|r| matches!(r, Err(e) if is_setup_error(e)));
    out.push_str(&format!(
        "{} rules: {} pass, {} skip, {} fail",
        runs.len(),
        count(&|r| matches!(r, Ok(Outcome::Pass { .. }))),
        count(&|r| matches!(r, Ok(Outcome::Skip { .. }))),
        count(&|r| matches!(r, Err(e) if !is_setup_error(e))),
    ));
    if setup_errors > 0 {
        out.push_str(&format!(
            ", {setup_errors} not run (the server could not be set up for them)"
        ));
    }
    out.push('\n');
    out
}
