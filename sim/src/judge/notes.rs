//! Rules `note_exact` and `note_once`: tool-in-flight notes (spec §5).
//!
//! Guarantee: a user message worded like one of the engine's notes is exactly one
//! (held to the [`super::markers::Wording`] the markers use, so one classification
//! serves both rules), and two note messages never follow each other: a note is
//! written once per interrupted batch.

use super::finding::{Finding, Findings, Place, Severity};
use super::markers::TextKind;
use super::view::Located;

/// Note state over one history.
#[derive(Default)]
pub struct Notes {
    previous: Option<usize>,
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
        let mut note = false;
        for (block, kind) in kinds {
            let at = Place {
                line: Some(m.line_of(*block)),
                message: Some(i),
                block: *block,
                ..place.clone()
            };
            match kind {
                TextKind::Note(text) => {
                    note = true;
                    if let Some(p) = self.previous {
                        out.push(
                            Finding::new(
                                Severity::Violation,
                                "note_once",
                                "doubled_note",
                                at,
                                format!("messages {p} and {i} are both tool-in-flight notes"),
                            )
                            .with_excerpt(text),
                        );
                    }
                }
                TextKind::NearNote(text) => out.push(
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
                _ => {}
            }
        }
        self.previous = note.then_some(i);
    }
}
