//! `no_lost_observation`: the user's prompt and every tool result the engine saved
//! survive failure and restart.
//!
//! A prompt the runtime acknowledged and then lost is a user's instruction silently
//! dropped; a lost result makes the model redo work whose effects already happened.

use super::{Check, Checker, Ctx, Event, Invariant, Observation, excerpt};
use turnsim_core::request::directive_words;
use turnsim_core::{Block, SharedMessage};

#[derive(Default)]
pub struct NoLostObservation {
    kept: Vec<Observation>,
}

fn present(history: &[SharedMessage], o: &Observation) -> bool {
    match o {
        Observation::Prompt { words } => history.iter().any(|m| directive_words(m) == Some(words)),
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

impl Checker for NoLostObservation {
    fn invariant(&self) -> Invariant {
        Invariant::NoLostObservation
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Observed(o) => {
                self.kept.push(o.clone());
                None
            }
            Event::Reset(_) => {
                // A rewind or compaction drops observations on purpose.
                self.kept.retain(|o| present(ctx.history, o));
                None
            }
            Event::Restarted { .. } | Event::LivenessEnd { .. } => {
                Some(match self.kept.iter().find(|o| !present(ctx.history, o)) {
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
                })
            }
            _ => None,
        }
    }
}
