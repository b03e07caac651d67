//! Every counterexample's Mermaid diagram is accepted by real Mermaid: the `mermaid` npm
//! package's own bundle, loaded in headless Chromium, calling `mermaid.parse` on each.
//!
//! Needs Chromium (`WALCHECK_CHROMIUM`, else `chromium` on PATH) and the bundle
//! (`WALCHECK_MERMAID_JS`, else `target/mermaid/node_modules/mermaid/dist/mermaid.min.js`, where
//! .ci/run installs it). Without them the test shows as ignored, naming what to install
//! (build.rs sets `no_chromium`, `no_mermaid_js`), unless `WALCHECK_REQUIRE_BROWSER=1` (set by
//! .ci/run), which makes it run and fail.

use std::path::{Path, PathBuf};

use walcheck::catalogue::{self, Selection};
use walcheck::run;
use walcheck::search::Budget;
use walcheck_traces::render;

use crate::util::{chromium, headless, missing, ROOT};

/// Chromium and the Mermaid bundle, or `Err` saying which is missing.
fn find_tools() -> Result<(PathBuf, PathBuf), String> {
    let bundle = std::env::var_os("WALCHECK_MERMAID_JS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(ROOT).join("target/mermaid/node_modules/mermaid/dist/mermaid.min.js")
        });
    if !bundle.is_file() {
        return Err(missing(format!(
            "no Mermaid bundle at {}",
            bundle.display()
        )));
    }
    Ok((chromium()?, bundle.canonicalize().unwrap()))
}

/// Runs `mermaid.parse` on each diagram in headless Chromium; returns `ok` or the error for each.
fn parse_in_browser(chromium: &Path, bundle: &Path, diagrams: &[String]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("parse.html");
    let html = format!(
        r#"<!doctype html><html><body><pre id="results"></pre>
<script src="file://{bundle}"></script>
<script>
const diagrams = {diagrams};
(async () => {{
  const out = [];
  for (const d of diagrams) {{
    try {{ await mermaid.parse(d); out.push("RESULT ok"); }}
    catch (e) {{ out.push("RESULT error " + String(e && e.message || e).split("\n").join(" ")); }}
  }}
  document.getElementById("results").textContent = out.join("\n") + "\nDONE";
}})();
</script></body></html>"#,
        bundle = bundle.display(),
        diagrams = serde_json::to_string(diagrams).unwrap()
    );
    std::fs::write(&page, html).unwrap();
    let output = headless(chromium, &dir.path().join("profile"), 20_000)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(
        dom.contains("DONE"),
        "the page did not finish: {dom}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let start = dom
        .find(r#"<pre id="results">"#)
        .expect("the results element")
        + r#"<pre id="results">"#.len();
    let results = &dom[start
        ..start
            + dom[start..]
                .find("</pre>")
                .expect("the results element ends")];
    results
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT ").map(str::to_owned))
        .collect()
}

#[test]
#[cfg_attr(
    all(no_chromium, not(no_mermaid_js)),
    ignore = "needs Chromium: apt-get install chromium (or set WALCHECK_CHROMIUM to its path)"
)]
#[cfg_attr(
    all(no_mermaid_js, not(no_chromium)),
    ignore = "needs the mermaid bundle: npm install --prefix target/mermaid mermaid@11.17.2 and export WALCHECK_MERMAID_JS=$PWD/target/mermaid/node_modules/mermaid/dist/mermaid.min.js"
)]
#[cfg_attr(
    all(no_chromium, no_mermaid_js),
    ignore = "needs Chromium and the mermaid bundle: apt-get install chromium, npm install --prefix target/mermaid mermaid@11.17.2 and export WALCHECK_MERMAID_JS=$PWD/target/mermaid/node_modules/mermaid/dist/mermaid.min.js"
)]
fn mermaid_accepts_every_counterexample_diagram() {
    let (chromium, bundle) = match find_tools() {
        Ok(tools) => tools,
        Err(why) => {
            eprintln!("skipping the Mermaid check: {why}");
            return;
        }
    };
    let entries = catalogue::select(&Selection::default()).unwrap();
    let results = run::run_all::<()>(&entries, 1, &Budget::default());
    let mut diagrams: Vec<String> = results
        .iter()
        .filter(|r| r.is_counterexample())
        .map(|r| {
            let system = r.entry.config.info();
            let trace = r.trace.as_ref().unwrap();
            render::mermaid(
                trace,
                system.view.lanes,
                system.view.key_variables,
                &walcheck::report::explanation(trace, &r.entry.config),
            )
        })
        .collect();
    assert!(diagrams.len() >= 20);
    // A broken diagram must be rejected, or the check proves nothing.
    diagrams.push("sequenceDiagram\n    participant a\n    a-->>: broken {\n".to_owned());
    let verdicts = parse_in_browser(&chromium, &bundle, &diagrams);
    assert_eq!(verdicts.len(), diagrams.len(), "{verdicts:?}");
    let (control, ours) = verdicts.split_last().unwrap();
    assert!(
        control.starts_with("error"),
        "Mermaid accepted a broken diagram: {control}"
    );
    for (diagram, verdict) in diagrams.iter().zip(ours) {
        assert_eq!(verdict, "ok", "Mermaid rejected:\n{diagram}");
    }
}
