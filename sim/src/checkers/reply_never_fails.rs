//! `reply_never_fails`: a turn ends failed only after the world injected a provider
//! or tool fault during it (issue 17, item 9).
//!
//! A well-formed reply the engine cannot handle (parallel calls, an empty text block,
//! a stop reason it did not expect) is the engine's bug, yet a failed turn looks like
//! an ordinary provider hiccup to the user and to `liveness`, which accepts any end.
//! The world knows what it broke, so any other failure is the engine's own.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use turnsim_core::log::TurnOutcome;

#[derive(Default)]
pub struct ReplyNeverFails {
    /// Faults injected up to the end of the previous turn.
    injected_before: u64,
}

impl Checker for ReplyNeverFails {
    fn invariant(&self) -> Invariant {
        Invariant::ReplyNeverFails
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_OUTCOME
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::TurnOutcome { outcome, injected } = event else {
            return None;
        };
        // Provider and tool faults happen only while a turn is open, so the ones
        // injected since the previous turn ended are this turn's.
        let fresh = *injected > self.injected_before;
        self.injected_before = *injected;
        Some(match outcome {
            TurnOutcome::Failed { reason } if !fresh => Err(format!(
                "the turn failed ({}) though the world injected no provider or tool fault in it",
                excerpt(reason)
            )),
            _ => Ok(()),
        })
    }
}
