//! `cache_breakpoints`: each request marks the stable prefix, the end of the previous
//! turn (when there is one) and its own last message (docs/spec.md §8).
//!
//! Misplaced breakpoints do not break a request; they silently make caching miss,
//! which is why nothing but a checker notices.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::cache_breakpoints;

#[derive(Default)]
pub struct CacheBreakpoints {
    baseline: usize,
}

impl Checker for CacheBreakpoints {
    fn invariant(&self) -> Invariant {
        Invariant::CacheBreakpoints
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { baseline } => {
                self.baseline = *baseline;
                None
            }
            Event::Request { op, request, .. } => {
                let want = cache_breakpoints(self.baseline, request.messages.len());
                Some(if request.cache.breakpoints == want {
                    Ok(())
                } else {
                    let show = |v: &[turnsim_core::CacheBreakpoint]| {
                        v.iter()
                            .map(|b| format!("{:?}", b.after_message))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    Err(format!(
                        "request {op}: breakpoints [{}], expected [{}]",
                        show(&request.cache.breakpoints),
                        show(&want)
                    ))
                })
            }
            _ => None,
        }
    }
}
