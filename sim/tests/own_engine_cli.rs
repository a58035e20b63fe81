//! A user's crate turned into a full turnsim CLI by one call: the `own_engine`
//! template (sim/examples/own_engine.rs, `turnsim::cli::App`) is built as its own
//! binary, which runs seeds on its engine, finds the planted bug, writes a scenario
//! naming its engine, and replays and shrinks it, every printed command naming that
//! binary.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The template's binary, built (or brought up to date) for this test's profile:
/// `cargo test --test all` and nextest build no examples. Built with the workspace's
/// features, the set the README's test command compiled the library with: `-p turnsim`
/// alone would compile the whole library again for its own feature set (minutes).
fn own_engine() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps")
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-q", "--workspace", "--example", "own_engine"]);
    if profile_dir.ends_with("release") {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("cargo runs");
    assert!(status.success(), "building the own_engine example failed");
    profile_dir.join("examples").join("own_engine")
}

fn run(bin: &Path, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT")
        .output()
        .expect("the binary runs");
    (
        out.status.code().expect("an exit code, not a signal"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).expect("the scenario was written");
    serde_json::from_str(&text).expect("a scenario is JSON")
}

#[test]
fn the_template_binary_runs_finds_replays_and_shrinks_its_own_engine() {
    let bin = own_engine();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("own_engine_cli");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");

    let (code, stdout, stderr) = run(&bin, &dir, &["run", "--seeds", "0..1000", "--quiet"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("turnsim summary (engine: my-engine)\n  seeds        1000 run, 0 failed"),
        "the default engine is the binary's own: {stdout}"
    );

    let (code, stdout, stderr) = run(
        &bin,
        &dir,
        &[
            "run",
            "--engine",
            "my-engine-planted",
            "--seeds",
            "0..1000",
            "--jobs",
            "1",
            "--stop-after",
            "1",
            "--quiet",
        ],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let found = std::fs::read_dir(dir.join("scenarios/failures"))
        .expect("failures were written under the default --out")
        .map(|e| e.expect("entry").path())
        .collect::<Vec<_>>();
    assert_eq!(found.len(), 1, "{found:?}");
    let file = found[0].strip_prefix(&dir).expect("relative").to_path_buf();
    let name = file.to_str().expect("utf-8");
    let scenario = read_json(&dir.join(&file));
    assert_eq!(scenario["engine"], "my-engine-planted");
    assert_eq!(scenario["expect"]["invariant"], "stale_noop");
    assert_eq!(scenario.get("engine_process"), None);
    let seed = scenario["seed"].as_u64().expect("a seed");
    assert!(
        stdout.contains(&format!("replay:   own_engine replay {name}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "   or:    TURNSIM_SEED={seed} own_engine run --engine my-engine-planted --trace\n"
        )),
        "{stdout}"
    );

    let (code, stdout, stderr) = run(&bin, &dir, &["replay", name]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let digest = scenario["trace_digest"].as_str().expect("pinned digest");
    assert!(
        stdout.contains(&format!("  trace digest {digest}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("reproduced: stale_noop at step "),
        "{stdout}"
    );

    let (code, stdout, stderr) = run(&bin, &dir, &["shrink", name]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let min = turnsim::cli::min_path(&file);
    let min_name = min.to_str().expect("utf-8");
    assert!(
        stdout.ends_with(&format!("replay: own_engine replay {min_name}\n")),
        "{stdout}"
    );
    let shrunk = read_json(&dir.join(&min));
    let count = |v: &Value| v["decisions"].as_array().map_or(0, Vec::len);
    assert!(count(&shrunk) < count(&scenario), "{stdout}");
    let (code, stdout, stderr) = run(&bin, &dir, &["replay", min_name]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("reproduced: stale_noop at step "),
        "{stdout}"
    );

    // A scenario naming an engine this binary lacks names the ones it has.
    let mut other = scenario.clone();
    other["engine"] = Value::from("their-engine");
    std::fs::write(dir.join("other.json"), other.to_string()).expect("write");
    let (code, stdout, stderr) = run(&bin, &dir, &["replay", "other.json"]);
    assert_eq!(code, 6, "{stdout}\n{stderr}");
    assert!(
        stderr.starts_with(
            "other.json: field `engine`: unknown engine \"their-engine\"; this binary knows: \
             my-engine, my-engine-planted, reference"
        ),
        "{stderr}"
    );

    let (code, stdout, _) = run(&bin, &dir, &["options", "7"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("options (seed 7):\n"), "{stdout}");
}
