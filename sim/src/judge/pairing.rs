//! Rule `pairing` (and `turn_open`): tool calls and results pair up as the provider
//! validates them (spec §2), through `turnsim_core::validate_history` itself.
//!
//! Guarantees:
//! - The verdict is `validate_history`'s own, not a second implementation; this file
//!   only maps its message indices onto the input as sent (one mapping, used by every
//!   caller) and resynchronises after a violation so every one is reported without
//!   cascading: validation restarts after the message at fault, skipping the
//!   tool-result messages that answered it (validated alone they would look orphaned).
//! - A call left open at the end of a log captured mid-turn is `turn_open`
//!   (information), never corruption; in a request that was sent, the same thing is a
//!   violation, because the provider rejects it.
//! - Duplicate tool ids are left to [`super::tool_ids`], which sees the whole history;
//!   an empty assistant message is reported under `empty` (the rule it breaks).

use super::finding::{Finding, Findings, Place, Severity};
use super::view::Located;
use std::collections::BTreeSet;
use turnsim_core::{Block, HistoryError, Message, Role, SharedMessage, validate_history};

/// How a tool call still unanswered at the end of a history is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The end of a log that may have been captured mid-turn: information.
    TurnOpen,
    /// The end of a request that was sent, or of a window a compaction closed.
    Violation,
}

pub fn is_results(m: &Message) -> bool {
    m.role == Role::User
        && m.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
}

pub fn asks(m: &Message) -> bool {
    m.role == Role::Assistant && m.has_tool_use()
}

/// The same error with every message index passed through `f`, so its `Display`
/// (which names indices) speaks of the input as sent.
pub fn remap(e: HistoryError, f: impl Fn(usize) -> usize) -> HistoryError {
    use HistoryError as H;
    match e {
        H::MissingToolResult {
            message,
            tool_use_id,
        } => H::MissingToolResult {
            message: f(message),
            tool_use_id,
        },
        H::NoAnsweringMessage {
            message,
            tool_use_id,
        } => H::NoAnsweringMessage {
            message: f(message),
            tool_use_id,
        },
        H::UnansweredAtEnd {
            message,
            tool_use_ids,
        } => H::UnansweredAtEnd {
            message: f(message),
            tool_use_ids,
        },
        H::DuplicateToolResult {
            message,
            block,
            tool_use_id,
        } => H::DuplicateToolResult {
            message: f(message),
            block,
            tool_use_id,
        },
        H::UnexpectedToolResult {
            message,
            block,
            tool_use_id,
        } => H::UnexpectedToolResult {
            message: f(message),
            block,
            tool_use_id,
        },
        H::ToolResultAfterOtherBlock {
            message,
            block,
            tool_use_id,
        } => H::ToolResultAfterOtherBlock {
            message: f(message),
            block,
            tool_use_id,
        },
        H::EmptyAssistantContent { message } => H::EmptyAssistantContent {
            message: f(message),
        },
        H::DuplicateToolUseId {
            message,
            block,
            tool_use_id,
            first_message,
        } => H::DuplicateToolUseId {
            message: f(message),
            block,
            tool_use_id,
            first_message: f(first_message),
        },
        H::ToolUseInUserMessage {
            message,
            block,
            tool_use_id,
        } => H::ToolUseInUserMessage {
            message: f(message),
            block,
            tool_use_id,
        },
    }
}

/// The block of `m` that holds tool_use `id`, if any.
fn tool_use_block(m: &Message, id: &str) -> Option<usize> {
    m.blocks()
        .iter()
        .position(|b| matches!(b, Block::ToolUse { id: i, .. } if i == id))
}

/// `id (name)` for each id, as the asking message names the tools.
fn calls_named(m: &Message, ids: &[String]) -> String {
    ids.iter()
        .map(|id| {
            let name = m.blocks().iter().find_map(|b| match b {
                Block::ToolUse { id: i, name, .. } if i == id => Some(name.as_str()),
                _ => None,
            });
            match name {
                Some(name) => format!("{id} ({name})"),
                None => id.clone(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The JSON of block `block` of `m` (the whole message when `None`).
pub fn block_json(m: &Message, block: Option<usize>) -> String {
    match block.and_then(|b| m.blocks().get(b)) {
        Some(b) => serde_json::to_string(b).unwrap_or_default(),
        None => m.to_json(),
    }
}

/// Judges one chunk of a history: `chunk[k]` is message `indices[k]` of the input.
/// `end` is `None` when more of the history follows the chunk.
pub fn check_chunk(
    chunk: &[Located],
    indices: &[usize],
    end: Option<End>,
    place: &Place,
    out: &mut Findings,
) {
    let messages: Vec<SharedMessage> = chunk.iter().map(|l| l.message.clone()).collect();
    let index_of = |k: usize| indices.get(k).copied().unwrap_or(k);
    let mut start = 0;
    while start < messages.len() {
        let Err(e) = validate_history(&messages[start..]) else {
            break;
        };
        let at = start + e.message_index();
        let e = remap(e, |k| index_of(start + k));
        report(&e, chunk, at, end, place, out);
        let mut next = at + 1;
        while next < messages.len() && is_results(&messages[next]) {
            next += 1;
        }
        start = next;
    }
}

fn report(
    e: &HistoryError,
    chunk: &[Located],
    at: usize,
    end: Option<End>,
    place: &Place,
    out: &mut Findings,
) {
    let Some(located) = chunk.get(at) else {
        return;
    };
    let msg = &located.message;
    let index = e.message_index();
    // Findings about an unanswered call point at the tool_use block that asked.
    let block = e
        .block_index()
        .or_else(|| e.tool_use_id().and_then(|id| tool_use_block(msg, id)));
    let place = Place {
        line: Some(located.line_of(block)),
        message: Some(index),
        block,
        ..place.clone()
    };
    let excerpt = block_json(msg, block);
    let (severity, rule, kind, detail) = match e {
        HistoryError::DuplicateToolUseId { .. } => return,
        HistoryError::UnansweredAtEnd { tool_use_ids, .. } if end == Some(End::TurnOpen) => (
            Severity::Info,
            "turn_open",
            "unanswered_at_end",
            format!(
                "message {index}: the log ends with unanswered tool {} {}: captured mid-turn, not corruption",
                if tool_use_ids.len() == 1 {
                    "call"
                } else {
                    "calls"
                },
                calls_named(msg, tool_use_ids)
            ),
        ),
        HistoryError::MissingToolResult { .. }
            if end == Some(End::TurnOpen) && partial_batch_at_end(chunk, at) =>
        {
            let asked = msg.tool_calls().len();
            let answered = chunk.last().map(|l| l.message.blocks().len()).unwrap_or(0);
            (
                Severity::Info,
                "turn_open",
                "partial_results_at_end",
                format!(
                    "message {index}: the log ends while its tool batch runs ({answered} of {asked} results so far): captured mid-turn, not corruption"
                ),
            )
        }
        HistoryError::EmptyAssistantContent { .. } => {
            (Severity::Violation, "empty", e.kind(), e.to_string())
        }
        _ => (Severity::Violation, "pairing", e.kind(), e.to_string()),
    };
    out.push(Finding::new(severity, rule, kind, place, detail).with_excerpt(&excerpt));
}

/// True when the asking message at `at` is answered by the chunk's last message,
/// which holds only results for calls it asked, each once: the log was cut while the
/// batch's results were still arriving.
fn partial_batch_at_end(chunk: &[Located], at: usize) -> bool {
    let (Some(asker), Some(last)) = (chunk.get(at), chunk.last()) else {
        return false;
    };
    if chunk.len() != at + 2 {
        return false;
    }
    let asked: BTreeSet<String> = asker
        .message
        .tool_calls()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let mut seen = BTreeSet::new();
    last.message.role == Role::User
        && !last.message.blocks().is_empty()
        && last.message.blocks().iter().all(|b| match b {
            Block::ToolResult { tool_use_id, .. } => {
                asked.contains(tool_use_id) && seen.insert(tool_use_id.clone())
            }
            _ => false,
        })
}
