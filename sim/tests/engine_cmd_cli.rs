//! `turnsim run --engine-cmd`, through the built binary: the Python and Node example
//! engines pass, their planted bugs are found and saved, and `replay` and `shrink`
//! start the recorded command again and refuse a scenario whose command now names
//! another engine. Skipped, with a line on stderr, when `python3` or `node` is absent.

use crate::stdio_support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use stdio_support::{interpreter, root};

/// Runs the `turnsim` binary from the workspace root (the example commands are
/// relative to it); returns the exit code, stdout and stderr.
fn turnsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .current_dir(root())
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT")
        .output()
        .expect("turnsim runs");
    (
        out.status.code().expect("an exit code, not a signal"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("engine_cmd_cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).expect("the scenario was written");
    serde_json::from_str(&text).expect("a scenario is JSON")
}

/// The one `*.json` file in `dir`.
fn only_scenario(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the out dir exists")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn passes_2000_seeds(command: &str, name: &str) {
    let out = scratch(name);
    let (code, stdout, stderr) = turnsim(&[
        "run",
        "--engine-cmd",
        command,
        "--seeds",
        "0..2000",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("seeds        2000 run, 0 failed"),
        "{stdout}"
    );
}

/// Finds the planted bug, then replays and shrinks the scenario `run` wrote.
fn planted_bug_is_found_replayed_and_shrunk(command: &str, engine: &str, name: &str) {
    let out = scratch(name);
    let bug = "TURNSIM_EXAMPLE_BUG=orphan_on_cancel";
    let (code, stdout, stderr) = turnsim(&[
        "run",
        "--engine-cmd",
        command,
        "--engine-env",
        bug,
        "--seeds",
        "0..2000",
        "--jobs",
        "1",
        "--stop-after",
        "1",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let file = only_scenario(&out);
    let scenario = read_json(&file);
    assert_eq!(scenario["engine"], engine);
    assert_eq!(scenario["expect"]["invariant"], "pairing");
    assert_eq!(
        scenario["engine_process"],
        serde_json::json!({"command": command, "env": {"TURNSIM_EXAMPLE_BUG": "orphan_on_cancel"}})
    );
    let seed = scenario["seed"].as_u64().expect("a seed");
    assert!(
        stdout.contains(&format!("replay:   turnsim replay {}\n", s(&file))),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "   or:    TURNSIM_SEED={seed} turnsim run --engine-cmd '{command}' \
             --engine-env {bug} --trace\n"
        )),
        "{stdout}"
    );

    let (code, stdout, stderr) = turnsim(&["replay", s(&file)]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let digest = scenario["trace_digest"].as_str().expect("a pinned digest");
    assert!(
        stdout.contains(&format!("  trace digest {digest}\n")),
        "{stdout}"
    );
    assert!(stdout.contains("reproduced: pairing at step "), "{stdout}");

    let (code, stdout, stderr) = turnsim(&["shrink", s(&file), "--budget", "300"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let min = turnsim::cli::min_path(&file);
    let shrunk = read_json(&min);
    assert_eq!(shrunk["engine_process"], scenario["engine_process"]);
    let count = |v: &Value| v["decisions"].as_array().map_or(0, Vec::len);
    assert!(
        count(&shrunk) < count(&scenario),
        "{} -> {}",
        count(&scenario),
        count(&shrunk)
    );
    let (code, stdout, stderr) = turnsim(&["replay", s(&min)]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.contains("reproduced: pairing at step "), "{stdout}");

    // The same command under another recorded name is refused, not replayed.
    let mut other = scenario.clone();
    other["engine"] = Value::from("someone-else");
    let renamed = out.join("renamed.json");
    std::fs::write(&renamed, other.to_string()).expect("write");
    let (code, stdout, stderr) = turnsim(&["replay", s(&renamed)]);
    assert_eq!(code, 7, "{stdout}\n{stderr}");
    assert_eq!(
        stderr,
        format!(
            "{}: the recorded command {command:?} now says it is engine {engine:?}, but the \
             scenario was recorded against \"someone-else\"; refusing to replay another \
             engine's run\n",
            s(&renamed)
        )
    );
}

fn python_command(test: &str) -> Option<String> {
    interpreter("python3", test).map(|p| format!("{p} adapters/python/example_engine.py"))
}

fn node_command(test: &str) -> Option<String> {
    interpreter("node", test).map(|n| format!("{n} adapters/node/example_engine.mjs"))
}

#[test]
fn python_engine_cmd_passes_2000_seeds_or_skips_visibly() {
    if let Some(cmd) = python_command("python_engine_cmd_passes_2000_seeds_or_skips_visibly") {
        passes_2000_seeds(&cmd, "python-pass");
    }
}

#[test]
fn python_planted_bug_is_found_replayed_and_shrunk_through_the_cli_or_skips_visibly() {
    let test = "python_planted_bug_is_found_replayed_and_shrunk_through_the_cli_or_skips_visibly";
    if let Some(cmd) = python_command(test) {
        planted_bug_is_found_replayed_and_shrunk(
            &cmd,
            "python-example+orphan_on_cancel",
            "python-bug",
        );
    }
}

#[test]
fn node_engine_cmd_passes_2000_seeds_or_skips_visibly() {
    if let Some(cmd) = node_command("node_engine_cmd_passes_2000_seeds_or_skips_visibly") {
        passes_2000_seeds(&cmd, "node-pass");
    }
}

#[test]
fn node_planted_bug_is_found_replayed_and_shrunk_through_the_cli_or_skips_visibly() {
    let test = "node_planted_bug_is_found_replayed_and_shrunk_through_the_cli_or_skips_visibly";
    if let Some(cmd) = node_command(test) {
        planted_bug_is_found_replayed_and_shrunk(&cmd, "node-example+orphan_on_cancel", "node-bug");
    }
}

#[test]
fn a_command_that_fails_its_hello_is_a_usage_error_before_any_seed() {
    let out = scratch("no-hello");
    let (code, stdout, stderr) = turnsim(&[
        "run",
        "--engine-cmd",
        "true",
        "--seeds",
        "0..10",
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("turnsim run: --engine-cmd \"true\" is not a working engine: "),
        "{stderr}"
    );
}

#[test]
fn engine_cmd_conflicts_with_engine_and_its_flags_need_it() {
    for args in [
        &["run", "--engine-cmd", "x", "--engine", "reference"][..],
        &["run", "--engine-env", "K=V"][..],
        &["run", "--engine-timeout-ms", "100"][..],
        &["run", "--engine-fresh-processes"][..],
        &["run", "--engine-cmd", "x", "--engine-env", "novalue"][..],
    ] {
        let (code, stdout, stderr) = turnsim(args);
        assert_eq!(code, 2, "{args:?}: {stdout}\n{stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn replaying_a_scenario_whose_command_is_missing_is_an_environment_error() {
    let dir = scratch("missing-command");
    let mut scenario = read_json(&root().join("scenarios/fault-cancel.json"));
    scenario["engine"] = Value::from("python-example");
    scenario["engine_process"] = serde_json::json!({"command": "turnsim-no-such-engine --x"});
    let file = dir.join("missing.json");
    std::fs::write(&file, scenario.to_string()).expect("write");
    let (code, stdout, stderr) = turnsim(&["replay", s(&file)]);
    assert_eq!(code, 8, "{stdout}\n{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "{}: field `engine_process`: --engine-cmd \"turnsim-no-such-engine --x\" is not a \
             working engine: ",
            s(&file)
        )),
        "{stderr}"
    );
    let (code, _, stderr) = turnsim(&["shrink", s(&file)]);
    assert_eq!(code, 8, "{stderr}");
}
