//! A small synchronous client of PostgreSQL's logical replication protocol, whose messages the
//! conformance rules control field by field: a `replication=database` connection (trust
//! authentication only), simple queries (`IDENTIFY_SYSTEM`, `START_REPLICATION`), and the CopyBoth
//! stream framed by hand: XLogData ('w') and keepalive ('k') in, standby status updates ('r') out.
//!
//! The wire format is PostgreSQL 15's "Streaming Replication Protocol" and "Logical Streaming
//! Replication Protocol" (pgoutput, `proto_version '1'`); messages are built and parsed with the
//! `postgres-protocol` crate, the replication sub-messages inside CopyData here.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::{backend, frontend};
use walcheck_model::Lsn;

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;
/// How long a connection or a query may take, in seconds.
const IO_TIMEOUT_S: u64 = 10;

/// An error the server raised: `(sqlstate, message)`, or a client-side failure with an empty
/// sqlstate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerError {
    pub sqlstate: String,
    pub message: String,
}

impl ServerError {
    fn client(message: impl Into<String>) -> ServerError {
        ServerError {
            sqlstate: String::new(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.sqlstate.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{} (SQLSTATE {})", self.message, self.sqlstate)
        }
    }
}

impl From<ServerError> for String {
    fn from(e: ServerError) -> String {
        e.to_string()
    }
}

/// What `IDENTIFY_SYSTEM` answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentifySystem {
    pub systemid: String,
    pub timeline: u32,
    pub xlogpos: Lsn,
    pub dbname: Option<String>,
}

/// A pgoutput message, parsed as far as the rules need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgOutputMessage {
    /// 'B': Int64 final_lsn, Int64 commit timestamp, Int32 xid.
    Begin { final_lsn: Lsn, xid: u32 },
    /// 'C': Int8 flags, Int64 commit_lsn, Int64 end_lsn, Int64 commit timestamp.
    Commit { commit_lsn: Lsn, end_lsn: Lsn },
    /// 'R': Int32 relation id, then namespace and name.
    Relation { id: u32, name: String },
    /// 'I': Int32 relation id, then the tuple.
    Insert { relation: u32 },
    /// Any other message, by its tag.
    Other(u8),
}

/// One message of the CopyBoth stream from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CopyMessage {
    /// 'w': Int64 dataStart, Int64 walEnd, Int64 sendTime, then the plugin's bytes.
    XLogData {
        wal_start: Lsn,
        wal_end: Lsn,
        message: PgOutputMessage,
    },
    /// 'k': Int64 walEnd, Int64 sendTime, Byte1 reply requested.
    Keepalive { wal_end: Lsn, reply_requested: bool },
}

/// Parses pgoutput's bytes (protocol version 1).
pub fn parse_pgoutput(mut data: &[u8]) -> Result<PgOutputMessage, String> {
    let short = || format!("pgoutput message of {} bytes is short", data.len());
    if data.is_empty() {
        return Err(short());
    }
    let tag = data.get_u8();
    let need = |n: usize, d: &[u8]| {
        if d.len() < n {
            Err(short())
        } else {
            Ok(())
        }
    };
    Ok(match tag {
        b'B' => {
            need(20, data)?;
            let final_lsn = Lsn(data.get_u64());
            let _commit_time = data.get_i64();
            PgOutputMessage::Begin {
                final_lsn,
                xid: data.get_u32(),
            }
        }
        b'C' => {
            need(25, data)?;
            let _flags = data.get_u8();
            PgOutputMessage::Commit {
                commit_lsn: Lsn(data.get_u64()),
                end_lsn: Lsn(data.get_u64()),
            }
        }
        b'R' => {
            need(4, data)?;
            let id = data.get_u32();
            let mut strings = data.split(|b| *b == 0);
            let namespace = String::from_utf8_lossy(strings.next().unwrap_or_default());
            let name = String::from_utf8_lossy(strings.next().unwrap_or_default());
            PgOutputMessage::Relation {
                id,
                name: format!("{namespace}.{name}"),
            }
        }
        b'I' => {
            need(4, data)?;
            PgOutputMessage::Insert {
                relation: data.get_u32(),
            }
        }
        other => PgOutputMessage::Other(other),
    })
}

/// Parses the replication message inside a CopyData.
pub fn parse_copy_data(mut data: &[u8]) -> Result<CopyMessage, String> {
    let len = data.len();
    let short = || format!("replication message of {len} bytes is short");
    match data.first() {
        Some(b'w') if len >= 25 => {
            data.advance(1);
            let wal_start = Lsn(data.get_u64());
            let wal_end = Lsn(data.get_u64());
            let _send_time = data.get_i64();
            Ok(CopyMessage::XLogData {
                wal_start,
                wal_end,
                message: parse_pgoutput(data)?,
            })
        }
        Some(b'k') if len >= 18 => {
            data.advance(1);
            let wal_end = Lsn(data.get_u64());
            let _send_time = data.get_i64();
            Ok(CopyMessage::Keepalive {
                wal_end,
                reply_requested: data.get_u8() != 0,
            })
        }
        Some(b'w' | b'k') => Err(short()),
        Some(other) => Err(format!("unknown replication message {:?}", *other as char)),
        None => Err(short()),
    }
}

/// The bytes of a standby status update ('r'): Int64 write, Int64 flush, Int64 apply, Int64
/// client time, Byte1 reply requested.
pub fn status_update_bytes(write: Lsn, flush: Lsn, apply: Lsn, reply_requested: bool) -> Vec<u8> {
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let mut out = Vec::with_capacity(34);
    out.put_u8(b'r');
    out.put_u64(write.bytes());
    out.put_u64(flush.bytes());
    out.put_u64(apply.bytes());
    out.put_i64(now_us - PG_EPOCH_OFFSET_US);
    out.put_u8(u8::from(reply_requested));
    out
}

/// The `application_name` of this process's sessions on a `--pg-url` server, so that an
/// interrupt can end exactly them (a slot in use by a session cannot be dropped).
pub(crate) fn application_name() -> String {
    format!("walcheck-{}", std::process::id())
}

/// Where and as whom to connect.
#[derive(Clone, Debug)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub dbname: String,
}

/// One replication connection.
pub struct ReplicationClient {
    stream: TcpStream,
    read: BytesMut,
    copy_both: bool,
}

fn io_err(what: &str) -> impl Fn(std::io::Error) -> ServerError + '_ {
    move |e| ServerError::client(format!("{what}: {e}"))
}

fn error_of(body: &backend::ErrorResponseBody) -> ServerError {
    let mut error = ServerError::client("");
    let mut fields = body.fields();
    while let Ok(Some(field)) = fields.next() {
        match field.type_() {
            b'C' => error.sqlstate = String::from_utf8_lossy(field.value_bytes()).into_owned(),
            b'M' => error.message = String::from_utf8_lossy(field.value_bytes()).into_owned(),
            _ => {}
        }
    }
    error
}

impl ReplicationClient {
    /// Connects with `replication=database` and the given `-c` options (e.g.
    /// `wal_sender_timeout=2s`); only trust authentication is supported.
    pub fn connect(target: &Target, options: &str) -> Result<ReplicationClient, ServerError> {
        if crate::interrupt::interrupted() {
            // The interrupt handler is dropping this run's slots: open no walsender.
            crate::interrupt::exit_interrupted();
        }
        let stream =
            TcpStream::connect((target.host.as_str(), target.port)).map_err(io_err("connect"))?;
        stream.set_nodelay(true).map_err(io_err("nodelay"))?;
        let mut client = ReplicationClient {
            stream,
            read: BytesMut::new(),
            copy_both: false,
        };
        // This process's name, so that an interrupt ends its walsenders too and can drop the
        // slots they hold.
        let application_name = application_name();
        let mut params = vec![
            ("user", target.user.as_str()),
            ("database", target.dbname.as_str()),
            ("replication", "database"),
            ("application_name", application_name.as_str()),
        ];
        if !options.is_empty() {
            params.push(("options", options));
        }
        let mut out = BytesMut::new();
        frontend::startup_message(params, &mut out).map_err(io_err("startup"))?;
        client.send(&out)?;
        loop {
            match client.next_message(Duration::from_secs(IO_TIMEOUT_S))? {
                Some(backend::Message::AuthenticationOk) => {}
                Some(backend::Message::ReadyForQuery(_)) => return Ok(client),
                Some(backend::Message::ErrorResponse(body)) => return Err(error_of(&body)),
                Some(
                    backend::Message::ParameterStatus(_)
                    | backend::Message::BackendKeyData(_)
                    | backend::Message::NoticeResponse(_),
                ) => {}
                Some(_) => {
                    return Err(ServerError::client(
                        "the server asks for a password: only trust authentication is supported",
                    ))
                }
                None => return Err(ServerError::client("no answer to the startup message")),
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), ServerError> {
        self.stream.write_all(bytes).map_err(io_err("send"))
    }

    /// The next backend message, or `None` when `timeout` passes first. CopyBothResponse ('W'),
    /// which `postgres-protocol` 0.6 does not know, is framed here: it sets `copy_both` and reads
    /// as `CopyDone` would not (it is returned as `NoData`).
    fn next_message(&mut self, timeout: Duration) -> Result<Option<backend::Message>, ServerError> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.read.len() >= 5 && self.read[0] == b'W' {
                let len =
                    u32::from_be_bytes([self.read[1], self.read[2], self.read[3], self.read[4]]);
                let frame = 1 + len as usize;
                if self.read.len() >= frame {
                    self.read.advance(frame);
                    self.copy_both = true;
                    return Ok(Some(backend::Message::NoData));
                }
            } else if let Some(message) =
                backend::Message::parse(&mut self.read).map_err(io_err("parse"))?
            {
                return Ok(Some(message));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream
                .set_read_timeout(Some(left))
                .map_err(io_err("timeout"))?;
            let mut chunk = [0u8; 16 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(ServerError::client("the server closed the connection")),
                Ok(n) => self.read.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) => return Err(io_err("read")(e)),
            }
        }
    }

    /// A simple query: its rows as text (`None` for NULL), or the server's error.
    pub fn simple_query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, ServerError> {
        let mut out = BytesMut::new();
        frontend::query(sql, &mut out).map_err(io_err("query"))?;
        self.send(&out)?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            match self.next_message(Duration::from_secs(IO_TIMEOUT_S))? {
                Some(backend::Message::DataRow(body)) => {
                    let buffer = body.buffer();
                    let mut ranges = body.ranges();
                    let mut row = Vec::new();
                    while let Some(range) = ranges.next().map_err(io_err("data row"))? {
                        row.push(range.map(|r| String::from_utf8_lossy(&buffer[r]).into_owned()));
                    }
                    rows.push(row);
                }
                Some(backend::Message::ErrorResponse(body)) => error = Some(error_of(&body)),
                Some(backend::Message::ReadyForQuery(_)) => {
                    return error.map_or(Ok(rows), Err);
                }
                Some(backend::Message::NoData) if self.copy_both => return Ok(rows),
                Some(_) => {}
                None => return Err(ServerError::client(format!("no answer to {sql:?}"))),
            }
        }
    }

    /// `IDENTIFY_SYSTEM`.
    pub fn identify_system(&mut self) -> Result<IdentifySystem, ServerError> {
        let rows = self.simple_query("IDENTIFY_SYSTEM")?;
        let row = rows
            .first()
            .filter(|r| r.len() >= 4)
            .ok_or_else(|| ServerError::client("IDENTIFY_SYSTEM: no row of four columns"))?;
        let text = |i: usize| row[i].clone().unwrap_or_default();
        Ok(IdentifySystem {
            systemid: text(0),
            timeline: text(1).parse().unwrap_or(0),
            xlogpos: text(2)
                .parse()
                .map_err(|e| ServerError::client(format!("xlogpos: {e}")))?,
            dbname: row[3].clone(),
        })
    }

    /// `START_REPLICATION SLOT slot LOGICAL start (proto_version '1', publication_names 'pub')`;
    /// `Ok` once the server answered CopyBothResponse.
    pub fn start_replication(
        &mut self,
        slot: &str,
        start: Lsn,
        publication: &str,
    ) -> Result<(), ServerError> {
        let sql = format!(
            "START_REPLICATION SLOT {slot} LOGICAL {start} (proto_version '1', \
             publication_names '{publication}')"
        );
        self.simple_query(&sql)?;
        if self.copy_both {
            Ok(())
        } else {
            Err(ServerError::client(format!("{sql}: no CopyBothResponse")))
        }
    }

    /// The next replication message within `timeout`, or `None`.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<CopyMessage>, ServerError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_message(left)? {
                Some(backend::Message::CopyData(body)) => {
                    return parse_copy_data(body.data())
                        .map(Some)
                        .map_err(ServerError::client)
                }
                Some(backend::Message::ErrorResponse(body)) => return Err(error_of(&body)),
                Some(backend::Message::CopyDone) => {
                    return Err(ServerError::client("the server ended the stream"))
                }
                Some(_) => {}
                None => return Ok(None),
            }
        }
    }

    /// Every replication message until `quiet` passes without one (at most `max` messages).
    pub fn recv_until_quiet(
        &mut self,
        quiet: Duration,
        max: usize,
    ) -> Result<Vec<CopyMessage>, ServerError> {
        let mut out = Vec::new();
        while out.len() < max {
            match self.recv(quiet)? {
                Some(message) => out.push(message),
                None => break,
            }
        }
        Ok(out)
    }

    /// A standby status update with these three positions.
    pub fn send_status(
        &mut self,
        write: Lsn,
        flush: Lsn,
        apply: Lsn,
        reply_requested: bool,
    ) -> Result<(), ServerError> {
        let mut out = BytesMut::new();
        frontend::CopyData::new(&status_update_bytes(write, flush, apply, reply_requested)[..])
            .map_err(io_err("copy data"))?
            .write(&mut out);
        self.send(&out)
    }

    /// Ends the stream (CopyDone) and the connection (Terminate).
    pub fn close(mut self) -> Result<(), ServerError> {
        let mut out = BytesMut::new();
        if self.copy_both {
            frontend::copy_done(&mut out);
        }
        frontend::terminate(&mut out);
        self.send(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalive_and_xlogdata_parse() {
        let mut k = vec![b'k'];
        k.put_u64(0x153_E240);
        k.put_i64(0);
        k.put_u8(1);
        assert_eq!(
            parse_copy_data(&k),
            Ok(CopyMessage::Keepalive {
                wal_end: Lsn(0x153_E240),
                reply_requested: true
            })
        );
        let mut w = vec![b'w'];
        w.put_u64(0x10);
        w.put_u64(0x10);
        w.put_i64(0);
        w.put_u8(b'C');
        w.put_u8(0);
        w.put_u64(0x08);
        w.put_u64(0x10);
        w.put_i64(0);
        assert_eq!(
            parse_copy_data(&w),
            Ok(CopyMessage::XLogData {
                wal_start: Lsn(0x10),
                wal_end: Lsn(0x10),
                message: PgOutputMessage::Commit {
                    commit_lsn: Lsn(0x08),
                    end_lsn: Lsn(0x10)
                }
            })
        );
        assert!(parse_copy_data(&w[..20]).is_err());
    }

    #[test]
    fn a_status_update_carries_three_separate_positions() {
        let bytes = status_update_bytes(Lsn(1), Lsn(2), Lsn(3), false);
        assert_eq!(bytes.len(), 34);
        assert_eq!(bytes[0], b'r');
        assert_eq!(&bytes[1..9], &1u64.to_be_bytes());
        assert_eq!(&bytes[9..17], &2u64.to_be_bytes());
        assert_eq!(&bytes[17..25], &3u64.to_be_bytes());
        assert_eq!(bytes[33], 0);
    }
}
