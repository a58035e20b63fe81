//! The `turnsim` command line: `run`, `replay`, `shrink`, `options`, `serve`, `check`.
//!
//! Guarantee: the CLI is only an interpreter of the library's results. It reads the
//! wall clock for the time budget and the rates it prints, and nothing it reads flows
//! back into a simulated run, so a seed means the same thing from the CLI, from
//! `cargo test` and from a fuzz target. Every failure prints the exact command that
//! replays it, and the exit code says which class of failure it was.

use crate::canary::{Bug, Canary};
use crate::cliargs::{parse_duration, parse_seed_range, parse_shard, shard_from_env, shard_seeds};
use crate::engine::{EngineFactory, Reference};
use crate::options::SimOptions;
use crate::report::{exit, exit_code, summary};
use crate::runner::{Batch, matches_expectation, run_batch, run_scenario, run_seed};
use crate::scenario::{Expectation, Scenario, load_scenario, save_scenario};
use crate::shrink::shrink;
use crate::world::{FailureClass, RunOutcome};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The seed range `turnsim run` covers by default: about a minute on two cores.
pub const DEFAULT_SEEDS: &str = "0..400000";

/// Failing seeds written out as scenarios per run, at most.
const MAX_SCENARIOS: usize = 20;

#[derive(Parser, Debug)]
#[command(
    name = "turnsim",
    version,
    about = "Deterministic simulation testing for LLM agent turn engines",
    after_help = "Exit codes: 0 pass, 1 correctness, 2 usage, 3 liveness, 4 engine panic, 5 nondeterminism, 6 unreadable or unwritable file, 7 replay did not match its scenario."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the simulator over a range of seeds. TURNSIM_SEED=N runs just seed N.
    Run(RunArgs),
    /// Replay a scenario file and check it does what it expects.
    Replay {
        file: PathBuf,
        /// Print the run step by step.
        #[arg(long)]
        trace: bool,
        /// Write the request at the violation (the run's last request) to PATH as an
        /// Anthropic Messages JSON body, for `turnsim check`.
        #[arg(long, value_name = "PATH")]
        export_transcript: Option<PathBuf>,
    },
    /// Minimise a failing scenario's decision list; writes FILE.min.json.
    Shrink {
        file: PathBuf,
        /// Replays the search may spend.
        #[arg(long, default_value_t = 4000)]
        budget: u32,
    },
    /// Print the options a seed derives.
    Options { seed: u64 },
    /// Serve the scripted provider as an Anthropic Messages API on 127.0.0.1.
    #[cfg(feature = "serve")]
    Serve(crate::serve::ServeArgs),
    /// Drive a real agent client against `turnsim serve`: seeded faults, SIGINT,
    /// SIGTERM, SIGKILL, resume; judge what it sends and what its tools do.
    #[cfg(feature = "serve")]
    Drive(crate::drive::DriveArgs),
    /// Check real transcripts, recorded traffic and `turnsim serve --record`
    /// directories against the invariants. Exit codes: 0 clean, 1 violations,
    /// 2 unreadable input.
    Check(crate::check::CheckArgs),
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Seeds to run: A..B, A..=B or one seed N (decimal or 0x hex).
    #[arg(long, default_value = DEFAULT_SEEDS, value_parser = parse_seed_range)]
    pub seeds: std::ops::Range<u64>,
    /// Stop starting seeds after this long (500ms, 30s, 5m, 2h).
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Worker threads; default: every core.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard K of N (0-based); also read from JOB_COMPLETION_INDEX/COUNT.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Where failing scenarios are written.
    #[arg(long, default_value = "scenarios/failures")]
    pub out: PathBuf,
    /// Print each seed's options and digest.
    #[arg(long)]
    pub verbose: bool,
    /// Run each seed twice and compare the trace digests step by step.
    #[arg(long)]
    pub check_determinism: bool,
    /// The engine: `reference`, or a canary (a planted bug) by name.
    #[arg(long, default_value = "reference", value_parser = parse_engine)]
    pub engine: String,
    /// With TURNSIM_SEED: print the run step by step.
    #[arg(long)]
    pub trace: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

fn parse_engine(s: &str) -> Result<String, String> {
    factory(s).map(|_| s.to_string())
}

/// The engine factory for a name: `reference` or a canary.
pub fn factory(name: &str) -> Result<Box<dyn EngineFactory>, String> {
    if name == "reference" {
        return Ok(Box::new(Reference));
    }
    match Bug::parse(name) {
        Some(bug) => Ok(Box::new(Canary(bug))),
        None => {
            let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
            Err(format!(
                "unknown engine {name:?}; expected `reference` or one of: {}",
                names.join(", ")
            ))
        }
    }
}

/// Parses the arguments and runs; returns the process exit code.
pub fn main_with(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::PASS
            };
        }
    };
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Replay {
            file,
            trace,
            export_transcript,
        } => cmd_replay(&file, trace, export_transcript.as_deref()),
        Command::Shrink { file, budget } => cmd_shrink(&file, budget),
        Command::Options { seed } => {
            print!("{}", SimOptions::from_seed(seed));
            exit::PASS
        }
        #[cfg(feature = "serve")]
        Command::Serve(a) => cmd_serve(&a),
        #[cfg(feature = "serve")]
        Command::Drive(a) => cmd_drive(&a),
        Command::Check(a) => cmd_check(a),
    }
}

/// `turnsim check`: files, folders of files and `turnsim serve --record` folders, all
/// judged by the one judge (`crate::check` tells them apart).
fn cmd_check(a: crate::check::CheckArgs) -> i32 {
    crate::check::run(&a)
}

#[cfg(feature = "serve")]
fn cmd_serve(a: &crate::serve::ServeArgs) -> i32 {
    crate::serve::serve_main(a)
}

#[cfg(feature = "serve")]
fn cmd_drive(a: &crate::drive::DriveArgs) -> i32 {
    crate::drive::drive_main(a)
}

fn cmd_run(a: RunArgs) -> i32 {
    let Ok(factory) = factory(&a.engine) else {
        return exit::USAGE;
    };
    if let Ok(seed) = std::env::var("TURNSIM_SEED") {
        let seed = match parse_seed_range(&seed) {
            Ok(r) if r.end - r.start == 1 => r.start,
            _ => {
                eprintln!("TURNSIM_SEED: expected one seed (decimal or 0x hex), got {seed:?}");
                return exit::USAGE;
            }
        };
        return run_one(&*factory, seed, &a);
    }
    let shard = match a.shard {
        Some(s) => Some(s),
        None => match shard_from_env(|k| std::env::var(k).ok()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return exit::USAGE;
            }
        },
    };
    let seeds: Vec<u64> = match shard {
        Some((k, n)) => shard_seeds(a.seeds.clone(), k, n).collect(),
        None => a.seeds.clone().collect(),
    };
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        eprintln!("--jobs: expected at least 1");
        return exit::USAGE;
    }
    let started = Instant::now();
    let deadline = a.time.map(|t| started + t);
    let bar = if a.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(seeds.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} seeds ({per_sec}) {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    };
    let stop = || deadline.is_some_and(|d| Instant::now() >= d);
    let progress = |done: u64, failed: u64| {
        if done.is_multiple_of(64) || failed > 0 {
            bar.set_position(done);
            bar.set_message(format!("failures: {failed}"));
        }
    };
    let result = run_batch(&Batch {
        factory: &*factory,
        seeds: seeds.clone(),
        jobs,
        check_determinism: a.check_determinism,
        stop: &stop,
        progress: &progress,
    });
    bar.finish_and_clear();
    let (summary_, digests) = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return exit::USAGE;
        }
    };
    if a.verbose {
        for (seed, digest) in &digests {
            println!(
                "{}seed {seed} digest {digest}",
                SimOptions::from_seed(*seed)
            );
        }
    }
    for (seed, v) in summary_.failures.iter().take(MAX_SCENARIOS) {
        report_failure(&*factory, *seed, v.invariant.as_str(), &a.out);
    }
    if summary_.failures.len() > MAX_SCENARIOS {
        println!(
            "... {} more failing seeds not written out (the first {MAX_SCENARIOS} were)",
            summary_.failures.len() - MAX_SCENARIOS
        );
    }
    print!(
        "{}",
        summary(&summary_, factory.name(), jobs, started.elapsed())
    );
    exit_code(summary_.first_failure_class())
}

fn run_one(factory: &dyn EngineFactory, seed: u64, a: &RunArgs) -> i32 {
    let outcome = run_seed(factory, seed, true);
    print!("{}", SimOptions::from_seed(seed));
    if a.trace {
        for line in &outcome.trace {
            println!("{line}");
        }
    }
    println!(
        "seed {seed}: {} steps, digest {}",
        outcome.steps, outcome.digest
    );
    match &outcome.violation {
        None => {
            println!("PASS");
            exit::PASS
        }
        Some(v) => {
            report_failure(factory, seed, &v.invariant, &a.out);
            exit_code(Some(FailureClass::of(&v.invariant)))
        }
    }
}

/// The last lines of a trace, for reports and scenario files.
fn excerpt(trace: &[String], lines: usize) -> String {
    trace[trace.len().saturating_sub(lines)..].join("\n")
}

fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Reruns a failing seed with a trace, writes its scenario and prints the block a user
/// needs: what broke, the options, the last steps, and the replay command.
fn report_failure(factory: &dyn EngineFactory, seed: u64, invariant: &str, out: &Path) {
    let outcome = run_seed(factory, seed, true);
    let Some(v) = outcome.violation.clone() else {
        println!("FAIL seed {seed}: {invariant} (a rerun passed: the failure is nondeterministic)");
        return;
    };
    let options = SimOptions::from_seed(seed);
    let mut scenario = Scenario::new(
        options.clone(),
        Expectation::Fail {
            invariant: v.invariant.clone(),
            step: v.step,
        },
    );
    scenario.seed = seed;
    scenario.name = format!("seed {seed}: {}", v.invariant);
    scenario.description = v.message.clone();
    scenario.engine = factory.name().to_string();
    scenario.decisions = outcome.decisions.clone();
    scenario.trace_digest = Some(outcome.digest.clone());
    scenario.excerpt = excerpt(&outcome.trace, 12);
    let path = out.join(format!("seed-{seed}-{}.json", v.invariant));
    println!("FAIL seed {seed}: {} at step {}", v.invariant, v.step);
    println!("  {}", v.message);
    print!("{options}");
    println!("last steps:");
    for line in outcome.trace.iter().rev().take(12).rev() {
        println!("  {line}");
    }
    match save_scenario(&path, &scenario) {
        Ok(()) => {
            println!("scenario: {}", path.display());
            println!("replay:   turnsim replay {}", shell_quote(&path));
        }
        Err(e) => println!("could not write the scenario: {e}"),
    }
    let engine = if factory.name() == "reference" {
        String::new()
    } else {
        format!(" --engine {}", factory.name())
    };
    println!("   or:    TURNSIM_SEED={seed} turnsim run{engine} --trace");
}

fn load(file: &Path) -> Result<(Scenario, Box<dyn EngineFactory>), i32> {
    let scenario = load_scenario(file).map_err(|e| {
        eprintln!("{e}");
        exit::IO
    })?;
    let factory = factory(&scenario.engine).map_err(|e| {
        eprintln!("{}: field `engine`: {e}", file.display());
        exit::IO
    })?;
    Ok((scenario, factory))
}

fn describe(o: &RunOutcome) -> String {
    match &o.violation {
        None => format!("pass after {} steps", o.steps),
        Some(v) => format!("{} at step {}: {}", v.invariant, v.step, v.message),
    }
}

fn cmd_replay(file: &Path, trace: bool, export: Option<&Path>) -> i32 {
    let (scenario, factory) = match load(file) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let outcome = run_scenario(&*factory, &scenario, trace);
    if trace {
        print!("{}", scenario.options);
        for line in &outcome.trace {
            println!("{line}");
        }
    }
    println!("replayed {}: {}", file.display(), describe(&outcome));
    println!("  trace digest {}", outcome.digest);
    if let Some(path) = export
        && let Err(code) = export_transcript(&outcome, path)
    {
        return code;
    }
    if let Err(e) = matches_expectation(&scenario.expect, &outcome) {
        println!("MISMATCH: {e}");
        return exit::MISMATCH;
    }
    if let Some(d) = &scenario.trace_digest
        && *d != outcome.digest
    {
        println!(
            "MISMATCH: trace digest {} differs from the recorded {d}",
            outcome.digest
        );
        return exit::MISMATCH;
    }
    match &outcome.violation {
        None => {
            println!("as expected: pass");
            exit::PASS
        }
        Some(v) => {
            println!("reproduced: {} at step {}", v.invariant, v.step);
            exit_code(Some(FailureClass::of(&v.invariant)))
        }
    }
}

/// `replay --export-transcript`: writes the request at the violation for `turnsim check`.
fn export_transcript(outcome: &RunOutcome, path: &Path) -> Result<(), i32> {
    match crate::check::export::export_transcript(outcome, path) {
        Ok(n) => {
            println!("transcript: {} ({n} messages)", path.display());
            println!("check:      turnsim check {}", shell_quote(path));
            Ok(())
        }
        Err(e) => {
            eprintln!("--export-transcript: {e}");
            Err(exit::IO)
        }
    }
}

/// `x.json` → `x.min.json`.
pub fn min_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    file.with_file_name(format!("{stem}.min.json"))
}

fn cmd_shrink(file: &Path, budget: u32) -> i32 {
    let (scenario, factory) = match load(file) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let shrunk = match shrink(&*factory, &scenario, budget) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return exit::MISMATCH;
        }
    };
    let mut scenario = shrunk.scenario.clone();
    let rerun = run_scenario(&*factory, &scenario, true);
    if let Some(v) = &rerun.violation {
        scenario.description = v.message.clone();
    }
    scenario.excerpt = excerpt(&rerun.trace, 12);
    let out = min_path(file);
    if let Err(e) = save_scenario(&out, &scenario) {
        eprintln!("{e}");
        return exit::IO;
    }
    println!(
        "shrunk {}: decisions {} -> {}, steps {} -> {} ({} replays)",
        file.display(),
        shrunk.decisions_before,
        shrunk.decisions_after,
        shrunk.steps_before,
        shrunk.steps_after,
        shrunk.runs
    );
    println!("wrote {}", out.display());
    println!("replay: turnsim replay {}", shell_quote(&out));
    exit::PASS
}
