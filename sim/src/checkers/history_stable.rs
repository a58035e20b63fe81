//! `history_stable`: messages before a turn's baseline never change, except by an
//! explicit rewind or compaction.
//!
//! Those messages are what the user saw and what every cached prefix holds; a runtime
//! that edits them (a "fix-up" of an old turn, a recovery that rewrites instead of
//! appending) changes the past under the user and the cache.

use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use std::sync::Arc;
use turnsim_core::SharedMessage;

#[derive(Default)]
pub struct HistoryStable {
    frozen: Vec<SharedMessage>,
}

impl HistoryStable {
    /// Compares by pointer first; a message equal by bytes but a different allocation
    /// (after a restart every message is new) is adopted, so the next step compares by
    /// pointer again.
    fn verify(&mut self, history: &[SharedMessage]) -> Check {
        if history.len() < self.frozen.len() {
            return Err(format!(
                "the history shrank to {} messages below the {} of earlier turns",
                history.len(),
                self.frozen.len()
            ));
        }
        if same_allocations(&self.frozen, &history[..self.frozen.len()]) {
            return Ok(());
        }
        for (i, (a, b)) in self.frozen.iter_mut().zip(history).enumerate() {
            if Arc::ptr_eq(a, b) {
                continue;
            }
            if !same_json(a, b) {
                return Err(format!(
                    "message {i} of an earlier turn changed: was {}, now {}",
                    excerpt(&a.to_json()),
                    excerpt(&b.to_json())
                ));
            }
            *a = Arc::clone(b);
        }
        Ok(())
    }
}

/// Whether `a[i]` and `b[i]` are the very same allocation for every `i`: the verdict
/// at almost every step. Without an early exit per message, so the compiler compares
/// several addresses at once; a mismatch is rare and then the caller looks closer.
fn same_allocations(a: &[SharedMessage], b: &[SharedMessage]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .fold(true, |same, (x, y)| same & Arc::ptr_eq(x, y))
}

impl Checker for HistoryStable {
    fn invariant(&self) -> Invariant {
        Invariant::HistoryStable
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_STARTED | on::STEP | on::RESTARTED | on::RESET
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { baseline } => {
                let verdict = self.verify(ctx.history);
                let cut = (*baseline).min(ctx.history.len());
                // Refilled in place: the allocation is kept from turn to turn.
                self.frozen.clear();
                self.frozen.extend_from_slice(&ctx.history[..cut]);
                Some(verdict)
            }
            Event::Step | Event::Restarted { .. } => Some(self.verify(ctx.history)),
            Event::Reset(_) => {
                self.frozen.clear();
                self.frozen.extend_from_slice(ctx.history);
                None
            }
            _ => None,
        }
    }
}
