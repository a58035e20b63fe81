//! `turnsim check` judges Codex CLI rollout files: real rollouts of Codex 0.171.0
//! (`sim/tests/data/openai/`), read with the Responses item reader; the orphaned call
//! a SIGTERM leaves is information with its line, and a rollout that cannot be read is
//! an error, never "clean".

use std::path::PathBuf;
use turnsim::check::Severity;
use turnsim::check::check_file;

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/openai")).join(name)
}

#[test]
fn a_clean_codex_tool_turn_rollout_is_judged_clean() {
    let r = check_file(&data("codex-0171-rollout-toolcall.jsonl"), None).expect("reads");
    assert_eq!(r.format, "codex");
    assert_eq!(r.stat("response_items"), 7);
    assert_eq!(r.findings.violations, 0);
    assert_eq!(r.findings.infos, 0);
}

#[test]
fn the_call_a_sigterm_left_without_output_is_information_with_its_line() {
    let r = check_file(&data("codex-0171-rollout-sigterm-then-resume.jsonl"), None).expect("reads");
    assert_eq!(r.findings.violations, 0);
    let f = &r.findings.kept[0];
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(
        (f.check, f.kind.as_str()),
        ("pairing", "missing_tool_result")
    );
    assert_eq!(f.place.line, Some(10), "the function_call's line");
    assert!(f.excerpt.contains("exec_command"), "{}", f.excerpt);
    assert!(
        f.detail.contains("synthesised \"aborted\" output"),
        "{}",
        f.detail
    );
}

#[test]
fn a_rollout_item_that_is_not_a_valid_item_is_an_error_naming_its_line() {
    let dir = std::env::temp_dir().join(format!("turnsim-check-codex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rollout.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"output\":\"x\"}}\n",
    )
    .unwrap();
    let err = check_file(&path, None).expect_err("unreadable");
    assert_eq!(err.line, Some(2), "{err:?}");
    assert!(err.message.contains("call_id"), "{err:?}");
}

#[test]
fn a_recorded_codex_responses_request_is_judged_and_an_orphaned_call_in_one_is_a_violation() {
    let r = check_file(&data("codex-0171-followup-after-tool.request.json"), None).expect("reads");
    assert_eq!(r.format, "openai-responses");
    assert_eq!(r.findings.violations, 0, "{:?}", r.findings.kept);
    let text =
        std::fs::read_to_string(data("codex-0171-followup-after-tool.request.json")).unwrap();
    let mut body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let input = body["input"].as_array_mut().unwrap();
    input.retain(|i| i["type"] != "function_call_output");
    input.push(serde_json::json!({"type": "message", "role": "user", "content": "next"}));
    let dir = std::env::temp_dir().join(format!("turnsim-check-responses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("orphan.json");
    std::fs::write(&path, body.to_string()).unwrap();
    let r = check_file(&path, None).expect("reads");
    assert_eq!(r.findings.violations, 1, "{:?}", r.findings.kept);
    assert_eq!(r.findings.kept[0].check, "pairing");
}

#[test]
fn a_request_continuing_a_previous_response_is_not_judged_on_what_it_cannot_see() {
    let r = check_file(
        &data("agents-0240-responses-previous_response_id.request.json"),
        None,
    )
    .expect("reads");
    assert_eq!(r.findings.violations, 0, "{:?}", r.findings.kept);
    assert!(
        r.findings
            .kept
            .iter()
            .any(|f| f.kind == "previous_response_id")
    );
}

#[test]
fn a_codex_goal_rollout_with_outputs_that_answer_no_call_is_read_and_judged_clean() {
    // Codex 0.171.0 driven offline: `create_goal`, then `exec resume --last`. Lines 16
    // and 28 are `function_call_output`s with `name`/`namespace` and no `call_id` (its
    // goal context), a shape the published Responses schema allows.
    let r = check_file(&data("codex-0171-rollout-goal-then-resume.jsonl"), None).expect("reads");
    assert_eq!(r.format, "codex");
    assert_eq!(r.stat("response_items"), 14);
    assert_eq!(r.findings.violations, 0, "{:?}", r.findings.kept);
    assert_eq!(r.findings.infos, 0, "{:?}", r.findings.kept);
}

#[test]
fn the_resumed_request_carrying_codex_goal_context_is_judged_clean() {
    let r = check_file(
        &data("codex-0171-resume-with-goal-objective.request.json"),
        None,
    )
    .expect("reads");
    assert_eq!(r.format, "openai-responses");
    assert_eq!(r.stat("input_items"), 13);
    assert_eq!(r.findings.violations, 0, "{:?}", r.findings.kept);
}

#[test]
fn a_codex_reasoning_item_without_id_is_judged_and_the_call_a_kill_left_open_is_information() {
    // Hand-made in the shape older Codex versions write: no response item carries an
    // `id` (Codex skips serializing it), and the second call (line 10) was left without
    // an output by a kill, then the session resumed with a new user message.
    let r = check_file(
        &data("handmade-codex-idless-rollout-kill-resume.jsonl"),
        None,
    )
    .expect("reads");
    assert_eq!(r.format, "codex");
    assert_eq!(r.stat("response_items"), 10);
    assert_eq!(r.stat("other_lines"), 2);
    assert_eq!(r.findings.violations, 0, "{:?}", r.findings.kept);
    assert_eq!(r.findings.infos, 1, "{:?}", r.findings.kept);
    let f = &r.findings.kept[0];
    assert_eq!(
        (f.check, f.kind.as_str(), f.place.line),
        ("pairing", "missing_tool_result", Some(10))
    );
}
