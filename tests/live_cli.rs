//! `walcheck live` refuses bad input in one line, exit 2, before touching any server.

use std::process::Command;

use crate::util::walcheck_command;

/// `walcheck ARGS`: its exit code, stdout and stderr.
fn walcheck(args: &[&str]) -> (i32, String, String) {
    let out = crate::util::walcheck(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A PostgreSQL server of the test's own, started from the installed binaries, for a `--pg-url`
/// run, and that URL; `None`, after saying why on stderr, where PostgreSQL is missing and the
/// test may skip (with `WALCHECK_REQUIRE_PG=1` it panics instead).
fn external_server(test: &str) -> Option<(walcheck_live::PgServer, String)> {
    use walcheck_live::conformance::skip_or_fail;
    use walcheck_live::{find_bindir, PgServer};

    let bindir = match find_bindir() {
        Ok(dir) => dir,
        Err(reason) => match skip_or_fail(&reason) {
            Ok(skip) => {
                eprintln!("{test}: {skip}");
                return None;
            }
            Err(fail) => panic!("{fail}"),
        },
    };
    let server = PgServer::start_primary(&bindir).unwrap();
    let url = format!("postgresql://postgres@127.0.0.1:{}/postgres", server.port());
    Some((server, url))
}

/// The count `sql` selects on `server`.
fn select_count(server: &walcheck_live::PgServer, sql: &str) -> i64 {
    server
        .connect()
        .unwrap()
        .query_one(sql, &[])
        .unwrap()
        .get(0)
}

#[test]
fn live_rejects_bad_input_in_one_line() {
    for args in [
        &[
            "live",
            "conformance",
            "--pg-url",
            "postgresql://postgres@db.example:5432/x",
        ][..],
        &["live", "conformance", "--pg-url", "not a url"],
        &["live", "ladder", "--attempts", "0"],
        &["live", "ladder", "--ladder", "sideways"],
        &["live", "ladder", "--level-ms", "-5"],
        &["live", "conformance", "--pg-version", "sixteen"],
        &["live", "conformance", "--pg-version", "16.99"],
        &["live", "ladder", "--pg-bindir", "/nonexistent/bin"],
        &[
            "live",
            "conformance",
            "--pg-version",
            "16",
            "--pg-url",
            "postgresql://postgres@127.0.0.1:5432/postgres",
        ],
        &["live", "sideways"],
        // Not taken for a missing top-level command.
        &["live"],
    ] {
        let (code, stdout, stderr) = walcheck(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("walcheck: error: "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("a command is required: list"), "{stderr}");
    }
    // A negative number reaches the same range message as any other out of range, and a
    // --trace-out that cannot be made is refused before a server starts.
    for (args, message) in [
        (
            &["live", "ladder", "--attempts", "-1"][..],
            "--attempts takes 1 to 1000, not \"-1\"",
        ),
        (
            &["live", "ladder", "--level-ms", "-5"],
            "--level-ms takes 1 to 600000, not \"-5\"",
        ),
        (
            &["live", "ladder", "--sim-attempts", "-3"],
            "--sim-attempts takes 1 to 100000, not \"-3\"",
        ),
        (
            &["live", "conformance", "--trace-out", "/proc/walcheck-nope"],
            "cannot create /proc/walcheck-nope",
        ),
        (
            &["live", "conformance", "--pg-version", "16.99"],
            "no PostgreSQL 16.99 binaries (found: ",
        ),
        (
            &["live", "conformance", "--pg-bindir", "/nonexistent/bin"],
            "--pg-bindir /nonexistent/bin: no initdb and pg_ctl there",
        ),
    ] {
        let (code, _, stderr) = walcheck(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// `walcheck replay` takes an observed (partial) trace: states carry only what was observed.
#[test]
fn replay_checks_an_observed_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = |end_lsn: &str| {
        format!(
            r##"{{
  "#meta": {{"format": "ITF", "source": "walcheck", "walcheck:schema": "walcheck.trace/1",
    "walcheck:system": "pg-live", "walcheck:variant": "postgresql-15", "walcheck:faults": "none",
    "walcheck:config": "rule=hand-made", "walcheck:property": "model_predicts_server",
    "walcheck:kind": "observed", "walcheck:verdict": "holds", "walcheck:seed": "none"}},
  "vars": ["insert", "write", "flush", "confirmed_flush", "end_lsn", "error"],
  "states": [
    {{"#meta": {{"index": 0}}, "mbt::actionTaken": "init", "insert": "0/1000", "write": "0/1000",
      "flush": "0/1000", "confirmed_flush": "0/1000"}},
    {{"#meta": {{"index": 1}}, "mbt::actionTaken": "Observe", "insert": "0/9000",
      "write": "0/8000", "flush": "0/3000"}},
    {{"#meta": {{"index": 2}}, "mbt::actionTaken": "Advance{{target: 0/8000, restart_moves: false}}",
      "flush": "0/3000", "end_lsn": "{end_lsn}", "error": "none", "confirmed_flush": "{end_lsn}"}}
  ]
}}
"##
        )
    };
    let good = dir.path().join("good.itf.json");
    let bad = dir.path().join("bad.itf.json");
    std::fs::write(&good, trace("0/3000")).unwrap();
    std::fs::write(&bad, trace("0/8000")).unwrap();
    let (code, stdout, stderr) = walcheck(&["replay", good.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("(2 steps)"), "{stdout}");
    let (code, stdout, _) = walcheck(&["replay", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("step 2 (Advance{target: 0/8000, restart_moves: false}) differs"),
        "{stdout}"
    );
    // Invalid LSN text, in a variable or in an action's argument, is bad input: one line, exit
    // 2, naming it, not a step the model does not predict.
    let lsn = "not an LSN (X/Y, 1 to 8 hex digits each)";
    for (text, reason) in [
        (
            trace("0/3000").replace("target: 0/8000", "target: ZZ/1"),
            format!(
                "state 2 (Advance{{target: ZZ/1, restart_moves: false}}): target is \"ZZ/1\", {lsn}"
            ),
        ),
        (
            trace("0/3000").replace("target: 0/8000", "target: 0/123456789"),
            format!(
                "state 2 (Advance{{target: 0/123456789, restart_moves: false}}): target is \"0/123456789\", {lsn}"
            ),
        ),
        (
            trace("0/3000").replace("\"write\": \"0/8000\"", "\"write\": \"0/80G0\""),
            "write".to_owned(),
        ),
    ] {
        let edited = dir.path().join("edited.itf.json");
        std::fs::write(&edited, text).unwrap();
        let (code, stdout, stderr) = walcheck(&["replay", edited.to_str().unwrap()]);
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&reason), "{stderr} lacks {reason}");
    }
}

/// An interrupted `walcheck live ladder --pg-url` (SIGINT while its load runs) exits 130 and
/// leaves neither its slots nor the load table on the server it was given.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn an_interrupted_ladder_leaves_nothing_on_an_existing_server() {
    use std::time::{Duration, Instant};

    let Some((server, url)) = external_server("an_interrupted_ladder") else {
        return;
    };
    let count = |sql: &str| select_count(&server, sql);
    let mut child = walcheck_command(&["live", "ladder", "--pg-url", &url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("walcheck runs");
    // Wait until the ladder has made its slots and its load has written the table.
    let deadline = Instant::now() + Duration::from_secs(60);
    while count("SELECT count(*) FROM pg_tables WHERE tablename = 'walcheck_load'") == 0
        || count("SELECT count(*) FROM pg_replication_slots") == 0
    {
        assert!(
            Instant::now() < deadline,
            "the ladder never started its load"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the ladder ended early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(count("SELECT count(*) FROM pg_replication_slots") > 0);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("--pg-url server"), "{stderr}");
    assert_eq!(count("SELECT count(*) FROM pg_replication_slots"), 0);
    assert_eq!(
        count("SELECT count(*) FROM pg_tables WHERE tablename = 'walcheck_load'"),
        0
    );
}

/// An interrupted `walcheck live conformance --pg-url` (SIGINT once its publication exists)
/// exits 130 with the `interrupted` line, reports no rule, and leaves nothing named `walcheck_*`
/// on the server it was given: no slot, publication or table.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "needs PostgreSQL: apt-get install postgresql (or set WALCHECK_PG_BINDIR to the directory of its initdb)"
)]
fn an_interrupted_conformance_run_leaves_nothing_on_an_existing_server() {
    use std::time::{Duration, Instant};

    let Some((server, url)) = external_server("an_interrupted_conformance_run") else {
        return;
    };
    let count = |sql: &str| select_count(&server, sql);
    let walcheck_objects = "SELECT (SELECT count(*) FROM pg_replication_slots) \
         + (SELECT count(*) FROM pg_publication WHERE pubname LIKE 'walcheck%') \
         + (SELECT count(*) FROM pg_tables WHERE tablename LIKE 'walcheck%')";
    let child = walcheck_command(&["live", "conformance", "--pg-url", &url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("walcheck runs");
    let deadline = Instant::now() + Duration::from_secs(120);
    while count("SELECT count(*) FROM pg_publication WHERE pubname LIKE 'walcheck%'") == 0 {
        assert!(
            Instant::now() < deadline,
            "the run never made its publication"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let left: Vec<String> = server
        .connect()
        .unwrap()
        .query(
            "SELECT 'slot ' || slot_name FROM pg_replication_slots \
             UNION ALL SELECT 'publication ' || pubname FROM pg_publication \
             UNION ALL SELECT 'table ' || tablename FROM pg_tables WHERE tablename LIKE 'walcheck%'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        count(walcheck_objects),
        0,
        "left on the server: {left:?}\n{stderr}"
    );
}
