//! `pairing`: every request is one the provider accepts (docs/spec.md §2).
//!
//! The real API rejects a request with an orphaned `tool_use`, an orphaned or
//! misplaced `tool_result`, an empty assistant message, a duplicate id, or an empty
//! text block, and then rejects every later request of the session too, so one
//! violation here ends a user's session.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::{Block, Message, Role, validate_history};

pub struct Pairing;

impl Checker for Pairing {
    fn invariant(&self) -> Invariant {
        Invariant::Pairing
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request { op, request, .. } = event else {
            return None;
        };
        if let Err(e) = validate_history(&request.messages) {
            return Some(Err(format!("request {op} would be rejected: {e}")));
        }
        for (i, m) in request.messages.iter().enumerate() {
            match empty_part(m) {
                Some(EmptyPart::UserMessage) => {
                    return Some(Err(format!(
                        "request {op}: message {i} is an empty user message"
                    )));
                }
                Some(EmptyPart::TextBlock(j)) => {
                    return Some(Err(format!(
                        "request {op}: message {i}, block {j} is an empty text block"
                    )));
                }
                None => {}
            }
        }
        Some(Ok(()))
    }
}

/// What of a message the provider rejects as empty, besides an empty assistant
/// message (which `validate_history` reports). Shared with `turnsim check`, so a real
/// transcript is judged by the same rule as a simulated request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyPart {
    /// A user message with content `""` or `[]`.
    UserMessage,
    /// A text block with `""` as its text, at this block index.
    TextBlock(usize),
}

/// The first empty part of `m`, if any.
pub fn empty_part(m: &Message) -> Option<EmptyPart> {
    if m.role == Role::User && m.is_empty() {
        return Some(EmptyPart::UserMessage);
    }
    m.blocks()
        .iter()
        .position(|b| matches!(b, Block::Text { text } if text.is_empty()))
        .map(EmptyPart::TextBlock)
}
