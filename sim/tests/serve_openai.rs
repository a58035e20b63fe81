//! `turnsim serve` speaking OpenAI: the Responses API and Chat Completions answer a
//! tool loop from the same scripted provider, carry its faults in OpenAI's shapes,
//! keep responses for `previous_response_id`, and catch broken clients (orphaned
//! call, mismatched call id, dropped reasoning item) with rule, request index and
//! excerpt, refusing what the real API refuses with its 400.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::net::SocketAddr;
use std::time::Duration;
use turnsim::serve::Verdict;
use turnsim::testing::serve::verdict::Violation;

fn shell_tool() -> Value {
    json!({"type": "function", "name": "exec_command", "description": "Runs a command",
           "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                          "required": ["cmd"]}})
}

fn responses_body(input: &[Value], stream: bool) -> Value {
    json!({"model": "gpt-5", "instructions": "Be brief.", "input": input,
           "tools": [shell_tool()], "stream": stream, "store": false,
           "include": ["reasoning.encrypted_content"], "reasoning": {"effort": "low"}})
}

const CALL_THEN_TEXT: &str = r#"[
    {"kind": "reply", "thinking": "Let me run it.", "tool_calls": [{"name": "exec_command"}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"}
]"#;

/// The finished output items of a Responses stream.
fn output_items(raw: &Raw) -> Vec<Value> {
    data(raw)
        .into_iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| e["item"].clone())
        .collect()
}

fn output_for(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| json!({"type": "function_call_output", "call_id": i["call_id"], "output": "ok"}))
        .collect()
}

#[test]
fn a_responses_tool_loop_streams_the_recorded_event_order_and_is_judged_clean() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-loop");
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run it."}]});
    let mut input = vec![user];
    let first = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(first.status, 200);
    let kinds: Vec<String> = data(&first)
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("response.created"));
    assert_eq!(kinds.last().map(String::as_str), Some("response.completed"));
    let items = output_items(&first);
    assert_eq!(items[0]["type"], "reasoning");
    assert!(items[0]["encrypted_content"].is_string(), "{}", items[0]);
    assert_eq!(items[1]["type"], "function_call");
    let args: Value = serde_json::from_str(items[1]["arguments"].as_str().unwrap()).unwrap();
    assert!(
        args["cmd"].as_str().unwrap().contains("turnsim ran"),
        "{args}"
    );
    input.extend(items.iter().cloned());
    input.extend(output_for(&items));
    let second = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(second.status, 200, "{}", second.text());
    let text = output_items(&second);
    assert_eq!(text[0]["content"][0]["text"], "Done.");
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts.iter().all(|v| v.is_clean()), "{verdicts:?}");
}

#[test]
fn a_chat_completions_tool_loop_streams_tool_call_deltas_and_done_then_answers_json() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-chat");
    let tools = json!([{"type": "function", "function": {"name": "exec_command",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}]);
    let mut messages = vec![json!({"role": "user", "content": "Run it."})];
    let first = post_to(
        server.addr,
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "messages": messages, "tools": tools, "stream": true}),
    );
    assert_eq!(first.status, 200);
    assert!(
        first.text().ends_with("data: [DONE]\n\n"),
        "{}",
        first.text()
    );
    let chunks = data(&first);
    let open = chunks
        .iter()
        .find(|c| c["choices"][0]["delta"]["tool_calls"][0]["id"].is_string())
        .expect("a call opens");
    let call_id = open["choices"][0]["delta"]["tool_calls"][0]["id"].clone();
    let args: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert!(args.contains("\"cmd\""), "{args}");
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
    messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "exec_command", "arguments": args}}]}));
    messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": "ok"}));
    let second = post_to(
        server.addr,
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "messages": messages, "tools": tools}),
    );
    assert_eq!(second.status, 200, "{}", second.text());
    let body = second.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "Done.");
    assert!(server.server.verdicts().iter().all(|v| v.is_clean()));
}

#[test]
fn models_are_listed_in_openai_shape_unless_the_client_speaks_anthropic() {
    let (server, _dir) = start(script("[]"), "oa-models");
    let get = |headers: &[(&str, &str)]| {
        send(
            server.addr,
            "GET",
            "/v1/models",
            headers,
            b"",
            Duration::from_secs(5),
        )
        .json()
    };
    let openai = get(&[]);
    assert_eq!(openai["object"], "list");
    assert_eq!(openai["data"][0]["object"], "model");
    let anthropic = get(&[("anthropic-version", "2023-06-01")]);
    assert_eq!(anthropic["data"][0]["type"], "model");
}

#[test]
fn injected_faults_are_openai_errors_with_retry_headers() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "status", "status": 429, "retry_after": 2}, {"kind": "status", "status": 500},
                   {"kind": "status", "status": 529}]"#,
        ),
        "oa-faults",
    );
    let input = [json!({"role": "user", "content": "hi"})];
    let r429 = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(r429.status, 429);
    assert_eq!(r429.header("retry-after"), Some("2"));
    assert_eq!(r429.header("retry-after-ms"), Some("2000"));
    assert_eq!(r429.json()["error"]["code"], "rate_limit_exceeded");
    let r500 = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(r500.status, 500);
    assert!(r500.json()["error"]["message"].is_string());
    let r503 = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(r503.status, 503);
}

#[test]
fn a_cut_inside_a_function_calls_arguments_ends_the_body_inside_them() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "cut", "after_events": 4, "mid_event": true,
                    "reply": {"kind": "reply", "tool_calls": [{"name": "exec_command"}], "stop": "tool_use"}}]"#,
        ),
        "oa-cut",
    );
    let input = [json!({"role": "user", "content": "hi"})];
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 200);
    assert!(!raw.complete, "the body is truncated");
    let text = raw.text();
    assert!(!text.contains("response.completed"));
    let last = text.rsplit("\n\n").next().unwrap_or_default();
    assert!(last.contains("function_call_arguments"), "{text}");
    assert_eq!(
        server.server.records()[0].answer.outcome,
        "cut after 4 events and half of the next"
    );
}

#[test]
fn an_unknown_previous_response_id_is_a_400_naming_the_param() {
    let (server, _dir) = start(script("[]"), "oa-prev-unknown");
    let body = continuing(&[json!({"role": "user", "content": "hi"})], "resp_nope");
    let raw = post_to(server.addr, "/v1/responses", &body);
    assert_eq!(raw.status, 400);
    assert_eq!(raw.json()["error"]["param"], "previous_response_id");
}

/// Plays the first response of [`CALL_THEN_TEXT`] and returns the user item and the
/// output items.
fn first_turn(addr: SocketAddr) -> (Value, Vec<Value>, String) {
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run it."}]});
    let first = post_to(
        addr,
        "/v1/responses",
        &responses_body(std::slice::from_ref(&user), true),
    );
    assert_eq!(first.status, 200);
    let id = data(&first)
        .last()
        .and_then(|e| e["response"]["id"].as_str().map(str::to_owned))
        .unwrap_or_default();
    (user, output_items(&first), id)
}

/// A Responses body that continues response `id` with `input`.
fn continuing(input: &[Value], id: &str) -> Value {
    let mut body = responses_body(input, false);
    body["previous_response_id"] = json!(id);
    body
}

/// The input of a stateless second request: the user item and the first response's
/// output items, sent again.
fn resent(user: Value, items: &[Value]) -> Vec<Value> {
    let mut input = vec![user];
    input.extend(items.iter().cloned());
    input
}

/// The violation of `rule` in `v`.
fn violation<'a>(v: &'a Verdict, rule: &str) -> &'a Violation {
    v.violations
        .iter()
        .find(|x| x.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} violation: {:?}", v.lines()))
}

#[test]
fn a_previous_response_id_chain_is_judged_against_the_stored_context() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-prev");
    let (_, items, id) = first_turn(server.addr);
    let body = continuing(&output_for(&items), &id);
    let ok = post_to(server.addr, "/v1/responses", &body);
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["previous_response_id"], json!(id));
    assert!(
        server.server.verdicts()[1].is_clean(),
        "{:?}",
        server.server.verdicts()[1]
    );
}

#[test]
fn an_orphaned_function_call_is_refused_and_flagged_with_rule_index_and_excerpt() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-orphan");
    let (user, items, _) = first_turn(server.addr);
    let mut input = resent(user, &items);
    input.push(json!({"role": "user", "content": "and now?"}));
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 400);
    let err = raw.json();
    assert_eq!(err["error"]["type"], "invalid_request_error");
    let call_id = items[1]["call_id"].as_str().unwrap();
    assert!(
        err["error"]["message"].as_str().unwrap().contains(call_id),
        "{err}"
    );
    let v = &server.server.verdicts()[1];
    assert_eq!(v.request, 1);
    let pairing = violation(v, "pairing");
    assert_eq!(
        pairing.message,
        Some(2),
        "input[2] is the call: {pairing:?}"
    );
    assert!(pairing.excerpt.contains(call_id), "{}", pairing.excerpt);
}

#[test]
fn a_mismatched_call_id_is_refused_and_flagged() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-mismatch");
    let (user, items, _) = first_turn(server.addr);
    let mut input = resent(user, &items);
    input.push(json!({"type": "function_call_output", "call_id": "call_wrong", "output": "ok"}));
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 400);
    let v = &server.server.verdicts()[1];
    let pairing = violation(v, "pairing");
    assert!(
        v.lines()
            .iter()
            .any(|l| l.contains("call_wrong") || l.contains(items[1]["call_id"].as_str().unwrap())),
        "{:?}",
        v.lines()
    );
    assert!(pairing.message.is_some());
}

#[test]
fn a_dropped_reasoning_item_is_flagged_with_the_call_it_preceded() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-reasoning");
    let (user, items, _) = first_turn(server.addr);
    let mut input = vec![user];
    input.extend(items.iter().filter(|i| i["type"] != "reasoning").cloned());
    input.extend(output_for(&items));
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 200);
    let v = &server.server.verdicts()[1];
    assert_eq!(v.request, 1);
    let kept = violation(v, "reasoning_kept");
    assert_eq!(kept.kind, "dropped");
    assert_eq!(kept.message, Some(1), "input[1] is the call");
    assert!(
        kept.excerpt.contains(items[0]["id"].as_str().unwrap()),
        "{}",
        kept.excerpt
    );
}

#[test]
fn an_echoed_reasoning_item_with_content_null_is_not_a_change() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-codex-echo");
    let (user, mut items, _) = first_turn(server.addr);
    items[0]["content"] = Value::Null;
    let mut input = resent(user, &items);
    input.extend(output_for(&items));
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 200);
    assert!(
        server.server.verdicts()[1].is_clean(),
        "{:?}",
        server.server.verdicts()[1]
    );
}

#[test]
fn a_chain_that_leaves_the_stored_call_unanswered_is_refused() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-prev-orphan");
    let (_, items, id) = first_turn(server.addr);
    let body = continuing(&[json!({"role": "user", "content": "go on"})], &id);
    let raw = post_to(server.addr, "/v1/responses", &body);
    assert_eq!(raw.status, 400);
    let v = &server.server.verdicts()[1];
    let pairing = violation(v, "pairing");
    assert_eq!(pairing.message, None, "the call is in the stored context");
    assert!(
        pairing
            .detail
            .starts_with("in the context of previous_response_id"),
        "{}",
        pairing.detail
    );
    assert!(
        pairing
            .excerpt
            .contains(items[1]["call_id"].as_str().unwrap())
    );
}

#[test]
fn a_recording_of_openai_traffic_is_judged_again_to_the_same_verdicts() {
    let rec = temp_dir("oa-rec");
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "oa-record", |c| {
        c.record = Some(rec.clone())
    });
    let (_, items, id) = first_turn(server.addr);
    let body = continuing(&output_for(&items), &id);
    assert_eq!(post_to(server.addr, "/v1/responses", &body).status, 200);
    let live = server.server.verdicts();
    let again = turnsim::testing::serve::recheck::check_dir(&rec).expect("the recording reads");
    assert!(again.mismatches.is_empty(), "{:?}", again.mismatches);
    assert_eq!(again.verdicts.len(), 2);
    assert_eq!(again.verdicts[1].violations, live[1].violations);
    assert!(
        again.verdicts[1]
            .notes
            .iter()
            .any(|n| n == &format!("continues {id}"))
    );
}

#[test]
fn a_stream_that_hangs_midway_never_sends_the_completion() {
    let (server, _dir) = start(
        script(r#"[{"kind": "hang", "after_events": 3}]"#),
        "oa-hang",
    );
    let input = [json!({"role": "user", "content": "hi"})];
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 200);
    assert!(!raw.complete);
    assert!(raw.text().contains("response.created"), "{}", raw.text());
    assert!(!raw.text().contains("response.completed"), "{}", raw.text());
    assert!(!raw.text().contains("output_item.done"), "{}", raw.text());
}

/// The input of a second request that sends the first response's reasoning back as an
/// `item_reference` (the AI SDK's default with a stored response) and every other item
/// in full.
fn by_reference(user: Value, items: &[Value]) -> Vec<Value> {
    let mut input = vec![user];
    for i in items {
        if i["type"] == "reasoning" {
            input.push(json!({"type": "item_reference", "id": i["id"]}));
        } else {
            input.push(i.clone());
        }
    }
    input.extend(output_for(items));
    input
}

#[test]
fn a_reasoning_item_sent_back_by_reference_is_kept_and_judged_alike_by_check() {
    let rec = temp_dir("oa-itemref-rec");
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "oa-itemref", |c| {
        c.record = Some(rec.clone())
    });
    let (user, items, _) = first_turn(server.addr);
    assert_eq!(items[0]["type"], "reasoning", "{items:?}");
    let raw = post_to(
        server.addr,
        "/v1/responses",
        &responses_body(&by_reference(user, &items), true),
    );
    assert_eq!(raw.status, 200);
    let live = server.server.verdicts();
    assert!(live[1].is_clean(), "{:?}", live[1].lines());
    assert_eq!(
        live[1].conversation, live[0].conversation,
        "one conversation, not split at the reference"
    );
    assert_eq!(live[1].conversation_request, 1);
    let again = turnsim::testing::serve::recheck::check_dir(&rec).expect("the recording reads");
    assert!(again.mismatches.is_empty(), "{:?}", again.mismatches);
    assert_eq!(again.verdicts.len(), 2);
    assert_eq!(again.verdicts[1].violations, live[1].violations);
    assert_eq!(again.verdicts[1].conversation, live[1].conversation);
}

#[test]
fn a_reference_to_an_item_nobody_served_stays_unjudged_and_the_call_is_still_paired() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "oa-itemref-unknown");
    let (user, items, _) = first_turn(server.addr);
    let mut input = by_reference(user, &items);
    input[1] = json!({"type": "item_reference", "id": "rs_nobody_served"});
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 200);
    let v = &server.server.verdicts()[1];
    let kept = violation(v, "reasoning_kept");
    assert_eq!(kept.kind, "dropped");
    assert!(
        v.violations.iter().all(|x| x.rule != "pairing"),
        "{:?}",
        v.lines()
    );
}

#[test]
fn a_recorded_request_that_cannot_be_judged_again_keeps_its_verdict_and_says_why() {
    let rec = temp_dir("oa-unjudgeable-rec");
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "oa-unjudgeable", |c| {
        c.record = Some(rec.clone())
    });
    let (_, items, _) = first_turn(server.addr);
    let body = continuing(&output_for(&items), "resp_never_recorded");
    // Unknown to the live server too: refused, and recorded as refused.
    assert_eq!(post_to(server.addr, "/v1/responses", &body).status, 400);
    let again = turnsim::testing::serve::recheck::check_dir(&rec).expect("the recording reads");
    assert_eq!(
        again.verdicts.len(),
        1,
        "the refused request had no verdict to keep"
    );
    assert_eq!(
        again.mismatches,
        [
            "request #1: not judged again (it continues resp_never_recorded, which the recording holds no completed response for); the recorded verdict is kept"
        ]
    );
}

#[test]
fn check_on_a_recording_reports_the_dropped_reasoning_the_live_server_found() {
    let rec = temp_dir("oa-dropped-rec");
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "oa-dropped-record", |c| {
        c.record = Some(rec.clone())
    });
    let (user, items, _) = first_turn(server.addr);
    let mut input = vec![user];
    input.extend(items.iter().filter(|i| i["type"] != "reasoning").cloned());
    input.extend(output_for(&items));
    let raw = post_to(server.addr, "/v1/responses", &responses_body(&input, true));
    assert_eq!(raw.status, 200);
    assert_eq!(
        violation(&server.server.verdicts()[1], "reasoning_kept").kind,
        "dropped"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["check", rec.to_str().expect("utf-8 path")])
        .output()
        .expect("turnsim check runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "a violation is exit 1:\n{text}");
    assert!(text.contains("reasoning_kept"), "{text}");
    assert!(text.contains("was not sent back"), "{text}");
}
