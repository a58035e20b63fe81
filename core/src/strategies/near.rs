//! Notes and markers, and strings one catalogued mutation away from them.
//!
//! Guarantee: every near-note and near-marker carries the mutation that made it, and
//! [`NoteMutation::always_rejected`] / the near-marker strategy only claim a rejection
//! that holds by construction, so an exactness property that fails points at the
//! matcher, never at the generator.

use super::*;

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

pub(super) fn insert_char(s: &str, at: &Index, ch: char) -> String {
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
