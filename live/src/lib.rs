//! The live PostgreSQL backend: throwaway servers, a bounded load generator, sessions that record
//! observed traces, one conformance check per modelled rule, and the live ladder.
//!
//! A crate of its own, apart from the simulator (`walcheck-sim`), so that the loom build of the
//! simulator's reference implementations never compiles the `postgres` client. Everything here
//! measures a real server: its figures are measurements, not deterministic results.

pub mod conformance;
pub mod durability;
pub mod failover;
mod interrupt;
pub mod ladder;
pub mod lifecycle;
pub mod load;
pub mod pg_error;
pub mod protocol;
pub mod replication;
mod rules;
pub mod server;
pub mod session;
pub mod versions;
pub mod wal_reader;
pub mod waldump;

pub use conformance::{Outcome, Rule, RULES};
pub use server::{find_bindir, pg_required, PgServer};
pub use versions::{find_version_bindir, AskedVersion};
