//! A history as the Messages API reads it: each run of consecutive user messages is
//! one message, and a user message's string content is one text block.
//!
//! Guarantee: checkers that compare two histories of one session (what earlier turns
//! left against what the engine holds now, the durable log against the live engine)
//! call two histories different only where the API would read them differently. An
//! engine may keep `[user: p1] [user: p2]` or `[user: p1 p2]`, and switch between
//! them (pydantic-ai joins adjacent requests when a run starts): the request is the
//! same. Comparing stored shapes instead was a false positive against such engines.

use super::same_json::same_json;
use std::ops::Range;
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, Role, SharedMessage};

/// Whether two runs of messages are the same stored messages, byte for byte.
pub fn same_run(a: &[SharedMessage], b: &[SharedMessage]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_json(x, y))
}

/// The messages as the API reads them: each run of consecutive user messages is one.
pub fn joined(history: &[SharedMessage]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::with_capacity(history.len());
    for (i, m) in history.iter().enumerate() {
        match out.last_mut() {
            Some(r) if m.role == Role::User && history[r.start].role == Role::User => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// A run of messages as the one message the API reads: itself when alone, else one
/// user message holding every block of the run in order.
pub fn as_one(run: &[SharedMessage]) -> SharedMessage {
    match run {
        [one] => Arc::clone(one),
        _ => Arc::new(Message::user_blocks(
            run.iter().flat_map(|m| blocks(m)).collect(),
        )),
    }
}

/// A message's blocks, its string content counting as one text block (as the API reads it).
fn blocks(m: &Message) -> Vec<Block> {
    match &m.content {
        Content::Text(t) => vec![Block::Text { text: t.clone() }],
        Content::Blocks(b) => b.clone(),
    }
}

/// Whether `now` is the user message `was` with content appended: `was`'s blocks are
/// the first blocks of `now`, byte for byte, and `now` has more.
pub fn appended_to(was: &SharedMessage, now: &SharedMessage) -> bool {
    if was.role != Role::User || now.role != Role::User {
        return false;
    }
    let (before, mut after) = (blocks(was), blocks(now));
    let n = before.len();
    after.len() > n && {
        after.truncate(n);
        same_json(
            &Arc::new(Message::user_blocks(before)),
            &Arc::new(Message::user_blocks(after)),
        )
    }
}
