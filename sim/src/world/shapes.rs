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

/// A tool result this long (bytes of text) counts as long output: kilobytes of lines,
/// where a usual result is one line.
const LONG_RESULT: usize = 1024;

/// Counts the shapes the planned reply `events` has.
pub(super) fn of_reply(events: &[(u64, StreamEvent)], shapes: &mut BTreeMap<&'static str, u64>) {
    let mut calls: Vec<&str> = Vec::new();
    let mut pieces: BTreeMap<usize, u32> = BTreeMap::new();
    let (mut empty_input, mut blank, mut redacted, mut other_stop) = (false, false, false, false);
    for (_, e) in events {
        match e {
            StreamEvent::BlockStart {
                block: BlockStart::ToolUse { id, .. },
                ..
            } => calls.push(id),
            StreamEvent::BlockStart {
                block: BlockStart::RedactedThinking { .. },
                ..
            } => redacted = true,
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                *pieces.entry(*index).or_default() += 1;
                empty_input |= partial_json.is_empty();
            }
            StreamEvent::TextDelta { text, .. } => blank |= text.trim().is_empty(),
            StreamEvent::MessageDelta { stop_reason, .. } => {
                other_stop |= matches!(stop_reason, StopReason::StopSequence | StopReason::Refusal)
            }
            _ => {}
        }
    }
    let shared = calls
        .iter()
        .enumerate()
        .any(|(i, id)| calls[..i].contains(id));
    let stream = || events.iter().map(|(_, e)| e);
    let had = [
        calls.len() >= 2,
        pieces.values().any(|&n| n >= 3),
        empty_input,
        blank,
        redacted,
        other_stop,
        shared,
        crate::provider::restarts_a_block(stream()),
        crate::provider::streams_late_delta(stream()),
    ];
    for (shape, had) in SHAPES.iter().zip(had) {
        if had {
            *shapes.entry(shape).or_default() += 1;
        }
    }
}

/// Counts the shapes a planned tool `outcome` has.
pub(super) fn of_result(outcome: &ToolOutcome, shapes: &mut BTreeMap<&'static str, u64>) {
    let shape = match &outcome.content {
        ToolResultContent::Blocks(_) => "result_of_blocks",
        ToolResultContent::Text(t) if t.len() >= LONG_RESULT => "long_result",
        ToolResultContent::Text(_) => return,
    };
    *shapes.entry(shape).or_default() += 1;
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

    #[test]
    fn a_reply_is_counted_once_for_each_shape_it_has() {
        let reply = at0(vec![
            StreamEvent::MessageStart,
            StreamEvent::BlockStart {
                index: 0,
                block: BlockStart::Text,
            },
            StreamEvent::TextDelta {
                index: 0,
                text: "\n\n".into(),
            },
            StreamEvent::BlockStop { index: 0 },
            call(1, "exec_0"),
            input(1, "{\"pa"),
            input(1, ""),
            input(1, "th\":1}"),
            StreamEvent::BlockStop { index: 1 },
            call(2, "exec_0"),
            input(2, "{}"),
            StreamEvent::BlockStop { index: 2 },
            StreamEvent::MessageDelta {
                stop_reason: StopReason::ToolUse,
                usage: Usage::default(),
            },
            StreamEvent::MessageStop,
        ]);
        let mut shapes = BTreeMap::new();
        of_reply(&reply, &mut shapes);
        of_reply(&reply, &mut shapes);
        assert_eq!(
            shapes,
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
    fn a_plain_reply_and_a_one_line_result_count_nothing() {
        let reply = at0(vec![
            StreamEvent::MessageStart,
            StreamEvent::BlockStart {
                index: 0,
                block: BlockStart::Text,
            },
            StreamEvent::TextDelta {
                index: 0,
                text: "done".into(),
            },
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::MessageDelta {
                stop_reason: StopReason::EndTurn,
                usage: Usage::default(),
            },
            StreamEvent::MessageStop,
        ]);
        let mut shapes = BTreeMap::new();
        of_reply(&reply, &mut shapes);
        of_result(&ToolOutcome::text("t1", "one line", false), &mut shapes);
        assert_eq!(shapes, BTreeMap::new());
        of_result(
            &ToolOutcome::text("t1", "x\n".repeat(600), false),
            &mut shapes,
        );
        assert_eq!(shapes, BTreeMap::from([("long_result", 1)]));
    }
}
