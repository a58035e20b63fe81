//! `thinking_intact`: every thinking block sent back is one the provider streamed,
//! signature and text byte for byte, and no request ends on a thinking-only assistant
//! message.
//!
//! The provider verifies a thinking block by its signature: a block sent back without
//! it, or with its text altered (trimmed, re-encoded, merged), is refused, and since the
//! block stays in the history every later request of the session is refused too. A
//! request whose last message is an assistant message holding only thinking asks the
//! provider to continue from a thought, which it refuses as well.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use std::collections::BTreeMap;
use turnsim_core::{Block, Role};

#[derive(Default)]
pub struct ThinkingIntact {
    /// Every (thinking, signature) the provider streamed to completion in this run,
    /// by signature: a lookup compares signatures, which differ early, instead of
    /// whole thinking texts, and builds no owned key.
    streamed: BTreeMap<String, Vec<String>>,
}

impl Checker for ThinkingIntact {
    fn invariant(&self) -> Invariant {
        Invariant::ThinkingIntact
    }

    fn events(&self) -> u32 {
        use super::on;
        on::THINKING_STREAMED | on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::ThinkingStreamed {
                thinking,
                signature,
            } => {
                let texts = self.streamed.entry((*signature).to_owned()).or_default();
                if !texts.iter().any(|t| t == thinking) {
                    texts.push((*thinking).to_owned());
                }
                None
            }
            Event::Request {
                op, request, seen, ..
            } => Some(judge(&self.streamed, *op, request, *seen)),
            _ => None,
        }
    }
}

fn judge(
    streamed: &BTreeMap<String, Vec<String>>,
    op: turnsim_core::OperationId,
    request: &turnsim_core::Request,
    seen: usize,
) -> Check {
    for (i, m) in request.messages.iter().enumerate().skip(seen) {
        for (j, b) in m.blocks().iter().enumerate() {
            let Block::Thinking {
                thinking,
                signature,
            } = b
            else {
                continue;
            };
            if signature.is_empty() {
                return Err(format!(
                    "request {op}: message {i}, block {j} is a thinking block without its signature"
                ));
            }
            let was_streamed = streamed
                .get(signature.as_str())
                .is_some_and(|texts| texts.iter().any(|t| t == thinking));
            if !was_streamed {
                return Err(format!(
                    "request {op}: message {i}, block {j} is a thinking block the provider never streamed (signature {signature:?}, text {})",
                    excerpt(thinking)
                ));
            }
        }
    }
    if let Some(last) = request.messages.last()
        && last.role == Role::Assistant
        && !last.blocks().is_empty()
        && last
            .blocks()
            .iter()
            .all(|b| matches!(b, Block::Thinking { .. } | Block::RedactedThinking { .. }))
    {
        return Err(format!(
            "request {op}: the last message is an assistant message holding only thinking"
        ));
    }
    Ok(())
}
