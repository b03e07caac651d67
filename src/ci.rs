//! What CI reads from a catalogue run: the JUnit XML file, the JSON reports of a sharded run
//! joined back into one, and the process's peak memory.

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use serde_json::{json, Map, Value};

use crate::report;
use crate::run::CheckResult;
use crate::search::Verdict;
use walcheck_properties::system::Kind;

/// The process's peak resident set size in bytes (Linux's `VmHWM`), or `None` where the system
/// does not say.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The most shards `--shard I/N` and `merge` take.
pub const MAX_SHARDS: usize = 1000;

/// `walcheck check --json`: the `walcheck.check/1` object of [`report::check_json`] with the
/// peak RSS, and for a sharded run which shard it is (`{"index": I, "count": N, "selection",
/// "strict", "entries", "selection_entries"}`).
pub fn check_report(
    results: &[CheckResult],
    shard: Option<&Shard>,
    peak_rss_bytes: Option<u64>,
) -> Value {
    let mut report = report::check_json(results);
    let object = report.as_object_mut().expect("a check report is an object");
    object.insert("peak_rss_bytes".into(), json!(peak_rss_bytes));
    if let Some(shard) = shard {
        object.insert(
            "shard".into(),
            json!({
                "index": shard.index,
                "count": shard.count,
                "selection": shard.selection,
                "strict": shard.strict,
                "entries": shard.entries,
                "selection_entries": shard.selection_entries,
            }),
        );
    }
    report
}

/// Which shard of which run a `walcheck check --shard I/N --json` report is: `merge` joins only
/// the N shards of one selection, and fails the merged run as that run's `--strict` would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// I, from 1.
    pub index: usize,
    /// N.
    pub count: usize,
    /// The run's selection and budget in one canonical line ([`selection_line`]).
    pub selection: String,
    /// Whether the run had `--strict`.
    pub strict: bool,
    /// How many entries this shard holds: `merge` refuses a report with more or fewer rows.
    pub entries: usize,
    /// How many entries the whole selection holds, over all N shards.
    pub selection_entries: usize,
}

/// How many of a selection's `total` entries shard `index`/`count` holds: those at positions
/// `index - 1`, `index - 1 + count`, ... (`run::shard`).
pub fn shard_len(total: usize, index: usize, count: usize) -> usize {
    total.saturating_sub(index - 1).div_ceil(count)
}

/// The selection and budget of a `check` in one canonical line, e.g. `olake-bootstrap:master
/// --faults all --bound statements=3 --max-states 1000`: the SPECs in the order given (`all`
/// for none), then `--faults`, the `--bound`s sorted, `--max-states` and `--timeout` (seconds).
///
/// `engine` holds the engine's flags where they are not the defaults (`--engine reference`,
/// `--fingerprint-bits 128`, `--max-memory N`): they can change a verdict (a budget) or a
/// report's figures, so shards run with different ones are not one run.
pub fn selection_line(
    specs: &[String],
    faults: Option<&str>,
    bounds: &[String],
    max_states: Option<u64>,
    timeout_s: Option<f64>,
    engine: &[String],
) -> String {
    let mut words: Vec<String> = if specs.is_empty() {
        vec!["all".to_owned()]
    } else {
        specs.to_vec()
    };
    if let Some(faults) = faults {
        words.push(format!("--faults {faults}"));
    }
    let mut bounds = bounds.to_vec();
    bounds.sort();
    words.extend(bounds.iter().map(|b| format!("--bound {b}")));
    if let Some(n) = max_states {
        words.push(format!("--max-states {n}"));
    }
    if let Some(s) = timeout_s {
        words.push(format!("--timeout {s}"));
    }
    words.extend(engine.iter().cloned());
    words.join(" ")
}

/// Whether the shards in `reports` came from a `--strict` run (the first report's word).
pub fn shards_strict(reports: &[(String, Value)]) -> bool {
    reports
        .first()
        .and_then(|(_, r)| r["shard"]["strict"].as_bool())
        .unwrap_or(false)
}

/// `walcheck merge`: the reports of shards 1/N to N/N of one selection (in any order) joined into
/// the report the unsharded run prints: rows back in catalogue order, the largest peak RSS, no
/// shard. A one-line error when the reports are not exactly one run's N shards.
///
/// The reports of a sharded swarm (`walcheck simulate --seeds A..B --shard I/N --json`,
/// `walcheck.swarm/1`) join the same way: seeds back in order, the summary recomputed over all
/// of them, the longest `elapsed_ms`.
pub fn merge(reports: &[(String, Value)]) -> Result<Value, String> {
    let schema = reports
        .first()
        .and_then(|(_, r)| r.get("schema"))
        .and_then(Value::as_str)
        .filter(|s| *s == "walcheck.check/1" || *s == "walcheck.swarm/1")
        .unwrap_or("walcheck.check/1");
    let mut shards: Vec<Option<&Vec<Value>>> = Vec::new();
    let mut peak: Option<u64> = None;
    let mut elapsed_ms: u64 = 0;
    for (name, report) in reports {
        let part = shard_part(name, report, schema, &reports[0].1)?;
        let (index, count) = (part.index, part.count);
        if shards.is_empty() {
            shards = vec![None; count];
        } else if shards.len() != count {
            return Err(format!(
                "{name}: shard {index}/{count} is from a run of {count} shards, the first report's of {}",
                shards.len()
            ));
        }
        if shards[index - 1].replace(part.rows).is_some() {
            return Err(format!("{name}: shard {index}/{count} is given twice"));
        }
        if let Some(rss) = report.get("peak_rss_bytes").and_then(Value::as_u64) {
            peak = Some(peak.map_or(rss, |p| p.max(rss)));
        }
        elapsed_ms = elapsed_ms.max(part.elapsed_ms);
    }
    let rows = interleave(shards)?;
    if schema == "walcheck.swarm/1" {
        let mut merged = reports[0].1.as_object().expect("checked above").clone();
        merged.remove("shard");
        merged.insert("summary".into(), swarm_summary(&rows));
        merged.insert("results".into(), Value::Array(rows));
        merged.insert("elapsed_ms".into(), json!(elapsed_ms));
        return Ok(Value::Object(merged));
    }
    let mut merged = Map::new();
    merged.insert("schema".into(), json!("walcheck.check/1"));
    merged.insert("results".into(), Value::Array(rows));
    merged.insert("peak_rss_bytes".into(), json!(peak));
    Ok(Value::Object(merged))
}

/// What one shard's report brings to [`merge`].
struct ShardPart<'a> {
    /// I of I/N, from 1.
    index: usize,
    /// N.
    count: usize,
    rows: &'a Vec<Value>,
    /// A swarm shard's `elapsed_ms` (0 for a check report).
    elapsed_ms: u64,
}

/// The shard report `name` read against the `first` report's run, or a one-line error saying
/// why it is not one of that run's shards.
fn shard_part<'a>(
    name: &str,
    report: &'a Value,
    schema: &str,
    first: &Value,
) -> Result<ShardPart<'a>, String> {
    let object = report
        .as_object()
        .filter(|o| o.get("schema") == Some(&json!(schema)))
        .ok_or_else(|| format!("{name}: not a {schema} report"))?;
    let mut elapsed_ms = 0;
    if schema == "walcheck.swarm/1" {
        same_swarm(name, object, first)?;
        elapsed_ms = object
            .get("elapsed_ms")
            .and_then(Value::as_u64)
            .unwrap_or(0);
    }
    let rows = object
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name}: the report has no results array"))?;
    let shard = object.get("shard").ok_or_else(|| {
        format!(
            "{name}: not a sharded report (run {} check --shard I/N --json)",
            crate::program::name()
        )
    })?;
    let field = |key: &str| {
        shard
            .get(key)
            .and_then(Value::as_u64)
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("{name}: its shard has no whole {key} from 1"))
    };
    let (index, count) = (field("index")? as usize, field("count")? as usize);
    if index > count {
        return Err(format!("{name}: shard {index}/{count} does not exist"));
    }
    if count > MAX_SHARDS {
        return Err(format!(
            "{name}: shard count {count} is above {MAX_SHARDS}, the most --shard takes"
        ));
    }
    if schema == "walcheck.check/1" {
        for key in ["selection", "strict", "selection_entries"] {
            let (own, theirs) = (&shard[key], &first["shard"][key]);
            if own != theirs {
                return Err(format!(
                    "{name}: its shard {key} {own} differs from the first report's {theirs}: not the same run"
                ));
            }
        }
        check_rows_held(name, shard, (index, count), rows)?;
        for (k, row) in rows.iter().enumerate() {
            check_row(row).map_err(|what| format!("{name}: results[{k}] {what}"))?;
        }
    } else {
        swarm_rows_held(name, object, (index, count), rows)?;
    }
    Ok(ShardPart {
        index,
        count,
        rows,
        elapsed_ms,
    })
}

/// Whether check shard `name` (its `shard` object) holds the rows its shard `index`/`count` of
/// the selection's entries should: as many as its `entries`, which the selection's count fixes.
/// Rows are joined by position, so one row removed or added would misplace every later one.
fn check_rows_held(
    name: &str,
    shard: &Value,
    (index, count): (usize, usize),
    rows: &[Value],
) -> Result<(), String> {
    let number = |key: &str| {
        shard.get(key).and_then(Value::as_u64).ok_or_else(|| {
            format!(
                "{name}: its shard has no whole {key} count (rerun {} check --shard {index}/{count} --json)",
                crate::program::name()
            )
        })
    };
    let (entries, total) = (number("entries")?, number("selection_entries")?);
    let due = shard_len(total as usize, index, count);
    if entries != due as u64 {
        return Err(format!(
            "{name}: its shard says it holds {entries} entries, but shard {index}/{count} of {total} entries holds {due}: the report is edited"
        ));
    }
    if rows.len() != due {
        return Err(format!(
            "{name}: shard {index}/{count} has {} results, not the {due} entries it holds: the report is incomplete or edited",
            rows.len()
        ));
    }
    Ok(())
}

/// The verdicts a row may give, and those it may expect.
const VERDICTS: [&str; 3] = ["holds", "violated", "inconclusive"];

/// Whether `row` is a check report's row as `merge` reads and re-emits it: what was checked
/// named, a verdict and an expectation, non-negative counts; or what is wrong with it.
fn check_row(row: &Value) -> Result<(), String> {
    let object = row.as_object().ok_or("is not an object")?;
    let field = |key: &str| object.get(key).unwrap_or(&Value::Null);
    let one_of = |key: &str, names: &[&str]| match field(key).as_str() {
        Some(v) if names.contains(&v) => Ok(()),
        _ => Err(format!(
            "has {key} {}, not one of {}",
            field(key),
            names.join(", ")
        )),
    };
    for key in ["system", "variant", "faults", "property", "reason"] {
        if !field(key).is_string() {
            return Err(format!("has {key} {}, not a string", field(key)));
        }
    }
    one_of("kind", &["always", "sometimes", "eventually"])?;
    one_of("verdict", &VERDICTS)?;
    one_of("expected", &VERDICTS[..2])?;
    let whole = |key: &str, or_null: bool| {
        let value = field(key);
        if value.as_u64().is_some() || (or_null && value.is_null()) {
            return Ok(());
        }
        let null = if or_null { " or null" } else { "" };
        Err(format!(
            "has {key} {value}, not a whole number from 0{null}"
        ))
    };
    for key in ["states", "unique_states", "max_depth"] {
        whole(key, false)?;
    }
    for key in [
        "states_per_s",
        "peak_heap_bytes",
        "bytes_per_state",
        "trace_steps",
    ] {
        whole(key, true)?;
    }
    if !field("elapsed_ms").as_f64().is_some_and(|ms| ms >= 0.0) {
        return Err(format!(
            "has elapsed_ms {}, not a number from 0",
            field("elapsed_ms")
        ));
    }
    for key in ["trace", "limit", "error"] {
        if !(field(key).is_string() || field(key).is_null()) {
            return Err(format!("has {key} {}, not a string or null", field(key)));
        }
    }
    Ok(())
}

/// Whether swarm shard `name` holds the rows of its shard `index`/`count` of the swarm's seeds
/// `A..B`: one per seed, in order (A+I-1, A+I-1+N, ...).
fn swarm_rows_held(
    name: &str,
    object: &Map<String, Value>,
    (index, count): (usize, usize),
    rows: &[Value],
) -> Result<(), String> {
    let seeds = object.get("seeds").unwrap_or(&Value::Null);
    let (from, to) = match (seeds["from"].as_u64(), seeds["to"].as_u64()) {
        (Some(from), Some(to)) if from <= to => (from, to),
        _ => return Err(format!("{name}: its seeds {seeds} are not a range A..B")),
    };
    let due = shard_len((to - from) as usize, index, count);
    if rows.len() != due {
        return Err(format!(
            "{name}: shard {index}/{count} has {} results, not the {due} of seeds {from}..{to} it runs: the report is incomplete or edited",
            rows.len()
        ));
    }
    for (k, row) in rows.iter().enumerate() {
        let seed = from + (index - 1 + k * count) as u64;
        if row["seed"].as_u64() != Some(seed) {
            return Err(format!(
                "{name}: results[{k}] has seed {}, not {seed}, shard {index}/{count}'s seed there",
                row["seed"]
            ));
        }
    }
    Ok(())
}

/// Whether a swarm shard's report `object` describes the same swarm as the `first` report:
/// every field but its own results, summary, shard and time the same.
fn same_swarm(name: &str, object: &Map<String, Value>, first: &Value) -> Result<(), String> {
    for (key, value) in object {
        let own = matches!(key.as_str(), "results" | "summary" | "shard" | "elapsed_ms");
        if !own && first.get(key) != Some(value) {
            return Err(format!(
                "{name}: its {key} differs from the first report's: not the same swarm"
            ));
        }
    }
    Ok(())
}

/// The rows of shards 1/N to N/N back in the run's order: shard I holds entries I-1, I-1+N,
/// I-1+2N, ... of the selection (`run::shard`). A one-line error when a shard is missing or
/// has too few rows for its place.
fn interleave(shards: Vec<Option<&Vec<Value>>>) -> Result<Vec<Value>, String> {
    if shards.is_empty() {
        return Err("merge needs the reports of a sharded run".into());
    }
    let missing: Vec<String> = (1..=shards.len())
        .filter(|i| shards[i - 1].is_none())
        .map(|i| format!("{i}/{}", shards.len()))
        .collect();
    if !missing.is_empty() {
        return Err(format!("shard {} is missing", missing.join(", ")));
    }
    let shards: Vec<&Vec<Value>> = shards.into_iter().flatten().collect();
    let total: usize = shards.iter().map(|rows| rows.len()).sum();
    let mut rows = Vec::with_capacity(total);
    for k in 0..total {
        let row = shards[k % shards.len()]
            .get(k / shards.len())
            .ok_or_else(|| {
                format!(
                    "shard {}/{} has {} results, too few for its place in a run of {total}",
                    k % shards.len() + 1,
                    shards.len(),
                    shards[k % shards.len()].len()
                )
            })?;
        rows.push(row.clone());
    }
    Ok(rows)
}

/// A swarm's `summary` from its `results` rows in seed order, as `walcheck_sim::swarm` computes
/// it: per variant, the seeds with a mismatch and the worst level (the highest hit share, the
/// earliest seed among equals).
fn swarm_summary(rows: &[Value]) -> Value {
    let variants: Vec<Value> = rows
        .first()
        .and_then(|r| r["variants"].as_array())
        .map(|vs| vs.iter().map(|v| v["variant"].clone()).collect())
        .unwrap_or_default();
    let share = |w: &Value| {
        (
            u128::from(w["lsn_mismatch"].as_u64().unwrap_or(0)),
            u128::from(w["attempts"].as_u64().unwrap_or(0)),
        )
    };
    let summary: Vec<Value> = variants
        .iter()
        .enumerate()
        .map(|(i, variant)| {
            let mut seeds_hit = 0;
            let mut worst: Option<(&Value, &Value)> = None;
            for row in rows {
                let v = &row["variants"][i];
                if v["lsn_mismatch"].as_u64().unwrap_or(0) > 0 {
                    seeds_hit += 1;
                }
                let w = &v["worst"];
                if w.is_null() {
                    continue;
                }
                let better = worst.is_none_or(|(_, best)| {
                    let ((a, b), (c, d)) = (share(w), share(best));
                    a * d > c * b
                });
                if better {
                    worst = Some((&row["seed"], w));
                }
            }
            json!({
                "variant": variant,
                "seeds_with_mismatch": seeds_hit,
                "worst_seed": worst.map(|(seed, _)| seed.clone()),
                "worst": worst.map_or(Value::Null, |(_, w)| w.clone()),
            })
        })
        .collect();
    Value::Array(summary)
}

/// The exit code of a (merged) JSON report, as `walcheck check` would give it without --strict:
/// 1 when a verdict differs from its expectation, else 3 when one is inconclusive, else 0.
pub fn report_exit_code(report: &Value, strict: bool) -> i32 {
    if report["schema"] == "walcheck.swarm/1" {
        // A swarm reports measurements, not verdicts: it completed.
        return 0;
    }
    let rows = report["results"].as_array().map_or(&[][..], Vec::as_slice);
    let verdict = |row: &Value| row["verdict"].as_str().unwrap_or("").to_owned();
    if rows.iter().any(|r| {
        (verdict(r) != "inconclusive" && verdict(r) != r["expected"].as_str().unwrap_or(""))
            || (strict && verdict(r) == "violated")
    }) {
        1
    } else if rows.iter().any(|r| verdict(r) == "inconclusive") {
        3
    } else {
        0
    }
}

/// Whether `r` fails the run: its verdict differs from the expectation or, with `strict`, it is
/// a violation at all (as [`report::exit_code`] decides).
fn fails(r: &CheckResult, strict: bool) -> bool {
    !r.matches_expectation() || (strict && r.verdict == Verdict::Violated)
}

/// The JUnit XML file of `walcheck check --junit`: one `<testsuite>` per system, one
/// `<testcase>` per entry named `variant/faults[/bounds]/property`. A verdict that fails the run
/// is a `<failure>` whose text gives the mismatch and the trace's path; an inconclusive one is
/// `<skipped>` with the states reached; an expected counterexample whose trace could not be
/// written ([`CheckResult::trace_error`]) is an `<error>`, since the run exits 2.
pub fn junit(results: &[CheckResult], strict: bool) -> String {
    let mut systems: Vec<&'static str> = Vec::new();
    for r in results {
        if !systems.contains(&r.entry.system()) {
            systems.push(r.entry.system());
        }
    }
    let all: Vec<&CheckResult> = results.iter().collect();
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    emit(
        &mut w,
        Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)),
    );
    let (tests, failures, errors, _) = junit_counts(&all, strict);
    // Jenkins' junit-10 schema has no `skipped` count on <testsuites>: the suites carry it.
    let suites = BytesStart::new("testsuites").with_attributes([
        ("name", "walcheck check"),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
        ("time", junit_seconds(&all).as_str()),
    ]);
    emit(&mut w, Event::Start(suites));
    for system in systems {
        let rs: Vec<&CheckResult> = all
            .iter()
            .copied()
            .filter(|r| r.entry.system() == system)
            .collect();
        junit_suite(&mut w, system, &rs, strict);
    }
    emit(&mut w, Event::End(BytesEnd::new("testsuites")));
    let mut xml = String::from_utf8(w.into_inner()).expect("the XML written is UTF-8");
    xml.push('\n');
    xml
}

/// The JUnit file `check --junit` writes before its searches start, which the run's own report
/// replaces when it ends (interrupted too): one `<error>` saying that the run did not finish, so
/// that a run killed before its end (SIGKILL, out of memory, a CI job's time limit) fails in CI
/// instead of leaving the report of the run before.
pub fn junit_unfinished() -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    emit(
        &mut w,
        Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)),
    );
    let counts = [("tests", "1"), ("failures", "0"), ("errors", "1")];
    let suites = BytesStart::new("testsuites")
        .with_attributes([("name", "walcheck check")])
        .with_attributes(counts)
        .with_attributes([("time", "0.000")]);
    emit(&mut w, Event::Start(suites));
    let suite = BytesStart::new("testsuite")
        .with_attributes([("name", "walcheck")])
        .with_attributes(counts)
        .with_attributes([("skipped", "0"), ("time", "0.000")]);
    emit(&mut w, Event::Start(suite));
    let case = BytesStart::new("testcase")
        .with_attributes([("name", "run"), ("classname", "walcheck.run")]);
    emit(&mut w, Event::Start(case));
    let message = format!(
        "{} check did not finish: it was stopped before it wrote its report (killed, or out of \
         memory), or it is still running",
        crate::program::name()
    );
    emit(
        &mut w,
        Event::Empty(
            BytesStart::new("error")
                .with_attributes([("message", message.as_str()), ("type", "run-not-finished")]),
        ),
    );
    for end in ["testcase", "testsuite", "testsuites"] {
        emit(&mut w, Event::End(BytesEnd::new(end)));
    }
    let mut xml = String::from_utf8(w.into_inner()).expect("the XML written is UTF-8");
    xml.push('\n');
    xml
}

fn emit(w: &mut Writer<Vec<u8>>, event: Event) {
    w.write_event(event)
        .expect("writing XML to memory cannot fail");
}

/// The seconds `rs` took in all, as JUnit's `time`: each search once, though a compact search
/// decides several entries and each carries its time.
fn junit_seconds(rs: &[&CheckResult]) -> String {
    let mut searches = Vec::new();
    let mut seconds = 0.0;
    for r in rs {
        if r.search.is_some() {
            let key = crate::run::search_key(&r.entry);
            if searches.contains(&key) {
                continue;
            }
            searches.push(key);
        }
        seconds += r.elapsed.as_secs_f64();
    }
    format!("{seconds:.3}")
}

/// Whether `r` is a JUnit `<error>`: its verdict passes, but its trace could not be written.
fn errs(r: &CheckResult, strict: bool) -> bool {
    r.trace_error.is_some() && !fails(r, strict)
}

/// How many of `rs` there are, fail the run, could not write their trace ([`errs`]), and are
/// inconclusive, as JUnit's `tests`, `failures`, `errors` and `skipped`.
fn junit_counts(rs: &[&CheckResult], strict: bool) -> (String, String, String, String) {
    (
        rs.len().to_string(),
        rs.iter().filter(|r| fails(r, strict)).count().to_string(),
        rs.iter().filter(|r| errs(r, strict)).count().to_string(),
        rs.iter()
            .filter(|r| r.verdict == Verdict::Inconclusive)
            .count()
            .to_string(),
    )
}

/// One system's `<testsuite>`: a `<testcase>` per entry of `rs`.
fn junit_suite(w: &mut Writer<Vec<u8>>, system: &str, rs: &[&CheckResult], strict: bool) {
    let (tests, failures, errors, skipped) = junit_counts(rs, strict);
    let suite = BytesStart::new("testsuite").with_attributes([
        ("name", system),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
        ("skipped", skipped.as_str()),
        ("time", junit_seconds(rs).as_str()),
    ]);
    emit(w, Event::Start(suite));
    for r in rs {
        junit_case(w, r, strict);
    }
    emit(w, Event::End(BytesEnd::new("testsuite")));
}

/// One entry's `<testcase>`: with a `<failure>` when it fails the run, an `<error>` when its
/// trace could not be written, `<skipped>` when it is inconclusive, empty when it passes.
fn junit_case(w: &mut Writer<Vec<u8>>, r: &CheckResult, strict: bool) {
    let name = junit_case_name(&r.entry);
    let classname = format!("walcheck.{}", r.entry.system());
    let time = junit_seconds(&[r]);
    let case = BytesStart::new("testcase").with_attributes([
        ("name", name.as_str()),
        ("classname", classname.as_str()),
        ("time", time.as_str()),
    ]);
    if fails(r, strict) {
        emit(w, Event::Start(case));
        let (message, text) = junit_failure(r);
        let (message, text) = (xml_chars(&message), xml_chars(&text));
        emit(
            w,
            Event::Start(
                BytesStart::new("failure")
                    .with_attributes([("message", message.as_str()), ("type", "verdict-mismatch")]),
            ),
        );
        // Text needs only `<` and `&` escaped; quotes stay readable.
        emit(
            w,
            Event::Text(BytesText::from_escaped(quick_xml::escape::partial_escape(
                &text,
            ))),
        );
        emit(w, Event::End(BytesEnd::new("failure")));
        emit(w, Event::End(BytesEnd::new("testcase")));
    } else if let Some(error) = r.trace_error.as_deref() {
        // Not failing, so an `<error>` ([`errs`]).
        emit(w, Event::Start(case));
        let error = xml_chars(error);
        emit(
            w,
            Event::Empty(
                BytesStart::new("error")
                    .with_attributes([("message", error.as_str()), ("type", "trace-not-written")]),
            ),
        );
        emit(w, Event::End(BytesEnd::new("testcase")));
    } else if r.verdict == Verdict::Inconclusive {
        emit(w, Event::Start(case));
        let stopped = match (&r.error, r.limit) {
            (Some(error), _) => format!("the search could not be trusted ({error})"),
            (None, Some(limit)) => report::stopped_by(limit),
            (None, None) => "a budget ran out".to_owned(),
        };
        let message = format!(
            "inconclusive: {stopped} after {} states ({} unique, depth {})",
            r.states, r.unique_states, r.max_depth
        );
        emit(
            w,
            Event::Empty(
                BytesStart::new("skipped").with_attributes([("message", message.as_str())]),
            ),
        );
        emit(w, Event::End(BytesEnd::new("testcase")));
    } else {
        emit(w, Event::Empty(case));
    }
}

/// An entry's `<testcase>` name: `variant/faults[/bounds]/property`.
fn junit_case_name(e: &crate::catalogue::Entry) -> String {
    let mut name = format!("{}/{}", e.config.variant(), e.config.faults());
    let bounds = e.config.non_default_bounds();
    if !bounds.is_empty() {
        name.push('/');
        name.push_str(&bounds.join(","));
    }
    name.push('/');
    name.push_str(e.property.id);
    name
}

/// `text` with the characters XML 1.0 cannot hold (control characters other than tab, line
/// feed and carriage return, as a path given to `--out` may have) replaced by U+FFFD.
fn xml_chars(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// A failing entry's `<failure>`: its one-line message, and its text (the mismatch, the reason
/// and where the trace is).
fn junit_failure(r: &CheckResult) -> (String, String) {
    let e = &r.entry;
    // Checked plainly, the verdict is the failure: there is no expectation to compare with.
    let plainly = report::checked_plainly(e);
    let outcome = if e.property.kind == Kind::Sometimes && r.verdict == Verdict::Violated {
        "not reached"
    } else {
        r.verdict.name()
    };
    let verdict = if plainly {
        outcome.to_owned()
    } else {
        format!(
            "verdict {}, expected {}",
            r.verdict.name(),
            e.expected.name()
        )
    };
    let message = if plainly {
        format!("{} is {outcome}", e.property.id)
    } else if r.matches_expectation() {
        format!(
            "{} is violated (--strict fails any violation)",
            e.property.id
        )
    } else {
        verdict.clone()
    };
    let mut text = format!(
        "{} {} on {}:{} faults={}: {verdict} ({}).\n",
        e.property.kind.name(),
        e.property.id,
        e.system(),
        e.config.variant(),
        e.config.faults(),
        e.reason
    );
    let trace = r.trace_path.as_ref().map(|p| p.display().to_string());
    match (&trace, &r.trace, &r.trace_error) {
        (Some(path), Some(t), _) => text.push_str(&format!(
            "trace: {path} ({}); review with {} show {path}\n",
            crate::report::steps(t.len_actions()),
            crate::program::name()
        )),
        (None, Some(_), Some(error)) => text.push_str(&format!("trace: not written: {error}\n")),
        _ => text.push_str("trace: none (no counterexample or witness was found)\n"),
    }
    (message, text)
}
