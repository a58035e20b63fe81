//! The turn state machine (docs/spec.md §6): synchronous transitions that return effects.
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
//!   the history valid per docs/spec.md §2 (a tool batch is answered in one message, in call
//!   order), so the next request is always one the provider accepts.

use crate::history::{HistoryError, validate_history, validate_history_allowing_pending_tools};
use crate::interrupt::{CancelCause, InterruptReason, append_marker};
use crate::message::{Block, Message, Role, SharedMessage, ToolCall, ToolResultContent};
use crate::note::tool_in_flight_note_text;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod recover;
mod types;

pub use recover::{recover_checkpoint, recover_checkpoint_with_results};
pub use types::*;

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

    /// The outstanding operation, borrowed ([`PendingView`]).
    pub(crate) fn pending_view(&self) -> PendingView<'_> {
        match &self.phase {
            Phase::Idle => PendingView::None,
            Phase::Generating { op } => PendingView::Generation(*op),
            Phase::RunningTools { op, calls } => PendingView::Tools(*op, calls),
        }
    }

    fn outstanding(&self) -> Option<OperationId> {
        self.pending_view().op()
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
        // Which calls reuse an id the history holds, found in one pass over the
        // history against the reply's few calls: a set of every id in the history,
        // built per reply, cost more than the rest of the check.
        let mut in_history = vec![false; calls.len()];
        if !calls.is_empty() {
            for m in &self.history {
                for b in m.blocks() {
                    if let Block::ToolUse { id, .. } = b {
                        for (hit, call) in in_history.iter_mut().zip(&calls) {
                            *hit |= call.id == *id;
                        }
                    }
                }
            }
        }
        // The first call in reply order whose id came before it, in the history or
        // earlier in the reply, is the one named.
        for (i, call) in calls.iter().enumerate() {
            if in_history[i] || calls[..i].iter().any(|c| c.id == call.id) {
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
                        content: cause.phrase().into(),
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
