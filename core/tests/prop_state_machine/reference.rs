//! The `ReferenceStateMachine` impl: which transitions to draw, and how each moves the
//! model.
//!
//! Guarantee: every transition sets the model's expectation (the effects or the exact
//! refusal) before the system under test runs, so a divergence is caught at the call
//! that made it.

use super::*;

pub(crate) struct TurnModel;

impl ReferenceStateMachine for TurnModel {
    type State = Model;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<Model> {
        prop_oneof![1 => Just(Vec::new()), 4 => valid_history()]
            .prop_map(|initial| Model {
                messages: initial.iter().map(|m| shape_of(m)).collect(),
                initial,
                phase: Phase::Idle,
                next_op: 1,
                truncated: 0,
                usage: Usage::default(),
                next_tool: 0,
                expect: Expect::Nothing,
            })
            .boxed()
    }

    fn transitions(m: &Model) -> BoxedStrategy<Transition> {
        let usage = (0..100u64, 0..100u64).prop_map(|(i, o)| Usage {
            input_tokens: i,
            output_tokens: o,
        });
        let generated = (
            op_choice(m),
            message_choice(m),
            stop_choice(m.truncated),
            usage,
        )
            .prop_map(|(op, message, stop_reason, usage)| Transition::Generated {
                op,
                output: GenerationOutput {
                    message,
                    stop_reason,
                    usage,
                },
            });
        let completed = (
            op_choice(m),
            results_choice(m),
            proptest::bool::weighted(0.2),
        )
            .prop_map(|(op, results, cancelled)| Transition::ToolsCompleted {
                op,
                results,
                cancelled,
            });
        let cancel_generation = (
            op_choice(m),
            proptest::option::of(message_choice(m)),
            cancel_cause(),
        )
            .prop_map(|(op, partial, cause)| Transition::CancelGeneration { op, partial, cause });
        let cancel_tools =
            (op_choice(m), finished_choice(m), cancel_cause()).prop_map(|(op, finished, cause)| {
                Transition::CancelTools {
                    op,
                    finished,
                    cause,
                }
            });
        let len = m.messages.len();
        let (idle_weight, generating_weight, tools_weight) = match m.phase {
            Phase::Idle => (6, 1, 1),
            Phase::Generating(_) => (1, 8, 1),
            Phase::Tools(..) => (1, 1, 8),
        };
        prop_oneof![
            idle_weight => input_choice().prop_map(Transition::AppendInput),
            idle_weight * 2 => Just(Transition::Start),
            generating_weight * 3 => generated,
            generating_weight => op_choice(m).prop_map(|op| Transition::GenerationFailed { op }),
            generating_weight => cancel_generation,
            tools_weight * 3 => completed,
            tools_weight => cancel_tools,
            idle_weight => (0..len + 2).prop_map(Transition::Rewind),
            1 => prop_oneof![
                Just(Context::Summary),
                Just(Context::Empty),
                Just(Context::Dangling)
            ]
            .prop_map(Transition::ReplaceContext),
            1 => Just(Transition::Restart),
        ]
        .boxed()
    }

    fn apply(mut m: Model, t: &Transition) -> Model {
        m.expect = match t {
            Transition::AppendInput(message) => {
                if let Some(busy) = m.busy() {
                    Expect::Refused(busy)
                } else if message.role != Role::User
                    || message.is_empty()
                    || message
                        .blocks()
                        .iter()
                        .any(|b| matches!(b, Block::ToolResult { .. } | Block::ToolUse { .. }))
                {
                    Expect::Refused(Refusal::InvalidContext)
                } else {
                    m.messages.push(shape_of(message));
                    Expect::Done
                }
            }
            Transition::Start => {
                if let Some(busy) = m.busy() {
                    Expect::Refused(busy)
                } else if m.messages.is_empty() {
                    Expect::Refused(Refusal::EmptyHistory)
                } else {
                    m.usage = Usage::default();
                    m.truncated = 0;
                    let op = m.fresh_op();
                    m.phase = Phase::Generating(op);
                    Expect::Effects(vec![Eff::Generate(op)])
                }
            }
            Transition::Generated { op, output } => {
                m.next_tool += 3;
                if m.phase != Phase::Generating(*op) {
                    Expect::Refused(m.unexpected(*op))
                } else if let Some(refusal) = m.check_response(&output.message, output.stop_reason)
                {
                    Expect::Refused(refusal)
                } else {
                    m.usage.input_tokens += output.usage.input_tokens;
                    m.usage.output_tokens += output.usage.output_tokens;
                    let shape = shape_of(&output.message);
                    let calls = shape.calls.clone();
                    m.messages.push(shape);
                    if !calls.is_empty() {
                        m.truncated = 0;
                        let op = m.fresh_op();
                        m.phase = Phase::Tools(op, calls.clone());
                        Expect::Effects(vec![Eff::Execute(op, calls)])
                    } else if output.stop_reason == StopReason::MaxTokens {
                        if m.truncated < MAX_RESUMES {
                            m.truncated += 1;
                            m.messages.push(plain_user());
                            let op = m.fresh_op();
                            m.phase = Phase::Generating(op);
                            Expect::Effects(vec![Eff::Generate(op)])
                        } else {
                            m.phase = Phase::Idle;
                            Expect::Effects(vec![Eff::Finished(FinishReason::MaxTokens)])
                        }
                    } else {
                        m.truncated = 0;
                        m.phase = Phase::Idle;
                        Expect::Effects(vec![Eff::Finished(FinishReason::EndTurn)])
                    }
                }
            }
            Transition::GenerationFailed { op } => {
                if m.phase != Phase::Generating(*op) {
                    Expect::Refused(m.unexpected(*op))
                } else {
                    m.phase = Phase::Idle;
                    Expect::Effects(vec![Eff::Finished(FinishReason::Failed)])
                }
            }
            Transition::ToolsCompleted {
                op,
                results,
                cancelled,
            } => match m.phase.clone() {
                Phase::Tools(current, ids) if current == *op => {
                    let answered: Vec<&str> =
                        results.iter().map(|r| r.tool_use_id.as_str()).collect();
                    if answered != ids.iter().map(String::as_str).collect::<Vec<_>>() {
                        Expect::Refused(Refusal::InvalidContext)
                    } else {
                        m.messages.push(plain_user());
                        if *cancelled {
                            m.phase = Phase::Idle;
                            Expect::Effects(vec![Eff::Finished(FinishReason::Cancelled {
                                reason: InterruptReason::Unknown,
                            })])
                        } else {
                            let op = m.fresh_op();
                            m.phase = Phase::Generating(op);
                            Expect::Effects(vec![Eff::Generate(op)])
                        }
                    }
                }
                _ => Expect::Refused(m.unexpected(*op)),
            },
            Transition::CancelGeneration { op, partial, cause } => {
                m.next_tool += 3;
                let partial = partial.as_ref().filter(|p| !p.is_empty());
                if m.phase != Phase::Generating(*op) {
                    Expect::Refused(m.unexpected(*op))
                } else if let Some(refusal) =
                    partial.and_then(|p| m.check_response(p, StopReason::EndTurn))
                {
                    Expect::Refused(refusal)
                } else {
                    if let Some(p) = partial {
                        let shape = shape_of(p);
                        let answered = !shape.calls.is_empty();
                        m.messages.push(shape);
                        if answered {
                            m.messages.push(plain_user());
                        }
                    }
                    m.append_marker();
                    m.phase = Phase::Idle;
                    Expect::Effects(vec![Eff::Finished(FinishReason::Cancelled {
                        reason: cause.reason(),
                    })])
                }
            }
            Transition::CancelTools {
                op,
                finished,
                cause,
            } => match m.phase.clone() {
                Phase::Tools(current, ids) if current == *op => {
                    m.messages.push(plain_user());
                    if ids
                        .iter()
                        .any(|id| !finished.iter().any(|f| &f.tool_use_id == id))
                    {
                        m.messages.push(plain_user()); // the tool-in-flight note
                    }
                    m.append_marker();
                    m.phase = Phase::Idle;
                    Expect::Effects(vec![Eff::Finished(FinishReason::Cancelled {
                        reason: cause.reason(),
                    })])
                }
                _ => Expect::Refused(m.unexpected(*op)),
            },
            Transition::Rewind(index) => {
                let len = m.messages.len();
                if let Some(busy) = m.busy() {
                    Expect::Refused(busy)
                } else if *index > len {
                    Expect::Refused(Refusal::RewindOutOfRange { index: *index, len })
                } else if let Some(asking) = index
                    .checked_sub(1)
                    .filter(|&i| !m.messages[i].calls.is_empty())
                {
                    Expect::Refused(Refusal::InvalidHistory(HistoryError::UnansweredAtEnd {
                        message: asking,
                        tool_use_ids: m.messages[asking].calls.clone(),
                    }))
                } else {
                    m.messages.truncate(*index);
                    Expect::Done
                }
            }
            Transition::ReplaceContext(context) => {
                if let Some(busy) = m.busy() {
                    Expect::Refused(busy)
                } else if let Context::Dangling = context {
                    Expect::Refused(Refusal::InvalidHistory(HistoryError::UnansweredAtEnd {
                        message: 1,
                        tool_use_ids: vec!["dangling".into()],
                    }))
                } else {
                    m.messages = context.history().iter().map(|x| shape_of(x)).collect();
                    Expect::Done
                }
            }
            Transition::Restart => {
                match m.phase.clone() {
                    Phase::Idle => {}
                    Phase::Generating(_) => m.append_marker(),
                    Phase::Tools(..) => {
                        m.messages.push(plain_user()); // interrupted results
                        m.messages.push(plain_user()); // the note
                        m.append_marker();
                    }
                }
                m.phase = Phase::Idle;
                m.truncated = 0;
                m.usage = Usage::default();
                Expect::Done
            }
        };
        m
    }
}
