//! Each Responses rule: an input the API rejects, and a near miss it accepts.

use super::Breach;
use super::responses::judge;
use super::table::{Api, RESPONSES, rule_of};
use crate::openai::neutral::{Item, Reasoning};
use serde_json::{Value, json};

fn breaches(input: Value) -> Vec<Breach> {
    judge(&input, &[], &|_| None)
}

/// (kind, index) of each breach.
fn kinds(input: Value) -> Vec<(&'static str, Option<usize>)> {
    breaches(input)
        .into_iter()
        .map(|b| (b.kind, b.at))
        .collect()
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn call(call_id: &str) -> Value {
    json!({"type": "function_call", "call_id": call_id, "name": "sh", "arguments": "{}"})
}

fn output(call_id: &str) -> Value {
    json!({"type": "function_call_output", "call_id": call_id, "output": "ok"})
}

fn reasoning(id: &str) -> Value {
    json!({"type": "reasoning", "id": id, "summary": []})
}

#[test]
fn every_responses_kind_belongs_to_exactly_one_rule_with_a_source() {
    let mut all: Vec<&str> = RESPONSES
        .iter()
        .flat_map(|r| r.kinds.iter().copied())
        .collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "a kind is named by two rules");
    assert!(RESPONSES.iter().all(|r| r.source.starts_with("https://")));
    assert_eq!(
        rule_of(Api::Responses, "call_without_output").map(|r| r.family),
        Some("pairing")
    );
    assert_eq!(
        rule_of(Api::Responses, "bad_item_id").map(|r| r.id),
        Some("item_id_prefix")
    );
}

#[test]
fn a_clean_tool_loop_with_reasoning_has_no_breach() {
    let input = json!([
        user("go"),
        reasoning("rs_1"),
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "sh", "arguments": "{}"},
        output("c1"),
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
        {"role": "user", "content": "thanks"}
    ]);
    assert_eq!(kinds(input), vec![]);
}

#[test]
fn an_item_id_without_its_types_prefix_is_rejected_one_with_it_is_not() {
    let bad = json!([user("go"), {"type": "function_call", "id": "call_9", "call_id": "call_9", "name": "sh", "arguments": "{}"}, output("call_9")]);
    let b = breaches(bad);
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!((b[0].kind, b[0].at), ("bad_item_id", Some(1)));
    assert_eq!(
        b[0].detail,
        "function_call id \"call_9\" does not begin with \"fc\""
    );
    let msg = json!([{"type": "message", "id": "item_3bc5", "role": "assistant", "content": "hi"}]);
    assert_eq!(kinds(msg), vec![("bad_item_id", Some(0))]);
    let odd = json!([{"type": "message", "id": "msg.1", "role": "assistant", "content": "hi"}]);
    assert_eq!(kinds(odd), vec![("bad_item_id", Some(0))]);
    let near = json!([{"type": "message", "id": "msg_a-1", "role": "assistant", "content": "hi"}, reasoning("rs_2"), {"type": "message", "id": "msg_b", "role": "assistant", "content": "x"}]);
    assert_eq!(kinds(near), vec![]);
}

#[test]
fn an_item_id_used_twice_is_rejected_even_against_the_previous_response() {
    let twice = json!([
        {"type": "message", "id": "msg_1", "role": "assistant", "content": "a"},
        {"type": "message", "id": "msg_1", "role": "assistant", "content": "a"}
    ]);
    let b = breaches(twice);
    assert_eq!((b[0].kind, b[0].at), ("duplicate_item_id", Some(1)));
    assert_eq!(b[0].detail, "item id msg_1 is already used by input[0]");
    let context = [Item::ToolCall {
        call_id: "c1".into(),
        name: "sh".into(),
        arguments: "{}".into(),
        item_id: Some("fc_1".into()),
    }];
    let resent = json!([{"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "sh", "arguments": "{}"}, output("c1")]);
    let kinds: Vec<_> = judge(&resent, &context, &|_| None)
        .iter()
        .map(|b| b.kind)
        .collect();
    assert_eq!(kinds, ["duplicate_item_id", "duplicate_call_id"]);
    // The near miss: only the output is sent on.
    assert_eq!(judge(&json!([output("c1")]), &context, &|_| None), vec![]);
}

#[test]
fn a_tool_role_message_is_rejected_a_developer_one_is_not() {
    let bad = json!([{"role": "tool", "content": "x"}]);
    assert_eq!(kinds(bad), vec![("bad_role", Some(0))]);
    assert_eq!(
        kinds(json!([{"role": "developer", "content": "x"}, user("go")])),
        vec![]
    );
}

#[test]
fn input_text_in_an_assistant_message_is_rejected_output_text_is_not() {
    let bad = json!([user("go"), {"role": "assistant", "content": [{"type": "input_text", "text": "hi"}]}]);
    let b = breaches(bad);
    assert_eq!((b[0].kind, b[0].at), ("part_not_for_role", Some(1)));
    assert_eq!(
        b[0].detail,
        "a assistant message holds a \"input_text\" part at content[0] (it takes output_text, refusal)"
    );
    let user_out = json!([{"role": "user", "content": [{"type": "output_text", "text": "hi"}]}]);
    assert_eq!(kinds(user_out), vec![("part_not_for_role", Some(0))]);
    let near = json!([user("go"), {"role": "assistant", "content": [{"type": "output_text", "text": "hi"}, {"type": "refusal", "refusal": "no"}]}]);
    assert_eq!(kinds(near), vec![]);
}

#[test]
fn output_text_in_a_function_call_output_is_rejected_input_text_is_not() {
    let with = |part: Value| json!([call("c1"), {"type": "function_call_output", "call_id": "c1", "output": [part]}]);
    assert_eq!(
        kinds(with(json!({"type": "output_text", "text": "r"}))),
        vec![("output_part_not_allowed", Some(1))]
    );
    assert_eq!(
        kinds(with(json!({"type": "input_text", "text": "r"}))),
        vec![]
    );
}

#[test]
fn an_empty_call_id_or_name_is_rejected_a_one_letter_one_is_not() {
    let bad = json!([{"type": "function_call", "call_id": "", "name": "", "arguments": "{}"}]);
    let b = breaches(bad);
    let got: Vec<_> = b.iter().map(|b| (b.kind, b.detail.as_str())).collect();
    assert_eq!(
        got,
        [
            ("empty_call_field", "function_call has an empty call_id"),
            ("empty_call_field", "function_call has an empty name")
        ]
    );
    let out = json!([{"type": "function_call_output", "call_id": "", "output": "x"}]);
    assert_eq!(kinds(out), vec![("empty_call_field", Some(0))]);
    assert_eq!(kinds(json!([call("c"), output("c")])), vec![]);
}

#[test]
fn object_arguments_are_rejected_a_string_of_them_is_not() {
    let bad = json!([{"type": "function_call", "call_id": "c1", "name": "sh", "arguments": {"cmd": "ls"}}, output("c1")]);
    let b = breaches(bad);
    assert_eq!((b[0].kind, b[0].at), ("arguments_not_string", Some(0)));
    assert_eq!(
        b[0].detail,
        "function_call arguments is an object, not a string"
    );
    assert_eq!(
        kinds(
            json!([{"type": "function_call", "call_id": "c1", "name": "sh", "arguments": "{\"cmd\":\"ls\"}"}, output("c1")])
        ),
        vec![]
    );
}

#[test]
fn an_output_for_no_earlier_call_is_rejected_one_after_its_call_is_not() {
    let bad = json!([user("go"), output("c9")]);
    let b = breaches(bad);
    assert_eq!((b[0].kind, b[0].at), ("output_without_call", Some(1)));
    assert_eq!(
        b[0].detail,
        "function_call_output answers call_id c9, which no function_call before it has"
    );
    // Before its call is not after it.
    assert_eq!(
        kinds(json!([output("c1"), call("c1")])),
        vec![
            ("call_without_output", Some(1)),
            ("output_without_call", Some(0))
        ]
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
    );
    // A named output answers no call and is accepted.
    let named = json!([{"type": "function_call_output", "name": "goal", "namespace": "agent", "output": "g"}]);
    assert_eq!(kinds(named), vec![]);
    // An output whose call is in the previous response.
    let context = [Item::ToolCall {
        call_id: "c9".into(),
        name: "sh".into(),
        arguments: "{}".into(),
        item_id: None,
    }];
    assert_eq!(judge(&json!([output("c9")]), &context, &|_| None), vec![]);
}

#[test]
fn a_call_without_output_is_rejected_wherever_it_is_one_answered_later_is_not() {
    let bad = json!([user("go"), call("c1"), user("and now?")]);
    let b = breaches(bad);
    assert_eq!((b[0].kind, b[0].at), ("call_without_output", Some(1)));
    assert!(b[0].excerpt.contains("c1"), "{}", b[0].excerpt);
    // Not the very next item: a message between call and output is the API's business
    // only through other rules.
    assert_eq!(
        kinds(json!([
            user("go"),
            call("c1"),
            call("c2"),
            output("c2"),
            output("c1")
        ])),
        vec![]
    );
    let context = [Item::ToolCall {
        call_id: "c1".into(),
        name: "sh".into(),
        arguments: "{}".into(),
        item_id: None,
    }];
    let open = judge(&json!([user("go on")]), &context, &|_| None);
    assert_eq!(open.len(), 1);
    assert_eq!((open[0].kind, open[0].at), ("call_without_output", None));
    assert_eq!(
        open[0].finding(Api::Responses, 3).detail,
        "in the context of previous_response_id: function_call c1 has no function_call_output (rule call_answered)"
    );
}

#[test]
fn two_outputs_for_one_call_or_two_calls_with_one_id_are_rejected() {
    let twice = json!([call("c1"), output("c1"), output("c1")]);
    let b = breaches(twice);
    assert_eq!((b[0].kind, b[0].at), ("duplicate_output", Some(2)));
    assert_eq!(
        b[0].detail,
        "call_id c1 is already answered by the function_call_output at input[1]"
    );
    assert_eq!(
        kinds(json!([call("c1"), output("c1"), call("c1"), output("c1")])),
        vec![
            ("duplicate_call_id", Some(2)),
            ("duplicate_output", Some(3))
        ]
    );
    assert_eq!(
        kinds(json!([call("c1"), output("c1"), call("c2"), output("c2")])),
        vec![]
    );
}

#[test]
fn a_reasoning_item_without_its_follower_is_rejected_one_before_its_call_is_not() {
    let dropped = json!([user("go"), reasoning("rs_1"), user("and now?")]);
    let b = breaches(dropped);
    assert_eq!(
        (b[0].kind, b[0].at),
        ("reasoning_without_follower", Some(1))
    );
    assert_eq!(
        b[0].detail,
        "reasoning item rs_1 is followed by a user message, not by the item it preceded"
    );
    assert_eq!(
        kinds(json!([user("go"), reasoning("rs_1")])),
        vec![("reasoning_without_follower", Some(1))]
    );
    assert_eq!(
        kinds(json!([user("go"), reasoning("rs_1"), output("c0")])),
        vec![
            ("reasoning_without_follower", Some(1)),
            ("output_without_call", Some(2))
        ]
    );
    assert_eq!(
        kinds(json!([
            user("go"),
            reasoning("rs_1"),
            call("c1"),
            output("c1")
        ])),
        vec![]
    );
    assert_eq!(
        kinds(json!([user("go"), reasoning("rs_1"), {"type": "web_search_call", "id": "ws_1"}])),
        vec![]
    );
}

#[test]
fn references_resolve_to_what_they_stand_for_and_unknown_ones_are_not_guessed() {
    let stored = |id: &str| match id {
        "rs_1" => Some(Item::Reasoning(Reasoning {
            id: Some("rs_1".into()),
            summary: vec![],
            encrypted_content: None,
        })),
        "fc_1" => Some(Item::ToolCall {
            call_id: "c1".into(),
            name: "sh".into(),
            arguments: "{}".into(),
            item_id: Some("fc_1".into()),
        }),
        _ => None,
    };
    let by_ref = json!([user("go"), {"type": "item_reference", "id": "rs_1"}, {"type": "item_reference", "id": "fc_1"}, output("c1")]);
    assert_eq!(judge(&by_ref, &[], &stored), vec![]);
    let reasoning_alone =
        json!([user("go"), {"type": "item_reference", "id": "rs_1"}, user("more")]);
    let got: Vec<_> = judge(&reasoning_alone, &[], &stored)
        .iter()
        .map(|b| (b.kind, b.at))
        .collect();
    assert_eq!(got, [("reasoning_without_follower", Some(1))]);
    // An unknown reference could be any call: no output is called orphaned.
    let unknown = json!([user("go"), {"type": "item_reference", "id": "fc_unknown"}, output("c7")]);
    assert_eq!(judge(&unknown, &[], &stored), vec![]);
}

/// The request bodies real clients sent (sim/tests/data/openai), by file name.
fn captured(name: &str) -> Value {
    let path = format!("{}/tests/data/openai/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_captured_client_requests_break_no_rule() {
    for name in [
        "agents-0240-followup-to-golden-tool.request.json",
        "agents-0240-responses-followup.request.json",
        "codex-0171-exec-first.request.json",
        "codex-0171-followup-after-tool.request.json",
        "codex-0171-followup-parallel-calls.request.json",
        "codex-0171-resume-after-sigterm.request.json",
        "codex-0171-resume-last-first.request.json",
        "codex-0171-resume-with-goal-objective.request.json",
        "codex-0171-retry-after-cut-after-fc-done.request.json",
        "codex-0171-tui-title-request.request.json",
    ] {
        let body = captured(name);
        assert_eq!(judge(&body["input"], &[], &|_| None), vec![], "{name}");
    }
    // The previous_response_id follow-up answers the call its stored response made.
    let body = captured("agents-0240-responses-previous_response_id.request.json");
    let call_id = body["input"][0]["call_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let context = [Item::ToolCall {
        call_id,
        name: "f".into(),
        arguments: "{}".into(),
        item_id: None,
    }];
    assert_eq!(judge(&body["input"], &context, &|_| None), vec![]);
    assert_eq!(
        judge(&body["input"], &[], &|_| None)
            .iter()
            .map(|b| b.kind)
            .collect::<Vec<_>>(),
        ["output_without_call"]
    );
    for name in [
        "agents-0240-chat-followup.request.json",
        "openai-sdk-3570-chat-followup.request.json",
    ] {
        assert_eq!(
            super::chat::judge(&captured(name)["messages"]),
            vec![],
            "{name}"
        );
    }
}
