//! `turnsim drive` whose stdout is closed (`turnsim drive … | head -1`) does not
//! panic: its printing stops quietly, every run is still judged and written with the
//! summary, and it exits with the runs' code (before, "failed printing to stdout:
//! Broken pipe", exit 101).
//!
//! The pipe's read end is closed before drive starts, so its first write fails with
//! EPIPE every time: no race with a reader that exits when it likes.

use crate::drive_support::temp_dir;
use std::process::{Command, Stdio};

/// `turnsim drive` of two quiet test-client runs (no fault, no signal) plus `extra`,
/// its stdout a pipe nobody reads; (exit code, stderr).
fn drive_into_a_closed_pipe(out: &std::path::Path, extra: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["drive", "--client", "test-client", "--seeds", "0..2"])
        .args([
            "--no-signal",
            "1/1",
            "--no-fault",
            "1/1",
            "--tool-ms",
            "200",
        ])
        .args(["--rerun", "0", "--timeout", "60"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("turnsim runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn drive_with_a_closed_stdout_exits_quietly_with_the_runs_code_and_writes_every_run() {
    let out = temp_dir("closed-stdout");
    let (code, stderr) = drive_into_a_closed_pipe(&out, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "");
    for seed in 0..2 {
        let report = out.join(format!("run-{seed}/report.json"));
        assert!(report.is_file(), "{}", report.display());
    }
    let md = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(md.contains("| class | runs | outcomes |"), "{md}");
}

#[test]
fn drive_json_with_a_closed_stdout_exits_quietly_with_the_runs_code() {
    let out = temp_dir("closed-stdout-json");
    let (code, stderr) = drive_into_a_closed_pipe(&out, &["--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    // With --json the header and the run reports go to stderr; only the summary to
    // the closed stdout.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.starts_with("turnsim drive: test-client"), "{stderr}");
    assert!(out.join("summary.json").is_file());
}
