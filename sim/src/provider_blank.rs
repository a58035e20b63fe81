//! Blank text and empty deltas the provider streams, and a block started twice.
//!
//! Guarantee: a seed whose `blank_text` rate is zero draws nothing here, nor one whose
//! `block_restart` rate is zero, so its decision list is what it was before these
//! shapes existed. A blank shape adds only whitespace or nothing to what the model
//! says (a reply whose only text is blank says nothing), and a restart lands after the
//! reply's first `block_start` and before that block's `block_stop`, so no block of a
//! malformed reply completed before it: a judge that voids the reply at the second
//! start loses nothing the model finished saying.
//!
//! Why: models stream a lone "\n\n" block before a call, whitespace-only and empty
//! deltas inside a text, and an empty `input_json_delta`; the API refuses every
//! whitespace-only text block sent back (docs/spec.md §7, "Blank text"). A proxy that
//! replays part of a stream starts a block twice: the reply is malformed and must be
//! failed whole, never half kept.

use super::{Builder, StreamEvent};
use crate::decide::Decider;
use crate::options::SimOptions;

/// One reply's blank shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blank {
    /// A whitespace-only text block before the reply's first text or call.
    Lead,
    /// The reply's text block holds only whitespace (a reply without calls).
    Only,
    /// A whitespace-only `text_delta` inside the reply's text block.
    SpaceDelta,
    /// An empty `text_delta` inside the reply's text block.
    EmptyTextDelta,
    /// An empty `input_json_delta` inside the first call's input.
    EmptyInputDelta,
}

impl Blank {
    pub const ALL: [Blank; 5] = [
        Blank::Lead,
        Blank::Only,
        Blank::SpaceDelta,
        Blank::EmptyTextDelta,
        Blank::EmptyInputDelta,
    ];

    /// The blank shape of one reply at the seed's rate, or none.
    pub(super) fn draw(d: &mut Decider, opts: &SimOptions) -> Option<Blank> {
        let rate = opts.stream.blank_text;
        if rate.is_zero() || !d.chance(rate) {
            return None;
        }
        Some(Blank::ALL[d.below(Blank::ALL.len() as u32) as usize])
    }

    /// The shape a reply with (or without) a text block and calls can hold: one that
    /// needs what the reply lacks becomes [`Blank::Lead`], which every reply holds.
    pub(super) fn fit(self, text: bool, calls: bool) -> Blank {
        match self {
            Blank::Only if calls => Blank::Lead,
            Blank::SpaceDelta | Blank::EmptyTextDelta if !text => Blank::Lead,
            Blank::EmptyInputDelta if !calls => Blank::Lead,
            shape => shape,
        }
    }
}

/// Whitespace a model streams: the newlines before a call, a space, a mix.
const BLANKS: [&str; 3] = ["\n\n", " ", "\n \t"];

pub(super) fn blank_text(d: &mut Decider) -> String {
    BLANKS[d.below(BLANKS.len() as u32) as usize].to_owned()
}

/// Puts `event` among the deltas of the open block whose `block_start` is event
/// `start` of `b` (its deltas are the last events): before them all, between two, or
/// after the last.
pub(super) fn insert_delta(d: &mut Decider, b: &mut Builder, start: usize, event: StreamEvent) {
    let room = b.events.len() - start;
    let at = start + 1 + d.below(room as u32) as usize;
    b.events.insert(at, (0, event));
}

/// Starts the reply's first block a second time, at its index and with its opening,
/// anywhere after its start up to just before its stop. Returns whether it did (a
/// reply without a finished first block, such as an error before any, has no room).
pub(super) fn restart_first_block(d: &mut Decider, events: &mut Vec<(u64, StreamEvent)>) -> bool {
    let is_start = |e: &StreamEvent| matches!(e, StreamEvent::BlockStart { .. });
    let is_stop = |e: &StreamEvent| matches!(e, StreamEvent::BlockStop { .. });
    let Some(start) = events.iter().position(|(_, e)| is_start(e)) else {
        return false;
    };
    let Some(stop) = events.iter().position(|(_, e)| is_stop(e)) else {
        return false;
    };
    let again = events[start].1.clone();
    let at = start + 1 + d.below((stop - start) as u32) as usize;
    events.insert(at, (0, again));
    true
}

/// Whether a planned stream starts some block twice.
pub fn restarts_a_block<'a>(events: impl IntoIterator<Item = &'a StreamEvent>) -> bool {
    let mut started = 0;
    for e in events {
        if let StreamEvent::BlockStart { index, .. } = e {
            if *index < started {
                return true;
            }
            started = index + 1;
        }
    }
    false
}
