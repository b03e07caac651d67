//! How a system's states read in traces: trace variables with their kind and doc ([`VarInfo`],
//! [`Var`], [`Variables`], [`variables!`](crate::variables)), and the view step tables and
//! sequence diagrams take of them ([`View`]: key variables, counters, terms, and the diagram's
//! [`Lanes`], declared with [`view!`](macro@crate::view)).

use std::fmt;

use walcheck_model::Lsn;

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
        static $table: &[$crate::view::VarInfo] = &[$($crate::view::VarInfo {
            name: stringify!($name),
            kind: <$t as $crate::view::ToVar>::KIND,
            doc: $doc,
        }),*];

        impl $crate::view::Variables for $state {
            fn variables(&self) -> Vec<(&'static str, $crate::view::Var)> {
                vec![$((
                    stringify!($name),
                    $crate::view::ToVar::to_var(&$crate::view::read::<$state, $t>(self, $get)),
                )),*]
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
                $crate::view::fmt_variables(&$crate::view::Variables::variables(self), f)
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
/// counters), as [`view!`](macro@crate::view) declares them: one variable, or a group declared
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
/// [`view!`](macro@crate::view) declares (`N` is [`owned_count`]).
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
/// from what [`view!`](macro@crate::view) declares (`N` is [`counter_count`]).
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
/// [`view!`](macro@crate::view).
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
        $crate::view!(@owned [$($done)* (&[$crate::view::var($name, $kind, $doc)], $crate::view!(@owner $owner)),] $owner { $($in)* } $($rest)*)
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
        $vis const $view: $crate::view::View = {
            const OWNED: &[$crate::view::Owned] = $crate::view!(@owned [] $($variables)*);
            const VARIABLES: [$crate::view::VarInfo; $crate::view::owned_count(OWNED)] =
                $crate::view::owned_variables(OWNED);
            const COUNTERS: [&str; $crate::view::counter_count(OWNED)] =
                $crate::view::counter_names(OWNED);
            $crate::view::View {
                variables: &VARIABLES,
                terms: $terms,
                key_variables: $key_variables,
                counters: &COUNTERS,
                lanes: &$crate::view::Lanes {
                    participants: $participants,
                    lane: $lane,
                    owner: |name| $crate::view::owner_of(OWNED, name),
                },
            }
        };
    };
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
