//! Checkpoint recovery after a crash.
//!
//! Guarantee checked: nothing is reissued, each pending call is answered as interrupted
//! and named in a note, and a history broken before the pending operation is refused.

use super::*;

// ------------------------------------------------------------------ recovery

pub(crate) const INTERRUPTED: &str = "Interrupted before the outcome was saved; effects are unknown. Inspect external state before retrying this action.";

#[test]
pub(crate) fn recovering_pending_tools_answers_each_call_then_notes_them_then_marks_the_crash() {
    assert_eq!(INTERRUPTED_RESULT_TEXT, INTERRUPTED);
    let s = running_tools(&["a", "b"]);
    let pending = s.pending_operation();
    assert_eq!(
        pending,
        PendingOperation::Tools {
            op: op(2),
            calls: vec![call("a"), call("b")]
        }
    );
    let before = s.history().to_vec();
    let recovered = recover_checkpoint(before.clone(), &pending).unwrap();

    for (kept, was) in recovered.iter().zip(&before) {
        assert!(Arc::ptr_eq(kept, was), "recovery only appends");
    }
    let appended: Vec<String> = recovered[before.len()..]
        .iter()
        .map(|m| m.to_json())
        .collect();
    assert_eq!(
        appended,
        vec![
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"a","content":"{INTERRUPTED}","is_error":true}},{{"type":"tool_result","tool_use_id":"b","content":"{INTERRUPTED}","is_error":true}}]}}"#
            ),
            r#"{"role":"user","content":"[Canceled while the tool calls `bash`, `bash` were running. They may have already started and partially applied their effects.]"}"#.to_string(),
            r#"{"role":"user","content":"[Request interrupted: runtime stopped unexpectedly]"}"#.to_string(),
        ]
    );
    assert_eq!(
        recovered[before.len() + 1].string_content(),
        Some(tool_in_flight_note_text("Canceled", &["bash".into(), "bash".into()]).as_str())
    );
    validate_history(&recovered).expect("the recovered history is valid");
}

#[test]
pub(crate) fn recovering_a_pending_generation_appends_only_the_crash_marker() {
    let (s, g) = started("hi");
    let pending = s.pending_operation();
    assert_eq!(pending, PendingOperation::Generation { op: g });
    let recovered = recover_checkpoint(s.history().to_vec(), &pending).unwrap();
    assert_eq!(
        json_of(&recovered),
        r#"[{"role":"user","content":"hi"},{"role":"user","content":"[Request interrupted: runtime stopped unexpectedly]"}]"#
    );
}

#[test]
pub(crate) fn recovering_with_nothing_pending_leaves_the_history_unchanged() {
    let s = one_tool_round();
    assert_eq!(s.pending_operation(), PendingOperation::None);
    let before = s.history().to_vec();
    let recovered = recover_checkpoint(before.clone(), &PendingOperation::None).unwrap();
    assert_eq!(recovered.len(), before.len());
    assert!(
        recovered
            .iter()
            .zip(&before)
            .all(|(a, b)| Arc::ptr_eq(a, b))
    );
}

#[test]
pub(crate) fn recovering_tools_that_the_history_does_not_end_with_is_refused() {
    let s = one_tool_round();
    let err = recover_checkpoint(
        s.history().to_vec(),
        &PendingOperation::Tools {
            op: op(2),
            calls: vec![call("a")],
        },
    )
    .expect_err("the history does not end with that batch");
    assert_eq!(
        err,
        StateError::InvalidContext(
            r#"pending op#2 names calls ["a"] but the history ends with calls []"#.into()
        )
    );
}

#[test]
pub(crate) fn recovery_never_reissues_an_operation() {
    // Recovery yields a history, never an effect; the state rebuilt from it is idle,
    // has nothing pending, and numbers the next operation after every old one.
    for pending in [
        PendingOperation::None,
        PendingOperation::Generation { op: op(1) },
    ] {
        let (s, _) = started("hi");
        let history = recover_checkpoint(s.history().to_vec(), &pending).unwrap();
        let mut r = TurnState::recovered(history, Some(op(1)));
        assert!(r.is_idle());
        assert_eq!(r.pending_operation(), PendingOperation::None);
        assert_eq!(r.next_op(), op(2));
        // A completion for the operation that was in flight is stale.
        refused(
            &mut r,
            StateError::UnexpectedCompletion {
                op: op(1),
                outstanding: None,
            },
            |r| r.generated(op(1), text_gen("late", StopReason::EndTurn, 1)),
        );
    }
    let s = running_tools(&["a"]);
    let history = recover_checkpoint(s.history().to_vec(), &s.pending_operation()).unwrap();
    let mut r = TurnState::recovered(history, Some(op(2)));
    refused(
        &mut r,
        StateError::UnexpectedCompletion {
            op: op(2),
            outstanding: None,
        },
        |r| r.tools_completed(op(2), vec![outcome("a", "A", false)], false),
    );
    assert_eq!(r.next_op(), op(3));
}

#[test]
pub(crate) fn recovery_refuses_a_history_that_is_broken_before_the_pending_operation() {
    // Message 1's call was never answered: recovery must not paper over that.
    let broken = vec![
        user("hi"),
        shared(calling(&["a"])),
        user("no results here"),
        shared(calling(&["b"])),
    ];
    let missing = StateError::InvalidHistory(HistoryError::MissingToolResult {
        message: 1,
        tool_use_id: "a".into(),
    });
    assert_eq!(
        recover_checkpoint(
            broken.clone(),
            &PendingOperation::Tools {
                op: op(4),
                calls: vec![call("b")],
            },
        ),
        Err(missing.clone())
    );
    assert_eq!(
        recover_checkpoint(
            broken[..3].to_vec(),
            &PendingOperation::Generation { op: op(3) }
        ),
        Err(missing)
    );
}
