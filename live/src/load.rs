//! A bounded load generator in its own thread and session: the two workloads of OLake #1084's
//! ladders, bulk `INSERT … SELECT` under synchronous commit and small statements under
//! `synchronous_commit = off`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::server::{PgServer, LOAD_TABLE};

/// `what: SQLSTATE message`, the server's words rather than the client library's summary.
fn load_error(what: &str, e: &postgres::Error) -> String {
    let (code, message) = crate::pg_error::db_error(e);
    format!("{what}: {code} {message}")
}

/// What the load runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `INSERT … SELECT repeat('x', 1000) FROM generate_series(1, rows)`, committed synchronously.
    Bulk { rows: u32 },
    /// `rows`-row statements of `repeat('x', 1000)` under `synchronous_commit = off`, at most `per_s` a second
    /// (`None`: unthrottled).
    Async { rows: u32, per_s: Option<u32> },
}

/// A running load; stops at its deadline or when dropped, whichever is first.
pub struct Load {
    stop: Arc<AtomicBool>,
    statements: Arc<AtomicU64>,
    handle: Option<JoinHandle<Result<(), String>>>,
}

impl Load {
    /// Starts `workload` on a new session of `server` for at most `max_ms` milliseconds.
    pub fn start(server: &PgServer, workload: Workload, max_ms: u64) -> Result<Load, String> {
        let mut client = server.connect()?;
        client
            .batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {LOAD_TABLE} (id int, payload text)"
            ))
            .map_err(|e| load_error("create load table", &e))?;
        server.note_load_table();
        let stop = Arc::new(AtomicBool::new(false));
        let statements = Arc::new(AtomicU64::new(0));
        let (stop2, statements2) = (stop.clone(), statements.clone());
        let deadline = Instant::now() + Duration::from_millis(max_ms);
        let handle = std::thread::spawn(move || -> Result<(), String> {
            let (sql, pause) = match workload {
                Workload::Bulk { rows } => (
                    format!(
                        "INSERT INTO {LOAD_TABLE} SELECT g, repeat('x', 1000) \
                         FROM generate_series(1, {rows}) g"
                    ),
                    None,
                ),
                Workload::Async { rows, per_s } => {
                    client
                        .batch_execute("SET synchronous_commit = off")
                        .map_err(|e| load_error("SET synchronous_commit", &e))?;
                    (
                        format!(
                            "INSERT INTO {LOAD_TABLE} SELECT g, repeat('x', 1000) \
                             FROM generate_series(1, {rows}) g"
                        ),
                        per_s.map(|r| Duration::from_micros(1_000_000 / u64::from(r.max(1)))),
                    )
                }
            };
            while !stop2.load(Ordering::Relaxed) && Instant::now() < deadline {
                let started = Instant::now();
                client
                    .batch_execute(&sql)
                    .map_err(|e| load_error("load statement", &e))?;
                statements2.fetch_add(1, Ordering::Relaxed);
                if let Some(pause) = pause {
                    if let Some(rest) = pause.checked_sub(started.elapsed()) {
                        std::thread::sleep(rest);
                    }
                }
            }
            Ok(())
        });
        Ok(Load {
            stop,
            statements,
            handle: Some(handle),
        })
    }

    /// Statements completed so far.
    pub fn statements(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }

    /// Stops the load and waits for its statement to finish (bounded by the statement timeout).
    pub fn finish(mut self) -> Result<u64, String> {
        self.stop.store(true, Ordering::Relaxed);
        let result = self.handle.take().map_or(Ok(()), |h| {
            h.join()
                .unwrap_or_else(|_| Err("load thread panicked".into()))
        });
        result.map(|()| self.statements())
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
