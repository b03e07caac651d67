//! The check catalogue: every (system, variant, faults, knobs, property) walcheck checks by
//! default, with the verdict upstream code leads us to expect and the upstream reason.
//!
//! It is the project's regression suite: `walcheck check` with no SPEC runs all of it, and exits
//! 1 when a verdict differs from its expectation. Selecting with SPEC, `--faults` and `--bound`
//! narrows or reconfigures it; expectations are a function of the configuration, so a
//! reconfigured entry still has one.

use std::fmt::{self, Debug, Display};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use stateright::Model;
use walcheck_properties::system::{BoundValue, Live, PropertyInfo, System, Variables};
use walcheck_systems::electric_flush::ElectricFlushSystem;
use walcheck_systems::olake_bootstrap::OlakeBootstrapSystem;
use walcheck_systems::olake_sync::OlakeSyncSystem;
use walcheck_traces::Header;

pub use walcheck_properties::system::{Config, SystemInfo};

use crate::checker::Verdict;

/// A checkable system behind a trait object: what the registry holds. Every [`System`] is one;
/// a crate never implements it by hand.
pub trait AnySystem: Send + Sync {
    /// The system's declaration.
    fn info(&self) -> &'static SystemInfo;

    /// [`System::expected`].
    fn expected(
        &self,
        config: &Config,
        property: &PropertyInfo,
    ) -> Option<Result<(Verdict, &'static str), String>>;

    /// The model of `config`, ready for any of walcheck's checks.
    fn checkable(&self, config: &Config) -> Box<dyn Checkable>;
}

impl<S: System> AnySystem for S {
    fn info(&self) -> &'static SystemInfo {
        System::info(self)
    }

    fn expected(
        &self,
        config: &Config,
        property: &PropertyInfo,
    ) -> Option<Result<(Verdict, &'static str), String>> {
        System::expected(self, config, property)
    }

    fn checkable(&self, config: &Config) -> Box<dyn Checkable> {
        Box::new(Erased(self.model(config)))
    }
}

/// The systems built into walcheck, in catalogue order.
pub const BUILT_IN: [&dyn AnySystem; 3] = [
    &OlakeBootstrapSystem,
    &ElectricFlushSystem,
    &OlakeSyncSystem,
];

static SYSTEMS: OnceLock<Vec<&'static dyn AnySystem>> = OnceLock::new();

/// Makes `extra` known beside the built-in systems (after them, in catalogue order), for the
/// rest of the process: what [`crate::cli::main`] does with the systems a crate gives it. Call
/// it once, before anything reads the registry; a name given twice, or a second call, is a
/// one-line error.
pub fn register(extra: &[&'static dyn AnySystem]) -> Result<(), String> {
    let mut all: Vec<&'static dyn AnySystem> = BUILT_IN.to_vec();
    for system in extra {
        let name = system.info().name;
        if all.iter().any(|s| s.info().name == name) {
            return Err(format!("two systems are called {name:?}"));
        }
        all.push(*system);
    }
    SYSTEMS
        .set(all)
        .map_err(|_| "the systems were already registered".to_owned())
}

/// Every system walcheck knows: the built-in ones, then any [`register`]ed.
pub fn systems() -> &'static [&'static dyn AnySystem] {
    SYSTEMS.get_or_init(|| BUILT_IN.to_vec())
}

/// The system called `name`, or a one-line error listing the systems.
pub fn system(name: &str) -> Result<&'static dyn AnySystem, String> {
    systems()
        .iter()
        .copied()
        .find(|s| s.info().name == name)
        .ok_or_else(|| {
            let names: Vec<_> = systems().iter().map(|s| s.info().name).collect();
            format!("unknown system {name:?}; systems are {}", names.join(", "))
        })
}

/// The configuration a trace header names, or a one-line error saying which part is unknown.
pub fn config_from_header(header: &Header) -> Result<SystemConfig, String> {
    let mut config = SystemConfig::new(system(&header.system)?, &header.variant, &header.faults)?;
    for (name, value) in &header.config {
        // A simulated trace also carries the simulator's workload knobs.
        config.set_knob(name, value)?;
    }
    Ok(config)
}

/// A configuration of one registered system.
#[derive(Clone)]
pub struct SystemConfig {
    system: &'static dyn AnySystem,
    pub config: Config,
}

impl PartialEq for SystemConfig {
    fn eq(&self, other: &SystemConfig) -> bool {
        self.info().name == other.info().name && self.config == other.config
    }
}

impl Eq for SystemConfig {}

impl Hash for SystemConfig {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.info().name.hash(state);
        self.config.hash(state);
    }
}

impl Debug for SystemConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:?}", self.info().name, self.config)
    }
}

/// A computation over any of walcheck's models (a closure cannot be generic over them), run by
/// [`SystemConfig::with_model`] on the model of a configuration.
pub trait WithModel {
    type Output;
    fn call<M>(self, model: M) -> Self::Output
    where
        M: Model + Live + Send + Sync + 'static,
        M::State: Hash + Eq + Clone + Debug + Variables + Send + Sync + 'static,
        M::Action: Clone + PartialEq + Debug + Display + Send + Sync + 'static;
}

/// A [`WithModel`] computation that a model behind a trait object can run: one listed in
/// [`checkable!`], where each gets its method of [`Checkable`].
pub trait Dispatch: WithModel {
    fn dispatch(self, model: Box<dyn Checkable>) -> Self::Output;
}

/// A model behind a trait object: each of walcheck's computations over a model, instantiated
/// for that model's type when a [`System`] is made a [`AnySystem`].
struct Erased<M>(M);

macro_rules! checkable {
    ($($method:ident($job:ty) -> $out:ty;)*) => {
        /// A configuration's model with its type erased: every computation of [`Dispatch`].
        pub trait Checkable {
            $(
                #[doc(hidden)]
                fn $method(self: Box<Self>, job: $job) -> $out;
            )*
        }

        impl<M> Checkable for Erased<M>
        where
            M: Model + Live + Send + Sync + 'static,
            M::State: Hash + Eq + Clone + Debug + Variables + Send + Sync + 'static,
            M::Action: Clone + PartialEq + Debug + Display + Send + Sync + 'static,
        {
            $(
                fn $method(self: Box<Self>, job: $job) -> $out {
                    job.call(self.0)
                }
            )*
        }

        $(
            impl Dispatch for $job {
                fn dispatch(self, model: Box<dyn Checkable>) -> $out {
                    model.$method(self)
                }
            }
        )*
    };
}

checkable! {
    search(crate::run::SearchEntry<'_>) -> crate::run::Searched;
    search_group(crate::run::Group<'_>) -> crate::run::Grouped;
    replay(crate::run::Replay<'_>) -> crate::run::Replayed;
    check_against(crate::run::CheckAgainst<'_>) -> Result<(), String>;
    links(crate::explore::Links<'_>) -> Vec<crate::explore::Link>;
    serve(crate::explore::Serve) -> ();
    explore(crate::bench::Explore<'_>) -> crate::bench::Explored;
    find(crate::bench::Find<'_>) -> usize;
}

impl SystemConfig {
    /// Calls `f` with the model of this configuration: the one place that turns a configuration
    /// into its model.
    pub fn with_model<F: Dispatch>(&self, f: F) -> F::Output {
        f.dispatch(self.system.checkable(&self.config))
    }

    /// `system`'s variant and fault set named, every bound at its default, or a one-line error
    /// naming what is unknown.
    pub fn new(
        system: &'static dyn AnySystem,
        variant: &str,
        faults: &str,
    ) -> Result<SystemConfig, String> {
        Ok(SystemConfig {
            system,
            config: Config::new(system.info(), variant, faults)?,
        })
    }

    /// The system's description.
    pub fn info(&self) -> &'static SystemInfo {
        self.system.info()
    }

    pub fn variant(&self) -> &'static str {
        self.config.variant
    }

    pub fn faults(&self) -> &'static str {
        self.config.faults
    }

    /// Every bound's value, in the system's order (quiet bounds only when set).
    pub fn bounds(&self) -> Vec<(&'static str, BoundValue)> {
        self.config.bounds(self.info())
    }

    /// The bounds whose value is not the default, as `name=value`.
    pub fn non_default_bounds(&self) -> Vec<String> {
        self.config.non_default_bounds(self.info())
    }

    /// Sets a bound from its text, or says in one line why not.
    pub fn set_bound(&mut self, name: &str, value: &str) -> Result<(), String> {
        self.config.set_bound(self.system.info(), name, value)
    }

    /// Sets a bound, or a knob only traces carry (the simulator's workload), from its text.
    pub fn set_knob(&mut self, name: &str, value: &str) -> Result<(), String> {
        self.config.set_knob(self.system.info(), name, value)
    }

    /// Whether `property` applies to this configuration (a witness's knob or fault is there).
    pub fn applies(&self, property: &PropertyInfo) -> bool {
        self.config.meets(property.needs)
    }

    /// The verdict expected for `property`, and why: the system's table where it keeps one;
    /// otherwise checked plainly (`always` and `eventually` hold, `sometimes` witnesses are
    /// reached). A table without a row for `property` is a one-line error.
    pub fn expected(&self, property: &PropertyInfo) -> Result<(Verdict, &'static str), String> {
        match self.system.expected(&self.config, property) {
            Some(row) => row,
            None => Ok((
                Verdict::Holds,
                "no expectation table: every property should hold",
            )),
        }
    }
}

/// One check: a configuration, a property, and what is expected of it.
#[derive(Clone, Debug)]
pub struct Entry {
    pub config: SystemConfig,
    pub property: &'static PropertyInfo,
    pub expected: Verdict,
    pub reason: &'static str,
}

impl Entry {
    pub fn system(&self) -> &'static str {
        self.config.info().name
    }
}

/// `--bound NAME=VALUE` split at its first `=`, or a one-line error.
pub fn split_bound(bound: &str) -> Result<(&str, &str), String> {
    bound
        .split_once('=')
        .filter(|(n, _)| !n.is_empty())
        .ok_or_else(|| {
            format!("malformed --bound {bound:?}: expected NAME=VALUE, e.g. statements=3")
        })
}

/// What to check: `system[:variant]` specs (none: everything), an optional fault set, and
/// `--bound name=value` settings.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub specs: Vec<String>,
    pub faults: Option<String>,
    pub bounds: Vec<String>,
}

/// The entries `selection` names, in catalogue order, or a one-line reason it names none.
///
/// Each selected system runs every variant named (all without `:variant`), every fault set (or
/// the one `--faults` names), at its `also` knob's default and other value unless `--bound` sets it,
/// and every property that applies, with the other bounds set as given.
pub fn select(selection: &Selection) -> Result<Vec<Entry>, String> {
    let mut wanted: Vec<(&'static dyn AnySystem, Option<&'static str>)> = Vec::new();
    if selection.specs.is_empty() {
        wanted.extend(systems().iter().map(|s| (*s, None)));
    }
    for spec in &selection.specs {
        let (name, variant) = match spec.split_once(':') {
            Some((name, variant)) => (name, Some(variant)),
            None => (spec.as_str(), None),
        };
        let system = system(name)?;
        let info = system.info();
        let variant = match variant {
            None => None,
            Some(v) => Some(
                info.variants
                    .iter()
                    .map(|(name, _)| *name)
                    .find(|n| *n == v)
                    .ok_or_else(|| {
                        format!(
                            "{} has no variant {v:?}; its variants are {}",
                            info.name,
                            info.variant_names().join(", ")
                        )
                    })?,
            ),
        };
        if !wanted
            .iter()
            .any(|(s, v)| s.info().name == info.name && (v.is_none() || *v == variant))
        {
            if variant.is_none() {
                // The whole system covers any of its variants named before.
                wanted.retain(|(s, _)| s.info().name != info.name);
            }
            wanted.push((system, variant));
        }
    }
    let mut bounds: Vec<(String, String)> = Vec::new();
    for bound in &selection.bounds {
        let (name, value) = split_bound(bound)?;
        if bounds.iter().any(|(n, _)| n == name) {
            return Err(format!("--bound {name} is given twice"));
        }
        bounds.push((name.to_owned(), value.to_owned()));
    }

    // Without a SPEC, --faults and --bound apply to the systems that have them.
    if selection.specs.is_empty() {
        let fits = |info: &SystemInfo| {
            selection
                .faults
                .as_deref()
                .is_none_or(|f| info.faults.contains(&f))
                && bounds
                    .iter()
                    .all(|(name, _)| info.bounds.iter().any(|b| b.name == name))
        };
        wanted.retain(|(system, _)| fits(system.info()));
        if wanted.is_empty() {
            return Err("no system has all of the --faults and --bound given; name one with a SPEC (see walcheck list)".into());
        }
    }
    let mut entries = Vec::new();
    for (system, variant) in wanted {
        let info = system.info();
        if let Some(faults) = &selection.faults {
            if !info.faults.contains(&faults.as_str()) {
                return Err(format!(
                    "{} has no fault set {faults:?}; its fault sets are {}",
                    info.name,
                    info.faults.join(", ")
                ));
            }
        }
        for config in configurations(system, variant, selection.faults.as_deref(), &bounds)? {
            let mut later = Vec::new();
            for property in info.properties {
                if !config.applies(property) {
                    continue;
                }
                // A property's own knobs make it a configuration of its own, listed after the
                // one it comes from.
                let mut own = config.clone();
                for (knob, value) in property.knobs {
                    if !bounds.iter().any(|(n, _)| n == knob) {
                        own.set_bound(knob, value)?;
                    }
                }
                let (expected, reason) = own.expected(property)?;
                let also = property
                    .also
                    .filter(|(knob, _)| !bounds.iter().any(|(n, _)| n == knob));
                let entry = Entry {
                    config: own.clone(),
                    property,
                    expected,
                    reason,
                };
                if own == config {
                    entries.push(entry);
                } else {
                    later.push(entry);
                }
                if let Some((knob, value)) = also {
                    let mut other = own;
                    other.set_bound(knob, value)?;
                    let (expected, reason) = other.expected(property)?;
                    later.push(Entry {
                        config: other,
                        property,
                        expected,
                        reason,
                    });
                }
            }
            entries.append(&mut later);
        }
    }
    Ok(entries)
}

fn configurations(
    system: &'static dyn AnySystem,
    variant: Option<&str>,
    faults: Option<&str>,
    bounds: &[(String, String)],
) -> Result<Vec<SystemConfig>, String> {
    let info = system.info();
    let mut configs: Vec<SystemConfig> = Vec::new();
    let alsos: Vec<Option<(&str, &str)>> = match info.also {
        Some(also) => vec![None, Some(also)],
        None => vec![None],
    };
    for v in info
        .variants
        .iter()
        .map(|(name, _)| *name)
        .filter(|v| variant.is_none_or(|name| *v == name))
    {
        for f in info
            .faults
            .iter()
            .filter(|f| faults.is_none_or(|name| **f == name))
        {
            for also in &alsos {
                let mut config = SystemConfig::new(system, v, f)?;
                if let Some((knob, value)) = also {
                    config.set_bound(knob, value)?;
                }
                for (name, value) in bounds {
                    config.set_bound(name, value)?;
                }
                if !configs.contains(&config) {
                    configs.push(config);
                }
            }
        }
    }
    Ok(configs)
}
