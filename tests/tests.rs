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
mod concurrent_files;
mod connector_files;
mod doc_blocks;
mod electric_files;
mod electric_flush;
mod engine;
mod explore;
mod external_system;
mod function_length;
mod golden;
mod layering;
mod live_cli;
mod liveness;
mod mermaid;
mod olake_bootstrap;
mod olake_sync;
mod property_ids;
mod runtime_system;
mod variables;

/// With `autotests = false` cargo builds no file of a crate's tests/ as a binary of its own: a
/// file that its `tests/tests.rs` does not declare as a module is never compiled, and its tests
/// never run.
#[test]
fn every_file_of_a_crates_tests_folder_is_a_module_of_its_test_binary() {
    use std::path::Path;
    for member in util::workspace_members() {
        let tests = Path::new(util::ROOT).join(&member).join("tests");
        let Ok(root) = std::fs::read_to_string(tests.join("tests.rs")) else {
            continue;
        };
        for entry in std::fs::read_dir(&tests).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let module = match name.strip_suffix(".rs") {
                Some("tests") => continue,
                Some(module) => module.to_owned(),
                None if path.join("mod.rs").is_file() => name.clone(),
                None => continue,
            };
            assert!(
                root.lines()
                    .any(|line| line.trim() == format!("mod {module};")),
                "{member}/tests/{name} is not a module of {member}/tests/tests.rs"
            );
        }
    }
}
