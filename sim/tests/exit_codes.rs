//! One exit-code table for every subcommand: each code is produced by the situation
//! the table names, through the binary where the binary can reach it, and `turnsim
//! --help` prints the table.

use crate::flawed_support;

use flawed_support::{Factory, Flaw};
use std::path::{Path, PathBuf};
use std::process::Command;
use turnsim::exit::{Exit, table};
use turnsim::testing::world::FailureClass;
use turnsim::{Batch, check_determinism, run_batch, run_seed};

fn turnsim_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_turnsim"));
    cmd.args(args)
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the turnsim binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn turnsim(args: &[&str]) -> (i32, String, String) {
    turnsim_env(args, &[])
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .display()
        .to_string()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("exit-codes-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn help_prints_the_one_table_with_every_code() {
    let (code, stdout, _) = turnsim(&["--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains(&table()), "{stdout}");
    for e in Exit::ALL {
        assert!(
            stdout.contains(&format!("  {}  {}\n", e.code(), e.meaning())),
            "{e:?}"
        );
    }
}

#[test]
fn exit_0_a_passing_run_and_options_of_a_hex_seed() {
    let out = scratch("pass").join("not-made-yet");
    let (code, stdout, stderr) = turnsim(&["run", "--seeds", "0..3", "--quiet", "--out", s(&out)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("seeds        3 run, 0 failed\n"),
        "{stdout}"
    );
    assert!(
        !out.exists(),
        "a run that writes nothing leaves no --out behind"
    );
    let (code, hex, _) = turnsim(&["options", "0x10"]);
    assert_eq!(code, 0);
    assert_eq!(hex, turnsim(&["options", "16"]).1);
    assert!(hex.contains("options (seed 16)"), "{hex}");
}

#[test]
fn exit_1_a_canary_replayed_but_never_7_for_a_recording_whose_verdicts_differ() {
    let (code, stdout, _) = turnsim(&["replay", &repo("scenarios/canary-marker_twice.json")]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("reproduced: marker_once"), "{stdout}");

    // `check DIR` judges a recording again; stored verdicts that disagree with the
    // judge's are information (the judge decides, the file only records), never the
    // replay mismatch code (7).
    let dir = scratch("recording");
    let record = r#"{"format": "turnsim-serve-record", "version": 1, "index": 0,
      "method": "POST", "target": "/v1/messages", "headers": {},
      "body": {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
      "answer": {"status": 200, "stream": false, "played": "generated", "outcome": "complete"},
      "verdict": {"request": 0, "conversation": "c0", "conversation_request": 0, "notes": [],
        "violations": [{"rule": "pairing", "kind": "planted", "detail": "d", "excerpt": ""}]}}"#;
    std::fs::write(dir.join("000000.json"), record).expect("writes");
    let (code, stdout, stderr) = turnsim(&["check", s(&dir)]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "info recording/verdict_changed: request #0: the recording says 1 violation(s), judged again 0"
        ),
        "{stdout}"
    );
}

#[test]
fn exit_2_usage_errors_of_run_shrink_and_check() {
    let (code, _, stderr) = turnsim_env(&["run", "--seeds", "0..5"], &[("TURNSIM_SEED", "3")]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "turnsim run: TURNSIM_SEED and --seeds both name seeds; give one of them\n"
    );
    let (code, _, stderr) = turnsim(&["run", "--seeds", "0..5", "--trace"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "turnsim run: --trace prints one run step by step; give one seed (--seeds N or \
         TURNSIM_SEED=N)\n"
    );
    let (code, _, stderr) = turnsim(&["shrink", &repo("scenarios/invariant-pairing.json")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("nothing to shrink"), "{stderr}");
    let one = repo("scenarios/invariant-pairing.json");
    assert_eq!(turnsim(&["check", "--prefix", &one]).0, 2);
    assert_eq!(turnsim(&["options", "0..4"]).0, 2);
}

#[test]
fn a_single_seed_with_trace_prints_its_steps() {
    let out = scratch("trace");
    let (code, stdout, _) = turnsim(&["run", "--seeds", "3", "--trace", "--out", s(&out)]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("seed 3: "), "{stdout}");
    assert!(stdout.ends_with("PASS\n"), "{stdout}");
}

/// The code `turnsim run` exits with over `seeds`: the class of the lowest failure.
fn run_code(f: &Factory<Flaw>, seeds: std::ops::Range<u64>) -> Exit {
    let (summary, _) = run_batch(&Batch {
        factory: f,
        seeds: seeds.collect(),
        jobs: 1,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("runs");
    Exit::of_class(summary.first_failure_class())
}

#[test]
fn exit_3_4_and_5_liveness_panic_and_nondeterminism() {
    assert_eq!(run_code(&Factory(Flaw::IgnoresCancel), 0..500).code(), 3);
    assert_eq!(run_code(&Factory(Flaw::Panics), 0..200).code(), 4);
    let f = Factory(Flaw::Nondeterministic);
    let v = check_determinism(&f, &run_seed(&f, 5, false)).expect("two runs differ");
    assert_eq!(
        Exit::of_class(Some(FailureClass::of(v.invariant))).code(),
        5
    );
}

#[test]
fn exit_6_an_unwritable_out_before_the_run_and_an_unreadable_input() {
    let dir = scratch("unwritable");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").expect("writes");
    let out = file.join("failures");
    let (code, stdout, stderr) = turnsim(&["run", "--seeds", "0..400000", "--out", s(&out)]);
    assert_eq!(code, 6, "{stdout}{stderr}");
    assert_eq!(stdout, "", "nothing ran");
    assert!(
        stderr.starts_with(&format!(
            "turnsim run: --out {}: cannot write there: ",
            out.display()
        )),
        "{stderr}"
    );
    let (code, _, stderr) = turnsim(&["check", s(&file)]);
    assert_eq!(code, 6);
    assert_eq!(stderr.lines().count(), 1, "printed once: {stderr}");
    let (code, _, _) = turnsim(&["replay", s(&dir.join("missing.json"))]);
    assert_eq!(code, 6);
}

#[test]
fn exit_7_a_replay_that_does_not_do_what_its_file_expects() {
    let good = std::fs::read_to_string(repo("scenarios/invariant-pairing.json")).expect("reads");
    let bad = good.replacen(
        "\"expect\": {\"outcome\": \"pass\"}",
        "\"expect\": {\"outcome\": \"fail\", \"invariant\": \"pairing\", \"step\": 3}",
        1,
    );
    assert_ne!(good, bad);
    let p = scratch("mismatch").join("expects-a-failure.json");
    std::fs::write(&p, bad).expect("writes");
    let (code, stdout, _) = turnsim(&["replay", s(&p)]);
    assert_eq!(code, 7, "{stdout}");
    assert!(
        stdout.contains("MISMATCH: expected pairing at step 3, got a pass"),
        "{stdout}"
    );
}

#[cfg(feature = "drive")]
#[test]
fn exit_8_a_client_that_is_not_installed() {
    let out = scratch("drive");
    let (code, _, stderr) = turnsim(&[
        "drive",
        "--client",
        "custom",
        "--out",
        s(&out),
        "--",
        "/nonexistent/turnsim-client",
        "{prompt}",
    ]);
    assert_eq!(code, 8, "{stderr}");
    assert_eq!(
        stderr,
        "turnsim drive: client custom: \"/nonexistent/turnsim-client\" is not installed or not \
         on PATH\n"
    );
}

#[test]
fn argument_help_names_canaries_and_describes_every_argument() {
    let (_, run, _) = turnsim(&["run", "--help"]);
    for name in turnsim::cli::canary_names() {
        assert!(run.contains(name), "{name} missing from:\n{run}");
    }
    assert!(run.contains("--max-failures"), "{run}");
    let (_, replay, _) = turnsim(&["replay", "--help"]);
    assert!(replay.contains("The scenario file"), "{replay}");
    let (_, shrink, _) = turnsim(&["shrink", "--help"]);
    assert!(shrink.contains("A failing scenario file"), "{shrink}");
    let (_, options, _) = turnsim(&["options", "--help"]);
    assert!(options.contains("decimal or 0x hex"), "{options}");
}
