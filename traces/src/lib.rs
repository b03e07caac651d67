//! walcheck's traces: a counterexample or witness as a header plus one step per state, its JSON
//! form on disk (shaped as an ITF trace, the Apalache/Quint trace format), and the text step
//! table reviewers read.
//!
//! Not for: running models (the checker and `replay` do that) or choosing what to show beyond the
//! variables a system names as key.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The version of the on-disk form.
pub const SCHEMA: &str = "walcheck.trace/1";

/// What a trace is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub schema: String,
    pub system: String,
    pub variant: String,
    pub faults: String,
    /// Every bound and knob of the configuration, by name.
    pub bounds: BTreeMap<String, Value>,
    pub property: String,
    /// `always`, `sometimes` or `eventually`.
    pub kind: String,
    /// `holds` or `violated`.
    pub verdict: String,
    /// The simulation seed, or null for a checker's trace.
    pub seed: Option<u64>,
}

/// One state of a trace and the action that led to it (`None` for the initial state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub action: Option<String>,
    /// Variables by name, in the system's order, as text (LSNs in `X/Y`).
    pub vars: Vec<(String, String)>,
}

/// A trace: its header and its steps, the initial state first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub header: Header,
    pub steps: Vec<Step>,
}

impl Trace {
    /// The number of actions (steps after the initial state).
    pub fn len_actions(&self) -> usize {
        self.steps.len().saturating_sub(1)
    }

    /// The ITF-shaped JSON: `#meta` (with the walcheck header), `vars`, and `states`, each with
    /// its `#meta.index`, `mbt::actionTaken` (`init` for the first) and the variables.
    pub fn to_itf(&self) -> Value {
        let vars: Vec<&str> = self.steps.first().map_or_else(Vec::new, |s| {
            s.vars.iter().map(|(n, _)| n.as_str()).collect()
        });
        let states: Vec<Value> = self
            .steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                let mut state = Map::new();
                state.insert("#meta".into(), json!({ "index": index }));
                state.insert(
                    "mbt::actionTaken".into(),
                    Value::String(step.action.clone().unwrap_or_else(|| "init".into())),
                );
                for (name, value) in &step.vars {
                    state.insert(name.clone(), Value::String(value.clone()));
                }
                Value::Object(state)
            })
            .collect();
        json!({
            "#meta": { "format": "ITF", "source": "walcheck", "walcheck": self.header },
            "vars": vars,
            "states": states,
        })
    }

    /// Writes the trace to `path` as pretty JSON, through a temporary file and a rename, so that
    /// a reader never sees half a trace.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let text = serde_json::to_string_pretty(&self.to_itf()).map_err(io::Error::other)? + "\n";
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    /// The step table: one row per state, the action, then the `key` variables and every other
    /// variable that changes somewhere in the trace; a value that changed at that step is marked
    /// with `*`. The last column is the widest, so put free text (a phase) last in `key`.
    pub fn step_table(&self, key: &[&str]) -> String {
        let Some(first) = self.steps.first() else {
            return String::new();
        };
        let changes = |name: &str| {
            let value = |s: &Step| {
                s.vars
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
            };
            self.steps.windows(2).any(|w| value(&w[0]) != value(&w[1]))
        };
        let mut columns: Vec<&str> = first
            .vars
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !key.contains(n) && changes(n))
            .collect();
        // Key variables first, in the order given, free text last.
        let mut ordered: Vec<&str> = key
            .iter()
            .copied()
            .filter(|k| first.vars.iter().any(|(n, _)| n == k))
            .collect();
        let last = ordered.pop();
        ordered.append(&mut columns);
        ordered.extend(last);

        let mut rows: Vec<Vec<String>> = vec![std::iter::once("#".to_owned())
            .chain(std::iter::once("action".to_owned()))
            .chain(ordered.iter().map(|c| (*c).to_owned()))
            .collect()];
        let mut previous: Option<&Step> = None;
        for (i, step) in self.steps.iter().enumerate() {
            let mut row = vec![
                i.to_string(),
                step.action
                    .clone()
                    .unwrap_or_else(|| "(initial state)".into()),
            ];
            for column in &ordered {
                let value = step
                    .vars
                    .iter()
                    .find(|(n, _)| n == column)
                    .map_or("", |(_, v)| v.as_str());
                let before = previous
                    .and_then(|p| p.vars.iter().find(|(n, _)| n == column))
                    .map(|(_, v)| v.as_str());
                let mark = if before.is_some_and(|b| b != value) {
                    "*"
                } else {
                    ""
                };
                row.push(format!("{value}{mark}"));
            }
            rows.push(row);
            previous = Some(step);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in &rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    let _ = write!(line, "{cell:<width$}  ", width = widths[c]);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace() -> Trace {
        let step = |action: Option<&str>, a: &str, b: &str| Step {
            action: action.map(str::to_owned),
            vars: vec![
                ("a".into(), a.into()),
                ("b".into(), b.into()),
                ("c".into(), "same".into()),
            ],
        };
        Trace {
            header: Header {
                schema: SCHEMA.into(),
                system: "s".into(),
                variant: "v".into(),
                faults: "none".into(),
                bounds: BTreeMap::new(),
                property: "p".into(),
                kind: "always".into(),
                verdict: "violated".into(),
                seed: None,
            },
            steps: vec![step(None, "0/1", "x"), step(Some("Go"), "0/2", "x")],
        }
    }

    #[test]
    fn table_marks_changes_and_drops_constant_non_key_columns() {
        let table = trace().step_table(&["b"]);
        assert_eq!(table, "#  action           a     b\n0  (initial state)  0/1   x\n1  Go               0/2*  x\n");
    }

    #[test]
    fn itf_shape() {
        let itf = trace().to_itf();
        assert_eq!(itf["vars"], json!(["a", "b", "c"]));
        assert_eq!(itf["states"][1]["mbt::actionTaken"], "Go");
        assert_eq!(itf["states"][1]["#meta"]["index"], 1);
        assert_eq!(itf["#meta"]["walcheck"]["property"], "p");
    }
}
