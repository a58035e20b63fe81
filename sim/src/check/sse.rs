//! A recorded Messages API stream (server-sent events) → the engine's own
//! [`StreamEvent`]s → the assistant message the engine would append.
//!
//! Guarantee: a recorded response is judged by the engine itself, not by a second
//! assembler: its events are fed, in order, to a fresh `turnsim_core::Session` (the
//! sans-IO engine the simulator drives), and the verdict is the session's: either it
//! appends an assistant message, which is then held to the history rules like any
//! other, or it fails the generation and says why (a delta for a block that never
//! started, tool input that is not JSON, `tool_use` with no call, an empty reply, …).
//! Events the engine's model has no place for (`ping`; unknown event types, which the
//! API may add) are skipped; block and delta types it cannot represent make the
//! response "unsupported" (reported as information), never a false violation.

use serde_json::Value;
use turnsim_core::{
    BlockStart, Input, Message, Output, Session, SessionConfig, StopReason, StreamEvent,
    TurnOutcome, Usage,
};

/// One dispatched server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    pub name: Option<String>,
    pub data: String,
    /// 1-based line (within the stream) where the event started.
    pub line: usize,
}

/// Splits a text/event-stream body into events (`event:` and `data:` fields; lines
/// starting with `:` are comments; a blank line dispatches; `data:` lines join with
/// a newline). Never fails: anything else is ignored, as the SSE format says.
pub fn split_events(text: &str) -> Vec<SseEvent> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    let mut data: Option<String> = None;
    let mut start = 0;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.is_empty() {
            if let Some(d) = data.take() {
                out.push(SseEvent {
                    name: name.take(),
                    data: d,
                    line: start,
                });
            }
            name = None;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if name.is_none() && data.is_none() {
            start = i + 1;
        }
        match field {
            "event" => name = Some(value.to_string()),
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    if let Some(d) = data {
        out.push(SseEvent {
            name,
            data: d,
            line: start,
        });
    }
    out
}

/// Why a recorded response does not become an assistant message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyError {
    /// An event's data is not the JSON the API sends.
    Syntax { line: usize, why: String },
    /// Something the engine's event model cannot represent (a server tool block, a
    /// citations delta, a new stop reason): not judged.
    Unsupported { line: usize, why: String },
    /// The provider reported an error in the stream.
    ProviderError { line: usize, why: String },
    /// The engine rejected the stream or the message it makes.
    Rejected { why: String },
}

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_object().and_then(|o| o.get(key))
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    field(v, key).and_then(Value::as_str).map(str::to_string)
}

fn index(v: &Value, line: usize) -> Result<usize, ReplyError> {
    field(v, "index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| ReplyError::Syntax {
            line,
            why: "event without a numeric `index`".into(),
        })
}

fn unsupported(line: usize, why: String) -> ReplyError {
    ReplyError::Unsupported { line, why }
}

/// The engine events one SSE event stands for (none for `ping` and unknown types).
pub fn to_stream_events(ev: &SseEvent) -> Result<Vec<StreamEvent>, ReplyError> {
    let line = ev.line;
    let v: Value = serde_json::from_str(&ev.data).map_err(|e| ReplyError::Syntax {
        line,
        why: format!("event data is not JSON: {e}"),
    })?;
    let kind = str_field(&v, "type").or_else(|| ev.name.clone());
    let kind = kind.as_deref().unwrap_or("");
    Ok(match kind {
        "message_start" => vec![StreamEvent::MessageStart],
        "content_block_start" => {
            let index = index(&v, line)?;
            let block = field(&v, "content_block").unwrap_or(&Value::Null);
            let text = |k: &str| str_field(block, k).unwrap_or_default();
            match str_field(block, "type").as_deref() {
                Some("text") => {
                    let mut evs = vec![StreamEvent::BlockStart {
                        index,
                        block: BlockStart::Text,
                    }];
                    let initial = text("text");
                    if !initial.is_empty() {
                        evs.push(StreamEvent::TextDelta {
                            index,
                            text: initial,
                        });
                    }
                    evs
                }
                Some("thinking") => {
                    let mut evs = vec![StreamEvent::BlockStart {
                        index,
                        block: BlockStart::Thinking,
                    }];
                    let (thinking, signature) = (text("thinking"), text("signature"));
                    if !thinking.is_empty() {
                        evs.push(StreamEvent::ThinkingDelta { index, thinking });
                    }
                    if !signature.is_empty() {
                        evs.push(StreamEvent::SignatureDelta { index, signature });
                    }
                    evs
                }
                Some("redacted_thinking") => vec![StreamEvent::BlockStart {
                    index,
                    block: BlockStart::RedactedThinking { data: text("data") },
                }],
                Some("tool_use") => {
                    let (Some(id), Some(name)) = (str_field(block, "id"), str_field(block, "name"))
                    else {
                        return Err(ReplyError::Syntax {
                            line,
                            why: "tool_use block start without a string `id` and `name`".into(),
                        });
                    };
                    let mut evs = vec![StreamEvent::BlockStart {
                        index,
                        block: BlockStart::ToolUse { id, name },
                    }];
                    // Streamed input starts as `{}` and arrives in deltas; input given
                    // whole at the start is passed on as one delta.
                    match field(block, "input") {
                        Some(Value::Object(o)) if o.is_empty() => {}
                        None | Some(Value::Null) => {}
                        Some(input) => evs.push(StreamEvent::InputJsonDelta {
                            index,
                            partial_json: input.to_string(),
                        }),
                    }
                    evs
                }
                other => {
                    return Err(unsupported(
                        line,
                        format!("content block type {:?}", other.unwrap_or("")),
                    ));
                }
            }
        }
        "content_block_delta" => {
            let index = index(&v, line)?;
            let delta = field(&v, "delta").unwrap_or(&Value::Null);
            let text = |k: &str| str_field(delta, k).unwrap_or_default();
            match str_field(delta, "type").as_deref() {
                Some("text_delta") => vec![StreamEvent::TextDelta {
                    index,
                    text: text("text"),
                }],
                Some("thinking_delta") => vec![StreamEvent::ThinkingDelta {
                    index,
                    thinking: text("thinking"),
                }],
                Some("signature_delta") => vec![StreamEvent::SignatureDelta {
                    index,
                    signature: text("signature"),
                }],
                Some("input_json_delta") => vec![StreamEvent::InputJsonDelta {
                    index,
                    partial_json: text("partial_json"),
                }],
                other => {
                    return Err(unsupported(
                        line,
                        format!("delta type {:?}", other.unwrap_or("")),
                    ));
                }
            }
        }
        "content_block_stop" => vec![StreamEvent::BlockStop {
            index: index(&v, line)?,
        }],
        "message_delta" => {
            let delta = field(&v, "delta").unwrap_or(&Value::Null);
            let stop = match field(delta, "stop_reason") {
                Some(Value::String(s)) => StopReason::parse(s)
                    .ok_or_else(|| unsupported(line, format!("stop reason {s:?}")))?,
                _ => {
                    return Err(ReplyError::Syntax {
                        line,
                        why: "message_delta without a stop reason".into(),
                    });
                }
            };
            let usage = field(&v, "usage").unwrap_or(&Value::Null);
            let tokens = |k: &str| field(usage, k).and_then(Value::as_u64).unwrap_or(0);
            vec![StreamEvent::MessageDelta {
                stop_reason: stop,
                usage: Usage {
                    input_tokens: tokens("input_tokens"),
                    output_tokens: tokens("output_tokens"),
                },
            }]
        }
        "message_stop" => vec![StreamEvent::MessageStop],
        "error" => {
            let error = field(&v, "error").unwrap_or(&Value::Null);
            return Err(ReplyError::ProviderError {
                line,
                why: format!(
                    "{}: {}",
                    str_field(error, "type").unwrap_or_default(),
                    str_field(error, "message").unwrap_or_default()
                ),
            });
        }
        // `ping`, and event types added after this was written.
        _ => Vec::new(),
    })
}

/// Feeds `events` to a fresh session and returns the assistant message it appends.
pub fn assemble(events: Vec<StreamEvent>) -> Result<Message, ReplyError> {
    let rejected = |why: String| ReplyError::Rejected { why };
    let mut session = Session::new(SessionConfig::default());
    let started = session
        .handle(Input::Prompt {
            text: "(recorded response)".into(),
            now: String::new(),
        })
        .map_err(|e| rejected(e.to_string()))?;
    let Some(op) = started.iter().find_map(|o| match o {
        Output::Send { op, .. } => Some(*op),
        _ => None,
    }) else {
        return Err(rejected("the engine sent no request".into()));
    };
    let mut stopped = false;
    for event in events {
        stopped |= matches!(event, StreamEvent::MessageStop);
        let outputs = session
            .handle(Input::Stream { op, event })
            .map_err(|e| rejected(e.to_string()))?;
        for o in outputs {
            if let Output::TurnEnded {
                outcome: TurnOutcome::Failed { reason },
            } = o
            {
                return Err(rejected(reason));
            }
        }
        if stopped {
            break;
        }
    }
    if !stopped {
        return Err(rejected("the stream ends before message_stop".into()));
    }
    match session.history().get(1) {
        Some(m) => Ok((**m).clone()),
        None => Err(rejected("the engine appended no assistant message".into())),
    }
}

/// A whole recorded stream → the assistant message.
pub fn parse_stream(text: &str) -> Result<Message, ReplyError> {
    let mut events = Vec::new();
    for ev in split_events(text) {
        events.extend(to_stream_events(&ev)?);
    }
    assemble(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(events: &[(&str, &str)]) -> String {
        events
            .iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
            .collect()
    }

    const START: (&str, &str) = (
        "message_start",
        r#"{"type":"message_start","message":{"role":"assistant","content":[]}}"#,
    );
    const STOP: (&str, &str) = ("message_stop", r#"{"type":"message_stop"}"#);

    #[test]
    fn split_events_follows_the_sse_rules() {
        let text =
            ": comment\nevent: a\ndata: {\"x\":\ndata: 1}\n\nevent: b\r\ndata: 2\r\n\r\ndata: 3";
        let got = split_events(text);
        assert_eq!(
            got,
            vec![
                SseEvent {
                    name: Some("a".into()),
                    data: "{\"x\":\n1}".into(),
                    line: 2
                },
                SseEvent {
                    name: Some("b".into()),
                    data: "2".into(),
                    line: 6
                },
                SseEvent {
                    name: None,
                    data: "3".into(),
                    line: 9
                },
            ]
        );
    }

    #[test]
    fn a_tool_call_stream_becomes_the_message_the_engine_appends() {
        let text = stream(&[
            START,
            ("ping", r#"{"type": "ping"}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Look"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"ls","input":{},"caller":{"type":"direct"}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"th\": \".\"}"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            ),
            STOP,
        ]);
        let m = parse_stream(&text).expect("valid");
        assert_eq!(
            m.to_json(),
            r#"{"role":"assistant","content":[{"type":"text","text":"Look"},{"type":"tool_use","id":"t1","name":"ls","input":{"path":"."}}]}"#
        );
    }

    #[test]
    fn the_engine_rejects_what_it_would_reject_live() {
        let broken_json = stream(&[
            START,
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"ls","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
        ]);
        assert!(matches!(
            parse_stream(&broken_json),
            Err(ReplyError::Rejected { why }) if why.contains("input is not JSON")
        ));
        let empty = stream(&[
            START,
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
            ),
            STOP,
        ]);
        assert!(matches!(
            parse_stream(&empty),
            Err(ReplyError::Rejected { why }) if why.contains("empty content")
        ));
        let unstarted = stream(&[
            START,
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#,
            ),
        ]);
        assert!(matches!(
            parse_stream(&unstarted),
            Err(ReplyError::Rejected { why }) if why.contains("never started")
        ));
        let cut = stream(&[START]);
        assert_eq!(
            parse_stream(&cut),
            Err(ReplyError::Rejected {
                why: "the stream ends before message_stop".into()
            })
        );
    }

    #[test]
    fn unknown_shapes_are_unsupported_and_errors_are_the_providers() {
        let server_tool = stream(&[
            START,
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search"}}"#,
            ),
        ]);
        assert!(matches!(
            parse_stream(&server_tool),
            Err(ReplyError::Unsupported { line: 4, .. })
        ));
        let overloaded = stream(&[
            START,
            (
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
        ]);
        assert_eq!(
            parse_stream(&overloaded),
            Err(ReplyError::ProviderError {
                line: 4,
                why: "overloaded_error: Overloaded".into()
            })
        );
        assert!(matches!(
            parse_stream("data: {not json\n\n"),
            Err(ReplyError::Syntax { line: 1, .. })
        ));
    }
}
