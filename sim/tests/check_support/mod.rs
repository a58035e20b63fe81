//! Shared by the tests that run the built `turnsim check`: one way to start it and
//! read what it said.
//!
//! Guarantee: every such test sees the exit code, stdout and stderr of the real
//! binary, the same way (an exit by signal reads as -1), so their assertions on
//! codes and messages are about the command users run.

use std::ffi::OsStr;
use std::process::Command;

/// Runs `turnsim check ARGS`: (exit code, stdout, stderr).
pub fn check<I, S>(args: I) -> (i32, String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .arg("check")
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
