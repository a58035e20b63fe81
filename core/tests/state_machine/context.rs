//! Context changes while idle: replacing the history and rewinding it.
//!
//! Guarantee checked: a change that would split a tool batch or orphan a result is
//! refused and changes nothing; a valid one keeps the prefix messages themselves.

use super::*;

// ------------------------------------------------------------------ context changes

#[test]
pub(crate) fn replace_context_rejects_a_split_tool_batch_and_changes_nothing() {
    let mut s = TurnState::new(vec![user("hi"), assistant("hello")]);
    let split = vec![user("hi"), shared(calling(&["a"]))];
    refused(
        &mut s,
        StateError::InvalidHistory(HistoryError::UnansweredAtEnd {
            message: 1,
            tool_use_ids: vec!["a".into()],
        }),
        |s| s.replace_context(split),
    );
    let unanswered = vec![user("hi"), shared(calling(&["a"])), user("go on")];
    refused(
        &mut s,
        StateError::InvalidHistory(HistoryError::MissingToolResult {
            message: 1,
            tool_use_id: "a".into(),
        }),
        |s| s.replace_context(unanswered),
    );
}

#[test]
pub(crate) fn replace_context_rejects_an_orphaned_tool_result_and_changes_nothing() {
    let mut s = TurnState::new(vec![user("hi"), assistant("hello")]);
    let orphan = vec![
        user("hi"),
        assistant("hello"),
        shared(Message::user_blocks(vec![Block::tool_result(
            "ghost", "out", false,
        )])),
    ];
    refused(
        &mut s,
        StateError::InvalidHistory(HistoryError::UnexpectedToolResult {
            message: 2,
            block: 0,
            tool_use_id: "ghost".into(),
        }),
        |s| s.replace_context(orphan),
    );
}

#[test]
pub(crate) fn replace_context_accepts_a_valid_history_when_idle() {
    let mut s = TurnState::new(vec![user("hi"), assistant("hello")]);
    let summary = vec![user("[summary follows]"), assistant("we said hello")];
    s.replace_context(summary.clone()).unwrap();
    assert_eq!(json_of(s.history()), json_of(&summary));
}

/// [prompt, calls a, results a, "done"], idle; ops 1..=3 used.

#[test]
pub(crate) fn rewind_between_a_tool_use_and_its_results_is_refused_and_changes_nothing() {
    let mut s = one_tool_round();
    refused(
        &mut s,
        StateError::InvalidHistory(HistoryError::UnansweredAtEnd {
            message: 1,
            tool_use_ids: vec!["a".into()],
        }),
        |s| s.rewind(2),
    );
    refused(
        &mut s,
        StateError::RewindOutOfRange { index: 5, len: 4 },
        |s| s.rewind(5),
    );
}

#[test]
pub(crate) fn rewind_to_a_valid_prefix_keeps_the_prefix_messages_themselves() {
    let mut s = one_tool_round();
    let before: Vec<SharedMessage> = s.history().to_vec();
    s.rewind(3).unwrap();
    assert_eq!(s.history().len(), 3);
    for (kept, was) in s.history().iter().zip(&before) {
        assert!(Arc::ptr_eq(kept, was));
    }
    s.rewind(1).unwrap();
    assert_eq!(
        json_of(s.history()),
        r#"[{"role":"user","content":"run the tools"}]"#
    );
}
