//! Bad flags and bad scenario files get clear errors and distinct exit codes, never a
//! panic.

use std::path::PathBuf;
use std::process::Command;

fn turnsim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT")
        .output()
        .expect("the turnsim binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn scratch_file(name: &str, contents: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-errors");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let p = dir.join(name);
    std::fs::write(&p, contents).expect("scratch file");
    p
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let (code, text) = turnsim(args);
    assert_eq!(code, 2, "{args:?} -> {text}");
    assert!(
        text.contains(needle),
        "{args:?}: expected {needle:?} in:\n{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
}

#[test]
fn a_malformed_seed_range_says_what_is_allowed() {
    assert_usage_error(
        &["run", "--seeds", "x..y"],
        "expected A..B, A..=B or a single seed",
    );
}

#[test]
fn an_empty_seed_range_is_refused() {
    assert_usage_error(&["run", "--seeds", "5..5"], "--seeds");
}

#[test]
fn a_shard_index_past_its_count_is_refused() {
    assert_usage_error(&["run", "--shard", "3/2"], "3/2");
}

#[test]
fn a_duration_without_a_unit_we_know_is_refused() {
    assert_usage_error(&["run", "--time", "5 parsecs"], "--time");
}

#[test]
fn an_unknown_engine_lists_the_known_ones() {
    assert_usage_error(
        &["run", "--engine", "bogus"],
        "unknown engine \"bogus\"; this binary knows: reference, cancel_orphans_tool_use",
    );
}

#[test]
fn zero_jobs_is_refused() {
    assert_usage_error(
        &["run", "--seeds", "0..2", "--jobs", "0", "--quiet"],
        "--jobs: expected at least 1",
    );
}

#[test]
fn a_bad_turnsim_seed_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["run"])
        .env("TURNSIM_SEED", "seven")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TURNSIM_SEED: expected one seed"));
}

#[test]
fn a_missing_scenario_file_is_exit_6_naming_the_file() {
    let (code, text) = turnsim(&["replay", "/nonexistent/turnsim/x.json"]);
    assert_eq!(code, 6, "{text}");
    assert!(text.contains("/nonexistent/turnsim/x.json"), "{text}");
}

#[test]
fn a_scenario_with_a_wrong_field_type_names_the_file_and_the_field() {
    let good = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/invariant-pairing.json"),
    )
    .expect("a committed scenario");
    let bad = good.replacen("\"turns\": ", "\"turns\": \"three\", \"was\": ", 1);
    let p = scratch_file("wrong-type.json", &bad);
    let (code, text) = turnsim(&["replay", p.to_str().expect("utf-8")]);
    assert_eq!(code, 6, "{text}");
    assert!(text.contains("wrong-type.json"), "{text}");
    assert!(text.contains("options.turns"), "{text}");
}

#[test]
fn a_scenario_of_another_version_says_which_versions_are_read() {
    let good = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/invariant-pairing.json"),
    )
    .expect("a committed scenario");
    let bad = good.replacen("\"version\": 1", "\"version\": 9", 1);
    let p = scratch_file("version-9.json", &bad);
    let (code, text) = turnsim(&["replay", p.to_str().expect("utf-8")]);
    assert_eq!(code, 6, "{text}");
    assert!(text.contains("version-9.json"), "{text}");
    assert!(text.contains('9'), "{text}");
}

#[test]
fn a_scenario_that_is_not_json_is_exit_6_with_a_position() {
    let p = scratch_file("binary.json", "\u{0}\u{1}garbage");
    let (code, text) = turnsim(&["replay", p.to_str().expect("utf-8")]);
    assert_eq!(code, 6, "{text}");
    assert!(text.contains("binary.json:1:"), "{text}");
}

#[test]
fn a_scenario_naming_an_unknown_engine_is_refused() {
    let good = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/invariant-pairing.json"),
    )
    .expect("a committed scenario");
    let bad = good.replacen("\"engine\": \"reference\"", "\"engine\": \"nope\"", 1);
    let p = scratch_file("engine.json", &bad);
    let (code, text) = turnsim(&["replay", p.to_str().expect("utf-8")]);
    assert_eq!(code, 6, "{text}");
    assert!(
        text.contains("field `engine`: unknown engine \"nope\""),
        "{text}"
    );
}

#[test]
fn shrinking_a_passing_scenario_is_a_usage_error_with_a_reason() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/invariant-pairing.json");
    let (code, text) = turnsim(&["shrink", p.to_str().expect("utf-8")]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("the scenario passes; there is nothing to shrink"),
        "{text}"
    );
}
