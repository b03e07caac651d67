//! The two load ladders of OLake #1084's measurements (shared research, `olake-ladders.md`):
//! bulk `INSERT … SELECT` statements of growing size under synchronous commit, and 100-row
//! statements at growing rates under `synchronous_commit = off`.

use std::fmt;

use walcheck_model::pg::CommitMode;

use crate::params::Params;

/// Which ladder.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LadderKind {
    /// `INSERT … SELECT repeat('x',1000) FROM generate_series(1,N)` for N = 500 … 32,000, each
    /// committed synchronously, back to back.
    Sync,
    /// 100-row statements under `synchronous_commit = off` at 5 … 250 statements/s and
    /// unthrottled.
    Async,
}

impl LadderKind {
    /// Both, in report order.
    pub const ALL: [LadderKind; 2] = [LadderKind::Sync, LadderKind::Async];

    /// The name `--ladder` takes.
    pub const fn name(self) -> &'static str {
        match self {
            LadderKind::Sync => "sync",
            LadderKind::Async => "async",
        }
    }

    /// The ladders `--ladder NAME` selects (`both` selects both), or a one-line error.
    pub fn parse(name: &str) -> Result<Vec<LadderKind>, String> {
        match name {
            "sync" => Ok(vec![LadderKind::Sync]),
            "async" => Ok(vec![LadderKind::Async]),
            "both" => Ok(LadderKind::ALL.to_vec()),
            other => Err(format!(
                "unknown ladder {other:?}; ladders are sync, async and both"
            )),
        }
    }

    /// Its index in [`LadderKind::ALL`], part of every attempt's random stream.
    pub(crate) const fn index(self) -> u64 {
        match self {
            LadderKind::Sync => 0,
            LadderKind::Async => 1,
        }
    }

    /// One line saying what the ladder runs.
    pub const fn describe(self) -> &'static str {
        match self {
            LadderKind::Sync => {
                "bulk INSERT ... SELECT of N rows per statement, synchronous_commit = on, back to back"
            }
            LadderKind::Async => {
                "small statements under synchronous_commit = off, the client sleeping 1/rate after each"
            }
        }
    }

    /// The ladder's levels with `params`' row size.
    pub fn levels(self, params: &Params) -> Vec<Level> {
        match self {
            LadderKind::Sync => SYNC_ROWS
                .iter()
                .map(|&rows| Level {
                    label: format!("{rows} rows"),
                    rows,
                    wal_bytes: rows * params.row_wal_bytes,
                    commit: CommitMode::Sync,
                    rate_per_s: None,
                })
                .collect(),
            LadderKind::Async => ASYNC_RATES
                .iter()
                .map(|&rate| Level {
                    label: rate.map_or_else(|| "unthrottled".to_owned(), |r| format!("{r} stmt/s")),
                    rows: params.async_rows,
                    wal_bytes: params.async_rows * params.row_wal_bytes,
                    commit: CommitMode::Async,
                    rate_per_s: rate,
                })
                .collect(),
        }
    }
}

impl fmt::Display for LadderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Rows per statement of the sync ladder, as #1084 measured them.
pub const SYNC_ROWS: [u64; 7] = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000];

/// Target statements/s of the async ladder, as #1084 measured them; `None` is unthrottled.
pub const ASYNC_RATES: [Option<u64>; 7] = [
    Some(5),
    Some(10),
    Some(25),
    Some(50),
    Some(100),
    Some(250),
    None,
];

/// OLake #1084's own measurements with the fixed code, per level: (bootstraps whose target was
/// ahead of flush when read, bootstraps). Shared research `olake-ladders.md`; where the PR gives
/// a range of bootstraps, the smaller count.
pub const fn measured_write_ahead(kind: LadderKind) -> [(u64, u64); 7] {
    match kind {
        LadderKind::Sync => [
            (0, 218),
            (0, 82),
            (0, 82),
            (19, 75),
            (23, 55),
            (14, 31),
            (13, 20),
        ],
        LadderKind::Async => [
            (46, 183),
            (79, 175),
            (90, 97),
            (56, 101),
            (73, 131),
            (107, 156),
            (30, 44),
        ],
    }
}

/// One level of a ladder: the statements the client runs throughout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// `4000 rows`, `25 stmt/s`, `unthrottled`.
    pub label: String,
    /// Rows per statement.
    pub rows: u64,
    /// WAL per statement's rows, in bytes (the commit record aside).
    pub wal_bytes: u64,
    pub commit: CommitMode,
    /// The client's target rate: it sleeps `1 s / rate` after each statement; `None` runs
    /// statements back to back.
    pub rate_per_s: Option<u64>,
}

impl Level {
    /// The label as a file-name part: `4000-rows`, `25-stmt-per-s`.
    pub fn slug(&self) -> String {
        self.label.replace("/s", "-per-s").replace(' ', "-")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladders_are_1084s() {
        let p = Params::default();
        let sync = LadderKind::Sync.levels(&p);
        assert_eq!(sync.len(), 7);
        assert_eq!(sync[3].label, "4000 rows");
        assert_eq!(sync[3].wal_bytes, 4_600_000);
        let asynchronous = LadderKind::Async.levels(&p);
        assert_eq!(asynchronous[0].label, "5 stmt/s");
        assert_eq!(asynchronous[0].slug(), "5-stmt-per-s");
        assert_eq!(asynchronous[6].rate_per_s, None);
        assert!(asynchronous.iter().all(|l| l.commit == CommitMode::Async));
        assert!(LadderKind::parse("sideways")
            .unwrap_err()
            .starts_with("unknown ladder"));
        assert_eq!(LadderKind::parse("both").unwrap().len(), 2);
    }
}
