//! Property suite for the note and marker matchers (docs/spec.md §4, §5).
//!
//! Guarantee kept: the matchers recognise exactly the strings the engine writes. A note
//! is recognised for every phrase and any tool names, its label is the note without
//! brackets, and anything accepted is byte-equal to a note regenerated from what it
//! parsed, so no free-form text (a newline, a backticked implausible name) can ride in
//! a user-role message under the cover of a note. A marker is recognised iff it is one
//! of the seven, so a user's words that merely look like a marker are never taken for
//! one. Why: both are recognised by wording alone; a matcher that accepts one string
//! too many turns the user's (or the model's) text into engine metadata.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use turnsim_core::fuzz_bodies::regenerating_note_label;
use turnsim_core::strategies::{
    implausible_tool_name, marker, near_marker, near_note, note, note_parts, plausible_tool_name,
    text, tool_name,
};
use turnsim_core::{
    CANCEL_PHRASES, InterruptReason, Message, UNRECOGNISED_TOOL, interruption_label,
    is_interruption_marker, is_marker_message, is_plausible_tool_name, is_tool_in_flight_note,
    tool_in_flight_note_label, tool_in_flight_note_text,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_matchers.txt"
        )))),
        ..ProptestConfig::default()
    }
}

fn unbracketed(s: &str) -> Option<&str> {
    s.strip_prefix('[')?.strip_suffix(']')
}

/// Every way the test (independently of the engine) can read `s` as a note: a phrase,
/// a wording and a list of shown names. A placeholder item reads as the empty name,
/// which is implausible and so regenerates the placeholder.
fn readings(s: &str) -> Vec<(&'static str, Vec<String>)> {
    let wordings = [
        (
            " while the tool call ",
            " was running. It may have already started and partially applied its effects.",
        ),
        (
            " while the tool calls ",
            " were running. They may have already started and partially applied their effects.",
        ),
    ];
    let Some(body) = unbracketed(s) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for phrase in CANCEL_PHRASES {
        let Some(rest) = body.strip_prefix(phrase) else {
            continue;
        };
        for (head, tail) in wordings {
            let Some(list) = rest.strip_prefix(head).and_then(|r| r.strip_suffix(tail)) else {
                continue;
            };
            let names: Option<Vec<String>> = list
                .split(", ")
                .map(|item| {
                    if item == UNRECOGNISED_TOOL {
                        Some(String::new())
                    } else {
                        Some(item.strip_prefix('`')?.strip_suffix('`')?.to_string())
                    }
                })
                .collect();
            if let Some(names) = names {
                out.push((phrase, names));
            }
        }
    }
    out
}

/// True when some reading of `s` shows only plausible names (or the placeholder).
fn shown_items_are_clean(s: &str) -> bool {
    readings(s).iter().any(|(_, names)| {
        names
            .iter()
            .all(|n| n.is_empty() || is_plausible_tool_name(n))
    })
}

fn assert_accepted_note_is_exact(s: &str) -> Result<(), TestCaseError> {
    let Some(label) = tool_in_flight_note_label(s) else {
        return Ok(());
    };
    prop_assert_eq!(Some(label), unbracketed(s));
    prop_assert!(!s.contains(['\n', '\r']), "accepted a line break: {:?}", s);
    prop_assert!(
        shown_items_are_clean(s),
        "accepted a backticked implausible name: {:?}",
        s
    );
    let regenerated: Vec<String> = readings(s)
        .into_iter()
        .map(|(phrase, names)| tool_in_flight_note_text(phrase, &names))
        .collect();
    prop_assert!(
        regenerated.iter().any(|r| r == s),
        "accepted {:?}, but no note regenerated from it is equal: {:?}",
        s,
        regenerated
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_phrase_with_any_names_is_recognised_and_labelled_without_brackets(
        names in vec(prop_oneof![any::<String>(), tool_name()], 1..=6),
    ) {
        for phrase in CANCEL_PHRASES {
            let note = tool_in_flight_note_text(phrase, &names);
            prop_assert_eq!(tool_in_flight_note_label(&note), unbracketed(&note));
            prop_assert!(unbracketed(&note).is_some());
            prop_assert!(is_tool_in_flight_note(&Message::user_text(note.clone())));
        }
    }

    #[test]
    fn a_note_shows_each_name_in_backticks_iff_it_is_plausible(
        (phrase, names) in note_parts(),
    ) {
        let note = tool_in_flight_note_text(phrase, &names);
        prop_assert!(!note.contains(['\n', '\r']), "{:?}", note);
        let read = readings(&note);
        prop_assert_eq!(read.len(), 1, "{:?} reads as {:?}", note, read);
        let (read_phrase, shown) = &read[0];
        prop_assert_eq!(*read_phrase, phrase);
        prop_assert_eq!(shown.len(), names.len());
        for (name, shown) in names.iter().zip(shown) {
            if is_plausible_tool_name(name) {
                prop_assert_eq!(shown, name);
            } else {
                prop_assert_eq!(shown, "", "implausible {:?} was shown", name);
            }
        }
    }

    #[test]
    fn any_accepted_near_note_equals_the_note_regenerated_from_it(near in near_note()) {
        prop_assert_ne!(&near.mutated, &near.note, "{:?} changed nothing", near.mutation);
        assert_accepted_note_is_exact(&near.mutated)?;
    }

    #[test]
    fn mutations_that_always_break_a_note_are_rejected(near in near_note()) {
        if near.mutation.always_rejected() {
            prop_assert_eq!(
                tool_in_flight_note_label(&near.mutated),
                None,
                "{:?} of {:?} gave {:?}",
                near.mutation,
                near.note,
                near.mutated
            );
            prop_assert!(!is_tool_in_flight_note(&Message::user_text(near.mutated.clone())));
        }
    }

    #[test]
    fn any_accepted_string_equals_the_note_regenerated_from_it(
        s in prop_oneof![any::<String>(), text(), note()],
    ) {
        assert_accepted_note_is_exact(&s)?;
    }

    #[test]
    fn a_note_in_a_text_block_or_an_assistant_message_is_not_a_note_message(n in note()) {
        let in_block = Message::user_blocks(vec![turnsim_core::Block::text(n.clone())]);
        let from_assistant = Message {
            role: turnsim_core::Role::Assistant,
            content: turnsim_core::Content::Text(n.clone()),
        };
        prop_assert!(is_tool_in_flight_note(&Message::user_text(n)));
        prop_assert!(!is_tool_in_flight_note(&in_block));
        prop_assert!(!is_tool_in_flight_note(&from_assistant));
    }

    #[test]
    fn the_name_strategies_stay_on_their_side_of_plausibility(
        good in plausible_tool_name(),
        bad in implausible_tool_name(),
    ) {
        prop_assert!(is_plausible_tool_name(&good), "{:?}", good);
        prop_assert!(!is_plausible_tool_name(&bad), "{:?}", bad);
    }

    #[test]
    fn a_string_is_a_marker_iff_it_is_one_of_the_seven(
        s in prop_oneof![
            any::<String>(),
            text(),
            marker().prop_map(String::from),
            near_marker().prop_map(|n| n.mutated),
        ],
    ) {
        let one_of_seven = InterruptReason::ALL.iter().any(|r| r.marker() == s);
        prop_assert_eq!(is_interruption_marker(&s), one_of_seven, "{:?}", s);
        prop_assert_eq!(interruption_label(&s), one_of_seven.then(|| &s[1..s.len() - 1]));
        prop_assert_eq!(is_marker_message(&Message::user_text(s.clone())), one_of_seven);
    }

    #[test]
    fn no_single_mutation_of_a_marker_is_a_marker(near in near_marker()) {
        prop_assert!(
            InterruptReason::ALL.iter().all(|r| r.marker() != near.mutated),
            "{:?} of {:?} produced a marker",
            near.mutation,
            near.reason
        );
        prop_assert!(!is_interruption_marker(&near.mutated), "{:?}", near.mutated);
        prop_assert_eq!(interruption_label(&near.mutated), None);
    }

    #[test]
    fn a_note_is_never_a_marker_and_a_marker_never_a_note(n in note(), m in marker()) {
        prop_assert!(!is_interruption_marker(&n));
        prop_assert_eq!(tool_in_flight_note_label(m), None);
    }

    #[test]
    fn the_matcher_answers_exactly_as_the_regenerating_form(
        n in note(),
        near in near_note(),
        prefix in text(),
    ) {
        for s in [n.clone(), near.mutated.clone(), format!("{prefix}{n}"), format!("{n}{prefix}")] {
            prop_assert_eq!(tool_in_flight_note_label(&s), regenerating_note_label(&s), "{:?}", s);
        }
    }
}
