//! The session a runtime embeds (docs/spec.md §7): the state machine, the history and the
//! durable log behind one sans-IO interface.
//!
//! Guarantees:
//! - Write-ahead: every output list puts the records to persist before the effects
//!   they describe (a tool's intent before its dispatch, a request's receipt before the
//!   request). Only an `Abort` may come before the records, because stopping work is
//!   safe whatever the log says. A caller that carries outputs out in order and stops
//!   at any point leaves a log from which [`Session::restore`] accounts for
//!   everything that may have happened.
//! - Recovery never reissues an operation, keeps every persisted observation (the
//!   prompt, each tool result that was saved) and is idempotent: restoring a log plus
//!   the records recovery asked to persist changes nothing more.
//! - A stale or duplicate delivery (an old operation id, a result already counted)
//!   returns no outputs and leaves the session byte-identical.

use crate::interrupt::{CancelCause, TurnDraft, recover_crashed_turn};
use crate::log::{LogError, Record, TurnOutcome, decode_log, encode_record};
use crate::message::{Block, Message, SharedMessage, ToolCall};
use crate::repair::repair_history_after_failure;
use crate::request::{
    Activity, CacheHints, Receipt, Request, Thinking, ToolSpec, cache_breakpoints,
    compacted_history, directive_message, directive_words, hidden_directives, prefix_change,
    turn_context_block,
};
use crate::state::{
    DEFAULT_MAX_TRUNCATED_RESUMES, Effect, FinishReason, GenerationOutput, OperationId,
    PendingOperation, StateError, StopReason, ToolOutcome, TurnState, Usage,
    recover_checkpoint_with_results,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

mod host;
mod ids;
mod restore;
mod stream;

use stream::Stream;
pub use stream::{BlockStart, StreamEvent};

/// What the host configures once per session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionConfig {
    pub system: String,
    /// Shared, so every request of a session carries the same allocation and a caller
    /// can tell "unchanged" by pointer before comparing bytes.
    pub tools: Arc<[ToolSpec]>,
    pub session_key: String,
    /// The `<stance>` line of every turn context.
    pub stance: String,
    pub max_truncated_resumes: u32,
    /// Extended thinking for every request of the session (`None`: off). Left out of
    /// the serialized config when off, so configs and states written before it read
    /// and hash as they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            system: "You are a careful coding agent.".into(),
            tools: Arc::from(Vec::new()),
            session_key: "session".into(),
            stance: "act on the user's words; ask when unsure".into(),
            max_truncated_resumes: DEFAULT_MAX_TRUNCATED_RESUMES,
            thinking: None,
        }
    }
}

/// Everything a runtime hands the session.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// The user's words start a turn; `now` is the instant the caller read.
    Prompt {
        text: String,
        now: String,
    },
    Stream {
        op: OperationId,
        event: StreamEvent,
    },
    ToolResult {
        op: OperationId,
        outcome: ToolOutcome,
    },
    Cancel {
        cause: CancelCause,
    },
    Compact {
        summary: String,
    },
    Rewind {
        index: usize,
    },
    /// A new system prompt and tools, and, when `thinking` is given, extended thinking
    /// switched on (`enabled`) or off (`disabled`) for the following requests; absent
    /// leaves thinking as it was (and serializes as the input did before the field).
    Configure {
        system: String,
        /// Shared, not copied: a host hands the same list to every session it starts
        /// and every configure it repeats, and a schema is a tree of allocations.
        tools: Arc<[ToolSpec]>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<Thinking>,
    },
}

/// Everything the session asks of the runtime, in the order it must be done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "output", rename_all = "snake_case")]
pub enum Output {
    /// Append these bytes to the log and make them durable before going on.
    Persist {
        bytes: Vec<u8>,
    },
    /// Cut the log to `len` bytes (a torn tail found on restart).
    TruncateLog {
        len: usize,
    },
    Send {
        op: OperationId,
        request: Request,
    },
    Dispatch {
        op: OperationId,
        calls: Vec<ToolCall>,
    },
    /// Stop the stream or the tools of `op`; whatever they still deliver is stale.
    Abort {
        op: OperationId,
    },
    TurnEnded {
        outcome: TurnOutcome,
    },
    Activity {
        activity: Activity,
    },
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("busy: {outstanding} is outstanding; this input is accepted only between turns")]
    Busy { outstanding: OperationId },
    #[error("empty input: {0}")]
    EmptyInput(&'static str),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("log record {record}: {what}")]
    Replay { record: usize, what: String },
}

/// The session: see the module documentation for its guarantees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    config: SessionConfig,
    state: TurnState,
    turn_baseline: usize,
    in_turn: bool,
    compacted: Vec<String>,
    /// Tool-use ids a rewind, a compaction or a repair took out of the history (§7).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    retired_ids: BTreeSet<String>,
    last_receipt: Option<Receipt>,
    stream: Option<Stream>,
    results: Vec<ToolOutcome>,
    #[serde(skip)]
    prefix_digest: Option<String>,
}

impl Session {
    pub fn new(mut config: SessionConfig) -> Session {
        config.tools = crate::request::canonical_tools(config.tools);
        let state =
            TurnState::new(Vec::new()).with_max_truncated_resumes(config.max_truncated_resumes);
        Session {
            config,
            state,
            turn_baseline: 0,
            in_turn: false,
            compacted: Vec::new(),
            retired_ids: BTreeSet::new(),
            last_receipt: None,
            stream: None,
            results: Vec::new(),
            prefix_digest: None,
        }
    }

    pub fn history(&self) -> &[SharedMessage] {
        self.state.history()
    }

    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    pub fn pending_operation(&self) -> PendingOperation {
        self.state.pending_operation()
    }

    pub fn turn_baseline(&self) -> usize {
        self.turn_baseline
    }

    /// True between turns.
    pub fn is_idle(&self) -> bool {
        !self.in_turn && self.state.is_idle()
    }

    /// The serialized session: equal bytes, equal sessions.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A cheap identity fingerprint for change detection within one process (see
    /// [`TurnState::fingerprint_into`]): equal fingerprints, unchanged session. Unlike
    /// [`Session::to_bytes`] it is not comparable across processes.
    pub fn fingerprint(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct View<'a> {
            system: &'a str,
            tools: u64,
            session_key: &'a str,
            stance: &'a str,
            max_truncated_resumes: u32,
            thinking: Option<Thinking>,
            turn_baseline: usize,
            in_turn: bool,
            compacted: &'a [String],
            retired_ids: &'a BTreeSet<String>,
            last_receipt: &'a Option<Receipt>,
            stream: &'a Option<Stream>,
            results: &'a [ToolOutcome],
        }
        let mut out = Vec::with_capacity(256);
        let view = View {
            system: &self.config.system,
            tools: Arc::as_ptr(&self.config.tools) as *const ToolSpec as usize as u64,
            session_key: &self.config.session_key,
            stance: &self.config.stance,
            max_truncated_resumes: self.config.max_truncated_resumes,
            thinking: self.config.thinking,
            turn_baseline: self.turn_baseline,
            in_turn: self.in_turn,
            compacted: &self.compacted,
            retired_ids: &self.retired_ids,
            last_receipt: &self.last_receipt,
            stream: &self.stream,
            results: &self.results,
        };
        let _ = serde_json::to_writer(&mut out, &view);
        self.state.fingerprint_into(&mut out);
        out
    }

    /// Hands the session one input and returns what to do, in order.
    pub fn handle(&mut self, input: Input) -> Result<Vec<Output>, SessionError> {
        match input {
            Input::Prompt { text, now } => self.prompt(text, &now),
            Input::Stream { op, event } => Ok(self.stream_event(op, event)),
            Input::ToolResult { op, outcome } => Ok(self.tool_result(op, outcome)),
            Input::Cancel { cause } => self.cancel(cause),
            Input::Compact { summary } => self.compact(&summary),
            Input::Rewind { index } => self.rewind(index),
            Input::Configure {
                system,
                tools,
                thinking,
            } => self.configure(system, tools, thinking),
        }
    }

    fn require_idle(&self) -> Result<(), SessionError> {
        match self.state.pending_view().op() {
            Some(outstanding) => Err(SessionError::Busy { outstanding }),
            None => Ok(()),
        }
    }

    fn persist(out: &mut Vec<Output>, record: &Record) {
        out.push(Output::Persist {
            bytes: encode_record(record),
        });
    }

    fn prompt(&mut self, text: String, now: &str) -> Result<Vec<Output>, SessionError> {
        self.require_idle()?;
        if text.is_empty() {
            return Err(SessionError::EmptyInput("the prompt is empty"));
        }
        let mut hidden = hidden_directives(&self.compacted, self.state.history());
        hidden.retain(|d| *d != text);
        let block = turn_context_block(now, &self.config.stance, &hidden);
        let mut next = self.state.clone();
        let len_before = next.history().len();
        next.append_input(directive_message(block, text))?;
        let effects = next.start()?;
        self.state = next;
        self.turn_baseline = len_before;
        self.in_turn = true;
        let mut out = Vec::new();
        self.commit_with(len_before, effects, &mut out, true);
        Ok(out)
    }

    /// Persists what a transition appended with the intent it left, then carries out
    /// its effects.
    fn commit(&mut self, len_before: usize, effects: Vec<Effect>, out: &mut Vec<Output>) {
        self.commit_with(len_before, effects, out, false);
    }

    fn commit_with(
        &mut self,
        len_before: usize,
        effects: Vec<Effect>,
        out: &mut Vec<Output>,
        turn_start: bool,
    ) {
        let appended = self.state.history().get(len_before..).unwrap_or_default();
        let finishing = effects.iter().any(|e| matches!(e, Effect::Finished { .. }));
        // The record is written from the shared history and the state's own calls,
        // the bytes `encode_record` gives for the owned record, without copying them.
        if turn_start {
            out.push(Output::Persist {
                bytes: crate::log::encode_appended(
                    Some(len_before),
                    appended,
                    self.state.pending_view(),
                ),
            });
        } else if !appended.is_empty() || !finishing {
            out.push(Output::Persist {
                bytes: crate::log::encode_appended(None, appended, self.state.pending_view()),
            });
        }
        for effect in effects {
            match effect {
                Effect::Generate { op } => self.send(op, out),
                Effect::ExecuteTools { op, calls } => {
                    self.results.clear();
                    out.push(Output::Dispatch { op, calls });
                }
                Effect::Finished { reason } => self.end_turn(reason, out),
            }
        }
    }

    fn send(&mut self, op: OperationId, out: &mut Vec<Output>) {
        let history = self.state.history();
        let request = Request {
            system: self.config.system.clone(),
            tools: self.config.tools.clone(),
            messages: history.to_vec(),
            cache: CacheHints {
                session_key: self.config.session_key.clone(),
                breakpoints: cache_breakpoints(self.turn_baseline, history.len()),
            },
            thinking: self.config.thinking,
        };
        let receipt = Receipt {
            op,
            digest: self.prefix_digest(),
        };
        Self::persist(
            out,
            &Record::Receipt {
                op,
                digest: receipt.digest.clone(),
            },
        );
        if let Some(activity) = prefix_change(self.last_receipt.as_ref(), &receipt) {
            Self::persist(
                out,
                &Record::Activity {
                    activity: activity.clone(),
                },
            );
            out.push(Output::Activity { activity });
        }
        self.last_receipt = Some(receipt);
        self.stream = Some(Stream {
            op,
            started: false,
            blocks: Vec::new(),
            stop: None,
        });
        out.push(Output::Send { op, request });
    }

    fn end_turn(&mut self, reason: FinishReason, out: &mut Vec<Output>) {
        self.stream = None;
        self.results.clear();
        let outcome = match reason {
            FinishReason::EndTurn => TurnOutcome::EndTurn,
            FinishReason::MaxTokens => TurnOutcome::MaxTokens,
            FinishReason::Cancelled { reason } => TurnOutcome::Cancelled { reason },
            FinishReason::Failed => TurnOutcome::Failed {
                reason: "generation failed".into(),
            },
        };
        self.finish_turn(outcome, out);
    }

    fn finish_turn(&mut self, outcome: TurnOutcome, out: &mut Vec<Output>) {
        if matches!(outcome, TurnOutcome::Failed { .. }) {
            let mut repaired = self.state.history().to_vec();
            repair_history_after_failure(&mut repaired, self.turn_baseline);
            let len = repaired.len();
            let retiring = ids::retiring(self.state.history().get(len..).unwrap_or_default());
            if len < self.state.history().len() && self.state.rewind(len).is_ok() {
                self.retired_ids.extend(retiring);
                Self::persist(out, &Record::Rewind { len });
            }
        }
        self.in_turn = false;
        Self::persist(
            out,
            &Record::TurnEnd {
                outcome: outcome.clone(),
            },
        );
        out.push(Output::TurnEnded { outcome });
    }

    fn fail_generation(&mut self, op: OperationId, why: String, out: &mut Vec<Output>) {
        if let Ok(effects) = self.state.generation_failed(op) {
            out.push(Output::Abort { op });
            self.stream = None;
            for effect in effects {
                if let Effect::Finished { .. } = effect {
                    self.finish_turn(
                        TurnOutcome::Failed {
                            reason: why.clone(),
                        },
                        out,
                    );
                }
            }
        }
    }

    fn tool_result(&mut self, op: OperationId, outcome: ToolOutcome) -> Vec<Output> {
        let mut out = Vec::new();
        let crate::state::PendingView::Tools(current, calls) = self.state.pending_view() else {
            return out;
        };
        if current != op
            || !calls.iter().any(|c| c.id == outcome.tool_use_id)
            || self
                .results
                .iter()
                .any(|r| r.tool_use_id == outcome.tool_use_id)
        {
            return out; // stale, unknown or a duplicate: nothing changes
        }
        out.push(Output::Persist {
            bytes: crate::log::encode_tool_result(op, &outcome),
        });
        self.results.push(outcome);
        if self.results.len() < calls.len() {
            return out;
        }
        let ordered: Vec<ToolOutcome> = calls
            .iter()
            .filter_map(|c| self.results.iter().find(|r| r.tool_use_id == c.id).cloned())
            .collect();
        let len_before = self.state.history().len();
        match self.state.tools_completed(op, ordered, false) {
            Ok(effects) => {
                self.results.clear();
                self.commit(len_before, effects, &mut out);
            }
            Err(_) => out.clear(),
        }
        out
    }

    fn cancel(&mut self, cause: CancelCause) -> Result<Vec<Output>, SessionError> {
        let mut out = Vec::new();
        let len_before = self.state.history().len();
        let effects = match self.state.pending_operation() {
            PendingOperation::None => return Ok(out),
            PendingOperation::Generation { op } => {
                let blocks = self
                    .stream
                    .as_ref()
                    .filter(|s| s.op == op)
                    .map(|s| s.kept_blocks(true))
                    .unwrap_or_default();
                let partial = |blocks: Vec<Block>| {
                    (!blocks.is_empty()).then(|| Message::assistant_blocks(blocks))
                };
                out.push(Output::Abort { op });
                match self
                    .state
                    .cancel_generation(op, partial(blocks.clone()), cause)
                {
                    Ok(effects) => effects,
                    // The reply streamed a tool call the provider would refuse (a reused
                    // id). A cancel must still go through: keep the text and thinking,
                    // drop the tool calls (none was dispatched).
                    Err(StateError::InvalidResponse(_)) => {
                        let blocks = blocks
                            .into_iter()
                            .filter(|b| !matches!(b, Block::ToolUse { .. }))
                            .collect();
                        self.state.cancel_generation(op, partial(blocks), cause)?
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            PendingOperation::Tools { op, .. } => {
                out.push(Output::Abort { op });
                let finished = std::mem::take(&mut self.results);
                self.state.cancel_tools(op, &finished, cause)?
            }
        };
        self.commit(len_before, effects, &mut out);
        Ok(out)
    }
}
