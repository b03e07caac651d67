//! Every file under `connectors/` parses and passes the static checks with no diagnostic.

use std::path::Path;

#[test]
fn every_connector_file_checks_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../connectors");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let wal: Vec<_> = paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .collect();
    assert!(wal.len() >= 5, "expected the example files, found {wal:?}");
    let mut report = String::new();
    for path in wal {
        let source = std::fs::read_to_string(path).unwrap();
        let name = format!("connectors/{}", path.file_name().unwrap().to_string_lossy());
        let checked = walcheck_lang::check(&source);
        report += &walcheck_lang::diagnostic::render_all(&checked.diagnostics, &name, &source);
    }
    assert!(report.is_empty(), "{report}");
}
