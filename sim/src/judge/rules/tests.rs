//! Each rule of the table: a request the API rejects, and a near miss it accepts.

use super::cache::{marked_blocks, too_many};
use super::request::{Shape, Shown};
use super::table::{RULES, rule_of};
use super::walk::first_breach;
use crate::judge::empty::{EmptyPart, empty_part};
use serde_json::{Value, json};
use turnsim_core::{SharedMessage, parse_messages};

fn msgs(v: Value) -> Vec<SharedMessage> {
    match parse_messages(&v.to_string()) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    }
}

/// The walk's first breach on a whole request: (kind, message, block, text).
fn walk(v: Value) -> Option<(&'static str, usize, Option<usize>, String)> {
    first_breach(&msgs(v), 0, true).map(|b| (b.kind(), b.message, b.block, b.to_string()))
}

/// The request-level breaches of a request showing `thinking`.
fn shape(v: Value, thinking: Option<bool>) -> Vec<(&'static str, usize, Option<usize>)> {
    let mut s = Shape::default();
    for (i, m) in msgs(v).iter().enumerate() {
        s.push(i, m);
    }
    s.finish(Shown {
        whole_request: true,
        thinking,
    })
    .into_iter()
    .map(|b| (b.kind(), b.message, b.block))
    .collect()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn call(id: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "ls", "input": {}}]})
}

fn result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}

fn results(ids: &[&str]) -> Value {
    let blocks: Vec<Value> = ids.iter().map(|id| result(id)).collect();
    json!({"role": "user", "content": blocks})
}

#[test]
fn every_breach_kind_belongs_to_exactly_one_rule() {
    let mut kinds: Vec<&str> = RULES.iter().flat_map(|r| r.kinds.iter().copied()).collect();
    let n = kinds.len();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), n, "a kind is named by two rules");
    for k in [
        "missing_tool_result",
        "no_answering_message",
        "unanswered_at_end",
        "duplicate_tool_result",
        "unexpected_tool_result",
        "tool_result_after_other_block",
        "empty_assistant_content",
        "duplicate_tool_use_id",
        "tool_use_in_user_message",
        "unknown_block_type",
        "missing_field",
        "tool_input_not_object",
        "unsigned_thinking",
        "first_message_not_user",
        "thinking_dropped",
        "thinking_while_off",
        "too_many_cache_breakpoints",
        "empty_user_message",
        "empty_text_block",
        "blank_text_block",
    ] {
        assert!(rule_of(k).is_some(), "{k} has no rule");
    }
    assert!(RULES.iter().all(|r| r.source.starts_with("https://")));
    let family = |k: &str| rule_of(k).map(|r| r.family);
    assert_eq!(family("missing_tool_result"), Some("pairing"));
    assert_eq!(family("empty_assistant_content"), Some("empty"));
    assert_eq!(family("duplicate_tool_use_id"), Some("tool_id_unique"));
    assert_eq!(family("thinking_dropped"), Some("request_valid"));
}

#[test]
fn a_request_opened_by_the_assistant_is_rejected_one_opened_by_the_user_is_not() {
    let bad = json!([{"role": "assistant", "content": "hi"}, user("go")]);
    assert_eq!(
        shape(bad.clone(), None),
        vec![("first_message_not_user", 0, None)]
    );
    assert_eq!(
        shape(
            json!([user("go"), {"role": "assistant", "content": "hi"}]),
            None
        ),
        vec![]
    );
    // A window of a log may start anywhere.
    let mut s = Shape::default();
    for (i, m) in msgs(bad).iter().enumerate() {
        s.push(i, m);
    }
    assert_eq!(s.finish(Shown::default()), vec![]);
}

#[test]
fn an_empty_assistant_message_is_rejected_except_in_the_final_position() {
    let inner = json!([user("go"), {"role": "assistant", "content": []}, user("again")]);
    assert_eq!(
        walk(inner),
        Some((
            "empty_assistant_content",
            1,
            None,
            "message 1: assistant message has empty content".into()
        ))
    );
    assert_eq!(
        walk(json!([user("go"), {"role": "assistant", "content": []}])),
        None
    );
    // At the end of a window of a log it is not known to be final: rejected.
    assert_eq!(
        first_breach(
            &msgs(json!([user("go"), {"role": "assistant", "content": ""}])),
            0,
            false
        )
        .map(|b| b.kind()),
        Some("empty_assistant_content")
    );
}

#[test]
fn an_empty_user_message_or_text_block_is_rejected_a_blank_one_is_not() {
    let m = |v: Value| msgs(json!([v])).remove(0);
    assert_eq!(empty_part(&m(user(""))), Some(EmptyPart::UserMessage));
    assert_eq!(
        empty_part(&m(
            json!({"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""}]})
        )),
        Some(EmptyPart::TextBlock(1))
    );
    assert_eq!(empty_part(&m(user(" "))), None);
}

#[test]
fn a_block_of_a_type_the_api_does_not_know_or_without_its_fields_is_rejected() {
    let unknown = json!([{"role": "user", "content": [{"type": "picture", "url": "x"}]}]);
    assert_eq!(
        walk(unknown),
        Some((
            "unknown_block_type",
            0,
            Some(0),
            "message 0, block 0: block type \"picture\" is not one the API accepts".into()
        ))
    );
    let no_source = json!([{"role": "user", "content": [{"type": "image"}]}]);
    assert_eq!(
        walk(no_source).map(|b| (b.0, b.3)),
        Some((
            "missing_field",
            "message 0, block 0: image block has no \"source\" field".into()
        ))
    );
    let image = json!([{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}, {"type": "text", "text": "what is it"}]}]);
    assert_eq!(walk(image), None);
}

#[test]
fn a_tool_input_that_is_not_an_object_is_rejected_an_empty_object_is_not() {
    let list = json!([user("go"), {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": ["a"]}]}, results(&["t"])]);
    assert_eq!(
        walk(list),
        Some((
            "tool_input_not_object",
            1,
            Some(0),
            "message 1, block 0: tool_use t has an input that is not a JSON object".into()
        ))
    );
    assert_eq!(walk(json!([user("go"), call("t"), results(&["t"])])), None);
}

#[test]
fn a_tool_use_in_a_user_message_is_rejected() {
    let bad = json!([{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": {}}]}]);
    assert_eq!(
        walk(bad).map(|b| (b.0, b.1, b.2)),
        Some(("tool_use_in_user_message", 0, Some(0)))
    );
}

#[test]
fn two_calls_with_one_id_are_rejected_two_ids_are_not() {
    let twice = json!([user("go"), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "ls", "input": {}},
        {"type": "tool_use", "id": "t", "name": "ls", "input": {}}]}, results(&["t"])]);
    assert_eq!(
        walk(twice).map(|b| (b.0, b.3)),
        Some((
            "duplicate_tool_use_id",
            "message 1, block 1: tool_use id t is already used earlier in this message".into()
        ))
    );
    let across = json!([
        user("go"),
        call("t"),
        results(&["t"]),
        call("t"),
        results(&["t"])
    ]);
    assert_eq!(
        walk(across).map(|b| b.3),
        Some("message 3, block 0: tool_use id t is already used by message 1".into())
    );
    assert_eq!(
        walk(json!([
            user("go"),
            call("t"),
            results(&["t"]),
            call("u"),
            results(&["u"])
        ])),
        None
    );
}

#[test]
fn a_call_not_answered_by_the_next_message_is_rejected() {
    assert_eq!(
        walk(json!([user("go"), call("t")])).map(|b| b.3),
        Some("message 1: history ends with unanswered tool call t".into())
    );
    assert_eq!(
        walk(json!([user("go"), call("t"), user("never mind")])).map(|b| b.3),
        Some("message 1: tool call t has no tool_result in message 2".into())
    );
    assert_eq!(
        walk(json!([user("go"), call("t"), {"role": "assistant", "content": "x"}])).map(|b| b.0),
        Some("no_answering_message")
    );
    // Words after the results, in the same message or the next, are accepted.
    let words = json!([user("go"), call("t"),
        {"role": "user", "content": [result("t"), {"type": "text", "text": "and then"}]},
        user("more")]);
    assert_eq!(walk(words), None);
}

#[test]
fn a_result_that_answers_no_call_of_the_message_before_is_rejected() {
    assert_eq!(
        walk(json!([user("go"), call("t"), results(&["t", "z"])])).map(|b| b.3),
        Some("message 2, block 1: tool_result for z answers no tool call of message 1".into())
    );
    assert_eq!(
        walk(json!([results(&["t"])])).map(|b| b.3),
        Some(
            "message 0, block 0: tool_result for t answers no tool call (no message precedes it)"
                .into()
        )
    );
    // Answered two messages late: the message before it asked nothing.
    assert_eq!(
        walk(json!([
            user("go"),
            call("t"),
            user("wait"),
            results(&["t"])
        ]))
        .map(|b| b.0),
        Some("missing_tool_result")
    );
}

#[test]
fn a_call_answered_twice_is_rejected() {
    assert_eq!(
        walk(json!([user("go"), call("t"), results(&["t", "t"])])).map(|b| (b.0, b.2)),
        Some(("duplicate_tool_result", Some(1)))
    );
}

#[test]
fn a_result_after_text_is_rejected_text_after_results_is_not() {
    let late = json!([user("go"), call("t"), {"role": "user", "content": [{"type": "text", "text": "here"}, result("t")]}]);
    assert_eq!(
        walk(late).map(|b| b.3),
        Some(
            "message 2, block 1: tool_result for t comes after a block that is not a tool_result"
                .into()
        )
    );
}

#[test]
fn a_thinking_block_without_its_signature_is_rejected() {
    let think = |sig: &str| {
        json!([user("go"), {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": sig},
            {"type": "text", "text": "ok"}]}, user("next")])
    };
    assert_eq!(
        walk(think("")).map(|b| (b.0, b.1, b.2)),
        Some(("unsigned_thinking", 1, Some(0)))
    );
    assert_eq!(walk(think("c2ln")), None);
}

#[test]
fn with_thinking_on_a_tool_loop_must_keep_the_thinking_that_opened_the_turn() {
    let dropped = json!([user("go"), call("t"), results(&["t"])]);
    assert_eq!(
        shape(dropped.clone(), Some(true)),
        vec![("thinking_dropped", 1, Some(0))]
    );
    // Thinking off, or not shown: no such rule.
    assert_eq!(shape(dropped.clone(), Some(false)), vec![]);
    assert_eq!(shape(dropped, None), vec![]);
    // Kept: later calls of the same loop need no thinking of their own.
    let kept = json!([user("go"),
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "c2ln"},
            {"type": "tool_use", "id": "t", "name": "ls", "input": {}}]},
        results(&["t"]), call("u"), results(&["u"])]);
    assert_eq!(shape(kept, Some(true)), vec![]);
    // A new user prompt closes the loop: the old turn is no longer the final one.
    let closed = json!([user("go"), call("t"), results(&["t"]), {"role": "assistant", "content": "done"}, user("next")]);
    assert_eq!(shape(closed, Some(true)), vec![]);
}

#[test]
fn with_thinking_off_a_final_assistant_message_may_not_hold_thinking() {
    let prefill = |then: Option<Value>| {
        let mut v = vec![
            user("go"),
            json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "x", "signature": "c2ln"},
            {"type": "text", "text": "so"}]}),
        ];
        v.extend(then);
        Value::Array(v)
    };
    assert_eq!(
        shape(prefill(None), Some(false)),
        vec![("thinking_while_off", 1, Some(0))]
    );
    assert_eq!(shape(prefill(Some(user("and?"))), Some(false)), vec![]);
    assert_eq!(shape(prefill(None), Some(true)), vec![]);
}

#[test]
fn with_thinking_off_a_tool_loop_may_not_go_back_with_the_thinking_that_opened_it() {
    // Thinking switched off inside a tool loop: the continued assistant message is in
    // the final position although tool results follow it (the API names it:
    // "messages.1.content.0: When thinking is disabled, …").
    let opened = json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "plan", "signature": "c2ln"},
        {"type": "tool_use", "id": "t", "name": "ls", "input": {}}]});
    let in_loop = json!([user("go"), opened.clone(), results(&["t"])]);
    assert_eq!(
        shape(in_loop.clone(), Some(false)),
        vec![("thinking_while_off", 1, Some(0))]
    );
    // Later rounds of the same loop are the same turn.
    let later = json!([
        user("go"),
        opened.clone(),
        results(&["t"]),
        call("u"),
        results(&["u"])
    ]);
    assert_eq!(
        shape(later, Some(false)),
        vec![("thinking_while_off", 1, Some(0))]
    );
    // Near misses: thinking on, or the loop closed by the user's next prompt (an
    // earlier turn may keep its thinking), or not shown.
    assert_eq!(shape(in_loop.clone(), Some(true)), vec![]);
    assert_eq!(shape(in_loop.clone(), None), vec![]);
    let closed = json!([user("go"), opened, results(&["t"]),
        {"role": "assistant", "content": "done"}, user("next")]);
    assert_eq!(shape(closed, Some(false)), vec![]);
}

#[test]
fn five_cache_breakpoints_are_rejected_four_are_not() {
    let mark = json!({"type": "ephemeral"});
    let system = json!([{"type": "text", "text": "s", "cache_control": mark}]);
    let tools = json!([{"name": "ls", "input_schema": {"type": "object"}, "cache_control": mark}]);
    let messages = vec![
        json!({"role": "user", "content": [{"type": "text", "text": "a", "cache_control": mark}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
            "content": [{"type": "text", "text": "r", "cache_control": mark}]}]}),
        json!({"role": "user", "content": "plain"}),
    ];
    let four = marked_blocks(Some(&system), Some(&tools), &messages);
    assert_eq!(four, 4);
    assert_eq!(too_many(four), None);
    let mut more = messages.clone();
    more.push(
        json!({"role": "user", "content": [{"type": "text", "text": "b", "cache_control": mark}]}),
    );
    let five = marked_blocks(Some(&system), Some(&tools), &more);
    assert_eq!(
        too_many(five),
        Some("5 blocks carry cache_control; the API takes at most 4".into())
    );
}

#[test]
fn a_text_block_of_whitespace_only_is_rejected_one_with_a_visible_character_is_not() {
    let blank = json!([
        user("go"),
        {"role": "assistant", "content": [
            {"type": "text", "text": "\n\n"},
            {"type": "tool_use", "id": "t1", "name": "read", "input": {}}
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
    ]);
    assert_eq!(shape(blank, None), vec![("blank_text_block", 1, Some(0))]);
    let near = json!([
        user("go"),
        {"role": "assistant", "content": [{"type": "text", "text": "\n.\n"}]},
        user("again")
    ]);
    assert_eq!(shape(near, None), vec![]);
    // An empty text is the other rule's (`text_non_empty`), reported once, there.
    let empty =
        json!([user("go"), {"role": "assistant", "content": [{"type": "text", "text": ""}]}]);
    assert_eq!(shape(empty, None), vec![]);
    // Only a whole Messages request is judged: another API's messages accept it.
    let mut s = Shape::default();
    for (i, m) in
        msgs(json!([user("go"), {"role": "assistant", "content": [{"type": "text", "text": " "}]}]))
            .iter()
            .enumerate()
    {
        s.push(i, m);
    }
    assert_eq!(s.finish(Shown::default()), vec![]);
}
