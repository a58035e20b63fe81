//! `turnsim run`, `replay` and `check` whose stdout is closed (`… | head -1`) do not
//! panic ("failed printing to stdout: Broken pipe", exit 101 before): the printing
//! stops, the work goes on, and the exit code is the verdict's. The pipe's read end
//! is closed before the command starts, so its first write fails every time.

use std::process::{Command, Stdio};

/// `turnsim ARGS` with a stdout nobody reads; (exit code, stderr).
fn into_a_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
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
