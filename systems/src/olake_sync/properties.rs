//! System `olake-sync`: its properties, each declared once with its predicate, and the fairness its liveness checks assume.

use super::*;
use walcheck_model::olake::sync::{PostStep, SyncPhase};
use walcheck_properties::cdc;
use walcheck_properties::system::PropertyInfo;

walcheck_properties::checks! { OlakeSyncSystem:
    /// The properties, each declared once.
    CHECKS => PROPERTIES [
        NO_LSN_MISMATCH = PropertyInfo::always("no-lsn-mismatch", "validateGlobalState never fails a sync (the non-retryable lsn mismatch)")
            .when(|_, s: &State| no_lsn_mismatch(s));
        ACK_WITHIN_DURABLE = cdc::ACK_WITHIN_DURABLE
            .when(|m, s| ack_within_durable(&m.config, s));
        ACK_WITHIN_DESTINATION = PropertyInfo::always("ack-within-destination", "the slot's confirmed_flush is never past the highest LSN the destination committed")
            .when(|_, s: &State| ack_within_destination(s));
        NO_ACK_TIMEOUT = PropertyInfo::always("no-ack-timeout", "AcknowledgeLSN's poll always sees the slot at the position sent (no `LSN not updated after 5 minutes`)")
            .when(|_, s: &State| no_ack_timeout(s));
        REACH_SYNC_COMPLETE = PropertyInfo::sometimes("reach-sync-complete", "a sync commits a transaction to the destination, acknowledges it and writes the state")
            .when(|_, s: &State| sync_complete(s));
        REACH_DUPLICATE = PropertyInfo::sometimes("reach-duplicate", "a transaction is written to the destination twice (at-least-once; a figure, not a violation)")
            .when(|_, s: &State| s.durable.duplicates > 0);
        REACH_CRASH_AFTER_COMMIT = PropertyInfo::sometimes("reach-crash-after-commit", "the connector crashes right after the destination commit")
            .needs("fault:connector-crash")
            .when(|_, s: &State| crashed_after(s, PostStep::Commit));
        REACH_CRASH_AFTER_ACK = PropertyInfo::sometimes("reach-crash-after-ack", "the connector crashes right after the slot acknowledgement")
            .needs("fault:connector-crash")
            .when(|_, s: &State| crashed_after(s, PostStep::Ack));
        REACH_CRASH_AFTER_STATE = PropertyInfo::sometimes("reach-crash-after-state", "the connector crashes right after the state file write")
            .needs("fault:connector-crash")
            .when(|_, s: &State| crashed_after(s, PostStep::SaveState));
        REACH_RECOVERY_SYNC = PropertyInfo::sometimes("reach-recovery-sync", "a run starts a 2PC recovery sync (destination metadata ahead of the state)")
            .needs("fault:connector-crash")
            .when(|_, s: &State| recovery_sync(s));
        REACH_PG_CRASH_AFTER_ACK = PropertyInfo::sometimes("reach-pg-crash-after-ack", "a PostgreSQL restart takes the slot back below a position the destination committed and the slot confirmed")
            .needs("fault:pg-crash")
            .when(|_, s: &State| pg_crash_lost_ack(s));
        REACH_KEEPALIVE_REGRESSION = PropertyInfo::sometimes("reach-keepalive-regression", "a keepalive drags ClientXLogPos below the slot's confirmed_flush during the stream")
            .needs("keepalive=on")
            .when(|_, s: &State| keepalive_regression(s));
    ]
}

/// `no-lsn-mismatch`: `validateGlobalState` has not failed the run.
pub fn no_lsn_mismatch(state: &State) -> bool {
    !matches!(
        state.connector.phase,
        SyncPhase::Failed(walcheck_model::olake::sync::SyncFailure::LsnMismatch { .. })
    )
}

/// `ack-within-durable` ([`cdc::ack_within_durable`]): no committed transaction the destination
/// does not hold is behind the slot's `confirmed_flush`, where PostgreSQL would never send it
/// again. Every transaction is published and committed after the bootstrap.
pub fn ack_within_durable(config: &Config, state: &State) -> bool {
    let undelivered: Vec<_> = (0..state.txns)
        .filter(|&i| state.durable.dest_txns & (1 << i) == 0)
        .map(|i| config.txn(i))
        .collect();
    cdc::ack_within_durable(state.server.slot.confirmed_flush, undelivered.iter())
}

/// `ack-within-destination`: the slot's `confirmed_flush` is not past the highest LSN a
/// destination commit covered (the bootstrap's LSN before any commit).
pub fn ack_within_destination(state: &State) -> bool {
    state.server.slot.confirmed_flush <= state.durable.dest_lsn
}

/// `no-ack-timeout`: `AcknowledgeLSN` has not given up on the slot.
pub fn no_ack_timeout(state: &State) -> bool {
    !matches!(
        state.connector.phase,
        SyncPhase::Failed(walcheck_model::olake::sync::SyncFailure::AckTimeout { .. })
    )
}

/// Witness: a sync finished with at least one transaction in the destination.
pub fn sync_complete(state: &State) -> bool {
    state.connector.phase == SyncPhase::Done && state.durable.dest_txns != 0
}

/// Witness: the connector crashed right after `step`.
pub fn crashed_after(state: &State, step: PostStep) -> bool {
    state.connector.phase == SyncPhase::Crashed { after: Some(step) }
}

/// Witness: a run streams in 2PC recovery mode.
pub fn recovery_sync(state: &State) -> bool {
    matches!(state.connector.phase, SyncPhase::Streaming(s) if s.recovery.is_some())
}

/// Witness: the slot is below a position the destination committed and the slot had confirmed:
/// a PostgreSQL restart took back an acknowledgement that was only in memory. The sync is done,
/// so its acknowledgement was seen; a sync whose acknowledgement failed on the dead connection
/// (the EOF path) leaves the same positions but never had the slot confirm them.
pub fn pg_crash_lost_ack(state: &State) -> bool {
    state.crashes > 0
        && state.server.slot.confirmed_flush < state.durable.dest_lsn
        && state.durable.state_file == state.durable.dest_lsn
        && state.connector.phase == SyncPhase::Done
}

/// Witness: during the stream `ClientXLogPos` is below the slot's `confirmed_flush`.
pub fn keepalive_regression(state: &State) -> bool {
    matches!(state.connector.phase, SyncPhase::Streaming(s) if s.client_pos < state.server.slot.confirmed_flush)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::olake_bootstrap::Faults;
    use walcheck_model::olake::sync::SyncVariant;

    /// `ack-within-durable` decides by the start rule, as PostgreSQL does: a slot confirmed past
    /// the start of a transaction's commit record (not yet its end) has skipped it, so an
    /// undelivered transaction there is lost; at the record's start it is still sent.
    #[test]
    fn a_slot_confirmed_inside_a_commit_record_has_skipped_its_transaction() {
        let config = Config::new(SyncVariant::Master, Faults::None);
        let mut state = config.initial_state();
        state.txns = 1;
        let txn = config.txn(0);
        state.server.slot.confirmed_flush = txn.commit_lsn;
        assert!(ack_within_durable(&config, &state));
        state.server.slot.confirmed_flush = txn.commit_lsn.plus(8);
        assert!(txn.commit_lsn.plus(8) < txn.end_lsn);
        assert!(!ack_within_durable(&config, &state));
        state.durable.dest_txns = 1;
        state.server.slot.confirmed_flush = txn.end_lsn;
        assert!(ack_within_durable(&config, &state));
    }
}
