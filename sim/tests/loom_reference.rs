//! loom models of the reference shape-log pipeline (`walcheck_sim::reference::shape_log`): two
//! shapes, T1 in two fragments (shape 0 writes one line, below the inline-flush threshold, so
//! only its timer or hibernation flushes it; shape 1 flushes inline) and T2 in one; the
//! collector's thread publishes the three fragments while each shape's flush-timer thread fires
//! once, shape 0's racing T1's commit fragment. Every interleaving must end with the tracker's global offset at
//! the last commit and nothing pending.
//!
//! Run with (a separate target directory: `--cfg loom` rebuilds every dependency):
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p walcheck-sim --release --test loom_reference`
#![cfg(loom)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use loom::sync::Arc;
use loom::thread;
use walcheck_model::electric::{workload, Offset};
use walcheck_sim::reference::shape_log::{Design, ShapeLogPipeline};

/// T2's commit: the last commit of the workload.
const LAST_COMMIT: Offset = Offset::new(2, 2);

/// Explores every interleaving (within loom's preemption bound) of the collector's thread and
/// the two timer threads, then lets everything go idle and checks the tracker. Counts the
/// executions explored in `executions`.
fn model(design: Design, executions: &std::sync::Arc<AtomicUsize>) {
    let counter = std::sync::Arc::clone(executions);
    loom::model(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        let pipeline = Arc::new(ShapeLogPipeline::new(design, 2, 2));
        let timers: Vec<_> = (0..2)
            .map(|s| {
                let pipeline = Arc::clone(&pipeline);
                thread::spawn(move || pipeline.fire_timer(s))
            })
            .collect();
        for (fragment, first_op) in workload(2, 2, 2, 2) {
            pipeline.publish(fragment, first_op);
        }
        for timer in timers {
            timer.join().expect("a timer thread finishes");
        }
        pipeline.quiesce();
        let s = pipeline.snapshot();
        assert_eq!(
            (
                s.publisher.tracker.last_global_flushed_offset,
                &s.publisher.tracker.entries
            ),
            (LAST_COMMIT, &Default::default()),
            "lost flush notification: the tracker's global offset is not the last commit"
        );
        assert_eq!(s.acknowledged_lsn, u64::from(LAST_COMMIT.tx));
        assert!(s.collector_mailbox.is_empty());
        for shape in &s.shapes {
            assert!(shape.mailbox.is_empty() && shape.pending_flush_offset.is_none());
            assert!(shape.pending_txn.is_none() && shape.txn_offset_mapping.is_empty());
        }
    });
}

#[test]
fn pr4064_no_interleaving_loses_a_notification() {
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    model(Design::Pr4064, &executions);
    let executions = executions.load(Ordering::Relaxed);
    eprintln!("pr4064: {executions} interleavings explored, none loses a notification");
    assert!(executions > 1, "loom explored more than one interleaving");
}

/// 1.4.15's order (`:flushed` notified at once, before the commit's mapping entry exists) must
/// fail: loom has to find the interleaving where the timer flush lands between T1's fragments.
#[test]
fn v1_4_15_ordering_is_caught() {
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let failure = catch_unwind(AssertUnwindSafe(|| model(Design::V1_4_15, &executions)))
        .expect_err("loom must find the lost notification under 1.4.15's ordering");
    eprintln!(
        "v1.4.15: loom found the lost notification in execution {}",
        executions.load(Ordering::Relaxed)
    );
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| failure.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        message.contains("lost flush notification"),
        "loom failed for another reason: {message}"
    );
}
