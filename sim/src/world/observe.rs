//! The world's own observations around an interruption: a cancel the engine accepted,
//! a crash with the tools it cut off, and how the engine said the turn ended.
//!
//! Guarantee: each observation is taken from the world's side (the tool ledger, the
//! output list being carried out, the faults it injected), never from the engine's
//! report of itself, and costs nothing on a step without a cancel, a crash or a turn
//! end: no history is copied, the ledger is read only at those moments.

use super::*;
use turnsim_core::log::TurnOutcome;

/// Fault kinds that may legitimately fail a turn (with the replies
/// [`World::observe_declined`] counts):
/// the provider broke or a tool did
/// (`tool_stop_other` includes a stream cut after a finished tool call; `max_tokens_cut`
/// can leave a tool call's input JSON unfinished, which no engine may run).
pub const TURN_FAILING_FAULTS: [FaultKind; 8] = [
    FaultKind::ProviderErrorBefore,
    FaultKind::ProviderErrorMid,
    FaultKind::Hang,
    FaultKind::ToolError,
    FaultKind::ToolEmpty,
    FaultKind::ToolCancel,
    FaultKind::ToolStopOther,
    FaultKind::MaxTokensCut,
];

impl World<'_> {
    /// Delivers a live cancel into an open turn; once the engine accepts it the
    /// checkers hear of it before any of its outputs is carried out.
    pub(super) fn cancel_live(&mut self, cause: CancelCause) -> Step {
        let running = self.ledger.running();
        let live = self.outstanding.map(|(op, _)| op);
        match self.call(Input::Cancel { cause })? {
            Ok(outputs) => {
                let left_running = live.filter(|op| {
                    !outputs
                        .iter()
                        .any(|o| matches!(o, Output::Abort { op: a } if a == op))
                });
                self.ctx_check(Event::CancelAccepted {
                    cause,
                    running: &running,
                    left_running,
                })?;
                self.execute(outputs)?;
            }
            Err(refusal) => self.note(|| format!("refused: {refusal}")),
        }
        Ok(())
    }

    /// Called as the process dies, before the ledger marks anything cut off.
    pub(super) fn observe_crash(&mut self) -> Step {
        let running = self.ledger.running();
        let turn_end_in_flight = std::mem::take(&mut self.crash_cuts_turn_end);
        self.ctx_check(Event::Crashed {
            running: &running,
            turn_end_in_flight,
        })
    }

    /// Counts a planned reply an engine may fail its turn for though the world injected
    /// no fault: one that ends with a refusal (the provider declined, and the API's
    /// advice is to reset the context after one); one that finished with blank text
    /// alone and no call (nothing in it the API takes back, so an engine that drops the
    /// blank text holds an empty reply, docs/spec.md §7 "Blank text"); and one that
    /// starts a block twice or streams a delta after its block's stop (a malformed
    /// stream, failed whole); and one whose calls
    /// carry one id twice (the `shared call id` shape: a result could not say which
    /// call it answers, so refusing the reply is as sound as renaming one, and
    /// pydantic-ai refuses it). They count with the turn-failing faults.
    pub(super) fn observe_declined(&mut self, events: &[(u64, StreamEvent)]) {
        self.declined += u64::from(declines(events));
    }

    pub(super) fn observe_turn_outcome(&mut self, outcome: &TurnOutcome) -> Step {
        let injected = TURN_FAILING_FAULTS
            .iter()
            .map(|k| self.faults.get(k).copied().unwrap_or(0))
            .sum::<u64>()
            + self.declined;
        self.ctx_check(Event::TurnOutcome { outcome, injected })
    }
}

/// Whether a planned reply is one [`World::observe_declined`] counts.
fn declines(events: &[(u64, StreamEvent)]) -> bool {
    let (mut refused, mut whole, mut texts, mut visible, mut calls) =
        (false, false, false, false, false);
    let mut ids: Vec<&str> = Vec::new();
    let mut shared = false;
    for (_, e) in events {
        match e {
            StreamEvent::MessageDelta { stop_reason, .. } => {
                refused = *stop_reason == turnsim_core::StopReason::Refusal;
            }
            StreamEvent::BlockStart { block, .. } => match block {
                turnsim_core::BlockStart::Text => texts = true,
                turnsim_core::BlockStart::ToolUse { id, .. } => {
                    calls = true;
                    shared |= ids.contains(&id.as_str());
                    ids.push(id);
                }
                _ => {}
            },
            StreamEvent::TextDelta { text, .. } => visible |= !text.trim().is_empty(),
            StreamEvent::MessageStop => whole = true,
            _ => {}
        }
    }
    let blank = whole && texts && !visible && !calls;
    let malformed = crate::provider::malformed(events);
    refused || blank || malformed || shared
}

#[cfg(test)]
mod tests {
    use super::declines;
    use turnsim_core::{BlockStart, StopReason, StreamEvent, Usage};

    /// A finished reply of one call per id given, in order.
    fn calls(ids: &[&str]) -> Vec<(u64, StreamEvent)> {
        let mut events = vec![StreamEvent::MessageStart];
        for (index, id) in ids.iter().enumerate() {
            events.push(StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse {
                    id: (*id).into(),
                    name: "read_file".into(),
                },
            });
            events.push(StreamEvent::InputJsonDelta {
                index,
                partial_json: "{}".into(),
            });
            events.push(StreamEvent::BlockStop { index });
        }
        events.push(StreamEvent::MessageDelta {
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        });
        events.push(StreamEvent::MessageStop);
        events.into_iter().map(|e| (0, e)).collect()
    }

    #[test]
    fn a_reply_whose_calls_share_one_id_may_fail_its_turn_and_one_of_distinct_ids_may_not() {
        assert!(declines(&calls(&["exec_0", "exec_0"])));
        assert!(declines(&calls(&["exec_0", "exec_1", "exec_0"])));
        assert!(!declines(&calls(&["exec_0", "exec_1"])));
        assert!(!declines(&calls(&["exec_0"])));
    }
}
