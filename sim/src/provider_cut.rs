//! Where a stream is cut: the positions between two stream events, the kinds of
//! interruption that can land there, and the provider's own cuts (a `max_tokens` stop
//! after any event, an error or a hang that moves off a split signature).
//!
//! Guarantee: a cut the provider makes leaves a stream the Messages API could send:
//! a `max_tokens` stop closes the block it landed in with its `block_stop` before the
//! stop reason, and no cut leaves half a signature (a signature is not tokens; the
//! API never stops inside one), so the only partial signature an engine can hold is
//! one it cut itself. A `max_tokens` stop inside a thinking block still sends the
//! block's signature before its `block_stop` (the API signs whatever thinking it
//! returns), so the provider's record holds the cut thinking as signed. The position
//! names are the rows of the stream coverage gate.

use turnsim_core::{StopReason, StreamEvent};

/// The last event a stream delivered before an interruption landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreamPos {
    /// The request is out; nothing has come back.
    Unstarted,
    /// After `message_start`, before any block.
    Started,
    /// Inside a thinking block, before its signature.
    Thinking,
    /// After a thinking block's signature, before its `block_stop`.
    Signature,
    /// Inside a text block.
    Text,
    /// Inside a tool call's input JSON (after its `block_start` or an input delta).
    ToolInput,
    /// After a `block_stop`, before the next block or the stop reason.
    BetweenBlocks,
    /// After the stop reason (`message_delta`), before `message_stop`.
    Ending,
}

impl StreamPos {
    pub const ALL: [StreamPos; 8] = [
        StreamPos::Unstarted,
        StreamPos::Started,
        StreamPos::Thinking,
        StreamPos::Signature,
        StreamPos::Text,
        StreamPos::ToolInput,
        StreamPos::BetweenBlocks,
        StreamPos::Ending,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            StreamPos::Unstarted => "unstarted",
            StreamPos::Started => "started",
            StreamPos::Thinking => "thinking",
            StreamPos::Signature => "signature",
            StreamPos::Text => "text",
            StreamPos::ToolInput => "tool_input",
            StreamPos::BetweenBlocks => "between_blocks",
            StreamPos::Ending => "ending",
        }
    }

    /// Where a stream is once `event` has been delivered; `self` is where it was
    /// (an error or `message_stop` moves nothing: the stream is over).
    pub fn after(self, event: &StreamEvent) -> StreamPos {
        use turnsim_core::BlockStart;
        match event {
            StreamEvent::MessageStart => StreamPos::Started,
            StreamEvent::BlockStart { block, .. } => match block {
                BlockStart::Text => StreamPos::Text,
                BlockStart::Thinking | BlockStart::RedactedThinking { .. } => StreamPos::Thinking,
                BlockStart::ToolUse { .. } => StreamPos::ToolInput,
            },
            StreamEvent::ThinkingDelta { .. } => StreamPos::Thinking,
            StreamEvent::SignatureDelta { .. } => StreamPos::Signature,
            StreamEvent::TextDelta { .. } => StreamPos::Text,
            StreamEvent::InputJsonDelta { .. } => StreamPos::ToolInput,
            StreamEvent::BlockStop { .. } => StreamPos::BetweenBlocks,
            StreamEvent::MessageDelta { .. } => StreamPos::Ending,
            StreamEvent::MessageStop | StreamEvent::Error { .. } => self,
        }
    }

    /// Where a stream is after the first `kept` of `events`.
    pub fn of_prefix<'a>(events: impl IntoIterator<Item = &'a StreamEvent>) -> StreamPos {
        events
            .into_iter()
            .fold(StreamPos::Unstarted, |pos, e| pos.after(e))
    }
}

/// What interrupted a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Interruption {
    /// The provider sent an error event (overloaded, a connection reset).
    ProviderError,
    /// The provider stopped sending without ending the stream.
    Hang,
    /// The user or the host cancelled the turn.
    Cancel,
    /// The process died.
    Crash,
    /// The provider stopped the reply with `max_tokens`.
    MaxTokens,
}

impl Interruption {
    pub const ALL: [Interruption; 5] = [
        Interruption::ProviderError,
        Interruption::Hang,
        Interruption::Cancel,
        Interruption::Crash,
        Interruption::MaxTokens,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Interruption::ProviderError => "provider_error",
            Interruption::Hang => "hang",
            Interruption::Cancel => "cancel",
            Interruption::Crash => "crash",
            Interruption::MaxTokens => "max_tokens",
        }
    }

    /// Whether this interruption can land at `pos` in the simulated world: a
    /// `max_tokens` stop needs a started stream and comes before the stop reason
    /// (it is one); everything else can land anywhere.
    pub fn possible(self, pos: StreamPos) -> bool {
        match self {
            Interruption::MaxTokens => !matches!(pos, StreamPos::Unstarted | StreamPos::Ending),
            _ => true,
        }
    }
}

/// Moves a cut that keeps the first `kept` events off a split signature: while the
/// last kept event and the next are both signature deltas, the next is kept too.
pub fn settle_cut(events: &[(u64, StreamEvent)], mut kept: usize) -> usize {
    let is_sig = |i: usize| matches!(events.get(i), Some((_, StreamEvent::SignatureDelta { .. })));
    while kept > 0 && is_sig(kept - 1) && is_sig(kept) {
        kept += 1;
    }
    kept
}

/// Stops a planned reply with `max_tokens` after its first `kept` events (at least
/// `message_start`, at most every event before the stop reason): the block still open
/// gets its `block_stop` (a thinking block its signature first), then the stop reason
/// with the reply's usage and `message_stop`. Returns where the cut landed.
pub fn stop_at_max_tokens(events: &mut Vec<(u64, StreamEvent)>, kept: usize) -> StreamPos {
    let usage = events.iter().find_map(|(_, e)| match e {
        StreamEvent::MessageDelta { usage, .. } => Some(*usage),
        _ => None,
    });
    let kept = settle_cut(events, kept.max(1));
    let signature: Vec<(u64, StreamEvent)> = match events.get(kept - 1) {
        Some((_, StreamEvent::ThinkingDelta { index, .. }))
        | Some((
            _,
            StreamEvent::BlockStart {
                index,
                block: turnsim_core::BlockStart::Thinking,
            },
        )) => events[kept..]
            .iter()
            .filter(
                |(_, e)| matches!(e, StreamEvent::SignatureDelta { index: i, .. } if i == index),
            )
            .map(|(_, e)| (0, e.clone()))
            .collect(),
        _ => Vec::new(),
    };
    events.truncate(kept);
    let pos = StreamPos::of_prefix(events.iter().map(|(_, e)| e));
    let open = events.last().and_then(|(_, e)| match e {
        StreamEvent::BlockStart { index, .. }
        | StreamEvent::TextDelta { index, .. }
        | StreamEvent::ThinkingDelta { index, .. }
        | StreamEvent::SignatureDelta { index, .. }
        | StreamEvent::InputJsonDelta { index, .. } => Some(*index),
        _ => None,
    });
    events.extend(signature);
    if let Some(index) = open {
        events.push((0, StreamEvent::BlockStop { index }));
    }
    events.push((
        0,
        StreamEvent::MessageDelta {
            stop_reason: StopReason::MaxTokens,
            usage: usage.unwrap_or_default(),
        },
    ));
    events.push((0, StreamEvent::MessageStop));
    pos
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::{BlockStart, Usage};

    fn sig(s: &str) -> (u64, StreamEvent) {
        (
            0,
            StreamEvent::SignatureDelta {
                index: 0,
                signature: s.into(),
            },
        )
    }

    /// message_start, a thinking block with a signature in two pieces, a tool call
    /// with two input pieces, the stop reason and message_stop.
    fn reply() -> Vec<(u64, StreamEvent)> {
        let usage = Usage {
            input_tokens: 0,
            output_tokens: 7,
        };
        vec![
            (0, StreamEvent::MessageStart),
            (
                0,
                StreamEvent::BlockStart {
                    index: 0,
                    block: BlockStart::Thinking,
                },
            ),
            (
                0,
                StreamEvent::ThinkingDelta {
                    index: 0,
                    thinking: "hm".into(),
                },
            ),
            sig("si"),
            sig("g1"),
            (0, StreamEvent::BlockStop { index: 0 }),
            (
                0,
                StreamEvent::BlockStart {
                    index: 1,
                    block: BlockStart::ToolUse {
                        id: "toolu_1".into(),
                        name: "read_file".into(),
                    },
                },
            ),
            (
                0,
                StreamEvent::InputJsonDelta {
                    index: 1,
                    partial_json: "{\"pa".into(),
                },
            ),
            (
                0,
                StreamEvent::InputJsonDelta {
                    index: 1,
                    partial_json: "th\":\"a\"}".into(),
                },
            ),
            (0, StreamEvent::BlockStop { index: 1 }),
            (
                0,
                StreamEvent::MessageDelta {
                    stop_reason: StopReason::ToolUse,
                    usage,
                },
            ),
            (0, StreamEvent::MessageStop),
        ]
    }

    #[test]
    fn a_cut_between_two_signature_pieces_moves_after_the_last_one() {
        let events = reply();
        assert_eq!(settle_cut(&events, 4), 5);
        assert_eq!(settle_cut(&events, 5), 5);
        assert_eq!(settle_cut(&events, 3), 3);
    }

    #[test]
    fn max_tokens_inside_tool_input_closes_the_block_and_stops() {
        let mut events = reply();
        let pos = stop_at_max_tokens(&mut events, 8);
        assert_eq!(pos, StreamPos::ToolInput);
        let tail: Vec<&StreamEvent> = events[7..].iter().map(|(_, e)| e).collect();
        assert_eq!(
            tail,
            [
                &StreamEvent::InputJsonDelta {
                    index: 1,
                    partial_json: "{\"pa".into()
                },
                &StreamEvent::BlockStop { index: 1 },
                &StreamEvent::MessageDelta {
                    stop_reason: StopReason::MaxTokens,
                    usage: Usage {
                        input_tokens: 0,
                        output_tokens: 7
                    }
                },
                &StreamEvent::MessageStop,
            ]
        );
    }

    #[test]
    fn max_tokens_after_the_signature_keeps_it_whole_before_the_block_stop() {
        let mut events = reply();
        let pos = stop_at_max_tokens(&mut events, 4);
        assert_eq!(pos, StreamPos::Signature);
        assert_eq!(events.len(), 8);
        assert_eq!(events[4], sig("g1"));
        assert_eq!(events[5].1, StreamEvent::BlockStop { index: 0 });
    }

    #[test]
    fn max_tokens_inside_thinking_sends_the_signature_before_the_block_stop() {
        let mut events = reply();
        let pos = stop_at_max_tokens(&mut events, 3);
        assert_eq!(pos, StreamPos::Thinking);
        let kinds: Vec<&StreamEvent> = events[3..6].iter().map(|(_, e)| e).collect();
        assert_eq!(
            kinds,
            [
                &sig("si").1,
                &sig("g1").1,
                &StreamEvent::BlockStop { index: 0 }
            ]
        );
        assert_eq!(events.len(), 8);
    }

    #[test]
    fn max_tokens_between_blocks_adds_no_block_stop() {
        let mut events = reply();
        let pos = stop_at_max_tokens(&mut events, 6);
        assert_eq!(pos, StreamPos::BetweenBlocks);
        assert_eq!(events.len(), 8);
        assert!(matches!(
            events[6].1,
            StreamEvent::MessageDelta {
                stop_reason: StopReason::MaxTokens,
                ..
            }
        ));
    }

    #[test]
    fn positions_follow_the_last_event_delivered() {
        let events = reply();
        let at = |n: usize| StreamPos::of_prefix(events[..n].iter().map(|(_, e)| e));
        assert_eq!(
            [at(0), at(1), at(3), at(5), at(6), at(8), at(11), at(12)],
            [
                StreamPos::Unstarted,
                StreamPos::Started,
                StreamPos::Thinking,
                StreamPos::Signature,
                StreamPos::BetweenBlocks,
                StreamPos::ToolInput,
                StreamPos::Ending,
                StreamPos::Ending,
            ]
        );
    }
}
