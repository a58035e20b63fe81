//! One judge: the same requests judged live by `turnsim serve`, judged again from its
//! `--record` folder, and judged from a go-vcr cassette of the same traffic give the
//! same findings; and the two false positives real clients met are gone (a corrected
//! retry after a 400; a resumed session that changes its prefix).

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;
use turnsim::check::Finding;
use turnsim::check::{Format, check_files, check_reader};
use turnsim::testing::serve::record::{Record, read_dir};
use turnsim::testing::serve::verdict::Verdict;

const LOOP: &str = r#"[
    {"kind": "reply", "tool_calls": [{"name": "bash"}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"},
    {"kind": "reply", "text": "Resumed.", "stop": "end_turn"},
    {"kind": "reply", "text": "Again.", "stop": "end_turn"}
]"#;

/// What is compared across the three paths.
type Seen = (
    String,
    String,
    String,
    Option<usize>,
    Option<usize>,
    Option<usize>,
    String,
);

fn seen<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Vec<Seen> {
    findings
        .into_iter()
        .map(|f| {
            (
                f.severity.as_str().to_owned(),
                f.check.to_owned(),
                f.kind.clone(),
                f.place.request,
                f.place.message,
                f.place.block,
                f.detail.clone(),
            )
        })
        .collect()
}

fn live(verdicts: &[Verdict]) -> Vec<Seen> {
    seen(verdicts.iter().flat_map(|v| {
        v.findings
            .iter()
            .zip(&v.repeated)
            .filter(|(_, r)| !**r)
            .map(|(f, _)| f)
    }))
}

/// A go-vcr cassette of the recorded requests: bodies, headers and status codes.
fn cassette(records: &[Record]) -> String {
    let interactions: Vec<Value> = records
        .iter()
        .map(|r| {
            let headers: BTreeMap<&str, Vec<&str>> = r
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), vec![v.as_str()]))
                .collect();
            json!({
                "id": r.index,
                "request": {
                    "url": format!("https://api.anthropic.com{}", r.target),
                    "method": r.method,
                    "headers": headers,
                    "body": r.body.to_string(),
                },
                // The reply the client received, as a JSON body, when it was whole.
                "response": {
                    "code": r.answer.status,
                    "body": r.answer.reply.as_ref().map_or(String::new(), |m| m.to_json()),
                },
            })
        })
        .collect();
    let doc = json!({"version": 2, "interactions": interactions});
    format!(
        "---\n{}",
        serde_norway::to_string(&doc).expect("serializes")
    )
}

/// The same traffic judged the three ways; returns the live findings after
/// asserting the other two equal them.
fn judged_three_ways(server: &turnsim::testing::serve::http::ServeHandle, rec: &Path) -> Vec<Seen> {
    let live = live(&server.server.verdicts());
    let records = read_dir(rec).expect("the recording reads");
    let from_recording = check_files(&[rec.to_path_buf()], None);
    assert!(
        from_recording.unreadable.is_empty(),
        "{:?}",
        from_recording.unreadable
    );
    let from_recording = seen(&from_recording.files[0].findings.kept);
    let from_cassette = check_reader(
        "traffic.yaml",
        Cursor::new(cassette(&records).into_bytes()),
        Some(Format::Vcr),
    )
    .expect("the cassette reads");
    let from_cassette = seen(&from_cassette.findings.kept);
    assert_eq!(from_recording, live, "recording vs live");
    assert_eq!(from_cassette, live, "cassette vs live");
    live
}

fn beta_headers(betas: &str) -> Vec<(&str, &str)> {
    vec![("anthropic-beta", betas)]
}

#[test]
fn a_corrected_retry_after_a_400_is_judged_against_the_last_accepted_request() {
    let rec = temp_dir("retry-400-record");
    let (server, _dir) = start_with(script(LOOP), "retry-400", |c| c.record = Some(rec.clone()));
    let mut messages = vec![json!({"role": "user", "content": "Run it."})];
    let raw = post(server.addr, &body(&messages, true));
    assert_eq!(raw.status, 200);
    let assistant = assistant_message(&raw, true);
    let results = run_tools(&assistant);
    messages.push(assistant);
    // The client first answers the call with words instead of its result: the API
    // refuses that with a 400.
    let mut broken = messages.clone();
    broken.push(json!({"role": "user", "content": "I could not run it."}));
    assert_eq!(post(server.addr, &body(&broken, true)).status, 400);
    // Then it retries correctly.
    messages.push(results);
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts[1].violations[0].rule, "pairing");
    assert!(verdicts[2].is_clean(), "{:?}", verdicts[2]);
    let found = judged_three_ways(&server, &rec);
    let kinds: Vec<(&str, &str, Option<usize>)> = found
        .iter()
        .map(|f| (f.0.as_str(), f.2.as_str(), f.3))
        .collect();
    assert_eq!(kinds, [("violation", "missing_tool_result", Some(1))]);
}

#[test]
fn a_resumed_session_is_a_prefix_change_with_its_causes_not_append_only() {
    let rec = temp_dir("resume-record");
    let (server, _dir) = start_with(script(LOOP), "resume", |c| c.record = Some(rec.clone()));
    let mut messages = vec![json!({"role": "user", "content": "Run it."})];
    let first_betas = "claude-code-20250219,context-1m-2025-08-07";
    let mut b = body(&messages, true);
    b["model"] = json!("claude-sonnet-4-5");
    let raw = post_with(server.addr, &b, &beta_headers(first_betas));
    let assistant = assistant_message(&raw, true);
    let results = run_tools(&assistant);
    messages.push(assistant);
    messages.push(results);
    let mut b = body(&messages, true);
    b["model"] = json!("claude-sonnet-4-5");
    let raw = post_with(server.addr, &b, &beta_headers(first_betas));
    assert_eq!(raw.status, 200);
    messages.push(assistant_message(&raw, true));
    // `claude --continue`: the same history and a new prompt, under a rewritten
    // system prompt and tool texts, another model name, one beta header fewer.
    messages.push(json!({"role": "user", "content": "Go on."}));
    let mut b = body(&messages, true);
    b["model"] = json!("claude-sonnet-4-5-20250929");
    b["system"][0]["text"] = json!("You are a test agent. Today is Tuesday.");
    b["tools"][0]["description"] = json!("Run a shell command (resumed)");
    let raw = post_with(server.addr, &b, &beta_headers("claude-code-20250219"));
    assert_eq!(raw.status, 200);
    let verdicts = server.server.verdicts();
    assert!(verdicts[2].is_clean(), "{:?}", verdicts[2].violations);
    assert_eq!(verdicts[2].conversation, verdicts[0].conversation);
    let found = judged_three_ways(&server, &rec);
    let kinds: Vec<(&str, &str, &str, Option<usize>)> = found
        .iter()
        .map(|f| (f.0.as_str(), f.1.as_str(), f.2.as_str(), f.3))
        .collect();
    assert_eq!(
        kinds,
        [
            ("info", "prefix_changed", "system_changed", Some(2)),
            ("info", "prefix_changed", "tools_changed", Some(2)),
            ("info", "prefix_changed", "model_changed", Some(2)),
            ("info", "prefix_changed", "betas_changed", Some(2)),
        ]
    );
    assert!(
        found[0].6.starts_with(
            "request 2: prefix changed between turns: `system` differs from request 1 at byte 45 of its JSON"
        ),
        "{}",
        found[0].6
    );
    assert_eq!(
        found[2].6,
        "request 2: prefix changed between turns: the model is claude-sonnet-4-5-20250929 (request 1: claude-sonnet-4-5)"
    );
    assert_eq!(
        found[3].6,
        "request 2: prefix changed between turns: beta flags changed from request 1: removed [context-1m-2025-08-07], added []"
    );
}

#[test]
fn a_rewritten_history_is_the_same_violation_live_from_a_recording_and_from_a_cassette() {
    let rec = temp_dir("rewrite-record");
    let (server, _dir) = start_with(script(LOOP), "rewrite-3", |c| c.record = Some(rec.clone()));
    let mut messages = vec![json!({"role": "user", "content": "Run it."})];
    let raw = post(server.addr, &body(&messages, true));
    let assistant = assistant_message(&raw, true);
    let results = run_tools(&assistant);
    messages.push(assistant);
    messages.push(results);
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    messages[1]["content"][0]["input"]["command"] = json!("echo rewritten");
    messages.push(json!({"role": "assistant", "content": "Done."}));
    messages.push(json!({"role": "user", "content": "[Request interrupted: do Y instead]"}));
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    let found = judged_three_ways(&server, &rec);
    let kinds: Vec<(&str, &str, Option<usize>, Option<usize>)> = found
        .iter()
        .map(|f| (f.1.as_str(), f.2.as_str(), f.3, f.4))
        .collect();
    assert_eq!(
        kinds,
        [
            ("marker_exact", "near_marker", Some(2), Some(4)),
            ("append_only", "message_changed", Some(2), Some(1)),
        ]
    );
}

/// Claude Code's `--continue` after an interrupted tool call: the call answered with an
/// error result and the client's note, a closing reply the client wrote, the new
/// prompt, under a rewritten system prompt.
fn resumed_after_an_interrupted_call(close_the_turn: bool) -> Vec<Seen> {
    let name = if close_the_turn { "closed" } else { "open" };
    let rec = temp_dir(&format!("interrupted-resume-{name}-record"));
    let (server, _dir) = start_with(script(LOOP), &format!("interrupted-{name}"), |c| {
        c.record = Some(rec.clone())
    });
    let mut messages = vec![json!({"role": "user", "content": "Run it."})];
    let raw = post(server.addr, &body(&messages, true));
    assert_eq!(raw.status, 200);
    let assistant = assistant_message(&raw, true);
    let id = assistant["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "tool_use"))
        .map(|b| b["id"].clone())
        .expect("the scripted reply calls a tool");
    messages.push(assistant);
    let mut answer = vec![json!({"type": "tool_result", "tool_use_id": id,
        "content": "The user doesn't want to proceed with this tool use.", "is_error": true})];
    answer.push(json!({"type": "text", "text": "[Request interrupted by user for tool use]"}));
    if close_the_turn {
        messages.push(json!({"role": "user", "content": answer}));
        messages.push(json!({"role": "assistant", "content": "No response requested."}));
        messages.push(json!({"role": "user", "content": "Go on."}));
    } else {
        answer.push(json!({"type": "text", "text": "Go on."}));
        messages.push(json!({"role": "user", "content": answer}));
    }
    let mut b = body(&messages, true);
    b["system"][0]["text"] = json!("You are a test agent (resumed).");
    assert_eq!(post(server.addr, &b).status, 200);
    judged_three_ways(&server, &rec)
}

#[test]
fn a_resume_that_closes_the_interrupted_turn_before_its_prompt_changes_the_prefix_between_turns() {
    let found = resumed_after_an_interrupted_call(true);
    let kinds: Vec<(&str, &str, &str, Option<usize>)> = found
        .iter()
        .map(|f| (f.0.as_str(), f.1.as_str(), f.2.as_str(), f.3))
        .collect();
    assert_eq!(
        kinds,
        [
            ("info", "foreign_marker", "claude_code", Some(1)),
            ("info", "prefix_changed", "system_changed", Some(1)),
        ]
    );
    assert!(
        found[1].6.starts_with(
            "request 1: prefix changed between turns: `system` differs from request 0"
        ),
        "{}",
        found[1].6
    );
}

#[test]
fn a_system_prompt_rewritten_while_the_tool_results_are_answered_is_still_a_violation() {
    let found = resumed_after_an_interrupted_call(false);
    let kinds: Vec<(&str, &str, &str, Option<usize>)> = found
        .iter()
        .map(|f| (f.0.as_str(), f.1.as_str(), f.2.as_str(), f.3))
        .collect();
    assert_eq!(
        kinds,
        [
            ("info", "foreign_marker", "claude_code", Some(1)),
            ("violation", "prefix_changed", "system_changed", Some(1)),
        ]
    );
    assert!(
        found[1].6.starts_with(
            "request 1: while the tool loop continues: `system` differs from request 0"
        ),
        "{}",
        found[1].6
    );
}

#[test]
fn a_reply_sent_back_without_its_tool_call_is_a_violation_live_from_a_recording_and_from_a_cassette()
 {
    let rec = temp_dir("reply-kept-record");
    let (server, _dir) = start_with(script(LOOP), "reply-kept", |c| c.record = Some(rec.clone()));
    let mut messages = vec![json!({"role": "user", "content": "Run it."})];
    let raw = post(server.addr, &body(&messages, true));
    assert_eq!(raw.status, 200);
    let mut assistant = assistant_message(&raw, true);
    // What Claude Code resumed with after a late SIGTERM: the model's words kept, the
    // tool call it made (and that ran) taken out, a new prompt after it.
    assistant["content"]
        .as_array_mut()
        .expect("blocks")
        .retain(|b| b["type"] != "tool_use");
    if assistant["content"].as_array().is_some_and(Vec::is_empty) {
        // The scripted reply had no words; an empty message the API would refuse.
        assistant["content"] = json!([{"type": "text", "text": "Running it."}]);
    }
    messages.push(assistant);
    messages.push(json!({"role": "user", "content": "Go on."}));
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    let found = judged_three_ways(&server, &rec);
    let kinds: Vec<(&str, &str, &str)> = found
        .iter()
        .map(|f| (f.0.as_str(), f.1.as_str(), f.2.as_str()))
        .collect();
    assert_eq!(kinds, [("violation", "response_kept", "reply_changed")]);
    // Request 1, message 1: the reply as it came back.
    assert_eq!((found[0].3, found[0].4), (Some(1), Some(1)));
    assert!(
        found[0]
            .6
            .starts_with("request 1: message 1 is not the reply streamed to request 0"),
        "{}",
        found[0].6
    );
}
