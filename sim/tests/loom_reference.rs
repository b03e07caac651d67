//! loom models of the reference shape-log pipeline (`walcheck_sim::reference::shape_log`): two
//! shapes, T1 in two fragments (shape 0 writes one line, below the inline-flush threshold, so
//! only its timer or hibernation flushes it; shape 1 flushes inline) and T2 in one; the
//! collector's thread publishes the three fragments while each shape's flush-timer thread fires
//! once, shape 0's racing T1's commit fragment. Every interleaving must end with the tracker's global offset at
//! the last commit and nothing pending.
//!
//! Run with (a separate target directory: `--cfg loom` rebuilds every dependency):
//! `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p walcheck-sim --release --test tests loom_reference`
#![cfg(loom)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use loom::sync::Arc;
use loom::thread;
use walcheck_model::electric::{workload, Offset};
use walcheck_sim::reference::shape_log::{Design, ShapeLogPipeline};

/// T2's commit: the last commit of the workload.
const LAST_COMMIT: Offset = Offset::new(2, 2);

/// Executions explored, and those in which shape 0's timer thread ran entirely between the end
/// of T1's first publish and the delivery of T1's commit to shape 0: its flush then lands while
/// T1 is pending, the race of #4058 (a witness that the model reaches it).
#[derive(Default)]
struct Counts {
    executions: AtomicUsize,
    races: AtomicUsize,
}

/// Explores every interleaving (within loom's preemption bound) of the collector's thread and
/// the two timer threads, then lets everything go idle and checks the tracker. The witness uses
/// std atomics, which loom does not schedule around, so it does not change the interleavings.
fn model(design: Design, counts: &std::sync::Arc<Counts>) {
    let counts = std::sync::Arc::clone(counts);
    loom::model(move || {
        counts.executions.fetch_add(1, Ordering::Relaxed);
        // 0 until T1's first fragment is published, 1 until T1's commit reaches shape 0, then 2.
        let published = std::sync::Arc::new(AtomicUsize::new(0));
        let raced = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pipeline = Arc::new(ShapeLogPipeline::new(design, 2, 2));
        let timers: Vec<_> = (0..2)
            .map(|s| {
                let pipeline = Arc::clone(&pipeline);
                let (published, raced) = (published.clone(), raced.clone());
                thread::spawn(move || {
                    let before = published.load(Ordering::SeqCst);
                    pipeline.fire_timer(s);
                    if s == 0 && before == 1 && published.load(Ordering::SeqCst) == 1 {
                        raced.store(true, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for (i, (fragment, first_op)) in workload(2, 2, 2, 2).into_iter().enumerate() {
            if i != 1 {
                pipeline.publish(fragment, first_op);
                published.fetch_max(1, Ordering::SeqCst);
                continue;
            }
            // T1's commit: `ShapeLogPipeline::publish`'s steps, marking when shape 0 is called.
            while pipeline.collector_handle() {}
            pipeline.publish_begin(fragment, first_op);
            while let Some(s) = pipeline.next_delivery() {
                pipeline.drain(s);
                if s == 0 {
                    published.store(2, Ordering::SeqCst);
                }
                pipeline.deliver(s);
                pipeline.drain(s);
            }
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
        if raced.load(Ordering::SeqCst) {
            counts.races.fetch_add(1, Ordering::Relaxed);
        }
    });
}

#[test]
fn pr4064_no_interleaving_loses_a_notification() {
    let counts = std::sync::Arc::new(Counts::default());
    model(Design::Pr4064, &counts);
    let executions = counts.executions.load(Ordering::Relaxed);
    let races = counts.races.load(Ordering::Relaxed);
    eprintln!(
        "pr4064: {executions} interleavings explored, {races} with shape 0's timer flush between \
         T1's fragments, none loses a notification"
    );
    assert!(executions > 1, "loom explored more than one interleaving");
    assert!(
        races > 0,
        "no interleaving raced shape 0's timer against T1's commit"
    );
}

/// 1.4.15's order (`:flushed` notified at once, before the commit's mapping entry exists) must
/// fail: loom has to find the interleaving where the timer flush lands between T1's fragments.
#[test]
fn v1_4_15_ordering_is_caught() {
    let counts = std::sync::Arc::new(Counts::default());
    let failure = catch_unwind(AssertUnwindSafe(|| model(Design::V1_4_15, &counts)))
        .expect_err("loom must find the lost notification under 1.4.15's ordering");
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| failure.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    // The lost notification of #4058: shape 0 stays tracked at T1's commit (`1_5`).
    assert!(
        message.contains("lost flush notification")
            && message.contains("0: TrackedShape { last_sent: 1_5,"),
        "loom failed for another reason: {message}"
    );
    eprintln!(
        "v1.4.15: loom found the lost notification in execution {}",
        counts.executions.load(Ordering::Relaxed)
    );
}
