//! Rule `pairing` (and `turn_open`): tool calls and results pair up as the Messages
//! API accepts them, judged by the judge's own validator ([`super::rules`]), never by
//! the reference engine's.
//!
//! Guarantees:
//! - The verdict is [`super::rules::walk::first_breach`]'s; this file only maps its
//!   message indices onto the input as sent (one mapping, used by every caller) and
//!   resynchronises after a breach so every one is reported without cascading:
//!   the walk restarts after the message at fault, skipping the tool-result messages
//!   that answered it (walked alone they would look orphaned).
//! - A call left open at the end of a log captured mid-turn is `turn_open`
//!   (information), never corruption; in a request that was sent, the same thing is a
//!   violation, because the provider rejects it.
//! - Duplicate tool ids are left to [`super::tool_ids`], which sees the whole history;
//!   an empty assistant message is reported under `empty` (the rule it breaks), and
//!   the other contract rules under `request_valid`.

use super::finding::{Finding, Findings, Place, Severity};
use super::rules::walk::{Breach, Kind, first_breach};
use super::view::Located;
use std::collections::BTreeSet;
use turnsim_core::{Block, Message, Role, SharedMessage};

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
/// `end` is `None` when more of the history follows the chunk; `ends_request` says
/// the chunk's last message is the final one of a request as sent.
pub fn check_chunk(
    chunk: &[Located],
    indices: &[usize],
    end: Option<End>,
    ends_request: bool,
    place: &Place,
    out: &mut Findings,
) {
    let messages: Vec<SharedMessage> = chunk.iter().map(|l| l.message.clone()).collect();
    let index_of = |k: usize| indices.get(k).copied().unwrap_or(k);
    let mut start = 0;
    while start < messages.len() {
        let Some(b) = first_breach(&messages, start, end.is_some() && ends_request) else {
            break;
        };
        let at = b.message;
        report(&b.remap(index_of), chunk, at, end, place, out);
        let mut next = at + 1;
        while next < messages.len() && is_results(&messages[next]) {
            next += 1;
        }
        start = next;
    }
}

/// The finding for breach `b` (indices as sent) about message `located`.
pub fn finding_of(b: &Breach, located: &Located, place: &Place) -> Finding {
    let msg = &located.message;
    // Findings about an unanswered call point at the tool_use block that asked.
    let block = b
        .block
        .or_else(|| b.tool_use_id().and_then(|id| tool_use_block(msg, id)));
    let place = Place {
        line: Some(located.line_of(block)),
        message: Some(b.message),
        block,
        ..place.clone()
    };
    Finding::new(
        Severity::Violation,
        b.family(),
        b.kind(),
        place,
        b.to_string(),
    )
    .with_excerpt(&block_json(msg, block))
}

fn report(
    b: &Breach,
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
    let index = b.message;
    let info = match &b.kind {
        Kind::DuplicateToolUseId { .. } => return,
        Kind::UnansweredAtEnd { tool_use_ids } if end == Some(End::TurnOpen) => Some((
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
        )),
        Kind::MissingToolResult { .. }
            if end == Some(End::TurnOpen) && partial_batch_at_end(chunk, at) =>
        {
            let asked = msg.tool_calls().len();
            let answered = chunk.last().map(|l| l.message.blocks().len()).unwrap_or(0);
            Some((
                "partial_results_at_end",
                format!(
                    "message {index}: the log ends while its tool batch runs ({answered} of {asked} results so far): captured mid-turn, not corruption"
                ),
            ))
        }
        _ => None,
    };
    let finding = finding_of(b, located, place);
    out.push(match info {
        Some((kind, detail)) => Finding::new(
            Severity::Info,
            "turn_open",
            kind,
            finding.place.clone(),
            detail,
        )
        .with_excerpt(&block_json(msg, finding.place.block)),
        None => finding,
    });
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
