//! Connector files with processes, timers, channels, `either`, kills, failing calls and the
//! file's own liveness, checked as the command line checks them: each construct's verdict pinned
//! beside a twin that differs in the one line the construct is about, so that a verdict that
//! would hold vacuously (a timer that never fires, a kill never taken, a failure never chosen)
//! shows as the twin's verdict not changing; and the two-process textbook pair's counterexample
//! pinned step by step.

use serde_json::Value;

use crate::connector_files::{row, scratch_file, verdicts};

/// The verdict of `property` in `rows`, and its counterexample's length.
fn verdict(rows: &[(String, String, Option<u64>)], property: &str) -> (String, Option<u64>) {
    let (_, v, steps) = row(rows, property);
    (v.clone(), *steps)
}

/// `check --json` of the file written from `text`, with its traces under a scratch folder.
fn check(name: &str, text: &str, more: &[&str]) -> Vec<(String, String, Option<u64>)> {
    let file = scratch_file(name, text);
    let out = format!("target/tmp-connector-files/out-{name}");
    let mut args = vec![file.as_str(), "--out", out.as_str()];
    args.extend(more);
    verdicts(&args).0
}

#[test]
fn the_reader_that_acknowledges_before_the_flusher_commits_loses_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (rows, _) = verdicts(&[
        "connectors/textbook-reader-acks-received.wal",
        "connectors/textbook-flusher-acks-durable.wal",
        "--out",
        out,
    ]);
    let reader = |p: &str| {
        rows.iter()
            .filter(|r| r.0 == p)
            .map(|r| (r.1.clone(), r.2))
            .collect::<Vec<_>>()
    };
    // The reader's file comes first, the flusher's second: violated, then holds.
    assert_eq!(
        reader("ack-within-durable"),
        [("violated".to_owned(), Some(6)), ("holds".to_owned(), None)]
    );
    assert_eq!(reader("no-data-loss")[1].0, "holds");
    assert_eq!(reader("eventually-acknowledged")[1].0, "holds");
    let trace = dir
        .path()
        .join("textbook-reader-acks-received__design__all__ack-within-durable.itf.json");
    let trace: Value = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    let steps: Vec<(&str, &str, &str)> = trace["states"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|s| {
            (
                s["mbt::actionTaken"].as_str().unwrap(),
                s["step"].as_str().unwrap(),
                s["flusher.step"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (
                "18: start_replication(committed_to)",
                "19: for each message m",
                "fire"
            ),
            (
                "Commit{pages=1, commit=sync}",
                "19: for each message m",
                "fire"
            ),
            ("CommitFlush", "19: for each message m", "fire"),
            ("19: for each message m", "read", "fire"),
            ("read", "ack", "fire"),
            ("ack", "19: for each message m", "fire"),
        ]
    );
}

const PIPELINE_HEAD: &str = "walcheck 1
env transactions = 1
env keepalives = 1
env connector_crashes = 0
env kills = 1
durable committed_to: lsn = none, in destination
volatile streaming: bool = false
volatile pending: lsn = none
volatile t: txn = none
timer flush_timer
channel records: txn, capacity 1
every run {
  start_replication(committed_to)
  streaming = true
  for each message m {
    if not m.is_keepalive {
      records.send(m.txn)
    }
  }
}
";

const PIPELINE_WRITER: &str = "  loop {
    either {
      take: {
        t = records.receive()
        destination.write(t)
        pending = max(pending, t.end_lsn)
        arm flush_timer
      }
    } or {
      fire: {
        wait flush_timer
        destination.commit(committed_to = pending)
      }
      ack: standby_status_update(flush = committed_to)
    }
  }
}
always committed-then-acked: committed_to != none leads to slot.confirmed_flush >= committed_to
";

/// A killed writer that restarts at its loop never acknowledges what it committed just before
/// it died; one that acknowledges the committed position first does. Without the kill (`kills
/// = 0`) both hold: the kill is what the verdict turns on.
#[test]
fn a_killed_process_restarts_alone_at_its_first_step() {
    let without =
        format!("{PIPELINE_HEAD}killable process writer {{\n  wait streaming\n{PIPELINE_WRITER}");
    let with = format!(
        "{PIPELINE_HEAD}killable process writer {{\n  wait streaming\n  resume: standby_status_update(flush = committed_to)\n{PIPELINE_WRITER}"
    );
    let rows = check("kill-no-resume.wal", &without, &[]);
    assert_eq!(
        verdict(&rows, "committed-then-acked").0,
        "violated",
        "{rows:?}"
    );
    assert_eq!(verdict(&rows, "ack-within-durable").0, "holds");
    let rows = check("kill-no-resume-0.wal", &without, &["--bound", "kills=0"]);
    assert_eq!(
        verdict(&rows, "committed-then-acked").0,
        "holds",
        "{rows:?}"
    );
    let rows = check("kill-resume.wal", &with, &[]);
    assert_eq!(
        verdict(&rows, "committed-then-acked").0,
        "holds",
        "{rows:?}"
    );
    assert_eq!(verdict(&rows, "eventually-acknowledged").0, "holds");
}

const RETENTION: &str = "walcheck 1
env transactions = 1
env other_traffic = 1
env keepalives = 1
env connector_crashes = 0
every run {
  start_replication(0/0)
  for each message m {
    if m.is_keepalive {
      KEEPALIVE
    } else {
      destination.write(m.txn)
      destination.commit()
      standby_status_update(flush = m.txn.end_lsn)
    }
  }
}
";

/// Traffic outside the publication is acknowledged only through keepalives: a design that
/// ignores them keeps the WAL of that traffic for ever (a lasso of idle keepalives), one that
/// acknowledges a keepalive's position when nothing is pending does not.
#[test]
fn wal_retention_needs_the_keepalives_acknowledged() {
    let ignores = RETENTION.replace("KEEPALIVE", "skip_it: destination.commit()");
    let rows = check("retention-ignores.wal", &ignores, &[]);
    assert_eq!(
        verdict(&rows, "eventually-acknowledged").0,
        "holds",
        "{rows:?}"
    );
    assert_eq!(verdict(&rows, "wal-retention-bounded").0, "violated");
    let acks = RETENTION.replace("KEEPALIVE", "standby_status_update(flush = m.wal_end)");
    let rows = check("retention-acks.wal", &acks, &[]);
    assert_eq!(
        verdict(&rows, "wal-retention-bounded").0,
        "holds",
        "{rows:?}"
    );
    assert_eq!(verdict(&rows, "ack-within-durable").0, "holds");
}

const COMMIT_RETRY: &str = "walcheck 1
env transactions = 1
env connector_crashes = 0
env call_failures = 1
OFFSET
every run {
  start_replication(START)
  for each message m {
    destination.write(m.txn)
    COMMIT on error {
      fail \"commit failed: the run starts again\"
    }
    standby_status_update(flush = m.txn.end_lsn)
  }
}
always exactly-once: destination.duplicated == none
";

/// A commit that times out after taking effect is committed again by the retry unless the
/// offset went with the data: `destination.duplicated` sees the duplicate, and without
/// failures (`call_failures = 0`) there is none.
#[test]
fn a_commit_that_times_out_is_committed_twice_unless_its_offset_went_with_it() {
    let plain = COMMIT_RETRY
        .replace("OFFSET\n", "")
        .replace("START", "0/0")
        .replace("COMMIT", "destination.commit()");
    let rows = check("commit-retry.wal", &plain, &[]);
    assert_eq!(verdict(&rows, "exactly-once").0, "violated", "{rows:?}");
    assert_eq!(verdict(&rows, "no-data-loss").0, "holds");
    let rows = check(
        "commit-retry-0.wal",
        &plain,
        &["--bound", "call_failures=0"],
    );
    assert_eq!(verdict(&rows, "exactly-once").0, "holds", "{rows:?}");
    let offset = COMMIT_RETRY
        .replace("OFFSET", "durable offset: lsn = none, in destination")
        .replace("START", "offset")
        .replace("COMMIT", "destination.commit(offset = m.txn.end_lsn)");
    let rows = check("commit-offset.wal", &offset, &[]);
    assert_eq!(verdict(&rows, "exactly-once").0, "holds", "{rows:?}");
}

const POLLER: &str = "walcheck 1
env transactions = 1
env connector_crashes = 0
RUNS
volatile got: txns = none
every run {
  poll: got = pg_logical_slot_get_changes()
  destination.write(got)
  destination.commit()
}
skip ack-within-durable \"get_changes acknowledges what it returns before the commit\"
skip no-data-loss \"get_changes acknowledges what it returns before the commit\"
";

/// A poller with a bounded number of runs is violated by the bound; with `runs = unbounded`
/// it polls for ever and acknowledges every transaction, and its state does not count runs.
#[test]
fn a_poller_with_unbounded_runs_is_live() {
    let bounded = POLLER.replace("RUNS", "env runs = 2");
    let rows = check("poller-2.wal", &bounded, &[]);
    assert_eq!(
        verdict(&rows, "eventually-acknowledged").0,
        "violated",
        "{rows:?}"
    );
    let unbounded = POLLER.replace("RUNS", "env runs = unbounded");
    let rows = check("poller-unbounded.wal", &unbounded, &[]);
    assert_eq!(
        verdict(&rows, "eventually-acknowledged").0,
        "holds",
        "{rows:?}"
    );
    let rows = check("poller-bound.wal", &bounded, &["--bound", "runs=unbounded"]);
    assert_eq!(
        verdict(&rows, "eventually-acknowledged").0,
        "holds",
        "{rows:?}"
    );
}

/// A channel of capacity 1 never holds 2: the sender waits; and a timer armed by one process
/// fires in the other (a fair `wait`), while an `unfair` one that something else can outrun
/// for ever may not.
#[test]
fn channels_block_and_timers_fire() {
    let text = "walcheck 1
env transactions = 2
env keepalives = 1
env connector_crashes = 0
env runs = unbounded
timer tick
channel q: txn, capacity 1
volatile got: txn = none
every run {
  start_replication(0/0)
  for each message m {
    if not m.is_keepalive {
      q.send(m.txn)
    }
    arm tick
  }
}
process consumer {
  loop {
    either {
      got = q.receive()
    } or {
      FIRE: wait tick
    }
  }
}
always at-most-one: q <= 1
always tick-fires: tick leads to not tick
skip eventually-acknowledged \"nothing acknowledges\"
skip wal-retention-bounded \"nothing acknowledges\"
";
    let rows = check("channel-timer.wal", &text.replace("FIRE: ", "fire: "), &[]);
    assert_eq!(verdict(&rows, "at-most-one").0, "holds", "{rows:?}");
    assert_eq!(verdict(&rows, "tick-fires").0, "holds", "{rows:?}");
    let rows = check(
        "channel-timer-unfair.wal",
        &text.replace("FIRE: ", "unfair fire: "),
        &[],
    );
    assert_eq!(verdict(&rows, "tick-fires").0, "violated", "{rows:?}");
}

/// A family of consumers: each member's `flushed[s]` and `mailbox[s]` are its own, a kill
/// restarts one member, and the tracker acknowledges the minimum. Without the consumer's
/// `resume:` a kill between its receive and its store loses what it took (and only with the
/// kill); acknowledging the maximum passes a consumer's position.
#[test]
fn a_family_of_consumers_is_its_members() {
    let text = std::fs::read_to_string("docs/examples/tracker.wal").unwrap();
    let rows = check("tracker.wal", &text, &[]);
    assert!(rows.iter().all(|r| r.1 == "holds"), "{rows:?}");
    let no_resume: String = text
        .lines()
        .filter(|l| !l.contains("resume:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let rows = check("tracker-no-resume.wal", &no_resume, &[]);
    assert_eq!(
        verdict(&rows, "eventually-acknowledged").0,
        "violated",
        "{rows:?}"
    );
    assert_eq!(verdict(&rows, "acked-by-all").0, "holds");
    let rows = check(
        "tracker-no-resume-0.wal",
        &no_resume,
        &["--bound", "kills=0"],
    );
    assert_eq!(
        verdict(&rows, "eventually-acknowledged").0,
        "holds",
        "{rows:?}"
    );
    let max = text.replace(
        "standby_status_update(flush = min(flushed[1], flushed[2]))",
        "standby_status_update(flush = max(flushed[1], flushed[2]))",
    );
    let rows = check("tracker-max.wal", &max, &[]);
    assert_eq!(verdict(&rows, "acked-by-all").0, "violated", "{rows:?}");
}

/// A family past 8 members, and an index that is neither a number nor the family's: one
/// located error each, exit 2.
#[test]
fn a_family_past_its_limit_is_a_located_error() {
    let file = scratch_file(
        "family-9.wal",
        "walcheck 1\nvolatile x[1..9]: lsn = none\nevery run {\n  x[1] = none\n}\n",
    );
    let output = crate::util::walcheck(&["check", &file]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("[E14]") && stderr.contains("family-9.wal:2:11"),
        "{stderr}"
    );
    let file = scratch_file(
        "family-index.wal",
        "walcheck 1\nvolatile x[1..2]: lsn = none\nvolatile i: 1..2 = 1\nevery run {\n  x[i] = none\n}\n",
    );
    let output = crate::util::walcheck(&["check", &file]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("undeclared variable `x[i]`"), "{stderr}");
}
