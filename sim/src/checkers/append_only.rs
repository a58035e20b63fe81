//! `append_only`: within a turn, each request's `system`, `tools` and earlier messages
//! are byte-identical to the previous request's (docs/spec.md §8).
//!
//! The provider's prompt cache keys on those bytes; a changed byte early in the prefix
//! silently turns every later step of the turn into a full-price, slower request.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use std::sync::Arc;
use turnsim_core::{OperationId, Request, SharedMessage};

#[derive(Default)]
pub struct AppendOnly {
    previous: Option<(OperationId, Request)>,
}

/// Same `system` and the same `tools` allocation are the same bytes; anything else is
/// compared as serialized JSON, so a reordered schema key is caught.
fn same_prefix(a: &Request, b: &Request) -> bool {
    (a.system == b.system && Arc::ptr_eq(&a.tools, &b.tools)) || a.prefix_json() == b.prefix_json()
}

fn same(a: &SharedMessage, b: &SharedMessage) -> bool {
    Arc::ptr_eq(a, b) || a.to_json() == b.to_json()
}

impl Checker for AppendOnly {
    fn invariant(&self) -> Invariant {
        Invariant::AppendOnly
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_STARTED | on::TURN_ENDED | on::RESTARTED | on::RESET | on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { .. }
            | Event::TurnEnded
            | Event::Restarted { .. }
            | Event::Reset(_) => {
                self.previous = None;
                None
            }
            Event::Request { op, request, .. } => {
                let mut verdict = Ok(());
                if let Some((prev_op, prev)) = &self.previous {
                    let prev_messages = &prev.messages;
                    if !same_prefix(prev, request) {
                        verdict = Err(format!(
                            "request {op}: system or tools differ from request {prev_op}"
                        ));
                    } else if request.messages.len() < prev_messages.len() {
                        verdict = Err(format!(
                            "request {op} has {} messages, fewer than the {} of request {prev_op}",
                            request.messages.len(),
                            prev_messages.len()
                        ));
                    } else if let Some(i) = (0..prev_messages.len())
                        .find(|&i| !same(&prev_messages[i], &request.messages[i]))
                    {
                        verdict = Err(format!(
                            "request {op}: message {i} differs from request {prev_op}: was {}, now {}",
                            excerpt(&prev_messages[i].to_json()),
                            excerpt(&request.messages[i].to_json())
                        ));
                    }
                }
                self.previous = Some((*op, (*request).clone()));
                Some(verdict)
            }
            _ => None,
        }
    }
}
