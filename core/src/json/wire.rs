//! Hand-written JSON for the wire types that fill the log: messages and their blocks.
//!
//! Guarantee: `write_message` appends exactly what `serde_json::to_string(message)`
//! gives (the serde impls in `message.rs` remain the definition; the property suite in
//! `tests/log_codec.rs` compares the two on generated messages and records). Why: a
//! message is written on nearly every log record and for every history comparison, and
//! most of its strings are keys (`"role"`, `"type"`, `"text"`…) that are constant here:
//! writing `,"text":` as one literal saves scanning and copying them one by one, and the
//! serializer's per-field state. JSON values (tool input, unknown blocks) still go
//! through the generic writer.

use super::{Error, escape::write_str, write};
use crate::message::{Block, Content, Message, SharedMessage, ToolCall, ToolResultContent};

/// Appends `message` as JSON.
pub fn write_message(out: &mut String, message: &Message) -> Result<(), Error> {
    out.push_str("{\"role\":\"");
    out.push_str(message.role.as_str());
    out.push_str("\",\"content\":");
    match &message.content {
        Content::Text(text) => write_str(out, text),
        Content::Blocks(blocks) => write_blocks(out, blocks)?,
    }
    out.push('}');
    Ok(())
}

/// Appends `[message, …]` as JSON.
pub fn write_messages<M: std::borrow::Borrow<Message>>(
    out: &mut String,
    messages: &[M],
) -> Result<(), Error> {
    out.push('[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_message(out, m.borrow())?;
    }
    out.push(']');
    Ok(())
}

fn write_blocks(out: &mut String, blocks: &[Block]) -> Result<(), Error> {
    out.push('[');
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_block(out, b)?;
    }
    out.push(']');
    Ok(())
}

/// A known block is `{"type":…,` then its fields in declaration order (the internally
/// tagged `KnownBlock` in `message.rs`); an unknown one is its map as loaded.
fn write_block(out: &mut String, block: &Block) -> Result<(), Error> {
    match block {
        Block::Text { text } => {
            out.push_str("{\"type\":\"text\",\"text\":");
            write_str(out, text);
        }
        Block::Thinking {
            thinking,
            signature,
        } => {
            out.push_str("{\"type\":\"thinking\",\"thinking\":");
            write_str(out, thinking);
            out.push_str(",\"signature\":");
            write_str(out, signature);
        }
        Block::RedactedThinking { data } => {
            out.push_str("{\"type\":\"redacted_thinking\",\"data\":");
            write_str(out, data);
        }
        Block::ToolUse { id, name, input } => {
            out.push_str("{\"type\":\"tool_use\",\"id\":");
            write_str(out, id);
            out.push_str(",\"name\":");
            write_str(out, name);
            out.push_str(",\"input\":");
            write(out, input)?;
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            out.push_str("{\"type\":\"tool_result\",\"tool_use_id\":");
            write_str(out, tool_use_id);
            out.push_str(",\"content\":");
            match content {
                ToolResultContent::Text(text) => write_str(out, text),
                ToolResultContent::Blocks(blocks) => write_blocks(out, blocks)?,
            }
            match is_error {
                Some(true) => out.push_str(",\"is_error\":true"),
                Some(false) => out.push_str(",\"is_error\":false"),
                None => {}
            }
        }
        Block::Unknown(map) => return write(out, map),
    }
    out.push('}');
    Ok(())
}

/// Appends `[call, …]` as JSON (`ToolCall`'s derived field order).
pub fn write_tool_calls(out: &mut String, calls: &[ToolCall]) -> Result<(), Error> {
    out.push('[');
    for (i, c) in calls.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"id\":");
        write_str(out, &c.id);
        out.push_str(",\"name\":");
        write_str(out, &c.name);
        out.push_str(",\"input\":");
        write(out, &c.input)?;
        out.push('}');
    }
    out.push(']');
    Ok(())
}

impl Message {
    /// Serialized JSON, the bytes `serde_json::to_string` gives (written by
    /// this file, which is faster); infallible because every value in a `Message`
    /// is JSON already.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        match write_message(&mut out, self) {
            Ok(()) => out,
            Err(_) => String::new(),
        }
    }
}

/// Serializes a history for byte comparison and digests.
pub fn messages_to_json(messages: &[SharedMessage]) -> String {
    let mut out = String::with_capacity(256 * messages.len());
    match write_messages(&mut out, messages) {
        Ok(()) => out,
        Err(_) => String::new(),
    }
}
