//! The vocabulary properties are declared in: a property's kind (always, sometimes, eventually)
//! and its declaration (id, doc, what a configuration needs for it, knobs of its own), the
//! fairness a liveness check assumes (weak or strong, over a class of actions) and a liveness
//! property's trigger and goal. A declaration meets its condition in
//! [`Declared`](crate::system::Declared); the CDC invariants shared by every system are in
//! [`crate::cdc`].

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
    /// NAME) or `KNOB=VALUE` (see [`Config::meets`](crate::declaration::Config::meets)).
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
