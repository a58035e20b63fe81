//! The stream and result shapes a run played: for each shape of the world's wide
//! grammar, how many planned replies (or tool results) had it, so a run's summary
//! says which of them the engine was shown, beside the fault matrix and the stream
//! coverage gate.
//!
//! Guarantee: a shape is counted from what was planned, the events of a reply and the
//! outcome of a tool, read the way a client sees them (not from the options that made
//! them), so the count says what reached the engine's input; it feeds no decision and
//! no trace, so counting changes neither a run nor its digest.

use std::collections::BTreeMap;
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::{StopReason, ToolOutcome, ToolResultContent};

/// The shapes counted, in the order the summary lists them.
pub const SHAPES: [&str; 11] = [
    "parallel_calls",
    "input_in_3_or_more_pieces",
    "empty_input_delta",
    "blank_text",
    "redacted_thinking",
    "stop_sequence_or_refusal",
    "shared_call_id",
    "block_started_twice",
    "delta_after_stop",
    "result_of_blocks",
    "long_result",
];

// Each shape's place in [`SHAPES`]: the reply shapes first, then the result shapes.
const PARALLEL: usize = 0;
const MANY_PIECES: usize = 1;
const EMPTY_INPUT: usize = 2;
const BLANK: usize = 3;
const REDACTED: usize = 4;
const OTHER_STOP: usize = 5;
const SHARED: usize = 6;
const RESTART: usize = 7;
const LATE: usize = 8;
const RESULT_OF_BLOCKS: usize = 9;
const LONG: usize = 10;

/// A tool result this long (bytes of text) counts as long output: kilobytes of lines,
/// where a usual result is one line.
const LONG_RESULT: usize = 1024;

/// How many replies or results had each shape, index for index with [`SHAPES`]: a
/// fixed array, since a count is kept for every reply planned.
pub(super) type Counts = [u64; SHAPES.len()];

/// The counts by name, the shapes never played left out.
pub(super) fn by_name(counts: &Counts) -> BTreeMap<&'static str, u64> {
    SHAPES
        .iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(shape, n)| (*shape, *n))
        .collect()
}

/// A block index as a bit of a mask; a reply has a handful of blocks, and an index
/// past 63 is not tracked.
fn bit(index: usize) -> u64 {
    if index < 64 { 1 << index } else { 0 }
}

/// Counts the shapes the planned reply `events` has, in one pass that allocates
/// nothing (it runs for every reply planned).
pub(super) fn of_reply(events: &[(u64, StreamEvent)], counts: &mut Counts) {
    // The first calls' ids, enough for any reply the world plans.
    let mut ids: [&str; 8] = [""; 8];
    let mut calls = 0usize;
    let mut pieces = [0u8; 64];
    let (mut started, mut stopped) = (0usize, 0u64);
    let mut had = [false; RESULT_OF_BLOCKS];
    for (_, e) in events {
        match e {
            StreamEvent::BlockStart { index, block } => {
                had[RESTART] |= *index < started;
                started = index + 1;
                match block {
                    BlockStart::ToolUse { id, .. } => {
                        had[SHARED] |= ids[..calls.min(ids.len())].contains(&id.as_str());
                        if let Some(slot) = ids.get_mut(calls) {
                            *slot = id;
                        }
                        calls += 1;
                    }
                    BlockStart::RedactedThinking { .. } => had[REDACTED] = true,
                    _ => {}
                }
            }
            StreamEvent::BlockStop { index } => stopped |= bit(*index),
            StreamEvent::TextDelta { index, text } => {
                had[LATE] |= stopped & bit(*index) != 0;
                had[BLANK] |= text.trim().is_empty();
            }
            StreamEvent::ThinkingDelta { index, .. }
            | StreamEvent::SignatureDelta { index, .. } => {
                had[LATE] |= stopped & bit(*index) != 0;
            }
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                had[LATE] |= stopped & bit(*index) != 0;
                had[EMPTY_INPUT] |= partial_json.is_empty();
                if let Some(n) = pieces.get_mut(*index) {
                    *n = n.saturating_add(1);
                    had[MANY_PIECES] |= *n >= 3;
                }
            }
            StreamEvent::MessageDelta { stop_reason, .. } => {
                had[OTHER_STOP] |=
                    matches!(stop_reason, StopReason::StopSequence | StopReason::Refusal);
            }
            _ => {}
        }
    }
    had[PARALLEL] = calls >= 2;
    for (count, had) in counts.iter_mut().zip(had) {
        *count += u64::from(had);
    }
}

/// Counts the shapes a planned tool `outcome` has.
pub(super) fn of_result(outcome: &ToolOutcome, counts: &mut Counts) {
    let shape = match &outcome.content {
        ToolResultContent::Blocks(_) => RESULT_OF_BLOCKS,
        ToolResultContent::Text(t) if t.len() >= LONG_RESULT => LONG,
        ToolResultContent::Text(_) => return,
    };
    counts[shape] += 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::Usage;

    fn at0(events: Vec<StreamEvent>) -> Vec<(u64, StreamEvent)> {
        events.into_iter().map(|e| (0, e)).collect()
    }

    fn call(index: usize, id: &str) -> StreamEvent {
        StreamEvent::BlockStart {
            index,
            block: BlockStart::ToolUse {
                id: id.into(),
                name: "read_file".into(),
            },
        }
    }

    fn input(index: usize, json: &str) -> StreamEvent {
        StreamEvent::InputJsonDelta {
            index,
            partial_json: json.into(),
        }
    }

    fn text_start(index: usize) -> StreamEvent {
        StreamEvent::BlockStart {
            index,
            block: BlockStart::Text,
        }
    }

    fn text(index: usize, text: &str) -> StreamEvent {
        StreamEvent::TextDelta {
            index,
            text: text.into(),
        }
    }

    /// `events` as a planned reply: a `message_start`, the events, then the reply's
    /// `message_delta` with `stop_reason` and its `message_stop`.
    fn reply(events: Vec<StreamEvent>, stop_reason: StopReason) -> Vec<(u64, StreamEvent)> {
        let mut all = vec![StreamEvent::MessageStart];
        all.extend(events);
        all.push(StreamEvent::MessageDelta {
            stop_reason,
            usage: Usage::default(),
        });
        all.push(StreamEvent::MessageStop);
        at0(all)
    }

    #[test]
    fn a_reply_is_counted_once_for_each_shape_it_has() {
        let reply = reply(
            vec![
                text_start(0),
                text(0, "\n\n"),
                StreamEvent::BlockStop { index: 0 },
                call(1, "exec_0"),
                input(1, "{\"pa"),
                input(1, ""),
                input(1, "th\":1}"),
                StreamEvent::BlockStop { index: 1 },
                call(2, "exec_0"),
                input(2, "{}"),
                StreamEvent::BlockStop { index: 2 },
            ],
            StopReason::ToolUse,
        );
        let mut counts = Counts::default();
        of_reply(&reply, &mut counts);
        of_reply(&reply, &mut counts);
        assert_eq!(
            by_name(&counts),
            BTreeMap::from([
                ("parallel_calls", 2),
                ("input_in_3_or_more_pieces", 2),
                ("empty_input_delta", 2),
                ("blank_text", 2),
                ("shared_call_id", 2),
            ])
        );
    }

    #[test]
    fn redacted_thinking_another_stop_and_both_malformed_streams_are_counted() {
        let reply = reply(
            vec![
                StreamEvent::BlockStart {
                    index: 0,
                    block: BlockStart::RedactedThinking {
                        data: "EqOpening0".into(),
                    },
                },
                StreamEvent::BlockStop { index: 0 },
                text_start(1),
                text(1, "word"),
                text_start(1),
                StreamEvent::BlockStop { index: 1 },
                text(1, "word"),
            ],
            StopReason::Refusal,
        );
        let mut counts = Counts::default();
        of_reply(&reply, &mut counts);
        assert_eq!(
            by_name(&counts),
            BTreeMap::from([
                ("redacted_thinking", 1),
                ("stop_sequence_or_refusal", 1),
                ("block_started_twice", 1),
                ("delta_after_stop", 1),
            ])
        );
    }

    #[test]
    fn a_plain_reply_and_a_one_line_result_count_nothing() {
        let reply = reply(
            vec![
                text_start(0),
                text(0, "done"),
                StreamEvent::BlockStop { index: 0 },
            ],
            StopReason::EndTurn,
        );
        let mut counts = Counts::default();
        of_reply(&reply, &mut counts);
        of_result(&ToolOutcome::text("t1", "one line", false), &mut counts);
        assert_eq!(by_name(&counts), BTreeMap::new());
        of_result(
            &ToolOutcome::text("t1", "x\n".repeat(600), false),
            &mut counts,
        );
        assert_eq!(by_name(&counts), BTreeMap::from([("long_result", 1)]));
        let mut outcome = ToolOutcome::text("t1", "", false);
        outcome.content = ToolResultContent::Blocks(vec![turnsim_core::Block::text("a")]);
        of_result(&outcome, &mut counts);
        assert_eq!(
            by_name(&counts),
            BTreeMap::from([("long_result", 1), ("result_of_blocks", 1)])
        );
    }
}
