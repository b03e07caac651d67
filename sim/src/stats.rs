//! Counting attempts: per level and variant, how many bootstraps saw write ahead of flush, stopped
//! short, ended in `lsn mismatch`; the hit probability's Wilson interval; pr1084's retries and
//! time to confirm.
//!
//! Floating point is used only with `+ − × ÷` and `sqrt`, which IEEE 754 rounds exactly, so the
//! figures are the same bits on every platform; reports round them before printing.

use crate::engine::Outcome;

/// The normal quantile for a two-sided 95 % interval.
const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `hits` successes in `n` trials at 95 %: `(low, high)`, both in
/// `[0, 1]`; `(0, 1)` for no trials.
pub fn wilson_95(hits: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = hits as f64 / n_f;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denominator;
    let half = Z_95 / denominator * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    // No hits (all hits) puts the interval's low (high) end exactly at 0 (1); computed, it can
    // come out a rounding error away.
    let low = if hits == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if hits == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

/// The outcomes of one variant at one level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub attempts: u64,
    pub write_ahead_at_read: u64,
    pub stopped_short: u64,
    pub lsn_mismatch: u64,
    pub gave_up: u64,
    /// Attempts that broke a safety property, with their numbers (the first few kept).
    pub violating: u64,
    pub violating_attempts: Vec<u32>,
    /// Advances beyond the first, over all attempts, and the most in one attempt.
    pub retries: u64,
    pub retries_max: u64,
    /// Time to confirm of the attempts whose first advance stopped short, in microseconds.
    pub confirmed_after_retry: u64,
    pub confirm_us_total: u64,
    pub confirm_us_max: u64,
    /// `pg_replication_slot_advance` calls over all attempts, and their total time from call to
    /// return, in microseconds.
    pub advance_calls: u64,
    pub advance_us_total: u64,
}

/// How many violating attempt numbers a tally keeps.
pub const KEEP_VIOLATING: usize = 16;

impl Tally {
    /// Counts attempt number `attempt`'s outcome.
    pub fn add(&mut self, attempt: u32, outcome: &Outcome) {
        self.attempts += 1;
        self.write_ahead_at_read += u64::from(outcome.write_ahead_at_read);
        self.stopped_short += u64::from(outcome.stopped_short);
        self.lsn_mismatch += u64::from(outcome.lsn_mismatch);
        self.gave_up += u64::from(outcome.gave_up);
        if outcome.violated() {
            self.violating += 1;
            if self.violating_attempts.len() < KEEP_VIOLATING {
                self.violating_attempts.push(attempt);
            }
        }
        self.advance_calls += u64::from(outcome.advance_calls);
        self.advance_us_total += outcome.advance_us;
        let retries = u64::from(outcome.advance_calls.saturating_sub(1));
        self.retries += retries;
        self.retries_max = self.retries_max.max(retries);
        if let (true, Some(confirm)) = (retries > 0, outcome.confirm_us) {
            self.confirmed_after_retry += 1;
            self.confirm_us_total += confirm;
            self.confirm_us_max = self.confirm_us_max.max(confirm);
        }
    }

    /// The share of attempts that ended in `lsn mismatch`.
    pub fn hit_probability(&self) -> f64 {
        if self.attempts == 0 {
            0.0
        } else {
            self.lsn_mismatch as f64 / self.attempts as f64
        }
    }

    /// Its Wilson 95 % interval.
    pub fn hit_ci95(&self) -> (f64, f64) {
        wilson_95(self.lsn_mismatch, self.attempts)
    }

    /// The share of attempts whose target was ahead of flush when read.
    pub fn write_ahead_probability(&self) -> f64 {
        if self.attempts == 0 {
            0.0
        } else {
            self.write_ahead_at_read as f64 / self.attempts as f64
        }
    }

    /// Mean time from an advance's call to its return, in microseconds (rounded down); `None`
    /// without advances.
    pub fn advance_us_mean(&self) -> Option<u64> {
        (self.advance_calls > 0).then(|| self.advance_us_total / self.advance_calls)
    }

    /// Mean time to confirm after a retry, in microseconds (rounded down); `None` when no attempt
    /// retried.
    pub fn confirm_us_mean(&self) -> Option<u64> {
        (self.confirmed_after_retry > 0).then(|| self.confirm_us_total / self.confirmed_after_retry)
    }
}

/// `x` rounded to `places` decimals, for JSON: the same value on every platform.
pub fn round_to(x: f64, places: i32) -> f64 {
    let scale = [1.0, 10.0, 100.0, 1_000.0, 10_000.0, 100_000.0][places.clamp(0, 5) as usize];
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_published_values() {
        // Wilson (1927) score intervals, computed independently of this code.
        let (lo, hi) = wilson_95(0, 200);
        assert_eq!((round_to(lo, 4), round_to(hi, 4)), (0.0, 0.0188));
        let (lo, hi) = wilson_95(19, 75);
        assert_eq!((round_to(lo, 4), round_to(hi, 4)), (0.1686, 0.3621));
        let (lo, hi) = wilson_95(200, 200);
        assert_eq!((round_to(lo, 4), round_to(hi, 4)), (0.9812, 1.0));
        assert_eq!(wilson_95(0, 0), (0.0, 1.0));
        // Exactly 0 with no hits and exactly 1 with all: a simulated 0 % lies inside.
        for n in 1..=60 {
            assert_eq!(wilson_95(0, n).0, 0.0);
            assert_eq!(wilson_95(n, n).1, 1.0);
        }
    }

    #[test]
    fn tallies_count_retries_and_confirm_times() {
        let mut tally = Tally::default();
        tally.add(
            0,
            &Outcome {
                advance_calls: 1,
                confirm_us: Some(0),
                ..Outcome::default()
            },
        );
        tally.add(
            1,
            &Outcome {
                write_ahead_at_read: true,
                stopped_short: true,
                advance_calls: 3,
                confirm_us: Some(200_000),
                ..Outcome::default()
            },
        );
        tally.add(
            2,
            &Outcome {
                write_ahead_at_read: true,
                stopped_short: true,
                lsn_mismatch: true,
                advance_calls: 1,
                first_violation: [Some(7), Some(8), None],
                ..Outcome::default()
            },
        );
        assert_eq!(tally.attempts, 3);
        assert_eq!(tally.retries, 2);
        assert_eq!(tally.retries_max, 2);
        assert_eq!(tally.confirm_us_mean(), Some(200_000));
        assert_eq!(tally.violating_attempts, [2]);
        assert_eq!(round_to(tally.hit_probability(), 4), 0.3333);
    }
}
