//! The bodies of `turnsim-core`'s fuzz targets, shared by `cargo fuzz` and `cargo test`.
//!
//! Guarantee: each body takes any bytes, never panics on its own account, and panics
//! (which is what libFuzzer reports as a crash) exactly when the engine breaks one of
//! the properties the spec states for that part: the note and marker matchers
//! (spec §4, §5), the state machine (§6) and log recovery (§7). The fuzz targets in
//! `fuzz/` are one line each that call these, and `core/tests/fuzz_regressions.rs`
//! runs every committed seed and regression input through the same functions on a
//! stable toolchain, so a crash once fixed stays fixed and is re-checked by plain
//! `cargo test`.
//!
//! Why a byte [`Reader`] and not `arbitrary::Unstructured`: this module is compiled
//! without any feature, so the test that replays regression inputs needs nothing
//! beyond a default build. The reader follows `Unstructured`'s conventions (a fixed
//! number of bytes per choice, zeros once the bytes run out), so a short input is
//! still a complete, uneventful case and a mutated byte changes one choice.
//!
//! The oracles here are written from the spec, not from the code under test: the note
//! oracle rebuilds candidates with the generator [`tool_in_flight_note_text`] only, and
//! the marker oracle is the seven strings of spec §4 spelled out.

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

// ---------------------------------------------------------------------------------
// note_matcher
// ---------------------------------------------------------------------------------

/// The text a note has before and after its name list, for each phrase and for one
/// and for several names, taken from the generator itself.
fn note_templates() -> &'static [(&'static str, String, String)] {
    static TEMPLATES: OnceLock<Vec<(&'static str, String, String)>> = OnceLock::new();
    TEMPLATES.get_or_init(|| {
        let mut out = Vec::new();
        for phrase in CANCEL_PHRASES {
            for sample in [
                vec!["X".to_string()],
                vec!["X".to_string(), "Y".to_string()],
            ] {
                let note = tool_in_flight_note_text(phrase, &sample);
                let list = sample
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                if let Some((before, after)) = note.split_once(&list) {
                    out.push((phrase, before.to_string(), after.to_string()));
                }
            }
        }
        out
    })
}

/// The spec's definition of a note, as an oracle: `s` is a note iff, for some phrase
/// of `CANCEL_PHRASES`, it has the shape of one, and regenerating it from the names
/// it lists gives back `s` byte for byte.
pub fn is_generated_note(s: &str) -> bool {
    note_templates().iter().any(|(phrase, before, after)| {
        let Some(list) = s.strip_prefix(before.as_str()) else {
            return false;
        };
        let Some(list) = list.strip_suffix(after.as_str()) else {
            return false;
        };
        let parsed: Option<Vec<String>> = list
            .split(", ")
            .map(|item| {
                if item == UNRECOGNISED_TOOL {
                    Some(String::new()) // implausible: renders back as UNRECOGNISED_TOOL
                } else {
                    let name = item.strip_prefix('`')?.strip_suffix('`')?;
                    Some(name.to_string())
                }
            })
            .collect();
        parsed
            .is_some_and(|names| !names.is_empty() && tool_in_flight_note_text(phrase, &names) == s)
    })
}

/// The texts between backticks.
fn backticked(s: &str) -> impl Iterator<Item = &str> {
    s.split('`').skip(1).step_by(2)
}

/// Every property of the note matcher that holds for any string.
pub fn check_note_string(s: &str) {
    let label = tool_in_flight_note_label(s);
    let expected = is_generated_note(s);
    match (label, expected) {
        (Some(label), true) => {
            let inner = s.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
            assert_eq!(
                Some(label),
                inner,
                "the label is not the note without brackets"
            );
            assert!(
                !s.contains(['\n', '\r']),
                "an accepted note holds a line break: {s:?}"
            );
            for quoted in backticked(s) {
                assert!(
                    is_plausible_tool_name(quoted),
                    "an accepted note backticks the implausible name {quoted:?}: {s:?}"
                );
            }
            assert!(!is_interruption_marker(s), "a note is a marker: {s:?}");
        }
        (None, false) => {}
        (Some(_), false) => {
            panic!("the note matcher accepts a string that no generated note equals: {s:?}")
        }
        (None, true) => panic!("the note matcher rejects a generated note: {s:?}"),
    }
    assert_eq!(
        is_tool_in_flight_note(&Message::user_text(s)),
        label.is_some(),
        "is_tool_in_flight_note disagrees with the label: {s:?}"
    );
    assert!(
        !is_tool_in_flight_note(&Message::user_blocks(vec![Block::text(s)])),
        "a note inside a text block counts as a note: {s:?}"
    );
    assert!(
        !is_tool_in_flight_note(&Message {
            role: Role::Assistant,
            content: Content::Text(s.to_string()),
        }),
        "an assistant message counts as a note: {s:?}"
    );
}

/// `note_matcher`: the input as text (when UTF-8), then a structured near-note built
/// from the same bytes (a phrase, names, then one mutation).
pub fn note_matcher(data: &[u8]) {
    if let Ok(s) = std::str::from_utf8(data) {
        check_note_string(s);
    }
    let mut r = Reader::new(data);
    let phrase = phrase(&mut r);
    let names = names(&mut r);
    let note = tool_in_flight_note_text(&phrase, &names);
    if CANCEL_PHRASES.contains(&phrase.as_str()) {
        assert!(
            !note.contains(['\n', '\r']),
            "a generated note holds a line break: {note:?}"
        );
        for quoted in backticked(&note) {
            assert!(
                is_plausible_tool_name(quoted),
                "a generated note backticks the implausible name {quoted:?}"
            );
        }
        if !names.is_empty() {
            let inner = note.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
            assert_eq!(
                tool_in_flight_note_label(&note),
                inner,
                "a generated note does not round-trip: phrase {phrase:?}, names {names:?}"
            );
        }
    }
    check_note_string(&note);
    let mutated = mutate(&mut r, &note);
    check_note_string(&mutated);
}

// ---------------------------------------------------------------------------------
// marker_matcher
// ---------------------------------------------------------------------------------

/// The seven markers of spec §4, spelled out.
pub const SPEC_MARKERS: [&str; 7] = [
    "[Request interrupted by user]",
    "[Request interrupted: session cost cap reached]",
    "[Request interrupted: runtime restarted]",
    "[Request interrupted: session stopped by the host]",
    "[Request interrupted]",
    "[Request interrupted: runtime stopped unexpectedly]",
    "[Request interrupted: session driver revoked]",
];

/// Every property of the marker matcher that holds for any string.
pub fn check_marker_string(s: &str) {
    let expected = SPEC_MARKERS.contains(&s);
    assert_eq!(
        is_interruption_marker(s),
        expected,
        "is_interruption_marker({s:?})"
    );
    let inner = s.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
    assert_eq!(
        interruption_label(s),
        if expected { inner } else { None },
        "interruption_label({s:?})"
    );
    assert_eq!(
        InterruptReason::from_marker(s).map(InterruptReason::marker),
        expected.then_some(s),
        "InterruptReason::from_marker({s:?})"
    );
    assert_eq!(is_marker_message(&Message::user_text(s)), expected);
    assert!(!is_marker_message(&Message::user_blocks(vec![
        Block::text(s)
    ])));
    assert!(!is_marker_message(&Message {
        role: Role::Assistant,
        content: Content::Text(s.to_string()),
    }));
    if expected {
        assert_eq!(
            tool_in_flight_note_label(s),
            None,
            "a marker is a note: {s:?}"
        );
    }
    let mut history: Vec<SharedMessage> = vec![Arc::new(Message::user_text(s))];
    assert_eq!(
        append_marker(&mut history, InterruptReason::User),
        !expected,
        "append_marker after {s:?}"
    );
}

/// `marker_matcher`: the input as text (when UTF-8), then a marker (or a note) with
/// one mutation, built from the same bytes.
pub fn marker_matcher(data: &[u8]) {
    let markers: Vec<&str> = InterruptReason::ALL.iter().map(|r| r.marker()).collect();
    assert_eq!(markers, SPEC_MARKERS, "InterruptReason::ALL");
    if let Ok(s) = std::str::from_utf8(data) {
        check_marker_string(s);
    }
    let mut r = Reader::new(data);
    let base = match r.below(SPEC_MARKERS.len() + 1) {
        i if i < SPEC_MARKERS.len() => SPEC_MARKERS[i].to_string(),
        _ => {
            let phrase = phrase(&mut r);
            tool_in_flight_note_text(&phrase, &names(&mut r))
        }
    };
    check_marker_string(&base);
    let mutated = mutate(&mut r, &base);
    check_marker_string(&mutated);
    check_note_string(&mutated);
}

// ---------------------------------------------------------------------------------
// Messages and replies for the state machine and the session
// ---------------------------------------------------------------------------------

const TEXTS: [&str; 9] = [
    "list the files",
    "",
    " ",
    "Sure.",
    "[Request interrupted by user]",
    "[Canceled while the tool call `bash` was running. It may have already started and partially applied its effects.]",
    "[Reply cut off at the output limit. Resume exactly where it stopped.]",
    "line\nbreak",
    "<turn_context>",
];

/// Builds messages, replies and ids from a [`Reader`]. Tool ids are fresh unless the
/// bytes ask for one from a small shared pool, which is how duplicates arise.
struct Gen<'a> {
    r: Reader<'a>,
    fresh: u32,
}

impl<'a> Gen<'a> {
    fn new(data: &'a [u8]) -> Self {
        Gen {
            r: Reader::new(data),
            fresh: 0,
        }
    }

    fn text(&mut self) -> String {
        match self.r.below(TEXTS.len() + 1) {
            i if i < TEXTS.len() => TEXTS[i].to_string(),
            _ => self.r.text(16),
        }
    }

    fn tool_id(&mut self) -> String {
        if self.r.below(4) == 0 {
            format!("toolu_p{}", self.r.below(3))
        } else {
            self.fresh += 1;
            format!("toolu_f{}", self.fresh)
        }
    }

    fn input_json(&mut self) -> serde_json::Value {
        match self.r.below(3) {
            0 => serde_json::json!({}),
            1 => serde_json::json!({ "path": self.text() }),
            _ => serde_json::json!({ "cmd": "ls", "n": self.r.byte() }),
        }
    }

    fn call(&mut self) -> ToolCall {
        ToolCall {
            id: self.tool_id(),
            name: name(&mut self.r),
            input: self.input_json(),
        }
    }

    fn block(&mut self) -> Block {
        match self.r.below(8) {
            0 | 1 => Block::text(self.text()),
            2 => Block::Thinking {
                thinking: self.text(),
                signature: self.text(),
            },
            3 => Block::RedactedThinking { data: self.text() },
            4 | 5 => {
                let c = self.call();
                Block::ToolUse {
                    id: c.id,
                    name: c.name,
                    input: c.input,
                }
            }
            6 => Block::tool_result(self.tool_id(), self.text(), self.r.flag()),
            _ => {
                let mut map = serde_json::Map::new();
                map.insert("type".into(), "image".into());
                map.insert("source".into(), self.text().into());
                Block::Unknown(map)
            }
        }
    }

    fn message(&mut self, role: Role) -> Message {
        let content = if self.r.below(4) == 0 {
            Content::Text(self.text())
        } else {
            let n = self.r.below(4);
            Content::Blocks((0..n).map(|_| self.block()).collect())
        };
        Message { role, content }
    }

    /// Mostly a well-formed assistant reply (text, maybe thinking, maybe fresh tool
    /// calls, a fitting stop reason); sometimes any message with any stop reason.
    fn reply(&mut self) -> GenerationOutput {
        const STOPS: [StopReason; 6] = [
            StopReason::EndTurn,
            StopReason::ToolUse,
            StopReason::MaxTokens,
            StopReason::StopSequence,
            StopReason::Refusal,
            StopReason::PauseTurn,
        ];
        let usage = self.usage();
        if self.r.below(6) == 0 {
            let role = if self.r.flag() {
                Role::User
            } else {
                Role::Assistant
            };
            let message = self.message(role);
            let stop_reason = STOPS[self.r.below(STOPS.len())];
            return GenerationOutput {
                message,
                stop_reason,
                usage,
            };
        }
        let mut blocks = Vec::new();
        if self.r.below(4) == 0 {
            blocks.push(Block::Thinking {
                thinking: "hmm".into(),
                signature: "sig".into(),
            });
        }
        blocks.push(Block::text(format!("reply {}", self.r.byte())));
        let calls = self.r.below(4);
        for _ in 0..calls {
            let c = self.call();
            blocks.push(Block::ToolUse {
                id: c.id,
                name: c.name,
                input: c.input,
            });
        }
        let stop_reason = match (calls, self.r.below(4)) {
            (0, 0) => StopReason::MaxTokens,
            (0, _) => StopReason::EndTurn,
            (_, 0) => StopReason::EndTurn,
            _ => StopReason::ToolUse,
        };
        GenerationOutput {
            message: Message::assistant_blocks(blocks),
            stop_reason,
            usage,
        }
    }

    /// Token counts stay below 2^32: summing a run's usage is then exact for any run
    /// a fuzz input can describe.
    fn usage(&mut self) -> Usage {
        Usage {
            input_tokens: u64::from(self.r.u16()),
            output_tokens: u64::from(self.r.u16()),
        }
    }

    fn cause(&mut self) -> CancelCause {
        CancelCause::ALL[self.r.below(CancelCause::ALL.len())]
    }

    /// An operation id: mostly the outstanding one, else a stale, a future or any id.
    fn op(
        &mut self,
        outstanding: Option<OperationId>,
        next: OperationId,
        last: u64,
    ) -> OperationId {
        match self.r.below(8) {
            0..=3 => outstanding.unwrap_or(next),
            4 => OperationId(last),
            5 => OperationId(last.saturating_sub(1)),
            6 => next,
            _ => OperationId(self.r.u64()),
        }
    }

    /// Results for `calls`: mostly one per call in call order, else one of the ways
    /// a batch result can be wrong.
    fn results(&mut self, calls: &[ToolCall]) -> Vec<ToolOutcome> {
        let mut results: Vec<ToolOutcome> = calls
            .iter()
            .map(|c| ToolOutcome {
                tool_use_id: c.id.clone(),
                content: self.text(),
                is_error: self.r.flag(),
            })
            .collect();
        match self.r.below(10) {
            0 => {
                results.pop();
            }
            1 => results.reverse(),
            2 => {
                if let Some(first) = results.first_mut() {
                    first.tool_use_id = self.tool_id();
                }
            }
            3 => results.push(ToolOutcome {
                tool_use_id: self.tool_id(),
                content: String::new(),
                is_error: false,
            }),
            _ => {}
        }
        results
    }
}

// ---------------------------------------------------------------------------------
// state_transitions
// ---------------------------------------------------------------------------------

/// The state-machine invariants that hold after every transition, accepted or not.
fn check_state(st: &TurnState, issued: Option<u64>) {
    match st.pending_operation() {
        PendingOperation::Tools { calls, .. } => {
            if let Err(e) = validate_history_allowing_pending_tools(st.history()) {
                panic!("history invalid while tools run: {e}");
            }
            let asked = st
                .history()
                .last()
                .map(|m| m.tool_calls())
                .unwrap_or_default();
            assert_eq!(
                asked, calls,
                "the pending batch is not the last message's calls"
            );
        }
        PendingOperation::None | PendingOperation::Generation { .. } => {
            if let Err(e) = validate_history(st.history()) {
                panic!("history invalid with no tool batch pending: {e}");
            }
        }
    }
    if let Some(issued) = issued {
        assert!(
            st.next_op().0 > issued,
            "next op {} is not above the last issued {issued}",
            st.next_op()
        );
    }
}

/// The effects of an accepted transition: fresh ids above every id issued before,
/// and the pending operation the last effect announces.
fn check_effects(st: &TurnState, effects: &[Effect], issued: &mut Option<u64>) {
    for effect in effects {
        let op = match effect {
            Effect::Generate { op } | Effect::ExecuteTools { op, .. } => *op,
            Effect::Finished { .. } => continue,
        };
        if let Some(prev) = *issued {
            assert!(
                op.0 > prev,
                "{op} issued after op#{prev}: ids must increase"
            );
        }
        *issued = Some(op.0);
    }
    let expected = match effects.last() {
        Some(Effect::Generate { op }) => PendingOperation::Generation { op: *op },
        Some(Effect::ExecuteTools { op, calls }) => PendingOperation::Tools {
            op: *op,
            calls: calls.clone(),
        },
        Some(Effect::Finished { .. }) | None => PendingOperation::None,
    };
    assert_eq!(
        st.pending_operation(),
        expected,
        "pending after {effects:?}"
    );
}

/// What one step did, for the checks that follow it.
enum Call {
    /// A completion for `op`: rejected as unexpected unless `op` is outstanding, and
    /// append-only when accepted.
    Completion(OperationId, Result<Vec<Effect>, StateError>),
    /// Input that needs an idle state.
    Input(Result<(), StateError>),
    Start(Result<Vec<Effect>, StateError>),
}

/// `state_transitions`: a sequence of calls decoded from the bytes, stale and
/// duplicate ids included, into one [`TurnState`]. After every call: no panic, a
/// rejected call leaves the serialized state unchanged, ids strictly increase, an
/// accepted completion only appends, and the history stays valid.
pub fn state_transitions(data: &[u8]) {
    let mut g = Gen::new(data);
    let mut st = TurnState::default().with_max_truncated_resumes(g.r.below(4) as u32);
    let mut issued: Option<u64> = None;
    for _ in 0..64 {
        if g.r.is_empty() {
            break;
        }
        let before = st.to_bytes();
        let before_history: Vec<SharedMessage> = st.history().to_vec();
        let outstanding = st.pending_operation().op();
        let last = issued.unwrap_or(0);
        let call = match g.r.below(10) {
            0 | 1 => Call::Start(st.start()),
            2 | 3 => {
                let op = g.op(outstanding, st.next_op(), last);
                let output = g.reply();
                Call::Completion(op, st.generated(op, output))
            }
            4 => {
                let op = g.op(outstanding, st.next_op(), last);
                Call::Completion(op, st.generation_failed(op))
            }
            5 => {
                let op = g.op(outstanding, st.next_op(), last);
                let calls = match st.pending_operation() {
                    PendingOperation::Tools { calls, .. } => calls,
                    _ => Vec::new(),
                };
                let results = g.results(&calls);
                let cancelled = g.r.below(4) == 0;
                Call::Completion(op, st.tools_completed(op, results, cancelled))
            }
            6 => {
                let op = g.op(outstanding, st.next_op(), last);
                let cause = g.cause();
                match st.pending_operation() {
                    PendingOperation::Tools { calls, .. } if g.r.flag() => {
                        let mask = g.r.byte();
                        let finished: Vec<ToolOutcome> = g
                            .results(&calls)
                            .into_iter()
                            .enumerate()
                            .filter(|(i, _)| mask & (1 << (i % 8)) != 0)
                            .map(|(_, r)| r)
                            .collect();
                        Call::Completion(op, st.cancel_tools(op, &finished, cause))
                    }
                    _ => {
                        let partial = match g.r.below(3) {
                            0 => None,
                            1 => Some(g.reply().message),
                            _ => Some(g.message(Role::Assistant)),
                        };
                        Call::Completion(op, st.cancel_generation(op, partial, cause))
                    }
                }
            }
            7 => {
                let role = if g.r.below(6) == 0 {
                    Role::Assistant
                } else {
                    Role::User
                };
                let message = g.message(role);
                Call::Input(st.append_input(message))
            }
            8 => {
                let index = g.r.below(st.history().len() + 2);
                Call::Input(st.rewind(index))
            }
            _ => {
                let history: Vec<SharedMessage> = match g.r.below(4) {
                    0 => st.history().to_vec(),
                    1 => {
                        let cut = g.r.below(st.history().len() + 1);
                        st.history()[..cut].to_vec()
                    }
                    2 => Vec::new(),
                    _ => {
                        let n = g.r.below(4);
                        (0..n)
                            .map(|i| {
                                let role = if i % 2 == 0 {
                                    Role::User
                                } else {
                                    Role::Assistant
                                };
                                Arc::new(g.message(role))
                            })
                            .collect()
                    }
                };
                Call::Input(st.replace_context(history))
            }
        };
        let rejected = match &call {
            Call::Completion(_, r) | Call::Start(r) => r.is_err(),
            Call::Input(r) => r.is_err(),
        };
        if rejected {
            assert!(st.to_bytes() == before, "a rejected call changed the state");
        }
        match call {
            Call::Completion(op, result) => {
                if Some(op) != outstanding {
                    assert!(
                        matches!(result, Err(StateError::UnexpectedCompletion { .. })),
                        "a completion for {op} with {outstanding:?} outstanding gave {result:?}"
                    );
                }
                if let Ok(effects) = result {
                    let history = st.history();
                    assert!(
                        history.len() >= before_history.len()
                            && before_history
                                .iter()
                                .zip(history)
                                .all(|(a, b)| Arc::ptr_eq(a, b)),
                        "an accepted completion rewrote earlier messages"
                    );
                    check_effects(&st, &effects, &mut issued);
                }
            }
            Call::Start(result) => {
                if let Some(outstanding) = outstanding {
                    assert_eq!(result, Err(StateError::Busy { outstanding }));
                }
                if let Ok(effects) = result {
                    check_effects(&st, &effects, &mut issued);
                }
            }
            Call::Input(result) => {
                if let Some(outstanding) = outstanding {
                    assert_eq!(result, Err(StateError::Busy { outstanding }));
                }
            }
        }
        check_state(&st, issued);
    }
}

// ---------------------------------------------------------------------------------
// log_recovery
// ---------------------------------------------------------------------------------

/// The log a restore leaves behind: `log` with a torn tail cut and the records the
/// restore asked to persist appended.
fn apply_outputs(log: &[u8], outputs: &[Output]) -> Vec<u8> {
    let mut out = log.to_vec();
    for o in outputs {
        match o {
            Output::TruncateLog { len } => out.truncate(*len),
            Output::Persist { bytes } => out.extend_from_slice(bytes),
            _ => {}
        }
    }
    out
}

/// Restores `log`; when that succeeds, restoring again from the log the first
/// restore left behind must give the same session and ask for nothing more. Returns
/// whether the first restore succeeded.
fn check_restore(config: &SessionConfig, log: &[u8]) -> Option<Session> {
    let _ = decode_log(log);
    let (first, outputs) = Session::restore(config.clone(), log).ok()?;
    assert!(first.is_idle(), "a restored session is not idle");
    let after = apply_outputs(log, &outputs);
    let (second, again) = match Session::restore(config.clone(), &after) {
        Ok(x) => x,
        Err(e) => panic!("restoring a second time fails: {e}"),
    };
    assert!(
        first.to_bytes() == second.to_bytes(),
        "restoring twice differs from restoring once"
    );
    let more: Vec<&Output> = again
        .iter()
        .filter(|o| matches!(o, Output::Persist { .. } | Output::TruncateLog { .. }))
        .collect();
    assert!(more.is_empty(), "a second restore asks to write {more:?}");
    Some(first)
}

/// A well-formed reply to `op` as stream events: start, maybe thinking, text, some
/// tool calls, the stop reason, stop.
fn reply_events(g: &mut Gen<'_>) -> Vec<StreamEvent> {
    let mut events = vec![StreamEvent::MessageStart];
    let mut index = 0;
    if g.r.below(4) == 0 {
        events.push(StreamEvent::BlockStart {
            index,
            block: BlockStart::Thinking,
        });
        events.push(StreamEvent::ThinkingDelta {
            index,
            thinking: "hmm".into(),
        });
        events.push(StreamEvent::SignatureDelta {
            index,
            signature: "sig".into(),
        });
        events.push(StreamEvent::BlockStop { index });
        index += 1;
    }
    events.push(StreamEvent::BlockStart {
        index,
        block: BlockStart::Text,
    });
    for _ in 0..=g.r.below(3) {
        events.push(StreamEvent::TextDelta {
            index,
            text: g.text(),
        });
    }
    events.push(StreamEvent::BlockStop { index });
    index += 1;
    let calls = g.r.below(4);
    for _ in 0..calls {
        let id = g.tool_id();
        let name = name(&mut g.r);
        events.push(StreamEvent::BlockStart {
            index,
            block: BlockStart::ToolUse { id, name },
        });
        let json = if g.r.below(8) == 0 {
            "{\"path\":".to_string()
        } else {
            "{\"path\":\"a\"}".to_string()
        };
        events.push(StreamEvent::InputJsonDelta {
            index,
            partial_json: json,
        });
        events.push(StreamEvent::BlockStop { index });
        index += 1;
    }
    let stop_reason = match (calls, g.r.below(4)) {
        (0, 0) => StopReason::MaxTokens,
        (0, _) | (_, 0) => StopReason::EndTurn,
        _ => StopReason::ToolUse,
    };
    events.push(StreamEvent::MessageDelta {
        stop_reason,
        usage: g.usage(),
    });
    events.push(StreamEvent::MessageStop);
    events
}

/// Any one stream event.
fn any_event(g: &mut Gen<'_>) -> StreamEvent {
    let index = g.r.below(4);
    match g.r.below(10) {
        0 => StreamEvent::MessageStart,
        1 => StreamEvent::BlockStart {
            index,
            block: match g.r.below(4) {
                0 => BlockStart::Text,
                1 => BlockStart::Thinking,
                2 => BlockStart::RedactedThinking { data: g.text() },
                _ => BlockStart::ToolUse {
                    id: g.tool_id(),
                    name: name(&mut g.r),
                },
            },
        },
        2 => StreamEvent::TextDelta {
            index,
            text: g.text(),
        },
        3 => StreamEvent::ThinkingDelta {
            index,
            thinking: g.text(),
        },
        4 => StreamEvent::SignatureDelta {
            index,
            signature: g.text(),
        },
        5 => StreamEvent::InputJsonDelta {
            index,
            partial_json: g.text(),
        },
        6 => StreamEvent::BlockStop { index },
        7 => StreamEvent::MessageDelta {
            stop_reason: StopReason::EndTurn,
            usage: g.usage(),
        },
        8 => StreamEvent::MessageStop,
        _ => StreamEvent::Error {
            kind: "overloaded_error".into(),
            message: g.text(),
        },
    }
}

/// Drives a session with inputs decoded from `g` and returns its log. Along the way:
/// a refused input leaves the session unchanged, and a delivery for an operation that
/// is not outstanding returns nothing and changes nothing.
fn scripted_session(g: &mut Gen<'_>, config: &SessionConfig) -> Vec<u8> {
    let mut session = Session::new(config.clone());
    let mut log = Vec::new();
    let mut last_op = OperationId(0);
    for _ in 0..24 {
        if g.r.is_empty() {
            break;
        }
        let pending = session.pending_operation();
        let current = pending.op();
        if let Some(op) = current {
            last_op = op;
        }
        let op = match g.r.below(6) {
            0 => last_op,
            1 => OperationId(last_op.0.saturating_sub(1)),
            _ => current.unwrap_or(last_op),
        };
        let inputs: Vec<Input> = match g.r.below(10) {
            0 | 1 => vec![Input::Prompt {
                text: g.text(),
                now: "2026-01-01T00:00:00Z".into(),
            }],
            2 | 3 => {
                let events = reply_events(g);
                let keep = if g.r.below(4) == 0 {
                    g.r.below(events.len() + 1)
                } else {
                    events.len()
                };
                events
                    .into_iter()
                    .take(keep)
                    .map(|event| Input::Stream { op, event })
                    .collect()
            }
            4 => vec![Input::Stream {
                op,
                event: any_event(g),
            }],
            5 | 6 => {
                let calls = match &pending {
                    PendingOperation::Tools { calls, .. } => calls.clone(),
                    _ => vec![g.call()],
                };
                let mut outcomes = g.results(&calls);
                if g.r.below(4) == 0 {
                    outcomes.truncate(g.r.below(outcomes.len() + 1));
                }
                outcomes
                    .into_iter()
                    .map(|outcome| Input::ToolResult { op, outcome })
                    .collect()
            }
            7 => vec![Input::Cancel { cause: g.cause() }],
            8 => match g.r.below(3) {
                0 => vec![Input::Compact { summary: g.text() }],
                1 => vec![Input::Rewind {
                    index: g.r.below(session.history().len() + 2),
                }],
                _ => vec![Input::Configure {
                    system: g.text(),
                    tools: vec![ToolSpec {
                        name: name(&mut g.r),
                        description: g.text(),
                        input_schema: serde_json::json!({"type": "object"}),
                    }],
                }],
            },
            _ => vec![Input::Stream {
                op,
                event: StreamEvent::Error {
                    kind: "api_error".into(),
                    message: g.text(),
                },
            }],
        };
        for input in inputs {
            let before = session.to_bytes();
            let stale = match &input {
                Input::Stream { op, .. } | Input::ToolResult { op, .. } => {
                    session.pending_operation().op() != Some(*op)
                }
                _ => false,
            };
            match session.handle(input) {
                Ok(outputs) => {
                    if stale {
                        assert!(outputs.is_empty(), "a stale delivery produced {outputs:?}");
                        assert!(
                            session.to_bytes() == before,
                            "a stale delivery changed the session"
                        );
                    }
                    for o in outputs {
                        if let Output::Persist { bytes } = o {
                            log.extend_from_slice(&bytes);
                        }
                    }
                }
                Err(_) => assert!(
                    session.to_bytes() == before,
                    "a refused input changed the session"
                ),
            }
        }
    }
    log
}

/// Records of any kind, well framed, whatever they mean together.
fn record_soup(g: &mut Gen<'_>) -> Vec<u8> {
    let mut log = Vec::new();
    for _ in 0..16 {
        if g.r.is_empty() {
            break;
        }
        let op = OperationId(u64::from(g.r.byte() % 8));
        let record = match g.r.below(12) {
            0 => Record::Configure {
                system: g.text(),
                tools: Vec::new(),
            },
            1 => {
                let baseline = g.r.below(6);
                let message = g.message(Role::User);
                Record::TurnStart {
                    baseline,
                    messages: vec![message],
                    pending: PendingOperation::Generation { op },
                }
            }
            2 | 3 => {
                let role = if g.r.flag() {
                    Role::Assistant
                } else {
                    Role::User
                };
                let message = g.message(role);
                let pending = match g.r.below(3) {
                    0 => PendingOperation::None,
                    1 => PendingOperation::Generation { op },
                    _ => PendingOperation::Tools {
                        op,
                        calls: message.tool_calls(),
                    },
                };
                Record::Append {
                    messages: vec![message],
                    pending,
                }
            }
            4 => Record::Draft {
                op,
                base_len: g.r.below(6),
            },
            5 => Record::DraftText { op, text: g.text() },
            6 => Record::ToolResult {
                op,
                outcome: ToolOutcome {
                    tool_use_id: g.tool_id(),
                    content: g.text(),
                    is_error: g.r.flag(),
                },
            },
            7 => Record::Receipt {
                op,
                digest: g.text(),
            },
            8 => Record::Reset {
                messages: vec![g.message(Role::User)],
                compacted: vec![g.text()],
            },
            9 => Record::Rewind { len: g.r.below(6) },
            10 => Record::TurnEnd {
                outcome: TurnOutcome::Crashed,
            },
            _ => {
                // A payload that is framed correctly but may not be a record at all.
                log.extend(encode_frame(g.r.take(64)));
                continue;
            }
        };
        log.extend(encode_record(&record));
    }
    log
}

/// Damage to a log: none, a cut (a torn write), a flipped byte, or both.
fn damage(g: &mut Gen<'_>, log: &mut Vec<u8>) -> (bool, bool) {
    let how = g.r.below(4);
    let cut = how & 1 == 1;
    let flip = how & 2 == 2;
    if cut {
        let at = usize::from(g.r.u16()) % (log.len() + 1);
        log.truncate(at);
    }
    if flip && !log.is_empty() {
        let at = usize::from(g.r.u16()) % log.len();
        let bit = 1u8 << (g.r.byte() % 8);
        log[at] ^= bit;
    }
    (cut, flip && !log.is_empty())
}

/// `log_recovery`: the input itself as a log, then a log built from the same bytes
/// (a scripted session's, or well-framed records of any kind), possibly cut short or
/// with a byte flipped. Decoding and restoring never panic; restoring twice equals
/// restoring once; a real session's log cut anywhere (a torn write) restores to a
/// valid history.
pub fn log_recovery(data: &[u8]) {
    let config = SessionConfig::default();
    check_restore(&config, data);
    let mut g = Gen::new(data);
    if g.r.flag() {
        let mut log = scripted_session(&mut g, &config);
        let (_, flipped) = damage(&mut g, &mut log);
        let restored = check_restore(&config, &log);
        if !flipped {
            let Some(session) = restored else {
                let err = Session::restore(config.clone(), &log).err();
                panic!("a session's log cut short does not restore: {err:?}");
            };
            if let Err(e) = validate_history(session.history()) {
                panic!("a restored history is invalid: {e}");
            }
        }
    } else {
        let mut log = record_soup(&mut g);
        damage(&mut g, &mut log);
        check_restore(&config, &log);
    }
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
            marker_matcher(data);
            state_transitions(data);
            log_recovery(data);
        }
    }
}
