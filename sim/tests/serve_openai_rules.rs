//! `turnsim serve` holding OpenAI requests to OpenAI's own rules (the judge's
//! `rules_openai` validators): a request the real API refuses is refused with its 400
//! and a verdict naming the rule and the wire index, even when the wire reader cannot
//! read the body, and `turnsim check DIR` reaches the same verdicts from the recording.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::net::SocketAddr;
use std::time::Duration;
use turnsim::serve::Verdict;

const TEXT: &str = r#"[{"kind": "reply", "text": "ok", "stop": "end_turn"}]"#;

fn post_to(addr: SocketAddr, path: &str, body: &Value) -> Raw {
    send(
        addr,
        "POST",
        path,
        &[
            ("content-type", "application/json"),
            ("authorization", "Bearer dummy"),
        ],
        body.to_string().as_bytes(),
        Duration::from_secs(10),
    )
}

fn user() -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]})
}

/// (rule, kind, message) of each violation.
fn violations(v: &Verdict) -> Vec<(String, String, Option<usize>)> {
    v.violations
        .iter()
        .map(|x| (x.rule.clone(), x.kind.clone(), x.message))
        .collect()
}

#[test]
fn a_reasoning_item_without_its_follower_is_refused_naming_the_rule() {
    let (server, _dir) = start(script(TEXT), "oa-rules-reasoning");
    let input = [
        user(),
        json!({"type": "reasoning", "id": "rs_7", "summary": []}),
        user(),
    ];
    let body = json!({"model": "gpt-5", "input": input});
    let raw = post_to(server.addr, "/v1/responses", &body);
    assert_eq!(raw.status, 400);
    let message = raw.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        message,
        "input[1]: reasoning item rs_7 is followed by a user message, not by the item it preceded (rule reasoning_followed)"
    );
    let v = &server.server.verdicts()[0];
    assert_eq!(
        violations(v),
        [(
            "request_valid".into(),
            "reasoning_without_follower".into(),
            Some(1)
        )]
    );
}

#[test]
fn an_item_id_without_its_prefix_is_refused_and_a_prefixed_one_is_not() {
    let (server, _dir) = start(script(TEXT), "oa-rules-prefix");
    let assistant = |id: &str| json!({"type": "message", "id": id, "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]});
    let bad = json!({"model": "gpt-5", "input": [user(), assistant("item_3bc5"), user()]});
    assert_eq!(post_to(server.addr, "/v1/responses", &bad).status, 400);
    let good = json!({"model": "gpt-5", "input": [user(), assistant("msg_3bc5"), user()]});
    assert_eq!(post_to(server.addr, "/v1/responses", &good).status, 200);
    let verdicts = server.server.verdicts();
    assert_eq!(
        violations(&verdicts[0]),
        [("request_valid".into(), "bad_item_id".into(), Some(1))]
    );
    assert!(verdicts[1].is_clean(), "{:?}", verdicts[1].lines());
}

#[test]
fn a_body_the_reader_refuses_gets_a_verdict_that_check_reaches_again() {
    let rec = temp_dir("oa-rules-unread-rec");
    let (server, _dir) = start_with(script(TEXT), "oa-rules-unread", |c| {
        c.record = Some(rec.clone())
    });
    let call =
        json!({"type": "function_call", "call_id": "c1", "name": "sh", "arguments": {"cmd": "ls"}});
    let output = json!({"type": "function_call_output", "call_id": "c1", "output": "ok"});
    let responses = json!({"model": "gpt-5", "input": [user(), call, output]});
    assert_eq!(
        post_to(server.addr, "/v1/responses", &responses).status,
        400
    );
    let chat = json!({"model": "gpt-4o", "messages": []});
    assert_eq!(
        post_to(server.addr, "/v1/chat/completions", &chat).status,
        400
    );
    let live = server.server.verdicts();
    assert_eq!(
        violations(&live[0]),
        [(
            "request_valid".into(),
            "arguments_not_string".into(),
            Some(1)
        )]
    );
    assert_eq!(
        violations(&live[1]),
        [("request_valid".into(), "empty_messages".into(), None)]
    );
    assert!(
        live[0].notes[0].starts_with("the wire reader refused the body: "),
        "{:?}",
        live[0].notes
    );
    let again = turnsim::testing::serve::recheck::check_dir(&rec).expect("the recording reads");
    assert!(again.mismatches.is_empty(), "{:?}", again.mismatches);
    assert_eq!(again.verdicts.len(), 2);
    assert_eq!(again.verdicts[0].violations, live[0].violations);
    assert_eq!(again.verdicts[1].violations, live[1].violations);
}

#[test]
fn a_chat_tool_message_after_no_calls_is_refused_with_the_rule_and_index() {
    let (server, _dir) = start(script(TEXT), "oa-rules-chat");
    let messages = json!([
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    ]);
    let raw = post_to(
        server.addr,
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "messages": messages}),
    );
    assert_eq!(raw.status, 400);
    let v = &server.server.verdicts()[0];
    assert_eq!(
        violations(v),
        [("pairing".into(), "tool_without_calls".into(), Some(2))]
    );
    assert_eq!(
        v.violations[0].detail,
        "messages[2]: tool message for c1 follows no assistant message with tool_calls (rule tool_follows_calls)"
    );
    // The near miss: the same tool message after the call it answers.
    let answered = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    ]);
    let ok = post_to(
        server.addr,
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "messages": answered}),
    );
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert!(
        server.server.verdicts()[1].is_clean(),
        "{:?}",
        server.server.verdicts()[1].lines()
    );
}

#[test]
fn a_chat_tool_with_an_mcp_style_name_is_refused_at_its_tools_index() {
    let (server, _dir) = start(script(TEXT), "oa-rules-fn-name");
    let tool = |name: &str| json!({"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}});
    let body = |name: &str| {
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}],
               "tools": [tool("read_file"), tool(name)]})
    };
    let raw = post_to(server.addr, "/v1/chat/completions", &body("get_/whoami"));
    assert_eq!(raw.status, 400);
    let v = &server.server.verdicts()[0];
    assert_eq!(
        violations(v),
        [("request_valid".into(), "bad_function_name".into(), None)]
    );
    assert_eq!(
        v.violations[0].detail,
        "tools[1]: function.name \"get_/whoami\" holds a character other than letters, digits, '_', '-' and '.' (rule function_name_valid)"
    );
    // The near miss: a dotted name, which the API takes.
    let ok = post_to(server.addr, "/v1/chat/completions", &body("github.get_me"));
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert!(
        server.server.verdicts()[1].is_clean(),
        "{:?}",
        server.server.verdicts()[1].lines()
    );
}
