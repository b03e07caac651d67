//! The registry and the check catalogue: the systems walcheck knows, and every (system, variant,
//! faults, knobs, property) it checks by default, with the verdict upstream code leads us to
//! expect and the upstream reason.
//!
//! The catalogue is the project's regression suite: `walcheck check` with no SPEC runs all of it,
//! and exits 1 when a verdict differs from its expectation. Selecting with SPEC, `--faults` and
//! `--bound` narrows or reconfigures it; expectations are a function of the configuration, so a
//! reconfigured entry still has one.
//!
//! The registry knows no command. It lists the systems as trait objects ([`AnySystem`]: their
//! declarations and expectations), and a command that needs a configuration's model, whose type
//! the trait object erases, writes its work once as a [`WithModel`] job, generic over the model,
//! and hands it to [`SystemConfig::with_model`]. That turns the configuration's system back into
//! its own type by trying each type the binary knows: the built-in systems, connector files
//! (`walcheck_lang`'s one type of file system) and the [`Systems`] of the crate whose `main`
//! calls [`crate::cli::main`], a type parameter the commands that build models pass down. Rust has
//! no generic methods on trait objects, so one side has to know the other's types: here the set
//! of system types, known where the binary is compiled, rather than a table of every command's
//! job in the registry. Adding a command touches no file of the registry.

use std::any::Any;
use std::fmt::{self, Debug};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use walcheck_lang::system::FileSystem;
use walcheck_properties::system::{
    BoundValue, CheckModel, Model, PropertyInfo, System, VisitSystems,
};
use walcheck_traces::Header;

pub use walcheck_properties::system::{Config, SystemInfo};

use crate::search::Verdict;

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

    /// The system itself, for [`SystemConfig::with_model`] to find its type again.
    fn as_any(&self) -> &dyn Any;

    /// The property ids the model of `config` checks: its [`System::properties`], then its
    /// liveness properties' ([`System::liveness`]), once `config` is read
    /// ([`System::config`]).
    fn model_property_ids(&self, config: &Config) -> (Vec<String>, Vec<&'static str>);
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
        System::expected(self, &System::config(self, config), property)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn model_property_ids(&self, config: &Config) -> (Vec<String>, Vec<&'static str>) {
        // Reading the configuration is where a name the system does not declare panics.
        System::config(self, config);
        let properties = System::properties(self)
            .iter()
            .map(|p| p.id.to_owned())
            .collect();
        let live = System::liveness(self).iter().map(|l| l.id).collect();
        (properties, live)
    }
}

/// Checks that `system`'s declaration is one walcheck can run, or says in one line what is
/// wrong: a name without `:` or spaces; variants and fault sets, each named once; bounds named
/// once, defaults in range; property ids unique, each `needs` naming a fault set or bound value
/// it has; declared key variables and counters; and a model (of the first variant, first fault
/// set, default bounds) that checks every declared property, liveness ones in
/// [`System::liveness`] too.
pub fn validate(system: &dyn AnySystem) -> Result<(), String> {
    let info = system.info();
    let name = info.name;
    let bad = |what: String| Err(format!("system {name:?}: {what}"));
    if name.is_empty() || name.contains(':') || name.contains(char::is_whitespace) {
        return bad("a system's name is a word without ':' or spaces".into());
    }
    if let Some(what) = repeated(info.variants.iter().map(|v| v.0)) {
        return bad(format!("variant {what:?} is declared twice"));
    }
    if let Some(what) = repeated(info.faults.iter().copied()) {
        return bad(format!("fault set {what:?} is declared twice"));
    }
    if info.variants.is_empty() || info.faults.is_empty() {
        return bad("a system declares at least one variant and one fault set".into());
    }
    let knobs = || info.bounds.iter().chain(info.trace_knobs);
    if let Some(what) = repeated(knobs().map(|b| b.name)) {
        return bad(format!("bound {what:?} is declared twice"));
    }
    for bound in knobs() {
        if let Err(e) = bound.parse(&bound.default.to_string()) {
            return bad(format!("the default of {}: {e}", bound.name));
        }
    }
    if let Some(what) = repeated(info.properties.iter().map(|p| p.id)) {
        return bad(format!("property {what:?} is declared twice"));
    }
    for property in info.properties {
        needs_is_known(info, property.needs)
            .or_else(|e| bad(format!("property {}: {e}", property.id)))?;
    }
    let declared = |var: &&str| info.view.variables.iter().any(|v| v.name == *var);
    if !info.view.variables.is_empty() {
        let view = &info.view;
        if let Some(var) = view
            .key_variables
            .iter()
            .chain(view.counters)
            .find(|v| !declared(v))
        {
            return bad(format!(
                "view names variable {var:?}, which it does not declare"
            ));
        }
    }
    validate_model(system).or_else(bad)
}

/// The part of [`validate`] that builds a model: of the first variant and fault set at the
/// default bounds, it checks every declared property (liveness ones in [`System::liveness`] too),
/// and an expectation table, where there is one, has a row for each.
fn validate_model(system: &dyn AnySystem) -> Result<(), String> {
    let info = system.info();
    let name = info.name;
    let bad = |what: String| Err(what);
    let config = Config::new(info, info.variants[0].0, info.faults[0])?;
    let (checked, live) = quietly(|| system.model_property_ids(&config))
        .map_err(|panic| format!("building its model of the defaults panicked: {panic}"))?;
    for property in info.properties {
        if !checked.iter().any(|id| id == property.id) {
            return bad(format!(
                "property {} is declared but its model's properties() does not check it",
                property.id
            ));
        }
        let eventually = property.kind == walcheck_properties::system::Kind::Eventually;
        if eventually && !live.contains(&property.id) {
            return bad(format!(
                "eventually property {} is not in its system's liveness()",
                property.id
            ));
        }
    }
    let rows = info.properties.iter();
    let without_row = |p: &&PropertyInfo| system.expected(&config, p).is_none();
    if rows.clone().any(|p| !without_row(&p)) {
        if let Some(property) = rows.clone().find(without_row) {
            return bad(format!(
                "{name} keeps an expectation table, but it has no row for property {}",
                property.id
            ));
        }
    }
    // A model may check more than it declares: electric-flush's triage properties, which
    // `walcheck triage` reads and the catalogue does not.
    Ok(())
}

/// What `build` returns, or the message it panicked with, printed nowhere: a system's model
/// that reads a bound it does not declare ([`Config::number`] panics) is a one-line error when
/// the system is registered, not a panic on some later command.
pub(crate) fn quietly<T>(build: impl FnOnce() -> T) -> Result<T, String> {
    thread_local! {
        static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    // One hook for the process, quiet only on a thread inside `quietly`: others (tests
    // running beside it) still print their panics.
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|quiet| quiet.set(true));
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(build));
    QUIET.with(|quiet| quiet.set(false));
    built.map_err(|payload| match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload.downcast_ref::<&str>().map_or_else(
            || "a panic without a message".to_owned(),
            |m| (*m).to_owned(),
        ),
    })
}

/// How many states of each variant [`validate`] explores: enough to take every action of a
/// small system, and a first step of each action of a large one.
const VALIDATE_STATES: u64 = 2_000;

/// What [`register`] does after [`validate`]: explores up to 2,000 states of each of `system`'s
/// variants with its last fault set (the most faults), checking every property: a model that
/// panics on the way (a misspelt fault or variant name, [`Config::meets`]) is a one-line error at
/// registration.
pub fn try_out<S: System>(system: &'static S) -> Result<(), String> {
    let info = system.info();
    let faults = info
        .faults
        .last()
        .expect("validated: at least one fault set");
    for (variant, _) in info.variants {
        let config = Config::new(info, variant, faults)?;
        quietly(|| TryOut(VALIDATE_STATES).call(Model::of(system, &config))).map_err(|panic| {
            format!(
                "system {:?}: its {variant} model panicked: {panic}",
                info.name
            )
        })?;
    }
    Ok(())
}

/// [`try_out`]'s exploration of one model, on the calling thread: breadth-first from the
/// initial states, every enabled action taken and every property evaluated on each state
/// reached, until the given number of distinct states is stored.
pub struct TryOut(u64);

impl WithModel for TryOut {
    type Output = ();

    fn call<M>(self, model: M)
    where
        M: CheckModel,
    {
        let properties = model.properties();
        let liveness = model.liveness();
        let evaluate = |state: &M::State| {
            for p in &properties {
                (p.condition)(&model, state);
            }
            for l in &liveness {
                (l.goal)(&model, state);
                l.trigger.map(|q| q(&model, state));
            }
        };
        let mut seen: std::collections::HashSet<M::State> = Default::default();
        let mut queue: std::collections::VecDeque<M::State> = model.init_states().into();
        let mut actions = Vec::new();
        while let Some(state) = queue.pop_front() {
            evaluate(&state);
            model.actions(&state, &mut actions);
            for action in actions.drain(..) {
                let Some(next) = model.next_state(&state, action) else {
                    continue;
                };
                if (seen.len() as u64) < self.0 && seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
    }
}

/// The first name `names` yields twice.
fn repeated<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::BTreeSet::new();
    names.into_iter().find(|n| !seen.insert(*n))
}

/// Whether a property's `needs` names what the system has: `fault:F` a fault set, `K=V` a bound
/// value.
fn needs_is_known(info: &SystemInfo, needs: Option<&str>) -> Result<(), String> {
    let Some(needs) = needs else { return Ok(()) };
    if let Some(fault) = needs.strip_prefix("fault:") {
        return match info.faults.contains(&fault) {
            true => Ok(()),
            false => Err(format!("needs fault {fault:?}, not one of its fault sets")),
        };
    }
    let (knob, value) = needs
        .split_once('=')
        .ok_or_else(|| format!("needs {needs:?}: write fault:NAME or KNOB=VALUE"))?;
    let bound = info
        .bounds
        .iter()
        .find(|b| b.name == knob)
        .ok_or_else(|| format!("needs bound {knob:?}, which it does not declare"))?;
    bound.parse(value).map(|_| ())
}

/// The systems built into walcheck, in catalogue order (`walcheck_systems`' registry line).
pub fn built_in() -> Vec<&'static dyn AnySystem> {
    struct Collect(Vec<&'static dyn AnySystem>);
    impl VisitSystems for Collect {
        fn visit<S: System>(&mut self, system: &'static S) {
            self.0.push(system);
        }
    }
    let mut all = Collect(Vec::new());
    walcheck_systems::each_built_in(&mut all);
    all.0
}

static SYSTEMS: OnceLock<Vec<&'static dyn AnySystem>> = OnceLock::new();

/// Makes `systems` known beside the built-in ones (after them, in catalogue order), for the rest
/// of the process: what [`crate::cli::main`] does with the systems a crate gives it and the
/// connector files it loads. Each is [`validate`]d and [`try_out`]ed first. Call it once, before
/// anything reads the registry; a name given twice, or a second call, is a one-line error.
pub fn register(systems: &impl Systems) -> Result<(), String> {
    struct Add(Result<Vec<&'static dyn AnySystem>, String>);
    impl VisitSystems for Add {
        fn visit<S: System>(&mut self, system: &'static S) {
            let Ok(all) = &mut self.0 else { return };
            let name = system.info().name;
            let checked = validate(system)
                .and_then(|()| try_out(system))
                .and_then(|()| match all.iter().any(|s| s.info().name == name) {
                    true => Err(format!("two systems are called {name:?}")),
                    false => Ok(()),
                });
            match checked {
                Ok(()) => all.push(system),
                Err(e) => self.0 = Err(e),
            }
        }
    }
    let mut add = Add(Ok(built_in()));
    systems.each(&mut add);
    SYSTEMS
        .set(add.0?)
        .map_err(|_| "the systems were already registered".to_owned())
}

/// Systems of a crate's own, beside walcheck's built-in ones and connector files. As a value,
/// what [`crate::cli::main`] is given and [`register`] lists; as a type, what a command that
/// builds models passes down to [`SystemConfig::with_model`] (`run::run_all::<U>`), so that it
/// can turn a configuration's system back into its type. `()` is none (the `walcheck` binary),
/// `&MySystem` one, a tuple `(&A, &B)` several, a `Vec<&'static S>` any number of one type read
/// at run time. A crate does not implement it.
pub trait Systems {
    /// Hands each of these systems to `visit`, in order.
    fn each(&self, visit: &mut impl VisitSystems);

    /// `job` on the model of `config` when its system is of one of these types; the job back
    /// otherwise.
    fn try_with_model<J: WithModel>(config: &SystemConfig, job: J) -> Result<J::Output, J>;
}

impl Systems for () {
    fn each(&self, _: &mut impl VisitSystems) {}

    fn try_with_model<J: WithModel>(_: &SystemConfig, job: J) -> Result<J::Output, J> {
        Err(job)
    }
}

impl<S: System> Systems for &'static S {
    fn each(&self, visit: &mut impl VisitSystems) {
        visit.visit(*self);
    }

    fn try_with_model<J: WithModel>(config: &SystemConfig, job: J) -> Result<J::Output, J> {
        let any: &'static dyn AnySystem = config.system;
        match any.as_any().downcast_ref::<S>() {
            Some(system) => Ok(job.call(Model::of(system, &config.config))),
            None => Err(job),
        }
    }
}

impl<S: System> Systems for Vec<&'static S> {
    fn each(&self, visit: &mut impl VisitSystems) {
        for system in self {
            visit.visit(*system);
        }
    }

    fn try_with_model<J: WithModel>(config: &SystemConfig, job: J) -> Result<J::Output, J> {
        <&'static S>::try_with_model(config, job)
    }
}

/// [`Systems`] for tuples of them: each member's systems in turn.
macro_rules! tuple_systems {
    ($($member:ident . $at:tt),+) => {
        impl<$($member: Systems),+> Systems for ($($member,)+) {
            fn each(&self, visit: &mut impl VisitSystems) {
                $(self.$at.each(visit);)+
            }

            fn try_with_model<J: WithModel>(
                config: &SystemConfig,
                job: J,
            ) -> Result<J::Output, J> {
                let tried = Err(job);
                $(let tried = tried.or_else(|job| $member::try_with_model(config, job));)+
                tried
            }
        }
    };
}

tuple_systems!(A.0, B.1);
tuple_systems!(A.0, B.1, C.2);
tuple_systems!(A.0, B.1, C.2, D.3);

/// The built-in systems as [`Systems`]: `walcheck_systems::each_built_in`'s.
struct BuiltIn;

impl Systems for BuiltIn {
    fn each(&self, visit: &mut impl VisitSystems) {
        walcheck_systems::each_built_in(visit);
    }

    fn try_with_model<J: WithModel>(config: &SystemConfig, job: J) -> Result<J::Output, J> {
        /// Tries each system's type in turn, until one is the configuration's.
        struct Try<'a, J: WithModel>(&'a SystemConfig, Option<Result<J::Output, J>>);
        impl<J: WithModel> VisitSystems for Try<'_, J> {
            fn visit<S: System>(&mut self, _: &'static S) {
                self.1 = match self.1.take() {
                    Some(Err(job)) => Some(<&'static S>::try_with_model(self.0, job)),
                    done => done,
                };
            }
        }
        let mut tried = Try(config, Some(Err(job)));
        walcheck_systems::each_built_in(&mut tried);
        tried.1.expect("put back after each try")
    }
}

/// Every system walcheck knows: the built-in ones, then any [`register`]ed.
pub fn systems() -> &'static [&'static dyn AnySystem] {
    SYSTEMS.get_or_init(built_in)
}

/// The system called `name`, or a one-line error listing the systems.
pub fn system(name: &str) -> Result<&'static dyn AnySystem, String> {
    systems()
        .iter()
        .copied()
        .find(|s| s.info().name == name)
        .ok_or_else(|| {
            let names: Vec<_> = systems().iter().map(|s| s.info().name).collect();
            let folder = if std::path::Path::new(name).is_dir() {
                " (a folder of that name is here, holding no .wal connector file)"
            } else {
                ""
            };
            format!(
                "unknown system {name:?}{folder}; systems are {}",
                names.join(", ")
            )
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

/// A configuration as summary lines and warnings name it: `system:variant faults=F bounds`
/// (the bounds not at their defaults).
impl fmt::Display for SystemConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (system, variant, faults) = (self.info().name, self.variant(), self.faults());
        let mut name = format!("{system}:{variant} faults={faults}");
        let bounds = self.non_default_bounds();
        if !bounds.is_empty() {
            name.push(' ');
            name.push_str(&bounds.join(","));
        }
        f.pad(&name)
    }
}

/// A command's work on a configuration's model, written once for any model (a closure cannot be
/// generic over them) and run by [`SystemConfig::with_model`]: a search, a replay, a link of the
/// Explorer. Adding a command's job touches nothing here.
pub trait WithModel {
    type Output;
    fn call<M>(self, model: M) -> Self::Output
    where
        M: CheckModel;
}

impl SystemConfig {
    /// Runs `job` on the model of this configuration: the one place that turns a configuration
    /// into its model. `U` is the binary's own [`Systems`]; its system is of one of their types
    /// or of walcheck's (a built-in system, a connector file), else the caller passed the wrong
    /// `U`, a bug: a panic naming the system.
    pub fn with_model<U: Systems, J: WithModel>(&self, job: J) -> J::Output {
        match <(BuiltIn, &'static FileSystem, U)>::try_with_model(self, job) {
            Ok(output) => output,
            Err(_) => panic!(
                "system {:?} is of a type neither walcheck's nor one of the Systems given",
                self.info().name
            ),
        }
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
        self.config.set_bound(self.system.info(), name, value)?;
        self.read()
    }

    /// Sets a bound, or a knob only traces carry (the simulator's workload), from its text.
    pub fn set_knob(&mut self, name: &str, value: &str) -> Result<(), String> {
        self.config.set_knob(self.system.info(), name, value)?;
        self.read()
    }

    /// Reads this configuration as its system does ([`System::config`]): registering reads only
    /// the defaults, so a name the system does not declare, read only at some bound's value, is
    /// a one-line error once that value is set, not a panic in a later command.
    fn read(&self) -> Result<(), String> {
        quietly(|| self.system.model_property_ids(&self.config))
            .map(drop)
            .map_err(|panic| {
                format!(
                    "system {:?}: reading its configuration {self} panicked: {panic}",
                    self.info().name
                )
            })
    }

    /// Whether `property` applies to this configuration (a witness's knob or fault is there).
    pub fn applies(&self, property: &PropertyInfo) -> bool {
        self.config.meets(property.needs)
    }

    /// The verdict expected for `property`, and why: the system's table where it keeps one;
    /// otherwise checked plainly (`always` and `eventually` hold, `sometimes` witnesses are
    /// reached). A table without a row for `property` is a one-line error.
    pub fn expected(&self, property: &PropertyInfo) -> Result<(Verdict, &'static str), String> {
        let keeps_table = || {
            let properties = self.system.info().properties.iter();
            properties
                .filter(|p| p.id != property.id)
                .any(|p| self.system.expected(&self.config, p).is_some())
        };
        match self.system.expected(&self.config, property) {
            Some(row) => row,
            None if keeps_table() => Err(format!(
                "{} keeps an expectation table, but it has no row for property {}",
                self.system.info().name,
                property.id
            )),
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
            format!(
                "malformed --bound {bound:?}: expected NAME=VALUE, e.g. statements=3 (pairs are \
                 comma-separated, one value per knob: check once per value to try several)"
            )
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
    let mut wanted = wanted_systems(&selection.specs)?;
    let bounds = parse_bounds(&selection.bounds)?;
    // Without a SPEC, --faults and --bound apply to the systems that have them.
    if selection.specs.is_empty() {
        let has_faults = |info: &SystemInfo, f: &str| info.faults.contains(&f);
        let has_bound = |info: &SystemInfo, name: &str| info.bounds.iter().any(|b| b.name == name);
        let fits = |info: &SystemInfo| {
            selection
                .faults
                .as_deref()
                .is_none_or(|f| has_faults(info, f))
                && bounds.iter().all(|(name, _)| has_bound(info, name))
        };
        // A fault set or bound no system has is named, not lost in the combination.
        let infos: Vec<&SystemInfo> = wanted.iter().map(|(system, _)| system.info()).collect();
        if let Some(f) = selection.faults.as_deref() {
            if !infos.iter().any(|info| has_faults(info, f)) {
                let mut sets: Vec<&str> = Vec::new();
                for set in infos.iter().flat_map(|i| i.faults.iter().copied()) {
                    if !sets.contains(&set) {
                        sets.push(set);
                    }
                }
                return Err(format!(
                    "no system has the fault set {f:?}; fault sets: {}",
                    sets.join(", ")
                ));
            }
        }
        for (name, _) in &bounds {
            if !infos.iter().any(|info| has_bound(info, name)) {
                return Err(format!(
                    "no system has a bound named {name:?} (see {} list)",
                    crate::program::name()
                ));
            }
        }
        wanted.retain(|(system, _)| fits(system.info()));
        if wanted.is_empty() {
            return Err(format!("no system has all of the --faults and --bound given; name one with a SPEC (see {} list)", crate::program::name()));
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
            entries.append(&mut config_entries(&config, &bounds)?);
        }
    }
    Ok(entries)
}

/// A system to check, and its one variant named (`None`: every variant).
type Wanted = (&'static dyn AnySystem, Option<&'static str>);

/// The systems and variants `specs` name (every system, all variants, for none), each once:
/// a whole system covers its variants named before it. A one-line error for an unknown system
/// or variant.
fn wanted_systems(specs: &[String]) -> Result<Vec<Wanted>, String> {
    let mut wanted: Vec<Wanted> = Vec::new();
    if specs.is_empty() {
        wanted.extend(systems().iter().map(|s| (*s, None)));
    }
    for spec in specs {
        let (name, variant) = match spec.split_once(':') {
            Some((name, variant)) => (name, Some(variant)),
            None => (spec.as_str(), None),
        };
        let system = system(name)?;
        let info = system.info();
        let variant = variant.map(|v| variant_named(info, v)).transpose()?;
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
    Ok(wanted)
}

/// `info`'s variant called `name`, or a one-line error listing its variants.
fn variant_named(info: &'static SystemInfo, name: &str) -> Result<&'static str, String> {
    info.variants
        .iter()
        .map(|(variant, _)| *variant)
        .find(|variant| *variant == name)
        .ok_or_else(|| {
            format!(
                "{} has no variant {name:?}; its variants are {}",
                info.name,
                info.variant_names().join(", ")
            )
        })
}

/// `--bound NAME=VALUE`s as pairs, or a one-line error for a malformed or repeated one. A
/// `--bound` may set several, `a=1,b=2`, as reports and trace headers write configurations.
fn parse_bounds(given: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut bounds: Vec<(String, String)> = Vec::new();
    for bound in given.iter().flat_map(|b| b.split(',')) {
        let (name, value) = split_bound(bound)?;
        if bounds.iter().any(|(n, _)| n == name) {
            return Err(format!("--bound {name} is given twice"));
        }
        bounds.push((name.to_owned(), value.to_owned()));
    }
    Ok(bounds)
}

/// The entries of one configuration: each property that applies, with what is expected of it.
/// A property's own knobs (those `bounds` does not set) make it a configuration of its own,
/// and its `also` knob one more; those entries come after the configuration's own.
pub fn config_entries(
    config: &SystemConfig,
    bounds: &[(String, String)],
) -> Result<Vec<Entry>, String> {
    let is_set = |knob: &str| bounds.iter().any(|(n, _)| n == knob);
    let entry = |config: SystemConfig, property| -> Result<Entry, String> {
        let (expected, reason) = config.expected(property)?;
        Ok(Entry {
            config,
            property,
            expected,
            reason,
        })
    };
    let mut entries = Vec::new();
    let mut later = Vec::new();
    for property in config.info().properties {
        if !config.applies(property) {
            continue;
        }
        let mut own = config.clone();
        for (knob, value) in property.knobs {
            if !is_set(knob) {
                own.set_bound(knob, value)?;
            }
        }
        let also = property.also.filter(|(knob, _)| !is_set(knob));
        if own == *config {
            entries.push(entry(own.clone(), property)?);
        } else {
            later.push(entry(own.clone(), property)?);
        }
        if let Some((knob, value)) = also {
            let mut other = own;
            other.set_bound(knob, value)?;
            later.push(entry(other, property)?);
        }
    }
    entries.append(&mut later);
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
