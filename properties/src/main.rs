//! The `walcheck` command line: parses arguments, calls the library, prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use walcheck::catalogue::{self, Selection};
use walcheck::checker::Budget;
use walcheck::{report, run};
use walcheck_traces::render::{self, Cells};
use walcheck_traces::Trace;

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
        /// Only this fault set (none, connector-crash, pg-crash, all).
        #[arg(long)]
        faults: Option<String>,
        /// Set a bound or knob, NAME=VALUE (see `walcheck list`); repeatable.
        #[arg(long = "bound", value_name = "NAME=VALUE")]
        bounds: Vec<String>,
        /// Threads to spread the checks over (1 to 64); results are the same at any count.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
        threads: usize,
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
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err)
            if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            return usage_error(
                "a command is required: list, check, replay or show (see walcheck --help)",
            );
        }
        Err(err) => {
            return usage_error(
                err.to_string()
                    .lines()
                    .next()
                    .unwrap_or("bad usage")
                    .trim_start_matches("error: "),
            )
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
                Ok(Ok(steps)) => print(&format!(
                    "replayed {} ({} steps): every step enabled and as recorded; {} {} at step {steps}\n",
                    path.display(),
                    steps,
                    trace.header.property,
                    trace.header.verdict
                )),
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
            let system = match catalogue::config_from_header(&trace.header) {
                Ok(config) => config.info(),
                Err(err) => return usage_error(&format!("{}: {err}", path.display())),
            };
            let text = match format {
                Format::Text => {
                    let h = &trace.header;
                    format!(
                        "{}:{} faults={}: {} ({}) {} after {} steps\n{}",
                        h.system,
                        h.variant,
                        h.faults,
                        h.property,
                        h.kind,
                        h.verdict,
                        trace.len_actions(),
                        render::step_table(
                            &trace,
                            system.key_variables,
                            system.counters,
                            Cells::Changes
                        )
                    )
                }
                Format::Mermaid => render::mermaid(&trace, system.lanes, system.key_variables),
                Format::Svg => render::svg(&trace, system.lanes),
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
            let (hypotheses, fixes) = walcheck::triage::triage(&Budget::default());
            let text = if json {
                pretty(&walcheck::triage::json(&hypotheses, &fixes))
            } else {
                walcheck::triage::text(&hypotheses, &fixes)
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
            timeout,
            max_states,
            strict,
            json,
            out,
        } => {
            if !(1..=64).contains(&threads) {
                return usage_error(&format!("--threads takes 1 to 64, not {threads}"));
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
            let budget = Budget {
                max_states,
                deadline: timeout.map(|t| Instant::now() + t),
            };
            let started = Instant::now();
            let mut results = run::run_all(&entries, threads, &budget);
            let wall = started.elapsed();
            // A trace that cannot be written costs its file, not the verdicts: report them all,
            // then say what failed and exit 2.
            let written = run::write_traces(&mut results, &out);
            let text = if json {
                pretty(&report::check_json(&results))
            } else {
                report::check_text(&results, strict, wall, tables)
            };
            let printed = print(&text);
            if let Err(err) = written {
                return usage_error(&err);
            }
            if printed != ExitCode::SUCCESS {
                return printed;
            }
            ExitCode::from(report::exit_code(&results, strict) as u8)
        }
    }
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

fn usage_error(message: &str) -> ExitCode {
    // Not eprintln!: a closed or full stderr must not turn bad usage into a panic.
    let _ = writeln!(std::io::stderr(), "walcheck: error: {message}");
    ExitCode::from(2)
}
