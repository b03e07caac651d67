//! The benchmarks' baseline: two-phase commit, one transaction manager and N resource managers,
//! as a `stateright::Model` of our own.
//!
//! Written from the classic description (Gray and Lamport, "Consensus on Transaction Commit",
//! 2006, §3 and its TLA+ specification `TwoPhase`): resource managers (RMs) start `working`,
//! each may prepare and tell the transaction manager (TM) so, or abort on its own; the TM commits
//! once every RM has prepared, or aborts at any time while it is still deciding; RMs follow the
//! TM's broadcast decision. Messages are a set: sent once, never lost, read any number of times.
//! It is the model stateright's own book and benchmarks use, and it is lean (a few small arrays
//! and a set of messages per state), so walcheck's states/s read as a ratio to it.
//!
//! Not part of the check catalogue: it models no PostgreSQL or CDC code, `walcheck list` does not
//! show it, and `walcheck check` never runs it. The benchmarks (`benches/`) and the
//! report (`examples/bench_report.rs`) measure it with the same harness as the
//! catalogue's models ([`crate::bench`]).

use std::collections::BTreeSet;

use stateright::{Model, Property};

/// A resource manager's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RmState {
    Working,
    Prepared,
    Committed,
    Aborted,
}

/// The transaction manager's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TmState {
    Init,
    Committed,
    Aborted,
}

/// A message: an RM's `Prepared`, or the TM's broadcast decision.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Message {
    Prepared { rm: usize },
    Commit,
    Abort,
}

/// One state of the protocol.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State {
    pub rm_state: Vec<RmState>,
    pub tm_state: TmState,
    /// Which RMs the TM has received `Prepared` from.
    pub tm_prepared: Vec<bool>,
    /// Every message sent so far.
    pub msgs: BTreeSet<Message>,
}

/// The protocol's steps.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// The TM receives RM `rm`'s `Prepared`.
    TmRcvPrepared(usize),
    /// The TM decides to commit (every RM has prepared).
    TmCommit,
    /// The TM decides to abort.
    TmAbort,
    /// RM `rm` prepares and says so.
    RmPrepare(usize),
    /// RM `rm` aborts on its own while working.
    RmChooseToAbort(usize),
    /// RM `rm` receives the TM's `Commit`.
    RmRcvCommitMsg(usize),
    /// RM `rm` receives the TM's `Abort`.
    RmRcvAbortMsg(usize),
}

/// The resource managers the benchmarks and the report use: 6 gives 50,816 states, the size of
/// the catalogue's largest holding configurations (48,987 and 67,584 states).
pub const RM_COUNT: usize = 6;

/// Two-phase commit with `rm_count` resource managers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TwoPhaseCommit {
    pub rm_count: usize,
}

impl TwoPhaseCommit {
    /// No RM has committed while another has aborted.
    pub fn consistent(state: &State) -> bool {
        let committed = state.rm_state.contains(&RmState::Committed);
        let aborted = state.rm_state.contains(&RmState::Aborted);
        !(committed && aborted)
    }
}

impl Model for TwoPhaseCommit {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            rm_state: vec![RmState::Working; self.rm_count],
            tm_state: TmState::Init,
            tm_prepared: vec![false; self.rm_count],
            msgs: BTreeSet::new(),
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if state.tm_state == TmState::Init {
            if state.tm_prepared.iter().all(|p| *p) {
                actions.push(Action::TmCommit);
            }
            actions.push(Action::TmAbort);
        }
        for rm in 0..self.rm_count {
            if state.tm_state == TmState::Init && state.msgs.contains(&Message::Prepared { rm }) {
                actions.push(Action::TmRcvPrepared(rm));
            }
            if state.rm_state[rm] == RmState::Working {
                actions.push(Action::RmPrepare(rm));
                actions.push(Action::RmChooseToAbort(rm));
            }
            if state.msgs.contains(&Message::Commit) {
                actions.push(Action::RmRcvCommitMsg(rm));
            }
            if state.msgs.contains(&Message::Abort) {
                actions.push(Action::RmRcvAbortMsg(rm));
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut state = last.clone();
        match action {
            Action::TmRcvPrepared(rm) => state.tm_prepared[rm] = true,
            Action::TmCommit => {
                state.tm_state = TmState::Committed;
                state.msgs.insert(Message::Commit);
            }
            Action::TmAbort => {
                state.tm_state = TmState::Aborted;
                state.msgs.insert(Message::Abort);
            }
            Action::RmPrepare(rm) => {
                state.rm_state[rm] = RmState::Prepared;
                state.msgs.insert(Message::Prepared { rm });
            }
            Action::RmChooseToAbort(rm) => state.rm_state[rm] = RmState::Aborted,
            Action::RmRcvCommitMsg(rm) => state.rm_state[rm] = RmState::Committed,
            Action::RmRcvAbortMsg(rm) => state.rm_state[rm] = RmState::Aborted,
        }
        Some(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("consistent", |_, state: &State| {
                TwoPhaseCommit::consistent(state)
            }),
            Property::sometimes("abort-agreement", |_, state: &State| {
                state.rm_state.iter().all(|s| *s == RmState::Aborted)
            }),
            Property::sometimes("commit-agreement", |_, state: &State| {
                state.rm_state.iter().all(|s| *s == RmState::Committed)
            }),
        ]
    }
}
