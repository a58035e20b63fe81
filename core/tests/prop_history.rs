//! Property suite for history validation (docs/spec.md §2).
//!
//! Guarantee kept: `validate_history` accepts every history the generator builds by the
//! rules (text, thinking, parallel tool batches answered in the next message, errors,
//! markers, notes), and rejects every single break from a catalogue of mutations with
//! exactly the error that names it: kind, message, block and tool id. Why: the engine
//! validates before it sends, rewinds or restores; a validator that accepts a broken
//! history lets the provider reject it turns later, and one that names the wrong place
//! sends whoever debugs it to the wrong message.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use turnsim_core::strategies::{
    MutatedHistory, MutationKind, history_with_pending_tools, mutated_history, valid_history,
};
use turnsim_core::{HistoryError, validate_history, validate_history_allowing_pending_tools};

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_history.txt"
        )))),
        ..ProptestConfig::default()
    }
}

/// The mutated history is rejected with the predicted error, whose kind is one of
/// `kinds`; the original is valid. With pending tools allowed, the verdict is the
/// same, except that a history which now ends with an unanswered batch is accepted.
fn assert_rejected(case: &MutatedHistory, kinds: &[&str]) -> Result<(), TestCaseError> {
    prop_assert_eq!(validate_history(&case.original), Ok(()));
    prop_assert!(
        kinds.contains(&case.expected.kind()),
        "{:?} predicts {:?}, not one of {:?}",
        case.mutation,
        case.expected,
        kinds
    );
    prop_assert_eq!(validate_history(&case.mutated), Err(case.expected.clone()));
    let allowing = validate_history_allowing_pending_tools(&case.mutated);
    match &case.expected {
        HistoryError::UnansweredAtEnd { .. } => prop_assert_eq!(allowing, Ok(())),
        expected => prop_assert_eq!(allowing, Err(expected.clone())),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_generated_valid_history_validates(history in valid_history()) {
        prop_assert_eq!(validate_history(&history), Ok(()));
        prop_assert_eq!(validate_history_allowing_pending_tools(&history), Ok(()));
    }

    #[test]
    fn a_trailing_unanswered_batch_validates_only_while_tools_are_pending(
        history in history_with_pending_tools(),
    ) {
        prop_assert_eq!(validate_history_allowing_pending_tools(&history), Ok(()));
        let last = history.len() - 1;
        let ids: Vec<String> = history[last].tool_calls().into_iter().map(|c| c.id).collect();
        prop_assert_eq!(
            validate_history(&history),
            Err(HistoryError::UnansweredAtEnd { message: last, tool_use_ids: ids })
        );
    }

    #[test]
    fn dropping_a_result_is_a_missing_result_at_the_asking_message(
        case in mutated_history(MutationKind::DropResult),
    ) {
        assert_rejected(&case, &["missing_tool_result"])?;
    }

    #[test]
    fn duplicating_a_result_is_a_duplicate_result_at_the_copy(
        case in mutated_history(MutationKind::DuplicateResult),
    ) {
        assert_rejected(&case, &["duplicate_tool_result"])?;
    }

    #[test]
    fn moving_a_result_is_unexpected_where_it_lands_or_missing_where_it_was_due(
        case in mutated_history(MutationKind::MoveResult),
    ) {
        assert_rejected(&case, &["unexpected_tool_result", "missing_tool_result"])?;
    }

    #[test]
    fn a_result_after_text_in_the_answering_message_is_reported_as_such(
        case in mutated_history(MutationKind::ResultAfterText),
    ) {
        assert_rejected(&case, &["tool_result_after_other_block"])?;
    }

    #[test]
    fn an_emptied_assistant_message_is_empty_assistant_content(
        case in mutated_history(MutationKind::EmptyAssistant),
    ) {
        assert_rejected(&case, &["empty_assistant_content"])?;
    }

    #[test]
    fn a_reused_tool_use_id_is_a_duplicate_id_at_its_second_use(
        case in mutated_history(MutationKind::DuplicateId),
    ) {
        assert_rejected(&case, &["duplicate_tool_use_id"])?;
    }

    #[test]
    fn a_batch_without_its_answering_message_is_reported_by_what_follows_it(
        case in mutated_history(MutationKind::DropAnswer),
    ) {
        assert_rejected(
            &case,
            &["no_answering_message", "missing_tool_result", "unanswered_at_end"],
        )?;
    }

    #[test]
    fn a_tool_use_in_a_user_message_is_reported_where_it_is(
        case in mutated_history(MutationKind::ToolUseInUser),
    ) {
        assert_rejected(&case, &["tool_use_in_user_message"])?;
    }

    #[test]
    fn a_history_survives_a_json_round_trip_with_the_same_verdict(
        case in mutated_history(MutationKind::MoveResult),
        valid in valid_history(),
    ) {
        for history in [&case.mutated, &valid] {
            let json = turnsim_core::messages_to_json(history);
            let back = turnsim_core::parse_messages(&json).map_err(|e| {
                TestCaseError::fail(format!("{json} does not parse back: {e}"))
            })?;
            prop_assert_eq!(turnsim_core::messages_to_json(&back), json);
            prop_assert_eq!(validate_history(&back), validate_history(history));
        }
    }
}
