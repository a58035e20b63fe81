//! `quiet_after_cancel`: once the engine accepts a cancel, it aborts the stream or the
//! tools in flight, dispatches no tool and sends no request until the next prompt, and
//! the turn ends cancelled (issue 17, item 3; issue 25, part 5).
//!
//! A cancel is the user's brake. An engine that checks it only between rounds runs the
//! tool calls whose blocks had already streamed, or asks the model once more, after
//! the user said stop: a file written or a command run against the user's will. A
//! crash after the cancel may end the turn as crashed instead, since the log may have
//! lost the cancel; it may not end it any other way.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::log::TurnOutcome;

#[derive(Default)]
pub struct QuietAfterCancel {
    /// The cause of the cancel accepted in the open turn, until the next prompt.
    cancelled: Option<turnsim_core::CancelCause>,
}

impl Checker for QuietAfterCancel {
    fn invariant(&self) -> Invariant {
        Invariant::QuietAfterCancel
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_STARTED | on::CANCEL_ACCEPTED | on::REQUEST | on::DISPATCHED | on::TURN_OUTCOME
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { .. } => {
                self.cancelled = None;
                None
            }
            Event::CancelAccepted {
                cause,
                left_running,
                ..
            } => {
                self.cancelled.get_or_insert(*cause);
                // A cancel stops what runs: the stream or the tools in flight are
                // aborted with it, not left to finish their effects unseen.
                Some(match left_running {
                    None => Ok(()),
                    Some(op) => Err(format!(
                        "a cancel ({cause:?}) was accepted but {op}, whose stream or tools were running, was not aborted: it runs on after the user said stop"
                    )),
                })
            }
            Event::Request { op, .. } => {
                let cause = self.cancelled?;
                Some(Err(format!(
                    "request {op} was sent after a cancel ({cause:?}) was accepted"
                )))
            }
            Event::Dispatched { op, call, .. } => {
                let cause = self.cancelled?;
                Some(Err(format!(
                    "tool {} ({}) was dispatched for {op} after a cancel ({cause:?}) was accepted",
                    call.id, call.name
                )))
            }
            Event::TurnOutcome { outcome, .. } => {
                let cause = self.cancelled?;
                Some(match outcome {
                    TurnOutcome::Cancelled { .. } | TurnOutcome::Crashed => Ok(()),
                    other => Err(format!(
                        "the turn ended {other:?} after a cancel ({cause:?}) was accepted"
                    )),
                })
            }
            _ => None,
        }
    }
}
