//! The root package's integration tests, in one binary: a module per area, so that a test build
//! compiles and links the crate once for all of them. What the modules share is in `util`.
//!
//! One test, or an area's: `cargo test --test tests NAME` (a module's tests are named
//! `MODULE::TEST`, so `cargo test --test tests golden::` runs the golden-trace tests).

// The harness tests measure each thread's heap (`bench_harness`); the walcheck binary counts it
// the same way. Counting is per thread, so the other tests running beside them do not disturb
// their figures.
#[global_allocator]
static ALLOC: walcheck::heap::Counting = walcheck::heap::Counting;

mod util;

mod bench_harness;
mod ci_runs;
mod cli;
mod connector_files;
mod doc_blocks;
mod electric_flush;
mod engine;
mod explore;
mod external_system;
mod function_length;
mod golden;
mod live_cli;
mod liveness;
mod mermaid;
mod olake_bootstrap;
mod olake_sync;
mod property_ids;
mod runtime_system;
mod variables;
