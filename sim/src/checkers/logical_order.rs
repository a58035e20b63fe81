//! `logical_order`: tool results answer their calls in call order, whatever order the
//! tools finished in.
//!
//! Parallel tools finish in whatever order their latencies give. An engine that
//! appends results as they complete sends a history whose bytes depend on timing: the
//! same conversation replayed gets different bytes, so the prompt cache misses and a
//! recorded session no longer reproduces. The canonical rebuild of a request lists
//! every results message's results in the order of the calls they answer; the request
//! must equal it.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::{Block, Role};

pub struct LogicalOrder;

impl Checker for LogicalOrder {
    fn invariant(&self) -> Invariant {
        Invariant::LogicalOrder
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request {
            op, request, seen, ..
        } = event
        else {
            return None;
        };
        let messages = &request.messages;
        // A pair straddling the judged prefix is judged again: its answer may be new.
        for i in seen.saturating_sub(1)..messages.len().saturating_sub(1) {
            let (call_msg, answer) = (&messages[i], &messages[i + 1]);
            if call_msg.role != Role::Assistant || answer.role != Role::User {
                continue;
            }
            let calls: Vec<&str> = call_msg
                .blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, .. } => Some(id.as_str()),
                    _ => None,
                })
                .collect();
            if calls.len() < 2 {
                continue;
            }
            let answered: Vec<&str> = answer
                .blocks()
                .iter()
                .filter_map(|b| match b {
                    Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
                .collect();
            let canonical: Vec<&str> = calls
                .iter()
                .copied()
                .filter(|id| answered.contains(id))
                .collect();
            if answered.len() == canonical.len() && answered != canonical {
                return Some(Err(format!(
                    "request {op}: message {} answers the calls of message {i} in the order {} instead of the call order {}",
                    i + 1,
                    answered.join(", "),
                    canonical.join(", ")
                )));
            }
        }
        Some(Ok(()))
    }
}
