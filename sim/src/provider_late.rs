//! A delta the provider streams again after its block's `block_stop`, and which planned
//! streams are malformed (a block started twice, a delta after its block's stop).
//!
//! Guarantee: a seed whose `late_delta` rate is zero draws nothing here (nor one whose
//! `block_restart` rate is zero for the restart), so its decision list is what it was
//! before the shape existed. A late delta is a copy of one of the reply's own non-empty
//! text or `input_json_delta` deltas, put anywhere after its block stopped and before
//! `message_stop`: every block of the reply streams whole as planned, and the one event
//! too many makes the reply malformed from there on.
//!
//! Why: a proxy that replays part of a stream sends a delta for a block that already
//! stopped. docs/spec.md §7 (Streaming) fails such a reply whole; an engine that
//! appends the delta to the finished block sends back words the model never said
//! (`model_words_exact` sees the altered text or input). Only text and input deltas
//! are replayed: they are the deltas every live checker reads (`Event::Streamed`,
//! `Event::InputStreamed`), so each sees where the reply turned malformed; a thinking
//! delta is judged only once whole (`thinking_intact`).

use super::StreamEvent;
use super::blank::{restart_first_block, restarts_a_block};
use crate::decide::Decider;
use crate::options::SimOptions;

/// Makes an uncut reply of a faulty seed malformed at the seed's rates: its first
/// block started twice (`block_restart`), else a delta replayed after its block's stop
/// (`late_delta`). `uncut_fault` says faults are on and the reply was not cut.
pub(super) fn malform(
    d: &mut Decider,
    opts: &SimOptions,
    uncut_fault: bool,
    events: &mut Vec<(u64, StreamEvent)>,
) {
    if !uncut_fault {
        return;
    }
    let restart = opts.stream.block_restart;
    if !restart.is_zero() && d.chance(restart) && restart_first_block(d, events) {
        return;
    }
    let late = opts.stream.late_delta;
    if !late.is_zero() && d.chance(late) {
        replay_late_delta(d, events);
    }
}

/// The block a text or input delta is for, when it carries something.
fn replayable(e: &StreamEvent) -> Option<usize> {
    match e {
        StreamEvent::TextDelta { index, text } if !text.is_empty() => Some(*index),
        StreamEvent::InputJsonDelta {
            index,
            partial_json,
        } if !partial_json.is_empty() => Some(*index),
        _ => None,
    }
}

/// Copies one non-empty text or input delta of a whole reply to a place after its
/// block's `block_stop`, up to just before `message_stop`. Returns whether it did (a
/// reply with no such delta, or not whole, has none to replay).
pub(super) fn replay_late_delta(d: &mut Decider, events: &mut Vec<(u64, StreamEvent)>) -> bool {
    let Some(end) = events
        .iter()
        .rposition(|(_, e)| matches!(e, StreamEvent::MessageStop))
    else {
        return false;
    };
    let deltas: Vec<usize> = (0..end)
        .filter(|&i| replayable(&events[i].1).is_some())
        .collect();
    if deltas.is_empty() {
        return false;
    }
    let at = deltas[d.below(deltas.len() as u32) as usize];
    let index = replayable(&events[at].1);
    let Some(stop) = (at..end)
        .find(|&i| matches!(events[i].1, StreamEvent::BlockStop { index: s } if Some(s) == index))
    else {
        return false;
    };
    let late = events[at].1.clone();
    let to = stop + 1 + d.below((end - stop) as u32) as usize;
    events.insert(to, (0, late));
    true
}

/// Whether a planned stream sends a delta for a block after that block's `block_stop`.
pub fn streams_late_delta<'a>(events: impl IntoIterator<Item = &'a StreamEvent>) -> bool {
    let mut stopped: Vec<usize> = Vec::new();
    for e in events {
        match e {
            StreamEvent::BlockStop { index } => stopped.push(*index),
            StreamEvent::TextDelta { index, .. }
            | StreamEvent::ThinkingDelta { index, .. }
            | StreamEvent::SignatureDelta { index, .. }
            | StreamEvent::InputJsonDelta { index, .. }
                if stopped.contains(index) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Whether a planned stream is malformed the ways the world makes one (a block
/// started twice, a delta after its block's stop): an engine must fail it whole.
pub fn malformed(events: &[(u64, StreamEvent)]) -> bool {
    let events = || events.iter().map(|(_, e)| e);
    restarts_a_block(events()) || streams_late_delta(events())
}
