//! `walcheck live`: conformance and the live ladder against a real PostgreSQL server.

use super::*;

/// `walcheck live …`.
pub(super) fn live_command(what: LiveCommand) -> ExitCode {
    walcheck_live::server::clean_up_on_interrupt();
    match what {
        LiveCommand::Conformance {
            pg_url,
            binaries,
            trace_out,
        } => live_conformance(pg_url.as_deref(), &binaries, trace_out.as_deref()),
        LiveCommand::Ladder {
            pg_url,
            binaries,
            ladder,
            attempts,
            level_ms,
            sim_attempts,
        } => {
            let options = (|| -> Result<walcheck_live::ladder::LiveOptions, String> {
                Ok(walcheck_live::ladder::LiveOptions {
                    ladders: LadderKind::parse(&ladder)?,
                    variants: walcheck_model::olake::Variant::ALL.to_vec(),
                    attempts: live_number("attempts", &attempts, 1_000)? as u32,
                    level_ms_max: live_number("level-ms", &level_ms, 600_000)?,
                    advance_timeout_ms: 2_000,
                    sim_attempts: live_number("sim-attempts", &sim_attempts, 100_000)? as u32,
                    seed: 1,
                    sim_params: Params::this_machine(),
                    sim_protocol: walcheck_sim::engine::Protocol::BackToBack,
                })
            })();
            match options {
                Ok(options) => live_ladder(pg_url.as_deref(), &binaries, &options),
                Err(e) => usage_error(&e),
            }
        }
    }
}

/// A `live` flag's whole number from 1 to `max`, or a one-line error.
pub(super) fn live_number(name: &str, text: &str, max: u64) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("--{name} takes 1 to {max}, not {text:?}")),
    }
}

/// The server `live` runs on: the one at --pg-url, else a throwaway one started here with the
/// binaries of --pg-bindir, else of --pg-version, else the default ones
/// ([`walcheck_live::find_bindir`]).
pub(super) fn live_server(
    pg_url: Option<&str>,
    binaries: &PgBinaries,
) -> Result<walcheck_live::PgServer, String> {
    if let Some(url) = pg_url {
        return walcheck_live::PgServer::external(url);
    }
    let bindir = match (&binaries.pg_bindir, &binaries.pg_version) {
        (Some(dir), _) => walcheck_live::versions::check_bindir(dir)?,
        (None, Some(version)) => walcheck_live::find_version_bindir(version.parse()?)?,
        (None, None) => walcheck_live::find_bindir()?,
    };
    walcheck_live::PgServer::start_primary(&bindir)
}

/// `walcheck live conformance`: every rule run, the observed traces written under `trace_out`
/// (a failed rule's as `pg-live__RULE.FAILED.itf.json`), the table printed; exit 1 when a rule
/// fails, 2 when the server could not be set up for one. The trace folder is made, and checked
/// writable, before anything starts. After an interrupt nothing is reported: the handler exits
/// 130 ([`walcheck_live::server::exit_interrupted`]).
pub(super) fn live_conformance(
    pg_url: Option<&str>,
    binaries: &PgBinaries,
    trace_out: Option<&Path>,
) -> ExitCode {
    use walcheck_live::conformance;
    if let Some(dir) = trace_out {
        if let Err(e) = writable_dir(dir) {
            return usage_error(&e);
        }
    }
    let server = match live_server(pg_url, binaries) {
        Ok(server) => server,
        Err(e) => return live_error(&e),
    };
    let runs = conformance::run_all(&server);
    if walcheck_live::server::interrupted() {
        walcheck_live::server::exit_interrupted();
    }
    let written = trace_out.map_or(Ok(()), |dir| write_observed_traces(dir, &runs));
    let code = print(&conformance::to_text(&server, &runs));
    if let Err(e) = written {
        return usage_error(&e);
    }
    if runs
        .iter()
        .any(|run| matches!(&run.result, Err(e) if !conformance::is_setup_error(e)))
    {
        ExitCode::from(1)
    } else if runs.iter().any(|run| run.result.is_err()) {
        ExitCode::from(2)
    } else {
        code
    }
}

/// An error of a live run: after an interrupt, the interrupt's exit (130) instead.
pub(super) fn live_error(message: &str) -> ExitCode {
    if walcheck_live::server::interrupted() {
        walcheck_live::server::exit_interrupted();
    }
    usage_error(message)
}

/// Makes `dir` (and its parents) and checks a file can be written in it.
pub(super) fn writable_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let probe = dir.join(format!(".walcheck-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Each rule's observed trace as `dir/pg-live__RULE.itf.json`, a rule's that failed as
/// `dir/pg-live__RULE.FAILED.itf.json` (what its last session saw, up to the failure).
pub(super) fn write_observed_traces(
    dir: &Path,
    runs: &[walcheck_live::conformance::RuleRun],
) -> Result<(), String> {
    for run in runs {
        let (trace, name) = match (&run.result, &run.failed_trace) {
            (
                Ok(Outcome::Pass {
                    trace: Some(trace), ..
                }),
                _,
            ) => (trace, format!("pg-live__{}.itf.json", run.rule.name)),
            (Err(_), Some(trace)) => (trace, format!("pg-live__{}.FAILED.itf.json", run.rule.name)),
            _ => continue,
        };
        let path = dir.join(name);
        trace
            .write(&path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// `walcheck live ladder`: OLake #1084's ladders on the live server beside the simulator's
/// prediction. After an interrupt nothing is reported: the handler exits 130.
pub(super) fn live_ladder(
    pg_url: Option<&str>,
    binaries: &PgBinaries,
    options: &walcheck_live::ladder::LiveOptions,
) -> ExitCode {
    let server = match live_server(pg_url, binaries) {
        Ok(server) => server,
        Err(e) => return live_error(&e),
    };
    let result = walcheck_live::ladder::run_live_ladder(&server, options);
    if walcheck_live::server::interrupted() {
        walcheck_live::server::exit_interrupted();
    }
    match result {
        Ok(result) => print(&walcheck_live::ladder::to_text(&result)),
        Err(e) => live_error(&format!("live ladder: {e}")),
    }
}
