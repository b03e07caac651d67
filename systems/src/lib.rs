//! walcheck's built-in checkable systems, `olake-bootstrap`, `olake-sync` and `electric-flush`:
//! each a `System` (its declaration, with its properties, bounds and trace view, and its
//! expectation table) and a `stateright::Model` per configuration, built from the upstream
//! behaviours of `walcheck-model`.
//!
//! Not for: the upstream behaviours themselves (`walcheck-model`) or checking (`walcheck-engine`).

/// A built-in system from what its folder declares, with the rest written here once: the
/// declaration's name, doc, variants, fault sets, trace knobs and `also` knob as given; its bounds,
/// properties and view the folder's `BOUNDS`, `PROPERTIES` and `VIEW`. Declares `NAME`, the
/// system's type and its `INFO`, and writes `impl System` and `impl stateright::Model` for it
/// from a model type with `new(Config)`, `initial_state`, `enabled` and `apply` (see
/// [`walcheck_properties::model_plumbing`]), its `State` and `Action`, the declared property
/// lists `checks` (`CHECKS`, and any further lists named after the model), a typed `Config::of`
/// the generic configuration, and its expectation table `expected::{ROWS, verdict}` (a property
/// without a row is a one-line error).
macro_rules! built_in_system {
    (
        name: $name:literal,
        system: $system:ident,
        model: $model:ident,
        checks: [$($checks:ident),+ $(,)?],
        doc: $doc:expr,
        variants: $variants:expr,
        faults: $faults:expr,
        trace_knobs: $trace_knobs:expr,
        also: $also:expr $(,)?
    ) => {
        /// The system's name on the command line and in reports.
        pub const NAME: &str = $name;

        #[doc = concat!("The `", $name, "` system: its declaration and the model of each configuration.")]
        pub struct $system;

        /// The declaration `walcheck list`, the catalogue and traces read.
        pub static INFO: walcheck_properties::system::SystemInfo =
            walcheck_properties::system::SystemInfo {
                name: NAME,
                doc: $doc,
                variants: $variants,
                faults: $faults,
                bounds: BOUNDS,
                trace_knobs: $trace_knobs,
                properties: PROPERTIES,
                also: $also,
                view: VIEW,
            };

        impl stateright::Model for $model {
            type State = State;
            type Action = Action;

            walcheck_properties::model_plumbing!($($checks),+);
        }

        impl walcheck_properties::system::System for $system {
            type Model = $model;

            fn info(&self) -> &'static walcheck_properties::system::SystemInfo {
                &INFO
            }

            fn model(&self, config: &walcheck_properties::system::Config) -> $model {
                $model::new(Config::of(config))
            }

            fn expected(
                &self,
                config: &walcheck_properties::system::Config,
                property: &walcheck_properties::system::PropertyInfo,
            ) -> Option<Result<(walcheck_properties::verdict::Verdict, &'static str), String>> {
                let row = expected::ROWS
                    .contains(&property.id)
                    .then(|| expected::verdict(&Config::of(config), property.id));
                Some(row.ok_or_else(|| {
                    format!(
                        "{} has no expectation for property {}",
                        INFO.name, property.id
                    )
                }))
            }
        }
    };
}

/// The built-in systems, one line each, `folder::System`, in catalogue order: each folder's
/// module, and [`each_built_in`], which the registry reads.
macro_rules! built_in {
    ($($folder:ident::$system:ident,)*) => {
        $(pub mod $folder;)*

        /// Hands each built-in system to `visit`, in catalogue order.
        pub fn each_built_in(visit: &mut impl walcheck_properties::system::VisitSystems) {
            $(visit.visit(&$folder::$system);)*
        }
    };
}

built_in! {
    olake_bootstrap::OlakeBootstrapSystem,
    electric_flush::ElectricFlushSystem,
    olake_sync::OlakeSyncSystem,
}
