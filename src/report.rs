//! Reports: the `walcheck.check/1` and `walcheck.list/1` JSON, and the terminal's verdict table
//! and step tables.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use walcheck_properties::system::{BoundValue, Kind};

use crate::catalogue::{systems, SystemConfig};
use crate::checker::Verdict;
use crate::run::CheckResult;
use walcheck_properties::compact::CollisionEstimate;

/// A configuration's bounds as a JSON object (numbers as numbers, named choices as strings).
pub fn bounds_json(config: &SystemConfig) -> std::collections::BTreeMap<String, Value> {
    config
        .bounds()
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                BoundValue::Number(n) => json!(n),
                BoundValue::Name(s) => json!(s),
            };
            (name.to_owned(), value)
        })
        .collect()
}

/// `walcheck list --json`.
pub fn list_json() -> Value {
    let systems: Vec<Value> = systems()
        .iter()
        .map(|s| {
            let s = s.info();
            let bounds: Vec<Value> = s
                .bounds
                .iter()
                .map(|b| {
                    let default = match b.default {
                        BoundValue::Number(n) => json!(n),
                        BoundValue::Name(v) => json!(v),
                    };
                    let mut bound = json!({ "name": b.name, "default": default, "min": b.min, "max": b.max, "unit": b.unit });
                    if !b.values.is_empty() {
                        bound["values"] = json!(b.values);
                    }
                    bound["doc"] = json!(b.doc);
                    bound
                })
                .collect();
            let properties: Vec<Value> = s
                .properties
                .iter()
                .map(|p| json!({ "id": p.id, "kind": p.kind.name(), "needs": p.needs, "doc": p.doc }))
                .collect();
            json!({ "name": s.name, "variants": s.variant_names(), "faults": s.faults, "bounds": bounds, "properties": properties })
        })
        .collect();
    json!({ "schema": "walcheck.list/1", "systems": systems })
}

/// `walcheck list` for a terminal.
pub fn list_text() -> String {
    let mut out = String::new();
    for s in systems() {
        let s = s.info();
        let _ = writeln!(
            out,
            "{}\n  variants: {}\n  faults:   {}\n  bounds:",
            s.name,
            s.variant_names().join(", "),
            s.faults.join(", ")
        );
        for b in s.bounds {
            let range = if b.values.is_empty() {
                format!("{}..={}", b.min.unwrap_or(0), b.max.unwrap_or(u64::MAX))
            } else {
                b.values.join("|")
            };
            let _ = writeln!(
                out,
                "    {:<18} default {:<8} {:<14} {:<10} {}",
                b.name,
                b.default.to_string(),
                range,
                b.unit,
                b.doc
            );
        }
        let _ = writeln!(out, "  properties:");
        for p in s.properties {
            let needs = p.needs.map(|n| format!(" (needs {n})")).unwrap_or_default();
            let _ = writeln!(
                out,
                "    {:<30} {:<9} {}{needs}",
                p.id,
                p.kind.name(),
                p.doc
            );
        }
    }
    out
}

/// `walcheck check --json`: one `walcheck.check/1` object.
pub fn check_json(results: &[CheckResult]) -> Value {
    let rows: Vec<Value> = results
        .iter()
        .map(|r| {
            let mut row = Map::new();
            let e = &r.entry;
            row.insert("system".into(), json!(e.system()));
            row.insert("variant".into(), json!(e.config.variant()));
            row.insert("faults".into(), json!(e.config.faults()));
            row.insert("bounds".into(), json!(bounds_json(&e.config)));
            row.insert("property".into(), json!(e.property.id));
            row.insert("kind".into(), json!(e.property.kind.name()));
            row.insert("verdict".into(), json!(r.verdict.name()));
            row.insert("expected".into(), json!(e.expected.name()));
            row.insert("reason".into(), json!(e.reason));
            row.insert("states".into(), json!(r.states));
            row.insert("unique_states".into(), json!(r.unique_states));
            row.insert("max_depth".into(), json!(r.max_depth));
            row.insert("elapsed_ms".into(), json!(r.elapsed.as_secs_f64() * 1000.0));
            // Measurements, like elapsed_ms: distinct states per second, the search's peak heap
            // and that per distinct state (null where not measured).
            row.insert(
                "states_per_s".into(),
                json!(r.states_per_s().map(|s| s.round() as u64)),
            );
            row.insert("peak_heap_bytes".into(), json!(r.peak_heap_bytes));
            row.insert(
                "bytes_per_state".into(),
                json!(r.bytes_per_state().map(|b| b.round() as u64)),
            );
            row.insert(
                "trace".into(),
                json!(r.trace_path.as_ref().map(|p| p.display().to_string())),
            );
            row.insert(
                "trace_steps".into(),
                json!(r
                    .trace_path
                    .as_ref()
                    .and(r.trace.as_ref())
                    .map(|t| t.len_actions())),
            );
            // After an exhaustive proof over fingerprints, the chance that a collision hid a
            // state (TLC's optimistic estimate); which budget ended an inconclusive search; why a
            // search could not be trusted.
            row.insert(
                "collision".into(),
                json!(r.collision.map(|c| json!({
                    "fingerprint_bits": c.fingerprint_bits,
                    "probability": c.optimistic,
                }))),
            );
            row.insert("limit".into(), json!(r.limit));
            row.insert("error".into(), json!(r.error));
            if e.property.kind == Kind::Eventually {
                // Where a lasso's cycle starts (its state index), as ITF's `loop`.
                row.insert(
                    "trace_loop".into(),
                    json!(r
                        .trace_path
                        .as_ref()
                        .and(r.trace.as_ref())
                        .and_then(|t| t.loop_index())),
                );
            }
            Value::Object(row)
        })
        .collect();
    json!({ "schema": "walcheck.check/1", "results": rows })
}

/// `walcheck check` for a terminal: per system, one row per configuration with a column per
/// `always` property and one for the witnesses; then each distinct counterexample's step table
/// (entries whose counterexample is the same action sequence share one); then a summary line.
pub fn check_text(
    results: &[CheckResult],
    strict: bool,
    wall: std::time::Duration,
    tables: bool,
) -> String {
    let mut out = String::new();
    let mut systems: Vec<&str> = results.iter().map(|r| r.entry.system()).collect();
    systems.dedup();
    for system in systems {
        let of_system: Vec<&CheckResult> = results
            .iter()
            .filter(|r| r.entry.system() == system)
            .collect();
        let mut safety: Vec<&str> = of_system
            .iter()
            .filter(|r| r.entry.property.kind != Kind::Sometimes)
            .map(|r| r.entry.property.id)
            .collect();
        safety.sort_by_key(|id| of_system.iter().position(|r| r.entry.property.id == *id));
        safety.dedup();
        let mut header = vec![system.to_owned(), "faults".into(), "bounds".into()];
        header.extend(safety.iter().map(|s| (*s).to_owned()));
        header.push("witnesses (sometimes)".into());
        let mut rows = vec![header];
        let mut configs: Vec<_> = of_system.iter().map(|r| r.entry.config.clone()).collect();
        configs.dedup();
        for config in configs {
            let of_config: Vec<&CheckResult> = of_system
                .iter()
                .copied()
                .filter(|r| r.entry.config == config)
                .collect();
            let bounds = config.non_default_bounds().join(",");
            let mut row = vec![
                config.variant().to_owned(),
                config.faults().to_owned(),
                if bounds.is_empty() {
                    "-".into()
                } else {
                    bounds
                },
            ];
            for id in &safety {
                row.push(
                    of_config
                        .iter()
                        .find(|r| r.entry.property.id == *id)
                        .map_or("-".into(), |r| cell(r)),
                );
            }
            let witnesses: Vec<&&CheckResult> = of_config
                .iter()
                .filter(|r| r.entry.property.kind == Kind::Sometimes)
                .collect();
            let reached = witnesses
                .iter()
                .filter(|r| r.verdict == Verdict::Holds)
                .count();
            let mut w = if witnesses.is_empty() {
                "-".to_owned()
            } else {
                format!("{reached} of {} reached", witnesses.len())
            };
            for r in witnesses
                .iter()
                .filter(|r| r.verdict != Verdict::Holds || !r.matches_expectation())
            {
                w.push_str(&format!("; {} {}", r.entry.property.id, cell(r)));
            }
            row.push(w);
            rows.push(row);
        }
        out.push_str(&table(&rows));
        out.push('\n');
    }

    let mut shown: Vec<(String, Vec<String>)> = Vec::new();
    let counterexamples = results.iter().filter(|r| r.is_counterexample());
    if !tables {
        let written: Vec<&CheckResult> = counterexamples
            .clone()
            .filter(|r| r.trace_path.is_some())
            .collect();
        if let Some(dir) = written
            .first()
            .and_then(|r| r.trace_path.as_ref())
            .and_then(|p| p.parent())
        {
            let _ = writeln!(
                out,
                "{} counterexamples written under {} (`walcheck show FILE` renders one; `walcheck check SYSTEM:VARIANT` prints their step tables)\n",
                written.len(),
                dir.display()
            );
        }
    }
    for r in counterexamples.filter(|_| tables) {
        let trace = r.trace.as_ref().expect("counterexamples have traces");
        let e = &r.entry;
        let actions: Vec<String> = trace
            .steps
            .iter()
            .filter_map(|s| s.action.clone())
            .collect();
        let key = format!("{}:{}:{}", e.system(), e.config.variant(), e.property.id);
        let bounds = e.config.non_default_bounds();
        let bounds = if bounds.is_empty() {
            String::new()
        } else {
            format!(" {}", bounds.join(","))
        };
        if shown.iter().any(|(k, a)| *k == key && *a == actions) {
            continue;
        }
        let same: Vec<String> = results
            .iter()
            .filter(|o| {
                o.is_counterexample()
                    && o.entry.system() == e.system()
                    && o.entry.config.variant() == e.config.variant()
            })
            .filter(|o| o.entry.property.id == e.property.id && o.entry.config != e.config)
            .filter(|o| {
                o.trace.as_ref().is_some_and(|t| {
                    t.steps
                        .iter()
                        .filter_map(|s| s.action.clone())
                        .eq(actions.iter().cloned())
                })
            })
            .map(|o| {
                let b = o.entry.config.non_default_bounds();
                format!(
                    "{}{}",
                    o.entry.config.faults(),
                    if b.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", b.join(","))
                    }
                )
            })
            .collect();
        let also = if same.is_empty() {
            String::new()
        } else {
            format!(" (the same with faults {})", same.join("; "))
        };
        let how = match trace.loop_text() {
            Some(text) => format!("by a lasso of {} steps ({text})", trace.len_actions()),
            None => format!("in {} steps", trace.len_actions()),
        };
        let _ = writeln!(
            out,
            "{}:{} faults={}{bounds}: {} violated {how}{also}\n  trace: {}",
            e.system(),
            e.config.variant(),
            e.config.faults(),
            e.property.id,
            r.trace_path
                .as_ref()
                .map_or("not written".into(), |p| p.display().to_string()),
        );
        out.push_str(&walcheck_traces::render::step_table(
            trace,
            e.config.info().view.key_variables,
            e.config.info().view.counters,
            walcheck_traces::render::Cells::All,
        ));
        out.push('\n');
        shown.push((key, actions));
    }

    let differ = results.iter().filter(|r| !r.matches_expectation()).count();
    let inconclusive = results
        .iter()
        .filter(|r| r.verdict == Verdict::Inconclusive)
        .count();
    let violated = results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .count();
    out.push_str(&stopped_text(results));
    let unique: u64 = results.iter().map(|r| r.unique_states).sum();
    let counterexamples = results.iter().filter(|r| r.is_counterexample()).count();
    let unreached = violated - counterexamples;
    let _ = writeln!(
        out,
        "{} checks: {} as expected, {differ} differ, {inconclusive} inconclusive; {violated} violated ({counterexamples} counterexamples, {unreached} witnesses not reached){}; {unique} distinct states over all searches in {:.2} s",
        results.len(),
        results.len() - differ - inconclusive,
        if strict { " (--strict: any violation fails)" } else { "" },
        wall.as_secs_f64(),
    );
    out.push_str(&collision_text(results));
    out
}

/// A configuration as the summary lines name it: `system:variant faults=F bounds`.
fn config_name(config: &SystemConfig) -> String {
    let bounds = config.non_default_bounds().join(",");
    format!(
        "{}:{} faults={}{}",
        config.info().name,
        config.variant(),
        config.faults(),
        if bounds.is_empty() {
            String::new()
        } else {
            format!(" {bounds}")
        }
    )
}

/// One line per search that ended without deciding some of its checks: the budget that ran out,
/// or why its result could not be trusted.
fn stopped_text(results: &[CheckResult]) -> String {
    let mut lines: Vec<(String, usize)> = Vec::new();
    for r in results {
        let line = match (&r.error, r.limit) {
            (Some(error), _) => format!(
                "error: {}: {error}; its checks are inconclusive (rerun with --fingerprint-bits 128)",
                config_name(&r.entry.config)
            ),
            (None, Some(limit)) => format!(
                "inconclusive: {}: {} ran out first",
                config_name(&r.entry.config),
                match limit {
                    "state-indices" => "the 32-bit state indices".to_owned(),
                    flag => format!("--{flag}"),
                }
            ),
            (None, None) => continue,
        };
        match lines.iter_mut().find(|(l, _)| *l == line) {
            Some((_, count)) => *count += 1,
            None => lines.push((line, 1)),
        }
    }
    let mut out = String::new();
    for (line, checks) in lines {
        let _ = writeln!(
            out,
            "{line}: {checks} check{}",
            if checks == 1 { "" } else { "s" }
        );
    }
    out
}

/// After exhaustive proofs over fingerprints: how many, and the largest estimated chance that a
/// collision hid a state, with advice above [`crate::run::COLLISION_ADVICE_ABOVE`].
fn collision_text(results: &[CheckResult]) -> String {
    let mut searches: Vec<(&SystemConfig, CollisionEstimate)> = Vec::new();
    for r in results {
        if let Some(c) = r.collision {
            if !searches
                .iter()
                .any(|(config, _)| **config == r.entry.config)
            {
                searches.push((&r.entry.config, c));
            }
        }
    }
    let Some((config, worst)) = searches.iter().copied().reduce(|a, b| {
        if b.1.optimistic > a.1.optimistic {
            b
        } else {
            a
        }
    }) else {
        return String::new();
    };
    let mut out = format!(
        "{} exhaustive search{} over {}-bit fingerprints: the chance that a collision hid a state is at most {:.1e} ({})",
        searches.len(),
        if searches.len() == 1 { "" } else { "es" },
        worst.fingerprint_bits,
        worst.optimistic,
        config_name(config),
    );
    if worst.optimistic > crate::run::COLLISION_ADVICE_ABOVE {
        out.push_str(&format!(
            "; above {:.0e}: rerun with --fingerprint-bits 128",
            crate::run::COLLISION_ADVICE_ABOVE
        ));
    }
    out.push('\n');
    out
}

/// A verdict as a table cell: `holds`, `violated (N steps)`, with what was expected when it differs.
fn cell(r: &CheckResult) -> String {
    let mut cell = match (&r.trace, r.verdict) {
        (Some(t), Verdict::Violated) => match t.loop_index() {
            Some(k) if k == t.len_actions() => format!("violated ({k} steps, then stutters)"),
            Some(k) => format!(
                "violated ({k} steps, then a {}-step cycle)",
                t.len_actions() - k
            ),
            None => format!("violated ({} steps)", t.len_actions()),
        },
        _ => r.verdict.name().to_owned(),
    };
    if !r.matches_expectation() {
        cell.push_str(&format!(" DIFFERS: expected {}", r.entry.expected.name()));
    }
    cell
}

/// Rows as left-aligned columns two spaces apart, trailing space trimmed.
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let _ = write!(line, "{cell:<width$}  ", width = widths[c]);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The exit code for `results`: 0 all as expected (with `strict`: nothing violated), 1 a verdict
/// differs, 3 inconclusive and nothing differs.
pub fn exit_code(results: &[CheckResult], strict: bool) -> i32 {
    let differs = results
        .iter()
        .any(|r| !r.matches_expectation() || (strict && r.verdict == Verdict::Violated));
    if differs {
        1
    } else if results.iter().any(|r| r.verdict == Verdict::Inconclusive) {
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::catalogue::{self, Selection};

    fn result(verdict: Verdict, expected: Verdict) -> CheckResult {
        let mut entry = catalogue::select(&Selection {
            specs: vec!["olake-bootstrap:pr1084".into()],
            faults: Some("none".into()),
            bounds: vec!["server=primary".into()],
        })
        .unwrap()
        .remove(0);
        entry.expected = expected;
        CheckResult {
            entry,
            verdict,
            states: 1,
            unique_states: 1,
            max_depth: 0,
            elapsed: Duration::ZERO,
            peak_heap_bytes: None,
            trace: None,
            trace_path: None,
            search: None,
            collision: None,
            limit: None,
            error: None,
        }
    }

    #[test]
    fn exit_codes_follow_the_contract_and_its_precedence() {
        use Verdict::{Holds, Inconclusive, Violated};
        assert_eq!(exit_code(&[result(Holds, Holds)], false), 0);
        assert_eq!(exit_code(&[result(Violated, Violated)], false), 0);
        assert_eq!(exit_code(&[result(Violated, Violated)], true), 1);
        assert_eq!(exit_code(&[result(Holds, Violated)], false), 1);
        assert_eq!(exit_code(&[result(Inconclusive, Holds)], false), 3);
        assert_eq!(
            exit_code(
                &[result(Inconclusive, Holds), result(Holds, Violated)],
                false
            ),
            1
        );
    }

    #[test]
    fn a_high_collision_estimate_advises_128_bit_fingerprints() {
        let estimate = |optimistic| CollisionEstimate {
            fingerprint_bits: 64,
            lookups: 3,
            distinct: 2,
            optimistic,
            birthday: 0.0,
        };
        let mut low = result(Verdict::Holds, Verdict::Holds);
        low.collision = Some(estimate(1e-9));
        let text = check_text(&[low.clone()], false, Duration::ZERO, true);
        assert!(
            text.contains("1 exhaustive search over 64-bit fingerprints: the chance that a collision hid a state is at most 1.0e-9"),
            "{text}"
        );
        assert!(!text.contains("rerun"), "{text}");
        low.collision = Some(estimate(2e-5));
        let text = check_text(&[low], false, Duration::ZERO, true);
        assert!(
            text.contains("at most 2.0e-5 (olake-bootstrap:pr1084 faults=none); above 1e-6: rerun with --fingerprint-bits 128"),
            "{text}"
        );
    }

    #[test]
    fn a_differing_verdict_is_flagged_in_the_table() {
        let text = check_text(
            &[result(Verdict::Holds, Verdict::Violated)],
            false,
            Duration::ZERO,
            true,
        );
        assert!(text.contains("holds DIFFERS: expected violated"), "{text}");
        assert!(text.contains("1 checks: 0 as expected, 1 differ"), "{text}");
    }
}
