//! Marks the tests that need a missing tool ignored, naming it and how to install it: Chromium
//! (tests/explore.rs, tests/mermaid.rs), the mermaid bundle (tests/mermaid.rs) and PostgreSQL
//! (tests/live_cli.rs). See `live/probe.rs`.

#[path = "live/probe.rs"]
mod probe;

use std::path::{Path, PathBuf};

fn main() {
    probe::postgres();
    println!("cargo::rerun-if-env-changed=WALCHECK_CHROMIUM");
    let chromium = std::env::var_os("WALCHECK_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"));
    let chromium = find_program(&chromium);
    probe::watch(chromium.as_deref());
    probe::skip_cfg(
        "no_chromium",
        chromium.is_some(),
        "WALCHECK_REQUIRE_BROWSER",
    );
    println!("cargo::rerun-if-env-changed=WALCHECK_MERMAID_JS");
    // Where .ci/run installs it, unless WALCHECK_MERMAID_JS says.
    let installed = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("target/mermaid");
    let bundle = std::env::var_os("WALCHECK_MERMAID_JS")
        .map(PathBuf::from)
        .unwrap_or_else(|| installed.join("node_modules/mermaid/dist/mermaid.min.js"));
    if bundle.is_file() {
        println!("cargo::rerun-if-changed={}", bundle.display());
    } else if installed.is_dir() {
        println!("cargo::rerun-if-changed={}", installed.display());
    }
    probe::skip_cfg(
        "no_mermaid_js",
        bundle.is_file(),
        "WALCHECK_REQUIRE_BROWSER",
    );
}

/// `name` as a command finds it: a path as given, else the first executable file of that name
/// in a `PATH` directory.
fn find_program(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return name.is_file().then(|| name.to_path_buf());
    }
    probe::path_dirs()
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}
