//! Every file under `connectors/` parses and passes the static checks with no diagnostic.

use crate::common::{connectors_dir, wal_files};

#[test]
fn every_connector_file_checks_clean() {
    let wal = wal_files(&connectors_dir());
    assert!(wal.len() >= 5, "expected the example files, found {wal:?}");
    let mut report = String::new();
    for path in &wal {
        let source = std::fs::read_to_string(path).unwrap();
        let name = format!("connectors/{}", path.file_name().unwrap().to_string_lossy());
        let checked = walcheck_lang::check(&source);
        report += &walcheck_lang::diagnostic::render_all(&checked.diagnostics, &name, &source);
    }
    assert!(report.is_empty(), "{report}");
}

/// The README will show a textbook file whole: at most 30 lines each.
#[test]
fn textbook_files_are_short() {
    let dir = connectors_dir();
    for name in [
        "textbook-ack-after-commit.wal",
        "textbook-ack-on-receipt.wal",
    ] {
        let lines = std::fs::read_to_string(dir.join(name))
            .unwrap()
            .lines()
            .count();
        assert!(lines <= 30, "{name}: {lines} lines");
    }
}

/// The OLake files expect the verdicts the built-in `olake-bootstrap` finds at the mapped
/// bounds (its catalogue's table, systems/src/olake_bootstrap/expected.rs): master and pr854
/// violate both properties on a primary under load, whatever the faults; pr1084 holds without
/// PostgreSQL crashes.
#[test]
fn olake_files_expect_the_catalogue_verdicts() {
    let dir = connectors_dir();
    let table = [
        ("olake-bootstrap-master.wal", true),
        ("olake-bootstrap-pr854.wal", true),
        ("olake-bootstrap-pr1084.wal", false),
    ];
    for (name, violated) in table {
        let source = std::fs::read_to_string(dir.join(name)).unwrap();
        let file = walcheck_lang::parse(&source).unwrap();
        for property in ["state-matches-slot", "no-lsn-mismatch", "no-fatal-error"] {
            let expect = file.items.iter().find_map(|i| match i {
                walcheck_lang::ast::Item::Expect(e) if e.property.node == property => {
                    Some(e.violated)
                }
                _ => None,
            });
            assert_eq!(expect, Some(violated), "{name}: {property}");
        }
    }
}
