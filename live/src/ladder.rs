//! `walcheck live ladder`: OLake #1084's sync and async ladders against a throwaway server, each
//! bootstrap running the real PreCDC/StreamChanges statements of an OLake variant, tallied into
//! the same table as `walcheck simulate` and printed beside the simulator's prediction.
//!
//! Measurements: a level's figures depend on the machine, its disk and what else runs on it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use walcheck_model::olake::Variant;
use walcheck_model::pg::CommitMode;
use walcheck_model::Lsn;

use crate::load::{Load, Workload};
use crate::server::PgServer;
use crate::session::db_error;
use walcheck_sim::engine::Outcome;
use walcheck_sim::ladder::LadderKind;
use walcheck_sim::params::Params;
use walcheck_sim::run::{self, LadderReport, LevelReport, Options, Report};
use walcheck_sim::stats::{round_to, Tally};

/// What to run.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    pub ladders: Vec<LadderKind>,
    pub variants: Vec<Variant>,
    /// Bootstraps per level and variant (fewer if a level's time runs out).
    pub attempts: u32,
    /// The most one level may take, in milliseconds.
    pub level_ms_max: u64,
    /// pr1084's deadline in the live run, in milliseconds (OLake's is 30 s; shorter here so that a
    /// level stays bounded).
    pub advance_timeout_ms: u64,
    /// The simulator's attempts per level for the prediction beside it.
    pub sim_attempts: u32,
    pub seed: u64,
}

/// Both tables and the comparison.
pub struct LiveLadder {
    pub live: Report,
    pub simulated: Report,
    pub elapsed_ms: u64,
    pub version_num: u32,
}

fn lsn(text: &str) -> Result<Lsn, String> {
    text.parse()
        .map_err(|e| format!("server LSN {text:?}: {e}"))
}

/// One first-sync bootstrap of `variant` on `slot`, as OLake runs it: `GetSlotPosition` (W0 =
/// `pg_current_wal_lsn()`), the variant's order of state write and `AdvanceLSN(W0)` (pr1084
/// retrying until `end_lsn ≥ W0`), then `validateGlobalState`: the state must equal
/// `confirmed_flush_lsn`.
fn bootstrap(
    client: &mut postgres::Client,
    slot: &str,
    variant: Variant,
    params: &Params,
    advance_timeout: Duration,
) -> Result<Outcome, String> {
    let q = |e: postgres::Error| {
        let (code, message) = db_error(&e);
        format!("{code} {message}")
    };
    // OLake's ReplicationSlotTempl reads the slot and current_lsn in one query; the flush pointer
    // is read after, so "write ahead of flush" is as of that instant.
    let row = client
        .query_one(
            "SELECT confirmed_flush_lsn::text, pg_current_wal_lsn()::text, \
             pg_current_wal_flush_lsn()::text FROM pg_replication_slots WHERE slot_name = $1",
            &[&slot],
        )
        .map_err(q)?;
    let w0 = lsn(row.get(1))?;
    let flush = lsn(row.get(2))?;
    let mut outcome = Outcome {
        write_ahead_at_read: w0 > flush,
        stopped_short: false,
        lsn_mismatch: false,
        gave_up: false,
        advance_calls: 0,
        confirm_us: None,
        first_violation: [None; 3],
        steps: 0,
        end_us: 0,
    };
    let mut advance = |outcome: &mut Outcome| -> Result<Lsn, String> {
        outcome.advance_calls += 1;
        let row = client
            .query_one(
                "SELECT end_lsn::text FROM pg_replication_slot_advance($1, $2::text::pg_lsn)",
                &[&slot, &w0.to_string()],
            )
            .map_err(q)?;
        let end_lsn = lsn(row.get(0))?;
        if outcome.advance_calls == 1 && end_lsn < w0 {
            outcome.stopped_short = true;
        }
        Ok(end_lsn)
    };
    let state = match variant {
        // master: the state file gets W0 first, then the advance (end_lsn dropped).
        // pr854: the advance first (end_lsn dropped), then W0 to the state file.
        Variant::Master | Variant::Pr854 => {
            advance(&mut outcome)?;
            w0
        }
        // pr1084: advance until the slot confirms W0 or the deadline passes.
        Variant::Pr1084 => {
            let started = Instant::now();
            loop {
                if advance(&mut outcome)? >= w0 {
                    if outcome.advance_calls > 1 {
                        outcome.confirm_us = Some(started.elapsed().as_micros() as u64);
                    }
                    break w0;
                }
                if started.elapsed() >= advance_timeout {
                    outcome.gave_up = true;
                    return Ok(outcome);
                }
                std::thread::sleep(Duration::from_micros(params.retry_delay_us));
            }
        }
    };
    // StreamChanges: GetSlotPosition again, validateGlobalState demands equality.
    let row = client
        .query_one(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
            &[&slot],
        )
        .map_err(q)?;
    outcome.lsn_mismatch = lsn(row.get(0))? != state;
    Ok(outcome)
}

/// Runs every level of `options.ladders` on `server`, then the simulator on the same levels.
pub fn run_live_ladder(server: &PgServer, options: &LiveOptions) -> Result<LiveLadder, String> {
    let started = Instant::now();
    let params = Params::default();
    let mut client = server.connect()?;
    for variant in &options.variants {
        client
            .execute(
                "SELECT pg_create_logical_replication_slot($1, 'test_decoding')",
                &[&format!("walcheck_{}", variant.name())],
            )
            .map_err(|e| format!("create slot: {e}"))?;
        server.note_slot(&format!("walcheck_{}", variant.name()));
    }
    let mut ladders = Vec::new();
    for &kind in &options.ladders {
        let mut levels = Vec::new();
        for level in kind.levels(&params) {
            let workload = match level.commit {
                CommitMode::Sync => Workload::Bulk {
                    rows: level.rows as u32,
                },
                CommitMode::Async => Workload::Async {
                    rows: level.rows as u32,
                    per_s: level.rate_per_s.map(|r| r as u32),
                },
            };
            let insert_before = current_insert(&mut client)?;
            let load = Load::start(server, workload, options.level_ms_max)?;
            let level_started = Instant::now();
            let deadline = level_started + Duration::from_millis(options.level_ms_max);
            // The first statement starts before the first bootstrap, as in the simulator's warm-up.
            std::thread::sleep(Duration::from_micros(params.warmup_us.min(1_000_000)));
            let mut tallies = vec![Tally::default(); options.variants.len()];
            for attempt in 0..options.attempts {
                if Instant::now() >= deadline {
                    break;
                }
                for (tally, variant) in tallies.iter_mut().zip(&options.variants) {
                    let slot = format!("walcheck_{}", variant.name());
                    let outcome = bootstrap(
                        &mut client,
                        &slot,
                        *variant,
                        &params,
                        Duration::from_millis(options.advance_timeout_ms),
                    )?;
                    tally.add(attempt, &outcome);
                }
            }
            let statements = load.finish()?;
            let cycles_us = level_started.elapsed().as_micros() as u64;
            let inserted = current_insert(&mut client)?.bytes() - insert_before.bytes();
            let mut level = level;
            // Measured: WAL inserted per statement, commit records and concurrent bootstraps'
            // (tiny) share included.
            level.wal_bytes = inserted / statements.max(1);
            levels.push(LevelReport {
                statement_wal_bytes: level.wal_bytes,
                level,
                cycles: statements,
                cycles_us,
                tallies,
                traces: vec![Vec::new(); options.variants.len()],
            });
        }
        ladders.push(LadderReport { kind, levels });
    }
    for variant in &options.variants {
        let slot = format!("walcheck_{}", variant.name());
        if client
            .execute("SELECT pg_drop_replication_slot($1)", &[&slot])
            .is_ok()
        {
            server.forget_slot(&slot);
        }
    }
    let live_options = Options {
        variants: options.variants.clone(),
        ladders: options.ladders.clone(),
        seed: options.seed,
        attempts: options.attempts,
        params,
        trace_out: None,
        trace_limit: 0,
    };
    let simulated = run::simulate(&Options {
        attempts: options.sim_attempts,
        ..live_options.clone()
    })?;
    Ok(LiveLadder {
        live: Report {
            options: live_options,
            ladders,
        },
        simulated,
        elapsed_ms: started.elapsed().as_millis() as u64,
        version_num: server.version_num(),
    })
}

fn current_insert(client: &mut postgres::Client) -> Result<Lsn, String> {
    let row = client
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .map_err(|e| e.to_string())?;
    lsn(row.get(0))
}

fn pct(hits: u64, n: u64) -> String {
    if n == 0 {
        "-".to_owned()
    } else {
        format!("{}%", round_to(hits as f64 * 100.0 / n as f64, 0))
    }
}

/// The live table (as `walcheck simulate` prints it), the simulator's, and one row per level and
/// variant comparing them.
pub fn to_text(ladder: &LiveLadder) -> String {
    let mut out = String::new();
    let live = walcheck_sim::report::to_text(&ladder.live);
    let _ = writeln!(
        out,
        "olake-bootstrap: LIVE first-sync bootstraps on PostgreSQL {} (measured, {} ms; up to {} attempts per level and variant, one after another)",
        ladder.version_num, ladder.elapsed_ms, ladder.live.options.attempts
    );
    let _ = writeln!(
        out,
        "server: PostgreSQL's defaults (wal_buffers 4MB, wal_writer_delay 200ms, wal_writer_flush_after 1MB); WAL/stmt and achieved are measured"
    );
    // The simulator's parameter block does not describe a live server: skip it.
    let mut in_params = false;
    for line in live.lines().skip(1) {
        if line == "parameters:" {
            in_params = true;
            continue;
        }
        if in_params && line.starts_with("  ") {
            continue;
        }
        in_params = false;
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    out.push_str(&walcheck_sim::report::to_text(&ladder.simulated));
    let _ = writeln!(
        out,
        "\nlive (measured) beside simulated (seed {}), per level and variant: write>flush at read and lsn mismatch",
        ladder.simulated.options.seed
    );
    let mut rows = vec![[
        "ladder",
        "level",
        "variant",
        "live write>flush",
        "sim write>flush",
        "live mismatch",
        "sim mismatch",
    ]
    .map(str::to_owned)
    .to_vec()];
    for (live, sim) in ladder.live.ladders.iter().zip(&ladder.simulated.ladders) {
        for (l, s) in live.levels.iter().zip(&sim.levels) {
            for (i, variant) in ladder.live.options.variants.iter().enumerate() {
                let (lt, st) = (&l.tallies[i], &s.tallies[i]);
                rows.push(vec![
                    live.kind.name().to_owned(),
                    l.level.label.clone(),
                    variant.name().to_owned(),
                    format!(
                        "{}/{} ({})",
                        lt.write_ahead_at_read,
                        lt.attempts,
                        pct(lt.write_ahead_at_read, lt.attempts)
                    ),
                    pct(st.write_ahead_at_read, st.attempts),
                    format!(
                        "{}/{} ({})",
                        lt.lsn_mismatch,
                        lt.attempts,
                        pct(lt.lsn_mismatch, lt.attempts)
                    ),
                    pct(st.lsn_mismatch, st.attempts),
                ]);
            }
        }
    }
    out.push_str(&walcheck_sim::report::columns(&rows));
    out
}
