//! Marker and note recognition for real transcripts (spec §4, §5).
//!
//! Guarantee: turnsim's own markers and notes are recognised only by exact equality
//! (through `turnsim_core`, never a second copy of the wording), and a text that
//! merely starts like one is reported, exactly as the simulator's `marker_once`
//! checker does. Other runtimes write interruption markers of their own (Claude Code
//! writes `[Request interrupted by user for tool use]` as a text block); those are a
//! different convention, not a corrupted marker, so they are reported as information
//! and never as a violation.

use crate::checkers::marker_once::near_marker;
use turnsim_core::{
    Block, InterruptReason, Message, Role, is_interruption_marker, tool_in_flight_note_label,
};

/// Interruption markers other runtimes write, with the runtime that writes them.
pub const FOREIGN_MARKERS: [(&str, &str); 2] = [
    ("[Request interrupted by user]", "Claude Code"),
    ("[Request interrupted by user for tool use]", "Claude Code"),
];

/// The opening every marker-like text shares.
const MARKER_OPENING: &str = "[Request interrupted";

/// What a user-role text is, as far as markers and notes go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextKind<'a> {
    /// Exactly one of turnsim's seven markers, as string content.
    Marker(InterruptReason),
    /// Exactly a tool-in-flight note, as string content.
    Note,
    /// Another runtime's marker: `runtime` is who writes it (`None`: unknown form).
    ForeignMarker {
        text: &'a str,
        runtime: Option<&'static str>,
    },
    /// String content that starts like a marker and is none of the seven, and no
    /// known foreign form either.
    NearMarker(&'a str),
    /// String content worded like a note that the note generator does not produce.
    NearNote(&'a str),
}

/// The runtime that writes `text` as its marker, if any.
pub fn foreign_runtime(text: &str) -> Option<&'static str> {
    FOREIGN_MARKERS
        .iter()
        .find(|(marker, _)| *marker == text)
        .map(|(_, runtime)| *runtime)
}

/// Worded like a tool-in-flight note: bracketed and naming "the tool call(s)". The
/// exact check is `tool_in_flight_note_label`; this only decides what to hold to it.
fn looks_like_note(text: &str) -> bool {
    text.starts_with('[')
        && (text.contains(" while the tool call ") || text.contains(" while the tool calls "))
}

/// Every marker- or note-like text of a user message, with the block it sits in
/// (`None` for string content). Assistant messages are the model's words and never
/// carry markers, so they yield nothing.
pub fn classify(m: &Message) -> Vec<(Option<usize>, TextKind<'_>)> {
    let mut out = Vec::new();
    if m.role != Role::User {
        return out;
    }
    if let Some(s) = m.string_content() {
        if let Some(reason) = InterruptReason::from_marker(s) {
            out.push((None, TextKind::Marker(reason)));
        } else if let Some(near) = near_marker(m) {
            out.push((
                None,
                match foreign_runtime(near) {
                    Some(runtime) => TextKind::ForeignMarker {
                        text: near,
                        runtime: Some(runtime),
                    },
                    None => TextKind::NearMarker(near),
                },
            ));
        } else if tool_in_flight_note_label(s).is_some() {
            out.push((None, TextKind::Note));
        } else if looks_like_note(s) {
            out.push((None, TextKind::NearNote(s)));
        }
        return out;
    }
    // In a block, even an exact marker is not turnsim's (markers are only ever string
    // content), so every marker-like block is someone else's convention.
    for (j, b) in m.blocks().iter().enumerate() {
        if let Block::Text { text } = b
            && (text.starts_with(MARKER_OPENING) || is_interruption_marker(text))
        {
            out.push((
                Some(j),
                TextKind::ForeignMarker {
                    text,
                    runtime: foreign_runtime(text),
                },
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::tool_in_flight_note_text;

    fn kinds(m: &Message) -> Vec<(Option<usize>, TextKind<'_>)> {
        classify(m)
    }

    #[test]
    fn turnsims_own_marker_as_string_content_is_a_marker() {
        let m = Message::user_text("[Request interrupted: runtime restarted]");
        assert_eq!(
            kinds(&m),
            vec![(None, TextKind::Marker(InterruptReason::Restart))]
        );
    }

    #[test]
    fn claude_codes_tool_use_form_is_foreign_in_a_block_and_as_a_string() {
        let form = "[Request interrupted by user for tool use]";
        let block = Message::user_blocks(vec![Block::text(form)]);
        assert_eq!(
            kinds(&block),
            vec![(
                Some(0),
                TextKind::ForeignMarker {
                    text: form,
                    runtime: Some("Claude Code")
                }
            )]
        );
        let string = Message::user_text(form);
        assert_eq!(
            kinds(&string),
            vec![(
                None,
                TextKind::ForeignMarker {
                    text: form,
                    runtime: Some("Claude Code")
                }
            )]
        );
    }

    #[test]
    fn an_exact_marker_inside_a_block_is_not_turnsims() {
        let m = Message::user_blocks(vec![Block::text("[Request interrupted by user]")]);
        assert!(matches!(
            kinds(&m).as_slice(),
            [(Some(0), TextKind::ForeignMarker { .. })]
        ));
    }

    #[test]
    fn a_near_marker_string_is_reported_as_such() {
        let m = Message::user_text("[Request interrupted: do Y instead]");
        assert_eq!(
            kinds(&m),
            vec![(
                None,
                TextKind::NearMarker("[Request interrupted: do Y instead]")
            )]
        );
    }

    #[test]
    fn exact_notes_pass_and_reworded_notes_do_not() {
        let note = tool_in_flight_note_text("Canceled by user", &["bash".to_string()]);
        assert_eq!(
            kinds(&Message::user_text(note.clone())),
            vec![(None, TextKind::Note)]
        );
        let reworded = note.replace("may have", "might have");
        assert_eq!(
            kinds(&Message::user_text(reworded.clone())),
            vec![(None, TextKind::NearNote(reworded.as_str()))]
        );
    }

    #[test]
    fn assistant_text_and_ordinary_user_text_yield_nothing() {
        assert!(kinds(&Message::assistant_text("[Request interrupted by user]")).is_empty());
        assert!(kinds(&Message::user_text("please continue")).is_empty());
    }
}
