//! The reading half of the wire format's serde: content, blocks and their fields.
//!
//! Guarantee: what [`super`]'s serializers write reads back to the same value, and a
//! block of a type this crate does not know is kept verbatim as [`Block::Unknown`];
//! malformed known blocks are errors naming the block type. Why a hand-written
//! visitor: every message of a log is decoded on each restore, so a block whose `type`
//! comes first (as this crate and the API write it) is decoded in one pass without
//! allocating its key or its type, and only other orders buffer the object.

use super::{Block, Content, KNOWN_TYPES, ToolResultContent};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

/// Reads `STRING | [BLOCK, …]`, keeping the inner error (an untagged enum would
/// replace it with "did not match any variant", which names nothing).
fn string_or_blocks<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Result<String, Vec<Block>>, D::Error> {
    d.deserialize_any(StringOrBlocks)
}

/// Visits the content in one pass (no intermediate `Value`), since every message of a
/// log is decoded on each restore.
struct StringOrBlocks;

impl<'de> serde::de::Visitor<'de> for StringOrBlocks {
    type Value = Result<String, Vec<Block>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("content: a string or an array of blocks")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Ok(v))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(b) = seq.next_element::<Block>()? {
            blocks.push(b);
        }
        Ok(Err(blocks))
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match string_or_blocks(d)? {
            Ok(s) => Content::Text(s),
            Err(b) => Content::Blocks(b),
        })
    }
}

impl<'de> Deserialize<'de> for ToolResultContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match string_or_blocks(d)? {
            Ok(s) => ToolResultContent::Text(s),
            Err(b) => ToolResultContent::Blocks(b),
        })
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

/// Decodes a block in one pass when `type` comes first (as this crate and the API
/// write it); otherwise buffers the object to find `type`. Restore decodes every
/// block of a log, so the common order is worth its own path.
struct BlockVisitor;

#[derive(Deserialize)]
struct TextFields {
    text: String,
}

#[derive(Deserialize)]
struct ThinkingFields {
    thinking: String,
    signature: String,
}

#[derive(Deserialize)]
struct RedactedFields {
    data: String,
}

#[derive(Deserialize)]
struct ToolUseFields {
    id: String,
    name: String,
    input: serde_json::Value,
}

#[derive(Deserialize)]
struct ToolResultFields {
    tool_use_id: String,
    #[serde(default = "empty_result_content")]
    content: ToolResultContent,
    #[serde(default)]
    is_error: Option<bool>,
}

fn empty_result_content() -> ToolResultContent {
    ToolResultContent::Text(String::new())
}

fn known_block<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Block, D::Error> {
    Ok(match kind {
        "text" => Block::Text {
            text: TextFields::deserialize(d)?.text,
        },
        "thinking" => {
            let f = ThinkingFields::deserialize(d)?;
            Block::Thinking {
                thinking: f.thinking,
                signature: f.signature,
            }
        }
        "redacted_thinking" => Block::RedactedThinking {
            data: RedactedFields::deserialize(d)?.data,
        },
        "tool_use" => {
            let f = ToolUseFields::deserialize(d)?;
            Block::ToolUse {
                id: f.id,
                name: f.name,
                input: f.input,
            }
        }
        _ => {
            let f = ToolResultFields::deserialize(d)?;
            Block::ToolResult {
                tool_use_id: f.tool_use_id,
                content: f.content,
                is_error: f.is_error,
            }
        }
    })
}

fn block_from_map<E: serde::de::Error>(
    map: serde_json::Map<String, serde_json::Value>,
) -> Result<Block, E> {
    let kind = match map.get("type") {
        Some(serde_json::Value::String(t)) => t.as_str(),
        Some(_) => return Err(E::custom("block field `type` is not a string")),
        None => return Err(E::custom("block has no `type` field")),
    };
    if !KNOWN_TYPES.contains(&kind) {
        return Ok(Block::Unknown(map));
    }
    let kind = kind.to_owned();
    known_block(&kind, serde_json::Value::Object(map))
        .map_err(|e| E::custom(format!("malformed `{kind}` block: {e}")))
}

/// A block's first key: `type` is matched without allocating, since every block this
/// crate or the API writes starts with it.
enum FirstKey {
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for FirstKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(FirstKeyVisitor)
    }
}

struct FirstKeyVisitor;

impl<'de> serde::de::Visitor<'de> for FirstKeyVisitor {
    type Value = FirstKey;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<FirstKey, E> {
        Ok(if v == "type" {
            FirstKey::Type
        } else {
            FirstKey::Other(v.to_owned())
        })
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<FirstKey, E> {
        Ok(if v == "type" {
            FirstKey::Type
        } else {
            FirstKey::Other(v)
        })
    }
}

/// The value of a leading `type`: one of [`KNOWN_TYPES`] (no allocation), another
/// string, or the error every non-string gets.
enum Kind {
    Known(&'static str),
    Other(String),
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

const NOT_A_STRING: &str = "block field `type` is not a string";

impl<'de> serde::de::Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a block type string")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Kind, E> {
        Ok(match KNOWN_TYPES.iter().find(|k| **k == v) {
            Some(k) => Kind::Known(k),
            None => Kind::Other(v.to_owned()),
        })
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Kind, E> {
        Ok(match KNOWN_TYPES.iter().find(|k| **k == v) {
            Some(k) => Kind::Known(k),
            None => Kind::Other(v),
        })
    }

    // Every other JSON value is refused with the same message, whatever its type.
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Kind, E> {
        Err(E::custom(NOT_A_STRING))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Kind, E> {
        Err(E::custom(NOT_A_STRING))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Kind, E> {
        Err(E::custom(NOT_A_STRING))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Kind, E> {
        Err(E::custom(NOT_A_STRING))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Kind, E> {
        Err(E::custom(NOT_A_STRING))
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Kind, E> {
        Err(E::custom(NOT_A_STRING))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<Kind, A::Error> {
        Err(A::Error::custom(NOT_A_STRING))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<Kind, A::Error> {
        Err(A::Error::custom(NOT_A_STRING))
    }
}

impl<'de> serde::de::Visitor<'de> for BlockVisitor {
    type Value = Block;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content block: an object with a `type`")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        use serde_json::{Map, Value};
        let first: Option<FirstKey> = map.next_key()?;
        let mut all = Map::new();
        match first {
            Some(FirstKey::Type) => {
                let kind = match map.next_value::<Kind>()? {
                    Kind::Known(kind) => {
                        let rest = serde::de::value::MapAccessDeserializer::new(map);
                        return known_block(kind, rest).map_err(|e| {
                            A::Error::custom(format!("malformed `{kind}` block: {e}"))
                        });
                    }
                    Kind::Other(kind) => kind,
                };
                all.insert("type".to_owned(), Value::String(kind));
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    all.insert(k, v);
                }
                return Ok(Block::Unknown(all));
            }
            Some(FirstKey::Other(k)) => {
                let v: Value = map.next_value()?;
                all.insert(k, v);
            }
            None => {}
        }
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            all.insert(k, v);
        }
        block_from_map(all)
    }
}
