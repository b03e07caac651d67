//! `walcheck explore` in a real browser: the Explorer page lists the system's properties, and the
//! deep link printed for a counterexample opens the violating state, shown as named variables.
//!
//! Needs Chromium (`WALCHECK_CHROMIUM`, else `chromium` on PATH). Without it the test shows as
//! ignored, naming what to install (build.rs sets `no_chromium`), unless
//! `WALCHECK_REQUIRE_BROWSER=1` (set by .ci/run), which makes it run and fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use stateright::Model;
use walcheck::run;
use walcheck::search::{Budget, Verdict};
use walcheck_systems::electric_flush::{ElectricFlush, ElectricFlushSystem};

use crate::util::{chromium, headless, select, walcheck_command};

/// A child process killed (and reaped) when dropped, so no test leaves a server behind.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `port` answers `GET /.status`, for at most 30 s.
fn wait_for_server(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let _ = stream.write_all(b"GET /.status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
            let mut response = String::new();
            let _ = stream.read_to_string(&mut response);
            if response.contains("\"properties\"") {
                return;
            }
        }
        assert!(Instant::now() < deadline, "the Explorer never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The page at `url` after its scripts ran, as headless Chromium serialises it; at most 90 s.
fn dump_dom(chromium: &Path, url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let child = headless(chromium, profile.path(), 15_000)
        .arg(url)
        .stdout(out.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut child = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "chromium did not finish {url}");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(out.path()).unwrap()
}

/// Text content as the DOM serialiser escapes it.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
#[cfg_attr(
    no_chromium,
    ignore = "needs Chromium: apt-get install chromium (or set WALCHECK_CHROMIUM to its path)"
)]
fn the_explorer_lists_properties_and_deep_links_open_the_violating_state() {
    let chromium = match chromium() {
        Ok(chromium) => chromium,
        Err(why) => {
            eprintln!("skipping the Explorer browser test: {why}");
            return;
        }
    };
    let port = free_port();
    let child = walcheck_command(&["explore", "electric-flush:v1.4.15", "--faults", "none"])
        .arg("--addr")
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("walcheck explore starts");
    let mut server = Killed(child);

    // The links come before the server starts; read until the one for the property we follow.
    let property = "no-lost-flush-notification";
    let stdout = BufReader::new(server.0.stdout.take().unwrap());
    let mut printed = Vec::new();
    let mut link = None;
    for line in stdout.lines() {
        let line = line.unwrap();
        printed.push(line.clone());
        if line.starts_with(&format!("counterexample always {property} ")) {
            link = line.split(": ").nth(1).map(str::to_owned);
            break;
        }
    }
    let link = link.unwrap_or_else(|| panic!("no link for {property} in {printed:?}"));
    assert!(
        link.starts_with(&format!("http://127.0.0.1:{port}/#/steps/0/")),
        "{link}"
    );
    wait_for_server(port);

    // The configuration explored: the catalogue's, every bound at its default.
    let entry = select(&["electric-flush:v1.4.15"], Some("none"), &[])
        .into_iter()
        .find(|e| e.property.id == property && e.config.non_default_bounds().is_empty())
        .unwrap();

    // The front page lists every property of the system.
    let page = dump_dom(&chromium, &format!("http://127.0.0.1:{port}/"));
    let model = ElectricFlush::of(&ElectricFlushSystem, &entry.config.config);
    for p in model.properties() {
        assert!(
            page.contains(p.name),
            "the page does not list {}:\n{page}",
            p.name
        );
    }

    // The deep link opens the state our checker reports as the violation.
    let result = run::run_entry::<()>(&entry, &Budget::default());
    assert_eq!(result.verdict, Verdict::Violated);
    let trace = result.trace.unwrap();
    let violating = &trace.steps.last().unwrap().vars;
    let shown = dump_dom(&chromium, &link);
    let state_at = shown
        .find("Current State")
        .expect("the state panel is shown");
    let panel = &shown[state_at..];
    for (name, value) in violating {
        let line = escaped(&format!("{name}: {value}"));
        assert!(
            panel.contains(&line),
            "the deep link does not show {line:?}:\n{panel}"
        );
    }
    // The path of actions shown is the counterexample's, as traces name the actions.
    for step in &trace.steps[1..] {
        let action = escaped(step.action.as_ref().unwrap());
        assert!(shown.contains(&action), "the path lacks {action}");
    }
}
