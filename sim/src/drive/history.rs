//! Reading the structure of a recorded request: its messages, its `tool_use` and
//! `tool_result` blocks, its user texts.
//!
//! Guarantee: judgements about what a history holds are made on its structure
//! (block types and ids), never by matching words in texts, so a tool output that
//! happens to say "skill" or "cancelled" cannot make a check pass or fail. Anything
//! a client sent that is not the expected shape reads as absent, never as a panic.
//!
//! OpenAI bodies (`/v1/responses`, `/v1/chat/completions`) are read through the same
//! neutral view and laying the judge uses ([`crate::judge::openai::lay`]), so one
//! set of structural reads serves every wire format: a `function_call` is a
//! `tool_use`, a `function_call_output` (or Chat `tool` message) a `tool_result`.

use super::run::Facts;
use crate::openai::{chat_request, responses_request};
use serde_json::Value;
use std::collections::BTreeMap;

/// A request body in the Anthropic shape the reads below take: as sent for
/// `/v1/messages`, laid from the neutral view for the OpenAI formats; `None` for
/// another endpoint or a body the server could not parse.
fn anthropic_shaped(target: &str, body: &Value) -> Option<Value> {
    let bytes = || serde_json::to_vec(body).unwrap_or_default();
    let conv = match target.split('?').next() {
        Some("/v1/messages") => return Some(body.clone()),
        Some("/v1/responses") => responses_request::parse(&bytes()).ok()?.to_neutral(),
        Some("/v1/chat/completions") => chat_request::parse(&bytes()).ok()?.to_neutral(),
        _ => return None,
    };
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut laid = crate::judge::openai::lay(&conv, &[], &tools, false, false).body;
    // The judge's tool list keeps only function tools; "tool-bearing" is about what
    // the client declared, whatever its kind.
    laid["tools"] = Value::Array(tools);
    Some(laid)
}

/// The first tool-bearing model request of the resumed invocation (Anthropic
/// Messages, OpenAI Responses or Chat Completions), in the Anthropic shape.
pub fn resumed_request(f: &Facts) -> Option<Value> {
    f.records
        .iter()
        .filter(|r| r.index >= f.resume_request && r.method == "POST")
        .filter_map(|r| anthropic_shaped(&r.target, &r.body))
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
/// `[A-Za-z0-9]` with `_`), so ledger ids and request ids compare. serve names the
/// OpenAI call of tool-use id `toolu_X` `call_X` (`serve::openai_deliver`), so a
/// `call_` id reads as its `toolu_` id.
pub fn ledger_id(id: &str) -> String {
    let id = match id.strip_prefix("call_") {
        Some(rest) => format!("toolu_{rest}"),
        None => id.to_owned(),
    };
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
        assert_eq!(ledger_id("call_a-b"), "toolu_a_b");
    }

    #[test]
    fn a_responses_body_reads_as_the_same_uses_results_and_texts() {
        let body = json!({"model": "m", "tools": [{"type": "function", "name": "sh"}],
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "function_call", "call_id": "call_1", "name": "sh", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "aborted"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]}
        ]});
        let laid = anthropic_shaped("/v1/responses", &body).expect("a Responses body");
        assert_eq!(tool_use_ids(&laid), ["call_1"]);
        assert_eq!(
            tool_results(&laid),
            BTreeMap::from([("call_1".to_owned(), false)])
        );
        assert_eq!(user_texts(&laid), ["go", "more"]);
        assert_eq!(laid["tools"].as_array().map(Vec::len), Some(1));
        assert_eq!(anthropic_shaped("/v1/models", &body), None);
    }
}
