//! Provider streams, session inputs and scripted sessions.
//!
//! Guarantee: a [`ReplyPlan`] streams a well-formed reply, and a [`SessionScript`]
//! plays on any session without panicking, carrying out outputs in order as a runtime
//! would (a refused input is recorded, not fatal), so the durable log it leaves is one
//! a real runtime could have written and a failing property points at the engine.

use super::*;

/// One content block of a streamed reply.
#[derive(Clone, Debug)]
pub enum BlockPlan {
    /// Text streamed in these chunks.
    Text(Vec<String>),
    /// Thinking streamed in chunks, then its signature (may be empty: then the block
    /// is dropped from the kept message).
    Thinking {
        chunks: Vec<String>,
        signature: String,
    },
    /// A redacted thinking block with this data (it has no deltas).
    RedactedThinking(String),
    /// A tool call whose JSON input streams split at the `splits` positions.
    ToolUse {
        name: String,
        input: serde_json::Value,
        splits: Vec<Index>,
    },
}

/// A well-formed streamed reply: its blocks, stop reason and usage.
#[derive(Clone, Debug)]
pub struct ReplyPlan {
    pub blocks: Vec<BlockPlan>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

impl ReplyPlan {
    /// The events of the reply: `message_start`, each block (start, deltas, stop),
    /// `message_delta`, `message_stop`. Tool ids are `toolu_{tag}_{k}`, so replies
    /// with distinct tags never share an id.
    pub fn events(&self, tag: u32) -> Vec<StreamEvent> {
        let mut out = vec![StreamEvent::MessageStart];
        let mut calls = 0;
        for (index, block) in self.blocks.iter().enumerate() {
            match block {
                BlockPlan::Text(chunks) => {
                    out.push(StreamEvent::BlockStart {
                        index,
                        block: BlockStart::Text,
                    });
                    for text in chunks {
                        out.push(StreamEvent::TextDelta {
                            index,
                            text: text.clone(),
                        });
                    }
                }
                BlockPlan::Thinking { chunks, signature } => {
                    out.push(StreamEvent::BlockStart {
                        index,
                        block: BlockStart::Thinking,
                    });
                    for thinking in chunks {
                        out.push(StreamEvent::ThinkingDelta {
                            index,
                            thinking: thinking.clone(),
                        });
                    }
                    if !signature.is_empty() {
                        out.push(StreamEvent::SignatureDelta {
                            index,
                            signature: signature.clone(),
                        });
                    }
                }
                BlockPlan::RedactedThinking(data) => out.push(StreamEvent::BlockStart {
                    index,
                    block: BlockStart::RedactedThinking { data: data.clone() },
                }),
                BlockPlan::ToolUse {
                    name,
                    input,
                    splits,
                } => {
                    out.push(StreamEvent::BlockStart {
                        index,
                        block: BlockStart::ToolUse {
                            id: format!("toolu_{tag}_{calls}"),
                            name: name.clone(),
                        },
                    });
                    calls += 1;
                    let json = input.to_string();
                    let chars: Vec<char> = json.chars().collect();
                    let mut cuts: Vec<usize> =
                        splits.iter().map(|s| s.index(chars.len() + 1)).collect();
                    cuts.push(0);
                    cuts.push(chars.len());
                    cuts.sort_unstable();
                    cuts.dedup();
                    for w in cuts.windows(2) {
                        out.push(StreamEvent::InputJsonDelta {
                            index,
                            partial_json: chars[w[0]..w[1]].iter().collect(),
                        });
                    }
                }
            }
            out.push(StreamEvent::BlockStop { index });
        }
        out.push(StreamEvent::MessageDelta {
            stop_reason: self.stop_reason,
            usage: self.usage,
        });
        out.push(StreamEvent::MessageStop);
        out
    }

    /// True when the reply holds a tool call.
    pub fn has_tool_use(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| matches!(b, BlockPlan::ToolUse { .. }))
    }
}

fn block_plan() -> impl Strategy<Value = BlockPlan> {
    prop_oneof![
        4 => vec(text(), 1..4).prop_map(BlockPlan::Text),
        1 => (vec(text(), 1..3), prop_oneof![3 => "[A-Za-z0-9+/]{4,12}", 1 => Just(String::new())])
            .prop_map(|(chunks, signature)| BlockPlan::Thinking { chunks, signature }),
        1 => "[A-Za-z0-9+/]{4,16}".prop_map(BlockPlan::RedactedThinking),
        4 => (tool_name(), tool_input(), vec(any::<Index>(), 0..3))
            .prop_map(|(name, input, splits)| BlockPlan::ToolUse { name, input, splits }),
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (0..5_000u64, 0..2_000u64).prop_map(|(input_tokens, output_tokens)| Usage {
        input_tokens,
        output_tokens,
    })
}

/// A streamed reply of 1 to 4 blocks (no block at all one time in ten). A reply with tool calls stops with `tool_use`
/// nine times in ten; one without stops with `end_turn`, `max_tokens`,
/// `stop_sequence`, `refusal`, `pause_turn`, or (rarely, and invalid) `tool_use`.
pub fn reply_plan() -> impl Strategy<Value = ReplyPlan> {
    let other_stop = prop_oneof![
        8 => Just(StopReason::EndTurn),
        3 => Just(StopReason::MaxTokens),
        1 => Just(StopReason::StopSequence),
        1 => Just(StopReason::Refusal),
        1 => Just(StopReason::PauseTurn),
        1 => Just(StopReason::ToolUse),
    ];
    (
        prop_oneof![1 => Just(Vec::new()), 9 => vec(block_plan(), 1..5)],
        proptest::bool::weighted(0.9),
        other_stop,
        usage(),
    )
        .prop_map(|(blocks, tool_stop, other, usage)| {
            let has_tools = blocks
                .iter()
                .any(|b| matches!(b, BlockPlan::ToolUse { .. }));
            ReplyPlan {
                stop_reason: if has_tools && tool_stop {
                    StopReason::ToolUse
                } else {
                    other
                },
                blocks,
                usage,
            }
        })
}

/// The events of a well-formed [`reply_plan`], tool ids tagged with `tag`.
pub fn stream_events(tag: u32) -> impl Strategy<Value = Vec<StreamEvent>> {
    reply_plan().prop_map(move |plan| plan.events(tag))
}

/// Any single stream event, in or out of protocol: block indices 0 to 3, any text,
/// any stop reason, errors.
pub fn stream_event() -> impl Strategy<Value = StreamEvent> {
    let index = 0..4usize;
    let stop = select(vec![
        StopReason::EndTurn,
        StopReason::ToolUse,
        StopReason::MaxTokens,
        StopReason::StopSequence,
        StopReason::Refusal,
        StopReason::PauseTurn,
    ]);
    let block = prop_oneof![
        Just(BlockStart::Text),
        Just(BlockStart::Thinking),
        "[a-z]{1,6}".prop_map(|data| BlockStart::RedactedThinking { data }),
        ("toolu_[a-z0-9]{1,4}", tool_name())
            .prop_map(|(id, name)| BlockStart::ToolUse { id, name }),
    ];
    prop_oneof![
        Just(StreamEvent::MessageStart),
        (index.clone(), block).prop_map(|(index, block)| StreamEvent::BlockStart { index, block }),
        (index.clone(), text()).prop_map(|(index, text)| StreamEvent::TextDelta { index, text }),
        (index.clone(), text())
            .prop_map(|(index, thinking)| StreamEvent::ThinkingDelta { index, thinking }),
        (index.clone(), "[A-Za-z0-9]{1,6}")
            .prop_map(|(index, signature)| StreamEvent::SignatureDelta { index, signature }),
        (
            index.clone(),
            select(vec!["{", "}", "{}", "\"a\":1", "[", "not json"])
        )
            .prop_map(|(index, j)| StreamEvent::InputJsonDelta {
                index,
                partial_json: j.to_string()
            }),
        index.prop_map(|index| StreamEvent::BlockStop { index }),
        (stop, usage())
            .prop_map(|(stop_reason, usage)| StreamEvent::MessageDelta { stop_reason, usage }),
        Just(StreamEvent::MessageStop),
        ("[a-z_]{1,12}", text()).prop_map(|(kind, message)| StreamEvent::Error { kind, message }),
    ]
}

// ---------------------------------------------------------------------------------
// Inputs and scripted sessions
// ---------------------------------------------------------------------------------

/// Any [`Input`] a runtime could hand a session, with operation ids 0 to 7 (so some
/// match and most are stale): prompts, stream events, tool results, cancels,
/// compactions, rewinds, reconfigurations.
pub fn input() -> impl Strategy<Value = Input> {
    let op = (0..8u64).prop_map(OperationId);
    prop_oneof![
        3 => (text(), "2026-0[1-9]-[0-2][0-9]T[0-2][0-9]:00:00Z")
            .prop_map(|(text, now)| Input::Prompt { text, now }),
        4 => (op.clone(), stream_event()).prop_map(|(op, event)| Input::Stream { op, event }),
        2 => (op, "toolu_[0-9]_[0-3]", tool_result_content(), any::<bool>()).prop_map(
            |(op, tool_use_id, content, is_error)| Input::ToolResult {
                op,
                outcome: ToolOutcome {
                    tool_use_id,
                    content,
                    is_error,
                },
            }
        ),
        1 => cancel_cause().prop_map(|cause| Input::Cancel { cause }),
        1 => text().prop_map(|summary| Input::Compact { summary }),
        1 => (0..12usize).prop_map(|index| Input::Rewind { index }),
        1 => text().prop_map(|system| Input::Configure {
            system,
            tools: Vec::new().into(),
            thinking: None,
        }),
    ]
}

/// One step of a [`SessionScript`]. Steps are interpreted against the session's state
/// when they are played, so any sequence plays.
#[derive(Clone, Debug)]
pub enum SessionStep {
    /// The user's words (refused while a turn runs).
    Prompt { text: String },
    /// The reply to the generation outstanding now, tool ids tagged with the step's
    /// position. `cut`: deliver only that many of its events (a stream cut short);
    /// `error`: then a provider error event. With no generation outstanding, the
    /// events go to the last operation seen (stale).
    Reply {
        plan: ReplyPlan,
        cut: Option<Index>,
        error: bool,
    },
    /// Results for the tool batch running now: `count` of them (all when `None`), in
    /// the order of `order_keys`, some with `is_error`. With no batch running, one
    /// result goes to the last operation seen (stale).
    ToolResults {
        count: Option<Index>,
        order_keys: Vec<u8>,
        errors: Vec<bool>,
    },
    /// A live cancel (a no-op between turns).
    Cancel { cause: CancelCause },
    /// A late delivery to an operation seen earlier (possibly the current one): a
    /// `message_stop`, or a result for the first call of its batch.
    Late { op: Index, tool: bool },
    /// Compaction with this summary (refused while a turn runs).
    Compact { summary: String },
    /// A rewind to a message index (0 to the history's length; refused while a turn
    /// runs or when the prefix would split a tool batch).
    Rewind { to: Index },
    /// A new system prompt, with the tools unchanged, and thinking switched on
    /// (`Some(true)`), off (`Some(false)`) or left as it was (refused while a turn runs).
    Configure {
        system: String,
        thinking: Option<bool>,
    },
}

/// Any [`SessionStep`]; prompts, replies and tool results dominate, and now and then
/// a compaction, a rewind or a new system prompt comes between turns.
pub fn session_step() -> impl Strategy<Value = SessionStep> {
    prop_oneof![
        3 => text().prop_map(|text| SessionStep::Prompt { text }),
        5 => (
            reply_plan(),
            proptest::option::weighted(0.2, any::<Index>()),
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(plan, cut, error)| SessionStep::Reply { plan, cut, error }),
        4 => (
            proptest::option::weighted(0.2, any::<Index>()),
            vec(any::<u8>(), 4),
            vec(proptest::bool::weighted(0.2), 4),
        )
            .prop_map(|(count, order_keys, errors)| SessionStep::ToolResults {
                count,
                order_keys,
                errors,
            }),
        1 => cancel_cause().prop_map(|cause| SessionStep::Cancel { cause }),
        1 => (any::<Index>(), any::<bool>()).prop_map(|(op, tool)| SessionStep::Late { op, tool }),
        1 => prop_oneof![
            text().prop_map(|summary| SessionStep::Compact { summary }),
            any::<Index>().prop_map(|to| SessionStep::Rewind { to }),
            (text(), proptest::option::weighted(0.5, any::<bool>()))
                .prop_map(|(system, thinking)| SessionStep::Configure { system, thinking }),
        ],
    ]
}

/// A scripted session: steps played in order by [`SessionScript::play`].
#[derive(Clone, Debug)]
pub struct SessionScript {
    /// The steps, played in order.
    pub steps: Vec<SessionStep>,
}

/// What playing a script produced.
#[derive(Clone, Debug, Default)]
pub struct Played {
    /// The durable log: every `Output::Persist` in order, concatenated.
    pub log: Vec<u8>,
    /// Where each persisted record starts in `log`.
    pub record_starts: Vec<usize>,
    /// Inputs the session refused (with the error), by step.
    pub refused: Vec<(usize, String)>,
}

impl SessionScript {
    /// Plays the steps on `session`, carrying out outputs as a runtime would (persist
    /// in order; sends and dispatches answered by later steps). Never panics for any
    /// script; a refused input is recorded and play goes on.
    pub fn play(&self, session: &mut Session) -> Played {
        let mut played = Played::default();
        let mut seen: Vec<(OperationId, Vec<String>)> = Vec::new();
        for (step_index, step) in self.steps.iter().enumerate() {
            let inputs = self.inputs_for(step, step_index, session, &seen);
            for input in inputs {
                match session.handle(input) {
                    Ok(outputs) => {
                        for output in outputs {
                            match output {
                                Output::Persist { bytes } => {
                                    played.record_starts.push(played.log.len());
                                    played.log.extend_from_slice(&bytes);
                                }
                                Output::Send { op, .. } => seen.push((op, Vec::new())),
                                Output::Dispatch { op, calls } => {
                                    seen.push((op, calls.into_iter().map(|c| c.id).collect()))
                                }
                                _ => {}
                            }
                        }
                    }
                    Err(e) => played.refused.push((step_index, e.to_string())),
                }
            }
        }
        played
    }

    fn inputs_for(
        &self,
        step: &SessionStep,
        step_index: usize,
        session: &Session,
        seen: &[(OperationId, Vec<String>)],
    ) -> Vec<Input> {
        let last_op = seen.last().map_or(OperationId(0), |(op, _)| *op);
        match step {
            SessionStep::Prompt { text } => vec![Input::Prompt {
                text: text.clone(),
                now: format!("2026-01-01T00:00:{:02}Z", step_index % 60),
            }],
            SessionStep::Reply { plan, cut, error } => {
                let op = match session.pending_operation() {
                    PendingOperation::Generation { op } => op,
                    _ => last_op,
                };
                let mut events = plan.events(step_index as u32);
                if let Some(cut) = cut {
                    events.truncate(cut.index(events.len() + 1));
                }
                if *error {
                    events.push(StreamEvent::Error {
                        kind: "overloaded_error".into(),
                        message: "Overloaded".into(),
                    });
                }
                events
                    .into_iter()
                    .map(|event| Input::Stream { op, event })
                    .collect()
            }
            SessionStep::ToolResults {
                count,
                order_keys,
                errors,
            } => match session.pending_operation() {
                PendingOperation::Tools { op, calls } => {
                    let mut order: Vec<usize> = (0..calls.len()).collect();
                    order.sort_by_key(|&i| (order_keys.get(i).copied().unwrap_or(0), i));
                    if let Some(count) = count {
                        order.truncate(count.index(calls.len() + 1));
                    }
                    order
                        .into_iter()
                        .map(|i| Input::ToolResult {
                            op,
                            outcome: ToolOutcome {
                                tool_use_id: calls[i].id.clone(),
                                content: format!("result of {}", calls[i].id).into(),
                                is_error: errors.get(i).copied().unwrap_or(false),
                            },
                        })
                        .collect()
                }
                _ => vec![Input::ToolResult {
                    op: last_op,
                    outcome: ToolOutcome {
                        tool_use_id: "toolu_stale".into(),
                        content: "late".into(),
                        is_error: false,
                    },
                }],
            },
            SessionStep::Cancel { cause } => vec![Input::Cancel { cause: *cause }],
            SessionStep::Compact { summary } => vec![Input::Compact {
                summary: summary.clone(),
            }],
            SessionStep::Rewind { to } => vec![Input::Rewind {
                index: to.index(session.history().len() + 1),
            }],
            SessionStep::Configure { system, thinking } => vec![Input::Configure {
                system: system.clone(),
                tools: session.config().tools.clone(),
                thinking: thinking.map(|on| match on {
                    true => crate::request::Thinking::Enabled {
                        budget_tokens: 1024,
                    },
                    false => crate::request::Thinking::Disabled,
                }),
            }],
            SessionStep::Late { op, tool } => {
                let Some((op, ids)) = pick(seen, op).cloned() else {
                    return Vec::new();
                };
                if *tool {
                    vec![Input::ToolResult {
                        op,
                        outcome: ToolOutcome {
                            tool_use_id: ids.first().cloned().unwrap_or_default(),
                            content: "late result".into(),
                            is_error: false,
                        },
                    }]
                } else {
                    vec![Input::Stream {
                        op,
                        event: StreamEvent::MessageStop,
                    }]
                }
            }
        }
    }
}

/// A [`SessionScript`] of 1 to 15 steps that opens with a prompt, so most scripts get
/// a turn going.
pub fn session_script() -> impl Strategy<Value = SessionScript> {
    (text(), vec(session_step(), 0..15)).prop_map(|(prompt, mut steps)| {
        steps.insert(0, SessionStep::Prompt { text: prompt });
        SessionScript { steps }
    })
}
