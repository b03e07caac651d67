//! System `olake-sync`: its configuration: fault sets, bounds and knobs, and the typed configuration the model reads.

use crate::olake_bootstrap::{Faults, INITIAL_LSN};
use walcheck_model::olake::sync::SyncVariant;
use walcheck_model::Lsn;
use walcheck_properties::system::choice;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::{number, BoundInfo};

/// `wal_buffers` of the model's server: large enough that a transaction never waits for it.
pub(super) const WAL_BUFFERS_BYTES: u64 = 4 * 1024 * 1024;

/// `XLOG_BLCKSZ`, PostgreSQL's default WAL page.
pub(super) const PAGE_BYTES: u64 = 8192;

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

/// The system's configuration: variant, faults, knobs and bounds (see [`BOUNDS`]).
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
    /// The typed form of a configuration the catalogue validated against [`INFO`].
    pub fn of(config: &GenericConfig) -> Config {
        Config {
            variant: SyncVariant::from_name(config.variant).expect("a variant of INFO"),
            faults: Faults::from_name(config.faults).expect("a fault set of INFO"),
            keepalive: config.name("keepalive") == "on",
            txns: config.small("txns"),
            txn_bytes: config.number("txn_bytes"),
            syncs: config.small("syncs"),
            crashes: config.small("crashes"),
        }
    }

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

    /// Where transaction `txn` (from 0) ends: its commit record's end, in LSN bytes.
    pub fn txn_end(&self, txn: u8) -> Lsn {
        INITIAL_LSN.plus((u64::from(txn) + 1) * self.txn_bytes)
    }
}
