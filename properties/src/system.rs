//! The vocabulary of a checkable system: property kinds and declarations, bounds with their
//! ranges, trace variables, sequence-diagram lanes and fairness, as the checkers, the catalogue
//! and `walcheck list` read them.

use std::fmt;

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
    }
}

impl BoundInfo {
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
        let n: u64 = text.parse().map_err(|_| bad())?;
        if n < min || n > max {
            return Err(format!(
                "bound {}={n} is outside its range {min}..={max} ({})",
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

/// What the fair-liveness checker asks of a system: the fairness its `fairness` bound selects
/// and its liveness properties. A system without liveness properties (olake-sync) takes the
/// defaults: no fairness, no properties.
pub trait Live: stateright::Model + Sized {
    /// The fairness constraints in force for this configuration.
    fn fairness(&self) -> &'static [FairClass<Self::Action>] {
        &[]
    }

    /// The liveness properties, by id.
    fn liveness(&self) -> Vec<Liveness<Self, Self::State>> {
        Vec::new()
    }
}

/// Which fairness a liveness check assumes: the constraints the system declares, or none (every
/// maximal path counts, as in stateright's own `eventually`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FairnessChoice {
    Declared,
    None,
}

impl FairnessChoice {
    /// The values of the `fairness` bound.
    pub const NAMES: [&'static str; 2] = ["declared", "none"];

    pub const fn name(self) -> &'static str {
        match self {
            FairnessChoice::Declared => "declared",
            FairnessChoice::None => "none",
        }
    }
}

/// The `fairness` bound both systems take: which fairness their liveness checks assume.
pub const FAIRNESS_BOUND: BoundInfo = BoundInfo {
    name: "fairness",
    default: BoundValue::Name("declared"),
    min: None,
    max: None,
    values: &FairnessChoice::NAMES,
    unit: "fairness",
    doc: "liveness checks assume the system's declared fairness (declared) or none (none); \
          safety checks ignore it",
};
