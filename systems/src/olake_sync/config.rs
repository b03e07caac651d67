//! System `olake-sync`: its configuration: fault sets, bounds and knobs, and the typed configuration the model reads.

use crate::olake_bootstrap::{Faults, INITIAL_LSN};
use walcheck_model::olake::sync::SyncVariant;
use walcheck_model::pg::txn::{maxalign, COMMIT_RECORD_BYTES};
use walcheck_model::pg::{CommitMode, Txn, Wal};
use walcheck_properties::system::choice;
use walcheck_properties::system::{number, BoundInfo};

/// The first transaction's xid (`FirstNormalTransactionId`, `access/transam.h`); xids show
/// nowhere, they only tell the transactions apart.
const FIRST_XID: u32 = 3;

/// The bounds and knobs, with defaults and ranges (`walcheck list`).
pub const BOUNDS: &[BoundInfo] = &[
    choice(
        "keepalive",
        "off",
        &["off", "on"],
        "switch",
        "whether the walsender's keepalives (ServerWALEnd = sentPtr) reach the stream loop; \
              `check` without --bound keepalive= runs both",
    ),
    number(
        "txns",
        2,
        0,
        6,
        "transactions",
        "client transactions on the published table in the whole run (one change each)",
    ),
    number(
        "txn_bytes",
        8192,
        1,
        1 << 20,
        "bytes",
        "WAL of one transaction, committed synchronously",
    ),
    number(
        "syncs",
        2,
        1,
        4,
        "runs",
        "connector runs: syncs and restarts after a crash",
    ),
    number(
        "crashes",
        1,
        0,
        2,
        "crashes",
        "faults injected in all (connector and PostgreSQL together)",
    ),
];

/// The system's typed configuration: variant, faults, knobs and bounds (see [`BOUNDS`]), as
/// [`OlakeSyncSystem`](super::OlakeSyncSystem)'s `config` reads them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: SyncVariant,
    pub faults: Faults,
    /// Whether keepalives reach the stream loop (default off).
    pub keepalive: bool,
    /// Client transactions in the whole run (default 2, at most 6).
    pub txns: u8,
    /// WAL of one transaction, in bytes (default 8192).
    pub txn_bytes: u64,
    /// Connector runs, restarts included (default 2).
    pub syncs: u8,
    /// Faults injected in all (default 1).
    pub crashes: u8,
}

impl Config {
    /// `variant` with `faults` and every bound at its default.
    pub const fn new(variant: SyncVariant, faults: Faults) -> Config {
        Config {
            variant,
            faults,
            keepalive: false,
            txns: 2,
            txn_bytes: 8192,
            syncs: 2,
            crashes: 1,
        }
    }

    /// The bytes of one transaction's change records: `txn_bytes` less its commit record
    /// ([`COMMIT_RECORD_BYTES`], 48 bytes with its alignment).
    pub fn change_bytes(&self) -> u64 {
        self.txn_bytes.saturating_sub(maxalign(COMMIT_RECORD_BYTES))
    }

    /// Transaction `txn` (from 0) as the WAL holds it: the last of `txn + 1` transactions
    /// committed synchronously back to back from [`INITIAL_LSN`] by [`Wal::commit_txn`], each of
    /// [`Config::change_bytes`] and a commit record, one published row each. Its `end_lsn` is
    /// `INITIAL_LSN + (txn + 1) · txn_bytes` when `txn_bytes` is a multiple of 8 (`MAXALIGN`)
    /// and at least 56; otherwise the records' alignment rounds each transaction up.
    pub fn txn(&self, txn: u8) -> Txn {
        let mut wal = Wal::at(INITIAL_LSN);
        let commit = |wal: &mut Wal, i: u8| {
            let xid = FIRST_XID + u32::from(i);
            wal.commit_txn(
                xid,
                self.change_bytes(),
                COMMIT_RECORD_BYTES,
                1,
                CommitMode::Sync,
            )
        };
        (0..txn).for_each(|i| {
            commit(&mut wal, i);
        });
        commit(&mut wal, txn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::olake_bootstrap::Faults;

    /// The default 8192-byte transactions are 8144 bytes of changes and a commit record: each
    /// ends 8192 bytes after the previous one, starting from the bootstrap's LSN.
    #[test]
    fn transactions_end_every_txn_bytes_from_the_initial_lsn() {
        let config = Config::new(SyncVariant::Master, Faults::None);
        assert_eq!(config.change_bytes(), 8144);
        for i in 0..6 {
            let txn = config.txn(i);
            assert_eq!(txn.end_lsn, INITIAL_LSN.plus((u64::from(i) + 1) * 8192));
            assert_eq!(txn.commit_lsn, txn.end_lsn.minus(48));
            assert!(txn.is_published());
        }
    }

    /// A size the records cannot have is rounded up to whole aligned records.
    #[test]
    fn odd_sizes_round_up_to_aligned_records() {
        let mut config = Config::new(SyncVariant::Master, Faults::None);
        config.txn_bytes = 100;
        assert_eq!(config.txn(0).end_lsn, INITIAL_LSN.plus(56 + 48));
        config.txn_bytes = 1;
        assert_eq!(config.txn(1).end_lsn, INITIAL_LSN.plus(2 * (8 + 48)));
    }
}
