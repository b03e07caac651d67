//! A run's report: a table per ladder for a terminal, and the `walcheck.simulate/1` JSON.
//!
//! Both are deterministic: the same run gives the same bytes, apart from `elapsed_ms`.

use std::fmt::Write as _;

use serde_json::{json, Value};
use walcheck_model::olake::Variant;
use walcheck_model::pg::CommitMode;

use crate::run::{LevelReport, Report};
use crate::stats::{round_to, Tally};

/// The JSON schema id.
pub const SCHEMA: &str = "walcheck.simulate/1";

/// `x` with one decimal, as text.
fn one_decimal(x: f64) -> String {
    format!("{:.1}", round_to(x, 1))
}

/// Microseconds as milliseconds with one decimal.
fn ms(us: u64) -> String {
    format!("{}.{}", us / 1000, (us % 1000) / 100)
}

/// A share as a percentage with one decimal.
fn percent(x: f64) -> String {
    format!("{:.1}", round_to(x * 100.0, 1))
}

/// The parameters as one JSON object, in their order.
pub fn params_json(params: &crate::params::Params) -> Value {
    let mut object = serde_json::Map::new();
    for (info, value) in params.values() {
        object.insert(info.name.to_owned(), json!(value));
    }
    Value::Object(object)
}

fn tally_json(variant: Variant, tally: &Tally, traces: &[std::path::PathBuf]) -> Value {
    let (low, high) = tally.hit_ci95();
    let retries = (variant == Variant::Pr1084).then(|| {
        json!({
            "total": tally.retries,
            "max": tally.retries_max,
            "attempts_retried": tally.confirmed_after_retry,
            "confirm_ms_mean": tally.confirm_us_mean().map(|us| round_to(us as f64 / 1000.0, 1)),
            "confirm_ms_max": (tally.confirmed_after_retry > 0).then(|| round_to(tally.confirm_us_max as f64 / 1000.0, 1)),
        })
    });
    json!({
        "variant": variant.name(),
        "attempts": tally.attempts,
        "write_ahead_at_read": tally.write_ahead_at_read,
        "stopped_short": tally.stopped_short,
        "lsn_mismatch": tally.lsn_mismatch,
        "gave_up": tally.gave_up,
        "hit_probability": round_to(tally.hit_probability(), 4),
        "hit_ci95": [round_to(low, 4), round_to(high, 4)],
        "violating_attempts": tally.violating,
        "first_violating_attempts": tally.violating_attempts,
        "retries": retries,
        "traces": traces.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}

fn level_json(report: &Report, level: &LevelReport) -> Value {
    let l = &level.level;
    let variants: Vec<Value> = report
        .options
        .variants
        .iter()
        .zip(&level.tallies)
        .zip(&level.traces)
        .map(|((v, t), traces)| tally_json(*v, t, traces))
        .collect();
    json!({
        "level": l.label,
        "rows_per_statement": l.rows,
        "wal_bytes_per_statement": l.wal_bytes,
        "commit": match l.commit { CommitMode::Sync => "sync", CommitMode::Async => "async" },
        "target_statements_per_s": l.rate_per_s,
        "achieved_statements_per_s": round_to(level.statements_per_s(), 1),
        "achieved_rows_per_s": round_to(level.statements_per_s() * l.rows as f64, 0),
        "wal_bytes_per_s": round_to(level.wal_bytes_per_s(), 0),
        "variants": variants,
    })
}

/// `walcheck simulate --json`: one object. `elapsed_ms` is the only field that changes from run
/// to run.
pub fn to_json(report: &Report, elapsed_ms: u64) -> Value {
    let o = &report.options;
    let ladders: Vec<Value> = report
        .ladders
        .iter()
        .map(|ladder| {
            json!({
                "ladder": ladder.kind.name(),
                "description": ladder.kind.describe(),
                "levels": ladder.levels.iter().map(|l| level_json(report, l)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "system": walcheck_systems::olake_bootstrap::NAME,
        "variants": o.variants.iter().map(|v| v.name()).collect::<Vec<_>>(),
        "seed": o.seed,
        "attempts": o.attempts,
        "parameters": params_json(&o.params),
        "ladders": ladders,
        "elapsed_ms": elapsed_ms,
    })
}

/// Left-aligned columns, two spaces apart, trailing blanks trimmed.
pub fn columns(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..width)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let _ = write!(line, "{cell:<w$}  ", w = widths[c]);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A byte count in decimal megabytes, two decimals.
fn mb(bytes: f64) -> String {
    format!("{:.2} MB", round_to(bytes / 1e6, 2))
}

/// The terminal report: the parameters, then per ladder one row per level and variant.
pub fn to_text(report: &Report) -> String {
    let o = &report.options;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "olake-bootstrap: simulated first-sync bootstraps, seed {}, {} attempts per level (every variant sees the same workload and bootstrap instants)",
        o.seed, o.attempts
    );
    let params: Vec<String> = o
        .params
        .values()
        .iter()
        .map(|(info, value)| format!("{}={value}", info.name))
        .collect();
    let _ = writeln!(out, "parameters:");
    for line in wrap(&params.join(" "), 96) {
        let _ = writeln!(out, "  {line}");
    }
    for ladder in &report.ladders {
        let _ = writeln!(out, "\nladder {}: {}", ladder.kind, ladder.kind.describe());
        let mut rows = vec![[
            "level",
            "WAL/stmt",
            "achieved",
            "variant",
            "attempts",
            "write>flush",
            "stopped short",
            "lsn mismatch",
            "P(mismatch) [95% CI]",
            "gave up",
            "retries (max)",
            "confirm ms (mean/max)",
        ]
        .map(str::to_owned)
        .to_vec()];
        for level in &ladder.levels {
            let l = &level.level;
            let achieved = match l.commit {
                CommitMode::Sync => format!(
                    "{}k rows/s",
                    one_decimal(level.statements_per_s() * l.rows as f64 / 1000.0)
                ),
                CommitMode::Async => format!(
                    "{} stmt/s, {}/s",
                    one_decimal(level.statements_per_s()),
                    mb(level.wal_bytes_per_s())
                ),
            };
            for (i, (variant, tally)) in o.variants.iter().zip(&level.tallies).enumerate() {
                let (low, high) = tally.hit_ci95();
                let pr1084 = *variant == Variant::Pr1084;
                let mut row = if i == 0 {
                    vec![l.label.clone(), mb(l.wal_bytes as f64), achieved.clone()]
                } else {
                    vec![String::new(), String::new(), String::new()]
                };
                row.extend([
                    variant.name().to_owned(),
                    tally.attempts.to_string(),
                    tally.write_ahead_at_read.to_string(),
                    tally.stopped_short.to_string(),
                    tally.lsn_mismatch.to_string(),
                    format!(
                        "{}% [{}, {}]",
                        percent(tally.hit_probability()),
                        percent(low),
                        percent(high)
                    ),
                    tally.gave_up.to_string(),
                    if pr1084 {
                        format!("{} ({})", tally.retries, tally.retries_max)
                    } else {
                        "-".to_owned()
                    },
                    match (pr1084, tally.confirm_us_mean()) {
                        (true, Some(mean)) => format!("{}/{}", ms(mean), ms(tally.confirm_us_max)),
                        _ => "-".to_owned(),
                    },
                ]);
                rows.push(row);
            }
        }
        out.push_str(&columns(&rows));
    }
    let written: Vec<&std::path::PathBuf> = report
        .ladders
        .iter()
        .flat_map(|l| &l.levels)
        .flat_map(|l| l.traces.iter().flatten())
        .collect();
    if !written.is_empty() {
        let _ = writeln!(out, "\ntraces of violating attempts:");
        for path in written {
            let _ = writeln!(out, "  {}", path.display());
        }
    }
    out
}

/// `text`'s space-separated words in lines of at most `width` characters (a longer word alone).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}
