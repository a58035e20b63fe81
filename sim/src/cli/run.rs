//! `turnsim run`: a seed range (or one seed) against an engine, with a progress bar,
//! failures saved as they are found, and a summary.
//!
//! Guarantees:
//! - No failure found is lost. Each failing seed is rerun with a trace and written as
//!   a scenario on the worker thread that found it, before the run goes on, up to
//!   `--max-failures` per invariant ([`super::failures`]); every failing invariant is
//!   listed with its first seed and count. A Ctrl-C ([`super::interrupt`]), `--time`
//!   or `--stop-after` stops new seeds from starting, lets the running ones finish,
//!   and the summary of what ran is printed as usual.
//! - Mistakes are found before the run, not after it: an `--out` that cannot be
//!   written is exit 6 before any seed runs; `TURNSIM_SEED` with `--seeds`, and
//!   `--trace` without exactly one seed, are usage errors (exit 2), and so are an
//!   engine name the binary does not know and an `--engine-cmd` that fails its hello.
//! - The exit code is the failure class of the lowest failing seed that ran.
//! - `--summary-json` names exactly the seeds that ran: seeds start in order
//!   ([`crate::runner::run_batch_with`]), so a stopped run (`--time`,
//!   `--stop-after`, Ctrl-C) ran a prefix of its range or shard, and the file is
//!   written after the printed summary, atomically (docs/scale-out.md).

use super::engines::{EngineArgs, Engines};
use super::failures::{Saved, compact_line, failure_list, full_report, save_failure};
use super::interrupt;
use super::outdir::OutDir;
use crate::checkers::{Invariant, Violation};
use crate::cliargs::{
    parse_duration, parse_seed, parse_seed_range, parse_shard, shard_from_env, shard_seeds,
};
use crate::conventions::Judging;
use crate::engine::EngineFactory;
use crate::engine::Judged;
use crate::exit::Exit;
use crate::options::SimOptions;
use crate::report::summary;
use crate::runner::{Batch, run_batch_with, run_seed};
use crate::scenario::EngineProcess;
use crate::stdio_engine::affinity;
use crate::stdout::Stdout;
use crate::summary_file::{RunFacts, RunOptions, SummaryFile};
use crate::world::FailureClass;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The seed range `turnsim run` covers by default: about a minute on two cores.
pub const DEFAULT_SEEDS: &str = "0..400000";

/// The time budget of a default run of an engine in another process (`--engine-cmd`
/// without `--seeds` or `--time`).
pub const SUBPROCESS_BUDGET: Duration = Duration::from_secs(120);

fn seeds_help() -> String {
    format!(
        "Seeds to run: A..B, A..=B or one seed N (decimal or 0x hex) [default: {DEFAULT_SEEDS}; with --engine-cmd and no --time, at most {} s of it]",
        SUBPROCESS_BUDGET.as_secs()
    )
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[arg(long, value_parser = parse_seed_range, help = seeds_help())]
    pub seeds: Option<Range<u64>>,
    /// Stop starting seeds after this long (500ms, 30s, 5m, 2h). Seeds start in
    /// order, so the seeds that ran are the first ones of the range (or shard).
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Worker threads; default: every core.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard K of N (0-based); also read from JOB_COMPLETION_INDEX/COUNT.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Where failing scenarios are written (each as soon as it is found).
    #[arg(long, default_value = "scenarios/failures")]
    pub out: PathBuf,
    /// Also write the summary as JSON to FILE (atomically): counts, faults, checks,
    /// coverage, failures and their scenario files, exactly which seeds ran, and the
    /// run digest; `turnsim merge` combines the files of several shards.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Save and list at most this many failing seeds of each invariant (the first
    /// found); the run goes on, so every invariant that fails is found and counted.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_failures: u64,
    /// Stop starting seeds once this many have failed, whatever their invariants.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub stop_after: Option<u64>,
    /// Print each seed's options and digest.
    #[arg(long)]
    pub verbose: bool,
    /// Run each seed twice and compare the trace digests step by step.
    #[arg(long)]
    pub check_determinism: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print the run step by step; needs one seed (--seeds N or TURNSIM_SEED=N).
    #[arg(long)]
    pub trace: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Run only these checkers (comma-separated names, see --list-checks).
    #[arg(long, value_name = "NAMES")]
    pub checks: Option<String>,
    /// Do not run these checkers (comma-separated names, see --list-checks).
    #[arg(long, value_name = "NAMES")]
    pub skip: Option<String>,
    /// Judge the engine's conventions by this profile (JSON; docs/invariants.md)
    /// instead of the engine's own.
    #[arg(long, value_name = "FILE")]
    pub conventions: Option<PathBuf>,
    /// List every checker, generic or convention, and exit.
    #[arg(long)]
    pub list_checks: bool,
}

/// A progress-bar rate: whole numbers with thousands separators from 100 up
/// (`1,700/s`), one decimal below (`12.5/s`).
pub fn rate_text(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec < 0.0 {
        return "-/s".into();
    }
    if per_sec < 100.0 {
        return format!("{per_sec:.1}/s");
    }
    let digits = format!("{:.0}", per_sec.round());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}/s")
}

fn usage(message: &str) -> Exit {
    eprintln!("turnsim run: {message}");
    Exit::Usage
}

pub(super) fn cmd_run(a: RunArgs, engines: &Engines) -> Exit {
    if a.list_checks {
        Stdout::new("run").print(&super::judging::list_checks());
        return Exit::Pass;
    }
    let chosen = match a.engine.choose(engines) {
        Ok(c) => c,
        Err(e) => return usage(&e),
    };
    let target = Target {
        process: chosen.process(),
        flags: chosen.run_flags(engines),
    };
    let flags = super::judging::Flags {
        checks: &a.checks,
        skip: &a.skip,
        conventions: &a.conventions,
    };
    let judging = match super::judging::from_args(flags) {
        Ok(j) => j,
        Err((code, e)) => {
            eprintln!("turnsim run: {e}");
            return code;
        }
    };
    let judged = Judged::with(chosen.factory(), &judging);
    let factory = &judged;
    let single = match std::env::var("TURNSIM_SEED") {
        Ok(_) if a.seeds.is_some() => {
            return usage("TURNSIM_SEED and --seeds both name seeds; give one of them");
        }
        Ok(text) => match parse_seed(&text) {
            Ok(seed) => Some(seed),
            Err(e) => return usage(&format!("TURNSIM_SEED: {e}")),
        },
        Err(_) => a
            .seeds
            .clone()
            .filter(|r| r.end - r.start == 1)
            .map(|r| r.start),
    };
    let one_seed = std::env::var_os("TURNSIM_SEED").is_some() || a.trace;
    if a.summary_json.is_some() && one_seed {
        return usage(
            "--summary-json summarises a seed range; it does not go with --trace or TURNSIM_SEED",
        );
    }
    if let Some(path) = &a.summary_json
        && let Err(e) = probe_summary_path(path)
    {
        eprintln!("turnsim run: {e}");
        return Exit::File;
    }
    if a.trace && single.is_none() {
        return usage(
            "--trace prints one run step by step; give one seed (--seeds N or TURNSIM_SEED=N)",
        );
    }
    let out = match OutDir::prepare(&a.out) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("turnsim run: {e}");
            return Exit::File;
        }
    };
    let code = match single {
        Some(seed) if one_seed => run_one(factory, &target, seed, &a, &out.path, &judging),
        _ => run_many(factory, &target, &a, &out.path, &judging),
    };
    out.tidy();
    code
}

/// Whether `--summary-json` names a file that can be written, checked before any
/// seed runs: its directory is made and probed, and it is not a directory itself.
fn probe_summary_path(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!(
            "--summary-json {}: is a directory; expected a file name",
            path.display()
        ));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    OutDir::prepare(dir)
        .map(|_| ())
        .map_err(|e| e.replacen("--out", "--summary-json", 1))
}

/// What a saved failure and its printed commands need besides the factory.
struct Target<'a> {
    process: Option<&'a EngineProcess>,
    flags: String,
}

fn run_one(
    factory: &dyn EngineFactory,
    target: &Target,
    seed: u64,
    a: &RunArgs,
    out: &Path,
    judging: &Judging,
) -> Exit {
    let stdout = Stdout::new("run");
    let outcome = run_seed(factory, seed, true);
    stdout.print(&SimOptions::from_seed(seed).to_string());
    if a.trace {
        for line in &outcome.trace {
            stdout.print(&format!("{line}\n"));
        }
    }
    stdout.print(&format!(
        "seed {seed}: {} steps, digest {}\n",
        outcome.steps, outcome.digest
    ));
    stdout.print(&super::judging::describe(factory));
    let Some(v) = &outcome.violation else {
        stdout.print("PASS\n");
        return Exit::Pass;
    };
    match save_failure(factory, target.process, seed, out, judging) {
        Some(s) => stdout.print(&full_report(seed, &s, &target.flags)),
        None => stdout.print(&format!(
            "FAIL seed {seed}: {} (a rerun passed: the failure is nondeterministic)\n",
            v.invariant
        )),
    }
    Exit::of_class(Some(FailureClass::of(v.invariant)))
}

fn progress_bar(len: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} seeds ({rate}) {msg}",
    ) {
        let style = style
            .with_key(
                "rate",
                |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate_text(s.per_sec()));
                },
            )
            .progress_chars("=> ");
        bar.set_style(style);
    }
    bar
}

fn run_many(
    factory: &dyn EngineFactory,
    target: &Target,
    a: &RunArgs,
    out: &Path,
    judging: &Judging,
) -> Exit {
    let stdout = Stdout::new("run");
    let shard = match a.shard {
        Some(s) => Some(s),
        None => match shard_from_env(|k| std::env::var(k).ok()) {
            Ok(s) => s,
            Err(e) => return usage(&e),
        },
    };
    let range = a
        .seeds
        .clone()
        .unwrap_or_else(|| parse_seed_range(DEFAULT_SEEDS).unwrap_or(0..0));
    let seeds: Vec<u64> = match shard {
        Some((k, n)) => shard_seeds(range.clone(), k, n).collect(),
        None => range.clone().collect(),
    };
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        return usage("--jobs: expected at least 1");
    }
    if !interrupt::install() {
        eprintln!("turnsim run: no Ctrl-C handler; an interrupted run prints nothing");
    }
    let started = Instant::now();
    // An engine in another process runs one to two orders of magnitude slower than
    // in process: the default range would take hours, so it gets a time budget.
    let time = match (a.time, &a.seeds, target.process) {
        (None, None, Some(_)) => {
            stdout.print(&format!(
                "engine process, no --seeds or --time: seeds {DEFAULT_SEEDS} for at most {} s (--seeds or --time to change it)\n",
                SUBPROCESS_BUDGET.as_secs()
            ));
            Some(SUBPROCESS_BUDGET)
        }
        (t, _, _) => t,
    };
    let deadline = time.map(|t| started + t);
    let bar = progress_bar(seeds.len() as u64, a.quiet);
    let failed = AtomicU64::new(0);
    let saved: Mutex<BTreeMap<u64, Option<Saved>>> = Mutex::new(BTreeMap::new());
    let stop = || {
        interrupt::interrupted()
            || a.stop_after
                .is_some_and(|n| failed.load(Ordering::SeqCst) >= n)
            || deadline.is_some_and(|d| Instant::now() >= d)
    };
    let per_invariant: Mutex<BTreeMap<Invariant, u64>> = Mutex::new(BTreeMap::new());
    let progress = |done: u64, failures: u64| {
        if done.is_multiple_of(64) || failures > 0 {
            bar.set_position(done);
            bar.set_message(format!("failures: {failures}"));
        }
    };
    let on_failure = |seed: u64, v: &Violation| {
        failed.fetch_add(1, Ordering::SeqCst);
        let nth = per_invariant.lock().map_or(1, |mut m| {
            let n = m.entry(v.invariant).or_default();
            *n += 1;
            *n
        });
        if nth > a.max_failures {
            // Counted in the summary's list by invariant; not rerun, not saved.
            return;
        }
        let s = save_failure(factory, target.process, seed, out, judging);
        let line = match &s {
            Some(s) => compact_line(seed, s),
            None => format!("  seed {seed}: {} (a rerun passed)", v.invariant),
        };
        bar.println(format!("found:{}", line.trim_start_matches(' ')));
        if let Ok(mut map) = saved.lock() {
            map.insert(seed, s);
        }
    };
    // A job and its engine processes on one CPU (see stdio_engine::affinity); an
    // engine in this process needs no pipe, so its jobs are left to the scheduler.
    let cpus = if target.process.is_some() && !a.engine.engine_no_pinning {
        affinity::allowed_cpus()
    } else {
        Vec::new()
    };
    let pin = |job: usize| {
        affinity::pin_current_thread(&cpus, job);
    };
    let result = run_batch_with(
        &Batch {
            factory,
            seeds,
            jobs,
            check_determinism: a.check_determinism,
            stop: &stop,
            progress: &progress,
        },
        &on_failure,
        &pin,
    );
    bar.finish_and_clear();
    let (sum, digests) = match result {
        Ok(r) => r,
        Err(e) => return usage(&e),
    };
    if a.verbose {
        for (seed, digest) in &digests {
            stdout.print(&format!(
                "{}seed {seed} digest {digest}\n",
                SimOptions::from_seed(*seed)
            ));
        }
    }
    let saved = saved.into_inner().unwrap_or_default();
    stdout.print(&failure_list(
        &sum.failures,
        &saved,
        &target.flags,
        a.max_failures,
    ));
    // (the words printed, the word a summary file stores)
    let stopped = if interrupt::interrupted() {
        stdout.print("interrupted (Ctrl-C): the seeds that ran are summarised below\n");
        Some(("interrupted by Ctrl-C", "interrupted"))
    } else if a
        .stop_after
        .is_some_and(|n| failed.load(Ordering::SeqCst) >= n)
        && sum.skipped > 0
    {
        // The summary file's word predates `--stop-after` and stays, so files read alike.
        Some(("--stop-after reached", "max_failures"))
    } else {
        Some(("--time budget spent", "time"))
    };
    let stopped = stopped.filter(|_| sum.skipped > 0 || interrupt::interrupted());
    let elapsed = started.elapsed();
    stdout.print(&summary(
        &sum,
        factory.name(),
        jobs,
        elapsed,
        stopped.map(|s| s.0),
    ));
    stdout.print(&super::judging::describe(factory));
    let file = SummaryFile::of_run(RunFacts {
        options: RunOptions {
            engine: factory.name().to_string(),
            engine_process: target.process.cloned(),
            judging: judging.clone(),
            check_determinism: a.check_determinism,
        },
        range,
        shard,
        summary: &sum,
        scenarios: scenario_files(&saved),
        stopped: stopped.filter(|_| sum.skipped > 0).map(|s| s.1),
        seconds: elapsed.as_secs_f64(),
        jobs: jobs as u64,
    });
    if sum.skipped > 0 {
        stdout.print(&super::merge::seed_lines(&file));
    }
    if let Some(path) = &a.summary_json
        && let Err(code) = super::merge::write_summary(path, &file, "run")
    {
        return code;
    }
    Exit::of_class(sum.first_failure_class())
}

/// Each saved failure's scenario file, or why there is none, for the summary file.
fn scenario_files(saved: &BTreeMap<u64, Option<Saved>>) -> BTreeMap<u64, Result<String, String>> {
    saved
        .iter()
        .map(|(seed, s)| {
            let file = match s {
                Some(s) => match &s.file {
                    Ok(p) => Ok(p.display().to_string()),
                    Err(e) => Err(format!("not written: {e}")),
                },
                None => Err("a rerun passed: the failure is nondeterministic".to_string()),
            };
            (*seed, file)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_without_decimals_from_a_hundred_up() {
        assert_eq!(rate_text(1699.6963), "1,700/s");
        assert_eq!(rate_text(123_456_789.4), "123,456,789/s");
        assert_eq!(rate_text(100.0), "100/s");
        assert_eq!(rate_text(999.4), "999/s");
        assert_eq!(rate_text(12.345), "12.3/s");
        assert_eq!(rate_text(0.0), "0.0/s");
        assert_eq!(rate_text(f64::NAN), "-/s");
    }
}
