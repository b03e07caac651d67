//! Random walks over `olake-bootstrap` with proptest: the same `actions`/`next_state` the checker
//! explores, sampled deeper than the checker's default bounds, shrunk to a minimal walk on failure.

use proptest::prelude::*;
use stateright::Model;
use walcheck_model::olake::Variant;
use walcheck_model::pg::Role;
use walcheck_systems::olake_bootstrap::{self, Config, Faults, OlakeBootstrap, State};

/// Follows `choices` (each picks among the enabled actions, modulo their number) from the initial
/// state, calling `check` on every state; stops early where nothing is enabled.
fn walk(
    model: &OlakeBootstrap,
    choices: &[usize],
    mut check: impl FnMut(&State) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut state = model.config.initial_state();
    check(&state)?;
    let mut actions = Vec::new();
    for choice in choices {
        actions.clear();
        model.actions(&state, &mut actions);
        if actions.is_empty() {
            break;
        }
        let action = actions[choice % actions.len()];
        state = model
            .next_state(&state, action)
            .expect("enabled actions apply");
        check(&state)?;
    }
    Ok(())
}

fn deep(variant: Variant, faults: Faults, server: Role) -> OlakeBootstrap {
    let mut config = Config::new(variant, faults);
    config.server = server;
    config.statements = 6;
    config.syncs = 4;
    config.crashes = 2;
    OlakeBootstrap::from(config)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn pointers_stay_ordered_in_every_variant(
        variant in prop::sample::select(Variant::ALL.to_vec()),
        faults in prop::sample::select(Faults::ALL.to_vec()),
        standby in any::<bool>(),
        choices in prop::collection::vec(any::<usize>(), 0..60),
    ) {
        let server = if standby { Role::Standby } else { Role::Primary };
        let model = deep(variant, faults, server);
        walk(&model, &choices, |s| {
            prop_assert!(olake_bootstrap::wal_pointers_ordered(s), "{s:?}");
            prop_assert!(olake_bootstrap::slot_pointers_ordered(s), "{s:?}");
            Ok(())
        })?;
    }

    #[test]
    fn pr1084_keeps_state_and_slot_equal_without_server_crashes(
        standby in any::<bool>(),
        choices in prop::collection::vec(any::<usize>(), 0..60),
    ) {
        let server = if standby { Role::Standby } else { Role::Primary };
        let model = deep(Variant::Pr1084, Faults::ConnectorCrash, server);
        walk(&model, &choices, |s| {
            prop_assert!(olake_bootstrap::state_matches_slot(s), "{s:?}");
            prop_assert!(olake_bootstrap::no_lsn_mismatch(s), "{s:?}");
            Ok(())
        })?;
    }
}

/// proptest finds the master bug by random walking too, and shrinks it to a short walk.
#[test]
fn random_walks_find_the_master_bug() {
    let model = deep(Variant::Master, Faults::None, Role::Primary);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 2048,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&prop::collection::vec(any::<usize>(), 0..40), |choices| {
        walk(&model, &choices, |s| {
            prop_assert!(olake_bootstrap::no_lsn_mismatch(s));
            Ok(())
        })
    });
    let Err(proptest::test_runner::TestError::Fail(_, minimal)) = result else {
        panic!("random walks should find the lsn mismatch: {result:?}");
    };
    // A mismatch needs at least a statement, the read, the seed, the advance and the validation.
    assert!(minimal.len() >= 5, "{minimal:?}");
}
