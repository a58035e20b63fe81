//! What crosses the state machine's boundary: operation ids, completions, effects,
//! the pending operation and errors, with the fixed texts the machine writes.
//!
//! Guarantee: every type here serializes to the same bytes for the same value (serde
//! derives over fields in a fixed order, no maps with unordered keys), so a state, a
//! log record or a trace built from them replays byte for byte.

use super::*;

/// The fixed user message that resumes a reply cut off by `max_tokens`.
pub const TRUNCATION_RESUME_TEXT: &str =
    "[Reply cut off at the output limit. Resume exactly where it stopped.]";

/// The `tool_result` content for a tool whose outcome was lost in a crash.
pub const INTERRUPTED_RESULT_TEXT: &str = "Interrupted before the outcome was saved; effects are unknown. Inspect external state before retrying this action.";

/// The phrase of the tool-in-flight note written by crash recovery.
pub const RECOVERY_NOTE_PHRASE: &str = "Canceled";

/// Default bound on `max_tokens` resumptions in a row.
pub const DEFAULT_MAX_TRUNCATED_RESUMES: u32 = 3;

/// Identifies one generation or one tool batch. Never reused within a session.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OperationId(pub u64);

impl std::fmt::Display for OperationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "op#{}", self.0)
    }
}

/// Why the model stopped.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Refusal,
    PauseTurn,
}

impl StopReason {
    pub fn parse(s: &str) -> Option<StopReason> {
        Some(match s {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            "refusal" => StopReason::Refusal,
            "pause_turn" => StopReason::PauseTurn,
            _ => return None,
        })
    }
}

/// Token usage of one generation, or summed over a run.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A finished generation.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationOutput {
    pub message: Message,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

/// The result of one tool call. `content` is what the tool returned, a string or an
/// array of blocks (text, image, document, …), and goes into the `tool_result` as
/// given: a tool's image or its separate text blocks are the model's observation,
/// and joining or dropping them would change what the model sees and the bytes the
/// provider cached.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub tool_use_id: String,
    pub content: ToolResultContent,
    pub is_error: bool,
}

impl ToolOutcome {
    /// An outcome whose content is one string.
    pub fn text(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        ToolOutcome {
            tool_use_id: tool_use_id.into(),
            content: ToolResultContent::Text(content.into()),
            is_error,
        }
    }

    pub(super) fn into_block(self) -> Block {
        Block::ToolResult {
            tool_use_id: self.tool_use_id,
            content: self.content,
            is_error: self.is_error.then_some(true),
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "finish", rename_all = "snake_case")]
pub enum FinishReason {
    EndTurn,
    MaxTokens,
    Cancelled { reason: InterruptReason },
    Failed,
}

/// What the caller must do next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Send a request built from the current history.
    Generate { op: OperationId },
    /// Run these calls and report one result per call, in call order.
    ExecuteTools {
        op: OperationId,
        calls: Vec<ToolCall>,
    },
    /// The run is over.
    Finished { reason: FinishReason },
}

/// The durable intent: what is outstanding and must be accounted for after a crash.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "pending", rename_all = "snake_case")]
pub enum PendingOperation {
    #[default]
    None,
    Generation {
        op: OperationId,
    },
    Tools {
        op: OperationId,
        calls: Vec<ToolCall>,
    },
}

impl PendingOperation {
    pub fn op(&self) -> Option<OperationId> {
        match self {
            PendingOperation::None => None,
            PendingOperation::Generation { op } | PendingOperation::Tools { op, .. } => Some(*op),
        }
    }

    /// The same operation, borrowed.
    pub(crate) fn as_view(&self) -> PendingView<'_> {
        match self {
            PendingOperation::None => PendingView::None,
            PendingOperation::Generation { op } => PendingView::Generation(*op),
            PendingOperation::Tools { op, calls } => PendingView::Tools(*op, calls),
        }
    }
}

/// A [`PendingOperation`] borrowed from the state: what the engine asks about the
/// outstanding operation on every input (its id, a batch's calls) and writes into
/// every record, without copying a batch's calls and their inputs each time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PendingView<'a> {
    None,
    Generation(OperationId),
    Tools(OperationId, &'a [ToolCall]),
}

impl PendingView<'_> {
    pub(crate) fn op(self) -> Option<OperationId> {
        match self {
            PendingView::None => None,
            PendingView::Generation(op) | PendingView::Tools(op, _) => Some(op),
        }
    }
}

/// Why a transition was refused. The state is unchanged whenever one is returned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("completion for {op} does not match the outstanding operation ({})", outstanding.map_or("none".to_string(), |o| o.to_string()))]
    UnexpectedCompletion {
        op: OperationId,
        outstanding: Option<OperationId>,
    },
    #[error("busy: {outstanding} is outstanding; input is accepted only when idle")]
    Busy { outstanding: OperationId },
    #[error("cannot start a run on an empty history")]
    EmptyHistory,
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    #[error("invalid context: {0}")]
    InvalidContext(String),
    #[error("invalid history: {0}")]
    InvalidHistory(#[from] HistoryError),
    #[error("cannot rewind to message {index}: the history has {len} messages")]
    RewindOutOfRange { index: usize, len: usize },
}
