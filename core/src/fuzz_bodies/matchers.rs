//! The `note_matcher`, `note_differential` and `marker_matcher` bodies and their
//! oracles.
//!
//! Guarantee: each matcher is checked against an oracle written from the spec alone
//! (the note oracle regenerates candidates with [`tool_in_flight_note_text`], the marker
//! oracle is the seven strings spelled out), so a matcher that drifts from the generator
//! or the fixed set is reported as a crash, whichever direction it errs in.

use super::*;

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
    run(data, |u| {
        let phrase = phrase(u)?;
        let names = names(u)?;
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
        let mutated = mutate(u, &note)?;
        check_note_string(&mutated);
        Ok(())
    });
}

// ---------------------------------------------------------------------------------
// note_differential
// ---------------------------------------------------------------------------------

/// The note matcher written the way docs/spec.md §5 states the rule: no line break
/// anywhere, then for each phrase and each wording, parse the name list and
/// regenerate the whole note with [`tool_in_flight_note_text`], accepting on byte
/// equality. Slow (it allocates and
/// formats per candidate) and obviously right, which is what a differential oracle
/// and a benchmark baseline need.
pub fn regenerating_note_label(text: &str) -> Option<&str> {
    const WORDINGS: [(&str, &str); 2] = [
        (
            " while the tool call ",
            " was running. It may have already started and partially applied its effects.",
        ),
        (
            " while the tool calls ",
            " were running. They may have already started and partially applied their effects.",
        ),
    ];
    if text.contains(['\n', '\r']) {
        return None;
    }
    let label = text.strip_prefix('[')?.strip_suffix(']')?;
    for phrase in CANCEL_PHRASES {
        for (head, tail) in WORDINGS {
            let Some(list) = label
                .strip_prefix(phrase)
                .and_then(|r| r.strip_prefix(head))
                .and_then(|r| r.strip_suffix(tail))
            else {
                continue;
            };
            // An item that is not a backticked name stands for an implausible one (the
            // empty name), which regenerates as UNRECOGNISED_TOOL: equal only if the
            // item was exactly that.
            let names: Vec<String> = list
                .split(", ")
                .map(|item| {
                    item.strip_prefix('`')
                        .and_then(|i| i.strip_suffix('`'))
                        .unwrap_or("")
                        .to_string()
                })
                .collect();
            if tool_in_flight_note_text(phrase, &names) == text {
                return Some(label);
            }
        }
    }
    None
}

/// `note_differential`: the fast matcher and [`regenerating_note_label`] give the same
/// answer (the same borrowed label, or both `None`) on the input as text (when UTF-8)
/// and on a note built from the same bytes (a phrase, names, then one mutation).
pub fn note_differential(data: &[u8]) {
    let agree = |s: &str| {
        assert_eq!(
            tool_in_flight_note_label(s),
            regenerating_note_label(s),
            "the note matcher and regeneration disagree on {s:?}"
        );
    };
    if let Ok(s) = std::str::from_utf8(data) {
        agree(s);
    }
    run(data, |u| {
        let phrase = phrase(u)?;
        let note = tool_in_flight_note_text(&phrase, &names(u)?);
        agree(&note);
        agree(&mutate(u, &note)?);
        Ok(())
    });
}

// ---------------------------------------------------------------------------------
// marker_matcher
// ---------------------------------------------------------------------------------

/// The seven markers of docs/spec.md §4, spelled out.
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
    run(data, |u| {
        let base = match below(u, SPEC_MARKERS.len() + 1)? {
            i if i < SPEC_MARKERS.len() => SPEC_MARKERS[i].to_string(),
            _ => {
                let phrase = phrase(u)?;
                tool_in_flight_note_text(&phrase, &names(u)?)
            }
        };
        check_marker_string(&base);
        let mutated = mutate(u, &base)?;
        check_marker_string(&mutated);
        check_note_string(&mutated);
        Ok(())
    });
}
