//! Hand-written `Arbitrary` impls (feature `arbitrary`) for the input types that hold
//! JSON: [`Block`], [`ToolCall`] and [`ToolSpec`]. Every other public input type
//! derives `Arbitrary` where it is declared.
//!
//! Guarantee: every value built here is one the wire format can carry and read back
//! unchanged, so a fuzz target or a user's own suite spends its time on the engine and
//! not on inputs `serde_json` would already refuse. JSON values are small (at most
//! [`MAX_JSON_DEPTH`] levels, a few items per level) and their numbers are exact in
//! binary, so they print and parse back to the same value; an unknown block always
//! carries a `"type"` that is not one of the five known ones, which is what keeps it
//! an unknown block after a round trip. `tool_result` content holds only text blocks,
//! as on the wire today; that also keeps `Block` from recursing into itself without
//! bound.

use crate::message::{Block, ToolCall, ToolResultContent};
use crate::request::ToolSpec;
use arbitrary::{Arbitrary, Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Nesting levels of a generated JSON value below the top.
pub const MAX_JSON_DEPTH: u32 = 2;

/// Items per generated array or object.
const MAX_ITEMS: usize = 4;

/// The block types this crate parses itself; an unknown block must not use one.
const KNOWN_TYPES: [&str; 5] = [
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
];

/// Types real transcripts carry that this crate keeps as [`Block::Unknown`].
const UNKNOWN_TYPES: [&str; 5] = [
    "image",
    "document",
    "search_result",
    "server_tool_use",
    "web_search_tool_result",
];

/// A small JSON value, at most `depth` levels deep.
pub fn json_value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let kinds = if depth == 0 { 3 } else { 5 };
    Ok(match u.int_in_range(0..=kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(json_number(u)?),
        3 => Value::String(u.arbitrary()?),
        4 => {
            let n = u.int_in_range(0..=MAX_ITEMS)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(json_value(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => Value::Object(json_object(u, depth - 1)?),
    })
}

/// A small JSON object whose values are at most `depth` levels deep.
pub fn json_object(u: &mut Unstructured<'_>, depth: u32) -> Result<Map<String, Value>> {
    let n = u.int_in_range(0..=MAX_ITEMS)?;
    let mut map = Map::new();
    for _ in 0..n {
        let key: String = u.arbitrary()?;
        let value = json_value(u, depth)?;
        map.insert(key, value);
    }
    Ok(map)
}

/// An integer, or a float that is a multiple of 1/8 (exact in binary, so it prints
/// and parses back to the same value).
fn json_number(u: &mut Unstructured<'_>) -> Result<Number> {
    Ok(match u.int_in_range(0..=2)? {
        0 => Number::from(u.arbitrary::<i64>()?),
        1 => Number::from(u.arbitrary::<u64>()?),
        _ => {
            let eighths = f64::from(u.arbitrary::<i32>()?) / 8.0;
            Number::from_f64(eighths).unwrap_or_else(|| Number::from(0))
        }
    })
}

/// `tool_result` content: a string, or text blocks.
fn tool_result_content(u: &mut Unstructured<'_>) -> Result<ToolResultContent> {
    if u.arbitrary()? {
        return Ok(ToolResultContent::Text(u.arbitrary()?));
    }
    let n = u.int_in_range(0..=MAX_ITEMS)?;
    let mut blocks = Vec::with_capacity(n);
    for _ in 0..n {
        blocks.push(Block::Text {
            text: u.arbitrary()?,
        });
    }
    Ok(ToolResultContent::Blocks(blocks))
}

/// The fields of an unknown block: a `"type"` that is not a known one, and a few
/// more fields.
fn unknown_block(u: &mut Unstructured<'_>) -> Result<Map<String, Value>> {
    let kind = if u.arbitrary()? {
        (*u.choose(&UNKNOWN_TYPES)?).to_string()
    } else {
        let raw: String = u.arbitrary()?;
        if KNOWN_TYPES.contains(&raw.as_str()) {
            format!("x-{raw}")
        } else {
            raw
        }
    };
    let mut map = json_object(u, MAX_JSON_DEPTH - 1)?;
    map.shift_remove("type");
    let mut block = Map::new();
    block.insert("type".to_string(), Value::String(kind));
    block.append(&mut map);
    Ok(block)
}

impl<'a> Arbitrary<'a> for Block {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0..=5)? {
            0 => Block::Text {
                text: u.arbitrary()?,
            },
            1 => Block::Thinking {
                thinking: u.arbitrary()?,
                signature: u.arbitrary()?,
            },
            2 => Block::RedactedThinking {
                data: u.arbitrary()?,
            },
            3 => Block::ToolUse {
                id: u.arbitrary()?,
                name: u.arbitrary()?,
                input: Value::Object(json_object(u, MAX_JSON_DEPTH - 1)?),
            },
            4 => Block::ToolResult {
                tool_use_id: u.arbitrary()?,
                content: tool_result_content(u)?,
                is_error: u.arbitrary()?,
            },
            _ => Block::Unknown(unknown_block(u)?),
        })
    }
}

impl<'a> Arbitrary<'a> for ToolCall {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(ToolCall {
            id: u.arbitrary()?,
            name: u.arbitrary()?,
            input: Value::Object(json_object(u, MAX_JSON_DEPTH - 1)?),
        })
    }
}

impl<'a> Arbitrary<'a> for ToolSpec {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(ToolSpec {
            name: u.arbitrary()?,
            description: u.arbitrary()?,
            input_schema: Value::Object(json_object(u, MAX_JSON_DEPTH - 1)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::session::Input;
    use crate::state::{GenerationOutput, PendingOperation};

    /// Deterministic pseudo-random bytes (xorshift), so the test needs no RNG crate.
    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn arbitrary_messages_round_trip_through_the_wire_format() {
        let mut unknown = 0;
        for seed in 0..400 {
            let data = bytes(seed, 512);
            let mut u = Unstructured::new(&data);
            let Ok(m) = Message::arbitrary(&mut u) else {
                continue;
            };
            unknown += m
                .blocks()
                .iter()
                .filter(|b| matches!(b, Block::Unknown(_)))
                .count();
            let json = serde_json::to_string(&m).expect("serializes");
            let back: Message = serde_json::from_str(&json).expect("parses back");
            assert_eq!(back, m, "{json}");
        }
        assert!(unknown > 0, "no unknown block was generated");
    }

    #[test]
    fn every_input_type_builds_from_bytes_and_round_trips() {
        for seed in 0..200 {
            let data = bytes(seed, 256);
            let mut u = Unstructured::new(&data);
            if let Ok(input) = Input::arbitrary(&mut u) {
                let json = serde_json::to_string(&input).expect("serializes");
                let back: Input = serde_json::from_str(&json).expect("parses back");
                assert_eq!(back, input, "{json}");
            }
            let mut u = Unstructured::new(&data);
            if let Ok(out) = GenerationOutput::arbitrary(&mut u) {
                let json = serde_json::to_string(&out).expect("serializes");
                let back: GenerationOutput = serde_json::from_str(&json).expect("parses back");
                assert_eq!(back, out, "{json}");
            }
            let mut u = Unstructured::new(&data);
            if let Ok(p) = PendingOperation::arbitrary(&mut u) {
                let json = serde_json::to_string(&p).expect("serializes");
                let back: PendingOperation = serde_json::from_str(&json).expect("parses back");
                assert_eq!(back, p, "{json}");
            }
        }
    }

    #[test]
    fn exhausted_bytes_still_build_a_value() {
        let mut u = Unstructured::new(&[]);
        assert!(Block::arbitrary(&mut u).is_ok());
        assert!(ToolCall::arbitrary(&mut u).is_ok());
        assert!(ToolSpec::arbitrary(&mut u).is_ok());
        assert!(Message::arbitrary(&mut u).is_ok());
    }
}
