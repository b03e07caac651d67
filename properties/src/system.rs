//! A checkable system: the one trait a system is written in ([`System`]: its states, actions,
//! initial states, transitions and properties, its configuration read once into a typed one),
//! the model walcheck makes of each configuration ([`Model`]) and the trait the engines and
//! commands take ([`CheckModel`]); and the vocabulary a system is declared in: property kinds and
//! declarations, bounds with their ranges, trace variables, sequence-diagram lanes and fairness,
//! as the checkers, the catalogue and `walcheck list` read them.

use crate::codec::Codec;
use std::fmt;

pub use walcheck_model::Lsn;

/// How a property is checked (stateright's `Expectation`, by the names reports use).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Safety: must hold in every reachable state; violated by a counterexample.
    Always,
    /// A witness: some reachable state must satisfy it, or the check is vacuous.
    Sometimes,
    /// Liveness: every path must reach it.
    Eventually,
}

impl Kind {
    /// The name used in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Always => "always",
            Kind::Sometimes => "sometimes",
            Kind::Eventually => "eventually",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A property a system declares: its stable id, its kind, and what a configuration needs for the
/// property to apply (witnesses say which knob or fault they need).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PropertyInfo {
    pub id: &'static str,
    pub kind: Kind,
    /// `None`, or the knob or fault the property needs, as `fault:NAME` or `KNOB=VALUE`.
    pub needs: Option<&'static str>,
    /// One line: what it means.
    pub doc: &'static str,
    /// Knobs its check sets, unless `--bound` sets them: the configuration it is checked in is
    /// its own, listed after the one it comes from (electric-flush's `eventually-acknowledged`
    /// runs with `traffic=steady`).
    pub knobs: &'static [(&'static str, &'static str)],
    /// A knob and value it is also checked with, unless `--bound` sets that knob: a second row
    /// where that knob decides the verdict (`fairness=none` for a liveness property).
    pub also: Option<(&'static str, &'static str)>,
}

impl PropertyInfo {
    /// A property of `kind` with no needs and no knobs of its own.
    pub const fn new(id: &'static str, kind: Kind, doc: &'static str) -> PropertyInfo {
        PropertyInfo {
            id,
            kind,
            needs: None,
            doc,
            knobs: &[],
            also: None,
        }
    }

    /// An `always` property (safety).
    pub const fn always(id: &'static str, doc: &'static str) -> PropertyInfo {
        PropertyInfo::new(id, Kind::Always, doc)
    }

    /// A `sometimes` property (a witness that the checks are not vacuous).
    pub const fn sometimes(id: &'static str, doc: &'static str) -> PropertyInfo {
        PropertyInfo::new(id, Kind::Sometimes, doc)
    }

    /// An `eventually` property (liveness, checked under fairness).
    pub const fn eventually(id: &'static str, doc: &'static str) -> PropertyInfo {
        PropertyInfo::new(id, Kind::Eventually, doc)
    }

    /// This property, applying only where `needs` holds: `fault:NAME` (the fault set has fault
    /// NAME) or `KNOB=VALUE` (see [`Config::meets`]).
    pub const fn needs(mut self, needs: &'static str) -> PropertyInfo {
        self.needs = Some(needs);
        self
    }

    /// This property, checked with `knobs` set (see [`PropertyInfo::knobs`]).
    pub const fn with_knobs(
        mut self,
        knobs: &'static [(&'static str, &'static str)],
    ) -> PropertyInfo {
        self.knobs = knobs;
        self
    }

    /// This property, also checked with `knob=value` (see [`PropertyInfo::also`]).
    pub const fn also_with(mut self, knob: &'static str, value: &'static str) -> PropertyInfo {
        self.also = Some((knob, value));
        self
    }

    /// The stateright property that checks this declaration with `condition`: `always`,
    /// `sometimes` or `eventually` as declared, under the declared id, so that a system writes
    /// each property's id and kind once.
    pub fn check<M: stateright::Model>(
        &self,
        condition: fn(&M, &M::State) -> bool,
    ) -> stateright::Property<M> {
        match self.kind {
            Kind::Always => stateright::Property::always(self.id, condition),
            Kind::Sometimes => stateright::Property::sometimes(self.id, condition),
            Kind::Eventually => stateright::Property::eventually(self.id, condition),
        }
    }
}

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

/// A bound or knob of a system's configuration, as `walcheck list` shows it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BoundInfo {
    pub name: &'static str,
    /// A whole number in `min..=max`, or one of `values`.
    pub default: BoundValue,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub values: &'static [&'static str],
    pub unit: &'static str,
    pub doc: &'static str,
    /// Left out of a configuration's bounds (its trace header, `check --json`'s `bounds`, a
    /// counterexample's file name) while at its default: a knob added after traces were
    /// committed, so that the traces it cannot change keep the header they had.
    pub quiet: bool,
    /// A numeric bound whose value must also be a power of two (a page size).
    pub power_of_two: bool,
}

/// A bound's value: a count or size, or a named choice.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BoundValue {
    Number(u64),
    Name(&'static str),
}

impl fmt::Display for BoundValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundValue::Number(n) => write!(f, "{n}"),
            BoundValue::Name(name) => f.write_str(name),
        }
    }
}

/// A numeric bound from `min` to `max` with its default.
pub const fn number(
    name: &'static str,
    default: u64,
    min: u64,
    max: u64,
    unit: &'static str,
    doc: &'static str,
) -> BoundInfo {
    BoundInfo {
        name,
        default: BoundValue::Number(default),
        min: Some(min),
        max: Some(max),
        values: &[],
        unit,
        doc,
        quiet: false,
        power_of_two: false,
    }
}

/// A bound that takes one of `values`, `default` first or not, with its unit and doc.
pub const fn choice(
    name: &'static str,
    default: &'static str,
    values: &'static [&'static str],
    unit: &'static str,
    doc: &'static str,
) -> BoundInfo {
    BoundInfo {
        name,
        default: BoundValue::Name(default),
        min: None,
        max: None,
        values,
        unit,
        doc,
        quiet: false,
        power_of_two: false,
    }
}

impl BoundInfo {
    /// This bound, left out of a configuration's bounds while at its default (see
    /// [`BoundInfo::quiet`]).
    pub const fn quiet(mut self) -> BoundInfo {
        self.quiet = true;
        self
    }

    /// This numeric bound, taking powers of two only.
    pub const fn power_of_two(mut self) -> BoundInfo {
        self.power_of_two = true;
        self
    }

    /// Parses `text` as a value of this bound, or says in one line why not.
    pub fn parse(&self, text: &str) -> Result<BoundValue, String> {
        if !self.values.is_empty() {
            return self
                .values
                .iter()
                .find(|v| **v == text)
                .map(|v| BoundValue::Name(v))
                .ok_or_else(|| {
                    format!(
                        "bound {} takes one of {}, not {text:?}",
                        self.name,
                        self.values.join(", ")
                    )
                });
        }
        let (min, max) = (self.min.unwrap_or(0), self.max.unwrap_or(u64::MAX));
        let bad = || {
            format!(
                "bound {} takes a whole number from {min} to {max}, not {text:?}",
                self.name
            )
        };
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u64 = text.parse().map_err(|_| {
            format!(
                "bound {}={text} is outside its range, {min} to {max} ({})",
                self.name, self.unit
            )
        })?;
        if n < min || n > max {
            return Err(format!(
                "bound {}={n} is outside its range, {min} to {max} ({})",
                self.name, self.unit
            ));
        }
        if self.power_of_two && !n.is_power_of_two() {
            return Err(format!(
                "bound {} must be a power of two ({}), not {text}",
                self.name, self.unit
            ));
        }
        Ok(BoundValue::Number(n))
    }
}

/// A variable's value in a trace: text (LSNs in `X/Y`, phases), a flag, or a count.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Var {
    Text(String),
    Bool(bool),
    Int(u64),
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Var::Text(text) => f.write_str(text),
            Var::Bool(flag) => write!(f, "{flag}"),
            Var::Int(n) => write!(f, "{n}"),
        }
    }
}

/// A trace variable as a system declares it, for the legend under a counterexample and for
/// reading traces back: its name as step tables show it, the kind of value it holds (`LSN`,
/// `bool`, `count`, `text`, …) and one line saying what it is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VarInfo {
    pub name: &'static str,
    pub kind: &'static str,
    pub doc: &'static str,
}

/// A trace variable's declaration: `var("flush", "LSN", "the WAL flush pointer")`.
pub const fn var(name: &'static str, kind: &'static str, doc: &'static str) -> VarInfo {
    VarInfo { name, kind, doc }
}

/// A value a trace variable holds, and the kind of value its declaration names: what
/// [`variables!`](crate::variables) converts each field with.
pub trait ToVar {
    /// The kind a legend shows: `LSN`, `bool`, `count`, …
    const KIND: &'static str;
    fn to_var(&self) -> Var;
}

impl ToVar for Lsn {
    const KIND: &'static str = "LSN";
    fn to_var(&self) -> Var {
        Var::Text(self.to_string())
    }
}

impl ToVar for Option<Lsn> {
    const KIND: &'static str = "LSN or none";
    fn to_var(&self) -> Var {
        Var::Text(self.map_or_else(|| "none".to_owned(), |lsn| lsn.to_string()))
    }
}

impl ToVar for bool {
    const KIND: &'static str = "bool";
    fn to_var(&self) -> Var {
        Var::Bool(*self)
    }
}

impl ToVar for String {
    const KIND: &'static str = "text";
    fn to_var(&self) -> Var {
        Var::Text(self.clone())
    }
}

macro_rules! counts {
    ($($int:ty),*) => {$(
        impl ToVar for $int {
            const KIND: &'static str = "count";
            fn to_var(&self) -> Var {
                Var::Int(u64::from(*self))
            }
        }

        impl ToVar for Option<$int> {
            const KIND: &'static str = "number or none";
            fn to_var(&self) -> Var {
                Var::Text(self.map_or_else(|| "none".to_owned(), |n| n.to_string()))
            }
        }

        impl ToVar for Vec<$int> {
            const KIND: &'static str = "list";
            fn to_var(&self) -> Var {
                Var::Text(format!("{self:?}"))
            }
        }
    )*};
}
counts!(u8, u16, u32, u64);

/// Reads one variable of `state` with `get`: how [`variables!`](crate::variables) applies each
/// declared accessor.
pub fn read<S, T>(state: &S, get: impl Fn(&S) -> T) -> T {
    get(state)
}

/// Declares a state's trace variables once: a `VarInfo` table for the system's [`View`] and the
/// state's [`Variables`] from the same lines, one a variable — its name, the Rust type its
/// accessor returns (which gives its kind, see [`ToVar`]), the accessor, and a one-line doc.
///
/// ```
/// # use walcheck_properties::system::Variables;
/// # use walcheck_properties::system::Lsn;
/// struct State { flush: Lsn, running: bool }
/// walcheck_properties::variables! { State as VARIABLES {
///     flush: Lsn = |s| s.flush, "the WAL flush pointer";
///     running: bool = |s| s.running, "whether the connector is up";
/// }}
/// let state = State { flush: Lsn(0x300), running: true };
/// assert_eq!(VARIABLES[0].kind, "LSN");
/// assert_eq!(state.variables()[0].1.to_string(), "0/300");
/// ```
#[macro_export]
macro_rules! variables {
    ($state:ty as $table:ident { $($name:ident: $t:ty = $get:expr, $doc:literal;)* }) => {
        /// The state's trace variables, each with its kind and a one-line doc.
        static $table: &[$crate::system::VarInfo] = &[$($crate::system::VarInfo {
            name: stringify!($name),
            kind: <$t as $crate::system::ToVar>::KIND,
            doc: $doc,
        }),*];

        impl $crate::system::Variables for $state {
            fn variables(&self) -> Vec<(&'static str, $crate::system::Var)> {
                vec![$((
                    stringify!($name),
                    $crate::system::ToVar::to_var(&$crate::system::read::<$state, $t>(self, $get)),
                )),*]
            }
        }
    };
}

/// A system's fault sets as an enum: `None` (named `none`, no fault) first, then one variant
/// for each single fault with its name on the command line and a predicate saying whether a
/// fault set injects it, then `All` (named `all`, every fault). Generates the enum (`Copy`,
/// ordered, hashable), `ALL` (every fault set, in catalogue order), `NAMES` (their names, for
/// [`SystemInfo::faults`]), `name`, `from_name`, the predicates and `Display` (the name).
///
/// ```
/// walcheck_properties::fault_sets! {
///     pub enum Faults {
///         /// The connector process dies.
///         ConnectorCrash = "connector-crash" => connector_crash,
///     }
/// }
/// assert_eq!(Faults::NAMES, ["none", "connector-crash", "all"]);
/// assert!(Faults::from_name("all").unwrap().connector_crash());
/// assert!(!Faults::None.connector_crash());
/// assert_eq!(Faults::ConnectorCrash.to_string(), "connector-crash");
/// ```
#[macro_export]
macro_rules! fault_sets {
    (
        $(#[$meta:meta])*
        $vis:vis enum $faults:ident {
            $($(#[$vmeta:meta])* $variant:ident = $name:literal => $fault:ident,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $faults {
            /// No fault.
            None,
            $($(#[$vmeta])* $variant,)*
            /// Every fault.
            All,
        }

        impl $faults {
            /// Every fault set, in catalogue order.
            pub const ALL: &'static [$faults] = &[$faults::None, $($faults::$variant,)* $faults::All];

            /// The fault sets' names, in catalogue order.
            pub const NAMES: &'static [&'static str] = &["none", $($name,)* "all"];

            /// The name used on the command line and in reports.
            pub const fn name(self) -> &'static str {
                match self {
                    $faults::None => "none",
                    $($faults::$variant => $name,)*
                    $faults::All => "all",
                }
            }

            /// The fault set called `name`, if any.
            pub fn from_name(name: &str) -> Option<$faults> {
                Self::ALL.iter().copied().find(|f| f.name() == name)
            }

            $(
                #[doc = concat!("Whether this fault set injects `", $name, "`.")]
                pub const fn $fault(self) -> bool {
                    matches!(self, $faults::$variant | $faults::All)
                }
            )*
        }

        impl std::fmt::Display for $faults {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// `Debug` for a system's state: its trace variables one a line, as step tables and the
/// Explorer name them.
#[macro_export]
macro_rules! debug_as_variables {
    ($state:ty) => {
        impl std::fmt::Debug for $state {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::system::fmt_variables(&$crate::system::Variables::variables(self), f)
            }
        }
    };
}

/// Writes `vars` one a line as `name: value` (LSNs as `X/Y`): how states read in the Explorer and
/// in `Debug` output.
pub fn fmt_variables(vars: &[(&'static str, Var)], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for (i, (name, value)) in vars.iter().enumerate() {
        if i > 0 {
            f.write_str("\n")?;
        }
        write!(f, "{name}: {value}")?;
    }
    Ok(())
}

/// A state's variables by name, for traces and step tables.
pub trait Variables {
    /// Every variable, in a fixed order.
    fn variables(&self) -> Vec<(&'static str, Var)>;
}

/// How a system's traces are drawn as a sequence diagram: its participants, which participant
/// each action goes from and to, and which participant each variable belongs to.
#[derive(Copy, Clone, Debug)]
pub struct Lanes {
    /// `(id, label)` in left-to-right order; ids are plain words.
    pub participants: &'static [(&'static str, &'static str)],
    /// The participants an action (by its name: the text before `{`) goes from and to.
    pub lane: fn(&str) -> (&'static str, &'static str),
    /// The participant a variable belongs to, or none for bookkeeping counters.
    pub owner: fn(&str) -> Option<&'static str>,
}

impl Lanes {
    /// One participant, `system`, that every action goes from and to and every variable belongs
    /// to: the diagram of a system that does not draw its processes apart.
    pub const SINGLE: Lanes = Lanes {
        participants: &[("system", "system")],
        lane: |_| ("system", "system"),
        owner: |_| Some("system"),
    };
}

/// Trace variables with the participant they belong to in sequence diagrams (`None`: bookkeeping
/// counters), as [`view!`](crate::view) declares them: one variable, or a group declared
/// together (`pg_view::SLOT`).
pub type Owned = (&'static [VarInfo], Option<&'static str>);

/// How many variables `owned` declares: the length of its [`View::variables`] table.
pub const fn owned_count(owned: &[Owned]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < owned.len() {
        n += owned[i].0.len();
        i += 1;
    }
    n
}

/// The variables of `owned`, in order: a [`View::variables`] table from what
/// [`view!`](crate::view) declares (`N` is [`owned_count`]).
pub const fn owned_variables<const N: usize>(owned: &[Owned]) -> [VarInfo; N] {
    let mut variables = [var("", "", ""); N];
    let (mut n, mut i) = (0, 0);
    while i < owned.len() {
        let mut j = 0;
        while j < owned[i].0.len() {
            variables[n] = owned[i].0[j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(n == N, "N is not the number of variables declared");
    variables
}

/// How many variables of `owned` no participant owns: the length of its [`View::counters`].
pub const fn counter_count(owned: &[Owned]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < owned.len() {
        if owned[i].1.is_none() {
            n += owned[i].0.len();
        }
        i += 1;
    }
    n
}

/// The names of the variables of `owned` no participant owns, in order: a [`View::counters`]
/// from what [`view!`](crate::view) declares (`N` is [`counter_count`]).
pub const fn counter_names<const N: usize>(owned: &[Owned]) -> [&'static str; N] {
    let mut names = [""; N];
    let (mut n, mut i) = (0, 0);
    while i < owned.len() {
        let mut j = 0;
        while owned[i].1.is_none() && j < owned[i].0.len() {
            names[n] = owned[i].0[j].name;
            n += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(n == N, "N is not the number of counters declared");
    names
}

/// The participant variable `name` belongs to in `owned`, if any: the [`Lanes::owner`] of a
/// [`view!`](crate::view).
pub fn owner_of(owned: &[Owned], name: &str) -> Option<&'static str> {
    owned
        .iter()
        .find(|(vars, _)| vars.iter().any(|var| var.name == name))
        .and_then(|(_, owner)| *owner)
}

/// Declares how a system's traces read, its [`View`], in one place: every variable under the
/// participant it belongs to, each as `"name": "kind", "doc";`, as a [`VarInfo`] declared
/// elsewhere (`pg_view::FLUSH;`) or as a group of them (`..pg_view::SLOT;`), with `_` for the
/// bookkeeping counters no participant owns; the sequence diagram's participants and the lane
/// each action takes; the key variables of step tables; and the terms the legend explains.
///
/// The [`View::variables`] table lists the variables in the order written, [`Lanes::owner`]
/// gives each its participant and [`View::counters`] are those under `_`: a variable's name is
/// written once for all three.
///
/// ```
/// use walcheck_properties::pg_view;
/// walcheck_properties::view! {
///     /// How the connector's traces read.
///     pub const VIEW;
///     variables {
///         pg {
///             pg_view::FLUSH;
///         }
///         slot {
///             ..pg_view::SLOT;
///         }
///         connector {
///             "phase": "text", "the connector's phase";
///         }
///         _ {
///             "crashes": "count", "connector crashes so far";
///         }
///     }
///     participants: &[("pg", "PostgreSQL"), ("slot", "slot"), ("connector", "connector")],
///     lane: |action| match action {
///         "Receive" => ("pg", "connector"),
///         "Ack" => ("connector", "slot"),
///         _ => ("connector", "connector"),
///     },
///     key_variables: &["flush", "confirmed_flush", "phase"],
///     terms: &[("txn", "a client transaction, by number")],
/// }
/// assert_eq!(VIEW.variables.len(), 7);
/// assert_eq!(VIEW.variables[5].name, "phase");
/// assert_eq!(VIEW.counters, ["crashes"]);
/// assert_eq!((VIEW.lanes.owner)("flush"), Some("pg"));
/// assert_eq!((VIEW.lanes.owner)("saved_restart_lsn"), Some("slot"));
/// assert_eq!((VIEW.lanes.owner)("crashes"), None);
/// ```
#[macro_export]
macro_rules! view {
    (@owned [$($done:tt)*] $owner:tt { ..$group:path; $($in:tt)* } $($rest:tt)*) => {
        $crate::view!(@owned [$($done)* (&$group, $crate::view!(@owner $owner)),] $owner { $($in)* } $($rest)*)
    };
    (@owned [$($done:tt)*] $owner:tt { $name:literal: $kind:literal, $doc:literal; $($in:tt)* } $($rest:tt)*) => {
        $crate::view!(@owned [$($done)* (&[$crate::system::var($name, $kind, $doc)], $crate::view!(@owner $owner)),] $owner { $($in)* } $($rest)*)
    };
    (@owned [$($done:tt)*] $owner:tt { $info:path; $($in:tt)* } $($rest:tt)*) => {
        $crate::view!(@owned [$($done)* (&[$info], $crate::view!(@owner $owner)),] $owner { $($in)* } $($rest)*)
    };
    (@owned [$($done:tt)*] $owner:tt {} $($rest:tt)*) => {
        $crate::view!(@owned [$($done)*] $($rest)*)
    };
    (@owned [$($done:tt)*]) => {
        &[$($done)*]
    };
    (@owner _) => {
        None
    };
    (@owner $owner:ident) => {
        Some(stringify!($owner))
    };
    (
        $(#[$meta:meta])*
        $vis:vis const $view:ident;
        variables { $($variables:tt)* }
        participants: $participants:expr,
        lane: $lane:expr,
        key_variables: $key_variables:expr,
        terms: $terms:expr $(,)?
    ) => {
        $(#[$meta])*
        $vis const $view: $crate::system::View = {
            const OWNED: &[$crate::system::Owned] = $crate::view!(@owned [] $($variables)*);
            const VARIABLES: [$crate::system::VarInfo; $crate::system::owned_count(OWNED)] =
                $crate::system::owned_variables(OWNED);
            const COUNTERS: [&str; $crate::system::counter_count(OWNED)] =
                $crate::system::counter_names(OWNED);
            $crate::system::View {
                variables: &VARIABLES,
                terms: $terms,
                key_variables: $key_variables,
                counters: &COUNTERS,
                lanes: &$crate::system::Lanes {
                    participants: $participants,
                    lane: $lane,
                    owner: |name| $crate::system::owner_of(OWNED, name),
                },
            }
        };
    };
}

/// How a fairness constraint restricts the infinite behaviours a liveness check considers
/// (TLA+'s `WF` and `SF`, as TLC checks them).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fairness {
    /// `WF`: an action of the class that stays enabled from some point on is eventually taken.
    Weak,
    /// `SF`: an action of the class that is enabled infinitely often is eventually taken.
    Strong,
}

impl Fairness {
    /// The name reports use (`weak`, `strong`).
    pub const fn name(self) -> &'static str {
        match self {
            Fairness::Weak => "weak",
            Fairness::Strong => "strong",
        }
    }
}

/// A fairness constraint on a class of a system's actions, declared next to its model with why
/// it is realistic.
#[derive(Copy, Clone, Debug)]
pub struct FairClass<A> {
    /// A short name: `walwriter`, `mailbox`.
    pub class: &'static str,
    pub kind: Fairness,
    /// Whether an action belongs to the class.
    pub member: fn(&A) -> bool,
}

impl<A> FairClass<A> {
    /// A weakly fair class (`WF`): an action of it that stays enabled is eventually taken.
    pub const fn weak(class: &'static str, member: fn(&A) -> bool) -> FairClass<A> {
        FairClass {
            class,
            kind: Fairness::Weak,
            member,
        }
    }

    /// A strongly fair class (`SF`): an action of it enabled infinitely often is eventually
    /// taken.
    pub const fn strong(class: &'static str, member: fn(&A) -> bool) -> FairClass<A> {
        FairClass {
            class,
            kind: Fairness::Strong,
            member,
        }
    }
}

/// A liveness property: `always (trigger implies eventually goal)`, or `eventually goal` from the
/// initial state when there is no trigger.
pub struct Liveness<M, S> {
    /// Its stable id, as in the system's property list.
    pub id: &'static str,
    /// `Q` of `always (Q implies eventually P)`; `None` for plain `eventually P`.
    pub trigger: Option<fn(&M, &S) -> bool>,
    /// `P`.
    pub goal: fn(&M, &S) -> bool,
}

/// Which fairness a liveness check assumes: the constraints the system declares, or none (every
/// maximal path counts, as in stateright's own `eventually`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FairnessChoice {
    Declared,
    None,
}

impl FairnessChoice {
    /// The fairness constraints this choice puts in force: the system's `declared` ones, or
    /// none.
    pub fn constraints<A>(self, declared: &'static [FairClass<A>]) -> &'static [FairClass<A>] {
        match self {
            FairnessChoice::Declared => declared,
            FairnessChoice::None => &[],
        }
    }
    /// The choice of a configuration's `fairness` bound ([`FAIRNESS_BOUND`]).
    pub fn of(config: &Config) -> FairnessChoice {
        match config.name("fairness") {
            "none" => FairnessChoice::None,
            _ => FairnessChoice::Declared,
        }
    }

    /// The values of the `fairness` bound.
    pub const NAMES: [&'static str; 2] = ["declared", "none"];

    pub const fn name(self) -> &'static str {
        match self {
            FairnessChoice::Declared => "declared",
            FairnessChoice::None => "none",
        }
    }
}

/// The `fairness` bound both systems take: which fairness their liveness checks assume. It must
/// choose only that (through [`FairnessChoice::constraints`] in [`System::fairness`]), never a
/// transition or a property: the liveness rows of configurations that differ only in it are
/// decided on one explored graph.
pub const FAIRNESS_BOUND: BoundInfo = BoundInfo {
    name: "fairness",
    default: BoundValue::Name("declared"),
    min: None,
    max: None,
    values: &FairnessChoice::NAMES,
    unit: "fairness",
    doc: "liveness checks assume the system's declared fairness (declared) or none (none); \
          safety checks ignore it",
    quiet: true,
    power_of_two: false,
};

/// A checkable system as the catalogue, `walcheck list`, reports and traces read it: everything
/// but its model, declared once next to the model.
#[derive(Copy, Clone, Debug)]
pub struct SystemInfo {
    /// The name on the command line and in reports: `olake-bootstrap`.
    pub name: &'static str,
    /// One line: what it models, and from which upstream code.
    pub doc: &'static str,
    /// `(name, upstream reference)`, in catalogue order: `("pr1084", "OLake PR #1084, 5b0c1a2")`.
    pub variants: &'static [(&'static str, &'static str)],
    /// Fault sets, in catalogue order. `none` has no fault; `all` has every fault; any other
    /// fault set has the one fault it names.
    pub faults: &'static [&'static str],
    /// Bounds and knobs `--bound` sets, in the order configurations list them.
    pub bounds: &'static [BoundInfo],
    /// Knobs only a trace's header carries (the simulator's workload), never `--bound`. Setting
    /// one shows them all in the configuration.
    pub trace_knobs: &'static [BoundInfo],
    /// Every property, each declared once.
    pub properties: &'static [PropertyInfo],
    /// A knob the default catalogue runs at its default and at this other value (unless
    /// `--bound` sets it): olake-bootstrap's `server=standby`.
    pub also: Option<(&'static str, &'static str)>,
    /// How its traces read.
    pub view: View,
}

/// How a system's traces read: the variables step tables show, and how sequence diagrams draw
/// them.
#[derive(Copy, Clone, Debug)]
pub struct View {
    /// Every variable a state of the system can show, declared once (a state shows a subset:
    /// olake-bootstrap names its WAL pointers `primary_*` on a standby).
    pub variables: &'static [VarInfo],
    /// Terms that appear inside actions and values rather than as variables (`W0`,
    /// `restart_moves`), each with one line saying what it is: the legend explains those a
    /// table shows.
    pub terms: &'static [(&'static str, &'static str)],
    /// Variables every step table shows.
    pub key_variables: &'static [&'static str],
    /// Bookkeeping counters step tables leave out (the actions show them); traces keep them.
    pub counters: &'static [&'static str],
    /// How its traces are drawn as a sequence diagram.
    pub lanes: &'static Lanes,
}

impl View {
    /// The view of a system that draws no processes apart: `variables`, the step tables'
    /// `key_variables`, no terms or counters, one diagram lane ([`Lanes::SINGLE`]).
    pub const fn new(
        variables: &'static [VarInfo],
        key_variables: &'static [&'static str],
    ) -> View {
        View {
            variables,
            terms: &[],
            key_variables,
            counters: &[],
            lanes: &Lanes::SINGLE,
        }
    }
}

impl SystemInfo {
    /// A declaration with nothing declared, to complete one with `..SystemInfo::EMPTY`: no
    /// variants, fault sets, bounds, trace knobs, properties or `also` knob; no variables; one
    /// lane.
    pub const EMPTY: SystemInfo = SystemInfo {
        name: "",
        doc: "",
        variants: &[],
        faults: &["none"],
        bounds: &[],
        trace_knobs: &[],
        properties: &[],
        also: None,
        view: View::new(&[], &[]),
    };

    /// The variant names, in catalogue order.
    pub fn variant_names(&self) -> Vec<&'static str> {
        self.variants.iter().map(|(name, _)| *name).collect()
    }

    /// The property with id `id`.
    pub fn property(&self, id: &str) -> Option<&'static PropertyInfo> {
        self.properties.iter().find(|p| p.id == id)
    }

    fn bound(&self, name: &str) -> Option<&'static BoundInfo> {
        self.bounds.iter().find(|b| b.name == name)
    }
}

/// One configuration of a system: its variant, fault set and the value of every bound (and of
/// any trace knob set), validated against its [`SystemInfo`]. The catalogue, the checkers and
/// trace headers all speak of configurations in this one form; a system reads its values once,
/// in [`System::config`], with [`Config::number`], [`Config::name`], [`Config::is_variant`] and
/// [`Config::meets`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Config {
    pub variant: &'static str,
    pub faults: &'static str,
    /// Every bound's value, in [`SystemInfo::bounds`] order.
    values: Vec<(&'static str, BoundValue)>,
    /// The trace knobs' values, in [`SystemInfo::trace_knobs`] order, once any is set.
    knobs: Option<Vec<(&'static str, BoundValue)>>,
    /// The declaration it was made from, which [`Config::meets`] and [`Config::is_variant`]
    /// hold names against.
    system: Declaration,
}

/// A configuration's [`SystemInfo`], compared, ordered and hashed by the system's name (every
/// configuration of one system has the same).
#[derive(Copy, Clone)]
struct Declaration(&'static SystemInfo);

impl Declaration {
    fn name(self) -> &'static str {
        self.0.name
    }
}

impl fmt::Debug for Declaration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for Declaration {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Declaration {}

impl PartialOrd for Declaration {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Declaration {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl std::hash::Hash for Declaration {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl Config {
    /// `info`'s `variant` with `faults` and every bound at its default, or a one-line error
    /// naming what is unknown.
    pub fn new(info: &'static SystemInfo, variant: &str, faults: &str) -> Result<Config, String> {
        let variant = info
            .variants
            .iter()
            .map(|(name, _)| *name)
            .find(|name| *name == variant)
            .ok_or_else(|| {
                format!(
                    "{} has no variant {variant:?}; its variants are {}",
                    info.name,
                    info.variant_names().join(", ")
                )
            })?;
        let faults = *info.faults.iter().find(|f| **f == faults).ok_or_else(|| {
            format!(
                "{} has no fault set {faults:?}; its fault sets are {}",
                info.name,
                info.faults.join(", ")
            )
        })?;
        Ok(Config {
            variant,
            faults,
            values: info.bounds.iter().map(|b| (b.name, b.default)).collect(),
            knobs: None,
            system: Declaration(info),
        })
    }

    /// Sets bound `name` of `info` from its text, or says in one line why not (unknown bound,
    /// bad value, out of range).
    pub fn set_bound(
        &mut self,
        info: &'static SystemInfo,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        let bound = info.bound(name).ok_or_else(|| {
            let names: Vec<_> = info.bounds.iter().map(|b| b.name).collect();
            format!(
                "{} has no bound {name:?}; its bounds are {}",
                info.name,
                names.join(", ")
            )
        })?;
        let value = bound.parse(text)?;
        let slot = self
            .values
            .iter_mut()
            .find(|(n, _)| *n == bound.name)
            .expect("a configuration has every bound of its system");
        slot.1 = value;
        Ok(())
    }

    /// Sets a bound, or a knob only traces carry ([`SystemInfo::trace_knobs`]), from its text.
    pub fn set_knob(
        &mut self,
        info: &'static SystemInfo,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        let Some(knob) = info.trace_knobs.iter().find(|k| k.name == name) else {
            return self.set_bound(info, name, text);
        };
        let value = knob.parse(text)?;
        let knobs = self.knobs.get_or_insert_with(|| {
            info.trace_knobs
                .iter()
                .map(|k| (k.name, k.default))
                .collect()
        });
        let slot = knobs
            .iter_mut()
            .find(|(n, _)| *n == knob.name)
            .expect("every trace knob is listed");
        slot.1 = value;
        Ok(())
    }

    /// The value of bound or trace knob `name`, if it has one.
    pub fn value(&self, name: &str) -> Option<BoundValue> {
        self.values
            .iter()
            .chain(self.knobs.iter().flatten())
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// The value of numeric bound `name`.
    ///
    /// Panics if the system has no such numeric bound: a system reads only bounds it declares.
    pub fn number(&self, name: &str) -> u64 {
        match self.value(name) {
            Some(BoundValue::Number(n)) => n,
            other => panic!("no numeric bound {name}: {other:?}"),
        }
    }

    /// The value of numeric bound `name` as a `u8`, for a bound whose declared range keeps it
    /// below 256 (counts of transactions, runs, crashes).
    ///
    /// Panics if the system has no such numeric bound or its range lets it exceed 255.
    pub fn small(&self, name: &str) -> u8 {
        let n = self.number(name);
        u8::try_from(n).unwrap_or_else(|_| panic!("bound {name}={n} does not fit in a u8"))
    }

    /// The value of named bound `name` (one of its values).
    ///
    /// Panics if the system has no such named bound.
    pub fn name(&self, name: &str) -> &'static str {
        match self.value(name) {
            Some(BoundValue::Name(v)) => v,
            other => panic!("no named bound {name}: {other:?}"),
        }
    }

    /// Every bound's value in declaration order, quiet ones included, then the trace knobs' once
    /// any is set: what a system builds its model from.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, BoundValue)> + '_ {
        self.values
            .iter()
            .chain(self.knobs.iter().flatten())
            .copied()
    }

    /// Whether any trace knob is set.
    pub fn has_trace_knobs(&self) -> bool {
        self.knobs.is_some()
    }

    /// Every bound's value as configurations list it: in declaration order, a quiet bound only
    /// when it is not at its default, then the trace knobs once any is set.
    pub fn bounds(&self, info: &SystemInfo) -> Vec<(&'static str, BoundValue)> {
        let loud = |(name, value): &&(&'static str, BoundValue)| {
            info.bound(name)
                .is_none_or(|b| !b.quiet || b.default != *value)
        };
        self.values
            .iter()
            .filter(loud)
            .chain(self.knobs.iter().flatten())
            .copied()
            .collect()
    }

    /// The bounds whose value is not the default, as `name=value`.
    pub fn non_default_bounds(&self, info: &SystemInfo) -> Vec<String> {
        self.bounds(info)
            .into_iter()
            .filter(|(name, value)| info.bound(name).is_some_and(|b| b.default != *value))
            .map(|(name, value)| format!("{name}={value}"))
            .collect()
    }

    /// Whether a property's `needs` holds here: `fault:NAME` when the fault set is NAME or
    /// `all`; `KNOB=VALUE` when the bound has that value.
    ///
    /// Panics on a fault, bound or knob the system does not declare, or on text of neither
    /// form: a misspelt name in a model would otherwise switch its fault off for good and hide
    /// what it finds. A system asks in [`System::config`], which registering a system calls for
    /// each variant, so the panic is a one-line error there, not in a later check.
    pub fn meets(&self, needs: Option<&str>) -> bool {
        let Some(needs) = needs else { return true };
        let info = self.system.0;
        if let Some(fault) = needs.strip_prefix("fault:") {
            assert!(
                info.faults.contains(&fault),
                "needs {needs:?}: {} has no fault set {fault:?}; its fault sets are {}",
                info.name,
                info.faults.join(", ")
            );
            return self.faults == fault || self.faults == "all";
        }
        let Some((knob, value)) = needs.split_once('=') else {
            panic!("needs {needs:?}: write fault:NAME or KNOB=VALUE");
        };
        let Some(set) = self.value(knob) else {
            panic!(
                "needs {needs:?}: {} has no bound or knob {knob:?}",
                info.name
            );
        };
        set.to_string() == value
    }

    /// Whether this is variant `name`.
    ///
    /// Panics on a variant the system does not declare (see [`Config::meets`]).
    pub fn is_variant(&self, name: &str) -> bool {
        let info = self.system.0;
        assert!(
            info.variants.iter().any(|(v, _)| *v == name),
            "{} has no variant {name:?}; its variants are {}",
            info.name,
            info.variant_names().join(", ")
        );
        self.variant == name
    }
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
