//! walcheck's built-in checkable systems, each a `stateright::Model` built from the upstream
//! behaviours of `walcheck-model`: `olake-bootstrap`, `olake-sync` and `electric-flush`, with
//! their properties, bounds and trace views.
//!
//! Not for: the upstream behaviours themselves (`walcheck-model`) or checking (`walcheck-properties`).

/// The `stateright::Model` plumbing every system shares, inside its `impl Model`: one initial
/// state (`initial_state`), the enabled actions in their fixed order (`enabled`), the transition
/// as `apply` on a copy (`apply`, which never refuses an enabled action), and actions printed as
/// traces print them (`Advance{target=0/3}`, their `Display`), not as `Debug` would.
macro_rules! model_plumbing {
    () => {
        fn format_action(&self, action: &Self::Action) -> String {
            action.to_string()
        }

        fn init_states(&self) -> Vec<Self::State> {
            vec![self.initial_state()]
        }

        fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
            self.enabled(state, actions);
        }

        fn next_state(&self, state: &Self::State, action: Self::Action) -> Option<Self::State> {
            let mut next = state.clone();
            self.apply(&mut next, action);
            Some(next)
        }
    };
}

/// `Debug` for a system's state: its trace variables, as step tables name them.
macro_rules! debug_as_variables {
    ($state:ty) => {
        impl std::fmt::Debug for $state {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                walcheck_properties::system::fmt_variables(&self.variables(), f)
            }
        }
    };
}

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
