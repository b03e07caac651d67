//! A checkable system: the one trait a system is written in ([`System`]: its states, actions,
//! initial states, transitions and properties, its configuration read once into a typed one),
//! the model walcheck makes of each configuration ([`Model`]), the trait the engines and
//! commands take ([`CheckModel`]), and a property declared with its condition ([`Declared`],
//! [`checks!`](crate::checks)). The vocabulary a system is declared in has files of its own —
//! [`crate::property`] (property kinds, declarations, fairness), [`crate::declaration`] (the
//! declaration, bounds, fault sets, configurations) and [`crate::view`](mod@crate::view) (trace variables and
//! diagram lanes) — and is re-exported here, so that a system imports from one place.

use crate::codec::Codec;
use std::fmt;

pub use crate::declaration::*;
pub use crate::property::*;
pub use crate::view::*;
pub use walcheck_model::Lsn;

/// A property declared once, with its condition: what [`SystemInfo::properties`] lists (through
/// [`infos`]) and what the model checks (through [`System::properties`]), so a system writes a
/// property's id, kind, doc and predicate in one place. The condition takes the [`Model`] of the
/// configuration checked, whose `config` is the system's typed one.
///
/// ```ignore
/// pub const NO_DATA_LOSS: Declared<OlakeSyncSystem> =
///     PropertyInfo::always("no-data-loss", "every transaction … is in the destination")
///         .when(|m, s| no_data_loss(&m.config, s));
/// ```
pub struct Declared<S: System> {
    pub info: PropertyInfo,
    /// Whether a state satisfies it: for `always`, holds in every state; for `sometimes`, the
    /// witness; for `eventually`, the goal.
    pub condition: Condition<S>,
}

/// A condition on a state of system `S`, given the model of the configuration checked.
pub type Condition<S> = fn(&Model<S>, &<S as System>::State) -> bool;

impl<S: System> Clone for Declared<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: System> Copy for Declared<S> {}

impl<S: System> std::ops::Deref for Declared<S> {
    type Target = PropertyInfo;

    fn deref(&self) -> &PropertyInfo {
        &self.info
    }
}

impl PropertyInfo {
    /// This declaration with its condition.
    pub const fn when<S: System>(self, condition: Condition<S>) -> Declared<S> {
        Declared {
            info: self,
            condition,
        }
    }
}

impl<S: System> Declared<S> {
    /// The stateright property that checks it (see [`PropertyInfo::check`]).
    pub fn property(&self) -> stateright::Property<Model<S>> {
        self.info.check(self.condition)
    }

    /// This `eventually` property as the fair-liveness checker reads it ([`System::liveness`]),
    /// its condition the goal: `eventually goal` from the initial state with no `trigger`,
    /// `always (trigger implies eventually goal)` with one. The goal is the condition its
    /// declaration already holds, so a system writes it once.
    pub fn liveness(&self, trigger: Option<Condition<S>>) -> Liveness<Model<S>, S::State> {
        Liveness {
            id: self.info.id,
            trigger,
            goal: self.condition,
        }
    }
}

/// The declarations of `declared`, in order: a system's [`SystemInfo::properties`], from the
/// same list its model checks (`pub const PROPERTIES: &[PropertyInfo] = &infos(&CHECKS);`).
pub const fn infos<S: System, const N: usize>(declared: &[Declared<S>; N]) -> [PropertyInfo; N] {
    let mut infos = [PropertyInfo::always("", ""); N];
    let mut i = 0;
    while i < N {
        infos[i] = declared[i].info;
        i += 1;
    }
    infos
}

/// Declares a system's properties, each once: a `pub const` for each (a [`Declared`], its
/// [`PropertyInfo`] with its condition), the list of them the model checks (`CHECKS` below, what
/// [`System::properties`] returns), in the order given and with its length counted, and the list
/// of their declarations (`PROPERTIES`, through [`infos`]) that [`SystemInfo::properties`] names.
/// Each property's name is written once.
///
/// ```
/// use walcheck_properties::system::PropertyInfo;
/// # use walcheck_properties::system::{Config, Declared, System, SystemInfo, Var, Variables};
/// # #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// # struct State { crashes: u8 }
/// # impl Variables for State {
/// #     fn variables(&self) -> Vec<(&'static str, Var)> { Vec::new() }
/// # }
/// # struct Connector;
/// # impl System for Connector {
/// #     type State = State;
/// #     type Action = u8;
/// #     type Config = ();
/// #     fn info(&self) -> &'static SystemInfo { &SystemInfo::EMPTY }
/// #     fn config(&self, _: &Config) {}
/// #     fn init_states(&self, _: &()) -> Vec<State> { vec![State { crashes: 0 }] }
/// #     fn actions(&self, _: &(), _: &State, _: &mut Vec<u8>) {}
/// #     fn next_state(&self, _: &(), _: &State, _: u8) -> Option<State> { None }
/// #     fn properties(&self) -> Vec<Declared<Self>> { CHECKS.to_vec() }
/// # }
/// walcheck_properties::checks! { Connector:
///     /// The properties, each declared once.
///     CHECKS => PROPERTIES [
///         NO_CRASH = PropertyInfo::always("no-crash", "the connector never crashes")
///             .when(|_, s: &State| s.crashes == 0);
///         REACH_CRASH = PropertyInfo::sometimes("reach-crash", "the connector crashes")
///             .needs("fault:connector-crash")
///             .when(|_, s: &State| s.crashes > 0);
///     ]
/// }
/// assert_eq!(CHECKS.len(), 2);
/// assert_eq!(PROPERTIES[1].needs, Some("fault:connector-crash"));
/// assert_eq!(REACH_CRASH.id, "reach-crash");
/// ```
#[macro_export]
macro_rules! checks {
    (
        $system:ty:
        $(#[$meta:meta])*
        $checks:ident => $infos:ident [
            $($(#[$pmeta:meta])* $name:ident = $declared:expr;)*
        ]
    ) => {
        $(
            $(#[$pmeta])*
            pub const $name: $crate::system::Declared<$system> = $declared;
        )*

        $(#[$meta])*
        pub const $checks: [$crate::system::Declared<$system>; [$(stringify!($name)),*].len()] =
            [$($name),*];

        #[doc = concat!("The declarations of [`", stringify!($checks), "`], in order: what the system's declaration lists.")]
        pub const $infos: &[$crate::system::PropertyInfo] = &$crate::system::infos(&$checks);
    };
}

/// What a checker needs of a system's states: stored, compared, shown and written as trace
/// variables.
pub trait CheckState:
    std::hash::Hash + Eq + Clone + fmt::Debug + Variables + Send + Sync + 'static
{
}
impl<T: std::hash::Hash + Eq + Clone + fmt::Debug + Variables + Send + Sync + 'static> CheckState
    for T
{
}

/// What a checker needs of a system's actions: compared, shown, sent between threads. Traces
/// name an action by its model's `format_action` ([`System::format_action`]).
pub trait CheckAction: Clone + PartialEq + fmt::Debug + Send + Sync + 'static {}
impl<T: Clone + PartialEq + fmt::Debug + Send + Sync + 'static> CheckAction for T {}

/// A system's model as every engine and command takes it: stateright's `Model` with states and
/// actions a checker can store, show and share between threads, and what the checkers ask
/// besides: the fairness its `fairness` bound selects and its liveness properties (for the
/// fair-liveness checker), and how its states may be packed (for the compact engine's largest
/// levels). A generic function asks for `M: CheckModel`.
///
/// Every [`System`]'s [`Model`] is one. A model written straight on stateright (a test's toy)
/// can be one with `impl CheckModel for Toy {}`, taking the defaults: no fairness, no liveness
/// properties, its states held whole.
pub trait CheckModel:
    stateright::Model<State: CheckState, Action: CheckAction> + Send + Sync + Sized + 'static
{
    /// The fairness constraints in force for this configuration.
    fn fairness(&self) -> &'static [FairClass<Self::Action>] {
        &[]
    }

    /// The liveness properties, by id.
    fn liveness(&self) -> Vec<Liveness<Self, Self::State>> {
        Vec::new()
    }

    /// How the compact engine may pack this model's states in a breadth-first level that would
    /// otherwise hold more than the compact engine's `Options::pack_above_bytes` of them whole.
    /// `None` by default: held whole.
    fn codec(&self) -> Option<Codec<Self::State>> {
        None
    }
}

/// What walks a list of systems of different types, one call each: how a crate hands its
/// systems to a registry without naming the registry's trait objects (the built-in systems'
/// `walcheck_systems::each_built_in`).
pub trait VisitSystems {
    fn visit<S: System>(&mut self, system: &'static S);
}

/// A checkable system, in the shape of stateright's `Model`: a state type, an action type, the
/// initial states, the enabled actions, the step and the properties; with its declaration
/// ([`SystemInfo`]: variants, fault sets, bounds with units and ranges, properties, trace
/// variables) and its configuration read once into a typed one ([`System::Config`]).
///
/// What to write: [`System::info`], [`System::config`], [`System::init_states`],
/// [`System::actions`], [`System::next_state`] and [`System::properties`]. The rest have
/// defaults: actions named by their `Debug`, no fairness and no liveness property, states held
/// whole, no expectation table (a system without one is checked plainly: every `always` and
/// `eventually` property should hold and every `sometimes` witness be reached). walcheck makes the model of each configuration,
/// [`Model`], from these.
pub trait System: Send + Sync + Sized + 'static {
    /// A state: stored, compared, shown and written as trace variables.
    type State: CheckState;
    /// An action: one atomic step, named in traces by [`System::format_action`].
    type Action: CheckAction;
    /// The typed configuration [`System::config`] reads: what the steps, the properties and the
    /// expectation table take instead of looking bounds up by name.
    type Config: Clone + fmt::Debug + Send + Sync + 'static;

    /// The declaration: name, variants, fault sets, bounds, properties, trace view.
    ///
    /// A built-in system returns a `static`. A system declared at run time (read from a file)
    /// builds its declaration once and leaks it (`Box::leak`) for the rest of the process, as the
    /// registry holds systems for the whole process too; `tests/runtime_system.rs` does so.
    fn info(&self) -> &'static SystemInfo;

    /// `config`, a configuration of this system (its values are valid: the catalogue checked
    /// them against [`System::info`]), read into the typed configuration: the one place that
    /// reads bounds by name ([`Config::number`], [`Config::name`]), the variant
    /// ([`Config::is_variant`]) and faults ([`Config::meets`]). A name the system does not
    /// declare panics here, and registering a system reads a configuration of each variant, so
    /// a misspelling is a one-line error then, never during a check.
    fn config(&self, config: &Config) -> Self::Config;

    /// The initial states of `config`.
    fn init_states(&self, config: &Self::Config) -> Vec<Self::State>;

    /// The actions enabled in `state`, in a fixed order (stateright rebuilds paths from their
    /// indices). Only the enabled ones: replay, the Explorer and liveness's dead states read
    /// them as what is enabled.
    fn actions(&self, config: &Self::Config, state: &Self::State, actions: &mut Vec<Self::Action>);

    /// The state `action` leads to from `state`, or `None` where it is not enabled.
    fn next_state(
        &self,
        config: &Self::Config,
        state: &Self::State,
        action: Self::Action,
    ) -> Option<Self::State>;

    /// Every property the model checks, each declared once with its condition (see
    /// [`checks!`](crate::checks)): the declared ones ([`SystemInfo::properties`]), and any more
    /// a command reads by id (electric-flush's triage properties).
    fn properties(&self) -> Vec<Declared<Self>>;

    /// An action as traces name it: by default its `Debug` without the spaces around braces
    /// (`Receive { txn: 0 }` reads `Receive{txn: 0}`). Sequence diagrams take the text before
    /// `{` as the action's name ([`Lanes::lane`]).
    fn format_action(&self, action: &Self::Action) -> String {
        let debug = format!("{action:?}");
        debug.replace(" { ", "{").replace(" }", "}")
    }

    /// The fairness constraints in force for `config`: none by default. A system with a
    /// `fairness` bound ([`FAIRNESS_BOUND`]) selects its declared ones or none through
    /// [`FairnessChoice::constraints`].
    fn fairness(&self, config: &Self::Config) -> &'static [FairClass<Self::Action>] {
        let _ = config;
        &[]
    }

    /// The liveness properties, by id: each `eventually` property of the declaration, with its
    /// trigger ([`Declared::liveness`]). None by default.
    fn liveness(&self) -> Vec<Liveness<Model<Self>, Self::State>> {
        Vec::new()
    }

    /// How the compact engine may pack a state in a breadth-first level that would otherwise
    /// hold more than the compact engine's `Options::pack_above_bytes` of them whole. `None` by
    /// default: held whole. A state that serde serializes can take [`Codec::postcard`]; one whose
    /// bytes leave part of it out, [`Codec::new`] with a `decode` that restores it.
    fn codec(&self) -> Option<Codec<Self::State>> {
        None
    }

    /// The verdict expected of `property` in `config`, with the upstream reason, for a system
    /// that keeps an expectation table (the built-in catalogue's regression suite). `None` for
    /// every property: checked plainly. `Some(Err(..))`: the table has no row for this
    /// property, a one-line error.
    fn expected(
        &self,
        config: &Self::Config,
        property: &PropertyInfo,
    ) -> Option<Result<(crate::verdict::Verdict, &'static str), String>> {
        let _ = (config, property);
        None
    }
}

/// The model of one configuration of system `S`: the system and its typed configuration.
/// walcheck writes stateright's `Model` and [`CheckModel`] for it from `S`'s methods, so a
/// system never does; a property's condition takes it (`|m, s| no_data_loss(&m.config, s)`).
pub struct Model<S: System> {
    pub system: &'static S,
    pub config: S::Config,
}

impl<S: System> Model<S> {
    /// The model of `system` with its typed configuration `config`.
    pub const fn new(system: &'static S, config: S::Config) -> Model<S> {
        Model { system, config }
    }

    /// The model of `config`, a configuration of `system`, read once into its typed form.
    pub fn of(system: &'static S, config: &Config) -> Model<S> {
        Model::new(system, system.config(config))
    }
}

impl<S: System> Clone for Model<S> {
    fn clone(&self) -> Self {
        Model::new(self.system, self.config.clone())
    }
}

impl<S: System> fmt::Debug for Model<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("system", &self.system.info().name)
            .field("config", &self.config)
            .finish()
    }
}

impl<S: System> stateright::Model for Model<S> {
    type State = S::State;
    type Action = S::Action;

    fn init_states(&self) -> Vec<S::State> {
        self.system.init_states(&self.config)
    }

    fn actions(&self, state: &S::State, actions: &mut Vec<S::Action>) {
        self.system.actions(&self.config, state, actions);
    }

    fn next_state(&self, state: &S::State, action: S::Action) -> Option<S::State> {
        self.system.next_state(&self.config, state, action)
    }

    /// As traces name it ([`System::format_action`]).
    fn format_action(&self, action: &S::Action) -> String {
        self.system.format_action(action)
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        let declared = self.system.properties();
        declared.iter().map(Declared::property).collect()
    }
}

impl<S: System> CheckModel for Model<S> {
    fn fairness(&self) -> &'static [FairClass<S::Action>] {
        self.system.fairness(&self.config)
    }

    fn liveness(&self) -> Vec<Liveness<Self, S::State>> {
        self.system.liveness()
    }

    fn codec(&self) -> Option<Codec<S::State>> {
        self.system.codec()
    }
}
