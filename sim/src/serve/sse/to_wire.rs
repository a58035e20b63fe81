//! The simulator's events as the real API sends them: ids and usage filled in, the
//! `ping`, the empty first `input_json_delta`, tool input in small pieces.
//!
//! Guarantee: the conversion draws nothing, so the wire events are a pure function of
//! the simulator's events and the message metadata.

use super::*;
use turnsim_core::{BlockStart, StopReason, StreamEvent};

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
