//! Reading the structure of a recorded request: its messages, its `tool_use` and
//! `tool_result` blocks, its user texts.
//!
//! Guarantee: judgements about what a history holds are made on its structure
//! (block types and ids), never by matching words in texts, so a tool output that
//! happens to say "skill" or "cancelled" cannot make a check pass or fail. Anything
//! a client sent that is not the expected shape reads as absent, never as a panic.

use super::run::Facts;
use serde_json::Value;
use std::collections::BTreeMap;

/// The first tool-bearing `POST /v1/messages` body of the resumed invocation.
pub fn resumed_request(f: &Facts) -> Option<&Value> {
    f.records
        .iter()
        .filter(|r| r.index >= f.resume_request && r.method == "POST")
        .filter(|r| r.target.split('?').next() == Some("/v1/messages"))
        .map(|r| &r.body)
        .find(|b| {
            b.get("tools")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty())
        })
}

fn messages(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

pub fn blocks(m: &Value) -> Vec<&Value> {
    match m.get("content") {
        Some(Value::Array(b)) => b.iter().collect(),
        Some(c @ Value::String(_)) => vec![c],
        _ => Vec::new(),
    }
}

fn kind(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

/// The text of a user text block (or a string content).
fn text_of(b: &Value) -> Option<&str> {
    match b {
        Value::String(s) => Some(s),
        _ if kind(b) == Some("text") => b.get("text").and_then(Value::as_str),
        _ => None,
    }
}

/// Every text the user messages hold, tool results excluded.
pub fn user_texts(body: &Value) -> Vec<String> {
    messages(body)
        .filter(|m| role(m) == Some("user"))
        .flat_map(blocks)
        .filter_map(text_of)
        .map(str::to_owned)
        .collect()
}

/// The ids of the `tool_use` blocks in assistant messages.
pub fn tool_use_ids(body: &Value) -> Vec<String> {
    messages(body)
        .filter(|m| role(m) == Some("assistant"))
        .flat_map(blocks)
        .filter(|b| kind(b) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// `tool_result` blocks in user messages: id → `is_error`.
pub fn tool_results(body: &Value) -> BTreeMap<String, bool> {
    messages(body)
        .filter(|m| role(m) == Some("user"))
        .flat_map(blocks)
        .filter(|b| kind(b) == Some("tool_result"))
        .filter_map(|b| {
            let id = b.get("tool_use_id").and_then(Value::as_str)?;
            let err = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            Some((id.to_owned(), err))
        })
        .collect()
}

/// The ledger's form of a tool-use id (the scripted command replaces anything but
/// `[A-Za-z0-9]` with `_`), so ledger ids and request ids compare.
pub fn ledger_id(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_and_uses_are_read_by_block_type_not_by_words() {
        let body = json!({"messages": [
            {"role": "user", "content": "go, use the skill"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "killed"},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "interrupted"},
                {"type": "text", "text": "more"}]}
        ]});
        assert_eq!(tool_use_ids(&body), ["toolu_1"]);
        assert_eq!(
            tool_results(&body),
            BTreeMap::from([("toolu_1".to_owned(), false)])
        );
        assert_eq!(user_texts(&body), ["go, use the skill", "more"]);
        assert_eq!(tool_results(&json!({"messages": 3})), BTreeMap::new());
        assert_eq!(ledger_id("toolu_a-b.c"), "toolu_a_b_c");
    }
}
