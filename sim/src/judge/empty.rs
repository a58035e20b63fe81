//! Rule `empty`: no empty user message and no empty text block (spec §2 rule 4;
//! rows `content_non_empty` and `text_non_empty` of [`super::rules::table::RULES`]).
//! An empty assistant message is reported by [`super::pairing`] under this same rule,
//! because the judge's walk ([`super::rules::walk`]) finds it: only there is it known
//! whether the message is a request's last, where the API allows it.
//!
//! Guarantee: the simulator's `pairing` checker applies this same test
//! ([`empty_part`]), so a real request and a simulated one are held
//! to one definition of empty: the provider rejects both.

use super::finding::{Finding, Findings, Place, Severity};
use super::view::Located;
use turnsim_core::{Block, Message, Role};

/// Reports the empty part of message `i`, if any.
pub fn check(i: usize, m: &Located, place: &Place, out: &mut Findings) {
    let msg = &m.message;
    let (block, kind, detail) = match empty_part(msg) {
        Some(EmptyPart::UserMessage) => (
            None,
            "empty_user_message",
            format!("message {i}: user message has empty content"),
        ),
        Some(EmptyPart::TextBlock(j)) => (
            Some(j),
            "empty_text_block",
            format!("message {i}, block {j}: text block is empty"),
        ),
        None => return,
    };
    let at = Place {
        line: Some(m.line_of(block)),
        message: Some(i),
        block,
        ..place.clone()
    };
    out.push(
        Finding::new(Severity::Violation, "empty", kind, at, detail).with_excerpt(&msg.to_json()),
    );
}

/// What of a message the provider rejects as empty, besides an empty assistant
/// message (which the judge's walk reports). The simulator's `pairing` checker calls
/// it too, so a real transcript is judged by the same rule as a simulated request.
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
