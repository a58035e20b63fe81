//! Valid history (docs/spec.md §2).
//!
//! Guarantee: a history that passes [`validate_history`] is one the provider accepts
//! as far as tool pairing and empty replies go, and a history that fails is rejected
//! with the *first* violation, named by message index, block index and tool id. The
//! engine checks a history before it sends, rewinds to or restores it, so a broken
//! transcript is caught where it was written rather than as an opaque provider error
//! several turns later.
//!
//! "First" means the violation with the smallest message index, then the smallest
//! block index. Violations about a tool call that was not answered properly
//! (`MissingToolResult`, `NoAnsweringMessage`, `UnansweredAtEnd`) belong to the
//! assistant message that asked, so they come before anything wrong inside the
//! message that should have answered. The check is one pass over the messages with
//! ordered maps only, so the same history always yields the same error.

use crate::message::{Block, Message, Role, SharedMessage};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Why a history is not one the provider would accept, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// The assistant message at `message` asked for `tool_use_id`, and the user
    /// message right after it has no `tool_result` for it.
    MissingToolResult { message: usize, tool_use_id: String },
    /// The assistant message at `message` asked for tool calls and is followed by
    /// another assistant message, so nothing answers them.
    NoAnsweringMessage { message: usize, tool_use_id: String },
    /// The history ends with the assistant message at `message`, whose tool calls
    /// are unanswered (rule 6; accepted only while a tool batch is pending).
    UnansweredAtEnd {
        message: usize,
        tool_use_ids: Vec<String>,
    },
    /// A second `tool_result` for the same call in the answering message.
    DuplicateToolResult {
        message: usize,
        block: usize,
        tool_use_id: String,
    },
    /// A `tool_result` that answers no call of the message right before it: an id the
    /// previous assistant message did not ask, or a `tool_result` in an assistant
    /// message or in a user message that does not follow tool calls.
    UnexpectedToolResult {
        message: usize,
        block: usize,
        tool_use_id: String,
    },
    /// A `tool_result` after some other block in the answering message (rule 2).
    ToolResultAfterOtherBlock {
        message: usize,
        block: usize,
        tool_use_id: String,
    },
    /// An assistant message with content `""` or `[]`.
    EmptyAssistantContent { message: usize },
    /// A `tool_use` id already used at `first_message` (which may be this message).
    DuplicateToolUseId {
        message: usize,
        block: usize,
        tool_use_id: String,
        first_message: usize,
    },
    /// A `tool_use` block in a user message.
    ToolUseInUserMessage {
        message: usize,
        block: usize,
        tool_use_id: String,
    },
}

impl HistoryError {
    /// A stable snake_case name for the kind of violation, for logs and reports.
    pub fn kind(&self) -> &'static str {
        match self {
            HistoryError::MissingToolResult { .. } => "missing_tool_result",
            HistoryError::NoAnsweringMessage { .. } => "no_answering_message",
            HistoryError::UnansweredAtEnd { .. } => "unanswered_at_end",
            HistoryError::DuplicateToolResult { .. } => "duplicate_tool_result",
            HistoryError::UnexpectedToolResult { .. } => "unexpected_tool_result",
            HistoryError::ToolResultAfterOtherBlock { .. } => "tool_result_after_other_block",
            HistoryError::EmptyAssistantContent { .. } => "empty_assistant_content",
            HistoryError::DuplicateToolUseId { .. } => "duplicate_tool_use_id",
            HistoryError::ToolUseInUserMessage { .. } => "tool_use_in_user_message",
        }
    }

    /// The index of the message at fault. For an unanswered call this is the
    /// assistant message that asked.
    pub fn message_index(&self) -> usize {
        match self {
            HistoryError::MissingToolResult { message, .. }
            | HistoryError::NoAnsweringMessage { message, .. }
            | HistoryError::UnansweredAtEnd { message, .. }
            | HistoryError::DuplicateToolResult { message, .. }
            | HistoryError::UnexpectedToolResult { message, .. }
            | HistoryError::ToolResultAfterOtherBlock { message, .. }
            | HistoryError::EmptyAssistantContent { message }
            | HistoryError::DuplicateToolUseId { message, .. }
            | HistoryError::ToolUseInUserMessage { message, .. } => *message,
        }
    }

    /// The index of the block at fault, when one block is.
    pub fn block_index(&self) -> Option<usize> {
        match self {
            HistoryError::DuplicateToolResult { block, .. }
            | HistoryError::UnexpectedToolResult { block, .. }
            | HistoryError::ToolResultAfterOtherBlock { block, .. }
            | HistoryError::DuplicateToolUseId { block, .. }
            | HistoryError::ToolUseInUserMessage { block, .. } => Some(*block),
            HistoryError::MissingToolResult { .. }
            | HistoryError::NoAnsweringMessage { .. }
            | HistoryError::UnansweredAtEnd { .. }
            | HistoryError::EmptyAssistantContent { .. } => None,
        }
    }

    /// The tool id the violation is about (the first one for `UnansweredAtEnd`).
    pub fn tool_use_id(&self) -> Option<&str> {
        match self {
            HistoryError::MissingToolResult { tool_use_id, .. }
            | HistoryError::NoAnsweringMessage { tool_use_id, .. }
            | HistoryError::DuplicateToolResult { tool_use_id, .. }
            | HistoryError::UnexpectedToolResult { tool_use_id, .. }
            | HistoryError::ToolResultAfterOtherBlock { tool_use_id, .. }
            | HistoryError::DuplicateToolUseId { tool_use_id, .. }
            | HistoryError::ToolUseInUserMessage { tool_use_id, .. } => Some(tool_use_id),
            HistoryError::UnansweredAtEnd { tool_use_ids, .. } => {
                tool_use_ids.first().map(|s| s.as_str())
            }
            HistoryError::EmptyAssistantContent { .. } => None,
        }
    }
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::MissingToolResult {
                message,
                tool_use_id,
            } => write!(
                f,
                "message {message}: tool call {tool_use_id} has no tool_result in message {}",
                message.saturating_add(1)
            ),
            HistoryError::NoAnsweringMessage {
                message,
                tool_use_id,
            } => write!(
                f,
                "message {message}: tool call {tool_use_id} is followed by assistant message {} instead of a user message answering it",
                message.saturating_add(1)
            ),
            HistoryError::UnansweredAtEnd {
                message,
                tool_use_ids,
            } => {
                let calls = if tool_use_ids.len() == 1 {
                    "call"
                } else {
                    "calls"
                };
                write!(
                    f,
                    "message {message}: history ends with unanswered tool {calls} {}",
                    tool_use_ids.join(", ")
                )
            }
            HistoryError::DuplicateToolResult {
                message,
                block,
                tool_use_id,
            } => write!(
                f,
                "message {message}, block {block}: tool_result for {tool_use_id} answers it a second time"
            ),
            HistoryError::UnexpectedToolResult {
                message,
                block,
                tool_use_id,
            } => match message.checked_sub(1) {
                Some(previous) => write!(
                    f,
                    "message {message}, block {block}: tool_result for {tool_use_id} answers no tool call of message {previous}"
                ),
                None => write!(
                    f,
                    "message {message}, block {block}: tool_result for {tool_use_id} answers no tool call (no message precedes it)"
                ),
            },
            HistoryError::ToolResultAfterOtherBlock {
                message,
                block,
                tool_use_id,
            } => write!(
                f,
                "message {message}, block {block}: tool_result for {tool_use_id} comes after a block that is not a tool_result"
            ),
            HistoryError::EmptyAssistantContent { message } => {
                write!(f, "message {message}: assistant message has empty content")
            }
            HistoryError::DuplicateToolUseId {
                message,
                block,
                tool_use_id,
                first_message,
            } => {
                if first_message == message {
                    write!(
                        f,
                        "message {message}, block {block}: tool_use id {tool_use_id} is already used earlier in this message"
                    )
                } else {
                    write!(
                        f,
                        "message {message}, block {block}: tool_use id {tool_use_id} is already used by message {first_message}"
                    )
                }
            }
            HistoryError::ToolUseInUserMessage {
                message,
                block,
                tool_use_id,
            } => write!(
                f,
                "message {message}, block {block}: tool_use {tool_use_id} in a user message"
            ),
        }
    }
}

/// Accepts a history the provider would accept (docs/spec.md §2, rules 1–6). Rule 6 is
/// strict here: the history must not end with unanswered tool calls.
pub fn validate_history(messages: &[SharedMessage]) -> Result<(), HistoryError> {
    validate(messages, false)
}

/// Like [`validate_history`], but a final assistant message whose tool calls nothing
/// answers yet is accepted: a checkpoint says that tool batch is pending, and its
/// results (or recovery's stand-ins) will be appended next.
pub fn validate_history_allowing_pending_tools(
    messages: &[SharedMessage],
) -> Result<(), HistoryError> {
    validate(messages, true)
}

/// The tool calls of the message just checked, which the next message must answer.
struct Asked<'a> {
    message: usize,
    /// In block order, so "the first missing id" is the first the model asked.
    ids: Vec<&'a str>,
}

impl Asked<'_> {
    fn first_id(&self) -> String {
        self.ids.first().copied().unwrap_or_default().to_string()
    }
}

fn validate(messages: &[SharedMessage], allow_pending_at_end: bool) -> Result<(), HistoryError> {
    // Where each tool_use id was first used (rule 5).
    let mut tool_use_ids: BTreeMap<&str, usize> = BTreeMap::new();
    let mut asked: Option<Asked<'_>> = None;
    for (index, message) in messages.iter().enumerate() {
        match message.role {
            Role::Assistant => {
                if let Some(previous) = asked.take() {
                    return Err(HistoryError::NoAnsweringMessage {
                        message: previous.message,
                        tool_use_id: previous.first_id(),
                    });
                }
                asked = check_assistant(index, message, &mut tool_use_ids)?;
            }
            Role::User => check_user(index, message, asked.take().as_ref())?,
        }
    }
    match asked {
        Some(pending) if !allow_pending_at_end => Err(HistoryError::UnansweredAtEnd {
            message: pending.message,
            tool_use_ids: pending.ids.iter().map(|id| id.to_string()).collect(),
        }),
        _ => Ok(()),
    }
}

/// Rules 3, 4 and 5 for one assistant message; returns its tool calls, if any.
fn check_assistant<'a>(
    index: usize,
    message: &'a Message,
    tool_use_ids: &mut BTreeMap<&'a str, usize>,
) -> Result<Option<Asked<'a>>, HistoryError> {
    if message.is_empty() {
        return Err(HistoryError::EmptyAssistantContent { message: index });
    }
    let mut ids = Vec::new();
    for (block, b) in message.blocks().iter().enumerate() {
        match b {
            Block::ToolUse { id, .. } => {
                if let Some(&first_message) = tool_use_ids.get(id.as_str()) {
                    return Err(HistoryError::DuplicateToolUseId {
                        message: index,
                        block,
                        tool_use_id: id.clone(),
                        first_message,
                    });
                }
                tool_use_ids.insert(id, index);
                ids.push(id.as_str());
            }
            Block::ToolResult { tool_use_id, .. } => {
                return Err(HistoryError::UnexpectedToolResult {
                    message: index,
                    block,
                    tool_use_id: tool_use_id.clone(),
                });
            }
            _ => {}
        }
    }
    Ok((!ids.is_empty()).then_some(Asked {
        message: index,
        ids,
    }))
}

/// Rules 1, 2 and 3 for one user message; `asked` holds the calls of the message
/// right before it, when that was an assistant message with tool calls.
fn check_user(
    index: usize,
    message: &Message,
    asked: Option<&Asked<'_>>,
) -> Result<(), HistoryError> {
    let blocks = message.blocks();
    let mut asked_ids: BTreeSet<&str> = BTreeSet::new();
    if let Some(asked) = asked {
        // A missing answer is the asking message's fault, so it is reported before
        // anything wrong inside this message (see the module comment).
        let answered: BTreeSet<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        if let Some(missing) = asked.ids.iter().find(|id| !answered.contains(*id)) {
            return Err(HistoryError::MissingToolResult {
                message: asked.message,
                tool_use_id: missing.to_string(),
            });
        }
        asked_ids.extend(asked.ids.iter().copied());
    }
    let mut answered_so_far: BTreeSet<&str> = BTreeSet::new();
    let mut seen_other_block = false;
    for (block, b) in blocks.iter().enumerate() {
        match b {
            Block::ToolResult { tool_use_id, .. } => {
                // What the result answers is checked before where it sits: a result for
                // a call nobody made is wrong wherever it is.
                if !asked_ids.contains(tool_use_id.as_str()) {
                    return Err(HistoryError::UnexpectedToolResult {
                        message: index,
                        block,
                        tool_use_id: tool_use_id.clone(),
                    });
                }
                if !answered_so_far.insert(tool_use_id) {
                    return Err(HistoryError::DuplicateToolResult {
                        message: index,
                        block,
                        tool_use_id: tool_use_id.clone(),
                    });
                }
                if seen_other_block {
                    return Err(HistoryError::ToolResultAfterOtherBlock {
                        message: index,
                        block,
                        tool_use_id: tool_use_id.clone(),
                    });
                }
            }
            Block::ToolUse { id, .. } => {
                return Err(HistoryError::ToolUseInUserMessage {
                    message: index,
                    block,
                    tool_use_id: id.clone(),
                });
            }
            _ => seen_other_block = true,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
