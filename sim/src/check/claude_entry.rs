//! One line of a Claude Code log read as an entry: what it is, where it hangs in the
//! session's tree, and its API message.
//!
//! Guarantees:
//! - One pass per line on the common path: an entry is parsed once, its `message`
//!   kept as raw text and parsed only when it is a message. The path-tracking parse
//!   (which names the field at fault) runs only when that fails, so every error is
//!   the one it always was, worded the same.
//! - A block the Messages API would refuse (a `thinking` block without `signature`,
//!   a `tool_use` without `id`, …) hides nothing else: [`salvage`] keeps the blocks
//!   that read, and names each one that does not, so the caller reports it as a
//!   finding at its line and judges the rest. A line that is not a message entry at
//!   all (not JSON, a wrong type in the entry's fields, a message without a role or
//!   whose content is neither text nor blocks) is still unreadable input: the file is
//!   not the log it claims to be.

use super::source::{InputError, path_error, path_prefix};
use serde::Deserialize;
use serde_json::Value;
use turnsim_core::{Block, Content, Role};

/// The fields of an entry that decide what it is; everything else is skipped unparsed.
#[derive(Deserialize)]
pub(super) struct Head {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    pub is_sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    pub is_compact_summary: Option<bool>,
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(rename = "parentUuid", default)]
    pub parent_uuid: Option<String>,
}

/// An entry read in one pass: [`Head`]'s fields and the message, unparsed.
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(rename = "parentUuid", default)]
    parent_uuid: Option<String>,
    #[serde(borrow, default)]
    message: Option<&'a serde_json::value::RawValue>,
}

/// A line's head, and its message when the head says it is one.
pub(super) type Parsed = (Head, Option<ApiMessage>);

pub(super) fn is_message(kind: Option<&str>) -> bool {
    matches!(kind, Some("user" | "assistant"))
}

/// The common path: one parse of the entry, one of its message. `None` when either
/// fails, and [`slow`] says why.
pub(super) fn quick(text: &str) -> Option<Parsed> {
    let mut de = serde_json::Deserializer::from_str(text);
    let e = Entry::deserialize(&mut de).ok()?;
    de.end().ok()?;
    let head = Head {
        kind: e.kind,
        subtype: e.subtype,
        is_sidechain: e.is_sidechain,
        is_compact_summary: e.is_compact_summary,
        uuid: e.uuid,
        parent_uuid: e.parent_uuid,
    };
    if !is_message(head.kind.as_deref()) {
        return Some((head, None));
    }
    let message = serde_json::from_str::<ApiMessage>(e.message?.get()).ok()?;
    Some((head, Some(message)))
}

/// The path-tracking parse, field by field, as the reader has always parsed a line.
pub(super) fn slow(text: &str, line: usize) -> Result<Parsed, InputError> {
    let head: Head = parse(text, line)?;
    if !is_message(head.kind.as_deref()) {
        return Ok((head, None));
    }
    let entry: WithMessage = parse(text, line)?;
    Ok((head, Some(entry.message)))
}

#[derive(Deserialize)]
struct WithMessage {
    message: ApiMessage,
}

#[derive(Deserialize)]
pub(super) struct ApiMessage {
    #[serde(default)]
    pub id: Option<String>,
    pub role: Role,
    pub content: Content,
}

impl ApiMessage {
    pub(super) fn content_blocks(&self) -> usize {
        match &self.content {
            Content::Text(_) => 0,
            Content::Blocks(b) => b.len(),
        }
    }
}

/// A block the API would refuse: its index in the line's content and why, in the
/// reader's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Unreadable {
    pub block: usize,
    pub why: String,
    /// The refused block as written.
    pub text: String,
}

/// A message line [`slow`] refused, read again block by block: the head, the
/// message made of the blocks that read (`None` when none did), and the blocks that
/// could not be read. `refused` (the error [`slow`] gave) when the fault is not in a
/// block: the line is then not a message entry the log could hold.
pub(super) fn salvage(
    text: &str,
    line: usize,
    refused: InputError,
) -> Result<(Head, Option<ApiMessage>, Vec<Unreadable>), InputError> {
    #[derive(Deserialize)]
    struct Loose {
        message: serde_json::Map<String, Value>,
    }
    let head: Head = parse(text, line)?;
    let Ok(loose) = serde_json::from_str::<Loose>(text) else {
        return Err(refused);
    };
    let (message, problems) = salvage_message(&loose.message, refused)?;
    Ok((head, message, problems))
}

fn salvage_message(
    m: &serde_json::Map<String, Value>,
    refused: InputError,
) -> Result<(Option<ApiMessage>, Vec<Unreadable>), InputError> {
    // A message without a role, or whose content is neither text nor blocks, is not
    // one the log could have sent: the file is not what it claims to be.
    let Some(Ok(role)) = m.get("role").map(Role::deserialize) else {
        return Err(refused);
    };
    let mut problems = Vec::new();
    let content = match m.get("content") {
        Some(Value::String(s)) => Content::Text(s.clone()),
        Some(Value::Array(blocks)) => {
            let mut kept = Vec::new();
            for (k, b) in blocks.iter().enumerate() {
                match serde_path_to_error::deserialize::<_, Block>(b) {
                    Ok(block) => kept.push(block),
                    Err(e) => problems.push(Unreadable {
                        block: k,
                        why: format!("message.content[{k}]: {}", path_error(&e)),
                        text: b.to_string(),
                    }),
                }
            }
            Content::Blocks(kept)
        }
        _ => return Err(refused),
    };
    if problems.is_empty() {
        // Every block reads: what was refused is elsewhere in the message.
        return Err(refused);
    }
    if matches!(&content, Content::Blocks(b) if b.is_empty()) {
        // Nothing of it read: judged as absent, not as an empty message, which would
        // be a second finding about the same line.
        return Ok((None, problems));
    }
    let id = m.get("id").and_then(Value::as_str).map(str::to_owned);
    Ok((Some(ApiMessage { id, role, content }), problems))
}

pub(super) fn parse<'a, T: Deserialize<'a>>(text: &'a str, line: usize) -> Result<T, InputError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| InputError::in_line(line, &path_prefix(&e), e.inner()))?;
    de.end().map_err(|e| InputError::in_line(line, "", &e))?;
    Ok(value)
}
