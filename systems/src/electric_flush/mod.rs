//! System `electric-flush`: Electric's shape-log write path, from PostgreSQL's transaction
//! fragments through each shape's Consumer and WriteLoop to the FlushTracker and the slot's
//! acknowledged flush LSN — the path of the missed `:flushed` notification of Electric #4058
//! (fixed by #4064). See [`walcheck_model::electric`] for the upstream commits and files.
//!
//! State: one `Consumer` per shape (with its WriteLoop, flush timer and mailbox), the
//! ShapeLogCollector (where its publish is, its mailbox of `notify_flushed` casts), the
//! `FlushTracker`, the `ReplicationClient` with PostgreSQL's WAL end and `confirmed_flush`,
//! a fault counter, and history bits for the properties that look at transitions.
//!
//! Time has no clock here: the flush period (1 s) is far shorter than the idle `:timeout` (30 s)
//! and the stall grace period (1 min). `timer_order = realistic` keeps that order (no `:timeout`
//! while a flush timer is armed and unfired; the stall check only once all else is quiet);
//! `timer_order = any` lets everything interleave.

mod config;
mod expected;
mod model;
mod properties;
mod view;

pub use config::*;
pub use model::*;
pub use properties::*;
pub use view::*;

built_in_system! {
    name: "electric-flush",
    system: ElectricFlushSystem,
    model: ElectricFlush,
    checks: [CHECKS, TRIAGE_CHECKS],
    doc: "Electric's shape-log flush path: WriteLoop buffers, flush timers, Consumer hibernation and the FlushTracker (#4058)",
    variants: &[
        ("v1.4.15", "Electric 64a89a05f (1.4.15): :flushed always aligned and notified at once"),
        ("pr4064", "Electric 6c5068aa2 (#4064): :flushed deferred while a multi-fragment txn is pending"),
        ("head", "Electric dc07a1e6c (1.7.12): #4064 plus #4503, #4730 and #4731"),
        ("fix1-notify-after-hibernate", "1.4.15 + #4058's fix 1: notify the persisted offset after Storage.hibernate()"),
        ("fix2-close-returns-offset", "1.4.15 + #4058's fix 2: flush_and_close_all returns the flushed offset"),
        ("fix3-periodic-recheck", "1.4.15 + #4058's fix 3: re-send :flushed on the hibernate timeout"),
        ("fix4-flush-returns-offset", "1.4.15 + #4058's fix 4: flush_buffer returns the offset, callers notify it"),
    ],
    faults: Faults::NAMES,
    trace_knobs: &[],
    also: Some(("timer_order", "any")),
}
