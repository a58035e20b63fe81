//! `logical_order`: tool results answer their calls in call order, whatever order the
//! tools finished in.
//!
//! Parallel tools finish in whatever order their latencies give. An engine that
//! appends results as they complete sends a history whose bytes depend on timing: the
//! same conversation replayed gets different bytes, so the prompt cache misses and a
//! recorded session no longer reproduces. The canonical rebuild of a request lists
//! the results answering each batch of calls (in one message, or split over the user
//! messages before the next reply, as a runtime that appends one message per
//! finished tool writes them) in the order of the calls they answer; the request must
//! equal it.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::{Block, Role};

pub struct LogicalOrder;

impl Checker for LogicalOrder {
    fn invariant(&self) -> Invariant {
        Invariant::LogicalOrder
    }

    fn events(&self) -> u32 {
        use super::on;
        on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request {
            op, request, seen, ..
        } = event
        else {
            return None;
        };
        let messages = &request.messages;
        // A batch whose answers reach past the judged prefix is judged again: an
        // answer may be new. Its calls sit in the last assistant message before it.
        let from = messages[..(*seen).min(messages.len())]
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .unwrap_or(0);
        for i in from..messages.len() {
            let call_msg = &messages[i];
            if call_msg.role != Role::Assistant {
                continue;
            }
            let call_ids = || {
                call_msg.blocks().iter().filter_map(|b| match b {
                    Block::ToolUse { id, .. } => Some(id.as_str()),
                    _ => None,
                })
            };
            // Counted before anything is gathered: most messages ask one call or none.
            if call_ids().nth(1).is_none() {
                continue;
            }
            let calls: Vec<&str> = call_ids().collect();
            // The rebuild: every result up to the next assistant message, whether the
            // engine wrote them as one message or one per result, in call order.
            let region = messages[i + 1..]
                .iter()
                .take_while(|m| m.role == Role::User)
                .count();
            let answered: Vec<&str> = messages[i + 1..i + 1 + region]
                .iter()
                .flat_map(|m| m.blocks())
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
                let by = if region == 1 {
                    format!("message {} answers", i + 1)
                } else {
                    format!("messages {}..={} answer", i + 1, i + region)
                };
                return Some(Err(format!(
                    "request {op}: {by} the calls of message {i} in the order {} instead of the call order {}",
                    answered.join(", "),
                    canonical.join(", ")
                )));
            }
        }
        Some(Ok(()))
    }
}
