//! One client session on a throwaway server that records what it observes as an observed trace
//! ([`walcheck_sim::observed`]).

use std::collections::BTreeMap;

use walcheck_model::Lsn;
use walcheck_properties::system::Var;
use walcheck_traces::{Header, Step, Trace, SCHEMA};

use crate::server::PgServer;
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
}

fn lsn_text(l: Lsn) -> Var {
    Var::Text(l.to_string())
}

fn parse_lsn(text: &str) -> Result<Lsn, String> {
    text.parse()
        .map_err(|e| format!("server LSN {text:?}: {e}"))
}

/// `(sqlstate, message)` of a server error, or the error's text.
pub fn db_error(e: &postgres::Error) -> (String, String) {
    match e.as_db_error() {
        Some(db) => (db.code().code().to_owned(), db.message().to_owned()),
        None => (String::new(), e.to_string()),
    }
}

impl Session {
    /// Connects and creates the slot `slot` (saved at once by PostgreSQL).
    pub fn open(server: &PgServer, slot: &str) -> Result<Session, String> {
        let mut client = server.connect()?;
        client
            .execute(
                "SELECT pg_create_logical_replication_slot($1, 'test_decoding')",
                &[&slot],
            )
            .map_err(|e| format!("create slot {slot}: {e}"))?;
        server.note_slot(slot);
        let mut session = Session {
            client,
            slot: slot.to_owned(),
            steps: Vec::new(),
            last: None,
        };
        let p = session.pointers()?;
        let confirmed_flush = session.confirmed_flush()?;
        session.steps.push(Step {
            action: None,
            vars: vec![
                ("insert".into(), lsn_text(p.insert)),
                ("write".into(), lsn_text(p.write)),
                ("flush".into(), lsn_text(p.flush)),
                ("confirmed_flush".into(), lsn_text(confirmed_flush)),
            ],
            time_us: None,
        });
        session.last = Some(p);
        Ok(session)
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
            .map_err(|e| format!("read WAL pointers: {e}"))?;
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

    fn pointer_vars(p: Pointers) -> Vec<(String, Var)> {
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
        let before = match self.last {
            Some(p) => p,
            None => self.observe()?,
        };
        let (_, restart_before) = self.slot_row()?;
        let result = self
            .client
            .query_one(
                "SELECT end_lsn::text FROM pg_replication_slot_advance($1, $2::text::pg_lsn)",
                &[&self.slot, &target.to_string()],
            )
            .map_err(|e| db_error(&e))
            .and_then(|row| parse_lsn(row.get(0)).map_err(|e| (String::new(), e)));
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
                "Advance{{target: {target}, restart_moves: {restart_moved}}}"
            )),
            vars,
            time_us: None,
        });
        self.last = Some(after);
        Ok(Advanced {
            target,
            result,
            confirmed_flush,
            restart_moved,
            before,
            after,
        })
    }

    /// `CHECKPOINT`, recorded with the slot's `confirmed_flush` afterwards.
    pub fn checkpoint(&mut self) -> Result<(), String> {
        self.client
            .execute("CHECKPOINT", &[])
            .map_err(|e| format!("CHECKPOINT: {e}"))?;
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

    /// The observations so far as an observed trace named after `rule`.
    pub fn trace(&self, rule: &str, version_num: u32) -> Trace {
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
            },
            steps: self.steps.clone(),
        }
    }
}

impl Drop for Session {
    /// Drops the session's slot: a throwaway server's directory goes anyway, but a `--pg-url`
    /// server outlives the session and must not keep a slot (it would hold WAL back).
    fn drop(&mut self) {
        let _ = self
            .client
            .execute("SELECT pg_drop_replication_slot($1)", &[&self.slot]);
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
