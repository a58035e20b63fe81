//! A generated reply held to the request's output budget (`max_tokens`,
//! `max_output_tokens`, `max_completion_tokens`, `maxOutputTokens`).
//!
//! Guarantee: a generated reply ends with `max_tokens` exactly when its output
//! reaches the request's budget, as a real model's does, and never reports more
//! output tokens than the budget allows. The simulator's generator draws a
//! `max_tokens` stop by chance for replies of a few dozen tokens, which a client
//! that allowed 64,000 never sees from the real API: such a stop becomes the reply's
//! natural one (`tool_use` when it calls tools, else `end_turn`). A reply longer
//! than a small budget is cut where the budget runs out, its open block closed, and
//! stops with `max_tokens`. A plan that ends in a fault (a reset, an error) is left
//! as it is: the fault is what it stands for. Scripted replies keep the stop their
//! script gives. Output is counted as the server counts input: a token per four
//! bytes, rounded up; nothing is drawn, so the conversation's decider is untouched.

use turnsim_core::{BlockStart, StopReason, StreamEvent};

/// Bytes per token, as the server estimates them.
const BYTES_PER_TOKEN: usize = 4;

/// The tokens `text` costs.
fn tokens_of(text: &str) -> u64 {
    text.len().div_ceil(BYTES_PER_TOKEN) as u64
}

/// The block index and output text a delta carries (a signature is not output the
/// model writes).
fn output_of(e: &StreamEvent) -> Option<(usize, &str)> {
    match e {
        StreamEvent::TextDelta { index, text } => Some((*index, text)),
        StreamEvent::ThinkingDelta { index, thinking } => Some((*index, thinking)),
        StreamEvent::InputJsonDelta {
            index,
            partial_json,
        } => Some((*index, partial_json)),
        _ => None,
    }
}

/// The longest prefix of `s` within `bytes` bytes, cut at a char boundary.
fn prefix_within(s: &str, bytes: usize) -> &str {
    let mut at = bytes.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    &s[..at]
}

/// Holds the generated `events` to `budget` output tokens (`None`: the request set
/// no limit, so a reply of this size never reaches one).
pub(super) fn fit(events: &mut Vec<StreamEvent>, budget: Option<u64>) {
    if events
        .iter()
        .any(|e| matches!(e, StreamEvent::Error { .. }))
    {
        return;
    }
    let limit = budget.unwrap_or(u64::MAX);
    let mut spent = 0u64;
    let mut calls = false;
    for (at, e) in events.iter().enumerate() {
        if let StreamEvent::BlockStart {
            block: BlockStart::ToolUse { .. },
            ..
        } = e
        {
            calls = true;
        }
        let Some((index, text)) = output_of(e) else {
            continue;
        };
        let cost = tokens_of(text);
        if spent.saturating_add(cost) > limit {
            let room = usize::try_from(limit - spent).unwrap_or(usize::MAX);
            let kept = prefix_within(text, room.saturating_mul(BYTES_PER_TOKEN)).to_owned();
            let keep = if kept.is_empty() { at } else { at + 1 };
            events.truncate(keep);
            if let Some(last) = events.last_mut()
                && !kept.is_empty()
            {
                set_output(last, kept);
            }
            events.push(StreamEvent::BlockStop { index });
            events.push(StreamEvent::MessageDelta {
                stop_reason: StopReason::MaxTokens,
                usage: turnsim_core::Usage {
                    input_tokens: 0,
                    output_tokens: limit,
                },
            });
            events.push(StreamEvent::MessageStop);
            return;
        }
        spent += cost;
    }
    for e in events.iter_mut() {
        if let StreamEvent::MessageDelta { stop_reason, usage } = e {
            if *stop_reason == StopReason::MaxTokens {
                *stop_reason = if calls {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                };
            }
            usage.output_tokens = spent.max(1);
        }
    }
}

/// Replaces the output text of the delta `e`.
fn set_output(e: &mut StreamEvent, kept: String) {
    match e {
        StreamEvent::TextDelta { text, .. } => *text = kept,
        StreamEvent::ThinkingDelta { thinking, .. } => *thinking = kept,
        StreamEvent::InputJsonDelta { partial_json, .. } => *partial_json = kept,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::Usage;

    fn reply(text: &str, call: Option<&str>, stop: StopReason) -> Vec<StreamEvent> {
        let mut events = vec![
            StreamEvent::MessageStart,
            StreamEvent::BlockStart {
                index: 0,
                block: BlockStart::Text,
            },
            StreamEvent::TextDelta {
                index: 0,
                text: text.into(),
            },
            StreamEvent::BlockStop { index: 0 },
        ];
        if let Some(input) = call {
            events.extend([
                StreamEvent::BlockStart {
                    index: 1,
                    block: BlockStart::ToolUse {
                        id: "toolu_1".into(),
                        name: "Bash".into(),
                    },
                },
                StreamEvent::InputJsonDelta {
                    index: 1,
                    partial_json: input.into(),
                },
                StreamEvent::BlockStop { index: 1 },
            ]);
        }
        events.push(StreamEvent::MessageDelta {
            stop_reason: stop,
            usage: Usage {
                input_tokens: 0,
                output_tokens: 399,
            },
        });
        events.push(StreamEvent::MessageStop);
        events
    }

    fn stop_of(events: &[StreamEvent]) -> (StopReason, u64) {
        events
            .iter()
            .find_map(|e| match e {
                StreamEvent::MessageDelta { stop_reason, usage } => {
                    Some((*stop_reason, usage.output_tokens))
                }
                _ => None,
            })
            .expect("a message_delta")
    }

    #[test]
    fn a_max_tokens_stop_far_below_the_budget_becomes_the_natural_stop() {
        let mut e = reply("twenty bytes of text", None, StopReason::MaxTokens);
        fit(&mut e, Some(64_000));
        assert_eq!(stop_of(&e), (StopReason::EndTurn, 5));
        let mut e = reply("text", Some(r#"{"command":"ls"}"#), StopReason::MaxTokens);
        fit(&mut e, Some(64_000));
        assert_eq!(stop_of(&e), (StopReason::ToolUse, 1 + 4));
        let mut e = reply("text", None, StopReason::MaxTokens);
        fit(&mut e, None);
        assert_eq!(stop_of(&e), (StopReason::EndTurn, 1));
    }

    #[test]
    fn a_reply_longer_than_the_budget_is_cut_where_it_runs_out() {
        // 8 tokens of text, then a call: a budget of 10 ends 8 bytes into the input.
        let mut e = reply(
            "thirty-two bytes of model text..",
            Some(r#"{"command":"ls -la"}"#),
            StopReason::ToolUse,
        );
        fit(&mut e, Some(10));
        assert_eq!(stop_of(&e), (StopReason::MaxTokens, 10));
        let input: Vec<&str> = e
            .iter()
            .filter_map(|e| match e {
                StreamEvent::InputJsonDelta { partial_json, .. } => Some(partial_json.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(input, [r#"{"comman"#]);
        assert_eq!(
            e[e.len() - 3..],
            [
                StreamEvent::BlockStop { index: 1 },
                StreamEvent::MessageDelta {
                    stop_reason: StopReason::MaxTokens,
                    usage: Usage {
                        input_tokens: 0,
                        output_tokens: 10
                    }
                },
                StreamEvent::MessageStop
            ]
        );
    }

    #[test]
    fn a_budget_spent_exactly_is_not_exceeded_and_a_fault_is_left_alone() {
        let mut e = reply("12345678", None, StopReason::EndTurn);
        fit(&mut e, Some(2));
        assert_eq!(stop_of(&e), (StopReason::EndTurn, 2));
        let mut cut = reply(
            "a long enough text to pass the budget",
            None,
            StopReason::MaxTokens,
        );
        cut.truncate(3);
        cut.push(StreamEvent::Error {
            kind: "connection_reset".into(),
            message: "reset".into(),
        });
        let before = cut.clone();
        fit(&mut cut, Some(1));
        assert_eq!(cut, before);
    }
}
