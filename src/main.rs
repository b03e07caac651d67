//! The `walcheck` binary: the command line over walcheck's own systems.

use std::process::ExitCode;

/// Counts each thread's heap bytes, for `check --json`'s `peak_heap_bytes` and `bytes_per_state`.
#[global_allocator]
static ALLOC: walcheck::heap::Counting = walcheck::heap::Counting;

fn main() -> ExitCode {
    walcheck::cli::walcheck()
}
