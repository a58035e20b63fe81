//! `turnsim drive`: start a real agent client against `turnsim serve`, interrupt it at
//! seeded points (a provider fault, SIGINT while a tool runs, SIGTERM, SIGHUP, SIGKILL,
//! or a key in an interactive UI),
//! resume it with one more prompt, and judge black-box what it sent and what its
//! tools did.
//!
//! Guarantee: drive is plain `std::process`, `/proc` and the server it starts in
//! process (tokio stays inside [`crate::serve`]); every run has a deadline and
//! ends with every process of the run killed by id and checked gone. The schedule
//! is seeded and saved with the client profile in a run file, so a run can be
//! repeated with `--replay`; the client is not deterministic, so a failing schedule
//! is rerun, every rerun judged by every checker, and its failure rate printed.
//! Parallel runs (`--jobs`) share nothing: each has its own server port, HOME,
//! working directory, ledger and process marker.

pub(crate) mod cleanup;
pub(crate) mod evidence;
pub(crate) mod exit_status;
pub(crate) mod history;
pub(crate) mod installed;
pub(crate) mod invoke;
pub(crate) mod observe;
pub(crate) mod procs;
pub(crate) mod profiles;
pub(crate) mod report;
pub(crate) mod repro;
pub(crate) mod run;
pub(crate) mod schedule;
pub(crate) mod summary;
pub(crate) mod terminal;
pub(crate) mod terminals;
pub(crate) mod timeline;
pub(crate) mod tool;
pub(crate) mod tree;

use crate::exit::Exit;
use crate::options::Ratio;
use crate::stdout::Stdout;
use report::{Outcome, Reruns, RunReport};
use run::{RunFile, run_schedule};
use schedule::{DriveOptions, Schedule};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// `turnsim drive` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct DriveArgs {
    /// Seed of the first run; run i uses seed S+i.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// A range of seeds, `A..B` (B excluded) or `A..=B`, instead of --seed/--runs.
    #[arg(long, conflicts_with_all = ["seed", "runs"])]
    pub seeds: Option<String>,
    /// Runs at a time (each with its own port, HOME and processes).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Print the summary as JSON on stdout (run reports go to stderr).
    #[arg(long)]
    pub json: bool,
    /// How long each scripted tool call runs, in milliseconds (long enough to
    /// outlive a client that exits, so an orphan's effect shows).
    #[arg(long, default_value_t = tool::DEFAULT_TOOL_MS)]
    pub tool_ms: u32,
    /// How many runs.
    #[arg(long, default_value_t = 1)]
    pub runs: u64,
    /// The client profile (`test-client` needs the `test-client` feature's binary;
    /// `custom` takes its command after `--`).
    #[arg(
        long,
        required_unless_present = "replay",
        value_parser = clap::builder::PossibleValuesParser::new(profiles::BUILT_IN)
    )]
    pub client: Option<String>,
    /// Deadline of each client invocation, in seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Where runs are written (default: a fresh directory under the temp dir).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Chance that a run has no provider fault, as an integer ratio `N/D`.
    #[arg(long, default_value = "1/3", value_parser = parse_ratio)]
    pub no_fault: Ratio,
    /// Chance that a run sends no signal (nor key), as an integer ratio `N/D`
    /// (`0/1`: every run is interrupted).
    #[arg(long, default_value = "1/5", value_parser = parse_ratio)]
    pub no_signal: Ratio,
    /// Reruns of a failing schedule, to measure how often it fails (each costs
    /// a whole run: the default 3 makes a failing seed take four times as long;
    /// `--rerun 0` while exploring).
    #[arg(long, default_value_t = 3)]
    pub rerun: u32,
    /// Run this run file again (written as run.json in every run's directory).
    #[arg(long, conflicts_with_all = ["client", "seed", "runs", "seeds"])]
    pub replay: Option<PathBuf>,
    /// For `--client custom`: the command, with {base_url} and {prompt}; for
    /// `test-client`: extra flags (the planted faults).
    #[arg(last = true)]
    pub command: Vec<String>,
}

impl DriveArgs {
    /// The schedule's probabilities from the flags.
    pub fn options(&self) -> DriveOptions {
        DriveOptions {
            no_fault: self.no_fault,
            no_signal: self.no_signal,
        }
    }
}

/// The client's version, from the profile's version command (20 s at most).
pub fn client_version(profile: &profiles::Profile) -> String {
    let Some((program, args)) = profile.version.split_first() else {
        return "unversioned".into();
    };
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let Ok(mut child) = child else {
        return "not installed".into();
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let pgid = i32::try_from(child.id()).unwrap_or(0);
                procs::signal_group(pgid, libc::SIGKILL);
                let _ = child.wait();
                return "unknown (version command hung)".into();
            }
        }
    }
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
    }
    let line = text.lines().next().unwrap_or_default().trim().to_owned();
    if line.is_empty() {
        "unknown".into()
    } else {
        line
    }
}

use std::os::unix::process::CommandExt;

/// Runs one run file in `dir`, reruns it `rerun` times when any checker fails (each
/// rerun judged by every checker, with its own report.json), writes `report.json`,
/// and returns the report.
pub fn drive_one(
    file: &RunFile,
    dir: &Path,
    version: &str,
    rerun: u32,
) -> Result<RunReport, String> {
    let judge = |d: &Path| -> Result<RunReport, String> {
        let facts = run_schedule(file, d)?;
        let observations = observe::observe(&facts);
        timeline::write(d, &facts, &observations, &file.profile.name)?;
        let rep = RunReport::new(d, &file.profile.name, version, &facts, observations);
        rep.save()?;
        Ok(rep)
    };
    let mut rep = judge(dir)?;
    if rep.outcome == Outcome::Fail && rerun > 0 {
        let mut per: Vec<(String, u32)> = rep.failing().into_iter().map(|n| (n, 0)).collect();
        let mut failed = 0;
        let mut dirs = Vec::new();
        for k in 1..=rerun {
            let d = dir.join(format!("rerun-{k}"));
            let again = judge(&d)?;
            dirs.push(d);
            let failing = again.failing();
            failed += u32::from(!failing.is_empty());
            for name in failing {
                match per.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, c)) => *c += 1,
                    None => per.push((name, 1)),
                }
            }
        }
        rep.reruns = Some(Reruns {
            runs: rerun,
            failed,
            per_checker: per,
            dirs,
        });
    }
    // The repro script replays a headless command line; an interactive run is
    // replayed with `--replay` (its screens are in FIRST.screen, RESUMED.screen). A
    // run whose resume alone is interactive gets one: its first phase is headless.
    if rep.outcome == Outcome::Fail && file.terminal.as_ref().is_none_or(|t| !t.runs(false)) {
        repro::write(file, &rep)?;
    }
    rep.save()?;
    Ok(rep)
}

/// What `--rerun` costs, for the header: every failing seed is run again that many
/// times, so a batch with failures takes that much longer.
pub fn reruns_line(rerun: u32) -> String {
    if rerun == 0 {
        "reruns: none (--rerun 0): a failing seed is run once".to_owned()
    } else {
        format!(
            "reruns: each failing seed is run {rerun} more time(s) to measure its rate ({} runs in all for it; --rerun 0 to skip)",
            rerun + 1
        )
    }
}

/// `N/D` with `D >= 1` and `N <= D`.
pub fn parse_ratio(s: &str) -> Result<Ratio, String> {
    let bad = || format!("{s:?}: expected a ratio N/D with 1 <= D and N <= D (e.g. 1/5)");
    let (n, d) = s.split_once('/').ok_or_else(bad)?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    let d: u32 = d.trim().parse().map_err(|_| bad())?;
    if d == 0 || n > d {
        return Err(bad());
    }
    Ok(Ratio::new(n, d))
}

/// `A..B` (B excluded) or `A..=B`.
pub fn parse_seeds(s: &str) -> Result<std::ops::Range<u64>, String> {
    let bad = || format!("--seeds {s:?}: expected A..B or A..=B (e.g. 0..10)");
    let (a, b, inclusive) = if let Some((a, b)) = s.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = s.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad());
    };
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    let end = if inclusive {
        b.checked_add(1).ok_or_else(bad)?
    } else {
        b
    };
    if end <= a {
        return Err(format!("--seeds {s:?}: the range is empty"));
    }
    Ok(a..end)
}

/// Runs every file, `jobs` at a time; reports in file order. Stops starting new
/// runs after an environment error.
fn run_all(
    files: &[(RunFile, PathBuf)],
    version: &str,
    a: &DriveArgs,
    stdout: &Stdout,
) -> Result<Vec<RunReport>, String> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<(usize, Result<RunReport, String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.clamp(1, 64) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= files.len() || stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let (file, dir) = &files[i];
                    let r = drive_one(file, dir, version, a.rerun);
                    match &r {
                        Ok(rep) => {
                            if rep.outcome == Outcome::Environment {
                                stop.store(true, Ordering::SeqCst);
                            }
                            if a.json {
                                eprint!("{}", rep.text());
                            } else {
                                stdout.print(&rep.text());
                            }
                        }
                        Err(_) => stop.store(true, Ordering::SeqCst),
                    }
                    if let Ok(mut d) = done.lock() {
                        d.push((i, r));
                    }
                }
            });
        }
    });
    let mut done = done.into_inner().map_err(|_| "a run panicked".to_owned())?;
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// `turnsim drive`; returns the exit code.
pub fn drive_main(a: &DriveArgs) -> Exit {
    let stdout = Stdout::new("drive");
    let out = a.out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("turnsim-drive-{}", std::process::id()))
    });
    let mut files: Vec<(RunFile, PathBuf)> = Vec::new();
    if let Some(path) = &a.replay {
        match RunFile::load(path) {
            Ok(f) => {
                let dir = out.join(format!("replay-{}", f.schedule.seed));
                files.push((f, dir));
            }
            Err(e) => {
                eprintln!("{e}");
                return Exit::File;
            }
        }
    } else {
        let name = a.client.as_deref().unwrap_or_default();
        let profile = match profiles::profile(name, &a.command) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("turnsim drive: {e}");
                return Exit::Usage;
            }
        };
        let seeds = match &a.seeds {
            Some(s) => match parse_seeds(s) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("turnsim drive: {e}");
                    return Exit::Usage;
                }
            },
            None => a.seed..a.seed.saturating_add(a.runs),
        };
        if a.tool_ms < 100 {
            eprintln!(
                "turnsim drive: --tool-ms {} is too short for a signal to land in a tool (at least 100)",
                a.tool_ms
            );
            return Exit::Usage;
        }
        let options = a.options();
        for seed in seeds {
            let schedule = Schedule::from_seed(seed, &profile, a.tool_ms, &options);
            let dir = out.join(format!("run-{seed}"));
            files.push((RunFile::new(profile.clone(), schedule, a.timeout), dir));
        }
    }
    let Some(first) = files.first() else {
        return Exit::Pass;
    };
    if let Some(why) = installed::refusal(&first.0.profile, &out) {
        eprintln!("turnsim drive: {why}");
        return Exit::Environment;
    }
    let version = client_version(&first.0.profile);
    // A replayed run file carries its schedule: the options drew nothing.
    let options = if a.replay.is_some() {
        "options: from the run file's schedule".to_owned()
    } else {
        a.options().describe()
    };
    let header = format!(
        "turnsim drive: {} ({version}), {} run(s), {} at a time, writing to {}\n{options}\n{}\n{}",
        first.0.profile.name,
        files.len(),
        a.jobs.max(1),
        out.display(),
        reruns_line(a.rerun),
        report::NONDETERMINISM
    );
    if a.json {
        eprintln!("{header}");
    } else {
        stdout.print(&format!("{header}\n"));
    }
    let reports = match run_all(&files, &version, a, &stdout) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("turnsim drive: {e}");
            return Exit::File;
        }
    };
    let sum = summary::summarize(&reports);
    let md = summary::markdown(&sum);
    let json = serde_json::to_string_pretty(&sum).unwrap_or_default();
    let _ = std::fs::create_dir_all(&out);
    for (name, text) in [("summary.md", &md), ("summary.json", &json)] {
        let path = out.join(name);
        if let Err(e) = crate::scenario::write_atomic(&path, text.as_bytes()) {
            eprintln!("turnsim drive: {}: {e}", path.display());
            return Exit::File;
        }
    }
    if a.json {
        stdout.print(&format!("{json}\n"));
    } else {
        stdout.print(&format!(
            "{md}summary: {}\n",
            out.join("summary.md").display()
        ));
    }
    if let Some(env) = reports.iter().find(|r| r.outcome == Outcome::Environment) {
        eprintln!(
            "turnsim drive: environment error, not a client finding: {}",
            env.reason.as_deref().unwrap_or("the client could not run")
        );
        return Exit::Environment;
    }
    if sum.failed_runs > 0 {
        Exit::Correctness
    } else {
        Exit::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_ratio, parse_seeds};
    use crate::options::Ratio;

    #[test]
    fn drive_ratios_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_ratio("1/5"), Ok(Ratio::new(1, 5)));
        assert_eq!(parse_ratio("0/1"), Ok(Ratio::new(0, 1)));
        for bad in ["1/0", "3/2", "1", "a/b", "-1/2"] {
            assert_eq!(
                parse_ratio(bad),
                Err(format!(
                    "{bad:?}: expected a ratio N/D with 1 <= D and N <= D (e.g. 1/5)"
                )),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_header_says_what_reruns_cost() {
        assert_eq!(
            super::reruns_line(3),
            "reruns: each failing seed is run 3 more time(s) to measure its rate (4 runs in all for it; --rerun 0 to skip)"
        );
        assert!(super::reruns_line(0).contains("run once"));
    }

    #[test]
    fn seed_ranges_are_half_open_or_inclusive_and_bad_ones_are_refused() {
        assert_eq!(parse_seeds("0..10"), Ok(0..10));
        assert_eq!(parse_seeds("5..=7"), Ok(5..8));
        assert_eq!(
            parse_seeds("3..3"),
            Err("--seeds \"3..3\": the range is empty".to_owned())
        );
        assert!(parse_seeds("7").is_err());
        assert!(parse_seeds("a..b").is_err());
        assert!(parse_seeds(&format!("0..={}", u64::MAX)).is_err());
    }
}
