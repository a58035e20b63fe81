//! Property suite for repair after a failed turn (docs/spec.md §3).
//!
//! Guarantee kept: for any history (valid or not) and any baseline, repair only pops,
//! never below the baseline, only messages that could not end a history, and stops at
//! the first one that can; a second repair changes nothing. Why: repair runs on what a
//! failed turn left behind, which can be anything the provider or a crash produced. The
//! prompt that started the turn and every completed step must survive it, byte for byte,
//! or the user loses work and the prompt cache its prefix.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use std::sync::Arc;
use turnsim_core::strategies::{any_history, valid_history};
use turnsim_core::{
    SharedMessage, is_valid_trailing_message, repair_history_after_failure, validate_history,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_repair.txt"
        )))),
        ..ProptestConfig::default()
    }
}

/// A history and a baseline: inside it (0 to its length) three times in four, past
/// its end otherwise.
fn history_and_baseline() -> impl Strategy<Value = (Vec<SharedMessage>, usize)> {
    (
        any_history(),
        any::<Index>(),
        prop::option::weighted(0.25, 1..4usize),
    )
        .prop_map(|(history, at, past)| {
            let baseline = match past {
                Some(extra) => history.len() + extra,
                None => at.index(history.len() + 1),
            };
            (history, baseline)
        })
}

fn repaired(history: &[SharedMessage], baseline: usize) -> Vec<SharedMessage> {
    let mut out = history.to_vec();
    repair_history_after_failure(&mut out, baseline);
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn repair_keeps_a_prefix_and_never_removes_below_the_baseline(
        (before, baseline) in history_and_baseline(),
    ) {
        let after = repaired(&before, baseline);
        prop_assert!(after.len() <= before.len());
        prop_assert!(
            after.len() >= baseline.min(before.len()),
            "kept {} of {} messages with baseline {}",
            after.len(),
            before.len(),
            baseline
        );
        for (i, (a, b)) in after.iter().zip(&before).enumerate() {
            prop_assert!(Arc::ptr_eq(a, b), "message {} was rebuilt", i);
        }
    }

    #[test]
    fn repair_ends_on_a_valid_trailing_message_or_at_the_baseline(
        (before, baseline) in history_and_baseline(),
    ) {
        let after = repaired(&before, baseline);
        if after.len() > baseline {
            let last = after.last().expect("longer than the baseline, so not empty");
            prop_assert!(is_valid_trailing_message(last), "ends with {:?}", last);
        } else {
            prop_assert_eq!(after.len(), baseline.min(before.len()));
        }
    }

    #[test]
    fn repair_removes_only_messages_that_cannot_end_a_history(
        (before, baseline) in history_and_baseline(),
    ) {
        let after = repaired(&before, baseline);
        for (i, removed) in before.iter().enumerate().skip(after.len()) {
            prop_assert!(
                !is_valid_trailing_message(removed),
                "removed message {} ({:?}), which could end a history",
                i,
                removed
            );
        }
    }

    #[test]
    fn repair_is_idempotent((before, baseline) in history_and_baseline()) {
        let once = repaired(&before, baseline);
        let twice = repaired(&once, baseline);
        prop_assert_eq!(twice.len(), once.len());
        for (a, b) in twice.iter().zip(&once) {
            prop_assert!(Arc::ptr_eq(a, b));
        }
    }

    #[test]
    fn repairing_a_valid_history_changes_nothing(
        before in valid_history(),
        at in any::<Index>(),
    ) {
        prop_assert_eq!(validate_history(&before), Ok(()));
        let baseline = at.index(before.len() + 1);
        prop_assert_eq!(repaired(&before, baseline).len(), before.len());
    }
}
