//! A scenario's scripted response as the stream a provider sends: the blocks the
//! script names, in order, each whole, with the stop it names, or its error or hang
//! after the events it says.
//!
//! Guarantee: a scripted response draws nothing from the decisions but latencies, so
//! a scenario's script plays the same stream whatever the seed (only its timing is
//! the seed's), save its thinking, which follows what the request asked
//! ([`super::Asked`]), as the real API's does.

use super::*;

pub(super) fn plan_scripted(
    d: &mut Decider,
    opts: &SimOptions,
    tools: &[ToolSpec],
    ids: &mut IdGen,
    s: &ScriptedResponse,
    asked: Asked,
) -> Plan {
    let _ = tools;
    let mut b = Builder::new();
    let (after, error, hang) = match s {
        ScriptedResponse::Reply {
            thinking,
            text,
            tool_calls,
            stop,
        } => {
            // The script's thinking as the request asked it ([`Asked`]): none with
            // thinking off, and a turn it opens with thinking on starts with some.
            let thinking = match (asked.on, thinking) {
                (false, _) => None,
                (true, Some(t)) => Some(t.as_str()),
                (true, None) if asked.forces_thinking() => {
                    Some(super::asked::SCRIPTED_OPENING_THINKING)
                }
                (true, None) => None,
            };
            if let Some(t) = thinking {
                let index = b.open(BlockStart::Thinking);
                b.push(thinking_delta(index, t.to_owned()));
                b.push(StreamEvent::SignatureDelta {
                    index,
                    signature: "sig".into(),
                });
                b.close(index);
            }
            if !text.is_empty() {
                let index = b.open(BlockStart::Text);
                b.push(text_delta(index, text.clone()));
                b.close(index);
            }
            for call in tool_calls {
                let input = if call.input.is_null() {
                    serde_json::json!({})
                } else {
                    call.input.clone()
                };
                let index = b.open(BlockStart::ToolUse {
                    id: ids.next_id(),
                    name: call.name.clone(),
                });
                b.push(input_delta(index, input.to_string()));
                b.close(index);
            }
            let stop_reason = match stop {
                ScriptedStop::EndTurn => StopReason::EndTurn,
                ScriptedStop::ToolUse => StopReason::ToolUse,
                ScriptedStop::MaxTokens => StopReason::MaxTokens,
            };
            b.push(StreamEvent::MessageDelta {
                stop_reason,
                usage: Usage {
                    input_tokens: 0,
                    output_tokens: 10,
                },
            });
            b.push(StreamEvent::MessageStop);
            (None, None, false)
        }
        ScriptedResponse::Error {
            error,
            after_events,
        } => (Some(*after_events), Some(*error), false),
        ScriptedResponse::Hang { after_events } => (Some(*after_events), None, true),
    };
    let mut events = b.events;
    let mut fault = None;
    if let Some(after) = after {
        events.truncate(after as usize);
        let before_or_mid = if after == 0 {
            FaultKind::ProviderErrorBefore
        } else {
            FaultKind::ProviderErrorMid
        };
        match error {
            Some(ScriptedError::Overloaded) => {
                events.push((0, overloaded()));
                fault = Some(before_or_mid);
            }
            Some(ScriptedError::ConnectionReset) => {
                events.push((0, connection_reset()));
                fault = Some(before_or_mid);
            }
            None => fault = Some(FaultKind::Hang),
        }
    }
    fill_latencies(d, opts, &mut events);
    let cut = fault.map(|kind| {
        let how = if kind == FaultKind::Hang {
            Interruption::Hang
        } else {
            Interruption::ProviderError
        };
        let kept = events.len() - usize::from(error.is_some());
        (how, prefix_pos(&events[..kept]))
    });
    Plan {
        events,
        hangs: hang,
        fault,
        world: None,
        cut,
    }
}
