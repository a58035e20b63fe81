//! Rules `append_only` and `response_kept`: a conversation's message history only
//! grows (spec §8), and the reply the provider streamed is sent back as streamed.
//!
//! Guarantees:
//! - Compared in normal form ([`super::normal`]): a moved `cache_control` or string
//!   content written as one text block is not a change; anything else is, byte for
//!   byte, and the finding shows where the two first differ.
//! - The history is judged on its own: a changed system prompt, tool list, model or
//!   beta flag is a prefix change ([`super::prefix_change`]), never an `append_only`
//!   finding.
//! - The previous request is the last one the provider accepted (see
//!   [`super::session`]): a rejected request never became part of the conversation,
//!   so the client's corrected retry is compared with what came before it.
//! - A shorter request whose messages are a prefix of the previous one is a rewind
//!   (information: a client may go back, e.g. when the user edits a prompt), and the
//!   same messages again are a retry (information). So is a shorter request whose
//!   only new message is its last, a user message: the user went back and edited a
//!   prompt, or the client asked for a summary of the history so far (Claude Code's
//!   `/compact` sends the history cut before the last reply, its instruction added
//!   to the last user message). Nothing before that message changed, so no cached
//!   prefix was lost.
//! - A request as long as the previous one whose only change is its last message, a
//!   user prompt put where the previous request's last user message was, is a rewind
//!   too: the user went back to before that prompt and asked something else (Claude
//!   Code's `--resume-session-at`, an edited prompt in a chat UI), a new branch of the
//!   same conversation, not a rewritten history. So is a last user message that keeps
//!   the previous one's blocks and adds some (`/compact` right after tool results,
//!   its instruction added to them). A tool result sent back with other content, or a
//!   reply rewritten, at the same length, is still a changed message.

use super::finding::excerpt;
use super::finding::{Finding, Findings, Place, Severity, difference};
use super::view::{Prefix, Request};
use turnsim_core::{Block, Message, Role};

/// What a conversation remembers of the last request the provider accepted.
#[derive(Clone, Debug)]
pub struct Previous {
    pub request: usize,
    pub prefix: Prefix,
    /// Its messages, in normal form.
    pub normal: Vec<String>,
    pub stream: bool,
    /// The reply it got, when known and valid.
    pub reply: Option<Message>,
    /// How it was answered (`complete`, `cut after 4 events`…), when known.
    pub outcome: Option<String>,
    /// Its last entry as sent was a user prompt (a user message with no tool result).
    pub ends_with_prompt: bool,
}

impl Previous {
    pub fn of(request: &Request) -> Previous {
        Previous {
            request: request.id,
            prefix: request.prefix.clone(),
            normal: request.normal.clone(),
            stream: request.stream,
            reply: None,
            outcome: None,
            ends_with_prompt: ends_with_prompt(request),
        }
    }
}

/// Judges `cur` against the previous request of its conversation.
pub fn check(prev: &Previous, cur: &Request, place: &Place, out: &mut Findings) {
    let (id, p) = (cur.id, prev.request);
    let at = |message: Option<usize>| Place {
        message,
        ..place.clone()
    };
    let changed = prev
        .normal
        .iter()
        .zip(&cur.normal)
        .position(|(was, now)| was != now);
    let (n, m) = (cur.normal.len(), prev.normal.len());
    // Both last messages are prompts, or the new one is the old one with blocks added
    // after it (Claude Code's `/compact` after a tool loop adds its instruction to the
    // tool results): an assistant message rewritten in place, or a tool result the
    // model saw sent again with other content, is a changed history.
    let replaced_prompt = |i: usize| {
        i + 1 == n
            && ends_with_user(cur)
            && ((prev.ends_with_prompt && ends_with_prompt(cur))
                || extends(&prev.normal[i], &cur.normal[i]))
    };
    if let Some(i) = changed
        && !(n < m && i + 1 == n && ends_with_user(cur))
        && !(n == m && replaced_prompt(i))
    {
        let (was, now) = difference(&prev.normal[i], &cur.normal[i]);
        out.push(
            Finding::new(
                Severity::Violation,
                "append_only",
                "message_changed",
                at(Some(i)),
                format!(
                    "request {id}: message {i} differs from request {p} (cache_control aside): was …{}",
                    excerpt(&was)
                ),
            )
            .with_excerpt(&now),
        );
        return;
    }
    if n == m && changed.is_some() {
        out.push(Finding::new(
            Severity::Info,
            "append_only",
            "rewind",
            at(None),
            format!(
                "request {id}: rewind: its first {} messages are those of request {p}, and its last one, a user message, replaces request {p}'s last",
                n - 1
            ),
        ));
        return;
    }
    if n < m {
        let detail = match changed {
            Some(_) => format!(
                "request {id}: rewind: its first {} messages are a prefix of the {m} of request {p}, and its last one, a user message, is new",
                n - 1
            ),
            None => format!(
                "request {id}: rewind: its {n} messages are a prefix of the {m} of request {p}"
            ),
        };
        out.push(Finding::new(
            Severity::Info,
            "append_only",
            "rewind",
            at(None),
            detail,
        ));
        return;
    }
    if n == m {
        let mut detail = format!("request {id}: same messages as request {p}");
        if prev.stream && !cur.stream {
            detail.push_str(", now without streaming");
            if let Some(o) = &prev.outcome {
                detail.push_str(&format!(" (after: {o})"));
            }
        }
        out.push(Finding::new(
            Severity::Info,
            "append_only",
            "same_messages",
            at(None),
            detail,
        ));
        return;
    }
    let carried = cur.messages.iter().find(|l| l.index == Some(m));
    if let (Some(reply), Some(carried)) = (&prev.reply, carried)
        && carried.message.role == Role::Assistant
        && *carried.message != *reply
    {
        let (streamed, now) = difference(&reply.to_json(), &carried.message.to_json());
        out.push(
            Finding::new(
                Severity::Violation,
                "response_kept",
                "reply_changed",
                at(Some(m)),
                format!(
                    "request {id}: message {m} is not the reply streamed to request {p}: streamed …{}",
                    excerpt(&streamed)
                ),
            )
            .with_excerpt(&now),
        );
    }
}

/// True when the request's last entry as sent is a user message (a prompt or tool
/// results), not an assistant message or a `system` entry.
fn ends_with_user(cur: &Request) -> bool {
    let last = cur.normal.len().checked_sub(1);
    cur.messages
        .iter()
        .any(|l| l.index.is_some() && l.index == last && l.message.role == Role::User)
}

/// True when message `now` (normal form) is message `was` with blocks appended: the
/// same role, `was`'s blocks its first ones, unchanged.
fn extends(was: &str, now: &str) -> bool {
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    let (Some(was), Some(now)) = (parse(was), parse(now)) else {
        return false;
    };
    let blocks = |v: &serde_json::Value| v.get("content").and_then(|c| c.as_array()).cloned();
    match (blocks(&was), blocks(&now)) {
        (Some(a), Some(b)) => {
            was.get("role") == now.get("role") && b.len() > a.len() && b.starts_with(&a)
        }
        _ => false,
    }
}

/// True when the request's last entry as sent is a user prompt: a user message that
/// answers no tool call.
fn ends_with_prompt(cur: &Request) -> bool {
    let last = cur.normal.len().checked_sub(1);
    cur.messages.iter().any(|l| {
        l.index.is_some()
            && l.index == last
            && l.message.role == Role::User
            && !l
                .message
                .blocks()
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
    })
}

/// True when the first message `cur` adds to `prev` is the model's tool calls and no
/// message added after it ends that turn: the tool loop of a turn goes on, so the
/// prefix must not change. An added assistant message without a tool call closes the
/// turn (a client resuming an interrupted call writes a closing reply, then the new
/// prompt), and what follows it is a new turn, where a prefix change is the client's
/// choice.
pub fn continues_loop(prev: &Previous, cur: &Request) -> bool {
    let m = prev.normal.len();
    let mut added = cur
        .messages
        .iter()
        .filter(|l| l.index.is_some_and(|i| i >= m))
        .filter(|l| l.message.role == Role::Assistant);
    cur.normal.len() > m
        && cur
            .messages
            .iter()
            .find(|l| l.index == Some(m))
            .is_some_and(|l| l.message.role == Role::Assistant && l.message.has_tool_use())
        && added.all(|l| l.message.has_tool_use())
}
