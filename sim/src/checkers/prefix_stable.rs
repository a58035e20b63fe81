//! `prefix_stable`: the cached prefix (`system` + `tools`) stays byte-identical from one
//! request to the next, across turns too, unless the host reconfigured the session or
//! it was restored in between.
//!
//! `append_only` judges a turn alone; a prefix that changes at every turn (a date, a
//! turn counter, a re-ordered tool list rebuilt per prompt) passes it while every first
//! request of a turn pays the full price of an uncached prompt. Only the host may
//! change the prefix, and then once.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use std::sync::Arc;
use turnsim_core::{OperationId, Request, ToolSpec};

#[derive(Default)]
pub struct PrefixStable {
    previous: Option<(OperationId, String, Arc<[ToolSpec]>)>,
    /// A reconfiguration or a restore since the previous request may change the prefix.
    may_change: bool,
}

impl PrefixStable {
    fn same(&self, request: &Request) -> Option<(OperationId, String)> {
        let (op, system, tools) = self.previous.as_ref()?;
        if *system == request.system && Arc::ptr_eq(tools, &request.tools) {
            return None;
        }
        let before = prefix_json(system, tools);
        (before != prefix_json(&request.system, &request.tools)).then_some((*op, before))
    }
}

/// The prefix's bytes as the provider's cache sees them.
fn prefix_json(system: &str, tools: &[ToolSpec]) -> String {
    serde_json::json!({ "system": system, "tools": tools }).to_string()
}

impl Checker for PrefixStable {
    fn invariant(&self) -> Invariant {
        Invariant::PrefixStable
    }

    fn events(&self) -> u32 {
        use super::on;
        on::RECONFIGURED | on::RESTARTED | on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Reconfigured | Event::Restarted { .. } => {
                self.may_change = true;
                None
            }
            Event::Request { op, request, .. } => {
                let verdict = match self.same(request) {
                    Some((prev_op, before)) if !self.may_change => {
                        let now = prefix_json(&request.system, &request.tools);
                        // Shown from a little before the first byte that differs.
                        let at = before
                            .bytes()
                            .zip(now.bytes())
                            .take_while(|(a, b)| a == b)
                            .count()
                            .saturating_sub(20);
                        let from = |s: &str| {
                            let mut i = at.min(s.len());
                            while !s.is_char_boundary(i) {
                                i -= 1;
                            }
                            excerpt(&s[i..])
                        };
                        Err(format!(
                            "request {op}: system or tools differ from request {prev_op} with no reconfiguration in between: was …{}, now …{}",
                            from(&before),
                            from(&now)
                        ))
                    }
                    _ => Ok(()),
                };
                self.may_change = false;
                self.previous = Some((*op, request.system.clone(), request.tools.clone()));
                Some(verdict)
            }
            _ => None,
        }
    }
}
