//! Reading a record's `pending` operation in one pass.
//!
//! Guarantee: reads exactly what `PendingOperation`'s own (internally tagged)
//! `Deserialize` reads, to the same value, with its errors for anything else. Why:
//! almost every record carries one, and serde's internally tagged enums buffer the
//! whole object into an intermediate tree before choosing a variant; the log writes
//! the tag `pending` first, so it is read first and the variant's fields are decoded
//! straight from the input. Any other order falls back to the derived impl.

use crate::message::ToolCall;
use crate::state::{OperationId, PendingOperation};
use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PendingOperation, D::Error> {
    d.deserialize_map(PendingVisitor)
}

/// The variant named by the tag, matched without allocating.
enum Tag {
    None,
    Generation,
    Tools,
}

const TAGS: &[&str] = &["none", "generation", "tools"];

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_identifier(TagVisitor)
    }
}

struct TagVisitor;

impl<'de> Visitor<'de> for TagVisitor {
    type Value = Tag;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Tag, E> {
        match v {
            "none" => Ok(Tag::None),
            "generation" => Ok(Tag::Generation),
            "tools" => Ok(Tag::Tools),
            _ => Err(E::unknown_variant(v, TAGS)),
        }
    }
}

/// Whether the first key is the tag; any other key is kept to rebuild the object.
enum FirstKey {
    Tag,
    Other(String),
}

impl<'de> Deserialize<'de> for FirstKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|k| {
            if k == "pending" {
                FirstKey::Tag
            } else {
                FirstKey::Other(k)
            }
        })
    }
}

// Each holds `pending` too, only to refuse a second tag as the derived impl does.
#[derive(Deserialize)]
struct GenerationFields {
    op: OperationId,
    pending: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct ToolsFields {
    op: OperationId,
    calls: Vec<ToolCall>,
    pending: Option<serde::de::IgnoredAny>,
}

fn duplicate_tag<E: serde::de::Error>() -> E {
    E::duplicate_field("pending")
}

struct PendingVisitor;

impl<'de> Visitor<'de> for PendingVisitor {
    type Value = PendingOperation;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("internally tagged enum PendingOperation")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PendingOperation, A::Error> {
        use serde::de::value::{MapAccessDeserializer, MapDeserializer};
        use serde_json::Value;
        match map.next_key::<FirstKey>()? {
            Some(FirstKey::Tag) => Ok(match map.next_value::<Tag>()? {
                Tag::None => {
                    // As the derived impl: a unit variant ignores any other fields but
                    // a second tag.
                    while let Some(key) = map.next_key::<FirstKey>()? {
                        if matches!(key, FirstKey::Tag) {
                            return Err(duplicate_tag());
                        }
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                    PendingOperation::None
                }
                Tag::Generation => {
                    let f = GenerationFields::deserialize(MapAccessDeserializer::new(map))?;
                    if f.pending.is_some() {
                        return Err(duplicate_tag());
                    }
                    PendingOperation::Generation { op: f.op }
                }
                Tag::Tools => {
                    let f = ToolsFields::deserialize(MapAccessDeserializer::new(map))?;
                    if f.pending.is_some() {
                        return Err(duplicate_tag());
                    }
                    PendingOperation::Tools {
                        op: f.op,
                        calls: f.calls,
                    }
                }
            }),
            first => {
                // Another order than the log writes: hand the entries, in order and
                // with any repeated key kept (a map would keep only the last, and accept
                // what the derived impl refuses as a duplicate field), to the derived
                // impl to find the tag.
                let mut all: Vec<(String, Value)> = Vec::new();
                if let Some(FirstKey::Other(k)) = first {
                    all.push((k, map.next_value::<Value>()?));
                }
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    all.push(entry);
                }
                let entries = MapDeserializer::<_, serde_json::Error>::new(all.into_iter());
                PendingOperation::deserialize(entries).map_err(A::Error::custom)
            }
        }
    }
}
