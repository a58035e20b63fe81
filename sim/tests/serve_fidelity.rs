//! `turnsim serve` answers like the real APIs where a client can tell: a scripted
//! reply's thinking is played only to a request that asked for thinking, and a Messages
//! API request that asked always gets a thinking block first.

mod serve_support;

use serde_json::{Value, json};
use serve_support::*;
use turnsim::testing::serve::sse::{WireBlock, WireEvent};

const THINKING_TWICE: &str = r#"[
    {"kind": "reply", "thinking": "Planning.", "text": "Hi.", "stop": "end_turn"},
    {"kind": "reply", "thinking": "Planning.", "text": "Hi.", "stop": "end_turn"},
    {"kind": "reply", "thinking": "Planning.", "text": "Hi.", "stop": "end_turn"}
]"#;

fn block_types(message: &Value) -> Vec<String> {
    message["content"]
        .as_array()
        .expect("content")
        .iter()
        .map(|b| b["type"].as_str().expect("a type").to_owned())
        .collect()
}

#[test]
fn a_scripted_thinking_block_is_played_only_to_a_request_that_asked_for_thinking() {
    let (server, _dir) = start(script(THINKING_TWICE), "unasked-thinking");
    // Not asked, JSON and streamed: no thinking block.
    for (prompt, stream) in [("Say hi.", false), ("Say hi, streamed.", true)] {
        let raw = post(
            server.addr,
            &body(&[json!({"role": "user", "content": prompt})], stream),
        );
        assert_eq!(raw.status, 200, "{prompt}");
        assert_eq!(
            block_types(&assistant_message(&raw, stream)),
            ["text"],
            "{prompt}"
        );
    }
    // Asked: the script's thinking is there, first.
    let mut b = body(
        &[json!({"role": "user", "content": "Think, then say hi."})],
        false,
    );
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    b["max_tokens"] = json!(2048);
    let raw = post(server.addr, &b);
    assert_eq!(raw.status, 200);
    let message = assistant_message(&raw, false);
    assert_eq!(block_types(&message), ["thinking", "text"]);
    assert_eq!(message["content"][0]["thinking"], "Planning.");
}

/// A reply with one call of `bash`, scripted without thinking (drive's replies are).
const CALL_WITHOUT_THINKING: &str = r#"[
    {"kind": "reply", "text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"}
]"#;

fn thinking_on(messages: &[Value], stream: bool) -> Value {
    let mut b = body(messages, stream);
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    b["max_tokens"] = json!(2048);
    b
}

#[test]
fn a_reply_scripted_without_thinking_opens_with_signed_thinking_when_the_request_turned_it_on() {
    let (server, _dir) = start(script(CALL_WITHOUT_THINKING), "added-thinking");
    let mut messages = vec![json!({"role": "user", "content": "Run the checks."})];
    let raw = post(server.addr, &thinking_on(&messages, true));
    assert_eq!(raw.status, 200);
    let reply = assistant_message(&raw, true);
    assert_eq!(block_types(&reply), ["thinking", "text", "tool_use"]);
    assert_eq!(reply["content"][0]["thinking"], "Planning the next step.");
    assert!(
        reply["content"][0]["signature"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{reply}"
    );
    // The client echoes the reply, thinking first, with its result: the server takes
    // its own reply back (without the thinking it would refuse the request, as the
    // API does for a tool loop with thinking on).
    let results = run_tools(&reply);
    messages.push(reply);
    messages.push(results);
    let raw = post(server.addr, &thinking_on(&messages, true));
    assert_eq!(raw.status, 200, "{}", raw.text());
    assert_eq!(
        block_types(&assistant_message(&raw, true)),
        ["thinking", "text"]
    );
}

#[test]
fn a_scripted_cut_lands_on_the_same_event_of_the_reply_when_thinking_is_added() {
    // Seven events as sent: message_start, the text block's start, ping, its delta and
    // stop, the call's start and its empty first input delta: the cut is inside the call.
    let steps = r#"[
        {"kind": "cut", "after_events": 7, "reply": {"kind": "reply", "text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"}},
        {"kind": "cut", "after_events": 7, "reply": {"kind": "reply", "text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"}}
    ]"#;
    let (server, _dir) = start(script(steps), "cut-with-added-thinking");
    let prompt = [json!({"role": "user", "content": "Run the checks."})];
    let names = |raw: Raw| -> Vec<String> {
        raw.events()
            .iter()
            .map(|e| match e {
                WireEvent::BlockStart { index, block } => {
                    let kind = match block {
                        WireBlock::Text => "text",
                        WireBlock::Thinking => "thinking",
                        WireBlock::RedactedThinking { .. } => "redacted_thinking",
                        WireBlock::ToolUse { .. } => "tool_use",
                    };
                    format!("start {index} {kind}")
                }
                other => other.name().to_owned(),
            })
            .collect()
    };
    let plain = names(post(server.addr, &body(&prompt, true)));
    let thought = names(post(server.addr, &thinking_on(&prompt, true)));
    assert_eq!(
        plain,
        [
            "message_start",
            "start 0 text",
            "ping",
            "content_block_delta",
            "content_block_stop",
            "start 1 tool_use",
            "content_block_delta"
        ]
    );
    // The same seven, after the four of the thinking block the server added.
    assert_eq!(
        thought,
        [
            "message_start",
            "start 0 thinking",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "start 1 text",
            "content_block_delta",
            "content_block_stop",
            "start 2 tool_use",
            "content_block_delta"
        ]
    );
}
