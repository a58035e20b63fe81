//! `thinking_intact`: every thinking block sent back is one the provider streamed,
//! signature and text byte for byte, every `redacted_thinking` block one whose
//! `block_stop` the provider streamed live, and no request ends on a thinking-only
//! assistant message.
//!
//! The provider verifies a thinking block by its signature: a block sent back without
//! it, or with its text altered (trimmed, re-encoded, merged), is refused, and since the
//! block stays in the history every later request of the session is refused too. A
//! request whose last message is an assistant message holding only thinking asks the
//! provider to continue from a thought, which it refuses as well.
//!
//! A `redacted_thinking` block carries its whole `data` in its `block_start`, so one cut
//! before its `block_stop` looks whole; but the provider never finished it, and an
//! engine keeps it only once it stopped (docs/spec.md §7, "Live cancel during a
//! stream"). Its data is filed at the `block_stop` the engine was streamed, so a block
//! kept from a reply cancelled, crashed or cut inside it was never filed.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use std::collections::{BTreeMap, BTreeSet};
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::{Block, Role};

#[derive(Default)]
pub struct ThinkingIntact {
    /// Every (thinking, signature) the provider streamed to completion in this run,
    /// by signature: a lookup compares signatures, which differ early, instead of
    /// whole thinking texts, and builds no owned key.
    streamed: BTreeMap<String, Vec<String>>,
    /// The data of every `redacted_thinking` block streamed live up to its
    /// `block_stop`.
    redacted: BTreeSet<String>,
    /// The redacted block of the live reply still open: its index and data (only one
    /// reply streams live at once, and its blocks stop in order).
    open_redacted: Option<(usize, String)>,
}

impl Checker for ThinkingIntact {
    fn invariant(&self) -> Invariant {
        Invariant::ThinkingIntact
    }

    fn events(&self) -> u32 {
        use super::on;
        on::THINKING_STREAMED | on::REQUEST | on::STREAMED
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
            Event::Streamed { event, .. } => {
                match event {
                    StreamEvent::MessageStart => self.open_redacted = None,
                    StreamEvent::BlockStart {
                        index,
                        block: BlockStart::RedactedThinking { data },
                    } => self.open_redacted = Some((*index, data.clone())),
                    StreamEvent::BlockStop { index } => {
                        if let Some((_, data)) =
                            self.open_redacted.take_if(|(open, _)| open == index)
                        {
                            self.redacted.insert(data);
                        }
                    }
                    _ => {}
                }
                None
            }
            Event::Request {
                op, request, seen, ..
            } => Some(judge(self, *op, request, *seen)),
            _ => None,
        }
    }
}

fn judge(
    this: &ThinkingIntact,
    op: turnsim_core::OperationId,
    request: &turnsim_core::Request,
    seen: usize,
) -> Check {
    let streamed = &this.streamed;
    for (i, m) in request.messages.iter().enumerate().skip(seen) {
        for (j, b) in m.blocks().iter().enumerate() {
            if let Block::RedactedThinking { data } = b
                && !this.redacted.contains(data.as_str())
            {
                return Err(format!(
                    "request {op}: message {i}, block {j} is a redacted_thinking block whose block_stop the provider never streamed (data {})",
                    excerpt(data)
                ));
            }
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
