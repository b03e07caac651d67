//! Connector files on the command line: `walcheck check connectors/x.wal` (or a folder of
//! `.wal` files) loads each file as a system (`walcheck_lang::system`) before the registry is
//! read, and the specs that name files become the names of their systems.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use crate::catalogue::AnySystem;

/// Each file or folder named on the command line, with the systems it loaded (a folder's in
/// file-name order).
static LOADED: OnceLock<Vec<(String, Vec<&'static str>)>> = OnceLock::new();

/// Whether `arg` names connector files: a path ending in `.wal`, or a folder.
fn names_files(arg: &str) -> bool {
    !arg.starts_with('-') && (arg.ends_with(".wal") || Path::new(arg).is_dir())
}

/// The `.wal` files `arg` names: itself, or a folder's, sorted.
fn files_of(arg: &str) -> Result<Vec<PathBuf>, String> {
    let path = Path::new(arg);
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("cannot read {arg}: {e}"))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wal"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{arg} holds no .wal connector file"));
    }
    Ok(files)
}

/// Loads every connector file the arguments name, printing each file's warnings; a file with
/// errors prints its diagnostics and makes the command exit 2.
pub fn load_named(
    args: impl Iterator<Item = String>,
) -> Result<Vec<&'static dyn AnySystem>, ExitCode> {
    let mut systems: Vec<&'static dyn AnySystem> = Vec::new();
    let mut loaded = Vec::new();
    let mut failed = false;
    for arg in args.filter(|a| names_files(a)) {
        let files = match files_of(&arg) {
            Ok(files) => files,
            Err(e) => return Err(crate::cli::usage_error(&e)),
        };
        let mut names = Vec::new();
        for file in files {
            match walcheck_lang::system::load(&file) {
                Ok((system, warnings)) => {
                    let _ = write!(std::io::stderr(), "{warnings}");
                    let system: &'static dyn AnySystem = Box::leak(Box::new(system));
                    names.push(system.info().name);
                    systems.push(system);
                }
                Err(diagnostics) if diagnostics.contains('\n') => {
                    let _ = write!(std::io::stderr(), "{diagnostics}");
                    failed = true;
                }
                Err(e) => return Err(crate::cli::usage_error(&e)),
            }
        }
        loaded.push((arg, names));
    }
    if failed {
        return Err(ExitCode::from(2));
    }
    let _ = LOADED.set(loaded);
    Ok(systems)
}

/// `specs` with each one that names connector files replaced by their systems' names.
pub fn specs(specs: Vec<String>) -> Vec<String> {
    let loaded = LOADED.get().map_or(&[][..], Vec::as_slice);
    specs
        .into_iter()
        .flat_map(|spec| match loaded.iter().find(|(arg, _)| *arg == spec) {
            Some((_, names)) => names.iter().map(|n| (*n).to_owned()).collect(),
            None => vec![spec],
        })
        .collect()
}
