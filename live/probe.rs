//! Build-time probes for the tools some tests need, shared by the build scripts of the root
//! package and of walcheck-live: each finds its tool as the tests do and, when it is missing
//! and not required, sets a cfg that marks the tests `#[ignore]`d with the tool and how to
//! install it, so `cargo test` prints `ignored, needs …` rather than `ok`. A `WALCHECK_REQUIRE_*`
//! variable set to 1 (CI sets them) keeps the tests running, to fail on the missing tool.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Declares `cfg` and sets it when `found` is false and `require` is not set to 1.
pub fn skip_cfg(cfg: &str, found: bool, require: &str) {
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    println!("cargo::rerun-if-env-changed={require}");
    let required = std::env::var(require).is_ok_and(|v| v == "1");
    if !found && !required {
        println!("cargo::rustc-cfg={cfg}");
    }
}

/// Reruns the build script when `found` changes; when the tool was not found, when a system
/// directory of `PATH` changes instead (an install adds a file there), so that a missing tool
/// is looked for again once installed, without rerunning on every build.
pub fn watch(found: Option<&Path>) {
    println!("cargo::rerun-if-env-changed=PATH");
    match found {
        Some(path) => println!("cargo::rerun-if-changed={}", path.display()),
        None => {
            // Not the per-user directories (shims, cargo's bin) that change for other reasons.
            let system = |dir: &PathBuf| {
                ["/usr/", "/opt/", "/snap/", "/bin", "/sbin"]
                    .iter()
                    .any(|p| dir.starts_with(p))
            };
            for dir in path_dirs().iter().filter(|d| system(d)) {
                println!("cargo::rerun-if-changed={}", dir.display());
            }
        }
    }
}

/// The existing directories of `PATH`, in order, each once.
pub fn path_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        if dir.is_absolute() && dir.is_dir() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// PostgreSQL's `initdb` as the live tests look for it (`walcheck_live::find_bindir`):
/// `WALCHECK_PG_BINDIR`, then `pg_config --bindir`, then Debian's
/// `/usr/lib/postgresql/<major>/bin`.
pub fn find_initdb() -> Option<PathBuf> {
    println!("cargo::rerun-if-env-changed=WALCHECK_PG_BINDIR");
    if let Some(dir) = std::env::var_os("WALCHECK_PG_BINDIR") {
        let initdb = PathBuf::from(dir).join("initdb");
        return initdb.is_file().then_some(initdb);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let initdb = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("initdb");
        if out.status.success() && initdb.is_file() {
            return Some(initdb);
        }
    }
    let mut majors: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let initdb = e.path().join("bin/initdb");
            initdb.is_file().then_some((major, initdb))
        })
        .collect();
    majors.sort();
    majors.pop().map(|(_, initdb)| initdb)
}

/// Sets `no_postgres` unless PostgreSQL is there or `WALCHECK_REQUIRE_PG=1`.
pub fn postgres() {
    let initdb = find_initdb();
    watch(initdb.as_deref());
    if initdb.is_none() && Path::new("/usr/lib/postgresql").is_dir() {
        println!("cargo::rerun-if-changed=/usr/lib/postgresql");
    }
    skip_cfg("no_postgres", initdb.is_some(), "WALCHECK_REQUIRE_PG");
}

/// The versions `.ci/pg-versions` installs, as live/tests/live.rs runs every rule on each: the
/// cfg set when a version is missing, its folder under the versions folder, and its major (also
/// found in Debian's `/usr/lib/postgresql/<major>/bin`, except for a minor).
pub const PG_VERSIONS: &[(&str, &str, Option<u32>)] = &[
    ("no_pg15_12", "15.12", None),
    ("no_pg15_18", "15.18", None),
    ("no_pg16", "16", Some(16)),
    ("no_pg17", "17", Some(17)),
    ("no_pg18", "18", Some(18)),
];

/// Sets each of [`PG_VERSIONS`]' cfgs when that version's `initdb` is not where
/// `walcheck_live::versions` looks (`WALCHECK_PG_VERSIONS_DIR`, else the workspace's
/// `target/pg`; Debian's folder of the major) and `WALCHECK_REQUIRE_PG=1` is not set. The
/// versions folder is watched when it exists (installing into it later reruns this).
#[allow(dead_code)] // live/build.rs's, not the root package's
pub fn pg_versions() {
    println!("cargo::rerun-if-env-changed=WALCHECK_PG_VERSIONS_DIR");
    let dir = std::env::var_os("WALCHECK_PG_VERSIONS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let manifest =
                PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
            manifest.parent().unwrap_or(&manifest).join("target/pg")
        });
    if dir.is_dir() {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    for (cfg, name, major) in PG_VERSIONS {
        let found = dir.join(name).join("bin/initdb").is_file()
            || major.is_some_and(|m| {
                Path::new(&format!("/usr/lib/postgresql/{m}/bin/initdb")).is_file()
            });
        skip_cfg(cfg, found, "WALCHECK_REQUIRE_PG");
    }
}
