//! Each property is declared once: its id appears in exactly one place per system declaring it in the code outside
//! tests and the expectation tables (`expected.rs`), the `PropertyInfo` that declares it. The
//! model's `properties()`, liveness, the simulator and the triage refer to that declaration.

use std::path::{Path, PathBuf};

use walcheck::catalogue;
use walcheck_systems::electric_flush::TRIAGE_PROPERTIES;

use crate::util::{rust_files, ROOT};

/// The code files under `dir` but the expectation tables (`expected.rs`).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let files = rust_files(dir, &["target", "tests", "benches", "traces"]);
    out.extend(files.into_iter().filter(|f| !f.ends_with("expected.rs")));
}

/// Code lines: comments left out, and `#[cfg(test)]` modules from their start to the end of the
/// file (they come last in every file here).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap();
    text.lines()
        .filter(|line| {
            let t = line.trim_start();
            !t.starts_with("//")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_property_id_is_written_once() {
    let root = Path::new(ROOT);
    let mut files = Vec::new();
    for dir in [
        "src",
        "model",
        "properties",
        "systems",
        "sim",
        "live",
        "traces",
    ] {
        sources(&root.join(dir), &mut files);
    }
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let text = code(&std::fs::read_to_string(&f).unwrap());
            (f, text)
        })
        .collect();
    // An id two systems share (`no-lsn-mismatch`) is declared once by each.
    let mut ids: Vec<&str> = catalogue::built_in()
        .iter()
        .flat_map(|s| s.info().properties.iter().map(|p| p.id))
        .chain(TRIAGE_PROPERTIES.iter().map(|p| p.id))
        .collect();
    ids.sort_unstable();
    let mut checked = 0;
    for (i, id) in ids.iter().enumerate() {
        if i > 0 && ids[i - 1] == *id {
            continue;
        }
        let declarations = ids.iter().filter(|other| *other == id).count();
        let quoted = format!("\"{id}\"");
        let places: Vec<_> = texts
            .iter()
            .filter_map(|(f, t)| {
                let n = t.matches(&quoted).count();
                (n > 0).then(|| format!("{} ({n})", f.strip_prefix(root).unwrap().display()))
            })
            .collect();
        let total: usize = texts.iter().map(|(_, t)| t.matches(&quoted).count()).sum();
        assert_eq!(
            total, declarations,
            "{id} is written {total} times, declared by {declarations} system(s): {places:?}"
        );
        checked += 1;
    }
    assert!(checked > 40, "only {checked} ids checked");
}
