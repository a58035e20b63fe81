//! Proptest strategies for the public input types of `turnsim-core` (feature
//! `proptest`), for the property suites in `tests/prop_*.rs` and for users' own suites.
//!
//! Guarantee: every strategy generates what its doc comment promises, by construction
//! (the few filters only drop the rare draw that would break a promise):
//! [`valid_history`] yields only histories
//! that [`validate_history`](crate::validate_history) accepts, [`near_marker`] yields
//! only strings that are not one of the seven markers, a [`HistoryMutation`] applied to
//! a valid history predicts the exact [`HistoryError`] the validator must report, and a
//! [`SessionScript`] plays on any session without panicking. Why it matters: a
//! property that fails must point at the engine, never at its generator; and a user
//! who composes these into a suite for their own engine can rely on the same promises.
//!
//! The catalogue:
//!
//! | strategy | yields |
//! |---|---|
//! | [`plausible_tool_name`], [`implausible_tool_name`], [`tool_name`], [`forbidden_name_char`] | tool names on either side of [`is_plausible_tool_name`] |
//! | [`cancel_phrase`], [`cancel_cause`], [`interrupt_reason`] | the spec's fixed wordings |
//! | [`note_parts`], [`note`], [`note_mutation`], [`near_note`] | tool-in-flight notes and strings one mutation away |
//! | [`marker`], [`marker_mutation`], [`near_marker`] | interruption markers and strings one mutation away |
//! | [`text`], [`user_message`], [`assistant_reply`], [`tool_input`], [`any_block`], [`any_message`] | messages, valid and not |
//! | [`tool_batch`], [`history_step`] with [`build_history`], [`valid_history`], [`history_with_pending_tools`], [`any_history`] | histories |
//! | [`history_mutation`], [`mutated_history`] | a valid history broken by one catalogued mutation, with the error it must raise |
//! | [`reply_plan`], [`stream_events`], [`stream_event`] | provider stream events, well-formed or arbitrary |
//! | [`input`], [`session_step`], [`session_script`] | session inputs, and scripted sessions that produce a durable log |
//!
//! Strategies compose with the usual combinators. For example, a suite for another
//! engine's note matcher:
//!
//! ```
//! use proptest::prelude::*;
//! use turnsim_core::strategies::{near_note, note};
//!
//! use turnsim_core::tool_in_flight_note_label as label;
//!
//! proptest!(|(n in note(), near in near_note())| {
//!     prop_assert!(label(&n).is_some());
//!     if near.mutation.always_rejected() {
//!         prop_assert_eq!(label(&near.mutated), None);
//!     }
//! });
//! ```

use crate::history::HistoryError;
use crate::interrupt::{CancelCause, InterruptReason};
use crate::message::{Block, Content, Message, Role, SharedMessage, ToolResultContent};
use crate::note::{CANCEL_PHRASES, is_plausible_tool_name, tool_in_flight_note_text};
use crate::session::{BlockStart, Input, Output, Session, StreamEvent};
use crate::state::{OperationId, PendingOperation, StopReason, ToolOutcome, Usage};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use std::sync::Arc;

// ---------------------------------------------------------------------------------
// Tool names
// ---------------------------------------------------------------------------------

/// Names [`is_plausible_tool_name`] accepts: 1 to 128 bytes of ASCII alphanumerics and
/// `_ . : -`. Mostly short (`bash`, `fs.read_file`), sometimes at the 128-byte limit.
pub fn plausible_tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z][a-z_]{0,11}",
        3 => "[A-Za-z0-9_.:-]{1,24}",
        1 => "[A-Za-z0-9_.:-]{125,128}",
    ]
}

/// A character that no plausible tool name contains: the ones that matter (backtick,
/// newline, carriage return, space, comma, brackets, quotes) and any other.
pub fn forbidden_name_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => select(vec![
            '`', '\n', '\r', ' ', ',', '[', ']', '(', ')', '"', '\'', '\t', '\0', '/', '\\',
            '*', 'é', '—', '✓',
        ]),
        1 => any::<char>().prop_filter("outside the name alphabet", |c| !is_name_char(*c)),
    ]
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

/// Names [`is_plausible_tool_name`] rejects: the empty name, names over 128 bytes,
/// a plausible name with one [`forbidden_name_char`] inserted, and arbitrary strings
/// that happen to be implausible. These must never be copied into a note.
pub fn implausible_tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        2 => "[a-z0-9_]{129,140}",
        6 => ("[a-z][a-z_.:-]{0,11}", forbidden_name_char(), any::<Index>())
            .prop_map(|(name, ch, at)| insert_char(&name, &at, ch)),
        2 => any::<String>().prop_filter("implausible", |s| !is_plausible_tool_name(s)),
    ]
}

/// Any tool name a model might send: three plausible to one implausible.
pub fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![3 => plausible_tool_name(), 1 => implausible_tool_name()]
}

/// One of the seven [`InterruptReason`]s.
pub fn interrupt_reason() -> impl Strategy<Value = InterruptReason> {
    select(InterruptReason::ALL.to_vec())
}

/// One of the five live [`CancelCause`]s.
pub fn cancel_cause() -> impl Strategy<Value = CancelCause> {
    select(CancelCause::ALL.to_vec())
}

/// One of [`CANCEL_PHRASES`] (the five cancel phrases and `"Canceled"`).
pub fn cancel_phrase() -> impl Strategy<Value = &'static str> {
    select(&CANCEL_PHRASES[..])
}

// ---------------------------------------------------------------------------------
// Notes and near-notes
// ---------------------------------------------------------------------------------

/// What a note is generated from: a phrase of [`CANCEL_PHRASES`] and a non-empty list
/// (1 to 5) of [`tool_name`]s, plausible and not.
pub fn note_parts() -> impl Strategy<Value = (&'static str, Vec<String>)> {
    (cancel_phrase(), vec(tool_name(), 1..=5))
}

/// A tool-in-flight note as [`tool_in_flight_note_text`] writes it.
pub fn note() -> impl Strategy<Value = String> {
    note_parts().prop_map(|(phrase, names)| tool_in_flight_note_text(phrase, &names))
}

const SINGULAR_HEAD: &str = " while the tool call ";
const PLURAL_HEAD: &str = " while the tool calls ";
const SINGULAR_TAIL: &str =
    " was running. It may have already started and partially applied its effects.]";
const PLURAL_TAIL: &str =
    " were running. They may have already started and partially applied their effects.]";

/// Phrases that look like cancel phrases and are not in [`CANCEL_PHRASES`].
const NOT_PHRASES: [&str; 7] = [
    "Cancelled",
    "canceled",
    "Canceled by the user",
    "Canceled by user.",
    "Canceled (runtime restarted",
    "Interrupted",
    "",
];

/// One edit of a note, from a catalogue. Applied to the text the engine generates (not
/// to a copy of its wording), so the mutations follow the engine if its wording moves.
#[derive(Clone, Debug)]
pub enum NoteMutation {
    /// Insert `ch` before the character at `at`. May still be a note (a plausible
    /// character inside a backticked name).
    InsertChar { at: Index, ch: char },
    /// Remove the character at `at`. May still be a note (inside a long name).
    RemoveChar { at: Index },
    /// Replace the character at `at` by `ch` (by another character when they are
    /// equal). May still be a note.
    ChangeChar { at: Index, ch: char },
    /// Insert `word` (with a leading space) at character `at`. May still be a note
    /// (`"Canceled"` + `" by user"` is another phrase).
    InsertWord { at: Index, word: String },
    /// A space before the opening bracket. Never a note.
    LeadingSpace,
    /// A space after the closing bracket. Never a note.
    TrailingSpace,
    /// A `\n` (or `\r`) inserted at character `at`. Never a note.
    LineBreak { at: Index, carriage_return: bool },
    /// Singular wording for several names, or plural wording for one. Never a note.
    SwapNumber,
    /// The name list removed, wording kept. Never a note.
    EmptyNames,
    /// The name at `at` replaced by `` `name` ``, where `name` is implausible and has
    /// no backtick. Never a note.
    BacktickImplausible { at: Index, name: String },
    /// The phrase replaced by one that is not in [`CANCEL_PHRASES`]. Never a note.
    UnknownPhrase { phrase: &'static str },
    /// The opening (or closing) bracket removed. Never a note.
    DropBracket { open: bool },
    /// A proper prefix, `at` characters long. Never a note.
    Truncate { at: Index },
}

impl NoteMutation {
    /// True for the mutations whose result is never a note, whatever the input.
    pub fn always_rejected(&self) -> bool {
        !matches!(
            self,
            NoteMutation::InsertChar { .. }
                | NoteMutation::RemoveChar { .. }
                | NoteMutation::ChangeChar { .. }
                | NoteMutation::InsertWord { .. }
        )
    }

    /// The note for `phrase` and `names`, mutated.
    pub fn apply(&self, phrase: &str, names: &[String]) -> String {
        let note = tool_in_flight_note_text(phrase, names);
        match self {
            NoteMutation::InsertChar { at, ch } => insert_char(&note, at, *ch),
            NoteMutation::RemoveChar { at } => remove_char(&note, at),
            NoteMutation::ChangeChar { at, ch } => change_char(&note, at, *ch),
            NoteMutation::InsertWord { at, word } => insert_str(&note, at, &format!(" {word}")),
            NoteMutation::LeadingSpace => format!(" {note}"),
            NoteMutation::TrailingSpace => format!("{note} "),
            NoteMutation::LineBreak {
                at,
                carriage_return,
            } => insert_char(&note, at, if *carriage_return { '\r' } else { '\n' }),
            NoteMutation::SwapNumber => {
                let (items, plural) = split_note(&note, phrase);
                join_note(phrase, &items, !plural)
            }
            NoteMutation::EmptyNames => {
                let (_, plural) = split_note(&note, phrase);
                join_note(phrase, &[], plural)
            }
            NoteMutation::BacktickImplausible { at, name } => {
                let (mut items, plural) = split_note(&note, phrase);
                if !items.is_empty() {
                    let i = at.index(items.len());
                    items[i] = format!("`{name}`");
                }
                join_note(phrase, &items, plural)
            }
            NoteMutation::UnknownPhrase { phrase: other } => {
                let rest = note.strip_prefix('[').unwrap_or(&note);
                let rest = rest.strip_prefix(phrase).unwrap_or(rest);
                format!("[{other}{rest}")
            }
            NoteMutation::DropBracket { open: true } => note.chars().skip(1).collect(),
            NoteMutation::DropBracket { open: false } => {
                let mut s = note;
                s.pop();
                s
            }
            NoteMutation::Truncate { at } => {
                let n = note.chars().count();
                note.chars().take(at.index(n)).collect()
            }
        }
    }
}

/// The shown items of a note (`` `name` `` or the unrecognised placeholder) and whether
/// it uses the plural wording. Names never contain `", "` once shown, so the split is
/// exact.
fn split_note(note: &str, phrase: &str) -> (Vec<String>, bool) {
    let body = note
        .strip_prefix('[')
        .and_then(|r| r.strip_prefix(phrase))
        .unwrap_or(note);
    for (head, tail, plural) in [
        (SINGULAR_HEAD, SINGULAR_TAIL, false),
        (PLURAL_HEAD, PLURAL_TAIL, true),
    ] {
        if let Some(list) = body.strip_prefix(head).and_then(|r| r.strip_suffix(tail)) {
            return (list.split(", ").map(str::to_string).collect(), plural);
        }
    }
    (Vec::new(), false)
}

fn join_note(phrase: &str, items: &[String], plural: bool) -> String {
    let (head, tail) = if plural {
        (PLURAL_HEAD, PLURAL_TAIL)
    } else {
        (SINGULAR_HEAD, SINGULAR_TAIL)
    };
    format!("[{phrase}{head}{}{tail}", items.join(", "))
}

/// Any [`NoteMutation`] from the catalogue.
pub fn note_mutation() -> impl Strategy<Value = NoteMutation> {
    let word = prop_oneof![
        select(vec!["by user", "really", "not", "tool", "Canceled", "and"]).prop_map(String::from),
        "[a-z]{1,8}",
    ];
    let backtick_free = implausible_tool_name().prop_filter("no backtick", |n| !n.contains('`'));
    prop_oneof![
        (any::<Index>(), any::<char>()).prop_map(|(at, ch)| NoteMutation::InsertChar { at, ch }),
        any::<Index>().prop_map(|at| NoteMutation::RemoveChar { at }),
        (any::<Index>(), any::<char>()).prop_map(|(at, ch)| NoteMutation::ChangeChar { at, ch }),
        (any::<Index>(), word).prop_map(|(at, word)| NoteMutation::InsertWord { at, word }),
        Just(NoteMutation::LeadingSpace),
        Just(NoteMutation::TrailingSpace),
        (any::<Index>(), any::<bool>()).prop_map(|(at, carriage_return)| {
            NoteMutation::LineBreak {
                at,
                carriage_return,
            }
        }),
        Just(NoteMutation::SwapNumber),
        Just(NoteMutation::EmptyNames),
        (any::<Index>(), backtick_free)
            .prop_map(|(at, name)| NoteMutation::BacktickImplausible { at, name }),
        select(&NOT_PHRASES[..]).prop_map(|phrase| NoteMutation::UnknownPhrase { phrase }),
        any::<bool>().prop_map(|open| NoteMutation::DropBracket { open }),
        any::<Index>().prop_map(|at| NoteMutation::Truncate { at }),
    ]
}

/// A note and one mutation of it: what it was made from, the note itself, the
/// mutation and the result.
#[derive(Clone, Debug)]
pub struct NearNote {
    pub phrase: &'static str,
    pub names: Vec<String>,
    pub note: String,
    pub mutation: NoteMutation,
    pub mutated: String,
}

/// A note with one [`NoteMutation`] applied. Most are not notes any more; those whose
/// mutation is [`NoteMutation::always_rejected`] never are.
pub fn near_note() -> impl Strategy<Value = NearNote> {
    (note_parts(), note_mutation()).prop_map(|((phrase, names), mutation)| NearNote {
        note: tool_in_flight_note_text(phrase, &names),
        mutated: mutation.apply(phrase, &names),
        phrase,
        names,
        mutation,
    })
}

// ---------------------------------------------------------------------------------
// Markers and near-markers
// ---------------------------------------------------------------------------------

/// One of the seven interruption markers.
pub fn marker() -> impl Strategy<Value = &'static str> {
    interrupt_reason().prop_map(InterruptReason::marker)
}

/// One edit of a marker, from a catalogue. Every one yields a string that is not any of
/// the seven markers: each changes the string, and no two markers are within one edit
/// of each other.
#[derive(Clone, Debug)]
pub enum MarkerMutation {
    /// Insert `ch` before the character at `at`.
    InsertChar { at: Index, ch: char },
    /// Remove the character at `at`.
    RemoveChar { at: Index },
    /// Replace the character at `at` by `ch` (by another character when equal).
    ChangeChar { at: Index, ch: char },
    /// A space after the marker.
    TrailingSpace,
    /// A space before the marker.
    LeadingSpace,
    /// A line break after the marker.
    TrailingNewline,
    /// The marker as the prefix of more text: the user's own words follow it.
    MoreText { text: String },
    /// Text before the marker.
    TextBefore { text: String },
    /// The marker in lower case.
    Lowercase,
    /// The marker without its brackets (its label).
    DropBrackets,
    /// A proper prefix, `at` characters long.
    Truncate { at: Index },
}

impl MarkerMutation {
    /// `marker`, mutated.
    pub fn apply(&self, marker: &str) -> String {
        match self {
            MarkerMutation::InsertChar { at, ch } => insert_char(marker, at, *ch),
            MarkerMutation::RemoveChar { at } => remove_char(marker, at),
            MarkerMutation::ChangeChar { at, ch } => change_char(marker, at, *ch),
            MarkerMutation::TrailingSpace => format!("{marker} "),
            MarkerMutation::LeadingSpace => format!(" {marker}"),
            MarkerMutation::TrailingNewline => format!("{marker}\n"),
            MarkerMutation::MoreText { text } => format!("{marker}{text}"),
            MarkerMutation::TextBefore { text } => format!("{text}{marker}"),
            MarkerMutation::Lowercase => marker.to_lowercase(),
            MarkerMutation::DropBrackets => marker
                .strip_prefix('[')
                .and_then(|m| m.strip_suffix(']'))
                .unwrap_or(marker)
                .to_string(),
            MarkerMutation::Truncate { at } => {
                let n = marker.chars().count();
                marker.chars().take(at.index(n)).collect()
            }
        }
    }
}

/// Any [`MarkerMutation`] from the catalogue.
pub fn marker_mutation() -> impl Strategy<Value = MarkerMutation> {
    let more = prop_oneof![
        select(vec![" do Y instead", " ", "\n", ".", " and then do Y", "]"]).prop_map(String::from),
        ".{1,12}",
    ];
    let before = prop_oneof![
        select(vec![" ", "\n", "[", "Note: "]).prop_map(String::from),
        ".{1,12}",
    ];
    prop_oneof![
        (any::<Index>(), any::<char>()).prop_map(|(at, ch)| MarkerMutation::InsertChar { at, ch }),
        any::<Index>().prop_map(|at| MarkerMutation::RemoveChar { at }),
        (any::<Index>(), any::<char>()).prop_map(|(at, ch)| MarkerMutation::ChangeChar { at, ch }),
        Just(MarkerMutation::TrailingSpace),
        Just(MarkerMutation::LeadingSpace),
        Just(MarkerMutation::TrailingNewline),
        more.prop_map(|text| MarkerMutation::MoreText { text }),
        before.prop_map(|text| MarkerMutation::TextBefore { text }),
        Just(MarkerMutation::Lowercase),
        Just(MarkerMutation::DropBrackets),
        any::<Index>().prop_map(|at| MarkerMutation::Truncate { at }),
    ]
}

/// A marker and one mutation of it.
#[derive(Clone, Debug)]
pub struct NearMarker {
    pub reason: InterruptReason,
    pub mutation: MarkerMutation,
    pub mutated: String,
}

/// A marker with one [`MarkerMutation`] applied: never one of the seven markers.
pub fn near_marker() -> impl Strategy<Value = NearMarker> {
    (interrupt_reason(), marker_mutation()).prop_map(|(reason, mutation)| NearMarker {
        mutated: mutation.apply(reason.marker()),
        reason,
        mutation,
    })
}

fn char_count(s: &str) -> usize {
    s.chars().count()
}

fn insert_str(s: &str, at: &Index, piece: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    let i = at.index(chars.len() + 1);
    chars.splice(i..i, piece.chars());
    chars.into_iter().collect()
}

fn insert_char(s: &str, at: &Index, ch: char) -> String {
    insert_str(s, at, ch.encode_utf8(&mut [0; 4]))
}

fn remove_char(s: &str, at: &Index) -> String {
    let n = char_count(s);
    if n == 0 {
        return String::new();
    }
    let i = at.index(n);
    s.chars()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, c)| c)
        .collect()
}

fn change_char(s: &str, at: &Index, ch: char) -> String {
    let n = char_count(s);
    if n == 0 {
        return ch.to_string();
    }
    let i = at.index(n);
    s.chars()
        .enumerate()
        .map(|(j, c)| match j == i {
            false => c,
            true if c != ch => ch,
            true if c == '#' => '%',
            true => '#',
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------

/// Message text: mostly words, sometimes arbitrary Unicode, a marker, a note, a line
/// break or whitespace. Never empty.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[A-Za-z0-9][A-Za-z0-9 ,.!?'-]{0,30}",
        2 => ".{1,20}",
        1 => marker().prop_map(String::from),
        1 => note(),
        1 => select(vec![" ", "\n", "line one\nline two", "`code`", "<turn_context>"])
            .prop_map(String::from),
    ]
}

/// A user message as a person writes it: a string, or text blocks (with, now and
/// then, a block of a type this crate does not know, such as an image).
pub fn user_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        3 => text().prop_map(Message::user_text),
        1 => (vec(text(), 1..=3), any::<bool>()).prop_map(|(texts, image)| {
            let mut blocks: Vec<Block> = texts.into_iter().map(Block::text).collect();
            if image {
                blocks.push(unknown_block());
            }
            Message::user_blocks(blocks)
        }),
    ]
}

fn unknown_block() -> Block {
    let mut map = serde_json::Map::new();
    map.insert("type".into(), "image".into());
    map.insert(
        "source".into(),
        serde_json::json!({"type": "base64", "data": "AAAA"}),
    );
    Block::Unknown(map)
}

fn thinking_block() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => (text(), "[A-Za-z0-9+/]{4,12}=?").prop_map(|(thinking, signature)| {
            Block::Thinking { thinking, signature }
        }),
        1 => "[A-Za-z0-9+/]{4,16}".prop_map(|data| Block::RedactedThinking { data }),
    ]
}

/// Blocks an assistant message may open with: thinking, redacted thinking, text.
fn preamble() -> impl Strategy<Value = Vec<Block>> {
    (
        proptest::option::weighted(0.4, thinking_block()),
        proptest::option::weighted(0.5, text()),
    )
        .prop_map(|(thinking, words)| thinking.into_iter().chain(words.map(Block::text)).collect())
}

/// An assistant reply without tool calls, never empty: a string, or blocks (optional
/// thinking, then text), or thinking alone.
pub fn assistant_reply() -> impl Strategy<Value = Message> {
    prop_oneof![
        1 => text().prop_map(|t| Message {
            role: Role::Assistant,
            content: Content::Text(t),
        }),
        3 => (proptest::option::weighted(0.4, thinking_block()), vec(text(), 1..=2)).prop_map(
            |(thinking, texts)| {
                let blocks = thinking
                    .into_iter()
                    .chain(texts.into_iter().map(Block::text))
                    .collect();
                Message::assistant_blocks(blocks)
            }
        ),
        1 => thinking_block().prop_map(|b| Message::assistant_blocks(vec![b])),
    ]
}

/// A small JSON tool input.
pub fn tool_input() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::json!({})),
        text().prop_map(|p| serde_json::json!({ "path": p })),
        (text(), any::<u16>(), any::<bool>())
            .prop_map(|(cmd, n, flag)| serde_json::json!({"cmd": cmd, "n": n, "flag": flag})),
    ]
}

/// Any block, valid where it is or not: text (possibly empty), thinking, redacted
/// thinking, `tool_use` and `tool_result` with ids from a small set (so they collide),
/// and unknown blocks.
pub fn any_block() -> impl Strategy<Value = Block> {
    let id = select(vec!["t0", "t1", "t2", "t3"]).prop_map(String::from);
    prop_oneof![
        3 => prop_oneof![Just(String::new()), text()].prop_map(Block::text),
        1 => thinking_block(),
        2 => (id.clone(), tool_name(), tool_input())
            .prop_map(|(id, name, input)| Block::ToolUse { id, name, input }),
        2 => (id, text(), any::<bool>())
            .prop_map(|(id, content, error)| Block::tool_result(id, content, error)),
        1 => Just(unknown_block()),
    ]
}

/// Any message, valid or not: either role, string content (possibly empty) or any
/// blocks (possibly none).
pub fn any_message() -> impl Strategy<Value = Message> {
    let role = prop_oneof![Just(Role::User), Just(Role::Assistant)];
    let content = prop_oneof![
        1 => prop_oneof![Just(String::new()), text()].prop_map(Content::Text),
        3 => vec(any_block(), 0..4).prop_map(Content::Blocks),
    ];
    (role, content).prop_map(|(role, content)| Message { role, content })
}

// ---------------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------------

/// The answer to one call of a [`ToolBatch`].
#[derive(Clone, Debug)]
pub struct ToolAnswer {
    pub content: ToolResultContent,
    pub is_error: Option<bool>,
}

/// A parallel tool batch: the assistant message that asks (`preamble` blocks, then one
/// `tool_use` per call) and the user message that answers it (one `tool_result` per
/// call, in the order of `order_keys`, then the `trailing` blocks). Ids are given when
/// the history is built.
#[derive(Clone, Debug)]
pub struct ToolBatch {
    pub preamble: Vec<Block>,
    pub calls: Vec<(String, serde_json::Value)>,
    pub answers: Vec<ToolAnswer>,
    /// Results are sorted by (key, call index): any order is valid.
    pub order_keys: Vec<u8>,
    pub trailing: Vec<Block>,
}

fn tool_answer() -> impl Strategy<Value = ToolAnswer> {
    let content = prop_oneof![
        3 => prop_oneof![Just(String::new()), text()].prop_map(ToolResultContent::Text),
        1 => vec(text(), 0..3).prop_map(|t| {
            ToolResultContent::Blocks(t.into_iter().map(Block::text).collect())
        }),
    ];
    let is_error = prop_oneof![
        4 => Just(None),
        2 => Just(Some(true)),
        1 => Just(Some(false)),
    ];
    (content, is_error).prop_map(|(content, is_error)| ToolAnswer { content, is_error })
}

/// A [`ToolBatch`] of `calls` calls (a range) with `trailing` blocks (a range) after
/// the results.
pub fn tool_batch(
    calls: std::ops::RangeInclusive<usize>,
    trailing: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = ToolBatch> {
    (calls, trailing).prop_flat_map(|(n, t)| {
        (
            preamble(),
            vec((tool_name(), tool_input()), n),
            vec(tool_answer(), n),
            vec(any::<u8>(), n),
            vec(
                prop_oneof![4 => text().prop_map(Block::text), 1 => Just(unknown_block())],
                t,
            ),
        )
            .prop_map(
                |(preamble, calls, answers, order_keys, trailing)| ToolBatch {
                    preamble,
                    calls,
                    answers,
                    order_keys,
                    trailing,
                },
            )
    })
}

/// One step of a generated valid history. Any sequence of steps is a valid history.
#[derive(Clone, Debug)]
pub enum HistoryStep {
    /// A user message ([`user_message`]).
    User(Message),
    /// An assistant reply without tool calls ([`assistant_reply`]).
    Reply(Message),
    /// A tool batch and its answer.
    Batch(ToolBatch),
    /// An interruption marker, as a user string message.
    Marker(InterruptReason),
    /// A tool-in-flight note, as a user string message.
    Note {
        phrase: &'static str,
        names: Vec<String>,
    },
}

/// Any [`HistoryStep`]; batches have 1 to 4 calls (parallel batches) and 0 to 2
/// trailing blocks.
pub fn history_step() -> impl Strategy<Value = HistoryStep> {
    prop_oneof![
        3 => user_message().prop_map(HistoryStep::User),
        3 => assistant_reply().prop_map(HistoryStep::Reply),
        4 => tool_batch(1..=4, 0..=2).prop_map(HistoryStep::Batch),
        1 => interrupt_reason().prop_map(HistoryStep::Marker),
        1 => note_parts().prop_map(|(phrase, names)| HistoryStep::Note { phrase, names }),
    ]
}

/// Builds the messages of `steps`. Tool ids are `toolu_000`, `toolu_001`, … in call
/// order, so they are unique across the history.
pub fn build_history(steps: &[HistoryStep]) -> Vec<SharedMessage> {
    let mut out = Vec::new();
    let mut next_id = 0usize;
    for step in steps {
        match step {
            HistoryStep::User(m) | HistoryStep::Reply(m) => out.push(Arc::new(m.clone())),
            HistoryStep::Batch(batch) => {
                let ids: Vec<String> = batch
                    .calls
                    .iter()
                    .map(|_| {
                        next_id += 1;
                        format!("toolu_{:03}", next_id - 1)
                    })
                    .collect();
                let mut asking = batch.preamble.clone();
                for (id, (name, input)) in ids.iter().zip(&batch.calls) {
                    asking.push(Block::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    });
                }
                let mut order: Vec<usize> = (0..ids.len()).collect();
                order.sort_by_key(|&i| (batch.order_keys.get(i).copied().unwrap_or(0), i));
                let mut answering: Vec<Block> = order
                    .iter()
                    .map(|&i| {
                        let answer = batch.answers.get(i).cloned().unwrap_or(ToolAnswer {
                            content: ToolResultContent::Text(String::new()),
                            is_error: None,
                        });
                        Block::ToolResult {
                            tool_use_id: ids[i].clone(),
                            content: answer.content,
                            is_error: answer.is_error,
                        }
                    })
                    .collect();
                answering.extend(batch.trailing.iter().cloned());
                out.push(Arc::new(Message::assistant_blocks(asking)));
                out.push(Arc::new(Message::user_blocks(answering)));
            }
            HistoryStep::Marker(reason) => out.push(Arc::new(Message::user_text(reason.marker()))),
            HistoryStep::Note { phrase, names } => out.push(Arc::new(Message::user_text(
                tool_in_flight_note_text(phrase, names),
            ))),
        }
    }
    out
}

/// A valid history: empty now and then, otherwise a user prompt followed by 0 to 9
/// [`history_step`]s (text, thinking, parallel tool batches with results and errors,
/// markers, notes). [`validate_history`](crate::validate_history) accepts every one.
pub fn valid_history() -> impl Strategy<Value = Vec<SharedMessage>> {
    prop_oneof![
        1 => Just(Vec::new()),
        15 => (user_message(), vec(history_step(), 0..10)).prop_map(|(prompt, mut steps)| {
            steps.insert(0, HistoryStep::User(prompt));
            build_history(&steps)
        }),
    ]
}

/// A valid history followed by an assistant message whose tool calls are not answered
/// yet: what the history holds while a tool batch runs. Accepted by
/// [`validate_history_allowing_pending_tools`](crate::validate_history_allowing_pending_tools),
/// rejected by [`validate_history`](crate::validate_history).
pub fn history_with_pending_tools() -> impl Strategy<Value = Vec<SharedMessage>> {
    (valid_history(), tool_batch(1..=4, 0..=0)).prop_map(|(mut history, batch)| {
        let used = history.iter().flat_map(|m| m.tool_calls()).count();
        // The batch alone, without its answer, its ids moved past the history's.
        let asking = &build_history(&[HistoryStep::Batch(batch)])[0];
        history.push(renumber(asking, used));
        history
    })
}

/// `message` with its `toolu_NNN` ids shifted by `by`, so they do not collide with a
/// history that already used `by` ids.
fn renumber(message: &Message, by: usize) -> SharedMessage {
    let blocks = message
        .blocks()
        .iter()
        .map(|b| match b {
            Block::ToolUse { id, name, input } => {
                let n: usize = id
                    .strip_prefix("toolu_")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                Block::ToolUse {
                    id: format!("toolu_{:03}", n + by),
                    name: name.clone(),
                    input: input.clone(),
                }
            }
            other => other.clone(),
        })
        .collect();
    Arc::new(Message {
        role: message.role,
        content: Content::Blocks(blocks),
    })
}

/// Any history, valid or not: a [`valid_history`], or 0 to 9 [`any_message`]s, or a
/// valid history with arbitrary messages appended (what a failed turn leaves).
pub fn any_history() -> impl Strategy<Value = Vec<SharedMessage>> {
    let arbitrary = || vec(any_message().prop_map(Arc::new), 0..10);
    prop_oneof![
        1 => valid_history(),
        1 => arbitrary(),
        2 => (valid_history(), arbitrary()).prop_map(|(mut h, tail)| {
            h.extend(tail);
            h
        }),
    ]
}

// ---------------------------------------------------------------------------------
// History mutations
// ---------------------------------------------------------------------------------

/// The kinds of [`HistoryMutation`], to ask for one kind of mutation at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MutationKind {
    /// [`HistoryMutation::DropResult`]
    DropResult,
    /// [`HistoryMutation::DuplicateResult`]
    DuplicateResult,
    /// [`HistoryMutation::MoveResult`]
    MoveResult,
    /// [`HistoryMutation::ResultAfterText`]
    ResultAfterText,
    /// [`HistoryMutation::EmptyAssistant`]
    EmptyAssistant,
    /// [`HistoryMutation::DuplicateId`]
    DuplicateId,
    /// [`HistoryMutation::DropAnswer`]
    DropAnswer,
    /// [`HistoryMutation::ToolUseInUser`]
    ToolUseInUser,
}

impl MutationKind {
    /// Every kind, in catalogue order.
    pub const ALL: [MutationKind; 8] = [
        MutationKind::DropResult,
        MutationKind::DuplicateResult,
        MutationKind::MoveResult,
        MutationKind::ResultAfterText,
        MutationKind::EmptyAssistant,
        MutationKind::DuplicateId,
        MutationKind::DropAnswer,
        MutationKind::ToolUseInUser,
    ];
}

/// One edit that breaks a valid history, from a catalogue; the `Index` fields choose
/// where. [`HistoryMutation::apply`] says which error the edit must cause.
#[derive(Clone, Debug)]
pub enum HistoryMutation {
    /// Remove one `tool_result` of a batch → `MissingToolResult` at the asking message.
    DropResult { batch: Index, result: Index },
    /// Repeat one `tool_result` right after itself → `DuplicateToolResult` at the copy.
    DuplicateResult { batch: Index, result: Index },
    /// Move one `tool_result` into another message (`to`, at block `at`): into an
    /// earlier message → `UnexpectedToolResult` there; into a later one →
    /// `MissingToolResult` at the asking message.
    MoveResult {
        batch: Index,
        result: Index,
        to: Index,
        at: Index,
    },
    /// Move the first non-result block of an answering message before one of its
    /// results → `ToolResultAfterOtherBlock` at the result right after it.
    ResultAfterText { batch: Index, to: Index },
    /// Empty an assistant message (`""` or `[]`) → `EmptyAssistantContent`.
    EmptyAssistant { message: Index, as_string: bool },
    /// Give a `tool_use` (not the first) the id of an earlier one →
    /// `DuplicateToolUseId` at the later one.
    DuplicateId { call: Index, copy_of: Index },
    /// Remove the whole answering message of a batch → `NoAnsweringMessage`,
    /// `MissingToolResult` or `UnansweredAtEnd`, by what follows.
    DropAnswer { batch: Index },
    /// Insert a `tool_use` into a user message → `ToolUseInUserMessage`.
    ToolUseInUser { message: Index, at: Index },
}

impl HistoryMutation {
    /// Which kind of mutation this is.
    pub fn kind(&self) -> MutationKind {
        match self {
            HistoryMutation::DropResult { .. } => MutationKind::DropResult,
            HistoryMutation::DuplicateResult { .. } => MutationKind::DuplicateResult,
            HistoryMutation::MoveResult { .. } => MutationKind::MoveResult,
            HistoryMutation::ResultAfterText { .. } => MutationKind::ResultAfterText,
            HistoryMutation::EmptyAssistant { .. } => MutationKind::EmptyAssistant,
            HistoryMutation::DuplicateId { .. } => MutationKind::DuplicateId,
            HistoryMutation::DropAnswer { .. } => MutationKind::DropAnswer,
            HistoryMutation::ToolUseInUser { .. } => MutationKind::ToolUseInUser,
        }
    }

    /// Applies the mutation to a *valid* `history` and returns the error
    /// [`validate_history`](crate::validate_history) must report for the result.
    /// `None` (history untouched) when the history has nothing to mutate: no tool
    /// batch, no assistant message, fewer than two tool calls, and so on.
    pub fn apply(&self, history: &mut Vec<SharedMessage>) -> Option<HistoryError> {
        let batches = batches(history);
        match self {
            HistoryMutation::DropResult { batch, result } => {
                let asking = *pick(&batches, batch)?;
                let mut blocks = history[asking + 1].blocks().to_vec();
                let results = result_positions(&blocks);
                let at = *pick(&results, result)?;
                let id = result_id(&blocks[at]);
                blocks.remove(at);
                history[asking + 1] = with_blocks(&history[asking + 1], blocks);
                Some(HistoryError::MissingToolResult {
                    message: asking,
                    tool_use_id: id,
                })
            }
            HistoryMutation::DuplicateResult { batch, result } => {
                let asking = *pick(&batches, batch)?;
                let mut blocks = history[asking + 1].blocks().to_vec();
                let at = *pick(&result_positions(&blocks), result)?;
                let id = result_id(&blocks[at]);
                blocks.insert(at + 1, blocks[at].clone());
                history[asking + 1] = with_blocks(&history[asking + 1], blocks);
                Some(HistoryError::DuplicateToolResult {
                    message: asking + 1,
                    block: at + 1,
                    tool_use_id: id,
                })
            }
            HistoryMutation::MoveResult {
                batch,
                result,
                to,
                at,
            } => {
                let asking = *pick(&batches, batch)?;
                let answering = asking + 1;
                let targets: Vec<usize> = (0..history.len()).filter(|&i| i != answering).collect();
                let target = *pick(&targets, to)?;
                let mut blocks = history[answering].blocks().to_vec();
                let from = *pick(&result_positions(&blocks), result)?;
                let moved = blocks.remove(from);
                let id = result_id(&moved);
                history[answering] = with_blocks(&history[answering], blocks);
                let mut into = as_blocks(&history[target]);
                let position = at.index(into.len() + 1);
                into.insert(position, moved);
                history[target] = with_blocks(&history[target], into);
                Some(if target < answering {
                    HistoryError::UnexpectedToolResult {
                        message: target,
                        block: position,
                        tool_use_id: id,
                    }
                } else {
                    HistoryError::MissingToolResult {
                        message: asking,
                        tool_use_id: id,
                    }
                })
            }
            HistoryMutation::ResultAfterText { batch, to } => {
                let with_other: Vec<usize> = batches
                    .iter()
                    .copied()
                    .filter(|&a| {
                        history[a + 1]
                            .blocks()
                            .iter()
                            .any(|b| !matches!(b, Block::ToolResult { .. }))
                    })
                    .collect();
                let asking = *pick(&with_other, batch)?;
                let mut blocks = history[asking + 1].blocks().to_vec();
                let results = result_positions(&blocks).len();
                let other = blocks.remove(results);
                let position = to.index(results);
                blocks.insert(position, other);
                let id = result_id(&blocks[position + 1]);
                history[asking + 1] = with_blocks(&history[asking + 1], blocks);
                Some(HistoryError::ToolResultAfterOtherBlock {
                    message: asking + 1,
                    block: position + 1,
                    tool_use_id: id,
                })
            }
            HistoryMutation::EmptyAssistant { message, as_string } => {
                let assistants: Vec<usize> = (0..history.len())
                    .filter(|&i| history[i].role == Role::Assistant)
                    .collect();
                let i = *pick(&assistants, message)?;
                let content = if *as_string {
                    Content::Text(String::new())
                } else {
                    Content::Blocks(Vec::new())
                };
                history[i] = Arc::new(Message {
                    role: Role::Assistant,
                    content,
                });
                Some(HistoryError::EmptyAssistantContent { message: i })
            }
            HistoryMutation::DuplicateId { call, copy_of } => {
                let uses: Vec<(usize, usize, String)> = history
                    .iter()
                    .enumerate()
                    .flat_map(|(m, msg)| {
                        msg.blocks()
                            .iter()
                            .enumerate()
                            .filter_map(move |(b, block)| match block {
                                Block::ToolUse { id, .. } => Some((m, b, id.clone())),
                                _ => None,
                            })
                    })
                    .collect();
                if uses.len() < 2 {
                    return None;
                }
                let later = 1 + call.index(uses.len() - 1);
                let earlier = copy_of.index(later);
                let (m, b, _) = uses[later].clone();
                let (first_message, _, id) = uses[earlier].clone();
                let mut blocks = history[m].blocks().to_vec();
                if let Block::ToolUse { id: slot, .. } = &mut blocks[b] {
                    *slot = id.clone();
                }
                history[m] = with_blocks(&history[m], blocks);
                Some(HistoryError::DuplicateToolUseId {
                    message: m,
                    block: b,
                    tool_use_id: id,
                    first_message,
                })
            }
            HistoryMutation::DropAnswer { batch } => {
                let asking = *pick(&batches, batch)?;
                history.remove(asking + 1);
                let ids: Vec<String> = history[asking]
                    .tool_calls()
                    .into_iter()
                    .map(|c| c.id)
                    .collect();
                let first = ids[0].clone();
                Some(match history.get(asking + 1).map(|m| m.role) {
                    None => HistoryError::UnansweredAtEnd {
                        message: asking,
                        tool_use_ids: ids,
                    },
                    Some(Role::Assistant) => HistoryError::NoAnsweringMessage {
                        message: asking,
                        tool_use_id: first,
                    },
                    Some(Role::User) => HistoryError::MissingToolResult {
                        message: asking,
                        tool_use_id: first,
                    },
                })
            }
            HistoryMutation::ToolUseInUser { message, at } => {
                let users: Vec<usize> = (0..history.len())
                    .filter(|&i| history[i].role == Role::User)
                    .collect();
                let i = *pick(&users, message)?;
                let mut blocks = as_blocks(&history[i]);
                let position = at.index(blocks.len() + 1);
                let id = "toolu_in_user".to_string();
                blocks.insert(
                    position,
                    Block::ToolUse {
                        id: id.clone(),
                        name: "bash".into(),
                        input: serde_json::json!({}),
                    },
                );
                history[i] = with_blocks(&history[i], blocks);
                Some(HistoryError::ToolUseInUserMessage {
                    message: i,
                    block: position,
                    tool_use_id: id,
                })
            }
        }
    }
}

/// Indices of the assistant messages that ask for tools and are answered by the next
/// message.
fn batches(history: &[SharedMessage]) -> Vec<usize> {
    (0..history.len().saturating_sub(1))
        .filter(|&i| history[i].role == Role::Assistant && history[i].has_tool_use())
        .collect()
}

fn pick<'a, T>(items: &'a [T], at: &Index) -> Option<&'a T> {
    (!items.is_empty()).then(|| at.get(items))
}

fn result_positions(blocks: &[Block]) -> Vec<usize> {
    (0..blocks.len())
        .filter(|&i| matches!(blocks[i], Block::ToolResult { .. }))
        .collect()
}

fn result_id(block: &Block) -> String {
    match block {
        Block::ToolResult { tool_use_id, .. } => tool_use_id.clone(),
        _ => String::new(),
    }
}

/// The message's content as blocks: a string becomes one text block.
fn as_blocks(message: &Message) -> Vec<Block> {
    match &message.content {
        Content::Text(s) => vec![Block::text(s.clone())],
        Content::Blocks(b) => b.clone(),
    }
}

fn with_blocks(message: &Message, blocks: Vec<Block>) -> SharedMessage {
    Arc::new(Message {
        role: message.role,
        content: Content::Blocks(blocks),
    })
}

/// A [`HistoryMutation`] of `kind`.
pub fn history_mutation(kind: MutationKind) -> BoxedStrategy<HistoryMutation> {
    let i = any::<Index>;
    match kind {
        MutationKind::DropResult => (i(), i())
            .prop_map(|(batch, result)| HistoryMutation::DropResult { batch, result })
            .boxed(),
        MutationKind::DuplicateResult => (i(), i())
            .prop_map(|(batch, result)| HistoryMutation::DuplicateResult { batch, result })
            .boxed(),
        MutationKind::MoveResult => (i(), i(), i(), i())
            .prop_map(|(batch, result, to, at)| HistoryMutation::MoveResult {
                batch,
                result,
                to,
                at,
            })
            .boxed(),
        MutationKind::ResultAfterText => (i(), i())
            .prop_map(|(batch, to)| HistoryMutation::ResultAfterText { batch, to })
            .boxed(),
        MutationKind::EmptyAssistant => (i(), any::<bool>())
            .prop_map(|(message, as_string)| HistoryMutation::EmptyAssistant { message, as_string })
            .boxed(),
        MutationKind::DuplicateId => (i(), i())
            .prop_map(|(call, copy_of)| HistoryMutation::DuplicateId { call, copy_of })
            .boxed(),
        MutationKind::DropAnswer => i()
            .prop_map(|batch| HistoryMutation::DropAnswer { batch })
            .boxed(),
        MutationKind::ToolUseInUser => (i(), i())
            .prop_map(|(message, at)| HistoryMutation::ToolUseInUser { message, at })
            .boxed(),
    }
}

/// A valid history, one mutation, the broken history and the error it must raise.
#[derive(Clone, Debug)]
pub struct MutatedHistory {
    pub original: Vec<SharedMessage>,
    pub mutation: HistoryMutation,
    pub mutated: Vec<SharedMessage>,
    pub expected: HistoryError,
}

/// A valid history with one mutation of `kind` applied. The history always holds what
/// every kind needs: it is a prompt, 0 to 3 steps, a batch of 2 to 4 calls whose
/// answer has trailing blocks, and 0 to 3 more steps.
pub fn mutated_history(kind: MutationKind) -> impl Strategy<Value = MutatedHistory> {
    (
        user_message(),
        vec(history_step(), 0..4),
        tool_batch(2..=4, 1..=2),
        vec(history_step(), 0..4),
        history_mutation(kind),
    )
        .prop_filter_map(
            "the history has what the mutation needs",
            |(prompt, before, batch, after, mutation)| {
                let mut steps = vec![HistoryStep::User(prompt)];
                steps.extend(before);
                steps.push(HistoryStep::Batch(batch));
                steps.extend(after);
                let original = build_history(&steps);
                let mut mutated = original.clone();
                let expected = mutation.apply(&mut mutated)?;
                Some(MutatedHistory {
                    original,
                    mutation,
                    mutated,
                    expected,
                })
            },
        )
}

// ---------------------------------------------------------------------------------
// Provider streams
// ---------------------------------------------------------------------------------

/// One content block of a streamed reply.
#[derive(Clone, Debug)]
pub enum BlockPlan {
    /// Text streamed in these chunks.
    Text(Vec<String>),
    /// Thinking streamed in chunks, then its signature (may be empty: then the block
    /// is dropped from the kept message).
    Thinking {
        chunks: Vec<String>,
        signature: String,
    },
    /// A redacted thinking block with this data (it has no deltas).
    RedactedThinking(String),
    /// A tool call whose JSON input streams split at the `splits` positions.
    ToolUse {
        name: String,
        input: serde_json::Value,
        splits: Vec<Index>,
    },
}

/// A well-formed streamed reply: its blocks, stop reason and usage.
#[derive(Clone, Debug)]
pub struct ReplyPlan {
    pub blocks: Vec<BlockPlan>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

impl ReplyPlan {
    /// The events of the reply: `message_start`, each block (start, deltas, stop),
    /// `message_delta`, `message_stop`. Tool ids are `toolu_{tag}_{k}`, so replies
    /// with distinct tags never share an id.
    pub fn events(&self, tag: u32) -> Vec<StreamEvent> {
        let mut out = vec![StreamEvent::MessageStart];
        let mut calls = 0;
        for (index, block) in self.blocks.iter().enumerate() {
            match block {
                BlockPlan::Text(chunks) => {
                    out.push(StreamEvent::BlockStart {
                        index,
                        block: BlockStart::Text,
                    });
                    for text in chunks {
                        out.push(StreamEvent::TextDelta {
                            index,
                            text: text.clone(),
                        });
                    }
                }
                BlockPlan::Thinking { chunks, signature } => {
                    out.push(StreamEvent::BlockStart {
                        index,
                        block: BlockStart::Thinking,
                    });
                    for thinking in chunks {
                        out.push(StreamEvent::ThinkingDelta {
                            index,
                            thinking: thinking.clone(),
                        });
                    }
                    if !signature.is_empty() {
                        out.push(StreamEvent::SignatureDelta {
                            index,
                            signature: signature.clone(),
                        });
                    }
                }
                BlockPlan::RedactedThinking(data) => out.push(StreamEvent::BlockStart {
                    index,
                    block: BlockStart::RedactedThinking { data: data.clone() },
                }),
                BlockPlan::ToolUse {
                    name,
                    input,
                    splits,
                } => {
                    out.push(StreamEvent::BlockStart {
                        index,
                        block: BlockStart::ToolUse {
                            id: format!("toolu_{tag}_{calls}"),
                            name: name.clone(),
                        },
                    });
                    calls += 1;
                    let json = input.to_string();
                    let chars: Vec<char> = json.chars().collect();
                    let mut cuts: Vec<usize> =
                        splits.iter().map(|s| s.index(chars.len() + 1)).collect();
                    cuts.push(0);
                    cuts.push(chars.len());
                    cuts.sort_unstable();
                    cuts.dedup();
                    for w in cuts.windows(2) {
                        out.push(StreamEvent::InputJsonDelta {
                            index,
                            partial_json: chars[w[0]..w[1]].iter().collect(),
                        });
                    }
                }
            }
            out.push(StreamEvent::BlockStop { index });
        }
        out.push(StreamEvent::MessageDelta {
            stop_reason: self.stop_reason,
            usage: self.usage,
        });
        out.push(StreamEvent::MessageStop);
        out
    }

    /// True when the reply holds a tool call.
    pub fn has_tool_use(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| matches!(b, BlockPlan::ToolUse { .. }))
    }
}

fn block_plan() -> impl Strategy<Value = BlockPlan> {
    prop_oneof![
        4 => vec(text(), 1..4).prop_map(BlockPlan::Text),
        1 => (vec(text(), 1..3), prop_oneof![3 => "[A-Za-z0-9+/]{4,12}", 1 => Just(String::new())])
            .prop_map(|(chunks, signature)| BlockPlan::Thinking { chunks, signature }),
        1 => "[A-Za-z0-9+/]{4,16}".prop_map(BlockPlan::RedactedThinking),
        4 => (tool_name(), tool_input(), vec(any::<Index>(), 0..3))
            .prop_map(|(name, input, splits)| BlockPlan::ToolUse { name, input, splits }),
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (0..5_000u64, 0..2_000u64).prop_map(|(input_tokens, output_tokens)| Usage {
        input_tokens,
        output_tokens,
    })
}

/// A streamed reply of 1 to 4 blocks (no block at all one time in ten). A reply with tool calls stops with `tool_use`
/// nine times in ten; one without stops with `end_turn`, `max_tokens`,
/// `stop_sequence`, `refusal`, `pause_turn`, or (rarely, and invalid) `tool_use`.
pub fn reply_plan() -> impl Strategy<Value = ReplyPlan> {
    let other_stop = prop_oneof![
        8 => Just(StopReason::EndTurn),
        3 => Just(StopReason::MaxTokens),
        1 => Just(StopReason::StopSequence),
        1 => Just(StopReason::Refusal),
        1 => Just(StopReason::PauseTurn),
        1 => Just(StopReason::ToolUse),
    ];
    (
        prop_oneof![1 => Just(Vec::new()), 9 => vec(block_plan(), 1..5)],
        proptest::bool::weighted(0.9),
        other_stop,
        usage(),
    )
        .prop_map(|(blocks, tool_stop, other, usage)| {
            let has_tools = blocks
                .iter()
                .any(|b| matches!(b, BlockPlan::ToolUse { .. }));
            ReplyPlan {
                stop_reason: if has_tools && tool_stop {
                    StopReason::ToolUse
                } else {
                    other
                },
                blocks,
                usage,
            }
        })
}

/// The events of a well-formed [`reply_plan`], tool ids tagged with `tag`.
pub fn stream_events(tag: u32) -> impl Strategy<Value = Vec<StreamEvent>> {
    reply_plan().prop_map(move |plan| plan.events(tag))
}

/// Any single stream event, in or out of protocol: block indices 0 to 3, any text,
/// any stop reason, errors.
pub fn stream_event() -> impl Strategy<Value = StreamEvent> {
    let index = 0..4usize;
    let stop = select(vec![
        StopReason::EndTurn,
        StopReason::ToolUse,
        StopReason::MaxTokens,
        StopReason::StopSequence,
        StopReason::Refusal,
        StopReason::PauseTurn,
    ]);
    let block = prop_oneof![
        Just(BlockStart::Text),
        Just(BlockStart::Thinking),
        "[a-z]{1,6}".prop_map(|data| BlockStart::RedactedThinking { data }),
        ("toolu_[a-z0-9]{1,4}", tool_name())
            .prop_map(|(id, name)| BlockStart::ToolUse { id, name }),
    ];
    prop_oneof![
        Just(StreamEvent::MessageStart),
        (index.clone(), block).prop_map(|(index, block)| StreamEvent::BlockStart { index, block }),
        (index.clone(), text()).prop_map(|(index, text)| StreamEvent::TextDelta { index, text }),
        (index.clone(), text())
            .prop_map(|(index, thinking)| StreamEvent::ThinkingDelta { index, thinking }),
        (index.clone(), "[A-Za-z0-9]{1,6}")
            .prop_map(|(index, signature)| StreamEvent::SignatureDelta { index, signature }),
        (
            index.clone(),
            select(vec!["{", "}", "{}", "\"a\":1", "[", "not json"])
        )
            .prop_map(|(index, j)| StreamEvent::InputJsonDelta {
                index,
                partial_json: j.to_string()
            }),
        index.prop_map(|index| StreamEvent::BlockStop { index }),
        (stop, usage())
            .prop_map(|(stop_reason, usage)| StreamEvent::MessageDelta { stop_reason, usage }),
        Just(StreamEvent::MessageStop),
        ("[a-z_]{1,12}", text()).prop_map(|(kind, message)| StreamEvent::Error { kind, message }),
    ]
}

// ---------------------------------------------------------------------------------
// Inputs and scripted sessions
// ---------------------------------------------------------------------------------

/// Any [`Input`] a runtime could hand a session, with operation ids 0 to 7 (so some
/// match and most are stale): prompts, stream events, tool results, cancels,
/// compactions, rewinds, reconfigurations.
pub fn input() -> impl Strategy<Value = Input> {
    let op = (0..8u64).prop_map(OperationId);
    prop_oneof![
        3 => (text(), "2026-0[1-9]-[0-2][0-9]T[0-2][0-9]:00:00Z")
            .prop_map(|(text, now)| Input::Prompt { text, now }),
        4 => (op.clone(), stream_event()).prop_map(|(op, event)| Input::Stream { op, event }),
        2 => (op, "toolu_[0-9]_[0-3]", text(), any::<bool>()).prop_map(
            |(op, tool_use_id, content, is_error)| Input::ToolResult {
                op,
                outcome: ToolOutcome {
                    tool_use_id,
                    content,
                    is_error,
                },
            }
        ),
        1 => cancel_cause().prop_map(|cause| Input::Cancel { cause }),
        1 => text().prop_map(|summary| Input::Compact { summary }),
        1 => (0..12usize).prop_map(|index| Input::Rewind { index }),
        1 => text().prop_map(|system| Input::Configure {
            system,
            tools: Vec::new()
        }),
    ]
}

/// One step of a [`SessionScript`]. Steps are interpreted against the session's state
/// when they are played, so any sequence plays.
#[derive(Clone, Debug)]
pub enum SessionStep {
    /// The user's words (refused while a turn runs).
    Prompt { text: String },
    /// The reply to the generation outstanding now, tool ids tagged with the step's
    /// position. `cut`: deliver only that many of its events (a stream cut short);
    /// `error`: then a provider error event. With no generation outstanding, the
    /// events go to the last operation seen (stale).
    Reply {
        plan: ReplyPlan,
        cut: Option<Index>,
        error: bool,
    },
    /// Results for the tool batch running now: `count` of them (all when `None`), in
    /// the order of `order_keys`, some with `is_error`. With no batch running, one
    /// result goes to the last operation seen (stale).
    ToolResults {
        count: Option<Index>,
        order_keys: Vec<u8>,
        errors: Vec<bool>,
    },
    /// A live cancel (a no-op between turns).
    Cancel { cause: CancelCause },
    /// A late delivery to an operation seen earlier (possibly the current one): a
    /// `message_stop`, or a result for the first call of its batch.
    Late { op: Index, tool: bool },
    /// Compaction with this summary (refused while a turn runs).
    Compact { summary: String },
    /// A rewind to a message index (0 to the history's length; refused while a turn
    /// runs or when the prefix would split a tool batch).
    Rewind { to: Index },
    /// A new system prompt, with the tools unchanged (refused while a turn runs).
    Configure { system: String },
}

/// Any [`SessionStep`]; prompts, replies and tool results dominate, and now and then
/// a compaction, a rewind or a new system prompt comes between turns.
pub fn session_step() -> impl Strategy<Value = SessionStep> {
    prop_oneof![
        3 => text().prop_map(|text| SessionStep::Prompt { text }),
        5 => (
            reply_plan(),
            proptest::option::weighted(0.2, any::<Index>()),
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(plan, cut, error)| SessionStep::Reply { plan, cut, error }),
        4 => (
            proptest::option::weighted(0.2, any::<Index>()),
            vec(any::<u8>(), 4),
            vec(proptest::bool::weighted(0.2), 4),
        )
            .prop_map(|(count, order_keys, errors)| SessionStep::ToolResults {
                count,
                order_keys,
                errors,
            }),
        1 => cancel_cause().prop_map(|cause| SessionStep::Cancel { cause }),
        1 => (any::<Index>(), any::<bool>()).prop_map(|(op, tool)| SessionStep::Late { op, tool }),
        1 => prop_oneof![
            text().prop_map(|summary| SessionStep::Compact { summary }),
            any::<Index>().prop_map(|to| SessionStep::Rewind { to }),
            text().prop_map(|system| SessionStep::Configure { system }),
        ],
    ]
}

/// A scripted session: steps played in order by [`SessionScript::play`].
#[derive(Clone, Debug)]
pub struct SessionScript {
    /// The steps, played in order.
    pub steps: Vec<SessionStep>,
}

/// What playing a script produced.
#[derive(Clone, Debug, Default)]
pub struct Played {
    /// The durable log: every `Output::Persist` in order, concatenated.
    pub log: Vec<u8>,
    /// Where each persisted record starts in `log`.
    pub record_starts: Vec<usize>,
    /// Inputs the session refused (with the error), by step.
    pub refused: Vec<(usize, String)>,
}

impl SessionScript {
    /// Plays the steps on `session`, carrying out outputs as a runtime would (persist
    /// in order; sends and dispatches answered by later steps). Never panics for any
    /// script; a refused input is recorded and play goes on.
    pub fn play(&self, session: &mut Session) -> Played {
        let mut played = Played::default();
        let mut seen: Vec<(OperationId, Vec<String>)> = Vec::new();
        for (step_index, step) in self.steps.iter().enumerate() {
            let inputs = self.inputs_for(step, step_index, session, &seen);
            for input in inputs {
                match session.handle(input) {
                    Ok(outputs) => {
                        for output in outputs {
                            match output {
                                Output::Persist { bytes } => {
                                    played.record_starts.push(played.log.len());
                                    played.log.extend_from_slice(&bytes);
                                }
                                Output::Send { op, .. } => seen.push((op, Vec::new())),
                                Output::Dispatch { op, calls } => {
                                    seen.push((op, calls.into_iter().map(|c| c.id).collect()))
                                }
                                _ => {}
                            }
                        }
                    }
                    Err(e) => played.refused.push((step_index, e.to_string())),
                }
            }
        }
        played
    }

    fn inputs_for(
        &self,
        step: &SessionStep,
        step_index: usize,
        session: &Session,
        seen: &[(OperationId, Vec<String>)],
    ) -> Vec<Input> {
        let last_op = seen.last().map_or(OperationId(0), |(op, _)| *op);
        match step {
            SessionStep::Prompt { text } => vec![Input::Prompt {
                text: text.clone(),
                now: format!("2026-01-01T00:00:{:02}Z", step_index % 60),
            }],
            SessionStep::Reply { plan, cut, error } => {
                let op = match session.pending_operation() {
                    PendingOperation::Generation { op } => op,
                    _ => last_op,
                };
                let mut events = plan.events(step_index as u32);
                if let Some(cut) = cut {
                    events.truncate(cut.index(events.len() + 1));
                }
                if *error {
                    events.push(StreamEvent::Error {
                        kind: "overloaded_error".into(),
                        message: "Overloaded".into(),
                    });
                }
                events
                    .into_iter()
                    .map(|event| Input::Stream { op, event })
                    .collect()
            }
            SessionStep::ToolResults {
                count,
                order_keys,
                errors,
            } => match session.pending_operation() {
                PendingOperation::Tools { op, calls } => {
                    let mut order: Vec<usize> = (0..calls.len()).collect();
                    order.sort_by_key(|&i| (order_keys.get(i).copied().unwrap_or(0), i));
                    if let Some(count) = count {
                        order.truncate(count.index(calls.len() + 1));
                    }
                    order
                        .into_iter()
                        .map(|i| Input::ToolResult {
                            op,
                            outcome: ToolOutcome {
                                tool_use_id: calls[i].id.clone(),
                                content: format!("result of {}", calls[i].id),
                                is_error: errors.get(i).copied().unwrap_or(false),
                            },
                        })
                        .collect()
                }
                _ => vec![Input::ToolResult {
                    op: last_op,
                    outcome: ToolOutcome {
                        tool_use_id: "toolu_stale".into(),
                        content: "late".into(),
                        is_error: false,
                    },
                }],
            },
            SessionStep::Cancel { cause } => vec![Input::Cancel { cause: *cause }],
            SessionStep::Compact { summary } => vec![Input::Compact {
                summary: summary.clone(),
            }],
            SessionStep::Rewind { to } => vec![Input::Rewind {
                index: to.index(session.history().len() + 1),
            }],
            SessionStep::Configure { system } => vec![Input::Configure {
                system: system.clone(),
                tools: session.config().tools.to_vec(),
            }],
            SessionStep::Late { op, tool } => {
                let Some((op, ids)) = pick(seen, op).cloned() else {
                    return Vec::new();
                };
                if *tool {
                    vec![Input::ToolResult {
                        op,
                        outcome: ToolOutcome {
                            tool_use_id: ids.first().cloned().unwrap_or_default(),
                            content: "late result".into(),
                            is_error: false,
                        },
                    }]
                } else {
                    vec![Input::Stream {
                        op,
                        event: StreamEvent::MessageStop,
                    }]
                }
            }
        }
    }
}

/// A [`SessionScript`] of 1 to 15 steps that opens with a prompt, so most scripts get
/// a turn going.
pub fn session_script() -> impl Strategy<Value = SessionScript> {
    (text(), vec(session_step(), 0..15)).prop_map(|(prompt, mut steps)| {
        steps.insert(0, SessionStep::Prompt { text: prompt });
        SessionScript { steps }
    })
}
