//! Each Chat Completions rule: messages the API rejects, and a near miss it accepts.

use super::Breach;
use super::chat::judge;
use super::table::{Api, CHAT, rule_of};
use serde_json::{Value, json};

fn breaches(messages: Value) -> Vec<Breach> {
    judge(&messages)
}

fn kinds(messages: Value) -> Vec<(&'static str, Option<usize>)> {
    breaches(messages)
        .into_iter()
        .map(|b| (b.kind, b.at))
        .collect()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn asks(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "type": "function", "function": {"name": "ls", "arguments": "{}"}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

fn tool(id: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": "ok"})
}

#[test]
fn every_chat_kind_belongs_to_exactly_one_rule_with_a_source() {
    let mut all: Vec<&str> = CHAT.iter().flat_map(|r| r.kinds.iter().copied()).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a kind is named by two rules");
    assert!(CHAT.iter().all(|r| r.source.starts_with("https://")));
    assert_eq!(
        rule_of(Api::Chat, "tool_without_calls").map(|r| r.family),
        Some("pairing")
    );
}

#[test]
fn a_clean_parallel_tool_loop_has_no_breach() {
    let m = json!([{"role": "system", "content": "s"}, user("go"), asks(&["c1", "c2"]), tool("c2"), tool("c1"), {"role": "assistant", "content": "done"}, user("more")]);
    assert_eq!(kinds(m), vec![]);
}

#[test]
fn empty_messages_are_rejected_one_message_is_not() {
    let b = breaches(json!([]));
    assert_eq!((b[0].kind, b[0].at), ("empty_messages", None));
    assert_eq!(
        b[0].finding(Api::Chat, 0).detail,
        "messages: messages is an empty array (rule messages_not_empty)"
    );
    assert_eq!(kinds(json!([user("hi")])), vec![]);
}

#[test]
fn an_unknown_role_is_rejected_the_legacy_function_role_is_not() {
    assert_eq!(
        kinds(json!([{"role": "model", "content": "x"}])),
        vec![("bad_role", Some(0))]
    );
    assert_eq!(
        kinds(json!([user("go"), {"role": "function", "name": "f", "content": "x"}])),
        vec![]
    );
}

#[test]
fn an_assistant_message_with_null_content_and_no_calls_is_rejected_one_with_calls_is_not() {
    let b = breaches(json!([user("go"), {"role": "assistant", "content": null}]));
    assert_eq!((b[0].kind, b[0].at), ("assistant_without_content", Some(1)));
    assert_eq!(
        kinds(json!([user("go"), {"role": "assistant"}])),
        vec![("assistant_without_content", Some(1))]
    );
    assert_eq!(
        kinds(json!([user("go"), asks(&["c1"]), tool("c1")])),
        vec![]
    );
    assert_eq!(
        kinds(json!([user("go"), {"role": "assistant", "content": ""}])),
        vec![]
    );
}

#[test]
fn a_tool_call_of_another_type_is_rejected_function_and_custom_are_not() {
    let mut m = asks(&["c1"]);
    m["tool_calls"][0]["type"] = json!("code");
    assert_eq!(
        kinds(json!([user("go"), m.clone(), tool("c1")])),
        vec![("bad_tool_call_type", Some(1))]
    );
    m["tool_calls"][0]["type"] = json!("custom");
    m["tool_calls"][0]["custom"] = json!({"name": "ls", "input": "x"});
    assert_eq!(kinds(json!([user("go"), m, tool("c1")])), vec![]);
}

#[test]
fn object_arguments_are_rejected_a_string_of_them_is_not() {
    let mut m = asks(&["c1"]);
    m["tool_calls"][0]["function"]["arguments"] = json!({"p": 1});
    let b = breaches(json!([user("go"), m.clone(), tool("c1")]));
    assert_eq!((b[0].kind, b[0].at), ("arguments_not_string", Some(1)));
    assert_eq!(
        b[0].detail,
        "tool_calls[0].function.arguments is an object, not a string"
    );
    m["tool_calls"][0]["function"]["arguments"] = json!("{\"p\":1}");
    assert_eq!(kinds(json!([user("go"), m, tool("c1")])), vec![]);
}

#[test]
fn a_tool_message_after_no_calls_or_for_another_id_is_rejected() {
    let b = breaches(json!([user("go"), tool("c1")]));
    assert_eq!((b[0].kind, b[0].at), ("tool_without_calls", Some(1)));
    // After a user message the assistant's calls are closed.
    assert_eq!(
        kinds(json!([
            user("go"),
            asks(&["c1"]),
            tool("c1"),
            user("x"),
            tool("c1")
        ])),
        vec![("tool_without_calls", Some(4))]
    );
    assert_eq!(
        kinds(json!([user("go"), asks(&["c1"]), tool("c9")])),
        vec![
            ("call_without_tool_message", Some(1)),
            ("tool_answers_no_call", Some(2))
        ]
    );
    assert_eq!(
        kinds(json!([user("go"), asks(&["c1"]), tool("c1")])),
        vec![]
    );
}

#[test]
fn a_call_left_without_its_tool_message_is_rejected_at_the_asking_message() {
    let b = breaches(json!([
        user("go"),
        asks(&["c1", "c2"]),
        tool("c1"),
        user("where is c2?")
    ]));
    assert_eq!((b[0].kind, b[0].at), ("call_without_tool_message", Some(1)));
    assert_eq!(
        b[0].detail,
        "the assistant message's tool_calls c2 have no tool message before the next message"
    );
    assert_eq!(
        kinds(json!([user("go"), asks(&["c1"])])),
        vec![("call_without_tool_message", Some(1))]
    );
    assert_eq!(
        kinds(json!([
            user("go"),
            asks(&["c1", "c2"]),
            tool("c1"),
            tool("c2"),
            user("ok")
        ])),
        vec![]
    );
}

#[test]
fn one_id_answered_twice_or_called_twice_is_rejected() {
    let b = breaches(json!([user("go"), asks(&["c1"]), tool("c1"), tool("c1")]));
    assert_eq!((b[0].kind, b[0].at), ("duplicate_tool_message", Some(3)));
    assert_eq!(
        b[0].detail,
        "tool_call_id c1 is already answered by messages[2]"
    );
    assert_eq!(
        kinds(json!([
            user("go"),
            asks(&["c1"]),
            tool("c1"),
            asks(&["c1"]),
            tool("c1")
        ])),
        vec![
            ("duplicate_call_id", Some(3)),
            ("duplicate_tool_message", Some(4))
        ]
    );
    assert_eq!(
        kinds(json!([
            user("go"),
            asks(&["c1"]),
            tool("c1"),
            asks(&["c2"]),
            tool("c2")
        ])),
        vec![]
    );
}
