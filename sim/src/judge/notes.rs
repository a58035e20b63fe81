//! Rules `note_exact` and `note_once`: tool-in-flight notes (spec §5).
//!
//! Guarantee: a user message worded like one of the engine's notes is exactly one
//! (held to the [`super::markers::Wording`] the markers use, so one classification
//! serves both rules), and two note messages never follow each other: a note is
//! written once per interrupted batch.

use super::finding::{Finding, Findings, Place, Severity};
use super::markers::TextKind;
use super::once::Once;
use super::view::Located;

/// Note state over one history.
pub struct Notes(Once);

impl Default for Notes {
    fn default() -> Notes {
        Notes(Once::new(
            "note_once",
            "doubled_note",
            "tool-in-flight notes",
        ))
    }
}

impl Notes {
    /// Judges the note-like texts of message `i` (`kinds` from
    /// [`super::markers::classify`]).
    pub fn check(
        &mut self,
        i: usize,
        m: &Located,
        kinds: &[(Option<usize>, TextKind<'_>)],
        place: &Place,
        out: &mut Findings,
    ) {
        let own = |kind: &_| match kind {
            TextKind::Note(text) => Some(*text),
            _ => None,
        };
        self.0.check((i, m), kinds, place, out, own, |kind, at| match kind {
            TextKind::NearNote(text) => Some(
                Finding::new(
                    Severity::Violation,
                    "note_exact",
                    "near_note",
                    at,
                    format!(
                        "message {i} is worded like a tool-in-flight note but is not one the note generator writes"
                    ),
                )
                .with_excerpt(text),
            ),
            _ => None,
        });
    }
}
