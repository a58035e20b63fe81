//! `turnsim drive` refuses a client whose software is missing before any run, with
//! exit 8 and what to install: a Python client whose interpreter cannot import its SDK
//! is refused as not installed, naming the interpreter and the `pip install` into it,
//! and no run is judged (before, it was run and its `ModuleNotFoundError` reported as
//! client findings, exit 1).
//!
//! The interpreter is a virtual environment made with `--without-pip` and put first
//! on `PATH`: it has the standard library only, so no SDK can import, whatever the
//! machine's own `python3` has. No network.

use crate::drive_support::temp_dir;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh virtual environment with nothing installed; its `bin` directory.
fn bare_venv(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&dir)
        .output()
        .expect("python3 runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    dir.join("bin")
}

/// `turnsim drive --client CLIENT --seed 0 --runs 1 --out OUT` with `bin` first on
/// `PATH`; (exit code, stdout, stderr).
fn drive_with(bin: &Path, client: &str, out: &Path) -> (Option<i32>, String, String) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let o = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["drive", "--client", client, "--seed", "0", "--runs", "1"])
        .arg("--out")
        .arg(out)
        .env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .output()
        .expect("turnsim runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_python_client_without_its_sdk_is_refused_as_not_installed_with_exit_8() {
    let bin = bare_venv("no-sdk");
    let out = temp_dir("no-sdk-out");
    let (code, stdout, stderr) = drive_with(&bin, "python-sdk", &out);
    let python = bin.join("python3").display().to_string();
    assert_eq!(code, Some(8), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "turnsim drive: client python-sdk: \"python3\" ({python}) cannot import anthropic \
             (ModuleNotFoundError: No module named 'anthropic'); install it into that \
             interpreter: `{python} -m pip install anthropic`, or put a python3 that has it \
             first on PATH (the client runs with a HOME of its own, so a `pip install \
             --user` package is not seen)\n"
        )
    );
    // Refused before any run: no header, no report, no run directory.
    assert_eq!(stdout, "");
    assert!(!out.exists(), "{}", out.display());
}

#[test]
fn every_python_client_without_its_sdk_is_refused_naming_its_module_and_package() {
    let bin = bare_venv("no-sdks");
    let python = bin.join("python3").display().to_string();
    for (client, module, package) in [
        ("pydantic-ai", "pydantic_ai", "pydantic-ai"),
        ("claude-agent-sdk", "claude_agent_sdk", "claude-agent-sdk"),
        ("openai-agents", "openai", "openai-agents"),
        ("openai-chat", "openai", "openai"),
    ] {
        let out = temp_dir("no-sdks-out");
        let (code, stdout, stderr) = drive_with(&bin, client, &out);
        assert_eq!(code, Some(8), "{client}: {stderr}");
        let head = format!(
            "turnsim drive: client {client}: \"python3\" ({python}) cannot import {module} \
             (ModuleNotFoundError: No module named '{module}'); install it into that \
             interpreter: `{python} -m pip install {package}`, "
        );
        assert!(stderr.starts_with(&head), "{client}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{client}: {stderr}");
        assert_eq!(stdout, "", "{client}");
        assert!(!out.exists(), "{client}: {}", out.display());
    }
}
