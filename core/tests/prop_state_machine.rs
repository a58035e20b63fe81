//! Property suite for the turn state machine (spec §6), as a `proptest-state-machine`
//! reference model.
//!
//! Guarantee kept: `TurnState` behaves like a small model of the spec (phase,
//! outstanding operation, history length and shape, next operation id, usage) under
//! any sequence of calls drawn from the current state, including stale, duplicate and
//! never-issued completions, calls while busy, malformed responses, rewinds, context
//! replacements and restarts. After every transition: the same phase, outstanding
//! operation, history length and next id as the model; every call the model says must
//! fail fails with the model's error and leaves `to_bytes()` identical; and the history
//! is valid (allowing a pending batch, and fully valid when idle). Why: a runtime acts on
//! the effects and trusts the history; one transition that mutates on a refused call,
//! reuses an id or leaves the history unsendable breaks every later request.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};
use std::sync::Arc;
use turnsim_core::strategies::{cancel_cause, text, tool_name, valid_history};
use turnsim_core::{
    Block, CancelCause, Effect, FinishReason, GenerationOutput, HistoryError, InterruptReason,
    Message, OperationId, PendingOperation, Role, SharedMessage, StateError, StopReason,
    ToolOutcome, TurnState, Usage, is_marker_message, recover_checkpoint, validate_history,
    validate_history_allowing_pending_tools,
};

/// The default bound on `max_tokens` resumptions in a row (spec §6).
const MAX_RESUMES: u32 = 3;

/// What the model knows of one message: the tool ids it asks for, and whether it is a
/// marker.
#[derive(Clone, Debug, PartialEq)]
struct Shape {
    calls: Vec<String>,
    marker: bool,
}

fn shape_of(m: &Message) -> Shape {
    Shape {
        calls: if m.role == Role::Assistant {
            m.tool_calls().into_iter().map(|c| c.id).collect()
        } else {
            Vec::new()
        },
        marker: m.role == Role::User
            && m.string_content()
                .is_some_and(|s| InterruptReason::ALL.iter().any(|r| r.marker() == s)),
    }
}

fn plain_user() -> Shape {
    Shape {
        calls: Vec::new(),
        marker: false,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Phase {
    Idle,
    Generating(u64),
    Tools(u64, Vec<String>),
}

impl Phase {
    fn outstanding(&self) -> Option<u64> {
        match self {
            Phase::Idle => None,
            Phase::Generating(op) | Phase::Tools(op, _) => Some(*op),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Eff {
    Generate(u64),
    Execute(u64, Vec<String>),
    Finished(FinishReason),
}

#[derive(Clone, Debug, PartialEq)]
enum Refusal {
    Unexpected { op: u64, outstanding: Option<u64> },
    Busy(u64),
    EmptyHistory,
    InvalidResponse,
    InvalidContext,
    InvalidHistory(HistoryError),
    RewindOutOfRange { index: usize, len: usize },
}

/// What the last transition must return.
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    Nothing,
    Done,
    Effects(Vec<Eff>),
    Refused(Refusal),
}

#[derive(Clone, Debug)]
struct Model {
    /// The history the run starts from (the system under test is built from it).
    initial: Vec<SharedMessage>,
    messages: Vec<Shape>,
    phase: Phase,
    next_op: u64,
    truncated: u32,
    usage: Usage,
    /// The next fresh tool id number this test hands out (`t{n}`).
    next_tool: u32,
    expect: Expect,
}

impl Model {
    fn busy(&self) -> Option<Refusal> {
        self.phase.outstanding().map(Refusal::Busy)
    }

    fn unexpected(&self, op: u64) -> Refusal {
        Refusal::Unexpected {
            op,
            outstanding: self.phase.outstanding(),
        }
    }

    fn fresh_op(&mut self) -> u64 {
        self.next_op += 1;
        self.next_op - 1
    }

    fn ends_with_marker(&self) -> bool {
        self.messages.last().is_some_and(|m| m.marker)
    }

    fn append_marker(&mut self) {
        if !self.ends_with_marker() {
            self.messages.push(Shape {
                calls: Vec::new(),
                marker: true,
            });
        }
    }

    fn ids_in_history(&self) -> Vec<String> {
        self.messages
            .iter()
            .flat_map(|m| m.calls.iter().cloned())
            .collect()
    }

    /// The spec's checks on a generated message, in the engine's order; `Some` is the
    /// refusal.
    fn check_response(&self, m: &Message, stop: StopReason) -> Option<Refusal> {
        let calls = shape_of(m).calls;
        let mut seen = self.ids_in_history();
        let duplicate = calls.iter().any(|id| {
            let dup = seen.contains(id);
            seen.push(id.clone());
            dup
        });
        let bad = m.role != Role::Assistant
            || m.is_empty()
            || m.blocks()
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
            || (stop == StopReason::ToolUse && calls.is_empty())
            || duplicate;
        bad.then_some(Refusal::InvalidResponse)
    }
}

#[derive(Clone, Debug)]
enum Context {
    Summary,
    Empty,
    Dangling,
}

impl Context {
    fn history(&self) -> Vec<SharedMessage> {
        match self {
            Context::Summary => vec![
                Arc::new(Message::user_text("[Earlier conversation compacted]")),
                Arc::new(Message::assistant_text("We listed the files.")),
            ],
            Context::Empty => Vec::new(),
            Context::Dangling => vec![
                Arc::new(Message::user_text("list the files")),
                Arc::new(Message::assistant_blocks(vec![Block::ToolUse {
                    id: "dangling".into(),
                    name: "ls".into(),
                    input: serde_json::json!({}),
                }])),
            ],
        }
    }
}

#[derive(Clone, Debug)]
enum Transition {
    AppendInput(Message),
    Start,
    Generated {
        op: u64,
        output: GenerationOutput,
    },
    GenerationFailed {
        op: u64,
    },
    ToolsCompleted {
        op: u64,
        results: Vec<ToolOutcome>,
        cancelled: bool,
    },
    CancelGeneration {
        op: u64,
        partial: Option<Message>,
        cause: CancelCause,
    },
    CancelTools {
        op: u64,
        finished: Vec<ToolOutcome>,
        cause: CancelCause,
    },
    Rewind(usize),
    ReplaceContext(Context),
    Restart,
}

/// An operation id to complete: the outstanding one (most often), a recent one (a
/// duplicate of what just completed), any issued one (stale), one never issued, or 0.
fn op_choice(m: &Model) -> BoxedStrategy<u64> {
    let next = m.next_op;
    let recent = prop_oneof![Just(next.saturating_sub(1)), Just(next.saturating_sub(2))];
    let stale = 1..next.max(2);
    let unissued = next..next + 2;
    match m.phase.outstanding() {
        Some(op) => prop_oneof![
            8 => Just(op),
            1 => recent,
            1 => stale,
            1 => unissued,
            1 => Just(0),
        ]
        .boxed(),
        None => prop_oneof![2 => recent, 1 => stale, 1 => unissued, 1 => Just(0)].boxed(),
    }
}

fn tool_use(id: String, name: String) -> Block {
    Block::ToolUse {
        id,
        name,
        input: serde_json::json!({"path": "."}),
    }
}

/// An assistant message: text, or 1 to 3 tool calls with fresh ids (after optional
/// text), or calls reusing an id of the history or of the same message; now and then
/// an invalid one (empty, user role, carrying a `tool_result`).
fn message_choice(m: &Model) -> BoxedStrategy<Message> {
    let fresh: Vec<String> = (0..3).map(|k| format!("t{}", m.next_tool + k)).collect();
    let existing = m.ids_in_history();
    let calls = (
        proptest::option::of(text()),
        1..=3usize,
        vec(tool_name(), 3),
    )
        .prop_map(move |(words, n, names)| {
            let mut blocks: Vec<Block> = words.into_iter().map(Block::text).collect();
            for (id, name) in fresh.iter().zip(names).take(n) {
                blocks.push(tool_use(id.clone(), name));
            }
            Message::assistant_blocks(blocks)
        });
    let reused = (any::<Index>(), tool_name()).prop_map(move |(at, name)| {
        let id = if existing.is_empty() {
            "t-dup".to_string()
        } else {
            at.get(&existing).clone()
        };
        let mut blocks = vec![tool_use(id.clone(), name.clone())];
        if existing.is_empty() {
            blocks.push(tool_use(id, name));
        }
        Message::assistant_blocks(blocks)
    });
    prop_oneof![
        6 => text().prop_map(Message::assistant_text),
        6 => calls,
        1 => reused,
        1 => prop_oneof![
            Just(Message::assistant_blocks(Vec::new())),
            Just(Message {
                role: Role::Assistant,
                content: turnsim_core::Content::Text(String::new()),
            }),
        ],
        1 => text().prop_map(Message::user_text),
        1 => Just(Message::assistant_blocks(vec![Block::tool_result("t0", "ok", false)])),
    ]
    .boxed()
}

/// A stop reason; `max_tokens` grows likelier with each resumption in a row, so runs
/// reach the bound.
fn stop_choice(truncated: u32) -> impl Strategy<Value = StopReason> {
    prop_oneof![
        4 => Just(StopReason::EndTurn),
        4 => Just(StopReason::ToolUse),
        3 + 4 * truncated => Just(StopReason::MaxTokens),
        1 => Just(StopReason::StopSequence),
        1 => Just(StopReason::Refusal),
        1 => Just(StopReason::PauseTurn),
    ]
}

fn outcome(id: &str, error: bool) -> ToolOutcome {
    ToolOutcome {
        tool_use_id: id.to_string(),
        content: format!("result of {id}"),
        is_error: error,
    }
}

/// Results for the batch running now: all in call order (most often), one missing,
/// one extra, in reverse order, or with a wrong id.
fn results_choice(m: &Model) -> BoxedStrategy<Vec<ToolOutcome>> {
    let ids = match &m.phase {
        Phase::Tools(_, ids) => ids.clone(),
        _ => vec!["t0".to_string()],
    };
    let all = move |errors: &[bool]| -> Vec<ToolOutcome> {
        ids.iter()
            .zip(errors.iter().chain(std::iter::repeat(&false)))
            .map(|(id, e)| outcome(id, *e))
            .collect()
    };
    (vec(any::<bool>(), 3), 0..5u8)
        .prop_map(move |(errors, how)| {
            let mut results = all(&errors);
            match how {
                0 | 1 => {}
                2 => {
                    results.pop();
                }
                3 => results.push(outcome("t-extra", false)),
                _ if results.len() >= 2 => results.reverse(),
                _ => results[0].tool_use_id = "t-wrong".into(),
            }
            results
        })
        .boxed()
}

fn finished_choice(m: &Model) -> BoxedStrategy<Vec<ToolOutcome>> {
    let ids = match &m.phase {
        Phase::Tools(_, ids) => ids.clone(),
        _ => Vec::new(),
    };
    (vec(any::<bool>(), 3), any::<bool>())
        .prop_map(move |(done, stray)| {
            let mut out: Vec<ToolOutcome> = ids
                .iter()
                .zip(&done)
                .filter(|(_, d)| **d)
                .map(|(id, _)| outcome(id, false))
                .collect();
            if stray {
                out.push(outcome("t-stray", false));
            }
            out
        })
        .boxed()
}

fn input_choice() -> impl Strategy<Value = Message> {
    prop_oneof![
        8 => text().prop_map(Message::user_text),
        2 => select_marker().prop_map(Message::user_text),
        1 => Just(Message::user_text("")),
        1 => text().prop_map(Message::assistant_text),
        1 => Just(Message::user_blocks(vec![Block::tool_result("t0", "ok", false)])),
    ]
}

fn select_marker() -> impl Strategy<Value = &'static str> {
    turnsim_core::strategies::marker()
}

struct TurnModel;

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

fn refusal_of(e: &StateError) -> Refusal {
    match e {
        StateError::UnexpectedCompletion { op, outstanding } => Refusal::Unexpected {
            op: op.0,
            outstanding: outstanding.map(|o| o.0),
        },
        StateError::Busy { outstanding } => Refusal::Busy(outstanding.0),
        StateError::EmptyHistory => Refusal::EmptyHistory,
        StateError::InvalidResponse(_) => Refusal::InvalidResponse,
        StateError::InvalidContext(_) => Refusal::InvalidContext,
        StateError::InvalidHistory(h) => Refusal::InvalidHistory(h.clone()),
        StateError::RewindOutOfRange { index, len } => Refusal::RewindOutOfRange {
            index: *index,
            len: *len,
        },
    }
}

fn effects_of(effects: &[Effect]) -> Vec<Eff> {
    effects
        .iter()
        .map(|e| match e {
            Effect::Generate { op } => Eff::Generate(op.0),
            Effect::ExecuteTools { op, calls } => {
                Eff::Execute(op.0, calls.iter().map(|c| c.id.clone()).collect())
            }
            Effect::Finished { reason } => Eff::Finished(*reason),
        })
        .collect()
}

fn observed(result: Result<Vec<Effect>, StateError>) -> Expect {
    match result {
        Ok(effects) => Expect::Effects(effects_of(&effects)),
        Err(e) => Expect::Refused(refusal_of(&e)),
    }
}

fn observed_unit(result: Result<(), StateError>) -> Expect {
    match result {
        Ok(()) => Expect::Done,
        Err(e) => Expect::Refused(refusal_of(&e)),
    }
}

struct TurnStateTest;

impl StateMachineTest for TurnStateTest {
    type SystemUnderTest = TurnState;
    type Reference = TurnModel;

    fn init_test(m: &Model) -> TurnState {
        TurnState::new(m.initial.clone())
    }

    fn apply(mut sut: TurnState, m: &Model, t: Transition) -> TurnState {
        let before = sut.to_bytes();
        let got = match t {
            Transition::AppendInput(message) => observed_unit(sut.append_input(message)),
            Transition::Start => observed(sut.start()),
            Transition::Generated { op, output } => {
                observed(sut.generated(OperationId(op), output))
            }
            Transition::GenerationFailed { op } => observed(sut.generation_failed(OperationId(op))),
            Transition::ToolsCompleted {
                op,
                results,
                cancelled,
            } => observed(sut.tools_completed(OperationId(op), results, cancelled)),
            Transition::CancelGeneration { op, partial, cause } => {
                observed(sut.cancel_generation(OperationId(op), partial, cause))
            }
            Transition::CancelTools {
                op,
                finished,
                cause,
            } => observed(sut.cancel_tools(OperationId(op), &finished, cause)),
            Transition::Rewind(index) => observed_unit(sut.rewind(index)),
            Transition::ReplaceContext(context) => {
                observed_unit(sut.replace_context(context.history()))
            }
            Transition::Restart => {
                let pending = sut.pending_operation();
                let history = recover_checkpoint(sut.history().to_vec(), &pending)
                    .unwrap_or_else(|e| panic!("recovery of {pending:?} failed: {e}"));
                let last_op = sut.next_op().0.checked_sub(1).filter(|&o| o > 0);
                sut = TurnState::recovered(history, last_op.map(OperationId));
                Expect::Done
            }
        };
        assert_eq!(got, m.expect, "the engine and the model disagree");
        if let Expect::Refused(_) = got {
            assert!(
                sut.to_bytes() == before,
                "a refused call changed the state:\nbefore {}\nafter  {}",
                String::from_utf8_lossy(&before),
                String::from_utf8_lossy(&sut.to_bytes())
            );
        }
        sut
    }

    fn check_invariants(sut: &TurnState, m: &Model) {
        let phase = match sut.pending_operation() {
            PendingOperation::None => Phase::Idle,
            PendingOperation::Generation { op } => Phase::Generating(op.0),
            PendingOperation::Tools { op, calls } => {
                Phase::Tools(op.0, calls.into_iter().map(|c| c.id).collect())
            }
        };
        assert_eq!(phase, m.phase, "phase and outstanding operation");
        assert_eq!(sut.is_idle(), m.phase == Phase::Idle);
        assert_eq!(sut.next_op(), OperationId(m.next_op), "next operation id");
        assert_eq!(sut.usage(), m.usage, "usage of the run");
        let shapes: Vec<Shape> = sut.history().iter().map(|x| shape_of(x)).collect();
        assert_eq!(shapes.len(), m.messages.len(), "history length");
        assert_eq!(shapes, m.messages, "history shape");
        for message in sut.history() {
            assert_eq!(is_marker_message(message), shape_of(message).marker);
        }
        if let Err(e) = validate_history_allowing_pending_tools(sut.history()) {
            panic!("the history is invalid: {e}");
        }
        if m.phase == Phase::Idle
            && let Err(e) = validate_history(sut.history())
        {
            panic!("the history is invalid while idle: {e}");
        }
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_state_machine.txt"
        )))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_turn_state_machine_follows_its_reference_model(sequential 1..48 => TurnStateTest);
}
