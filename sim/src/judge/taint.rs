//! Rule `model_text`: model-written text in a user message outside a `tool_result`.
//!
//! Guarantee: the simulated provider marks every text it writes with
//! [`crate::provider::MODEL_TAINT`]; a user message that carries the mark outside a
//! tool result holds words the model wrote and the user never did. Only the
//! simulated model carries the mark, so this is information about a client driven by
//! `turnsim serve` (a client may legitimately quote the model, e.g. in a summary),
//! and silent on any other traffic.

use super::finding::{Finding, Findings, Place, Severity};
use super::view::Located;
use crate::provider::MODEL_TAINT;
use turnsim_core::{Block, Role};

/// Reports the mark in user message `i`, once per message.
pub fn check(i: usize, m: &Located, place: &Place, out: &mut Findings) {
    if m.message.role != Role::User {
        return;
    }
    let leaked = match m.message.string_content() {
        Some(t) => t.contains(MODEL_TAINT),
        None => m
            .message
            .blocks()
            .iter()
            .any(|b| matches!(b, Block::Text { text } if text.contains(MODEL_TAINT))),
    };
    if leaked {
        out.push(Finding::new(
            Severity::Info,
            "model_text",
            "in_user_message",
            Place {
                line: Some(m.line),
                message: Some(i),
                ..place.clone()
            },
            format!(
                "message {i}: model-written text (it carries {MODEL_TAINT}) in a user message outside a tool_result"
            ),
        ));
    }
}
