//! The turn state machine (spec §6): synchronous transitions that return effects.
//!
//! Guarantees, and why they matter to a runtime:
//! - Every `Generate`/`ExecuteTools` effect carries a fresh [`OperationId`] from a
//!   strictly increasing counter, so a completion can always be matched to the one
//!   operation that is outstanding, and a late one from a cancelled operation is told
//!   apart from it.
//! - A call that returns an error leaves the state exactly as it was (the same
//!   serialized bytes): every check happens before the first mutation. A stale or
//!   duplicate completion therefore cannot touch the history.
//! - History only grows by appending whole messages, and every message appended keeps
//!   the history valid per spec §2 (a tool batch is answered in one message, in call
//!   order), so the next request is always one the provider accepts.

use crate::history::{HistoryError, validate_history, validate_history_allowing_pending_tools};
use crate::interrupt::{CancelCause, InterruptReason, append_marker};
use crate::message::{Block, Message, Role, SharedMessage, ToolCall, ToolResultContent};
use crate::note::tool_in_flight_note_text;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

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

/// The result of one tool call.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub tool_use_id: String,
    pub content: String,
    pub is_error: bool,
}

impl ToolOutcome {
    fn into_block(self) -> Block {
        Block::ToolResult {
            tool_use_id: self.tool_use_id,
            content: ToolResultContent::Text(self.content),
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
enum Phase {
    Idle,
    Generating {
        op: OperationId,
    },
    RunningTools {
        op: OperationId,
        calls: Vec<ToolCall>,
    },
}

/// The turn state machine. Holds the history it appends to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnState {
    history: Vec<SharedMessage>,
    phase: Phase,
    next_op: u64,
    usage: Usage,
    truncated_in_a_row: u32,
    max_truncated_resumes: u32,
}

impl Default for TurnState {
    fn default() -> Self {
        TurnState::new(Vec::new())
    }
}

impl TurnState {
    pub fn new(history: Vec<SharedMessage>) -> TurnState {
        TurnState {
            history,
            phase: Phase::Idle,
            next_op: 1,
            usage: Usage::default(),
            truncated_in_a_row: 0,
            max_truncated_resumes: DEFAULT_MAX_TRUNCATED_RESUMES,
        }
    }

    /// Restores a state whose operation counter continues after `last_op`, so ids are
    /// never reused across a restart.
    pub fn resume(history: Vec<SharedMessage>, last_op: Option<OperationId>) -> TurnState {
        let mut s = TurnState::new(history);
        s.next_op = last_op.map_or(1, |o| o.0.saturating_add(1));
        s
    }

    pub fn with_max_truncated_resumes(mut self, n: u32) -> TurnState {
        self.max_truncated_resumes = n;
        self
    }

    pub fn history(&self) -> &[SharedMessage] {
        &self.history
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    pub fn is_idle(&self) -> bool {
        matches!(self.phase, Phase::Idle)
    }

    /// The id the next operation will get.
    pub fn next_op(&self) -> OperationId {
        OperationId(self.next_op)
    }

    /// The serialized state: equal bytes mean equal states.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// An identity fingerprint for change detection within one process: every field
    /// as bytes, except that each message of the history is its allocation's address.
    /// Messages are immutable behind `Arc` and only ever appended or dropped, so a
    /// change to the history changes an address or the length; it costs a word per
    /// message instead of serializing the whole history.
    pub fn fingerprint_into(&self, out: &mut Vec<u8>) {
        #[derive(Serialize)]
        struct View<'a> {
            phase: &'a Phase,
            next_op: u64,
            usage: Usage,
            truncated_in_a_row: u32,
            max_truncated_resumes: u32,
        }
        let view = View {
            phase: &self.phase,
            next_op: self.next_op,
            usage: self.usage,
            truncated_in_a_row: self.truncated_in_a_row,
            max_truncated_resumes: self.max_truncated_resumes,
        };
        let _ = serde_json::to_writer(&mut *out, &view);
        out.extend_from_slice(&(self.history.len() as u64).to_le_bytes());
        for m in &self.history {
            out.extend_from_slice(&(Arc::as_ptr(m) as usize as u64).to_le_bytes());
        }
    }

    pub fn pending_operation(&self) -> PendingOperation {
        match &self.phase {
            Phase::Idle => PendingOperation::None,
            Phase::Generating { op } => PendingOperation::Generation { op: *op },
            Phase::RunningTools { op, calls } => PendingOperation::Tools {
                op: *op,
                calls: calls.clone(),
            },
        }
    }

    fn outstanding(&self) -> Option<OperationId> {
        self.pending_operation().op()
    }

    fn require_idle(&self) -> Result<(), StateError> {
        match self.outstanding() {
            None => Ok(()),
            Some(outstanding) => Err(StateError::Busy { outstanding }),
        }
    }

    fn fresh_op(&mut self) -> OperationId {
        let op = OperationId(self.next_op);
        // Saturates rather than wrapping: a log claiming op u64::MAX must not make
        // recovery panic; ids stay unique for the first 2^64 - 1 operations.
        self.next_op = self.next_op.saturating_add(1);
        op
    }

    fn generate(&mut self) -> Vec<Effect> {
        let op = self.fresh_op();
        self.phase = Phase::Generating { op };
        vec![Effect::Generate { op }]
    }

    fn finish(&mut self, reason: FinishReason) -> Vec<Effect> {
        self.phase = Phase::Idle;
        vec![Effect::Finished { reason }]
    }

    fn push(&mut self, message: Message) {
        self.history.push(Arc::new(message));
    }

    /// Starts a run on the current history.
    pub fn start(&mut self) -> Result<Vec<Effect>, StateError> {
        self.require_idle()?;
        if self.history.is_empty() {
            return Err(StateError::EmptyHistory);
        }
        self.usage = Usage::default();
        self.truncated_in_a_row = 0;
        Ok(self.generate())
    }

    fn check_generating(&self, op: OperationId) -> Result<(), StateError> {
        match self.phase {
            Phase::Generating { op: current } if current == op => Ok(()),
            _ => Err(StateError::UnexpectedCompletion {
                op,
                outstanding: self.outstanding(),
            }),
        }
    }

    fn check_response(&self, output: &GenerationOutput) -> Result<Vec<ToolCall>, StateError> {
        let message = &output.message;
        if message.role != Role::Assistant {
            return Err(StateError::InvalidResponse(
                "the generated message is not an assistant message".into(),
            ));
        }
        if message.is_empty() {
            return Err(StateError::InvalidResponse(
                "the generated message has empty content".into(),
            ));
        }
        if let Some((block, _)) = message
            .blocks()
            .iter()
            .enumerate()
            .find(|(_, b)| matches!(b, Block::ToolResult { .. }))
        {
            return Err(StateError::InvalidResponse(format!(
                "block {block} of the generated message is a tool_result"
            )));
        }
        let calls = message.tool_calls();
        if output.stop_reason == StopReason::ToolUse && calls.is_empty() {
            return Err(StateError::InvalidResponse(
                "stop reason tool_use with no tool calls".into(),
            ));
        }
        let mut seen = BTreeSet::new();
        for m in &self.history {
            for b in m.blocks() {
                if let Block::ToolUse { id, .. } = b {
                    seen.insert(id.as_str());
                }
            }
        }
        for call in &calls {
            if !seen.insert(call.id.as_str()) {
                return Err(StateError::InvalidResponse(format!(
                    "tool_use id {} is not unique",
                    call.id
                )));
            }
        }
        Ok(calls)
    }

    /// A generation finished.
    pub fn generated(
        &mut self,
        op: OperationId,
        output: GenerationOutput,
    ) -> Result<Vec<Effect>, StateError> {
        self.check_generating(op)?;
        let calls = self.check_response(&output)?;
        self.usage.output_tokens = self
            .usage
            .output_tokens
            .saturating_add(output.usage.output_tokens);
        self.usage.input_tokens = self
            .usage
            .input_tokens
            .saturating_add(output.usage.input_tokens);
        self.push(output.message);
        if !calls.is_empty() {
            self.truncated_in_a_row = 0;
            let op = self.fresh_op();
            self.phase = Phase::RunningTools {
                op,
                calls: calls.clone(),
            };
            return Ok(vec![Effect::ExecuteTools { op, calls }]);
        }
        if output.stop_reason == StopReason::MaxTokens {
            if self.truncated_in_a_row < self.max_truncated_resumes {
                self.truncated_in_a_row += 1;
                self.push(Message::user_text(TRUNCATION_RESUME_TEXT));
                return Ok(self.generate());
            }
            return Ok(self.finish(FinishReason::MaxTokens));
        }
        self.truncated_in_a_row = 0;
        Ok(self.finish(FinishReason::EndTurn))
    }

    /// The generation failed; nothing of it is kept.
    pub fn generation_failed(&mut self, op: OperationId) -> Result<Vec<Effect>, StateError> {
        self.check_generating(op)?;
        Ok(self.finish(FinishReason::Failed))
    }

    fn check_tools(&self, op: OperationId) -> Result<&[ToolCall], StateError> {
        match &self.phase {
            Phase::RunningTools { op: current, calls } if *current == op => Ok(calls),
            _ => Err(StateError::UnexpectedCompletion {
                op,
                outstanding: self.outstanding(),
            }),
        }
    }

    /// The tool batch finished: one result per call, in call order.
    pub fn tools_completed(
        &mut self,
        op: OperationId,
        results: Vec<ToolOutcome>,
        cancelled: bool,
    ) -> Result<Vec<Effect>, StateError> {
        let calls = self.check_tools(op)?;
        if results.len() != calls.len() {
            return Err(StateError::InvalidContext(format!(
                "{op} has {} tool calls but {} results",
                calls.len(),
                results.len()
            )));
        }
        if let Some((i, (call, result))) = calls
            .iter()
            .zip(&results)
            .enumerate()
            .find(|(_, (c, r))| c.id != r.tool_use_id)
        {
            return Err(StateError::InvalidContext(format!(
                "result {i} answers {} but call {i} is {}",
                result.tool_use_id, call.id
            )));
        }
        let blocks = results.into_iter().map(ToolOutcome::into_block).collect();
        self.push(Message::user_blocks(blocks));
        if cancelled {
            return Ok(self.finish(FinishReason::Cancelled {
                reason: InterruptReason::Unknown,
            }));
        }
        Ok(self.generate())
    }

    /// A live cancel while the reply streams. `partial` holds what finished streaming
    /// (text, thinking, and tool calls whose input is complete); each of its tool calls
    /// is answered with the cancel phrase, since none was dispatched.
    pub fn cancel_generation(
        &mut self,
        op: OperationId,
        partial: Option<Message>,
        cause: CancelCause,
    ) -> Result<Vec<Effect>, StateError> {
        self.check_generating(op)?;
        let partial = partial.filter(|m| !m.is_empty());
        if let Some(m) = &partial {
            if m.role != Role::Assistant {
                return Err(StateError::InvalidResponse(
                    "the partial message is not an assistant message".into(),
                ));
            }
            self.check_response(&GenerationOutput {
                message: m.clone(),
                stop_reason: StopReason::EndTurn,
                usage: Usage::default(),
            })?;
        }
        if let Some(m) = partial {
            let calls = m.tool_calls();
            self.push(m);
            if !calls.is_empty() {
                let blocks = calls
                    .iter()
                    .map(|c| Block::tool_result(c.id.clone(), cause.phrase(), true))
                    .collect();
                self.push(Message::user_blocks(blocks));
            }
        }
        append_marker(&mut self.history, cause.reason());
        Ok(self.finish(FinishReason::Cancelled {
            reason: cause.reason(),
        }))
    }

    /// A live cancel while tools run. `finished` holds the results that came in; every
    /// other call is answered with the cancel phrase, and since those may have started,
    /// a tool-in-flight note names them before the marker.
    pub fn cancel_tools(
        &mut self,
        op: OperationId,
        finished: &[ToolOutcome],
        cause: CancelCause,
    ) -> Result<Vec<Effect>, StateError> {
        let calls = self.check_tools(op)?.to_vec();
        let mut results = Vec::with_capacity(calls.len());
        let mut unfinished = Vec::new();
        for call in &calls {
            match finished.iter().find(|r| r.tool_use_id == call.id) {
                Some(r) => results.push(r.clone()),
                None => {
                    unfinished.push(call.name.clone());
                    results.push(ToolOutcome {
                        tool_use_id: call.id.clone(),
                        content: cause.phrase().to_string(),
                        is_error: true,
                    });
                }
            }
        }
        self.tools_completed(op, results, true)?;
        if !unfinished.is_empty() {
            self.push(Message::user_text(tool_in_flight_note_text(
                cause.phrase(),
                &unfinished,
            )));
        }
        append_marker(&mut self.history, cause.reason());
        Ok(vec![Effect::Finished {
            reason: FinishReason::Cancelled {
                reason: cause.reason(),
            },
        }])
    }

    /// Appends a user message (a prompt, or input that arrived between runs).
    pub fn append_input(&mut self, message: Message) -> Result<(), StateError> {
        self.require_idle()?;
        if message.role != Role::User {
            return Err(StateError::InvalidContext(
                "input must be a user message".into(),
            ));
        }
        if message.is_empty() {
            return Err(StateError::InvalidContext("input is empty".into()));
        }
        if message
            .blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. } | Block::ToolUse { .. }))
        {
            return Err(StateError::InvalidContext(
                "input must not carry tool blocks".into(),
            ));
        }
        self.push(message);
        Ok(())
    }

    /// Replaces the whole history (compaction); only a valid history is accepted.
    pub fn replace_context(&mut self, history: Vec<SharedMessage>) -> Result<(), StateError> {
        self.require_idle()?;
        validate_history(&history)?;
        self.history = history;
        Ok(())
    }

    /// Truncates the history to its first `index` messages; the prefix must be valid,
    /// so a rewind never splits a tool batch from its results.
    pub fn rewind(&mut self, index: usize) -> Result<(), StateError> {
        self.require_idle()?;
        if index > self.history.len() {
            return Err(StateError::RewindOutOfRange {
                index,
                len: self.history.len(),
            });
        }
        validate_history(&self.history[..index])?;
        self.history.truncate(index);
        Ok(())
    }

    /// Restores an idle state from a history recovered after a crash.
    pub fn recovered(history: Vec<SharedMessage>, last_op: Option<OperationId>) -> TurnState {
        TurnState::resume(history, last_op)
    }
}

/// Accounts for the operation that was outstanding when the runtime stopped. Nothing
/// is ever reissued: a tool intent without its result may have had external effects,
/// so it is answered as interrupted and flagged with a note; a generation in flight
/// is simply marked.
pub fn recover_checkpoint(
    history: Vec<SharedMessage>,
    pending: &PendingOperation,
) -> Result<Vec<SharedMessage>, StateError> {
    recover_checkpoint_with_results(history, pending, &[])
}

/// [`recover_checkpoint`] for a runtime that also persisted the results that arrived
/// before the crash: those are kept as they were, and only the calls still without a
/// result are answered as interrupted and named in the note.
pub fn recover_checkpoint_with_results(
    history: Vec<SharedMessage>,
    pending: &PendingOperation,
    finished: &[ToolOutcome],
) -> Result<Vec<SharedMessage>, StateError> {
    let mut history = history;
    match pending {
        PendingOperation::None => Ok(history),
        PendingOperation::Generation { .. } => {
            validate_history(&history)?;
            append_marker(&mut history, InterruptReason::Crash);
            Ok(history)
        }
        PendingOperation::Tools { op, calls } => {
            let asked = history.last().map(|m| m.tool_calls()).unwrap_or_default();
            let asked_ids: Vec<&str> = asked.iter().map(|c| c.id.as_str()).collect();
            let pending_ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
            if asked_ids != pending_ids {
                return Err(StateError::InvalidContext(format!(
                    "pending {op} names calls {pending_ids:?} but the history ends with calls {asked_ids:?}"
                )));
            }
            validate_history_allowing_pending_tools(&history)?;
            let mut blocks = Vec::with_capacity(calls.len());
            let mut unknown = Vec::new();
            for call in calls {
                match finished.iter().find(|r| r.tool_use_id == call.id) {
                    Some(r) => blocks.push(r.clone().into_block()),
                    None => {
                        unknown.push(call.name.clone());
                        blocks.push(Block::tool_result(
                            call.id.clone(),
                            INTERRUPTED_RESULT_TEXT,
                            true,
                        ));
                    }
                }
            }
            history.push(Arc::new(Message::user_blocks(blocks)));
            if !unknown.is_empty() {
                history.push(Arc::new(Message::user_text(tool_in_flight_note_text(
                    RECOVERY_NOTE_PHRASE,
                    &unknown,
                ))));
            }
            append_marker(&mut history, InterruptReason::Crash);
            Ok(history)
        }
    }
}
