//! Marks the live tests ignored when PostgreSQL is missing (see `probe.rs`).

mod probe;

fn main() {
    probe::postgres();
}
