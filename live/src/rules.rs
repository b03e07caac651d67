//! What a conformance rule gives and the steps every rule ends with: a rule passes when the server
//! did what the model predicts ([`ensure`]) and the trace it observed replays against the model
//! ([`pass`]); it is skipped when it cannot run on this server.

use walcheck_sim::observed::replay_observed;
use walcheck_traces::Trace;

use crate::server::PgServer;
use crate::session::Session;

/// What a check found.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The server did what the model predicts; the detail says what was measured.
    Pass {
        detail: String,
        trace: Option<Box<Trace>>,
    },
    /// The check cannot run on this server; the reason is recorded.
    Skip { reason: String },
}

/// A rule that cannot run on a `--pg-url` server (`what` says why: it stops the server, builds a
/// standby, reads the WAL's files) is skipped there.
pub(crate) fn throwaway_only(server: &PgServer, what: &str) -> Option<Outcome> {
    (!server.is_throwaway()).then(|| Outcome::Skip {
        reason: format!("needs a throwaway server ({what}); not run with --pg-url"),
    })
}

/// `Ok` when `condition` holds; otherwise the failed prediction `message` words.
pub(crate) fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(message())
    }
}

/// The observed trace must replay against the model.
fn replays(trace: &Trace) -> Result<(), String> {
    match replay_observed(trace)? {
        Ok(_) => Ok(()),
        Err(mismatch) => Err(format!("the model does not predict the server: {mismatch}")),
    }
}

/// A pass measured as `detail`, once the trace `session` observed replays against the model.
pub(crate) fn pass(
    session: &Session,
    server: &PgServer,
    rule: &str,
    detail: String,
) -> Result<Outcome, String> {
    let trace = session.trace(rule, server.version_num());
    replays(&trace)?;
    Ok(Outcome::Pass {
        detail,
        trace: Some(Box::new(trace)),
    })
}
