//! The planted bugs taken from public agent-runtime issues: five mechanisms real
//! runtimes shipped, each restated in our own words on its [`Bug`] variant with the
//! issue it comes from, so the detection figure of issue 25 is measured on bugs nobody
//! here described to the oracle beforehand.
//!
//! Guarantee: each bug changes only what its mechanism names in the requests (or the
//! records) the reference engine built, and keeps that change consistent in every
//! later request, so what the run finds is the mechanism and not an artefact of
//! planting it. `canary.rs` holds the dispatch.

use super::Bug;
use std::sync::Arc;
use turnsim_core::{Block, Message, Output, Request, Role};

/// What these bugs remember besides the reference engine's state.
#[derive(Default)]
pub(super) struct Memory {
    /// The engine was restored from its log (`replays_empty_text_on_resume`).
    pub(super) resumed: bool,
    /// Tool-use ids of the batches a cancel stopped (`cancel_drops_calls_keeps_results`).
    pub(super) cancelled_calls: Vec<String>,
}

/// Rewrites a request the reference engine built, per the bug. Messages are only ever
/// rewritten in place, never added or removed, so the cache breakpoints (which name
/// message indices) still point where the engine put them.
pub(super) fn rewrite(bug: Bug, memory: &Memory, request: &mut Request) {
    for m in request.messages.iter_mut() {
        if m.role != Role::Assistant {
            continue;
        }
        let blocks = match bug {
            Bug::RepeatsStreamedCalls => repeated_calls(m.blocks()),
            Bug::DropsThinkingInToolLoop => without_thinking(m.blocks()),
            Bug::ReplaysEmptyTextOnResume if memory.resumed => with_empty_text(m.blocks()),
            Bug::CancelDropsCallsKeepsResults => without_calls(m.blocks(), &memory.cancelled_calls),
            _ => None,
        };
        if let Some(blocks) = blocks {
            *m = Arc::new(Message {
                role: Role::Assistant,
                content: turnsim_core::Content::Blocks(blocks),
            });
        }
    }
}

/// `repeats_streamed_calls`: each growing snapshot of the reply's calls is appended as
/// if it were a delta, so a reply calling a, b, c is kept as a, a, b, a, b, c. Only a
/// message with two or more calls changes.
fn repeated_calls(blocks: &[Block]) -> Option<Vec<Block>> {
    let calls: Vec<&Block> = blocks
        .iter()
        .filter(|b| matches!(b, Block::ToolUse { .. }))
        .collect();
    if calls.len() < 2 {
        return None;
    }
    let mut out: Vec<Block> = blocks
        .iter()
        .filter(|b| !matches!(b, Block::ToolUse { .. }))
        .cloned()
        .collect();
    for n in 1..=calls.len() {
        out.extend(calls[..n].iter().map(|b| (*b).clone()));
    }
    Some(out)
}

/// `drops_thinking_in_tool_loop`: a message that called tools goes back as a
/// tool-calls message in a format with no place for thinking, so its thinking is lost
/// (a message without calls is kept whole, as such an adapter keeps it).
fn without_thinking(blocks: &[Block]) -> Option<Vec<Block>> {
    let thinking = |b: &Block| matches!(b, Block::Thinking { .. } | Block::RedactedThinking { .. });
    let calls = blocks.iter().any(|b| matches!(b, Block::ToolUse { .. }));
    (calls && blocks.iter().any(thinking))
        .then(|| blocks.iter().filter(|b| !thinking(b)).cloned().collect())
}

/// `replays_empty_text_on_resume`: the transcript stored an empty text block before
/// each call, and a resumed session sends them back as they were stored.
fn with_empty_text(blocks: &[Block]) -> Option<Vec<Block>> {
    if !blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        return None;
    }
    let mut out = Vec::with_capacity(blocks.len() * 2);
    for b in blocks {
        if matches!(b, Block::ToolUse { .. }) {
            out.push(Block::Text {
                text: String::new(),
            });
        }
        out.push(b.clone());
    }
    Some(out)
}

/// `cancel_drops_calls_keeps_results`: the calls of a batch a cancel stopped are taken
/// out of the assistant message, while the results the cancel wrote for them stay.
fn without_calls(blocks: &[Block], cancelled: &[String]) -> Option<Vec<Block>> {
    let dropped = |b: &Block| matches!(b, Block::ToolUse { id, .. } if cancelled.contains(id));
    blocks
        .iter()
        .any(dropped)
        .then(|| blocks.iter().filter(|b| !dropped(b)).cloned().collect())
}

/// `cancel_repair_not_persisted`: what a cancel during tools writes (the results it
/// made up for the stopped calls, its marker, the turn's end) stays in memory only.
pub(super) fn drop_persists(outputs: &mut Vec<Output>) {
    outputs.retain(|o| !matches!(o, Output::Persist { .. }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "read".into(),
            input: json!({}),
        }
    }

    fn ids(blocks: &[Block]) -> Vec<String> {
        blocks
            .iter()
            .map(|b| match b {
                Block::ToolUse { id, .. } => id.clone(),
                Block::Text { text } => format!("text:{text}"),
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn snapshots_read_as_deltas_repeat_the_earlier_calls() {
        let out = repeated_calls(&[call("a"), call("b"), call("c")]).expect("three calls");
        assert_eq!(ids(&out), ["a", "a", "b", "a", "b", "c"]);
        assert_eq!(repeated_calls(&[call("a")]), None);
    }

    #[test]
    fn a_resumed_transcript_puts_an_empty_text_before_each_call() {
        let out = with_empty_text(&[call("a"), call("b")]).expect("calls");
        assert_eq!(ids(&out), ["text:", "a", "text:", "b"]);
    }

    #[test]
    fn thinking_is_lost_only_from_a_message_that_called_tools() {
        let thought = Block::Thinking {
            thinking: "plan".into(),
            signature: "sig".into(),
        };
        let out = without_thinking(&[thought.clone(), call("a")]).expect("a call");
        assert_eq!(ids(&out), ["a"]);
        assert_eq!(without_thinking(&[thought]), None);
    }

    #[test]
    fn only_the_cancelled_calls_are_taken_out() {
        let out = without_calls(&[call("a"), call("b")], &["b".to_owned()]).expect("b");
        assert_eq!(ids(&out), ["a"]);
        assert_eq!(without_calls(&[call("a")], &["b".to_owned()]), None);
    }
}
