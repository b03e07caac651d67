//! A throwaway PostgreSQL server: initdb into a temporary directory, a free loopback port,
//! `wal_level = logical`; stopped (fast, then immediate, then killed) and deleted on drop, also
//! when the thread that owns it panics.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use walcheck_model::Lsn;

pub use crate::interrupt::{exit_interrupted, interrupted};
use crate::pg_error::pg_message;
use crate::replication::application_name;
pub use crate::versions::find_bindir;
use crate::versions::pg_command;
pub use crate::wal_reader::WalReader;

/// How long `pg_ctl` may wait for a start or a stop, in seconds.
const PG_CTL_TIMEOUT_S: u64 = 30;
/// How long a client waits to connect, in seconds.
const CONNECT_TIMEOUT_S: u64 = 10;
/// Every statement of a live test is cancelled after this long, in milliseconds.
const STATEMENT_TIMEOUT_MS: u64 = 30_000;

/// Whether a missing PostgreSQL must fail the live tests (`WALCHECK_REQUIRE_PG=1`, set by CI).
pub fn pg_required() -> bool {
    std::env::var("WALCHECK_REQUIRE_PG").is_ok_and(|v| v == "1")
}

fn is_root() -> bool {
    // SAFETY-free: the effective uid from /proc, without libc.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// A unique directory name under the system temporary directory.
fn fresh_dir(prefix: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!(
        "walcheck-{prefix}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// A free TCP port on 127.0.0.1 (the kernel's choice; PostgreSQL binds it right after).
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("no free loopback port: {}", pg_message(&e)))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// The throwaway servers alive in this process: `(bindir, root, as_postgres)`, so that an
/// interrupt (SIGINT, SIGTERM) can stop and delete them as dropping them would.
static LIVE_SERVERS: Mutex<Vec<(PathBuf, PathBuf, bool)>> = Mutex::new(Vec::new());

/// What this process made on `--pg-url` servers, by port: the logical slots it created and not
/// yet dropped, and whether it wrote the load table. A run that fails or is interrupted removes
/// them ([`remove_leftovers`]): a forgotten slot would hold the server's WAL back without bound.
static EXTERNAL_LEFTOVERS: Mutex<BTreeMap<u16, Leftovers>> = Mutex::new(BTreeMap::new());

/// See [`EXTERNAL_LEFTOVERS`].
#[derive(Clone)]
struct Leftovers {
    config: postgres::Config,
    slots: BTreeSet<String>,
    load_table: bool,
}

/// Drops what walcheck makes on a `--pg-url` server ([`remove_leftovers_once`]), again and again
/// until none is left: an interrupt's handler runs beside the main thread, whose session opened
/// just before the interrupt can still make a slot after a round has dropped them (seen once in
/// CI, under load). At most five rounds, 200 ms apart. Best effort: errors are ignored.
fn remove_leftovers(leftovers: &Leftovers) {
    for _ in 0..5 {
        let Ok(mut client) = leftovers.config.connect(postgres::NoTls) else {
            return;
        };
        remove_leftovers_once(&mut client, leftovers);
        if walcheck_objects(&mut client).is_ok_and(|objects| objects.is_empty()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One round of [`remove_leftovers`]: first ends this process's other sessions (PostgreSQL 14+
/// `pg_terminate_backend(pid, timeout)` waits for each to exit), then drops every inactive slot,
/// publication and table named `walcheck_*` ([`WALCHECK_OBJECTS`]; a run refuses to start on a
/// server that has any, so they are this run's).
fn remove_leftovers_once(client: &mut postgres::Client, leftovers: &Leftovers) {
    let ended = client.execute(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
         WHERE application_name = $1 AND pid <> pg_backend_pid()",
        &[&application_name()],
    );
    if ended.is_err() {
        // Before PostgreSQL 14 pg_terminate_backend does not wait: give the sessions a moment.
        let _ = client.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = $1 AND pid <> pg_backend_pid()",
            &[&application_name()],
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let slots: Vec<String> = leftovers.slots.iter().cloned().collect();
    let _ = client.execute(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots \
         WHERE (slot_name = ANY($1) OR slot_name LIKE 'walcheck\\_%') AND NOT active \
         AND database = current_database()",
        &[&slots],
    );
    if let Ok(objects) = walcheck_objects(client) {
        for statement in objects.drop_statements() {
            let _ = client.batch_execute(&statement);
        }
    }
}

/// The name prefix of everything walcheck makes on a server: slots, publications, tables.
pub const WALCHECK_OBJECTS: &str = "walcheck_";

/// What a server has of walcheck's ([`WALCHECK_OBJECTS`]) in the connected database.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalcheckObjects {
    pub slots: Vec<String>,
    pub publications: Vec<String>,
    pub tables: Vec<String>,
}

impl WalcheckObjects {
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty() && self.publications.is_empty() && self.tables.is_empty()
    }

    /// The statements that drop them, publications before their tables.
    pub fn drop_statements(&self) -> Vec<String> {
        let mut statements: Vec<String> = self
            .slots
            .iter()
            .map(|s| format!("SELECT pg_drop_replication_slot('{s}')"))
            .collect();
        statements.extend(
            self.publications
                .iter()
                .map(|p| format!("DROP PUBLICATION IF EXISTS {p}")),
        );
        statements.extend(
            self.tables
                .iter()
                .map(|t| format!("DROP TABLE IF EXISTS {t}")),
        );
        statements
    }
}

/// The slots, publications and tables named `walcheck_*` in `client`'s database.
fn walcheck_objects(client: &mut postgres::Client) -> Result<WalcheckObjects, postgres::Error> {
    let names =
        |client: &mut postgres::Client, sql: &str| -> Result<Vec<String>, postgres::Error> {
            Ok(client
                .query(sql, &[])?
                .iter()
                .map(|row| row.get::<_, String>(0))
                .collect())
        };
    Ok(WalcheckObjects {
        slots: names(
            client,
            "SELECT slot_name::text FROM pg_replication_slots \
             WHERE slot_name LIKE 'walcheck\\_%' AND database = current_database() ORDER BY 1",
        )?,
        publications: names(
            client,
            "SELECT pubname::text FROM pg_publication WHERE pubname LIKE 'walcheck\\_%' ORDER BY 1",
        )?,
        tables: names(
            client,
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables \
             WHERE tablename LIKE 'walcheck\\_%' ORDER BY 1",
        )?,
    })
}

/// The table the live load writes (`live::load`); on a `--pg-url` server it is dropped when the
/// run ends.
pub const LOAD_TABLE: &str = "walcheck_load";

/// Installs, once per process, the handler that tears every throwaway server down on SIGINT or
/// SIGTERM and exits 130: an interrupted run leaves no server or directory behind, and on a
/// `--pg-url` server no slot or load table of its own.
pub fn clean_up_on_interrupt() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            crate::interrupt::begin();
            let servers = LIVE_SERVERS.lock().map(|s| s.clone()).unwrap_or_default();
            for (bindir, root, as_postgres) in servers {
                let data = root.join("data");
                let _ = pg_command(&bindir, as_postgres, "pg_ctl")
                    .arg("-D")
                    .arg(&data)
                    .args(["-m", "immediate", "-w", "-t", "30", "stop"])
                    .output();
                let _ = std::fs::remove_dir_all(&root);
            }
            let external: Vec<Leftovers> = EXTERNAL_LEFTOVERS
                .lock()
                .map(|e| e.values().cloned().collect())
                .unwrap_or_default();
            for leftovers in &external {
                remove_leftovers(leftovers);
            }
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                if external.is_empty() {
                    &b"walcheck: interrupted: throwaway PostgreSQL stopped and removed\n"[..]
                } else {
                    &b"walcheck: interrupted: its slots, publications and tables dropped from the --pg-url server\n"[..]
                },
            );
            std::process::exit(130);
        });
    });
}

/// One running throwaway server. Dropping it stops the server and deletes its directory.
pub struct PgServer {
    /// A server given by `--pg-url`: used as it is, never started, stopped or deleted.
    external: Option<postgres::Config>,
    bindir: PathBuf,
    root: PathBuf,
    port: u16,
    as_postgres: bool,
    version_num: u32,
}

impl PgServer {
    /// initdb and start a primary with `wal_level = logical`.
    pub fn start_primary(bindir: &Path) -> Result<PgServer, String> {
        let mut server = PgServer::prepare(bindir, "pg")?;
        let data = server.data_dir();
        server.run(
            "initdb",
            &[
                "-D",
                path_str(&data)?,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ],
        )?;
        server.start()?;
        server.version_num = server.query_version()?;
        if !server.has_waldump() {
            // Where the binaries have no pg_waldump the WAL is read through pg_walinspect
            // (`WalReader`): created now, before any rule logs WAL it looks for.
            server
                .connect()?
                .batch_execute(&format!(
                    "CREATE EXTENSION {}",
                    crate::wal_reader::WALINSPECT
                ))
                .map_err(|e| {
                    format!(
                        "CREATE EXTENSION {} (reading the WAL without pg_waldump): {}",
                        crate::wal_reader::WALINSPECT,
                        pg_message(&e)
                    )
                })?;
        }
        Ok(server)
    }

    /// A hot standby of `primary` on its own port, with no settings of its own
    /// ([`PgServer::start_standby_with`]).
    pub fn start_standby(primary: &PgServer) -> Result<PgServer, String> {
        PgServer::start_standby_with(primary, &[])
    }

    /// A hot standby of `primary` on its own port: `pg_basebackup -R -X stream` from the primary
    /// (where the binaries have no `pg_basebackup`, a copy of the primary's data folder stopped
    /// cleanly: [`PgServer::copy_for_standby`]), then `settings` (a name and its value as
    /// `postgresql.conf` spells it, quotes included) appended to its `postgresql.auto.conf`,
    /// where they override what the backup wrote (the last line of a name wins), then started.
    pub fn start_standby_with(
        primary: &PgServer,
        settings: &[(&str, &str)],
    ) -> Result<PgServer, String> {
        let mut server = PgServer::prepare(&primary.bindir, "standby")?;
        if primary.bindir.join("pg_basebackup").is_file() {
            server.base_backup_of(primary)?;
        } else {
            server.copy_for_standby(primary)?;
        }
        let lines: String = settings
            .iter()
            .map(|(name, value)| format!("\n{name} = {value}\n"))
            .collect();
        server.append_auto_conf(&lines)?;
        server.own_root()?;
        server.start()?;
        server.version_num = server.query_version()?;
        Ok(server)
    }

    /// What a standby of this primary streams with (`primary_conninfo`, without its quotes):
    /// the loopback port, the `postgres` user, `application_name` `walcheck_standby`.
    pub fn standby_conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres application_name=walcheck_standby",
            self.port
        )
    }

    /// This server's data folder as `pg_basebackup -R -X stream` makes it from `primary`: the
    /// primary's files streamed while it runs, `standby.signal` and its `primary_conninfo`.
    fn base_backup_of(&self, primary: &PgServer) -> Result<(), String> {
        let data = self.data_dir();
        let port = primary.port.to_string();
        self.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                path_str(&data)?,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ],
        )
        .map(|_| ())
    }

    /// This server's data folder as a standby of `primary` without `pg_basebackup`: the primary
    /// stopped cleanly (`-m fast`), its data folder copied, the primary started again; the copy,
    /// without the primary's slots (`pg_replslot`, which `pg_basebackup` leaves out too), gets
    /// `standby.signal` and a `primary_conninfo` to stream from the primary.
    ///
    /// PostgreSQL 15 `xlogrecovery.c:InitWalRecovery` enters standby mode when `standby.signal`
    /// is there, replays from the copy's last (shutdown) checkpoint, and
    /// `walreceiver.c:WalReceiverMain` streams the rest from `primary_conninfo`.
    fn copy_for_standby(&self, primary: &PgServer) -> Result<(), String> {
        let data = self.data_dir();
        primary.stop("fast")?;
        let copied = Command::new("cp")
            .arg("-a")
            .arg(primary.data_dir())
            .arg(&data)
            .output();
        // The primary runs again whatever the copy did.
        primary.start()?;
        match copied {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                return Err(format!(
                    "copy the primary's data folder: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
            Err(e) => return Err(format!("copy the primary's data folder: {e}")),
        }
        let slots = data.join("pg_replslot");
        for slot in std::fs::read_dir(&slots).into_iter().flatten().flatten() {
            let _ = std::fs::remove_dir_all(slot.path());
        }
        std::fs::write(data.join("standby.signal"), b"")
            .map_err(|e| format!("make {} a standby: {e}", data.display()))?;
        self.append_auto_conf(&format!(
            "\nprimary_conninfo = '{}'\n",
            primary.standby_conninfo()
        ))
    }

    /// Appends `lines` to the data folder's `postgresql.auto.conf`.
    fn append_auto_conf(&self, lines: &str) -> Result<(), String> {
        use std::io::Write;
        let path = self.data_dir().join("postgresql.auto.conf");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(lines.as_bytes()))
            .map_err(|e| format!("append to {}: {e}", path.display()))
    }

    /// Promotes this standby: `pg_promote()`, which waits (30 s at most) for recovery to end,
    /// then `pg_is_in_recovery()`, which must say it has.
    ///
    /// PostgreSQL 15 `xlogfuncs.c:pg_promote` signals the startup process and waits until
    /// `RecoveryInProgress()` is false; `xlogrecovery.c:CheckForStandbyTrigger` ends recovery
    /// once the WAL received is replayed.
    pub fn promote(&self) -> Result<(), String> {
        let mut client = self.connect()?;
        let promoted: bool = client
            .query_one("SELECT pg_promote(true, 30)", &[])
            .map_err(|e| format!("pg_promote(): {}", pg_message(&e)))?
            .get(0);
        let in_recovery: bool = client
            .query_one("SELECT pg_is_in_recovery()", &[])
            .map_err(|e| format!("pg_is_in_recovery(): {}", pg_message(&e)))?
            .get(0);
        if promoted && !in_recovery {
            Ok(())
        } else {
            Err(format!(
                "pg_promote() answered {promoted} and pg_is_in_recovery() {in_recovery}"
            ))
        }
    }

    /// When the server runs as the `postgres` user: its directory and everything in it made
    /// that user's.
    fn own_root(&self) -> Result<(), String> {
        if !self.as_postgres {
            return Ok(());
        }
        let out = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&self.root)
            .output()
            .map_err(|e| format!("chown: {}", pg_message(&e)))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "chown postgres {}: {}",
                self.root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    fn prepare(bindir: &Path, prefix: &str) -> Result<PgServer, String> {
        let root = fresh_dir(prefix);
        std::fs::create_dir_all(root.join("sock"))
            .map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let server = PgServer {
            external: None,
            bindir: bindir.to_owned(),
            root,
            port: free_port()?,
            as_postgres: is_root(),
            version_num: 0,
        };
        if let Ok(mut live) = LIVE_SERVERS.lock() {
            live.push((
                server.bindir.clone(),
                server.root.clone(),
                server.as_postgres,
            ));
        }
        if server.as_postgres {
            // initdb refuses to run as root: the server runs as the postgres user.
            server.own_root()?;
            // The postgres user must reach the directory (a TMPDIR under /root would not do).
            let reachable = Command::new("runuser")
                .args(["-u", "postgres", "--", "test", "-w"])
                .arg(&server.root)
                .status()
                .is_ok_and(|s| s.success());
            if !reachable {
                return Err(format!(
                    "the postgres user cannot write {} (set TMPDIR to a directory it can reach)",
                    server.root.display()
                ));
            }
        }
        Ok(server)
    }

    /// An existing server at `url` (`postgresql://user@127.0.0.1:port/db`), loopback only. Checks
    /// that need to restart the server or build a standby skip on it.
    pub fn external(url: &str) -> Result<PgServer, String> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| format!("--pg-url {url:?}: {}", pg_message(&e)))?;
        let loopback = !config.get_hosts().is_empty()
            && config.get_hosts().iter().all(|h| match h {
                postgres::config::Host::Tcp(name) => {
                    matches!(name.as_str(), "127.0.0.1" | "localhost" | "::1")
                }
                postgres::config::Host::Unix(_) => false,
            })
            // `hostaddr` is where the client really connects: it must be loopback too.
            && config.get_hostaddrs().iter().all(|addr| addr.is_loopback());
        if !loopback {
            return Err(format!(
                "--pg-url {url:?}: only a loopback host (127.0.0.1) is allowed"
            ));
        }
        config
            .connect_timeout(Duration::from_secs(CONNECT_TIMEOUT_S))
            .options(&format!("-c statement_timeout={STATEMENT_TIMEOUT_MS}"))
            .application_name(&application_name());
        // Everything named walcheck_* is dropped when this run ends: refuse a server that
        // already has some (an interrupted run's, or another run's going on).
        let mut client = config
            .connect(postgres::NoTls)
            .map_err(|e| format!("connect to {url:?}: {}", pg_message(&e)))?;
        let objects = walcheck_objects(&mut client)
            .map_err(|e| format!("--pg-url {url:?}: {}", pg_message(&e)))?;
        drop(client);
        if !objects.is_empty() {
            return Err(format!(
                "--pg-url {url:?} already has walcheck's objects (slots {:?}, publications {:?}, \
                 tables {:?}): left by an interrupted run, or another run is going on. When none \
                 is, drop them and run again: {}",
                objects.slots,
                objects.publications,
                objects.tables,
                objects.drop_statements().join("; ")
            ));
        }
        let port = config.get_ports().first().copied().unwrap_or(5432);
        if let Ok(mut external) = EXTERNAL_LEFTOVERS.lock() {
            external.insert(
                port,
                Leftovers {
                    config: config.clone(),
                    slots: BTreeSet::new(),
                    load_table: false,
                },
            );
        }
        let mut server = PgServer {
            external: Some(config),
            bindir: PathBuf::new(),
            root: PathBuf::new(),
            port,
            as_postgres: false,
            version_num: 0,
        };
        server.version_num = server.query_version()?;
        Ok(server)
    }

    /// Whether this server was started here (and may be restarted, copied and deleted).
    pub fn is_throwaway(&self) -> bool {
        self.external.is_none()
    }

    /// Records that slot `name` was created here, so that on a `--pg-url` server a failed or
    /// interrupted run drops it (a throwaway server goes with everything on it).
    pub fn note_slot(&self, name: &str) {
        self.with_leftovers(|l| {
            l.slots.insert(name.to_owned());
        });
    }

    /// Records that slot `name` was dropped.
    pub fn forget_slot(&self, name: &str) {
        self.with_leftovers(|l| {
            l.slots.remove(name);
        });
    }

    /// Records that the load table ([`LOAD_TABLE`]) was written, so that it is dropped from a
    /// `--pg-url` server when the run ends.
    pub fn note_load_table(&self) {
        self.with_leftovers(|l| l.load_table = true);
    }

    fn with_leftovers(&self, f: impl FnOnce(&mut Leftovers)) {
        if self.external.is_some() {
            if let Ok(mut external) = EXTERNAL_LEFTOVERS.lock() {
                if let Some(leftovers) = external.get_mut(&self.port) {
                    f(leftovers);
                }
            }
        }
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `server_version_num`, e.g. 150020.
    pub fn version_num(&self) -> u32 {
        self.version_num
    }

    /// The cluster's directory (removed on drop).
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The temporary directory holding everything of this server.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether its postmaster runs.
    pub fn is_running(&self) -> bool {
        self.postmaster_pid().is_some_and(process_alive)
    }

    /// The postmaster's process id, from `postmaster.pid`, while it runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data_dir().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// A new client session (loopback, trust authentication, statement timeout set).
    pub fn connect(&self) -> Result<postgres::Client, String> {
        self.try_connect()
            .map_err(|e| format!("connect to 127.0.0.1:{}: {e}", self.port))
    }

    /// [`PgServer::connect`], with the client library's error: a rule that expects a refusal
    /// reads its SQLSTATE.
    pub fn try_connect(&self) -> Result<postgres::Client, postgres::Error> {
        if interrupted() {
            // The interrupt handler is dropping this run's objects: open nothing new.
            exit_interrupted();
        }
        if let Some(config) = &self.external {
            return config.connect(postgres::NoTls);
        }
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(CONNECT_TIMEOUT_S))
            .options(&format!("-c statement_timeout={STATEMENT_TIMEOUT_MS}"))
            .connect(postgres::NoTls)
    }

    /// A new client session on database `dbname` of a throwaway server.
    pub fn connect_db(&self, dbname: &str) -> Result<postgres::Client, String> {
        if !self.is_throwaway() {
            return Err(format!(
                "database {dbname} needs a throwaway server, not --pg-url"
            ));
        }
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user("postgres")
            .dbname(dbname)
            .connect_timeout(Duration::from_secs(CONNECT_TIMEOUT_S))
            .options(&format!("-c statement_timeout={STATEMENT_TIMEOUT_MS}"))
            .connect(postgres::NoTls)
            .map_err(|e| format!("connect to {dbname} on 127.0.0.1:{}: {e}", self.port))
    }

    /// The records starting in `start..end` of a throwaway server's WAL (`end` at or below the
    /// flush pointer), as `pg_waldump` prints them ([`WalReader::waldump`]).
    pub fn waldump(&self, start: Lsn, end: Lsn) -> Result<String, String> {
        self.wal_reader()
            .ok_or_else(|| "reading the WAL needs a throwaway server, not --pg-url".to_owned())?
            .waldump(start, end)
    }

    /// What reads this server's WAL: `pg_waldump` where the binaries have it, else
    /// `pg_walinspect` ([`WalReader`]); a throwaway server's only (a `--pg-url` server's files
    /// are not ours to read, nor its extensions ours to create).
    pub fn wal_reader(&self) -> Option<WalReader> {
        if !self.is_throwaway() {
            return None;
        }
        Some(if self.has_waldump() {
            WalReader::waldump_of(
                self.bindir.clone(),
                self.data_dir().join("pg_wal"),
                self.as_postgres,
            )
        } else {
            WalReader::walinspect(self.port)
        })
    }

    /// Whether its binaries have `pg_waldump` (Debian's do; the relocatable builds of other
    /// versions do not).
    fn has_waldump(&self) -> bool {
        self.bindir.join("pg_waldump").is_file()
    }

    /// Where a replication connection goes: the throwaway server as `postgres`, or the
    /// `--pg-url` server's host, port, user and database.
    pub fn replication_target(&self) -> crate::replication::Target {
        let (mut user, mut dbname) = ("postgres".to_owned(), "postgres".to_owned());
        let mut host = "127.0.0.1".to_owned();
        if let Some(config) = &self.external {
            if let Some(u) = config.get_user() {
                user = u.to_owned();
            }
            dbname = config
                .get_dbname()
                .map_or_else(|| user.clone(), str::to_owned);
            if let Some(postgres::config::Host::Tcp(h)) = config.get_hosts().first() {
                host = h.clone();
            }
        }
        crate::replication::Target {
            host,
            port: self.port,
            user,
            dbname,
        }
    }

    fn query_version(&self) -> Result<u32, String> {
        let mut client = self.connect()?;
        let row = client
            .query_one("SELECT current_setting('server_version_num')", &[])
            .map_err(|e| e.to_string())?;
        let text: String = row.get(0);
        text.parse()
            .map_err(|e| format!("server_version_num {text}: {}", pg_message(&e)))
    }

    /// `pg_ctl start -w`: loopback only, `wal_level = logical`, slots and senders for the tests,
    /// checkpoints only when asked (so that a slot's saved copy changes only where a test says).
    pub fn start(&self) -> Result<(), String> {
        let data = self.data_dir();
        let sock = self.root.join("sock");
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c wal_level=logical \
             -c max_replication_slots=8 -c max_wal_senders=8 -c checkpoint_timeout=1h \
             -c max_wal_size=4GB -c hot_standby_feedback=on",
            self.port,
            path_str(&sock)?
        );
        let log = self.root.join("server.log");
        let timeout = PG_CTL_TIMEOUT_S.to_string();
        let result = self.run(
            "pg_ctl",
            &[
                "-D",
                path_str(&data)?,
                "-l",
                path_str(&log)?,
                "-w",
                "-t",
                &timeout,
                "-o",
                &options,
                "start",
            ],
        );
        result.map(|_| ()).map_err(|e| {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            format!("{e}; server log ends: {}", tail.join(" | "))
        })
    }

    /// `pg_ctl stop -m MODE`.
    pub fn stop(&self, mode: &str) -> Result<(), String> {
        let data = self.data_dir();
        let timeout = PG_CTL_TIMEOUT_S.to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                path_str(&data)?,
                "-m",
                mode,
                "-w",
                "-t",
                &timeout,
                "stop",
            ],
        )
        .map(|_| ())
    }

    /// Immediate shutdown (no checkpoint, no slot save: a crash as far as slots go) and a restart.
    pub fn restart_immediate(&self) -> Result<(), String> {
        self.stop("immediate")?;
        self.start()
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<Output, String> {
        if !self.is_throwaway() {
            return Err(format!("{program} needs a throwaway server, not --pg-url"));
        }
        // pg_ctl's children keep the pipes open: the server's output goes to its log file.
        let out = pg_command(&self.bindir, self.as_postgres, program)
            .args(args)
            .output()
            .map_err(|e| format!("{program}: {}", pg_message(&e)))?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(format!(
                "{program} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if interrupted() {
            // The interrupt handler stops and removes everything, and then exits.
            exit_interrupted();
        }
        if !self.is_throwaway() {
            // A `--pg-url` server outlives the run: take away what the run left on it.
            let leftovers = EXTERNAL_LEFTOVERS
                .lock()
                .ok()
                .and_then(|mut e| e.remove(&self.port));
            if let Some(leftovers) = leftovers {
                remove_leftovers(&leftovers);
            }
            return;
        }
        if let Ok(mut live) = LIVE_SERVERS.lock() {
            live.retain(|(_, root, _)| *root != self.root);
        }
        if self.postmaster_pid().is_some() && self.stop("fast").is_err() {
            let _ = self.stop("immediate");
        }
        if let Some(pid) = self.postmaster_pid() {
            // Both stops failed: kill the postmaster so that nothing outlives the test.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .output();
            let deadline = Instant::now() + Duration::from_secs(5);
            while process_alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn path_str(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

/// Whether process `pid` runs (exists and is not a zombie: a stopped postmaster, daemonised by
/// `pg_ctl`, may wait as a zombie for a parent that reaps it late).
pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}
