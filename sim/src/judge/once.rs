//! The shape `marker_once` and `note_once` share: a kind of whole message the engine
//! writes once per interruption, judged message by message over one history.
//!
//! Guarantee: two messages in a row that are both of the rule's kind are one
//! violation of it, reported at the second with its text; any other marker- or
//! note-like text goes to the caller's own rules, at the same place. One walk serves
//! both rules, so a marker and a note are placed (line, message, block) alike.

use super::finding::{Finding, Findings, Place, Severity};
use super::view::Located;

/// One "once per interruption" rule and the previous message of its kind.
pub struct Once {
    rule: &'static str,
    kind: &'static str,
    /// What two of them are, in a finding: "interruption markers".
    what: &'static str,
    previous: Option<usize>,
}

impl Once {
    pub const fn new(rule: &'static str, kind: &'static str, what: &'static str) -> Once {
        Once {
            rule,
            kind,
            what,
            previous: None,
        }
    }

    /// Judges the marker- and note-like texts of message `m`, index `i` (`kinds`, each
    /// with its block, as `markers::classify` gives them): `own` picks out the texts of
    /// this rule's kind, `other` judges each remaining text at its place. Generic over
    /// the kind, so this shape knows nothing of how texts are classified.
    pub fn check<'a, K>(
        &mut self,
        (i, m): (usize, &Located),
        kinds: &[(Option<usize>, K)],
        place: &Place,
        out: &mut Findings,
        own: impl Fn(&K) -> Option<&'a str>,
        mut other: impl FnMut(&K, Place) -> Option<Finding>,
    ) {
        let mut seen = false;
        for (block, kind) in kinds {
            let at = Place {
                line: Some(m.line_of(*block)),
                message: Some(i),
                block: *block,
                ..place.clone()
            };
            if let Some(text) = own(kind) {
                seen = true;
                if let Some(p) = self.previous {
                    out.push(
                        Finding::new(
                            Severity::Violation,
                            self.rule,
                            self.kind,
                            at,
                            format!("messages {p} and {i} are both {}", self.what),
                        )
                        .with_excerpt(text),
                    );
                }
            } else if let Some(finding) = other(kind, at) {
                out.push(finding);
            }
        }
        self.previous = seen.then_some(i);
    }
}
