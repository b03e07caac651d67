//! Progress lines for `walcheck check` on a terminal: one indicatif line per running search with
//! its states, unique states, depth, states per second and elapsed time, cleared when the entry
//! ends so that the report that follows is the same as without them.

use std::sync::Mutex;
use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::catalogue::Entry;
use crate::run::{CheckResult, Observer};
use crate::search::Progress;

/// Draws one progress line per running entry on stderr.
pub struct Lines {
    multi: MultiProgress,
    style: ProgressStyle,
    running: Mutex<Vec<Option<(ProgressBar, Instant)>>>,
}

impl Lines {
    /// Lines for a run of `entries` entries; plain when `color` is false (`NO_COLOR`).
    pub fn new(entries: usize, color: bool) -> Lines {
        let template = if color {
            "{spinner:.cyan} {prefix:.bold} {msg} {elapsed:.dim}"
        } else {
            "{spinner} {prefix} {msg} {elapsed}"
        };
        let style = ProgressStyle::with_template(template).expect("the template is valid");
        Lines {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10)),
            style,
            running: Mutex::new(vec![None; entries]),
        }
    }

    /// Whether progress lines belong on this run: stdout is a terminal and the output is text.
    /// `NO_COLOR` (any non-empty value) asks for them without colour.
    pub fn wanted(json: bool) -> Option<bool> {
        use std::io::IsTerminal;
        if json || !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
            return None;
        }
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Some(!no_color)
    }
}

impl Lines {
    /// A line for the search of entry `index`, `what` it decides.
    fn start(&self, index: usize, entry: &Entry, what: String) {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(self.style.clone());
        bar.set_prefix(format!(
            "{}:{} faults={} {what}",
            entry.system(),
            entry.config.variant(),
            entry.config.faults(),
        ));
        let started = Instant::now();
        bar.set_message(message(Progress::default(), started));
        self.running.lock().expect("no panics holding the lock")[index] = Some((bar, started));
    }
}

fn message(p: Progress, started: Instant) -> String {
    let seconds = started.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 {
        p.states as f64 / seconds
    } else {
        0.0
    };
    format!(
        "states {}, unique {}, depth {}, {:.0} states/s",
        p.states, p.unique_states, p.max_depth, rate
    )
}

impl Observer for Lines {
    fn started(&self, index: usize, entry: &Entry) {
        self.start(index, entry, entry.property.id.to_owned());
    }

    fn started_search(&self, index: usize, entry: &Entry, entries: usize) {
        if entries == 1 {
            self.started(index, entry);
        } else {
            self.start(index, entry, format!("{entries} checks"));
        }
    }

    fn progress(&self, index: usize, progress: Progress) {
        let running = self.running.lock().expect("no panics holding the lock");
        if let Some((bar, started)) = &running[index] {
            bar.set_message(message(progress, *started));
            bar.tick();
        }
    }

    fn finished(&self, index: usize, _: &CheckResult) {
        let done = self.running.lock().expect("no panics holding the lock")[index].take();
        if let Some((bar, _)) = done {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }
}
