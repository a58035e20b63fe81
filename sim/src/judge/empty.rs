//! Rule `empty`: no empty user message and no empty text block (spec §2 rule 4; an
//! empty assistant message is reported by [`super::pairing`] under this same rule,
//! because `validate_history` finds it).
//!
//! Guarantee: the same test the simulator's `pairing` checker applies
//! (`checkers::pairing::empty_part`), so a real request and a simulated one are held
//! to one definition of empty: the provider rejects both.

use super::finding::{Finding, Findings, Place, Severity};
use super::view::Located;
use crate::checkers::pairing::{EmptyPart, empty_part};

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
