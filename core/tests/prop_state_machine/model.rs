//! The reference model's state: phase, outstanding operation, history shape, next
//! operation id, usage, and what the next call is expected to return.
//!
//! Guarantee: the model is written from docs/spec.md §6 alone, never from `TurnState`'s
//! code, so agreement between the two is evidence rather than a tautology.

use super::*;

/// The default bound on `max_tokens` resumptions in a row (docs/spec.md §6).
pub(crate) const MAX_RESUMES: u32 = 3;

/// What the model knows of one message: the tool ids it asks for, and whether it is a
/// marker.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Shape {
    pub(crate) calls: Vec<String>,
    pub(crate) marker: bool,
}

pub(crate) fn shape_of(m: &Message) -> Shape {
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

pub(crate) fn plain_user() -> Shape {
    Shape {
        calls: Vec::new(),
        marker: false,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Phase {
    Idle,
    Generating(u64),
    Tools(u64, Vec<String>),
}

impl Phase {
    pub(crate) fn outstanding(&self) -> Option<u64> {
        match self {
            Phase::Idle => None,
            Phase::Generating(op) | Phase::Tools(op, _) => Some(*op),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Eff {
    Generate(u64),
    Execute(u64, Vec<String>),
    Finished(FinishReason),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Refusal {
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
pub(crate) enum Expect {
    Nothing,
    Done,
    Effects(Vec<Eff>),
    Refused(Refusal),
}

#[derive(Clone, Debug)]
pub(crate) struct Model {
    /// The history the run starts from (the system under test is built from it).
    pub(crate) initial: Vec<SharedMessage>,
    pub(crate) messages: Vec<Shape>,
    pub(crate) phase: Phase,
    pub(crate) next_op: u64,
    pub(crate) truncated: u32,
    pub(crate) usage: Usage,
    /// The next fresh tool id number this test hands out (`t{n}`).
    pub(crate) next_tool: u32,
    pub(crate) expect: Expect,
}

impl Model {
    pub(crate) fn busy(&self) -> Option<Refusal> {
        self.phase.outstanding().map(Refusal::Busy)
    }

    pub(crate) fn unexpected(&self, op: u64) -> Refusal {
        Refusal::Unexpected {
            op,
            outstanding: self.phase.outstanding(),
        }
    }

    pub(crate) fn fresh_op(&mut self) -> u64 {
        self.next_op += 1;
        self.next_op - 1
    }

    pub(crate) fn ends_with_marker(&self) -> bool {
        self.messages.last().is_some_and(|m| m.marker)
    }

    pub(crate) fn append_marker(&mut self) {
        if !self.ends_with_marker() {
            self.messages.push(Shape {
                calls: Vec::new(),
                marker: true,
            });
        }
    }

    pub(crate) fn ids_in_history(&self) -> Vec<String> {
        self.messages
            .iter()
            .flat_map(|m| m.calls.iter().cloned())
            .collect()
    }

    /// The spec's checks on a generated message, in the engine's order; `Some` is the
    /// refusal.
    pub(crate) fn check_response(&self, m: &Message, stop: StopReason) -> Option<Refusal> {
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
pub(crate) enum Context {
    Summary,
    Empty,
    Dangling,
}

impl Context {
    pub(crate) fn history(&self) -> Vec<SharedMessage> {
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
pub(crate) enum Transition {
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
