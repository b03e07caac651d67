//! PostgreSQL 15's WAL pointers, logical slots and server life cycle, as pure functions.
//!
//! Every function here names the PostgreSQL source it models. Sizes are bytes; the checker moves
//! the pointers in whole WAL pages, the simulator in bytes.

pub mod decoding;
pub mod failover;
pub mod lifecycle;
pub mod server;
pub mod slot;
pub mod stream;
pub mod txn;
pub mod version;
pub mod wal;

pub use decoding::{DurableSlot, Persistence, SqlChanges, SqlDecode};
pub use server::{Role, Server, WalFunctionError};
pub use slot::{advance_read_end, advance_waits, AdvanceError, RestartLanding, SavedSlot, Slot};
pub use stream::{Keepalive, PgOutput, StandbyStatusUpdate, TxnPart, Walsender, XLogData};
pub use txn::{running_xacts_restart, OpenTxn, Txn};
pub use version::PgVersion;
pub use wal::{CommitMode, Wal};
