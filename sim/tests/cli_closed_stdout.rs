//! `turnsim run`, `replay`, `check` and `drive` whose stdout is closed (`… | head -1`)
//! do not panic ("failed printing to stdout: Broken pipe", exit 101 before): the
//! printing stops, the work goes on (drive still judges and writes every run and the
//! summary), and the exit code is the verdict's. The pipe's read end is closed before
//! the command starts, so its first write fails every time: no race with a reader
//! that exits when it likes.

use std::process::{Command, Stdio};

/// `turnsim ARGS` with a stdout nobody reads; (exit code, stderr).
fn into_a_closed_pipe<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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
fn a_run_with_a_closed_stdout_exits_with_its_verdict_and_saves_its_failures() {
    let out =
        std::env::temp_dir().join(format!("turnsim-run-closed-stdout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let out_arg = out.display().to_string();
    let (code, stderr) = into_a_closed_pipe(&[
        "run",
        "--engine",
        "marker_twice",
        "--seeds",
        "0..20",
        "--jobs",
        "1",
        "--quiet",
        "--out",
        &out_arg,
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr, "");
    assert!(out.join("seed-1-marker_once.json").is_file());
}

#[test]
fn a_replay_with_a_closed_stdout_exits_with_its_verdict() {
    let (code, stderr) =
        into_a_closed_pipe(&["replay", "../scenarios/canary-marker_twice.json", "--trace"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn a_check_with_a_closed_stdout_exits_with_its_verdict() {
    let (code, stderr) = into_a_closed_pipe(&[
        "check",
        "tests/data/cassettes/vcrpy-anthropic-dropped-result.yaml",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr, "");
}

/// `turnsim drive` of two quiet test-client runs (no fault, no signal) plus `extra`
/// into a closed pipe; (exit code, stderr).
#[cfg(all(feature = "drive", feature = "test-client"))]
fn drive_into_a_closed_pipe(out: &std::path::Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args: Vec<std::ffi::OsString> = [
        "drive",
        "--client",
        "test-client",
        "--seeds",
        "0..2",
        "--no-signal",
        "1/1",
        "--no-fault",
        "1/1",
        "--tool-ms",
        "200",
        "--rerun",
        "0",
        "--timeout",
        "60",
    ]
    .iter()
    .chain(extra)
    .map(Into::into)
    .collect();
    args.push("--out".into());
    args.push(out.into());
    into_a_closed_pipe(&args)
}

#[cfg(all(feature = "drive", feature = "test-client"))]
#[test]
fn drive_with_a_closed_stdout_exits_quietly_with_the_runs_code_and_writes_every_run() {
    let out = crate::drive_support::temp_dir("closed-stdout");
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

#[cfg(all(feature = "drive", feature = "test-client"))]
#[test]
fn drive_json_with_a_closed_stdout_exits_quietly_with_the_runs_code() {
    let out = crate::drive_support::temp_dir("closed-stdout-json");
    let (code, stderr) = drive_into_a_closed_pipe(&out, &["--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    // With --json the header and the run reports go to stderr; only the summary to
    // the closed stdout.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.starts_with("turnsim drive: test-client"), "{stderr}");
    assert!(out.join("summary.json").is_file());
}
