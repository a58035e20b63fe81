//! `serve` live and `turnsim check DIR` on its recording agree on every route, and
//! a conversation is one API's.
//!
//! The Messages and Chat routes are held to the first claim by `check_bytes.rs`; here
//! a recorded Responses session and a recorded Gemini session, each carrying
//! violations, are judged live and again through `check DIR` (the library call the
//! subcommand makes), and must give the same violations with no
//! `recording/verdict_changed`. And a Messages and a Responses request that open with
//! the same message are two conversations in both judges' eyes.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use turnsim::serve::Verdict;
use turnsim::testing::check::{FileReport, Severity, check_files};

/// `v` written with spaces after `:` and `,`: the same values in other bytes.
fn spaced(v: &Value) -> String {
    v.to_string().replace("\":", "\": ").replace(",\"", ", \"")
}

/// `body` (an object without `key`) with `"key": raw` appended as the given bytes.
fn with_raw(body: &Value, key: &str, raw: &str) -> String {
    let mut text = body.to_string();
    text.pop();
    format!("{text},\"{key}\":{raw}}}")
}

fn post_bytes(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: &str) -> Raw {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    send(
        addr,
        "POST",
        path,
        &all,
        body.as_bytes(),
        Duration::from_secs(10),
    )
}

/// Every live violation, `rule/kind`, in request order.
fn live_kinds(verdicts: &[Verdict]) -> Vec<String> {
    verdicts
        .iter()
        .flat_map(|v| {
            v.violations
                .iter()
                .map(|x| format!("{}/{}", x.rule, x.kind))
        })
        .collect()
}

/// `check DIR` on a recording: its one report.
fn checked(rec: &Path) -> FileReport {
    let mut outcome = check_files(&[rec.to_path_buf()], None);
    assert!(outcome.unreadable.is_empty(), "{:?}", outcome.unreadable);
    assert_eq!(outcome.files.len(), 1);
    let report = outcome.files.remove(0);
    assert_eq!(report.format, "serve-record");
    report
}

fn report_kinds(report: &FileReport) -> Vec<String> {
    report
        .findings
        .kept
        .iter()
        .filter(|f| f.severity == Severity::Violation)
        .map(|f| format!("{}/{}", f.check, f.kind))
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

const OPENAI: [(&str, &str); 1] = [("authorization", "Bearer dummy")];

fn shell_tool() -> Value {
    json!([{"type": "function", "name": "exec_command", "description": "Runs a command",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                           "required": ["cmd"]}}])
}

/// A Responses body without `tools` (added as bytes by [`with_raw`]).
fn responses_head(input: &[Value]) -> Value {
    json!({"model": "gpt-5", "instructions": "Be brief.", "input": input, "stream": true,
           "store": false, "include": ["reasoning.encrypted_content"],
           "reasoning": {"effort": "low"}})
}

/// The finished output items of a Responses stream.
fn output_items(raw: &Raw) -> Vec<Value> {
    data(raw)
        .into_iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| e["item"].clone())
        .collect()
}

const CALL_THEN_TEXT: &str = r#"[
    {"kind": "reply", "thinking": "Let me run it.", "tool_calls": [{"name": "exec_command"}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"}
]"#;

#[test]
fn serve_and_check_dir_give_a_responses_session_the_same_violations() {
    let rec = temp_dir("apis-responses-rec");
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "apis-responses", |c| {
        c.record = Some(rec.clone());
        c.reject_invalid = false;
    });
    let tools = shell_tool();
    let user = json!({"type": "message", "role": "user",
                      "content": [{"type": "input_text", "text": "Run it."}]});
    let first = post_bytes(
        server.addr,
        "/v1/responses",
        &OPENAI,
        &with_raw(
            &responses_head(std::slice::from_ref(&user)),
            "tools",
            &tools.to_string(),
        ),
    );
    assert_eq!(first.status, 200, "{}", first.text());
    let items = output_items(&first);
    assert_eq!(items[0]["type"], "reasoning", "{items:?}");
    assert_eq!(items[1]["type"], "function_call", "{items:?}");
    // The history sent back without its reasoning item, and the tools in other bytes:
    // two violations, one that only the server's memory of what it sent can name.
    let mut input = vec![user];
    input.push(items[1].clone());
    input.push(
        json!({"type": "function_call_output", "call_id": items[1]["call_id"],
                      "output": "ok"}),
    );
    let second = post_bytes(
        server.addr,
        "/v1/responses",
        &OPENAI,
        &with_raw(&responses_head(&input), "tools", &spaced(&tools)),
    );
    assert_eq!(second.status, 200, "{}", second.text());
    let live = server.server.verdicts();
    assert_eq!(live.len(), 2);
    assert!(live[0].is_clean(), "{:?}", live[0].lines());
    assert_eq!(
        sorted(live_kinds(&live)),
        [
            "prefix_changed/tools_bytes_changed",
            "reasoning_kept/dropped"
        ]
    );
    let report = checked(&rec);
    assert_eq!(sorted(report_kinds(&report)), sorted(live_kinds(&live)));
    assert_eq!(
        report.findings.counts.get("recording/verdict_changed"),
        None
    );
    assert_eq!(report.stat("conversations"), 1);
    assert_eq!(report.stat("prefix_judged_on_bytes"), 2);
    let _ = std::fs::remove_dir_all(&rec);
}

const GEMINI_STREAM: &str = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
const GEMINI: [(&str, &str); 1] = [("x-goog-api-key", "dummy")];

fn gemini_tools() -> Value {
    json!([{"functionDeclarations": [{"name": "run_shell_command",
        "description": "Runs a command", "parameters": {"type": "object",
        "properties": {"command": {"type": "string"}}, "required": ["command"]}}]}])
}

fn gemini_head(contents: &[Value]) -> Value {
    json!({"contents": contents,
           "systemInstruction": {"parts": [{"text": "Be brief."}]},
           "generationConfig": {"temperature": 0}})
}

#[test]
fn serve_and_check_dir_give_a_gemini_session_the_same_violations() {
    let rec = temp_dir("apis-gemini-rec");
    let steps = r#"[
        {"kind": "reply", "text": "Running it.", "tool_calls": [{"name": "run_shell_command"}], "stop": "tool_use"},
        {"kind": "reply", "text": "Done.", "stop": "end_turn"}
    ]"#;
    let (server, _dir) = start_with(script(steps), "apis-gemini", |c| {
        c.record = Some(rec.clone());
        c.reject_invalid = false;
    });
    let tools = gemini_tools();
    let user = json!({"role": "user", "parts": [{"text": "Run it."}]});
    let first = post_bytes(
        server.addr,
        GEMINI_STREAM,
        &GEMINI,
        &with_raw(
            &gemini_head(std::slice::from_ref(&user)),
            "tools",
            &tools.to_string(),
        ),
    );
    assert_eq!(first.status, 200, "{}", first.text());
    let parts: Vec<Value> = data(&first)
        .iter()
        .flat_map(|c| {
            c["candidates"][0]["content"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    let call = parts
        .iter()
        .find_map(|p| p.get("functionCall"))
        .expect("the first reply calls the tool")
        .clone();
    let model = json!({"role": "model", "parts": parts});
    // The call answered twice, and the tools in other bytes.
    let answer = json!({"functionResponse": {"name": call["name"], "response": {"output": "ok"}}});
    let answers = json!({"role": "user", "parts": [answer, answer]});
    let second = post_bytes(
        server.addr,
        GEMINI_STREAM,
        &GEMINI,
        &with_raw(
            &gemini_head(&[user, model, answers]),
            "tools",
            &spaced(&tools),
        ),
    );
    assert_eq!(second.status, 200, "{}", second.text());
    let live = server.server.verdicts();
    assert_eq!(live.len(), 2);
    assert!(live[0].is_clean(), "{:?}", live[0].lines());
    let kinds = sorted(live_kinds(&live));
    assert_eq!(
        kinds,
        [
            "pairing/response_without_call",
            "prefix_changed/tools_bytes_changed"
        ]
    );
    let report = checked(&rec);
    assert_eq!(sorted(report_kinds(&report)), kinds);
    assert_eq!(
        report.findings.counts.get("recording/verdict_changed"),
        None
    );
    assert_eq!(report.stat("conversations"), 1);
    assert_eq!(report.stat("prefix_judged_on_bytes"), 2);
    let _ = std::fs::remove_dir_all(&rec);
}

#[test]
fn a_messages_and_a_responses_request_with_the_same_first_message_are_two_conversations() {
    let rec = temp_dir("apis-two-rec");
    let steps = r#"[
        {"kind": "reply", "text": "Hi.", "stop": "end_turn"},
        {"kind": "reply", "text": "Again.", "stop": "end_turn"},
        {"kind": "reply", "text": "Hi from Responses.", "stop": "end_turn"}
    ]"#;
    let (server, _dir) = start_with(script(steps), "apis-two", |c| c.record = Some(rec.clone()));
    // A Messages loop of two requests...
    let mut messages = vec![json!({"role": "user", "content": "Say hi."})];
    let first = post(server.addr, &body(&messages, false));
    assert_eq!(first.status, 200, "{}", first.text());
    messages.push(assistant_message(&first, false));
    messages.push(json!({"role": "user", "content": "Again."}));
    let second = post(server.addr, &body(&messages, false));
    assert_eq!(second.status, 200, "{}", second.text());
    // ... then a Responses request that opens with the same message and offers tools.
    let input = [json!({"role": "user", "content": "Say hi."})];
    let mut responses = responses_head(&input);
    responses["stream"] = json!(false);
    let third = post_bytes(
        server.addr,
        "/v1/responses",
        &OPENAI,
        &with_raw(&responses, "tools", &shell_tool().to_string()),
    );
    assert_eq!(third.status, 200, "{}", third.text());
    let live = server.server.verdicts();
    let place = |v: &[Verdict]| -> Vec<(String, u32)> {
        v.iter()
            .map(|v| (v.conversation.clone(), v.conversation_request))
            .collect()
    };
    let expected = [
        ("c1".to_owned(), 0),
        ("c1".to_owned(), 1),
        ("c2".to_owned(), 0),
    ];
    assert_eq!(place(&live), expected);
    // Not compared with the Messages loop: no rewind, no new history, nothing.
    assert!(live[2].is_clean(), "{:?}", live[2].lines());
    assert_eq!(live[2].notes, Vec::<String>::new());
    // The recording judged again groups them alike.
    let again = turnsim::testing::serve::recheck::check_dir(&rec).expect("the recording reads");
    assert!(again.mismatches.is_empty(), "{:?}", again.mismatches);
    assert_eq!(place(&again.verdicts), expected);
    let report = checked(&rec);
    assert_eq!(report.stat("conversations"), 2);
    assert_eq!(report.stat("requests"), 3);
    assert_eq!(report_kinds(&report), Vec::<String>::new());
    let info: Vec<String> = report
        .findings
        .kept
        .iter()
        .map(|f| format!("{}/{}", f.check, f.kind))
        .collect();
    assert_eq!(info, Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&rec);
}
