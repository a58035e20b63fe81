//! The judge's own walk over a request's messages: content blocks, tool calls and
//! their results, as the Messages API accepts them ([`super::table::RULES`]).
//!
//! Guarantees:
//! - Written from the API's contract, not from the reference engine: nothing here
//!   calls or mirrors `turnsim_core`'s history validation, so a bug there cannot
//!   blind the judge that is meant to find it. Only the message types are shared.
//! - The breach reported is the first one: the smallest message index, and within a
//!   message its own blocks in order before what it leaves unanswered. A tool call
//!   left unanswered is the fault of the assistant message that asked, so it comes
//!   before anything wrong inside the message that should have answered.
//! - Deterministic: ordered maps only, one pass.

use super::table::rule_of;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use turnsim_core::{Block, Message, Role, SharedMessage};

/// Block types a request may carry, as the API's content-block union names them,
/// with the fields each requires beyond `type` (the types the message reader types
/// itself are checked for their fields when read).
const KNOWN: [(&str, &[&str]); 18] = [
    ("text", &[]),
    ("thinking", &[]),
    ("redacted_thinking", &[]),
    ("tool_use", &[]),
    ("tool_result", &[]),
    ("image", &["source"]),
    ("document", &["source"]),
    ("search_result", &["source", "title", "content"]),
    ("server_tool_use", &["id", "name", "input"]),
    ("web_search_tool_result", &["tool_use_id", "content"]),
    ("web_fetch_tool_result", &["tool_use_id", "content"]),
    ("code_execution_tool_result", &["tool_use_id", "content"]),
    (
        "bash_code_execution_tool_result",
        &["tool_use_id", "content"],
    ),
    (
        "text_editor_code_execution_tool_result",
        &["tool_use_id", "content"],
    ),
    ("tool_search_tool_result", &["tool_use_id", "content"]),
    ("mcp_tool_use", &["id", "name", "server_name", "input"]),
    ("mcp_tool_result", &["tool_use_id"]),
    ("container_upload", &["file_id"]),
];

/// What is wrong, in the API's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The message asked for `tool_use_id`; the user message after it has no result.
    MissingToolResult { tool_use_id: String },
    /// The message asked for tool calls and the next message is an assistant's.
    NoAnsweringMessage { tool_use_id: String },
    /// The messages end with this message's calls unanswered.
    UnansweredAtEnd { tool_use_ids: Vec<String> },
    /// A second result for one call.
    DuplicateToolResult { tool_use_id: String },
    /// A result that answers no call of the message right before it.
    UnexpectedToolResult { tool_use_id: String },
    /// A result after a block that is not a result.
    ToolResultAfterOtherBlock { tool_use_id: String },
    /// An assistant message with content `""` or `[]`, not in the final position.
    EmptyAssistantContent,
    /// A tool_use id already used by message `first_message` (maybe this one).
    DuplicateToolUseId {
        tool_use_id: String,
        first_message: usize,
    },
    /// A tool_use block in a user message.
    ToolUseInUserMessage { tool_use_id: String },
    /// A block type the API does not accept in a request.
    UnknownBlockType { kind: String },
    /// A block of a known type without a field that type requires.
    MissingField { kind: String, field: &'static str },
    /// A tool_use whose input is not a JSON object.
    ToolInputNotObject { tool_use_id: String },
    /// A thinking block whose signature is empty.
    UnsignedThinking,
    /// The request's first message is not a user message.
    FirstMessageNotUser,
    /// Thinking is on and the assistant turn the request ends in (a tool loop) does
    /// not start with a thinking block: `found` is the type of its first block.
    ThinkingDropped { found: String },
    /// Thinking is off and the final assistant message holds thinking.
    ThinkingWhileOff,
    /// A text block whose text is whitespace only (not empty: that is
    /// `empty_text_block`).
    BlankTextBlock,
}

/// One breach: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// The message at fault (for an unanswered call, the one that asked).
    pub message: usize,
    /// The block at fault, when one block is.
    pub block: Option<usize>,
    pub kind: Kind,
}

impl Breach {
    /// A stable snake_case name, a row of [`super::table::RULES`] names it.
    pub fn kind(&self) -> &'static str {
        match &self.kind {
            Kind::MissingToolResult { .. } => "missing_tool_result",
            Kind::NoAnsweringMessage { .. } => "no_answering_message",
            Kind::UnansweredAtEnd { .. } => "unanswered_at_end",
            Kind::DuplicateToolResult { .. } => "duplicate_tool_result",
            Kind::UnexpectedToolResult { .. } => "unexpected_tool_result",
            Kind::ToolResultAfterOtherBlock { .. } => "tool_result_after_other_block",
            Kind::EmptyAssistantContent => "empty_assistant_content",
            Kind::DuplicateToolUseId { .. } => "duplicate_tool_use_id",
            Kind::ToolUseInUserMessage { .. } => "tool_use_in_user_message",
            Kind::UnknownBlockType { .. } => "unknown_block_type",
            Kind::MissingField { .. } => "missing_field",
            Kind::ToolInputNotObject { .. } => "tool_input_not_object",
            Kind::UnsignedThinking => "unsigned_thinking",
            Kind::FirstMessageNotUser => "first_message_not_user",
            Kind::ThinkingDropped { .. } => "thinking_dropped",
            Kind::ThinkingWhileOff => "thinking_while_off",
            Kind::BlankTextBlock => "blank_text_block",
        }
    }

    /// The judge's rule family a finding of this breach is reported under, as the
    /// table's row for its kind says (`request_valid` for a kind no row names).
    pub fn family(&self) -> &'static str {
        rule_of(self.kind()).map_or("request_valid", |r| r.family)
    }

    /// The tool id the breach is about (the first one for an unanswered batch).
    pub fn tool_use_id(&self) -> Option<&str> {
        match &self.kind {
            Kind::MissingToolResult { tool_use_id }
            | Kind::NoAnsweringMessage { tool_use_id }
            | Kind::DuplicateToolResult { tool_use_id }
            | Kind::UnexpectedToolResult { tool_use_id }
            | Kind::ToolResultAfterOtherBlock { tool_use_id }
            | Kind::DuplicateToolUseId { tool_use_id, .. }
            | Kind::ToolUseInUserMessage { tool_use_id }
            | Kind::ToolInputNotObject { tool_use_id } => Some(tool_use_id),
            Kind::UnansweredAtEnd { tool_use_ids } => tool_use_ids.first().map(String::as_str),
            _ => None,
        }
    }

    /// The same breach with every message index passed through `f`, so its text
    /// speaks of the input as sent.
    pub fn remap(mut self, f: impl Fn(usize) -> usize) -> Breach {
        self.message = f(self.message);
        if let Kind::DuplicateToolUseId { first_message, .. } = &mut self.kind {
            *first_message = f(*first_message);
        }
        self
    }
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.message;
        let b = self.block.unwrap_or_default();
        match &self.kind {
            Kind::MissingToolResult { tool_use_id } => write!(
                f,
                "message {m}: tool call {tool_use_id} has no tool_result in message {}",
                m + 1
            ),
            Kind::NoAnsweringMessage { tool_use_id } => write!(
                f,
                "message {m}: tool call {tool_use_id} is followed by assistant message {} instead of a user message answering it",
                m + 1
            ),
            Kind::UnansweredAtEnd { tool_use_ids } => write!(
                f,
                "message {m}: history ends with unanswered tool {} {}",
                if tool_use_ids.len() == 1 {
                    "call"
                } else {
                    "calls"
                },
                tool_use_ids.join(", ")
            ),
            Kind::DuplicateToolResult { tool_use_id } => write!(
                f,
                "message {m}, block {b}: tool_result for {tool_use_id} answers it a second time"
            ),
            Kind::UnexpectedToolResult { tool_use_id } => match m.checked_sub(1) {
                Some(p) => write!(
                    f,
                    "message {m}, block {b}: tool_result for {tool_use_id} answers no tool call of message {p}"
                ),
                None => write!(
                    f,
                    "message {m}, block {b}: tool_result for {tool_use_id} answers no tool call (no message precedes it)"
                ),
            },
            Kind::ToolResultAfterOtherBlock { tool_use_id } => write!(
                f,
                "message {m}, block {b}: tool_result for {tool_use_id} comes after a block that is not a tool_result"
            ),
            Kind::EmptyAssistantContent => {
                write!(f, "message {m}: assistant message has empty content")
            }
            Kind::DuplicateToolUseId {
                tool_use_id,
                first_message,
            } if *first_message == m => write!(
                f,
                "message {m}, block {b}: tool_use id {tool_use_id} is already used earlier in this message"
            ),
            Kind::DuplicateToolUseId {
                tool_use_id,
                first_message,
            } => write!(
                f,
                "message {m}, block {b}: tool_use id {tool_use_id} is already used by message {first_message}"
            ),
            Kind::ToolUseInUserMessage { tool_use_id } => write!(
                f,
                "message {m}, block {b}: tool_use {tool_use_id} in a user message"
            ),
            Kind::UnknownBlockType { kind } => write!(
                f,
                "message {m}, block {b}: block type {kind:?} is not one the API accepts"
            ),
            Kind::MissingField { kind, field } => write!(
                f,
                "message {m}, block {b}: {kind} block has no {field:?} field"
            ),
            Kind::ToolInputNotObject { tool_use_id } => write!(
                f,
                "message {m}, block {b}: tool_use {tool_use_id} has an input that is not a JSON object"
            ),
            Kind::UnsignedThinking => write!(
                f,
                "message {m}, block {b}: thinking block has an empty signature"
            ),
            Kind::FirstMessageNotUser => write!(
                f,
                "message {m}: the request's first message is an assistant message, not a user message"
            ),
            Kind::ThinkingDropped { found } => write!(
                f,
                "message {m}, block 0: thinking is on and the request ends in this turn's tool loop, but its first assistant message starts with {found}, not thinking"
            ),
            Kind::ThinkingWhileOff => write!(
                f,
                "message {m}, block {b}: thinking is off and the assistant's final turn (the request's last message or the tool loop it continues) holds a thinking block"
            ),
            Kind::BlankTextBlock => write!(
                f,
                "message {m}, block {b}: text block holds only whitespace"
            ),
        }
    }
}

/// The first breach of `messages[from..]`, walked as if nothing came before `from`
/// (a resynchronising caller, or an accepted prefix that left nothing open).
/// `ends_request`: the last message is the final one of a request as sent, where an
/// empty assistant message is allowed.
pub fn first_breach(messages: &[SharedMessage], from: usize, ends_request: bool) -> Option<Breach> {
    let last = messages.len().checked_sub(1);
    // Where each tool_use id was first used.
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    for i in from..messages.len() {
        let m = &messages[i];
        let previous = i
            .checked_sub(1)
            .filter(|p| *p >= from)
            .map(|p| &*messages[p]);
        let final_here = ends_request && Some(i) == last;
        if let Some(b) = own_breach(i, m, previous, final_here, &mut ids) {
            return Some(b);
        }
        if let Some(b) = unanswered(i, m, messages.get(i + 1).map(|n| &**n)) {
            return Some(b);
        }
    }
    None
}

/// What is wrong inside message `i` itself, in block order.
fn own_breach<'a>(
    i: usize,
    m: &'a Message,
    previous: Option<&Message>,
    final_here: bool,
    ids: &mut BTreeMap<&'a str, usize>,
) -> Option<Breach> {
    let at = |block: usize, kind: Kind| {
        Some(Breach {
            message: i,
            block: Some(block),
            kind,
        })
    };
    if m.role == Role::Assistant && m.is_empty() && !final_here {
        return Some(Breach {
            message: i,
            block: None,
            kind: Kind::EmptyAssistantContent,
        });
    }
    let asked: BTreeSet<&str> = previous
        .filter(|p| p.role == Role::Assistant)
        .map(|p| {
            p.blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, .. } => Some(id.as_str()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let mut answered: BTreeSet<&str> = BTreeSet::new();
    let mut other_seen = false;
    for (j, block) in m.blocks().iter().enumerate() {
        match block {
            Block::ToolUse { id, input, .. } => {
                if m.role == Role::User {
                    return at(
                        j,
                        Kind::ToolUseInUserMessage {
                            tool_use_id: id.clone(),
                        },
                    );
                }
                if !input.is_object() {
                    return at(
                        j,
                        Kind::ToolInputNotObject {
                            tool_use_id: id.clone(),
                        },
                    );
                }
                if let Some(&first_message) = ids.get(id.as_str()) {
                    return at(
                        j,
                        Kind::DuplicateToolUseId {
                            tool_use_id: id.clone(),
                            first_message,
                        },
                    );
                }
                ids.insert(id, i);
            }
            Block::ToolResult { tool_use_id, .. } => {
                let id = tool_use_id.clone();
                // What a result answers is judged before where it sits: a result
                // for a call nobody made is wrong wherever it is.
                if m.role == Role::Assistant || !asked.contains(tool_use_id.as_str()) {
                    return at(j, Kind::UnexpectedToolResult { tool_use_id: id });
                }
                if !answered.insert(tool_use_id) {
                    return at(j, Kind::DuplicateToolResult { tool_use_id: id });
                }
                if other_seen {
                    return at(j, Kind::ToolResultAfterOtherBlock { tool_use_id: id });
                }
            }
            Block::Thinking { signature, .. } if signature.is_empty() => {
                return at(j, Kind::UnsignedThinking);
            }
            Block::Unknown(map) => {
                let kind = block.kind();
                match KNOWN.iter().find(|(k, _)| *k == kind) {
                    None => {
                        return at(
                            j,
                            Kind::UnknownBlockType {
                                kind: kind.to_owned(),
                            },
                        );
                    }
                    Some((_, fields)) => {
                        if let Some(field) = fields.iter().find(|f| !map.contains_key(**f)) {
                            return at(
                                j,
                                Kind::MissingField {
                                    kind: kind.to_owned(),
                                    field,
                                },
                            );
                        }
                    }
                }
                other_seen = true;
            }
            _ => other_seen = true,
        }
    }
    None
}

/// The calls of assistant message `i` that `next` (the message after it) leaves
/// unanswered: no next message, an assistant's, or a user message missing a result.
fn unanswered(i: usize, m: &Message, next: Option<&Message>) -> Option<Breach> {
    if m.role != Role::Assistant {
        return None;
    }
    let calls: Vec<&str> = m
        .blocks()
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    let first = calls.first()?.to_string();
    let kind = match next {
        None => Kind::UnansweredAtEnd {
            tool_use_ids: calls.iter().map(|c| c.to_string()).collect(),
        },
        Some(n) if n.role == Role::Assistant => Kind::NoAnsweringMessage { tool_use_id: first },
        Some(n) => {
            let results: BTreeSet<&str> = n
                .blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
                .collect();
            let missing = calls.iter().find(|c| !results.contains(**c))?;
            Kind::MissingToolResult {
                tool_use_id: missing.to_string(),
            }
        }
    };
    Some(Breach {
        message: i,
        block: None,
        kind,
    })
}
