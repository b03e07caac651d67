//! walcheck's built-in checkable systems, each a `stateright::Model` built from the upstream
//! behaviours of `walcheck-model`: `olake-bootstrap`, `olake-sync` and `electric-flush`, with
//! their properties, bounds and trace views.
//!
//! Not for: the upstream behaviours themselves (`walcheck-model`) or checking (`walcheck-properties`).

/// `impl System` and `impl stateright::Model` for a built-in system, from what its folder
/// declares: `INFO`, a model type with `new(Config)`, `initial_state`, `enabled` and `apply`
/// (see [`walcheck_properties::model_plumbing`]), its `State` and `Action`, the declared
/// properties `CHECKS` (and any further lists named after the model), a typed `Config::of` the
/// generic configuration, and its expectation table `expected::{ROWS, verdict}` (a property
/// without a row is a one-line error).
macro_rules! built_in_system {
    ($system:ident, $model:ident) => {
        built_in_system!($system, $model, CHECKS);
    };
    ($system:ident, $model:ident, $($checks:ident),+) => {
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
            ) -> Option<Result<(walcheck_properties::checker::Verdict, &'static str), String>> {
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
