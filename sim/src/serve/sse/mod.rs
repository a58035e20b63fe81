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

mod message;
#[cfg(test)]
mod tests;
mod to_wire;

pub use message::{error_body, message_json, parse_event};
pub use to_wire::{INPUT_PIECE_MAX, MessageMeta, stop_reason_name, to_wire, to_wire_indexed};

use serde_json::Value;

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
