//! `turnsim drive`: start a real agent client against `turnsim serve`, interrupt it at
//! seeded points (a provider fault, SIGINT while a tool runs, SIGTERM, SIGKILL),
//! resume it with one more prompt, and judge black-box what it sent and what its
//! tools did.
//!
//! Guarantee: drive is plain `std::process`, `/proc` and the server it starts in
//! process (tokio stays inside [`crate::serve`]); every run has a deadline and
//! ends with the client's process group and every tool process the ledger named
//! killed by id and checked gone. The schedule is seeded and saved with the client
//! profile in a run file, so a run can be repeated with `--replay`; the client is
//! not deterministic, so a failing schedule is rerun and its failure rate printed.

pub mod observe;
pub mod procs;
pub mod profiles;
pub mod profiles_openai;
pub mod report;
pub mod run;

use crate::exit::Exit;
use report::{Reruns, RunReport};
use run::{RunFile, Schedule, run_schedule};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `turnsim drive` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct DriveArgs {
    /// Seed of the first run; run i uses seed S+i.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
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
    /// Reruns of a failing schedule, to measure how often it fails.
    #[arg(long, default_value_t = 3)]
    pub rerun: u32,
    /// Run this run file again (written as run.json in every run's directory).
    #[arg(long, conflicts_with_all = ["client", "seed", "runs"])]
    pub replay: Option<PathBuf>,
    /// For `--client custom`: the command, with {base_url} and {prompt}; for
    /// `test-client`: extra flags (the planted faults).
    #[arg(last = true)]
    pub command: Vec<String>,
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

/// Runs one run file in `dir`, reruns it `rerun` times when it fails, writes
/// `report.json` and returns the report.
pub fn drive_one(
    file: &RunFile,
    dir: &Path,
    version: &str,
    rerun: u32,
) -> Result<RunReport, String> {
    let facts = run_schedule(file, dir)?;
    let observations = observe::observe(&facts);
    let mut rep = RunReport::new(dir, &file.profile.name, version, &facts, observations);
    let failing = rep.failing();
    if !failing.is_empty() && rerun > 0 {
        let mut failed = 0;
        let mut per: Vec<(String, u32)> = failing.iter().map(|n| (n.clone(), 0)).collect();
        for k in 1..=rerun {
            let again = run_schedule(file, &dir.join(format!("rerun-{k}")))?;
            let obs = observe::observe(&again);
            let mut any = false;
            for (name, n) in &mut per {
                if obs
                    .iter()
                    .any(|o| &o.name == name && o.status == observe::Status::Fail)
                {
                    *n += 1;
                    any = true;
                }
            }
            failed += u32::from(any);
        }
        rep.reruns = Some(Reruns {
            runs: rerun,
            failed,
            per_checker: per,
        });
    }
    rep.save()?;
    Ok(rep)
}

/// Where `program` would be found: itself when it names a path, else the first
/// `PATH` entry that holds it.
fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `turnsim drive`; returns the exit code.
pub fn drive_main(a: &DriveArgs) -> Exit {
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
        for i in 0..a.runs {
            let seed = a.seed.wrapping_add(i);
            let schedule = Schedule::from_seed(seed, &profile);
            let dir = out.join(format!("run-{seed}"));
            files.push((RunFile::new(profile.clone(), schedule, a.timeout), dir));
        }
    }
    let Some(first) = files.first() else {
        return Exit::Pass;
    };
    for command in [&first.0.profile.command, &first.0.profile.resume] {
        let program = command.first().map(String::as_str).unwrap_or_default();
        // A custom command may start with a placeholder; it is checked when it runs.
        if !program.contains('{') && find_program(program).is_none() {
            eprintln!(
                "turnsim drive: client {}: {program:?} is not installed or not on PATH",
                first.0.profile.name
            );
            return Exit::Environment;
        }
    }
    let version = client_version(&first.0.profile);
    println!(
        "turnsim drive: {} ({version}), {} run(s), writing to {}",
        first.0.profile.name,
        files.len(),
        out.display()
    );
    println!("{}", report::NONDETERMINISM);
    let mut failed = 0;
    let mut tally: Vec<(String, u32)> = Vec::new();
    for (file, dir) in &files {
        match drive_one(file, dir, &version, a.rerun) {
            Ok(rep) => {
                print!("{}", rep.text());
                let failing = rep.failing();
                if !failing.is_empty() {
                    failed += 1;
                }
                for name in failing {
                    match tally.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, c)) => *c += 1,
                        None => tally.push((name, 1)),
                    }
                }
            }
            Err(e) => {
                eprintln!("turnsim drive: {}: {e}", dir.display());
                return Exit::File;
            }
        }
    }
    let by: Vec<String> = tally.iter().map(|(n, c)| format!("{n} {c}")).collect();
    println!(
        "{} of {} run(s) failed{}",
        failed,
        files.len(),
        if by.is_empty() {
            String::new()
        } else {
            format!(" ({})", by.join(", "))
        }
    );
    if failed > 0 {
        Exit::Correctness
    } else {
        Exit::Pass
    }
}
