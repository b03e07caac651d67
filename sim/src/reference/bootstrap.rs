//! OLake #1084's first-sync bootstrap as a function a connector can port:
//! [`advance_until_confirmed`] advances the slot to the LSN read at the start, reads `end_lsn`,
//! retries after a delay while the slot stops short, gives up with a retryable error after a cap,
//! and seeds the state only once the slot has confirmed.
//!
//! It runs over [`SlotApi`], which three backends implement: the model's PostgreSQL
//! ([`ModelSlot`], PostgreSQL 15's clamp as `walcheck_model::pg` models it), a live server
//! (`walcheck_live::session::Session`, in the live backend), and [`FakeSlot`], which answers from
//! a script.

use std::collections::VecDeque;
use std::fmt;

use walcheck_model::pg::{AdvanceError, RestartLanding, Server};
use walcheck_model::Lsn;

/// What the bootstrap needs from PostgreSQL. Errors are the server's own, as text.
pub trait SlotApi {
    /// OLake's `current_lsn`, the target of the advance and the LSN to seed: on a primary
    /// `pg_current_wal_lsn()` (the WAL write pointer, LSN bytes), on a standby
    /// `pg_last_wal_replay_lsn()` (OLake `pkg/waljs/replicator.go:ReplicationSlotTempl`, #1070).
    fn current_lsn(&mut self) -> Result<Lsn, String>;

    /// `SELECT end_lsn FROM pg_replication_slot_advance(slot, target)`: the slot's
    /// `confirmed_flush` afterwards (LSN bytes), clamped to the flush pointer on a primary.
    /// Errors: the server's message (`cannot advance replication slot to X, minimum is Y`, …).
    fn slot_advance(&mut self, target: Lsn) -> Result<Lsn, String>;

    /// Waits `delay_ms` milliseconds before the next attempt (a real sleep on a live server,
    /// virtual time in the model and the fake).
    fn sleep_ms(&mut self, delay_ms: u64);
}

/// How long to keep advancing. PR #1084 retries every 100 ms for 30 s.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Wait between two advances, in milliseconds; at least 1.
    pub retry_delay_ms: u64,
    /// Give up once waiting another `retry_delay_ms` would pass this many milliseconds in total.
    pub give_up_after_ms: u64,
}

impl RetryPolicy {
    /// OLake PR #1084 `08e917b4` (`pkg/waljs/replicator.go:AdvanceLSN`): 100 ms, 30 s.
    pub const PR1084: RetryPolicy = RetryPolicy {
        retry_delay_ms: 100,
        give_up_after_ms: 30_000,
    };
}

/// Why the bootstrap stopped without seeding the state. Every one is retryable: no state was
/// written, so the next sync bootstraps again from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootstrapError {
    /// Reading `current_lsn` failed (the server's message).
    CurrentLsn(String),
    /// `pg_replication_slot_advance` raised an error (the server's message).
    Advance(String),
    /// The slot still stopped short of the target after `waited_ms` milliseconds of retries.
    NotConfirmed {
        target: Lsn,
        end_lsn: Lsn,
        attempts: u32,
        waited_ms: u64,
    },
}

impl BootstrapError {
    /// Whether the sync may be retried: always, since the state file was not written.
    pub const fn is_retryable(&self) -> bool {
        true
    }
}

impl fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BootstrapError::CurrentLsn(e) => write!(f, "failed to read current_lsn: {e}"),
            BootstrapError::Advance(e) => write!(f, "failed to advance replication slot: {e}"),
            BootstrapError::NotConfirmed {
                target,
                end_lsn,
                attempts,
                waited_ms,
            } => write!(
                f,
                "slot advance stopped at {end_lsn} and could not reach target {target} \
                 after {attempts} attempts in {waited_ms} ms (retryable)"
            ),
        }
    }
}

impl std::error::Error for BootstrapError {}

/// A bootstrap that seeded the state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Confirmed {
    /// The LSN seeded: the target, which the slot's `confirmed_flush` now equals.
    pub lsn: Lsn,
    /// Advances made, the confirming one included.
    pub attempts: u32,
    /// Milliseconds spent waiting between them.
    pub waited_ms: u64,
}

/// OLake PR #1084's bootstrap: read `current_lsn` as the target, advance the slot to it until
/// `end_lsn` reaches it, waiting `policy.retry_delay_ms` between attempts, then call `seed_state`
/// with the confirmed LSN — only then, so the state file never holds an LSN the slot has not
/// confirmed. Gives up with [`BootstrapError::NotConfirmed`] (retryable) once waiting again would
/// pass `policy.give_up_after_ms`; a server error stops it at once. `seed_state` is never called
/// on an error.
///
/// OLake `drivers/postgres/internal/cdc.go:PreCDC` and `pkg/waljs/replicator.go:AdvanceLSN` at PR
/// #1084 `08e917b4`. `end_lsn` can only reach the target, never pass it (PostgreSQL 15
/// `slotfuncs.c:pg_replication_slot_advance` moves to `min(target, flush)`).
pub fn advance_until_confirmed<S: SlotApi + ?Sized>(
    slot: &mut S,
    policy: RetryPolicy,
    seed_state: impl FnOnce(Lsn),
) -> Result<Confirmed, BootstrapError> {
    assert!(
        policy.retry_delay_ms > 0,
        "retry_delay_ms must be at least 1"
    );
    let target = slot.current_lsn().map_err(BootstrapError::CurrentLsn)?;
    let mut attempts = 0;
    let mut waited_ms = 0;
    loop {
        let end_lsn = slot.slot_advance(target).map_err(BootstrapError::Advance)?;
        attempts += 1;
        if end_lsn >= target {
            debug_assert_eq!(end_lsn, target, "an advance never passes its target");
            seed_state(end_lsn);
            return Ok(Confirmed {
                lsn: end_lsn,
                attempts,
                waited_ms,
            });
        }
        if waited_ms + policy.retry_delay_ms > policy.give_up_after_ms {
            return Err(BootstrapError::NotConfirmed {
                target,
                end_lsn,
                attempts,
                waited_ms,
            });
        }
        slot.sleep_ms(policy.retry_delay_ms);
        waited_ms += policy.retry_delay_ms;
    }
}

/// The model's PostgreSQL as a [`SlotApi`]: `current_lsn` and the advance as
/// `walcheck_model::pg::Server` computes them, and waits during which the walwriter flushes
/// once per `wal_writer_delay_ms` (PostgreSQL's default 200 ms), unless `walwriter_stalled`.
#[derive(Clone, Debug)]
pub struct ModelSlot {
    pub server: Server,
    pub wal_writer_delay_ms: u64,
    /// The walwriter never flushes (a stuck flush, to exercise the give-up path).
    pub walwriter_stalled: bool,
    /// Milliseconds waited since the walwriter last ran.
    pub since_walwriter_ms: u64,
}

impl ModelSlot {
    /// A model server with PostgreSQL's default `wal_writer_delay` (200 ms).
    pub fn new(server: Server) -> ModelSlot {
        ModelSlot {
            server,
            wal_writer_delay_ms: 200,
            walwriter_stalled: false,
            since_walwriter_ms: 0,
        }
    }
}

impl SlotApi for ModelSlot {
    fn current_lsn(&mut self) -> Result<Lsn, String> {
        Ok(self.server.current_or_replay_lsn())
    }

    fn slot_advance(&mut self, target: Lsn) -> Result<Lsn, String> {
        self.server
            .slot_advance(target, RestartLanding::Stays)
            .map_err(|e: AdvanceError| e.to_string())
    }

    fn sleep_ms(&mut self, delay_ms: u64) {
        self.since_walwriter_ms += delay_ms;
        while self.since_walwriter_ms >= self.wal_writer_delay_ms {
            self.since_walwriter_ms -= self.wal_writer_delay_ms;
            if !self.walwriter_stalled {
                self.server.wal.walwriter_flush();
            }
        }
    }
}

/// A scripted [`SlotApi`]: `current_lsn` is fixed, each advance answers the next scripted result
/// (the last one repeats), and waits are recorded.
#[derive(Clone, Debug)]
pub struct FakeSlot {
    pub current_lsn: Lsn,
    pub answers: VecDeque<Result<Lsn, String>>,
    /// Every advance's target, in order.
    pub targets: Vec<Lsn>,
    /// Every wait, in milliseconds.
    pub sleeps_ms: Vec<u64>,
}

impl FakeSlot {
    pub fn new(current_lsn: Lsn, answers: impl IntoIterator<Item = Result<Lsn, String>>) -> Self {
        FakeSlot {
            current_lsn,
            answers: answers.into_iter().collect(),
            targets: Vec::new(),
            sleeps_ms: Vec::new(),
        }
    }
}

impl SlotApi for FakeSlot {
    fn current_lsn(&mut self) -> Result<Lsn, String> {
        Ok(self.current_lsn)
    }

    fn slot_advance(&mut self, target: Lsn) -> Result<Lsn, String> {
        self.targets.push(target);
        let answer = if self.answers.len() > 1 {
            self.answers.pop_front()
        } else {
            self.answers.front().cloned()
        };
        answer.expect("a scripted answer")
    }

    fn sleep_ms(&mut self, delay_ms: u64) {
        self.sleeps_ms.push(delay_ms);
    }
}

#[cfg(test)]
mod tests {
    use walcheck_model::pg::Role;

    use super::*;

    const W0: Lsn = Lsn(0x100_2000);
    const FLUSH: Lsn = Lsn(0x100_0000);

    #[test]
    fn retries_while_clamped_then_seeds() {
        let mut slot = FakeSlot::new(W0, [Ok(FLUSH), Ok(FLUSH), Ok(W0)]);
        let mut state = None;
        let done = advance_until_confirmed(&mut slot, RetryPolicy::PR1084, |l| state = Some(l));
        assert_eq!(
            done,
            Ok(Confirmed {
                lsn: W0,
                attempts: 3,
                waited_ms: 200
            })
        );
        assert_eq!(state, Some(W0));
        assert_eq!(slot.targets, [W0, W0, W0]);
        assert_eq!(slot.sleeps_ms, [100, 100]);
    }

    #[test]
    fn gives_up_retryably_after_the_cap_and_never_seeds() {
        let mut slot = FakeSlot::new(W0, [Ok(FLUSH)]);
        let mut state = None;
        let policy = RetryPolicy {
            retry_delay_ms: 100,
            give_up_after_ms: 1_000,
        };
        let err = advance_until_confirmed(&mut slot, policy, |l| state = Some(l)).unwrap_err();
        assert_eq!(
            err,
            BootstrapError::NotConfirmed {
                target: W0,
                end_lsn: FLUSH,
                attempts: 11,
                waited_ms: 1_000
            }
        );
        assert!(err.is_retryable());
        assert_eq!(state, None);
        assert_eq!(
            err.to_string(),
            "slot advance stopped at 0/1000000 and could not reach target 0/1002000 after 11 attempts in 1000 ms (retryable)"
        );
    }

    #[test]
    fn a_server_error_stops_at_once_without_seeding() {
        let mut slot = FakeSlot::new(
            W0,
            [Err(
                "cannot advance replication slot to 0/1000000, minimum is 0/1002000".into(),
            )],
        );
        let mut state = None;
        let err = advance_until_confirmed(&mut slot, RetryPolicy::PR1084, |l| state = Some(l))
            .unwrap_err();
        assert!(matches!(err, BootstrapError::Advance(_)));
        assert_eq!((state, slot.targets.len()), (None, 1));
    }

    /// The model's server with write ahead of flush (a 5-page synchronous statement over 4 pages
    /// of `wal_buffers`, as in the checker's counterexample): the first advance is clamped to the
    /// flush pointer, the walwriter flushes during the second wait, the third advance confirms.
    fn write_ahead_of_flush() -> ModelSlot {
        let mut server = Server::at_rest(Role::Primary, Lsn(0x100_0000));
        server.wal.append(5 * 8192, 8192, 4 * 8192);
        assert!(server.wal.write > server.wal.flush);
        ModelSlot::new(server)
    }

    #[test]
    fn against_the_model_the_state_matches_the_slot() {
        let mut slot = write_ahead_of_flush();
        let mut state = None;
        let done =
            advance_until_confirmed(&mut slot, RetryPolicy::PR1084, |l| state = Some(l)).unwrap();
        assert_eq!((done.lsn, done.attempts, done.waited_ms), (W0, 3, 200));
        assert_eq!(state, Some(slot.server.slot.confirmed_flush));
    }

    #[test]
    fn against_the_model_a_stalled_flush_gives_up() {
        let mut slot = write_ahead_of_flush();
        slot.walwriter_stalled = true;
        let mut state = None;
        let err = advance_until_confirmed(&mut slot, RetryPolicy::PR1084, |l| state = Some(l))
            .unwrap_err();
        assert_eq!(
            err,
            BootstrapError::NotConfirmed {
                target: W0,
                end_lsn: FLUSH,
                attempts: 301,
                waited_ms: 30_000
            }
        );
        assert_eq!(state, None);
    }
}
