//! `append_only`: within a turn, each request's `system`, `tools` and earlier messages
//! are byte-identical to the previous request's (docs/spec.md §8).
//!
//! The provider's prompt cache keys on those bytes; a changed byte early in the prefix
//! silently turns every later step of the turn into a full-price, slower request.

use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::finding::where_differ;
use std::sync::Arc;
use turnsim_core::{CacheHints, OperationId, Request, SharedMessage, ToolSpec};

/// What the checker keeps of the turn's previous request: its prefix and messages,
/// refilled in place at each request (a copy of the whole request per request, with
/// its cache hints, was most of this checker's cost).
#[derive(Default)]
pub struct AppendOnly {
    /// The previous request of this turn, when there is one.
    previous: Option<OperationId>,
    system: String,
    /// Kept alive here, so an address equal to it is the same allocation.
    tools: Option<Arc<[ToolSpec]>>,
    messages: Vec<SharedMessage>,
}

/// Same `system` and the same `tools` allocation are the same bytes; anything else is
/// compared as serialized JSON, so a reordered schema key is caught.
fn same_prefix(system: &str, tools: &Arc<[ToolSpec]>, b: &Request) -> bool {
    if system == b.system && Arc::ptr_eq(tools, &b.tools) {
        return true;
    }
    // Rare (a new allocation of the tools, or another system): the kept prefix is put
    // back in a request so it is serialized exactly as `Request::prefix_json` does.
    let kept = Request {
        system: system.to_owned(),
        tools: Arc::clone(tools),
        thinking: None,
        messages: Vec::new(),
        cache: CacheHints {
            session_key: String::new(),
            breakpoints: Vec::new(),
        },
    };
    kept.prefix_json() == b.prefix_json()
}

fn same(a: &SharedMessage, b: &SharedMessage) -> bool {
    Arc::ptr_eq(a, b) || same_json(a, b)
}

impl AppendOnly {
    fn forget(&mut self) {
        self.previous = None;
        // The messages are let go (not kept alive past their turn); the allocation stays.
        self.messages.clear();
    }

    fn judge(&self, op: OperationId, request: &Request) -> Check {
        let (Some(prev_op), Some(tools)) = (self.previous, &self.tools) else {
            return Ok(());
        };
        let prev_messages = &self.messages;
        if !same_prefix(&self.system, tools, request) {
            return Err(format!(
                "request {op}: system or tools differ from request {prev_op}"
            ));
        }
        if request.messages.len() < prev_messages.len() {
            return Err(format!(
                "request {op} has {} messages, fewer than the {} of request {prev_op}",
                request.messages.len(),
                prev_messages.len()
            ));
        }
        if let Some(i) =
            (0..prev_messages.len()).find(|&i| !same(&prev_messages[i], &request.messages[i]))
        {
            return Err(format!(
                "request {op}: message {i} differs from request {prev_op} {}",
                where_differ(&prev_messages[i].to_json(), &request.messages[i].to_json())
            ));
        }
        Ok(())
    }
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
                self.forget();
                None
            }
            Event::Request { op, request, .. } => {
                let verdict = self.judge(*op, request);
                self.previous = Some(*op);
                self.system.clone_from(&request.system);
                self.tools = Some(Arc::clone(&request.tools));
                self.messages.clone_from(&request.messages);
                Some(verdict)
            }
            _ => None,
        }
    }
}
