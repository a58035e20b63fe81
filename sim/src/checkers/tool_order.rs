//! `tool_order`: two sessions configured with the same tools, listed in another order,
//! send the same prefix bytes.
//!
//! A runtime that lists tools in the order they were discovered (MCP servers answer in
//! their own time, plugins load in directory order) sends a new `tools` array, and so
//! misses the prompt cache, every time the order comes out otherwise, though nothing
//! the model can use changed. `prefix_stable` cannot see it: within one session the
//! order is the same from request to request. The world runs two fresh twins of the
//! engine, hands one the host's configure and the other the same configure with the
//! tools reversed, then the same prompt, and hands over the request each sent.
//!
//! A convention: an engine may keep the host's order on purpose (the host then owns
//! the cache's stability), so only a profile that says the engine orders its tools
//! (`canonical_tools`, on for the reference) is judged.

use super::prefix_stable::{PREFIX, prefix_values};
use super::{Check, Checker, Ctx, Event, Invariant};
use crate::conventions::CheckKind;
use crate::judge::finding::where_differ;

pub struct ToolOrder {
    /// The profile says the engine puts tools in an order of its own.
    judged: bool,
}

impl ToolOrder {
    pub fn new(judged: bool) -> ToolOrder {
        ToolOrder { judged }
    }
}

impl Checker for ToolOrder {
    fn invariant(&self) -> Invariant {
        Invariant::ToolOrder
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Convention
    }

    fn events(&self) -> u32 {
        super::on::TOOL_ORDER
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::ToolOrderTwins { host, permuted } = event else {
            return None;
        };
        if !self.judged {
            return None;
        }
        // A twin in the host's order that sends nothing leaves nothing to compare.
        let (host_request, host_body) = host.as_ref().ok()?;
        let (request, body) = match permuted {
            Ok(r) => r,
            Err(why) => {
                return Some(Err(format!(
                    "the host's configure with its tools in reverse order sent no request where the host's order did: {why}"
                )));
            }
        };
        let (a, b) = match (
            prefix_values(host_request, host_body.as_deref()),
            prefix_values(request, body.as_deref()),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            // A body that cannot be read, or writes a fixed field after the messages,
            // is `prefix_stable`'s finding at the engine's first request, not this one.
            _ => return None,
        };
        Some(match (0..PREFIX.len()).find(|&i| a[i] != b[i]) {
            None => Ok(()),
            Some(i) => Err(format!(
                "the same tools configured in reverse order give another `{}`, {}",
                PREFIX[i],
                where_differ(&a[i], &b[i])
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use turnsim_core::{CacheHints, Request, ToolSpec};

    fn request(names: &[&str]) -> Request {
        Request {
            system: "s".into(),
            tools: names
                .iter()
                .map(|n| ToolSpec {
                    name: (*n).into(),
                    description: String::new(),
                    input_schema: serde_json::json!({"type": "object"}),
                })
                .collect::<Vec<_>>()
                .into(),
            thinking: None,
            messages: Vec::new(),
            cache: CacheHints {
                session_key: "k".into(),
                breakpoints: Vec::new(),
            },
        }
    }

    fn judge(judged: bool, host: &[&str], permuted: &[&str]) -> Option<Check> {
        let ctx = Ctx::empty(0);
        let host: Result<(Request, Option<Arc<str>>), String> = Ok((request(host), None));
        let permuted = Ok((request(permuted), None));
        ToolOrder::new(judged).observe(
            &ctx,
            &Event::ToolOrderTwins {
                host: &host,
                permuted: &permuted,
            },
        )
    }

    #[test]
    fn tools_sent_in_the_host_s_order_are_a_violation_that_says_where() {
        let e = judge(true, &["a", "b"], &["b", "a"]).unwrap().unwrap_err();
        assert!(
            e.starts_with(
                "the same tools configured in reverse order give another `tools`, at byte 10: "
            ),
            "{e}"
        );
    }

    #[test]
    fn one_order_whatever_the_host_s_passes() {
        assert_eq!(judge(true, &["a", "b"], &["a", "b"]), Some(Ok(())));
    }

    #[test]
    fn a_profile_that_keeps_the_host_s_order_is_not_judged() {
        assert_eq!(judge(false, &["a", "b"], &["b", "a"]), None);
    }
}
