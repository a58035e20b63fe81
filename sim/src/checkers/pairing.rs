//! `pairing`: every request is one the provider accepts (spec §2).
//!
//! The real API rejects a request with an orphaned `tool_use`, an orphaned or
//! misplaced `tool_result`, an empty assistant message, a duplicate id, or an empty
//! text block, and then rejects every later request of the session too, so one
//! violation here ends a user's session.

use super::{Check, Checker, Ctx, Event};
use turnsim_core::{Block, Role, validate_history};

pub struct Pairing;

impl Checker for Pairing {
    fn name(&self) -> &'static str {
        "pairing"
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request { op, request, .. } = event else {
            return None;
        };
        if let Err(e) = validate_history(&request.messages) {
            return Some(Err(format!("request {op} would be rejected: {e}")));
        }
        for (i, m) in request.messages.iter().enumerate() {
            if m.role == Role::User && m.is_empty() {
                return Some(Err(format!(
                    "request {op}: message {i} is an empty user message"
                )));
            }
            for (j, b) in m.blocks().iter().enumerate() {
                if matches!(b, Block::Text { text } if text.is_empty()) {
                    return Some(Err(format!(
                        "request {op}: message {i}, block {j} is an empty text block"
                    )));
                }
            }
        }
        Some(Ok(()))
    }
}
