//! `cache_breakpoints` (convention, with a generic part): every breakpoint points
//! inside the request, none twice, at most four (the provider's limit: generic);
//! and, when the profile says where the engine places them, exactly there (the
//! reference: the stable prefix, the end of the previous turn, the last message,
//! docs/spec.md §8).
//!
//! Misplaced breakpoints do not break a request; they silently make caching miss,
//! which is why nothing but a checker notices. Where an engine should place them is
//! its own choice, so without a profile only the positions' validity is judged.

use std::sync::Arc;

use super::{Check, Checker, Ctx, Event, Invariant};
use crate::conventions::{CheckKind, Conventions};
use turnsim_core::CacheBreakpoint;

/// The provider accepts at most this many breakpoints in one request.
pub const MAX_BREAKPOINTS: usize = 4;

pub struct CacheBreakpoints {
    conventions: Arc<Conventions>,
    baseline: usize,
}

impl CacheBreakpoints {
    pub fn new(conventions: Arc<Conventions>) -> CacheBreakpoints {
        CacheBreakpoints {
            conventions,
            baseline: 0,
        }
    }
}

fn show(v: &[CacheBreakpoint]) -> String {
    v.iter()
        .map(|b| format!("{:?}", b.after_message))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Checker for CacheBreakpoints {
    fn invariant(&self) -> Invariant {
        Invariant::CacheBreakpoints
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Convention
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_STARTED | on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { baseline, .. } => {
                self.baseline = *baseline;
                None
            }
            Event::Request { op, request, .. } => {
                let got = &request.cache.breakpoints;
                let len = request.messages.len();
                if let Some(b) = got
                    .iter()
                    .find(|b| b.after_message.is_some_and(|i| i >= len))
                {
                    return Some(Err(format!(
                        "request {op}: a breakpoint after message {:?} of {len} messages",
                        b.after_message
                    )));
                }
                if let Some((k, _)) = got.iter().enumerate().find(|(k, b)| got[..*k].contains(b)) {
                    return Some(Err(format!(
                        "request {op}: breakpoint {k} repeats a position: [{}]",
                        show(got)
                    )));
                }
                if got.len() > MAX_BREAKPOINTS {
                    return Some(Err(format!(
                        "request {op}: {} breakpoints, the provider accepts {MAX_BREAKPOINTS}: [{}]",
                        got.len(),
                        show(got)
                    )));
                }
                let Some(placement) = self.conventions.breakpoints else {
                    return Some(Ok(()));
                };
                let want = placement.expected(self.baseline, len);
                Some(if *got == want {
                    Ok(())
                } else {
                    Err(format!(
                        "request {op}: breakpoints [{}], expected [{}]",
                        show(got),
                        show(&want)
                    ))
                })
            }
            _ => None,
        }
    }
}
