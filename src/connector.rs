//! Connector files on the command line: `walcheck check connectors/x.wal` (or a folder of
//! `.wal` files) loads each file as a system (`walcheck_lang::system`) before the registry is
//! read, and the specs that name files become the names of their systems.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use walcheck_lang::system::FileSystem;
use walcheck_properties::system::System;

/// Each file or folder named on the command line, with the systems it loaded (a folder's in
/// file-name order).
static LOADED: OnceLock<Vec<(String, Vec<&'static str>)>> = OnceLock::new();

/// The systems loaded from files, by name, for walcheck's own witnesses.
static FILES: OnceLock<Vec<&'static FileSystem>> = OnceLock::new();

/// Prints, on stderr, walcheck's own witnesses for every configuration of a connector file
/// among `entries` that misses one: each step of the file reached, a connector crash taken at
/// each (when the configuration allows crashes). Warnings only: they change no verdict and no
/// exit code.
pub fn warn_unreached(entries: &[crate::catalogue::Entry]) {
    let files = FILES.get().map_or(&[][..], Vec::as_slice);
    let mut done: Vec<&crate::catalogue::SystemConfig> = Vec::new();
    for entry in entries {
        let Some(file) = files.iter().find(|f| f.info().name == entry.system()) else {
            continue;
        };
        if done.contains(&&entry.config) {
            continue;
        }
        done.push(&entry.config);
        for line in file.unreached(&entry.config.config) {
            let _ = writeln!(
                std::io::stderr(),
                "{}: warning: {}: {line}",
                crate::program::name(),
                entry.config
            );
        }
    }
}

/// Each loaded system's `PATH#fnv1a64:HEX`, what its traces' headers carry.
static SOURCES: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();

/// The source a trace of system `name` records: its file and the hash of its text, for a
/// system loaded from a connector file.
pub fn source_of(name: &str) -> Option<String> {
    let sources = SOURCES.get()?;
    sources
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s.clone())
}

/// FNV-1a, 64 bits, of `bytes`: a hash to tell that a file changed, not a security one.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `PATH#fnv1a64:HEX` of `text`, the file at `path`, the path as the command line gave it: a
/// trace written under a project's folder then names its file relative to that project, not to
/// the machine, and [`file_of_trace`] finds it again from the trace's own folder.
fn source(path: &Path, text: &str) -> String {
    format!("{}#{}", path.display(), digest(text))
}

/// `fnv1a64:HEX` of `text`: what [`source`] writes after the `#`.
fn digest(text: &str) -> String {
    format!("fnv1a64:{:016x}", fnv1a64(text.as_bytes()))
}

/// The text of the connector file at `path`, or the one-line error naming it
/// ([`crate::input::read_input`]).
fn read_connector(path: &Path) -> Result<String, String> {
    crate::input::read_input(path, "connector file", crate::input::CONNECTOR_MAX_BYTES)
}

/// Where the file a trace recorded as `recorded` may be now, in the order tried: the path
/// itself (absolute, or from the current folder); then, for a relative path, the same path
/// from the trace's folder and each folder above it (a trace under `traces/out/` of a project
/// whose `check` ran at its root); then a file of the same name beside the trace, in a folder
/// above it, or in the current folder.
fn candidates(trace: &Path, recorded: &Path) -> Vec<PathBuf> {
    let mut found = vec![recorded.to_path_buf()];
    let folders: Vec<&Path> = trace
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .into_iter()
        .flat_map(Path::ancestors)
        .collect();
    if recorded.is_relative() {
        found.extend(folders.iter().map(|f| f.join(recorded)));
    }
    if let Some(name) = recorded.file_name() {
        found.extend(folders.iter().map(|f| f.join(name)));
        found.push(PathBuf::from(name));
    }
    found
}

/// The connector file a trace's header names (`walcheck:source`), for `show` and `replay`: the
/// first of its [`candidates`] whose text has the recorded hash, else the first that exists
/// with a line saying it changed since the trace was written, else the recorded path with a
/// line saying it cannot be found.
fn file_of_trace(trace: &str) -> Option<(String, Option<String>)> {
    let text = crate::input::read_input(Path::new(trace), "trace", crate::input::TRACE_MAX_BYTES);
    let header = walcheck_traces::Trace::from_text(&text.ok()?).ok()?.header;
    let recorded = header.source?;
    let (path, hash) = recorded.rsplit_once('#')?;
    let candidates = candidates(Path::new(trace), Path::new(path));
    let hash_of = |file: &Path| read_connector(file).ok().map(|text| digest(&text));
    if let Some(same) = candidates
        .iter()
        .find(|c| hash_of(c).as_deref() == Some(hash))
    {
        return Some((same.display().to_string(), None));
    }
    Some(match candidates.iter().find(|c| c.is_file()) {
        Some(other) => (
            other.display().to_string(),
            Some(format!(
                "{} changed since {trace} was written from {path} (its hash differs): the trace may not replay",
                other.display()
            )),
        ),
        None => (
            path.to_owned(),
            Some(format!(
                "{trace} was written from {path}, which is found neither from here nor beside the trace or in a folder above it: put the file there, or run from the folder check ran in"
            )),
        ),
    })
}

/// Whether `arg` names connector files: a path ending in `.wal`, or a folder holding some.
fn names_files(arg: &str) -> bool {
    let holds_files = || {
        std::fs::read_dir(arg).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.path().extension().is_some_and(|x| x == "wal"))
        })
    };
    !arg.starts_with('-') && (arg.ends_with(".wal") || holds_files())
}

/// The options whose value is a path or a number, never a connector file.
const VALUE_OPTIONS: &[&str] = &[
    "--out",
    "--junit",
    "--trace-out",
    "--bound",
    "--faults",
    "--shard",
    "--plot",
    "--addr",
];

/// Why `arg`, which looks like a path (it has a `/`), names no connector file: it does not
/// exist, or it is a folder without `.wal` files. `None` for anything else (a system's name, a
/// trace, an existing file another command reads).
fn not_files(arg: &str) -> Option<String> {
    let path = Path::new(arg);
    if arg.starts_with('-') || !arg.contains('/') {
        return None;
    }
    if path.is_dir() {
        return Some(format!("{arg} holds no .wal connector file"));
    }
    (!path.exists()).then(|| format!("{arg}: no such file or folder"))
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
    if files.is_empty() {
        return Err(format!("{arg} holds no .wal connector file"));
    }
    files.sort();
    Ok(files)
}

/// The files and folders the arguments name, in order and once each, and the files the traces
/// they name were written from (saying so when such a file changed); an argument that looks
/// like a path but names no connector file is a one-line error.
fn named_files(args: impl Iterator<Item = String>) -> Result<Vec<String>, String> {
    let mut named = Vec::new();
    let mut previous = String::new();
    let mut command = None;
    for arg in args {
        // Only `check` and `explore` take specs; other commands' paths are theirs to judge.
        let specs = matches!(
            command.get_or_insert_with(|| arg.clone()).as_str(),
            "check" | "explore"
        );
        let value = VALUE_OPTIONS.contains(&previous.as_str());
        previous.clone_from(&arg);
        let path = if value {
            continue;
        } else if names_files(&arg) {
            arg
        } else if let Some(why) = not_files(&arg).filter(|_| specs) {
            return Err(why);
        } else if let Some((path, changed)) = arg
            .ends_with(".json")
            .then(|| file_of_trace(&arg))
            .flatten()
        {
            if let Some(changed) = changed {
                let _ = writeln!(
                    std::io::stderr(),
                    "{}: warning: {changed}",
                    crate::program::name()
                );
            }
            path
        } else {
            continue;
        };
        if !named.contains(&path) {
            named.push(path);
        }
    }
    Ok(named)
}

/// Why a file's system cannot be registered under its name: taken by a built-in system or by a
/// file loaded before it, or not a word.
fn bad_name(file: &Path, name: &str, before: &[&'static FileSystem]) -> Option<String> {
    let taken = crate::catalogue::built_in()
        .iter()
        .any(|s| s.info().name == name)
        || before.iter().any(|s| s.info().name == name);
    let why = if taken {
        "already taken (a built-in system, or another file of that name)"
    } else if name.contains(':') || name.contains(char::is_whitespace) {
        "not a word without ':' or spaces"
    } else {
        return None;
    };
    Some(format!(
        "{}: a connector file's name is its system's, and {name:?} is {why}: rename the file",
        file.display()
    ))
}

/// Loads every connector file the arguments name, printing each file's warnings; a file with
/// errors prints its diagnostics and makes the command exit 2.
pub fn load_named(
    args: impl Iterator<Item = String>,
) -> Result<Vec<&'static FileSystem>, ExitCode> {
    let named = named_files(args).map_err(|e| crate::program::usage_error(&e))?;
    let mut systems: Vec<&'static FileSystem> = Vec::new();
    let (mut loaded, mut sources, mut failed) = (Vec::new(), Vec::new(), false);
    for arg in named {
        let files = files_of(&arg).map_err(|e| crate::program::usage_error(&e))?;
        let mut names = Vec::new();
        for file in files {
            let text = read_connector(&file).map_err(|e| crate::program::usage_error(&e))?;
            match walcheck_lang::system::load_text(&file, &text) {
                Ok((system, warnings)) => {
                    let _ = write!(std::io::stderr(), "{warnings}");
                    if let Some(why) = bad_name(&file, system.info().name, &systems) {
                        return Err(crate::program::usage_error(&why));
                    }
                    let system: &'static FileSystem = Box::leak(Box::new(system));
                    names.push(system.info().name);
                    sources.push((system.info().name, source(&file, &text)));
                    systems.push(system);
                }
                Err(diagnostics) if diagnostics.contains('\n') => {
                    let _ = write!(std::io::stderr(), "{diagnostics}");
                    failed = true;
                }
                Err(e) => return Err(crate::program::usage_error(&e)),
            }
        }
        loaded.push((arg, names));
    }
    if failed {
        return Err(ExitCode::from(2));
    }
    let _ = LOADED.set(loaded);
    let _ = SOURCES.set(sources);
    let _ = FILES.set(systems.clone());
    Ok(systems)
}

/// `specs` with each one that names connector files replaced by their systems: a file by
/// `NAME:design` (so that `check` prints its counterexamples' step tables), a folder by its
/// files' names.
pub fn specs(specs: Vec<String>) -> Vec<String> {
    let loaded = LOADED.get().map_or(&[][..], Vec::as_slice);
    specs
        .into_iter()
        .flat_map(|spec| match loaded.iter().find(|(arg, _)| *arg == spec) {
            Some((arg, names)) if !Path::new(arg).is_dir() => names
                .iter()
                .map(|n| format!("{n}:{}", walcheck_lang::system::VARIANT))
                .collect(),
            Some((_, names)) => names.iter().map(|n| (*n).to_owned()).collect(),
            None => vec![spec],
        })
        .collect()
}
