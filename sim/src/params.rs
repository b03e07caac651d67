//! The simulation's parameters: PostgreSQL's settings, the workload's timing, the connector's
//! latencies. Each has a default (PostgreSQL's own default where there is one, otherwise a value
//! fitted to OLake #1084's measurements), a range, a unit, and the values swarm mode draws from.

use std::fmt::Write as _;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// One parameter as the command line and reports show it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The name in JSON and in [`Params::set`], e.g. `wal_buffers_bytes`.
    pub name: &'static str,
    /// The command-line flag without its dashes, e.g. `wal-buffers-bytes`.
    pub flag: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
    /// `bytes`, `us`, `rows`, `rows/s` or `%`.
    pub unit: &'static str,
    /// One line: what it is and where its default comes from.
    pub doc: &'static str,
    /// The values swarm mode draws from (a parameter given on the command line is not drawn;
    /// none: swarm mode keeps the value it was given).
    pub swarm: &'static [u64],
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// Every parameter, in report order.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "page_bytes",
        flag: "page-bytes",
        default: 8192,
        min: 1024,
        max: 32768,
        unit: "bytes",
        doc: "WAL page size, XLOG_BLCKSZ (a power of two; PostgreSQL's build default 8192)",
        swarm: &[8192],
    },
    ParamInfo {
        name: "wal_buffers_bytes",
        flag: "wal-buffers-bytes",
        default: 4 * MIB,
        min: 4 * 1024,
        max: 1 << 31,
        unit: "bytes",
        doc: "wal_buffers, a whole number of pages, at least 4 (PostgreSQL 15's default with shared_buffers >= 128 MB: 4 MiB)",
        swarm: &[64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB],
    },
    ParamInfo {
        name: "wal_writer_delay_us",
        flag: "wal-writer-delay-us",
        default: 200_000,
        min: 1_000,
        max: 10_000_000,
        unit: "us",
        doc: "wal_writer_delay (PostgreSQL: 1 ms to 10 s, default 200 ms)",
        swarm: &[10_000, 50_000, 200_000, 1_000_000, 10_000_000],
    },
    ParamInfo {
        name: "wal_writer_flush_after_bytes",
        flag: "wal-writer-flush-after-bytes",
        default: MIB,
        min: 0,
        max: 1 << 31,
        unit: "bytes",
        doc: "wal_writer_flush_after (default 128 pages = 1 MiB; 0 flushes at every write)",
        swarm: &[0, 64 * KIB, MIB, 8 * MIB],
    },
    ParamInfo {
        name: "fsync_latency_us",
        flag: "fsync-latency-us",
        default: 2_000,
        min: 1,
        max: 10_000_000,
        unit: "us",
        doc: "how long a synchronous commit's XLogFlush (write and fsync) takes; fitted to #1084's rows/s on local NVMe",
        swarm: &[50, 500, 2_000, 10_000],
    },
    ParamInfo {
        name: "row_wal_bytes",
        flag: "row-wal-bytes",
        default: 1_150,
        min: 1,
        max: MIB,
        unit: "bytes",
        doc: "WAL of one row of repeat('x',1000): heap insert record plus index entry; #1084's 385,064-byte gap at 4,000 rows needs >= 1,145",
        swarm: &[100, 500, 1_150, 4_000],
    },
    ParamInfo {
        name: "chunk_rows",
        flag: "chunk-rows",
        default: 100,
        min: 1,
        max: 1_000,
        unit: "rows",
        doc: "rows a running statement inserts per simulated step (the granularity of buffer-pressure writes)",
        swarm: &[10, 100],
    },
    ParamInfo {
        name: "rows_per_s",
        flag: "rows-per-s",
        default: 250_000,
        min: 1,
        max: 100_000_000,
        unit: "rows/s",
        doc: "how fast a running statement inserts rows; fitted to #1084's achieved rows/s",
        swarm: &[20_000, 100_000, 250_000, 1_000_000],
    },
    ParamInfo {
        name: "statement_gap_us",
        flag: "statement-gap-us",
        default: 850,
        min: 0,
        max: 10_000_000,
        unit: "us",
        doc: "the client's round trip between statements; fitted to #1084's ~801 unthrottled statements/s",
        swarm: &[100, 850, 5_000],
    },
    ParamInfo {
        name: "commit_record_bytes",
        flag: "commit-record-bytes",
        default: 40,
        min: 1,
        max: MIB,
        unit: "bytes",
        doc: "WAL of a commit record (XLogRecord 24 + header 2 + xl_xact_commit 8, MAXALIGNed)",
        swarm: &[40],
    },
    ParamInfo {
        name: "async_rows",
        flag: "async-rows",
        default: 100,
        min: 1,
        max: 1_000_000,
        unit: "rows",
        doc: "rows per statement of the async ladder (#1084: 100, ~100 KB)",
        swarm: &[1, 10, 100, 1_000],
    },
    ParamInfo {
        name: "connector_step_us",
        flag: "connector-step-us",
        default: 1_000,
        min: 1,
        max: 10_000_000,
        unit: "us",
        doc: "the connector's latency between two of its steps (a query round trip, a state-file write)",
        swarm: &[100, 1_000, 10_000],
    },
    ParamInfo {
        name: "retry_delay_us",
        flag: "retry-delay-us",
        default: 100_000,
        min: 1,
        max: 60_000_000,
        unit: "us",
        doc: "pr1084's sleep between advances that stopped short (AdvanceLSN: 100 ms)",
        swarm: &[100_000],
    },
    ParamInfo {
        name: "advance_timeout_us",
        flag: "advance-timeout-us",
        default: 30_000_000,
        min: 1,
        max: 600_000_000,
        unit: "us",
        doc: "pr1084's deadline for the slot to confirm the target (AdvanceLSN: context.WithTimeout 30 s)",
        swarm: &[30_000_000],
    },
    ParamInfo {
        name: "warmup_us",
        flag: "warmup-us",
        default: 400_000,
        min: 1,
        max: 600_000_000,
        unit: "us",
        doc: "workload before a bootstrap; it starts at a uniform instant in [warmup, 2 x warmup)",
        swarm: &[400_000, 2_000_000],
    },
    ParamInfo {
        name: "jitter_pct",
        flag: "jitter-pct",
        default: 10,
        min: 0,
        max: 90,
        unit: "%",
        doc: "every latency and duration is drawn uniformly within +/- this share of its value",
        swarm: &[0, 10, 50],
    },
    ParamInfo {
        name: "wal_init_us",
        flag: "wal-init-us",
        default: 0,
        min: 0,
        max: 10_000_000,
        unit: "us",
        doc: "creating a WAL segment no checkpoint recycled (XLogFileInit: 16 MB of zeros, then fsync) on the write that reaches it; 0: segments are recycled, as on a server checkpointing every few seconds",
        swarm: &[],
    },
    ParamInfo {
        name: "decode_bytes_per_s",
        flag: "decode-bytes-per-s",
        default: 0,
        min: 0,
        max: 1 << 40,
        unit: "bytes/s",
        doc: "how fast an advance decodes the WAL from the slot's restart_lsn (fast-forward); 0: instantly",
        swarm: &[],
    },
    ParamInfo {
        name: "wake_latency_us",
        flag: "wake-latency-us",
        default: 0,
        min: 0,
        max: 1_000_000,
        unit: "us",
        doc: "how late a sleeping process runs after its timer or latch fires, drawn from 0 to this (scheduling on a busy machine); 0: at once",
        swarm: &[],
    },
    ParamInfo {
        name: "preempt_pct",
        flag: "preempt-pct",
        default: 0,
        min: 0,
        max: 100,
        unit: "%",
        doc: "the share of client statements and walwriter wake-ups that other work on the machine holds up (a busy machine's run queue)",
        swarm: &[],
    },
    ParamInfo {
        name: "preempt_us",
        flag: "preempt-us",
        default: 0,
        min: 0,
        max: 10_000_000,
        unit: "us",
        doc: "how long such a statement or wake-up is held up, drawn from 0 to this",
        swarm: &[],
    },
];

/// The parameters of a simulation. Sizes in bytes, times in microseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    pub page_bytes: u64,
    pub wal_buffers_bytes: u64,
    pub wal_writer_delay_us: u64,
    pub wal_writer_flush_after_bytes: u64,
    pub fsync_latency_us: u64,
    pub row_wal_bytes: u64,
    pub chunk_rows: u64,
    pub rows_per_s: u64,
    pub statement_gap_us: u64,
    pub commit_record_bytes: u64,
    pub async_rows: u64,
    pub connector_step_us: u64,
    pub retry_delay_us: u64,
    pub advance_timeout_us: u64,
    pub warmup_us: u64,
    pub jitter_pct: u64,
    pub wal_init_us: u64,
    pub decode_bytes_per_s: u64,
    pub wake_latency_us: u64,
    pub preempt_pct: u64,
    pub preempt_us: u64,
}

impl Default for Params {
    fn default() -> Self {
        let mut params = Params {
            page_bytes: 0,
            wal_buffers_bytes: 0,
            wal_writer_delay_us: 0,
            wal_writer_flush_after_bytes: 0,
            fsync_latency_us: 0,
            row_wal_bytes: 0,
            chunk_rows: 0,
            rows_per_s: 0,
            statement_gap_us: 0,
            commit_record_bytes: 0,
            async_rows: 0,
            connector_step_us: 0,
            retry_delay_us: 0,
            advance_timeout_us: 0,
            warmup_us: 0,
            jitter_pct: 0,
            wal_init_us: 0,
            decode_bytes_per_s: 0,
            wake_latency_us: 0,
            preempt_pct: 0,
            preempt_us: 0,
        };
        for info in PARAMS {
            *params.field(info.name) = info.default;
        }
        params
    }
}

/// The named parameter sets `--params-set` takes.
pub const PARAMS_SETS: [&str; 2] = ["olake", "this-machine"];

/// PostgreSQL 15 `guc.c`: `wal_buffers` is at most INT_MAX / XLOG_BLCKSZ pages.
const WAL_BUFFERS_PAGES_MAX: u64 = (i32::MAX as u64) / 8192;

impl Params {
    fn field(&mut self, name: &str) -> &mut u64 {
        match name {
            "page_bytes" => &mut self.page_bytes,
            "wal_buffers_bytes" => &mut self.wal_buffers_bytes,
            "wal_writer_delay_us" => &mut self.wal_writer_delay_us,
            "wal_writer_flush_after_bytes" => &mut self.wal_writer_flush_after_bytes,
            "fsync_latency_us" => &mut self.fsync_latency_us,
            "row_wal_bytes" => &mut self.row_wal_bytes,
            "chunk_rows" => &mut self.chunk_rows,
            "rows_per_s" => &mut self.rows_per_s,
            "statement_gap_us" => &mut self.statement_gap_us,
            "commit_record_bytes" => &mut self.commit_record_bytes,
            "async_rows" => &mut self.async_rows,
            "connector_step_us" => &mut self.connector_step_us,
            "retry_delay_us" => &mut self.retry_delay_us,
            "advance_timeout_us" => &mut self.advance_timeout_us,
            "warmup_us" => &mut self.warmup_us,
            "jitter_pct" => &mut self.jitter_pct,
            "wal_init_us" => &mut self.wal_init_us,
            "decode_bytes_per_s" => &mut self.decode_bytes_per_s,
            "wake_latency_us" => &mut self.wake_latency_us,
            "preempt_pct" => &mut self.preempt_pct,
            "preempt_us" => &mut self.preempt_us,
            other => unreachable!("parameter {other} is listed but has no field"),
        }
    }

    /// The parameter set `name` ([`PARAMS_SETS`]), or a one-line error.
    pub fn named(name: &str) -> Result<Params, String> {
        match name {
            "olake" => Ok(Params::default()),
            "this-machine" => Ok(Params::this_machine()),
            other => Err(format!(
                "no parameter set {other:?}; the sets are {}",
                PARAMS_SETS.join(", ")
            )),
        }
    }

    /// The server `walcheck live ladder` starts on this project's machine (PostgreSQL 15.18,
    /// Debian 12, 2 cores shared with other work, a virtual disk; `checkpoint_timeout` 1 h and
    /// `max_wal_size` 4 GB, so no checkpoint recycles a WAL segment during a run), as measured on
    /// 2 December 2026 (docs/live.md, "What the live ladder measures"):
    /// - `row_wal_bytes` 1,067: `pg_current_wal_insert_lsn()` before and after each statement,
    ///   1,067.1 to 1,069.0 bytes a row at 500 to 32,000 rows (the load table has no index);
    /// - `fsync_latency_us` 3,000: `strace -T` of the walwriter under the async ladder's load,
    ///   `fdatasync` after writing 0.1 to 1 MB of WAL: median 2.6 to 2.9 ms (10th percentile
    ///   0.8, 90th 5.6 to 8.9); the backend's after a 3 MB commit: 2.9 to 11 ms; `pg_test_fsync`:
    ///   3.4 ms for one 8 kB write;
    /// - `wal_init_us` 60,000: creating a 16 MB segment as `XLogFileInitInternal` does
    ///   (`dd bs=8k count=2048 conv=fsync`) took 46 to 196 ms, median 72;
    /// - `decode_bytes_per_s` 1,300,000,000: `pg_replication_slot_advance` over 5 to 400 MB of
    ///   the async ladder's WAL, already flushed, ran at 1.1 to 1.7 GB/s;
    /// - `connector_step_us` 300: the bootstrap's query round trip, median 0.18 ms, 90th
    ///   percentile 0.3 ms;
    /// - `rows_per_s` 100,000, `preempt_pct` 30 and `preempt_us` 6,000: a 100-row statement
    ///   took 0.5 to 9 ms, median 1.1 to 1.2 ms, 90th percentile 4.5 to 5.2 ms (the walwriter,
    ///   a process on the same machine, is taken to wake as late);
    /// - `statement_gap_us` 300: the load's round trip between statements;
    /// - `wake_latency_us` 150: a 5 ms sleep overshot by about 0.1 ms;
    /// - `advance_timeout_us` 2,000,000: the live ladder's deadline for #1084's retries.
    pub fn this_machine() -> Params {
        Params {
            row_wal_bytes: 1_067,
            fsync_latency_us: 3_000,
            wal_init_us: 60_000,
            decode_bytes_per_s: 1_300_000_000,
            connector_step_us: 300,
            rows_per_s: 100_000,
            preempt_pct: 30,
            preempt_us: 6_000,
            statement_gap_us: 300,
            wake_latency_us: 150,
            advance_timeout_us: 2_000_000,
            ..Params::default()
        }
    }

    /// The value of parameter `name` (one of [`PARAMS`]).
    pub fn get(&self, name: &str) -> u64 {
        let mut copy = *self;
        *copy.field(name)
    }

    /// Every parameter with its value, in [`PARAMS`] order.
    pub fn values(&self) -> Vec<(&'static ParamInfo, u64)> {
        PARAMS.iter().map(|p| (p, self.get(p.name))).collect()
    }

    /// Sets parameter `name` from its command-line text, or says in one line why not: an unknown
    /// name, text that is not a whole number (a negative size among them), a value out of range.
    pub fn set(&mut self, name: &str, text: &str) -> Result<(), String> {
        let info = PARAMS.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<_> = PARAMS.iter().map(|p| p.name).collect();
            format!(
                "no simulation parameter {name:?}; they are {}",
                names.join(", ")
            )
        })?;
        let text = text.trim();
        let range = || {
            format!(
                "--{} takes a whole number of {} from {} to {}, not {text:?}",
                info.flag,
                unit_words(info.unit),
                info.min,
                info.max
            )
        };
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(range());
        }
        let value: u64 = text.parse().map_err(|_| range())?;
        if value < info.min || value > info.max {
            return Err(range());
        }
        *self.field(name) = value;
        Ok(())
    }

    /// Checks what single ranges cannot: page size a power of two, `wal_buffers` a whole number
    /// of pages within PostgreSQL's limits, a chunk of rows within what the model takes.
    pub fn validate(&self) -> Result<(), String> {
        for info in PARAMS {
            let value = self.get(info.name);
            if value < info.min || value > info.max {
                return Err(format!(
                    "--{} takes {} to {} {}, not {value}",
                    info.flag, info.min, info.max, info.unit
                ));
            }
        }
        if !self.page_bytes.is_power_of_two() {
            return Err(format!(
                "--page-bytes must be a power of two (XLOG_BLCKSZ), not {}",
                self.page_bytes
            ));
        }
        let pages = self.wal_buffers_bytes / self.page_bytes;
        if self.wal_buffers_bytes % self.page_bytes != 0
            || !(4..=WAL_BUFFERS_PAGES_MAX).contains(&pages)
        {
            return Err(format!(
                "--wal-buffers-bytes must be a whole number of {}-byte pages from 4 to {WAL_BUFFERS_PAGES_MAX} (PostgreSQL's limits), not {}",
                self.page_bytes, self.wal_buffers_bytes
            ));
        }
        if self.chunk_rows * self.row_wal_bytes > 1 << 30 {
            return Err(format!(
                "--chunk-rows x --row-wal-bytes must be at most 1 GiB, not {}",
                self.chunk_rows * self.row_wal_bytes
            ));
        }
        Ok(())
    }

    /// The flags that set every parameter differing from its default, e.g.
    /// `--wal-buffers-bytes 1048576`, for a command that runs the same simulation again.
    pub fn non_default_flags(&self) -> String {
        let mut flags = String::new();
        for (info, value) in self.values() {
            if value != info.default {
                let _ = write!(flags, " --{} {value}", info.flag);
            }
        }
        flags
    }

    /// Swarm mode: these parameters with every one not in `fixed` drawn from its
    /// [`ParamInfo::swarm`] values by `rng`, in [`PARAMS`] order; redrawn (a bounded number of
    /// times) until they validate.
    pub fn drawn(&self, fixed: &[&str], rng: &mut ChaCha8Rng) -> Params {
        for _ in 0..64 {
            let mut params = *self;
            for info in PARAMS {
                if !fixed.contains(&info.name) && !info.swarm.is_empty() {
                    // Drawn as u64, not usize: the same draw on 32- and 64-bit machines.
                    let choice = rng.random_range(0..info.swarm.len() as u64) as usize;
                    *params.field(info.name) = info.swarm[choice];
                }
            }
            if params.validate().is_ok() {
                return params;
            }
        }
        *self
    }
}

/// `bytes` → "bytes", `us` → "microseconds", for one-line errors.
fn unit_words(unit: &str) -> &str {
    match unit {
        "us" => "microseconds",
        "bytes/s" => "bytes per second",
        "%" => "percent",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn defaults_are_postgresqls_and_validate() {
        let p = Params::default();
        assert_eq!(p.wal_buffers_bytes, 4 * 1024 * 1024);
        assert_eq!(p.wal_writer_delay_us, 200_000);
        assert_eq!(p.wal_writer_flush_after_bytes, 1024 * 1024);
        assert_eq!(p.retry_delay_us, 100_000);
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.non_default_flags(), "");
    }

    #[test]
    fn bad_values_are_one_line_errors() {
        let mut p = Params::default();
        for (name, text, expected) in [
            (
                "wal_buffers_bytes",
                "-4096",
                "--wal-buffers-bytes takes a whole number of bytes",
            ),
            (
                "wal_writer_delay_us",
                "0",
                "--wal-writer-delay-us takes a whole number of microseconds from 1000",
            ),
            (
                "jitter_pct",
                "200",
                "--jitter-pct takes a whole number of percent",
            ),
            ("rows_per_s", "fast", "--rows-per-s takes a whole number"),
            ("no_such", "1", "no simulation parameter \"no_such\""),
        ] {
            let err = p.set(name, text).unwrap_err();
            assert!(err.starts_with(expected), "{err}");
            assert_eq!(err.lines().count(), 1);
        }
        assert_eq!(p, Params::default());
        p.set("wal_buffers_bytes", "10000").unwrap();
        assert!(p
            .validate()
            .unwrap_err()
            .contains("whole number of 8192-byte pages"));
        p.set("wal_buffers_bytes", "1048576").unwrap();
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.non_default_flags(), " --wal-buffers-bytes 1048576");
        p.set("page_bytes", "3000").unwrap();
        assert!(p.validate().unwrap_err().contains("power of two"));
    }

    #[test]
    fn swarm_draws_are_seeded_and_keep_fixed_values() {
        let base = Params {
            wal_buffers_bytes: 8 * 1024 * 1024,
            ..Params::default()
        };
        let draw = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            base.drawn(&["wal_buffers_bytes"], &mut rng)
        };
        assert_eq!(draw(3), draw(3));
        assert!((0..20).all(|s| draw(s).wal_buffers_bytes == 8 * 1024 * 1024));
        assert!((0..20).any(|s| draw(s) != draw(0)));
        assert!((0..20).all(|s| draw(s).validate().is_ok()));
    }
}
