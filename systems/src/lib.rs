//! walcheck's built-in checkable systems, each a `stateright::Model` built from the upstream
//! behaviours of `walcheck-model`: `olake-bootstrap`, `olake-sync` and `electric-flush`, with
//! their properties, bounds and trace views.
//!
//! Not for: the upstream behaviours themselves (`walcheck-model`) or checking (`walcheck-properties`).

/// `impl System` for a built-in system, from what its folder declares: `INFO`, a model type
/// with `new(Config)`, a typed `Config::of` the generic configuration, and its expectation table
/// `expected::{ROWS, verdict}` (a property without a row is a one-line error).
macro_rules! built_in_system {
    ($system:ident, $model:ident) => {
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

pub mod electric_flush;
pub mod olake_bootstrap;
pub mod olake_sync;
