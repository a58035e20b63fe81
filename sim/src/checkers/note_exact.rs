//! `note_exact`: every user-role text the runtime writes is exactly a marker, a
//! tool-in-flight note, a directive of the user's own words, or another fixed text of
//! the engine, and carries no model-written text (docs/spec.md §5, §8).
//!
//! A user-role message is what the model trusts most; model-controlled text copied
//! into one (a tool name, a reply) is a prompt injection the runtime performed itself.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use crate::provider::MODEL_TAINT;
use turnsim_core::request::{TURN_CONTEXT_OPEN, directive_words};
use turnsim_core::{Block, Role, is_interruption_marker, tool_in_flight_note_label};

pub struct NoteExact;

impl Checker for NoteExact {
    fn invariant(&self) -> Invariant {
        Invariant::NoteExact
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request { op, request, seen } = event else {
            return None;
        };
        for (i, m) in request.messages.iter().enumerate().skip(*seen) {
            if m.role != Role::User {
                continue;
            }
            if let Some(s) = m.string_content() {
                let known = is_interruption_marker(s)
                    || tool_in_flight_note_label(s).is_some()
                    || ctx.fixed_texts.iter().any(|t| t == s);
                if !known {
                    return Some(Err(format!(
                        "request {op}: message {i} is user text the user never wrote and the engine may not author: {}",
                        excerpt(s)
                    )));
                }
                continue;
            }
            if let Some(words) = directive_words(m) {
                if !ctx.prompts.iter().any(|p| p == words) {
                    return Some(Err(format!(
                        "request {op}: message {i} is a directive whose words the user never sent: {}",
                        excerpt(words)
                    )));
                }
                if let Some(Block::Text { text }) = m.blocks().first()
                    && text.contains(MODEL_TAINT)
                {
                    return Some(Err(format!(
                        "request {op}: message {i}: the turn context carries model-written text: {}",
                        excerpt(text)
                    )));
                }
                continue;
            }
            for (j, b) in m.blocks().iter().enumerate() {
                if let Block::Text { text } = b {
                    if text.starts_with(TURN_CONTEXT_OPEN) {
                        return Some(Err(format!(
                            "request {op}: message {i}, block {j}: a turn context outside its directive"
                        )));
                    }
                    if text.contains(MODEL_TAINT) {
                        return Some(Err(format!(
                            "request {op}: message {i}, block {j}: model-written text in a user message: {}",
                            excerpt(text)
                        )));
                    }
                }
            }
        }
        Some(Ok(()))
    }
}
