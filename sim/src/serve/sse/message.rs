//! Whole-message bodies and reading events back: the non-streamed JSON message, the
//! error body, and the parse of a recorded SSE frame.
//!
//! Guarantee: [`parse_event`] accepts exactly what [`super::encode`] writes (padding
//! included) and nothing else, so a pinned recording round-trips byte for byte.

use super::*;
use serde_json::Value;

/// The non-streamed response: the message the events build up, as the API returns it
/// for `"stream": false`. Tool input that is not valid JSON (a cut plan) becomes `{}`.
/// A `tool_use` block carries the same fields as when it is streamed, `caller`
/// included: the API's block type (the SDKs' `ToolUseBlock`, with its optional
/// `caller`) is one type for both, so a client that reads `caller` sees it either way.
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
                        map.insert("caller".into(), serde_json::json!({"type": "direct"}));
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
