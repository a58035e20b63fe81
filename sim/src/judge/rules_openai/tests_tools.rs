//! The function-name rule of both OpenAI APIs: names the API rejects, and near misses
//! it accepts.

use super::table::{Api, rule_of};
use super::tools::{judge, name_allowed};
use serde_json::{Value, json};

fn chat_tool(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
}

fn found(body: &Value, api: Api) -> Vec<(&'static str, Option<usize>, Option<usize>)> {
    judge(body, api)
        .into_iter()
        .map(|b| (b.kind, b.at, b.tool))
        .collect()
}

#[test]
fn a_name_with_a_slash_or_a_space_is_rejected_and_a_dotted_dashed_one_is_not() {
    assert!(!name_allowed("get_/whoami"));
    assert!(!name_allowed("Sequential Thinking"));
    assert!(!name_allowed(""));
    assert!(name_allowed("github.create-issue_2"));
}

#[test]
fn a_chat_tool_named_over_64_bytes_is_rejected_and_one_of_64_is_not() {
    let long = "a".repeat(65);
    let edge = "a".repeat(64);
    let body = json!({"tools": [chat_tool(&edge), chat_tool(&long)], "messages": []});
    assert_eq!(
        found(&body, Api::Chat),
        vec![("bad_function_name", None, Some(1))]
    );
    let f = judge(&body, Api::Chat)[0].finding(Api::Chat, 3);
    assert_eq!(
        f.detail,
        format!(
            "tools[1]: function.name {long:?} is 65 bytes long, over 64 (rule function_name_valid)"
        )
    );
    assert_eq!(f.check, "request_valid");
    assert_eq!(f.place.message, None);
}

#[test]
fn a_responses_tool_is_judged_by_its_top_level_name_and_a_builtin_tool_is_not_judged() {
    let body = json!({"tools": [
        {"type": "web_search"},
        {"type": "function", "name": "mcp server/read", "parameters": {"type": "object"}},
        {"type": "function", "name": "read_file", "parameters": {"type": "object"}}
    ]});
    assert_eq!(
        found(&body, Api::Responses),
        vec![("bad_function_name", None, Some(1))]
    );
}

#[test]
fn a_replayed_chat_call_with_a_bad_name_is_rejected_at_its_message() {
    let call = |name: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}]})
    };
    let bad =
        json!({"messages": [{"role": "user", "content": "go"}, call("multi_tool_use parallel")]});
    assert_eq!(
        found(&bad, Api::Chat),
        vec![("bad_call_name", Some(1), None)]
    );
    let fine =
        json!({"messages": [{"role": "user", "content": "go"}, call("multi_tool_use.parallel")]});
    assert_eq!(found(&fine, Api::Chat), vec![]);
    assert_eq!(
        rule_of(Api::Chat, "bad_call_name").map(|r| r.id),
        Some("function_name_valid")
    );
}
