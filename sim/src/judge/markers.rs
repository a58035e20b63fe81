//! Rules `marker_exact`, `marker_once` and `foreign_marker`: interruption markers
//! (spec §4), and the classification of marker- and note-like user text that
//! [`super::notes`] shares.
//!
//! Guarantees:
//! - One definition for every caller. The engine's wording comes in a [`Wording`]
//!   (the reference engine's is [`Wording::REFERENCE`], read from `turnsim_core`,
//!   never a second copy of the strings), so a conventions profile can later supply
//!   another engine's wording without touching a rule.
//! - A user message that is one piece of text (string content, or a single text
//!   block: the API treats them alike and clients turn one into the other to attach
//!   `cache_control`) is judged as a whole: exactly a marker is a marker; a known
//!   foreign runtime's marker is information; anything else opening like a marker is
//!   a `marker_exact` violation. Marker-like text among other blocks is never the
//!   engine's (its markers are whole messages): another runtime's convention,
//!   reported as information.
//! - Two marker messages in a row are a `marker_once` violation: an interruption is
//!   recorded once.

use super::finding::{Finding, Findings, Place, Severity};
use super::once::Once;
use super::view::Located;
use turnsim_core::{Block, Message, Role, is_interruption_marker, tool_in_flight_note_label};

/// Interruption markers other runtimes write, with the runtime that writes them. One
/// list for every judge.
pub const FOREIGN_MARKERS: [(&str, &str); 2] = [
    ("[Request interrupted by user]", "Claude Code"),
    ("[Request interrupted by user for tool use]", "Claude Code"),
];

/// An engine's own wording of markers and notes: what these rules hold text to.
#[derive(Clone, Copy, Debug)]
pub struct Wording {
    /// Exactly one of the engine's markers.
    pub is_marker: fn(&str) -> bool,
    /// The opening every marker-like text shares.
    pub marker_opening: &'static str,
    /// Exactly a note the engine writes.
    pub is_note: fn(&str) -> bool,
    /// Worded like a note (and so held to `is_note`).
    pub looks_like_note: fn(&str) -> bool,
    /// Other runtimes' markers, accepted as information.
    pub foreign: &'static [(&'static str, &'static str)],
}

fn reference_note(text: &str) -> bool {
    tool_in_flight_note_label(text).is_some()
}

/// Bracketed and naming "the tool call(s)", or opening like a cancel: the shapes of
/// the reference engine's notes.
fn reference_looks_like_note(text: &str) -> bool {
    text.starts_with("[Cancel")
        || (text.starts_with('[')
            && (text.contains(" while the tool call ") || text.contains(" while the tool calls ")))
}

impl Wording {
    /// The reference engine's markers and notes.
    pub const REFERENCE: Wording = Wording {
        is_marker: is_interruption_marker,
        marker_opening: "[Request interrupted",
        is_note: reference_note,
        looks_like_note: reference_looks_like_note,
        foreign: &FOREIGN_MARKERS,
    };

    /// The runtime that writes `text` as its marker, if any.
    pub fn foreign_runtime(&self, text: &str) -> Option<&'static str> {
        self.foreign
            .iter()
            .find(|(marker, _)| *marker == text)
            .map(|(_, runtime)| *runtime)
    }
}

/// What a user-role text is, as far as markers and notes go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextKind<'a> {
    /// Exactly one of the engine's markers, as the whole message.
    Marker(&'a str),
    /// Exactly one of the engine's notes, as the whole message.
    Note(&'a str),
    /// Another runtime's marker: `runtime` is who writes it (`None`: unknown form).
    ForeignMarker {
        text: &'a str,
        runtime: Option<&'static str>,
    },
    /// A whole message that opens like a marker and is none of them.
    NearMarker(&'a str),
    /// A whole message worded like a note that the engine does not write.
    NearNote(&'a str),
}

/// The text of a user message that is one piece of text, and the block it is in
/// (`None` for string content).
pub fn sole_text(m: &Message) -> Option<(Option<usize>, &str)> {
    if let Some(s) = m.string_content() {
        return Some((None, s));
    }
    match m.blocks() {
        [Block::Text { text }] => Some((Some(0), text)),
        _ => None,
    }
}

/// Every marker- or note-like text of a user message, with its block. Assistant
/// messages are the model's words and never carry markers, so they yield nothing.
pub fn classify<'a>(m: &'a Message, w: &Wording) -> Vec<(Option<usize>, TextKind<'a>)> {
    let mut out = Vec::new();
    if m.role != Role::User {
        return out;
    }
    if let Some((block, s)) = sole_text(m) {
        let kind = if (w.is_marker)(s) {
            TextKind::Marker(s)
        } else if let Some(runtime) = w.foreign_runtime(s) {
            TextKind::ForeignMarker {
                text: s,
                runtime: Some(runtime),
            }
        } else if s.starts_with(w.marker_opening) {
            TextKind::NearMarker(s)
        } else if (w.is_note)(s) {
            TextKind::Note(s)
        } else if (w.looks_like_note)(s) {
            TextKind::NearNote(s)
        } else {
            return out;
        };
        out.push((block, kind));
        return out;
    }
    for (j, b) in m.blocks().iter().enumerate() {
        if let Block::Text { text } = b
            && (text.starts_with(w.marker_opening) || (w.is_marker)(text))
        {
            out.push((
                Some(j),
                TextKind::ForeignMarker {
                    text,
                    runtime: w.foreign_runtime(text),
                },
            ));
        }
    }
    out
}

/// Marker state over one history.
pub struct Markers(Once);

impl Default for Markers {
    fn default() -> Markers {
        Markers(Once::new(
            "marker_once",
            "doubled_marker",
            "interruption markers",
        ))
    }
}

impl Markers {
    /// Judges the marker-like texts of message `i` (`kinds` from [`classify`]).
    pub fn check(
        &mut self,
        i: usize,
        m: &Located,
        kinds: &[(Option<usize>, TextKind<'_>)],
        place: &Place,
        out: &mut Findings,
    ) {
        let own = |kind: &_| match kind {
            TextKind::Marker(text) => Some(*text),
            _ => None,
        };
        self.0.check((i, m), kinds, place, out, own, |kind, at| match kind {
            TextKind::ForeignMarker { text, runtime } => {
                let (kind, detail) = match runtime {
                    Some(r) => (
                        "claude_code",
                        format!(
                            "message {i}: {r}'s own interruption marker form, not one of turnsim's seven (a foreign marker, not a violation)"
                        ),
                    ),
                    None => (
                        "unrecognised",
                        format!(
                            "message {i}: a marker-like text block among other blocks (turnsim writes a marker as a whole message)"
                        ),
                    ),
                };
                Some(
                    Finding::new(Severity::Info, "foreign_marker", kind, at, detail)
                        .with_excerpt(text),
                )
            }
            TextKind::NearMarker(text) => Some(
                Finding::new(
                    Severity::Violation,
                    "marker_exact",
                    "near_marker",
                    at,
                    format!(
                        "message {i} looks like an interruption marker but is not one of the seven"
                    ),
                )
                .with_excerpt(text),
            ),
            _ => None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::tool_in_flight_note_text;

    fn kinds(m: &Message) -> Vec<(Option<usize>, TextKind<'_>)> {
        classify(m, &Wording::REFERENCE)
    }

    #[test]
    fn a_marker_is_the_same_as_string_content_or_as_a_single_text_block() {
        let text = "[Request interrupted: runtime restarted]";
        assert_eq!(
            kinds(&Message::user_text(text)),
            vec![(None, TextKind::Marker(text))]
        );
        assert_eq!(
            kinds(&Message::user_blocks(vec![Block::text(text)])),
            vec![(Some(0), TextKind::Marker(text))]
        );
    }

    #[test]
    fn claude_codes_tool_use_form_is_foreign_whole_or_among_other_blocks() {
        let form = "[Request interrupted by user for tool use]";
        let whole = Message::user_blocks(vec![Block::text(form)]);
        assert_eq!(
            kinds(&whole),
            vec![(
                Some(0),
                TextKind::ForeignMarker {
                    text: form,
                    runtime: Some("Claude Code")
                }
            )]
        );
        let among = Message::user_blocks(vec![
            Block::tool_result("t1", "partial", true),
            Block::text(form),
        ]);
        assert_eq!(
            kinds(&among),
            vec![(
                Some(1),
                TextKind::ForeignMarker {
                    text: form,
                    runtime: Some("Claude Code")
                }
            )]
        );
    }

    #[test]
    fn an_exact_marker_among_other_blocks_is_not_the_engines() {
        let m = Message::user_blocks(vec![
            Block::text("look"),
            Block::text("[Request interrupted: runtime restarted]"),
        ]);
        assert_eq!(
            kinds(&m),
            vec![(
                Some(1),
                TextKind::ForeignMarker {
                    text: "[Request interrupted: runtime restarted]",
                    runtime: None
                }
            )]
        );
    }

    #[test]
    fn a_near_marker_is_reported_whether_string_or_single_block() {
        let near = "[Request interrupted: do Y instead]";
        assert_eq!(
            kinds(&Message::user_text(near)),
            vec![(None, TextKind::NearMarker(near))]
        );
        assert_eq!(
            kinds(&Message::user_blocks(vec![Block::text(near)])),
            vec![(Some(0), TextKind::NearMarker(near))]
        );
    }

    #[test]
    fn exact_notes_pass_and_reworded_or_cancel_shaped_notes_do_not() {
        let note = tool_in_flight_note_text("Canceled by user", &["bash".to_string()]);
        assert_eq!(
            kinds(&Message::user_text(note.clone())),
            vec![(None, TextKind::Note(note.as_str()))]
        );
        let reworded = note.replace("may have", "might have");
        assert_eq!(
            kinds(&Message::user_text(reworded.clone())),
            vec![(None, TextKind::NearNote(reworded.as_str()))]
        );
        let cancel = "[Canceled by user while the tool call `x` ran.]";
        assert_eq!(
            kinds(&Message::user_text(cancel)),
            vec![(None, TextKind::NearNote(cancel))]
        );
    }

    #[test]
    fn assistant_text_and_ordinary_user_text_yield_nothing() {
        let w = Wording::REFERENCE;
        assert!(
            classify(
                &Message::assistant_text("[Request interrupted by user]"),
                &w
            )
            .is_empty()
        );
        assert!(classify(&Message::user_text("please continue"), &w).is_empty());
    }
}
