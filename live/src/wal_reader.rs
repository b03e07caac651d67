//! Reading a throwaway server's WAL records, where a rule needs record boundaries the SQL
//! functions and the replication protocol do not show (a commit record's real start and end, the
//! running-xacts records that give a slot its candidate `restart_lsn`, the last checkpoint).
//!
//! Two ways, one answer: `pg_waldump` on the server's `pg_wal` where the binaries have it
//! (Debian's packages), else the `pg_walinspect` extension's `pg_get_wal_records_info` over SQL
//! (the relocatable builds of other versions ship no `pg_waldump`, and Debian's 15 tool cannot
//! read a 16+ server's WAL). The second gives the records in `pg_waldump`'s line format, so that
//! [`crate::waldump::parse`] reads either. Not for a `--pg-url` server: its files are not ours to
//! read, nor its extensions ours to create.

use std::path::PathBuf;
use std::time::Duration;

use walcheck_model::Lsn;

use crate::pg_error::pg_message;
use crate::versions::pg_command;

/// How a [`WalReader`] reads the WAL.
#[derive(Clone, Debug)]
enum Backend {
    /// `pg_waldump` of `bindir` on `wal_dir`, run as the `postgres` user when walcheck is root.
    Waldump {
        bindir: PathBuf,
        wal_dir: PathBuf,
        as_postgres: bool,
    },
    /// `pg_walinspect` on the server listening on 127.0.0.1:`port`, in database `postgres`.
    Walinspect { port: u16 },
}

/// Reads a throwaway server's WAL records ([`crate::server::PgServer::wal_reader`]), for a
/// session that finds its commit records there.
#[derive(Clone, Debug)]
pub struct WalReader {
    backend: Backend,
}

/// The extension [`WalReader::walinspect`] needs: the server's start creates it
/// ([`crate::server::PgServer::start_primary`]).
pub const WALINSPECT: &str = "pg_walinspect";

impl WalReader {
    /// `pg_waldump` of `bindir` on the WAL folder `wal_dir`.
    pub fn waldump_of(bindir: PathBuf, wal_dir: PathBuf, as_postgres: bool) -> WalReader {
        WalReader {
            backend: Backend::Waldump {
                bindir,
                wal_dir,
                as_postgres,
            },
        }
    }

    /// `pg_walinspect` on the server at 127.0.0.1:`port` (the extension created).
    pub fn walinspect(port: u16) -> WalReader {
        WalReader {
            backend: Backend::Walinspect { port },
        }
    }

    /// Whether it reads through the running server (`pg_walinspect`): then the server must run.
    pub fn needs_running_server(&self) -> bool {
        matches!(self.backend, Backend::Walinspect { .. })
    }

    /// Where the last checkpoint record starts: after a clean stop and a start, the shutdown
    /// checkpoint (a start after a clean stop writes none).
    ///
    /// PostgreSQL 15 `xlog.c:CreateCheckPoint` writes `ControlFile->checkPoint`, the start of
    /// the checkpoint record; `pg_controldata` prints it ("Latest checkpoint location"), and
    /// `xlogfuncs.c:pg_control_checkpoint` returns it as `checkpoint_lsn`.
    pub fn latest_checkpoint(&self) -> Result<Lsn, String> {
        match &self.backend {
            Backend::Waldump {
                bindir,
                wal_dir,
                as_postgres,
            } => {
                let data_dir = wal_dir
                    .parent()
                    .ok_or("pg_controldata: the WAL folder has no data folder")?;
                let out = pg_command(bindir, *as_postgres, "pg_controldata")
                    .arg("-D")
                    .arg(data_dir)
                    .output()
                    .map_err(|e| format!("pg_controldata: {}", pg_message(&e)))?;
                let text = String::from_utf8_lossy(&out.stdout);
                text.lines()
                    .find_map(|l| l.strip_prefix("Latest checkpoint location:"))
                    .and_then(|v| v.trim().parse::<Lsn>().ok())
                    .ok_or_else(|| {
                        format!(
                            "pg_controldata gave no latest checkpoint location ({}): {}",
                            out.status,
                            String::from_utf8_lossy(&out.stderr).trim()
                        )
                    })
            }
            Backend::Walinspect { port } => {
                let text: String = connect(*port)?
                    .query_one(
                        "SELECT checkpoint_lsn::text FROM pg_control_checkpoint()",
                        &[],
                    )
                    .map_err(|e| format!("pg_control_checkpoint(): {}", pg_message(&e)))?
                    .get(0);
                text.parse().map_err(|e| pg_message(&e))
            }
        }
    }

    /// The records starting in `start..end` (`end` at or below the flush pointer), as
    /// `pg_waldump` prints them: one line a record, `rmgr: … len (rec/tot): …, tx: …, lsn: …,
    /// prev …, desc: …`.
    pub fn waldump(&self, start: Lsn, end: Lsn) -> Result<String, String> {
        match &self.backend {
            Backend::Waldump {
                bindir,
                wal_dir,
                as_postgres,
            } => {
                let out = pg_command(bindir, *as_postgres, "pg_waldump")
                    .arg("-p")
                    .arg(wal_dir)
                    .args(["-s", &start.to_string(), "-e", &end.to_string()])
                    .output()
                    .map_err(|e| format!("pg_waldump: {}", pg_message(&e)))?;
                if out.status.success() {
                    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
                } else {
                    Err(format!(
                        "pg_waldump failed ({}): {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr).trim()
                    ))
                }
            }
            Backend::Walinspect { port } => walinspect_lines(*port, start, end),
        }
    }
}

/// A session on the server at 127.0.0.1:`port`, as the throwaway server's own.
fn connect(port: u16) -> Result<postgres::Client, String> {
    postgres::Config::new()
        .host("127.0.0.1")
        .port(port)
        .user("postgres")
        .dbname("postgres")
        .connect_timeout(Duration::from_secs(10))
        .connect(postgres::NoTls)
        .map_err(|e| format!("connect to 127.0.0.1:{port}: {e}"))
}

/// `pg_get_wal_records_info(start, end)`'s rows in `pg_waldump`'s line format.
///
/// PostgreSQL 15 and 16+ `pg_walinspect.c:GetWALRecordsInfo` lists, as `pg_waldump -s -e`
/// does, the records from the first one starting at or after `start` (`XLogFindNextRecord`)
/// whose end is at or before `end`; both describe a record with `rmgr_identify` and `rmgr_desc`
/// (`pg_waldump` prints them together after `desc:`, pg_walinspect as `record_type` and
/// `description`), and `record_length` is `XLogRecGetTotalLen`, `pg_waldump`'s `tot`. 15 refuses
/// an `end` past the flush pointer ("cannot accept future end LSN"), 16+ stops there.
fn walinspect_lines(port: u16, start: Lsn, end: Lsn) -> Result<String, String> {
    let rows = connect(port)?
        .query(
            "SELECT resource_manager, record_length, fpi_length, xid::text::bigint, \
             start_lsn::text, prev_lsn::text, record_type, description \
             FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)",
            &[&start.to_string(), &end.to_string()],
        )
        .map_err(|e| {
            format!(
                "pg_get_wal_records_info({start}, {end}): {}",
                pg_message(&e)
            )
        })?;
    let mut out = String::new();
    for row in rows {
        let rmgr: String = row.get(0);
        let total: i32 = row.get(1);
        let fpi: i32 = row.get(2);
        let xid: i64 = row.get(3);
        let lsn: String = row.get(4);
        let prev: String = row.get(5);
        let kind: String = row.get(6);
        let desc: Option<String> = row.get(7);
        let rec = total - fpi;
        let desc = match desc.as_deref() {
            Some(d) if !d.is_empty() => format!("{kind} {d}"),
            _ => kind,
        };
        out.push_str(&format!(
            "rmgr: {rmgr:<11} len (rec/tot): {rec:>6}/{total:>6}, tx: {xid:>10}, lsn: {lsn}, \
             prev {prev}, desc: {desc}\n"
        ));
    }
    Ok(out)
}
