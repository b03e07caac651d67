//! A simulation run: every level of the chosen ladders, every attempt, every variant; the tallies,
//! and ITF traces of violating attempts.

use std::path::{Path, PathBuf};

use walcheck_model::olake::Variant;
use walcheck_properties::system::Variables;
use walcheck_systems::olake_bootstrap::{self as system, OlakeBootstrap, PROPERTIES};
use walcheck_traces::{Header, Step, Trace, SCHEMA};

use crate::engine::{self, AttemptId, Protocol, Recorded, SAFETY};
use crate::ladder::{LadderKind, Level};
use crate::params::Params;
use crate::stats::Tally;

/// The most attempts per level a run takes.
pub const MAX_ATTEMPTS: u32 = 1_000_000;

/// What to simulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The variants, each facing the same workloads and bootstrap instants.
    pub variants: Vec<Variant>,
    pub ladders: Vec<LadderKind>,
    pub seed: u64,
    /// Attempts per level (each variant runs every one).
    pub attempts: u32,
    pub params: Params,
    /// Where to write ITF traces of violating attempts, if anywhere.
    pub trace_out: Option<PathBuf>,
    /// How many violating attempts per level and variant to write traces of.
    pub trace_limit: u32,
    /// How bootstraps meet the workload ([`Protocol::Independent`] unless the live ladder's
    /// prediction asks for [`Protocol::BackToBack`]).
    pub protocol: Protocol,
    /// Under [`Protocol::BackToBack`]: rounds per run of a level, each run a fresh level (new
    /// slots, new workload), as many runs as `attempts` needs; 0: one run of `attempts` rounds.
    /// The live ladder runs `--attempts` rounds a level, and how far its advances decode grows
    /// with the level's length.
    pub level_rounds: u32,
}

/// The variants `SPEC` (`olake-bootstrap[:variant]`) names, or a one-line error.
pub fn parse_spec(spec: &str) -> Result<Vec<Variant>, String> {
    let (name, variant) = match spec.split_once(':') {
        Some((name, variant)) => (name, Some(variant)),
        None => (spec, None),
    };
    if name != system::NAME {
        return Err(format!(
            "simulate knows system {}, not {name:?}",
            system::NAME
        ));
    }
    match variant {
        None => Ok(Variant::ALL.to_vec()),
        Some(v) => Variant::from_name(v).map(|v| vec![v]).ok_or_else(|| {
            let names: Vec<_> = Variant::ALL.iter().map(|v| v.name()).collect();
            format!(
                "{} has no variant {v:?}; its variants are {}",
                system::NAME,
                names.join(", ")
            )
        }),
    }
}

/// One level's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelReport {
    pub level: Level,
    /// The client's whole statement cycles before the bootstraps and their total length in
    /// microseconds, summed over attempts (the same for every variant).
    pub cycles: u64,
    pub cycles_us: u64,
    /// WAL per statement, commit record included, in bytes.
    pub statement_wal_bytes: u64,
    /// One tally per variant, in [`Options::variants`] order.
    pub tallies: Vec<Tally>,
    /// The traces written, per variant.
    pub traces: Vec<Vec<PathBuf>>,
}

impl LevelReport {
    /// `level`'s results under either protocol, before any trace is written.
    fn new(
        options: &Options,
        level: Level,
        cycles: u64,
        cycles_us: u64,
        tallies: Vec<Tally>,
    ) -> Self {
        LevelReport {
            statement_wal_bytes: level.wal_bytes + options.params.commit_record_bytes,
            level,
            cycles,
            cycles_us,
            traces: vec![Vec::new(); tallies.len()],
            tallies,
        }
    }

    /// Statements per second the client achieved.
    pub fn statements_per_s(&self) -> f64 {
        self.cycles as f64 * 1e6 / self.cycles_us.max(1) as f64
    }

    /// WAL bytes per second inserted.
    pub fn wal_bytes_per_s(&self) -> f64 {
        self.statements_per_s() * self.statement_wal_bytes as f64
    }
}

/// One ladder's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LadderReport {
    pub kind: LadderKind,
    pub levels: Vec<LevelReport>,
}

/// A run's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub options: Options,
    pub ladders: Vec<LadderReport>,
}

/// Checks `options` and says in one line what is wrong.
pub fn validate(options: &Options) -> Result<(), String> {
    options.params.validate()?;
    if options.variants.is_empty() || options.ladders.is_empty() {
        return Err("nothing to simulate: no variant or no ladder".into());
    }
    if options.attempts == 0 || options.attempts > MAX_ATTEMPTS {
        return Err(format!(
            "--attempts takes 1 to {MAX_ATTEMPTS}, not {}",
            options.attempts
        ));
    }
    if options.protocol == Protocol::BackToBack && options.trace_out.is_some() {
        return Err("--trace-out re-runs single attempts: it needs --protocol independent".into());
    }
    Ok(())
}

/// Runs every attempt of every level of `options.ladders` for every variant, then writes the
/// traces of the first `trace_limit` violating attempts of each level and variant.
pub fn simulate(options: &Options) -> Result<Report, String> {
    validate(options)?;
    let mut ladders = Vec::new();
    for &kind in &options.ladders {
        let mut levels = Vec::new();
        for (level_index, level) in kind.levels(&options.params).into_iter().enumerate() {
            levels.push(run_level(options, kind, level_index, level)?);
        }
        ladders.push(LadderReport { kind, levels });
    }
    let mut report = Report {
        options: options.clone(),
        ladders,
    };
    if let Some(dir) = &options.trace_out {
        write_traces(&mut report, dir)?;
    }
    Ok(report)
}

fn run_level(
    options: &Options,
    kind: LadderKind,
    level_index: usize,
    level: Level,
) -> Result<LevelReport, String> {
    let mut tallies = vec![Tally::default(); options.variants.len()];
    let (mut cycles, mut cycles_us) = (0, 0);
    if options.protocol == Protocol::BackToBack {
        let per_run = match options.level_rounds {
            0 => options.attempts,
            n => n.min(options.attempts),
        };
        let mut done = 0;
        while done < options.attempts {
            let rounds = per_run.min(options.attempts - done);
            // Each run its own random streams, numbered like attempts.
            let id = AttemptId {
                seed: options.seed,
                ladder: kind,
                level_index,
                attempt: done,
            };
            let (run, outcomes) =
                engine::run_back_to_back(&options.variants, &options.params, &level, id, rounds)?;
            cycles += run.cycles;
            cycles_us += run.cycles_us;
            for (tally, outcomes) in tallies.iter_mut().zip(&outcomes) {
                for (round, outcome) in outcomes.iter().enumerate() {
                    tally.add(done + round as u32, outcome);
                }
            }
            done += rounds;
        }
        return Ok(LevelReport::new(options, level, cycles, cycles_us, tallies));
    }
    for attempt in 0..options.attempts {
        let id = AttemptId {
            seed: options.seed,
            ladder: kind,
            level_index,
            attempt,
        };
        let (warmup, outcomes) =
            engine::run_attempt(&options.variants, &options.params, &level, id)?;
        cycles += warmup.cycles;
        cycles_us += warmup.cycles_us;
        for (tally, outcome) in tallies.iter_mut().zip(&outcomes) {
            tally.add(attempt, outcome);
        }
    }
    Ok(LevelReport::new(options, level, cycles, cycles_us, tallies))
}

/// Re-runs the first violating attempts of each level and variant with recording on and writes
/// one ITF trace per safety property they break, ending where it first broke.
fn write_traces(report: &mut Report, dir: &Path) -> Result<(), String> {
    let options = report.options.clone();
    let mut created = false;
    for ladder in &mut report.ladders {
        for (level_index, level) in ladder.levels.iter_mut().enumerate() {
            for (v, variant) in options.variants.iter().enumerate() {
                let attempts: Vec<u32> = level.tallies[v]
                    .violating_attempts
                    .iter()
                    .take(options.trace_limit as usize)
                    .copied()
                    .collect();
                for attempt in attempts {
                    if !created {
                        std::fs::create_dir_all(dir).map_err(|e| {
                            format!("cannot create trace directory {}: {e}", dir.display())
                        })?;
                        created = true;
                    }
                    let id = AttemptId {
                        seed: options.seed,
                        ladder: ladder.kind,
                        level_index,
                        attempt,
                    };
                    for trace in attempt_traces(&options, *variant, &level.level, id)? {
                        let path = dir.join(trace_file_name(&trace, &level.level, id));
                        trace
                            .write(&path)
                            .map_err(|e| format!("cannot write trace {}: {e}", path.display()))?;
                        level.traces[v].push(path);
                    }
                }
            }
        }
    }
    Ok(())
}

/// The traces of attempt `id` for `variant`: one per safety property it breaks, from the initial
/// state to the step where the property first fails, each step with its virtual time.
pub fn attempt_traces(
    options: &Options,
    variant: Variant,
    level: &Level,
    id: AttemptId,
) -> Result<Vec<Trace>, String> {
    let (outcome, recorded, model) = engine::record_attempt(variant, &options.params, level, id)?;
    let mut traces = Vec::new();
    for (i, first) in outcome.first_violation.iter().enumerate() {
        let Some(step) = *first else { continue };
        traces.push(trace_of(
            &model,
            &recorded[..=step],
            SAFETY[i],
            options,
            level,
            id,
        ));
    }
    Ok(traces)
}

fn trace_of(
    model: &OlakeBootstrap,
    steps: &[Recorded],
    property: &str,
    options: &Options,
    level: &Level,
    id: AttemptId,
) -> Trace {
    let kind = PROPERTIES
        .iter()
        .find(|p| p.id == property)
        .map_or("always", |p| p.kind.name());
    let config = &model.config;
    let rerun = format!(
        "walcheck simulate {}:{} --ladder {} --seed {} --attempts {}{} --trace-out DIR",
        system::NAME,
        config.variant,
        id.ladder,
        id.seed,
        id.attempt + 1,
        options.params.non_default_flags()
    );
    let header = Header {
        schema: SCHEMA.to_owned(),
        system: system::NAME.to_owned(),
        variant: config.variant.name().to_owned(),
        faults: config.faults.name().to_owned(),
        config: config
            .bounds()
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v.to_string()))
            .collect(),
        property: property.to_owned(),
        kind: kind.to_owned(),
        verdict: "violated".to_owned(),
        seed: Some(id.seed),
        simulation: Some(format!(
            "ladder {}, level {}, attempt {}; again: {rerun}",
            id.ladder, level.label, id.attempt
        )),
        source: None,
    };
    let steps = steps
        .iter()
        .map(|r| Step {
            action: r.action.map(|a| a.to_string()),
            vars: r
                .state
                .variables()
                .into_iter()
                .map(|(n, v)| (n.to_owned(), v))
                .collect(),
            time_us: Some(r.time_us),
        })
        .collect();
    Trace { header, steps }
}

/// `olake-bootstrap__master__none__no-lsn-mismatch__sim-sync-4000-rows-seed1-attempt17.itf.json`.
pub fn trace_file_name(trace: &Trace, level: &Level, id: AttemptId) -> String {
    format!(
        "{}__{}__{}__{}__sim-{}-{}-seed{}-attempt{}.itf.json",
        trace.header.system,
        trace.header.variant,
        trace.header.faults,
        trace.header.property,
        id.ladder,
        level.slug(),
        id.seed,
        id.attempt
    )
}
