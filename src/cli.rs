//! The `walcheck` command line: parses arguments, calls the library, prints. A crate that
//! defines its own systems gets all of it for them with [`main`]:
//!
//! ```no_run
//! # use walcheck::catalogue::AnySystem;
//! # fn my_systems() -> Vec<&'static dyn AnySystem> { Vec::new() }
//! fn main() -> std::process::ExitCode {
//!     walcheck::cli::main(&my_systems())
//! }
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

use crate::catalogue::{self, Entry, Selection};
use crate::run::CheckResult;
use crate::search::Budget;
use crate::{report, run};
use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use walcheck_live::conformance::Outcome;
use walcheck_sim::{swarm, LadderKind, Params, PARAMS};
use walcheck_traces::render::{self, Cells};
use walcheck_traces::{write_whole, Trace};

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Mermaid,
    Svg,
    Itf,
}

/// Model checker for the pointer-and-acknowledgement logic of PostgreSQL CDC pipelines.
#[derive(Parser)]
#[command(name = "walcheck", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Re-execute a trace against the model its header names.
    ///
    /// Exit 0: every step enabled, every state as recorded, the recorded verdict at the end;
    /// 1: the first step that differs is named; 2: the file is not a walcheck trace.
    Replay {
        /// A trace file written by `walcheck check` (ITF JSON).
        trace: PathBuf,
    },
    /// Settle Electric #4058's hypotheses and fixes with checks on the electric-flush model.
    Triage {
        /// The system to triage: electric-flush.
        system: String,
        /// Print the walcheck.triage/1 JSON.
        #[arg(long)]
        json: bool,
    },
    /// Render a trace for review.
    Show {
        /// A trace file written by `walcheck check` (ITF JSON).
        trace: PathBuf,
        /// text: step table of what changed; mermaid: sequenceDiagram; svg: timeline; itf: the
        /// normalised file.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Systems, variants, faults, bounds and properties.
    List {
        /// Print the walcheck.list/1 JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the catalogue (or the SPECs given) and compare each verdict with its expectation.
    ///
    /// Exit 0: every verdict as expected; 1: a verdict differs; 2: bad usage or input;
    /// 3: a budget ran out first; 130: interrupted (SIGINT or SIGTERM: what was decided is
    /// reported and its traces written, the rest inconclusive; a second signal exits at once).
    Check {
        /// system[:variant], e.g. olake-bootstrap:master, or a connector file (FILE.wal) or a
        /// folder of them; none means the whole catalogue.
        specs: Vec<String>,
        // Its help names each registered system's fault sets: `faults_help`.
        #[arg(long)]
        faults: Option<String>,
        /// Set a bound or knob, NAME=VALUE (see `walcheck list`); repeatable, or several at
        /// once as reports write them, NAME=VALUE,NAME=VALUE. Without a SPEC, only the systems
        /// that have every bound given (and the --faults set) are checked.
        #[arg(long = "bound", value_name = "NAME=VALUE")]
        bounds: Vec<String>,
        /// Threads (1 to 64), shared by the run's searches; results are the same at any count.
        ///
        /// A run has one search per configuration: it decides the configuration's always and
        /// sometimes checks and records the graph its eventually checks are decided on (their
        /// fairness=declared and fairness=none rows on one graph); with --engine reference, one
        /// search per check. min(N, searches) workers take the searches in catalogue order; a
        /// compact search shares each round of its breadth-first levels with N / (searches
        /// running) threads, asked again each round, so one configuration checked alone, or the
        /// last still running, gets all N: they make successors, while one thread looks them up
        /// and stores them in order. Reference searches use one thread each. More threads than
        /// the machine has cores slow a search down: its round's threads take turns on them.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = count::<usize>)]
        threads: usize,
        /// How checks are searched: compact, one search per configuration over fingerprints;
        /// reference, one search per check, its always and sometimes checks storing states
        /// whole. Both give the same verdicts, counts and traces, except where --max-memory
        /// stops a search: it bounds every compact search, but of the reference engine's
        /// searches only those of eventually checks.
        #[arg(long, value_enum, default_value_t = run::Engine::Compact)]
        engine: run::Engine,
        /// Fingerprint width of the compact engine: 64 or 128. After an exhaustive proof (an
        /// always or eventually check that holds, a sometimes check violated) the report gives
        /// the chance that a collision hid a state, and advises 128 above 1e-6.
        #[arg(
            long,
            value_name = "BITS",
            default_value_t = 64,
            allow_negative_numbers = true
        )]
        fingerprint_bits: i64,
        /// Stop a compact or liveness search before its own stored bytes (fingerprint table,
        /// parent links, the levels held; the liveness graph) exceed this; its unfinished
        /// checks are inconclusive (exit 3 unless a verdict differs). Per search: with --threads
        /// N up to N run at once.
        /// --engine reference's always and sometimes searches are not held to it [default:
        /// half the machine's memory].
        #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = count::<u64>)]
        max_memory: Option<u64>,
        /// Stop searching this many seconds after the run starts (one clock for the whole run);
        /// unfinished checks are inconclusive (exit 3 unless a verdict differs).
        #[arg(long, value_name = "SECS", allow_hyphen_values = true)]
        timeout: Option<f64>,
        /// Stop each search once it has stored this many distinct states; its unfinished
        /// checks are inconclusive (exit 3 unless a verdict differs).
        #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>)]
        max_states: Option<u64>,
        /// Fail (exit 1) on any violated property, expected or not.
        #[arg(long)]
        strict: bool,
        /// Print the walcheck.check/1 JSON.
        #[arg(long)]
        json: bool,
        /// Where counterexample traces go.
        #[arg(long, value_name = "DIR", default_value = "traces/out")]
        out: PathBuf,
        /// Also write a JUnit XML report here: one testcase per entry.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Run only shard I of N (every N-th entry from the I-th): N jobs with 1/N to N/N check
        /// each entry once; `walcheck merge` joins their --json reports.
        #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
        shard: Option<String>,
    },
    /// Join the --json reports of `walcheck check --shard 1/N ... N/N` into the unsharded report.
    ///
    /// Exit 0, 1 or 3 as `walcheck check` would for the joined verdicts; 2 when the reports are
    /// not one run's shards.
    Merge {
        /// The shards' JSON reports, in any order.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
    },
    /// Serve stateright's Explorer on one configuration and print a link to each
    /// counterexample; runs until stopped (Ctrl-C).
    Explore {
        /// system[:variant], e.g. electric-flush:v1.4.15 (default: the first variant).
        spec: String,
        /// The fault set [default: the system's first: none for the built-in systems].
        #[arg(long)]
        faults: Option<String>,
        /// Set a bound or knob, NAME=VALUE (see `walcheck list`); repeatable, or several at
        /// once as reports write them, NAME=VALUE,NAME=VALUE.
        #[arg(long = "bound", value_name = "NAME=VALUE")]
        bounds: Vec<String>,
        /// Where to listen; loopback only unless --allow-remote.
        #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:3000")]
        addr: String,
        /// Allow a non-loopback --addr: whoever reaches it can drive the checker.
        #[arg(long)]
        allow_remote: bool,
    },
    /// Simulate first-sync bootstraps in virtual time under OLake #1084's load ladders.
    ///
    /// Every level runs --attempts bootstraps per variant, each variant facing the same workload
    /// and bootstrap instants; the same seed gives the same output (elapsed_ms aside). Exit 0
    /// when the run completes; 2 on bad usage.
    Simulate {
        /// olake-bootstrap[:variant]; without a variant, every variant.
        spec: String,
        /// sync (bulk INSERT ... SELECT, synchronous commit), async (100-row statements,
        /// synchronous_commit = off) or both.
        #[arg(long)]
        ladder: String,
        /// The run's seed [default: 1].
        #[arg(
            long,
            value_name = "N",
            conflicts_with = "seeds",
            allow_negative_numbers = true
        )]
        seed: Option<String>,
        /// Swarm mode: one run per seed in A..B (or A..=B), parameters not given here drawn per
        /// seed; reports each seed's worst level.
        #[arg(long, value_name = "A..B", allow_hyphen_values = true)]
        seeds: Option<String>,
        /// Bootstraps per level and variant [default: 200; 20 per seed in swarm mode].
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        attempts: Option<String>,
        /// Print the walcheck.simulate/1 JSON (walcheck.swarm/1 with --seeds).
        #[arg(long)]
        json: bool,
        /// Draw the hit probability per level, one line per variant, as SVG.
        #[arg(long, value_name = "F.svg", conflicts_with = "seeds")]
        plot: Option<PathBuf>,
        /// Swarm mode: run only shard I of N of the seeds (every N-th from the I-th); `walcheck
        /// merge` joins the N --json reports.
        #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
        shard: Option<String>,
        /// Write ITF traces of violating attempts here (walcheck replay takes them).
        #[arg(long, value_name = "DIR")]
        trace_out: Option<PathBuf>,
        /// Traces per level and variant with --trace-out (default 1).
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        trace_limit: Option<String>,
        /// The parameters' defaults: olake (OLake #1084's published setting) or this-machine
        /// (measured for `walcheck live ladder` on this project's machine; docs/live.md);
        /// parameter flags override them [default: olake].
        #[arg(long, value_name = "SET")]
        params_set: Option<String>,
        /// independent (each attempt its own run, as OLake measured) or back-to-back (one run per
        /// level, bootstraps one after another, as `walcheck live ladder` runs them)
        /// [default: independent].
        #[arg(long, value_name = "PROTOCOL")]
        protocol: Option<String>,
        /// With --protocol back-to-back: rounds per run of a level, each run a fresh level, as
        /// `walcheck live ladder --attempts N` runs N rounds a level [default: all attempts in one
        /// run].
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        level_rounds: Option<String>,
        #[command(flatten)]
        params: ParamArgs,
    },
    /// Check the PostgreSQL model against a real server: a throwaway PostgreSQL started here
    /// (initdb into a temporary directory, a free loopback port), or --pg-url.
    Live {
        #[command(subcommand)]
        what: LiveCommand,
    },
}

#[derive(Subcommand)]
enum LiveCommand {
    /// One check per modelled PostgreSQL rule, each recording an observed trace replayed
    /// against the model. Exit 0: every rule passes or skips (with its reason); 1: a rule fails;
    /// 2: bad usage, no PostgreSQL, or a rule the server could not be set up for; 130:
    /// interrupted (SIGINT or SIGTERM; nothing reported, everything made removed).
    Conformance {
        /// An existing server, loopback only (postgresql://postgres@127.0.0.1:5432/postgres);
        /// rules that restart the server or build a standby skip on it.
        #[arg(long, value_name = "URL")]
        pg_url: Option<String>,
        /// Write each rule's observed trace here (walcheck replay takes them), a failed rule's
        /// as pg-live__RULE.FAILED.itf.json; the folder is made before anything starts.
        #[arg(long, value_name = "DIR")]
        trace_out: Option<PathBuf>,
    },
    /// OLake #1084's ladders on the live server with each variant's real bootstrap statements,
    /// in walcheck simulate's table, beside the simulator's prediction for this machine
    /// (--params-set this-machine --protocol back-to-back) and the fidelity table: per level and
    /// variant the live count, its 95 % Wilson interval, the simulated share, inside or not.
    /// Exit 0 when it completes; 130 when interrupted (nothing reported, all it made removed).
    Ladder {
        /// An existing server, loopback only; without it a throwaway server is started.
        #[arg(long, value_name = "URL")]
        pg_url: Option<String>,
        /// sync, async or both.
        #[arg(long, default_value = "both")]
        ladder: String,
        /// Live bootstraps per level and variant (fewer when --level-ms runs out).
        #[arg(
            long,
            value_name = "N",
            default_value = "30",
            allow_negative_numbers = true
        )]
        attempts: String,
        /// The most one level may take, in milliseconds (the sync ladder's 30 rounds at 32,000
        /// rows take about 150 s on a 2-core machine).
        #[arg(
            long,
            value_name = "MS",
            default_value = "60000",
            allow_negative_numbers = true
        )]
        level_ms: String,
        /// Simulated bootstraps per level and variant for the prediction.
        #[arg(
            long,
            value_name = "N",
            default_value = "200",
            allow_negative_numbers = true
        )]
        sim_attempts: String,
    },
}

/// The simulation parameters as flags, one per entry of `walcheck_sim::PARAMS`
/// (`--wal-buffers-bytes 4194304`), kept as text for the library to check.
struct ParamArgs(Vec<(&'static str, String)>);

impl FromArgMatches for ParamArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(ParamArgs(
            PARAMS
                .iter()
                .filter_map(|p| {
                    matches
                        .get_one::<String>(p.name)
                        .map(|v| (p.name, v.clone()))
                })
                .collect(),
        ))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = ParamArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for ParamArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        PARAMS.iter().fold(command, |command, p| {
            command.arg(
                Arg::new(p.name)
                    .long(p.flag)
                    .value_name(match p.unit {
                        "bytes" => "BYTES",
                        "us" => "MICROSECONDS",
                        "rows" => "ROWS",
                        "rows/s" => "ROWS_PER_S",
                        "bytes/s" => "BYTES_PER_S",
                        _ => "PERCENT",
                    })
                    .allow_negative_numbers(true)
                    .help_heading("Simulation parameters")
                    .help(format!("{} [default: {}]", p.doc, p.default)),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        ParamArgs::augment_args(command)
    }
}

/// The whole command line over the built-in systems and `systems` (after them, in catalogue
/// order): `list`, `check`, `show`, `replay`, `merge` and `explore` take every one; `simulate`,
/// `triage` and `live` serve the built-in systems they were written for. Returns the exit code
/// (0 as expected, 1 a verdict differs, 2 bad usage or input, 3 inconclusive).
///
/// A binary that wants `check --json`'s heap figures (`peak_heap_bytes`, `bytes_per_state`)
/// installs [`crate::heap::Counting`] as its `#[global_allocator]`; without it they are null.
pub fn main(systems: &[&'static dyn crate::catalogue::AnySystem]) -> ExitCode {
    let _ = PROGRAM.set(invoked_name());
    let files = match crate::connector::load_named(std::env::args().skip(1)) {
        Ok(files) => files,
        Err(code) => return code,
    };
    let mut all = systems.to_vec();
    all.extend(files);
    if let Err(e) = crate::catalogue::register(&all) {
        return usage_error(&e);
    }
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match cli.command {
        Command::Replay { trace } => replay(&trace),
        Command::Triage { system, json } => triage(&system, json),
        Command::Show { trace, format } => show(&trace, format),
        Command::List { json } => list(json),
        command @ Command::Check { .. } => check(command),
        Command::Merge { reports } => merge(&reports),
        Command::Explore {
            spec,
            faults,
            bounds,
            addr,
            allow_remote,
        } => explore(&spec, faults.as_deref(), &bounds, &addr, allow_remote),
        Command::Live { what } => live_command(what),
        Command::Simulate {
            spec,
            ladder,
            seed,
            seeds,
            attempts,
            json,
            plot,
            shard,
            trace_out,
            trace_limit,
            params_set,
            protocol,
            level_rounds,
            params,
        } => simulate(SimulateArgs {
            shard,
            spec,
            ladder,
            seed,
            seeds,
            attempts,
            json,
            plot,
            trace_out,
            trace_limit,
            params_set,
            protocol,
            level_rounds,
            params,
        }),
    }
}

/// The command line parsed, or the exit code when there is nothing to run: 0 after printing
/// --help or --version, 2 after one line of bad usage.
fn parse() -> Result<Cli, ExitCode> {
    let mut command = command();
    let parsed = command
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut matches| Cli::from_arg_matches_mut(&mut matches))
        .map_err(|err| err.format(&mut command));
    match parsed {
        Ok(cli) => Ok(cli),
        Err(err) if !err.use_stderr() => {
            // --help and --version; a stdout that cannot take them is an error too.
            if err
                .print()
                .and_then(|()| std::io::stdout().flush())
                .is_err()
            {
                return Err(ExitCode::from(2));
            }
            Err(ExitCode::SUCCESS)
        }
        Err(err)
            if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            Err(usage_error(
                &format!("a command is required: list, check, triage, simulate, live, explore, merge, replay or show (see {} --help)", program()),
            ))
        }
        Err(err) => Err(usage_error(&clap_error_line(&err))),
    }
}

/// The command line's definition, with the help that depends on the registered systems.
fn command() -> clap::Command {
    let command = Cli::command()
        .bin_name(program())
        .mut_subcommand("check", |check| {
            check.mut_arg("faults", |faults| faults.help(faults_help()))
        })
        // `live` without its command is named by clap ("'walcheck live' requires a
        // subcommand"), not taken for a missing top-level command.
        .mut_subcommand("live", |live| live.arg_required_else_help(false));
    if program() == "walcheck" {
        return command;
    }
    // A crate's own binary over walcheck: `textbook-connector (walcheck 0.1.0)`.
    let version = concat!("(walcheck ", env!("CARGO_PKG_VERSION"), ")");
    let command = command.name(program()).version(version);
    let commands: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    name_program_in_help(command, &commands)
}

static PROGRAM: OnceLock<String> = OnceLock::new();

/// The name the program was invoked by, for error lines and the commands the output suggests:
/// its file name, as clap's usage lines show it (`textbook-connector` for a crate's own binary
/// over [`main`]); `walcheck` where there is none, or before [`main`] runs.
pub fn program() -> &'static str {
    PROGRAM.get().map_or("walcheck", String::as_str)
}

/// argv\[0\]'s file name, as clap takes it.
fn invoked_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg| {
            Path::new(&arg)
                .file_name()
                .and_then(|name| name.to_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "walcheck".to_owned())
}

/// `command`'s help texts (its own, its arguments', its subcommands') with each `walcheck
/// COMMAND` naming [`program`] instead.
fn name_program_in_help(command: clap::Command, commands: &[String]) -> clap::Command {
    let rename = |text: Option<&clap::builder::StyledStr>| {
        text.map(|text| name_program(&text.to_string(), commands))
    };
    let (about, long_about) = (
        rename(command.get_about()),
        rename(command.get_long_about()),
    );
    let mut command = command
        .mut_args(|arg| {
            let (help, long_help) = (rename(arg.get_help()), rename(arg.get_long_help()));
            let arg = match help {
                Some(help) => arg.help(help),
                None => arg,
            };
            match long_help {
                Some(long_help) => arg.long_help(long_help),
                None => arg,
            }
        })
        .mut_subcommands(|sub| name_program_in_help(sub, commands));
    if let Some(about) = about {
        command = command.about(about);
    }
    if let Some(long_about) = long_about {
        command = command.long_about(long_about);
    }
    command
}

/// `text` with each `walcheck COMMAND` (one of `commands`, as a whole word) naming
/// [`program`] instead, so that a crate's own binary says to run itself.
fn name_program(text: &str, commands: &[String]) -> String {
    const WALCHECK: &str = "walcheck ";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(WALCHECK) {
        let after = &rest[at + WALCHECK.len()..];
        // A whole word: not the tail of `textbook-walcheck`, which may be the program itself.
        let whole_word =
            !rest[..at].ends_with(|ch: char| ch.is_alphanumeric() || ch == '-' || ch == '_');
        let names_command = whole_word
            && commands.iter().any(|c| {
                after.strip_prefix(c.as_str()).is_some_and(|tail| {
                    !tail.starts_with(|ch: char| ch.is_alphanumeric() || ch == '-' || ch == '_')
                })
            });
        out.push_str(&rest[..at]);
        out.push_str(if names_command { program() } else { "walcheck" });
        out.push(' ');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `check --faults`' help: each registered system's fault sets, systems with the same ones
/// named together (`olake-bootstrap and olake-sync none, connector-crash, pg-crash, all`).
fn faults_help() -> String {
    let mut groups: Vec<(Vec<&str>, &[&str])> = Vec::new();
    for system in catalogue::systems() {
        let info = system.info();
        match groups.iter_mut().find(|(_, faults)| *faults == info.faults) {
            Some((names, _)) => names.push(info.name),
            None => groups.push((vec![info.name], info.faults)),
        }
    }
    let groups: Vec<String> = groups
        .iter()
        .map(|(names, faults)| format!("{} {}", and_list(names), faults.join(", ")))
        .collect();
    format!(
        "Only this fault set: {} (see `{} list`); without a SPEC, only the systems that have it \
         are checked",
        groups.join("; "),
        program()
    )
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// clap's message up to its usage block, on one line (a missing argument is named on the line
/// after "not provided:").
fn clap_error_line(err: &clap::Error) -> String {
    let text = err.to_string();
    let message: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    message.join(" ").trim_start_matches("error: ").to_owned()
}

/// A trace file read, or the one-line error naming it.
fn read_trace(path: &Path) -> Result<Trace, ExitCode> {
    let text = crate::input::read_input(path, "trace", crate::input::TRACE_MAX_BYTES)
        .map_err(|err| usage_error(&err))?;
    Trace::from_text(&text).map_err(|err| usage_error(&format!("{}: {err}", path.display())))
}

/// `walcheck replay TRACE`.
fn replay(path: &Path) -> ExitCode {
    let trace = match read_trace(path) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let steps = match run::replay_trace(&trace) {
        Err(err) => return usage_error(&format!("{}: {err}", path.display())),
        Ok(Err(mismatch)) => {
            let _ = print(&format!(
                "replay of {} failed: {mismatch}\n",
                path.display()
            ));
            return ExitCode::from(1);
        }
        Ok(Ok(steps)) => steps,
    };
    let (property, verdict) = (&trace.header.property, &trace.header.verdict);
    let end = match trace.loop_text() {
        Some(text) => format!(": {text}"),
        None => format!(" at step {steps}"),
    };
    print(&format!(
        "replayed {} ({}): every step enabled and as recorded; {property} {verdict}{end}\n",
        path.display(),
        crate::report::steps(steps),
    ))
}

/// `walcheck show TRACE [--format F]`.
fn show(path: &Path, format: Format) -> ExitCode {
    let trace = match read_trace(path) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    if trace.header.system == walcheck_sim::observed::SYSTEM {
        return print(&show_live_rule(&trace, format));
    }
    // An observed (live) trace carries only the variables a run could see.
    let checked = if trace.header.is_observed() {
        catalogue::config_from_header(&trace.header)
    } else {
        run::check_trace(&trace)
    };
    let config = match checked {
        Ok(config) => config,
        Err(err) => return usage_error(&format!("{}: {err}", path.display())),
    };
    let view = &config.info().view;
    let explanation = || crate::report::explanation(&trace, &config);
    print(&match format {
        Format::Text => step_table_text(&trace, &config),
        Format::Mermaid => render::mermaid(&trace, view.lanes, view.key_variables, &explanation()),
        Format::Svg => render::svg(&trace, view.lanes, &explanation()),
        Format::Itf => trace.to_text(),
    })
}

/// `show` of a live conformance rule's trace (system `pg-live`, which no registered system
/// declares): its header line and every variable it recorded, in one lane.
fn show_live_rule(trace: &Trace, format: Format) -> String {
    let h = &trace.header;
    let note = format!(
        "observed on a live server ({}): {}; `{} replay FILE` checks it against the model",
        h.variant,
        h.config
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
        program()
    );
    let explanation = render::Explanation {
        before: vec![note.clone()],
        after: Vec::new(),
    };
    let lanes = &walcheck_properties::system::Lanes::SINGLE;
    // Every variable is a key one: a rule records only what it compared. Some are recorded only
    // by later steps (a keepalive's wal_end, pg_last_wal_replay_lsn): in order of appearance.
    let mut key: Vec<&str> = Vec::new();
    for (name, _) in trace.steps.iter().flat_map(|s| &s.vars) {
        if !key.contains(&name.as_str()) {
            key.push(name);
        }
    }
    match format {
        Format::Text => format!(
            "{}: {} ({}) {}\n  {note}\n{}",
            h.system,
            h.property,
            h.kind,
            h.verdict,
            render::step_table(trace, &key, &[], Cells::Changes)
        ),
        Format::Mermaid => render::mermaid(trace, lanes, &key, &explanation),
        Format::Svg => render::svg(trace, lanes, &explanation),
        Format::Itf => trace.to_text(),
    }
}

/// `show --format text`: a line saying what the trace shows and how it gets there, then the
/// step table of what changed.
fn step_table_text(trace: &Trace, config: &catalogue::SystemConfig) -> String {
    let h = &trace.header;
    let how = match trace.loop_index() {
        Some(k) => format!(
            "by a lasso: a {k}-step prefix, then a {}-step cycle",
            trace.len_actions() - k
        ),
        None => format!("after {}", crate::report::steps(trace.len_actions())),
    };
    let table = crate::report::explained_table(trace, config, Cells::Changes);
    format!(
        "{}:{} faults={}: {} ({}) {} {how}\n{table}",
        h.system, h.variant, h.faults, h.property, h.kind, h.verdict,
    )
}

/// `walcheck triage electric-flush [--json]`.
fn triage(system: &str, json: bool) -> ExitCode {
    if system != "electric-flush" {
        return usage_error(&format!(
            "triage knows electric-flush (Electric #4058), not {system:?}"
        ));
    }
    let (hypotheses, fixes) = crate::triage::triage(&Budget::default());
    print(&if json {
        pretty(&crate::triage::json(&hypotheses, &fixes))
    } else {
        crate::triage::text(&hypotheses, &fixes)
    })
}

/// `walcheck list [--json]`.
fn list(json: bool) -> ExitCode {
    print(&if json {
        pretty(&report::list_json())
    } else {
        report::list_text()
    })
}

/// `walcheck check`: the entries selected (and sharded), checked within the budget, their
/// counterexamples written, the report printed.
///
/// It takes the whole command so that its flags are named once, here, beside their use.
fn check(command: Command) -> ExitCode {
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
    let (mut results, wall) = run_checks(&entries, &options, json, &out);
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
fn check_exit(
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
            program(),
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
static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Installs, once per process, the handler that raises [`INTERRUPT`] at the first SIGINT,
/// SIGTERM or SIGHUP and exits 130 at once at the second.
fn stop_on_interrupt() {
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
fn run_options(
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
fn check_limits(
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
fn engine_flags(
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
fn note_reference_limits(engine: run::Engine, fingerprint_bits: u32, max_memory: Option<u64>) {
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
fn engine_limits(fingerprint_bits: i64, max_memory: Option<u64>) -> Result<u32, String> {
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
fn select_run(
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
fn run_checks(
    entries: &[Entry],
    options: &run::Options,
    json: bool,
    out: &Path,
) -> (Vec<CheckResult>, Duration) {
    let started = Instant::now();
    stop_on_interrupt();
    let lines = crate::progress::Lines::wanted(json)
        .map(|color| crate::progress::Lines::new(entries.len(), color));
    let shown: &dyn run::Observer = match &lines {
        Some(lines) => lines,
        None => &run::Unobserved,
    };
    let writing = run::WritingTraces::new(out, entries.len(), shown);
    let mut results = run::run_all_with(entries, options, &writing);
    writing.record(&mut results);
    crate::connector::warn_unreached(entries);
    (results, started.elapsed())
}

/// The files a check run leaves: its counterexamples under `out` (their paths recorded in
/// `results`), and the JUnit report when asked for. Both are attempted; the first failure is
/// the one-line error.
fn write_check_files(
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
fn prepare_outputs(out: &Path, junit: Option<&Path>) -> Result<Vec<PathBuf>, String> {
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
/// writing, untouched; at any other path, the report of a run not finished is written
/// ([`crate::ci::junit_unfinished`]), which the run's own replaces when it ends, so that a run
/// killed before then leaves a JUnit error, not the report of the run before. A path ending in
/// a separator, `.` or `..` names no file.
fn junit_writable(path: &Path) -> std::io::Result<()> {
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file());
    if special {
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
fn remove_empty(created: &[PathBuf]) {
    for dir in created {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// `walcheck merge REPORT.json...`.
fn merge(reports: &[PathBuf]) -> ExitCode {
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

/// `walcheck explore SPEC`: a link per counterexample printed, then the Explorer served until
/// the process is stopped.
fn explore(
    spec: &str,
    faults: Option<&str>,
    bounds: &[String],
    addr: &str,
    allow_remote: bool,
) -> ExitCode {
    let spec = &crate::connector::specs(vec![spec.to_owned()]).join(" ");
    let config = match crate::explore::config(spec, faults, bounds) {
        Ok(config) => config,
        Err(err) => return usage_error(&err),
    };
    let addr = match crate::explore::address(addr, allow_remote) {
        Ok(addr) => addr,
        Err(err) => return usage_error(&err),
    };
    let links = crate::explore::links(&config, &crate::explore::link_budget());
    let mut text = format!(
        "Explorer for {}:{} faults={} at http://{addr}/ (Ctrl-C stops it)\n",
        config.info().name,
        config.variant(),
        config.faults()
    );
    if links.is_empty() {
        text.push_str("no counterexample or example found within the link budget\n");
    }
    for link in &links {
        text.push_str(&format!(
            "{} {} {} ({} steps): http://{addr}/{}\n",
            link.what, link.expectation, link.property, link.steps, link.fragment
        ));
    }
    let printed = print(&text);
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    crate::explore::serve(&config, addr);
    ExitCode::SUCCESS
}

struct SimulateArgs {
    shard: Option<String>,
    spec: String,
    ladder: String,
    seed: Option<String>,
    seeds: Option<String>,
    attempts: Option<String>,
    json: bool,
    plot: Option<PathBuf>,
    trace_out: Option<PathBuf>,
    trace_limit: Option<String>,
    params_set: Option<String>,
    protocol: Option<String>,
    level_rounds: Option<String>,
    params: ParamArgs,
}

/// clap's parser of a count flag (`--threads`, `--max-states`, `--max-memory`): digits only, so
/// that `-1` or `1e9` are refused as what they are, not with the standard library's wording.
fn count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a whole number (digits only)".into());
    }
    text.parse().map_err(|_| "too large".into())
}

/// A whole number for `flag` from `min` to `max`, or a one-line error.
fn whole(flag: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    let bad = || format!("{flag} takes a whole number from {min} to {max}, not {text:?}");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    text.parse()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(bad)
}

/// `walcheck simulate`: one run of the ladders, or with --seeds a swarm of runs.
fn simulate(args: SimulateArgs) -> ExitCode {
    let (options, seeds, shard) = match simulate_options(&args) {
        Ok(options) => options,
        Err(err) => return usage_error(&err),
    };
    match seeds {
        Some(seeds) => simulate_swarm(&args, &options, seeds, shard),
        None => simulate_ladders(&args, &options),
    }
}

/// What `simulate`'s flags ask for: the run's options, the swarm's seeds and shard (I/N), or a
/// one-line error.
type SimulatePlan = (
    walcheck_sim::Options,
    Option<std::ops::Range<u64>>,
    Option<(usize, usize)>,
);

/// `simulate`'s flags checked and turned into a [`SimulatePlan`].
fn simulate_options(args: &SimulateArgs) -> Result<SimulatePlan, String> {
    let swarm_mode = args.seeds.is_some();
    let variants = walcheck_sim::parse_spec(&args.spec)?;
    let ladders = LadderKind::parse(&args.ladder)?;
    let mut params = match args.params_set.as_deref() {
        None => Params::default(),
        Some(name) => Params::named(name)?,
    };
    for (name, value) in &args.params.0 {
        params.set(name, value)?;
    }
    params.validate()?;
    let seed = match &args.seed {
        Some(text) => whole("--seed", text, 0, u64::MAX)?,
        None => 1,
    };
    let max = u64::from(walcheck_sim::run::MAX_ATTEMPTS);
    let attempts = match &args.attempts {
        Some(text) => whole("--attempts", text, 1, max)? as u32,
        None if swarm_mode => 20,
        None => 200,
    };
    let trace_limit = match (&args.trace_limit, &args.trace_out) {
        (Some(_), None) => {
            return Err(
                "--trace-limit limits the traces --trace-out writes: give --trace-out DIR too"
                    .into(),
            )
        }
        (Some(text), Some(_)) => whole("--trace-limit", text, 1, max)? as u32,
        (None, _) => 1,
    };
    let seeds = args.seeds.as_deref().map(swarm::parse_seeds).transpose()?;
    let shard = args.shard.as_deref().map(run::parse_shard).transpose()?;
    if shard.is_some() && seeds.is_none() {
        return Err("--shard splits a swarm run's seeds: give --seeds A..B too".into());
    }
    let options = walcheck_sim::Options {
        variants,
        ladders,
        seed,
        attempts,
        params,
        trace_out: args.trace_out.clone(),
        trace_limit,
        protocol: args.protocol.as_deref().map_or(
            Ok(walcheck_sim::engine::Protocol::Independent),
            walcheck_sim::engine::Protocol::parse,
        )?,
        level_rounds: match &args.level_rounds {
            Some(text) => whole("--level-rounds", text, 1, max)? as u32,
            None => 0,
        },
    };
    Ok((options, seeds, shard))
}

/// `simulate --seeds A..B`: a run per seed (of shard I/N's seeds), its report printed.
fn simulate_swarm(
    args: &SimulateArgs,
    options: &walcheck_sim::Options,
    seeds: std::ops::Range<u64>,
    shard: Option<(usize, usize)>,
) -> ExitCode {
    let started = Instant::now();
    let fixed: Vec<&'static str> = args.params.0.iter().map(|(name, _)| *name).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let part = shard.unwrap_or((1, 1));
    let report = match swarm::swarm_shard(options, &fixed, seeds, part, threads) {
        Ok(report) => report,
        Err(err) => return usage_error(&err),
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    if !args.json {
        return print(&swarm::to_text(&report));
    }
    let mut json = swarm::to_json(&report, elapsed_ms);
    if let Some((index, count)) = shard {
        json.as_object_mut()
            .expect("a swarm report is an object")
            .insert(
                "shard".into(),
                serde_json::json!({ "index": index, "count": count }),
            );
    }
    print(&pretty(&json))
}

/// `simulate` with one seed: every level of the ladders, the plot drawn when asked for, the
/// report printed.
///
/// A `--plot` whose folder does not exist is refused before the run; a plot that cannot be
/// written after it is an error once the report is printed, so the report is never lost.
fn simulate_ladders(args: &SimulateArgs, options: &walcheck_sim::Options) -> ExitCode {
    if let Some(folder) = args
        .plot
        .as_deref()
        .and_then(Path::parent)
        .filter(|f| !f.as_os_str().is_empty() && !f.is_dir())
    {
        return usage_error(&format!(
            "cannot write plot: {} is not a folder",
            folder.display()
        ));
    }
    let started = Instant::now();
    let report = match walcheck_sim::simulate(options) {
        Ok(report) => report,
        Err(err) => return usage_error(&err),
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let printed = print(&if args.json {
        pretty(&walcheck_sim::report::to_json(&report, elapsed_ms))
    } else {
        walcheck_sim::report::to_text(&report)
    });
    if let Some(path) = &args.plot {
        let written = walcheck_sim::plot::svg(&report).and_then(|svg| {
            write_whole(path, &svg)
                .map_err(|e| format!("cannot write plot {}: {e}", path.display()))
        });
        if let Err(err) = written {
            return usage_error(&err);
        }
    }
    printed
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON values serialize") + "\n"
}

fn print(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`walcheck check | head`) is the reader's choice, not an error.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => usage_error(&format!("cannot write output: {err}")),
    }
}

/// `walcheck live …`.
fn live_command(what: LiveCommand) -> ExitCode {
    walcheck_live::server::clean_up_on_interrupt();
    match what {
        LiveCommand::Conformance { pg_url, trace_out } => {
            live_conformance(pg_url.as_deref(), trace_out.as_deref())
        }
        LiveCommand::Ladder {
            pg_url,
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
                Ok(options) => live_ladder(pg_url.as_deref(), &options),
                Err(e) => usage_error(&e),
            }
        }
    }
}

/// A `live` flag's whole number from 1 to `max`, or a one-line error.
fn live_number(name: &str, text: &str, max: u64) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("--{name} takes 1 to {max}, not {text:?}")),
    }
}

/// The server `live` runs on: the one at --pg-url, else a throwaway one started here.
fn live_server(pg_url: Option<&str>) -> Result<walcheck_live::PgServer, String> {
    match pg_url {
        Some(url) => walcheck_live::PgServer::external(url),
        None => walcheck_live::PgServer::start_primary(&walcheck_live::find_bindir()?),
    }
}

/// `walcheck live conformance`: every rule run, the observed traces written under `trace_out`
/// (a failed rule's as `pg-live__RULE.FAILED.itf.json`), the table printed; exit 1 when a rule
/// fails, 2 when the server could not be set up for one. The trace folder is made, and checked
/// writable, before anything starts. After an interrupt nothing is reported: the handler exits
/// 130 ([`walcheck_live::server::exit_interrupted`]).
fn live_conformance(pg_url: Option<&str>, trace_out: Option<&Path>) -> ExitCode {
    use walcheck_live::conformance;
    if let Some(dir) = trace_out {
        if let Err(e) = writable_dir(dir) {
            return usage_error(&e);
        }
    }
    let server = match live_server(pg_url) {
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
fn live_error(message: &str) -> ExitCode {
    if walcheck_live::server::interrupted() {
        walcheck_live::server::exit_interrupted();
    }
    usage_error(message)
}

/// Makes `dir` (and its parents) and checks a file can be written in it.
fn writable_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let probe = dir.join(format!(".walcheck-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Each rule's observed trace as `dir/pg-live__RULE.itf.json`, a rule's that failed as
/// `dir/pg-live__RULE.FAILED.itf.json` (what its last session saw, up to the failure).
fn write_observed_traces(
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
fn live_ladder(pg_url: Option<&str>, options: &walcheck_live::ladder::LiveOptions) -> ExitCode {
    let server = match live_server(pg_url) {
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

/// One line on stderr, `PROGRAM: error: MESSAGE` (the program as invoked, as clap's usage lines
/// name it), and exit code 2.
pub(crate) fn usage_error(message: &str) -> ExitCode {
    // Not eprintln!: a closed or full stderr must not turn bad usage into a panic.
    let _ = writeln!(std::io::stderr(), "{}: error: {message}", program());
    ExitCode::from(2)
}
