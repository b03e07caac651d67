//! `walcheck simulate`: the timed simulator's ladders and swarms, from the flags to the report.

use super::*;

pub(super) struct SimulateArgs {
    pub(super) shard: Option<String>,
    pub(super) spec: String,
    pub(super) ladder: String,
    pub(super) seed: Option<String>,
    pub(super) seeds: Option<String>,
    pub(super) attempts: Option<String>,
    pub(super) json: bool,
    pub(super) plot: Option<PathBuf>,
    pub(super) trace_out: Option<PathBuf>,
    pub(super) trace_limit: Option<String>,
    pub(super) params_set: Option<String>,
    pub(super) protocol: Option<String>,
    pub(super) level_rounds: Option<String>,
    pub(super) params: ParamArgs,
}

/// clap's parser of a count flag (`--threads`, `--max-states`, `--max-memory`): digits only, so
/// that `-1` or `1e9` are refused as what they are, not with the standard library's wording.
pub(super) fn count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a whole number (digits only)".into());
    }
    text.parse().map_err(|_| "too large".into())
}

/// A whole number for `flag` from `min` to `max`, or a one-line error.
pub(super) fn whole(flag: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    let bad = || format!("{flag} takes a whole number from {min} to {max}, not {text:?}");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    text.parse()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(bad)
}

/// `walcheck simulate`: one run of the ladders, or with --seeds a swarm of runs.
pub(super) fn simulate(args: SimulateArgs) -> ExitCode {
    let (options, seeds, shard) = match simulate_options(&args) {
        Ok(options) => options,
        Err(err) => return usage_error(&err),
    };
    match seeds {
        Some(seeds) => simulate_swarm(&args, &options, seeds, shard),
        None => simulate_ladders(&args, &options),
    }
}

/// What `simulate`'s flags ask for: the run's options, the swarm's seeds and shard (I/N), or a
/// one-line error.
pub(super) type SimulatePlan = (
    walcheck_sim::Options,
    Option<std::ops::Range<u64>>,
    Option<(usize, usize)>,
);

/// `simulate`'s flags checked and turned into a [`SimulatePlan`].
pub(super) fn simulate_options(args: &SimulateArgs) -> Result<SimulatePlan, String> {
    let swarm_mode = args.seeds.is_some();
    let variants = walcheck_sim::parse_spec(&args.spec)?;
    let ladders = LadderKind::parse(&args.ladder)?;
    let mut params = match args.params_set.as_deref() {
        None => Params::default(),
        Some(name) => Params::named(name)?,
    };
    for (name, value) in &args.params.0 {
        params.set(name, value)?;
    }
    params.validate()?;
    let seed = match &args.seed {
        Some(text) => whole("--seed", text, 0, u64::MAX)?,
        None => 1,
    };
    let max = u64::from(walcheck_sim::run::MAX_ATTEMPTS);
    let attempts = match &args.attempts {
        Some(text) => whole("--attempts", text, 1, max)? as u32,
        None if swarm_mode => 20,
        None => 200,
    };
    let trace_limit = match (&args.trace_limit, &args.trace_out) {
        (Some(_), None) => {
            return Err(
                "--trace-limit limits the traces --trace-out writes: give --trace-out DIR too"
                    .into(),
            )
        }
        (Some(text), Some(_)) => whole("--trace-limit", text, 1, max)? as u32,
        (None, _) => 1,
    };
    let seeds = args.seeds.as_deref().map(swarm::parse_seeds).transpose()?;
    let shard = args.shard.as_deref().map(run::parse_shard).transpose()?;
    if shard.is_some() && seeds.is_none() {
        return Err("--shard splits a swarm run's seeds: give --seeds A..B too".into());
    }
    let options = walcheck_sim::Options {
        variants,
        ladders,
        seed,
        attempts,
        params,
        trace_out: args.trace_out.clone(),
        trace_limit,
        protocol: args.protocol.as_deref().map_or(
            Ok(walcheck_sim::engine::Protocol::Independent),
            walcheck_sim::engine::Protocol::parse,
        )?,
        level_rounds: match &args.level_rounds {
            Some(text) => whole("--level-rounds", text, 1, max)? as u32,
            None => 0,
        },
    };
    Ok((options, seeds, shard))
}

/// `simulate --seeds A..B`: a run per seed (of shard I/N's seeds), its report printed.
pub(super) fn simulate_swarm(
    args: &SimulateArgs,
    options: &walcheck_sim::Options,
    seeds: std::ops::Range<u64>,
    shard: Option<(usize, usize)>,
) -> ExitCode {
    let started = Instant::now();
    let fixed: Vec<&'static str> = args.params.0.iter().map(|(name, _)| *name).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let part = shard.unwrap_or((1, 1));
    let report = match swarm::swarm_shard(options, &fixed, seeds, part, threads) {
        Ok(report) => report,
        Err(err) => return usage_error(&err),
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    if !args.json {
        return print(&swarm::to_text(&report));
    }
    let mut json = swarm::to_json(&report, elapsed_ms);
    if let Some((index, count)) = shard {
        json.as_object_mut()
            .expect("a swarm report is an object")
            .insert(
                "shard".into(),
                serde_json::json!({ "index": index, "count": count }),
            );
    }
    print(&pretty(&json))
}

/// `simulate` with one seed: every level of the ladders, the plot drawn when asked for, the
/// report printed.
///
/// A `--plot` whose folder does not exist is refused before the run; a plot that cannot be
/// written after it is an error once the report is printed, so the report is never lost.
pub(super) fn simulate_ladders(args: &SimulateArgs, options: &walcheck_sim::Options) -> ExitCode {
    if let Some(folder) = args
        .plot
        .as_deref()
        .and_then(Path::parent)
        .filter(|f| !f.as_os_str().is_empty() && !f.is_dir())
    {
        return usage_error(&format!(
            "cannot write plot: {} is not a folder",
            folder.display()
        ));
    }
    let started = Instant::now();
    let report = match walcheck_sim::simulate(options) {
        Ok(report) => report,
        Err(err) => return usage_error(&err),
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let printed = print(&if args.json {
        pretty(&walcheck_sim::report::to_json(&report, elapsed_ms))
    } else {
        walcheck_sim::report::to_text(&report)
    });
    if let Some(path) = &args.plot {
        let written = walcheck_sim::plot::svg(&report).and_then(|svg| {
            write_whole(path, &svg)
                .map_err(|e| format!("cannot write plot {}: {e}", path.display()))
        });
        if let Err(err) = written {
            return usage_error(&err);
        }
    }
    printed
}
