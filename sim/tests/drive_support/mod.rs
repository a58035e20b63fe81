//! Shared by the `drive_*` tests: profiles pointed at this build's binaries, seeds
//! with a wanted signal, and runs in fresh directories.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::{Interrupt, Profile, profile};
use turnsim::testing::drive::report::RunReport;
use turnsim::testing::drive::run::{RunFile, Schedule};

static DIRS: AtomicU32 = AtomicU32::new(0);

/// Generous: the machine may be loaded.
pub const TIMEOUT_SECS: u64 = 60;

/// Short tools keep the tests quick; still long enough for a signal to land.
pub const TOOL_MS: u32 = 1500;

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "turnsim-drive-test-{}-{}-{name}",
        std::process::id(),
        DIRS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The test-client profile with `flags` (planted faults), using this build's binary.
pub fn test_client(flags: &[&str]) -> Profile {
    let flags: Vec<String> = flags.iter().map(|s| (*s).to_owned()).collect();
    let mut p = profile("test-client", &flags).expect("built-in profile");
    let bin = env!("CARGO_BIN_EXE_turnsim-test-client").to_owned();
    p.command[0] = bin.clone();
    p.resume[0] = bin;
    p
}

/// The interactive test-client profile (`--interactive`, driven in a pty) with
/// `flags`, using this build's binary.
pub fn test_client_tui(flags: &[&str]) -> Profile {
    let flags: Vec<String> = flags.iter().map(|s| (*s).to_owned()).collect();
    let mut p = profile("test-client-tui", &flags).expect("built-in profile");
    let bin = env!("CARGO_BIN_EXE_turnsim-test-client").to_owned();
    p.command[0] = bin.clone();
    p.resume[0] = bin;
    p
}

/// The first seed whose schedule sends `want`, and a provider fault or not.
pub fn seed_with(p: &Profile, want: Interrupt) -> u64 {
    (0..1000)
        .find(|&s| Schedule::from_seed(s, p, TOOL_MS, &Default::default()).interrupt == Some(want))
        .expect("a seed with the signal")
}

/// Runs one seed, no reruns.
pub fn drive(p: &Profile, seed: u64, name: &str) -> RunReport {
    let file = RunFile::new(
        p.clone(),
        Schedule::from_seed(seed, p, TOOL_MS, &Default::default()),
        TIMEOUT_SECS,
    );
    let dir = temp_dir(name);
    turnsim::drive::drive_one(&file, &dir, "test", 0).expect("the run completes")
}

pub fn details<'a>(r: &'a RunReport, name: &str) -> &'a [String] {
    &r.observations
        .iter()
        .find(|o| o.name == name)
        .expect("checker present")
        .details
}

pub fn status(r: &RunReport, name: &str) -> Status {
    r.observations
        .iter()
        .find(|o| o.name == name)
        .map(|o| o.status)
        .expect("checker present")
}

/// Runs `turnsim drive` with `args`; (exit code, stdout, stderr).
pub fn turnsim(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .arg("drive")
        .args(args)
        .output()
        .expect("turnsim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `turnsim drive --replay` of a report's run file, no reruns; (code, stdout).
pub fn replay(report: &RunReport) -> (i32, String) {
    let out = temp_dir("replay").display().to_string();
    let run = report.dir.join("run.json").display().to_string();
    let (code, stdout, _) = turnsim(&["--rerun", "0", "--out", &out, "--replay", &run]);
    (code, stdout)
}

/// Runs `rounds` tool calls with no provider fault and no signal, no reruns.
pub fn drive_quiet(p: &Profile, rounds: u32, name: &str) -> RunReport {
    let schedule = Schedule {
        seed: 0,
        fault: None,
        fault_at: 0,
        rounds,
        interrupt: None,
        interrupt_at_tool: 0,
        interrupt_delay_ms: 0,
        tool_ms: TOOL_MS,
    };
    let file = RunFile::new(p.clone(), schedule, TIMEOUT_SECS);
    turnsim::drive::drive_one(&file, &temp_dir(name), "test", 0).expect("the run completes")
}
