//! The `walcheck` command line: parses arguments, calls the library, prints. A crate that
//! defines its own systems gets all of it for them with [`main`]:
//!
//! ```no_run
//! # use walcheck_systems::olake_sync::OlakeSyncSystem as MySystem;
//! fn main() -> std::process::ExitCode {
//!     walcheck::cli::main(&MySystem)
//! }
//! ```
//!
//! Its type, the crate's own [`Systems`](crate::catalogue::Systems), goes down as a type
//! parameter to each command that builds models (`check`, `show`, `replay`, `explore`), which
//! hands it to the registry with its work ([`crate::catalogue::SystemConfig::with_model`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use crate::catalogue::{self, Entry, Selection};
use crate::program::{self, usage_error};
use crate::run::CheckResult;
use crate::search::Budget;
use crate::{report, run};
use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use walcheck_live::conformance::Outcome;
use walcheck_sim::{swarm, LadderKind, Params, PARAMS};
use walcheck_traces::render::{self, Cells};
use walcheck_traces::{write_whole, Trace};

mod check;
mod live;
mod show;
mod simulate;

use check::*;
use live::*;
use show::*;
use simulate::*;

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

/// Which binaries start the throwaway server of `walcheck live`; none: Debian's (or
/// `WALCHECK_PG_BINDIR`, or `pg_config --bindir`).
#[derive(clap::Args)]
struct PgBinaries {
    /// The throwaway server's PostgreSQL version: a major (15, 16, 17, 18: its highest minor
    /// installed) or a minor (15.12), among Debian's /usr/lib/postgresql/*/bin and the versions
    /// `.ci/pg-versions` installs under target/pg (or $WALCHECK_PG_VERSIONS_DIR).
    #[arg(long, value_name = "N", conflicts_with_all = ["pg_url", "pg_bindir"])]
    pg_version: Option<String>,
    /// The folder of the throwaway server's binaries (initdb, pg_ctl, postgres).
    #[arg(long, value_name = "DIR", conflicts_with = "pg_url")]
    pg_bindir: Option<PathBuf>,
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
        #[command(flatten)]
        binaries: PgBinaries,
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
        #[command(flatten)]
        binaries: PgBinaries,
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

/// The whole command line over the built-in systems and `systems`, a crate's own (after them,
/// in catalogue order; `&MySystem`, or a tuple of several: [`catalogue::Systems`]): `list`,
/// `check`, `show`, `replay`, `merge` and `explore` take every one; `simulate`, `triage` and
/// `live` serve the built-in systems they were written for. Returns the exit code (0 as
/// expected, 1 a verdict differs, 2 bad usage or input, 3 inconclusive).
///
/// A binary that wants `check --json`'s heap figures (`peak_heap_bytes`, `bytes_per_state`)
/// installs [`crate::heap::Counting`] as its `#[global_allocator]`; without it they are null.
pub fn main<U: catalogue::Systems>(systems: U) -> ExitCode {
    program::name_from_args();
    let files = match crate::connector::load_named(std::env::args().skip(1)) {
        Ok(files) => files,
        Err(code) => return code,
    };
    if let Err(e) = crate::catalogue::register(&(systems, files)) {
        return usage_error(&e);
    }
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match cli.command {
        Command::Replay { trace } => replay::<U>(&trace),
        Command::Triage { system, json } => triage(&system, json),
        Command::Show { trace, format } => show::<U>(&trace, format),
        Command::List { json } => list(json),
        command @ Command::Check { .. } => check::<U>(command),
        Command::Merge { reports } => merge(&reports),
        Command::Explore {
            spec,
            faults,
            bounds,
            addr,
            allow_remote,
        } => explore::<U>(&spec, faults.as_deref(), &bounds, &addr, allow_remote),
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

/// [`main`] with no systems of a crate's own: the `walcheck` binary's. Not generic, so compiled
/// once, in this library: the binary links it rather than compiling every engine for every
/// built-in model again (and debug builds of the tests reuse the searches it instantiates).
pub fn walcheck() -> ExitCode {
    main(())
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
                &format!("a command is required: list, check, triage, simulate, live, explore, merge, replay or show (see {} --help)", program::name()),
            ))
        }
        Err(err) => Err(usage_error(&clap_error_line(&err))),
    }
}

/// The command line's definition, with the help that depends on the registered systems.
fn command() -> clap::Command {
    let command = Cli::command()
        .bin_name(program::name())
        .mut_subcommand("check", |check| {
            check.mut_arg("faults", |faults| faults.help(faults_help()))
        })
        // `live` without its command is named by clap ("'walcheck live' requires a
        // subcommand"), not taken for a missing top-level command.
        .mut_subcommand("live", |live| live.arg_required_else_help(false));
    if program::name() == "walcheck" {
        return command;
    }
    // A crate's own binary over walcheck: `textbook-connector (walcheck 0.1.0)`.
    let version = concat!("(walcheck ", env!("CARGO_PKG_VERSION"), ")");
    let command = command.name(program::name()).version(version);
    let commands: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    name_program_in_help(command, &commands)
}

/// `command`'s help texts (its own, its arguments', its subcommands') with each `walcheck
/// COMMAND` naming [`program::name`] instead.
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
/// [`program::name`] instead, so that a crate's own binary says to run itself.
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
        out.push_str(if names_command {
            program::name()
        } else {
            "walcheck"
        });
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
        program::name()
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

/// `walcheck explore SPEC`: a link per counterexample printed, then the Explorer served until
/// the process is stopped.
fn explore<U: catalogue::Systems>(
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
    let links = crate::explore::links::<U>(&config, &crate::explore::link_budget());
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
    crate::explore::serve::<U>(&config, addr);
    ExitCode::SUCCESS
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
