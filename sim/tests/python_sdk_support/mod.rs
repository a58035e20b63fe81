//! Which Python runs the SDK tests, and what happens when it lacks the SDK.
//!
//! Guarantee: an SDK test never passes without running. The tests are `#[ignore]`d,
//! so a plain `cargo test` lists them as ignored, with the reason, in its summary
//! instead of reporting a skip as `ok`; `--ignored` (or `--include-ignored`) runs
//! them. The interpreter is `$TURNSIM_PYTHON` (`.ci/run` exports its virtual
//! environment's), else `python3`. When the interpreter cannot import the SDK, a
//! named interpreter is a failure (CI must not skip), and the default `python3` is a
//! `SKIPPED:` line on stderr: the caller asked for the test on a machine without the
//! SDK, and is told so.

use std::io::Write;
use std::process::Command;

/// The variable that names the interpreter.
pub const PYTHON_ENV: &str = "TURNSIM_PYTHON";

/// The interpreter the SDK tests run: `$TURNSIM_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var(PYTHON_ENV)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".to_owned())
}

/// Why `python -c "import {module}"` fails, or `None` when it imports.
fn import_error(python: &str, module: &str) -> Option<String> {
    match Command::new(python)
        .args(["-c", &format!("import {module}")])
        .output()
    {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("import failed")
                .trim()
                .to_owned(),
        ),
        Err(e) => Some(format!("cannot start {python}: {e}")),
    }
}

/// The interpreter to run `test` with, when it can import `module`. Otherwise panics
/// if `$TURNSIM_PYTHON` named the interpreter, and prints `SKIPPED: …` to stderr and
/// returns `None` if it is the default `python3`.
pub fn interpreter_with(module: &str, test: &str) -> Option<String> {
    let python = python();
    // An interpreter that imports the module is the one to run (not a skip).
    let Some(why) = import_error(&python, module) else {
        return Some(python);
    };
    if std::env::var_os(PYTHON_ENV).is_some_and(|p| !p.is_empty()) {
        panic!(
            "{PYTHON_ENV}={python} cannot import {module} ({why}); this test must run \
             here: install it with `{python} -m pip install {module}`"
        );
    }
    // Written to the process's stderr directly: the test harness captures `eprintln!`
    // of a passing test, and a skip that nobody sees is the silent pass this avoids.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {test}: python3 cannot import {module} ({why}); install it \
         (`python3 -m pip install {module}`) or set {PYTHON_ENV} to an interpreter \
         that has it"
    );
    None
}

/// Runs an SDK loop `script` with `python`, its arguments `args`, and the SDK's own
/// variables `unset` removed (so only the arguments point it at turnsim); asserts
/// that it succeeded and returns the one-line JSON summary it prints.
#[allow(dead_code)] // the serve tests run a loop script; drive_python_sdk does not
pub fn run_loop(python: &str, script: &str, args: &[&str], unset: &[&str]) -> serde_json::Value {
    let mut command = Command::new(python);
    command.arg(script).args(args);
    for name in unset {
        command.env_remove(name);
    }
    let out = command.output().expect("the Python interpreter runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the SDK loop failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).expect("summary line")
}
