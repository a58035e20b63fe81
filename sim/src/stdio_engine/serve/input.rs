//! The `input` of an `input` request, read tag first on the engine side.
//!
//! Guarantee: [`WireInput`] reads to exactly the `Input` the derived implementation
//! reads, or fails where it fails (`tests.rs` holds the two side by side): when the
//! `input` tag comes first (as the harness always writes it), and for a `stream`
//! input the `event` tag too, the fields are read straight into the variant with
//! the derived rules (unknown fields ignored, a repeated tag refused); otherwise the
//! object goes whole to the derived implementation. Why: nearly every request is a
//! stream event, and serde's internally tagged enums copy each object into an
//! intermediate tree at each of the two levels before reading it, which was a
//! quarter of the engine side's instructions.

use super::super::tagged::{self, First, derived, variant_fields};
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, MapAccess, SeqAccess};
use serde::{Deserialize, Deserializer};
use turnsim_core::{
    BlockStart, CancelCause, Input, OperationId, StopReason, StreamEvent, Thinking, ToolOutcome,
    ToolSpec, Usage,
};

variant_fields!(
    "input",
    PromptFields {
        text: String,
        now: String
    }
);
variant_fields!(
    "input",
    StreamFields {
        op: OperationId,
        event: WireEvent
    }
);
variant_fields!(
    "input",
    ResultFields {
        op: OperationId,
        outcome: ToolOutcome
    }
);
variant_fields!("input", CancelFields { cause: CancelCause });
variant_fields!("input", CompactFields { summary: String });
variant_fields!("input", RewindFields { index: usize });
// `thinking` absent reads as `None` (serde's rule for an `Option` field), as the
// derived `Input` reads it: a harness that never switches thinking writes no field.
variant_fields!(
    "input",
    ConfigureFields {
        system: String,
        tools: Vec<ToolSpec>,
        thinking: Option<Thinking>
    }
);

variant_fields!("event", UnitFields {});
variant_fields!(
    "event",
    BlockStartFields {
        index: usize,
        block: BlockStart
    }
);
variant_fields!(
    "event",
    TextFields {
        index: usize,
        text: String
    }
);
variant_fields!(
    "event",
    ThinkingFields {
        index: usize,
        thinking: String
    }
);
variant_fields!(
    "event",
    SignatureFields {
        index: usize,
        signature: String
    }
);
variant_fields!(
    "event",
    JsonFields {
        index: usize,
        partial_json: String
    }
);
variant_fields!("event", IndexFields { index: usize });
variant_fields!(
    "event",
    DeltaFields {
        stop_reason: StopReason,
        usage: Usage
    }
);
variant_fields!(
    "event",
    ErrorFields {
        kind: String,
        message: String
    }
);

/// An `Input`, read tag first when it can be.
pub struct WireInput(pub Input);

/// A `StreamEvent`, read tag first when it can be.
pub struct WireEvent(pub StreamEvent);

const INPUTS: &[&str] = &[
    "prompt",
    "stream",
    "tool_result",
    "cancel",
    "compact",
    "rewind",
    "configure",
];

const EVENTS: &[&str] = &[
    "message_start",
    "block_start",
    "text_delta",
    "thinking_delta",
    "signature_delta",
    "input_json_delta",
    "block_stop",
    "message_delta",
    "message_stop",
    "error",
];

struct InputVisitor;

impl<'de> de::Visitor<'de> for InputVisitor {
    type Value = WireInput;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("internally tagged enum Input")
    }

    /// The derived reading takes a sequence too (the tag first); so does this.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<WireInput, A::Error> {
        Input::deserialize(SeqAccessDeserializer::new(seq)).map(WireInput)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<WireInput, A::Error> {
        const T: &str = "input";
        let (t, rest) = match tagged::first(map, T)? {
            First::Whole(v) => return derived(v).map(WireInput),
            First::Tag(t, rest) => (t, rest),
        };
        Ok(WireInput(match t.as_str() {
            "prompt" => {
                let f: PromptFields = tagged::fields(rest, T)?;
                Input::Prompt {
                    text: f.text,
                    now: f.now,
                }
            }
            "stream" => {
                let f: StreamFields = tagged::fields(rest, T)?;
                Input::Stream {
                    op: f.op,
                    event: f.event.0,
                }
            }
            "tool_result" => {
                let f: ResultFields = tagged::fields(rest, T)?;
                Input::ToolResult {
                    op: f.op,
                    outcome: f.outcome,
                }
            }
            "cancel" => Input::Cancel {
                cause: tagged::fields::<CancelFields, _>(rest, T)?.cause,
            },
            "compact" => Input::Compact {
                summary: tagged::fields::<CompactFields, _>(rest, T)?.summary,
            },
            "rewind" => Input::Rewind {
                index: tagged::fields::<RewindFields, _>(rest, T)?.index,
            },
            "configure" => {
                let f: ConfigureFields = tagged::fields(rest, T)?;
                Input::Configure {
                    system: f.system,
                    tools: f.tools.into(),
                    thinking: f.thinking,
                }
            }
            _ => return Err(de::Error::unknown_variant(&t, INPUTS)),
        }))
    }
}

struct EventVisitor;

impl<'de> de::Visitor<'de> for EventVisitor {
    type Value = WireEvent;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("internally tagged enum StreamEvent")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<WireEvent, A::Error> {
        StreamEvent::deserialize(SeqAccessDeserializer::new(seq)).map(WireEvent)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<WireEvent, A::Error> {
        const T: &str = "event";
        let (t, rest) = match tagged::first(map, T)? {
            First::Whole(v) => return derived(v).map(WireEvent),
            First::Tag(t, rest) => (t, rest),
        };
        Ok(WireEvent(match t.as_str() {
            "message_start" => {
                tagged::fields::<UnitFields, _>(rest, T)?;
                StreamEvent::MessageStart
            }
            "block_start" => {
                let f: BlockStartFields = tagged::fields(rest, T)?;
                StreamEvent::BlockStart {
                    index: f.index,
                    block: f.block,
                }
            }
            "text_delta" => {
                let f: TextFields = tagged::fields(rest, T)?;
                StreamEvent::TextDelta {
                    index: f.index,
                    text: f.text,
                }
            }
            "thinking_delta" => {
                let f: ThinkingFields = tagged::fields(rest, T)?;
                StreamEvent::ThinkingDelta {
                    index: f.index,
                    thinking: f.thinking,
                }
            }
            "signature_delta" => {
                let f: SignatureFields = tagged::fields(rest, T)?;
                StreamEvent::SignatureDelta {
                    index: f.index,
                    signature: f.signature,
                }
            }
            "input_json_delta" => {
                let f: JsonFields = tagged::fields(rest, T)?;
                StreamEvent::InputJsonDelta {
                    index: f.index,
                    partial_json: f.partial_json,
                }
            }
            "block_stop" => StreamEvent::BlockStop {
                index: tagged::fields::<IndexFields, _>(rest, T)?.index,
            },
            "message_delta" => {
                let f: DeltaFields = tagged::fields(rest, T)?;
                StreamEvent::MessageDelta {
                    stop_reason: f.stop_reason,
                    usage: f.usage,
                }
            }
            "message_stop" => {
                tagged::fields::<UnitFields, _>(rest, T)?;
                StreamEvent::MessageStop
            }
            "error" => {
                let f: ErrorFields = tagged::fields(rest, T)?;
                StreamEvent::Error {
                    kind: f.kind,
                    message: f.message,
                }
            }
            _ => return Err(de::Error::unknown_variant(&t, EVENTS)),
        }))
    }
}

impl<'de> Deserialize<'de> for WireInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WireInput, D::Error> {
        d.deserialize_any(InputVisitor)
    }
}

impl<'de> Deserialize<'de> for WireEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WireEvent, D::Error> {
        d.deserialize_any(EventVisitor)
    }
}
