//! One client session on a throwaway server that records what it observes as an observed trace
//! ([`walcheck_sim::observed`]).

use std::collections::BTreeMap;

use walcheck_model::Lsn;
use walcheck_properties::system::Var;
use walcheck_traces::{Header, Step, Trace, SCHEMA};

use crate::pg_error::{db_error, pg_message};
use crate::server::{PgServer, WalReader};
use crate::waldump;
use walcheck_sim::observed;
use walcheck_sim::reference::bootstrap::SlotApi;

/// The WAL pointers, read in the order flush, write, insert so that they are ordered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pointers {
    pub flush: Lsn,
    pub write: Lsn,
    pub insert: Lsn,
}

/// What `pg_replication_slot_advance` answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advanced {
    pub target: Lsn,
    /// `Ok(end_lsn)` or `Err((sqlstate, message))`.
    pub result: Result<Lsn, (String, String)>,
    pub confirmed_flush: Lsn,
    pub restart_moved: bool,
    pub before: Pointers,
    pub after: Pointers,
}

/// A session with one logical slot (`test_decoding`), recording every observation.
pub struct Session {
    client: postgres::Client,
    slot: String,
    steps: Vec<Step>,
    last: Option<Pointers>,
    /// Statements that undo what the session created besides its slot (run on drop).
    cleanup: Vec<String>,
    /// The server's WAL records (`pg_waldump`, else `pg_walinspect`), on a throwaway server:
    /// where commit records really are.
    wal: Option<WalReader>,
    /// Commits recorded with the insert pointers around their COMMIT, not yet found in the WAL
    /// (an asynchronous commit until it is flushed): `(xid, first_lsn)`.
    unlogged: Vec<(u32, Lsn)>,
    /// Commit records found in the WAL: xid -> `(commit_lsn, end_lsn)`.
    logged: BTreeMap<u32, (Lsn, Lsn)>,
    /// The server's `server_version_num`, for the trace of a session dropped by a failed rule.
    version_num: u32,
}

/// The publication the protocol rules stream, its table, and a table outside it.
pub const PUBLICATION: &str = "walcheck_p";
pub const PUBLISHED_TABLE: &str = "walcheck_pub";
pub const UNPUBLISHED_TABLE: &str = "walcheck_unpub";

fn lsn_text(l: Lsn) -> Var {
    Var::Text(l.to_string())
}

pub(crate) fn parse_lsn(text: &str) -> Result<Lsn, String> {
    text.parse()
        .map_err(|e| format!("server LSN {text:?}: {}", pg_message(&e)))
}

/// SQLSTATE `query_canceled`: what `statement_timeout` raises.
pub const QUERY_CANCELED: &str = "57014";

/// What a rule's `Err` starts with when the server could not be set up for it (a slot, a
/// publication or a table that could not be made): not a failed prediction.
pub const SETUP_ERROR: &str = "setup: ";

impl Session {
    /// Connects and creates the slot `slot` (saved at once by PostgreSQL).
    pub fn open(server: &PgServer, slot: &str) -> Result<Session, String> {
        Session::open_with(server, slot, "test_decoding", false)
    }

    /// Connects, creates the publication [`PUBLICATION`] of [`PUBLISHED_TABLE`] (and the table
    /// [`UNPUBLISHED_TABLE`] outside it), then the pgoutput slot `slot`; the first state records
    /// the slot's `restart_lsn` too.
    pub fn open_pgoutput(server: &PgServer, slot: &str) -> Result<Session, String> {
        Session::open_with(server, slot, "pgoutput", true)
    }

    fn open_with(
        server: &PgServer,
        slot: &str,
        plugin: &str,
        publication: bool,
    ) -> Result<Session, String> {
        let mut client = server.connect()?;
        let mut cleanup = Vec::new();
        if publication {
            client
                .batch_execute(&format!(
                    "CREATE TABLE {PUBLISHED_TABLE} (id int, v text); \
                     CREATE TABLE {UNPUBLISHED_TABLE} (id int, v text); \
                     CREATE PUBLICATION {PUBLICATION} FOR TABLE {PUBLISHED_TABLE}"
                ))
                .map_err(|e| {
                    format!(
                        "{}create publication {PUBLICATION}: {}",
                        SETUP_ERROR,
                        pg_message(&e)
                    )
                })?;
            cleanup.push(format!(
                "DROP PUBLICATION IF EXISTS {PUBLICATION}; \
                 DROP TABLE IF EXISTS {PUBLISHED_TABLE}, {UNPUBLISHED_TABLE}"
            ));
        }
        client
            .execute(
                "SELECT pg_create_logical_replication_slot($1, $2)",
                &[&slot, &plugin],
            )
            .map_err(|e| format!("{}create slot {slot}: {}", SETUP_ERROR, pg_message(&e)))?;
        server.note_slot(slot);
        let mut session = Session {
            client,
            slot: slot.to_owned(),
            steps: Vec::new(),
            last: None,
            cleanup,
            wal: server.wal_reader(),
            unlogged: Vec::new(),
            logged: BTreeMap::new(),
            version_num: server.version_num(),
        };
        let p = session.pointers()?;
        let (confirmed_flush, restart_lsn) = session.slot_row()?;
        let mut vars = vec![
            ("insert".into(), lsn_text(p.insert)),
            ("write".into(), lsn_text(p.write)),
            ("flush".into(), lsn_text(p.flush)),
            ("confirmed_flush".into(), lsn_text(confirmed_flush)),
        ];
        if publication {
            vars.push(("restart_lsn".into(), lsn_text(restart_lsn)));
        }
        session.steps.push(Step {
            action: None,
            vars,
            time_us: None,
        });
        session.last = Some(p);
        Ok(session)
    }

    /// Runs `statement` when the session is dropped (after its slot is dropped).
    pub fn clean_up_with(&mut self, statement: String) {
        if !self.cleanup.contains(&statement) {
            self.cleanup.push(statement);
        }
    }

    /// Sets each of `settings` (`(name, value)`) with `ALTER SYSTEM SET` and a reload, through a
    /// connection of its own, for as long as the session lives: each is reset, and the
    /// configuration reloaded, when it is dropped.
    pub fn alter_system(
        &mut self,
        server: &PgServer,
        settings: &[(&str, &str)],
    ) -> Result<(), String> {
        let statements = settings
            .iter()
            .map(|(name, value)| format!("ALTER SYSTEM SET {name} = {value}"));
        let mut client = server.connect()?;
        for statement in statements.chain(["SELECT pg_reload_conf()".to_owned()]) {
            client
                .batch_execute(&statement)
                .map_err(|e| format!("{statement}: {}", pg_message(&e)))?;
        }
        for (name, _) in settings {
            self.clean_up_with(format!("ALTER SYSTEM RESET {name}"));
        }
        self.clean_up_with("SELECT pg_reload_conf()".into());
        Ok(())
    }

    /// The slot's name.
    pub fn slot_name(&self) -> &str {
        &self.slot
    }

    /// Records one step of the observed trace as it is.
    pub fn record(&mut self, action: String, vars: Vec<(String, Var)>) {
        self.steps.push(Step {
            action: Some(action),
            vars,
            time_us: None,
        });
    }

    /// `(confirmed_flush_lsn, restart_lsn)` from `pg_replication_slots`, not recorded.
    pub fn slot_lsns(&mut self) -> Result<(Lsn, Lsn), String> {
        self.slot_row()
    }

    /// One transaction inserting `rows` rows into `table`, under `synchronous_commit = on` or
    /// `off`, recorded as `Commit{…}` with the pointers read after it. `first_lsn` is the insert
    /// pointer read before the INSERT (a bound: the first change's record starts there or later).
    /// The commit record's start and end are first taken as the insert pointer read just before
    /// and just after `COMMIT`; other backends (the bgwriter's running-xacts record every 15 s,
    /// autovacuum) may log WAL in between, so on a throwaway server the record is then looked up
    /// with `pg_waldump` once it is flushed (a synchronous commit at once, an asynchronous one at
    /// the next synchronous commit), and the transaction and its recorded step carry where it
    /// really lies ([`Session::as_logged`]).
    pub fn commit_txn(
        &mut self,
        table: &str,
        rows: u32,
        published: bool,
        sync: bool,
    ) -> Result<walcheck_model::pg::Txn, String> {
        self.commit_txn_in(None, table, rows, published, sync)
    }

    /// [`Session::commit_txn`] through `other` (a session on another database) when given: the
    /// pointers, cluster-wide, are still read here.
    pub fn commit_txn_in(
        &mut self,
        other: Option<&mut postgres::Client>,
        table: &str,
        rows: u32,
        published: bool,
        sync: bool,
    ) -> Result<walcheck_model::pg::Txn, String> {
        self.commit_txn_by(other, table, rows, published, sync, RowsBy::Insert)
    }

    /// [`Session::commit_txn`] of a transaction that writes its `rows` rows with `COPY … FROM
    /// STDIN` ([`RowsBy::Copy`]: one multi-insert record), committed synchronously.
    pub fn commit_copy_txn(
        &mut self,
        table: &str,
        rows: u32,
        published: bool,
    ) -> Result<walcheck_model::pg::Txn, String> {
        self.commit_txn_by(None, table, rows, published, true, RowsBy::Copy)
    }

    fn commit_txn_by(
        &mut self,
        other: Option<&mut postgres::Client>,
        table: &str,
        rows: u32,
        published: bool,
        sync: bool,
        by: RowsBy,
    ) -> Result<walcheck_model::pg::Txn, String> {
        let first_lsn = self.pointers()?.insert;
        let client = match other {
            Some(client) => client,
            None => &mut self.client,
        };
        let (xid, commit_lsn) = insert_and_commit(client, table, rows, sync, by)?;
        self.record_commit(walcheck_model::pg::Txn {
            xid,
            first_lsn,
            changes_end: commit_lsn,
            commit_lsn,
            end_lsn: commit_lsn,
            published_rows: if published { rows } else { 0 },
            mode: if sync {
                walcheck_model::pg::CommitMode::Sync
            } else {
                walcheck_model::pg::CommitMode::Async
            },
        })
    }

    /// The model's [`walcheck_model::pg::Wal::begin_txn`] on a server: a transaction on `client`
    /// (a connection of its own) INSERTs `rows` rows into `table` and stays open, under
    /// `synchronous_commit = on` for its later [`Session::commit_open`]. `first_lsn` is the
    /// insert pointer read before the INSERT (a bound: the first change's record starts there or
    /// later), `changes_end` the end of the last record inserted, from the insert pointer read
    /// after it ([`waldump::record_end`]; past the transaction's last change only if another
    /// backend logged in between). Nothing is recorded: an observed trace has its `Commit{…}`
    /// when it commits.
    pub fn begin_txn(
        &mut self,
        client: &mut postgres::Client,
        table: &str,
        rows: u32,
        published: bool,
    ) -> Result<walcheck_model::pg::OpenTxn, String> {
        client
            .batch_execute("BEGIN; SET LOCAL synchronous_commit = on")
            .map_err(|e| format!("begin: {}", pg_message(&e)))?;
        let before = client
            .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
            .map_err(|e| format!("insert pointer: {}", pg_message(&e)))?;
        let first_lsn = parse_lsn(before.get(0))?;
        client
            .batch_execute(&format!(
                "INSERT INTO {table} SELECT g, repeat('v', 20) FROM generate_series(1, {rows}) g"
            ))
            .map_err(|e| format!("insert into {table}: {}", pg_message(&e)))?;
        let (xid, insert) = xid_and_insert_pointer(client)?;
        Ok(walcheck_model::pg::OpenTxn {
            xid,
            first_lsn,
            changes_end: waldump::record_end(
                insert,
                waldump::WAL_PAGE_BYTES,
                walcheck_model::pg::wal::WAL_SEGMENT_BYTES,
            ),
            published_rows: if published { rows } else { 0 },
        })
    }

    /// The model's [`walcheck_model::pg::Wal::commit_open`] on a server: `open`, begun on
    /// `client` by [`Session::begin_txn`], commits (synchronously) after whatever committed
    /// since; recorded as `Commit{…}` and found in the WAL as [`Session::commit_txn`]'s are.
    pub fn commit_open(
        &mut self,
        client: &mut postgres::Client,
        open: walcheck_model::pg::OpenTxn,
    ) -> Result<walcheck_model::pg::Txn, String> {
        let (xid, commit_lsn) = xid_and_insert_pointer(client)?;
        if xid != open.xid {
            return Err(format!(
                "the open transaction {} is now xid {xid}",
                open.xid
            ));
        }
        client
            .batch_execute("COMMIT")
            .map_err(|e| format!("commit: {}", pg_message(&e)))?;
        self.record_commit(walcheck_model::pg::Txn {
            xid,
            first_lsn: open.first_lsn,
            changes_end: open.changes_end,
            commit_lsn,
            end_lsn: commit_lsn,
            published_rows: open.published_rows,
            mode: walcheck_model::pg::CommitMode::Sync,
        })
    }

    /// `txn`, whose `COMMIT` just returned, its `commit_lsn` the insert pointer read just before
    /// the `COMMIT`: its `end_lsn` from the insert pointer read now, recorded as `Commit{…}` with
    /// the pointers, and on a throwaway server looked up in the WAL once flushed (a synchronous
    /// commit at once).
    fn record_commit(
        &mut self,
        mut txn: walcheck_model::pg::Txn,
    ) -> Result<walcheck_model::pg::Txn, String> {
        let p = self.pointers()?;
        txn.end_lsn = crate::waldump::record_end(
            p.insert,
            crate::waldump::WAL_PAGE_BYTES,
            walcheck_model::pg::wal::WAL_SEGMENT_BYTES,
        );
        let sync = txn.mode == walcheck_model::pg::CommitMode::Sync;
        self.record(
            format!(
                "Commit{{xid: {}, commit_lsn: {}, end_lsn: {}, published_rows: {}, mode: {}}}",
                txn.xid,
                txn.commit_lsn,
                txn.end_lsn,
                txn.published_rows,
                if sync { "sync" } else { "async" }
            ),
            Self::pointer_vars(p),
        );
        self.last = Some(p);
        if self.wal.is_some() {
            self.unlogged.push((txn.xid, txn.first_lsn));
            if sync {
                self.as_logged_at(&mut txn, p.flush)?;
            }
        }
        Ok(txn)
    }

    /// `txn`, synchronously committed, with its commit record as `pg_waldump` shows it in the
    /// WAL flushed up to `flush`.
    fn as_logged_at(
        &mut self,
        txn: &mut walcheck_model::pg::Txn,
        flush: Lsn,
    ) -> Result<(), String> {
        self.find_commit_records(flush)?;
        let xid = txn.xid;
        let (commit_lsn, end_lsn) = self.logged.get(&xid).copied().ok_or_else(|| {
            format!("pg_waldump shows no commit record of xid {xid} up to {flush}")
        })?;
        txn.commit_lsn = commit_lsn;
        txn.end_lsn = end_lsn;
        Ok(())
    }

    /// Looks the commits not yet found up in the WAL up to `flush` (`pg_waldump`), and rewrites
    /// their recorded `Commit{…}` steps with the records' real start and end.
    fn find_commit_records(&mut self, flush: Lsn) -> Result<(), String> {
        let (Some(wal), Some(from)) = (&self.wal, self.unlogged.iter().map(|u| u.1).min()) else {
            return Ok(());
        };
        if from >= flush {
            return Ok(());
        }
        let records = waldump::parse(&wal.waldump(from, flush)?);
        let mut still = Vec::new();
        for (xid, first_lsn) in std::mem::take(&mut self.unlogged) {
            match waldump::commit_record(&records, xid) {
                Some((commit_lsn, end_lsn)) => {
                    self.logged.insert(xid, (commit_lsn, end_lsn));
                    let prefix = format!("Commit{{xid: {xid}, ");
                    for step in &mut self.steps {
                        let Some(action) = step.action.as_mut() else {
                            continue;
                        };
                        if let Some(rest) = action.strip_prefix(&prefix) {
                            // `commit_lsn: …, end_lsn: …, ` is followed by what stays.
                            let tail = rest
                                .split_once("published_rows:")
                                .map_or(String::new(), |(_, t)| t.to_owned());
                            *action = format!(
                                "{prefix}commit_lsn: {commit_lsn}, end_lsn: {end_lsn}, \
                                 published_rows:{tail}"
                            );
                        }
                    }
                }
                None => still.push((xid, first_lsn)),
            }
        }
        self.unlogged = still;
        Ok(())
    }

    /// `txns` with the commit records found in the WAL so far: an asynchronous commit's once a
    /// later synchronous commit flushed it (the estimate from the insert pointers otherwise).
    pub fn as_logged(
        &mut self,
        mut txns: Vec<walcheck_model::pg::Txn>,
    ) -> Result<Vec<walcheck_model::pg::Txn>, String> {
        if !self.unlogged.is_empty() {
            let flush = self.pointers()?.flush;
            self.find_commit_records(flush)?;
        }
        for txn in &mut txns {
            if let Some(&(commit_lsn, end_lsn)) = self.logged.get(&txn.xid) {
                txn.commit_lsn = commit_lsn;
                txn.end_lsn = end_lsn;
            }
        }
        Ok(txns)
    }

    /// `pg_ctl stop -m fast` and a start, then a new connection; records `CleanRestart` with the
    /// slot's `confirmed_flush` after it. Returns it.
    pub fn clean_restart(&mut self, server: &PgServer) -> Result<Lsn, String> {
        server.stop("fast")?;
        self.start_after_clean_stop(server)
    }

    /// The second half of [`Session::clean_restart`], for a server stopped with `-m fast`
    /// elsewhere (while a stream was open): starts it (unless it was started again since),
    /// reconnects, records `CleanRestart`.
    pub fn start_after_clean_stop(&mut self, server: &PgServer) -> Result<Lsn, String> {
        if !server.is_running() {
            server.start()?;
        }
        self.client = server.connect()?;
        let confirmed_flush = self.confirmed_flush()?;
        self.record(
            "CleanRestart".into(),
            vec![("confirmed_flush".into(), lsn_text(confirmed_flush))],
        );
        Ok(confirmed_flush)
    }

    /// The client, for statements the trace does not record.
    pub fn client(&mut self) -> &mut postgres::Client {
        &mut self.client
    }

    /// Reads the pointers without recording them.
    pub fn pointers(&mut self) -> Result<Pointers, String> {
        let row = self
            .client
            .query_one(
                "SELECT pg_current_wal_flush_lsn()::text, pg_current_wal_lsn()::text, \
                 pg_current_wal_insert_lsn()::text",
                &[],
            )
            .map_err(|e| format!("read WAL pointers: {}", pg_message(&e)))?;
        Ok(Pointers {
            flush: parse_lsn(row.get(0))?,
            write: parse_lsn(row.get(1))?,
            insert: parse_lsn(row.get(2))?,
        })
    }

    fn slot_row(&mut self) -> Result<(Lsn, Lsn), String> {
        let row = self
            .client
            .query_one(
                "SELECT confirmed_flush_lsn::text, restart_lsn::text FROM pg_replication_slots \
                 WHERE slot_name = $1",
                &[&self.slot],
            )
            .map_err(|e| format!("read slot {}: {e}", self.slot))?;
        Ok((parse_lsn(row.get(0))?, parse_lsn(row.get(1))?))
    }

    /// `confirmed_flush_lsn` from `pg_replication_slots`, not recorded.
    pub fn confirmed_flush(&mut self) -> Result<Lsn, String> {
        Ok(self.slot_row()?.0)
    }

    pub fn pointer_vars(p: Pointers) -> Vec<(String, Var)> {
        vec![
            ("insert".into(), lsn_text(p.insert)),
            ("write".into(), lsn_text(p.write)),
            ("flush".into(), lsn_text(p.flush)),
        ]
    }

    /// Reads and records the pointers (`Observe`).
    pub fn observe(&mut self) -> Result<Pointers, String> {
        let p = self.pointers()?;
        self.steps.push(Step {
            action: Some("Observe".into()),
            vars: Self::pointer_vars(p),
            time_us: None,
        });
        self.last = Some(p);
        Ok(p)
    }

    /// `pg_replication_slot_advance(slot, target)`, recorded as one `Advance` step with the
    /// pointers read right after it; the pointers before it are the last ones observed (call
    /// [`Session::observe`] first to read them just before).
    pub fn advance(&mut self, target: Lsn) -> Result<Advanced, String> {
        self.advance_within(target, None)?
            .ok_or_else(|| "internal: an advance without a time limit timed out".into())
    }

    /// [`Session::advance`] cancelled by `statement_timeout` after `timeout_ms` (when given):
    /// `None` when it was, with nothing recorded (see [`Session::record_waiting`]).
    pub fn advance_within(
        &mut self,
        target: Lsn,
        timeout_ms: Option<u64>,
    ) -> Result<Option<Advanced>, String> {
        let before = match self.last {
            Some(p) => p,
            None => self.observe()?,
        };
        let (_, restart_before) = self.slot_row()?;
        if let Some(ms) = timeout_ms {
            self.client
                .batch_execute(&format!("SET statement_timeout = {ms}"))
                .map_err(|e| format!("SET statement_timeout: {}", pg_message(&e)))?;
        }
        let result = self
            .client
            .query_one(
                "SELECT end_lsn::text FROM pg_replication_slot_advance($1, $2::text::pg_lsn)",
                &[&self.slot, &target.to_string()],
            )
            .map_err(|e| db_error(&e))
            .and_then(|row| parse_lsn(row.get(0)).map_err(|e| (String::new(), e)));
        if timeout_ms.is_some() {
            self.client
                .batch_execute("RESET statement_timeout")
                .map_err(|e| format!("RESET statement_timeout: {}", pg_message(&e)))?;
            if matches!(&result, Err((code, _)) if code == QUERY_CANCELED) {
                return Ok(None);
            }
        }
        let after = self.pointers()?;
        let (confirmed_flush, restart_after) = self.slot_row()?;
        let restart_moved = restart_after != restart_before;
        let mut vars = Self::pointer_vars(after);
        let (end_lsn, error) = match &result {
            Ok(end_lsn) => (end_lsn.to_string(), "none".to_owned()),
            Err((_, message)) => ("none".to_owned(), message.clone()),
        };
        vars.extend([
            ("end_lsn".into(), Var::Text(end_lsn)),
            ("error".into(), Var::Text(error)),
            ("confirmed_flush".into(), lsn_text(confirmed_flush)),
        ]);
        self.steps.push(Step {
            action: Some(format!(
                "Advance{{target: {target}, restart_moves: {restart_moved}, restart: {restart_after}}}"
            )),
            vars,
            time_us: None,
        });
        self.last = Some(after);
        Ok(Some(Advanced {
            target,
            result,
            confirmed_flush,
            restart_moved,
            before,
            after,
        }))
    }

    /// Records an advance to `target` that was still waiting when cancelled: the record it had
    /// to read ends at `read_end` (found with `pg_waldump` afterwards); `after` are the pointers
    /// read right after the cancel and `confirmed_flush` the slot's then.
    pub fn record_waiting(
        &mut self,
        target: Lsn,
        read_end: Lsn,
        after: Pointers,
        confirmed_flush: Lsn,
    ) {
        let mut vars = Self::pointer_vars(after);
        vars.push(("confirmed_flush".into(), lsn_text(confirmed_flush)));
        self.steps.push(Step {
            action: Some(format!(
                "AdvanceWaiting{{target: {target}, read_end: {read_end}}}"
            )),
            vars,
            time_us: None,
        });
        self.last = Some(after);
    }

    /// `CHECKPOINT`, recorded with the slot's `confirmed_flush` afterwards.
    pub fn checkpoint(&mut self) -> Result<(), String> {
        self.client
            .execute("CHECKPOINT", &[])
            .map_err(|e| format!("CHECKPOINT: {}", pg_message(&e)))?;
        let confirmed_flush = self.confirmed_flush()?;
        self.steps.push(Step {
            action: Some("Checkpoint".into()),
            vars: vec![("confirmed_flush".into(), lsn_text(confirmed_flush))],
            time_us: None,
        });
        Ok(())
    }

    /// Immediate shutdown and restart of `server`, then a new connection; records `PgCrash` with
    /// the slot's `confirmed_flush` after the restart. Returns it.
    pub fn crash_restart(&mut self, server: &PgServer) -> Result<Lsn, String> {
        server.restart_immediate()?;
        self.client = server.connect()?;
        let confirmed_flush = self.confirmed_flush()?;
        self.steps.push(Step {
            action: Some("PgCrash".into()),
            vars: vec![("confirmed_flush".into(), lsn_text(confirmed_flush))],
            time_us: None,
        });
        Ok(confirmed_flush)
    }

    /// The server's release, for the model's rules that differ by release.
    pub fn model_version(&self) -> walcheck_model::pg::PgVersion {
        walcheck_model::pg::PgVersion(self.version_num)
    }

    /// The observations so far as an observed trace named after `rule`.
    pub fn trace(&self, rule: &str, version_num: u32) -> Trace {
        Session::trace_of(rule, version_num, self.steps.clone())
    }

    fn trace_of(rule: &str, version_num: u32, steps: Vec<Step>) -> Trace {
        let mut config = BTreeMap::new();
        config.insert("rule".to_owned(), rule.to_owned());
        config.insert("server_version_num".to_owned(), version_num.to_string());
        Trace {
            header: Header {
                schema: SCHEMA.to_owned(),
                system: observed::SYSTEM.to_owned(),
                variant: format!("postgresql-{}", version_num / 10_000),
                faults: "none".to_owned(),
                config,
                property: observed::PROPERTY.to_owned(),
                kind: walcheck_traces::OBSERVED.to_owned(),
                verdict: "holds".to_owned(),
                seed: None,
                simulation: None,
                source: None,
            },
            steps,
        }
    }
}

/// How a transaction writes its rows, and so how many heap records log them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RowsBy {
    /// `INSERT … SELECT … FROM generate_series`: one `XLOG_HEAP_INSERT` record per row.
    /// PostgreSQL 15 `nodeModifyTable.c:ExecInsert` calls `table_tuple_insert` for each row,
    /// `heapam.c:heap_insert` logs it.
    Insert,
    /// `COPY … FROM STDIN`: one `XLOG_HEAP2_MULTI_INSERT` record for rows that fit one heap page.
    /// PostgreSQL 15 `copyfrom.c:CopyFrom` buffers the rows (`CIM_MULTI`, on a table that is
    /// not partitioned or foreign and has no BEFORE or INSTEAD OF row trigger and no volatile
    /// default, as [`PUBLISHED_TABLE`] and [`UNPUBLISHED_TABLE`]), `CopyMultiInsertBufferFlush`
    /// hands them to `heapam.c:heap_multi_insert`, which logs one record per page it fills.
    Copy,
}

/// One transaction on `client` writing `rows` rows into `table` (`by` an INSERT or a COPY),
/// under `synchronous_commit = on` (`sync`) or `off`: its xid, and the insert pointer read just
/// before its `COMMIT` (where the commit record starts, unless another backend logs first).
fn insert_and_commit(
    client: &mut postgres::Client,
    table: &str,
    rows: u32,
    sync: bool,
    by: RowsBy,
) -> Result<(u32, Lsn), String> {
    let mode = if sync { "on" } else { "off" };
    client
        .batch_execute(&format!("BEGIN; SET LOCAL synchronous_commit = {mode}"))
        .map_err(|e| format!("begin: {}", pg_message(&e)))?;
    match by {
        RowsBy::Insert => client
            .batch_execute(&format!(
                "INSERT INTO {table} SELECT g, repeat('v', 20) FROM generate_series(1, {rows}) g"
            ))
            .map_err(|e| format!("insert into {table}: {}", pg_message(&e)))?,
        RowsBy::Copy => copy_rows(client, table, rows)?,
    }
    let (xid, commit_lsn) = xid_and_insert_pointer(client)?;
    client
        .batch_execute("COMMIT")
        .map_err(|e| format!("commit: {}", pg_message(&e)))?;
    Ok((xid, commit_lsn))
}

/// The xid of the transaction open on `client`, and the insert pointer read with it.
fn xid_and_insert_pointer(client: &mut postgres::Client) -> Result<(u32, Lsn), String> {
    let row = client
        .query_one(
            "SELECT txid_current()::text, pg_current_wal_insert_lsn()::text",
            &[],
        )
        .map_err(|e| format!("read xid: {}", pg_message(&e)))?;
    let xid: u32 = row
        .get::<_, String>(0)
        .parse()
        .map_err(|e| format!("xid: {}", pg_message(&e)))?;
    Ok((xid, parse_lsn(row.get(1))?))
}

/// `COPY table (id, v) FROM STDIN` of `rows` rows like [`RowsBy::Insert`]'s, in text format.
fn copy_rows(client: &mut postgres::Client, table: &str, rows: u32) -> Result<(), String> {
    use std::io::Write;
    let copy_error = |e: &dyn std::fmt::Display| format!("copy into {table}: {e}");
    let mut writer = client
        .copy_in(&format!("COPY {table} (id, v) FROM STDIN"))
        .map_err(|e| copy_error(&pg_message(&e)))?;
    let value = "v".repeat(20);
    for g in 1..=rows {
        writeln!(writer, "{g}\t{value}").map_err(|e| copy_error(&e))?;
    }
    let copied = writer.finish().map_err(|e| copy_error(&pg_message(&e)))?;
    if copied == u64::from(rows) {
        Ok(())
    } else {
        Err(copy_error(&format!("{copied} rows copied, not {rows}")))
    }
}

thread_local! {
    /// The steps of the session last dropped on this thread, with its server's version: what a
    /// rule that failed had observed ([`take_last_trace`]).
    static LAST_STEPS: std::cell::RefCell<Option<(u32, Vec<Step>)>> = const { std::cell::RefCell::new(None) };
}

/// The observed trace of the session last dropped on this thread (the one a failed rule's `?`
/// dropped), named after `rule`: a failing rule's trace, for `walcheck replay`.
pub fn take_last_trace(rule: &str) -> Option<Trace> {
    let (version_num, steps) = LAST_STEPS.with(|last| last.borrow_mut().take())?;
    let mut trace = Session::trace_of(rule, version_num, steps);
    trace.header.verdict = "violated".to_owned();
    Some(trace)
}

/// Forgets the steps [`take_last_trace`] would return (before a rule starts).
pub fn forget_last_trace() {
    LAST_STEPS.with(|last| last.borrow_mut().take());
}

impl Drop for Session {
    /// Drops the session's slot: a throwaway server's directory goes anyway, but a `--pg-url`
    /// server outlives the session and must not keep a slot (it would hold WAL back).
    fn drop(&mut self) {
        let steps = std::mem::take(&mut self.steps);
        let version_num = self.version_num;
        LAST_STEPS.with(|last| *last.borrow_mut() = Some((version_num, steps)));
        let _ = self
            .client
            .execute("SELECT pg_drop_replication_slot($1)", &[&self.slot]);
        for statement in &self.cleanup {
            let _ = self.client.batch_execute(statement);
        }
    }
}

/// A live server, a primary only: `current_lsn` is `pg_current_wal_lsn()`, which raises an
/// error during recovery (`BootstrapError::CurrentLsn`), and waits are real sleeps.
impl SlotApi for Session {
    fn current_lsn(&mut self) -> Result<Lsn, String> {
        Ok(self.pointers()?.write)
    }

    fn slot_advance(&mut self, target: Lsn) -> Result<Lsn, String> {
        self.advance(target)?
            .result
            .map_err(|(sqlstate, message)| format!("{message} (SQLSTATE {sqlstate})"))
    }

    fn sleep_ms(&mut self, delay_ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
    }
}
