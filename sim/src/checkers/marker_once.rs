//! `marker_once`: no two interruption markers in a row, and every marker-like user
//! text is exactly one of the seven markers (docs/spec.md §4).
//!
//! A doubled marker is a recovery that ran twice; a marker with extra words is the
//! runtime putting free text where the model expects a fixed signal.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use turnsim_core::{Message, Role, is_interruption_marker, is_marker_message};

pub struct MarkerOnce;

impl Checker for MarkerOnce {
    fn invariant(&self) -> Invariant {
        Invariant::MarkerOnce
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request { op, request, seen } = event else {
            return None;
        };
        // Messages already judged are skipped, but the last of them is the left half of
        // the first new pair.
        let start = seen.saturating_sub(1);
        let mut previous_was_marker = false;
        for (i, m) in request.messages.iter().enumerate().skip(start) {
            let marker = is_marker_message(m);
            if marker && previous_was_marker {
                return Some(Err(format!(
                    "request {op}: messages {} and {i} are both markers",
                    i - 1
                )));
            }
            if let Some(s) = near_marker(m) {
                return Some(Err(format!(
                    "request {op}: message {i} looks like a marker but is not one of the seven: {}",
                    excerpt(s)
                )));
            }
            previous_was_marker = marker;
        }
        Some(Ok(()))
    }
}

/// The user string content of `m` when it starts like an interruption marker but is
/// not exactly one of the seven. Shared with `turnsim check`, which judges real
/// transcripts by the same rule.
pub fn near_marker(m: &Message) -> Option<&str> {
    if m.role != Role::User {
        return None;
    }
    m.string_content()
        .filter(|s| s.starts_with("[Request interrupted") && !is_interruption_marker(s))
}
