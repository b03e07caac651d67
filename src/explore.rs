//! `walcheck explore`: stateright's Explorer on one system configuration, with a deep link to
//! each counterexample (and witness) our breadth-first checker finds.
//!
//! The Explorer names a state by the path of indices that reaches it: the initial state's index
//! in `init_states()`, then each action's index in `actions()` of the state it is taken in. Its
//! page opens that state at `#/steps/I/A1/A2/...`.

use std::fmt::Debug;
use std::hash::Hash;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::{Duration, Instant};

use stateright::{Checker, Expectation, Model};
use walcheck_properties::system::CheckModel;

use crate::catalogue::{self, SystemConfig, Systems, WithModel};
use crate::reference;
use crate::search::{Budget, Path, Verdict};

/// What a deep link leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The property's id.
    pub property: &'static str,
    /// `always` or `sometimes`.
    pub expectation: &'static str,
    /// `counterexample` (a violated `always`) or `example` (a `sometimes` witness).
    pub what: &'static str,
    /// Actions from the initial state.
    pub steps: usize,
    /// The Explorer fragment: `#/steps/0/3/1`.
    pub fragment: String,
}

/// The configuration `walcheck explore SPEC --faults F --bound K=V...` names: the variant given
/// (the system's first without one), the fault set (default the system's first: `none` for the built-in systems) and the bounds.
pub fn config(spec: &str, faults: Option<&str>, bounds: &[String]) -> Result<SystemConfig, String> {
    let (name, variant) = match spec.split_once(':') {
        Some((name, variant)) => (name, Some(variant)),
        None => (spec, None),
    };
    let system = catalogue::system(name)?;
    let variant = variant.unwrap_or(system.info().variants[0].0);
    let mut config = SystemConfig::new(system, variant, faults.unwrap_or(system.info().faults[0]))?;
    for bound in bounds.iter().flat_map(|b| b.split(',')) {
        let (name, value) = catalogue::split_bound(bound)?;
        config.set_bound(name, value)?;
    }
    Ok(config)
}

/// The address to serve on: `addr` resolved, refused unless it is a loopback address or
/// `allow_remote` is given, and refused when it cannot be bound (port 0 included: the printed
/// links need the port).
pub fn address(addr: &str, allow_remote: bool) -> Result<SocketAddr, String> {
    let resolved: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("--addr {addr:?} is not HOST:PORT: {e}"))?
        .collect();
    let first = *resolved
        .first()
        .ok_or_else(|| format!("--addr {addr:?} resolves to no address"))?;
    if first.port() == 0 {
        return Err(format!(
            "--addr {addr:?} needs a port above 0 (the printed links name it)"
        ));
    }
    if !allow_remote && !first.ip().is_loopback() {
        return Err(format!(
            "--addr {addr:?} is not a loopback address; the Explorer lets anyone who reaches it \
             drive the checker: pass --allow-remote to serve it there anyway"
        ));
    }
    // stateright's server panics when it cannot bind: find that out first and say it in one line.
    TcpListener::bind(first).map_err(|e| format!("cannot listen on {first}: {e}"))?;
    Ok(first)
}

/// The deep links of `config`'s properties: one per counterexample or witness found within
/// `budget`, in the model's property order. `U`: the binary's own systems ([`Systems`]).
pub fn links<U: Systems>(config: &SystemConfig, budget: &Budget) -> Vec<Link> {
    config.with_model::<U, _>(Links(budget))
}

/// [`links`] on the model of a configuration.
struct Links<'a>(&'a Budget);

impl WithModel for Links<'_> {
    type Output = Vec<Link>;
    fn call<M>(self, model: M) -> Vec<Link>
    where
        M: CheckModel,
    {
        links_of(&model, self.0)
    }
}

fn links_of<M>(model: &M, budget: &Budget) -> Vec<Link>
where
    M: Model,
    M::State: Hash + Eq + Clone,
    M::Action: Clone + PartialEq,
{
    let mut links = Vec::new();
    for property in model.properties() {
        let (expectation, found, what) = match property.expectation {
            Expectation::Always => ("always", Verdict::Violated, "counterexample"),
            Expectation::Sometimes => ("sometimes", Verdict::Holds, "example"),
            Expectation::Eventually => continue,
        };
        let Ok(outcome) = reference::check(model, &property, budget) else {
            continue;
        };
        if outcome.verdict != found {
            continue;
        }
        let Some(path) = outcome.path else { continue };
        links.push(Link {
            property: property.name,
            expectation,
            what,
            steps: path.steps.len(),
            fragment: fragment(model, &path),
        });
    }
    links
}

/// The Explorer fragment of `path`: `#/steps/` and its indices.
pub fn fragment<M>(model: &M, path: &Path<M::State, M::Action>) -> String
where
    M: Model,
    M::State: PartialEq,
    M::Action: PartialEq,
{
    let init = model
        .init_states()
        .iter()
        .position(|s| *s == path.init)
        .expect("a path starts at an initial state");
    let mut fragment = format!("#/steps/{init}");
    let mut state = &path.init;
    let mut actions = Vec::new();
    for (action, next) in &path.steps {
        actions.clear();
        model.actions(state, &mut actions);
        let index = actions
            .iter()
            .position(|a| a == action)
            .expect("a path takes enabled actions");
        fragment.push_str(&format!("/{index}"));
        state = next;
    }
    fragment
}

/// The budget for finding the links: a search that runs out gives no link, not a wait.
pub fn link_budget() -> Budget {
    Budget {
        max_states: Some(2_000_000),
        deadline: Some(Instant::now() + Duration::from_secs(30)),
        ..Budget::default()
    }
}

/// Serves the Explorer on `addr` until the process ends. `U`: the binary's own systems.
pub fn serve<U: Systems>(config: &SystemConfig, addr: SocketAddr) {
    config.with_model::<U, _>(Serve(addr));
}

/// [`serve`] on the model of a configuration.
struct Serve(SocketAddr);

impl WithModel for Serve {
    type Output = ();
    fn call<M>(self, model: M)
    where
        M: CheckModel,
    {
        let _ = model.checker().serve(self.0).is_done();
    }
}
