//! Reading the structure of a recorded request: its messages, its `tool_use` and
//! `tool_result` blocks, its user texts.
//!
//! Guarantee: judgements about what a history holds are made on its structure
//! (block types and ids), never by matching words in texts, so a tool output that
//! happens to say "skill" or "cancelled" cannot make a check pass or fail. Anything
//! a client sent that is not the expected shape reads as absent, never as a panic.
//!
//! OpenAI bodies (`/v1/responses`, `/v1/chat/completions`) and Gemini API bodies
//! (`…:generateContent`, `…:streamGenerateContent`) are read through the same
//! neutral view and laying the judge uses ([`crate::judge::openai::lay`]), so one
//! set of structural reads serves every wire format: a `function_call` (or Gemini
//! `functionCall`) is a `tool_use`, a `function_call_output` (Chat `tool` message,
//! Gemini `functionResponse`) a `tool_result`. serve sends a Gemini call without an
//! `id`, as the Gemini API does, and the client names it itself; so in a Gemini body a
//! call is known by the ledger id its scripted command carries (the only id the
//! ledger knows), and each response by the call it answers.

use super::run::Facts;
use crate::gemini::request as gemini_request;
use crate::openai::{chat_request, responses_request};
use serde_json::Value;
use std::collections::BTreeMap;

/// The model a Gemini generate path names (`/v1beta/models/M:streamGenerateContent`).
fn gemini_model(path: &str) -> Option<&str> {
    let rest = ["/v1beta/models/", "/v1alpha/models/", "/v1/models/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    let (model, method) = rest.split_once(':')?;
    matches!(method, "generateContent" | "streamGenerateContent").then_some(model)
}

/// Whether `target` is a model request `turnsim check` judges: POST `/v1/messages`,
/// `/v1/responses`, `/v1/chat/completions` or a Gemini generate call.
pub fn judged_route(method: &str, target: &str) -> bool {
    let path = target.split('?').next().unwrap_or_default();
    method == "POST"
        && (matches!(
            path,
            "/v1/messages" | "/v1/responses" | "/v1/chat/completions"
        ) || gemini_model(path).is_some())
}

/// A request body in the Anthropic shape the reads below take: as sent for
/// `/v1/messages`, laid from the neutral view for the OpenAI and Gemini formats;
/// `None` for another endpoint or a body the server could not parse.
fn anthropic_shaped(target: &str, body: &Value) -> Option<Value> {
    let bytes = || serde_json::to_vec(body).unwrap_or_default();
    let path = target.split('?').next().unwrap_or_default();
    let mut gemini = false;
    let (conv, functions) = match path {
        "/v1/messages" => return Some(body.clone()),
        "/v1/responses" => (responses_request::parse(&bytes()).ok()?.to_neutral(), None),
        "/v1/chat/completions" => (chat_request::parse(&bytes()).ok()?.to_neutral(), None),
        _ => {
            let model = gemini_model(path)?;
            let req = gemini_request::parse(&bytes()).ok()?;
            gemini = true;
            (req.to_neutral(model), Some(req.tools_as_functions()))
        }
    };
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let laid_tools = functions.as_deref().unwrap_or(&tools);
    let mut laid = crate::judge::openai::lay(&conv, &[], laid_tools, false, false).body;
    // The judge's tool list keeps only function tools; "tool-bearing" is about what
    // the client declared, whatever its kind.
    laid["tools"] = Value::Array(tools);
    if gemini {
        name_calls_by_ledger(&mut laid);
    }
    Some(laid)
}

/// The ledger id a scripted command carries (`sh SCRIPT toolu_… LEDGER MS`, or the
/// inline `echo 'start toolu_…'`): the first word of any string in `input` that
/// starts with `toolu_`.
fn ledger_word(input: &Value) -> Option<String> {
    let word = |s: &str| {
        s.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"'))
            .find(|w| w.starts_with("toolu_") && w.len() > "toolu_".len())
            .map(str::to_owned)
    };
    match input {
        Value::String(s) => word(s),
        Value::Object(o) => o.values().find_map(ledger_word),
        Value::Array(a) => a.iter().find_map(ledger_word),
        _ => None,
    }
}

/// Renames, in a laid Gemini body, every `tool_use` whose input carries a ledger id
/// to that id, and every `tool_result` answering it likewise; a call whose input
/// names none keeps the id the client gave it.
fn name_calls_by_ledger(laid: &mut Value) {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let Some(messages) = laid.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    for m in messages.iter_mut() {
        let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) else {
            continue;
        };
        for b in blocks {
            let key = match kind(b) {
                Some("tool_use") => {
                    let (Some(id), Some(word)) = (
                        b.get("id").and_then(Value::as_str).map(str::to_owned),
                        b.get("input").and_then(ledger_word),
                    ) else {
                        continue;
                    };
                    names.insert(id, word);
                    "id"
                }
                Some("tool_result") => "tool_use_id",
                _ => continue,
            };
            let new = b
                .get(key)
                .and_then(Value::as_str)
                .and_then(|id| names.get(id))
                .cloned();
            if let Some(new) = new {
                b[key] = Value::String(new);
            }
        }
    }
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

    #[test]
    fn a_gemini_body_reads_its_calls_by_the_ledger_id_their_command_carries() {
        // As gemini-cli sends it: the call without an id from the server, named by
        // the client, and its response (twice, as its --resume sends it).
        let command = "sh '/r/tool.sh' toolu_3c31_00001 '/r/ledger' 300";
        let call = json!({"functionCall": {"id": "run_shell_command_17_0",
            "name": "run_shell_command", "args": {"command": command}}});
        let answer = json!({"functionResponse": {"id": "run_shell_command_17_0",
            "name": "run_shell_command", "response": {"output": "ran"}}});
        let body = json!({"contents": [
            {"role": "user", "parts": [{"text": "ctx"}, {"text": "go"}]},
            {"role": "model", "parts": [{"text": "Running it."}, call]},
            {"role": "user", "parts": [answer, answer]},
            {"role": "model", "parts": [{"text": "Done."}]},
            {"role": "user", "parts": [{"text": "more"}]}
        ], "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}]});
        let target = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
        let laid = anthropic_shaped(target, &body).expect("a Gemini body");
        assert_eq!(tool_use_ids(&laid), ["toolu_3c31_00001"]);
        assert_eq!(
            tool_results(&laid),
            BTreeMap::from([("toolu_3c31_00001".to_owned(), false)])
        );
        // Adjacent text parts of one content are laid as one text block.
        assert_eq!(user_texts(&laid), ["ctxgo", "more"]);
        assert!(judged_route("POST", target));
        assert!(judged_route("POST", "/v1beta/models/g:generateContent"));
        assert!(!judged_route("POST", "/v1beta/models/g:countTokens"));
        assert!(!judged_route("GET", "/v1beta/models/g"));
        assert!(judged_route("POST", "/v1/messages"));
        assert!(!judged_route("HEAD", "/"));
    }
}
