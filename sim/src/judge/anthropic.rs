//! The Anthropic Messages API as the judge reads it: a `POST /v1/messages` body
//! (and the headers that change its meaning) mapped onto the neutral
//! [`super::view::Request`].
//!
//! Guarantee: a body is read leniently but never half-read. What the judge needs
//! (messages, system, tools, model, betas) is read strictly, and a body the real API
//! would refuse as malformed is an error whose text is the API's 400 message; fields
//! the reader does not know are kept by name, never dropped silently. The same reader
//! serves `turnsim serve`, a recording judged again, and a cassette.

use super::normal::{normal_message, normal_system, normal_tools};
use super::rules::cache::marked_blocks;
use super::rules::request::Shown;
use super::rules::tools;
use super::view::{Located, Prefix, Request};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use turnsim_core::{Message, SharedMessage, ToolSpec};

/// Top-level request fields this server reads or knows to be harmless.
const KNOWN_FIELDS: [&str; 17] = [
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "max_tokens",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "thinking",
    "service_tier",
    "container",
    "mcp_servers",
    "betas",
];

/// A `POST /v1/messages` body, read leniently: what the server needs, the rest kept.
#[derive(Clone, Debug)]
pub struct ParsedRequest {
    pub model: String,
    pub stream: bool,
    /// `messages` exactly as sent.
    pub messages: Vec<Value>,
    pub system: Option<Value>,
    pub tools_raw: Option<Value>,
    /// The client's own tools (server tools such as web search have a `type` and no
    /// schema, and are not called by this server).
    pub tools: Vec<ToolSpec>,
    /// The client asked for extended thinking.
    pub thinking: bool,
    /// `tool_choice: {"type": "none"}`.
    pub tool_choice_none: bool,
    /// The user and assistant messages, typed, with their index in `messages`.
    pub typed: Vec<(usize, SharedMessage)>,
    /// Top-level fields this server does not know, passed through.
    pub unknown_fields: Vec<String>,
    /// Length of the body in bytes, for the token estimate.
    pub body_len: usize,
    /// `model` as sent (`model` above falls back to a default for answering).
    pub model_sent: Option<String>,
    /// The `betas` field, when sent.
    pub betas: Vec<String>,
    /// The most output tokens the reply may have (`max_tokens`; another API's
    /// request sets it from its own field), when the request says.
    pub max_tokens: Option<u64>,
    /// `[system, tools]` as the client's bytes, when the caller holds the body as
    /// sent ([`super::body::prefix_of`]); `None` from [`parse_request`], which may be
    /// handed a body rebuilt from values.
    pub prefix_bytes: Option<[String; 2]>,
    /// The body was sent to the Messages API as it is (true from [`parse_request`]);
    /// false for a body laid out from another API's request, which the Messages
    /// API's request-level rules do not judge.
    pub messages_api: bool,
}

/// Reads a request body; the error is the message of the API's 400.
pub fn parse_request(body: &[u8]) -> Result<ParsedRequest, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the request body is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the request body must be a JSON object".into());
    };
    let messages = match map.get("messages") {
        Some(Value::Array(m)) => m.clone(),
        Some(_) => return Err("messages: Input should be a valid list".into()),
        None => return Err("messages: Field required".into()),
    };
    let mut typed = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        match m.get("role").and_then(Value::as_str) {
            Some("system") => {
                if !matches!(m.get("content"), Some(Value::String(_) | Value::Array(_))) {
                    return Err(format!(
                        "messages.{i}.content: a string or an array of blocks is required"
                    ));
                }
            }
            Some("user" | "assistant") => {
                let message: Message =
                    serde_json::from_value(m.clone()).map_err(|e| format!("messages.{i}: {e}"))?;
                typed.push((i, Arc::new(message)));
            }
            Some(other) => {
                return Err(format!(
                    "messages.{i}.role: unexpected role {other:?}; expected \"user\" or \"assistant\""
                ));
            }
            None => return Err(format!("messages.{i}.role: Field required")),
        }
    }
    let tools_raw = map.get("tools").cloned();
    let mut tools = Vec::new();
    match &tools_raw {
        None | Some(Value::Null) => {}
        Some(Value::Array(ts)) => {
            for (i, t) in ts.iter().enumerate() {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    return Err(format!("tools.{i}.name: Field required"));
                };
                let custom = t
                    .get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|k| k == "custom");
                if custom {
                    tools.push(ToolSpec {
                        name: name.to_owned(),
                        description: t
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        input_schema: t.get("input_schema").cloned().unwrap_or(Value::Null),
                    });
                }
            }
        }
        Some(_) => return Err("tools: Input should be a valid list".into()),
    }
    let thinking = map
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t != "disabled");
    let tool_choice_none = map
        .get("tool_choice")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        == Some("none");
    let unknown_fields = map
        .keys()
        .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(ParsedRequest {
        model: map
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("claude-sonnet-4-6")
            .to_owned(),
        stream: map.get("stream").and_then(Value::as_bool).unwrap_or(false),
        messages,
        system: map.get("system").cloned(),
        tools_raw,
        tools,
        thinking,
        tool_choice_none,
        typed,
        unknown_fields,
        body_len: body.len(),
        model_sent: map.get("model").and_then(Value::as_str).map(str::to_owned),
        betas: map
            .get("betas")
            .and_then(Value::as_array)
            .map(|bs| {
                bs.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        max_tokens: map.get("max_tokens").and_then(Value::as_u64),
        prefix_bytes: None,
        messages_api: true,
    })
}

impl ParsedRequest {
    /// The neutral view of this request: request `id`, sent with `headers` (names
    /// lower-cased).
    pub fn view(&self, id: usize, headers: &BTreeMap<String, String>) -> Request {
        let mut betas: Vec<String> = headers
            .get("anthropic-beta")
            .map(|h| {
                h.split(',')
                    .map(|b| b.trim().to_owned())
                    .filter(|b| !b.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        betas.extend(self.betas.iter().cloned());
        betas.sort();
        betas.dedup();
        Request {
            id,
            line: None,
            prefix: Prefix {
                system: normal_system(self.system.as_ref()).to_string(),
                tools: normal_tools(self.tools_raw.as_ref()).to_string(),
                model: self.model_sent.clone(),
                betas,
                bytes: self.prefix_bytes.clone(),
            },
            normal: self
                .messages
                .iter()
                .map(|m| normal_message(m).to_string())
                .collect(),
            opening: self.typed.first().map(|(i, _)| *i),
            messages: self
                .typed
                .iter()
                .map(|(i, m)| Located::new(m.clone(), 0).at_index(*i))
                .collect(),
            has_tools: !self.tools.is_empty() && !self.tool_choice_none,
            stream: self.stream,
            conversation: headers.get(super::normal::CONVERSATION_HEADER).cloned(),
            // A Messages body; a reader that laid another API's body out as one says
            // so on the view it gets.
            api: super::normal::Api::Messages,
            shown: if self.messages_api {
                Shown {
                    whole_request: true,
                    thinking: Some(self.thinking),
                }
            } else {
                Shown::default()
            },
            cache_marked: self.messages_api.then(|| {
                marked_blocks(
                    self.system.as_ref(),
                    self.tools_raw.as_ref(),
                    &self.messages,
                )
            }),
            tool_breaches: if self.messages_api {
                tools::breaches(tools::defs_of_body(self.tools_raw.as_ref()))
            } else {
                Vec::new()
            },
            api_findings: None,
        }
    }
}
