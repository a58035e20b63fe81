//! OpenAI chat-completions messages, mapped onto the Anthropic shape so the same
//! checks judge them.
//!
//! Guarantee: the mapping keeps exactly what the pairing rules look at and nothing is
//! invented. An assistant's `tool_calls` become its `tool_use` blocks (same ids, same
//! order); each run of consecutive `role: "tool"` messages becomes the one user
//! message of `tool_result` blocks that answers them, in the order written, because
//! chat completions also require every call to be answered by tool messages right
//! after the assistant message. `system`/`developer` messages are instructions, not
//! turns, and are counted and skipped. An assistant message with neither content nor
//! calls maps to an empty assistant message, which both APIs reject.
//!
//! Message indices in findings count the mapped messages (instructions skipped, a run
//! of tool messages counted as one); the line of each finding points at the original.

use super::anthropic::{RawMessages, parse_raw};
use super::source::{InputError, Located};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, Role, ToolResultContent};

#[derive(Deserialize)]
struct OaMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<OaToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

#[derive(Deserialize)]
struct OaToolCall {
    id: String,
    function: OaFunction,
}

#[derive(Deserialize)]
struct OaFunction {
    name: String,
    #[serde(default)]
    arguments: Option<String>,
}

/// Content parts (`[{type: "text", text}, …]`) as blocks; Chat's media parts as the
/// Messages API's media blocks; other part types are kept as unknown blocks, never
/// dropped (and named by the rules as types the API does not accept).
fn parts(value: &Value, line: usize, i: usize) -> Result<Vec<Block>, InputError> {
    let Value::Array(items) = value else {
        return Err(InputError::at(
            line,
            format!("messages[{i}].content: expected a string, an array of parts or null"),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(k, part)| {
            let Value::Object(map) = part else {
                return Err(InputError::at(
                    line,
                    format!("messages[{i}].content[{k}]: a content part must be an object"),
                ));
            };
            let text_of = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
            Ok(match map.get("type").and_then(Value::as_str) {
                Some("text") => Block::Text {
                    text: text_of("text").ok_or_else(|| {
                        InputError::at(
                            line,
                            format!(
                                "messages[{i}].content[{k}]: a text part needs a string `text`"
                            ),
                        )
                    })?,
                },
                Some("refusal") => Block::Text {
                    text: text_of("refusal").unwrap_or_default(),
                },
                // Media parts Chat accepts, laid onto the Messages API's block of the
                // same role (its source: the part as sent), so the rules judge where
                // they sit, not a type name that is only Chat's.
                Some(kind @ ("image_url" | "input_audio" | "file")) => {
                    let mut block = serde_json::Map::new();
                    let laid = if kind == "image_url" {
                        "image"
                    } else {
                        "document"
                    };
                    block.insert("type".into(), Value::from(laid));
                    block.insert("source".into(), Value::Object(map.clone()));
                    Block::Unknown(block)
                }
                _ => Block::Unknown(map.clone()),
            })
        })
        .collect()
}

fn user_content(content: &Option<Value>, line: usize, i: usize) -> Result<Content, InputError> {
    Ok(match content {
        None | Some(Value::Null) => Content::Blocks(Vec::new()),
        Some(Value::String(s)) => Content::Text(s.clone()),
        Some(v) => Content::Blocks(parts(v, line, i)?),
    })
}

fn assistant(m: &OaMessage, line: usize, i: usize) -> Result<Message, InputError> {
    let calls = m.tool_calls.as_deref().unwrap_or_default();
    if calls.is_empty()
        && let Some(Value::String(s)) = &m.content
    {
        return Ok(Message {
            role: Role::Assistant,
            content: Content::Text(s.clone()),
        });
    }
    let mut blocks = match &m.content {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) if s.is_empty() => Vec::new(),
        Some(Value::String(s)) => vec![Block::text(s.clone())],
        Some(v) => parts(v, line, i)?,
    };
    for call in calls {
        let arguments = call.function.arguments.clone().unwrap_or_default();
        // Arguments are a JSON string on the wire; keep them verbatim when they are
        // not JSON (the model can produce broken arguments; that is not our check).
        let input = if arguments.is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(&arguments).unwrap_or(Value::String(arguments))
        };
        blocks.push(Block::ToolUse {
            id: call.id.clone(),
            name: call.function.name.clone(),
            input,
        });
    }
    Ok(Message::assistant_blocks(blocks))
}

fn tool_result(m: &OaMessage, line: usize, i: usize) -> Result<Block, InputError> {
    let id = m.tool_call_id.clone().ok_or_else(|| {
        InputError::at(
            line,
            format!("messages[{i}]: a `tool` message needs a `tool_call_id`"),
        )
    })?;
    let content = match &m.content {
        None | Some(Value::Null) => ToolResultContent::Text(String::new()),
        Some(Value::String(s)) => ToolResultContent::Text(s.clone()),
        Some(v) => ToolResultContent::Blocks(parts(v, line, i)?),
    };
    Ok(Block::ToolResult {
        tool_use_id: id,
        content,
        is_error: None,
    })
}

/// The mapping, one message at a time: what a streamed document feeds.
#[derive(Default)]
pub struct Mapper {
    /// The tool-result message being gathered, with the line it started on.
    results: Option<(usize, Vec<Block>)>,
    /// Instruction messages skipped so far.
    pub skipped: usize,
}

impl Mapper {
    /// Maps message `i` (at `line`), appending to `out` what it completes: nothing
    /// while a run of tool messages goes on, else the run's message and this one.
    pub fn push(
        &mut self,
        i: usize,
        line: usize,
        r: &RawValue,
        out: &mut Vec<Located>,
    ) -> Result<(), InputError> {
        let m: OaMessage = parse_raw(r, line, i)?;
        if m.role == "tool" {
            let block = tool_result(&m, line, i)?;
            self.results
                .get_or_insert_with(|| (line, Vec::new()))
                .1
                .push(block);
            return Ok(());
        }
        self.finish(out);
        let message = match m.role.as_str() {
            "system" | "developer" => {
                self.skipped += 1;
                return Ok(());
            }
            "user" => Message {
                role: Role::User,
                content: user_content(&m.content, line, i)?,
            },
            "assistant" => assistant(&m, line, i)?,
            other => {
                return Err(InputError::at(
                    line,
                    format!("messages[{i}].role: unknown role {other:?}"),
                ));
            }
        };
        out.push(Located::new(Arc::new(message), line));
        Ok(())
    }

    /// Ends the document: a run of tool messages still open becomes its message.
    pub fn finish(&mut self, out: &mut Vec<Located>) {
        if let Some((at, blocks)) = self.results.take() {
            out.push(Located::new(Arc::new(Message::user_blocks(blocks)), at));
        }
    }
}

/// The mapped messages, and how many instruction messages were skipped.
pub fn load(raw: &RawMessages<'_>) -> Result<(Vec<Located>, usize), InputError> {
    let mut out: Vec<Located> = Vec::new();
    let mut mapper = Mapper::default();
    for (i, (line, r)) in raw.items.iter().enumerate() {
        mapper.push(i, *line, r, &mut out)?;
    }
    mapper.finish(&mut out);
    Ok((out, mapper.skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::anthropic::raw_messages;

    fn mapped(text: &str) -> Vec<String> {
        let raw = raw_messages(text).expect("parses");
        load(&raw)
            .expect("maps")
            .0
            .iter()
            .map(|l| l.message.to_json())
            .collect()
    }

    #[test]
    fn tool_calls_and_tool_messages_map_to_one_answered_pair() {
        let text = r#"[
            {"role":"system","content":"be brief"},
            {"role":"user","content":"list"},
            {"role":"assistant","content":null,"tool_calls":[
                {"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"p\":1}"}},
                {"id":"c2","type":"function","function":{"name":"cat","arguments":"oops"}}]},
            {"role":"tool","tool_call_id":"c1","content":"a"},
            {"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"b"}]},
            {"role":"assistant","content":"done"}
        ]"#;
        assert_eq!(
            mapped(text),
            vec![
                r#"{"role":"user","content":"list"}"#,
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"ls","input":{"p":1}},{"type":"tool_use","id":"c2","name":"cat","input":"oops"}]}"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"a"},{"type":"tool_result","tool_use_id":"c2","content":[{"type":"text","text":"b"}]}]}"#,
                r#"{"role":"assistant","content":"done"}"#,
            ]
        );
    }

    #[test]
    fn chat_media_parts_are_laid_onto_the_messages_apis_media_blocks() {
        let text = r#"[{"role":"user","content":[{"type":"text","text":"look"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}},
            {"type":"file","file":{"file_id":"f1"}}]}]"#;
        assert_eq!(
            mapped(text),
            vec![
                r#"{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}},{"type":"document","source":{"type":"file","file":{"file_id":"f1"}}}]}"#
            ]
        );
    }

    #[test]
    fn an_assistant_with_neither_content_nor_calls_is_empty() {
        assert_eq!(
            mapped(r#"[{"role":"user","content":"u"},{"role":"assistant","content":null}]"#)[1],
            r#"{"role":"assistant","content":[]}"#
        );
    }

    #[test]
    fn a_tool_message_without_its_call_id_is_unreadable() {
        let raw = raw_messages("[{\"role\":\"tool\",\"content\":\"x\"}]").expect("parses");
        let e = load(&raw).expect_err("no id");
        assert!(e.message.contains("tool_call_id"), "{e}");
    }
}
