//! The verdicts Electric's code leads us to expect of `electric-flush`: the regression suite's
//! table, with the reason for each.

use walcheck_model::electric;
use walcheck_properties::verdict::Verdict;
use walcheck_properties::system::FairnessChoice;

use super::Config;

/// The properties this table has a row for.
pub(super) const ROWS: &[&str] = &[
    "no-lost-flush-notification",
    "wal-retention-bounded",
    "eventually-acknowledged",
    "ack-within-flushed",
    "notified-offset-is-txn-boundary",
    "global-flush-monotone",
    "reach-timer-before-commit",
    "reach-hibernate-flush",
    "reach-inline-flush",
    "reach-multi-fragment-txn",
    "reach-two-shapes",
];

/// What Electric's code leads us to expect of `electric-flush` (electric.md §2–4), given the
/// bounds that decide it.
pub(super) fn verdict(c: &Config, property: &str) -> (Verdict, &'static str) {
    use super::TimerOrder;
    use Verdict::{Holds, Violated};
    let bug_era = !c.variant.has_4064();
    let head = c.variant == electric::Variant::Head;
    let kill = c.faults.kill() && c.crashes > 0;
    let suspend = c.faults.suspend();
    let any_order = c.timer_order == TimerOrder::Any;
    // T2's one line for shape 1 stays buffered (below the threshold) while keepalives may come.
    let small_txn = c.shapes == 2 && c.txns >= 2 && c.inline_flush_lines >= 2;
    const MECHANISM: &str = "#4064 mechanism: a non-commit fragment's :flushed is handled before the commit appends its mapping entry; align returns the raw offset, and nothing re-notifies";
    const SUSPEND_LOSS: &str = "#3982: a suspended consumer's terminate flushes, and its :flushed is never handled (reachable only when the :timeout may fire under an armed flush timer)";
    const DEAD_PINS: &str = "#3975: a dead consumer's entry pins the global offset until a publish finds it undeliverable (#4011); HEAD's monitor removes it (#4730)";
    const KEEPALIVE: &str = "#4731: outside a transaction a keepalive acknowledges wal_end while flush_up_to_date? is still true from the previous transaction";
    match property {
        "eventually-acknowledged" if c.fairness == FairnessChoice::None => (
            Violated,
            "no fairness: a cycle that never acknowledges the last commit need not be left (Publish repeating while an armed flush timer never fires, say), so confirmed_flush may never reach it",
        ),
        "no-lost-flush-notification" | "wal-retention-bounded" | "eventually-acknowledged" => {
            if head {
                (Holds, "HEAD: #4064 plus the suspend guards (#4503) and the watchdog (#4730)")
            } else if bug_era {
                (Violated, MECHANISM)
            } else if suspend && any_order && c.inline_flush_lines >= 2 {
                (Violated, SUSPEND_LOSS)

            } else if kill && property != "no-lost-flush-notification" && (c.inline_flush_lines >= 2 || (c.shapes == 2 && c.txns >= 2)) {
                (Violated, DEAD_PINS)
            } else {
                (Holds, "#4064: :flushed is deferred while the transaction is pending and released aligned at its commit")
            }
        }
        "ack-within-flushed" => {
            // In the bug era with two shapes, no suspension and T2 last, a stuck shape always keeps
            // the client from being up to date before T2, so no keepalive acknowledges past it.
            let masked = bug_era && c.shapes == 2 && !suspend && c.txns <= 2;
            if head {
                (Holds, "HEAD #4731: flush_up_to_date? is last_confirmed_flush_lsn == last_seen_txn_lsn")
            } else if !small_txn {
                (Holds, "no small transaction follows a fully flushed one (txns=1 or an inline flush at every line)")
            } else if masked {
                (Holds, "masked: the stuck shape keeps the client from ever being up to date")
            } else {
                (Violated, KEEPALIVE)
            }
        }
        "notified-offset-is-txn-boundary" => {
            (Holds, "entries complete only at last_sent, a commit's last_log_offset in every tracked fragment of this workload")
        }
        "global-flush-monotone" => (Holds, "update_global_offset takes the max; the client takes the max"),
        "reach-hibernate-flush" if suspend && !head => {
            (Violated, "with suspension on, every idle :timeout before HEAD stops the consumer instead of hibernating it")
        }
        "reach-timer-before-commit" if c.inline_flush_lines < 2 => {
            (Violated, "inline_flush_lines=1: every line flushes inline, no timer flush happens")
        }
        "reach-inline-flush" if c.shapes < 2 && c.inline_flush_lines >= 2 => {
            (Violated, "with one shape no fragment reaches the inline-flush threshold")
        }
        "reach-timer-before-commit"
        | "reach-hibernate-flush"
        | "reach-inline-flush"
        | "reach-multi-fragment-txn"
        | "reach-two-shapes" => {
            (Holds, "witness: the behaviour the safety verdicts depend on is reachable")
        }
        other => unreachable!("electric-flush's table has no row for {other}"),
    }
}
