//! Live conformance: one test per modelled PostgreSQL rule, each on its own throwaway server.
//! Without PostgreSQL binaries they show as ignored, naming what to install (live/build.rs sets
//! `no_postgres`), unless WALCHECK_REQUIRE_PG=1, which makes them run and fail.
#![cfg(not(loom))]

use std::path::Path;

use walcheck_live::conformance::{self, Outcome};
use walcheck_live::session::Session;
use walcheck_live::{find_bindir, find_version_bindir, PgServer};
use walcheck_properties::system::Var;
use walcheck_sim::observed::replay_observed;
use walcheck_traces::replay::Mismatch;

/// A started primary, or `None` (printed) when PostgreSQL is missing and not required.
fn primary(test: &str) -> Option<PgServer> {
    let bindir = match find_bindir() {
        Ok(dir) => dir,
        Err(reason) => match conformance::skip_or_fail(&reason) {
            Ok(skip) => {
                eprintln!("{test}: {skip}");
                return None;
            }
            Err(fail) => panic!("{test}: {fail}"),
        },
    };
    Some(PgServer::start_primary(&bindir).unwrap_or_else(|e| panic!("{test}: {e}")))
}

fn check_rule(name: &str) {
    let Some(server) = primary(name) else { return };
    let rule = conformance::rule(name).expect("a listed rule");
    match (rule.check)(&server) {
        Ok(Outcome::Pass { detail, .. }) => eprintln!("{name}: pass: {detail}"),
        Ok(Outcome::Skip { reason }) => eprintln!("{name}: skipped: {reason}"),
        Err(e) => panic!("{name}: {e}"),
    }
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn clamp_to_flush() {
    check_rule("clamp_to_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn end_lsn_is_confirmed_flush() {
    check_rule("end_lsn_is_confirmed_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn advance_waits_for_record_end() {
    check_rule("advance_waits_for_record_end");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn below_confirmed_flush_error() {
    check_rule("below_confirmed_flush_error");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn equal_target_no_op() {
    check_rule("equal_target_no_op");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn invalid_target() {
    check_rule("invalid_target");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn beyond_insert_clamped() {
    check_rule("beyond_insert_clamped");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn crash_before_checkpoint() {
    check_rule("crash_before_checkpoint");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn advance_saves_old_confirmed_flush() {
    check_rule("advance_saves_old_confirmed_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn advance_leaves_slot_dirty() {
    check_rule("advance_leaves_slot_dirty");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn get_changes_leaves_slot_dirty() {
    check_rule("get_changes_leaves_slot_dirty");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn identify_system_on_standby() {
    check_rule("identify_system_on_standby");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn standby_wal_functions() {
    check_rule("standby_wal_functions");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn standby_slot_clamp() {
    check_rule("standby_slot_clamp");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn identify_system_xlogpos() {
    check_rule("identify_system_xlogpos");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn start_at_zero_from_confirmed_flush() {
    check_rule("start_at_zero_from_confirmed_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn start_below_confirmed_flush() {
    check_rule("start_below_confirmed_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn start_skips_by_commit_start() {
    check_rule("start_skips_by_commit_start");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn start_past_flush_accepted() {
    check_rule("start_past_flush_accepted");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn pgoutput_begin_commit_lsns() {
    check_rule("pgoutput_begin_commit_lsns");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn pgoutput_change_lsns() {
    check_rule("pgoutput_change_lsns");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn interleaved_commit_order() {
    check_rule("interleaved_commit_order");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn unpublished_txn_sends_nothing() {
    check_rule("unpublished_txn_sends_nothing");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn other_database_txn_sends_nothing() {
    check_rule("other_database_txn_sends_nothing");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn async_commit_streamed_after_flush() {
    check_rule("async_commit_streamed_after_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn wal_buffers_written_unflushed() {
    check_rule("wal_buffers_written_unflushed");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_saved_with_candidate() {
    check_rule("status_update_saved_with_candidate");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn keepalive_below_confirmed_flush() {
    check_rule("keepalive_below_confirmed_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn keepalive_inside_unsent_transaction() {
    check_rule("keepalive_inside_unsent_transaction");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn keepalive_reply_requested() {
    check_rule("keepalive_reply_requested");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn shutdown_keepalive_requests_reply() {
    check_rule("shutdown_keepalive_requests_reply");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_only_flush() {
    check_rule("status_update_only_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_zero_flush_ignored() {
    check_rule("status_update_zero_flush_ignored");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_no_clamp() {
    check_rule("status_update_no_clamp");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_never_backwards() {
    check_rule("status_update_never_backwards");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_lost_in_crash() {
    check_rule("status_update_lost_in_crash");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn status_update_not_saved() {
    check_rule("status_update_not_saved");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn sql_peek_confirms_nothing() {
    check_rule("sql_peek_confirms_nothing");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn sql_get_confirms_and_marks_dirty() {
    check_rule("sql_get_confirms_and_marks_dirty");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn sql_upto_lsn_includes_crossing_record() {
    check_rule("sql_upto_lsn_includes_crossing_record");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn sql_upto_nchanges_whole_txns() {
    check_rule("sql_upto_nchanges_whole_txns");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn sql_decoding_bounded_by_flush() {
    check_rule("sql_decoding_bounded_by_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn create_slot_at_consistent_point() {
    check_rule("create_slot_at_consistent_point");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn wal_retention_min_restart_lsn() {
    check_rule("wal_retention_min_restart_lsn");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn slot_invalidated_by_max_slot_wal_keep_size() {
    check_rule("slot_invalidated_by_max_slot_wal_keep_size");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn shutdown_waits_until_wal_sender_timeout() {
    check_rule("shutdown_waits_until_wal_sender_timeout");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn wal_sender_timeout_ends_idle_stream() {
    check_rule("wal_sender_timeout_ends_idle_stream");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn replay_lsn_on_primary() {
    check_rule("replay_lsn_on_primary");
}

/// Every rule on a throwaway server of PostgreSQL `version` (`.ci/pg-versions` installs it):
/// each passes or skips with its reason (a rule the model does not yet fit on that version
/// skips as `walcheck_live::versions::version_skip` says), `standby_slot_clamp` runs on 16+,
/// `promotion` on all, the failover slot rules on 17+, and
/// the rules whose prediction differs by release (`walcheck_model::pg::PgVersion`) pass.
/// Without the version's binaries it is skipped, unless WALCHECK_REQUIRE_PG=1.
fn conformance_on(version: &str) {
    // One version at a time: several servers streaming at once on two cores starve the rules
    // that wait on the server's timers (keepalive_reply_requested, wal_retention_min_restart_lsn).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let test = format!("conformance_on_postgresql_{version}");
    let bindir = match find_version_bindir(version.parse().unwrap()) {
        Ok(dir) => dir,
        Err(reason) => match conformance::skip_or_fail(&reason) {
            Ok(skip) => {
                eprintln!("{test}: {skip}");
                return;
            }
            Err(fail) => panic!("{test}: {fail}"),
        },
    };
    let server = PgServer::start_primary(&bindir).unwrap_or_else(|e| panic!("{test}: {e}"));
    let asked: walcheck_live::AskedVersion = version.parse().unwrap();
    assert_eq!(server.version_num() / 10_000, asked.major, "{test}");
    if let Some(minor) = asked.minor {
        assert_eq!(server.version_num() % 10_000, minor, "{test}");
    }
    let started = std::time::Instant::now();
    let runs = conformance::run_all(&server);
    let report = conformance::to_text(&server, &runs);
    eprintln!("{test} ({} s):\n{report}", started.elapsed().as_secs());
    let failed: Vec<&str> = runs
        .iter()
        .filter(|run| run.result.is_err())
        .map(|run| run.rule.name)
        .collect();
    assert!(
        failed.is_empty(),
        "{test}: {failed:?} did not pass:\n{report}"
    );
    assert_eq!(runs.len(), conformance::RULES.len());
    for by_release in [
        "status_update_never_backwards",
        "status_update_not_saved",
        "shutdown_keepalive_requests_reply",
    ] {
        let run = runs.iter().find(|run| run.rule.name == by_release).unwrap();
        assert!(
            matches!(run.result, Ok(Outcome::Pass { .. })),
            "{test}: {by_release}: {:?}",
            run.result
        );
    }
    for (rule, from_version_num) in [
        ("standby_slot_clamp", 160_000),
        ("promotion", 0),
        ("failover_slot_synced", 170_000),
        ("failover_slot_waits_for_standby", 170_000),
    ] {
        let run = runs.iter().find(|run| run.rule.name == rule).unwrap();
        assert_eq!(
            matches!(run.result, Ok(Outcome::Pass { .. })),
            server.version_num() >= from_version_num,
            "{test}: {rule}: {:?}",
            run.result
        );
    }
}

#[test]
#[cfg_attr(
    no_pg15_12,
    ignore = "needs PostgreSQL 15.12: bash .ci/pg-versions (or set WALCHECK_PG_VERSIONS_DIR)"
)]
fn conformance_on_postgresql_15_12() {
    conformance_on("15.12");
}

/// A 15 minor pinned apart from Debian's, whose security updates move it.
#[test]
#[cfg_attr(
    no_pg15_18,
    ignore = "needs PostgreSQL 15.18: bash .ci/pg-versions (or set WALCHECK_PG_VERSIONS_DIR)"
)]
fn conformance_on_postgresql_15_18() {
    conformance_on("15.18");
}

#[test]
#[cfg_attr(
    no_pg16,
    ignore = "needs PostgreSQL 16: bash .ci/pg-versions (or set WALCHECK_PG_VERSIONS_DIR)"
)]
fn conformance_on_postgresql_16() {
    conformance_on("16");
}

#[test]
#[cfg_attr(
    no_pg17,
    ignore = "needs PostgreSQL 17: bash .ci/pg-versions (or set WALCHECK_PG_VERSIONS_DIR)"
)]
fn conformance_on_postgresql_17() {
    conformance_on("17");
}

#[test]
#[cfg_attr(
    no_pg18,
    ignore = "needs PostgreSQL 18: bash .ci/pg-versions (or set WALCHECK_PG_VERSIONS_DIR)"
)]
fn conformance_on_postgresql_18() {
    conformance_on("18");
}

/// Where the binaries have both, `pg_walinspect` and `pg_waldump` list the same records (the
/// kind, transaction, start and length of each; the description's first word), so the rules
/// read the WAL alike on every version.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn walinspect_and_waldump_read_the_same_records() {
    use walcheck_live::wal_reader::WalReader;
    use walcheck_live::waldump;
    let Some(server) = primary("walinspect_and_waldump_read_the_same_records") else {
        return;
    };
    let Some(dump) = server.wal_reader().filter(|r| !r.needs_running_server()) else {
        eprintln!("these binaries have no pg_waldump: nothing to compare");
        return;
    };
    let mut client = server.connect().unwrap();
    let lsn = |client: &mut postgres::Client, q: &str| -> walcheck_model::Lsn {
        let text: String = client.query_one(q, &[]).unwrap().get(0);
        text.parse().unwrap()
    };
    client
        .batch_execute("CREATE EXTENSION pg_walinspect")
        .unwrap();
    let start = lsn(&mut client, "SELECT pg_current_wal_flush_lsn()::text");
    client
        .batch_execute(
            "CREATE TABLE walcheck_rows (id int, v text); \
             INSERT INTO walcheck_rows SELECT g, repeat('x', 300) FROM generate_series(1, 100) g; \
             CHECKPOINT; INSERT INTO walcheck_rows VALUES (0, 'a')",
        )
        .unwrap();
    let end = lsn(&mut client, "SELECT pg_current_wal_flush_lsn()::text");
    let inspect = WalReader::walinspect(server.port());
    let read = |reader: &WalReader| -> Vec<(String, u32, walcheck_model::Lsn, u64, String)> {
        waldump::parse(&reader.waldump(start, end).unwrap())
            .into_iter()
            .map(|r| {
                let kind = r.desc.split_whitespace().next().unwrap_or("").to_owned();
                (r.rmgr, r.xid, r.lsn, r.total_bytes, kind)
            })
            .collect()
    };
    let (dumped, inspected) = (read(&dump), read(&inspect));
    assert!(dumped.len() > 10, "{dumped:?}");
    assert!(
        dumped.iter().any(|r| r.4 == "COMMIT") && dumped.iter().any(|r| r.4 == "RUNNING_XACTS")
    );
    assert_eq!(dumped, inspected);
    assert_eq!(
        dump.latest_checkpoint().unwrap(),
        inspect.latest_checkpoint().unwrap()
    );
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn walwriter_writes_without_flush() {
    check_rule("walwriter_writes_without_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn checkpoint_flushes_wal() {
    check_rule("checkpoint_flushes_wal");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn sync_commit_waits_for_flush() {
    check_rule("sync_commit_waits_for_flush");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn restart_after_advance() {
    check_rule("restart_after_advance");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn restartpoint_on_standby() {
    check_rule("restartpoint_on_standby");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn promotion() {
    check_rule("promotion");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn failover_slot_synced() {
    check_rule("failover_slot_synced");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn failover_slot_waits_for_standby() {
    check_rule("failover_slot_waits_for_standby");
}

#[test]
fn every_rule_has_a_test_here() {
    let source = include_str!("live.rs");
    for rule in conformance::RULES {
        assert!(
            source.contains(&format!("fn {}()", rule.name)),
            "{} has no test",
            rule.name
        );
    }
}

fn gone(root: &Path, pid: Option<u32>) {
    assert!(!root.exists(), "{} left behind", root.display());
    if let Some(pid) = pid {
        assert!(
            !walcheck_live::server::process_alive(pid),
            "postmaster {pid} still running"
        );
    }
}

/// Dropping a server stops it and deletes its directory (and with it every slot), also when the
/// owning thread panics.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn live_servers_leave_nothing_behind() {
    let Some(server) = primary("live_servers_leave_nothing_behind") else {
        return;
    };
    let root = server.root().to_owned();
    let pid = server.postmaster_pid();
    assert!(pid.is_some(), "a started server has a postmaster");
    {
        let mut session = Session::open(&server, "walcheck_leftover").unwrap();
        session.observe().unwrap();
    }
    let standby = PgServer::start_standby(&server).unwrap();
    let (standby_root, standby_pid) = (standby.root().to_owned(), standby.postmaster_pid());
    drop(standby);
    gone(&standby_root, standby_pid);
    drop(server);
    gone(&root, pid);

    let bindir = find_bindir().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let panicked = std::thread::spawn(move || {
        let server = PgServer::start_primary(&bindir).unwrap();
        let _session = Session::open(&server, "walcheck_panic").unwrap();
        tx.send((server.root().to_owned(), server.postmaster_pid()))
            .unwrap();
        panic!("a test failing with a live server");
    })
    .join();
    assert!(panicked.is_err());
    let (root, pid) = rx.recv().unwrap();
    gone(&root, pid);
}

/// A recorded live trace replays against the model; the same trace with one observed value
/// edited is rejected at that step.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn recorded_trace_replays_and_an_edited_one_is_rejected() {
    let Some(server) = primary("recorded_trace_replays") else {
        return;
    };
    let Ok(Outcome::Pass {
        trace: Some(trace), ..
    }) = (conformance::rule("crash_before_checkpoint").unwrap().check)(&server)
    else {
        panic!("crash_before_checkpoint did not pass")
    };
    // Through the ITF text, as `walcheck replay` reads it.
    let trace = walcheck_traces::Trace::from_text(&trace.to_text()).unwrap();
    assert_eq!(replay_observed(&trace).unwrap(), Ok(trace.steps.len() - 1));

    let step = trace
        .steps
        .iter()
        .position(|s| s.action.as_deref() == Some("PgCrash"))
        .expect("a crash step");
    let mut edited = trace.clone();
    let cf = edited.steps[step]
        .vars
        .iter_mut()
        .find(|(n, _)| n == "confirmed_flush")
        .unwrap();
    let Var::Text(text) = &cf.1 else { panic!() };
    let wrong: walcheck_model::Lsn = text.parse().unwrap();
    cf.1 = Var::Text(wrong.plus(8).to_string());
    match replay_observed(&edited).unwrap() {
        Err(Mismatch::StateDiffers {
            step: at, diffs, ..
        }) => {
            assert_eq!(at, step);
            assert_eq!(diffs[0].name, "confirmed_flush");
        }
        other => panic!("edited trace: {other:?}"),
    }
}

/// `--pg-url`: the rules run on an existing loopback server, those that restart it or build a
/// standby skip, and nothing named `walcheck_*` is left behind (slot, publication, table); a
/// server that has such objects is refused, with the statements that drop them.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn rules_on_an_existing_server_leave_no_slot() {
    let Some(server) = primary("rules_on_an_existing_server") else {
        return;
    };
    let url = format!("postgresql://postgres@127.0.0.1:{}/postgres", server.port());
    let external = PgServer::external(&url).unwrap();
    assert!(!external.is_throwaway());
    let runs = conformance::run_all(&external);
    for run in &runs {
        match (run.rule.name, &run.result) {
            (
                "crash_before_checkpoint"
                | "standby_wal_functions"
                | "standby_slot_clamp"
                | "status_update_lost_in_crash"
                | "status_update_not_saved"
                | "status_update_saved_with_candidate"
                | "shutdown_keepalive_requests_reply"
                | "other_database_txn_sends_nothing"
                | "async_commit_streamed_after_flush"
                | "sql_decoding_bounded_by_flush"
                | "sql_get_confirms_and_marks_dirty"
                | "wal_retention_min_restart_lsn"
                | "replay_lsn_on_primary"
                | "wal_buffers_written_unflushed"
                | "advance_waits_for_record_end"
                | "advance_saves_old_confirmed_flush"
                | "advance_leaves_slot_dirty"
                | "identify_system_on_standby"
                | "get_changes_leaves_slot_dirty"
                | "walwriter_writes_without_flush"
                | "sync_commit_waits_for_flush"
                | "restart_after_advance"
                | "restartpoint_on_standby"
                | "promotion"
                | "failover_slot_synced"
                | "failover_slot_waits_for_standby"
                | "slot_invalidated_by_max_slot_wal_keep_size"
                | "shutdown_waits_until_wal_sender_timeout",
                Ok(Outcome::Skip { .. }),
            ) => {}
            (_, Ok(Outcome::Pass { .. })) => {}
            (name, other) => panic!("{name}: {other:?}"),
        }
    }
    let slots: i64 = server
        .connect()
        .unwrap()
        .query_one("SELECT count(*) FROM pg_replication_slots", &[])
        .unwrap()
        .get(0);
    assert_eq!(slots, 0);
    drop(external);
    assert!(
        server.postmaster_pid().is_some(),
        "an external server is not stopped"
    );
    let left: i64 = server
        .connect()
        .unwrap()
        .query_one(
            "SELECT (SELECT count(*) FROM pg_tables WHERE tablename LIKE 'walcheck%') \
             + (SELECT count(*) FROM pg_publication WHERE pubname LIKE 'walcheck%')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "walcheck's tables or publications left behind");
    server
        .connect()
        .unwrap()
        .batch_execute("CREATE TABLE walcheck_rows (id int)")
        .unwrap();
    let Err(e) = PgServer::external(&url) else {
        panic!("a server with a walcheck_ table was accepted")
    };
    assert!(
        e.contains("walcheck_rows") && e.contains("DROP TABLE IF EXISTS public.walcheck_rows"),
        "{e}"
    );
    let Err(e) = PgServer::external("postgresql://postgres@192.0.2.1:5432/postgres") else {
        panic!("a non-loopback --pg-url was accepted")
    };
    assert!(e.contains("only a loopback host"), "{e}");
}

/// The reference bootstrap (`reference::bootstrap::advance_until_confirmed`) on a live server
/// under a bulk load, which keeps opening write > flush (as `clamp_to_flush` does): bootstraps
/// run one after another until one was clamped and retried, and after each the state equals the
/// slot's `confirmed_flush`, so it is seeded only with what the slot confirmed.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn reference_bootstrap_seeds_what_the_slot_confirmed() {
    use walcheck_live::load::{Load, Workload};
    use walcheck_sim::reference::bootstrap::{advance_until_confirmed, RetryPolicy};

    const MAX_BOOTSTRAPS: u32 = 400;
    const LOAD_MS: u64 = 8_000;
    let Some(server) = primary("reference_bootstrap_seeds_what_the_slot_confirmed") else {
        return;
    };
    let mut session = Session::open(&server, "walcheck_reference_bootstrap").unwrap();
    let load = Load::start(&server, Workload::Bulk { rows: 20_000 }, LOAD_MS).unwrap();
    let (mut bootstraps, mut retried) = (0u32, None);
    while bootstraps < MAX_BOOTSTRAPS && retried.is_none() {
        bootstraps += 1;
        let mut state = None;
        let confirmed =
            advance_until_confirmed(&mut session, RetryPolicy::PR1084, |lsn| state = Some(lsn))
                .unwrap_or_else(|e| panic!("bootstrap {bootstraps} failed: {e}"));
        let confirmed_flush = session.confirmed_flush().unwrap();
        assert_eq!(state, Some(confirmed_flush), "bootstrap {bootstraps}");
        assert_eq!(confirmed.lsn, confirmed_flush, "bootstrap {bootstraps}");
        if confirmed.attempts > 1 {
            retried = Some(confirmed);
        }
    }
    let statements = load.finish().unwrap();
    let retried = retried.unwrap_or_else(|| {
        panic!("no bootstrap of {bootstraps} was clamped under {statements} bulk statements")
    });
    eprintln!(
        "reference bootstrap: {bootstraps} bootstrap(s); the clamped one seeded {} after {} \
         advance(s), {} ms of retries",
        retried.lsn, retried.attempts, retried.waited_ms
    );
}

/// A run that fails on a `--pg-url` server (here: its session is never dropped) leaves neither
/// its slot nor the load table there: dropping the server handle removes them.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn a_failed_run_leaves_no_slot_or_load_table_on_an_existing_server() {
    use walcheck_live::load::{Load, Workload};
    let Some(server) = primary("a_failed_run_leaves_nothing_on_an_existing_server") else {
        return;
    };
    let count = |sql: &str| -> i64 {
        server
            .connect()
            .unwrap()
            .query_one(sql, &[])
            .unwrap()
            .get(0)
    };
    let url = format!("postgresql://postgres@127.0.0.1:{}/postgres", server.port());
    let external = PgServer::external(&url).unwrap();
    let session = Session::open(&external, "walcheck_failed_run").unwrap();
    Load::start(&external, Workload::Bulk { rows: 10 }, 200)
        .unwrap()
        .finish()
        .unwrap();
    std::mem::forget(session);
    assert_eq!(count("SELECT count(*) FROM pg_replication_slots"), 1);
    assert_eq!(
        count("SELECT count(*) FROM pg_tables WHERE tablename = 'walcheck_load'"),
        1
    );
    drop(external);
    assert_eq!(count("SELECT count(*) FROM pg_replication_slots"), 0);
    assert_eq!(
        count("SELECT count(*) FROM pg_tables WHERE tablename = 'walcheck_load'"),
        0
    );
}

/// The replication client on its own: IDENTIFY_SYSTEM, START_REPLICATION of a pgoutput slot, a
/// published transaction as Begin … Commit with the LSNs the session read around its commit, a
/// keepalive, a status update that reaches the slot.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn replication_client_streams_a_transaction() {
    use walcheck_live::replication::{CopyMessage, PgOutputMessage, ReplicationClient};
    use walcheck_model::Lsn;
    let Some(server) = primary("replication_client_streams_a_transaction") else {
        return;
    };
    let mut sql = server.connect().unwrap();
    sql.batch_execute(
        "CREATE TABLE walcheck_pub (id int, v text); CREATE PUBLICATION walcheck_p FOR TABLE walcheck_pub",
    )
    .unwrap();
    sql.execute(
        "SELECT pg_create_logical_replication_slot('walcheck_client', 'pgoutput')",
        &[],
    )
    .unwrap();
    let lsn = |sql: &mut postgres::Client, q: &str| -> Lsn {
        let text: String = sql.query_one(q, &[]).unwrap().get(0);
        text.parse().unwrap()
    };
    sql.batch_execute("BEGIN; INSERT INTO walcheck_pub VALUES (1, 'a')")
        .unwrap();
    let commit_lsn = lsn(&mut sql, "SELECT pg_current_wal_insert_lsn()::text");
    sql.batch_execute("COMMIT").unwrap();
    let end_lsn = lsn(&mut sql, "SELECT pg_current_wal_insert_lsn()::text");
    let target = server.replication_target();
    let mut client = ReplicationClient::connect(&target, "").unwrap();
    let identified = client.identify_system().unwrap();
    assert_eq!(
        identified.xlogpos,
        lsn(&mut sql, "SELECT pg_current_wal_flush_lsn()::text")
    );
    client
        .start_replication("walcheck_client", Lsn::INVALID, "walcheck_p")
        .unwrap();
    let messages = client
        .recv_until_quiet(std::time::Duration::from_millis(500), 100)
        .unwrap();
    eprintln!("commit_lsn {commit_lsn} end_lsn {end_lsn}: {messages:#?}");
    let begin = messages.iter().find_map(|m| match m {
        CopyMessage::XLogData {
            message: PgOutputMessage::Begin { final_lsn, .. },
            ..
        } => Some(*final_lsn),
        _ => None,
    });
    assert_eq!(begin, Some(commit_lsn));
    let commit = messages.iter().find_map(|m| match m {
        CopyMessage::XLogData {
            wal_start,
            message:
                PgOutputMessage::Commit {
                    commit_lsn,
                    end_lsn,
                },
            ..
        } => Some((*wal_start, *commit_lsn, *end_lsn)),
        _ => None,
    });
    assert_eq!(commit, Some((end_lsn, commit_lsn, end_lsn)));
    assert!(messages
        .iter()
        .any(|m| matches!(m, CopyMessage::Keepalive { .. })));
    client
        .send_status(end_lsn, end_lsn, end_lsn, false)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        lsn(
            &mut sql,
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'walcheck_client'"
        ),
        end_lsn
    );
    client.close().unwrap();
}

/// A rule that fails keeps what its session observed up to the failure, for `walcheck replay`.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn a_failed_rule_keeps_its_observed_trace() {
    fn observe_then_fail(server: &PgServer) -> Result<Outcome, String> {
        let mut session = Session::open(server, "walcheck_failing")?;
        session.observe()?;
        Err("made to fail".into())
    }
    static FAILING: conformance::Rule = conformance::Rule {
        name: "made_to_fail",
        source: "none",
        check: observe_then_fail,
    };
    let Some(server) = primary("a_failed_rule_keeps_its_observed_trace") else {
        return;
    };
    let run = conformance::run_rule(&FAILING, &server);
    assert_eq!(run.result.unwrap_err(), "made to fail");
    let trace = run.failed_trace.expect("the failed rule's trace");
    assert_eq!(trace.header.config["rule"], "made_to_fail");
    assert_eq!(trace.header.config["failure"], "made to fail");
    assert_eq!(trace.header.verdict, "violated");
    // The slot's first state and the Observe step.
    assert_eq!(trace.steps.len(), 2);
    assert_eq!(trace.steps[1].action.as_deref(), Some("Observe"));
    // What it saw replays: the failure was the rule's, not the model's.
    assert!(matches!(replay_observed(&trace), Ok(Ok(_))));
}
