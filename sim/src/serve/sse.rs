//! Anthropic Messages API bytes: the SSE stream and the non-streamed JSON message.
//!
//! Guarantee: [`encode`] writes each event exactly as the real API does, field order,
//! spacing and framing included (`event: NAME\ndata: JSON\n\n`, `{"type": "ping"}`
//! with its space, the padding spaces the API puts before an event's closing brace).
//! That is pinned byte for byte against streams recorded from the real API
//! (`sim/tests/data/crush_parallel_tool_calls/`). Clients parse these bytes with
//! their own hand-written or generated parsers, so "valid SSE" is not enough: a
//! stream that differs from the provider's in a way a parser depends on (a missing
//! empty first `input_json_delta`, a `ping` before the first block) would test a
//! different client path than production takes.
//!
//! Everything here is pure: the same events and padding give the same bytes.

use serde_json::Value;
use turnsim_core::{BlockStart, StopReason, StreamEvent};

/// `usage` as `message_start` carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartUsage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub ephemeral_5m_input_tokens: u64,
    pub ephemeral_1h_input_tokens: u64,
    pub output_tokens: u64,
    pub service_tier: String,
    pub inference_geo: String,
}

impl StartUsage {
    /// What this server reports: an estimate of the input, nothing cached.
    pub fn estimate(input_tokens: u64) -> StartUsage {
        StartUsage {
            input_tokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            ephemeral_5m_input_tokens: 0,
            ephemeral_1h_input_tokens: 0,
            output_tokens: 1,
            service_tier: "standard".into(),
            inference_geo: "not_available".into(),
        }
    }
}

/// `usage` as `message_delta` carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaUsage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub output_tokens: u64,
}

/// A content block as `content_block_start` opens it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireBlock {
    Text,
    Thinking,
    RedactedThinking { data: String },
    ToolUse { id: String, name: String },
}

/// A `content_block_delta` payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireDelta {
    Text(String),
    Thinking(String),
    Signature(String),
    InputJson(String),
}

/// One SSE event of the Messages API, with every field the wire carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireEvent {
    MessageStart {
        id: String,
        model: String,
        usage: StartUsage,
    },
    Ping,
    BlockStart {
        index: usize,
        block: WireBlock,
    },
    Delta {
        index: usize,
        delta: WireDelta,
    },
    BlockStop {
        index: usize,
    },
    MessageDelta {
        stop_reason: String,
        usage: DeltaUsage,
    },
    MessageStop,
    Error {
        kind: String,
        message: String,
    },
}

impl WireEvent {
    /// The SSE `event:` name.
    pub fn name(&self) -> &'static str {
        match self {
            WireEvent::MessageStart { .. } => "message_start",
            WireEvent::Ping => "ping",
            WireEvent::BlockStart { .. } => "content_block_start",
            WireEvent::Delta { .. } => "content_block_delta",
            WireEvent::BlockStop { .. } => "content_block_stop",
            WireEvent::MessageDelta { .. } => "message_delta",
            WireEvent::MessageStop => "message_stop",
            WireEvent::Error { .. } => "error",
        }
    }
}

/// A JSON string literal; serde_json escapes exactly what the API escapes (quotes,
/// backslashes, control characters) and leaves other UTF-8 as it is.
fn js(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The `data:` JSON of an event, without padding.
pub fn data_json(event: &WireEvent) -> String {
    match event {
        WireEvent::MessageStart { id, model, usage } => format!(
            concat!(
                r#"{{"type":"message_start","message":{{"model":{},"id":{},"type":"message","role":"assistant","content":[],"#,
                r#""stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":{{"input_tokens":{},"#,
                r#""cache_creation_input_tokens":{},"cache_read_input_tokens":{},"cache_creation":{{"ephemeral_5m_input_tokens":{},"#,
                r#""ephemeral_1h_input_tokens":{}}},"output_tokens":{},"service_tier":{},"inference_geo":{}}}}}}}"#
            ),
            js(model),
            js(id),
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.ephemeral_5m_input_tokens,
            usage.ephemeral_1h_input_tokens,
            usage.output_tokens,
            js(&usage.service_tier),
            js(&usage.inference_geo),
        ),
        WireEvent::Ping => r#"{"type": "ping"}"#.to_owned(),
        WireEvent::BlockStart { index, block } => format!(
            r#"{{"type":"content_block_start","index":{index},"content_block":{}}}"#,
            block_json(block)
        ),
        WireEvent::Delta { index, delta } => {
            let delta = match delta {
                WireDelta::Text(t) => format!(r#"{{"type":"text_delta","text":{}}}"#, js(t)),
                WireDelta::Thinking(t) => {
                    format!(r#"{{"type":"thinking_delta","thinking":{}}}"#, js(t))
                }
                WireDelta::Signature(s) => {
                    format!(r#"{{"type":"signature_delta","signature":{}}}"#, js(s))
                }
                WireDelta::InputJson(p) => {
                    format!(r#"{{"type":"input_json_delta","partial_json":{}}}"#, js(p))
                }
            };
            format!(r#"{{"type":"content_block_delta","index":{index},"delta":{delta}}}"#)
        }
        WireEvent::BlockStop { index } => {
            format!(r#"{{"type":"content_block_stop","index":{index}}}"#)
        }
        WireEvent::MessageDelta { stop_reason, usage } => format!(
            concat!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":{},"stop_sequence":null,"stop_details":null}},"#,
                r#""usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"output_tokens":{}}}}}"#
            ),
            js(stop_reason),
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
        ),
        WireEvent::MessageStop => r#"{"type":"message_stop"}"#.to_owned(),
        // Not in the recorded streams; this is the shape the API documents for an
        // error after the stream started (spaced like `ping`).
        WireEvent::Error { kind, message } => format!(
            r#"{{"type": "error", "error": {{"type": {}, "message": {}}}}}"#,
            js(kind),
            js(message)
        ),
    }
}

fn block_json(block: &WireBlock) -> String {
    match block {
        WireBlock::Text => r#"{"type":"text","text":""}"#.to_owned(),
        WireBlock::Thinking => r#"{"type":"thinking","thinking":"","signature":""}"#.to_owned(),
        WireBlock::RedactedThinking { data } => {
            format!(r#"{{"type":"redacted_thinking","data":{}}}"#, js(data))
        }
        WireBlock::ToolUse { id, name } => format!(
            r#"{{"type":"tool_use","id":{},"name":{},"input":{{}},"caller":{{"type":"direct"}}}}"#,
            js(id),
            js(name)
        ),
    }
}

/// Whether the API pads this event's JSON (it never pads `ping` or `error`).
pub fn is_padded(event: &WireEvent) -> bool {
    !matches!(event, WireEvent::Ping | WireEvent::Error { .. })
}

/// The bytes of one event: `event: NAME\ndata: JSON\n\n`, with `pad` spaces before
/// the JSON's final `}` as the real API sends (ignored for unpadded events).
pub fn encode(event: &WireEvent, pad: usize) -> Vec<u8> {
    let json = data_json(event);
    let mut out = String::with_capacity(json.len() + pad + 32);
    out.push_str("event: ");
    out.push_str(event.name());
    out.push_str("\ndata: ");
    match json.strip_suffix('}') {
        Some(body) if is_padded(event) => {
            out.push_str(body);
            out.extend(std::iter::repeat_n(' ', pad));
            out.push('}');
        }
        _ => out.push_str(&json),
    }
    out.push_str("\n\n");
    out.into_bytes()
}

/// Longest `partial_json` piece sent in one delta; the API sends tool input a few
/// bytes at a time, so a cut "inside a tool input" has somewhere to land.
pub const INPUT_PIECE_MAX: usize = 12;

/// What [`to_wire`] needs besides the simulator's events.
#[derive(Clone, Debug)]
pub struct MessageMeta {
    pub id: String,
    pub model: String,
    pub input_tokens: u64,
}

/// Turns the simulator's events into the events the real API would send: identifiers
/// and usage filled in, a `ping` after the first `content_block_start` (after
/// `message_start` when there is none), an empty `input_json_delta` opening every
/// `tool_use` block, and tool input in pieces of at most [`INPUT_PIECE_MAX`] bytes.
/// Deterministic: it draws nothing.
pub fn to_wire(events: &[StreamEvent], meta: &MessageMeta) -> Vec<WireEvent> {
    to_wire_indexed(events, meta)
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

/// [`to_wire`], each wire event with the index of the simulator event it came from.
pub fn to_wire_indexed(events: &[StreamEvent], meta: &MessageMeta) -> Vec<(usize, WireEvent)> {
    let mut out = Indexed {
        source: 0,
        events: Vec::with_capacity(events.len() * 2),
    };
    let mut pinged = false;
    let has_block = events
        .iter()
        .any(|e| matches!(e, StreamEvent::BlockStart { .. }));
    for (source, event) in events.iter().enumerate() {
        out.source = source;
        match event {
            StreamEvent::MessageStart => {
                out.push(WireEvent::MessageStart {
                    id: meta.id.clone(),
                    model: meta.model.clone(),
                    usage: StartUsage::estimate(meta.input_tokens),
                });
                if !has_block {
                    out.push(WireEvent::Ping);
                    pinged = true;
                }
            }
            StreamEvent::BlockStart { index, block } => {
                let (block, tool) = match block {
                    BlockStart::Text => (WireBlock::Text, false),
                    BlockStart::Thinking => (WireBlock::Thinking, false),
                    BlockStart::RedactedThinking { data } => {
                        (WireBlock::RedactedThinking { data: data.clone() }, false)
                    }
                    BlockStart::ToolUse { id, name } => (
                        WireBlock::ToolUse {
                            id: id.clone(),
                            name: name.clone(),
                        },
                        true,
                    ),
                };
                out.push(WireEvent::BlockStart {
                    index: *index,
                    block,
                });
                if !pinged {
                    out.push(WireEvent::Ping);
                    pinged = true;
                }
                if tool {
                    out.push(WireEvent::Delta {
                        index: *index,
                        delta: WireDelta::InputJson(String::new()),
                    });
                }
            }
            StreamEvent::TextDelta { index, text } => out.push(WireEvent::Delta {
                index: *index,
                delta: WireDelta::Text(text.clone()),
            }),
            StreamEvent::ThinkingDelta { index, thinking } => out.push(WireEvent::Delta {
                index: *index,
                delta: WireDelta::Thinking(thinking.clone()),
            }),
            StreamEvent::SignatureDelta { index, signature } => out.push(WireEvent::Delta {
                index: *index,
                delta: WireDelta::Signature(signature.clone()),
            }),
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                for piece in pieces(partial_json, INPUT_PIECE_MAX) {
                    out.push(WireEvent::Delta {
                        index: *index,
                        delta: WireDelta::InputJson(piece.to_owned()),
                    });
                }
            }
            StreamEvent::BlockStop { index } => out.push(WireEvent::BlockStop { index: *index }),
            StreamEvent::MessageDelta { stop_reason, usage } => out.push(WireEvent::MessageDelta {
                stop_reason: stop_reason_name(*stop_reason).to_owned(),
                usage: DeltaUsage {
                    input_tokens: meta.input_tokens,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 0,
                    output_tokens: usage.output_tokens,
                },
            }),
            StreamEvent::MessageStop => out.push(WireEvent::MessageStop),
            StreamEvent::Error { kind, message } => out.push(WireEvent::Error {
                kind: kind.clone(),
                message: message.clone(),
            }),
        }
    }
    out.events
}

struct Indexed {
    source: usize,
    events: Vec<(usize, WireEvent)>,
}

impl Indexed {
    fn push(&mut self, e: WireEvent) {
        self.events.push((self.source, e));
    }
}

/// `s` in pieces of at most `max` bytes, split at char boundaries.
fn pieces(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while rest.len() > max {
        let mut at = max;
        while at > 0 && !rest.is_char_boundary(at) {
            at -= 1;
        }
        if at == 0 {
            // A char wider than `max` bytes: take it whole.
            at = rest.char_indices().nth(1).map_or(rest.len(), |(i, _)| i);
        }
        out.push(&rest[..at]);
        rest = &rest[at..];
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

pub fn stop_reason_name(r: StopReason) -> &'static str {
    match r {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
        StopReason::StopSequence => "stop_sequence",
        StopReason::Refusal => "refusal",
        StopReason::PauseTurn => "pause_turn",
    }
}

/// The non-streamed response: the message the events build up, as the API returns it
/// for `"stream": false`. Tool input that is not valid JSON (a cut plan) becomes `{}`.
pub fn message_json(events: &[WireEvent]) -> Value {
    let mut id = String::new();
    let mut model = String::new();
    let mut input_tokens = 0;
    let mut output_tokens = 0;
    let mut stop_reason = Value::Null;
    // (block, accumulated tool input)
    let mut blocks: Vec<(serde_json::Map<String, Value>, Option<String>)> = Vec::new();
    for event in events {
        match event {
            WireEvent::MessageStart {
                id: i,
                model: m,
                usage,
            } => {
                id = i.clone();
                model = m.clone();
                input_tokens = usage.input_tokens;
            }
            WireEvent::BlockStart { block, .. } => {
                let mut map = serde_json::Map::new();
                let mut input = None;
                match block {
                    WireBlock::Text => {
                        map.insert("type".into(), "text".into());
                        map.insert("text".into(), "".into());
                    }
                    WireBlock::Thinking => {
                        map.insert("type".into(), "thinking".into());
                        map.insert("thinking".into(), "".into());
                        map.insert("signature".into(), "".into());
                    }
                    WireBlock::RedactedThinking { data } => {
                        map.insert("type".into(), "redacted_thinking".into());
                        map.insert("data".into(), data.clone().into());
                    }
                    WireBlock::ToolUse { id, name } => {
                        map.insert("type".into(), "tool_use".into());
                        map.insert("id".into(), id.clone().into());
                        map.insert("name".into(), name.clone().into());
                        map.insert("input".into(), Value::Object(Default::default()));
                        input = Some(String::new());
                    }
                }
                blocks.push((map, input));
            }
            WireEvent::Delta { delta, .. } => {
                let Some((map, input)) = blocks.last_mut() else {
                    continue;
                };
                let (key, piece) = match delta {
                    WireDelta::Text(t) => ("text", t),
                    WireDelta::Thinking(t) => ("thinking", t),
                    WireDelta::Signature(s) => ("signature", s),
                    WireDelta::InputJson(p) => {
                        if let Some(input) = input {
                            input.push_str(p);
                        }
                        continue;
                    }
                };
                if let Some(Value::String(s)) = map.get_mut(key) {
                    s.push_str(piece);
                }
            }
            WireEvent::MessageDelta {
                stop_reason: r,
                usage,
            } => {
                stop_reason = Value::String(r.clone());
                output_tokens = usage.output_tokens;
            }
            WireEvent::Ping | WireEvent::BlockStop { .. } | WireEvent::MessageStop => {}
            WireEvent::Error { .. } => break,
        }
    }
    let content: Vec<Value> = blocks
        .into_iter()
        .map(|(mut map, input)| {
            if let Some(input) = input {
                let parsed = match serde_json::from_str::<Value>(&input) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => Value::Object(Default::default()),
                };
                map.insert("input".into(), parsed);
            }
            Value::Object(map)
        })
        .collect();
    serde_json::json!({
        "model": model,
        "id": id,
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        },
    })
}

/// The body of an HTTP error response: `{"type":"error","error":{…},"request_id":…}`.
pub fn error_body(kind: &str, message: &str, request_id: &str) -> Vec<u8> {
    serde_json::json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": request_id,
    })
    .to_string()
    .into_bytes()
}

/// Parses one recorded SSE event back into a [`WireEvent`] and its padding, for
/// pinning and for tests that read what the server sent. `None` for anything this
/// module would not produce.
pub fn parse_event(frame: &str) -> Option<(WireEvent, usize)> {
    let mut lines = frame.lines();
    let name = lines.next()?.strip_prefix("event: ")?;
    let data = lines.next()?.strip_prefix("data: ")?;
    let trimmed = data.strip_suffix('}')?;
    let body = trimmed.trim_end_matches(' ');
    let pad = trimmed.len() - body.len();
    let v: Value = serde_json::from_str(data).ok()?;
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let event = match name {
        "message_start" => {
            let m = v.get("message")?;
            let u = m.get("usage")?;
            let cc = u.get("cache_creation")?;
            WireEvent::MessageStart {
                id: s(m, "id")?,
                model: s(m, "model")?,
                usage: StartUsage {
                    input_tokens: n(u, "input_tokens")?,
                    cache_creation_input_tokens: n(u, "cache_creation_input_tokens")?,
                    cache_read_input_tokens: n(u, "cache_read_input_tokens")?,
                    ephemeral_5m_input_tokens: n(cc, "ephemeral_5m_input_tokens")?,
                    ephemeral_1h_input_tokens: n(cc, "ephemeral_1h_input_tokens")?,
                    output_tokens: n(u, "output_tokens")?,
                    service_tier: s(u, "service_tier")?,
                    inference_geo: s(u, "inference_geo")?,
                },
            }
        }
        "ping" => WireEvent::Ping,
        "content_block_start" => {
            let b = v.get("content_block")?;
            let block = match b.get("type")?.as_str()? {
                "text" => WireBlock::Text,
                "thinking" => WireBlock::Thinking,
                "redacted_thinking" => WireBlock::RedactedThinking {
                    data: s(b, "data")?,
                },
                "tool_use" => WireBlock::ToolUse {
                    id: s(b, "id")?,
                    name: s(b, "name")?,
                },
                _ => return None,
            };
            WireEvent::BlockStart {
                index: usize::try_from(n(&v, "index")?).ok()?,
                block,
            }
        }
        "content_block_delta" => {
            let d = v.get("delta")?;
            let delta = match d.get("type")?.as_str()? {
                "text_delta" => WireDelta::Text(s(d, "text")?),
                "thinking_delta" => WireDelta::Thinking(s(d, "thinking")?),
                "signature_delta" => WireDelta::Signature(s(d, "signature")?),
                "input_json_delta" => WireDelta::InputJson(s(d, "partial_json")?),
                _ => return None,
            };
            WireEvent::Delta {
                index: usize::try_from(n(&v, "index")?).ok()?,
                delta,
            }
        }
        "content_block_stop" => WireEvent::BlockStop {
            index: usize::try_from(n(&v, "index")?).ok()?,
        },
        "message_delta" => {
            let u = v.get("usage")?;
            WireEvent::MessageDelta {
                stop_reason: s(v.get("delta")?, "stop_reason")?,
                usage: DeltaUsage {
                    input_tokens: n(u, "input_tokens")?,
                    cache_creation_input_tokens: n(u, "cache_creation_input_tokens")?,
                    cache_read_input_tokens: n(u, "cache_read_input_tokens")?,
                    output_tokens: n(u, "output_tokens")?,
                },
            }
        }
        "message_stop" => WireEvent::MessageStop,
        "error" => {
            let e = v.get("error")?;
            WireEvent::Error {
                kind: s(e, "type")?,
                message: s(e, "message")?,
            }
        }
        _ => return None,
    };
    let pad = if is_padded(&event) { pad } else { 0 };
    Some((event, pad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_is_spaced_and_never_padded() {
        assert_eq!(
            encode(&WireEvent::Ping, 7),
            b"event: ping\ndata: {\"type\": \"ping\"}\n\n".to_vec()
        );
    }

    #[test]
    fn padding_goes_before_the_final_brace() {
        let bytes = encode(&WireEvent::BlockStop { index: 1 }, 3);
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1   }\n\n"
        );
    }

    #[test]
    fn tool_input_is_split_into_small_pieces_after_an_empty_one() {
        let meta = MessageMeta {
            id: "msg_1".into(),
            model: "m".into(),
            input_tokens: 3,
        };
        let events = [
            StreamEvent::MessageStart,
            StreamEvent::BlockStart {
                index: 0,
                block: BlockStart::ToolUse {
                    id: "toolu_1".into(),
                    name: "ls".into(),
                },
            },
            StreamEvent::InputJsonDelta {
                index: 0,
                partial_json: r#"{"path":"/tmp/some/longer/path"}"#.into(),
            },
            StreamEvent::BlockStop { index: 0 },
        ];
        let wire = to_wire(&events, &meta);
        assert!(matches!(wire[1], WireEvent::BlockStart { .. }));
        assert_eq!(wire[2], WireEvent::Ping);
        let pieces: Vec<String> = wire
            .iter()
            .filter_map(|e| match e {
                WireEvent::Delta {
                    delta: WireDelta::InputJson(p),
                    ..
                } => Some(p.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(pieces[0], "");
        assert!(pieces.iter().all(|p| p.len() <= INPUT_PIECE_MAX));
        assert_eq!(pieces.concat(), r#"{"path":"/tmp/some/longer/path"}"#);
        let msg = message_json(&wire);
        assert_eq!(msg["content"][0]["input"]["path"], "/tmp/some/longer/path");
    }

    #[test]
    fn every_encoded_event_parses_back_with_its_padding() {
        let events = [
            WireEvent::MessageStart {
                id: "msg_x".into(),
                model: "claude".into(),
                usage: StartUsage::estimate(9),
            },
            WireEvent::Ping,
            WireEvent::BlockStart {
                index: 0,
                block: WireBlock::Thinking,
            },
            WireEvent::Delta {
                index: 0,
                delta: WireDelta::Thinking("hm \"q\"\n".into()),
            },
            WireEvent::Delta {
                index: 0,
                delta: WireDelta::Signature("sig".into()),
            },
            WireEvent::BlockStop { index: 0 },
            WireEvent::MessageDelta {
                stop_reason: "end_turn".into(),
                usage: DeltaUsage {
                    input_tokens: 9,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 0,
                    output_tokens: 4,
                },
            },
            WireEvent::MessageStop,
            WireEvent::Error {
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
            },
        ];
        for (i, e) in events.iter().enumerate() {
            let pad = if is_padded(e) { i } else { 0 };
            let bytes = encode(e, pad);
            let text = String::from_utf8_lossy(&bytes);
            assert_eq!(parse_event(&text), Some((e.clone(), pad)), "{text}");
        }
    }
}
