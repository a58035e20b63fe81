//! `no_lost_observation` (generic): the user's prompt and every tool result the
//! engine saved survive failure and restart.
//!
//! A prompt the runtime acknowledged and then lost is a user's instruction silently
//! dropped; a lost result makes the model redo work whose effects already happened.
//! Where a prompt sits in a message is the engine's convention, so finding it asks
//! the profile ([`Conventions::holds_prompt`]); with none, the words must be the
//! whole of some text of a user message, which any wrapping that keeps them keeps.

use std::sync::Arc;

use super::{Check, Checker, Ctx, Event, Invariant, Observation, excerpt};
use crate::conventions::Conventions;
use turnsim_core::{Block, SharedMessage};

pub struct NoLostObservation {
    conventions: Arc<Conventions>,
    kept: Vec<Observation>,
}

impl NoLostObservation {
    pub fn new(conventions: Arc<Conventions>) -> NoLostObservation {
        NoLostObservation {
            conventions,
            kept: Vec::new(),
        }
    }

    fn present(&self, history: &[SharedMessage], o: &Observation) -> bool {
        match o {
            Observation::Prompt { words } => self.conventions.holds_prompt(history, words),
            Observation::ToolResult {
                tool_use_id,
                content,
            } => history.iter().any(|m| {
                m.blocks().iter().any(|b| {
                    matches!(b, Block::ToolResult { tool_use_id: id, content: c, .. }
                        if id == tool_use_id && c.text() == *content)
                })
            }),
        }
    }
}

impl Checker for NoLostObservation {
    fn invariant(&self) -> Invariant {
        Invariant::NoLostObservation
    }

    fn events(&self) -> u32 {
        use super::on;
        on::OBSERVED | on::RESET | on::RESTARTED | on::LIVENESS_END
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Observed(o) => {
                self.kept.push(o.clone());
                None
            }
            Event::Reset(_) => {
                // A rewind or compaction drops observations on purpose.
                let kept = std::mem::take(&mut self.kept);
                self.kept = kept
                    .into_iter()
                    .filter(|o| self.present(ctx.history, o))
                    .collect();
                None
            }
            Event::Restarted { .. } | Event::LivenessEnd { .. } => Some(
                match self.kept.iter().find(|o| !self.present(ctx.history, o)) {
                    None => Ok(()),
                    Some(Observation::Prompt { words }) => Err(format!(
                        "the acknowledged prompt {} is gone",
                        excerpt(words)
                    )),
                    Some(Observation::ToolResult {
                        tool_use_id,
                        content,
                    }) => Err(format!(
                        "the saved result of {tool_use_id} ({}) is gone",
                        excerpt(content)
                    )),
                },
            ),
            _ => None,
        }
    }
}
