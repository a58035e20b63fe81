//! `turnsim run`'s judging flags through the binary: checkers listed with their kind,
//! selected by name, a profile read from a file, the run saying how it judged, and a
//! saved failure replaying with the same judging.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-judging-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn turnsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .env_remove("TURNSIM_SEED")
        .output()
        .expect("turnsim runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const OTHER_PROFILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/other_conventions.json"
);

#[test]
fn list_checks_prints_every_checker_with_its_kind() {
    let o = turnsim(&["run", "--list-checks"]);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<String> = text(&o.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        lines,
        [
            "pairing generic",
            "append_only generic",
            "history_stable generic",
            "marker_once convention",
            "note_exact convention",
            "at_most_once generic",
            "no_lost_observation generic",
            "stale_noop generic",
            "recovery_idempotent generic",
            "cache_breakpoints convention",
            "liveness generic",
            "interruption_recorded convention",
            "label_matches convention",
            "quiet_after_cancel generic",
            "shown_survives convention",
            "reply_never_fails generic",
            "model_ends_turn generic",
            "hostile_input generic",
            "logical_order generic",
            "thinking_intact generic",
            "prefix_stable generic",
            "durable_live generic",
            "twin_agrees generic",
            "prefix_reported convention",
            "model_words_exact generic",
            "tool_order convention",
            "directives_kept generic",
            "compaction_applied generic",
        ]
    );
}

#[test]
fn a_skipped_checker_is_named_and_not_counted() {
    let out = scratch("skip");
    let o = turnsim(&[
        "run",
        "--seeds",
        "0..30",
        "--jobs",
        "1",
        "--quiet",
        "--skip",
        "cache_breakpoints",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("conventions: reference\n"), "{stdout}");
    assert!(
        stdout.contains("checkers skipped: cache_breakpoints\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("marker_once (convention), note_exact (convention)"),
        "{stdout}"
    );
    assert!(!stdout.contains("  cache_breakpoints "), "{stdout}");
}

#[test]
fn bad_names_and_bad_profiles_stop_the_run_before_any_seed() {
    let o = turnsim(&["run", "--seeds", "0..3", "--checks", "pairng"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with(
            "turnsim run: --checks: \"pairng\" is not a checker that can be selected; the checkers are: pairing, "
        ),
        "{}",
        text(&o.stderr)
    );
    let o = turnsim(&[
        "run", "--seeds", "0..3", "--checks", "pairing", "--skip", "pairing",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "turnsim run: --checks/--skip leave no checker to run\n"
    );
    let missing = scratch("missing").join("nope.json");
    let o = turnsim(&[
        "run",
        "--seeds",
        "0..3",
        "--conventions",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(6));
    assert!(
        text(&o.stderr).contains("cannot read the conventions file"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_failure_found_under_another_profile_replays_under_it() {
    // The reference engine held to another engine's conventions fails on them, and
    // the saved scenario carries that profile, so its replay fails the same way.
    let out = scratch("profile");
    let o = turnsim(&[
        "run",
        "--seeds",
        "5",
        "--jobs",
        "1",
        "--quiet",
        "--max-failures",
        "1",
        "--conventions",
        OTHER_PROFILE,
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("conventions: other\n"), "{stdout}");
    let file = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a scenario was saved");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("\"judging\""), "{saved}");
    assert!(saved.contains("\"turnsim-conventions\""), "{saved}");
    // A replay that reproduces a failure exits with the failure's class.
    let replay = turnsim(&["replay", file.to_str().unwrap()]);
    let replayed = text(&replay.stdout);
    assert_eq!(
        replay.status.code(),
        Some(1),
        "{replayed}{}",
        text(&replay.stderr)
    );
    assert!(
        replayed.contains("reproduced: cache_breakpoints at step 1"),
        "{replayed}"
    );
    // Without its judging the same run passes: the profile is what failed it.
    let value: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let mut plain = value.clone();
    plain.as_object_mut().unwrap().remove("judging");
    let stripped = out.join("stripped.json");
    std::fs::write(&stripped, serde_json::to_string_pretty(&plain).unwrap()).unwrap();
    let replay = turnsim(&["replay", stripped.to_str().unwrap()]);
    assert_eq!(
        replay.status.code(),
        Some(7),
        "{}{}",
        text(&replay.stdout),
        text(&replay.stderr)
    );
}
