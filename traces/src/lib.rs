//! walcheck's traces: a counterexample or witness as a header plus one step per state; its form on
//! disk, an ITF trace (the Apalache/Quint trace format) with the walcheck header in `#meta`;
//! replaying and minimising it against a model; and rendering it for reviewers as a step table, a
//! Mermaid sequence diagram or an SVG timeline.
//!
//! Not for: searching (the checkers find traces) or knowing systems by name (the caller passes
//! the model and its lanes).

pub mod render;
pub mod replay;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::Path;

use serde_json::{json, Map, Value};
use walcheck_properties::system::Var;

/// The version of the on-disk form, in the header's `schema`.
pub const SCHEMA: &str = "walcheck.trace/1";

/// What a trace is about. On disk its fields are string entries of the ITF `#meta` object,
/// `walcheck:schema`, `walcheck:system`, …, because ITF readers (the `itf` crate among them) take
/// only strings there; the config is written `name=value,name=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// [`SCHEMA`].
    pub schema: String,
    pub system: String,
    pub variant: String,
    pub faults: String,
    /// Every bound and knob of the configuration, by name, as `--bound` takes it.
    pub config: BTreeMap<String, String>,
    pub property: String,
    /// `always`, `sometimes` or `eventually` for a model's path; [`OBSERVED`] for what a live run
    /// observed, whose states carry only the variables it saw (see [`Header::is_observed`]).
    pub kind: String,
    /// `violated` for a counterexample, `holds` for a witness.
    pub verdict: String,
    /// The simulation seed, or `None` for a checker's trace.
    pub seed: Option<u64>,
    /// For a simulated trace, which run of `walcheck simulate` it is and how to run it again
    /// (`walcheck:simulation`, written only when set); `None` for a checker's trace.
    pub simulation: Option<String>,
    /// For a system loaded from a connector file, the file and a hash of its text,
    /// `PATH#fnv1a64:HEX` (`walcheck:source`, written only when set), so that `show` and
    /// `replay` load the same file again and say so when it changed.
    pub source: Option<String>,
}

/// The `kind` of an observed (partial) trace.
pub const OBSERVED: &str = "observed";

impl Header {
    /// Whether the trace records a live run's observations: each state has only the variables
    /// that were observed there, and replay constrains only those. A model's trace has every
    /// variable in every state.
    pub fn is_observed(&self) -> bool {
        self.kind == OBSERVED
    }

    /// The `#meta` object: ITF's own `format`, `source` and `description`, then the header.
    fn to_meta(&self) -> Value {
        let config: Vec<String> = self
            .config
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut meta = json!({
            "format": "ITF",
            "source": "walcheck",
            "description": format!("{}:{} faults={}: {} {}", self.system, self.variant, self.faults, self.property, self.verdict),
            "walcheck:schema": self.schema,
            "walcheck:system": self.system,
            "walcheck:variant": self.variant,
            "walcheck:faults": self.faults,
            "walcheck:config": config.join(","),
            "walcheck:property": self.property,
            "walcheck:kind": self.kind,
            "walcheck:verdict": self.verdict,
            "walcheck:seed": self.seed.map_or_else(|| "none".to_owned(), |s| s.to_string()),
        });
        if let Some(simulation) = &self.simulation {
            meta["walcheck:simulation"] = Value::String(simulation.clone());
        }
        if let Some(source) = &self.source {
            meta["walcheck:source"] = Value::String(source.clone());
        }
        meta
    }

    fn from_meta(meta: &Map<String, Value>) -> Result<Header, TraceError> {
        let field = |name: &str| -> Result<String, TraceError> {
            meta.get(&format!("walcheck:{name}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| TraceError::NotItf(format!("#meta has no walcheck:{name} text")))
        };
        let schema = field("schema")?;
        if schema != SCHEMA {
            return Err(TraceError::Schema(schema));
        }
        let mut config = BTreeMap::new();
        for pair in field("config")?.split(',').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').ok_or_else(|| {
                TraceError::NotItf(format!("walcheck:config has {pair:?}, not name=value"))
            })?;
            config.insert(name.to_owned(), value.to_owned());
        }
        let seed = match field("seed")?.as_str() {
            "none" => None,
            text => Some(whole_number(text).map_err(|why| {
                TraceError::NotItf(format!("walcheck:seed {text:?} is {why}, and not none"))
            })?),
        };
        Ok(Header {
            schema,
            system: field("system")?,
            variant: field("variant")?,
            faults: field("faults")?,
            config,
            property: field("property")?,
            kind: field("kind")?,
            verdict: field("verdict")?,
            seed,
            simulation: match meta.get("walcheck:simulation") {
                None => None,
                Some(Value::String(text)) => Some(text.clone()),
                Some(_) => {
                    return Err(TraceError::NotItf("walcheck:simulation is not text".into()))
                }
            },
            source: match meta.get("walcheck:source") {
                None => None,
                Some(Value::String(text)) => Some(text.clone()),
                Some(_) => return Err(TraceError::NotItf("walcheck:source is not text".into())),
            },
        })
    }
}

/// One state of a trace and the action that led to it (`None` for the initial state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The action as the model displays it, e.g. `Append{pages: 3, commit: sync}`.
    pub action: Option<String>,
    /// Variables by name, in the system's order, as text (LSNs in `X/Y`).
    pub vars: Vec<(String, Var)>,
    /// For a simulated trace, the virtual time the step happened at, in microseconds
    /// (`walcheck:time_us` in the state's `#meta`, text as ITF wants it); `None` for a
    /// checker's trace, whose steps are untimed.
    pub time_us: Option<u64>,
}

impl Step {
    /// The value of variable `name`, if the step has it.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// A value as ITF writes it: text as a string, a flag as a boolean, a count as a number.
fn var_to_json(var: &Var) -> Value {
    match var {
        Var::Text(text) => Value::String(text.clone()),
        Var::Bool(flag) => Value::Bool(*flag),
        Var::Int(n) => json!(n),
    }
}

/// An ITF value walcheck writes: a string, a boolean, a whole number (plain or `#bigint`).
fn var_from_json(value: &Value) -> Result<Var, String> {
    match value {
        Value::String(text) => Ok(Var::Text(text.clone())),
        Value::Bool(flag) => Ok(Var::Bool(*flag)),
        Value::Number(n) => match n.as_u64() {
            Some(n) => Ok(Var::Int(n)),
            None if n.as_i64().is_some() => Err(format!("is {n}, {OUT_OF_RANGE}")),
            // serde_json reads a whole number beyond u64 as a float.
            None if n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                Err(format!("is {OUT_OF_RANGE}"))
            }
            None => Err(format!("is {n}, not a whole number")),
        },
        Value::Object(big) if big.len() == 1 && big.contains_key("#bigint") => {
            match big.get("#bigint").and_then(Value::as_str) {
                Some(text) => whole_number(text)
                    .map(Var::Int)
                    .map_err(|why| format!("is {{\"#bigint\": {text:?}}}, {why}")),
                None => Err("has a #bigint that is not text".to_owned()),
            }
        }
        other => Err(format!(
            "is {}, not a string, boolean or whole number",
            compact_json(other)
        )),
    }
}

/// `value` as JSON on one line, cut to 40 characters.
fn compact_json(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// What a whole number out of range is told.
const OUT_OF_RANGE: &str = "out of range for a whole number (0 to 18446744073709551615)";

/// `text` as a whole number (decimal digits, at most [`u64::MAX`]), or why not: not a whole
/// number, or out of range.
pub fn whole_number(text: &str) -> Result<u64, String> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a whole number".to_owned());
    }
    if text.starts_with('-') && digits.bytes().any(|b| b != b'0') {
        return Err(OUT_OF_RANGE.to_owned());
    }
    digits.parse().map_err(|_| OUT_OF_RANGE.to_owned())
}

/// A trace: its header and its steps, the initial state first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub header: Header,
    pub steps: Vec<Step>,
}

/// Why a file is not a walcheck trace. `Display` is one line naming the file's problem.
#[derive(Debug)]
pub enum TraceError {
    Io(io::Error),
    Empty,
    /// Not JSON at all (serde_json's message names the line and column).
    NotJson(String),
    /// JSON, but not an ITF trace with a walcheck header.
    NotItf(String),
    /// A walcheck trace of another schema version.
    Schema(String),
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(err) => write!(f, "cannot read trace: {err}"),
            TraceError::Empty => write!(f, "trace file is empty"),
            TraceError::NotJson(err) => write!(f, "trace is not JSON: {err}"),
            TraceError::NotItf(why) => write!(f, "not a walcheck ITF trace: {why}"),
            TraceError::Schema(found) => write!(
                f,
                "trace schema {found:?} is not {SCHEMA:?}, the one this walcheck reads"
            ),
        }
    }
}

impl std::error::Error for TraceError {}

impl Trace {
    /// The number of actions (steps after the initial state).
    pub fn len_actions(&self) -> usize {
        self.steps.len().saturating_sub(1)
    }

    /// The actions, in order.
    pub fn actions(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().filter_map(|s| s.action.as_deref())
    }

    /// Whether the trace is a lasso: a counterexample to an `eventually` property, an infinite
    /// behaviour written as a prefix and a cycle.
    pub fn is_lasso(&self) -> bool {
        self.header.kind == "eventually" && self.header.verdict == "violated"
    }

    /// For a lasso, the index of the state the cycle starts from (0 is the initial state): the
    /// first state equal to the last one. It is the last state itself when that state has no
    /// enabled action and stutters forever. On disk it is ITF's top-level `loop` and, as text,
    /// `walcheck:loop` in `#meta`. `None` for any other trace.
    pub fn loop_index(&self) -> Option<usize> {
        if !self.is_lasso() {
            return None;
        }
        let last = self.steps.last()?;
        self.steps.iter().position(|s| s.vars == last.vars)
    }

    /// For a lasso, one line saying how it loops: `steps 4-5 return to state 3 and repeat
    /// forever`, or `state 4 has no enabled action and stutters forever`.
    pub fn loop_text(&self) -> Option<String> {
        let index = self.loop_index()?;
        let last = self.len_actions();
        Some(if index == last {
            format!("state {last} has no enabled action and stutters forever")
        } else if index + 1 == last {
            format!("step {last} returns to state {index} and repeats forever")
        } else {
            format!(
                "steps {}-{last} return to state {index} and repeat forever",
                index + 1
            )
        })
    }

    /// The ITF JSON: `#meta` (with the walcheck header under `walcheck`), `vars`, and `states`,
    /// each with its `#meta.index`, `mbt::actionTaken` (`init` for the first) and the variables as
    /// strings.
    pub fn to_itf(&self) -> Value {
        let mut vars: Vec<&str> = self.steps.first().map_or_else(Vec::new, |s| {
            s.vars.iter().map(|(n, _)| n.as_str()).collect()
        });
        if self.header.is_observed() {
            // Every variable any state observed, in first-seen order.
            for step in &self.steps {
                for (name, _) in &step.vars {
                    if !vars.contains(&name.as_str()) {
                        vars.push(name);
                    }
                }
            }
        }
        let states: Vec<Value> = self
            .steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                let mut state = Map::new();
                let mut meta = json!({ "index": index });
                if let Some(time_us) = step.time_us {
                    meta["walcheck:time_us"] = Value::String(time_us.to_string());
                }
                state.insert("#meta".into(), meta);
                state.insert(
                    "mbt::actionTaken".into(),
                    Value::String(step.action.clone().unwrap_or_else(|| "init".into())),
                );
                for (name, value) in &step.vars {
                    state.insert(name.clone(), var_to_json(value));
                }
                Value::Object(state)
            })
            .collect();
        let mut itf = json!({
            "#meta": self.header.to_meta(),
            "vars": vars,
            "states": states,
        });
        if let Some(index) = self.loop_index() {
            itf["#meta"]["walcheck:loop"] = Value::String(index.to_string());
            itf["loop"] = json!(index);
        }
        itf
    }

    /// The trace's file text: pretty ITF JSON ending in a newline. The same trace always gives
    /// the same bytes.
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(&self.to_itf()).expect("JSON values serialize") + "\n"
    }

    /// Parses ITF JSON written by [`Trace::to_itf`], checking its shape: the header and its
    /// schema version, `vars`, and every state's index, action and variables.
    pub fn from_itf(itf: &Value) -> Result<Trace, TraceError> {
        let bad = |why: String| TraceError::NotItf(why);
        let object = itf
            .as_object()
            .ok_or_else(|| bad("the top level is not an object".into()))?;
        let meta = object
            .get("#meta")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no #meta object".into()))?;
        let header = Header::from_meta(meta)?;
        let vars: Vec<String> = object
            .get("vars")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no vars array".into()))?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad("a var name is not a string".into()))
            })
            .collect::<Result<_, _>>()?;
        let states = object
            .get("states")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no states array".into()))?;
        if states.is_empty() {
            return Err(bad("no states".into()));
        }
        let mut steps = Vec::with_capacity(states.len());
        for (i, state) in states.iter().enumerate() {
            let state = state
                .as_object()
                .ok_or_else(|| bad(format!("state {i} is not an object")))?;
            if state
                .get("#meta")
                .and_then(|m| m.get("index"))
                .and_then(Value::as_u64)
                != Some(i as u64)
            {
                return Err(bad(format!("state {i} has no #meta.index {i}")));
            }
            let time_us = match state.get("#meta").and_then(|m| m.get("walcheck:time_us")) {
                None => None,
                Some(time) => Some(
                    time.as_str()
                        .ok_or_else(|| "not text".to_owned())
                        .and_then(whole_number)
                        .map_err(|why| bad(format!("state {i}: walcheck:time_us {time}: {why}")))?,
                ),
            };
            let action = state
                .get("mbt::actionTaken")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("state {i} has no mbt::actionTaken")))?;
            let action = match (i, action) {
                (0, "init") => None,
                (0, other) => return Err(bad(format!("state 0 was taken by {other:?}, not init"))),
                (_, action) => Some(action.to_owned()),
            };
            let mut values = Vec::with_capacity(vars.len());
            for name in &vars {
                if header.is_observed() && !state.contains_key(name) {
                    continue; // not observed in this state
                }
                let value = match state.get(name).map(var_from_json) {
                    Some(Ok(value)) => value,
                    Some(Err(why)) => return Err(bad(format!("state {i}: {name} {why}"))),
                    None => return Err(bad(format!("state {i} has no value for {name}"))),
                };
                values.push((name.clone(), value));
            }
            let extra = state
                .keys()
                .find(|k| !k.starts_with("#meta") && !k.starts_with("mbt::") && !vars.contains(k));
            if let Some(extra) = extra {
                return Err(bad(format!(
                    "state {i} has {extra:?}, which is not in vars"
                )));
            }
            steps.push(Step {
                action,
                vars: values,
                time_us,
            });
        }
        let trace = Trace { header, steps };
        let recorded = match (object.get("loop"), meta.get("walcheck:loop")) {
            (None, None) => None,
            (Some(index), Some(Value::String(text)))
                if index.as_u64().is_some_and(|i| i.to_string() == *text) =>
            {
                index.as_u64()
            }
            _ => {
                return Err(bad(
                    "loop and #meta walcheck:loop are not the same state index".into(),
                ))
            }
        };
        let derived = trace.loop_index().map(|i| i as u64);
        if recorded != derived {
            let recorded = recorded.map_or_else(|| "none".to_owned(), |r| r.to_string());
            let last = trace.steps.len() as u64 - 1;
            return Err(bad(match derived {
                Some(i) if i == last => format!(
                    "the recorded loop is {recorded}, but no earlier state equals the last \
                     (state {last}), so the lasso could only stutter there"
                ),
                Some(i) => format!(
                    "the recorded loop is {recorded}, but the first state equal to the last \
                     (state {last}) is state {i}"
                ),
                None => {
                    "a loop is recorded, but the trace is not an eventually counterexample".into()
                }
            }));
        }
        Ok(trace)
    }

    /// Parses a trace file's text.
    pub fn from_text(text: &str) -> Result<Trace, TraceError> {
        if text.trim().is_empty() {
            return Err(TraceError::Empty);
        }
        let value: Value =
            serde_json::from_str(text).map_err(|e| TraceError::NotJson(e.to_string()))?;
        Trace::from_itf(&value)
    }

    /// Reads the trace at `path`.
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let bytes = std::fs::read(path).map_err(TraceError::Io)?;
        let text = String::from_utf8(bytes)
            .map_err(|e| TraceError::NotJson(format!("not UTF-8 text: {e}")))?;
        Trace::from_text(&text)
    }

    /// Writes the trace's text to `path` with [`write_whole`].
    pub fn write(&self, path: &Path) -> io::Result<()> {
        write_whole(path, &self.to_text())
    }
}

/// Writes `text` to `path` so that a reader never sees half a file and a failed write never
/// destroys the file that was there: through a temporary file named after this process (so that
/// concurrent writers never rename each other's) and a rename, the temporary removed on failure.
/// A link or a device (`/dev/stdout`, a named pipe) is written through, not replaced.
pub fn write_whole(path: &Path, text: &str) -> io::Result<()> {
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file());
    if special {
        return std::fs::write(path, text);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn trace() -> Trace {
        let step = |action: Option<&str>, a: &str, b: &str| Step {
            time_us: None,
            action: action.map(str::to_owned),
            vars: vec![
                ("a".into(), Var::Text(a.into())),
                ("b".into(), Var::Text(b.into())),
                ("c".into(), Var::Text("same".into())),
                ("n".into(), Var::Int(7)),
                ("f".into(), Var::Bool(true)),
            ],
        };
        Trace {
            header: Header {
                schema: SCHEMA.into(),
                system: "s".into(),
                variant: "v".into(),
                faults: "none".into(),
                config: BTreeMap::from([("n".into(), "2".into())]),
                property: "p".into(),
                kind: "always".into(),
                verdict: "violated".into(),
                seed: None,
                simulation: None,
                source: None,
            },
            steps: vec![step(None, "0/1", "x"), step(Some("Go"), "0/2", "x")],
        }
    }

    #[test]
    fn itf_shape() {
        let itf = trace().to_itf();
        assert_eq!(itf["vars"], json!(["a", "b", "c", "n", "f"]));
        assert_eq!(itf["states"][0]["n"], 7);
        assert_eq!(itf["states"][0]["f"], true);
        assert_eq!(itf["states"][0]["mbt::actionTaken"], "init");
        assert_eq!(itf["states"][1]["mbt::actionTaken"], "Go");
        assert_eq!(itf["states"][1]["#meta"]["index"], 1);
        assert_eq!(itf["#meta"]["walcheck:property"], "p");
    }

    #[test]
    fn round_trips_through_text() {
        let t = trace();
        assert_eq!(Trace::from_text(&t.to_text()).unwrap(), t);
    }

    #[test]
    fn simulated_traces_keep_their_times_and_origin() {
        let mut t = trace();
        t.header.seed = Some(7);
        t.header.simulation = Some("ladder sync, attempt 3".into());
        t.steps[0].time_us = Some(0);
        t.steps[1].time_us = Some(412_345);
        let itf = t.to_itf();
        assert_eq!(itf["states"][1]["#meta"]["walcheck:time_us"], "412345");
        assert_eq!(
            itf["#meta"]["walcheck:simulation"],
            "ladder sync, attempt 3"
        );
        assert_eq!(Trace::from_text(&t.to_text()).unwrap(), t);
        let parsed: itf::Trace<itf::Value> = itf::trace_from_str(&t.to_text()).unwrap();
        assert_eq!(parsed.states.len(), 2);
    }

    #[test]
    fn the_itf_crate_reads_it() {
        let text = trace().to_text();
        let parsed: itf::Trace<itf::Value> = itf::trace_from_str(&text).unwrap();
        assert_eq!(parsed.states.len(), 2);
    }

    #[test]
    fn a_lasso_marks_its_loop_for_itf_readers() {
        let mut t = trace();
        t.header.kind = "eventually".into();
        let mut back = t.steps[0].clone();
        back.action = Some("Back".into());
        t.steps.push(back);
        assert_eq!(t.loop_index(), Some(0));
        let itf = t.to_itf();
        assert_eq!(itf["loop"], 0);
        assert_eq!(itf["#meta"]["walcheck:loop"], "0");
        assert_eq!(Trace::from_text(&t.to_text()).unwrap(), t);
        let parsed: itf::Trace<itf::Value> = itf::trace_from_str(&t.to_text()).unwrap();
        assert_eq!(parsed.loop_index, Some(0));
        let moved = t.to_text().replace("\"loop\": 0", "\"loop\": 1");
        let err = Trace::from_text(&moved).unwrap_err().to_string();
        assert!(err.contains("loop"), "{err}");
    }

    #[test]
    fn bad_input_is_named() {
        let text = trace().to_text();
        let other_schema = text.replace(SCHEMA, "walcheck.trace/0");
        let cases: [(&str, &str); 7] = [
            ("", "trace file is empty"),
            ("{", "trace is not JSON"),
            (
                "[1, 2]",
                "not a walcheck ITF trace: the top level is not an object",
            ),
            (
                r#"{"vars": [], "states": []}"#,
                "not a walcheck ITF trace: no #meta object",
            ),
            (
                r##"{"#meta": {}, "vars": [], "states": []}"##,
                "not a walcheck ITF trace: #meta has no walcheck:schema text",
            ),
            (&other_schema, "trace schema \"walcheck.trace/0\""),
            (&text[..text.len() / 2], "trace is not JSON"),
        ];
        for (input, expected) in cases {
            let err = Trace::from_text(input).unwrap_err().to_string();
            assert!(err.starts_with(expected), "{err}");
            assert_eq!(err.lines().count(), 1);
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = String::from_utf8(bytes).map(|s| Trace::from_text(&s));
        }

        #[test]
        fn mutated_traces_never_panic(cut in 0usize..2000, byte in proptest::prelude::any::<u8>()) {
            let mut text = trace().to_text().into_bytes();
            let at = cut % text.len();
            text[at] = byte;
            let _ = String::from_utf8(text).map(|s| Trace::from_text(&s));
        }
    }
}
