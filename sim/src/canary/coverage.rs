//! The canaries that close the catalogue: one planted bug for each rule of the judge's
//! table and each checker that had none (issue 25: every rule has a canary). Each
//! mechanism is one a real runtime can ship (the variant's doc comment in [`Bug`]
//! says which); the pure rewrites it needs live in [`super::coverage_rewrites`].
//!
//! Guarantee: the wrapper differs from the reference engine only in the behaviour its
//! [`Bug`] names. A rewrite of the history is a pure function of the message list,
//! applied alike to the history the engine reports and to every request it sends, so
//! a checker that compares the two cannot object to the planting itself; what the
//! wrapper remembers besides the reference's state is in its state bytes, so
//! `stale_noop` sees what a stale delivery changed.

use super::Bug;
use super::coverage_rewrites as rw;
use crate::engine::Engine;
use serde::Serialize;
use turnsim_core::{
    Input, Output, PendingOperation, Record, Role, Session, SharedMessage, StreamEvent,
    ToolResultContent, TurnOutcome, decode_log, encode_record, is_marker_message,
};

#[derive(Serialize)]
pub(crate) struct CoverageCanary {
    bug: Bug,
    #[serde(skip)]
    inner: Session,
    /// The history as the bug rewrites it (`clears_old_tool_results` only).
    #[serde(skip)]
    view: Vec<SharedMessage>,
    /// The engine was restored from its log (`calls_beside_results_on_resume`).
    resumed: bool,
    /// `keeps_empty_cut_reply` only: the history index of each marker that closed a
    /// reply cancelled before any of its blocks was kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    empty_replies: Vec<usize>,
}

impl CoverageCanary {
    pub(crate) fn new(bug: Bug, inner: Session, resumed: bool) -> CoverageCanary {
        let mut c = CoverageCanary {
            bug,
            inner,
            view: Vec::new(),
            resumed,
            empty_replies: Vec::new(),
        };
        c.refresh();
        c
    }

    fn refresh(&mut self) {
        if self.bug == Bug::ClearsOldToolResults {
            self.view = rw::cleared_old_results(self.inner.history());
        }
    }

    /// What the bug does to an input before the reference engine sees it; `None`
    /// swallows it.
    fn intercept(&self, input: Input) -> Option<Input> {
        if self.bug == Bug::SkipsStreamError
            && let Input::Stream {
                op,
                event: StreamEvent::Error { .. },
            } = &input
            && self.inner.pending_operation().op() == Some(*op)
        {
            return None;
        }
        let Input::ToolResult { op, mut outcome } = input else {
            return Some(input);
        };
        match self.bug {
            Bug::UnwrapsStaleResult => {
                let calls = match self.inner.pending_operation() {
                    PendingOperation::Tools { calls, .. } => calls,
                    _ => Vec::new(),
                };
                // The bug: the result is matched to its call by id alone, and the
                // lookup unwrapped, as if no result could outlive its batch.
                let slot = calls.iter().position(|c| c.id == outcome.tool_use_id);
                let _call = &calls[slot.expect("a tool result answers a call of the open batch")];
            }
            Bug::TruncatesToolOutput => {
                if let ToolResultContent::Text(s) = &outcome.content {
                    outcome.content = ToolResultContent::Text(rw::truncated(s));
                }
            }
            Bug::StringifiesResultBlocks => {
                outcome.content = super::tool_blocks::stringified(outcome.content);
            }
            _ => {}
        }
        Some(Input::ToolResult { op, outcome })
    }

    /// After a cancel of a reply: remembers the marker when nothing of the reply was
    /// kept, where the bug keeps an empty assistant message.
    fn note_empty_reply(&mut self, before: &PendingOperation) {
        if !matches!(before, PendingOperation::Generation { .. }) {
            return;
        }
        let h = self.inner.history();
        let n = h.len();
        if n >= 2 && is_marker_message(&h[n - 1]) && h[n - 2].role == Role::User {
            self.empty_replies.push(n - 1);
        }
    }
}

impl Engine for CoverageCanary {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        let before = self.inner.pending_operation();
        let cancel = matches!(input, Input::Cancel { .. });
        let result = matches!(input, Input::ToolResult { .. });
        let Some(input) = self.intercept(input) else {
            return Ok(Vec::new());
        };
        let mut outputs = Engine::handle(&mut self.inner, input)?;
        if cancel && self.bug == Bug::KeepsEmptyCutReply {
            self.note_empty_reply(&before);
        }
        self.refresh();
        // The bug: a result that does not complete its batch (the reference answers it
        // with its `ToolResult` record alone) is kept in memory, not written; the
        // batch's last result writes only its own.
        if result
            && self.bug == Bug::ResultTakenNotPersisted
            && outputs.iter().all(|o| matches!(o, Output::Persist { .. }))
        {
            outputs.clear();
        }
        for o in outputs.iter_mut() {
            if let Output::Send { request, .. } = o {
                match self.bug {
                    Bug::ClearsOldToolResults => {
                        request.messages = rw::cleared_old_results(&request.messages);
                    }
                    Bug::KeepsEmptyCutReply => rw::empty_replies(request, &self.empty_replies),
                    Bug::SendsOutputTextBlocks => rw::output_text(&mut request.messages),
                    Bug::CallsBesideResultsOnResume if self.resumed => {
                        rw::calls_beside_results(&mut request.messages);
                    }
                    Bug::TurnContextQuotesReply => rw::quote_last_reply(&mut request.messages),
                    Bug::ThinkingStoredAsLine => rw::thinking_as_line(&mut request.messages),
                    _ => {}
                }
            }
        }
        Ok(outputs)
    }

    fn history(&self) -> &[SharedMessage] {
        if self.bug == Bug::ClearsOldToolResults {
            return &self.view;
        }
        self.inner.history()
    }

    fn pending_operation(&self) -> PendingOperation {
        self.inner.pending_operation()
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    fn state_bytes(&self) -> Vec<u8> {
        let mut bytes = self.inner.fingerprint();
        bytes.extend(serde_json::to_vec(self).unwrap_or_default());
        bytes
    }

    fn fixed_texts(&self) -> Vec<String> {
        Engine::fixed_texts(&self.inner)
    }
}

/// Restores the reference engine from `log` with the bug. `recovery_ends_turn_again`
/// writes the crashed turn's end again whenever the log's last record is one: its
/// recovery does not look whether an earlier recovery already closed the turn.
pub(crate) fn restore(
    bug: Bug,
    config: turnsim_core::SessionConfig,
    log: &[u8],
) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
    let (session, mut outputs) = Session::restore(config, log).map_err(|e| e.to_string())?;
    if bug == Bug::RecoveryEndsTurnAgain && ends_in_crashed_turn(log) {
        let end = Record::TurnEnd {
            outcome: TurnOutcome::Crashed,
        };
        outputs.push(Output::Persist {
            bytes: encode_record(&end),
        });
    }
    let engine: Box<dyn Engine> = Box::new(CoverageCanary::new(bug, session, true));
    Ok((engine, outputs))
}

fn ends_in_crashed_turn(log: &[u8]) -> bool {
    decode_log(log).is_ok_and(|d| {
        matches!(
            d.records.last(),
            Some(Record::TurnEnd {
                outcome: TurnOutcome::Crashed
            })
        )
    })
}

/// Whether `bug` is one of this module's.
pub(crate) fn is_coverage(bug: Bug) -> bool {
    matches!(
        bug,
        Bug::KeepsEmptyCutReply
            | Bug::SendsOutputTextBlocks
            | Bug::CallsBesideResultsOnResume
            | Bug::ClearsOldToolResults
            | Bug::RecoveryEndsTurnAgain
            | Bug::UnwrapsStaleResult
            | Bug::SkipsStreamError
            | Bug::TurnContextQuotesReply
            | Bug::TruncatesToolOutput
            | Bug::ThinkingStoredAsLine
            | Bug::StringifiesResultBlocks
            | Bug::ResultTakenNotPersisted
    )
}
