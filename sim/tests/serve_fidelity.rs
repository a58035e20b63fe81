//! `turnsim serve` answers like the real APIs where a client can tell: a scripted
//! reply's thinking is played only to a request that asked for thinking, and a Messages
//! API request that asked always gets a thinking block first; a `tool_use` block has the
//! same fields in JSON as streamed (`caller` included); a generated reply stops with
//! `max_tokens` only when the request's budget runs out; a `max_tokens` stop with calls
//! is a length stop in every format.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use turnsim::Ratio;
use turnsim::testing::serve::script::Script;
use turnsim::testing::serve::sse::{WireBlock, WireEvent};

fn shell_function(chat: bool) -> Value {
    let parameters = json!({"type": "object", "properties": {"cmd": {"type": "string"}},
                            "required": ["cmd"]});
    if chat {
        json!({"type": "function", "function": {"name": "exec_command",
               "description": "Runs a command", "parameters": parameters}})
    } else {
        json!({"type": "function", "name": "exec_command", "description": "Runs a command",
               "parameters": parameters})
    }
}

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
    assert_eq!(
        reply["content"][0]["thinking"],
        "Planning the next step (reply 1)."
    );
    assert!(
        reply["content"][0]["signature"]
            .as_str()
            .is_some_and(|s| s.starts_with("sig_") && s.ends_with("_0001")),
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

#[test]
fn a_non_streamed_tool_use_carries_caller_as_the_streamed_one_does() {
    let steps = r#"[
        {"kind": "reply", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"},
        {"kind": "reply", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"}
    ]"#;
    let (server, _dir) = start(script(steps), "caller-in-json");
    let json_reply = post(
        server.addr,
        &body(&[json!({"role": "user", "content": "Run it."})], false),
    );
    let streamed = post(
        server.addr,
        &body(
            &[json!({"role": "user", "content": "Run it, streamed."})],
            true,
        ),
    );
    let block = json_reply.json()["content"][0].clone();
    let start: Value = streamed
        .text()
        .split("\n\n")
        .filter_map(|rec| rec.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|e| e["type"] == "content_block_start")
        .expect("a content_block_start");
    let keys =
        |v: &Value| -> Vec<String> { v.as_object().expect("object").keys().cloned().collect() };
    assert_eq!(keys(&block), ["type", "id", "name", "input", "caller"]);
    assert_eq!(keys(&block), keys(&start["content_block"]));
    assert_eq!(block["caller"], json!({"type": "direct"}));
    assert_eq!(block["caller"], start["content_block"]["caller"]);
}

/// `(stop_reason, output_tokens)` of a Messages reply.
fn stop_and_tokens(raw: &Raw, stream: bool) -> (String, u64) {
    let message = if stream {
        turnsim::testing::serve::sse::message_json(&raw.events())
    } else {
        raw.json()
    };
    (
        message["stop_reason"]
            .as_str()
            .expect("a stop reason")
            .to_owned(),
        message["usage"]["output_tokens"]
            .as_u64()
            .expect("output tokens"),
    )
}

#[test]
fn a_generated_reply_stops_with_max_tokens_only_when_the_request_s_budget_runs_out() {
    // Every generated reply draws a `max_tokens` stop (when it makes no call).
    let mut seeded = Script::seeded(7, false);
    seeded.options.max_tokens = Ratio::ALWAYS;
    let (server, _dir) = start(seeded, "budget");
    let mut cut = 0;
    for i in 0..12 {
        let stream = i % 2 == 0;
        let mut roomy = body(
            &[json!({"role": "user", "content": format!("Task {i}.")})],
            stream,
        );
        roomy["max_tokens"] = json!(64_000);
        let raw = post(server.addr, &roomy);
        assert_eq!(raw.status, 200, "{}", raw.text());
        let (stop, tokens) = stop_and_tokens(&raw, stream);
        assert_ne!(
            stop, "max_tokens",
            "request {i}: 64,000 tokens allowed, {tokens} used"
        );
        assert!(matches!(stop.as_str(), "end_turn" | "tool_use"), "{stop}");
        let mut tight = body(
            &[json!({"role": "user", "content": format!("Short task {i}.")})],
            stream,
        );
        tight["max_tokens"] = json!(6);
        let raw = post(server.addr, &tight);
        assert_eq!(raw.status, 200, "{}", raw.text());
        let (stop, tokens) = stop_and_tokens(&raw, stream);
        assert!(
            tokens <= 6,
            "request {i}: {tokens} output tokens for a budget of 6"
        );
        if stop == "max_tokens" {
            assert_eq!(tokens, 6, "a budget stop spends the whole budget");
            cut += 1;
        }
    }
    assert!(
        cut > 0,
        "no reply of a few dozen tokens was cut at a budget of 6"
    );
}

#[test]
fn a_scripted_max_tokens_stop_with_calls_is_a_length_stop_in_every_format() {
    let anthropic = r#"{"kind": "reply", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "max_tokens"}"#;
    let openai = r#"{"kind": "reply", "tool_calls": [{"name": "exec_command", "input": {"cmd": "true"}}], "stop": "max_tokens"}"#;
    let gemini = r#"{"kind": "reply", "tool_calls": [{"name": "run_shell_command", "input": {"command": "true"}}], "stop": "max_tokens"}"#;
    let steps = format!("[{anthropic}, {openai}, {openai}, {openai}, {openai}, {gemini}]");
    let (server, _dir) = start(script(&steps), "length-stop");
    let raw = post(
        server.addr,
        &body(&[json!({"role": "user", "content": "Run it."})], false),
    );
    assert_eq!(raw.json()["stop_reason"], "max_tokens");
    assert_eq!(raw.json()["content"][0]["type"], "tool_use");
    // Chat Completions: `length`, streamed and not, the call still there.
    for stream in [true, false] {
        let chat = json!({"model": "gpt-5", "stream": stream, "tools": [shell_function(true)],
                          "messages": [{"role": "user", "content": format!("Run it ({stream}).")}]});
        let raw = post_to(server.addr, "/v1/chat/completions", &chat);
        assert_eq!(raw.status, 200, "{}", raw.text());
        let (finish, has_call) = if stream {
            let chunks = data(&raw);
            let finish = chunks
                .iter()
                .find_map(|c| c["choices"][0]["finish_reason"].as_str().map(str::to_owned))
                .expect("a finish chunk");
            let call = chunks
                .iter()
                .any(|c| c["choices"][0]["delta"]["tool_calls"].is_array());
            (finish, call)
        } else {
            let v = raw.json();
            let choice = &v["choices"][0];
            (
                choice["finish_reason"].as_str().expect("finish").to_owned(),
                choice["message"]["tool_calls"].is_array(),
            )
        };
        assert_eq!(finish, "length", "stream {stream}");
        assert!(has_call, "stream {stream}: the call is still sent");
    }
    // Responses: status `incomplete` for `max_output_tokens`, streamed and not.
    for stream in [true, false] {
        let req = json!({"model": "gpt-5", "stream": stream, "store": false,
                         "tools": [shell_function(false)],
                         "input": [{"role": "user", "content": format!("Run it ({stream}).")}]});
        let raw = post_to(server.addr, "/v1/responses", &req);
        assert_eq!(raw.status, 200, "{}", raw.text());
        let response = if stream {
            let events = data(&raw);
            let last = events.last().expect("events").clone();
            assert_eq!(last["type"], "response.incomplete");
            assert!(!events.iter().any(|e| e["type"] == "response.completed"));
            last["response"].clone()
        } else {
            raw.json()
        };
        assert_eq!(response["status"], "incomplete", "stream {stream}");
        assert_eq!(
            response["incomplete_details"],
            json!({"reason": "max_output_tokens"}),
            "stream {stream}"
        );
        assert_eq!(
            response["output"][0]["type"], "function_call",
            "stream {stream}"
        );
        // The item the budget ran out in is `incomplete` too.
        assert_eq!(
            response["output"][0]["status"], "incomplete",
            "stream {stream}"
        );
    }
    // Gemini: `finishReason: MAX_TOKENS`, the call still there.
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "Run it."}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command", "description": "Runs a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]}]});
    let raw = post_to(
        server.addr,
        "/v1beta/models/gemini-2.5-pro:generateContent",
        &gemini,
    );
    assert_eq!(raw.status, 200, "{}", raw.text());
    let candidate = &raw.json()["candidates"][0];
    assert_eq!(candidate["finishReason"], "MAX_TOKENS");
    assert_eq!(
        candidate["content"]["parts"][0]["functionCall"]["name"],
        "run_shell_command"
    );
}
