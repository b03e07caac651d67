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
use crate::pg_error::{db_error, pg_message};
use crate::server::{PgServer, LOAD_TABLE};
use walcheck_sim::engine::{Outcome, Protocol};
use walcheck_sim::ladder::{LadderKind, Level};
use walcheck_sim::params::Params;
use walcheck_sim::run::{self, LadderReport, LevelReport, Options, Report};
use walcheck_sim::stats::{round_to, wilson_95, Tally};

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
    /// The prediction's parameters ([`Params::this_machine`] from the command line) and how its
    /// bootstraps meet the load ([`Protocol::BackToBack`], as this ladder runs them).
    pub sim_params: Params,
    pub sim_protocol: Protocol,
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
        .map_err(|e| format!("server LSN {text:?}: {}", pg_message(&e)))
}

/// A server error as `SQLSTATE message`.
fn db_text(e: postgres::Error) -> String {
    let (code, message) = db_error(&e);
    format!("{code} {message}")
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
    // OLake's ReplicationSlotTempl reads the slot and current_lsn in one query; the flush pointer
    // is read after, so "write ahead of flush" is as of that instant.
    let row = client
        .query_one(
            "SELECT confirmed_flush_lsn::text, pg_current_wal_lsn()::text, \
             pg_current_wal_flush_lsn()::text FROM pg_replication_slots WHERE slot_name = $1",
            &[&slot],
        )
        .map_err(db_text)?;
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
        advance_us: 0,
        steps: 0,
        end_us: 0,
    };
    let state = match variant {
        // master: the state file gets W0 first, then the advance (end_lsn dropped).
        // pr854: the advance first (end_lsn dropped), then W0 to the state file.
        Variant::Master | Variant::Pr854 => {
            advance_lsn(client, (slot, w0), &mut outcome)?;
            w0
        }
        // pr1084: advance until the slot confirms W0 or the deadline passes.
        Variant::Pr1084 => {
            let retry = (params.retry_delay_us, advance_timeout);
            match advance_until_confirmed(client, (slot, w0), &mut outcome, retry)? {
                Some(state) => state,
                None => return Ok(outcome),
            }
        }
    };
    // StreamChanges: GetSlotPosition again, validateGlobalState demands equality.
    let row = client
        .query_one(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
            &[&slot],
        )
        .map_err(db_text)?;
    outcome.lsn_mismatch = lsn(row.get(0))? != state;
    Ok(outcome)
}

/// One `AdvanceLSN(W0)`: `pg_replication_slot_advance(slot, w0)`, counted and timed in
/// `outcome`, which notes a first call that stopped short of `w0`. Returns its `end_lsn`.
fn advance_lsn(
    client: &mut postgres::Client,
    (slot, w0): (&str, Lsn),
    outcome: &mut Outcome,
) -> Result<Lsn, String> {
    outcome.advance_calls += 1;
    let called = Instant::now();
    let row = client
        .query_one(
            "SELECT end_lsn::text FROM pg_replication_slot_advance($1, $2::text::pg_lsn)",
            &[&slot, &w0.to_string()],
        )
        .map_err(db_text)?;
    outcome.advance_us += called.elapsed().as_micros() as u64;
    let end_lsn = lsn(row.get(0))?;
    if outcome.advance_calls == 1 && end_lsn < w0 {
        outcome.stopped_short = true;
    }
    Ok(end_lsn)
}

/// pr1084's `AdvanceLSN`: advances to `w0` until the slot confirms it, `retry_delay_us` apart,
/// and returns the state it then writes, `w0`; `None`, the outcome given up, once
/// `advance_timeout` has passed.
fn advance_until_confirmed(
    client: &mut postgres::Client,
    (slot, w0): (&str, Lsn),
    outcome: &mut Outcome,
    (retry_delay_us, advance_timeout): (u64, Duration),
) -> Result<Option<Lsn>, String> {
    let started = Instant::now();
    loop {
        if advance_lsn(client, (slot, w0), outcome)? >= w0 {
            if outcome.advance_calls > 1 {
                outcome.confirm_us = Some(started.elapsed().as_micros() as u64);
            }
            return Ok(Some(w0));
        }
        if started.elapsed() >= advance_timeout {
            outcome.gave_up = true;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_micros(retry_delay_us));
    }
}

/// Runs every level of `options.ladders` on `server`, then the simulator on the same levels.
pub fn run_live_ladder(server: &PgServer, options: &LiveOptions) -> Result<LiveLadder, String> {
    let started = Instant::now();
    let params = Params::default();
    let mut client = server.connect()?;
    let mut ladders = Vec::new();
    for &kind in &options.ladders {
        let mut levels = Vec::new();
        for level in kind.levels(&params) {
            levels.push(run_level(server, &mut client, level, options, &params)?);
        }
        ladders.push(LadderReport { kind, levels });
    }
    drop_slots(server, &mut client, &options.variants);
    let live_options = Options {
        variants: options.variants.clone(),
        ladders: options.ladders.clone(),
        seed: options.seed,
        attempts: options.attempts,
        params,
        trace_out: None,
        trace_limit: 0,
        protocol: Protocol::BackToBack,
        level_rounds: options.attempts,
    };
    let simulated = run::simulate(&Options {
        attempts: options.sim_attempts,
        params: options.sim_params,
        protocol: options.sim_protocol,
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

/// One level of a ladder: its load started on an empty load table with fresh slots, each
/// variant bootstrapped in turn until the attempts are done or the level's time runs out, and
/// the WAL each statement inserted measured.
fn run_level(
    server: &PgServer,
    client: &mut postgres::Client,
    level: Level,
    options: &LiveOptions,
    params: &Params,
) -> Result<LevelReport, String> {
    let workload = match level.commit {
        CommitMode::Sync => Workload::Bulk {
            rows: level.rows as u32,
        },
        CommitMode::Async => Workload::Async {
            rows: level.rows as u32,
            per_s: level.rate_per_s.map(|r| r as u32),
        },
    };
    // An empty load table each level: the sync ladder inserts tens of GB in all, more than this
    // machine's disk holds, and every level starts with clean buffers.
    client
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {LOAD_TABLE} (id int, payload text); \
             TRUNCATE {LOAD_TABLE}"
        ))
        .map_err(|e| {
            let (code, message) = db_error(&e);
            format!("truncate {LOAD_TABLE}: {code} {message}")
        })?;
    server.note_load_table();
    // Fresh slots for every level, created while the cluster is quiet: an advance decodes from
    // the slot's restart_lsn, which moves only to the background writer's running-xacts records
    // (one every 15 s), so a slot kept from the levels before would make this level's advances
    // decode their WAL as well.
    create_slots(server, client, &options.variants)?;
    let insert_before = current_insert(client)?;
    let load = Load::start(server, workload, options.level_ms_max)?;
    let level_started = Instant::now();
    let deadline = level_started + Duration::from_millis(options.level_ms_max);
    // The first statement starts before the first bootstrap, as in the simulator's warm-up.
    std::thread::sleep(Duration::from_micros(params.warmup_us.min(1_000_000)));
    let tallies = bootstraps(client, options, params, deadline)?;
    let statements = load.finish()?;
    let cycles_us = level_started.elapsed().as_micros() as u64;
    let inserted = current_insert(client)?.bytes() - insert_before.bytes();
    let mut level = level;
    // Measured: WAL inserted per statement, commit records and concurrent bootstraps' (tiny)
    // share included.
    level.wal_bytes = inserted / statements.max(1);
    Ok(LevelReport {
        statement_wal_bytes: level.wal_bytes,
        level,
        cycles: statements,
        cycles_us,
        tallies,
        traces: vec![Vec::new(); options.variants.len()],
    })
}

/// A level's bootstraps: each variant in turn on its slot, `options.attempts` times or until
/// `deadline`, tallied per variant. An interrupt (SIGINT) ends them with an error.
fn bootstraps(
    client: &mut postgres::Client,
    options: &LiveOptions,
    params: &Params,
    deadline: Instant,
) -> Result<Vec<Tally>, String> {
    let mut tallies = vec![Tally::default(); options.variants.len()];
    for attempt in 0..options.attempts {
        if Instant::now() >= deadline {
            break;
        }
        if crate::server::interrupted() {
            return Err("interrupted".into());
        }
        for (tally, variant) in tallies.iter_mut().zip(&options.variants) {
            let slot = format!("walcheck_{}", variant.name());
            let outcome = bootstrap(
                client,
                &slot,
                *variant,
                params,
                Duration::from_millis(options.advance_timeout_ms),
            )?;
            tally.add(attempt, &outcome);
        }
    }
    Ok(tallies)
}

/// Drops the variants' slots that exist (from the level before).
fn drop_slots(server: &PgServer, client: &mut postgres::Client, variants: &[Variant]) {
    for variant in variants {
        let slot = format!("walcheck_{}", variant.name());
        if client
            .execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots \
                 WHERE slot_name = $1",
                &[&slot],
            )
            .is_ok()
        {
            server.forget_slot(&slot);
        }
    }
}

/// A new `test_decoding` slot per variant, `walcheck_VARIANT`, replacing the level before's.
fn create_slots(
    server: &PgServer,
    client: &mut postgres::Client,
    variants: &[Variant],
) -> Result<(), String> {
    drop_slots(server, client, variants);
    for variant in variants {
        let slot = format!("walcheck_{}", variant.name());
        client
            .execute(
                "SELECT pg_create_logical_replication_slot($1, 'test_decoding')",
                &[&slot],
            )
            .map_err(|e| {
                let (code, message) = db_error(&e);
                format!("create slot {slot}: {code} {message}")
            })?;
        server.note_slot(&slot);
    }
    Ok(())
}

fn current_insert(client: &mut postgres::Client) -> Result<Lsn, String> {
    let row = client
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .map_err(|e| {
            let (code, message) = db_error(&e);
            format!("pg_current_wal_insert_lsn(): {code} {message}")
        })?;
    lsn(row.get(0))
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
    out.push('\n');
    out.push_str(&fidelity_text(ladder));
    out
}

/// One rate of the fidelity table: the live count, its Wilson interval, the simulated share.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Compared {
    pub live_hits: u64,
    pub live_n: u64,
    /// The live share's 95 % Wilson interval, as fractions.
    pub ci: (f64, f64),
    pub sim_hits: u64,
    pub sim_n: u64,
}

impl Compared {
    fn new(live_hits: u64, live_n: u64, sim_hits: u64, sim_n: u64) -> Compared {
        Compared {
            live_hits,
            live_n,
            ci: wilson_95(live_hits, live_n),
            sim_hits,
            sim_n,
        }
    }

    /// The simulated share.
    pub fn sim_rate(&self) -> f64 {
        if self.sim_n == 0 {
            0.0
        } else {
            self.sim_hits as f64 / self.sim_n as f64
        }
    }

    /// Whether there is a live share to compare with: no live rounds, no interval.
    pub fn has_data(&self) -> bool {
        self.live_n > 0
    }

    /// Whether the simulated share lies inside the live interval (ends included); never with no
    /// live rounds (the interval [0, 100] then says nothing).
    pub fn inside(&self) -> bool {
        self.has_data() && self.ci.0 <= self.sim_rate() && self.sim_rate() <= self.ci.1
    }
}

/// One row of the fidelity table: a level and variant, write ahead of flush at the read and
/// `lsn mismatch`, and the mean advance time live and simulated (milliseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct FidelityRow {
    pub ladder: LadderKind,
    pub level: String,
    pub variant: Variant,
    pub write_ahead: Compared,
    pub mismatch: Compared,
    pub advance_ms: (Option<f64>, Option<f64>),
}

/// Every level and variant the live run and the simulation share, in report order.
pub fn fidelity_rows(ladder: &LiveLadder) -> Vec<FidelityRow> {
    let mut rows = Vec::new();
    for (live, sim) in ladder.live.ladders.iter().zip(&ladder.simulated.ladders) {
        for (l, s) in live.levels.iter().zip(&sim.levels) {
            for (i, variant) in ladder.live.options.variants.iter().enumerate() {
                let (lt, st) = (&l.tallies[i], &s.tallies[i]);
                let ms = |t: &Tally| t.advance_us_mean().map(|us| us as f64 / 1000.0);
                rows.push(FidelityRow {
                    ladder: live.kind,
                    level: l.level.label.clone(),
                    variant: *variant,
                    write_ahead: Compared::new(
                        lt.write_ahead_at_read,
                        lt.attempts,
                        st.write_ahead_at_read,
                        st.attempts,
                    ),
                    mismatch: Compared::new(
                        lt.lsn_mismatch,
                        lt.attempts,
                        st.lsn_mismatch,
                        st.attempts,
                    ),
                    advance_ms: (ms(lt), ms(st)),
                });
            }
        }
    }
    rows
}

/// The fidelity table: per level and variant, the live count with its 95 % Wilson interval, the
/// simulated share, and whether it lies inside; then how many do.
pub fn fidelity_text(ladder: &LiveLadder) -> String {
    let o = &ladder.simulated.options;
    let mut out = format!(
        "fidelity: live (measured) against simulated ({} bootstraps a level and variant, protocol {}, seed {}{}), per level and variant\n",
        o.attempts,
        o.protocol.name(),
        o.seed,
        if o.params == Params::this_machine() {
            ", parameters this-machine".to_owned()
        } else {
            format!(", parameters{}", o.params.non_default_flags())
        }
    );
    let fidelity = fidelity_rows(ladder);
    out.push_str(&walcheck_sim::report::columns(&fidelity_cells(&fidelity)));
    out.push_str(&fidelity_summary(&fidelity));
    out
}

/// The fidelity table's cells: its header, then a row per level and variant.
fn fidelity_cells(fidelity: &[FidelityRow]) -> Vec<Vec<String>> {
    let ms = |m: Option<f64>| m.map_or_else(|| "-".to_owned(), |m| format!("{}", round_to(m, 0)));
    let mut rows = vec![[
        "ladder",
        "level",
        "variant",
        "live write>flush",
        "95% CI",
        "sim",
        "",
        "live mismatch",
        "95% CI",
        "sim",
        "",
        "advance ms live/sim",
    ]
    .map(str::to_owned)
    .to_vec()];
    for row in fidelity {
        let mut cells = vec![
            row.ladder.name().to_owned(),
            row.level.clone(),
            row.variant.name().to_owned(),
        ];
        cells.extend(compared_cells(&row.write_ahead));
        cells.extend(compared_cells(&row.mismatch));
        cells.push(format!("{}/{}", ms(row.advance_ms.0), ms(row.advance_ms.1)));
        rows.push(cells);
    }
    rows
}

/// One rate's cells: the live count, its interval in percent, the simulated share, and whether
/// it lies inside (`no data` without live rounds).
fn compared_cells(c: &Compared) -> [String; 4] {
    let pct = |x: f64| format!("{}", round_to(x * 100.0, 0));
    if !c.has_data() {
        return [
            "0/0".to_owned(),
            "-".to_owned(),
            format!("{}%", round_to(c.sim_rate() * 100.0, 1)),
            "no data".to_owned(),
        ];
    }
    [
        format!("{}/{}", c.live_hits, c.live_n),
        format!("[{}, {}]", pct(c.ci.0), pct(c.ci.1)),
        format!("{}%", round_to(c.sim_rate() * 100.0, 1)),
        if c.inside() { "inside" } else { "OUTSIDE" }.to_owned(),
    ]
}

/// The fidelity table's last line: how many simulated rates lie inside the live interval, of
/// those with live rounds to compare with.
fn fidelity_summary(fidelity: &[FidelityRow]) -> String {
    // A level and variant with no live rounds (--level-ms ran out first) is not compared.
    let compared_rows: Vec<&FidelityRow> = fidelity
        .iter()
        .filter(|r| r.write_ahead.has_data())
        .collect();
    let rates = compared_rows.len() * 2;
    let inside = compared_rows
        .iter()
        .map(|r| usize::from(r.write_ahead.inside()) + usize::from(r.mismatch.inside()))
        .sum::<usize>();
    let no_data = fidelity.len() - compared_rows.len();
    let mut out = format!("{inside} of {rates} simulated rates inside the live 95% interval");
    if no_data > 0 {
        let _ = write!(
            out,
            " ({rates} compared; {no_data} of {} levels and variants had no live rounds)",
            fidelity.len()
        );
    }
    out.push('\n');
    out
}
