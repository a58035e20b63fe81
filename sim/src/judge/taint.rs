//! Rule `model_text`: model-written text in a user message outside a `tool_result`.
//!
//! Guarantee: turnsim's simulated models (the simulator's provider and `turnsim
//! serve`) mark every text they write with [`MODEL_MARK`], which this file defines
//! and they import; a user message that carries the mark outside a
//! tool result holds words the model wrote and the user never did. Only the
//! simulated model carries the mark, so this is information about a client driven by
//! `turnsim serve` (a client may legitimately quote the model, e.g. in a summary),
//! and silent on any other traffic.

use super::finding::{Finding, Findings, Place, Severity};
use super::view::Located;
use turnsim_core::{Block, Role};

/// A token present in every piece of model-written text turnsim's simulated models
/// produce. Defined by the judge, which gives it its meaning; the models take it from
/// here, so no change to a model can change what the judge says of other traffic.
pub const MODEL_MARK: &str = "§model§";

/// Reports the mark in user message `i`, once per message.
pub fn check(i: usize, m: &Located, place: &Place, out: &mut Findings) {
    if m.message.role != Role::User {
        return;
    }
    let leaked = match m.message.string_content() {
        Some(t) => t.contains(MODEL_MARK),
        None => m
            .message
            .blocks()
            .iter()
            .any(|b| matches!(b, Block::Text { text } if text.contains(MODEL_MARK))),
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
                "message {i}: model-written text (it carries {MODEL_MARK}) in a user message outside a tool_result"
            ),
        ));
    }
}
