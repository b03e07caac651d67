//! What the tests share: where the files they read are.

use std::path::{Path, PathBuf};

/// The repository's `connectors/` folder, the example designs.
pub fn connectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../connectors")
}

/// The `.wal` files directly under `dir`, in name order.
pub fn wal_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "wal"));
    paths.sort();
    paths
}
