//! Helped rounds: on several threads, helpers make runs of parents' successors ahead while the
//! round's thread stores them in the one order a single thread would.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use stateright::Model;

use super::level::{Levels, Parents};
use super::report::Error;
use super::space::{Recording, Space, Totals};
use super::successors::{make, settle_all, Made, Storing};
use crate::fingerprint::Fingerprinter;
use crate::search::Limit;

/// Parents whose successors one thread makes at a time in a helped round ([`expand_store_helped`]).
/// Tests make runs of two, so that even their smallest rounds are helped.
pub(super) const RUN_PARENTS: usize = if cfg!(test) { 2 } else { 64 };

/// The successors of a run of parents, made by whichever thread took the run.
pub(super) struct Run<S, F> {
    /// Per parent: its index, the fairness classes enabled in it, and how many successors it made.
    pub(super) parents: Vec<(u32, u32, usize)>,
    pub(super) made: Vec<Made<S, F>>,
    /// What stopped the making at the parent after the last one, if anything did: an error, or
    /// the model's panic, raised again by the storing thread once it has looked up the
    /// successors made before it.
    pub(super) ended: Option<Ended>,
}

/// Why the making of a run's successors ended before its last parent.
pub(super) enum Ended {
    Error(Error),
    /// The model panicked while making the successors of state `parent`, after those the run
    /// ends with.
    Panic {
        parent: u32,
        payload: Box<dyn std::any::Any + Send>,
    },
}

impl<S, F> Default for Run<S, F> {
    fn default() -> Self {
        Run {
            parents: Vec::new(),
            made: Vec::new(),
            ended: None,
        }
    }
}

impl<S, F> Run<S, F> {
    /// Empties the run, keeping its buffers for the next one.
    pub(super) fn emptied(mut self) -> Self {
        self.parents.clear();
        self.made.clear();
        self.ended = None;
        self
    }
}

/// The runs of a helped round: made ones waiting to be stored, in order, and emptied ones for
/// the threads to fill again (made on one thread and freed on another, each run would
/// otherwise go back to the system and be faulted in again). The emptied ones outlive the round.
pub(super) struct Runs<S, F> {
    pub(super) made: Vec<Option<Run<S, F>>>,
    pub(super) emptied: Vec<Run<S, F>>,
}

/// Sets its flag when dropped: the storing thread's way to tell the helpers to stop taking runs,
/// whether it returned or panicked.
pub(super) struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Makes the successors of run `r` of `parents` (the round's first stored at index `first`). A
/// panic of the model ends the run, as an error does, with the successors made before it kept.
pub(super) fn make_run<M, P>(
    (model, fingerprinter): (&M, &P),
    (first, parents): (u32, &Parents<'_, M::State>),
    r: usize,
    recording: Option<&Recording<'_, M>>,
    mut run: Run<M::State, P::Print>,
) -> Run<M::State, P::Print>
where
    M: Model,
    P: Fingerprinter<M::State>,
{
    let mut actions = Vec::new();
    let start = r * RUN_PARENTS;
    let end = (start + RUN_PARENTS).min(parents.len());
    for offset in start..end {
        let parent = first + offset as u32;
        let before = run.made.len();
        let each = |one| {
            run.made.push(one);
            Ok(ControlFlow::<std::convert::Infallible>::Continue(()))
        };
        let machine = (model, fingerprinter);
        let making = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parents.with(offset, |state| {
                make(machine, (parent, state), recording, &mut actions, each)
            })
        }));
        match making {
            Ok(Ok(ControlFlow::Continue(enabled))) => {
                run.parents.push((parent, enabled, run.made.len() - before));
            }
            Ok(Ok(ControlFlow::Break(never))) => match never {},
            Ok(Err(error)) => {
                run.ended = Some(Ended::Error(error));
                break;
            }
            Err(payload) => {
                run.ended = Some(Ended::Panic { parent, payload });
                break;
            }
        }
    }
    run
}

/// [`expand_store`] with helpers, for a round given `threads` threads: the threads take runs of
/// [`RUN_PARENTS`] parents in turn and make their successors, and this thread alone looks them
/// up and stores them, run after run in order, as [`expand_store`] does. The table and the level
/// being built are only ever touched by this thread, so what is stored, and every count, is
/// what one thread stores. Returns the limit that stopped it, if one did; `pool` holds emptied
/// runs from one round to the next.
///
/// A panic of the model while making a parent's successors reaches this thread's caller, with
/// its payload, once every successor made before it is looked up; a limit or an error (a
/// collision, say) they meet comes first, as on one thread. One exception: once the table is
/// past the caches, one thread makes a parent's successors before it looks up the previous
/// parent's, so its panic comes before a limit or an error that those, or the successors made
/// before the panic, would meet, where a helped round meets the limit or error. No run after
/// one whose making a panic or an error ended is made; runs past a limit may already be, and a
/// panic there is dropped (though the panic hook has printed its message).
///
/// A packed block's parents are decoded by the threads that make their successors, a parent at a
/// time, as on one thread: a panic of the codec's `decode` is met as the model's would be, at
/// that parent, and one thread's exception above holds for it too: levels are packed only in
/// large searches, whose table is mostly past the caches.
///
/// [`expand_store`]: super::expand::expand_store
pub(super) fn expand_store_helped<M, P>(
    space: &mut Space<'_, M, P>,
    levels: Levels<'_, M::State>,
    (first, parents, verify): (usize, Parents<'_, M::State>, bool),
    recording: Option<&Recording<'_, M>>,
    pool: &mut Vec<Run<M::State, P::Print>>,
    storing: Storing<'_, M::State>,
    (totals, threads): (&mut Totals, usize),
) -> Result<Option<Limit>, Error>
where
    M: Model + Sync,
    M::State: Eq + Clone + Send + Sync,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
{
    let count = parents.len().div_ceil(RUN_PARENTS);
    let helping = Helping {
        machine: (space.model, space.fingerprinter),
        first: levels.0.start + first as u32,
        parents: &parents,
        recording,
        count,
        runs: Mutex::new(Runs {
            made: (0..count).map(|_| None).collect(),
            emptied: std::mem::take(pool),
        }),
        ready: Condvar::new(),
        claimed: AtomicUsize::new(0),
        done: AtomicBool::new(false),
        ended_at: AtomicUsize::new(usize::MAX),
    };
    let stored = std::thread::scope(|scope| {
        for _ in 1..threads.min(count) {
            scope.spawn(|| while helping.make_next() {});
        }
        let _done = SetOnDrop(&helping.done);
        let taking = (&|r| helping.next_run(r), &|| helping.lock());
        store_runs(space, levels, (verify, count), taking, storing, totals)
    });
    *pool = helping.into_pool();
    stored
}

/// A helped round as its threads share it: what they make runs from, which runs are taken,
/// the runs made and waiting to be stored, and when to stop taking them.
struct Helping<'a, M: Model, P: Fingerprinter<M::State>> {
    machine: (&'a M, &'a P),
    /// The index of the round's first parent.
    first: u32,
    parents: &'a Parents<'a, M::State>,
    recording: Option<&'a Recording<'a, M>>,
    /// Runs in the round.
    count: usize,
    runs: Mutex<Runs<M::State, P::Print>>,
    /// Notified each time a run made is handed over.
    ready: Condvar,
    /// Runs taken so far.
    claimed: AtomicUsize,
    /// Raised once the storing thread is done with the round ([`SetOnDrop`]).
    done: AtomicBool,
    /// The first run whose making an error or a panic of the model ended: no run after it is
    /// stored, so none after it is made (nor calls the model again).
    ended_at: AtomicUsize,
}

impl<M, P> Helping<'_, M, P>
where
    M: Model + Sync,
    M::State: Send + Sync,
    P: Fingerprinter<M::State>,
{
    /// The runs, whatever a thread that panicked holding them left.
    fn lock(&self) -> MutexGuard<'_, Runs<M::State, P::Print>> {
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the next run not yet taken and makes it; false once there is none to make.
    fn make_next(&self) -> bool {
        let r = self.claimed.fetch_add(1, Ordering::Relaxed);
        if r >= self.count
            || self.done.load(Ordering::Relaxed)
            || r > self.ended_at.load(Ordering::Relaxed)
        {
            return false;
        }
        let run = self.lock().emptied.pop().unwrap_or_default();
        let at = (self.first, self.parents);
        let run = make_run(self.machine, at, r, self.recording, run);
        if run.ended.is_some() {
            self.ended_at.fetch_min(r, Ordering::Relaxed);
        }
        self.lock().made[r] = Some(run);
        self.ready.notify_all();
        true
    }

    /// Run `r`, made, for the storing thread: made here if no thread has taken it yet, or
    /// waited for. Every run taken is made and handed over, a model's panic included, up to the
    /// first whose making ended early, past which the storing thread asks for none: the run it
    /// waits for always comes.
    fn next_run(&self, r: usize) -> Run<M::State, P::Print> {
        loop {
            let mut held = self.lock();
            if self.claimed.load(Ordering::Relaxed) < self.count && held.made[r].is_none() {
                drop(held);
                self.make_next();
                continue;
            }
            loop {
                if let Some(run) = held.made[r].take() {
                    return run;
                }
                held = self
                    .ready
                    .wait(held)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
    }

    /// The round's runs, emptied, for the next round.
    fn into_pool(self) -> Vec<Run<M::State, P::Print>> {
        let Runs { made, mut emptied } = self
            .runs
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        emptied.extend(made.into_iter().flatten().map(Run::emptied));
        emptied
    }
}

/// Stores runs `0..count` of a helped round, taken in order from `next_run`, each parent's
/// successors as [`settle`] does, with the next parent's slots fetched ahead while a parent's
/// successors are looked up; emptied runs go back through `lock`. Returns the limit that
/// stopped it, if one did, or the error that ended a run's making; raises again the model's
/// panic that ended one.
///
/// [`settle`]: super::successors::settle
pub(super) fn store_runs<'r, M, P, N, L>(
    space: &mut Space<'_, M, P>,
    (current, next, spare): Levels<'_, M::State>,
    (verify, count): (bool, usize),
    (next_run, lock): (&N, &L),
    mut storing: Storing<'_, M::State>,
    totals: &mut Totals,
) -> Result<Option<Limit>, Error>
where
    M: Model,
    M::State: Eq + Clone + 'r,
    M::Action: Clone,
    P: Fingerprinter<M::State>,
    P::Print: 'r,
    N: Fn(usize) -> Run<M::State, P::Print>,
    L: Fn() -> MutexGuard<'r, Runs<M::State, P::Print>>,
{
    for r in 0..count {
        let mut run = next_run(r);
        let fetch = |made: &[Made<M::State, P::Print>], space: &Space<'_, M, P>| {
            for print in made.iter().filter_map(|one| one.print) {
                space.fetch_ahead(print);
            }
        };
        let sizes = run.parents.iter().map(|&(_, _, n)| n);
        let made = &run.made[..];
        fetch(&made[..sizes.clone().next().unwrap_or(0)], space);
        // The successors of the parents before this one.
        let mut before = 0;
        for (&(parent, enabled, n), following) in run.parents.iter().zip(sizes.skip(1).chain([0])) {
            fetch(&made[before + n..before + n + following], space);
            let these = &made[before..before + n];
            before += n;
            let levels = (current, &mut *next, &mut *spare);
            if let Some(limit) =
                settle_all(space, levels, (parent, verify), these, &mut storing, totals)?
            {
                return Ok(Some(limit));
            }
            if let Some(graph) = storing.graph.as_deref_mut() {
                graph.end_state(enabled);
            }
        }
        match run.ended.take() {
            Some(Ended::Error(error)) => return Err(error),
            Some(Ended::Panic { parent, payload }) => {
                // The successors made before the panic are looked up first, as on one thread.
                let levels = (current, &mut *next, &mut *spare);
                let rest = &made[before..];
                if let Some(limit) =
                    settle_all(space, levels, (parent, verify), rest, &mut storing, totals)?
                {
                    return Ok(Some(limit));
                }
                std::panic::resume_unwind(payload)
            }
            None => {
                // Emptied (its successors dropped) before the lock is taken: the helpers take
                // and hand over runs under it.
                let run = run.emptied();
                lock().emptied.push(run);
            }
        }
    }
    Ok(None)
}
