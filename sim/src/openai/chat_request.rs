//! A `POST /v1/chat/completions` body, parsed into a typed model and mapped to the
//! neutral [`Conversation`](super::neutral::Conversation).
//!
//! Guarantee: the shapes real clients send parse (the `openai` Python SDK's tool loop,
//! openai-agents in chat mode, aider's trailing system message, crush's recorded
//! requests), and the bodies the real API rejects as malformed — a message without a
//! role, an assistant message with neither content nor calls, a tool message without
//! `tool_call_id`, `stream_options` without `stream` — are a [`WireError`] naming the
//! field. A tool call's `arguments` string is kept as sent, even when it is not JSON.

use super::field::{
    WireError, as_object, index, join, opt_array, opt_bool, opt_str, parse_body, req_str,
};
use super::neutral::{Conversation, Entry, Item, Part, Prefix, Role, Tool, Wire};
use super::responses_request::parse_content;
use serde_json::{Map, Value};

/// One `tool_calls` entry of an assistant message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One parsed message.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// system, developer or user.
    Plain { role: Role, content: Vec<Part> },
    Assistant {
        /// Text and refusal parts (`content` plus the `refusal` field).
        content: Vec<Part>,
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: Vec<Part>,
    },
    /// The deprecated `function` role: valid, not modelled.
    LegacyFunction,
}

/// A parsed Chat Completions request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<Tool>,
    pub stream: bool,
    /// `stream_options.include_usage`: whether a final usage chunk is wanted.
    pub include_usage: bool,
    pub parallel_tool_calls: Option<bool>,
    pub tool_choice: Option<Value>,
}

impl ChatRequest {
    /// The neutral view. An assistant message gives its text (if any) then one entry
    /// per call, all with the message's index as `source`.
    pub fn to_neutral(&self) -> Conversation {
        let mut entries = Vec::new();
        for (source, msg) in self.messages.iter().enumerate() {
            let mut push = |item| entries.push(Entry { source, item });
            match msg {
                ChatMessage::Plain { role, content } => push(Item::Message {
                    role: *role,
                    id: None,
                    parts: content.clone(),
                }),
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                } => {
                    if !content.is_empty() || tool_calls.is_empty() {
                        push(Item::Message {
                            role: Role::Assistant,
                            id: None,
                            parts: content.clone(),
                        });
                    }
                    for c in tool_calls {
                        push(Item::ToolCall {
                            call_id: c.id.clone(),
                            name: c.name.clone(),
                            arguments: c.arguments.clone(),
                            item_id: None,
                        });
                    }
                }
                ChatMessage::Tool {
                    tool_call_id,
                    content,
                } => push(Item::ToolResult {
                    call_id: tool_call_id.clone(),
                    output: content.clone(),
                    item_id: None,
                }),
                ChatMessage::LegacyFunction => push(Item::Opaque {
                    kind: "function".into(),
                    id: None,
                }),
            }
        }
        Conversation {
            wire: Wire::ChatCompletions,
            prefix: Prefix {
                model: self.model.clone(),
                instructions: None,
                tools: self.tools.clone(),
            },
            entries,
            continues: None,
        }
    }
}

/// Parses a Chat Completions request body.
pub fn parse(body: &[u8]) -> Result<ChatRequest, WireError> {
    let obj = parse_body(body)?;
    let model = req_str(&obj, "", "model")?;
    let raw_messages = match opt_array(&obj, "", "messages")? {
        None => return Err(WireError::new("messages", "missing")),
        Some(m) if m.is_empty() => {
            return Err(WireError::new("messages", "must hold at least one message"));
        }
        Some(m) => m,
    };
    let messages = raw_messages
        .iter()
        .enumerate()
        .map(|(i, m)| parse_message(m, &index("messages", i)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut tools = Vec::new();
    for (i, t) in opt_array(&obj, "", "tools")?
        .map(|v| v.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        tools.push(parse_tool(t, &index("tools", i))?);
    }
    let stream = opt_bool(&obj, "", "stream")?.unwrap_or(false);
    let include_usage = match obj.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(v) => {
            if !stream {
                return Err(WireError::new(
                    "stream_options",
                    "only allowed when `stream` is true",
                ));
            }
            let so = as_object(v, "stream_options")?;
            opt_bool(so, "stream_options", "include_usage")?.unwrap_or(false)
        }
    };
    Ok(ChatRequest {
        model,
        messages,
        tools,
        stream,
        include_usage,
        parallel_tool_calls: opt_bool(&obj, "", "parallel_tool_calls")?,
        tool_choice: obj.get("tool_choice").cloned(),
    })
}

fn parse_message(value: &Value, path: &str) -> Result<ChatMessage, WireError> {
    let obj = as_object(value, path)?;
    let role = req_str(obj, path, "role")?;
    let content_path = join(path, "content");
    match role.as_str() {
        "system" | "developer" | "user" => Ok(ChatMessage::Plain {
            role: match role.as_str() {
                "system" => Role::System,
                "developer" => Role::Developer,
                _ => Role::User,
            },
            content: parse_content(obj.get("content"), &content_path)?,
        }),
        "assistant" => {
            let mut content = match obj.get("content") {
                None | Some(Value::Null) => vec![],
                Some(v) => parse_content(Some(v), &content_path)?,
            };
            if let Some(r) = opt_str(obj, path, "refusal")? {
                content.push(Part::Refusal(r));
            }
            let tool_calls = parse_tool_calls(obj, path)?;
            if content.is_empty() && tool_calls.is_empty() {
                return Err(WireError::new(
                    content_path,
                    "an assistant message needs `content` or `tool_calls`",
                ));
            }
            Ok(ChatMessage::Assistant {
                content,
                tool_calls,
            })
        }
        "tool" => Ok(ChatMessage::Tool {
            tool_call_id: req_str(obj, path, "tool_call_id")?,
            content: parse_content(obj.get("content"), &content_path)?,
        }),
        "function" => Ok(ChatMessage::LegacyFunction),
        other => Err(WireError::new(
            join(path, "role"),
            format!(
                "unknown role `{other}` (expected system, developer, user, assistant, tool or function)"
            ),
        )),
    }
}

fn parse_tool_calls(obj: &Map<String, Value>, path: &str) -> Result<Vec<ToolCall>, WireError> {
    let calls_path = join(path, "tool_calls");
    let Some(calls) = opt_array(obj, path, "tool_calls")? else {
        return Ok(vec![]);
    };
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let p = index(&calls_path, i);
            let call = as_object(c, &p)?;
            if let Some(kind) = opt_str(call, &p, "type")?
                && kind != "function"
            {
                return Err(WireError::new(
                    join(&p, "type"),
                    format!("expected `function`, got `{kind}`"),
                ));
            }
            let fp = join(&p, "function");
            let function = match call.get("function") {
                None => return Err(WireError::new(fp, "missing")),
                Some(f) => as_object(f, &fp)?,
            };
            Ok(ToolCall {
                id: req_str(call, &p, "id")?,
                name: req_str(function, &fp, "name")?,
                arguments: req_str(function, &fp, "arguments")?,
            })
        })
        .collect()
}

fn parse_tool(value: &Value, path: &str) -> Result<Tool, WireError> {
    let obj = as_object(value, path)?;
    let kind = req_str(obj, path, "type")?;
    let named = |key: &str| -> Result<String, WireError> {
        let p = join(path, key);
        match obj.get(key) {
            None => Err(WireError::new(p, "missing")),
            Some(v) => req_str(as_object(v, &p)?, &p, "name"),
        }
    };
    match kind.as_str() {
        "function" => Ok(Tool::Function {
            name: named("function")?,
            namespace: None,
        }),
        "custom" => Ok(Tool::Custom {
            name: named("custom")?,
        }),
        other => Err(WireError::new(
            join(path, "type"),
            format!("unknown tool type `{other}` (expected function or custom)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_calls_and_tool_results_map_to_neutral_pairs() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"go"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
             "function":{"name":"sh","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
        let conv = parse(body).unwrap().to_neutral();
        assert_eq!(conv.call_ids(), vec!["c1"]);
        assert_eq!(conv.result_ids(), vec!["c1"]);
        assert_eq!(conv.entries[1].source, 1);
        assert_eq!(conv.entries.len(), 3);
    }

    #[test]
    fn tool_message_without_call_id_names_the_field() {
        let body = br#"{"model":"m","messages":[{"role":"tool","content":"x"}]}"#;
        assert_eq!(
            parse(body).unwrap_err().to_string(),
            "`messages[0].tool_call_id`: missing"
        );
    }

    #[test]
    fn empty_assistant_message_is_rejected() {
        let body = br#"{"model":"m","messages":[{"role":"assistant","content":null}]}"#;
        assert_eq!(parse(body).unwrap_err().path, "messages[0].content");
    }

    #[test]
    fn stream_options_require_stream() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"x"}],
            "stream_options":{"include_usage":true}}"#;
        assert_eq!(parse(body).unwrap_err().path, "stream_options");
    }

    #[test]
    fn include_usage_is_read_when_streaming() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,
            "stream_options":{"include_usage":true}}"#;
        let req = parse(body).unwrap();
        assert!(req.stream && req.include_usage);
    }
}
