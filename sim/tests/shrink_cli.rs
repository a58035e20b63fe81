//! `turnsim shrink` through the binary: with stderr not a terminal there is no
//! progress line, and the same input gives the same bytes (stdout and file) every
//! time; a file that now fails otherwise than it says is told so, class and all.

use std::path::{Path, PathBuf};
use std::process::Command;

use turnsim::{Expectation, load_scenario, save_scenario};

/// Exit code, stdout, stderr; stderr is a pipe here, never a terminal.
fn turnsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .output()
        .expect("the turnsim binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("shrink-cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory is created");
    dir
}

fn canary(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/canary-{name}.json"))
}

#[test]
fn shrinking_with_stderr_not_a_terminal_prints_no_progress_and_the_same_bytes_twice() {
    let dir = scratch("twice");
    let file = dir.join("marker.json");
    std::fs::copy(canary("marker_twice"), &file).expect("the canary is copied");
    let path = file.to_str().expect("a utf-8 path");
    let min = turnsim::cli::min_path(&file);

    let (code, first, stderr) = turnsim(&["shrink", path]);
    assert_eq!(code, 0, "{first}{stderr}");
    assert_eq!(stderr, "");
    assert!(!first.contains('\r'), "{first:?}");
    let first_file = std::fs::read(&min).expect("the shrunk file is written");

    let (code, second, stderr) = turnsim(&["shrink", path]);
    assert_eq!(code, 0, "{second}{stderr}");
    assert_eq!(stderr, "");
    assert_eq!(first, second);
    assert_eq!(first_file, std::fs::read(&min).expect("the shrunk file"));
    // The story and the steps as lines, not the scenario's JSON with the trace on one
    // escaped line.
    assert!(
        !first.contains("\"format\": \"turnsim-scenario\""),
        "{first}"
    );
    assert!(first.contains("\nmarker_once at step "), "{first}");
    assert!(first.contains("\nlast steps:\n  [step "), "{first}");
}

#[test]
fn a_file_that_now_fails_in_another_class_is_told_so_and_shrinks_what_it_does() {
    let dir = scratch("class");
    let file = dir.join("orphans.json");
    let mut scenario = load_scenario(&canary("cancel_orphans_tool_use")).expect("loads");
    // The file claims a liveness failure; the run fails `pairing`, a correctness one.
    scenario.expect = Expectation::Fail {
        invariant: "liveness".parse().expect("a known invariant"),
        step: 3,
    };
    save_scenario(&file, &scenario).expect("the edited canary is written");

    let (code, stdout, stderr) = turnsim(&["shrink", file.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let min = turnsim::cli::min_path(&file);
    let shrunk = load_scenario(&min).expect("the shrunk file loads");
    let Expectation::Fail { invariant, step } = shrunk.expect else {
        panic!("a shrunk scenario expects a failure");
    };
    assert_eq!(invariant.to_string(), "pairing");
    let note = format!(
        "note: the input file expects liveness at step 3 but now fails with pairing (the \
         failure changed class: a correctness failure, not a liveness failure); shrinking \
         kept pairing, failing at step {step}\n"
    );
    assert!(stdout.contains(&note), "{note:?} missing from:\n{stdout}");

    let (code, replay, _) = turnsim(&["replay", min.to_str().expect("utf-8")]);
    assert_eq!(code, 1, "{replay}");
    assert!(
        replay.contains(&format!("reproduced: pairing at step {step}")),
        "{replay}"
    );
}
