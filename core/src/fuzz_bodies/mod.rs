//! The bodies of `turnsim-core`'s fuzz targets, shared by `cargo fuzz` and `cargo test`.
//!
//! Guarantee: each body takes any bytes, never panics on its own account, and panics
//! (which is what libFuzzer reports as a crash) exactly when the engine breaks one of
//! the properties the spec states for that part: the note and marker matchers
//! (docs/spec.md §4, §5), the state machine (§6) and log recovery (§7). The fuzz targets in
//! `fuzz/` are one line each that call these, and `core/tests/fuzz_regressions.rs`
//! runs every committed seed and regression input through the same functions on a
//! stable toolchain, so a crash once fixed stays fixed and is re-checked by plain
//! `cargo test`.
//!
//! Test support, so compiled only with the `fuzzing` feature (the fuzz crate and this
//! crate's own tests switch it on): an engine that embeds `turnsim-core` never builds it.
//!
//! One generator family: every body reads its bytes through `arbitrary::Unstructured`,
//! the same source the `Arbitrary` impls of the input types read (this feature
//! switches `arbitrary` on). Where a body wants any value of a type it asks that
//! type's impl (an [`OperationId`] is `OperationId::arbitrary`); where it wants a
//! distribution aimed at the engine's edges (tool ids from a small pool so duplicates
//! arise, stream indices that name open blocks, the spec's own texts and tool names)
//! it composes `Unstructured`'s draws (`choose`, `int_in_range`, `bool`), because a
//! uniform value would almost never hit those edges. Those draws read one byte per
//! choice among at most 256 and yield zeros once the bytes run out, so a short input
//! is still a complete, uneventful case, a mutated byte changes one choice, and the
//! committed seeds and regression inputs under `fuzz/` decode as they were written.
//! Text is a length draw then that many raw bytes (invalid UTF-8 replaced), not
//! `String::arbitrary`, whose length comes from the end of the input: a mutation in
//! one place would change a string somewhere else.
//!
//! The oracles here are written from the spec, not from the code under test: the note
//! oracle rebuilds candidates with the generator [`tool_in_flight_note_text`] only, and
//! the marker oracle is the seven strings of docs/spec.md §4 spelled out.

use crate::history::{validate_history, validate_history_allowing_pending_tools};
use crate::interrupt::{
    CancelCause, InterruptReason, append_marker, interruption_label, is_interruption_marker,
    is_marker_message,
};
use crate::log::{Record, TurnOutcome, decode_log, encode_frame, encode_record};
use crate::message::{Block, Content, Message, Role, SharedMessage, ToolCall, ToolResultContent};
use crate::note::{
    CANCEL_PHRASES, UNRECOGNISED_TOOL, is_plausible_tool_name, is_tool_in_flight_note,
    tool_in_flight_note_label, tool_in_flight_note_text,
};
use crate::request::ToolSpec;
use crate::session::{BlockStart, Input, Output, Session, SessionConfig, StreamEvent};
use crate::state::{
    Effect, GenerationOutput, OperationId, PendingOperation, StateError, StopReason, ToolOutcome,
    TurnState, Usage,
};
use arbitrary::{Arbitrary, Unstructured};
use std::sync::{Arc, OnceLock};

/// What the generators return: `Unstructured`'s draws only fail on an empty choice,
/// which no generator here makes, so an error means a bug in the generator.
type Drawn<T> = arbitrary::Result<T>;

/// A draw in `0..n` (0 without reading when `n <= 1`): one byte for `n <= 256`.
fn below(u: &mut Unstructured<'_>, n: usize) -> Drawn<usize> {
    if n <= 1 {
        return Ok(0);
    }
    u.choose_index(n)
}

/// Up to `max` raw bytes: a length draw, then that many bytes (fewer near the end).
fn take<'a>(u: &mut Unstructured<'a>, max: usize) -> Drawn<&'a [u8]> {
    let n = below(u, max + 1)?.min(u.len());
    u.bytes(n)
}

/// Up to `max` bytes as text (invalid UTF-8 replaced).
fn text(u: &mut Unstructured<'_>, max: usize) -> Drawn<String> {
    Ok(String::from_utf8_lossy(take(u, max)?).into_owned())
}

/// Runs a body's checks on `data`.
fn run(data: &[u8], body: impl FnOnce(&mut Unstructured<'_>) -> Drawn<()>) {
    drawn(body(&mut Unstructured::new(data)));
}

/// A draw error can only come from a generator bug (an empty choice), so it is a
/// crash like a broken property, never a silently skipped input.
fn drawn(result: Drawn<()>) {
    if let Err(e) = result {
        panic!("a fuzz generator failed to draw: {e}");
    }
}

// ---------------------------------------------------------------------------------
// Shared generators
// ---------------------------------------------------------------------------------

/// Tool names a model might send: plausible ones, and every kind of implausible one
/// the spec names (backtick, newline, space, comma, empty, non-ASCII), plus text
/// that imitates the note's own wording.
const NAMES: [&str; 22] = [
    "bash",
    "read_file",
    "fs.write",
    "mcp__srv:tool-v1.2",
    "a",
    "_",
    "-",
    "a b",
    "a`b",
    "`",
    "``",
    "a, b",
    ", ",
    "(an unrecognised tool)",
    "`bash`",
    "a\nb",
    "\r",
    "",
    "é",
    "bash`, `rm",
    "x was running. It",
    "a]",
];

fn name(u: &mut Unstructured<'_>) -> Drawn<String> {
    Ok(match below(u, NAMES.len() + 4)? {
        i if i < NAMES.len() => NAMES[i].to_string(),
        i if i == NAMES.len() => "x".repeat(128),
        i if i == NAMES.len() + 1 => "x".repeat(129),
        _ => text(u, 12)?,
    })
}

fn names(u: &mut Unstructured<'_>) -> Drawn<Vec<String>> {
    let n = below(u, 5)?;
    (0..n).map(|_| name(u)).collect()
}

fn phrase(u: &mut Unstructured<'_>) -> Drawn<String> {
    Ok(match below(u, CANCEL_PHRASES.len() + 3)? {
        i if i < CANCEL_PHRASES.len() => CANCEL_PHRASES[i].to_string(),
        i if i == CANCEL_PHRASES.len() => "Canceled by user ".to_string(),
        i if i == CANCEL_PHRASES.len() + 1 => "canceled".to_string(),
        _ => text(u, 24)?,
    })
}

/// Characters worth inserting: the note's and marker's punctuation, line breaks, a
/// NUL, a non-ASCII letter, or any Latin-1 character.
fn interesting_char(u: &mut Unstructured<'_>) -> Drawn<char> {
    const CHARS: [char; 14] = [
        ' ', '`', ',', '\n', '\r', '[', ']', '(', ')', 'a', '.', 'é', '\0', ':',
    ];
    Ok(match below(u, CHARS.len() + 1)? {
        i if i < CHARS.len() => CHARS[i],
        _ => char::from(u8::arbitrary(u)?),
    })
}

/// One edit of `s`: none, one character inserted, removed or changed, a trailing or
/// leading space, more text after or before, singular and plural swapped, a
/// separator dropped, a line break, the text doubled, or the text cut short.
fn mutate(u: &mut Unstructured<'_>, s: &str) -> Drawn<String> {
    let mut chars: Vec<char> = s.chars().collect();
    let at = below(u, chars.len() + 1)?;
    match below(u, 14)? {
        0 => {}
        1 => chars.insert(at, interesting_char(u)?),
        2 if at < chars.len() => {
            chars.remove(at);
        }
        3 if at < chars.len() => chars[at] = interesting_char(u)?,
        4 => chars.push(' '),
        5 => chars.insert(0, ' '),
        6 => chars.extend(text(u, 16)?.chars()),
        7 => {
            let prefix: Vec<char> = text(u, 16)?.chars().collect();
            chars.splice(0..0, prefix);
        }
        8 => {
            return Ok(if s.contains(" calls ") {
                s.replacen(" calls ", " call ", 1)
            } else {
                s.replacen(" call ", " calls ", 1)
            });
        }
        9 => {
            const SINGULAR: &str =
                "was running. It may have already started and partially applied its effects.";
            const PLURAL: &str =
                "were running. They may have already started and partially applied their effects.";
            return Ok(if s.contains(SINGULAR) {
                s.replacen(SINGULAR, PLURAL, 1)
            } else {
                s.replacen(PLURAL, SINGULAR, 1)
            });
        }
        10 => return Ok(s.replacen(", ", ",", 1)),
        11 => chars.insert(at, if bool::arbitrary(u)? { '\n' } else { '\r' }),
        12 => return Ok(format!("{s}{s}")),
        _ => chars.truncate(at),
    }
    Ok(chars.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracle_agrees_with_the_spec_examples() {
        let one = "[Canceled by user while the tool call `bash` was running. It may have already started and partially applied its effects.]";
        assert!(is_generated_note(one));
        assert!(!is_generated_note(&format!("{one} ")));
        let many = tool_in_flight_note_text("Canceled", &["a".into(), "b c".into()]);
        assert!(is_generated_note(&many));
        assert!(!is_generated_note(&tool_in_flight_note_text(
            "Canceled",
            &[]
        )));
        assert!(!is_generated_note(
            "[Canceled while the tool call `a b` was running. It may have already started and partially applied its effects.]"
        ));
    }

    #[test]
    fn draws_read_one_byte_per_choice_and_zeros_past_the_end() {
        let data = [7, 2, b'h', b'i', 9];
        let mut u = Unstructured::new(&data);
        assert_eq!(below(&mut u, 10).unwrap(), 7);
        assert_eq!(text(&mut u, 4).unwrap(), "hi");
        // A choice among more than 256 reads a second byte when there is one.
        assert_eq!(below(&mut u, 300).unwrap(), 9);
        assert_eq!(below(&mut u, 10).unwrap(), 0);
        assert_eq!(u64::arbitrary(&mut u).unwrap(), 0);
        assert_eq!(take(&mut u, 10).unwrap(), &[] as &[u8]);
        assert!(u.is_empty());
    }

    #[test]
    fn the_committed_regression_input_still_builds_a_note_with_a_trailing_space() {
        // fuzz/regressions/note_matcher/trailing-space-accepted: phrase 0, one name
        // ("bash"), then the mutation that appends a space.
        let data = [0x00, 0x60, 0x00, 0x00, 0x04];
        let mut u = Unstructured::new(&data);
        let phrase = phrase(&mut u).unwrap();
        let names = names(&mut u).unwrap();
        assert_eq!(
            (phrase.as_str(), names.as_slice()),
            (CANCEL_PHRASES[0], &["bash".to_string()][..])
        );
        let note = tool_in_flight_note_text(&phrase, &names);
        assert_eq!(mutate(&mut u, &note).unwrap(), format!("{note} "));
    }

    #[test]
    fn every_body_accepts_empty_and_short_inputs() {
        for data in [&[][..], &[0], &[1, 2, 3], &[255; 40]] {
            note_matcher(data);
            note_differential(data);
            marker_matcher(data);
            state_transitions(data);
            log_recovery(data);
        }
    }
}

mod gen_messages;
mod log_recovery;
mod matchers;
mod state_transitions;

use gen_messages::*;
pub use log_recovery::*;
pub use matchers::*;
pub use state_transitions::*;
