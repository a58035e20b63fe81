//! Planning a response: the seed's or the script's next step, turned into simulator
//! events and a way of delivering them.
//!
//! Guarantee: a conversation's plan draws only from that conversation's own decider,
//! so its responses do not depend on how requests of other conversations interleave.
//! A reply carries thinking (or reasoning) only when the request asked for it, as the
//! real APIs do: a script's thinking is left out of a reply to a request without it.
//! The converse holds on the Messages API: a scripted reply to a request that turned
//! thinking on opens with a signed thinking block even when its script gave none,
//! since a client echoes back only what it was sent, and a reply with tool calls and
//! no thinking would make its own next request one the API (and this server) refuses.
//! A thinking block this server adds is that reply's alone: its text and signature
//! carry the reply's number (the signature also the conversation's tag), so a block a
//! client moves into another message shows as a changed reply; a block the script
//! holds keeps its own text and signature.
//! A generated reply is held to the request's output budget ([`super::budget`]).

use super::*;

/// How a planned response is to be delivered.
pub(super) enum Delivery {
    Complete,
    Http {
        status: u16,
        retry_after: Option<u32>,
    },
    Reset,
    /// `after`: complete wire events before the cut (`None`: all the plan has).
    Cut {
        after: Option<u32>,
        mid_event: bool,
    },
    Hang,
}

pub(super) struct Shaped {
    pub(super) events: Vec<StreamEvent>,
    pub(super) delays: Vec<u64>,
    pub(super) delivery: Delivery,
    pub(super) played: String,
}

impl Server {
    /// Plans the response for a tool-bearing request.
    pub(super) fn shape(&self, g: &mut Gen, step: Option<Step>, p: &ParsedRequest) -> Shaped {
        let script = &self.config.script;
        let mut opts = script.options.clone();
        // The real API stops on a sequence only when the client listed it, and its
        // `message_delta` names the one matched; the wire here writes
        // `"stop_sequence":null` and does not read the client's list, so over HTTP
        // finished replies stop as they did before `other_stop` (not yet played).
        opts.stream.other_stop = Ratio::NEVER;
        // Blank text and a block started twice are the simulator's shapes for now: over
        // HTTP they would move every pinned exchange of `serve`, and a real client's
        // answer to a malformed stream is its SDK's, not yet read for each.
        opts.stream.blank_text = Ratio::NEVER;
        opts.stream.block_restart = Ratio::NEVER;
        // A delta after its block's stop is malformed like a restart, for the same
        // reasons. Redacted thinking (a draw more per thinking reply) would move every
        // pinned exchange with thinking on: the simulator's shape for now too.
        opts.stream.late_delta = Ratio::NEVER;
        opts.stream.redacted_thinking = Ratio::NEVER;
        if !p.thinking {
            opts.thinking = Ratio::NEVER;
        }
        let turn_requests = turn_requests(p);
        // A generated reply that opens a turn on the Messages API with thinking on
        // starts with thinking, as the simulator's provider plans it; a script's thinking
        // is already as asked (`thinking_as_asked` below).
        let asked = Asked {
            on: p.thinking,
            opens_turn: p.thinking
                && p.messages_api
                && p.typed.last().is_some_and(|(_, m)| {
                    m.role == turnsim_core::Role::User
                        && !m
                            .blocks()
                            .iter()
                            .any(|b| matches!(b, turnsim_core::Block::ToolResult { .. }))
                }),
        };
        let ws = &self.config.workspace;
        let tag = g.tag.clone();
        let tools = &p.tools;
        let added_thinking = step
            .as_ref()
            .is_some_and(|s| adds_thinking(s, p.thinking, p.messages_api));
        let reply_n = g.responses;
        let step = step.map(|s| thinking_as_asked(s, p.thinking, p.messages_api, reply_n));
        let plan = |g: &mut Gen, scripted: Option<&ScriptedResponse>, faults: bool| {
            let mut input = |d: &mut Decider, name: &str, id: &str| {
                tools::make_input(d, tools, name, &wire_id(&tag, id), ws).to_string()
            };
            let plan = plan_response_with(
                &mut g.d,
                &opts,
                faults,
                tools,
                &mut g.ids,
                scripted,
                turn_requests,
                asked,
                &mut input,
            );
            let delays = plan.events.iter().map(|(t, _)| *t).collect::<Vec<_>>();
            let mut events: Vec<StreamEvent> = plan.events.into_iter().map(|(_, e)| e).collect();
            retag(&mut events, &tag);
            if scripted.is_some() {
                fill_scripted_inputs(&mut events, &mut g.d, tools, ws);
                if added_thinking {
                    sign_per_reply(&mut events, &tag, g.responses);
                }
            }
            (events, delays, plan.hangs)
        };
        match step {
            None | Some(Step::Generated) => {
                let played = if step.is_some() {
                    "generated (script)"
                } else {
                    "generated"
                };
                let (mut events, mut delays, hangs) = plan(g, None, script.faults);
                if !hangs {
                    super::budget::fit(&mut events, p.max_tokens);
                    delays.resize(events.len(), 0);
                }
                let delays = if script.faults {
                    delays
                } else {
                    vec![0; events.len()]
                };
                from_plan(
                    &mut g.d,
                    opts.rates.cut_mid_event,
                    events,
                    delays,
                    hangs,
                    true,
                    played.into(),
                )
            }
            Some(Step::Sim(r)) => {
                let (events, delays, hangs) = plan(g, Some(&r), false);
                let zero = vec![0; delays.len()];
                from_plan(
                    &mut g.d,
                    opts.rates.cut_mid_event,
                    events,
                    zero,
                    hangs,
                    false,
                    Step::Sim(r).describe(),
                )
            }
            Some(Step::Status {
                status,
                retry_after,
            }) => Shaped {
                events: Vec::new(),
                delays: Vec::new(),
                delivery: Delivery::Http {
                    status,
                    retry_after,
                },
                played: step_text(&Step::Status {
                    status,
                    retry_after,
                }),
            },
            Some(
                ref s @ Step::Cut {
                    after_events,
                    mid_event,
                    ref reply,
                },
            ) => {
                let (events, _, _) = plan(g, reply.as_ref(), false);
                let delays = vec![0; events.len()];
                // A cut is placed by the script's own events: a thinking block this
                // server added moves it by its length, so it still lands where the
                // script put it (inside a call's input, say).
                let added = if added_thinking {
                    thinking_events(&events)
                } else {
                    0
                };
                Shaped {
                    events,
                    delays,
                    delivery: Delivery::Cut {
                        after: Some(after_events.saturating_add(added)),
                        mid_event,
                    },
                    played: s.describe(),
                }
            }
            Some(
                ref s @ Step::Slow {
                    delay_ms,
                    ref reply,
                },
            ) => {
                let (events, _, _) = plan(g, reply.as_ref(), false);
                let delays = vec![delay_ms; events.len()];
                Shaped {
                    events,
                    delays,
                    delivery: Delivery::Complete,
                    played: s.describe(),
                }
            }
        }
    }
}

pub(super) fn step_text(s: &Step) -> String {
    s.describe()
}

/// Requests of this turn before this one: assistant messages after the last user
/// message that is not only tool results (the simulator wraps a turn up after a few).
pub(super) fn turn_requests(p: &ParsedRequest) -> u32 {
    let mut n = 0;
    for (_, m) in p.typed.iter().rev() {
        match m.role {
            turnsim_core::Role::Assistant => n += 1,
            turnsim_core::Role::User => {
                let only_results = !m.blocks().is_empty()
                    && m.blocks()
                        .iter()
                        .all(|b| matches!(b, turnsim_core::Block::ToolResult { .. }));
                if !only_results {
                    break;
                }
            }
        }
    }
    n
}

/// A tool-use id unique across conversations: the conversation's tag and the
/// generator's counter (`toolu_00003` → `toolu_1a2b3c4d_00003`).
pub(super) fn wire_id(tag: &str, id: &str) -> String {
    format!("toolu_{tag}_{}", id.trim_start_matches("toolu_"))
}

pub(super) fn retag(events: &mut [StreamEvent], tag: &str) {
    for e in events {
        if let StreamEvent::BlockStart {
            block: BlockStart::ToolUse { id, .. },
            ..
        } = e
        {
            *id = wire_id(tag, id);
        }
    }
}

/// A scripted call whose input is `{}` gets an input built from the client's schema,
/// so a script can name a tool without spelling out its arguments.
pub(super) fn fill_scripted_inputs(
    events: &mut Vec<StreamEvent>,
    d: &mut Decider,
    tools: &[turnsim_core::ToolSpec],
    ws: &Workspace,
) {
    let mut out = Vec::with_capacity(events.len());
    let mut current: Option<(usize, String, String)> = None;
    for e in events.drain(..) {
        match &e {
            StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse { id, name },
            } => current = Some((*index, id.clone(), name.clone())),
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } if partial_json == "{}" => {
                if let Some((i, id, name)) = &current
                    && i == index
                    && tools.iter().any(|t| &t.name == name)
                {
                    let input = tools::make_input(d, tools, name, id, ws);
                    out.push(StreamEvent::InputJsonDelta {
                        index: *index,
                        partial_json: input.to_string(),
                    });
                    continue;
                }
            }
            StreamEvent::BlockStop { .. } => current = None,
            _ => {}
        }
        out.push(e);
    }
    *events = out;
}

/// Reads the simulator's plan into a delivery: an overloaded error before any event
/// is an HTTP error (seeded: 529, 500 or 429), a connection reset after some events a
/// cut body, a hang a hang.
pub(super) fn from_plan(
    d: &mut Decider,
    cut_mid_event: Ratio,
    mut events: Vec<StreamEvent>,
    mut delays: Vec<u64>,
    hangs: bool,
    seeded: bool,
    played: String,
) -> Shaped {
    let last_error = match events.last() {
        Some(StreamEvent::Error { kind, .. }) => Some(kind.clone()),
        _ => None,
    };
    let delivery = if hangs {
        Delivery::Hang
    } else {
        match last_error.as_deref() {
            Some("overloaded_error") if events.len() == 1 => {
                let status = if seeded {
                    [529, 500, 429][d.weighted(&[2, 1, 1])]
                } else {
                    529
                };
                let retry_after = (status == 429).then(|| d.range(1, 2));
                Delivery::Http {
                    status,
                    retry_after,
                }
            }
            Some("connection_reset") if events.len() == 1 => Delivery::Reset,
            Some("connection_reset") => {
                events.pop();
                delays.pop();
                let mid_event = seeded && d.chance(cut_mid_event);
                Delivery::Cut {
                    after: None,
                    mid_event,
                }
            }
            _ => Delivery::Complete,
        }
    };
    Shaped {
        events,
        delays,
        delivery,
        played,
    }
}

/// The answer to a request without tools: one short text block, nothing drawn.
pub(super) fn plain_reply() -> Shaped {
    let events = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: PLAIN_ANSWER.into(),
        },
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::MessageDelta {
            stop_reason: StopReason::EndTurn,
            usage: Usage {
                input_tokens: 0,
                output_tokens: 3,
            },
        },
        StreamEvent::MessageStop,
    ];
    let delays = vec![0; events.len()];
    Shaped {
        events,
        delays,
        delivery: Delivery::Complete,
        played: super::record::PLAYED_PLAIN.into(),
    }
}

/// The thinking a scripted reply opens with when a Messages API request turned
/// thinking on and the script gave none: its text names the reply's number in its
/// conversation, so no two replies of a conversation carry the same block (a client
/// that moved one reply's block into another message would otherwise go unseen).
pub(super) fn scripted_thinking(reply: u32) -> String {
    format!("Planning the next step (reply {reply}).")
}

/// The signature of a scripted reply's thinking block: the conversation's tag and
/// the reply's number in it, so that a block is its reply's alone, and the same on
/// every run of the same script (no clock, no draw).
pub(super) fn scripted_signature(tag: &str, reply: u32) -> String {
    format!("sig_{tag}_{reply:04}")
}

/// Gives the thinking block this server added to a scripted reply its reply's own
/// signature (the simulator's scripted stream signs every block `sig`). A thinking
/// block the script itself holds keeps its signature: a recorded conversation
/// replayed from a cassette sends that one back.
fn sign_per_reply(events: &mut [StreamEvent], tag: &str, reply: u32) {
    for e in events {
        if let StreamEvent::SignatureDelta { signature, .. } = e {
            *signature = scripted_signature(tag, reply);
        }
    }
}

/// Whether [`thinking_as_asked`] gives `step` a thinking block it did not have.
fn adds_thinking(step: &Step, asked: bool, messages_api: bool) -> bool {
    let bare = |r: &ScriptedResponse| matches!(r, ScriptedResponse::Reply { thinking: None, .. });
    asked
        && messages_api
        && match step {
            Step::Sim(r) | Step::Cut { reply: Some(r), .. } | Step::Slow { reply: Some(r), .. } => {
                bare(r)
            }
            _ => false,
        }
}

/// Events of the thinking block at index 0 of `events`, its start and stop included.
fn thinking_events(events: &[StreamEvent]) -> u32 {
    let n = events
        .iter()
        .filter(|e| match e {
            StreamEvent::BlockStart { index, block } => {
                *index == 0 && matches!(block, BlockStart::Thinking)
            }
            StreamEvent::ThinkingDelta { index, .. }
            | StreamEvent::SignatureDelta { index, .. }
            | StreamEvent::BlockStop { index } => *index == 0,
            _ => false,
        })
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `step` with its scripted reply's thinking as the request asked: left out when it
/// did not ask (the real APIs never send a thinking block or a reasoning item unasked,
/// and a client that never asked may not know what to do with one), and on the
/// Messages API given one when it asked and the script has none.
fn thinking_as_asked(step: Step, asked: bool, messages_api: bool, reply: u32) -> Step {
    if asked && !messages_api {
        return step;
    }
    let set = |r: ScriptedResponse| match r {
        ScriptedResponse::Reply {
            thinking,
            text,
            tool_calls,
            stop,
        } => ScriptedResponse::Reply {
            thinking: if asked {
                thinking.or_else(|| Some(scripted_thinking(reply)))
            } else {
                None
            },
            text,
            tool_calls,
            stop,
        },
        other => other,
    };
    let strip = set;
    match step {
        Step::Sim(r) => Step::Sim(strip(r)),
        Step::Cut {
            after_events,
            mid_event,
            reply,
        } => Step::Cut {
            after_events,
            mid_event,
            reply: reply.map(strip),
        },
        Step::Slow { delay_ms, reply } => Step::Slow {
            delay_ms,
            reply: reply.map(strip),
        },
        other => other,
    }
}
