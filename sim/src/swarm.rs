//! Swarm mode: many seeds, the parameters drawn per seed, the worst level of each.
//!
//! Swarm testing (Groce et al., ISSTA 2012) varies the configuration as well as the schedule, so
//! that behaviour a default configuration never reaches shows up in some seed. Each seed draws
//! every parameter not fixed on the command line from its [`crate::params::ParamInfo::swarm`]
//! values, then runs the ladders as a normal run with that seed would.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use walcheck_model::olake::Variant;

use crate::ladder::LadderKind;
use crate::params::Params;
use crate::report::{columns, params_json, wrap};
use crate::run::{self, Options, Report};
use crate::stats::round_to;

/// The most seeds one swarm run takes.
pub const MAX_SEEDS: u64 = 100_000;

/// Parses `A..B` (B excluded) or `A..=B` (B included), or says in one line why not.
pub fn parse_seeds(text: &str) -> Result<Range<u64>, String> {
    let bad = || format!("--seeds takes A..B or A..=B with whole numbers A < B, not {text:?}");
    let (from, to, inclusive) = if let Some((a, b)) = text.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = text.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad());
    };
    let number = |s: &str| -> Result<u64, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let (from, mut to) = (number(from)?, number(to)?);
    if inclusive {
        to = to.checked_add(1).ok_or_else(bad)?;
    }
    if to <= from {
        return Err(bad());
    }
    if to - from > MAX_SEEDS {
        return Err(format!(
            "--seeds {text} names {} seeds; a swarm run takes at most {MAX_SEEDS}",
            to - from
        ));
    }
    Ok(from..to)
}

/// The level where a variant mismatched most in one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worst {
    pub ladder: LadderKind,
    pub level: String,
    pub lsn_mismatch: u64,
    pub attempts: u64,
}

/// One variant's results in one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantSummary {
    pub variant: Variant,
    /// `None` when no level mismatched.
    pub worst: Option<Worst>,
    pub lsn_mismatch: u64,
    pub attempts: u64,
    pub gave_up: u64,
    pub violating: u64,
}

/// One seed: its drawn parameters and each variant's summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedResult {
    pub seed: u64,
    pub params: Params,
    pub variants: Vec<VariantSummary>,
    /// The traces this seed wrote.
    pub traces: Vec<String>,
}

/// A swarm run's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwarmReport {
    pub seeds: Range<u64>,
    /// The parameters the command line fixed (not drawn).
    pub fixed: Vec<&'static str>,
    pub attempts: u32,
    pub ladders: Vec<LadderKind>,
    pub results: Vec<SeedResult>,
}

/// The parameters seed `seed` runs with: `base` with every parameter not in `fixed` drawn by a
/// ChaCha8 generator seeded from `seed` on its own stream (not an attempt's).
pub fn params_for_seed(base: &Params, fixed: &[&str], seed: u64) -> Params {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1 << 63);
    base.drawn(fixed, &mut rng)
}

fn summarise(report: &Report) -> Vec<VariantSummary> {
    let o = &report.options;
    o.variants
        .iter()
        .enumerate()
        .map(|(v, &variant)| {
            let mut summary = VariantSummary {
                variant,
                worst: None,
                lsn_mismatch: 0,
                attempts: 0,
                gave_up: 0,
                violating: 0,
            };
            for ladder in &report.ladders {
                for level in &ladder.levels {
                    let t = &level.tallies[v];
                    summary.lsn_mismatch += t.lsn_mismatch;
                    summary.attempts += t.attempts;
                    summary.gave_up += t.gave_up;
                    summary.violating += t.violating;
                    let worse = summary
                        .worst
                        .as_ref()
                        .map_or(t.lsn_mismatch > 0, |w| t.lsn_mismatch > w.lsn_mismatch);
                    if worse {
                        summary.worst = Some(Worst {
                            ladder: ladder.kind,
                            level: level.level.label.clone(),
                            lsn_mismatch: t.lsn_mismatch,
                            attempts: t.attempts,
                        });
                    }
                }
            }
            summary
        })
        .collect()
}

/// Runs seed `seed` of a swarm.
fn run_seed(base: &Options, fixed: &[&'static str], seed: u64) -> Result<SeedResult, String> {
    let params = params_for_seed(&base.params, fixed, seed);
    let options = Options {
        seed,
        params,
        ..base.clone()
    };
    let report = run::simulate(&options)?;
    let traces = report
        .ladders
        .iter()
        .flat_map(|l| &l.levels)
        .flat_map(|l| l.traces.iter().flatten())
        .map(|p| p.display().to_string())
        .collect();
    Ok(SeedResult {
        seed,
        params,
        variants: summarise(&report),
        traces,
    })
}

/// Runs `base` once per seed in `seeds`, the parameters not in `fixed` drawn per seed, on up to
/// `threads` threads; results come back in seed order whatever the thread count, and the first
/// error (in seed order) is returned.
pub fn swarm(
    base: &Options,
    fixed: &[&'static str],
    seeds: Range<u64>,
    threads: usize,
) -> Result<SwarmReport, String> {
    swarm_shard(base, fixed, seeds, (1, 1), threads)
}

/// [`swarm`] over shard `index` of `count` (both from 1) of `seeds`: every `count`-th seed from
/// the `index`-th, so that `count` runs cover each seed once. The report keeps the whole range.
pub fn swarm_shard(
    base: &Options,
    fixed: &[&'static str],
    seeds: Range<u64>,
    (index, count): (usize, usize),
    threads: usize,
) -> Result<SwarmReport, String> {
    assert!((1..=count).contains(&index), "shard {index}/{count}");
    run::validate(base)?;
    let all: Vec<u64> = seeds.clone().skip(index - 1).step_by(count).collect();
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Result<SeedResult, String>>>> = Mutex::new(vec![None; all.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, 64) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&seed) = all.get(i) else { break };
                let result = run_seed(base, fixed, seed);
                slots.lock().expect("no thread panics holding the lock")[i] = Some(result);
            });
        }
    });
    let results = slots
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|r| r.expect("every seed ran"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SwarmReport {
        seeds,
        fixed: fixed.to_vec(),
        attempts: base.attempts,
        ladders: base.ladders.clone(),
        results,
    })
}

fn worst_json(worst: &Option<Worst>) -> Value {
    match worst {
        None => Value::Null,
        Some(w) => json!({
            "ladder": w.ladder.name(),
            "level": w.level,
            "lsn_mismatch": w.lsn_mismatch,
            "attempts": w.attempts,
            "hit_probability": round_to(w.lsn_mismatch as f64 / w.attempts.max(1) as f64, 4),
        }),
    }
}

/// A variant over the whole swarm: in how many seeds it mismatched, and its worst (seed, level).
type Overall = (Variant, usize, Option<(u64, Worst)>);

/// Each variant over the whole swarm.
fn overall(report: &SwarmReport) -> Vec<Overall> {
    let variants: Vec<Variant> = report
        .results
        .first()
        .map(|r| r.variants.iter().map(|v| v.variant).collect())
        .unwrap_or_default();
    variants
        .iter()
        .enumerate()
        .map(|(i, &variant)| {
            let mut seeds_hit = 0;
            let mut worst: Option<(u64, Worst)> = None;
            for result in &report.results {
                let summary = &result.variants[i];
                if summary.lsn_mismatch > 0 {
                    seeds_hit += 1;
                }
                if let Some(w) = &summary.worst {
                    let share = |w: &Worst| (w.lsn_mismatch, w.attempts);
                    let better = worst.as_ref().is_none_or(|(_, best)| {
                        // Compare hit shares exactly: a/b > c/d as a·d > c·b.
                        let (a, b) = share(w);
                        let (c, d) = share(best);
                        u128::from(a) * u128::from(d) > u128::from(c) * u128::from(b)
                    });
                    if better {
                        worst = Some((result.seed, w.clone()));
                    }
                }
            }
            (variant, seeds_hit, worst)
        })
        .collect()
}

/// `walcheck simulate --seeds A..B --json`: `walcheck.swarm/1`.
pub fn to_json(report: &SwarmReport, elapsed_ms: u64) -> Value {
    let results: Vec<Value> = report
        .results
        .iter()
        .map(|r| {
            json!({
                "seed": r.seed,
                "parameters": params_json(&r.params),
                "variants": r.variants.iter().map(|v| json!({
                    "variant": v.variant.name(),
                    "worst": worst_json(&v.worst),
                    "lsn_mismatch": v.lsn_mismatch,
                    "attempts": v.attempts,
                    "gave_up": v.gave_up,
                    "violating_attempts": v.violating,
                })).collect::<Vec<_>>(),
                "traces": r.traces,
            })
        })
        .collect();
    let summary: Vec<Value> = overall(report)
        .into_iter()
        .map(|(variant, seeds_hit, worst)| {
            json!({
                "variant": variant.name(),
                "seeds_with_mismatch": seeds_hit,
                "worst_seed": worst.as_ref().map(|(s, _)| *s),
                "worst": worst_json(&worst.map(|(_, w)| w)),
            })
        })
        .collect();
    json!({
        "schema": "walcheck.swarm/1",
        "system": walcheck_systems::olake_bootstrap::NAME,
        "seeds": { "from": report.seeds.start, "to": report.seeds.end },
        "ladders": report.ladders.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "attempts": report.attempts,
        "fixed_parameters": report.fixed,
        "results": results,
        "summary": summary,
        "elapsed_ms": elapsed_ms,
    })
}

fn worst_text(worst: &Option<Worst>) -> String {
    match worst {
        None => "none".to_owned(),
        Some(w) => format!(
            "{} {}: {}/{}",
            w.ladder, w.level, w.lsn_mismatch, w.attempts
        ),
    }
}

/// The terminal report: one row per seed, each variant's worst level, the parameters drawn; then
/// each variant's worst seed.
pub fn to_text(report: &SwarmReport) -> String {
    let mut out = String::new();
    let ladders: Vec<&str> = report.ladders.iter().map(|l| l.name()).collect();
    let fixed = if report.fixed.is_empty() {
        "none".to_owned()
    } else {
        report.fixed.join(", ")
    };
    let _ = writeln!(
        out,
        "olake-bootstrap swarm: seeds {}..{}, ladder {}, {} attempts per level; parameters drawn per seed (fixed: {fixed})\n",
        report.seeds.start,
        report.seeds.end,
        ladders.join("+"),
        report.attempts
    );
    let variants: Vec<Variant> = report
        .results
        .first()
        .map(|r| r.variants.iter().map(|v| v.variant).collect())
        .unwrap_or_default();
    let mut header = vec!["seed".to_owned()];
    header.extend(variants.iter().map(|v| format!("{v}: worst level")));
    header.push("gave up".to_owned());
    let mut rows = vec![header];
    let mut drawn_lines = Vec::new();
    for r in &report.results {
        let mut row = vec![r.seed.to_string()];
        row.extend(r.variants.iter().map(|v| worst_text(&v.worst)));
        let gave_up: Vec<String> = r
            .variants
            .iter()
            .filter(|v| v.gave_up > 0)
            .map(|v| format!("{} {}", v.variant, v.gave_up))
            .collect();
        row.push(if gave_up.is_empty() {
            "-".to_owned()
        } else {
            gave_up.join(", ")
        });
        let drawn: Vec<String> = r
            .params
            .values()
            .into_iter()
            .filter(|(info, value)| *value != info.default)
            .map(|(info, value)| format!("{}={value}", info.name))
            .collect();
        drawn_lines.push(if drawn.is_empty() {
            "defaults".to_owned()
        } else {
            drawn.join(" ")
        });
        rows.push(row);
    }
    // Each seed's row, then the parameters it drew (those differing from the defaults).
    let table = columns(&rows);
    let mut lines = table.lines();
    if let Some(header) = lines.next() {
        let _ = writeln!(out, "{header}");
    }
    for (line, drawn) in lines.zip(&drawn_lines) {
        let _ = writeln!(out, "{line}");
        for wrapped in wrap(drawn, 96) {
            let _ = writeln!(out, "      {wrapped}");
        }
    }
    out.push('\n');
    let total = report.results.len();
    for (variant, seeds_hit, worst) in overall(report) {
        let _ = match worst {
            None => writeln!(out, "{variant}: no lsn mismatch in any of {total} seeds"),
            Some((seed, w)) => writeln!(
                out,
                "{variant}: lsn mismatch in {seeds_hit} of {total} seeds; worst: seed {seed}, {}",
                worst_text(&Some(w))
            ),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges() {
        assert_eq!(parse_seeds("3..7"), Ok(3..7));
        assert_eq!(parse_seeds("3..=7"), Ok(3..8));
        for bad in ["7..3", "3..3", "3", "a..b", "-1..4", "0..1000000"] {
            let err = parse_seeds(bad).unwrap_err();
            assert!(err.starts_with("--seeds"), "{err}");
        }
    }
}
