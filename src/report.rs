//! Reports: the `walcheck.check/1` and `walcheck.list/1` JSON, and the terminal's verdict table
//! and step tables.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use walcheck_properties::system::{BoundValue, Kind};
use walcheck_traces::render::{self, Cells};
use walcheck_traces::Trace;

use crate::catalogue::{self, systems, Entry, SystemConfig};
use crate::run::{self, CheckResult};
use crate::search::Verdict;
use walcheck_engine::compact::CollisionEstimate;

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
    let rows: Vec<Value> = results.iter().map(result_json).collect();
    json!({ "schema": "walcheck.check/1", "results": rows })
}

/// One result of `walcheck check --json`: what was checked, the verdict and the search's
/// measurements, then [`trace_fields`].
fn result_json(r: &CheckResult) -> Value {
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
    trace_fields(&mut row, r);
    Value::Object(row)
}

/// A result's trace, how its search ended, and what a reader needs beside a counterexample.
fn trace_fields(row: &mut Map<String, Value>, r: &CheckResult) {
    let e = &r.entry;
    let written = r.trace_path.as_ref().and(r.trace.as_ref());
    row.insert(
        "trace".into(),
        json!(r.trace_path.as_ref().map(|p| p.display().to_string())),
    );
    row.insert(
        "trace_steps".into(),
        json!(written.map(|t| t.len_actions())),
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
            json!(written.and_then(|t| t.loop_index())),
        );
    }
    // The whole configuration, defaults included; what the property means; the variables
    // and terms the trace's step table shows.
    row.insert("configuration".into(), json!(configuration_text(&e.config)));
    row.insert("property_doc".into(), json!(e.property.doc));
    row.insert(
        "legend".into(),
        r.trace
            .as_ref()
            .map_or(Value::Null, |t| legend_json(t, &e.config)),
    );
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
    if side_by_side(&systems) {
        let all: Vec<&CheckResult> = results.iter().collect();
        out.push_str(&table(&verdict_rows(None, &all)));
        out.push('\n');
    } else {
        for system in systems {
            let of_system: Vec<&CheckResult> = results
                .iter()
                .filter(|r| r.entry.system() == system)
                .collect();
            out.push_str(&table(&verdict_rows(Some(system), &of_system)));
            out.push('\n');
        }
    }
    if tables {
        out.push_str(&step_tables(results));
    } else {
        out.push_str(&written_line(results));
    }
    out.push_str(&stopped_text(results));
    out.push_str(&summary_line(results, strict, wall));
    out.push_str(&collision_text(results));
    out
}

/// Several connector files are read against each other: one matrix, a row per file and
/// configuration, a column per property any of them checks (`-` where a file has no such
/// property), so that a proposed design is read beside today's.
fn side_by_side(systems: &[&str]) -> bool {
    systems.len() > 1
        && systems
            .iter()
            .all(|s| crate::connector::source_of(s).is_some())
}

/// A verdict table: a header row, then a row per configuration. With `Some(system)`, one
/// system's, its name heading the variant column; with `None`, the rows of several systems
/// (connector files), each row named by its system.
fn verdict_rows(system: Option<&str>, of_system: &[&CheckResult]) -> Vec<Vec<String>> {
    let mut columns: Vec<&str> = of_system
        .iter()
        .filter(|r| r.entry.property.kind != Kind::Sometimes)
        .map(|r| r.entry.property.id)
        .collect();
    columns.sort_by_key(|id| of_system.iter().position(|r| r.entry.property.id == *id));
    columns.dedup();
    let mut header = vec![
        system.unwrap_or("design").to_owned(),
        "faults".into(),
        "bounds".into(),
    ];
    header.extend(columns.iter().map(|s| (*s).to_owned()));
    header.push("witnesses (sometimes)".into());
    let mut rows = vec![header];
    let mut configs: Vec<_> = of_system
        .iter()
        .map(|r| (r.entry.system(), r.entry.config.clone()))
        .collect();
    configs.dedup();
    for (name, config) in configs {
        let of_config: Vec<&CheckResult> = of_system
            .iter()
            .copied()
            .filter(|r| r.entry.system() == name && r.entry.config == config)
            .collect();
        let bounds = config.non_default_bounds().join(",");
        let mut row = vec![
            match system {
                Some(_) => config.variant().to_owned(),
                None => name.to_owned(),
            },
            config.faults().to_owned(),
            if bounds.is_empty() {
                "-".into()
            } else {
                bounds
            },
        ];
        for id in &columns {
            row.push(
                of_config
                    .iter()
                    .find(|r| r.entry.property.id == *id)
                    .map_or("-".into(), |r| cell(r)),
            );
        }
        row.push(witnesses_cell(&of_config));
        rows.push(row);
    }
    rows
}

/// A configuration's witnesses in one cell: how many were reached, then each one that was not
/// or that differs from its expectation.
fn witnesses_cell(of_config: &[&CheckResult]) -> String {
    let witnesses: Vec<&&CheckResult> = of_config
        .iter()
        .filter(|r| r.entry.property.kind == Kind::Sometimes)
        .collect();
    if witnesses.is_empty() {
        return "-".to_owned();
    }
    let reached = witnesses
        .iter()
        .filter(|r| r.verdict == Verdict::Holds)
        .count();
    let mut text = format!("{reached} of {} reached", witnesses.len());
    for r in witnesses
        .iter()
        .filter(|r| r.verdict != Verdict::Holds || !r.matches_expectation())
    {
        let _ = write!(text, "; {} {}", r.entry.property.id, cell(r));
    }
    text
}

/// Where the counterexamples went, for a run that does not print their step tables.
fn written_line(results: &[CheckResult]) -> String {
    let written: Vec<&CheckResult> = results
        .iter()
        .filter(|r| r.is_counterexample() && r.trace_path.is_some())
        .collect();
    let Some(dir) = written
        .first()
        .and_then(|r| r.trace_path.as_ref())
        .and_then(|p| p.parent())
    else {
        return String::new();
    };
    let count = match written.len() {
        1 => "1 counterexample".to_owned(),
        n => format!("{n} counterexamples"),
    };
    // Connector files print their step tables when named one by one.
    let spec = if written
        .iter()
        .all(|r| crate::connector::source_of(r.entry.system()).is_some())
    {
        "FILE.wal"
    } else {
        "SYSTEM:VARIANT"
    };
    format!(
        "{count} written under {} (`{program} show FILE` renders one; `{program} check {spec}` prints their step tables)\n\n",
        dir.display(),
        program = crate::program::name(),
    )
}

/// The step table of each distinct counterexample, in result order: one whose action sequence
/// an earlier one of the same system, variant and property shows is left out, and the first
/// names the configurations that share it.
fn step_tables(results: &[CheckResult]) -> String {
    let mut out = String::new();
    let mut shown: Vec<(String, Vec<String>)> = Vec::new();
    for r in results.iter().filter(|r| r.is_counterexample()) {
        let trace = r.trace.as_ref().expect("counterexamples have traces");
        let e = &r.entry;
        let actions = trace_actions(trace);
        let key = format!("{}:{}:{}", e.system(), e.config.variant(), e.property.id);
        if shown.iter().any(|(k, a)| *k == key && *a == actions) {
            continue;
        }
        let same = same_counterexample(results, r, &actions);
        let also = if same.is_empty() {
            String::new()
        } else {
            format!(" (the same with faults {})", same.join("; "))
        };
        let how = match trace.loop_text() {
            Some(text) => format!("by a lasso of {} ({text})", steps(trace.len_actions())),
            None => format!("in {}", steps(trace.len_actions())),
        };
        let _ = writeln!(
            out,
            "{}:{} faults={}{}: {} violated {how}{also}\n  trace: {}",
            e.system(),
            e.config.variant(),
            e.config.faults(),
            bounds_suffix(&e.config),
            e.property.id,
            r.trace_path
                .as_ref()
                .map_or("not written".into(), |p| p.display().to_string()),
        );
        out.push_str(&explained_table(trace, &e.config, Cells::All));
        out.push('\n');
        shown.push((key, actions));
    }
    out
}

/// A trace's actions in order.
fn trace_actions(trace: &walcheck_traces::Trace) -> Vec<String> {
    trace
        .steps
        .iter()
        .filter_map(|s| s.action.clone())
        .collect()
}

/// A configuration's non-default bounds after a space, or nothing.
fn bounds_suffix(config: &SystemConfig) -> String {
    let bounds = config.non_default_bounds();
    if bounds.is_empty() {
        String::new()
    } else {
        format!(" {}", bounds.join(","))
    }
}

/// The other configurations of `r`'s system and variant (as `faults[ bounds]`) where
/// `r`'s property has a counterexample of the same `actions`.
fn same_counterexample(
    results: &[CheckResult],
    r: &CheckResult,
    actions: &[String],
) -> Vec<String> {
    let e = &r.entry;
    results
        .iter()
        .filter(|o| {
            o.is_counterexample()
                && o.entry.system() == e.system()
                && o.entry.config.variant() == e.config.variant()
        })
        .filter(|o| o.entry.property.id == e.property.id && o.entry.config != e.config)
        .filter(|o| {
            o.trace
                .as_ref()
                .is_some_and(|t| trace_actions(t) == actions)
        })
        .map(|o| {
            format!(
                "{}{}",
                o.entry.config.faults(),
                bounds_suffix(&o.entry.config)
            )
        })
        .collect()
}

/// The run's summary, worded for a reader who has not read the README: what was expected and
/// what was found. For the systems with an expectation table: all as expected, or how many
/// differ, and what the checks as expected found (counterexamples in the designs known to be
/// broken, witnesses unreachable where expected, properties proved, witnesses reached); for the
/// systems checked plainly, how many pass and fail and why; then the inconclusive, the states
/// stored and the wall time.
fn summary_line(results: &[CheckResult], strict: bool, wall: std::time::Duration) -> String {
    let violated = results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .count();
    // Per configuration (the compact engine's search), the most any of its checks stored: its
    // search's states, whatever the engine.
    let mut searches: Vec<(SystemConfig, u64)> = Vec::new();
    for r in results {
        let key = run::search_key(&r.entry);
        match searches.iter_mut().find(|(k, _)| *k == key) {
            Some((_, most)) => *most = (*most).max(r.unique_states),
            None => searches.push((key, r.unique_states)),
        }
    }
    let unique: u64 = searches.iter().map(|(_, most)| most).sum();
    let expecting: Vec<&CheckResult> = results
        .iter()
        .filter(|r| !checked_plainly(&r.entry))
        .collect();
    let plain: Vec<&CheckResult> = results
        .iter()
        .filter(|r| checked_plainly(&r.entry))
        .collect();
    let mut parts = Vec::new();
    if !expecting.is_empty() {
        parts.push(expected_part(&expecting, !plain.is_empty()));
    }
    if !plain.is_empty() {
        let which = if expecting.is_empty() {
            String::new()
        } else {
            format!(" ({})", plain_systems(results).join(", "))
        };
        let part = plain_part(&plain, &which);
        parts.push(if expecting.is_empty() {
            part
        } else {
            format!("{} {part}", plain.len())
        });
    }
    parts.extend(inconclusive_part(results));
    let strict = match (strict, violated) {
        (false, _) => String::new(),
        (true, 0) => "; --strict: nothing is violated".to_owned(),
        (true, n) => format!(
            "; --strict fails the run on the {}",
            plural(n, "violation", "violations")
        ),
    };
    if parts.is_empty() {
        // An empty selection: a shard of more shards than checks.
        parts.push("nothing selected".to_owned());
    }
    let all_as_expected = parts.len() == 1 && parts[0].starts_with("all as expected");
    format!(
        "{}{}{}{strict}; {} explored ({}) in {:.2} s\n",
        plural(results.len(), "check", "checks"),
        if all_as_expected { ", " } else { ": " },
        parts.join("; "),
        plural(searches.len(), "configuration", "configurations"),
        plural(unique as usize, "distinct state", "distinct states"),
        wall.as_secs_f64(),
    )
}

/// The summary's part on the inconclusive checks, when there are some: how many, and what
/// stopped them first (the lines above say which budget, or the interrupt).
fn inconclusive_part(results: &[CheckResult]) -> Option<String> {
    let inconclusive = results
        .iter()
        .filter(|r| r.verdict == Verdict::Inconclusive)
        .count();
    let interrupted = results.iter().any(|r| r.limit == Some(run::INTERRUPTED));
    let first = match interrupted {
        true => "the run was interrupted first",
        false => "a budget ran out first",
    };
    (inconclusive > 0).then(|| format!("{inconclusive} inconclusive ({first}, as said above)"))
}

/// `N thing` or `N things`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the checks `rs` found, one phrase per kind of finding that occurs: counterexamples
/// (`violated` says where), witnesses not reached (`unreached` says how), properties proved,
/// witnesses reached.
fn findings(rs: &[&CheckResult], violated: &str, unreached: &str) -> Vec<String> {
    let count = |keep: &dyn Fn(&CheckResult) -> bool| rs.iter().filter(|r| keep(r)).count();
    let witness = |r: &CheckResult| r.entry.property.kind == Kind::Sometimes;
    let counterexamples = count(&|r| r.verdict == Verdict::Violated && !witness(r));
    let unreachable = count(&|r| r.verdict == Verdict::Violated && witness(r));
    let proved = count(&|r| r.verdict == Verdict::Holds && !witness(r));
    let reached = count(&|r| r.verdict == Verdict::Holds && witness(r));
    let phrases = [
        (
            counterexamples,
            "counterexample",
            "counterexamples",
            violated,
        ),
        (unreachable, "witness", "witnesses", unreached),
        (proved, "property", "properties", "proved"),
        (reached, "witness", "witnesses", "reached"),
    ];
    phrases
        .iter()
        .filter(|(n, ..)| *n > 0)
        .map(|(n, one, many, what)| format!("{} {what}", plural(*n, one, many)))
        .collect()
}

/// The summary's part for the checks of systems with an expectation table: all as expected
/// and what they found, or how many are as expected and how many differ.
fn expected_part(rs: &[&CheckResult], mixed: bool) -> String {
    let decided: Vec<&CheckResult> = rs
        .iter()
        .copied()
        .filter(|r| r.verdict != Verdict::Inconclusive)
        .collect();
    let (as_expected, differ): (Vec<&CheckResult>, Vec<&CheckResult>) =
        decided.iter().partition(|r| r.matches_expectation());
    let found = findings(
        &as_expected,
        "found in the designs known to be broken",
        "unreachable where expected",
    )
    .join(", ");
    // Whose expectations: the catalogue's tables, the files' own `expect` lines, or both.
    let from_files = rs
        .iter()
        .filter(|r| crate::connector::source_of(r.entry.system()).is_some())
        .count();
    let whose = match from_files {
        0 => "the catalogue's expectations",
        n if n == rs.len() => "the files' expect lines",
        _ => "the catalogue's expectations and the files' expect lines",
    };
    let against = if mixed {
        format!("{} against {whose}, ", rs.len())
    } else {
        String::new()
    };
    if differ.is_empty() && decided.len() == rs.len() {
        return format!("{against}all as expected: {found}");
    }
    let found = if found.is_empty() {
        String::new()
    } else {
        format!(" ({found})")
    };
    let differ = match differ.len() {
        0 => "0 differ".to_owned(),
        1 => "1 differs from what is expected (DIFFERS above)".to_owned(),
        n => format!("{n} differ from what is expected (DIFFERS above)"),
    };
    format!(
        "{against}{} as expected{found}, {differ}",
        as_expected.len()
    )
}

/// The summary's part for the checks of systems checked plainly (every `always` and
/// `eventually` property should hold and every witness be reached): how many pass and fail, and
/// why.
fn plain_part(rs: &[&CheckResult], which: &str) -> String {
    let decided: Vec<&CheckResult> = rs
        .iter()
        .copied()
        .filter(|r| r.verdict != Verdict::Inconclusive)
        .collect();
    let (pass, fail): (Vec<&CheckResult>, Vec<&CheckResult>) =
        decided.iter().partition(|r| r.verdict == Verdict::Holds);
    let why = |rs: &[&CheckResult]| {
        let found = findings(rs, "found", "not reached").join(", ");
        if found.is_empty() {
            String::new()
        } else {
            format!(" ({found})")
        }
    };
    format!(
        "checked plainly{which}, with no expectation table (every property should hold, every witness be reached): {} pass{}, {} fail{}",
        pass.len(),
        why(&pass),
        fail.len(),
        why(&fail),
    )
}

/// The systems of `results` checked plainly, in order.
fn plain_systems(results: &[CheckResult]) -> Vec<&'static str> {
    let mut systems: Vec<&'static str> = Vec::new();
    for r in results.iter().filter(|r| checked_plainly(&r.entry)) {
        if !systems.contains(&r.entry.system()) {
            systems.push(r.entry.system());
        }
    }
    systems
}

/// Whether `entry`'s system keeps no expectation table: checked plainly, every `always` and
/// `eventually` property should hold and every witness be reached, so its verdict is the whole
/// outcome and there is no expectation for it to differ from.
pub fn checked_plainly(entry: &Entry) -> bool {
    catalogue::system(entry.system()).is_ok_and(|system| {
        system
            .expected(&entry.config.config, entry.property)
            .is_none()
    })
}

/// `1 step`, `N steps`: a count of steps as the text reads it.
pub(crate) fn steps(n: usize) -> String {
    if n == 1 {
        "1 step".to_owned()
    } else {
        format!("{n} steps")
    }
}

/// A verdict as a table cell: `holds`, `violated (N steps)`, `reached`, `not reached`, with what
/// was expected when it differs.
fn cell(r: &CheckResult) -> String {
    let mut cell = match (&r.trace, r.verdict) {
        (Some(t), Verdict::Violated) => match t.loop_index() {
            Some(k) if k == t.len_actions() => format!("violated ({}, then stutters)", steps(k)),
            Some(k) => format!(
                "violated ({}, then a {}-step cycle)",
                steps(k),
                t.len_actions() - k
            ),
            None => format!("violated ({})", steps(t.len_actions())),
        },
        _ => verdict_word(r.entry.property.kind, r.verdict).to_owned(),
    };
    if !checked_plainly(&r.entry) && !r.matches_expectation() {
        let expected = verdict_word(r.entry.property.kind, r.entry.expected);
        cell.push_str(&format!(" DIFFERS: expected {expected}"));
    }
    cell
}

/// A verdict as a cell says it: a witness (`sometimes`) is `reached` or `not reached`, other
/// properties `holds` or `violated`; `inconclusive` either way.
fn verdict_word(kind: Kind, verdict: Verdict) -> &'static str {
    match (kind, verdict) {
        (Kind::Sometimes, Verdict::Holds) => "reached",
        (Kind::Sometimes, Verdict::Violated) => "not reached",
        _ => verdict.name(),
    }
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
    if results
        .iter()
        .any(|r| r.limit == Some(crate::run::MODEL_PANICKED))
    {
        return 2;
    }
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

/// A counterexample's step table as it reads on its own: above it, what the property means and
/// the whole configuration (every bound and knob, defaults included); below it, a legend of the
/// variables the table shows, each with its kind and doc from the system's declaration.
pub fn explained_table(trace: &Trace, config: &SystemConfig, cells: Cells) -> String {
    let view = &config.info().view;
    let mut out = String::new();
    if let Some(doc) = property_doc(trace, config) {
        let _ = writeln!(out, "  {}: {doc}", trace.header.property);
    }
    let _ = writeln!(out, "  configuration: {}", configuration_text(config));
    let table = render::step_table(trace, view.key_variables, view.counters, cells);
    let mut rows = legend_rows(trace, config);
    if table.contains('*') {
        rows.push(("*", "", "after a value: it changed at this step"));
    }
    let list = if crate::connector::source_of(config.info().name).is_some() {
        "each knob of the configuration: the file's `env` lines and `--bound` set them; docs/language.md (Environment) says what each is".to_owned()
    } else {
        format!(
            "each bound of the configuration: `{} list` says what it is, its unit and range",
            crate::program::name()
        )
    };
    rows.push(("configuration", "", &list));
    out.push_str(&table);
    out.push_str(&legend(&rows));
    out
}

/// The same explanation for a diagram (`show --format mermaid|svg`): the property's meaning and
/// the configuration before the steps, the legend after them, a line each.
pub fn explanation(trace: &Trace, config: &SystemConfig) -> render::Explanation {
    let mut before = Vec::new();
    if let Some(doc) = property_doc(trace, config) {
        before.push(format!("{}: {doc}", trace.header.property));
    }
    before.push(format!("configuration: {}", configuration_text(config)));
    let rows = legend_rows(trace, config);
    let after = if rows.is_empty() {
        Vec::new()
    } else {
        std::iter::once("where:".to_owned())
            .chain(rows.iter().map(|(name, kind, doc)| {
                if kind.is_empty() {
                    format!("{name}: {doc}")
                } else {
                    format!("{name} ({kind}): {doc}")
                }
            }))
            .collect()
    };
    render::Explanation { before, after }
}

/// The one-line meaning of the property `trace` shows, from its system's declaration.
pub fn property_doc(trace: &Trace, config: &SystemConfig) -> Option<&'static str> {
    config
        .info()
        .property(&trace.header.property)
        .map(|p| p.doc)
}

/// The legend of `trace`'s step table as `(name, kind, doc)`: one row per variable the table
/// shows that the system declares, then one per term the trace uses (with no kind).
pub fn legend_rows(
    trace: &Trace,
    config: &SystemConfig,
) -> Vec<(&'static str, &'static str, &'static str)> {
    let view = &config.info().view;
    let shown = render::columns(trace, view.key_variables, view.counters);
    let mut rows: Vec<(&str, &str, &str)> = shown
        .iter()
        .filter_map(|name| view.variables.iter().find(|v| v.name == *name))
        .map(|v| (v.name, v.kind, v.doc))
        .collect();
    rows.extend(
        used_terms(trace, view.terms)
            .into_iter()
            .map(|(term, doc)| (term, "", doc)),
    );
    rows
}

/// The legend as JSON: `[{"name", "kind", "doc"}]`, `kind` null for a term.
fn legend_json(trace: &Trace, config: &SystemConfig) -> Value {
    legend_rows(trace, config)
        .into_iter()
        .map(|(name, kind, doc)| {
            json!({
                "name": name,
                "kind": if kind.is_empty() { Value::Null } else { json!(kind) },
                "doc": doc,
            })
        })
        .collect()
}

/// The `terms` that appear in `trace`'s actions or values, in declaration order.
fn used_terms(
    trace: &Trace,
    terms: &'static [(&'static str, &'static str)],
) -> Vec<(&'static str, &'static str)> {
    let appears = |term: &str| {
        trace.steps.iter().any(|step| {
            step.action.as_deref().is_some_and(|a| a.contains(term))
                || step.vars.iter().any(|(_, v)| v.to_string().contains(term))
        })
    };
    terms
        .iter()
        .copied()
        .filter(|(term, _)| appears(term))
        .collect()
}

/// Every bound and knob of `config` as `name=value`, defaults included (but an unlisted knob's); `none` for a system
/// with no bounds.
pub fn configuration_text(config: &SystemConfig) -> String {
    let values: Vec<String> = config
        .config
        .listed(config.info())
        .into_iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if values.is_empty() {
        "no bounds".to_owned()
    } else {
        values.join(" ")
    }
}

/// The legend under a step table: one line per row of [`legend_rows`], as `name  kind  doc`
/// (a term has no kind), under `where:`; nothing when there are none.
pub fn legend(rows: &[(&str, &str, &str)]) -> String {
    let name_width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let kind_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = "where:\n".to_owned();
    for (name, kind, doc) in rows {
        let line = format!("  {name:<name_width$}  {kind:<kind_width$}  {doc}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// One line per search that ended without deciding some of its checks: which budget ran out
/// (or why its result could not be trusted), and the checks it left inconclusive.
fn stopped_text(results: &[CheckResult]) -> String {
    let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
    for r in results {
        let line = match (&r.error, r.limit) {
            (Some(error), Some(crate::run::MODEL_PANICKED)) => format!(
                "error: {}: {error}; its checks are inconclusive (a bug in the system's own code)",
                r.entry.config
            ),
            (Some(error), _) => format!(
                "error: {}: {error}; its checks are inconclusive ({})",
                r.entry.config,
                match r.entry.property.kind {
                    Kind::Eventually =>
                        "the liveness checker's fingerprints are fixed at 64 bits: report it",
                    _ => "rerun with --fingerprint-bits 128",
                }
            ),
            (None, Some(limit)) => format!(
                "inconclusive: {}: {} first",
                r.entry.config,
                stopped_by(limit)
            ),
            (None, None) => continue,
        };
        match lines.iter_mut().find(|(l, _)| *l == line) {
            Some((_, checks)) => checks.push(r.entry.property.id),
            None => lines.push((line, vec![r.entry.property.id])),
        }
    }
    let mut out = String::new();
    for (line, checks) in lines {
        let _ = writeln!(
            out,
            "{line}: {} stopped: {}",
            plural(checks.len(), "check", "checks"),
            checks.join(", ")
        );
    }
    out
}

/// What stopped a search, as a reader says it: `the time budget (--timeout) ran out`
/// ([`budget_text`]), or `the run was interrupted (SIGINT or SIGTERM)`; `limit` is
/// [`CheckResult::limit`].
pub fn stopped_by(limit: &str) -> String {
    match limit {
        crate::run::INTERRUPTED => "the run was interrupted (SIGINT or SIGTERM)".to_owned(),
        budget => format!("{} ran out", budget_text(budget)),
    }
}

/// A budget as a reader names it, with the flag that sets it: `the state budget
/// (--max-states)`, `the time budget (--timeout)`, `the memory budget (--max-memory)`, or the
/// search's own limit of 32-bit state indices; `limit` is [`CheckResult::limit`].
pub fn budget_text(limit: &str) -> String {
    match limit {
        "max-states" => "the state budget (--max-states)".to_owned(),
        "timeout" => "the time budget (--timeout)".to_owned(),
        "max-memory" => "the memory budget (--max-memory)".to_owned(),
        "state-indices" => "the state budget of 32-bit state indices".to_owned(),
        flag => format!("--{flag}"),
    }
}

/// After exhaustive proofs over fingerprints: how many, and the largest estimated chance that a
/// collision hid a state, with advice above [`crate::run::COLLISION_ADVICE_ABOVE`].
fn collision_text(results: &[CheckResult]) -> String {
    // A search is keyed by its configuration with fairness declared ([`crate::run::search_key`]),
    // and named by the configuration of its first row, as the run selected it.
    let mut searches: Vec<(SystemConfig, &SystemConfig, CollisionEstimate)> = Vec::new();
    for r in results {
        if let Some(c) = r.collision {
            let key = crate::run::search_key(&r.entry);
            if !searches.iter().any(|(k, _, _)| *k == key) {
                searches.push((key, &r.entry.config, c));
            }
        }
    }
    let Some((_, config, worst)) = searches.iter().reduce(|a, b| {
        if b.2.optimistic > a.2.optimistic {
            b
        } else {
            a
        }
    }) else {
        return String::new();
    };
    let mut out = format!(
        "{} exhaustive search{} over {}-bit fingerprints: the chance that a collision hid a state is at most {} ({})",
        searches.len(),
        if searches.len() == 1 { "" } else { "es" },
        worst.fingerprint_bits,
        // A search of one state cannot collide: 0, not `0.0e0`.
        match worst.optimistic {
            0.0 => "0".to_owned(),
            p => format!("{p:.1e}"),
        },
        config,
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
            trace_error: None,
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
    fn an_eventually_row_s_search_is_its_configuration_s_counted_once() {
        let estimate = CollisionEstimate {
            fingerprint_bits: 64,
            lookups: 3,
            distinct: 2,
            optimistic: 1e-9,
            birthday: 0.0,
        };
        // One configuration's rows: its always and sometimes checks, and its eventually check
        // under fairness=declared and fairness=none, all decided by one search.
        let entries = catalogue::select(&Selection {
            specs: vec!["olake-bootstrap:pr1084".into()],
            faults: Some("none".into()),
            bounds: vec!["server=primary".into()],
        })
        .unwrap();
        let kinds: Vec<&str> = entries.iter().map(|e| e.property.kind.name()).collect();
        assert!(
            kinds.contains(&"always") && kinds.iter().filter(|k| **k == "eventually").count() == 2
        );
        let results: Vec<CheckResult> = entries
            .into_iter()
            .map(|entry| CheckResult {
                entry,
                collision: Some(estimate),
                ..result(Verdict::Holds, Verdict::Holds)
            })
            .collect();
        let text = check_text(&results, false, Duration::ZERO, true);
        assert!(
            text.contains("\n1 exhaustive search over 64-bit fingerprints"),
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
        assert!(
            text.contains(
                "1 check: 0 as expected, 1 differs from what is expected (DIFFERS above);"
            ),
            "{text}"
        );
    }
}
