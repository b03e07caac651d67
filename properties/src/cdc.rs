//! The CDC invariants designs are checked against, declared once — id, kind and what it means —
//! with the predicates that decide them over PostgreSQL's WAL, a slot's `confirmed_flush` and
//! the committed transactions, shared by the built-in systems and the connector language.
//!
//! One id means one thing everywhere: a system whose check differs from these says so under an
//! id of its own. A system that keeps its state in its own shape (electric-flush keeps offsets,
//! not [`Txn`]s) declares the shared property and decides it with its own predicate of the same
//! meaning.
//!
//! Not for: a system's own properties (`systems/*/properties.rs`, a connector file's `always`
//! lines), or the vocabulary properties are declared in ([`crate::system::PropertyInfo`]).

use walcheck_model::pg::decoding::txn_needs_skip;
use walcheck_model::pg::{Role, Txn, Wal};
use walcheck_model::Lsn;

use crate::system::PropertyInfo;

/// `no-data-loss`: no committed transaction is lost. Decided where the connector's state says
/// what "nothing left to do" is and whether a restart skipped a transaction (the connector
/// language's `quiescent` and `lost`), so it has no shared predicate here.
pub const NO_DATA_LOSS: PropertyInfo = PropertyInfo::always(
    "no-data-loss",
    "no restart resumes past an undelivered committed publication transaction, and once the workload is done and the connector has nothing left to do, every one is durably in the destination",
);

/// `ack-within-durable`: see [`ack_within_durable`].
pub const ACK_WITHIN_DURABLE: PropertyInfo = PropertyInfo::always(
    "ack-within-durable",
    "nothing that moves confirmed_flush puts it past the commit record of a publication transaction the destination does not durably hold",
);

/// `wal-pointers-ordered`: see [`wal_pointers_ordered`].
pub const WAL_POINTERS_ORDERED: PropertyInfo = PropertyInfo::always(
    "wal-pointers-ordered",
    "replay <= flush <= write <= insert (replay on a standby)",
);

/// `eventually-acknowledged`: liveness, checked under the declared fairness (see
/// [`acknowledged`]).
pub const EVENTUALLY_ACKNOWLEDGED: PropertyInfo = PropertyInfo::eventually(
    "eventually-acknowledged",
    "every committed transaction is eventually acknowledged: confirmed_flush eventually passes its commit record",
);

/// `no-needed-wal-removed`: see [`needed_wal_kept`].
pub const NO_NEEDED_WAL_REMOVED: PropertyInfo = PropertyInfo::always(
    "no-needed-wal-removed",
    "no checkpoint removes WAL the slot needs: its restart_lsn, in memory and saved (what a PostgreSQL crash restores), is never below the WAL removal horizon",
);

/// `no-needed-wal-removed`: the slot's `restart_lsn` in memory and its saved copy are at or
/// past `removed_before`, the oldest WAL the checkpoints have kept
/// ([`walcheck_model::pg::lifecycle::removal_horizon`]), so decoding from either finds its WAL.
///
/// PostgreSQL 15 `xlogutils.c:wal_segment_open` (SQL decoding) and
/// `walsender.c:WalSndSegmentOpen` (streaming) fail with "requested WAL segment … has already
/// been removed" when decoding starts before the oldest segment `xlog.c:RemoveOldXlogFiles` kept.
pub fn needed_wal_kept(restart_lsn: Lsn, saved_restart_lsn: Lsn, removed_before: Lsn) -> bool {
    restart_lsn >= removed_before && saved_restart_lsn >= removed_before
}

/// `ack-within-durable`: no transaction of `undelivered` — the publication transactions the
/// slot owes and the destination does not durably hold — is behind `confirmed_flush` by the
/// start rule, so a stream restarted from the slot still sends each of them.
///
/// PostgreSQL 15 `snapbuild.c:SnapBuildXactNeedsSkip` (through [`txn_needs_skip`]): a stream
/// starting at `confirmed_flush` skips every transaction whose commit record starts before it.
pub fn ack_within_durable<'t>(
    confirmed_flush: Lsn,
    mut undelivered: impl Iterator<Item = &'t Txn>,
) -> bool {
    undelivered.all(|t| !txn_needs_skip(t, confirmed_flush))
}

/// `eventually-acknowledged`'s goal: every transaction of `published` is behind
/// `confirmed_flush` by the start rule ([`txn_needs_skip`]), so the slot will not send it again.
pub fn acknowledged<'t>(
    confirmed_flush: Lsn,
    mut published: impl Iterator<Item = &'t Txn>,
) -> bool {
    published.all(|t| txn_needs_skip(t, confirmed_flush))
}

/// `wal-pointers-ordered`: flush ≤ write ≤ insert, and replay ≤ flush on a standby (a primary
/// replays nothing).
///
/// PostgreSQL 15 `xlog.c`: `XLogWrite` writes only what was inserted and flushes only what it
/// wrote (`LogwrtResult.Flush <= LogwrtResult.Write`); a standby's startup process replays only
/// what the walreceiver flushed (`xlogrecovery.c:WaitForWALToBecomeAvailable`).
pub fn wal_pointers_ordered(wal: &Wal, role: Role) -> bool {
    let replay_ok = role == Role::Primary || wal.replay <= wal.flush;
    replay_ok && wal.flush <= wal.write && wal.write <= wal.insert
}

#[cfg(test)]
mod tests {
    use super::*;
    use walcheck_model::pg::CommitMode;

    /// A primary replays nothing, so its replay pointer is not held to the order; a standby's
    /// is. Each pointer out of order breaks it.
    #[test]
    fn wal_pointers_ordered_holds_replay_to_flush_on_a_standby_only() {
        let mut wal = Wal::at(Lsn(0x100));
        assert!(wal_pointers_ordered(&wal, Role::Primary));
        wal.replay = Lsn(0x200);
        assert!(wal_pointers_ordered(&wal, Role::Primary));
        assert!(!wal_pointers_ordered(&wal, Role::Standby));
        let mut wal = Wal::at(Lsn(0x100));
        wal.flush = Lsn(0x180);
        assert!(!wal_pointers_ordered(&wal, Role::Primary));
        wal.write = Lsn(0x180);
        assert!(!wal_pointers_ordered(&wal, Role::Primary));
        wal.insert = Lsn(0x180);
        assert!(wal_pointers_ordered(&wal, Role::Primary));
    }

    /// Both acknowledgement predicates read the start rule: a transaction is behind
    /// `confirmed_flush` once it passes its commit record's start.
    #[test]
    fn acknowledgement_is_decided_at_the_commit_record_start() {
        let mut wal = Wal::at(Lsn(0x1000));
        let txn = wal.commit_txn(3, 200, 48, 1, CommitMode::Sync);
        let txns = [txn];
        assert!(ack_within_durable(txn.commit_lsn, txns.iter()));
        assert!(!acknowledged(txn.commit_lsn, txns.iter()));
        assert!(!ack_within_durable(txn.commit_lsn.plus(1), txns.iter()));
        assert!(acknowledged(txn.commit_lsn.plus(1), txns.iter()));
        assert!(ack_within_durable(Lsn(0x1000), [].iter()));
    }
}
