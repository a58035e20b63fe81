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
//! Why a byte [`Reader`] and not `arbitrary::Unstructured`: the committed seeds and
//! regression inputs under `fuzz/` are encoded for it. The reader follows `Unstructured`'s conventions (a fixed
//! number of bytes per choice, zeros once the bytes run out), so a short input is
//! still a complete, uneventful case and a mutated byte changes one choice.
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
use crate::message::{Block, Content, Message, Role, SharedMessage, ToolCall};
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
use std::sync::{Arc, OnceLock};

/// A cursor over fuzz input: each choice reads a fixed number of bytes, and reads
/// past the end yield zeros, so every input, however short, decodes to a case.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    /// True once every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.data
    }

    /// One byte; 0 past the end.
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A little-endian integer of `N` bytes, zero-padded past the end.
    fn le<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.le())
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.le())
    }

    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.le())
    }

    /// A value in `0..n` (0 when `n <= 1`): one byte for `n <= 256`, else four.
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        if n <= 256 {
            usize::from(self.byte()) % n
        } else {
            usize::try_from(self.u32()).unwrap_or(0) % n
        }
    }

    /// True for an odd byte.
    pub fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// Up to `max` raw bytes (fewer near the end).
    pub fn take(&mut self, max: usize) -> &'a [u8] {
        let n = self.below(max + 1).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    /// Up to `max` bytes as text (invalid UTF-8 replaced).
    pub fn text(&mut self, max: usize) -> String {
        String::from_utf8_lossy(self.take(max)).into_owned()
    }

    /// One of `items` ("" when empty).
    pub fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items.get(self.below(items.len())).copied().unwrap_or("")
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

fn name(r: &mut Reader<'_>) -> String {
    match r.below(NAMES.len() + 4) {
        i if i < NAMES.len() => NAMES[i].to_string(),
        i if i == NAMES.len() => "x".repeat(128),
        i if i == NAMES.len() + 1 => "x".repeat(129),
        _ => r.text(12),
    }
}

fn names(r: &mut Reader<'_>) -> Vec<String> {
    let n = r.below(5);
    (0..n).map(|_| name(r)).collect()
}

fn phrase(r: &mut Reader<'_>) -> String {
    match r.below(CANCEL_PHRASES.len() + 3) {
        i if i < CANCEL_PHRASES.len() => CANCEL_PHRASES[i].to_string(),
        i if i == CANCEL_PHRASES.len() => "Canceled by user ".to_string(),
        i if i == CANCEL_PHRASES.len() + 1 => "canceled".to_string(),
        _ => r.text(24),
    }
}

/// Characters worth inserting: the note's and marker's punctuation, line breaks, a
/// NUL, a non-ASCII letter, or any Latin-1 character.
fn interesting_char(r: &mut Reader<'_>) -> char {
    const CHARS: [char; 14] = [
        ' ', '`', ',', '\n', '\r', '[', ']', '(', ')', 'a', '.', 'é', '\0', ':',
    ];
    match r.below(CHARS.len() + 1) {
        i if i < CHARS.len() => CHARS[i],
        _ => char::from(r.byte()),
    }
}

/// One edit of `s`: none, one character inserted, removed or changed, a trailing or
/// leading space, more text after or before, singular and plural swapped, a
/// separator dropped, a line break, the text doubled, or the text cut short.
fn mutate(r: &mut Reader<'_>, s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    let at = r.below(chars.len() + 1);
    match r.below(14) {
        0 => {}
        1 => chars.insert(at, interesting_char(r)),
        2 if at < chars.len() => {
            chars.remove(at);
        }
        3 if at < chars.len() => chars[at] = interesting_char(r),
        4 => chars.push(' '),
        5 => chars.insert(0, ' '),
        6 => chars.extend(r.text(16).chars()),
        7 => {
            let prefix: Vec<char> = r.text(16).chars().collect();
            chars.splice(0..0, prefix);
        }
        8 => {
            return if s.contains(" calls ") {
                s.replacen(" calls ", " call ", 1)
            } else {
                s.replacen(" call ", " calls ", 1)
            };
        }
        9 => {
            const SINGULAR: &str =
                "was running. It may have already started and partially applied its effects.";
            const PLURAL: &str =
                "were running. They may have already started and partially applied their effects.";
            return if s.contains(SINGULAR) {
                s.replacen(SINGULAR, PLURAL, 1)
            } else {
                s.replacen(PLURAL, SINGULAR, 1)
            };
        }
        10 => return s.replacen(", ", ",", 1),
        11 => chars.insert(at, if r.flag() { '\n' } else { '\r' }),
        12 => return format!("{s}{s}"),
        _ => chars.truncate(at),
    }
    chars.into_iter().collect()
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
    fn the_reader_yields_zeros_past_the_end() {
        let mut r = Reader::new(&[7]);
        assert_eq!(r.byte(), 7);
        assert_eq!(r.byte(), 0);
        assert_eq!(r.u64(), 0);
        assert_eq!(r.take(10), &[] as &[u8]);
        assert!(r.is_empty());
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
