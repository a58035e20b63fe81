//! The function names of an OpenAI request: each function tool's name in `tools`
//! (both APIs), and each call's name in a Chat Completions assistant message's
//! `tool_calls` (the API checks the names a request replays as it checks the
//! definitions).
//!
//! Guarantee: a name is reported only when no pattern the API has quoted accepts it.
//! OpenAI's errors quoted `^[a-zA-Z0-9_-]+$` into 2025 and `^[a-zA-Z0-9_\.-]+$`
//! (dots allowed) since; the judge takes the wider one, so a name the API takes today
//! is never reported, and bounds the length at 64 as the API does.
//!
//! Why: a runtime that forwards MCP tool names (`server.tool`, `get_/whoami`, names
//! with spaces) or builds long prefixed names has every request of the session
//! refused, and a call name the model produced once is replayed in every later
//! request.

use super::Breach;
use super::table::Api;
use serde_json::Value;

/// The longest function name the API takes.
pub const NAME_MAX: usize = 64;

/// Whether the API takes `name` as a function name.
pub fn name_allowed(name: &str) -> bool {
    (1..=NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn why(name: &str) -> String {
    if name.is_empty() {
        "is empty".to_owned()
    } else if name.len() > NAME_MAX {
        format!("is {} bytes long, over {NAME_MAX}", name.len())
    } else {
        "holds a character other than letters, digits, '_', '-' and '.'".to_owned()
    }
}

/// The breaches of the function names of a request body `body` sent to `api`.
pub fn judge(body: &Value, api: Api) -> Vec<Breach> {
    let mut out = Vec::new();
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        for (t, tool) in tools.iter().enumerate() {
            if tool.get("type").and_then(Value::as_str) != Some("function") {
                continue;
            }
            // Chat nests the definition under `function`; Responses does not.
            let (def, field) = match api {
                Api::Chat => (tool.get("function"), "function.name"),
                Api::Responses => (Some(tool), "name"),
            };
            let Some(name) = def.and_then(|d| d.get("name")).and_then(Value::as_str) else {
                continue;
            };
            if !name_allowed(name) {
                out.push(Breach {
                    kind: "bad_function_name",
                    at: None,
                    tool: Some(t),
                    detail: format!("{field} {name:?} {}", why(name)),
                    excerpt: serde_json::json!({ "name": name }).to_string(),
                });
            }
        }
    }
    if api == Api::Chat
        && let Some(messages) = body.get("messages").and_then(Value::as_array)
    {
        for (i, m) in messages.iter().enumerate() {
            let calls = m.get("tool_calls").and_then(Value::as_array);
            for (c, call) in calls.into_iter().flatten().enumerate() {
                let Some(name) = call.pointer("/function/name").and_then(Value::as_str) else {
                    continue;
                };
                if !name_allowed(name) {
                    out.push(Breach {
                        kind: "bad_call_name",
                        at: Some(i),
                        tool: None,
                        detail: format!("tool_calls[{c}].function.name {name:?} {}", why(name)),
                        excerpt: super::identity(call),
                    });
                }
            }
        }
    }
    out
}
