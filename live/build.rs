//! Marks the live tests ignored when PostgreSQL is missing, and those of each other version
//! when that version is (see `probe.rs`).

mod probe;

fn main() {
    probe::postgres();
    probe::pg_versions();
}
