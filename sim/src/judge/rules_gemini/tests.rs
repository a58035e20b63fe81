//! Each row of the Gemini table: a body the API rejects and a near miss it accepts.

use super::table::{GEMINI, rule_of};
use super::*;
use serde_json::json;

fn kinds(body: Value) -> Vec<&'static str> {
    judge(&body).iter().map(|b| b.kind).collect()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

fn call(name: &str) -> Value {
    json!({"role": "model", "parts": [{"functionCall": {"name": name, "args": {}}}]})
}

fn answer(name: &str) -> Value {
    json!({"role": "user", "parts": [{"functionResponse": {"name": name, "response": {"output": "ok"}}}]})
}

#[test]
fn every_kind_names_exactly_one_row_and_every_row_has_a_source() {
    let mut all: Vec<&str> = GEMINI
        .iter()
        .flat_map(|r| r.kinds.iter().copied())
        .collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
    assert!(GEMINI.iter().all(|r| r.source.starts_with("https://")));
    assert_eq!(rule_of("unanswered_call").unwrap().family, "pairing");
}

#[test]
fn a_clean_tool_loop_has_no_breach() {
    let body = json!({"contents": [user("go"), call("ls"), answer("ls"),
        {"role": "model", "parts": [{"text": "done"}]}, user("thanks")]});
    assert!(kinds(body).is_empty());
}

#[test]
fn contents_present_rejects_an_empty_list_and_accepts_one_content() {
    assert_eq!(kinds(json!({"contents": []})), vec!["no_contents"]);
    assert_eq!(kinds(json!({})), vec!["no_contents"]);
    assert!(kinds(json!({"contents": [user("hi")]})).is_empty());
}

#[test]
fn role_allowed_rejects_assistant_and_accepts_an_absent_role() {
    let b =
        judge(&json!({"contents": [user("a"), {"role": "assistant", "parts": [{"text": "b"}]}]}));
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].kind, b[0].at), ("bad_role", Some(1)));
    assert!(kinds(json!({"contents": [{"parts": [{"text": "hi"}]}]})).is_empty());
}

#[test]
fn parts_not_empty_rejects_no_parts_and_accepts_an_empty_text() {
    let b = judge(&json!({"contents": [user("a"), {"role": "model", "parts": []}, user("b")]}));
    assert_eq!((b[0].kind, b[0].at), ("empty_parts", Some(1)));
    assert_eq!(b.len(), 1);
    // `"text": ""` sets the data field: the API takes it.
    assert!(
        kinds(
            json!({"contents": [user("a"), {"role": "model", "parts": [{"text": ""}]}, user("b")]})
        )
        .is_empty()
    );
}

#[test]
fn part_has_data_rejects_a_bare_signature_part_and_accepts_it_on_a_text() {
    let bare = json!({"contents": [user("a"), {"role": "model", "parts": [{"thoughtSignature": "c2ln"}]}, user("b")]});
    assert_eq!(kinds(bare), vec!["part_without_data"]);
    let on_text = json!({"contents": [user("a"), {"role": "model", "parts": [{"text": "x", "thoughtSignature": "c2ln"}]}, user("b")]});
    assert!(kinds(on_text).is_empty());
}

#[test]
fn function_parts_by_role_rejects_a_call_in_a_user_turn_and_a_response_in_a_model_turn() {
    let b = judge(
        &json!({"contents": [{"role": "user", "parts": [{"text": "a"}, {"functionCall": {"name": "ls"}}]}]}),
    );
    assert_eq!(
        b.iter().map(|b| b.kind).collect::<Vec<_>>(),
        vec!["call_in_user_turn"]
    );
    let b = judge(&json!({"contents": [user("a"), call("ls"),
        {"role": "model", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}]}));
    let k: Vec<_> = b.iter().map(|b| b.kind).collect();
    assert!(k.contains(&"response_in_model_turn"), "{k:?}");
    // The near miss: the same response in a user turn.
    assert!(kinds(json!({"contents": [user("a"), call("ls"), answer("ls")]})).is_empty());
}

#[test]
fn call_turn_placement_rejects_a_history_that_opens_with_a_call() {
    let b = judge(&json!({"contents": [call("ls"), answer("ls")]}));
    assert_eq!(
        b.iter().map(|b| (b.kind, b.at)).collect::<Vec<_>>(),
        vec![("call_turn_misplaced", Some(0))]
    );
    let after_model = judge(
        &json!({"contents": [user("a"), {"role": "model", "parts": [{"text": "b"}]}, call("ls"), answer("ls")]}),
    );
    assert_eq!(after_model[0].kind, "call_turn_misplaced");
    assert_eq!(after_model[0].at, Some(2));
    assert!(
        kinds(
            json!({"contents": [user("a"), call("ls"), answer("ls"), call("cat"), answer("cat")]})
        )
        .is_empty()
    );
}

#[test]
fn responses_answer_calls_counts_each_call_once_and_by_id_where_both_have_one() {
    // Two calls, one response: the second call is unanswered (at the call's content).
    let two = json!({"role": "model", "parts": [
        {"functionCall": {"name": "ls", "args": {}}}, {"functionCall": {"name": "cat", "args": {}}}]});
    let b = judge(&json!({"contents": [user("a"), two.clone(), answer("ls")]}));
    assert_eq!(
        b.iter().map(|b| (b.kind, b.at)).collect::<Vec<_>>(),
        vec![("unanswered_call", Some(1))]
    );
    assert!(b[0].detail.contains("\"cat\""), "{}", b[0].detail);
    // The same response sent twice: the second answers no call.
    let twice = json!({"role": "user", "parts": [
        {"functionResponse": {"name": "ls", "response": {}}}, {"functionResponse": {"name": "ls", "response": {}}}]});
    let b = judge(&json!({"contents": [user("a"), call("ls"), twice]}));
    assert_eq!(
        b.iter().map(|b| (b.kind, b.at)).collect::<Vec<_>>(),
        vec![("response_without_call", Some(2))]
    );
    // Ids on both sides must agree.
    let with_id = json!({"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "ls"}}]});
    let wrong = json!({"role": "user", "parts": [{"functionResponse": {"id": "c2", "name": "ls", "response": {}}}]});
    let k = kinds(json!({"contents": [user("a"), with_id.clone(), wrong]}));
    assert_eq!(k, vec!["unanswered_call", "response_without_call"]);
    // Near misses: both answered in any order; a client id on a call that had none.
    let both = json!({"role": "user", "parts": [
        {"functionResponse": {"name": "cat", "response": {}}}, {"functionResponse": {"name": "ls", "response": {}}}]});
    assert!(kinds(json!({"contents": [user("a"), two, both]})).is_empty());
    let client_id = json!({"role": "user", "parts": [{"functionResponse": {"id": "ls-123", "name": "ls", "response": {}}}]});
    assert!(kinds(json!({"contents": [user("a"), call("ls"), client_id]})).is_empty());
}

#[test]
fn a_response_after_an_intervening_turn_and_a_trailing_call_are_breaches() {
    let k = kinds(json!({"contents": [user("a"), call("ls"), user("wait"), answer("ls")]}));
    assert_eq!(k, vec!["unanswered_call", "response_without_call"]);
    assert_eq!(
        kinds(json!({"contents": [user("a"), call("ls")]})),
        vec!["unanswered_call"]
    );
}

#[test]
fn function_fields_reject_an_empty_name_and_args_that_are_not_an_object() {
    let b = judge(&json!({"contents": [user("a"),
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": "[1]"}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "", "response": "ok"}}]}]}));
    let k: Vec<_> = b.iter().map(|b| b.kind).collect();
    assert!(k.contains(&"args_not_object"), "{k:?}");
    assert!(k.contains(&"empty_function_name"), "{k:?}");
    assert!(k.contains(&"response_not_object"), "{k:?}");
    // Near miss: no args at all is an empty object.
    let ok = json!({"contents": [user("a"), {"role": "model", "parts": [{"functionCall": {"name": "ls"}}]}, answer("ls")]});
    assert!(kinds(ok).is_empty());
}

#[test]
fn function_name_valid_rejects_a_space_and_accepts_dots_colons_and_dashes() {
    let bad = json!({"contents": [user("a")], "tools": [{"functionDeclarations": [{"name": "read file"}]}]});
    let b = judge(&bad);
    assert_eq!((b[0].kind, b[0].at), ("bad_function_name", None));
    assert!(b[0].detail.contains("tools[0].functionDeclarations[0]"));
    let good = json!({"contents": [user("a")], "tools": [{"function_declarations": [{"name": "mcp_fs:read.file-2"}]}]});
    assert!(kinds(good).is_empty());
    let long = "a".repeat(65);
    assert_eq!(
        kinds(
            json!({"contents": [user("a")], "tools": [{"functionDeclarations": [{"name": long}]}]})
        ),
        vec!["bad_function_name"]
    );
}

#[test]
fn a_finding_names_the_content_and_the_row() {
    let f = findings(&json!({"contents": [user("a"), call("ls")]}), 4);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].check, "pairing");
    assert_eq!(f[0].kind, "unanswered_call");
    assert_eq!(f[0].place.request, Some(4));
    assert_eq!(f[0].place.message, Some(1));
    assert!(
        f[0].detail
            .starts_with("contents[1]: parts[0].functionCall \"ls\""),
        "{}",
        f[0].detail
    );
    assert!(f[0].detail.ends_with("(rule responses_answer_calls)"));
}

#[test]
fn an_array_parameter_without_items_is_rejected_and_one_with_items_is_not() {
    let decl = |tags: Value| {
        json!({"contents": [user("go")], "tools": [{"functionDeclarations": [{
            "name": "search",
            "parameters": {"type": "OBJECT", "properties": {
                "query": {"type": "STRING"},
                "filters": {"type": "object", "properties": {"tags": tags}}
            }}
        }]}]})
    };
    let bad = judge(&decl(json!({"type": "array"})));
    assert_eq!(
        bad.iter()
            .map(|b| (b.kind, b.detail.as_str()))
            .collect::<Vec<_>>(),
        vec![(
            "array_without_items",
            "tools[0].functionDeclarations[0].parameters.properties[filters].properties[tags] is an array schema with no items"
        )]
    );
    assert_eq!(
        kinds(decl(json!({"type": "ARRAY", "items": {"type": "STRING"}}))),
        Vec::<&str>::new()
    );
}
