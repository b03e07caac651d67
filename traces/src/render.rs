//! Trace renderings for reviewers: a step table (every value, or only what changed), a Mermaid
//! `sequenceDiagram`, and an SVG timeline.

use std::fmt::Write as _;

use svg::node::element::{Line, Polygon, Rectangle, Text};
use svg::Document;
use walcheck_properties::system::Lanes;

use crate::{Step, Trace};

/// The variables [`step_table`] shows, in its column order: the `key` variables the trace has
/// (the last one as the final column) and every other variable that changes somewhere, except
/// the `hide` ones.
pub fn columns<'t>(trace: &'t Trace, key: &[&'t str], hide: &[&str]) -> Vec<&'t str> {
    let Some(first) = trace.steps.first() else {
        return Vec::new();
    };
    let changes = |name: &str| {
        trace
            .steps
            .windows(2)
            .any(|w| w[0].var(name) != w[1].var(name))
    };
    // A key variable shows if any step has it (an observed trace records some only later).
    let mut ordered: Vec<&str> = key
        .iter()
        .copied()
        .filter(|k| trace.steps.iter().any(|s| s.var(k).is_some()))
        .collect();
    let last = ordered.pop();
    ordered.extend(
        first
            .vars
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !key.contains(n) && !hide.contains(n) && changes(n)),
    );
    ordered.extend(last);
    ordered
}

/// Which values a step table shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cells {
    /// Every value in every row; a value that changed at that step ends in `*`.
    All,
    /// The initial row in full, then only the values that changed, each ending in `*`.
    Changes,
}

/// The step table: one row per state, the action, then the `key` variables (in that order, the
/// last one as the final, widest column) and every other variable that changes somewhere, except
/// the `hide` ones (bookkeeping counters the actions already show). A simulated trace's rows also
/// give their virtual time, in milliseconds, after the step number.
pub fn step_table(trace: &Trace, key: &[&str], hide: &[&str], cells: Cells) -> String {
    if trace.steps.is_empty() {
        return String::new();
    }
    let ordered = columns(trace, key, hide);

    let timed = trace.steps.iter().any(|s| s.time_us.is_some());
    let time_column: &[&str] = if timed { &["ms"] } else { &[] };
    let mut rows: Vec<Vec<String>> = vec![["#"]
        .iter()
        .chain(time_column)
        .chain(&["action"])
        .chain(ordered.iter())
        .map(|c| (*c).to_owned())
        .collect()];
    let mut previous: Option<&Step> = None;
    let mut last = vec![None; ordered.len()];
    let loop_index = trace.loop_index();
    for (i, step) in trace.steps.iter().enumerate() {
        let mut row = vec![if loop_index == Some(i) {
            format!("{i} loop")
        } else {
            i.to_string()
        }];
        if timed {
            row.push(
                step.time_us
                    .map_or_else(String::new, |us| format!("{}.{:03}", us / 1000, us % 1000)),
            );
        }
        row.push(
            step.action
                .clone()
                .unwrap_or_else(|| "(initial state)".into()),
        );
        for (c, column) in ordered.iter().enumerate() {
            let var = step.var(column);
            // One line per row, whatever a value holds.
            let value = var
                .map(|v| v.to_string().replace(['\n', '\r'], " "))
                .unwrap_or_default();
            // A value a step did not record (an observed trace's) is blank, not a change; a
            // recorded one is compared with the last value recorded before it.
            let seen = &mut last[c];
            let changed = var.is_some() && previous.is_some() && *seen != var;
            if var.is_some() {
                *seen = var;
            }
            row.push(match (changed, cells, previous) {
                (true, _, _) => format!("{value}*"),
                (false, Cells::Changes, Some(_)) => String::new(),
                (false, _, _) => value.to_owned(),
            });
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
    if let Some(text) = trace.loop_text() {
        let _ = writeln!(out, "loop: {text}");
    }
    out
}

/// The variables that changed at step `i` (none for the initial state), grouped by the
/// participant that owns them, in `lanes` order.
fn changed_by_owner<'t>(
    trace: &'t Trace,
    i: usize,
    lanes: &Lanes,
) -> Vec<(&'static str, Vec<(&'t str, String)>)> {
    let step = &trace.steps[i];
    let before = i.checked_sub(1).map(|p| &trace.steps[p]);
    let mut groups: Vec<(&'static str, Vec<(&str, String)>)> = lanes
        .participants
        .iter()
        .map(|(id, _)| (*id, Vec::new()))
        .collect();
    for (name, value) in &step.vars {
        if before.is_some_and(|b| b.var(name) != Some(value)) {
            if let Some(owner) = (lanes.owner)(name) {
                if let Some(group) = groups.iter_mut().find(|(id, _)| *id == owner) {
                    group.1.push((name.as_str(), value.to_string()));
                }
            }
        }
    }
    groups.retain(|(_, vars)| !vars.is_empty());
    groups
}

/// The action's name: the text before `{`.
fn action_name(action: &str) -> &str {
    action.split('{').next().unwrap_or(action)
}

/// Text safe inside a Mermaid message or note: no statement separators or entity starts.
fn mermaid_text(text: &str) -> String {
    let text = text
        .replace(';', ",")
        .replace('#', "no. ")
        .replace(['\n', '\r'], " ");
    // Mermaid reads a note as HTML: `<` that would open a tag (`<script>`, `</b>`) becomes `‹`,
    // so a hand-edited trace cannot put markup in a diagram; `<=` and `->` stay as they are.
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let opens_tag = chars
            .peek()
            .is_some_and(|n| n.is_ascii_alphabetic() || *n == '/' || *n == '!');
        out.push(if c == '<' && opens_tag { '‹' } else { c });
    }
    out
}

/// `name value`, or just the value when the variable is named after its participant (the
/// connector's phase under the connector).
fn named(owner: &str, name: &str, value: &str) -> String {
    if owner == name {
        value.to_owned()
    } else {
        format!("{name} {value}")
    }
}

/// What a diagram says besides its steps, so that it reads on its own: `before` them, what the
/// property means and the whole configuration; `after` them, one line per variable or term
/// shown (`name (kind): doc`). Each line is a note of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explanation {
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// A Mermaid `sequenceDiagram`: the `lanes` participants, a note per line the `explanation`
/// puts before the steps, a note with the `key` variables' initial values, one arrow per action
/// (numbered as in the step table) with a note of the values that changed, a note naming the
/// property and its verdict, then a note per line the explanation puts after the steps.
pub fn mermaid(trace: &Trace, lanes: &Lanes, key: &[&str], explanation: &Explanation) -> String {
    let h = &trace.header;
    let mut out = String::from("sequenceDiagram\n");
    for (id, label) in lanes.participants {
        let _ = writeln!(out, "    participant {id} as {}", mermaid_text(label));
    }
    let (first, last) = (
        lanes.participants[0].0,
        lanes.participants[lanes.participants.len() - 1].0,
    );
    let note = |out: &mut String, line: &str| {
        let _ = writeln!(out, "    Note over {first},{last}: {}", mermaid_text(line));
    };
    for line in &explanation.before {
        note(&mut out, line);
    }
    if let Some(init) = trace.steps.first() {
        let values: Vec<String> = key
            .iter()
            .filter_map(|k| init.var(k).map(|v| format!("{k} {v}")))
            .collect();
        let _ = writeln!(
            out,
            "    Note over {first},{last}: {} {} faults={}, initially {}",
            h.system,
            h.variant,
            h.faults,
            mermaid_text(&values.join(", "))
        );
    }
    let loop_index = trace.loop_index();
    for (i, step) in trace.steps.iter().enumerate().skip(1) {
        if loop_index.is_some_and(|k| k + 1 == i) {
            let _ = writeln!(out, "    loop forever: back to state {}", i - 1);
        }
        let action = step.action.as_deref().unwrap_or("?");
        let (from, to) = (lanes.lane)(action_name(action));
        let _ = writeln!(out, "    {from}->>{to}: {i}. {}", mermaid_text(action));
        for (owner, vars) in changed_by_owner(trace, i, lanes) {
            let text: Vec<String> = vars.iter().map(|(n, v)| named(owner, n, v)).collect();
            let _ = writeln!(
                out,
                "    Note over {owner}: {}",
                mermaid_text(&text.join(", "))
            );
        }
    }
    match loop_index {
        Some(k) if k < trace.len_actions() => out.push_str("    end\n"),
        Some(_) => {
            let _ = writeln!(
                out,
                "    Note over {first},{last}: state {} stutters forever (no action is enabled)",
                trace.len_actions()
            );
        }
        None => {}
    }
    let _ = writeln!(
        out,
        "    Note over {first},{last}: {} {} ({}) {}",
        h.property,
        h.verdict.to_uppercase(),
        h.kind,
        verdict_tail(trace)
    );
    for line in &explanation.after {
        note(&mut out, line);
    }
    out
}

/// `after step N`, or for a lasso `by a lasso: …`.
fn verdict_tail(trace: &Trace) -> String {
    match trace.loop_text() {
        Some(text) => format!("by a lasso: {text}"),
        None => format!("after step {}", trace.len_actions()),
    }
}

/// An SVG timeline of the same diagram: under the title, the lines the `explanation` puts
/// before the steps; a lifeline per participant, an arrow per action, the values that changed
/// under it; the verdict at the bottom, and under it the lines the explanation puts after.
pub fn svg(trace: &Trace, lanes: &Lanes, explanation: &Explanation) -> String {
    const LANE_PX: usize = 210;
    const ROW_PX: usize = 18;
    const LEFT_PX: usize = 40;
    let lane_x = |id: &str| {
        LEFT_PX
            + LANE_PX / 2
            + LANE_PX
                * lanes
                    .participants
                    .iter()
                    .position(|(p, _)| *p == id)
                    .unwrap_or(0)
    };
    let width = LEFT_PX * 2 + LANE_PX * lanes.participants.len();

    let mut nodes: Vec<Box<dyn svg::Node>> = Vec::new();
    // The right edge of the widest text so far, at about 7.3 px per monospace character.
    let right_px = std::cell::Cell::new(width);
    let text = |x: usize, y: usize, s: &str, anchor: &str, weight: &str| -> Box<dyn svg::Node> {
        if anchor == "start" {
            right_px.set(right_px.get().max(x + s.chars().count() * 73 / 10 + 20));
        }
        Box::new(
            Text::new(s)
                .set("x", x)
                .set("y", y)
                .set("text-anchor", anchor)
                .set("font-family", "monospace")
                .set("font-size", 12)
                .set("font-weight", weight),
        )
    };
    let h = &trace.header;
    nodes.push(text(
        LEFT_PX,
        20,
        &format!(
            "{} {} faults={}: {} {}",
            h.system, h.variant, h.faults, h.property, h.verdict
        ),
        "start",
        "bold",
    ));
    let mut y = 50;
    for line in &explanation.before {
        nodes.push(text(LEFT_PX, y - 12, line, "start", "normal"));
        y += ROW_PX;
    }
    for (id, label) in lanes.participants {
        let x = lane_x(id);
        nodes.push(Box::new(
            Rectangle::new()
                .set("x", x - 70)
                .set("y", y - 15)
                .set("width", 140)
                .set("height", 22)
                .set("fill", "#eef")
                .set("stroke", "#446"),
        ));
        nodes.push(text(x, y, label, "middle", "bold"));
    }
    let top = y + 10;
    y += 30;
    let loop_index = trace.loop_index();
    let mut loop_top = None;
    for (i, step) in trace.steps.iter().enumerate().skip(1) {
        if loop_index.is_some_and(|k| k + 1 == i) {
            loop_top = Some(y - 12);
        }
        let action = step.action.as_deref().unwrap_or("?");
        let (from, to) = (lanes.lane)(action_name(action));
        let (x1, x2) = (lane_x(from), lane_x(to));
        nodes.push(text(8, y + 4, &i.to_string(), "start", "normal"));
        if x1 == x2 {
            nodes.push(Box::new(
                Rectangle::new()
                    .set("x", x1)
                    .set("y", y - 6)
                    .set("width", 24)
                    .set("height", 12)
                    .set("fill", "none")
                    .set("stroke", "#000"),
            ));
            nodes.push(text(x1 + 30, y + 4, action, "start", "normal"));
        } else {
            nodes.push(Box::new(
                Line::new()
                    .set("x1", x1)
                    .set("y1", y)
                    .set("x2", x2)
                    .set("y2", y)
                    .set("stroke", "#000"),
            ));
            let dir: i64 = if x2 > x1 { -1 } else { 1 };
            let tip = x2 as i64;
            let head = format!(
                "{},{} {},{} {},{}",
                tip,
                y,
                tip + dir * 8,
                y - 4,
                tip + dir * 8,
                y + 4
            );
            nodes.push(Box::new(
                Polygon::new().set("points", head).set("fill", "#000"),
            ));
            nodes.push(text(x1.min(x2) + 6, y - 4, action, "start", "normal"));
        }
        y += ROW_PX;
        for (owner, vars) in changed_by_owner(trace, i, lanes) {
            let line: Vec<String> = vars.iter().map(|(n, v)| named(owner, n, v)).collect();
            nodes.push(text(
                lane_x(owner) + 4,
                y,
                &line.join(", "),
                "start",
                "normal",
            ));
            y += ROW_PX;
        }
        y += 6;
    }
    // The cycle of a lasso: a bracket in the margin from its first step to its last, back to
    // where it starts; a stuttering end is a note.
    if let Some(top_px) = loop_top {
        let bottom_px = y - 6;
        for (x1, y1, x2, y2) in [
            (30, top_px, 24, top_px),
            (24, top_px, 24, bottom_px),
            (24, bottom_px, 30, bottom_px),
        ] {
            nodes.push(Box::new(
                Line::new()
                    .set("x1", x1)
                    .set("y1", y1)
                    .set("x2", x2)
                    .set("y2", y2)
                    .set("stroke", "#a00")
                    .set("stroke-width", 2),
            ));
        }
        nodes.push(Box::new(
            Polygon::new()
                .set(
                    "points",
                    format!("30,{top_px} 24,{} 24,{}", top_px - 4, top_px + 4),
                )
                .set("fill", "#a00"),
        ));
    }
    if let Some(text_line) = trace.loop_text() {
        nodes.push(text(
            LEFT_PX,
            y + 4,
            &format!("loop: {text_line}"),
            "start",
            "normal",
        ));
        y += ROW_PX;
    }
    let verdict = format!(
        "{} {} ({}) {}",
        h.property,
        h.verdict.to_uppercase(),
        h.kind,
        verdict_tail(trace)
    );
    let verdict = text(LEFT_PX, y + 20, &verdict, "start", "bold");
    let mut bottom = y + 30;
    for line in &explanation.after {
        nodes.push(text(LEFT_PX, bottom + 8, line, "start", "normal"));
        bottom += ROW_PX;
    }
    let width = right_px.get();
    let mut document = Document::new()
        .set("width", width)
        .set("height", bottom)
        .set("viewBox", (0, 0, width, bottom));
    document = document.add(
        Rectangle::new()
            .set("width", "100%")
            .set("height", "100%")
            .set("fill", "#fff"),
    );
    // Lifelines first, so that arrows and text draw over them.
    for (id, _) in lanes.participants {
        let x = lane_x(id);
        document = document.add(
            Line::new()
                .set("x1", x)
                .set("y1", top)
                .set("x2", x)
                .set("y2", y)
                .set("stroke", "#99a")
                .set("stroke-dasharray", "4 3"),
        );
    }
    for node in nodes {
        document = document.add(node);
    }
    document = document.add(verdict);
    document.to_string() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::trace;
    use walcheck_properties::system::Var;

    #[test]
    fn table_marks_changes_and_drops_constant_non_key_columns() {
        let table = step_table(&trace(), &["b"], &[], Cells::All);
        assert_eq!(table, "#  action           a     b\n0  (initial state)  0/1   x\n1  Go               0/2*  x\n");
    }

    #[test]
    fn mermaid_text_keeps_markup_out_of_a_diagram() {
        assert_eq!(
            mermaid_text("<script>alert(1)</script>; replay <= flush, a -> b #3"),
            "‹script>alert(1)‹/script>, replay <= flush, a -> b no. 3"
        );
    }

    #[test]
    fn changes_table_blanks_unchanged_values() {
        let table = step_table(&trace(), &["b"], &[], Cells::Changes);
        assert_eq!(
            table,
            "#  action           a     b\n0  (initial state)  0/1   x\n1  Go               0/2*\n"
        );
    }

    /// An observed trace's step records only what it read: a value it did not record is blank,
    /// not a change, and the next recorded value is compared with the last one recorded.
    #[test]
    fn a_value_a_step_did_not_record_is_blank_not_a_change() {
        let mut t = trace();
        t.steps[1].vars.retain(|(name, _)| name != "a");
        let mut again = t.steps[1].clone();
        again.vars.push(("a".into(), Var::Text("0/1".into())));
        t.steps.push(again.clone());
        again.vars.retain(|(name, _)| name != "a");
        again.vars.push(("a".into(), Var::Text("0/3".into())));
        t.steps.push(again);
        let table = step_table(&t, &["b"], &[], Cells::Changes);
        assert_eq!(
            table,
            "#  action           a     b\n0  (initial state)  0/1   x\n1  Go\n2  Go\n3  Go               0/3*\n"
        );
    }
}
