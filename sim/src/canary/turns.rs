//! The canaries of the interruption and turn-end invariants (issue 17, items 1, 2, 3,
//! 4, 9 and 10): the reference engine with one planted bug each, as real runtimes
//! have shipped them.
//!
//! Guarantee: like every canary, each differs from the reference engine only in the
//! behaviour its [`Bug`] names, through the same [`Engine`] interface. A rewrite of
//! the history is a pure function of the message list, applied alike to the history
//! the engine reports and to every request it sends, so only the invariant the bug
//! breaks can object; the wrapper's own fields change only on inputs the reference
//! engine accepts, so stale deliveries still change nothing.

use super::Bug;
use crate::engine::Engine;
use serde::Serialize;
use std::sync::Arc;
use turnsim_core::log::{Record, TurnOutcome, decode_log, encode_record};
use turnsim_core::note::{CANCEL_PHRASES, tool_in_flight_note_text};
use turnsim_core::session::StreamEvent;
use turnsim_core::state::StopReason;
use turnsim_core::{
    Block, Input, InterruptReason, Message, Output, PendingOperation, Role, Session, SharedMessage,
    ToolCall, is_tool_in_flight_note,
};

#[derive(Serialize)]
pub(crate) struct TurnCanary {
    bug: Bug,
    #[serde(skip)]
    inner: Session,
    /// The history as the bug rewrites it, for the bugs that rewrite it.
    #[serde(skip)]
    view: Vec<SharedMessage>,
    /// Tool blocks started in the reply streaming now.
    calls_streamed: usize,
    /// `unrepaired_failed_reply` only: the reply streaming now, and each failed
    /// reply's leftover with the history length it follows (cleared by a compaction
    /// or a rewind, which rebuild the history it was placed in).
    #[serde(skip)]
    leftover: super::repair::Leftover,
    #[serde(skip)]
    kept: Vec<(usize, SharedMessage)>,
}

impl TurnCanary {
    pub(crate) fn new(bug: Bug, inner: Session) -> TurnCanary {
        let mut c = TurnCanary {
            bug,
            inner,
            view: Vec::new(),
            calls_streamed: 0,
            leftover: super::repair::Leftover::default(),
            kept: Vec::new(),
        };
        c.refresh();
        c
    }

    fn rewrites(&self) -> bool {
        matches!(
            self.bug,
            Bug::MarkerWithoutCause
                | Bug::NoteNamesFinished
                | Bug::CancelRecordsNothing
                | Bug::UnrepairedFailedReply
        )
    }

    fn refresh(&mut self) {
        if self.rewrites() {
            self.view = self.rewritten(self.inner.history());
        }
    }

    /// Moves the breakpoints of a request past the leftovers put back into it: each
    /// one ends a turn or the request, and a leftover put back at the end of a turn
    /// is now that turn's last message.
    fn shift_breakpoints(&self, points: &mut [turnsim_core::request::CacheBreakpoint]) {
        for p in points {
            if let Some(i) = p.after_message.as_mut() {
                *i += self.kept.iter().filter(|(at, _)| *at <= *i + 1).count();
            }
        }
    }

    /// A message list as the bug shows it: the leftovers of failed replies put back
    /// where they were left, or the history rewrite of the other bugs.
    fn rewritten(&self, messages: &[SharedMessage]) -> Vec<SharedMessage> {
        if self.bug != Bug::UnrepairedFailedReply {
            return rewrite(self.bug, messages);
        }
        let mut out = messages.to_vec();
        for (shift, (at, m)) in self.kept.iter().enumerate() {
            let at = (at + shift).min(out.len());
            out.insert(at, m.clone());
        }
        out
    }
}

/// The bug's view of a message list.
fn rewrite(bug: Bug, messages: &[SharedMessage]) -> Vec<SharedMessage> {
    let mut out: Vec<SharedMessage> = Vec::with_capacity(messages.len());
    for m in messages {
        let text = m.string_content().filter(|_| m.role == Role::User);
        let replaced = match (bug, text) {
            // Every live cancel is recorded without its cause.
            (Bug::MarkerWithoutCause, Some(t))
                if InterruptReason::from_marker(t).is_some_and(|r| r.cancel_cause().is_some()) =>
            {
                Some(InterruptReason::Unknown.marker().to_string())
            }
            // The note names every call of the batch, finished or not.
            (Bug::NoteNamesFinished, Some(t)) if is_tool_in_flight_note(m) => {
                let phrase = CANCEL_PHRASES
                    .iter()
                    .filter(|p| t[1..].starts_with(&format!("{p} while")))
                    .max_by_key(|p| p.len());
                let names: Vec<String> = out
                    .iter()
                    .rev()
                    .find(|p| p.role == Role::Assistant)
                    .map(|p| {
                        p.blocks()
                            .iter()
                            .filter_map(|b| match b {
                                Block::ToolUse { name, .. } => Some(name.clone()),
                                _ => None,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                phrase
                    .filter(|_| !names.is_empty())
                    .map(|p| tool_in_flight_note_text(p, &names))
            }
            _ => None,
        };
        // Every trace of a live cancel goes: its marker, and the note after it.
        let dropped = bug == Bug::CancelRecordsNothing
            && text.is_some_and(|t| {
                InterruptReason::from_marker(t).is_some_and(|r| r.cancel_cause().is_some())
                    || is_tool_in_flight_note(m)
            });
        match replaced {
            _ if dropped => {}
            Some(t) if Some(t.as_str()) != text => out.push(Arc::new(Message::user_text(t))),
            _ => out.push(m.clone()),
        }
    }
    out
}

impl Engine for TurnCanary {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        let before = self.inner.pending_operation();
        let live = |op| before.op() == Some(op);
        let input = match input {
            Input::Stream { op, event } if live(op) => {
                if self.bug == Bug::UnrepairedFailedReply {
                    self.leftover.apply(&event);
                }
                let event = match event {
                    StreamEvent::MessageStart => {
                        self.calls_streamed = 0;
                        event
                    }
                    StreamEvent::BlockStart {
                        block: turnsim_core::session::BlockStart::ToolUse { .. },
                        ..
                    } => {
                        self.calls_streamed += 1;
                        event
                    }
                    StreamEvent::MessageStop
                        if self.bug == Bug::ParallelCallsFail && self.calls_streamed >= 2 =>
                    {
                        StreamEvent::Error {
                            kind: "invalid_response".into(),
                            message: "parallel tool calls are not supported".into(),
                        }
                    }
                    // A stop reason it cannot parse fails the reply.
                    StreamEvent::MessageDelta {
                        stop_reason: StopReason::StopSequence,
                        ..
                    } if self.bug == Bug::RejectsStopSequence => StreamEvent::Error {
                        kind: "invalid_response".into(),
                        message: "unknown stop_reason \"stop_sequence\"".into(),
                    },
                    // Every finished reply is read as cut off at the output limit.
                    StreamEvent::MessageDelta {
                        stop_reason: StopReason::EndTurn,
                        usage,
                    } if self.bug == Bug::ContinuesAfterEndTurn => StreamEvent::MessageDelta {
                        stop_reason: StopReason::MaxTokens,
                        usage,
                    },
                    e => e,
                };
                Input::Stream { op, event }
            }
            other => other,
        };
        let cancel_while_streaming = matches!(input, Input::Cancel { .. })
            && matches!(before, PendingOperation::Generation { .. });
        let kept_from = self.inner.history().len();
        let reshapes = matches!(input, Input::Compact { .. } | Input::Rewind { .. });
        let mut outputs = Engine::handle(&mut self.inner, input)?;
        if self.bug == Bug::UnrepairedFailedReply {
            if reshapes {
                self.kept.clear();
            }
            let failed = outputs.iter().any(|o| {
                matches!(
                    o,
                    Output::TurnEnded {
                        outcome: TurnOutcome::Failed { .. }
                    }
                )
            });
            if let Some(m) = self.leftover.kept().filter(|_| failed) {
                self.kept.push((self.inner.history().len(), Arc::new(m)));
            }
            // A new request's reply starts from nothing, even one that fails before
            // its `message_start`.
            if failed || outputs.iter().any(|o| matches!(o, Output::Send { .. })) {
                self.leftover = super::repair::Leftover::default();
            }
        }
        if let (Bug::DispatchAfterCancel, true, Some(op)) =
            (self.bug, cancel_while_streaming, before.op())
        {
            // The calls whose blocks finished streaming run anyway.
            let calls: Vec<ToolCall> = self
                .inner
                .history()
                .get(kept_from..)
                .unwrap_or_default()
                .iter()
                .find(|m| m.role == Role::Assistant)
                .map(|m| {
                    m.blocks()
                        .iter()
                        .filter_map(|b| match b {
                            Block::ToolUse { id, name, input } => Some(ToolCall {
                                id: id.clone(),
                                name: name.clone(),
                                input: input.clone(),
                            }),
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            if !calls.is_empty() {
                outputs.push(Output::Dispatch { op, calls });
            }
        }
        if self.rewrites() {
            for o in outputs.iter_mut() {
                if let Output::Send { request, .. } = o {
                    request.messages = self.rewritten(&request.messages);
                    self.shift_breakpoints(&mut request.cache.breakpoints);
                }
            }
            self.refresh();
        }
        Ok(outputs)
    }

    fn history(&self) -> &[SharedMessage] {
        if self.rewrites() {
            &self.view
        } else {
            self.inner.history()
        }
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

/// The log as `CrashLosesDraft` reads it: without the streamed text of the reply in
/// progress. A log with a torn tail is left alone, so the truncation the restore asks
/// for still points into the real log.
pub(crate) fn restore_log(bug: Bug, log: &[u8]) -> Vec<u8> {
    if bug != Bug::CrashLosesDraft {
        return log.to_vec();
    }
    let Ok(decoded) = decode_log(log) else {
        return log.to_vec();
    };
    if decoded.valid_len != log.len() {
        return log.to_vec();
    }
    decoded
        .records
        .iter()
        .filter(|r| !matches!(r, Record::DraftText { .. }))
        .flat_map(encode_record)
        .collect()
}
