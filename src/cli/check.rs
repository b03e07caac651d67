//! `walcheck check` and `walcheck merge`: the entries selected and checked within the budgets,
//! the reports, the JUnit file and the traces written, an interrupt handled; sharded reports joined.

use super::*;

/// `walcheck check`: the entries selected (and sharded), checked within the budget, their
/// counterexamples written, the report printed.
///
/// It takes the whole command so that its flags are named once, here, beside their use. `U`:
/// the binary's own systems, which its searches build models of ([`catalogue::Systems`]).
pub(super) fn check<U: catalogue::Systems>(command: Command) -> ExitCode {
    // First, so that a signal during selection stops the run as one during a search does,
    // rather than killing it before its JUnit placeholder replaces an earlier run's report.
    stop_on_interrupt();
    let Command::Check {
        specs,
        faults,
        bounds,
        threads,
        engine,
        fingerprint_bits,
        max_memory,
        timeout,
        max_states,
        strict,
        json,
        out,
        junit,
        shard,
    } = command
    else {
        unreachable!("main hands check its own command")
    };
    let (timeout, fingerprint_bits) = match check_limits(threads, timeout, max_states)
        .and_then(|t| engine_limits(fingerprint_bits, max_memory).map(|bits| (t, bits)))
    {
        Ok(limits) => limits,
        Err(err) => return usage_error(&err),
    };
    let selection = Selection {
        specs: crate::connector::specs(specs),
        faults,
        bounds,
    };
    // Step tables for a run narrowed to variants; the whole catalogue lists its files.
    let tables = !selection.specs.is_empty() && selection.specs.iter().all(|s| s.contains(':'));
    let flags = engine_flags(engine, fingerprint_bits, max_memory);
    let budgets = (max_states, timeout);
    // Where the run writes is tested before it starts: a bad target costs no search.
    let selected = select_run(&selection, shard.as_deref(), budgets, &flags, strict)
        .and_then(|selected| Ok((selected, prepare_outputs(&out, junit.as_deref())?)));
    let ((entries, shard), created) = match selected {
        Ok(selected) => selected,
        Err(err) => return usage_error(&err),
    };
    // Only for a run that goes ahead: bad usage stays one line.
    note_reference_limits(engine, fingerprint_bits, max_memory);
    let options = run_options(engine, threads, budgets, max_memory, fingerprint_bits);
    let (mut results, wall) = run_checks::<U>(&entries, &options, json, &out);
    // A trace that cannot be written costs its file, not the verdicts: report them all, then
    // say what failed and exit 2.
    let written = write_check_files(&mut results, &out, junit.as_deref(), strict);
    remove_empty(&created);
    let printed = print(&if json {
        pretty(&crate::ci::check_report(
            &results,
            shard.as_ref(),
            crate::ci::peak_rss_bytes(),
        ))
    } else {
        report::check_text(&results, strict, wall, tables)
    });
    check_exit(&results, strict, written, printed)
}

/// `check`'s exit code once its report is printed ([`report::exit_code`]): after a run's files
/// could not all be written, their one-line error and 2; after an interrupt, a line saying so
/// and 130, whatever else happened.
pub(super) fn check_exit(
    results: &[CheckResult],
    strict: bool,
    written: Result<(), String>,
    printed: ExitCode,
) -> ExitCode {
    let written = written.map_err(|err| usage_error(&err));
    if INTERRUPT.load(Ordering::SeqCst) {
        let stopped = results
            .iter()
            .filter(|r| r.limit == Some(run::INTERRUPTED))
            .count();
        let _ = writeln!(
            std::io::stderr(),
            "{}: interrupted: {stopped} of {} checks stopped inconclusive; the report gives the \
             other {}",
            program::name(),
            results.len(),
            results.len() - stopped
        );
        return ExitCode::from(130);
    }
    if let Err(code) = written {
        return code;
    }
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    ExitCode::from(report::exit_code(results, strict) as u8)
}

/// Raised by the first SIGINT or SIGTERM of a `check` run: its searches stop as a budget stops
/// them ([`Budget::interrupt`]), and the run reports what it decided.
pub(super) static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Installs, once per process, the handler that raises [`INTERRUPT`] at the first SIGINT,
/// SIGTERM or SIGHUP and exits 130 at once at the second.
pub(super) fn stop_on_interrupt() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Where a handler is installed already (a crate's own binary over [`main`]), the
        // signals keep their ways.
        let _ = ctrlc::set_handler(|| {
            if INTERRUPT.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    });
}

/// What `check` runs with: its engine, threads and budget, the --timeout counted from now.
pub(super) fn run_options(
    engine: run::Engine,
    threads: usize,
    (max_states, timeout): (Option<u64>, Option<Duration>),
    max_memory: Option<u64>,
    fingerprint_bits: u32,
) -> run::Options {
    let budget = Budget {
        max_states,
        deadline: timeout.map(|t| Instant::now() + t),
        interrupt: Some(&INTERRUPT),
        max_memory_bytes: None,
    };
    run::Options {
        engine,
        max_memory_bytes: Some(max_memory.unwrap_or_else(run::default_max_memory_bytes)),
        fingerprint_bits,
        ..run::Options::new(threads, budget)
    }
}

/// `check`'s --threads, --timeout and --max-states within their ranges, --timeout as a
/// duration; or a one-line error.
pub(super) fn check_limits(
    threads: usize,
    timeout: Option<f64>,
    max_states: Option<u64>,
) -> Result<Option<Duration>, String> {
    if !(1..=64).contains(&threads) {
        return Err(format!("--threads takes 1 to 64, not {threads}"));
    }
    let timeout = match timeout {
        None => None,
        Some(secs) if secs.is_finite() && secs > 0.0 && secs <= 1e6 => {
            Some(Duration::from_secs_f64(secs))
        }
        Some(_) => return Err("--timeout takes seconds above 0 and at most 1000000".into()),
    };
    if max_states == Some(0) {
        return Err("--max-states takes a whole number above 0".into());
    }
    Ok(timeout)
}

/// The engine's flags a run was given where they are not the defaults, as `check` takes them.
pub(super) fn engine_flags(
    engine: run::Engine,
    fingerprint_bits: u32,
    max_memory: Option<u64>,
) -> Vec<String> {
    let mut flags = Vec::new();
    if engine != run::Engine::default() {
        flags.push(format!("--engine {}", engine.name()));
    }
    if fingerprint_bits != 64 {
        flags.push(format!("--fingerprint-bits {fingerprint_bits}"));
    }
    if let Some(bytes) = max_memory {
        flags.push(format!("--max-memory {bytes}"));
    }
    flags
}

/// A `note:` on stderr when --engine reference is given flags it does not fully apply.
pub(super) fn note_reference_limits(
    engine: run::Engine,
    fingerprint_bits: u32,
    max_memory: Option<u64>,
) {
    if engine == run::Engine::Reference && (max_memory.is_some() || fingerprint_bits != 64) {
        eprintln!(
            "note: --engine reference stores states whole, and its eventually checks' graphs with \
             64-bit fingerprints: --fingerprint-bits does not apply, and --max-memory bounds only \
             its eventually checks"
        );
    }
}

/// `check`'s --fingerprint-bits (64 or 128) and --max-memory (above 0): the width, or a
/// one-line error.
pub(super) fn engine_limits(fingerprint_bits: i64, max_memory: Option<u64>) -> Result<u32, String> {
    if max_memory == Some(0) {
        return Err("--max-memory takes a whole number of bytes above 0".into());
    }
    match fingerprint_bits {
        64 => Ok(64),
        128 => Ok(128),
        other => Err(format!("--fingerprint-bits takes 64 or 128, not {other}")),
    }
}

/// The entries `selection` names, and with --shard I/N only shard I's with what `merge` needs
/// to know of it (the run's selection, --max-states and --timeout in one line); or a one-line
/// error.
pub(super) fn select_run(
    selection: &Selection,
    shard: Option<&str>,
    (max_states, timeout): (Option<u64>, Option<Duration>),
    engine: &[String],
    strict: bool,
) -> Result<(Vec<Entry>, Option<crate::ci::Shard>), String> {
    let entries = catalogue::select(selection)?;
    if entries.is_empty() {
        return Err("the selection names no checks".into());
    }
    let Some((index, count)) = shard.map(run::parse_shard).transpose()? else {
        return Ok((entries, None));
    };
    let shard = crate::ci::Shard {
        index,
        count,
        selection: crate::ci::selection_line(
            &selection.specs,
            selection.faults.as_deref(),
            &selection.bounds,
            max_states,
            timeout.map(|t| t.as_secs_f64()),
            engine,
        ),
        strict,
        entries: crate::ci::shard_len(entries.len(), index, count),
        selection_entries: entries.len(),
    };
    Ok((run::shard(entries, index, count), Some(shard)))
}

/// Runs `entries` with `options`, with progress lines on a terminal unless the report is JSON,
/// each counterexample written under `out` as soon as it is found; from the first SIGINT or
/// SIGTERM on, the searches stop as a budget stops them. The results, and the wall time they
/// took.
pub(super) fn run_checks<U: catalogue::Systems>(
    entries: &[Entry],
    options: &run::Options,
    json: bool,
    out: &Path,
) -> (Vec<CheckResult>, Duration) {
    let started = Instant::now();
    let lines = crate::progress::Lines::wanted(json)
        .map(|color| crate::progress::Lines::new(entries.len(), color));
    let shown: &dyn run::Observer = match &lines {
        Some(lines) => lines,
        None => &run::Unobserved,
    };
    let writing = run::WritingTraces::new(out, entries.len(), shown);
    let mut results = run::run_all_with::<U>(entries, options, &writing);
    writing.record(&mut results);
    crate::connector::warn_unreached(entries);
    (results, started.elapsed())
}

/// The files a check run leaves: its counterexamples under `out` (their paths recorded in
/// `results`), and the JUnit report when asked for. Both are attempted; the first failure is
/// the one-line error.
pub(super) fn write_check_files(
    results: &mut [CheckResult],
    out: &Path,
    junit: Option<&Path>,
    strict: bool,
) -> Result<(), String> {
    let traces = run::write_traces(results, out);
    let junit = junit.map_or(Ok(()), |path| {
        write_whole(path, &crate::ci::junit(results, strict))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    });
    traces.and(junit)
}

/// Whether `check` can write where it is told to, tested before the run: the trace directory
/// `out` created (with its missing parents) and a probe file written in it and removed, and
/// the `--junit` file's place, where the file of a run not finished is written
/// ([`junit_writable`]); or a one-line error. The directories it created, deepest first, for
/// [`remove_empty`] once the run is done.
pub(super) fn prepare_outputs(out: &Path, junit: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let created: Vec<PathBuf> = out
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect();
    let probe = out.join(format!(".walcheck-probe.{}", std::process::id()));
    let prepared = std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create trace directory {}: {e}", out.display()))
        .and_then(|()| {
            std::fs::File::create(&probe)
                .and_then(|_| std::fs::remove_file(&probe))
                .map_err(|e| format!("cannot write in trace directory {}: {e}", out.display()))
        })
        .and_then(|()| {
            junit.map_or(Ok(()), |path| {
                junit_writable(path).map_err(|e| format!("cannot write {}: {e}", path.display()))
            })
        });
    match prepared {
        Ok(()) => Ok(created),
        Err(err) => {
            remove_empty(&created);
            Err(err)
        }
    }
}

/// Whether the JUnit report can be written to `path` as [`write_whole`] will write it: a file
/// that is not a regular one (a pipe, `/dev/stdout`; a directory is refused) opened for
/// writing, untouched; at any other path (a link to a regular file included), the report of a run not finished is written
/// ([`crate::ci::junit_unfinished`]), which the run's own replaces when it ends, so that a run
/// killed before then leaves a JUnit error, not the report of the run before. A path ending in
/// a separator, `.` or `..` names no file.
pub(super) fn junit_writable(path: &Path) -> std::io::Result<()> {
    // Opening a FIFO for writing waits for a reader, and a reader gets the probe's empty file.
    #[cfg(unix)]
    if std::fs::metadata(path)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()))
    {
        let fifo = "a FIFO, not a file";
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, fifo));
    }
    // A link to a regular file is written through like the file itself: it gets the report of
    // a run not finished too.
    let linked_file = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_file());
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file());
    if special && !linked_file {
        return std::fs::OpenOptions::new().write(true).open(path).map(drop);
    }
    // `file_name` reads past a trailing separator or `.`: `nodir/` or `nodir/.` would be
    // written beside `nodir`.
    let text = path.as_os_str().to_string_lossy();
    let a_directory = text.ends_with(std::path::is_separator)
        || text.rsplit(std::path::is_separator).next() == Some(".");
    if a_directory || path.file_name().is_none() {
        let not_a_file = "not a file's path";
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            not_a_file,
        ));
    }
    write_whole(path, &crate::ci::junit_unfinished())
}

/// Removes the directories `created` (deepest first) that are still empty: a run that wrote no
/// trace leaves no trace directory it made.
pub(super) fn remove_empty(created: &[PathBuf]) {
    for dir in created {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// `walcheck merge REPORT.json...`.
pub(super) fn merge(reports: &[PathBuf]) -> ExitCode {
    let mut read = Vec::new();
    for path in reports {
        let text = crate::input::read_input(path, "report", crate::input::REPORT_MAX_BYTES);
        let parsed = text.and_then(|text| {
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| format!("{}: {e}", path.display()))
        });
        match parsed {
            Ok(value) => read.push((path.display().to_string(), value)),
            Err(err) => return usage_error(&err),
        }
    }
    let merged = match crate::ci::merge(&read) {
        Ok(merged) => merged,
        Err(err) => return usage_error(&err),
    };
    let printed = print(&pretty(&merged));
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    let strict = crate::ci::shards_strict(&read);
    ExitCode::from(crate::ci::report_exit_code(&merged, strict) as u8)
}
