//! `walcheck show` and `walcheck replay`: a trace file read, replayed against its system, and
//! rendered as text, Mermaid, SVG or ITF.

use super::*;

/// A trace file read, or the one-line error naming it.
pub(super) fn read_trace(path: &Path) -> Result<Trace, ExitCode> {
    let text = crate::input::read_input(path, "trace", crate::input::TRACE_MAX_BYTES)
        .map_err(|err| usage_error(&err))?;
    Trace::from_text(&text).map_err(|err| usage_error(&format!("{}: {err}", path.display())))
}

/// `walcheck replay TRACE`, on a model of walcheck's systems or of `U`, the binary's own.
pub(super) fn replay<U: catalogue::Systems>(path: &Path) -> ExitCode {
    let trace = match read_trace(path) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    let steps = match run::replay_trace::<U>(&trace) {
        Err(err) => return usage_error(&format!("{}: {err}", path.display())),
        Ok(Err(mismatch)) => {
            let _ = print(&format!(
                "replay of {} failed: {mismatch}\n",
                path.display()
            ));
            return ExitCode::from(1);
        }
        Ok(Ok(steps)) => steps,
    };
    let (property, verdict) = (&trace.header.property, &trace.header.verdict);
    let end = match trace.loop_text() {
        Some(text) => format!(": {text}"),
        None => format!(" at step {steps}"),
    };
    print(&format!(
        "replayed {} ({}): every step enabled and as recorded; {property} {verdict}{end}\n",
        path.display(),
        crate::report::steps(steps),
    ))
}

/// `walcheck show TRACE [--format F]`, checked against a model of walcheck's systems or of `U`,
/// the binary's own.
pub(super) fn show<U: catalogue::Systems>(path: &Path, format: Format) -> ExitCode {
    let trace = match read_trace(path) {
        Ok(trace) => trace,
        Err(code) => return code,
    };
    if trace.header.system == walcheck_sim::observed::SYSTEM {
        return print(&show_live_rule(&trace, format));
    }
    // An observed (live) trace carries only the variables a run could see.
    let checked = if trace.header.is_observed() {
        catalogue::config_from_header(&trace.header)
    } else {
        run::check_trace::<U>(&trace)
    };
    let config = match checked {
        Ok(config) => config,
        Err(err) => return usage_error(&format!("{}: {err}", path.display())),
    };
    let view = &config.info().view;
    let explanation = || crate::report::explanation(&trace, &config);
    print(&match format {
        Format::Text => step_table_text(&trace, &config),
        Format::Mermaid => render::mermaid(&trace, view.lanes, view.key_variables, &explanation()),
        Format::Svg => render::svg(&trace, view.lanes, &explanation()),
        Format::Itf => trace.to_text(),
    })
}

/// `show` of a live conformance rule's trace (system `pg-live`, which no registered system
/// declares): its header line and every variable it recorded, in one lane.
pub(super) fn show_live_rule(trace: &Trace, format: Format) -> String {
    let h = &trace.header;
    let note = format!(
        "observed on a live server ({}): {}; `{} replay FILE` checks it against the model",
        h.variant,
        h.config
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
        program::name()
    );
    let explanation = render::Explanation {
        before: vec![note.clone()],
        after: Vec::new(),
    };
    let lanes = &walcheck_properties::system::Lanes::SINGLE;
    // Every variable is a key one: a rule records only what it compared. Some are recorded only
    // by later steps (a keepalive's wal_end, pg_last_wal_replay_lsn): in order of appearance.
    let mut key: Vec<&str> = Vec::new();
    for (name, _) in trace.steps.iter().flat_map(|s| &s.vars) {
        if !key.contains(&name.as_str()) {
            key.push(name);
        }
    }
    match format {
        Format::Text => format!(
            "{}: {} ({}) {}\n  {note}\n{}",
            h.system,
            h.property,
            h.kind,
            h.verdict,
            render::step_table(trace, &key, &[], Cells::Changes)
        ),
        Format::Mermaid => render::mermaid(trace, lanes, &key, &explanation),
        Format::Svg => render::svg(trace, lanes, &explanation),
        Format::Itf => trace.to_text(),
    }
}

/// `show --format text`: a line saying what the trace shows and how it gets there, then the
/// step table of what changed.
pub(super) fn step_table_text(trace: &Trace, config: &catalogue::SystemConfig) -> String {
    let h = &trace.header;
    let how = match trace.loop_index() {
        Some(k) => format!(
            "by a lasso: a {k}-step prefix, then a {}-step cycle",
            trace.len_actions() - k
        ),
        None => format!("after {}", crate::report::steps(trace.len_actions())),
    };
    let table = crate::report::explained_table(trace, config, Cells::Changes);
    format!(
        "{}:{} faults={}: {} ({}) {} {how}\n{table}",
        h.system, h.variant, h.faults, h.property, h.kind, h.verdict,
    )
}
