//! The simulator's driven workload of `olake-bootstrap`: byte-sized chunks of a running statement
//! and its commit record, offered only when the configuration asks for them, with buffer-pressure
//! writes happening as the statement grows; and its knobs round-tripping through a trace header.

use proptest::prelude::*;
use stateright::Model;
use walcheck_model::olake::Variant;
use walcheck_model::pg::CommitMode;
use walcheck_model::Lsn;
use walcheck_properties::system::Config as GenericConfig;
use walcheck_properties::system::System;
use walcheck_systems::olake_bootstrap::{
    self, Action, Config, DrivenWorkload, Faults, OlakeBootstrap, OlakeBootstrapSystem, INFO,
    INITIAL_LSN,
};

const MIB: u64 = 1024 * 1024;

fn driven(variant: Variant, commit: CommitMode) -> OlakeBootstrap {
    let mut config = Config::new(variant, Faults::None);
    config.wal_buffers_pages = 512;
    config.statements = 0;
    config.syncs = 1;
    config.driven = Some(DrivenWorkload {
        chunk_bytes: MIB,
        tail_bytes: 300_000,
        commit_record_bytes: 40,
        commit,
    });
    OlakeBootstrap::from(config)
}

fn enabled(model: &OlakeBootstrap, state: &olake_bootstrap::State) -> Vec<Action> {
    let mut actions = Vec::new();
    model.actions(state, &mut actions);
    actions
}

#[test]
fn the_checker_never_sees_the_driven_actions() {
    for variant in Variant::ALL {
        let model = OlakeBootstrap::from(Config::new(variant, Faults::All));
        let actions = enabled(&model, &model.config.initial_state());
        assert!(actions
            .iter()
            .all(|a| !matches!(a, Action::InsertWal { .. } | Action::Commit { .. })));
        assert!(actions.iter().any(|a| matches!(a, Action::Append { .. })));
    }
}

#[test]
fn a_driven_statement_writes_out_what_no_longer_fits_as_it_grows() {
    let model = driven(Variant::Master, CommitMode::Sync);
    let mut state = model.config.initial_state();
    assert_eq!(
        enabled(&model, &state)[..3],
        [
            Action::InsertWal { bytes: MIB },
            Action::InsertWal { bytes: 300_000 },
            Action::Commit {
                bytes: 40,
                commit: CommitMode::Sync
            },
        ]
    );
    assert!(!enabled(&model, &state)
        .iter()
        .any(|a| matches!(a, Action::Append { .. })));
    // Four 1 MiB chunks fit in 4 MiB of wal_buffers: nothing is written.
    for _ in 0..4 {
        model
            .config
            .apply(&mut state, Action::InsertWal { bytes: MIB });
    }
    assert_eq!(state.server.wal.write, INITIAL_LSN);
    // The fifth needs the buffers of the first: the backend writes them out, without a flush.
    model
        .config
        .apply(&mut state, Action::InsertWal { bytes: MIB });
    assert_eq!(state.server.wal.insert, INITIAL_LSN.plus(5 * MIB));
    assert_eq!(state.server.wal.write, INITIAL_LSN.plus(MIB));
    assert_eq!(state.server.wal.flush, INITIAL_LSN);
    model
        .config
        .apply(&mut state, Action::InsertWal { bytes: 300_000 });
    let insert = INITIAL_LSN.plus(5 * MIB + 300_000);
    assert_eq!(
        state.server.wal.write,
        insert.page_ceil(8192).minus(4 * MIB)
    );
    // The commit record, then the backend waits in XLogFlush: no more inserts meanwhile.
    model.config.apply(
        &mut state,
        Action::Commit {
            bytes: 40,
            commit: CommitMode::Sync,
        },
    );
    assert!(state.server.commit_pending);
    let actions = enabled(&model, &state);
    assert!(actions.contains(&Action::CommitFlush));
    assert!(!actions
        .iter()
        .any(|a| matches!(a, Action::InsertWal { .. } | Action::Commit { .. })));
    model.config.apply(&mut state, Action::CommitFlush);
    let end = Lsn(insert.0 + 40);
    assert_eq!((state.server.wal.write, state.server.wal.flush), (end, end));
}

#[test]
fn an_asynchronous_commit_leaves_its_record_unflushed() {
    let model = driven(Variant::Master, CommitMode::Async);
    let mut state = model.config.initial_state();
    model
        .config
        .apply(&mut state, Action::InsertWal { bytes: 300_000 });
    model.config.apply(
        &mut state,
        Action::Commit {
            bytes: 40,
            commit: CommitMode::Async,
        },
    );
    assert!(!state.server.commit_pending);
    assert_eq!(state.server.wal.flush, INITIAL_LSN);
    // The walwriter writes whole pages without flushing: write ahead of flush, page-aligned.
    model.config.apply(&mut state, Action::WalWriterWrite);
    assert_eq!(
        state.server.wal.write,
        state.server.wal.insert.page_floor(8192)
    );
    assert!(state.server.wal.write > state.server.wal.flush);
}

#[test]
fn driven_knobs_round_trip_through_a_header_and_stay_out_of_check() {
    let config = driven(Variant::Pr1084, CommitMode::Async).config;
    let mut rebuilt = GenericConfig::new(&INFO, "pr1084", "none").unwrap();
    let mut header: Vec<(String, String)> = config
        .bounds()
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_string()))
        .collect();
    // A header's configuration is a map: any order must do.
    header.sort();
    for (name, value) in &header {
        rebuilt.set_knob(&INFO, name, value).unwrap();
    }
    assert_eq!(OlakeBootstrapSystem.config(&rebuilt), config);
    let mut checker = GenericConfig::new(&INFO, "master", "none").unwrap();
    assert!(checker.set_bound(&INFO, "commit", "sync").is_err());
    assert!(checker.set_knob(&INFO, "commit", "often").is_err());
    assert!(checker.set_knob(&INFO, "insert_chunk_bytes", "-1").is_err());
    assert!(checker.set_bound(&INFO, "page_bytes", "3000").is_err());
    assert_eq!(OlakeBootstrapSystem.config(&checker).driven, None);
    assert!(checker.set_knob(&INFO, "wal_buffers_pages", "512").is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any sequence of the driven workload's actions, the walwriter's and the connector's keeps
    /// the pointers ordered, and pr1084 never mismatches.
    #[test]
    fn driven_walks_keep_the_invariants(
        variant in prop::sample::select(Variant::ALL.to_vec()),
        asynchronous in any::<bool>(),
        choices in prop::collection::vec(any::<usize>(), 0..200),
    ) {
        let commit = if asynchronous { CommitMode::Async } else { CommitMode::Sync };
        let model = driven(variant, commit);
        let mut state = model.config.initial_state();
        for choice in choices {
            let actions = enabled(&model, &state);
            if actions.is_empty() {
                break;
            }
            model.config.apply(&mut state, actions[choice % actions.len()]);
            prop_assert!(olake_bootstrap::wal_pointers_ordered(&state), "{state:?}");
            prop_assert!(olake_bootstrap::slot_pointers_ordered(&state), "{state:?}");
            if variant == Variant::Pr1084 {
                prop_assert!(olake_bootstrap::no_lsn_mismatch(&state), "{state:?}");
                prop_assert!(olake_bootstrap::state_matches_slot(&state), "{state:?}");
            }
        }
    }
}
