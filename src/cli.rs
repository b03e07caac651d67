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
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::catalogue::{self, Selection};
use crate::checker::Budget;
use crate::{report, run};
use clap::{Arg, ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};
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
    /// 3: a budget ran out first.
    Check {
        /// system[:variant], e.g. olake-bootstrap:master; none means the whole catalogue.
        specs: Vec<String>,
        /// Only this fault set: olake-bootstrap and olake-sync none, connector-crash, pg-crash,
        /// all; electric-flush none, consumer-kill, suspend, all (see `walcheck list`).
        #[arg(long)]
        faults: Option<String>,
        /// Set a bound or knob, NAME=VALUE (see `walcheck list`); repeatable.
        #[arg(long = "bound", value_name = "NAME=VALUE")]
        bounds: Vec<String>,
        /// Threads (1 to 64), shared by the run's searches; results are the same at any count.
        ///
        /// A run has one search per configuration for its always and sometimes checks (one per
        /// check with --engine reference) and one per eventually check. min(N, searches)
        /// workers take the searches in catalogue order; a compact search splits each round of
        /// its breadth-first levels over N / (searches running) threads, asked again each round,
        /// so one configuration checked alone, or the last still running, gets all N. Reference
        /// and liveness searches use one thread each.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
        threads: usize,
        /// The checker of always and sometimes checks; both give the same verdicts, counts and
        /// traces.
        #[arg(long, value_enum, default_value_t = run::Engine::Compact)]
        engine: run::Engine,
        /// Fingerprint width of the compact engine: 64 or 128. After an exhaustive proof the
        /// report gives the chance that a collision hid a state, and advises 128 above 1e-6.
        #[arg(
            long,
            value_name = "BITS",
            default_value_t = 64,
            allow_negative_numbers = true
        )]
        fingerprint_bits: u32,
        /// Stop a compact or liveness search before its own stored bytes (fingerprint table,
        /// parent links, the levels held whole; the liveness graph) exceed this; its unfinished
        /// checks are inconclusive (exit 3) [default: half the machine's memory].
        #[arg(long, value_name = "BYTES", allow_negative_numbers = true)]
        max_memory: Option<u64>,
        /// Stop searching after this many seconds; unfinished checks are inconclusive.
        #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
        timeout: Option<f64>,
        /// Stop a search once it has stored this many distinct states.
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
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
        #[arg(long, value_name = "I/N")]
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
        /// The fault set [default: none].
        #[arg(long)]
        faults: Option<String>,
        /// Set a bound or knob, NAME=VALUE (see `walcheck list`); repeatable.
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
        #[arg(long, value_name = "A..B")]
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
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Write ITF traces of violating attempts here (walcheck replay takes them).
        #[arg(long, value_name = "DIR")]
        trace_out: Option<PathBuf>,
        /// Traces per level and variant with --trace-out.
        #[arg(
            long,
            value_name = "N",
            default_value = "1",
            allow_negative_numbers = true
        )]
        trace_limit: String,
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
    /// 2: bad usage or no PostgreSQL.
    Conformance {
        /// An existing server, loopback only (postgresql://postgres@127.0.0.1:5432/postgres);
        /// rules that restart the server or build a standby skip on it.
        #[arg(long, value_name = "URL")]
        pg_url: Option<String>,
        /// Write each rule's observed trace here (walcheck replay takes them).
        #[arg(long, value_name = "DIR")]
        trace_out: Option<PathBuf>,
    },
    /// OLake #1084's ladders on the live server with each variant's real bootstrap statements,
    /// in walcheck simulate's table, beside the simulator's prediction. Exit 0 when it completes.
    Ladder {
        /// An existing server, loopback only; without it a throwaway server is started.
        #[arg(long, value_name = "URL")]
        pg_url: Option<String>,
        /// sync, async or both.
        #[arg(long, default_value = "both")]
        ladder: String,
        /// Live bootstraps per level and variant (fewer when --level-ms runs out).
        #[arg(long, value_name = "N", default_value = "10")]
        attempts: String,
        /// The most one level may take, in milliseconds.
        #[arg(long, value_name = "MS", default_value = "6000")]
        level_ms: String,
        /// Simulated bootstraps per level and variant for the prediction.
        #[arg(long, value_name = "N", default_value = "200")]
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
    if let Err(e) = crate::catalogue::register(systems) {
        return usage_error(&e);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version; a stdout that cannot take them is an error too.
            if err
                .print()
                .and_then(|()| std::io::stdout().flush())
                .is_err()
            {
                return ExitCode::from(2);
            }
            return ExitCode::SUCCESS;
        }
        Err(err)
            if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            return usage_error(
                "a command is required: list, check, triage, simulate, live, explore, merge, replay or show (see walcheck --help)",
            );
        }
        Err(err) => {
            // clap's message up to its usage block, on one line (a missing argument is named on
            // the line after "not provided:").
            let text = err.to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            return usage_error(message.join(" ").trim_start_matches("error: "));
        }
    };
    match cli.command {
        Command::Replay { trace: path } => {
            let trace = match Trace::read(&path) {
                Ok(trace) => trace,
                Err(err) => return usage_error(&format!("{}: {err}", path.display())),
            };
            match run::replay_trace(&trace) {
                Err(err) => usage_error(&format!("{}: {err}", path.display())),
                Ok(Err(mismatch)) => {
                    let _ = print(&format!("replay of {} failed: {mismatch}\n", path.display()));
                    ExitCode::from(1)
                }
                Ok(Ok(steps)) => match trace.loop_text() {
                    Some(text) => print(&format!(
                        "replayed {} ({steps} steps): every step enabled and as recorded; {} {}: {text}\n",
                        path.display(),
                        trace.header.property,
                        trace.header.verdict
                    )),
                    None => print(&format!(
                        "replayed {} ({} steps): every step enabled and as recorded; {} {} at step {steps}\n",
                        path.display(),
                        steps,
                        trace.header.property,
                        trace.header.verdict
                    )),
                },
            }
        }
        Command::Show {
            trace: path,
            format,
        } => {
            let trace = match Trace::read(&path) {
                Ok(trace) => trace,
                Err(err) => return usage_error(&format!("{}: {err}", path.display())),
            };
            // An observed (live) trace carries only the variables a run could see.
            let checked = if trace.header.is_observed() {
                catalogue::config_from_header(&trace.header)
            } else {
                run::check_trace(&trace)
            };
            let system = match checked {
                Ok(config) => config.info(),
                Err(err) => return usage_error(&format!("{}: {err}", path.display())),
            };
            let text = match format {
                Format::Text => {
                    let h = &trace.header;
                    let how = match trace.loop_index() {
                        Some(k) => format!(
                            "by a lasso: a {k}-step prefix, then a {}-step cycle",
                            trace.len_actions() - k
                        ),
                        None => format!("after {} steps", trace.len_actions()),
                    };
                    format!(
                        "{}:{} faults={}: {} ({}) {} {how}\n{}",
                        h.system,
                        h.variant,
                        h.faults,
                        h.property,
                        h.kind,
                        h.verdict,
                        render::step_table(
                            &trace,
                            system.view.key_variables,
                            system.view.counters,
                            Cells::Changes
                        )
                    )
                }
                Format::Mermaid => {
                    render::mermaid(&trace, system.view.lanes, system.view.key_variables)
                }
                Format::Svg => render::svg(&trace, system.view.lanes),
                Format::Itf => trace.to_text(),
            };
            print(&text)
        }
        Command::Triage { system, json } => {
            if system != "electric-flush" {
                return usage_error(&format!(
                    "triage knows electric-flush (Electric #4058), not {system:?}"
                ));
            }
            let (hypotheses, fixes) = crate::triage::triage(&Budget::default());
            let text = if json {
                pretty(&crate::triage::json(&hypotheses, &fixes))
            } else {
                crate::triage::text(&hypotheses, &fixes)
            };
            print(&text)
        }
        Command::List { json } => {
            let text = if json {
                pretty(&report::list_json())
            } else {
                report::list_text()
            };
            print(&text)
        }
        Command::Check {
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
        } => {
            if !(1..=64).contains(&threads) {
                return usage_error(&format!("--threads takes 1 to 64, not {threads}"));
            }
            if fingerprint_bits != 64 && fingerprint_bits != 128 {
                return usage_error(&format!(
                    "--fingerprint-bits takes 64 or 128, not {fingerprint_bits}"
                ));
            }
            if max_memory == Some(0) {
                return usage_error("--max-memory takes a whole number of bytes above 0");
            }
            let timeout = match timeout {
                None => None,
                Some(secs) if secs.is_finite() && secs > 0.0 && secs <= 1e6 => {
                    Some(Duration::from_secs_f64(secs))
                }
                Some(_) => {
                    return usage_error("--timeout takes seconds above 0 and at most 1000000")
                }
            };
            if max_states == Some(0) {
                return usage_error("--max-states takes a whole number above 0");
            }
            // Step tables for a run narrowed to variants; the whole catalogue lists its files.
            let tables = !specs.is_empty() && specs.iter().all(|s| s.contains(':'));
            let selection = crate::ci::selection_line(
                &specs,
                faults.as_deref(),
                &bounds,
                max_states,
                timeout.map(|t| t.as_secs_f64()),
            );
            let entries = match catalogue::select(&Selection {
                specs,
                faults,
                bounds,
            }) {
                Ok(entries) if entries.is_empty() => {
                    return usage_error("the selection names no checks")
                }
                Ok(entries) => entries,
                Err(err) => return usage_error(&err),
            };
            let shard = match shard.as_deref().map(run::parse_shard).transpose() {
                Ok(shard) => shard,
                Err(err) => return usage_error(&err),
            };
            let entries = match shard {
                Some((index, count)) => run::shard(entries, index, count),
                None => entries,
            };
            let shard = shard.map(|(index, count)| crate::ci::Shard {
                index,
                count,
                selection,
                strict,
            });
            let budget = Budget {
                max_states,
                deadline: timeout.map(|t| Instant::now() + t),
            };
            let options = run::Options {
                engine,
                threads,
                budget,
                max_memory_bytes: Some(max_memory.unwrap_or_else(run::default_max_memory_bytes)),
                fingerprint_bits,
            };
            let started = Instant::now();
            let mut results = match crate::progress::Lines::wanted(json) {
                Some(color) => {
                    let lines = crate::progress::Lines::new(entries.len(), color);
                    run::run_all_with(&entries, &options, &lines)
                }
                None => run::run_all_with(&entries, &options, &run::Unobserved),
            };
            let wall = started.elapsed();
            // A trace that cannot be written costs its file, not the verdicts: report them all,
            // then say what failed and exit 2.
            let written = run::write_traces(&mut results, &out);
            let junit_written = junit.as_ref().map(|path| {
                write_whole(path, &crate::ci::junit(&results, strict))
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))
            });
            let text = if json {
                pretty(&crate::ci::check_report(
                    &results,
                    shard.as_ref(),
                    crate::ci::peak_rss_bytes(),
                ))
            } else {
                report::check_text(&results, strict, wall, tables)
            };
            let printed = print(&text);
            if let Err(err) = written {
                return usage_error(&err);
            }
            if let Some(Err(err)) = junit_written {
                return usage_error(&err);
            }
            if printed != ExitCode::SUCCESS {
                return printed;
            }
            ExitCode::from(report::exit_code(&results, strict) as u8)
        }
        Command::Merge { reports } => {
            let mut read = Vec::new();
            for path in &reports {
                let parsed = std::fs::read_to_string(path)
                    .map_err(|e| e.to_string())
                    .and_then(|text| {
                        serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
                    });
                match parsed {
                    Ok(value) => read.push((path.display().to_string(), value)),
                    Err(err) => return usage_error(&format!("{}: {err}", path.display())),
                }
            }
            match crate::ci::merge(&read) {
                Ok(merged) => {
                    let printed = print(&pretty(&merged));
                    if printed != ExitCode::SUCCESS {
                        return printed;
                    }
                    let strict = crate::ci::shards_strict(&read);
                    ExitCode::from(crate::ci::report_exit_code(&merged, strict) as u8)
                }
                Err(err) => usage_error(&err),
            }
        }
        Command::Explore {
            spec,
            faults,
            bounds,
            addr,
            allow_remote,
        } => {
            let config = match crate::explore::config(&spec, faults.as_deref(), &bounds) {
                Ok(config) => config,
                Err(err) => return usage_error(&err),
            };
            let addr = match crate::explore::address(&addr, allow_remote) {
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
            params,
        }),
    }
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
    trace_limit: String,
    params: ParamArgs,
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

fn simulate(args: SimulateArgs) -> ExitCode {
    let swarm_mode = args.seeds.is_some();
    let options = (|| -> Result<_, String> {
        let variants = walcheck_sim::parse_spec(&args.spec)?;
        let ladders = LadderKind::parse(&args.ladder)?;
        let mut params = Params::default();
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
        let trace_limit = whole("--trace-limit", &args.trace_limit, 1, max)? as u32;
        let seeds = args.seeds.as_deref().map(swarm::parse_seeds).transpose()?;
        let shard = args.shard.as_deref().map(run::parse_shard).transpose()?;
        if shard.is_some() && seeds.is_none() {
            return Err("--shard splits a swarm run's seeds: give --seeds A..B too".into());
        }
        Ok((
            walcheck_sim::Options {
                variants,
                ladders,
                seed,
                attempts,
                params,
                trace_out: args.trace_out.clone(),
                trace_limit,
            },
            seeds,
            shard,
        ))
    })();
    let (options, seeds, shard) = match options {
        Ok(options) => options,
        Err(err) => return usage_error(&err),
    };
    let started = Instant::now();
    if let Some(seeds) = seeds {
        let fixed: Vec<&'static str> = args.params.0.iter().map(|(name, _)| *name).collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let part = shard.unwrap_or((1, 1));
        let report = match swarm::swarm_shard(&options, &fixed, seeds, part, threads) {
            Ok(report) => report,
            Err(err) => return usage_error(&err),
        };
        let elapsed_ms = started.elapsed().as_millis() as u64;
        return print(&if args.json {
            let mut json = swarm::to_json(&report, elapsed_ms);
            if let Some((index, count)) = shard {
                json.as_object_mut()
                    .expect("a swarm report is an object")
                    .insert(
                        "shard".into(),
                        serde_json::json!({ "index": index, "count": count }),
                    );
            }
            pretty(&json)
        } else {
            swarm::to_text(&report)
        });
    }
    let report = match walcheck_sim::simulate(&options) {
        Ok(report) => report,
        Err(err) => return usage_error(&err),
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    if let Some(path) = &args.plot {
        let written = walcheck_sim::plot::svg(&report).and_then(|svg| {
            write_whole(path, &svg)
                .map_err(|e| format!("cannot write plot {}: {e}", path.display()))
        });
        if let Err(err) = written {
            return usage_error(&err);
        }
    }
    print(&if args.json {
        pretty(&walcheck_sim::report::to_json(&report, elapsed_ms))
    } else {
        walcheck_sim::report::to_text(&report)
    })
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
    use walcheck_live::{self as live, conformance, PgServer};
    live::server::clean_up_on_interrupt();
    let start = |pg_url: &Option<String>| -> Result<PgServer, String> {
        match pg_url {
            Some(url) => PgServer::external(url),
            None => PgServer::start_primary(&live::find_bindir()?),
        }
    };
    let number = |name: &str, text: &str, max: u64| -> Result<u64, String> {
        match text.parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(format!("--{name} takes 1 to {max}, not {text:?}")),
        }
    };
    match what {
        LiveCommand::Conformance { pg_url, trace_out } => {
            let server = match start(&pg_url) {
                Ok(server) => server,
                Err(e) => return usage_error(&e),
            };
            let results = conformance::run_all(&server);
            if let Some(dir) = &trace_out {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    return usage_error(&format!("cannot create {}: {e}", dir.display()));
                }
                for (rule, result) in &results {
                    if let Ok(conformance::Outcome::Pass {
                        trace: Some(trace), ..
                    }) = result
                    {
                        let path = dir.join(format!("pg-live__{}.itf.json", rule.name));
                        if let Err(e) = trace.write(&path) {
                            return usage_error(&format!("cannot write {}: {e}", path.display()));
                        }
                    }
                }
            }
            let code = print(&conformance::to_text(&server, &results));
            if results.iter().any(|(_, r)| r.is_err()) {
                ExitCode::from(1)
            } else {
                code
            }
        }
        LiveCommand::Ladder {
            pg_url,
            ladder,
            attempts,
            level_ms,
            sim_attempts,
        } => {
            let options = (|| -> Result<live::ladder::LiveOptions, String> {
                Ok(live::ladder::LiveOptions {
                    ladders: LadderKind::parse(&ladder)?,
                    variants: walcheck_model::olake::Variant::ALL.to_vec(),
                    attempts: number("attempts", &attempts, 1_000)? as u32,
                    level_ms_max: number("level-ms", &level_ms, 600_000)?,
                    advance_timeout_ms: 2_000,
                    sim_attempts: number("sim-attempts", &sim_attempts, 100_000)? as u32,
                    seed: 1,
                })
            })();
            let options = match options {
                Ok(o) => o,
                Err(e) => return usage_error(&e),
            };
            let server = match start(&pg_url) {
                Ok(server) => server,
                Err(e) => return usage_error(&e),
            };
            match live::ladder::run_live_ladder(&server, &options) {
                Ok(result) => print(&live::ladder::to_text(&result)),
                Err(e) => usage_error(&format!("live ladder: {e}")),
            }
        }
    }
}

fn usage_error(message: &str) -> ExitCode {
    // Not eprintln!: a closed or full stderr must not turn bad usage into a panic.
    let _ = writeln!(std::io::stderr(), "walcheck: error: {message}");
    ExitCode::from(2)
}
