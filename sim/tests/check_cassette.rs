//! `turnsim check` on recorded traffic: the crush go-vcr cassette (real Messages API
//! requests and SSE responses), and what it reports when that traffic is altered.

use serde_json::Value;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use turnsim::check::FileReport;
use turnsim::check::{Format, check_reader};
use turnsim::testing::check::sse;
use turnsim::testing::check::vcr::strip_cache_control;
use turnsim_core::{Block, validate_history_allowing_pending_tools};

fn cassette_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts/crush-vcr-anthropic-parallel_tool_calls.yaml")
}

fn cassette() -> String {
    std::fs::read_to_string(cassette_path()).expect("reads")
}

#[derive(serde::Deserialize)]
struct Cassette {
    interactions: Vec<Interaction>,
}

#[derive(serde::Deserialize)]
struct Interaction {
    request: Body,
    response: Body,
}

#[derive(serde::Deserialize)]
struct Body {
    body: String,
}

fn interactions() -> Vec<Interaction> {
    let c: Cassette = serde_norway::from_str(&cassette()).expect("a cassette");
    c.interactions
}

fn check_text(text: String) -> FileReport {
    check_reader("altered.yaml", Cursor::new(text.into_bytes()), None).expect("readable")
}

fn kinds(r: &FileReport) -> Vec<(&'static str, String, Option<usize>, Option<usize>)> {
    r.findings
        .kept
        .iter()
        .map(|f| (f.check, f.kind.clone(), f.place.request, f.place.message))
        .collect()
}

#[test]
fn the_crush_requests_are_append_only_once_cache_control_is_set_aside() {
    let bodies: Vec<Value> = interactions()
        .iter()
        .map(|i| serde_json::from_str(&i.request.body).expect("JSON"))
        .collect();
    // As recorded, the shared first message differs: its breakpoints moved.
    assert_ne!(bodies[1]["messages"][0], bodies[2]["messages"][0]);
    assert_ne!(bodies[1]["system"], Value::Null);
    let mut stripped = bodies.clone();
    for b in &mut stripped {
        strip_cache_control(b);
    }
    assert_eq!(stripped[1]["messages"][0], stripped[2]["messages"][0]);
    assert_eq!(stripped[1]["system"], stripped[2]["system"]);
    assert_eq!(stripped[1]["tools"], stripped[2]["tools"]);
    // Key order survives stripping, so the comparison is of the bytes as sent.
    assert_eq!(
        stripped[1]["messages"][0].to_string(),
        stripped[2]["messages"][0].to_string()
    );
    assert!(!stripped[2].to_string().contains("cache_control"));

    let r = check_text(cassette());
    assert_eq!(kinds(&r), vec![]);
    assert_eq!(r.stat("requests"), 3);
    // The title request is a conversation of its own, not a "changed prefix".
    assert_eq!(r.stat("conversations"), 2);
}

#[test]
fn every_sse_stream_in_the_crush_cassette_parses_into_a_valid_assistant_message() {
    let replies: Vec<_> = interactions()
        .iter()
        .map(|i| sse::parse_stream(&i.response.body).expect("a valid stream"))
        .collect();
    assert_eq!(
        replies[0].to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"Finding Go files and listing directory in parallel"}]}"#
    );
    let calls: Vec<(String, String)> = replies[1]
        .tool_calls()
        .into_iter()
        .map(|c| (c.name, c.input.to_string()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("glob".to_string(), r#"{"pattern":"**/*.go"}"#.to_string()),
            (
                "ls".to_string(),
                r#"{"path":"/tmp/crush-test/TestCoderAgent/anthropic-sonnet/parallel_tool_calls"}"#
                    .to_string()
            ),
        ]
    );
    assert!(matches!(
        replies[2].blocks(),
        [Block::Text { text }] if text.starts_with("**Go files:** `main.go`")
    ));
    for reply in replies {
        let history = vec![
            std::sync::Arc::new(turnsim_core::Message::user_text("go")),
            std::sync::Arc::new(reply),
        ];
        assert_eq!(validate_history_allowing_pending_tools(&history), Ok(()));
    }
}

#[test]
fn the_reply_the_next_request_carries_is_the_one_that_was_streamed() {
    // Request 2 carries reply 1 (the two tool calls) unchanged; alter the copy in
    // request 2 only (the streamed input arrives split, so the text is not in it).
    let text = cassette();
    let altered = text.replacen(r#"\"**/*.go\""#, r#"\"**/*.rs\""#, 1);
    assert_ne!(altered, text);
    let r = check_text(altered);
    assert_eq!(
        kinds(&r),
        vec![(
            "response_kept",
            "reply_changed".to_string(),
            Some(2),
            Some(1)
        )]
    );
    assert_eq!(r.findings.violations, 1);
}

/// A recorded stream that delivers `message` (text and tool_use blocks).
fn stream_of(message: &Value) -> String {
    let mut events = vec![
        serde_json::json!({"type":"message_start","message":{"role":"assistant","content":[]}}),
    ];
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    let mut stop = "end_turn";
    for (index, b) in blocks.iter().enumerate() {
        if b["type"] == "tool_use" {
            stop = "tool_use";
            events.push(
                serde_json::json!({"type":"content_block_start","index":index,
                "content_block":{"type":"tool_use","id":b["id"],"name":b["name"],"input":{}}}),
            );
            events.push(
                serde_json::json!({"type":"content_block_delta","index":index,
                "delta":{"type":"input_json_delta","partial_json":b["input"].to_string()}}),
            );
        } else {
            events.push(
                serde_json::json!({"type":"content_block_start","index":index,
                "content_block":{"type":"text","text":""}}),
            );
            events.push(
                serde_json::json!({"type":"content_block_delta","index":index,
                "delta":{"type":"text_delta","text":b["text"]}}),
            );
        }
        events.push(serde_json::json!({"type":"content_block_stop","index":index}));
    }
    events.push(serde_json::json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":1}}));
    events.push(serde_json::json!({"type":"message_stop"}));
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// A cassette of the given request bodies. Each is answered by the assistant message
/// the next request carries after it (or a plain "ok" for the last).
fn synthetic(bodies: &[Value]) -> String {
    #[derive(serde::Serialize)]
    struct Out {
        version: u32,
        interactions: Vec<OutInteraction>,
    }
    #[derive(serde::Serialize)]
    struct OutInteraction {
        id: usize,
        request: OutRequest,
        response: OutResponse,
    }
    #[derive(serde::Serialize)]
    struct OutRequest {
        body: String,
        url: String,
        method: String,
    }
    #[derive(serde::Serialize)]
    struct OutResponse {
        body: String,
        code: u16,
    }
    let ok = serde_json::json!({"role":"assistant","content":[{"type":"text","text":"ok"}]});
    let out = Out {
        version: 2,
        interactions: bodies
            .iter()
            .enumerate()
            .map(|(id, b)| {
                let sent = b["messages"].as_array().map_or(0, Vec::len);
                let reply = bodies
                    .get(id + 1)
                    .and_then(|next| next["messages"].get(sent))
                    .filter(|m| m["role"] == "assistant")
                    .unwrap_or(&ok);
                OutInteraction {
                    id,
                    request: OutRequest {
                        body: b.to_string(),
                        url: "https://api.anthropic.com/v1/messages".into(),
                        method: "POST".into(),
                    },
                    response: OutResponse {
                        body: stream_of(reply),
                        code: 200,
                    },
                }
            })
            .collect(),
    };
    format!(
        "---\n{}",
        serde_norway::to_string(&out).expect("serializes")
    )
}

fn conversation() -> Vec<Value> {
    let user = serde_json::json!({"role":"user","content":[{"type":"text","text":"go","cache_control":{"type":"ephemeral"}}]});
    let call = serde_json::json!({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]});
    let result = serde_json::json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a b"}]});
    let ok = serde_json::json!({"role":"assistant","content":[{"type":"text","text":"ok"}]});
    let next = serde_json::json!({"role":"user","content":"next"});
    let body =
        |messages: Vec<Value>| serde_json::json!({"model":"m","system":"s","messages":messages});
    vec![
        body(vec![user.clone()]),
        body(vec![user.clone(), call.clone(), result.clone()]),
        body(vec![user, call, result, ok, next]),
    ]
}

#[test]
fn a_synthetic_conversation_that_only_appends_is_clean() {
    let r = check_text(synthetic(&conversation()));
    assert_eq!(kinds(&r), vec![]);
    assert_eq!((r.stat("requests"), r.stat("conversations")), (3, 1));
}

#[test]
fn a_changed_earlier_message_breaks_append_only() {
    let mut bodies = conversation();
    bodies[2]["messages"][2]["content"][0]["content"] = Value::from("a b c");
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![(
            "append_only",
            "message_changed".to_string(),
            Some(2),
            Some(2)
        )]
    );
    assert!(
        r.findings.kept[0]
            .detail
            .starts_with("request 2: message 2 differs from request 1")
    );
}

#[test]
fn a_request_with_fewer_messages_that_are_a_prefix_is_a_rewind_not_a_violation() {
    let mut bodies = conversation();
    bodies.push(bodies[1].clone());
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![("append_only", "rewind".to_string(), Some(3), None)]
    );
    assert_eq!(r.findings.violations, 0);
    assert_eq!(
        r.findings.kept[0].detail,
        "request 3: rewind: its 3 messages are a prefix of the 5 of request 2"
    );
}

#[test]
fn the_same_length_with_only_the_last_prompt_replaced_or_extended_is_a_rewind_but_a_replaced_tool_result_is_not()
 {
    let mut bodies = conversation();
    let mut again = bodies[2].clone();
    again["messages"][4] = serde_json::json!({"role":"user","content":"something else"});
    bodies.push(again);
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![("append_only", "rewind".to_string(), Some(3), None)]
    );
    assert_eq!(
        r.findings.kept[0].detail,
        "request 3: rewind: its first 4 messages are those of request 2, and its last one, a user message, replaces request 2's last"
    );
    // Claude Code's `/compact` right after tool results: its instruction added to them.
    let mut bodies = conversation();
    bodies.truncate(2);
    let mut compact = bodies[1].clone();
    compact["messages"][2]["content"]
        .as_array_mut()
        .expect("blocks")
        .push(serde_json::json!({"type": "text", "text": "Summarise."}));
    bodies.push(compact);
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![("append_only", "rewind".to_string(), Some(2), None)]
    );
    let mut bodies = conversation();
    bodies.truncate(2);
    let mut again = bodies[1].clone();
    again["messages"][2]["content"][0]["content"] = Value::from("a b c");
    bodies.push(again);
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![(
            "append_only",
            "message_changed".to_string(),
            Some(2),
            Some(2)
        )]
    );
}

#[test]
fn moving_cache_control_alone_is_not_a_change() {
    let mut bodies = conversation();
    // The breakpoint moves from the first message to the last.
    bodies[2]["messages"][0]["content"][0]
        .as_object_mut()
        .expect("a block")
        .remove("cache_control");
    bodies[2]["messages"][4] = serde_json::json!({"role":"user","content":[{"type":"text","text":"next","cache_control":{"type":"ephemeral"}}]});
    let r = check_text(synthetic(&bodies));
    assert_eq!(kinds(&r), vec![]);
}

#[test]
fn a_rewritten_first_message_is_said_but_not_judged() {
    // Rewriting the first message of request 2 in the real cassette makes it share
    // nothing with request 1: a compaction looks the same, so it is information.
    let text = cassette();
    let words = "it is very important that you run both tool calls in parallel";
    let third = text
        .match_indices(words)
        .map(|(i, _)| i)
        .nth(2)
        .expect("three copies: title request, request 1, request 2");
    let mut altered = text.clone();
    altered.replace_range(
        third..third + words.len(),
        "it is NOT important to run them in parallel",
    );
    let r = check_text(altered);
    assert_eq!(
        kinds(&r),
        vec![("append_only", "new_history".to_string(), Some(2), Some(0))]
    );
    assert_eq!(r.findings.violations, 0);
}

#[test]
fn the_same_first_message_under_another_system_is_a_prefix_change_with_its_cause() {
    let mut bodies = conversation();
    bodies[2]["system"] = Value::from("s2");
    let r = check_text(synthetic(&bodies));
    assert_eq!(r.findings.violations, 0);
    assert!(
        r.findings.kept[0].detail.starts_with(
            "request 2: prefix changed between turns: `system` differs from request 1 at byte 25 of its JSON"
        ),
        "{}",
        r.findings.kept[0].detail
    );
    assert_eq!(
        kinds(&r),
        vec![(
            "prefix_changed",
            "system_changed".to_string(),
            Some(2),
            None
        )]
    );
}

#[test]
fn each_request_is_held_to_the_pairing_rules_once() {
    let mut bodies = conversation();
    // Request 1 ends with the call unanswered; request 2 carries the same history on.
    bodies[1]["messages"]
        .as_array_mut()
        .expect("messages")
        .pop();
    bodies[2]["messages"]
        .as_array_mut()
        .expect("messages")
        .remove(2);
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![
            ("pairing", "unanswered_at_end".to_string(), Some(1), Some(1)),
            (
                "pairing",
                "no_answering_message".to_string(),
                Some(2),
                Some(1)
            ),
        ]
    );
    // The same broken pair carried by a later request is not reported again.
    let mut bodies = conversation();
    bodies[1]["messages"][2]["content"][0]["tool_use_id"] = Value::from("t9");
    bodies[2]["messages"][2]["content"][0]["tool_use_id"] = Value::from("t9");
    let r = check_text(synthetic(&bodies));
    assert_eq!(
        kinds(&r),
        vec![(
            "pairing",
            "missing_tool_result".to_string(),
            Some(1),
            Some(1)
        )]
    );
}

#[test]
fn a_cut_stream_is_a_rejected_response() {
    let text = cassette();
    // Turn the last response's message_stop (line 209) into a ping.
    let at = text.rfind("event: message_stop").expect("a stop event");
    let mut altered = text.clone();
    altered.replace_range(at..at + "event: message_stop".len(), "event: ping");
    let altered = altered.replacen(
        r#"data: {"type":"message_stop"     }"#,
        r#"data: {"type": "ping"}"#,
        1,
    );
    let r = check_text(altered);
    assert_eq!(
        kinds(&r),
        vec![("response", "rejected".to_string(), Some(2), None)]
    );
    assert!(
        r.findings.kept[0]
            .detail
            .ends_with("the engine rejects it: the stream ends before message_stop"),
        "{}",
        r.findings.kept[0].detail
    );
}

#[test]
fn a_single_recorded_stream_checks_as_a_recording() {
    let body = interactions().remove(1).response.body;
    let r = check_reader("reply.sse", Cursor::new(body.clone().into_bytes()), None).expect("reads");
    assert_eq!((r.format, r.findings.kept.len()), ("recording", 0));
    let forced = check_reader(
        "reply.txt",
        Cursor::new(body.into_bytes()),
        Some(Format::Recording),
    )
    .expect("reads");
    assert_eq!(forced.findings.kept.len(), 0);
}

#[test]
fn openai_traffic_in_a_cassette_is_checked_but_its_responses_are_not_judged() {
    let body = |messages: Value| serde_json::json!({"model": "gpt", "messages": messages});
    let first = body(serde_json::json!([
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"}
    ]));
    let second = body(serde_json::json!([
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "user", "content": "where is my result?"}
    ]));
    let r = check_text(synthetic(&[first, second]));
    assert_eq!(
        kinds(&r),
        vec![
            ("response", "unsupported".to_string(), Some(0), None),
            // Judged by Chat Completions' own rules, at the wire index of the
            // assistant message that made the call.
            (
                "pairing",
                "call_without_tool_message".to_string(),
                Some(1),
                Some(2)
            ),
            ("response", "unsupported".to_string(), Some(1), None),
        ]
    );
    let pairing = &r.findings.kept[1];
    assert_eq!(
        pairing.detail,
        "messages[2]: the assistant message's tool_calls c1 have no tool message before the next message (rule calls_answered)"
    );
}

#[test]
fn a_non_streamed_json_response_is_judged_too() {
    let mut cassette: Value =
        serde_norway::from_str(&synthetic(&conversation()[..1])).expect("YAML");
    // A whole-message response whose one text block is empty.
    cassette["interactions"][0]["response"]["body"] = Value::from(
        r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":""}],"stop_reason":"end_turn"}"#,
    );
    let report = check_text(serde_norway::to_string(&cassette).expect("YAML"));
    assert_eq!(
        kinds(&report),
        vec![("response", "invalid_message".to_string(), Some(0), None)]
    );
    assert_eq!(
        report.findings.kept[0].detail,
        "response to request 0: message 1, block 0: text block is empty"
    );
}

#[test]
fn openrouter_breakpoints_on_a_chat_message_or_a_tool_call_are_not_content() {
    // Hand-made: the breakpoint sits on the messages themselves and on a
    // `tool_calls[]` entry, and moves forward from request to request. Read as
    // content, it made request 1 an `append_only/new_history` (its first message
    // differed) and request 2 an `append_only/message_changed`.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openai/handmade-openrouter-cache-control-on-messages.yaml");
    let text = std::fs::read_to_string(path).expect("reads");
    let r = check_text(text);
    // Each streamed reply (ended by `[DONE]`) is read and sent back as streamed.
    assert_eq!(kinds(&r), vec![]);
    assert_eq!(
        (
            r.stat("requests"),
            r.stat("responses"),
            r.stat("conversations")
        ),
        (3, 3, 1)
    );
}

#[test]
fn a_chat_request_the_api_refuses_is_named_once_by_chat_completions_own_rule() {
    let body = |messages: Value| serde_json::json!({"model": "gpt", "messages": messages});
    let history = serde_json::json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "tool", "tool_call_id": "c1", "content": "a again"}
    ]);
    let mut longer = history.clone();
    longer
        .as_array_mut()
        .expect("messages")
        .push(serde_json::json!({"role": "user", "content": "and?"}));
    let r = check_text(synthetic(&[body(history), body(longer)]));
    let pairing: Vec<_> = kinds(&r)
        .into_iter()
        .filter(|(check, ..)| *check != "response")
        .collect();
    // The duplicate carried on by the second request is not reported again.
    assert_eq!(
        pairing,
        vec![(
            "pairing",
            "duplicate_tool_message".to_string(),
            Some(0),
            Some(3)
        )]
    );
}
