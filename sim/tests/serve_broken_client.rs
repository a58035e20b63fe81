//! A client that breaks the invariants is caught, with the rule, the request index
//! and an excerpt; what real clients legitimately send is accepted.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::time::Duration;

const TWO_CALLS: &str = r#"[
    {"kind": "reply", "tool_calls": [{"name": "bash"}, {"name": "bash"}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"}
]"#;

/// The first request and the assistant's reply with two tool calls.
fn opening(addr: std::net::SocketAddr) -> (Vec<Value>, Value) {
    let messages = vec![json!({"role": "user", "content": "Run both."})];
    let raw = post(addr, &body(&messages, true));
    assert_eq!(raw.status, 200);
    let assistant = assistant_message(&raw, true);
    (messages, assistant)
}

#[test]
fn a_client_that_drops_a_tool_result_is_refused_and_flagged_with_index_rule_and_excerpt() {
    let (server, _dir) = start(script(TWO_CALLS), "drop-result");
    let (mut messages, assistant) = opening(server.addr);
    let mut results = run_tools(&assistant);
    let dropped = results["content"][1]["tool_use_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    results["content"]
        .as_array_mut()
        .expect("results")
        .truncate(1);
    messages.push(assistant);
    messages.push(results);
    let raw = post(server.addr, &body(&messages, true));
    // The real API refuses this request; so does the server, in the API's words.
    assert_eq!(raw.status, 400);
    let err = raw.json();
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&dropped)),
        "{err}"
    );
    let verdicts = server.server.verdicts();
    let v = &verdicts[1];
    assert_eq!(v.request, 1);
    assert!(v.rejected());
    let violation = &v.violations[0];
    assert_eq!(violation.rule, "pairing");
    assert_eq!(violation.kind, "missing_tool_result");
    assert_eq!(
        violation.message,
        Some(1),
        "the assistant message that asked"
    );
    assert!(
        violation.excerpt.contains("tool_use"),
        "{}",
        violation.excerpt
    );
    let line = &v.lines()[0];
    assert!(
        line.starts_with("request #1 (c1 #1): pairing/missing_tool_result at message 1"),
        "{line}"
    );
    // The recording says the same.
    let records = server.server.records();
    assert_eq!(records[1].answer.status, 400);
    assert_eq!(records[1].answer.outcome, "status 400");
}

/// Breaks a valid history in one way.
type Breaker = fn(&mut Vec<Value>);

#[test]
fn results_after_text_duplicate_ids_and_empty_blocks_are_each_flagged() {
    let cases: [(&str, Breaker); 3] = [
        ("tool_result_after_other_block", |m| {
            let results = m[2]["content"].as_array_mut().expect("results");
            results.insert(0, json!({"type": "text", "text": "here you go"}));
        }),
        ("duplicate_tool_use_id", |m| {
            let calls = m[1]["content"].as_array().cloned().unwrap_or_default();
            let first = calls
                .iter()
                .find(|b| b["type"] == "tool_use")
                .cloned()
                .unwrap_or(Value::Null);
            let id = first["id"].clone();
            m.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "bash", "input": {}}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "again"}]}));
        }),
        ("empty_text_block", |m| {
            m.push(json!({"role": "assistant", "content": [{"type": "text", "text": ""}]}));
            m.push(json!({"role": "user", "content": "next"}));
        }),
    ];
    for (kind, breaker) in cases {
        let (server, _dir) = start(script(TWO_CALLS), kind);
        let (mut messages, assistant) = opening(server.addr);
        let results = run_tools(&assistant);
        messages.push(assistant);
        messages.push(results);
        breaker(&mut messages);
        let raw = post(server.addr, &body(&messages, false));
        assert_eq!(raw.status, 400, "{kind}");
        let v = &server.server.verdicts()[1];
        assert_eq!(v.violations[0].kind, kind, "{v:?}");
        assert!(!v.violations[0].excerpt.is_empty());
    }
}

#[test]
fn a_client_that_rewrites_an_earlier_message_is_flagged_append_only() {
    let (server, _dir) = start(script(TWO_CALLS), "rewrite");
    let (mut messages, assistant) = opening(server.addr);
    let results = run_tools(&assistant);
    messages.push(assistant);
    messages.push(results);
    // Moving cache_control (and writing the prompt as a block to carry it) is fine.
    messages[0] = json!({"role": "user", "content": [
        {"type": "text", "text": "Run both.", "cache_control": {"type": "ephemeral"}}]});
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    assert!(server.server.verdicts()[1].is_clean());
    // Rewriting the model's earlier tool call is not: the API accepts it, but every
    // cached byte after it is lost.
    messages[1]["content"][0]["input"]["command"] = json!("echo rewritten");
    let raw = post(server.addr, &body(&messages, true));
    assert_eq!(raw.status, 200);
    let v = &server.server.verdicts()[2];
    assert_eq!(v.violations.len(), 1, "{v:?}");
    let violation = &v.violations[0];
    assert_eq!(violation.rule, "append_only");
    assert_eq!(violation.message, Some(1));
    assert!(
        violation.excerpt.contains("rewritten"),
        "{}",
        violation.excerpt
    );
    assert!(
        v.lines()[0].starts_with("request #2 (c1 #2): append_only/message_changed at message 1"),
        "{}",
        v.lines()[0]
    );
}

#[test]
fn a_changed_system_prompt_mid_loop_is_flagged_between_turns_only_noted() {
    let (server, _dir) = start(script(TWO_CALLS), "system");
    let (mut messages, assistant) = opening(server.addr);
    let results = run_tools(&assistant);
    messages.push(assistant);
    messages.push(results);
    let mut b = body(&messages, true);
    b["system"] = json!("A different system prompt.");
    assert_eq!(post(server.addr, &b).status, 200);
    let v = &server.server.verdicts()[1];
    assert_eq!(v.violations[0].kind, "system_changed", "{v:?}");
    // A new turn may change it (with a note).
    let raw_last = &server.server.records()[1];
    assert_eq!(raw_last.answer.stop_reason.as_deref(), Some("end_turn"));
    messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Done."}]}));
    messages.push(json!({"role": "user", "content": "Another thing."}));
    let mut b = body(&messages, true);
    b["system"] = json!("Yet another system prompt.");
    assert_eq!(post(server.addr, &b).status, 200);
    let v = &server.server.verdicts()[2];
    assert!(v.is_clean(), "{v:?}");
    assert!(
        v.notes
            .iter()
            .any(|n| n.contains("prefix changed between turns")),
        "{v:?}"
    );
}

#[test]
fn reworded_and_doubled_markers_are_flagged_claude_codes_own_marker_is_not() {
    let (server, _dir) = start(script("[]"), "markers");
    let messages = vec![
        json!({"role": "user", "content": "Do it."}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Working."}]}),
        json!({"role": "user", "content": "[Request interrupted by user]"}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Stopped."}]}),
        json!({"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Stopped."}]}),
        json!({"role": "user", "content": "[Request interrupted: do Y instead]"}),
    ];
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    let v = &server.server.verdicts()[0];
    assert_eq!(v.violations.len(), 1, "{v:?}");
    assert_eq!(v.violations[0].rule, "marker_exact");
    assert_eq!(v.violations[0].message, Some(6));
    let doubled = vec![
        json!({"role": "user", "content": "Do it."}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Working."}]}),
        json!({"role": "user", "content": "[Request interrupted by user]"}),
        json!({"role": "user", "content": "[Request interrupted by user]"}),
    ];
    let (server, _dir) = start(script("[]"), "markers-2");
    assert_eq!(post(server.addr, &body(&doubled, true)).status, 200);
    let v = &server.server.verdicts()[0];
    assert_eq!(v.violations[0].rule, "marker_once", "{v:?}");
    assert_eq!(v.violations[0].message, Some(3));
}

#[test]
fn what_real_clients_send_is_accepted_and_passed_through() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "reply", "tool_calls": [{"name": "bash"}], "stop": "tool_use"},
                {"kind": "cut", "after_events": 4},
                {"kind": "reply", "text": "Done.", "stop": "end_turn"}]"#,
        ),
        "quirks",
    );
    let mut messages = vec![
        json!({"role": "system", "content": "A system entry inside messages (a beta)."}),
        json!({"role": "user", "content": [
            {"type": "text", "text": "Look at this."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
        ]}),
    ];
    let mut b = body(&messages, true);
    b["context_management"] = json!({"edits": []});
    b["output_config"] = json!({"effort": "high"});
    let raw = post(server.addr, &b);
    assert_eq!(raw.status, 200);
    let assistant = assistant_message(&raw, true);
    let results = run_tools(&assistant);
    messages.push(assistant);
    messages.push(results);
    // The next stream is cut; the client retries (SDK header), first streamed, then
    // falls back to a non-streamed request with the same messages.
    let mut b = body(&messages, true);
    b["context_management"] = json!({"edits": []});
    let raw = post_with(server.addr, &b, &[("x-stainless-retry-count", "0")]);
    assert!(!raw.complete);
    b["stream"] = json!(false);
    let raw = post_with(server.addr, &b, &[("x-stainless-retry-count", "1")]);
    assert_eq!(raw.status, 200);
    assert_eq!(raw.json()["content"][0]["text"], "Done.");
    let verdicts = server.server.verdicts();
    assert!(
        violations(&verdicts).is_empty(),
        "{:?}",
        violations(&verdicts)
    );
    let notes = verdicts
        .iter()
        .flat_map(|v| v.notes.clone())
        .collect::<Vec<_>>()
        .join("\n");
    for expected in [
        "system entries inside messages at [0]",
        "unknown top-level fields passed through: context_management, output_config",
        "unknown block types passed through: image",
        "retry 1 (x-stainless-retry-count)",
        "now without streaming (after: cut after 4 events)",
    ] {
        assert!(
            notes.contains(expected),
            "missing note {expected:?} in:\n{notes}"
        );
    }
}

#[test]
fn the_other_endpoints_answer_harmlessly_and_malformed_bodies_get_a_400() {
    let (server, _dir) = start(script("[]"), "endpoints");
    let get = |method: &str, target: &str, body: &[u8]| {
        send(
            server.addr,
            method,
            target,
            &[],
            body,
            Duration::from_secs(10),
        )
    };
    let raw = get("HEAD", "/", b"");
    assert_eq!(raw.status, 200);
    let raw = get("GET", "/v1/models", b"");
    assert_eq!(raw.status, 200);
    assert!(raw.json()["data"][0]["id"].is_string());
    let raw = get(
        "POST",
        "/v1/messages/count_tokens?beta=true",
        br#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#,
    );
    assert_eq!(raw.status, 200);
    assert!(raw.json()["input_tokens"].as_u64().is_some_and(|n| n > 0));
    let raw = get("GET", "/v1/organizations/me", b"");
    assert_eq!(raw.status, 404);
    assert_eq!(raw.json()["error"]["type"], "not_found_error");
    for bad in [
        &b"{not json"[..],
        b"[]",
        br#"{"messages": [{"role": "robot", "content": "x"}]}"#,
        br#"{"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "x"}]}]}"#,
        &[0xff, 0xfe, 0x00][..],
    ] {
        let raw = get("POST", "/v1/messages", bad);
        assert_eq!(raw.status, 400, "{}", String::from_utf8_lossy(bad));
        assert_eq!(raw.json()["type"], "error");
        assert_eq!(raw.json()["error"]["type"], "invalid_request_error");
    }
    // Every one of them was recorded; the unknown path too.
    let records = server.server.records();
    assert_eq!(records.len(), 9);
    assert_eq!(records[3].target, "/v1/organizations/me");
    assert_eq!(records[3].answer.played, "unknown endpoint");
}
