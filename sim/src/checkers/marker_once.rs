//! `marker_once` (convention, with a generic part): an interruption is recorded once,
//! never as two markers in a row; with a profile that knows the engine's markers,
//! every marker-like user text is also exactly one of them (docs/spec.md §4).
//!
//! A doubled marker is a recovery that ran twice; a marker with extra words is the
//! runtime putting free text where the model expects a fixed signal. Which messages
//! are markers is the profile's to say ([`Conventions::authored_kind`]: the engine's
//! own classifier, or its marker texts); with neither, nothing here can be judged and
//! the checker counts no check rather than a false pass.

use std::sync::Arc;

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use crate::conventions::{AuthoredKind, CheckKind, Conventions};
use turnsim_core::{Message, Role};

pub struct MarkerOnce {
    conventions: Arc<Conventions>,
}

impl MarkerOnce {
    pub fn new(conventions: Arc<Conventions>) -> MarkerOnce {
        MarkerOnce { conventions }
    }

    fn near_marker<'a>(&self, m: &'a Message) -> Option<&'a str> {
        let (like, exact) = (
            self.conventions.marker_like.as_ref()?,
            self.conventions.markers.as_ref()?,
        );
        if m.role != Role::User {
            return None;
        }
        m.string_content()
            .filter(|s| like.matches(s) && !exact.matches(s))
    }
}

impl Checker for MarkerOnce {
    fn invariant(&self) -> Invariant {
        Invariant::MarkerOnce
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Convention
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
        let c = &self.conventions;
        if c.authored.is_none() && c.markers.is_none() {
            return None;
        }
        // Messages already judged are skipped, but the last of them is the left half of
        // the first new pair.
        let start = seen.saturating_sub(1);
        let mut previous_was_marker = false;
        for (i, m) in request.messages.iter().enumerate().skip(start) {
            let marker = c.authored_kind(m) == Some(AuthoredKind::Marker);
            if marker && previous_was_marker {
                return Some(Err(format!(
                    "request {op}: messages {} and {i} are both markers",
                    i - 1
                )));
            }
            if let Some(s) = self.near_marker(m) {
                return Some(Err(format!(
                    "request {op}: message {i} looks like a marker but is not one of the engine's: {}",
                    excerpt(s)
                )));
            }
            previous_was_marker = marker;
        }
        Some(Ok(()))
    }
}
