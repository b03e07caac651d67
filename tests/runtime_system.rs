//! A system declared at run time, as a connector file is (`walcheck_lang::system`): its name,
//! variants, bound and properties come from text the process reads, not from `static` items. The
//! system is leaked once, for the rest of the process — what the registry's `&'static`
//! references ask — and checked like a built-in one: its type, `&Counter`, is the `Systems` the
//! run is given, as a crate's own binary gives its own to `walcheck::cli::main`.

use walcheck::catalogue::{self, AnySystem, Selection};
use walcheck::search::{Budget, Verdict};
use walcheck::system::{
    number, Config, Declared, Model, PropertyInfo, System, SystemInfo, VisitSystems,
};
use walcheck::{run, Var, Variables};

use crate::util::in_own_process;

/// What a file would hold: a name, the step of each variant, and a limit the counter must stay
/// within.
const SOURCE: &str = "name: counter\nvariants: by-one=1 by-three=3\nlimit: 4\n";

/// Text read at run time, kept for the rest of the process.
fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// A counter that adds its variant's step up to `steps` times; `within-limit` says it never
/// passes the file's limit.
struct Counter {
    info: &'static SystemInfo,
    steps: Vec<(&'static str, u64)>,
    limit: u64,
    /// The bound its model reads its number of steps from: `steps`, or a misspelling.
    reads: &'static str,
    /// How many of its declared properties its model checks (each with the same condition).
    checked: usize,
    /// A property it keeps an expectation for, making a table of one row; `None`: no table.
    table: Option<&'static str>,
    /// What its configuration asks [`Config::meets`] for its steps to be taken: `None`, or a
    /// need.
    step_needs: Option<&'static str>,
    /// A bound its configuration also reads when `steps` is 3, and only then: `None`, or a
    /// name.
    read_at_three: Option<&'static str>,
    /// A value its step panics at (a bug in a system's own code): `None`, or the value.
    panic_at: Option<u64>,
}

/// A configuration of the counter, read once: its variant's step, how many steps it takes, and
/// whether it takes them at all (what its steps ask [`Config::meets`]).
#[derive(Clone, Debug)]
struct Setup {
    step: u64,
    steps: u64,
    stepping: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State(u64, u64);

impl Variables for State {
    fn variables(&self) -> Vec<(&'static str, Var)> {
        vec![("value", Var::Int(self.0)), ("steps", Var::Int(self.1))]
    }
}

impl System for Counter {
    type State = State;
    type Action = u64;
    type Config = Setup;

    fn info(&self) -> &'static SystemInfo {
        self.info
    }

    fn config(&self, config: &Config) -> Setup {
        let variant = self.steps.iter().find(|(v, _)| *v == config.variant);
        if let Some(name) = self
            .read_at_three
            .filter(|_| config.number(self.reads) == 3)
        {
            config.number(name);
        }
        Setup {
            step: variant.unwrap().1,
            steps: config.number(self.reads),
            stepping: config.meets(self.step_needs),
        }
    }

    fn init_states(&self, _: &Setup) -> Vec<State> {
        vec![State(0, 0)]
    }

    fn actions(&self, setup: &Setup, state: &State, actions: &mut Vec<u64>) {
        if state.1 < setup.steps && setup.stepping {
            actions.push(setup.step);
        }
    }

    fn next_state(&self, _: &Setup, state: &State, step: u64) -> Option<State> {
        let next = State(state.0 + step, state.1 + 1);
        assert!(
            self.panic_at != Some(next.0),
            "the counter reached {}",
            next.0
        );
        Some(next)
    }

    fn properties(&self) -> Vec<Declared<Self>> {
        let within = |m: &Model<Counter>, s: &State| s.0 <= m.system.limit;
        let checked = &self.info.properties[..self.checked];
        checked.iter().map(|p| p.when(within)).collect()
    }

    fn expected(
        &self,
        _: &Setup,
        property: &PropertyInfo,
    ) -> Option<Result<(Verdict, &'static str), String>> {
        let row = Ok((Verdict::Holds, "the table's one row"));
        self.table.filter(|id| *id == property.id).map(|_| row)
    }
}

/// Reads `SOURCE` into a system, its declaration owned by the process.
fn read(source: &str) -> Counter {
    let field = |key: &str| {
        let line = source.lines().find_map(|l| l.strip_prefix(key)).unwrap();
        line.trim_start_matches(':').trim()
    };
    let steps: Vec<(&'static str, u64)> = field("variants")
        .split_whitespace()
        .map(|v| {
            let (name, step) = v.split_once('=').unwrap();
            (leak(name), step.parse().unwrap())
        })
        .collect();
    let variants: Vec<(&'static str, &'static str)> = steps
        .iter()
        .map(|(name, _)| (*name, "read at run time"))
        .collect();
    let doc = leak(&format!("never above {}", field("limit")));
    let info = SystemInfo {
        name: leak(field("name")),
        doc: "a counter declared at run time",
        variants: Box::leak(variants.into_boxed_slice()),
        bounds: Box::leak(Box::new([number("steps", 2, 1, 3, "steps", "steps taken")])),
        properties: Box::leak(Box::new([PropertyInfo::always(leak("within-limit"), doc)])),
        ..SystemInfo::EMPTY
    };
    Counter {
        info: Box::leak(Box::new(info)),
        steps,
        limit: field("limit").parse().unwrap(),
        reads: "steps",
        checked: 1,
        table: None,
        step_needs: None,
        read_at_three: None,
        panic_at: None,
    }
}

#[test]
fn a_system_read_at_run_time_is_registered_and_checked() {
    // Registered systems are the process's: the other tests of this binary see the built-in
    // catalogue only.
    if !in_own_process("runtime_system::a_system_read_at_run_time_is_registered_and_checked") {
        return;
    }
    let system: &'static Counter = Box::leak(Box::new(read(SOURCE)));
    catalogue::register(&system).unwrap();
    let selection = Selection {
        specs: vec!["counter".to_owned()],
        ..Selection::default()
    };
    let entries = catalogue::select(&selection).unwrap();
    let results = run::run_all::<&Counter>(&entries, 1, &Budget::default());
    let verdicts: Vec<(&str, Verdict, u64)> = results
        .iter()
        .map(|r| (r.entry.config.variant(), r.verdict, r.max_depth))
        .collect();
    // By one, two steps reach 2; by three, the second step reaches 6, past the limit of 4.
    assert_eq!(
        verdicts,
        [
            ("by-one", Verdict::Holds, 2),
            ("by-three", Verdict::Violated, 2)
        ]
    );
    assert_eq!(
        catalogue::system("counter").unwrap().info().properties[0].doc,
        "never above 4"
    );
}

#[test]
fn every_built_in_declaration_validates() {
    struct Validate;
    impl VisitSystems for Validate {
        fn visit<S: System>(&mut self, system: &'static S) {
            catalogue::validate(system).unwrap();
            catalogue::try_out(system).unwrap();
        }
    }
    walcheck_systems::each_built_in(&mut Validate);
    catalogue::validate(&read(SOURCE)).unwrap();
}

/// A declaration walcheck cannot run is a one-line error when the system is registered.
#[test]
fn a_broken_declaration_is_a_one_line_error() {
    let with = |edit: fn(&mut SystemInfo)| {
        let mut system = read(SOURCE);
        let mut info = *system.info;
        edit(&mut info);
        system.info = Box::leak(Box::new(info));
        catalogue::validate(&system).unwrap_err()
    };
    type Case = (fn(&mut SystemInfo), &'static str);
    let cases: [Case; 5] = [
        (|i| i.name = "count:er", "system \"count:er\": a system's name is a word without ':' or spaces"),
        (|i| i.bounds = Box::leak(Box::new([number("steps", 2, 1, 3, "", ""), number("steps", 1, 1, 3, "", "")])), "system \"counter\": bound \"steps\" is declared twice"),
        (|i| i.bounds = Box::leak(Box::new([number("steps", 9, 1, 3, "steps", "")])), "system \"counter\": the default of steps: bound steps=9 is outside its range, 1 to 3 (steps)"),
        (|i| i.properties = Box::leak(Box::new([i.properties[0].needs("fault:typo")])), "system \"counter\": property within-limit: needs fault \"typo\", not one of its fault sets"),
        (|i| i.properties = Box::leak(Box::new([i.properties[0], PropertyInfo::always("phantom", "")])), "system \"counter\": property phantom is declared but its model's properties() does not check it"),
    ];
    for (edit, message) in cases {
        assert_eq!(with(edit), message);
    }
}

/// A system that reads a bound it does not declare panics in `Config::number` as it reads its
/// configuration; the registry says so in one line instead of panicking on some later command.
#[test]
fn a_model_reading_an_undeclared_bound_is_a_one_line_error() {
    let system = Counter {
        reads: "stpes",
        ..read(SOURCE)
    };
    assert_eq!(
        catalogue::validate(&system).unwrap_err(),
        "system \"counter\": building its model of the defaults panicked: no numeric bound stpes: None"
    );
}

/// A bound it does not declare that a system reads only at some value of another escapes
/// registration, which reads the defaults; setting that value is a one-line error, not a panic
/// in the command that goes on to build the model.
#[test]
fn an_undeclared_bound_read_only_at_some_value_is_a_one_line_error_when_set() {
    let system: &'static dyn AnySystem = Box::leak(Box::new(Counter {
        read_at_three: Some("limt"),
        ..read(SOURCE)
    }));
    catalogue::validate(system).unwrap();
    let mut config = catalogue::SystemConfig::new(system, "by-one", "none").unwrap();
    config.set_bound("steps", "1").unwrap();
    assert_eq!(
        config.set_bound("steps", "3").unwrap_err(),
        "system \"counter\": reading its configuration counter:by-one faults=none steps=3 \
         panicked: no numeric bound limt: None"
    );
}

/// A system whose configuration asks for a fault it does not declare (a misspelling that would
/// switch the fault off for good) panics in `Config::meets`; trying the system out before it is
/// registered says so in one line, and a correct name passes.
#[test]
fn a_misspelt_fault_in_a_step_is_a_one_line_error() {
    let with = |needs| Counter {
        step_needs: Some(needs),
        ..read(SOURCE)
    };
    assert_eq!(
        catalogue::try_out(Box::leak(Box::new(with("fault:crahs")))).unwrap_err(),
        "system \"counter\": its by-one model panicked: needs \"fault:crahs\": counter has no \
         fault set \"crahs\"; its fault sets are none"
    );
    catalogue::try_out(Box::leak(Box::new(with("steps=2")))).unwrap();
}

/// An expectation table with no row for a property is a one-line error, both when the system
/// is registered and when a configuration asks for that property's expectation.
#[test]
fn an_expectation_table_without_a_row_is_a_one_line_error() {
    let mut system = read(SOURCE);
    let also = PropertyInfo::always("also-within-limit", "never above the limit either");
    let properties = [system.info.properties[0], also];
    system.info = Box::leak(Box::new(SystemInfo {
        properties: Box::leak(Box::new(properties)),
        ..*system.info
    }));
    (system.checked, system.table) = (2, Some("within-limit"));
    let message =
        "counter keeps an expectation table, but it has no row for property also-within-limit";
    let error = catalogue::validate(&system).unwrap_err();
    assert_eq!(error, format!("system \"counter\": {message}"));
    let system: &'static dyn AnySystem = Box::leak(Box::new(system));
    let config = catalogue::SystemConfig::new(system, "by-one", "none").unwrap();
    assert!(config.expected(&system.info().properties[0]).is_ok());
    assert_eq!(config.expected(&also).unwrap_err(), message);
}

/// A system whose own step code panics at bounds registration did not try is not a crash of
/// the run: the checks of that search are inconclusive with the panic as their error, the rest
/// are decided, and `check` would exit 2.
#[test]
fn a_panic_in_a_system_s_own_step_is_an_error_row_not_a_crash() {
    let system: &'static Counter = Box::leak(Box::new(Counter {
        panic_at: Some(3),
        ..read(SOURCE)
    }));
    let erased: &'static dyn AnySystem = system;
    let entry = |variant| {
        let config = catalogue::SystemConfig::new(erased, variant, "none").unwrap();
        catalogue::Entry {
            config,
            property: &system.info.properties[0],
            expected: Verdict::Holds,
            reason: "",
        }
    };
    let entries = [entry("by-one"), entry("by-three")];
    let results = run::run_all::<&Counter>(&entries, 1, &Budget::default());
    assert_eq!(results[0].verdict, Verdict::Holds);
    assert_eq!(results[0].error, None);
    assert_eq!(results[1].verdict, Verdict::Inconclusive);
    assert_eq!(results[1].limit, Some(run::MODEL_PANICKED));
    assert_eq!(
        results[1].error.as_deref(),
        Some("its model panicked: the counter reached 3")
    );
    assert_eq!(walcheck::report::exit_code(&results, false), 2);
}
