//! The conformance rules of the logical replication protocol ([`walcheck_model::pg::stream`],
//! [`walcheck_model::pg::decoding`], [`walcheck_model::pg::lifecycle`]): each predicts the
//! server's answer from the model's function, compares, and records an observed trace.

use std::time::{Duration, Instant};

use walcheck_model::pg::decoding::{
    candidate_restart, decoding_start, get_changes, test_decoding_rows, txn_needs_skip,
};
use walcheck_model::pg::lifecycle::create_logical_slot;
use walcheck_model::pg::stream::{
    identify_system_xlogpos, keepalive_due, process_standby_reply_on, stat_replication,
};
use walcheck_model::pg::{
    running_xacts_restart, DurableSlot, Keepalive, Persistence, PgOutput, Role, Server, Slot,
    SqlChanges, SqlDecode, StandbyStatusUpdate, Txn, TxnPart, Wal, Walsender, XLogData,
};
use walcheck_model::Lsn;
use walcheck_properties::system::Var;

use crate::pg_error::pg_message;
use crate::replication::{CopyMessage, PgOutputMessage, ReplicationClient};
use crate::rules::{ensure, pass, throwaway_only, Outcome};
use crate::server::PgServer;
use crate::session::{Pointers, Session, PUBLICATION, PUBLISHED_TABLE, UNPUBLISHED_TABLE};
use crate::waldump;

/// How long a stream may stay silent before the client takes it as caught up.
const QUIET_MS: u64 = 600;
/// At most this many messages are read per burst.
const MESSAGES_MAX: usize = 10_000;

fn lsn_var(l: Lsn) -> Var {
    Var::Text(l.to_string())
}

/// The slot as `pg_replication_slots` shows it, as a model slot saved where it is.
pub(crate) fn slot_now(session: &mut Session) -> Result<Slot, String> {
    let (confirmed_flush, restart_lsn) = session.slot_lsns()?;
    let mut slot = Slot::at_rest(confirmed_flush);
    slot.restart_lsn = restart_lsn;
    slot.save();
    Ok(slot)
}

/// What one START_REPLICATION saw until the stream went quiet.
pub(crate) struct Streamed {
    pub(crate) client: ReplicationClient,
    first_keepalive: Option<Lsn>,
    last_keepalive: Option<Lsn>,
    /// `final_lsn` of every Begin, in order.
    pub(crate) begins: Vec<Lsn>,
    messages: Vec<CopyMessage>,
    /// The model's walsender for this stream, after what it predicted so far.
    pub(crate) sender: Walsender,
}

fn read_burst(client: &mut ReplicationClient) -> Result<Vec<CopyMessage>, String> {
    Ok(client.recv_until_quiet(Duration::from_millis(QUIET_MS), MESSAGES_MAX)?)
}

fn keepalives(messages: &[CopyMessage]) -> Vec<Lsn> {
    messages
        .iter()
        .filter_map(|m| match m {
            CopyMessage::Keepalive { wal_end, .. } => Some(*wal_end),
            _ => None,
        })
        .collect()
}

fn begins(messages: &[CopyMessage]) -> Vec<Lsn> {
    messages
        .iter()
        .filter_map(|m| match m {
            CopyMessage::XLogData {
                message: PgOutputMessage::Begin { final_lsn, .. },
                ..
            } => Some(*final_lsn),
            _ => None,
        })
        .collect()
}

fn joined(lsns: impl IntoIterator<Item = Lsn>) -> String {
    lsns.into_iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `START_REPLICATION … LOGICAL requested`, read until quiet; predicts with
/// [`Walsender::start_replication`] and [`Walsender::send_logical`] and compares: the first
/// keepalive's `ServerWALEnd`, the transactions sent, the keepalive after catching up, and an
/// unchanged `confirmed_flush`. Records `StartReplication` and `Stream`.
pub(crate) fn stream_and_check(
    server: &PgServer,
    session: &mut Session,
    txns: &[Txn],
    requested: Lsn,
    options: &str,
) -> Result<Streamed, String> {
    let slot = slot_now(session)?;
    let mut client = ReplicationClient::connect(&server.replication_target(), options)?;
    client.start_replication(session.slot_name(), requested, PUBLICATION)?;
    let messages = read_burst(&mut client)?;
    let wal_end = session.pointers()?.flush;
    let mut sender = Walsender::start_replication(requested, &slot);
    let predicted = predict_stream(&mut sender, txns, wal_end);
    let seen = keepalives(&messages);
    let streamed = Streamed {
        first_keepalive: seen.first().copied(),
        last_keepalive: seen.last().copied(),
        begins: begins(&messages),
        messages,
        client,
        sender,
    };
    let (cf_after, _) = session.slot_lsns()?;
    record_stream_start(session, (requested, wal_end), &streamed, cf_after);
    check_stream_start(requested, &streamed, predicted)?;
    ensure(cf_after == slot.confirmed_flush, || {
        format!(
            "START_REPLICATION moved confirmed_flush {} -> {cf_after}",
            slot.confirmed_flush
        )
    })?;
    Ok(streamed)
}

/// What the model's walsender sends from its start ([`Walsender::send_logical`] up to
/// `wal_end`): its first keepalive's `ServerWALEnd`, the commits of the transactions it sends,
/// and its keepalive after them.
fn predict_stream(sender: &mut Walsender, txns: &[Txn], wal_end: Lsn) -> (Lsn, Vec<Lsn>, Lsn) {
    let first = sender.keepalive(false).wal_end;
    let sent: Vec<Lsn> = sender
        .send_logical(txns, wal_end)
        .iter()
        .map(|t| t.commit_lsn)
        .collect();
    let last = sender.keepalive(false).wal_end;
    (first, sent, last)
}

/// Records a stream's start: `StartReplication` at `requested` with its first keepalive and the
/// slot's `confirmed_flush` after it, then `Stream` up to `wal_end` with what it sent.
fn record_stream_start(
    session: &mut Session,
    (requested, wal_end): (Lsn, Lsn),
    streamed: &Streamed,
    cf_after: Lsn,
) {
    let keepalive = |k: Option<Lsn>| Var::Text(k.map_or("none".into(), |l| l.to_string()));
    session.record(
        format!("StartReplication{{requested: {requested}}}"),
        vec![
            (
                "keepalive_wal_end".into(),
                keepalive(streamed.first_keepalive),
            ),
            ("confirmed_flush".into(), lsn_var(cf_after)),
        ],
    );
    session.record(
        format!("Stream{{wal_end: {wal_end}}}"),
        vec![
            ("sent".into(), Var::Text(joined(streamed.begins.clone()))),
            (
                "keepalive_wal_end".into(),
                keepalive(streamed.last_keepalive),
            ),
        ],
    );
}

/// A stream's start against the model's ([`predict_stream`]): the first keepalive, the
/// transactions sent, and the keepalive after catching up.
fn check_stream_start(
    requested: Lsn,
    streamed: &Streamed,
    (predicted_first, predicted_sent, predicted_last): (Lsn, Vec<Lsn>, Lsn),
) -> Result<(), String> {
    ensure(streamed.first_keepalive == Some(predicted_first), || {
        format!(
            "START_REPLICATION {requested}: first keepalive {:?}, the model says {predicted_first}",
            streamed.first_keepalive
        )
    })?;
    ensure(streamed.begins == predicted_sent, || {
        format!(
            "START_REPLICATION {requested}: sent transactions committed at [{}], the model says [{}]",
            joined(streamed.begins.clone()),
            joined(predicted_sent.clone())
        )
    })?;
    ensure(streamed.last_keepalive == Some(predicted_last), || {
        format!(
            "START_REPLICATION {requested}: keepalive after catching up {:?}, the model says \
             {predicted_last}",
            streamed.last_keepalive
        )
    })
}

/// Reads the running stream on until it is quiet and checks it against the model's walsender
/// reading up to the flush pointer observed afterwards ([`Walsender::send_logical`]): the
/// transactions sent since, and the last keepalive if one came. Records `Observe` and `Stream`.
/// When the model expects more than came, a transaction or a keepalive further on (WAL flushed
/// just as the stream went quiet, such as a record of another process that the walwriter
/// flushed), it reads once more. Returns what was sent and the flush pointer.
fn stream_more(
    session: &mut Session,
    streamed: &mut Streamed,
    txns: &[Txn],
) -> Result<(Vec<Lsn>, Lsn), String> {
    let mut messages = read_burst(&mut streamed.client)?;
    let flush = session.observe()?.flush;
    let predicted: Vec<Lsn> = streamed
        .sender
        .send_logical(txns, flush)
        .iter()
        .map(|t| t.commit_lsn)
        .collect();
    let predicted_sent_ptr = streamed.sender.keepalive(false).wal_end;
    if begins(&messages).len() < predicted.len()
        || keepalives(&messages)
            .last()
            .is_some_and(|k| *k < predicted_sent_ptr)
    {
        messages.extend(read_burst(&mut streamed.client)?);
    }
    let sent = begins(&messages);
    let last_keepalive = keepalives(&messages).last().copied();
    let mut vars = vec![("sent".into(), Var::Text(joined(sent.clone())))];
    if let Some(wal_end) = last_keepalive {
        vars.push(("keepalive_wal_end".into(), lsn_var(wal_end)));
    }
    session.record(format!("Stream{{wal_end: {flush}}}"), vars);
    ensure(sent == predicted, || {
        format!(
            "stream read on to flush {flush}: sent [{}], the model says [{}]",
            joined(sent.clone()),
            joined(predicted.clone())
        )
    })?;
    ensure(
        last_keepalive.is_none_or(|k| k == predicted_sent_ptr),
        || {
            format!(
                "stream read on to flush {flush}: keepalive {last_keepalive:?}, the model says \
                 {predicted_sent_ptr}"
            )
        },
    )?;
    streamed.begins.extend(&sent);
    if last_keepalive.is_some() {
        streamed.last_keepalive = last_keepalive;
    }
    streamed.messages.extend(messages);
    Ok((sent, flush))
}

fn stop_stream(session: &mut Session, streamed: Streamed) -> Result<(), String> {
    streamed.client.close()?;
    stream_ended(session)
}

/// Records the stream's end (`StopReplication`) and waits, 5 s at most, for the walsender to
/// release the slot as it exits (a later rule step needs it).
pub(crate) fn stream_ended(session: &mut Session) -> Result<(), String> {
    session.record("StopReplication".into(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(5);
    let slot = session.slot_name().to_owned();
    while Instant::now() < deadline {
        let active: bool = session
            .client()
            .query_one(
                "SELECT active FROM pg_replication_slots WHERE slot_name = $1",
                &[&slot],
            )
            .map_err(|e| e.to_string())?
            .get(0);
        if !active {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err("the walsender kept the slot after the stream ended".into())
}

/// Three published transactions on a fresh pgoutput slot.
pub(crate) fn three_txns(session: &mut Session) -> Result<Vec<Txn>, String> {
    (1..=3)
        .map(|rows| session.commit_txn(PUBLISHED_TABLE, rows, true, true))
        .collect()
}

/// `IDENTIFY_SYSTEM`'s `xlogpos` is the flush pointer on a primary, also with an asynchronous
/// commit not yet flushed.
pub fn identify_system_xlogpos_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_identify")?;
    session.commit_txn(PUBLISHED_TABLE, 1, true, false)?;
    let mut client = ReplicationClient::connect(&server.replication_target(), "")?;
    let before = session.observe()?;
    let identified = client.identify_system()?;
    let after = session.observe()?;
    let mut model = Server::at_rest(Role::Primary, before.flush);
    model.wal.insert = before.insert;
    model.wal.write = before.write;
    let predicted = identify_system_xlogpos(&model);
    ensure(
        (predicted..=after.flush).contains(&identified.xlogpos),
        || {
            format!(
                "IDENTIFY_SYSTEM xlogpos {}; the model says the flush pointer ({predicted} .. {})",
                identified.xlogpos, after.flush
            )
        },
    )?;
    client.close()?;
    pass(
        &session,
        server,
        "identify_system_xlogpos",
        format!(
            "xlogpos {} = flush (insert {} after an asynchronous commit)",
            identified.xlogpos, before.insert
        ),
    )
}

/// `START_REPLICATION … 0/0` after the slot was advanced past the first transaction starts at
/// `confirmed_flush`: only the later transactions are sent.
pub fn start_at_zero_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_start_zero")?;
    let txns = three_txns(&mut session)?;
    session.observe()?;
    session.advance(txns[0].end_lsn)?;
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let detail = format!(
        "confirmed_flush {}: sent [{}], keepalives {:?} .. {:?}",
        txns[0].end_lsn,
        joined(streamed.begins.clone()),
        streamed.first_keepalive,
        streamed.last_keepalive
    );
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "start_at_zero_from_confirmed_flush",
        detail,
    )
}

/// A requested position below `confirmed_flush` is forwarded to it (no error).
pub fn start_below_confirmed_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_start_below")?;
    let txns = three_txns(&mut session)?;
    session.observe()?;
    session.advance(txns[1].end_lsn)?;
    let requested = txns[0].commit_lsn;
    let streamed = stream_and_check(server, &mut session, &txns, requested, "")?;
    let detail = format!(
        "requested {requested} < confirmed_flush {}: sent [{}]",
        txns[1].end_lsn,
        joined(streamed.begins.clone())
    );
    stop_stream(&mut session, streamed)?;
    pass(&session, server, "start_below_confirmed_flush", detail)
}

/// A transaction is sent when the requested position is its commit record's start, and skipped
/// one byte later (still inside the commit record); START_REPLICATION moves nothing.
pub fn start_skips_by_commit_start_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_start_skip")?;
    let txns = three_txns(&mut session)?;
    let mut details = Vec::new();
    for requested in [txns[1].commit_lsn, txns[1].commit_lsn.plus(1)] {
        let streamed = stream_and_check(server, &mut session, &txns, requested, "")?;
        details.push(format!(
            "from {requested}: [{}]",
            joined(streamed.begins.clone())
        ));
        stop_stream(&mut session, streamed)?;
    }
    pass(
        &session,
        server,
        "start_skips_by_commit_start",
        format!(
            "second commit record {}..{}: {}",
            txns[1].commit_lsn,
            txns[1].end_lsn,
            details.join("; ")
        ),
    )
}

/// A requested position past the flush pointer is accepted; nothing before it is sent, nor a
/// transaction committed later whose commit record starts before it; `confirmed_flush` stays.
pub fn start_past_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_start_past")?;
    let mut txns = three_txns(&mut session)?;
    let requested = session.pointers()?.flush.plus(1 << 20);
    let streamed = stream_and_check(server, &mut session, &txns, requested, "")?;
    stop_stream(&mut session, streamed)?;
    txns.push(session.commit_txn(PUBLISHED_TABLE, 1, true, true)?);
    let streamed = stream_and_check(server, &mut session, &txns, requested, "")?;
    let detail = format!(
        "requested {requested} beyond flush: accepted, sent [{}] (a later commit at {} skipped), \
         confirmed_flush unchanged",
        joined(streamed.begins.clone()),
        txns[3].commit_lsn
    );
    stop_stream(&mut session, streamed)?;
    pass(&session, server, "start_past_flush_accepted", detail)
}

/// pgoutput's LSNs: Begin's `final_lsn` and Commit's `commit_lsn` are the commit record's start,
/// Commit's `end_lsn` its end and the XLogData `wal_start` of the Commit; Begin goes out under the
/// first change's LSN, the Relation under `0/0`.
pub fn pgoutput_lsns_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_pgoutput_lsns")?;
    let (cf, _) = session.slot_lsns()?;
    let txn = session.commit_txn(PUBLISHED_TABLE, 2, true, true)?;
    let txns = [txn];
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let data: Vec<(Lsn, Lsn, PgOutputMessage)> = streamed
        .messages
        .iter()
        .filter_map(|m| match m {
            CopyMessage::XLogData {
                wal_start,
                wal_end,
                message,
            } => Some((*wal_start, *wal_end, message.clone())),
            _ => None,
        })
        .collect();
    // The first change's record: the session knows only that it starts at or after the insert
    // pointer read before the INSERT (a server with history may log a prune or full-page record
    // first); the model is given the LSN the server sent it under, and checked against that bound.
    let first_change = data
        .first()
        .map_or(txn.first_lsn, |(wal_start, _, _)| *wal_start);
    ensure(
        txn.first_lsn <= first_change && first_change < txn.commit_lsn,
        || {
            format!(
                "Begin under {first_change}, outside the transaction's WAL {}..{}",
                txn.first_lsn, txn.commit_lsn
            )
        },
    )?;
    let predicted = walcheck_model::pg::stream::pgoutput_txn(&txn, first_change, false, false);
    ensure(data.len() == predicted.len(), || {
        format!(
            "{} messages, the model says {}: {data:?}",
            data.len(),
            predicted.len()
        )
    })?;
    for (sent, model) in data.iter().zip(&predicted) {
        check_pgoutput_message(&txn, first_change, sent, model)?;
    }
    // The Inserts after the first: in the model's order, though not at its LSNs.
    let placed = |lsns: Vec<Lsn>| lsns.into_iter().filter(|l| *l != Lsn::INVALID).collect();
    let sent_lsns: Vec<Lsn> = placed(data.iter().map(|(wal_start, ..)| *wal_start).collect());
    let model_lsns: Vec<Lsn> = placed(predicted.iter().map(|x| x.wal_start).collect());
    ensure(same_order(&sent_lsns, &model_lsns), || {
        format!(
            "sent under [{}], the model says [{}]",
            joined(sent_lsns.clone()),
            joined(model_lsns.clone())
        )
    })?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "pgoutput_begin_commit_lsns",
        format!(
            "Begin at {first_change} (first change; slot at {cf}) final_lsn {}, Relation at 0/0, \
             Commit at {} (commit_lsn {}, end_lsn {})",
            txn.commit_lsn, txn.end_lsn, txn.commit_lsn, txn.end_lsn
        ),
    )
}

/// Whether every two of `sent` are in the same order, or equal, as the same two of `model`.
fn same_order(sent: &[Lsn], model: &[Lsn]) -> bool {
    sent.len() == model.len()
        && (0..sent.len())
            .all(|i| (i + 1..sent.len()).all(|j| sent[i].cmp(&sent[j]) == model[i].cmp(&model[j])))
}

/// One XLogData message of `txn` as the server sent it (`wal_start`, `wal_end`, the message)
/// against the model's ([`walcheck_model::pg::stream::pgoutput_txn`]): the same kind, the same
/// LSNs in Begin and Commit, and sent under the model's `wal_start`, an Insert anywhere from the
/// first change to the commit record (the model places a later row's record evenly between
/// them, [`Txn::change_lsn`]; their order is checked apart).
fn check_pgoutput_message(
    txn: &Txn,
    first_change: Lsn,
    (wal_start, wal_end, message): &(Lsn, Lsn, PgOutputMessage),
    model: &XLogData,
) -> Result<(), String> {
    let same_kind = matches!(
        (message, model.message),
        (PgOutputMessage::Begin { .. }, PgOutput::Begin { .. })
            | (PgOutputMessage::Relation { .. }, PgOutput::Relation)
            | (PgOutputMessage::Insert { .. }, PgOutput::Insert)
            | (PgOutputMessage::Commit { .. }, PgOutput::Commit { .. })
    );
    let fields = match (message, model.message) {
        (
            PgOutputMessage::Begin { final_lsn, xid },
            PgOutput::Begin {
                final_lsn: f,
                xid: x,
            },
        ) => *final_lsn == f && *xid == x,
        (
            PgOutputMessage::Commit {
                commit_lsn,
                end_lsn,
            },
            PgOutput::Commit {
                commit_lsn: c,
                end_lsn: e,
            },
        ) => *commit_lsn == c && *end_lsn == e,
        _ => true,
    };
    let position = match model.message {
        PgOutput::Insert => *wal_start >= first_change && *wal_start < txn.commit_lsn,
        _ => *wal_start == model.wal_start,
    };
    ensure(
        same_kind && fields && position && wal_start == wal_end,
        || format!("server sent {message:?} at {wal_start}/{wal_end}, the model says {model:?}"),
    )
}

/// A transaction's messages as the walsender sent them, its Relations left out (they go under
/// `0/0`: `pgoutput_begin_commit_lsns`): each as the [`TxnPart`] it is, its XLogData's
/// `dataStart` and `walEnd`, and the message.
type SentTxn = Vec<(TxnPart, Lsn, Lsn, PgOutputMessage)>;

/// The transactions in `messages`, each from its Begin to its Commit; the Inserts between are
/// numbered as the rows they carry.
fn sent_txns(messages: &[CopyMessage]) -> Result<Vec<SentTxn>, String> {
    let mut txns: Vec<SentTxn> = Vec::new();
    let mut open: Option<SentTxn> = None;
    for m in messages {
        let CopyMessage::XLogData {
            wal_start,
            wal_end,
            message,
        } = m
        else {
            continue;
        };
        let part = match (message, &open) {
            (PgOutputMessage::Relation { .. }, Some(_)) => continue,
            (PgOutputMessage::Begin { .. }, None) => TxnPart::Begin,
            (PgOutputMessage::Insert { .. }, Some(parts)) => {
                TxnPart::Change(parts.len() as u32 - 1)
            }
            (PgOutputMessage::Commit { .. }, Some(_)) => TxnPart::Commit,
            _ => {
                return Err(format!(
                    "server sent {message:?} at {wal_start}, out of place"
                ))
            }
        };
        let parts = open.get_or_insert_with(Vec::new);
        parts.push((part, *wal_start, *wal_end, message.clone()));
        if part == TxnPart::Commit {
            txns.extend(open.take());
        }
    }
    ensure(open.is_none(), || {
        format!("the stream went quiet inside a transaction: {open:?}")
    })?;
    Ok(txns)
}

/// A transaction's messages one by one, Begin, each row's Insert and Commit, against
/// [`TxnPart`]: `txn` committed `rows` rows into the published table, with one heap record per
/// row (an `INSERT`) or, `multi_insert`, one for all (a `COPY`). Returns `txn` with `first_lsn`
/// at its first change's record, as the model was given it.
///
/// The model places a later row's record evenly between the first change and the commit record
/// ([`Txn::change_lsn`]), the server one after another, so their absolute LSNs are not compared
/// (they agree only when the records are the same size and nothing else logs between them).
/// What is compared: the same parts in the same order ([`TxnPart::next`]); every message under
/// `walEnd == dataStart`; the Begin and the first Insert under the first change's record start,
/// the Commit under `end_lsn`, as the model has them exactly; and for every two messages the
/// same order, or the same equality, as the model's LSNs ([`TxnPart::lsn`]): single-row records
/// strictly increasing, a multi-insert's rows all under one LSN. Every Insert lies at or after
/// the Begin's and before the commit record's start, where the model's lie too; Begin and
/// Commit carry the commit record's start and end.
fn check_txn_parts(
    txn: &Txn,
    multi_insert: bool,
    sent: &SentTxn,
    records: Option<&[waldump::WalRecord]>,
) -> Result<Txn, String> {
    let what = if multi_insert {
        "multi-insert"
    } else {
        "single-row records"
    };
    let lsns: Vec<Lsn> = sent.iter().map(|(_, wal_start, _, _)| *wal_start).collect();
    // The first change's record: from the WAL where it is read, else the LSN the server sent
    // the first Insert under, checked against the insert pointer read before the statement.
    let first_change = match records {
        Some(records) => first_row_record(txn, multi_insert, sent, records)?,
        None => lsns.get(1).copied().unwrap_or(txn.first_lsn),
    };
    ensure(
        txn.first_lsn <= first_change && first_change < txn.commit_lsn,
        || {
            format!(
                "{what}: first change at {first_change}, outside the transaction's WAL {}..{}",
                txn.first_lsn, txn.commit_lsn
            )
        },
    )?;
    let txn = Txn {
        first_lsn: first_change,
        ..*txn
    };
    let mut parts = vec![TxnPart::Begin];
    while let Some(next) = parts.last().and_then(|p| p.next(&txn)) {
        parts.push(next);
    }
    let model: Vec<Lsn> = parts.iter().map(|p| p.lsn(&txn, multi_insert)).collect();
    let sent_parts: Vec<TxnPart> = sent.iter().map(|(part, ..)| *part).collect();
    let said = || {
        format!(
            "{what}: server sent {sent_parts:?} under [{}], the model says {parts:?} under [{}] \
             (commit_lsn {})",
            joined(lsns.clone()),
            joined(model.clone()),
            txn.commit_lsn
        )
    };
    ensure(sent_parts == parts, said)?;
    let last = lsns.len() - 1;
    let inside = |l: &[Lsn]| l[1..last].iter().all(|c| *c >= l[0] && *c < txn.commit_lsn);
    ensure(
        [0, 1, last].iter().all(|&i| lsns[i] == model[i])
            && same_order(&lsns, &model)
            && inside(&lsns)
            && inside(&model),
        said,
    )?;
    check_begin_commit_fields(&txn, what, sent)?;
    Ok(txn)
}

/// Where the WAL has transaction `txn`'s row records, on a throwaway server: one `INSERT`
/// record per row, or one `MULTI_INSERT` for all (`multi_insert`), and each Insert `sent` under
/// its row's record start ([`waldump::row_records`]). Returns the first one's start.
fn first_row_record(
    txn: &Txn,
    multi_insert: bool,
    sent: &SentTxn,
    records: &[waldump::WalRecord],
) -> Result<Lsn, String> {
    let rows = waldump::row_records(records, txn.xid);
    let kinds: Vec<bool> = rows.iter().map(|(_, multi)| *multi).collect();
    let expected = if multi_insert {
        vec![true]
    } else {
        vec![false; txn.published_rows as usize]
    };
    ensure(kinds == expected, || {
        format!(
            "the WAL logs the rows of xid {} in {kinds:?} (true: a multi-insert record), not \
             {expected:?}",
            txn.xid
        )
    })?;
    let starts: Vec<Lsn> = rows.iter().map(|(r, _)| r.lsn).collect();
    let inserts: Vec<Lsn> = sent
        .iter()
        .filter(|(part, ..)| matches!(part, TxnPart::Change(_)))
        .map(|(_, wal_start, ..)| *wal_start)
        .collect();
    let under_records = inserts
        .iter()
        .enumerate()
        .all(|(k, l)| starts.get(if multi_insert { 0 } else { k }) == Some(l));
    ensure(
        under_records && inserts.len() == txn.published_rows as usize,
        || {
            format!(
                "Inserts of xid {} under [{}], its row records start at [{}]",
                txn.xid,
                joined(inserts.clone()),
                joined(starts.clone())
            )
        },
    )?;
    Ok(starts[0])
}

/// Each message of `sent` under `walEnd == dataStart`; its Begin carries `txn`'s xid and
/// commit record start, its Commit the commit record's start and end.
fn check_begin_commit_fields(txn: &Txn, what: &str, sent: &SentTxn) -> Result<(), String> {
    ensure(
        sent.iter()
            .all(|(_, wal_start, wal_end, _)| wal_start == wal_end),
        || format!("{what}: walEnd differs from dataStart: {sent:?}"),
    )?;
    let fields = sent.iter().all(|(_, _, _, message)| match message {
        PgOutputMessage::Begin { final_lsn, xid } => {
            *final_lsn == txn.commit_lsn && *xid == txn.xid
        }
        PgOutputMessage::Commit {
            commit_lsn,
            end_lsn,
        } => *commit_lsn == txn.commit_lsn && *end_lsn == txn.end_lsn,
        _ => true,
    });
    ensure(fields, || {
        format!(
            "{what}: Begin or Commit of xid {} does not carry commit_lsn {} and end_lsn {}: \
             {sent:?}",
            txn.xid, txn.commit_lsn, txn.end_lsn
        )
    })
}

/// A transaction's messages one by one, on one pgoutput stream: three rows INSERTed in one
/// transaction (three heap records) and three rows COPYed in the next (one multi-insert
/// record), each checked by [`check_txn_parts`] against [`TxnPart`] with `multi_insert` off
/// and on.
pub fn pgoutput_change_lsns_rule(server: &PgServer) -> Result<Outcome, String> {
    const ROWS: u32 = 3;
    let mut session = Session::open_pgoutput(server, "walcheck_change_lsns")?;
    let single = session.commit_txn(PUBLISHED_TABLE, ROWS, true, true)?;
    let multi = session.commit_copy_txn(PUBLISHED_TABLE, ROWS, true)?;
    let txns = [single, multi];
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let sent = sent_txns(&streamed.messages)?;
    ensure(sent.len() == txns.len(), || {
        format!(
            "{} transactions sent, the model says {}",
            sent.len(),
            txns.len()
        )
    })?;
    let records = if server.is_throwaway() {
        let end = txns[1].end_lsn;
        Some(waldump::parse(&server.waldump(txns[0].first_lsn, end)?))
    } else {
        None
    };
    let mut detail = Vec::new();
    for ((txn, multi_insert), sent) in txns.iter().zip([false, true]).zip(&sent) {
        let txn = check_txn_parts(txn, multi_insert, sent, records.as_deref())?;
        let lsn_of = |part| {
            sent.iter()
                .find(|(p, ..)| *p == part)
                .map_or(Lsn::INVALID, |(_, l, ..)| *l)
        };
        let inserts = sent
            .iter()
            .filter(|(part, ..)| matches!(part, TxnPart::Change(_)))
            .map(|(_, wal_start, ..)| *wal_start);
        let model = (0..ROWS).map(|k| TxnPart::Change(k).lsn(&txn, multi_insert));
        detail.push(format!(
            "{}: Begin at {}, Inserts at [{}] (model [{}]), Commit at {} (commit_lsn {})",
            if multi_insert { "COPY" } else { "INSERT" },
            lsn_of(TxnPart::Begin),
            joined(inserts),
            joined(model),
            lsn_of(TxnPart::Commit),
            txn.commit_lsn
        ));
    }
    if records.is_none() {
        detail.push("the WAL not read (--pg-url)".into());
    }
    stop_stream(&mut session, streamed)?;
    pass(&session, server, "pgoutput_change_lsns", detail.join("; "))
}

/// Two transactions whose WAL interleaves ([`Wal::begin_txn`], [`Wal::commit_open`]): A inserts
/// two rows and stays open while B inserts one and commits, so that commit order is not begin
/// order. B goes out first, then A whole, A's Begin and Inserts under its change records, below
/// B's ([`Txn::runs_at`], [`TxnPart::lsn`]). A running-xacts record logged while A is open (a
/// CHECKPOINT's) lists A as running, and a confirmation past it leaves `restart_lsn` at or below
/// A's first change ([`running_xacts_restart`]); a restart from B's `end_lsn` skips B and sends A
/// again whole ([`txn_needs_skip`]).
pub fn interleaved_commit_order_rule(server: &PgServer) -> Result<Outcome, String> {
    const ROWS: u32 = 2;
    let (mut session, mut txns, mut streamed) = streaming(server, "walcheck_interleaved")?;
    let (_, restart_created) = session.slot_lsns()?;
    // A running-xacts record with nothing running, confirmed first: `restart_lsn` moves to it,
    // so that what holds it afterwards is the open transaction, not the slot's creation.
    let (_, restart_before) = confirm_checkpoint(&mut session, &mut streamed, &txns)?;
    let mut open_client = server.connect()?;
    let open = session.begin_txn(&mut open_client, PUBLISHED_TABLE, ROWS, true)?;
    let from = streamed.messages.len();
    let b = session.commit_txn(PUBLISHED_TABLE, 1, true, true)?;
    txns.push(b);
    let (confirmed, restart_after) = confirm_checkpoint(&mut session, &mut streamed, &txns)?;
    let a = session.commit_open(&mut open_client, open)?;
    txns.push(a);
    stream_more(&mut session, &mut streamed, &txns)?;
    let records = if server.is_throwaway() {
        Some(waldump::parse(&server.waldump(open.first_lsn, a.end_lsn)?))
    } else {
        None
    };
    let sent = sent_txns(&streamed.messages[from..])?;
    let (a, b) = check_interleaved((&a, &b), &sent, records.as_deref())?;
    let running_xacts = check_running_xacts(records.as_deref(), (&a, &b), confirmed)?;
    check_restart_held(&a, running_xacts.unwrap_or(b.end_lsn), restart_after)?;
    stop_stream(&mut session, streamed)?;
    let start = restart_from_b_end(server, &mut session, &txns, (&a, &b), &sent[1])?;
    let a_sent: Vec<Lsn> = sent[1]
        .iter()
        .map(|(_, wal_start, ..)| *wal_start)
        .collect();
    let listed = match running_xacts {
        Some(at) => format!("a running-xacts record at {at}, past B's end, listing A"),
        None => "a CHECKPOINT while A was open (the WAL not read: --pg-url)".to_owned(),
    };
    let detail = format!(
        "A (xid {}) from its first change {} (changes end {}), open while B committed {}..{}: \
         sent B, then A under [{}], commit {}..{}; restart_lsn {restart_created} at creation, \
         {restart_before} past a CHECKPOINT before A; {}: confirmed {confirmed}, restart_lsn \
         {restart_after} (A's first change {}); START_REPLICATION from B's \
         end_lsn (decoding from {start}): B skipped, A again whole",
        a.xid,
        a.first_lsn,
        a.changes_end,
        b.commit_lsn,
        b.end_lsn,
        joined(a_sent),
        a.commit_lsn,
        a.end_lsn,
        listed,
        a.first_lsn,
    );
    pass(&session, server, "interleaved_commit_order", detail)
}

/// A CHECKPOINT (it logs a running-xacts record, `xlog.c:CreateCheckPoint` →
/// `standby.c:LogStandbySnapshot`), the stream read on to the flush pointer ([`stream_more`]), and
/// a status update confirming that ([`check_update`]), once `pg_replication_slots` shows it
/// confirmed: the position confirmed and the slot's `restart_lsn` then.
fn confirm_checkpoint(
    session: &mut Session,
    streamed: &mut Streamed,
    txns: &[Txn],
) -> Result<(Lsn, Lsn), String> {
    session.checkpoint()?;
    let (_, flush) = stream_more(session, streamed, txns)?;
    check_update(session, &mut streamed.client, update(flush, flush, flush))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (confirmed_flush, restart_lsn) = session.slot_lsns()?;
        if confirmed_flush == flush {
            return Ok((flush, restart_lsn));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "confirmed {flush}: pg_replication_slots still shows confirmed_flush \
                 {confirmed_flush}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The two transactions as they were sent, `sent` from B's commit on, against the model: B
/// first, then A, each whole ([`check_txn_parts`]), and A's LSNs as [`Wal::begin_txn`] and
/// [`Wal::commit_open`] lay them out: its changes below B's first change, its commit record at or
/// after B's end, so that it runs at B's end and B does not ([`Txn::runs_at`]); its Begin and
/// Inserts go out under LSNs below B's first change. Returns A and B with `first_lsn` at their
/// first change's record.
fn check_interleaved(
    (a, b): (&Txn, &Txn),
    sent: &[SentTxn],
    records: Option<&[waldump::WalRecord]>,
) -> Result<(Txn, Txn), String> {
    let finals: Vec<Lsn> = sent
        .iter()
        .filter_map(|parts| match parts.first() {
            Some((_, _, _, PgOutputMessage::Begin { final_lsn, .. })) => Some(*final_lsn),
            _ => None,
        })
        .collect();
    ensure(finals == [b.commit_lsn, a.commit_lsn], || {
        format!(
            "sent transactions committed at [{}], in commit order B {} then A {}",
            joined(finals.clone()),
            b.commit_lsn,
            a.commit_lsn
        )
    })?;
    let b = check_txn_parts(b, false, &sent[0], records)?;
    let a = check_txn_parts(a, false, &sent[1], records)?;
    let a_below: Vec<Lsn> = sent[1]
        .iter()
        .filter(|(part, ..)| *part != TxnPart::Commit)
        .map(|(_, wal_start, ..)| *wal_start)
        .collect();
    ensure(
        a.is_ordered()
            && b.is_ordered()
            && a.changes_end < a.commit_lsn
            && a.first_lsn < b.first_lsn
            && a.changes_end <= b.first_lsn
            && b.end_lsn <= a.commit_lsn
            && a.runs_at(b.end_lsn)
            && !b.runs_at(b.end_lsn)
            && a_below.iter().all(|l| *l < b.first_lsn),
        || {
            format!(
                "A {}..{} (changes end {}) begun before B {}..{}..{} and committed after it: \
                 the model's layout does not hold (A's Begin and Inserts under [{}])",
                a.first_lsn,
                a.end_lsn,
                a.changes_end,
                b.first_lsn,
                b.commit_lsn,
                b.end_lsn,
                joined(a_below.clone())
            )
        },
    )?;
    Ok((a, b))
}

/// The running-xacts records the WAL has from A's first change up to `confirmed`, on a
/// throwaway server: each lists A, and B, exactly when the model says it runs there
/// ([`Txn::runs_at`]), and one lies past B's end with A running (the CHECKPOINT's; the
/// background writer's may follow it). Returns the first of those, `None` without the WAL
/// (`--pg-url`).
///
/// PostgreSQL 15 `standby.c:LogStandbySnapshot` → `procarray.c:GetRunningTransactionData`
/// lists every transaction with an xid still in the proc array, committed or not.
fn check_running_xacts(
    records: Option<&[waldump::WalRecord]>,
    (a, b): (&Txn, &Txn),
    confirmed: Lsn,
) -> Result<Option<Lsn>, String> {
    let Some(records) = records else {
        return Ok(None);
    };
    let mut held_at = None;
    for r in records.iter().filter(|r| r.lsn < confirmed) {
        let Some(xids) = r.running_xids() else {
            continue;
        };
        for (name, txn) in [("A", a), ("B", b)] {
            ensure(xids.contains(&txn.xid) == txn.runs_at(r.lsn), || {
                format!(
                    "running-xacts record at {} lists [{}]: {name} (xid {}, {}..{}) listed {}, \
                     the model says running {}",
                    r.lsn,
                    xids.iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                    txn.xid,
                    txn.first_lsn,
                    txn.commit_lsn,
                    xids.contains(&txn.xid),
                    txn.runs_at(r.lsn)
                )
            })?;
        }
        if held_at.is_none() && r.lsn >= b.end_lsn && a.runs_at(r.lsn) {
            held_at = Some(r.lsn);
        }
    }
    ensure(held_at.is_some(), || {
        format!(
            "no running-xacts record between B's end {} and the confirmed {confirmed}",
            b.end_lsn
        )
    })?;
    Ok(held_at)
}

/// `restart_lsn` after a confirmation past a running-xacts record at `at` logged while A ran:
/// at or below A's first change. The model offers [`running_xacts_restart`]`(at, [A's first
/// change])`, A's first change itself; PostgreSQL offers A's `restart_decoding_lsn`, the snapshot
/// serialized last before A's first change was decoded (`reorderbuffer.c:ReorderBufferTXNByXid`,
/// `snapbuild.c:SnapBuildProcessRunningXacts`), and ignores a candidate not past `restart_lsn`
/// (`logical.c:LogicalIncreaseRestartDecodingForSlot`). So the server's is at most the model's:
/// what is compared is that bound, the one a restart needs to decode A whole.
fn check_restart_held(a: &Txn, at: Lsn, restart_lsn: Lsn) -> Result<(), String> {
    let model = running_xacts_restart(at, [a.first_lsn]);
    ensure(model == a.first_lsn && restart_lsn <= model, || {
        format!(
            "confirmed past a running-xacts record at {at} with A open (first change {}): \
             restart_lsn {restart_lsn}, the model offers {model}",
            a.first_lsn
        )
    })
}

/// START_REPLICATION from B's `end_lsn` once the stream is stopped ([`stream_and_check`]):
/// decoding starts at `max(B's end_lsn, confirmed_flush)` ([`decoding_start`]), so B, whose
/// commit record starts below it, is skipped and A, whose commit record starts at or after it,
/// goes out again whole, as `first` (its parts and their LSNs) did the first time
/// ([`txn_needs_skip`]). Returns where decoding started.
fn restart_from_b_end(
    server: &PgServer,
    session: &mut Session,
    txns: &[Txn],
    (a, b): (&Txn, &Txn),
    first: &SentTxn,
) -> Result<Lsn, String> {
    let slot = slot_now(session)?;
    let start = decoding_start(b.end_lsn, slot.confirmed_flush);
    ensure(
        txn_needs_skip(b, start) && !txn_needs_skip(a, start) && slot.restart_lsn <= a.first_lsn,
        || {
            format!(
                "decoding from {start} (restart_lsn {}): the model skips B {}, sends A {} (first \
                 change {})",
                slot.restart_lsn, b.commit_lsn, a.commit_lsn, a.first_lsn
            )
        },
    )?;
    let streamed = stream_and_check(server, session, txns, b.end_lsn, "")?;
    let again = sent_txns(&streamed.messages)?;
    let lsns = |parts: &SentTxn| -> Vec<(TxnPart, Lsn)> {
        parts.iter().map(|(part, l, ..)| (*part, *l)).collect()
    };
    ensure(again.len() == 1 && lsns(&again[0]) == lsns(first), || {
        format!(
            "from {} (decoding from {start}): sent {:?}, the first time A was {:?}",
            b.end_lsn,
            again.iter().map(lsns).collect::<Vec<_>>(),
            lsns(first)
        )
    })?;
    stop_stream(session, streamed)?;
    Ok(start)
}

/// A transaction on a table outside the publication advances the WAL and sends nothing, not
/// even Begin/Commit (pgoutput 15 skips empty transactions); the keepalive passes it.
pub fn unpublished_txn_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut session = Session::open_pgoutput(server, "walcheck_unpublished")?;
    let txns = vec![
        session.commit_txn(UNPUBLISHED_TABLE, 3, false, true)?,
        session.commit_txn(PUBLISHED_TABLE, 1, true, true)?,
        session.commit_txn(UNPUBLISHED_TABLE, 2, false, true)?,
    ];
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let commits = streamed
        .messages
        .iter()
        .filter(|m| {
            matches!(
                m,
                CopyMessage::XLogData {
                    message: PgOutputMessage::Commit { .. },
                    ..
                }
            )
        })
        .count();
    ensure(commits == 1, || {
        format!("{commits} Commit messages, the model says 1")
    })?;
    let detail = format!(
        "3 transactions, 1 published: sent [{}]; keepalive {:?} past the last unpublished commit \
         ({})",
        joined(streamed.begins.clone()),
        streamed.last_keepalive,
        txns[2].end_lsn
    );
    stop_stream(&mut session, streamed)?;
    pass(&session, server, "unpublished_txn_sends_nothing", detail)
}

/// A transaction in another database advances the WAL and sends nothing, though that database
/// has a table and a publication of the same names: decoding skips it at its commit record. It is
/// recorded with no published rows, which is what the model makes of it.
pub fn other_database_txn_rule(server: &PgServer) -> Result<Outcome, String> {
    const OTHER_DB: &str = "walcheck_other";
    if let Some(skip) = throwaway_only(server, "it creates a database") {
        return Ok(skip);
    }
    let mut admin = server.connect()?;
    admin
        .batch_execute(&format!("CREATE DATABASE {OTHER_DB}"))
        .map_err(|e| format!("create database: {}", pg_message(&e)))?;
    let mut session = Session::open_pgoutput(server, "walcheck_other_db")?;
    session.clean_up_with(format!("DROP DATABASE IF EXISTS {OTHER_DB}"));
    let mut other = server.connect_db(OTHER_DB)?;
    other
        .batch_execute(&format!(
            "CREATE TABLE {PUBLISHED_TABLE} (id int, v text); \
             CREATE PUBLICATION {PUBLICATION} FOR TABLE {PUBLISHED_TABLE}"
        ))
        .map_err(|e| format!("publication in {OTHER_DB}: {}", pg_message(&e)))?;
    let txns = vec![
        session.commit_txn(PUBLISHED_TABLE, 1, true, true)?,
        session.commit_txn_in(Some(&mut other), PUBLISHED_TABLE, 3, false, true)?,
        session.commit_txn(PUBLISHED_TABLE, 2, true, true)?,
    ];
    drop(other);
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let detail = format!(
        "commits at {}, {} (database {OTHER_DB}), {}: sent [{}]",
        txns[0].commit_lsn,
        txns[1].commit_lsn,
        txns[2].commit_lsn,
        joined(streamed.begins.clone())
    );
    stop_stream(&mut session, streamed)?;
    pass(&session, server, "other_database_txn_sends_nothing", detail)
}

/// Sets `wal_writer_delay` to its maximum, 10 s, for as long as `session` lives (ALTER SYSTEM and
/// a reload; reset when the session ends), so that an asynchronous commit stays unflushed for
/// seconds rather than the default 200 ms.
fn slow_walwriter(server: &PgServer, session: &mut Session) -> Result<(), String> {
    session.alter_system(server, &[("wal_writer_delay", "'10s'")])
}

/// The walsender sends only flushed WAL: a transaction committed under `synchronous_commit = off`
/// whose commit record lies past the flush pointer is not streamed, and goes out once a
/// synchronous commit (of a table outside the publication) flushes past it. An attempt in which
/// the walwriter flushed it before the stream went quiet is checked as it came and repeated.
pub fn async_commit_streamed_after_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    const ATTEMPTS: u32 = 6;
    if let Some(skip) = throwaway_only(server, "it sets wal_writer_delay with ALTER SYSTEM") {
        return Ok(skip);
    }
    let mut session = Session::open_pgoutput(server, "walcheck_async_stream")?;
    slow_walwriter(server, &mut session)?;
    let mut txns = vec![session.commit_txn(PUBLISHED_TABLE, 1, true, true)?];
    let mut streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let mut held = None;
    for attempt in 1..=ATTEMPTS {
        let txn = session.commit_txn(PUBLISHED_TABLE, 1, true, false)?;
        txns.push(txn);
        let (_, flush) = stream_more(&mut session, &mut streamed, &txns)?;
        if flush < txn.end_lsn {
            held = Some((attempt, txn, flush));
            break;
        }
    }
    let Some((attempt, held_txn, flush)) = held else {
        return Err(format!(
            "the walwriter flushed each of {ATTEMPTS} asynchronous commits before the stream went \
             quiet"
        ));
    };
    txns.push(session.commit_txn(UNPUBLISHED_TABLE, 1, false, true)?);
    // Flushed now: the asynchronous commit as the WAL has it.
    let txns = session.as_logged(txns)?;
    let txn = txns
        .iter()
        .find(|t| t.xid == held_txn.xid)
        .copied()
        .unwrap_or(held_txn);
    let (sent, flushed) = stream_more(&mut session, &mut streamed, &txns)?;
    ensure(sent == [txn.commit_lsn], || {
        format!(
            "after the flush to {flushed}: sent [{}]",
            joined(sent.clone())
        )
    })?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "async_commit_streamed_after_flush",
        format!(
            "asynchronous commit {}..{} (attempt {attempt}) with the WAL flushed to {flush}: not \
             sent; a synchronous commit flushed to {flushed}: sent [{}]",
            txn.commit_lsn,
            txn.end_lsn,
            joined(sent)
        ),
    )
}

/// Status updates go through [`process_standby_reply_on`]: one field set at a time, recorded.
fn status_update(
    session: &mut Session,
    client: &mut ReplicationClient,
    update: StandbyStatusUpdate,
) -> Result<(Lsn, Lsn), String> {
    let (_, restart_before) = session.slot_lsns()?;
    client.send_status(update.write, update.flush, update.apply, false)?;
    let slot = session.slot_name().to_owned();
    // Wait until the walsender has processed it (pg_stat_replication shows its write field).
    let deadline = Instant::now() + Duration::from_secs(5);
    let (write_seen, flush_seen, apply_seen) = loop {
        let row = session
            .client()
            .query_one(
                "SELECT coalesce(write_lsn::text, '0/0'), coalesce(flush_lsn::text, '0/0'), \
                 coalesce(replay_lsn::text, '0/0') FROM pg_stat_replication \
                 WHERE pid = (SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1)",
                &[&slot],
            )
            .map_err(|e| format!("pg_stat_replication: {}", pg_message(&e)))?;
        let parse = |i: usize| row.get::<_, String>(i).parse::<Lsn>();
        let seen = (parse(0), parse(1), parse(2));
        if let (Ok(w), Ok(f), Ok(a)) = seen {
            if w == update.write && f == update.flush && a == update.apply {
                break (w, f, a);
            }
            if Instant::now() > deadline {
                break (w, f, a);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    ensure(
        (write_seen, flush_seen, apply_seen) == stat_replication(&update),
        || {
            format!(
                "pg_stat_replication shows {write_seen}/{flush_seen}/{apply_seen}, the model says \
                 {:?}",
                stat_replication(&update)
            )
        },
    )?;
    let (cf, restart_after) = session.slot_lsns()?;
    let candidate = (restart_after != restart_before).then_some(restart_after);
    session.record(
        format!(
            "StatusUpdate{{write: {}, flush: {}, apply: {}, candidate_restart: {}}}",
            update.write,
            update.flush,
            update.apply,
            candidate.map_or("none".into(), |l| l.to_string())
        ),
        vec![("confirmed_flush".into(), lsn_var(cf))],
    );
    Ok((cf, restart_after))
}

/// A transaction whose WAL outgrows `wal_buffers` has its backend write the oldest buffers out
/// before it commits, without flushing them (except that finishing a segment fsyncs it).
/// Predicted by [`Wal::append`] from the pointers before the statement and the WAL it inserted:
/// the write pointer at least `page_ceil(insert) − wal_buffers`, the flush pointer at least the
/// last segment boundary that write passed, and below the write pointer; recorded as an
/// `InsertWal` step, which replay checks the same way. The walwriter sleeps 10 s meanwhile
/// (`wal_writer_delay`, reset afterwards), so that what moved the pointers is the backend.
pub fn wal_buffers_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it sets wal_writer_delay with ALTER SYSTEM") {
        return Ok(skip);
    }
    let mut session = Session::open(server, "walcheck_wal_buffers")?;
    session.clean_up_with(format!("DROP TABLE IF EXISTS {UNPUBLISHED_TABLE}"));
    slow_walwriter(server, &mut session)?;
    let (page_bytes, wal_buffers_bytes) = wal_buffers_setting(session.client())?;
    session
        .client()
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {UNPUBLISHED_TABLE} (id int, v text)"
        ))
        .map_err(|e| e.to_string())?;
    // The walwriter takes the new delay when its current 200 ms sleep ends.
    std::thread::sleep(Duration::from_millis(500));
    let before = session.observe()?;
    // About 260 bytes of WAL a row: three times the buffers.
    let rows = (3 * wal_buffers_bytes / 200).max(1_000);
    session
        .client()
        .batch_execute(&format!(
            "BEGIN; INSERT INTO {UNPUBLISHED_TABLE} SELECT g, repeat('v', 200) \
             FROM generate_series(1, {rows}) g"
        ))
        .map_err(|e| format!("insert: {}", pg_message(&e)))?;
    let after = session.pointers()?;
    session
        .client()
        .batch_execute("COMMIT")
        .map_err(|e| e.to_string())?;
    let bytes = after.insert.bytes() - before.insert.bytes();
    session.record(
        format!(
            "InsertWal{{bytes: {bytes}, page_bytes: {page_bytes}, wal_buffers_bytes: \
             {wal_buffers_bytes}}}"
        ),
        Session::pointer_vars(after),
    );
    let sizes = (bytes, page_bytes, wal_buffers_bytes);
    let model = wal_buffers_predicted(before, after, rows, sizes)?;
    pass(
        &session,
        server,
        "wal_buffers_written_unflushed",
        format!(
            "{bytes} bytes of WAL in an open transaction (wal_buffers {wal_buffers_bytes}): \
             insert {}, write {} (the model: at least {}), flush {} (at least {})",
            after.insert, after.write, model.write, after.flush, model.flush
        ),
    )
}

/// The server's WAL page size (`wal_block_size`) and `wal_buffers`, in bytes.
pub(crate) fn wal_buffers_setting(client: &mut postgres::Client) -> Result<(u64, u64), String> {
    let row = client
        .query_one(
            "SELECT current_setting('wal_block_size')::bigint, setting::bigint \
             FROM pg_settings WHERE name = 'wal_buffers'",
            &[],
        )
        .map_err(|e| format!("wal_buffers: {}", pg_message(&e)))?;
    let (page_bytes, wal_buffers_pages): (i64, i64) = (row.get(0), row.get(1));
    let page_bytes = u64::try_from(page_bytes).map_err(|e| e.to_string())?;
    let wal_buffers_bytes =
        u64::try_from(wal_buffers_pages).map_err(|e| e.to_string())? * page_bytes;
    Ok((page_bytes, wal_buffers_bytes))
}

/// The model's WAL after `bytes` of it were inserted from the pointers `before`
/// ([`Wal::append`]), checked against the pointers `after`: more WAL than the buffers, the
/// write pointer at least the model's, the flush pointer at least the model's and below write.
fn wal_buffers_predicted(
    before: Pointers,
    after: Pointers,
    rows: u64,
    (bytes, page_bytes, wal_buffers_bytes): (u64, u64, u64),
) -> Result<Wal, String> {
    let mut model = Wal::at(before.flush);
    (model.write, model.insert, model.replay) = (before.write, before.insert, Lsn::INVALID);
    model.append(bytes, page_bytes, wal_buffers_bytes);
    ensure(bytes > wal_buffers_bytes + page_bytes, || {
        format!("{rows} rows inserted only {bytes} bytes of WAL, within wal_buffers ({wal_buffers_bytes})")
    })?;
    ensure(
        after.write >= model.write && after.flush >= model.flush && after.flush < after.write,
        || {
            format!(
                "after {bytes} bytes of WAL (wal_buffers {wal_buffers_bytes}): insert {}, write {}, \
                 flush {}; the model says write at least {}, flush at least {} and below write",
                after.insert, after.write, after.flush, model.write, model.flush
            )
        },
    )?;
    Ok(model)
}

pub(crate) fn update(write: Lsn, flush: Lsn, apply: Lsn) -> StandbyStatusUpdate {
    StandbyStatusUpdate {
        write,
        flush,
        apply,
        reply_requested: false,
    }
}

/// A streaming session on a fresh pgoutput slot with three transactions, caught up.
fn streaming(server: &PgServer, slot: &str) -> Result<(Session, Vec<Txn>, Streamed), String> {
    let mut session = Session::open_pgoutput(server, slot)?;
    let txns = three_txns(&mut session)?;
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    Ok((session, txns, streamed))
}

/// Predicts a status update on the slot as it is and checks the server's `confirmed_flush`.
pub(crate) fn check_update(
    session: &mut Session,
    client: &mut ReplicationClient,
    sent: StandbyStatusUpdate,
) -> Result<Lsn, String> {
    let mut model = DurableSlot::created(slot_now(session)?);
    let (seen, restart_after) = status_update(session, client, sent)?;
    let candidate = (restart_after != model.slot.restart_lsn).then_some(restart_after);
    process_standby_reply_on(session.model_version(), &mut model, &sent, candidate);
    ensure(seen == model.slot.confirmed_flush, || {
        format!(
            "after write {} flush {} apply {}: confirmed_flush {seen}, the model says {}",
            sent.write, sent.flush, sent.apply, model.slot.confirmed_flush
        )
    })?;
    Ok(seen)
}

/// Only the flush field of a status update reaches the slot; write and apply show in
/// `pg_stat_replication` only.
pub fn status_update_only_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_only_flush")?;
    let write_only = update(txns[2].end_lsn, txns[0].end_lsn, txns[2].end_lsn);
    let a = check_update(&mut session, &mut streamed.client, write_only)?;
    let flush_moves = update(txns[2].end_lsn, txns[1].end_lsn, Lsn::INVALID);
    let b = check_update(&mut session, &mut streamed.client, flush_moves)?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "status_update_only_flush",
        format!(
            "write {} flush {} apply {}: confirmed_flush {a}; then flush {}: {b}",
            write_only.write, write_only.flush, write_only.apply, flush_moves.flush
        ),
    )
}

/// A status update with flush `0/0` leaves the slot alone.
pub fn status_update_zero_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_zero_flush")?;
    let zero = update(txns[2].end_lsn, Lsn::INVALID, txns[2].end_lsn);
    let cf = check_update(&mut session, &mut streamed.client, zero)?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "status_update_zero_flush_ignored",
        format!("write {} flush 0/0: confirmed_flush stays {cf}", zero.write),
    )
}

/// A flush position past the end of WAL is taken as it is (no clamp).
pub fn status_update_no_clamp_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, _, mut streamed) = streaming(server, "walcheck_no_clamp")?;
    let flush = session.pointers()?.flush;
    let past = flush.plus(1 << 20);
    let cf = check_update(&mut session, &mut streamed.client, update(past, past, past))?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "status_update_no_clamp",
        format!("flush {past} with the WAL flushed to {flush}: confirmed_flush {cf}"),
    )
}

/// A flush position below `confirmed_flush` does not move it back.
pub fn status_update_never_backwards_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_backwards")?;
    let high = txns[2].end_lsn;
    let low = txns[0].end_lsn;
    check_update(&mut session, &mut streamed.client, update(high, high, high))?;
    let cf = check_update(&mut session, &mut streamed.client, update(low, low, low))?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "status_update_never_backwards",
        format!(
            "flush {high} then {low}: confirmed_flush {cf} (PostgreSQL {})",
            server.version_num()
        ),
    )
}

/// After a confirmation that found no candidate `restart_lsn`, an immediate stop loses it.
pub fn status_update_lost_in_crash_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it stops the server with -m immediate") {
        return Ok(skip);
    }
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_confirm_crash")?;
    let mut model = DurableSlot::created(slot_now(&mut session)?);
    let target = txns[2].end_lsn;
    let sent = update(target, target, target);
    let (_, restart_after) = status_update(&mut session, &mut streamed.client, sent)?;
    let candidate = (restart_after != model.slot.restart_lsn).then_some(restart_after);
    process_standby_reply_on(session.model_version(), &mut model, &sent, candidate);
    stop_stream(&mut session, streamed)?;
    let after = session.crash_restart(server)?;
    model.crash_restart();
    ensure(after == model.slot.confirmed_flush, || {
        format!(
            "confirmed {target}, crash: confirmed_flush {after}, the model says {} (candidate {candidate:?})",
            model.slot.confirmed_flush
        )
    })?;
    pass(
        &session,
        server,
        "status_update_lost_in_crash",
        format!(
            "confirmed {target} (candidate restart_lsn {candidate:?}), immediate stop: {after}"
        ),
    )
}

/// In 15 such a confirmation does not even mark the slot dirty: a CHECKPOINT and a clean
/// (`-m fast`) restart lose it too.
pub fn status_update_not_saved_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it restarts the server") {
        return Ok(skip);
    }
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_confirm_clean")?;
    let mut model = DurableSlot::created(slot_now(&mut session)?);
    let target = txns[2].end_lsn;
    let sent = update(target, target, target);
    let (_, restart_after) = status_update(&mut session, &mut streamed.client, sent)?;
    let candidate = (restart_after != model.slot.restart_lsn).then_some(restart_after);
    process_standby_reply_on(session.model_version(), &mut model, &sent, candidate);
    stop_stream(&mut session, streamed)?;
    session.checkpoint()?;
    model.checkpoint();
    let after = session.clean_restart(server)?;
    model.clean_restart_on(session.model_version());
    ensure(after == model.slot.confirmed_flush, || {
        format!(
            "confirmed {target}, CHECKPOINT, clean restart: confirmed_flush {after}, the model says \
             {} (candidate {candidate:?})",
            model.slot.confirmed_flush
        )
    })?;
    pass(
        &session,
        server,
        "status_update_not_saved",
        format!(
            "confirmed {target} (candidate restart_lsn {candidate:?}), CHECKPOINT, fast stop and \
             start: {after}"
        ),
    )
}

/// After an advance whose decoding moved `restart_lsn` and saved the slot, the slot is still
/// dirty: `slotfuncs.c:pg_logical_replication_slot_advance` (15) ends with
/// `ReplicationSlotMarkDirty()` after `LogicalConfirmReceivedLocation` saved it. So a later
/// walsender confirmation, which on its own lives in memory only (rule
/// `status_update_not_saved`), is saved by the next CHECKPOINT and survives an immediate stop.
pub fn advance_leaves_slot_dirty_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it stops the server with -m immediate") {
        return Ok(skip);
    }
    let mut session = Session::open_pgoutput(server, "walcheck_advance_dirty")?;
    // A running-xacts record (each CHECKPOINT logs one) between restart_lsn and the target, so
    // that the advance's decoding moves restart_lsn and saves the slot.
    let mut txns = three_txns(&mut session)?;
    session.checkpoint()?;
    txns.extend(three_txns(&mut session)?);
    let mut model = DurableSlot::created(slot_now(&mut session)?);
    let target = session.observe()?.flush;
    let advanced = session.advance(target)?;
    let moveto = advanced
        .result
        .map_err(|(code, msg)| format!("advance to {target}: {code} {msg}"))?;
    let (_, restart) = session.slot_lsns()?;
    ensure(advanced.restart_moved, || {
        format!("the advance to {moveto} did not move restart_lsn: no running-xacts record met")
    })?;
    model
        .slot_advance(target, moveto, Some(restart))
        .map_err(|e| format!("the model refuses the advance: {e}"))?;
    let what = format!("advance to {moveto} (restart_lsn to {restart}, saved)");
    let (confirmed, candidate, after) =
        confirm_checkpoint_crash(server, &mut session, &mut model, &mut txns, &what)?;
    pass(
        &session,
        server,
        "advance_leaves_slot_dirty",
        format!(
            "advance to {moveto} moved restart_lsn to {restart} and saved; confirmed {confirmed} (candidate restart_lsn {candidate:?}), CHECKPOINT, immediate stop: {after}"
        ),
    )
}

/// After a call that moved `restart_lsn` and saved the slot — and, PostgreSQL says, left it
/// dirty: three more transactions streamed and confirmed (memory only on its own), a CHECKPOINT
/// and an immediate stop, each predicted by `model` ([`process_standby_reply_on`],
/// [`DurableSlot::checkpoint`]). The server must agree; returns what was confirmed, the
/// candidate `restart_lsn` the confirmation met, and `confirmed_flush` after the stop.
fn confirm_checkpoint_crash(
    server: &PgServer,
    session: &mut Session,
    model: &mut DurableSlot,
    txns: &mut Vec<Txn>,
    what: &str,
) -> Result<(Lsn, Option<Lsn>, Lsn), String> {
    txns.extend(three_txns(session)?);
    let mut streamed = stream_and_check(server, session, txns, Lsn::INVALID, "")?;
    let confirmed = txns[txns.len() - 1].end_lsn;
    let sent = update(confirmed, confirmed, confirmed);
    let (_, restart_after) = status_update(session, &mut streamed.client, sent)?;
    let candidate = (restart_after != model.slot.restart_lsn).then_some(restart_after);
    process_standby_reply_on(session.model_version(), model, &sent, candidate);
    stop_stream(session, streamed)?;
    session.checkpoint()?;
    model.checkpoint();
    let after = session.crash_restart(server)?;
    model.crash_restart();
    ensure(after == model.slot.confirmed_flush, || {
        format!(
            "{what}, confirmed {confirmed} (candidate {candidate:?}), CHECKPOINT, immediate \
             stop: confirmed_flush {after}, the model says {}",
            model.slot.confirmed_flush
        )
    })?;
    Ok((confirmed, candidate, after))
}

/// The same for `pg_logical_slot_get_changes` (here its binary twin, on a pgoutput slot): a
/// `get` whose decoding reached a candidate `restart_lsn` saved the slot and still leaves it
/// dirty (`logicalfuncs.c:pg_logical_slot_get_changes_guts`, 15: `ReplicationSlotMarkDirty()`
/// after `LogicalConfirmReceivedLocation`), so the next CHECKPOINT saves a later walsender
/// confirmation. The SQL call is not in the trace's vocabulary for pgoutput, so the rule holds
/// the server to the model's functions without a replayed trace.
pub fn get_changes_leaves_slot_dirty_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it stops the server with -m immediate") {
        return Ok(skip);
    }
    let mut session = Session::open_pgoutput(server, "walcheck_get_dirty")?;
    let mut txns = three_txns(&mut session)?;
    session.checkpoint()?;
    txns.extend(three_txns(&mut session)?);
    let mut model = DurableSlot::created(slot_now(&mut session)?);
    let end_of_wal = session.observe()?.flush;
    let slot_name = session.slot_name().to_owned();
    let rows: i64 = session
        .client()
        .query_one(
            &format!(
                "SELECT count(*) FROM pg_logical_slot_get_binary_changes($1, NULL, NULL, \
                 'proto_version', '1', 'publication_names', '{PUBLICATION}')"
            ),
            &[&slot_name],
        )
        .map_err(|e| format!("pg_logical_slot_get_binary_changes: {}", pg_message(&e)))?
        .get(0);
    let (cf, restart) = session.slot_lsns()?;
    ensure(restart != model.slot.restart_lsn, || {
        format!("the get (to {cf}) did not move restart_lsn: no running-xacts record met")
    })?;
    get_changes(
        &mut model,
        &txns,
        end_of_wal,
        request(None, None, true),
        Some(restart),
        |t| t.published_rows,
    );
    ensure(model.slot.confirmed_flush == cf, || {
        format!(
            "get: confirmed_flush {cf}, the model says {}",
            model.slot.confirmed_flush
        )
    })?;
    let what = format!("get to {cf} ({rows} messages; restart_lsn to {restart}, saved)");
    let (confirmed, candidate, after) =
        confirm_checkpoint_crash(server, &mut session, &mut model, &mut txns, &what)?;
    Ok(Outcome::Pass {
        detail: format!(
            "get to {cf} moved restart_lsn to {restart} and saved; confirmed {confirmed} \
             (candidate restart_lsn {candidate:?}), CHECKPOINT, immediate stop: {after}"
        ),
        trace: None,
    })
}

/// A CHECKPOINT logs a running-xacts record, which the walsender decodes into a candidate
/// `restart_lsn` (the record's start, found with `pg_waldump`: [`candidate_restart`]). A status
/// update whose flush falls short of it changes memory only; one that reaches it moves
/// `restart_lsn` there and saves the slot at once, so an immediate stop keeps it.
pub fn status_update_saved_with_candidate_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(
        server,
        "it reads the WAL and stops the server with -m immediate",
    ) {
        return Ok(skip);
    }
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_confirm_saved")?;
    session.checkpoint()?;
    let (_, flush) = stream_more(&mut session, &mut streamed, &txns)?;
    let slot = slot_now(&mut session)?;
    let candidate = candidate_after(server, &slot, flush)?;
    let mut model = DurableSlot::created(slot);
    // A confirmation of all but the last transaction: short of the record, which follows it.
    let short = txns[1].end_lsn;
    ensure(short < candidate, || {
        format!("the candidate {candidate} is not after the second commit's end {short}")
    })?;
    let client = &mut streamed.client;
    let (short_how, _, short_restart) =
        confirm_with_candidate(&mut session, client, &mut model, (short, candidate))?;
    let (how, cf, restart) =
        confirm_with_candidate(&mut session, client, &mut model, (flush, candidate))?;
    ensure(
        short_how == Persistence::MemoryOnly && how == Persistence::Saved,
        || format!("the model says {short_how:?} then {how:?}"),
    )?;
    stop_stream(&mut session, streamed)?;
    let after = session.crash_restart(server)?;
    model.crash_restart();
    ensure(after == model.slot.confirmed_flush, || {
        format!(
            "confirmed {flush} past the candidate {candidate}, crash: confirmed_flush {after}, the \
             model says {}",
            model.slot.confirmed_flush
        )
    })?;
    pass(
        &session,
        server,
        "status_update_saved_with_candidate",
        format!(
            "CHECKPOINT's running-xacts record at {candidate}: flush {short} left restart_lsn at \
             {short_restart}; flush {flush} moved it to {restart}, confirmed_flush {cf}, kept by an \
             immediate stop ({after})"
        ),
    )
}

/// The candidate `restart_lsn` a confirmation of `flush` finds for `slot`: the first
/// running-xacts record without running transactions after its `confirmed_flush`
/// ([`candidate_in_wal`]).
fn candidate_after(server: &PgServer, slot: &Slot, flush: Lsn) -> Result<Lsn, String> {
    let (records, candidate) = candidate_in_wal(server, slot, flush)?;
    candidate.ok_or_else(|| {
        format!(
            "no running-xacts record without running transactions after confirmed_flush {} up to \
             {flush}: {records:?}",
            slot.confirmed_flush
        )
    })
}

/// The WAL from `slot`'s `restart_lsn` up to `to`, as `pg_waldump` shows it, and the candidate
/// `restart_lsn` a confirmation finds in it ([`candidate_restart`]), if any.
fn candidate_in_wal(
    server: &PgServer,
    slot: &Slot,
    to: Lsn,
) -> Result<(Vec<waldump::WalRecord>, Option<Lsn>), String> {
    let records = waldump::parse(&server.waldump(slot.restart_lsn, to)?);
    let running: Vec<Lsn> = records
        .iter()
        .filter(|r| r.is_idle_running_xacts())
        .map(|r| r.lsn)
        .collect();
    let candidate = candidate_restart(&running, slot);
    Ok((records, candidate))
}

/// A standby status update confirming `at` on `client`'s stream, the slot's candidate
/// `restart_lsn` at `candidate`, against the model's ([`process_standby_reply_on`]): the slot's
/// `confirmed_flush` and `restart_lsn` after it. Returns how the model kept the confirmation,
/// and the two.
fn confirm_with_candidate(
    session: &mut Session,
    client: &mut ReplicationClient,
    model: &mut DurableSlot,
    (at, candidate): (Lsn, Lsn),
) -> Result<(Persistence, Lsn, Lsn), String> {
    let sent = update(at, at, at);
    let (cf, restart) = status_update(session, client, sent)?;
    let how = process_standby_reply_on(session.model_version(), model, &sent, Some(candidate));
    ensure(
        cf == model.slot.confirmed_flush && restart == model.slot.restart_lsn,
        || {
            format!(
                "flush {at} with the candidate restart_lsn at {candidate}: confirmed_flush {cf}, \
                 restart_lsn {restart}; the model says {}, {}",
                model.slot.confirmed_flush, model.slot.restart_lsn
            )
        },
    )?;
    Ok((how, cf, restart))
}

/// Keepalives report `sentPtr`: `confirmed_flush` before reading, then the end of the records
/// read — below a `confirmed_flush` confirmed past the end of WAL (OLake #862's regression).
pub fn keepalive_below_confirmed_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_keepalive_below")?;
    let flush = session.pointers()?.flush;
    let past = flush.plus(1 << 16);
    check_update(&mut session, &mut streamed.client, update(past, past, past))?;
    stop_stream(&mut session, streamed)?;
    let streamed = stream_and_check(server, &mut session, &txns, Lsn::INVALID, "")?;
    let detail = format!(
        "confirmed_flush {past} past the flushed WAL {flush}: keepalives {:?} then {:?}",
        streamed.first_keepalive, streamed.last_keepalive
    );
    stop_stream(&mut session, streamed)?;
    pass(&session, server, "keepalive_below_confirmed_flush", detail)
}

/// Runs `statement` on `client`, naming the step `what` in an error.
fn run_sql(client: &mut postgres::Client, what: &str, statement: &str) -> Result<(), String> {
    client
        .batch_execute(statement)
        .map_err(|e| format!("{what}: {}", pg_message(&e)))
}

/// The first keepalive past `first_lsn` within `wait`, and every keepalive position seen; an
/// error if a transaction is sent meanwhile.
fn keepalive_past(
    client: &mut ReplicationClient,
    first_lsn: Lsn,
    wait: Duration,
) -> Result<(Option<Lsn>, Vec<Lsn>), String> {
    let deadline = Instant::now() + wait;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        match client.recv(Duration::from_millis(100))? {
            Some(CopyMessage::Keepalive { wal_end, .. }) => {
                seen.push(wal_end);
                if wal_end > first_lsn {
                    return Ok((Some(wal_end), seen));
                }
            }
            Some(CopyMessage::XLogData { message, .. }) => {
                return Err(format!(
                    "the stream sent {message:?} before the open transaction committed"
                ));
            }
            None => {}
        }
    }
    Ok((None, seen))
}

/// Two LSNs a message carries.
type LsnPair = (Lsn, Lsn);

/// The next transaction's Begin (its `dataStart`, its `final_lsn`) and Commit (`commit_lsn`,
/// `end_lsn`) on the stream, within `wait`.
fn begin_and_commit(
    client: &mut ReplicationClient,
    wait: Duration,
) -> Result<(LsnPair, LsnPair), String> {
    let deadline = Instant::now() + wait;
    let mut begin = None;
    let mut commit = None;
    while commit.is_none() && Instant::now() < deadline {
        if let Some(CopyMessage::XLogData {
            wal_start, message, ..
        }) = client.recv(Duration::from_millis(100))?
        {
            match message {
                PgOutputMessage::Begin { final_lsn, .. } => begin = Some((wal_start, final_lsn)),
                PgOutputMessage::Commit {
                    commit_lsn,
                    end_lsn,
                    ..
                } => commit = Some((commit_lsn, end_lsn)),
                _ => {}
            }
        }
    }
    let begin = begin.ok_or("the committed transaction's Begin never came")?;
    let commit = commit.ok_or("the committed transaction's Commit never came")?;
    Ok((begin, commit))
}

/// The model's reading of a keepalive at `keepalive` inside `txn`, sent before its Begin under
/// `first_change`: the walsender's position after a change record lies in
/// `first_lsn..=commit_lsn` ([`Txn::change_record_ends`]), and a keepalive sent there carries it
/// ([`Walsender::read_within`]).
fn check_keepalive_inside(
    txn: &Txn,
    sender: &mut Walsender,
    keepalive: Lsn,
    (first_change, final_lsn): LsnPair,
) -> Result<(), String> {
    let Txn {
        first_lsn,
        commit_lsn,
        end_lsn,
        ..
    } = *txn;
    ensure(final_lsn == commit_lsn && txn.is_ordered(), || {
        format!(
            "Begin final_lsn {final_lsn}, Commit {commit_lsn}..{end_lsn}, first_lsn {first_lsn}"
        )
    })?;
    ensure(
        first_lsn <= first_change && first_change < keepalive,
        || {
            format!(
                "Begin under {first_change} (first_lsn {first_lsn}), not below the earlier \
                 keepalive {keepalive}"
            )
        },
    )?;
    let ends = txn.change_record_ends(false);
    sender.read_within(keepalive);
    let predicted = sender.keepalive(false).wal_end;
    ensure(
        ends.iter().all(|e| first_lsn < *e && *e <= commit_lsn)
            && first_lsn < keepalive
            && keepalive <= commit_lsn
            && predicted == keepalive,
        || {
            format!(
                "keepalive {keepalive} inside {first_lsn}..{commit_lsn}: the model's change record \
                 ends [{}], its keepalive there {predicted}",
                joined(ends.clone())
            )
        },
    )
}

/// A keepalive inside a transaction not yet sent: a transaction left open after its rows,
/// another session's synchronous commit flushing its change records, and the walsender reads
/// past them (`sentPtr = EndRecPtr` after every record) and reports a position inside it while it
/// waits for WAL; once the transaction commits, its Begin goes out under its first change, below
/// that keepalive ([`Txn::change_record_ends`], [`Walsender::read_within`]).
pub fn keepalive_inside_unsent_transaction_rule(server: &PgServer) -> Result<Outcome, String> {
    const ROWS: u32 = 3;
    const WAIT: Duration = Duration::from_secs(10);
    let (mut session, _, mut streamed) = streaming(server, "walcheck_keepalive_inside")?;
    let mut open = server.connect()?;
    // Its change records end at `changes_end`; the other session's commit follows them, its own
    // commit record comes after that ([`Wal::begin_txn`]).
    let open_txn = session.begin_txn(&mut open, PUBLISHED_TABLE, ROWS, true)?;
    let first_lsn = open_txn.first_lsn;
    run_sql(
        &mut server.connect()?,
        "the flushing commit",
        &format!(
            "BEGIN; SET LOCAL synchronous_commit = on; \
             INSERT INTO {UNPUBLISHED_TABLE} SELECT 1, 'flush'; COMMIT"
        ),
    )?;
    let flushed = session.pointers()?.flush;
    let (inside, seen) = keepalive_past(&mut streamed.client, first_lsn, WAIT)?;
    let Some(keepalive) = inside else {
        run_sql(&mut open, "rollback", "ROLLBACK")?;
        stop_stream(&mut session, streamed)?;
        return Ok(Outcome::Skip {
            reason: format!(
                "no keepalive past the open transaction's first change {first_lsn} within {} s \
                 (flush {flushed}; keepalives [{}])",
                WAIT.as_secs(),
                joined(seen)
            ),
        });
    };
    run_sql(&mut open, "commit the open transaction", "COMMIT")?;
    let (begin, (commit_lsn, end_lsn)) = begin_and_commit(&mut streamed.client, WAIT)?;
    let txn = Txn {
        xid: open_txn.xid,
        first_lsn,
        changes_end: open_txn.changes_end,
        commit_lsn,
        end_lsn,
        published_rows: ROWS,
        mode: walcheck_model::pg::CommitMode::Sync,
    };
    check_keepalive_inside(&txn, &mut streamed.sender, keepalive, begin)?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "keepalive_inside_unsent_transaction",
        format!(
            "open transaction from {first_lsn}, a commit elsewhere flushed to {flushed}: keepalive \
             {keepalive}; then Begin under {}, commit {commit_lsn}..{end_lsn}",
            begin.0
        ),
    )
}

/// With `wal_sender_timeout = 2s`, an idle stream gets a keepalive requesting a reply about a
/// second after the client's last message.
pub fn keepalive_reply_requested_rule(server: &PgServer) -> Result<Outcome, String> {
    const TIMEOUT_MS: u64 = 2_000;
    let mut session = Session::open_pgoutput(server, "walcheck_reply")?;
    let txns = three_txns(&mut session)?;
    let mut streamed = stream_and_check(
        server,
        &mut session,
        &txns,
        Lsn::INVALID,
        &format!("-c wal_sender_timeout={TIMEOUT_MS}ms"),
    )?;
    let flush = session.pointers()?.flush;
    streamed.client.send_status(flush, flush, flush, false)?;
    let replied = Instant::now();
    let deadline = replied + Duration::from_millis(3 * TIMEOUT_MS);
    let mut asked_after_ms = None;
    while Instant::now() < deadline && asked_after_ms.is_none() {
        if let Some(CopyMessage::Keepalive {
            reply_requested: true,
            ..
        }) = streamed.client.recv(Duration::from_millis(100))?
        {
            asked_after_ms = Some(replied.elapsed().as_millis() as u64);
        }
    }
    let asked = asked_after_ms.ok_or("no keepalive requested a reply")?;
    ensure(
        keepalive_due(asked, TIMEOUT_MS) && !keepalive_due(asked.saturating_sub(300), TIMEOUT_MS),
        || {
            format!(
                "reply requested after {asked} ms; the model says at {} ms",
                TIMEOUT_MS / 2
            )
        },
    )?;
    stop_stream(&mut session, streamed)?;
    pass(
        &session,
        server,
        "keepalive_reply_requested",
        format!(
            "wal_sender_timeout {TIMEOUT_MS} ms: reply requested {asked} ms after the last update"
        ),
    )
}

/// A clean stop reaches a caught-up stream whose client has reported nothing: the walsender
/// sends a keepalive requesting a reply, carrying `sentPtr`; once the client has confirmed that,
/// the stream ends and the stop completes ([`Walsender::at_shutdown`]). The confirmation changed
/// memory only, so in 15 the restarted slot is back where it was saved, unless a running-xacts
/// record the walsender decoded gave it a candidate `restart_lsn` the reply reached (then the
/// reply saved it: [`process_standby_reply_on`]).
pub fn shutdown_keepalive_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = shutdown_skip(server) {
        return Ok(skip);
    }
    let (mut session, txns, mut streamed) = streaming(server, "walcheck_shutdown")?;
    // WAL other backends logged since the stream went quiet (the bgwriter's running-xacts
    // record) is read on now, so that the model's walsender stands where the server's does.
    stream_more(&mut session, &mut streamed, &txns)?;
    let slot = slot_now(&mut session)?;
    let mut model = DurableSlot::created(slot);
    let mut sender = streamed.sender;
    let (asked, ended) = stop_replying(server, &mut streamed.client)?;
    let wal_end = asked.ok_or("the stopping walsender sent no keepalive requesting a reply")?;
    // The WAL is read with the server started again (pg_walinspect, where the binaries have no
    // pg_waldump, needs it running): a start after a clean stop logs nothing before its end.
    server.start()?;
    read_to_shutdown_checkpoint(server, &mut sender, &txns)?;
    let predicted = sender.at_shutdown(Lsn::INVALID, Lsn::INVALID);
    let reply = update(wal_end, wal_end, wal_end);
    let after_reply = sender.at_shutdown(reply.write, reply.flush);
    // The bgwriter logs a running-xacts record every 15 s of WAL activity
    // (bgwriter.c:LOG_SNAPSHOT_INTERVAL_MS): one the walsender decoded before the stop gives the
    // slot a candidate restart_lsn, and a reply reaching it saves the slot. Whether one landed
    // is read from the WAL (up to the shutdown checkpoint, complete).
    let (_, candidate) = candidate_in_wal(server, &slot, wal_end)?;
    let candidate = candidate.filter(|c| *c < wal_end);
    session.record(
        format!(
            "StatusUpdate{{write: {wal_end}, flush: {wal_end}, apply: {wal_end}, \
             candidate_restart: {}}}",
            candidate.map_or("none".into(), |l| l.to_string())
        ),
        Vec::new(),
    );
    process_standby_reply_on(session.model_version(), &mut model, &reply, candidate);
    let keepalive = Keepalive {
        wal_end,
        reply_requested: true,
    };
    ensure(
        predicted == Some(keepalive) && ended == after_reply.is_none(),
        || {
            format!(
                "at shutdown: keepalive requesting a reply at {wal_end}, stream ended after the \
                 reply: {ended}; the model says {predicted:?}, then {after_reply:?}"
            )
        },
    )?;
    let restarted = session.start_after_clean_stop(server)?;
    model.clean_restart_on(session.model_version());
    ensure(restarted == model.slot.confirmed_flush, || {
        format!(
            "confirmed {wal_end} at shutdown: after the start confirmed_flush {restarted}, the \
             model says {}",
            model.slot.confirmed_flush
        )
    })?;
    pass(
        &session,
        server,
        "shutdown_keepalive_requests_reply",
        format!(
            "{} transactions streamed, nothing reported: at the fast stop a keepalive requesting a \
             reply at {wal_end}; replied, the stream ended; after the start confirmed_flush \
             {restarted} (candidate restart_lsn from a running-xacts record: {candidate:?})",
            txns.len()
        ),
    )
}

/// Why [`shutdown_keepalive_rule`] does not run on `server`, if it does not: it stops the
/// server, and PostgreSQL 17+ saves a moved `confirmed_flush` at a shutdown checkpoint.
fn shutdown_skip(server: &PgServer) -> Option<Outcome> {
    throwaway_only(server, "it stops the server")
}

/// Stops `server` with `pg_ctl stop -m fast` while reading `client`'s stream, for 20 s at most:
/// the first keepalive requesting a reply is answered, confirming its `wal_end`. Returns that
/// `wal_end`, if one came, and whether the stream ended (CopyDone, or the connection closing
/// with the server).
fn stop_replying(
    server: &PgServer,
    client: &mut ReplicationClient,
) -> Result<(Option<Lsn>, bool), String> {
    const STOP_MS_MAX: u64 = 20_000;
    std::thread::scope(|scope| -> Result<_, String> {
        let stopping = scope.spawn(|| server.stop("fast"));
        let deadline = Instant::now() + Duration::from_millis(STOP_MS_MAX);
        let mut asked = None;
        let mut ended = false;
        while Instant::now() < deadline && !ended {
            match client.recv(Duration::from_millis(100)) {
                Ok(Some(CopyMessage::Keepalive {
                    wal_end,
                    reply_requested: true,
                })) if asked.is_none() => {
                    asked = Some(wal_end);
                    client.send_status(wal_end, wal_end, wal_end, false)?;
                }
                Ok(_) => {}
                // CopyDone, or the connection closing with the server.
                Err(_) => ended = true,
            }
        }
        stopping.join().map_err(|_| "pg_ctl stop panicked")??;
        Ok((asked, ended))
    })
}

/// The model's walsender `sender` reads on to the stopped `server`'s shutdown checkpoint. A
/// stopping walsender first reads every record flushed before the shutdown checkpoint
/// (walsender.c:WalSndDone waits for WalSndCaughtUp; xlog.c:ShutdownXLOG writes the checkpoint
/// only after WalSndWaitStopping). Records other backends logged after the stream was last read
/// (the bgwriter's running-xacts record) are read from the WAL up to that checkpoint, and the
/// model's walsender reads them too.
fn read_to_shutdown_checkpoint(
    server: &PgServer,
    sender: &mut Walsender,
    txns: &[Txn],
) -> Result<(), String> {
    let checkpoint = server
        .wal_reader()
        .ok_or("the shutdown rule needs a throwaway server")?
        .latest_checkpoint()?;
    if checkpoint > sender.read_to {
        // Nothing between them (pg_waldump finds no record to start from) reads as no record.
        let later = server
            .waldump(sender.read_to, checkpoint)
            .map(|out| waldump::parse(&out))
            .unwrap_or_default();
        if let Some(last) = later.last() {
            sender.send_logical(txns, last.aligned_end());
        }
    }
    Ok(())
}

/// SQL decoding: one call recorded as `SqlDecode{…}` after an `Observe` (its flush pointer is the
/// call's `end_of_wal`, the server idle), predicted with [`get_changes`].
fn sql_decode(
    session: &mut Session,
    txns: &[Txn],
    request: SqlDecode,
) -> Result<(Vec<Lsn>, u32, Lsn), String> {
    let p = session.observe()?;
    let model = DurableSlot::created(slot_now(session)?);
    let (_, restart_before) = session.slot_lsns()?;
    let (function, ends, rows) = sql_changes(session, request)?;
    let sent: Vec<Lsn> = ends
        .iter()
        .map(|end| {
            txns.iter()
                .find(|t| t.end_lsn == *end)
                .map_or(*end, |t| t.commit_lsn)
        })
        .collect();
    let (cf, restart_after) = session.slot_lsns()?;
    let candidate = (restart_after != restart_before).then_some(restart_after);
    // The call reads the flush pointer once (`end_of_wal = GetFlushRecPtr()`), somewhere between
    // the read before it and the read after it: the walwriter may flush in between. The model
    // is held to the prediction at either end, the earlier first; when it is the later, the
    // trace records that read (an `Observe` step), so that its replay predicts the same.
    let flush_after = session.pointers()?.flush;
    let predict = |end_of_wal: Lsn| {
        let mut slot = model;
        let got = get_changes(
            &mut slot,
            txns,
            end_of_wal,
            request,
            candidate,
            test_decoding_rows,
        );
        (got, slot)
    };
    let matches = |(got, slot): &(SqlChanges, DurableSlot)| {
        let predicted: Vec<Lsn> = got.txns.iter().map(|t| t.commit_lsn).collect();
        predicted == sent && got.rows as usize == rows && slot.slot.confirmed_flush == cf
    };
    let before = predict(p.flush);
    let (got, model) = if matches(&before) || flush_after == p.flush {
        before
    } else {
        predict(session.observe()?.flush)
    };
    let decoded = (&sent[..], rows, cf);
    record_sql_decode(session, request, candidate, decoded);
    check_sql_decode(function, request, decoded, (&got, &model))?;
    Ok((sent, rows as u32, cf))
}

/// `pg_logical_slot_get_changes` on `session`'s slot as `request` asks, or
/// `pg_logical_slot_peek_changes` when it does not confirm: the function called, the `end_lsn`
/// of each transaction it returned (its COMMIT row's `lsn`), and how many rows it returned.
fn sql_changes(
    session: &mut Session,
    request: SqlDecode,
) -> Result<(&'static str, Vec<Lsn>, usize), String> {
    let function = if request.confirm {
        "pg_logical_slot_get_changes"
    } else {
        "pg_logical_slot_peek_changes"
    };
    let upto_lsn = request.upto_lsn.map(|l| l.to_string());
    let upto_nchanges = request.upto_nchanges.map(|n| n as i32);
    let slot = session.slot_name().to_owned();
    let rows = session
        .client()
        .query(
            &format!("SELECT lsn::text, data FROM {function}($1, $2::text::pg_lsn, $3)"),
            &[&slot, &upto_lsn, &upto_nchanges],
        )
        .map_err(|e| format!("{function}: {}", pg_message(&e)))?;
    // test_decoding's BEGIN rows carry no LSN of the commit; the COMMIT rows' lsn is end_lsn.
    let ends: Vec<Lsn> = rows
        .iter()
        .filter(|r| r.get::<_, String>(1).starts_with("COMMIT"))
        .map(|r| r.get::<_, String>(0).parse::<Lsn>())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    Ok((function, ends, rows.len()))
}

/// Records a SQL decoding call as `SqlDecode{…}` with what it `decoded`: the commits of the
/// transactions it returned, its rows, and the slot's `confirmed_flush` after it.
fn record_sql_decode(
    session: &mut Session,
    request: SqlDecode,
    candidate: Option<Lsn>,
    (sent, rows, cf): (&[Lsn], usize, Lsn),
) {
    session.record(
        format!(
            "SqlDecode{{upto_lsn: {}, upto_nchanges: {}, confirm: {}, candidate_restart: {}}}",
            request.upto_lsn.map_or("none".into(), |l| l.to_string()),
            request
                .upto_nchanges
                .map_or("none".into(), |n| n.to_string()),
            request.confirm,
            candidate.map_or("none".into(), |l| l.to_string())
        ),
        vec![
            ("sent".into(), Var::Text(joined(sent.iter().copied()))),
            ("rows".into(), Var::Int(rows as u64)),
            ("confirmed_flush".into(), lsn_var(cf)),
        ],
    );
}

/// What a SQL decoding call (`function`) `decoded` against what the model got from it and the
/// slot it left ([`get_changes`]).
fn check_sql_decode(
    function: &str,
    request: SqlDecode,
    (sent, rows, cf): (&[Lsn], usize, Lsn),
    (got, model): (&SqlChanges, &DurableSlot),
) -> Result<(), String> {
    let predicted: Vec<Lsn> = got.txns.iter().map(|t| t.commit_lsn).collect();
    ensure(
        predicted == sent && got.rows as usize == rows && model.slot.confirmed_flush == cf,
        || {
            format!(
                "{function}(upto_lsn {:?}, upto_nchanges {:?}): transactions [{}], {} rows, \
                 confirmed_flush {cf}; the model says [{}], {} rows, {}",
                request.upto_lsn,
                request.upto_nchanges,
                joined(sent.iter().copied()),
                rows,
                joined(predicted.clone()),
                got.rows,
                model.slot.confirmed_flush
            )
        },
    )
}

/// A test_decoding slot created after its table (the CREATE TABLE would be decoded as an empty
/// transaction otherwise) and three transactions.
fn sql_session(server: &PgServer, slot: &str) -> Result<(Session, Vec<Txn>), String> {
    server
        .connect()?
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {PUBLISHED_TABLE} (id int, v text)"
        ))
        .map_err(|e| e.to_string())?;
    let mut session = Session::open(server, slot)?;
    session.clean_up_with(format!("DROP TABLE IF EXISTS {PUBLISHED_TABLE}"));
    let txns = three_txns(&mut session)?;
    Ok((session, txns))
}

fn request(upto_lsn: Option<Lsn>, upto_nchanges: Option<u32>, confirm: bool) -> SqlDecode {
    SqlDecode {
        upto_lsn,
        upto_nchanges,
        confirm,
    }
}

/// `pg_logical_slot_peek_changes` returns every committed transaction and confirms nothing.
pub fn sql_peek_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns) = sql_session(server, "walcheck_sql_peek")?;
    let (sent, rows, cf) = sql_decode(&mut session, &txns, request(None, None, false))?;
    pass(
        &session,
        server,
        "sql_peek_confirms_nothing",
        format!(
            "peek: [{}], {rows} rows; confirmed_flush stays {cf}",
            joined(sent)
        ),
    )
}

/// `pg_logical_slot_get_changes` confirms to the end of the last record read (the flush pointer
/// at the call) and marks the slot dirty: lost in a crash, kept by a CHECKPOINT or a clean stop.
pub fn sql_get_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it restarts the server") {
        return Ok(skip);
    }
    let (mut session, mut txns) = sql_session(server, "walcheck_sql_get")?;
    let created = session.confirmed_flush()?;
    let (_, _, first) = sql_decode(&mut session, &txns, request(None, None, true))?;
    let crashed = session.crash_restart(server)?;
    ensure(crashed == created, || {
        format!("get confirmed {first}; after a crash {crashed}, the model says {created}")
    })?;
    // After the crash the slot decodes the same transactions again, and recovery's checkpoint
    // record follows them.
    txns.push(session.commit_txn(PUBLISHED_TABLE, 1, true, true)?);
    let (_, _, second) = sql_decode(&mut session, &txns, request(None, None, true))?;
    let clean = session.clean_restart(server)?;
    ensure(clean == second, || {
        format!("get confirmed {second}; after a clean restart {clean}")
    })?;
    txns.push(session.commit_txn(PUBLISHED_TABLE, 1, true, true)?);
    let (_, _, third) = sql_decode(&mut session, &txns, request(None, None, true))?;
    session.checkpoint()?;
    let after = session.crash_restart(server)?;
    ensure(after == third, || {
        format!("get confirmed {third}, CHECKPOINT, crash: {after}")
    })?;
    pass(
        &session,
        server,
        "sql_get_confirms_and_marks_dirty",
        format!(
            "get -> {first}, crash -> {crashed}; get -> {second}, clean restart -> {clean}; get -> \
             {third}, CHECKPOINT, crash -> {after}"
        ),
    )
}

/// `upto_lsn` at a commit record's start stops before it; one byte later the commit record
/// crosses it and its transaction is returned, and `get` confirms to its end.
pub fn sql_upto_lsn_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns) = sql_session(server, "walcheck_sql_upto_lsn")?;
    let at = txns[1].commit_lsn;
    let (before, _, _) = sql_decode(&mut session, &txns, request(Some(at), None, false))?;
    let (crossing, _, cf) = sql_decode(&mut session, &txns, request(Some(at.plus(1)), None, true))?;
    pass(
        &session,
        server,
        "sql_upto_lsn_includes_crossing_record",
        format!(
            "upto {at}: [{}]; upto {}: [{}], confirmed_flush {cf}",
            joined(before),
            at.plus(1),
            joined(crossing)
        ),
    )
}

/// SQL decoding reads only up to the flush pointer at the call: `get` neither returns an
/// asynchronous commit past it nor confirms beyond it; once a synchronous commit has flushed past
/// it, the next `get` returns both. An asynchronous commit the walwriter flushed before the call
/// (at once, or between the pointer read and the `get`: the flush pointer read after the call
/// says which) is decoded with the others, and another is tried.
pub fn sql_bounded_by_flush_rule(server: &PgServer) -> Result<Outcome, String> {
    const ATTEMPTS: u32 = 6;
    if let Some(skip) = throwaway_only(server, "it sets wal_writer_delay with ALTER SYSTEM") {
        return Ok(skip);
    }
    let (mut session, mut txns) = sql_session(server, "walcheck_sql_flush")?;
    slow_walwriter(server, &mut session)?;
    let mut held = None;
    for attempt in 1..=ATTEMPTS {
        let txn = session.commit_txn(PUBLISHED_TABLE, 1, true, false)?;
        txns.push(txn);
        if session.pointers()?.flush >= txn.end_lsn {
            continue;
        }
        let (before, _, cf) = sql_decode(&mut session, &txns, request(None, None, true))?;
        if !before.contains(&txn.commit_lsn) {
            held = Some((attempt, txn, before, cf));
            break;
        }
        // Returned: right only if it was flushed by the call, which a flush pointer still
        // behind its end after the call rules out (the pointer never moves back).
        let flushed = session.pointers()?.flush >= txn.end_lsn;
        ensure(flushed, || {
            format!("get returned the unflushed commit at {}", txn.commit_lsn)
        })?;
    }
    let (attempt, txn, before, cf) = held.ok_or_else(|| {
        format!("the walwriter flushed each of {ATTEMPTS} asynchronous commits before the get")
    })?;
    txns.push(session.commit_txn(PUBLISHED_TABLE, 1, true, true)?);
    let txns = session.as_logged(txns)?;
    let txn = txns
        .iter()
        .find(|t| t.xid == txn.xid)
        .copied()
        .unwrap_or(txn);
    let (after, _, cf_after) = sql_decode(&mut session, &txns, request(None, None, true))?;
    pass(
        &session,
        server,
        "sql_decoding_bounded_by_flush",
        format!(
            "asynchronous commit {}..{} (attempt {attempt}) unflushed: get [{}], confirmed_flush \
             {cf}; after a synchronous commit: get [{}], confirmed_flush {cf_after}",
            txn.commit_lsn,
            txn.end_lsn,
            joined(before),
            joined(after)
        ),
    )
}

/// `upto_nchanges` is checked after whole transactions: 1 returns all rows of the first.
pub fn sql_upto_nchanges_rule(server: &PgServer) -> Result<Outcome, String> {
    let (mut session, txns) = sql_session(server, "walcheck_sql_nchanges")?;
    let (sent, rows, cf) = sql_decode(&mut session, &txns, request(None, Some(1), true))?;
    pass(
        &session,
        server,
        "sql_upto_nchanges_whole_txns",
        format!(
            "upto_nchanges 1: [{}], {rows} rows, confirmed_flush {cf}",
            joined(sent)
        ),
    )
}

/// A new slot: `restart_lsn` at the insert pointer before, `confirmed_flush` at the end of the
/// running-xacts record it logs and flushes, with an asynchronous commit before it. Records other
/// backends logged between the read and the creation are found with `pg_waldump` and move the
/// insert pointer the model starts from.
pub fn create_slot_rule(server: &PgServer) -> Result<Outcome, String> {
    let mut client = server.connect()?;
    client
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {UNPUBLISHED_TABLE} (id int, v text); \
             SET synchronous_commit = off; INSERT INTO {UNPUBLISHED_TABLE} VALUES (1, 'a')"
        ))
        .map_err(|e| e.to_string())?;
    let (flush, write, insert) = read_pointers(&mut client)?;
    let mut wal = Wal::at(flush);
    wal.write = write;
    wal.insert = insert;
    let mut session = Session::open(server, "walcheck_create")?;
    session.clean_up_with(format!("DROP TABLE IF EXISTS {UNPUBLISHED_TABLE}"));
    let (cf, restart) = session.slot_lsns()?;
    let (flush_after, _, _) = read_pointers(&mut client)?;
    // Another backend (the bgwriter's running-xacts record every 15 s, autovacuum) may log
    // between the read and the creation: on a throwaway server the WAL says whether records fill
    // the gap exactly, and the insert pointer the creation saw is then the end of the last.
    let mut background = 0;
    if restart > insert && server.is_throwaway() {
        if let Some(records) = records_filling(server, insert, restart)? {
            background = records;
            wal.insert = restart;
        }
    }
    let bytes = cf.bytes().saturating_sub(restart.bytes());
    let predicted = create_logical_slot(&mut wal, bytes);
    ensure(
        predicted.restart_lsn == restart && predicted.confirmed_flush == cf && flush_after >= cf,
        || {
            format!(
                "insert {insert} (flush {flush}) before; slot restart_lsn {restart}, confirmed_flush \
                 {cf}, flush {flush_after}; the model says {predicted:?}, flush {}",
                wal.flush
            )
        },
    )?;
    pass(
        &session,
        server,
        "create_slot_at_consistent_point",
        format!(
            "insert {insert} (flush {flush}, an async commit pending; {background} records of \
             other backends after it): restart_lsn {restart}, confirmed_flush {cf} ({bytes}-byte \
             running-xacts record), flush now {flush_after}"
        ),
    )
}

/// The WAL pointers `(flush, write, insert)`, read in that order on `client`.
fn read_pointers(client: &mut postgres::Client) -> Result<(Lsn, Lsn, Lsn), String> {
    let row = client
        .query_one(
            "SELECT pg_current_wal_flush_lsn()::text, pg_current_wal_lsn()::text, \
             pg_current_wal_insert_lsn()::text",
            &[],
        )
        .map_err(|e| e.to_string())?;
    let p = |i: usize| {
        row.get::<_, String>(i)
            .parse::<Lsn>()
            .map_err(|e| e.to_string())
    };
    Ok((p(0)?, p(1)?, p(2)?))
}

/// How many records `pg_waldump` shows from `from` to `to` on `server`, when they fill that
/// stretch exactly (the last ends at `to`); `None` otherwise.
fn records_filling(server: &PgServer, from: Lsn, to: Lsn) -> Result<Option<usize>, String> {
    let records = waldump::parse(&server.waldump(from, to)?);
    let end = records.last().map(waldump::WalRecord::aligned_end);
    Ok((end == Some(to)).then_some(records.len()))
}

fn oldest_segment(client: &mut postgres::Client) -> Result<u64, String> {
    let name: String = client
        .query_one(
            "SELECT min(name) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'",
            &[],
        )
        .map_err(|e| format!("pg_ls_waldir: {}", pg_message(&e)))?
        .get(0);
    let log = u64::from_str_radix(&name[8..16], 16).map_err(|e| e.to_string())?;
    let seg = u64::from_str_radix(&name[16..24], 16).map_err(|e| e.to_string())?;
    Ok(log * 0x100 + seg)
}

pub(crate) fn redo_lsn(client: &mut postgres::Client) -> Result<Lsn, String> {
    let text: String = client
        .query_one("SELECT redo_lsn::text FROM pg_control_checkpoint()", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    text.parse().map_err(|e| pg_message(&e))
}

/// After a CHECKPOINT the oldest WAL segment kept is that of the oldest slot's `restart_lsn`;
/// once the slot is dropped, that of the redo pointer. Predicted with a model server holding both
/// slots ([`Server::oldest_kept_segment`], [`Server::drop_slot`]).
pub fn wal_retention_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it switches WAL segments") {
        return Ok(skip);
    }
    let mut client = server.connect()?;
    let mut old = Session::open(server, "walcheck_retain_old")?;
    for _ in 0..3 {
        client
            .batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {UNPUBLISHED_TABLE} (id int, v text); \
                 INSERT INTO {UNPUBLISHED_TABLE} VALUES (1, 'a'); SELECT pg_switch_wal()"
            ))
            .map_err(|e| e.to_string())?;
    }
    let mut new = Session::open(server, "walcheck_retain_new")?;
    new.clean_up_with(format!("DROP TABLE IF EXISTS {UNPUBLISHED_TABLE}"));
    let mut model = Server::at_rest(Role::Primary, new.pointers()?.flush);
    model.slot = slot_now(&mut new)?;
    model.other_slots[0] = Some(slot_now(&mut old)?);
    client
        .batch_execute("CHECKPOINT")
        .map_err(|e| e.to_string())?;
    let redo = redo_lsn(&mut client)?;
    let kept = oldest_segment(&mut client)?;
    let predicted = model.oldest_kept_segment(redo);
    ensure(kept == predicted, || {
        format!("two slots, CHECKPOINT: oldest segment {kept:X}, the model says {predicted:X}")
    })?;
    drop(old);
    server.forget_slot("walcheck_retain_old");
    model.drop_slot(0);
    client
        .batch_execute("CHECKPOINT")
        .map_err(|e| e.to_string())?;
    let redo2 = redo_lsn(&mut client)?;
    let kept2 = oldest_segment(&mut client)?;
    let predicted2 = model.oldest_kept_segment(redo2);
    ensure(kept2 == predicted2, || {
        format!("oldest slot dropped, CHECKPOINT: oldest segment {kept2:X}, the model says {predicted2:X}")
    })?;
    pass(
        &new,
        server,
        "wal_retention_min_restart_lsn",
        format!(
            "oldest segment {kept:X} with the old slot (redo {redo}); {kept2:X} after dropping it"
        ),
    )
}

/// `pg_last_wal_replay_lsn()` on a primary: NULL after a clean start, the end of the WAL
/// replayed after crash recovery, frozen there, and NULL again after a clean restart. Predicted
/// by the systems' own server model ([`Server::crash_restart`], [`Wal::clean_restart`],
/// [`Server::last_wal_replay_lsn`]); each answer is recorded with the pointers (an `Observe`
/// step carrying `last_wal_replay_lsn`), so the observed trace replays it.
pub fn replay_lsn_on_primary_rule(server: &PgServer) -> Result<Outcome, String> {
    if let Some(skip) = throwaway_only(server, "it restarts the server") {
        return Ok(skip);
    }
    let mut session = Session::open(server, "walcheck_replay_lsn")?;
    session.clean_up_with(format!("DROP TABLE IF EXISTS {UNPUBLISHED_TABLE}"));
    // Earlier rules may have crashed this server: start from a clean restart.
    session.clean_restart(server)?;
    let mut model = Server::at_rest(Role::Primary, session.pointers()?.flush);
    let fresh = observe_replay_lsn(&mut session)?;
    ensure(fresh == model.last_wal_replay_lsn(), || {
        format!("after a clean start: {fresh:?}, the model says NULL")
    })?;
    let p = session.observe()?;
    model.wal = Wal {
        insert: p.insert,
        write: p.write,
        flush: p.flush,
        replay: model.wal.replay,
    };
    session.crash_restart(server)?;
    model.crash_restart();
    let recovered = observe_replay_lsn(&mut session)?;
    session
        .client()
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {UNPUBLISHED_TABLE} (id int, v text); \
             INSERT INTO {UNPUBLISHED_TABLE} VALUES (1, 'a')"
        ))
        .map_err(|e| e.to_string())?;
    let later = observe_replay_lsn(&mut session)?;
    ensure(
        recovered == model.last_wal_replay_lsn() && later == recovered,
        || {
            format!(
                "after crash recovery {recovered:?}, after more WAL {later:?}; the model says {:?}",
                model.last_wal_replay_lsn()
            )
        },
    )?;
    session.clean_restart(server)?;
    model.wal.clean_restart();
    let clean = observe_replay_lsn(&mut session)?;
    ensure(clean == model.last_wal_replay_lsn(), || {
        format!("after a clean restart {clean:?}, the model says NULL")
    })?;
    pass(
        &session,
        server,
        "replay_lsn_on_primary",
        format!(
            "clean start: NULL; crash at write {}: {recovered:?}, unchanged after more WAL; clean restart: NULL",
            p.write
        ),
    )
}

/// Reads `pg_last_wal_replay_lsn()` (`None` for NULL) and records it, with the pointers read just
/// before, as an `Observe` step.
fn observe_replay_lsn(session: &mut Session) -> Result<Option<Lsn>, String> {
    let p = session.pointers()?;
    let text: Option<String> = session
        .client()
        .query_one("SELECT pg_last_wal_replay_lsn()::text", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    let replay = text
        .as_deref()
        .map(|t| t.parse::<Lsn>().map_err(|e| pg_message(&e)))
        .transpose()?;
    let mut vars = Session::pointer_vars(p);
    vars.push((
        "last_wal_replay_lsn".into(),
        Var::Text(replay.map_or_else(|| "NULL".to_owned(), |l| l.to_string())),
    ));
    session.record("Observe".into(), vars);
    Ok(replay)
}
