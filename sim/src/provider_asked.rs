//! What a request asks of a reply's thinking, read from the request the way the
//! Messages API reads it.
//!
//! Guarantee: the provider streams a thinking block only in reply to a request that
//! turned thinking on (`Request::thinking`), and with thinking on every reply that
//! opens an assistant turn (the request ends on a user message that answers no call)
//! starts with thinking drawn from no decision: a signed thinking block, or in the
//! seeds picked for it a redacted one in its place or after it (`provider_thinking`).
//! Why: with thinking on
//! the API refuses a tool loop whose first assistant message comes back without the
//! thinking that opened it (`thinking_kept_in_tool_loop`), so a world that opened a
//! turn without thinking would blame the engine for a block it never got; and because
//! the block costs no decision, no decision list (a shrunk one included) can take it
//! away.

use turnsim_core::{Block, Request, Role};

/// The thinking a request asks for, as the provider plans its reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asked {
    /// The request turned extended thinking on.
    pub on: bool,
    /// The reply opens an assistant turn: the request ends on a user message that
    /// holds no `tool_result`.
    pub opens_turn: bool,
}

impl Asked {
    /// Thinking off: no thinking block is streamed.
    pub const OFF: Asked = Asked {
        on: false,
        opens_turn: false,
    };

    /// What `request` asks.
    pub fn of(request: &Request) -> Asked {
        let on = request.thinking_on();
        let opens_turn = on
            && request.messages.last().is_some_and(|m| {
                m.role == Role::User
                    && !m
                        .blocks()
                        .iter()
                        .any(|b| matches!(b, Block::ToolResult { .. }))
            });
        Asked { on, opens_turn }
    }

    /// The reply starts with thinking whatever the decisions say.
    pub(super) fn forces_thinking(self) -> bool {
        self.on && self.opens_turn
    }
}

/// The thinking a scripted reply opens a turn with when thinking is on and its script
/// gave none.
pub(super) const SCRIPTED_OPENING_THINKING: &str = "Planning the next step.";

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use turnsim_core::{CacheHints, Message, SharedMessage, Thinking};

    fn request(thinking: Option<Thinking>, messages: Vec<Message>) -> Request {
        Request {
            system: String::new(),
            tools: Arc::from(Vec::new()),
            thinking,
            messages: messages
                .into_iter()
                .map(Arc::new)
                .collect::<Vec<SharedMessage>>(),
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: Vec::new(),
            },
        }
    }

    const ON: Option<Thinking> = Some(Thinking::Enabled {
        budget_tokens: 1024,
    });

    #[test]
    fn a_prompt_with_thinking_on_opens_a_turn_and_a_tool_result_does_not() {
        let prompt = vec![Message::user_text("hi")];
        assert_eq!(
            Asked::of(&request(ON, prompt.clone())),
            Asked {
                on: true,
                opens_turn: true
            }
        );
        let results = vec![
            Message::user_text("hi"),
            Message::assistant_blocks(vec![Block::ToolUse {
                id: "t1".into(),
                name: "read".into(),
                input: serde_json::json!({}),
            }]),
            Message::user_blocks(vec![Block::tool_result("t1", "ok", false)]),
        ];
        assert_eq!(
            Asked::of(&request(ON, results)),
            Asked {
                on: true,
                opens_turn: false
            }
        );
        assert_eq!(Asked::of(&request(None, prompt.clone())), Asked::OFF);
        assert_eq!(
            Asked::of(&request(Some(Thinking::Disabled), prompt)),
            Asked::OFF
        );
    }

    fn tools() -> Vec<turnsim_core::ToolSpec> {
        vec![turnsim_core::ToolSpec {
            name: "read_file".into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
        }]
    }

    /// The plan for one request of a seed whose options think at every reply, with
    /// faults off, from `d`. Redacted thinking in place of a signed block is the
    /// seed's own shape (`provider_thinking`, whose tests hold it): off here, so
    /// `thinking_events` counts the signed block every thinking reply then has.
    fn plan(d: &mut crate::decide::Decider, seed: u64, asked: Asked) -> super::super::Plan {
        let mut opts = crate::options::SimOptions::quiet(seed);
        opts.thinking = crate::options::Ratio::ALWAYS;
        opts.stream.redacted_thinking = crate::options::Ratio::NEVER;
        super::super::plan_response(
            d,
            &opts,
            false,
            &tools(),
            &mut super::super::IdGen::default(),
            None,
            0,
            asked,
        )
    }

    fn thinking_events(p: &super::super::Plan) -> usize {
        use turnsim_core::{BlockStart, StreamEvent};
        p.events
            .iter()
            .filter(|(_, e)| {
                matches!(
                    e,
                    StreamEvent::BlockStart {
                        block: BlockStart::Thinking,
                        ..
                    } | StreamEvent::ThinkingDelta { .. }
                        | StreamEvent::SignatureDelta { .. }
                )
            })
            .count()
    }

    #[test]
    fn no_thinking_streams_to_a_request_that_left_it_off() {
        // The seed's options think at every reply; the request decides. A turn-opening
        // request with thinking off forces nothing either.
        let opening_off = Asked {
            on: false,
            opens_turn: true,
        };
        for seed in 0..300 {
            for asked in [Asked::OFF, opening_off] {
                let p = plan(&mut crate::decide::Decider::from_seed(seed), seed, asked);
                assert_eq!(thinking_events(&p), 0, "seed {seed}, {asked:?}");
            }
            let on = Asked {
                on: true,
                opens_turn: false,
            };
            let p = plan(&mut crate::decide::Decider::from_seed(seed), seed, on);
            assert!(thinking_events(&p) >= 3, "seed {seed}: {:?}", p.events);
        }
    }

    #[test]
    fn a_turn_opening_reply_with_thinking_on_starts_signed_even_from_zeroed_decisions() {
        use turnsim_core::{BlockStart, StreamEvent};
        let opening = Asked {
            on: true,
            opens_turn: true,
        };
        for seed in 0..300 {
            for d in [
                crate::decide::Decider::from_seed(seed),
                // What a shrinker leaves: every decision zero.
                crate::decide::Decider::replay(vec![0; 64]),
            ] {
                let mut d = d;
                let p = plan(&mut d, seed, opening);
                assert!(
                    matches!(
                        &p.events[1].1,
                        StreamEvent::BlockStart {
                            index: 0,
                            block: BlockStart::Thinking
                        }
                    ),
                    "seed {seed}: {:?}",
                    p.events
                );
                let signature: String = p
                    .events
                    .iter()
                    .filter_map(|(_, e)| match e {
                        StreamEvent::SignatureDelta {
                            index: 0,
                            signature,
                        } => Some(signature.as_str()),
                        _ => None,
                    })
                    .collect();
                assert!(signature.starts_with("sig"), "seed {seed}: {signature:?}");
            }
        }
    }
}
