//! The ReplicationClient's acknowledgements and PostgreSQL's slot: Electric
//! `postgres/replication_client.ex` at 1.4.15 (`64a89a05f`) and HEAD (`dc07a1e6c`, #4731).
//!
//! LSNs here are transaction numbers: transaction `t` commits at LSN `t`, `0` is before the first
//! (`0/0`). PostgreSQL's side (the walsender's `sentPtr`, the slot taking a status update) is
//! the PostgreSQL model's own rules, called with these numbers ([`crate::WalPosition`]).

use serde::{Deserialize, Serialize};

use crate::pg::stream::{confirmed_flush_after_reply, sent_ptr_after_read};
use crate::pg::StandbyStatusUpdate;

use super::Inline;

/// The client's WAL positions and the slot's `confirmed_flush` they lead to.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReplicationClient {
    pub received_wal: u8,
    pub flushed_wal: u8,
    pub last_seen_txn_lsn: u8,
    /// HEAD: the highest LSN the tracker confirmed.
    pub last_confirmed_flush_lsn: u8,
    pub flush_up_to_date: bool,
    /// The message converter is inside a transaction (a non-commit fragment was the last).
    pub in_transaction: bool,
    /// `{:flush_boundary_updated, lsn}` messages not yet handled.
    pub mailbox: Inline<u8, 4>,
    /// PostgreSQL's end of WAL as the walsender reports it: its `sentPtr`, the end of the last
    /// transaction it sent, which keepalives carry as `ServerWALEnd`.
    pub wal_end: u8,
    /// The slot's `confirmed_flush`: the furthest flush position of the standby status updates.
    pub confirmed_flush: u8,
}

impl ReplicationClient {
    /// A client connected to a quiet server: up to date.
    pub fn new() -> ReplicationClient {
        ReplicationClient {
            flush_up_to_date: true,
            ..ReplicationClient::default()
        }
    }

    /// PostgreSQL sends a fragment of transaction `tx`: the walsender has read it through its
    /// commit record, so `sentPtr` is its end ([`sent_ptr_after_read`], PostgreSQL 15
    /// `walsender.c:XLogSendLogical`). Transactions arrive in commit order (a repeated unrelated
    /// one keeps its number), so `wal_end` never goes back.
    pub fn wal_written(&mut self, tx: u8) {
        debug_assert!(tx >= self.wal_end, "tx {tx} sent after {}", self.wal_end);
        self.wal_end = sent_ptr_after_read(tx);
    }

    /// After the fragment's publish returns (`handle_data`, l.400-455):
    /// `maybe_update_flush_up_to_date` clears the flag inside a transaction; a commit's
    /// `acknowledge_transaction` sets `last_seen_txn_lsn` and `received_wal` and sends a status
    /// update. HEAD derives the flag from `last_confirmed_flush_lsn == last_seen_txn_lsn` (#4731).
    pub fn after_fragment(&mut self, guarded: bool, tx: u8, commit: bool) {
        self.in_transaction = !commit;
        if self.in_transaction && !guarded {
            self.flush_up_to_date = false;
        }
        if commit {
            self.last_seen_txn_lsn = tx;
            self.received_wal = self.received_wal.max(tx);
        }
        if guarded {
            self.flush_up_to_date = self.last_confirmed_flush_lsn == self.last_seen_txn_lsn;
        }
        self.status_update();
    }

    /// `handle_info({:flush_boundary_updated, lsn})` (l.274-288): the tracker confirmed `lsn`. At
    /// the last seen transaction the client is up to date and acknowledges all it received;
    /// otherwise it acknowledges `lsn`.
    pub fn flush_boundary_updated(&mut self, guarded: bool, lsn: u8) {
        let up_to_date = if guarded {
            self.last_confirmed_flush_lsn = self.last_confirmed_flush_lsn.max(lsn);
            self.flush_up_to_date = self.last_confirmed_flush_lsn == self.last_seen_txn_lsn;
            self.flush_up_to_date
        } else {
            lsn == self.last_seen_txn_lsn
        };
        if up_to_date {
            self.flush_up_to_date = true;
            self.flushed_wal = self.received_wal;
            self.received_wal = self.received_wal.max(lsn);
        } else {
            self.flushed_wal = self.flushed_wal.max(lsn);
        }
        self.status_update();
    }

    /// A primary keepalive outside a transaction (l.349-378, `update_stored_wals` l.521-535):
    /// its `ServerWALEnd` is the walsender's `sentPtr`, `wal_end` (PostgreSQL 15
    /// `walsender.c:WalSndKeepalive`, [`crate::pg::Walsender::keepalive`]); `received_wal` moves
    /// to it, and so does `flushed_wal` if the client is up to date.
    /// Returns whether anything moved.
    pub fn keepalive(&mut self, guarded: bool) -> bool {
        if self.in_transaction {
            return false;
        }
        let before = (self.received_wal, self.flushed_wal, self.flush_up_to_date);
        if guarded {
            self.flush_up_to_date = self.last_confirmed_flush_lsn == self.last_seen_txn_lsn;
        }
        self.received_wal = self.received_wal.max(self.wal_end);
        if self.flush_up_to_date {
            self.flushed_wal = self.flushed_wal.max(self.wal_end);
        }
        self.status_update();
        before != (self.received_wal, self.flushed_wal, self.flush_up_to_date)
    }

    /// `encode_standby_status_update` (l.465-475): write = `received_wal`, flush = apply =
    /// `flushed_wal`; PostgreSQL's slot takes the flush position when it is further
    /// ([`confirmed_flush_after_reply`]: PostgreSQL 15 `walsender.c:ProcessStandbyReplyMessage` →
    /// `logical.c:LogicalConfirmReceivedLocation`). Electric adds 1 to each byte position (so
    /// it never sends `0/0`); transaction numbers leave the 1 out, which keeps their order, and
    /// a flush of `0` is below every `confirmed_flush` either way.
    fn status_update(&mut self) {
        let update = StandbyStatusUpdate {
            write: self.received_wal,
            flush: self.flushed_wal,
            apply: self.flushed_wal,
            reply_requested: false,
        };
        self.confirmed_flush = confirmed_flush_after_reply(self.confirmed_flush, &update);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bug_era_keepalive_acknowledges_past_an_unflushed_single_fragment_txn() {
        let mut rc = ReplicationClient::new();
        rc.wal_written(1);
        rc.after_fragment(false, 1, true);
        assert!(rc.keepalive(false));
        assert_eq!(
            rc.confirmed_flush, 1,
            "acknowledged although nothing confirmed tx 1"
        );
    }

    #[test]
    fn head_keepalive_waits_for_the_tracker() {
        let mut rc = ReplicationClient::new();
        rc.wal_written(1);
        rc.after_fragment(true, 1, true);
        rc.keepalive(true);
        assert_eq!(rc.confirmed_flush, 0);
        rc.flush_boundary_updated(true, 1);
        assert_eq!(rc.confirmed_flush, 1);
    }

    #[test]
    fn a_lagging_boundary_acknowledges_only_itself() {
        let mut rc = ReplicationClient::new();
        rc.wal_written(2);
        rc.after_fragment(false, 2, true);
        rc.flush_boundary_updated(false, 1);
        assert_eq!((rc.flushed_wal, rc.confirmed_flush), (1, 1));
    }
}
