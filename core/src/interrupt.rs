//! Interruption markers (spec §4).
//!
//! Guarantee: a marker is only ever *appended*, as its own user message, and never
//! rewrites a message before it, so every byte the provider already cached stays
//! identical and the next request still hits the prompt cache. A marker is a fixed,
//! closed set of strings that carry no instruction and no recap: it tells the model
//! *that* the previous turn stopped and *why*, never what to do next, so stopping can
//! not steer the model. Recognition is by exact equality, never by prefix, so a user
//! who types something that merely starts like a marker keeps their own words.

use crate::message::{Block, Message, Role, SharedMessage};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Why a turn stopped before the model ended it.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterruptReason {
    /// The user cancelled.
    User,
    /// The session's cost cap was reached.
    CostCap,
    /// The runtime restarted while the turn ran.
    Restart,
    /// The host stopped the session.
    Host,
    /// An older session recorded an interruption without saying why.
    Unknown,
    /// The runtime stopped without a chance to record anything.
    Crash,
    /// The session driver's lease was revoked.
    Driver,
}

impl InterruptReason {
    /// Every reason, in declaration order.
    pub const ALL: [InterruptReason; 7] = [
        InterruptReason::User,
        InterruptReason::CostCap,
        InterruptReason::Restart,
        InterruptReason::Host,
        InterruptReason::Unknown,
        InterruptReason::Crash,
        InterruptReason::Driver,
    ];

    /// The exact user-message text recorded for this reason.
    pub const fn marker(self) -> &'static str {
        match self {
            InterruptReason::User => "[Request interrupted by user]",
            InterruptReason::CostCap => "[Request interrupted: session cost cap reached]",
            InterruptReason::Restart => "[Request interrupted: runtime restarted]",
            InterruptReason::Host => "[Request interrupted: session stopped by the host]",
            InterruptReason::Unknown => "[Request interrupted]",
            InterruptReason::Crash => "[Request interrupted: runtime stopped unexpectedly]",
            InterruptReason::Driver => "[Request interrupted: session driver revoked]",
        }
    }

    /// The live cancel this reason records, if any. `Unknown` and `Crash` are only
    /// ever discovered when a session is loaded, so no live cancel produces them.
    pub const fn cancel_cause(self) -> Option<CancelCause> {
        match self {
            InterruptReason::User => Some(CancelCause::User),
            InterruptReason::CostCap => Some(CancelCause::CostCap),
            InterruptReason::Restart => Some(CancelCause::Restart),
            InterruptReason::Host => Some(CancelCause::Host),
            InterruptReason::Driver => Some(CancelCause::Driver),
            InterruptReason::Unknown | InterruptReason::Crash => None,
        }
    }

    /// The reason whose marker is exactly `text`.
    pub fn from_marker(text: &str) -> Option<InterruptReason> {
        InterruptReason::ALL
            .into_iter()
            .find(|reason| reason.marker() == text)
    }
}

/// Who or what cancelled a live turn.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelCause {
    User,
    CostCap,
    Restart,
    Host,
    Driver,
}

impl CancelCause {
    /// Every cause, in declaration order.
    pub const ALL: [CancelCause; 5] = [
        CancelCause::User,
        CancelCause::CostCap,
        CancelCause::Restart,
        CancelCause::Host,
        CancelCause::Driver,
    ];

    /// The `tool_result` content that answers a tool call this cancel cut short.
    pub const fn phrase(self) -> &'static str {
        match self {
            CancelCause::User => "Canceled by user",
            CancelCause::CostCap => "Canceled (session cost cap reached)",
            CancelCause::Restart => "Canceled (runtime restarted)",
            CancelCause::Host => "Canceled (session stopped by the host)",
            CancelCause::Driver => "Canceled (session driver revoked)",
        }
    }

    /// The interruption reason (and so the marker) this cancel records.
    pub const fn reason(self) -> InterruptReason {
        match self {
            CancelCause::User => InterruptReason::User,
            CancelCause::CostCap => InterruptReason::CostCap,
            CancelCause::Restart => InterruptReason::Restart,
            CancelCause::Host => InterruptReason::Host,
            CancelCause::Driver => InterruptReason::Driver,
        }
    }
}

/// True iff `text` is exactly one of the seven markers: a trailing space or extra
/// words make it the user's own text.
pub fn is_interruption_marker(text: &str) -> bool {
    InterruptReason::from_marker(text).is_some()
}

/// The marker without its brackets, e.g. `"Request interrupted by user"`; `None` for
/// anything that is not exactly a marker.
pub fn interruption_label(text: &str) -> Option<&str> {
    if !is_interruption_marker(text) {
        return None;
    }
    text.strip_prefix('[')?.strip_suffix(']')
}

/// A user message whose *string* content is a marker. A marker inside a text block
/// is not one: markers are only ever written as string content, so anything else
/// was written by someone else.
pub fn is_marker_message(message: &Message) -> bool {
    message.role == Role::User && message.string_content().is_some_and(is_interruption_marker)
}

/// Appends the marker for `reason` unless the history already ends with a marker,
/// so a cancel that races a restart records one interruption, not two. Returns
/// whether it appended.
pub fn append_marker(messages: &mut Vec<SharedMessage>, reason: InterruptReason) -> bool {
    if messages.last().is_some_and(|m| is_marker_message(m)) {
        return false;
    }
    messages.push(Arc::new(Message::user_text(reason.marker())));
    true
}

/// Migrates the older session format, which kept a free-text recap of the
/// interrupted turn to prepend to the next user message. The recap is discarded, not
/// converted: it was written for the model as an instruction, which is exactly what a
/// marker must never carry. What survives is the fact of the interruption, as the
/// `Unknown` marker (the old format did not record why).
///
/// Returns true iff the option held a recap. Idempotent: the option is left `None`,
/// and the marker is deduplicated like any other (a history that already ends with a
/// marker gets no second one). An empty history gets no marker, since there is no
/// turn for it to close.
pub fn migrate_legacy_abort_context(
    messages: &mut Vec<SharedMessage>,
    legacy_abort_context: &mut Option<String>,
) -> bool {
    if legacy_abort_context.take().is_none() {
        return false;
    }
    if !messages.is_empty() {
        append_marker(messages, InterruptReason::Unknown);
    }
    true
}

/// What the engine persists while a reply streams, so a crash mid-stream can keep
/// what the user already saw.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TurnDraft {
    /// The history length when the streamed reply began. The partial text belongs
    /// to the history only if it still has exactly this length.
    pub base_len: usize,
    /// The reply text streamed so far.
    pub partial_text: String,
}

/// Closes a turn that a crash left open. A history that is empty, or ends with a
/// marker or an assistant message, has no open turn and is left alone (false).
/// Otherwise the draft's partial reply is kept when the draft was taken against
/// exactly this history, then the `Crash` marker is appended (true). Running it again
/// finds its own marker at the end and changes nothing, so recovery is idempotent.
///
/// The partial reply is appended *as streamed*, untrimmed: it is what the user saw,
/// and trimming would make the stored reply differ from the displayed one. Only the
/// decision to keep it uses the trimmed form, because an assistant block of pure
/// whitespace says nothing and the provider rejects whitespace-only text blocks.
/// A stale draft (another history length) never contributes its text: it belongs to
/// some other point of the conversation.
pub fn recover_crashed_turn(messages: &mut Vec<SharedMessage>, draft: &TurnDraft) -> bool {
    let Some(last) = messages.last() else {
        return false;
    };
    if last.role == Role::Assistant || is_marker_message(last) {
        return false;
    }
    if draft.base_len == messages.len() && !draft.partial_text.trim().is_empty() {
        messages.push(Arc::new(Message::assistant_blocks(vec![Block::text(
            draft.partial_text.clone(),
        )])));
    }
    messages.push(Arc::new(Message::user_text(
        InterruptReason::Crash.marker(),
    )));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::messages_to_json;

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
}
