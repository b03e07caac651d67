//! A system's declaration and its configurations: [`SystemInfo`] (name, variants, fault sets,
//! bounds with units and ranges, properties, trace view), its bounds and knobs ([`BoundInfo`],
//! the `fairness` bound), fault sets as an enum ([`fault_sets!`](crate::fault_sets)), and
//! [`Config`]: one configuration, validated against its declaration, which a system reads once
//! into its typed configuration.

use std::fmt;

use crate::property::{FairClass, PropertyInfo};
use crate::view::View;

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
    /// A word a numeric bound also takes for 0 (`unbounded`).
    pub zero_word: Option<&'static str>,
    /// A numeric bound of PostgreSQL major versions that also takes a release, `MAJOR.MINOR`
    /// (`15.12`) with its major in range: its value is then that text, a name.
    pub release: bool,
    /// Left out of a configuration's text as well (`check`'s `configuration:` line) while at its
    /// default: a knob added after the reports were committed.
    pub unlisted: bool,
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
        zero_word: None,
        release: false,
        unlisted: false,
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
        zero_word: None,
        release: false,
        unlisted: false,
    }
}

impl BoundInfo {
    /// This bound, left out of a configuration's bounds while at its default (see
    /// [`BoundInfo::quiet`]).
    pub const fn quiet(mut self) -> BoundInfo {
        self.quiet = true;
        self
    }

    /// This bound, left out of a configuration's bounds and of its text while at its default
    /// (see [`BoundInfo::unlisted`]).
    pub const fn unlisted(mut self) -> BoundInfo {
        self.quiet = true;
        self.unlisted = true;
        self
    }

    /// This numeric bound, taking `word` for 0 too (`runs=unbounded`).
    pub const fn zero_word(mut self, word: &'static str) -> BoundInfo {
        self.zero_word = Some(word);
        self
    }

    /// This numeric bound of major versions, taking a release `MAJOR.MINOR` too.
    pub const fn release(mut self) -> BoundInfo {
        self.release = true;
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
        if self.zero_word == Some(text) {
            return Ok(BoundValue::Number(0));
        }
        if let Some((major, minor)) = text.split_once('.').filter(|_| self.release) {
            let digits =
                |t: &str| (1..=2).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
            let in_range = major.parse::<u64>().is_ok_and(|m| (min..=max).contains(&m));
            // `17.05` would name the same release as `17.5`, apart in trace names.
            let zero_led = minor.len() > 1 && minor.starts_with('0');
            if digits(major) && digits(minor) && in_range && !zero_led {
                return Ok(BoundValue::Name(Box::leak(
                    text.to_owned().into_boxed_str(),
                )));
            }
            return Err(format!(
                "bound {} takes a major version from {min} to {max} or a release MAJOR.MINOR, not {text:?}",
                self.name
            ));
        }
        let bad = || {
            match self.release {
            true => format!(
                "bound {} takes a major version from {min} to {max} or a release MAJOR.MINOR, not {text:?}",
                self.name
            ),
            false => format!(
                "bound {} takes a whole number from {min} to {max}, not {text:?}",
                self.name
            ),
        }
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
/// choose only that (through [`FairnessChoice::constraints`] in [`System::fairness`](crate::system::System::fairness)), never a
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
    zero_word: None,
    release: false,
    unlisted: false,
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
/// in [`System::config`](crate::system::System::config), with [`Config::number`], [`Config::name`], [`Config::is_variant`] and
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

    /// Every bound's value as a configuration's text shows it: [`Config::values`] but the
    /// [`BoundInfo::unlisted`] ones at their default.
    pub fn listed(&self, info: &SystemInfo) -> Vec<(&'static str, BoundValue)> {
        self.values()
            .filter(|(name, value)| {
                info.bound(name)
                    .is_none_or(|b| !b.unlisted || b.default != *value)
            })
            .collect()
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
    /// what it finds. A system asks in [`System::config`](crate::system::System::config), which registering a system calls for
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
