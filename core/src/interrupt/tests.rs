//! Unit tests for interruption markers: the fixed wordings, exact recognition, append-only
//! placement and crash recovery of a half-written turn.

use super::*;
use crate::json::messages_to_json;

fn shared(m: Message) -> SharedMessage {
    Arc::new(m)
}

fn sample_history() -> Vec<SharedMessage> {
    vec![
        shared(Message::user_text("list the files")),
        shared(Message::assistant_text("Sure.")),
        shared(Message::user_text("now delete them")),
    ]
}

#[test]
fn there_are_exactly_seven_reasons_with_the_spec_markers() {
    let markers: Vec<&str> = InterruptReason::ALL.iter().map(|r| r.marker()).collect();
    assert_eq!(
        markers,
        vec![
            "[Request interrupted by user]",
            "[Request interrupted: session cost cap reached]",
            "[Request interrupted: runtime restarted]",
            "[Request interrupted: session stopped by the host]",
            "[Request interrupted]",
            "[Request interrupted: runtime stopped unexpectedly]",
            "[Request interrupted: session driver revoked]",
        ]
    );
}

#[test]
fn markers_are_pairwise_distinct() {
    for (i, a) in InterruptReason::ALL.iter().enumerate() {
        for b in &InterruptReason::ALL[i + 1..] {
            assert_ne!(a.marker(), b.marker());
        }
    }
}

#[test]
fn every_marker_is_recognised_and_labelled_without_brackets() {
    for reason in InterruptReason::ALL {
        let marker = reason.marker();
        assert!(is_interruption_marker(marker), "{marker}");
        assert_eq!(InterruptReason::from_marker(marker), Some(reason));
        let label = interruption_label(marker);
        assert_eq!(label, Some(&marker[1..marker.len() - 1]), "{marker}");
    }
    assert_eq!(
        interruption_label("[Request interrupted by user]"),
        Some("Request interrupted by user")
    );
    assert_eq!(
        interruption_label("[Request interrupted]"),
        Some("Request interrupted")
    );
}

#[test]
fn markers_carry_no_instruction_and_no_recap() {
    let banned = ["abort context", "continue", "you ", "your ", "tool", "note"];
    for reason in InterruptReason::ALL {
        let lower = reason.marker().to_lowercase();
        for word in banned {
            assert!(!lower.contains(word), "{lower:?} contains {word:?}");
        }
    }
}

#[test]
fn markers_are_one_line() {
    for reason in InterruptReason::ALL {
        assert!(!reason.marker().contains(['\n', '\r']));
    }
}

#[test]
fn near_markers_are_the_users_own_words() {
    let near = [
        "[Request interrupted by user] ",
        " [Request interrupted by user]",
        "[Request interrupted: do Y instead]",
        "[Request interrupted by user] and then do Y",
        "[Request interrupted]\n",
        "Request interrupted by user",
        "Request interrupted",
        "[request interrupted by user]",
        "[REQUEST INTERRUPTED]",
        "[Request interrupted",
        "Request interrupted]",
        "",
        "[]",
    ];
    for text in near {
        assert!(!is_interruption_marker(text), "{text:?}");
        assert_eq!(interruption_label(text), None, "{text:?}");
        assert!(!is_marker_message(&Message::user_text(text)), "{text:?}");
    }
    for reason in InterruptReason::ALL {
        let m = reason.marker();
        for text in [
            format!("{m} "),
            format!("{m}\n"),
            format!("{m}{m}"),
            format!("{m} please"),
            m.to_lowercase(),
            m[1..m.len() - 1].to_string(),
        ] {
            assert!(!is_interruption_marker(&text), "{text:?}");
            assert_eq!(interruption_label(&text), None, "{text:?}");
        }
    }
}

#[test]
fn marker_message_is_a_user_message_with_string_content() {
    let marker = InterruptReason::User.marker();
    assert!(is_marker_message(&Message::user_text(marker)));
    assert!(!is_marker_message(&Message::user_blocks(vec![
        Block::text(marker)
    ])));
    assert!(!is_marker_message(&Message {
        role: Role::Assistant,
        content: crate::message::Content::Text(marker.to_string()),
    }));
    assert!(!is_marker_message(&Message::assistant_text(marker)));
}

#[test]
fn cancel_causes_map_to_the_reason_of_the_same_name() {
    let pairs: Vec<(InterruptReason, Option<CancelCause>)> = InterruptReason::ALL
        .iter()
        .map(|r| (*r, r.cancel_cause()))
        .collect();
    assert_eq!(
        pairs,
        vec![
            (InterruptReason::User, Some(CancelCause::User)),
            (InterruptReason::CostCap, Some(CancelCause::CostCap)),
            (InterruptReason::Restart, Some(CancelCause::Restart)),
            (InterruptReason::Host, Some(CancelCause::Host)),
            (InterruptReason::Unknown, None),
            (InterruptReason::Crash, None),
            (InterruptReason::Driver, Some(CancelCause::Driver)),
        ]
    );
    for cause in CancelCause::ALL {
        assert_eq!(cause.reason().cancel_cause(), Some(cause));
    }
}

#[test]
fn cancel_phrases_are_exact() {
    let phrases: Vec<&str> = CancelCause::ALL.iter().map(|c| c.phrase()).collect();
    assert_eq!(
        phrases,
        vec![
            "Canceled by user",
            "Canceled (session cost cap reached)",
            "Canceled (runtime restarted)",
            "Canceled (session stopped by the host)",
            "Canceled (session driver revoked)",
        ]
    );
}

#[test]
fn reasons_and_causes_serialize_as_snake_case() {
    let json = serde_json::to_string(&InterruptReason::ALL).expect("serializes");
    assert_eq!(
        json,
        r#"["user","cost_cap","restart","host","unknown","crash","driver"]"#
    );
    let back: Vec<InterruptReason> = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, InterruptReason::ALL.to_vec());
    let json = serde_json::to_string(&CancelCause::ALL).expect("serializes");
    assert_eq!(json, r#"["user","cost_cap","restart","host","driver"]"#);
}

#[test]
fn append_marker_appends_a_user_string_message() {
    let mut history = sample_history();
    assert!(append_marker(&mut history, InterruptReason::Host));
    assert_eq!(history.len(), 4);
    assert_eq!(
        history[3].to_json(),
        r#"{"role":"user","content":"[Request interrupted: session stopped by the host]"}"#
    );
}

#[test]
fn append_marker_never_touches_earlier_messages() {
    let mut history = sample_history();
    let before = history.clone();
    assert!(append_marker(&mut history, InterruptReason::User));
    for (old, new) in before.iter().zip(&history) {
        assert!(Arc::ptr_eq(old, new));
    }
}

#[test]
fn append_marker_is_deduplicated_against_any_trailing_marker() {
    let mut history = sample_history();
    assert!(append_marker(&mut history, InterruptReason::User));
    let after_first = history.clone();
    for reason in InterruptReason::ALL {
        assert!(!append_marker(&mut history, reason));
        assert_eq!(history.len(), 4);
    }
    for (old, new) in after_first.iter().zip(&history) {
        assert!(Arc::ptr_eq(old, new));
    }
}

#[test]
fn append_marker_after_a_marker_in_a_text_block_still_appends() {
    let mut history = vec![shared(Message::user_blocks(vec![Block::text(
        InterruptReason::User.marker(),
    )]))];
    assert!(append_marker(&mut history, InterruptReason::User));
    assert_eq!(history.len(), 2);
}

#[test]
fn append_marker_on_an_empty_history_appends() {
    let mut history = Vec::new();
    assert!(append_marker(&mut history, InterruptReason::Restart));
    assert_eq!(
        history[0].string_content(),
        Some("[Request interrupted: runtime restarted]")
    );
}

#[test]
fn legacy_migration_drops_the_recap_and_appends_the_unknown_marker() {
    let recap = "ABORT CONTEXT: you were deleting files; continue with the next one";
    let mut history = sample_history();
    let before = history.clone();
    let mut legacy = Some(recap.to_string());
    assert!(migrate_legacy_abort_context(&mut history, &mut legacy));
    assert_eq!(legacy, None);
    assert_eq!(history.len(), 4);
    assert_eq!(history[3].string_content(), Some("[Request interrupted]"));
    for (old, new) in before.iter().zip(&history) {
        assert!(Arc::ptr_eq(old, new));
    }
    assert!(!messages_to_json(&history).contains("deleting files"));
    assert!(!messages_to_json(&history).contains(recap));
}

#[test]
fn legacy_migration_is_idempotent() {
    let mut history = sample_history();
    let mut legacy = Some("recap".to_string());
    assert!(migrate_legacy_abort_context(&mut history, &mut legacy));
    let once = history.clone();
    assert!(!migrate_legacy_abort_context(&mut history, &mut legacy));
    assert_eq!(legacy, None);
    assert_eq!(history.len(), once.len());
    for (a, b) in once.iter().zip(&history) {
        assert!(Arc::ptr_eq(a, b));
    }
}

#[test]
fn legacy_migration_without_a_recap_changes_nothing() {
    let mut history = sample_history();
    let mut legacy = None;
    assert!(!migrate_legacy_abort_context(&mut history, &mut legacy));
    assert_eq!(history.len(), 3);
}

#[test]
fn legacy_migration_on_an_empty_history_appends_nothing_but_takes_the_recap() {
    let mut history = Vec::new();
    let mut legacy = Some("recap".to_string());
    assert!(migrate_legacy_abort_context(&mut history, &mut legacy));
    assert!(history.is_empty());
    assert_eq!(legacy, None);
}

#[test]
fn legacy_migration_after_a_marker_adds_no_second_marker() {
    let mut history = sample_history();
    append_marker(&mut history, InterruptReason::User);
    let mut legacy = Some("recap".to_string());
    assert!(migrate_legacy_abort_context(&mut history, &mut legacy));
    assert_eq!(legacy, None);
    assert_eq!(history.len(), 4);
    assert_eq!(
        history[3].string_content(),
        Some("[Request interrupted by user]")
    );
}

#[test]
fn crash_recovery_keeps_the_partial_reply_of_a_draft_of_exactly_this_history() {
    let mut history = sample_history();
    let before = history.clone();
    let draft = TurnDraft {
        base_len: 3,
        partial_text: "  Deleting a.txt\n".to_string(),
    };
    assert!(recover_crashed_turn(&mut history, &draft));
    assert_eq!(history.len(), 5);
    assert_eq!(
        history[3].to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"  Deleting a.txt\n"}]}"#
    );
    assert_eq!(
        history[4].to_json(),
        r#"{"role":"user","content":"[Request interrupted: runtime stopped unexpectedly]"}"#
    );
    for (old, new) in before.iter().zip(&history) {
        assert!(Arc::ptr_eq(old, new));
    }
}

#[test]
fn crash_recovery_with_a_stale_draft_contributes_no_text() {
    for base_len in [0, 2, 4, 100] {
        let mut history = sample_history();
        let draft = TurnDraft {
            base_len,
            partial_text: "stale words".to_string(),
        };
        assert!(recover_crashed_turn(&mut history, &draft));
        assert_eq!(history.len(), 4, "base_len {base_len}");
        assert_eq!(
            history[3].string_content(),
            Some("[Request interrupted: runtime stopped unexpectedly]")
        );
        assert!(!messages_to_json(&history).contains("stale words"));
    }
}

#[test]
fn crash_recovery_with_whitespace_only_partial_appends_the_marker_only() {
    for partial in ["", " ", "\n\t  \r\n", "\u{3000}"] {
        let mut history = sample_history();
        let draft = TurnDraft {
            base_len: 3,
            partial_text: partial.to_string(),
        };
        assert!(recover_crashed_turn(&mut history, &draft));
        assert_eq!(history.len(), 4, "{partial:?}");
        assert!(is_marker_message(&history[3]));
    }
}

#[test]
fn crash_recovery_leaves_an_empty_history_alone() {
    let mut history = Vec::new();
    let draft = TurnDraft {
        base_len: 0,
        partial_text: "text".to_string(),
    };
    assert!(!recover_crashed_turn(&mut history, &draft));
    assert!(history.is_empty());
}

#[test]
fn crash_recovery_leaves_a_history_ending_with_a_marker_or_assistant_alone() {
    let mut ends_with_marker = sample_history();
    append_marker(&mut ends_with_marker, InterruptReason::User);
    let mut ends_with_assistant = sample_history();
    ends_with_assistant.push(shared(Message::assistant_text("Done.")));
    for mut history in [ends_with_marker, ends_with_assistant] {
        let before = history.clone();
        let draft = TurnDraft {
            base_len: history.len(),
            partial_text: "partial".to_string(),
        };
        assert!(!recover_crashed_turn(&mut history, &draft));
        assert_eq!(history.len(), before.len());
        for (a, b) in before.iter().zip(&history) {
            assert!(Arc::ptr_eq(a, b));
        }
    }
}

#[test]
fn crash_recovery_is_idempotent() {
    let mut history = sample_history();
    let draft = TurnDraft {
        base_len: 3,
        partial_text: "partial".to_string(),
    };
    assert!(recover_crashed_turn(&mut history, &draft));
    let once = history.clone();
    assert!(!recover_crashed_turn(&mut history, &draft));
    // A draft that now matches the recovered length must not add text either.
    let draft = TurnDraft {
        base_len: history.len(),
        partial_text: "partial".to_string(),
    };
    assert!(!recover_crashed_turn(&mut history, &draft));
    assert_eq!(history.len(), once.len());
    for (a, b) in once.iter().zip(&history) {
        assert!(Arc::ptr_eq(a, b));
    }
}

#[test]
fn turn_draft_round_trips_through_json() {
    let draft = TurnDraft {
        base_len: 7,
        partial_text: "Hel".to_string(),
    };
    let json = serde_json::to_string(&draft).expect("serializes");
    assert_eq!(json, r#"{"base_len":7,"partial_text":"Hel"}"#);
    let back: TurnDraft = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, draft);
    assert_eq!(
        TurnDraft::default(),
        TurnDraft {
            base_len: 0,
            partial_text: String::new()
        }
    );
}
