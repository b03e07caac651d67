//! Observed traces: what a live PostgreSQL run saw, replayed against the PostgreSQL model.
//!
//! A live run cannot see every model variable (the saved copy of a slot, the instant the advance
//! read the flush pointer), so its trace is partial: each step carries only the variables that
//! were observed, and replay compares only those (the approach of Cirstea, Kuppe, Merz et al.
//! 2024, "Validating traces of distributed programs against TLA+ specifications"). Full model
//! traces keep their exact replay ([`walcheck_traces::replay::replay`]); a trace whose header
//! names the system [`SYSTEM`] and the kind [`walcheck_traces::OBSERVED`] comes here. On disk it
//! is ITF whose states omit the variables not observed there.
//!
//! Actions, as recorded:
//! - `Observe`: the environment moved the WAL pointers; the step records `insert`, `write`,
//!   `flush` read in the order flush, write, insert (so they are ordered even under load). The
//!   model adopts them after checking `flush ≤ write ≤ insert` and that none went backwards.
//! - `Advance{target: X/Y, restart_moves: B, restart: X/Y}`: `pg_replication_slot_advance(slot,
//!   X/Y)`. `restart` is PostgreSQL's choice, where `restart_lsn` was after the call (it says
//!   whether the slot was saved, and with which `confirmed_flush`: `Slot::slot_advance`);
//!   `restart_moves` whether it moved (traces without `restart` take the model's furthest
//!   landing for true).
//!   The step records `end_lsn`, `error`, `confirmed_flush`, and the pointers read right after.
//!   The flush pointer at the call is not observed: it lies between the previous step's and this
//!   step's, so replay accepts the step if some limit in that interval makes the model produce
//!   what was recorded (the model's result is `min(target, limit)`, so the interval's ends and the
//!   recorded `end_lsn` are the only candidates worth trying).
//! - `AdvanceWaiting{target: X/Y, read_end: X/Y}`: a `pg_replication_slot_advance(slot, X/Y)`
//!   that was still running when `statement_timeout` cancelled it; `read_end` is the end of the
//!   WAL record its clamp point lies in (from `pg_waldump`). The step records the pointers read
//!   after the cancel and `confirmed_flush`; replay accepts it when the model says the advance
//!   is still waiting for that record to be flushed ([`walcheck_model::pg::advance_waits`]),
//!   with the slot unchanged.
//! - `Checkpoint`: `CHECKPOINT`; saves the slot and flushes all WAL inserted before it
//!   ([`walcheck_model::pg::Wal::checkpoint_flush`]); pointers it records are compared as they are
//!   (the checkpoint's own records come first as an `InsertWal` step that records `insert`).
//! - `InsertWal{bytes: N, page_bytes: P, wal_buffers_bytes: B}`: a statement inserted `bytes` of
//!   WAL and has not committed. The model's backend writes out what no longer fits in
//!   `wal_buffers` without flushing (fsyncing each segment the write finishes); the step records
//!   `insert`, `write`, `flush`, which must be the model's insert pointer and at least its write
//!   and flush pointers (the walwriter may have done more), and are adopted.
//! - `WalwriterWrite{page_bytes: P}`: a walwriter cycle whose flush was not due wrote out the
//!   completed pages and flushed nothing ([`walcheck_model::pg::Wal::walwriter_write_pages`]).
//!   The step records `insert`, `write`, `flush` read after it, compared with the model's as
//!   they are (nothing is adopted).
//! - `CommitReturned{bytes: N, mode: sync|async, page_bytes: P, wal_buffers_bytes: B}`: a
//!   transaction inserted `bytes` of WAL ending in its commit record, and its `COMMIT` returned
//!   ([`walcheck_model::pg::Server::insert_commit`]). A synchronous commit waits in `XLogFlush`
//!   until [`walcheck_model::pg::Server::commit_flush`], so replay flushes before the step; an
//!   asynchronous one returns with the flush pointer where it was. Records the pointers read
//!   right after, compared as they are.
//! - `PgCrash`: `pg_ctl stop -m immediate` and a restart; the slot returns to its saved copy.
//!   Records `confirmed_flush` after the restart.
//!
//! The logical replication protocol ([`walcheck_model::pg::stream`], [`walcheck_model::pg::decoding`]):
//! - `Commit{xid: N, commit_lsn: X/Y, end_lsn: X/Y, published_rows: N, mode: sync|async}`: a
//!   client transaction the session committed and saw the LSNs of; later steps decode it.
//! - `StartReplication{requested: X/Y}`: `START_REPLICATION SLOT … LOGICAL X/Y`; records
//!   `keepalive_wal_end` (the walsender's `sentPtr` before it reads) and `confirmed_flush`.
//! - `Stream{wal_end: X/Y}`: the walsender read up to `wal_end` (the flush pointer read after
//!   the stream went quiet); records `sent` (the commit LSNs of the transactions it sent,
//!   comma-separated) and `keepalive_wal_end` after it, when a keepalive came.
//! - `StatusUpdate{write: X/Y, flush: X/Y, apply: X/Y, candidate_restart: X/Y|none}`: a standby
//!   status update; `candidate_restart` is PostgreSQL's choice (the `restart_lsn` it moved to);
//!   records `confirmed_flush`.
//! - `SqlDecode{upto_lsn: X/Y|none, upto_nchanges: N|none, confirm: B, candidate_restart: …}`:
//!   `pg_logical_slot_get_changes` (`confirm: true`) or `_peek_changes` bounded by the flush
//!   pointer last observed; records `sent`, `rows`, `confirmed_flush`.
//! - `CleanRestart`: `pg_ctl stop -m fast` and a start; the shutdown checkpoint saves a dirty
//!   slot and flushes the WAL, and no recovery runs. Records `confirmed_flush`.
//!
//! An `Observe` step may also record `last_wal_replay_lsn` (`pg_last_wal_replay_lsn()`, `NULL`
//! or an LSN): on a primary NULL until a `PgCrash`, then the write pointer the crash left,
//! whatever WAL follows, and NULL again after a `CleanRestart`.
//!
//! `Checkpoint` saves the slot only when it is dirty (an advance or a SQL `get` made it so; a
//! status update does not). The header's `server_version_num` picks the release's rules where
//! they differ ([`PgVersion`]): a status update moving `confirmed_flush` back before 15.14, the
//! shutdown checkpoint of a `CleanRestart` saving a moved `confirmed_flush` from 17.

use walcheck_model::pg::decoding::{get_changes, test_decoding_rows};
use walcheck_model::pg::stream::process_standby_reply_on;
use walcheck_model::pg::{
    advance_read_end, advance_waits, CommitMode, DurableSlot, PgVersion, RestartLanding, Role,
    Server, SqlDecode, StandbyStatusUpdate, Txn, Walsender,
};
use walcheck_model::Lsn;
use walcheck_properties::system::Var;
use walcheck_traces::replay::{Mismatch, VarDiff};
use walcheck_traces::Trace;

/// The header's `system` of an observed trace.
pub const SYSTEM: &str = "pg-live";
/// The header's `property` of an observed trace: the run agrees with the model.
pub const PROPERTY: &str = "model_predicts_server";

/// What the model says after each step of a live run.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LiveState {
    server: Server,
    end_lsn: Option<Lsn>,
    error: Option<String>,
    /// Whether the slot is dirty (the next checkpoint saves it).
    dirty: bool,
    /// The transactions committed so far, in commit order.
    txns: Vec<Txn>,
    /// The walsender streaming the slot, while there is one.
    sender: Option<Walsender>,
    /// What the last decoding step sent or returned: commit LSNs, comma-separated.
    sent: String,
    /// The rows the last SQL decoding step returned.
    rows: u32,
    /// The server's release (the header's `server_version_num`; 15.18 when absent): the rules
    /// that differ between releases follow it ([`PgVersion`]).
    version: PgVersion,
}

impl LiveState {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        let lsn = |l: Lsn| Var::Text(l.to_string());
        let wal = &self.server.wal;
        vec![
            ("insert", lsn(wal.insert)),
            ("write", lsn(wal.write)),
            ("flush", lsn(wal.flush)),
            ("confirmed_flush", lsn(self.server.slot.confirmed_flush)),
            (
                "saved_confirmed_flush",
                lsn(self.server.slot.saved.confirmed_flush),
            ),
            (
                "end_lsn",
                Var::Text(
                    self.end_lsn
                        .map_or_else(|| "none".into(), |l| l.to_string()),
                ),
            ),
            (
                "error",
                Var::Text(self.error.clone().unwrap_or_else(|| "none".into())),
            ),
            ("restart_lsn", lsn(self.server.slot.restart_lsn)),
            (
                "keepalive_wal_end",
                Var::Text(
                    self.sender
                        .map_or_else(|| "none".into(), |s| s.sent_ptr.to_string()),
                ),
            ),
            ("sent", Var::Text(self.sent.clone())),
            ("rows", Var::Int(u64::from(self.rows))),
            (
                "last_wal_replay_lsn",
                Var::Text(
                    self.server
                        .last_wal_replay_lsn()
                        .map_or_else(|| "NULL".into(), |l| l.to_string()),
                ),
            ),
        ]
    }

    fn durable(&self) -> DurableSlot {
        DurableSlot {
            slot: self.server.slot,
            dirty: self.dirty,
        }
    }

    fn set_durable(&mut self, slot: DurableSlot) {
        self.server.slot = slot.slot;
        self.dirty = slot.dirty;
    }
}

/// Only the recorded variables are compared; a variable the run did not observe is free.
fn diff_observed(recorded: &[(String, Var)], state: &LiveState) -> Vec<VarDiff> {
    let ours = state.variables();
    recorded
        .iter()
        .filter_map(|(name, value)| {
            let replayed = ours.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
            (replayed.as_ref() != Some(value)).then(|| VarDiff {
                name: name.clone(),
                recorded: Some(value.clone()),
                replayed,
            })
        })
        .collect()
}

fn lsn_var(vars: &[(String, Var)], name: &str) -> Result<Option<Lsn>, String> {
    match vars.iter().find(|(n, _)| n == name) {
        None => Ok(None),
        Some((_, Var::Text(text))) => text
            .parse()
            .map(Some)
            .map_err(|e| format!("{name} = {text:?}: {e}")),
        Some((_, other)) => Err(format!("{name} = {other} is not an LSN")),
    }
}

/// What an `Advance` step says PostgreSQL's decoding did to `restart_lsn`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum RestartMove {
    /// `restart: X/Y`: where `restart_lsn` was after the call (equal to before: it stayed).
    To(Lsn),
    /// Only `restart_moves: B` (traces recorded before `restart`): true is the furthest landing
    /// of [`walcheck_model::pg::Slot::advance_restarts`].
    Moved(bool),
}

impl RestartMove {
    /// Where `restart_lsn` lands for [`walcheck_model::pg::Slot::slot_advance`] on `slot`.
    fn landing(self, slot: &walcheck_model::pg::Slot, target: Lsn, limit: Lsn) -> Option<Lsn> {
        match self {
            RestartMove::To(lsn) => Some(lsn),
            RestartMove::Moved(false) => None,
            RestartMove::Moved(true) => {
                slot.restart_landing(RestartLanding::Furthest, target, limit)
            }
        }
    }
}

/// `Advance{target: X/Y, restart_moves: B[, restart: X/Y]}` → (target, what `restart_lsn` did).
fn parse_advance(action: &str) -> Option<(Lsn, RestartMove)> {
    let inner = action.strip_prefix("Advance{")?.strip_suffix('}')?;
    let mut target = None;
    let mut restart_moves = None;
    let mut restart = None;
    for part in inner.split(',') {
        let (key, value) = part.split_once(':')?;
        match key.trim() {
            "target" => target = Some(value.trim().parse().ok()?),
            "restart_moves" => restart_moves = Some(value.trim().parse().ok()?),
            "restart" => restart = Some(value.trim().parse().ok()?),
            _ => return None,
        }
    }
    let how = match (restart, restart_moves) {
        (Some(lsn), _) => RestartMove::To(lsn),
        (None, Some(moved)) => RestartMove::Moved(moved),
        (None, None) => return None,
    };
    Some((target?, how))
}

/// The action arguments that hold an LSN, and whether `none` may stand for one.
const LSN_ARGS: &[(&str, bool)] = &[
    ("target", false),
    ("commit_lsn", false),
    ("end_lsn", false),
    ("requested", false),
    ("wal_end", false),
    ("write", false),
    ("flush", false),
    ("apply", false),
    ("candidate_restart", true),
    ("upto_lsn", true),
    ("read_end", false),
];

/// Checks that every LSN argument of every action of `trace` (see the module header) reads as
/// PostgreSQL prints an LSN, or says in one line which does not.
pub fn check_action_lsns(trace: &Trace) -> Result<(), String> {
    for (i, step) in trace.steps.iter().enumerate() {
        let Some(action) = step.action.as_deref() else {
            continue;
        };
        let Some((_, args)) = parse_action(action) else {
            continue;
        };
        for (key, value) in args {
            let Some((_, none_allowed)) = LSN_ARGS.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            if !(*none_allowed && value == "none") && value.parse::<Lsn>().is_err() {
                return Err(format!(
                    "state {i} ({action}): {key} is {value:?}, not an LSN (X/Y, 1 to 8 hex digits each{})",
                    if *none_allowed { ", or none" } else { "" }
                ));
            }
        }
    }
    Ok(())
}

/// `Name{key: value, ...}` → (name, [(key, value)]); `Name` alone has no arguments.
fn parse_action(action: &str) -> Option<(&str, Vec<(&str, &str)>)> {
    let Some((name, rest)) = action.split_once('{') else {
        return Some((action, Vec::new()));
    };
    let inner = rest.strip_suffix('}')?;
    let args = inner
        .split(',')
        .map(|part| {
            let (key, value) = part.split_once(':')?;
            Some((key.trim(), value.trim()))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((name, args))
}

fn arg<'a>(args: &[(&str, &'a str)], key: &str) -> Result<&'a str, String> {
    args.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .ok_or_else(|| format!("missing argument {key}"))
}

fn lsn_arg(args: &[(&str, &str)], key: &str) -> Result<Lsn, String> {
    let text = arg(args, key)?;
    text.parse().map_err(|e| format!("{key}: {e}"))
}

fn optional<T: std::str::FromStr>(args: &[(&str, &str)], key: &str) -> Result<Option<T>, String> {
    match arg(args, key)? {
        "none" => Ok(None),
        text => text
            .parse()
            .map(Some)
            .map_err(|_| format!("{key}: {text:?}")),
    }
}

/// Argument `key` as a `u64` (a size in bytes), or why not.
fn u64_arg(args: &[(&str, &str)], key: &str) -> Result<u64, String> {
    let text = arg(args, key)?;
    walcheck_traces::whole_number(text).map_err(|why| format!("{key} {text:?} is {why}"))
}

/// `InsertWal{bytes: N, page_bytes: P, wal_buffers_bytes: B}`: a statement inserted `bytes` of
/// WAL in an open transaction ([`walcheck_model::pg::Wal::append`]). The recorded pointers must
/// be the model's insert pointer and at least its write and flush pointers (the walwriter may
/// have written or flushed further meanwhile); they are then adopted. The outer `Err` is a
/// malformed action.
fn insert_wal(
    state: &mut LiveState,
    action: &str,
    vars: &[(String, Var)],
) -> Result<Vec<VarDiff>, String> {
    let (_, args) = parse_action(action).ok_or_else(|| format!("unreadable action {action:?}"))?;
    let bytes = u64_arg(&args, "bytes")?;
    let page_bytes = u64_arg(&args, "page_bytes")?;
    let wal_buffers_bytes = u64_arg(&args, "wal_buffers_bytes")?;
    if !page_bytes.is_power_of_two() || wal_buffers_bytes < page_bytes {
        return Err(format!(
            "{action}: page_bytes must be a power of two and wal_buffers_bytes at least a page"
        ));
    }
    let mut predicted = state.server.wal;
    predicted.append(bytes, page_bytes, wal_buffers_bytes);
    let mut diffs = Vec::new();
    for (name, model, exact) in [
        ("insert", predicted.insert, true),
        ("write", predicted.write, false),
        ("flush", predicted.flush, false),
    ] {
        let Some(seen) = lsn_var(vars, name)? else {
            continue;
        };
        if seen < model || (exact && seen != model) {
            diffs.push(VarDiff {
                name: name.to_owned(),
                recorded: Some(Var::Text(seen.to_string())),
                replayed: Some(Var::Text(if exact {
                    model.to_string()
                } else {
                    format!("at least {model}")
                })),
            });
        }
    }
    if !diffs.is_empty() {
        return Ok(diffs);
    }
    state.server.wal = predicted;
    adopt_pointers(state, vars)
}

/// Argument `key` as a `u32` (a transaction id, a count), or why not: not a whole number, or
/// out of range.
fn u32_arg(args: &[(&str, &str)], key: &str) -> Result<u32, String> {
    let text = arg(args, key)?;
    let n =
        walcheck_traces::whole_number(text).map_err(|why| format!("{key} {text:?} is {why}"))?;
    u32::try_from(n).map_err(|_| out_of_range(key, text))
}

/// Argument `key` as a `u32`, or `none`.
fn optional_u32(args: &[(&str, &str)], key: &str) -> Result<Option<u32>, String> {
    match arg(args, key)? {
        "none" => Ok(None),
        _ => u32_arg(args, key).map(Some),
    }
}

fn out_of_range(key: &str, text: &str) -> String {
    format!(
        "{key} {text} is out of range for a 32-bit count (0 to {})",
        u32::MAX
    )
}

fn commit_lsns<'a>(txns: impl IntoIterator<Item = &'a Txn>) -> String {
    txns.into_iter()
        .map(|t| t.commit_lsn.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The transaction a logged `Commit` action names: its xid, commit record, rows and mode (its
/// change records, which the log does not give, just below the commit record).
fn logged_commit(args: &[(&str, &str)]) -> Result<Txn, String> {
    let mode = match arg(args, "mode")? {
        "sync" => CommitMode::Sync,
        "async" => CommitMode::Async,
        other => return Err(format!("mode {other:?}")),
    };
    let commit_lsn = lsn_arg(args, "commit_lsn")?;
    Ok(Txn {
        xid: u32_arg(args, "xid")?,
        first_lsn: commit_lsn.minus(1),
        changes_end: commit_lsn,
        commit_lsn,
        end_lsn: lsn_arg(args, "end_lsn")?,
        published_rows: u32_arg(args, "published_rows")?,
        mode,
    })
}

/// Applies a protocol action (see the module header); `Ok(false)` when `action` is not one.
fn protocol_step(
    state: &mut LiveState,
    action: &str,
    vars: &[(String, Var)],
) -> Result<bool, String> {
    let Some((name, args)) = parse_action(action) else {
        return Ok(false);
    };
    let bad = |e: String| format!("{action}: {e}");
    match name {
        "Commit" => {
            state.txns.push(logged_commit(&args).map_err(bad)?);
            let diffs = adopt_pointers(state, vars)?;
            if !diffs.is_empty() {
                return Err(bad(format!("pointers went backwards: {diffs:?}")));
            }
        }
        "StartReplication" => {
            let requested = lsn_arg(&args, "requested").map_err(bad)?;
            state.sender = Some(Walsender::start_replication(requested, &state.server.slot));
        }
        "Stream" => {
            let wal_end = lsn_arg(&args, "wal_end").map_err(bad)?;
            let sender = state
                .sender
                .as_mut()
                .ok_or_else(|| bad("no START_REPLICATION before it".into()))?;
            let sent = sender.send_logical(&state.txns, wal_end);
            state.sent = commit_lsns(sent);
        }
        "StopReplication" => state.sender = None,
        "StatusUpdate" => {
            let update = StandbyStatusUpdate {
                write: lsn_arg(&args, "write").map_err(bad)?,
                flush: lsn_arg(&args, "flush").map_err(bad)?,
                apply: lsn_arg(&args, "apply").map_err(bad)?,
                reply_requested: false,
            };
            let candidate = optional::<Lsn>(&args, "candidate_restart").map_err(bad)?;
            let mut slot = state.durable();
            process_standby_reply_on(state.version, &mut slot, &update, candidate);
            state.set_durable(slot);
        }
        "SqlDecode" => {
            let request = SqlDecode {
                upto_lsn: optional(&args, "upto_lsn").map_err(bad)?,
                upto_nchanges: optional_u32(&args, "upto_nchanges").map_err(bad)?,
                confirm: arg(&args, "confirm").map_err(bad)? == "true",
            };
            let candidate = optional::<Lsn>(&args, "candidate_restart").map_err(bad)?;
            let mut slot = state.durable();
            let got = get_changes(
                &mut slot,
                &state.txns,
                state.server.wal.flush,
                request,
                candidate,
                test_decoding_rows,
            );
            state.set_durable(slot);
            state.sent = commit_lsns(&got.txns);
            state.rows = got.rows;
        }
        "CleanRestart" => {
            let mut slot = state.durable();
            slot.clean_restart_on(state.version);
            state.set_durable(slot);
            state.server.wal.clean_restart();
            state.sender = None;
        }
        _ => return wal_step(state, name, &args).map_err(bad),
    }
    Ok(true)
}

/// `page_bytes: P`, a power of two, or why not.
fn page_bytes_arg(args: &[(&str, &str)]) -> Result<u64, String> {
    let page_bytes = u64_arg(args, "page_bytes")?;
    if page_bytes.is_power_of_two() {
        Ok(page_bytes)
    } else {
        Err(format!("page_bytes {page_bytes} is not a power of two"))
    }
}

/// `mode: sync|async`, or why not.
fn mode_arg(args: &[(&str, &str)]) -> Result<CommitMode, String> {
    match arg(args, "mode")? {
        "sync" => Ok(CommitMode::Sync),
        "async" => Ok(CommitMode::Async),
        other => Err(format!("mode {other:?}")),
    }
}

/// Applies an action of the WAL's writing and flushing (see the module header) to `state`;
/// `Ok(false)` when `name` is not one. The step's recorded pointers are then compared with the
/// model's as they are: these steps adopt nothing.
fn wal_step(state: &mut LiveState, name: &str, args: &[(&str, &str)]) -> Result<bool, String> {
    match name {
        "WalwriterWrite" => {
            let page_bytes = page_bytes_arg(args)?;
            state.server.wal.walwriter_write_pages(page_bytes);
        }
        "CommitReturned" => {
            let (bytes, mode) = (u64_arg(args, "bytes")?, mode_arg(args)?);
            let page_bytes = page_bytes_arg(args)?;
            let wal_buffers_bytes = u64_arg(args, "wal_buffers_bytes")?;
            state
                .server
                .insert_commit(bytes, mode, page_bytes, wal_buffers_bytes);
            // The COMMIT returned, which a backend waiting in XLogFlush does not: in the model
            // only its flush frees it.
            if state.server.commit_pending {
                state.server.commit_flush();
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The initial model state: a primary whose pointers and slot are what the first step observed.
fn initial(trace: &Trace) -> Result<LiveState, String> {
    let first = trace
        .steps
        .first()
        .ok_or("an observed trace needs a state")?;
    let get = |name: &str| {
        lsn_var(&first.vars, name)?.ok_or_else(|| format!("the first state must record {name}"))
    };
    let confirmed_flush = get("confirmed_flush")?;
    let mut server = Server::at_rest(Role::Primary, confirmed_flush);
    server.wal.insert = get("insert")?;
    server.wal.write = get("write")?;
    server.wal.flush = get("flush")?;
    if let Some(restart_lsn) = lsn_var(&first.vars, "restart_lsn")? {
        server.slot.restart_lsn = restart_lsn;
        server.slot.saved.restart_lsn = restart_lsn;
    }
    Ok(LiveState {
        server,
        end_lsn: None,
        error: None,
        dirty: false,
        txns: Vec::new(),
        sender: None,
        sent: String::new(),
        rows: 0,
        version: trace
            .header
            .config
            .get("server_version_num")
            .and_then(|v| v.parse().ok())
            .map_or(PgVersion::DEBIAN_15, PgVersion),
    })
}

/// Adopts observed pointers (an environment step), or says why they cannot be.
fn adopt_pointers(state: &mut LiveState, vars: &[(String, Var)]) -> Result<Vec<VarDiff>, String> {
    let mut wal = state.server.wal;
    let mut diffs = Vec::new();
    for (name, slot) in [
        ("insert", &mut wal.insert),
        ("write", &mut wal.write),
        ("flush", &mut wal.flush),
    ] {
        if let Some(seen) = lsn_var(vars, name)? {
            if seen < *slot {
                // WAL pointers of a running primary never move backwards (xlog.c).
                diffs.push(VarDiff {
                    name: name.to_owned(),
                    recorded: Some(Var::Text(seen.to_string())),
                    replayed: Some(Var::Text(format!("at least {slot}"))),
                });
            }
            *slot = seen;
        }
    }
    if diffs.is_empty() && !(wal.flush <= wal.write && wal.write <= wal.insert) {
        diffs.push(VarDiff {
            name: "flush <= write <= insert".to_owned(),
            recorded: Some(Var::Text(format!(
                "{} <= {} <= {}",
                wal.flush, wal.write, wal.insert
            ))),
            replayed: Some(Var::Bool(false)),
        });
    }
    state.server.wal = wal;
    Ok(diffs)
}

/// Replays an observed trace. The outer `Err` is a malformed trace (exit 2); the inner one is the
/// first step the model does not predict (exit 1); `Ok` is the number of steps replayed.
pub fn replay_observed(trace: &Trace) -> Result<Result<usize, Mismatch>, String> {
    if trace.header.system != SYSTEM || !trace.header.is_observed() {
        return Err(format!(
            "not an observed trace: system {:?}",
            trace.header.system
        ));
    }
    check_action_lsns(trace)?;
    let mut state = initial(trace)?;
    let diffs = diff_observed(&trace.steps[0].vars, &state);
    if !diffs.is_empty() {
        return Ok(Err(Mismatch::StateDiffers {
            step: 0,
            action: None,
            diffs,
        }));
    }
    for (index, step) in trace.steps.iter().enumerate().skip(1) {
        let action = step
            .action
            .clone()
            .ok_or_else(|| format!("step {index} has no action"))?;
        let differs = |diffs: Vec<VarDiff>| {
            Ok(Err(Mismatch::StateDiffers {
                step: index,
                action: Some(action.clone()),
                diffs,
            }))
        };
        match action.as_str() {
            "Observe" => {
                let diffs = adopt_pointers(&mut state, &step.vars)?;
                if !diffs.is_empty() {
                    return differs(diffs);
                }
                state.end_lsn = None;
                state.error = None;
            }
            "Checkpoint" => {
                // A checkpoint writes out dirty slots only (slot.c:SaveSlotToPath).
                let mut slot = state.durable();
                slot.checkpoint();
                state.set_durable(slot);
                if state.server.role == Role::Primary {
                    state.server.wal.checkpoint_flush();
                }
                state.end_lsn = None;
                state.error = None;
            }
            other if other.starts_with("InsertWal{") => {
                let diffs = insert_wal(&mut state, other, &step.vars)?;
                if !diffs.is_empty() {
                    return differs(diffs);
                }
                state.end_lsn = None;
                state.error = None;
            }
            "PgCrash" => {
                state.server.crash_restart();
                state.dirty = false;
                state.sender = None;
                state.end_lsn = None;
                state.error = None;
            }
            other if other.starts_with("AdvanceWaiting{") => {
                let (_, args) = parse_action(other)
                    .ok_or_else(|| format!("step {index}: malformed action {other}"))?;
                let bad = |e: String| format!("step {index} ({other}): {e}");
                let target = lsn_arg(&args, "target").map_err(bad)?;
                let read_end = lsn_arg(&args, "read_end").map_err(bad)?;
                let confirmed_flush = state.server.slot.confirmed_flush;
                let diffs = adopt_pointers(&mut state, &step.vars)?;
                if !diffs.is_empty() {
                    return differs(diffs);
                }
                // The clamp point, with the largest limit the call can have read.
                let moveto = target.min(state.server.advance_limit());
                let still_waiting = moveto >= confirmed_flush
                    && advance_waits(state.server.wal.flush, advance_read_end(moveto, [read_end]));
                if !still_waiting {
                    return differs(vec![VarDiff {
                        name: "advance waiting".to_owned(),
                        recorded: Some(Var::Bool(true)),
                        replayed: Some(Var::Bool(false)),
                    }]);
                }
                state.end_lsn = None;
                state.error = None;
            }
            other if !other.starts_with("Advance{") => {
                if !protocol_step(&mut state, other, &step.vars)? {
                    return Ok(Err(Mismatch::NotEnabled {
                        step: index,
                        action: other.to_owned(),
                        enabled: vec![
                            "Observe".into(),
                            "Advance{target: X/Y, restart_moves: B, restart: X/Y}".into(),
                            "AdvanceWaiting{target: X/Y, read_end: X/Y}".into(),
                            "Checkpoint".into(),
                            "PgCrash".into(),
                            "CleanRestart".into(),
                            "InsertWal{bytes, page_bytes, wal_buffers_bytes}".into(),
                            "Commit{xid, commit_lsn, end_lsn, published_rows, mode}".into(),
                            "StartReplication{requested}".into(),
                            "Stream{wal_end}".into(),
                            "StopReplication".into(),
                            "StatusUpdate{write, flush, apply, candidate_restart}".into(),
                            "SqlDecode{upto_lsn, upto_nchanges, confirm, candidate_restart}".into(),
                        ],
                    }));
                }
            }
            other => {
                let Some((target, how)) = parse_advance(other) else {
                    return Ok(Err(Mismatch::NotEnabled {
                        step: index,
                        action: other.to_owned(),
                        enabled: vec![
                            "Observe".into(),
                            "Advance{target: X/Y, restart_moves: B, restart: X/Y}".into(),
                            "Checkpoint".into(),
                            "PgCrash".into(),
                        ],
                    }));
                };
                let before = state.clone();
                let mut after = state.clone();
                let pointer_diffs = adopt_pointers(&mut after, &step.vars)?;
                if !pointer_diffs.is_empty() {
                    return differs(pointer_diffs);
                }
                // The limit the call read lies between the model's limit before and after.
                let low = before.server.advance_limit();
                let high = after.server.advance_limit();
                let end_lsn = lsn_var(&step.vars, "end_lsn").ok().flatten();
                let within = end_lsn.filter(|&e| low <= e && e <= high);
                let candidates = [low, high].into_iter().chain(within);
                let mut first_diffs = None;
                let mut matched = None;
                for limit in candidates {
                    let mut tried = after.clone();
                    let mut slot = tried.durable();
                    let result =
                        slot.slot_advance(target, limit, how.landing(&slot.slot, target, limit));
                    tried.set_durable(slot);
                    match result {
                        Ok(end_lsn) => {
                            tried.end_lsn = Some(end_lsn);
                            tried.error = None;
                        }
                        Err(e) => {
                            tried.end_lsn = None;
                            tried.error = Some(e.to_string());
                        }
                    }
                    let diffs = diff_observed(&step.vars, &tried);
                    if diffs.is_empty() {
                        matched = Some(tried);
                        break;
                    }
                    first_diffs.get_or_insert(diffs);
                }
                match matched {
                    Some(next) => {
                        state = next;
                        continue;
                    }
                    None => return differs(first_diffs.unwrap_or_default()),
                }
            }
        }
        let diffs = diff_observed(&step.vars, &state);
        if !diffs.is_empty() {
            return differs(diffs);
        }
    }
    Ok(Ok(trace.steps.len() - 1))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use walcheck_traces::{Header, Step, Trace, OBSERVED, SCHEMA};

    use super::*;

    fn text(l: &str) -> Var {
        Var::Text(l.to_owned())
    }

    fn step(action: Option<&str>, vars: &[(&str, &str)]) -> Step {
        Step {
            action: action.map(str::to_owned),
            vars: vars
                .iter()
                .map(|(n, v)| ((*n).to_owned(), text(v)))
                .collect(),
            time_us: None,
        }
    }

    /// A run as the live session records it: the advance clamped to a flush pointer that moved
    /// during the call, a crash before any checkpoint, an advance, a checkpoint and a crash.
    fn observed_run() -> Trace {
        Trace {
            header: Header {
                schema: SCHEMA.into(),
                system: SYSTEM.into(),
                variant: "postgresql-15".into(),
                faults: "none".into(),
                config: BTreeMap::new(),
                property: PROPERTY.into(),
                kind: OBSERVED.into(),
                verdict: "holds".into(),
                seed: None,
                simulation: None,
                source: None,
            },
            steps: vec![
                step(
                    None,
                    &[
                        ("insert", "0/1000"),
                        ("write", "0/1000"),
                        ("flush", "0/1000"),
                        ("confirmed_flush", "0/1000"),
                    ],
                ),
                step(
                    Some("Observe"),
                    &[
                        ("insert", "0/9000"),
                        ("write", "0/8000"),
                        ("flush", "0/3000"),
                    ],
                ),
                step(
                    Some("Advance{target: 0/8000, restart_moves: false}"),
                    &[
                        ("insert", "0/9800"),
                        ("write", "0/9000"),
                        ("flush", "0/5000"),
                        ("end_lsn", "0/4000"),
                        ("error", "none"),
                        ("confirmed_flush", "0/4000"),
                    ],
                ),
                step(Some("PgCrash"), &[("confirmed_flush", "0/1000")]),
                step(
                    Some("Observe"),
                    &[
                        ("insert", "0/A000"),
                        ("write", "0/A000"),
                        ("flush", "0/A000"),
                    ],
                ),
                step(
                    Some("Advance{target: 0/1000, restart_moves: false}"),
                    &[
                        ("end_lsn", "none"),
                        (
                            "error",
                            "cannot advance replication slot to 0/1000, minimum is 0/1000",
                        ),
                    ],
                ),
            ],
        }
    }

    /// A number out of range in an action's arguments is named as such, as bad input.
    #[test]
    fn an_out_of_range_argument_is_named() {
        let mut trace = observed_run();
        trace.steps.truncate(2);
        for (xid, why) in [
            (
                "4294967296",
                "xid 4294967296 is out of range for a 32-bit count (0 to 4294967295)",
            ),
            ("-1", "xid \"-1\" is out of range for a whole number"),
            ("x", "xid \"x\" is not a whole number"),
        ] {
            let mut trace = trace.clone();
            trace.steps.push(step(
                Some(&format!(
                    "Commit{{xid: {xid}, commit_lsn: 0/2000, end_lsn: 0/2100, published_rows: 1, mode: sync}}"
                )),
                &[],
            ));
            let err = replay_observed(&trace).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn an_observed_run_replays_through_its_itf_text() {
        let mut trace = observed_run();
        // The last advance's error is wrong on purpose below; first make it right.
        trace.steps[5] = step(
            Some("Advance{target: 0/A000, restart_moves: true}"),
            &[
                ("end_lsn", "0/A000"),
                ("error", "none"),
                ("confirmed_flush", "0/A000"),
            ],
        );
        trace.steps.push(step(Some("Checkpoint"), &[]));
        trace
            .steps
            .push(step(Some("PgCrash"), &[("confirmed_flush", "0/A000")]));
        let text = trace.to_text();
        let read = Trace::from_text(&text).unwrap();
        // Absent variables stay absent (the ITF file lists them in its own order).
        let sorted = |t: &Trace| -> Vec<Vec<(String, Var)>> {
            t.steps
                .iter()
                .map(|s| {
                    let mut vars = s.vars.clone();
                    vars.sort_by(|a, b| a.0.cmp(&b.0));
                    vars
                })
                .collect()
        };
        assert_eq!(sorted(&read), sorted(&trace));
        assert_eq!(replay_observed(&read).unwrap(), Ok(7));
    }

    /// An advance into a record cancelled while it waited, then the same advance once a
    /// synchronous commit flushed past the record.
    #[test]
    fn an_advance_waits_while_its_record_is_unflushed() {
        let mut trace = observed_run();
        trace.steps.truncate(1);
        trace.steps.extend([
            step(
                Some("Observe"),
                &[
                    ("insert", "0/9100"),
                    ("write", "0/8000"),
                    ("flush", "0/8000"),
                ],
            ),
            step(
                Some("AdvanceWaiting{target: 0/8000, read_end: 0/8148}"),
                &[
                    ("insert", "0/9100"),
                    ("write", "0/8000"),
                    ("flush", "0/8000"),
                    ("confirmed_flush", "0/1000"),
                ],
            ),
            step(
                Some("Observe"),
                &[
                    ("insert", "0/9200"),
                    ("write", "0/9200"),
                    ("flush", "0/9200"),
                ],
            ),
            step(
                Some("Advance{target: 0/8000, restart_moves: false}"),
                &[
                    ("end_lsn", "0/8000"),
                    ("error", "none"),
                    ("confirmed_flush", "0/8000"),
                ],
            ),
        ]);
        assert_eq!(replay_observed(&trace).unwrap(), Ok(4));
        // Flushed past the record's end, the model says the call returns: not waiting.
        let mut flushed = trace.clone();
        flushed.steps[2].vars[2].1 = text("0/8148");
        flushed.steps[2].vars[1].1 = text("0/8148");
        let mismatch = replay_observed(&flushed).unwrap().unwrap_err();
        assert!(
            matches!(mismatch, Mismatch::StateDiffers { step: 2, .. }),
            "{mismatch}"
        );
        assert!(
            mismatch.to_string().contains("advance waiting"),
            "{mismatch}"
        );
        // On a record's end there is nothing to wait for.
        let mut boundary = trace.clone();
        boundary.steps[2].action = Some("AdvanceWaiting{target: 0/8000, read_end: 0/8000}".into());
        assert!(replay_observed(&boundary).unwrap().is_err());
        // A waiting advance leaves the slot where it was.
        let mut moved = trace;
        moved.steps[2].vars[3].1 = text("0/8000");
        assert!(replay_observed(&moved).unwrap().is_err());
    }

    #[test]
    fn a_wrong_observation_is_rejected_at_its_step() {
        let trace = observed_run();
        let mismatch = replay_observed(&trace).unwrap().unwrap_err();
        assert_eq!(
            mismatch.to_string(),
            "step 5 (Advance{target: 0/1000, restart_moves: false}) differs: end_lsn recorded none \
             but replayed 0/1000; error recorded cannot advance replication slot to 0/1000, \
             minimum is 0/1000 but replayed none"
        );
        // An end_lsn beyond the flush pointer read after the call.
        let mut trace = observed_run();
        trace.steps[2].vars[3].1 = text("0/6000");
        trace.steps[2].vars[5].1 = text("0/6000");
        assert!(matches!(
            replay_observed(&trace).unwrap(),
            Err(Mismatch::StateDiffers { step: 2, .. })
        ));
        // A crash that kept the in-memory position.
        let mut trace = observed_run();
        trace.steps[3].vars[0].1 = text("0/4000");
        assert!(matches!(
            replay_observed(&trace).unwrap(),
            Err(Mismatch::StateDiffers { step: 3, .. })
        ));
        // Pointers out of order.
        let mut trace = observed_run();
        trace.steps[1].vars[2].1 = text("0/8800");
        assert!(matches!(
            replay_observed(&trace).unwrap(),
            Err(Mismatch::StateDiffers { step: 1, .. })
        ));
    }

    /// The first state of [`observed_run`] alone: an idle primary at 0/1000000.
    fn idle_at(at: &str) -> Trace {
        let mut trace = observed_run();
        trace.steps = vec![step(
            None,
            &[
                ("insert", at),
                ("write", at),
                ("flush", at),
                ("confirmed_flush", at),
            ],
        )];
        trace
    }

    /// A walwriter cycle whose flush was not due writes the completed pages out and flushes
    /// nothing: the write pointer at the last whole page below the insert pointer, the flush
    /// pointer where it was. A cycle that also flushed is not this step.
    #[test]
    fn a_walwriter_write_not_due_writes_the_whole_pages_and_flushes_nothing() {
        let cycle = |write: &str, flush: &str| {
            let mut trace = idle_at("0/1000000");
            trace.steps.extend([
                step(
                    Some("InsertWal{bytes: 20000, page_bytes: 8192, wal_buffers_bytes: 4194304}"),
                    &[("insert", "0/1004E20")],
                ),
                step(
                    Some("WalwriterWrite{page_bytes: 8192}"),
                    &[("insert", "0/1004E20"), ("write", write), ("flush", flush)],
                ),
            ]);
            replay_observed(&trace).unwrap()
        };
        assert_eq!(cycle("0/1004000", "0/1000000"), Ok(2));
        let Err(mismatch) = cycle("0/1004000", "0/1004000") else {
            panic!("a walwriter write that flushed replayed")
        };
        assert_eq!(
            mismatch.to_string(),
            "step 2 (WalwriterWrite{page_bytes: 8192}) differs: flush recorded 0/1004000 but \
             replayed 0/1000000"
        );
        assert!(cycle("0/1004E20", "0/1000000").is_err());
    }

    /// A `COMMIT` returns with its WAL flushed when it was synchronous (the backend waited in
    /// `XLogFlush`), with the flush pointer where it was when it was not.
    #[test]
    fn a_synchronous_commit_returns_flushed_and_an_asynchronous_one_unflushed() {
        let commit = |mode: &str, flushed: &str| {
            let mut trace = idle_at("0/1000000");
            trace.steps.push(step(
                Some(&format!(
                    "CommitReturned{{bytes: 200, mode: {mode}, page_bytes: 8192, \
                     wal_buffers_bytes: 4194304}}"
                )),
                &[
                    ("insert", "0/10000C8"),
                    ("write", flushed),
                    ("flush", flushed),
                ],
            ));
            replay_observed(&trace).unwrap()
        };
        assert_eq!(commit("sync", "0/10000C8"), Ok(1));
        assert_eq!(commit("async", "0/1000000"), Ok(1));
        assert!(matches!(
            commit("sync", "0/1000000"),
            Err(Mismatch::StateDiffers { step: 1, .. })
        ));
        assert!(matches!(
            commit("async", "0/10000C8"),
            Err(Mismatch::StateDiffers { step: 1, .. })
        ));
        let mut trace = idle_at("0/1000000");
        trace.steps.push(step(
            Some("CommitReturned{bytes: 200, mode: later, page_bytes: 8192, wal_buffers_bytes: 8192}"),
            &[],
        ));
        assert!(replay_observed(&trace)
            .unwrap_err()
            .contains("mode \"later\""));
    }

    /// A statement larger than `wal_buffers`: the model's write pointer is the floor, the
    /// walwriter may add to it, and a write pointer below it is a mismatch.
    #[test]
    fn an_insert_beyond_wal_buffers_has_written_at_least_what_the_buffers_could_not_hold() {
        // 40 KiB into 16 KiB of buffers from 0/1000000: written through 0/1006000 at least.
        let insert = |write: &str, flush: &str| {
            let mut trace = idle_at("0/1000000");
            trace.steps.push(step(
                Some("InsertWal{bytes: 40960, page_bytes: 8192, wal_buffers_bytes: 16384}"),
                &[("insert", "0/100A000"), ("write", write), ("flush", flush)],
            ));
            replay_observed(&trace).unwrap()
        };
        assert_eq!(insert("0/1006000", "0/1000000"), Ok(1));
        assert_eq!(insert("0/1008000", "0/1002000"), Ok(1));
        let Err(mismatch) = insert("0/1004000", "0/1000000") else {
            panic!("a write pointer below the floor replayed")
        };
        assert_eq!(
            mismatch.to_string(),
            "step 1 (InsertWal{bytes: 40960, page_bytes: 8192, wal_buffers_bytes: 16384}) \
             differs: write recorded 0/1004000 but replayed at least 0/1006000"
        );
    }

    /// `pg_last_wal_replay_lsn()` as an Observe step records it: NULL on a primary until a
    /// crash, then the write pointer the crash left, also after more WAL, NULL after a clean
    /// restart.
    #[test]
    fn replay_lsn_on_a_primary_follows_its_restarts() {
        let observe = |at: &str, replay: &str| {
            step(
                Some("Observe"),
                &[
                    ("insert", at),
                    ("write", at),
                    ("flush", at),
                    ("last_wal_replay_lsn", replay),
                ],
            )
        };
        let mut trace = idle_at("0/1000");
        trace.steps.extend([
            observe("0/2000", "NULL"),
            step(Some("PgCrash"), &[("confirmed_flush", "0/1000")]),
            observe("0/2100", "0/2000"),
            observe("0/3000", "0/2000"),
            step(Some("CleanRestart"), &[("confirmed_flush", "0/1000")]),
            observe("0/3100", "NULL"),
        ]);
        assert_eq!(replay_observed(&trace).unwrap(), Ok(6));
        // Still NULL after the crash: the model says otherwise.
        trace.steps[3] = observe("0/2100", "NULL");
        assert!(matches!(
            replay_observed(&trace).unwrap(),
            Err(Mismatch::StateDiffers { step: 3, .. })
        ));
    }
}
