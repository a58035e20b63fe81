//! Property suite for the durable log and crash recovery (docs/spec.md §7).
//!
//! Guarantee kept: for any scripted session (prompts, streamed replies cut short or not,
//! tool results in any order, cancels, late deliveries) and any crash point, recovery
//! never panics and never loses track: a log cut at any byte restores to an idle session
//! with a valid history; a log with any one byte damaged restores the same way when the
//! damage is in the final record (a torn write), and otherwise fails with
//! `LogError::Corrupt` naming the damaged record and its offset. Restoring again from the
//! log plus what the first restore asked to persist (after its truncation) gives the
//! same session and asks for nothing more. And what must change nothing writes nothing:
//! a delivery for an operation that is not outstanding, a repeated tool result, or an
//! input the session refuses leaves it byte-identical and persists no record. Why:
//! recovery runs once, unattended, after the worst moment; a panic there, a silently
//! dropped middle record, a second recovery that appends a second marker, or a stale
//! event that lands in the log would each lose or corrupt a user's session.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use turnsim_core::strategies::{Played, SessionScript, input, session_script};
use turnsim_core::{
    Input, LogError, Output, PendingOperation, Session, SessionConfig, SessionError, ToolOutcome,
    validate_history,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_log.txt"
        )))),
        ..ProptestConfig::default()
    }
}

fn session_config() -> SessionConfig {
    SessionConfig::default()
}

fn play(script: &SessionScript) -> (Session, Played) {
    let mut session = Session::new(session_config());
    let played = script.play(&mut session);
    (session, played)
}

/// Carries out a restore's outputs on the log, as a runtime must before anything else.
fn carry_out(log: &[u8], outputs: &[Output]) -> Vec<u8> {
    let mut log = log.to_vec();
    for output in outputs {
        match output {
            Output::TruncateLog { len } => log.truncate(*len),
            Output::Persist { bytes } => log.extend_from_slice(bytes),
            _ => {}
        }
    }
    log
}

fn next_op(session: &Session) -> u64 {
    let json: serde_json::Value =
        serde_json::from_slice(&session.to_bytes()).expect("a session serializes to JSON");
    json["state"]["next_op"]
        .as_u64()
        .expect("the state has a next_op")
}

/// A restored session is idle, has nothing pending and holds a valid history; restoring
/// again from the log with the first restore's outputs carried out changes nothing and
/// asks for nothing.
fn check_restored(log: &[u8], restored: &Session, outputs: &[Output]) -> Result<(), TestCaseError> {
    prop_assert!(restored.is_idle(), "not idle after restore");
    prop_assert_eq!(restored.pending_operation(), PendingOperation::None);
    if let Err(e) = validate_history(restored.history()) {
        return Err(TestCaseError::fail(format!(
            "restored history is invalid: {e}"
        )));
    }
    let log_after = carry_out(log, outputs);
    let (again, outputs_again) = Session::restore(session_config(), &log_after)
        .map_err(|e| TestCaseError::fail(format!("second restore failed: {e}")))?;
    let (once, twice) = (restored.to_bytes(), again.to_bytes());
    prop_assert_eq!(
        String::from_utf8_lossy(&twice),
        String::from_utf8_lossy(&once),
        "recovering twice differs from recovering once"
    );
    prop_assert!(
        outputs_again.is_empty(),
        "the second restore asked for more: {:?}",
        outputs_again
    );
    Ok(())
}

/// The record of `played` that byte `at` falls in, and where that record starts.
fn record_at(played: &Played, at: usize) -> (usize, usize) {
    let k = played
        .record_starts
        .iter()
        .rposition(|&start| start <= at)
        .expect("the first record starts at 0");
    (k, played.record_starts[k])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_log_cut_at_any_byte_restores_to_a_valid_idle_session(
        script in session_script(),
        cut in any::<Index>(),
    ) {
        let (_, played) = play(&script);
        let cut = cut.index(played.log.len() + 1);
        let log = &played.log[..cut];
        let (restored, outputs) = Session::restore(session_config(), log)
            .map_err(|e| TestCaseError::fail(format!("a cut log must restore: {e}")))?;
        // The torn tail, if any, is cut back to the last complete record.
        let complete = played
            .record_starts
            .iter()
            .copied()
            .chain(std::iter::once(played.log.len()))
            .filter(|&end| end <= cut)
            .max()
            .unwrap_or(0);
        let truncations: Vec<Output> = outputs
            .iter()
            .filter(|o| matches!(o, Output::TruncateLog { .. }))
            .cloned()
            .collect();
        let expected = if complete == cut {
            Vec::new()
        } else {
            vec![Output::TruncateLog { len: complete }]
        };
        prop_assert_eq!(truncations, expected);
        check_restored(log, &restored, &outputs)?;
    }

    #[test]
    fn a_log_with_one_damaged_byte_restores_or_names_the_damaged_record(
        script in session_script(),
        at in any::<Index>(),
        flip in 1..=255u8,
    ) {
        let (_, played) = play(&script);
        prop_assert!(!played.log.is_empty(), "the opening prompt persists a record");
        let at = at.index(played.log.len());
        let mut log = played.log.clone();
        log[at] ^= flip;
        let (record, start) = record_at(&played, at);
        let last = record + 1 == played.record_starts.len();
        // Bytes 0..8 of a frame are its length and the length's checksum: damage there
        // is corruption even in the final record, since a torn write only cuts short.
        let in_header = at - start < 8;
        match Session::restore(session_config(), &log) {
            Ok((restored, outputs)) => {
                prop_assert!(
                    last && !in_header,
                    "damage at byte {} (record {}) went unnoticed",
                    at,
                    record
                );
                prop_assert_eq!(outputs.first(), Some(&Output::TruncateLog { len: start }));
                check_restored(&log, &restored, &outputs)?;
            }
            Err(SessionError::Log(LogError::Corrupt { record: r, offset, what })) => {
                prop_assert!(
                    !last || in_header,
                    "a damaged final record is a torn write, not corruption: {}",
                    what
                );
                prop_assert_eq!((r, offset), (record, start), "{}", what);
            }
            Err(other) => {
                return Err(TestCaseError::fail(format!(
                    "damage at byte {at} (record {record}) gave {other:?}"
                )));
            }
        }
    }

    #[test]
    fn the_complete_log_restores_the_live_history_then_recovery(script in session_script()) {
        let (live, played) = play(&script);
        let (restored, outputs) = Session::restore(session_config(), &played.log)
            .map_err(|e| TestCaseError::fail(format!("the complete log must restore: {e}")))?;
        prop_assert!(
            !outputs.iter().any(|o| matches!(o, Output::TruncateLog { .. })),
            "a complete log has no torn tail"
        );
        let live_json: Vec<String> = live.history().iter().map(|m| m.to_json()).collect();
        let restored_json: Vec<String> =
            restored.history().iter().map(|m| m.to_json()).collect();
        prop_assert!(
            restored_json.starts_with(&live_json),
            "the live history is not a prefix of the restored one"
        );
        if live.is_idle() {
            prop_assert_eq!(&restored_json, &live_json);
            prop_assert!(outputs.is_empty(), "{:?}", outputs);
        }
        // Operation ids continue after every id the live session issued.
        prop_assert_eq!(next_op(&restored), next_op(&live));
        check_restored(&played.log, &restored, &outputs)?;
        let mut resumed = restored;
        let sent = resumed
            .handle(Input::Prompt {
                text: "and now?".into(),
                now: "2026-01-02T00:00:00Z".into(),
            })
            .map_err(|e| TestCaseError::fail(format!("a restored session refused a prompt: {e}")))?;
        let op = sent.iter().find_map(|o| match o {
            Output::Send { op, .. } => Some(op.0),
            _ => None,
        });
        prop_assert_eq!(op, Some(next_op(&live)));
    }

    #[test]
    fn a_stale_delivery_or_a_refused_input_changes_nothing_and_persists_nothing(
        script in session_script(),
        stop in any::<Index>(),
        late in prop::collection::vec(input(), 1..6),
    ) {
        // Stop the script anywhere, so the session may be mid-stream or mid-batch.
        let mut prefix = script.clone();
        prefix.steps.truncate(1 + stop.index(script.steps.len()));
        let (mut session, _) = play(&prefix);
        // Every result of a running batch, each delivered twice: the repeat (or, once
        // the batch completed, the stale delivery) must change nothing.
        if let PendingOperation::Tools { op, calls } = session.pending_operation() {
            for call in calls {
                let result = Input::ToolResult {
                    op,
                    outcome: ToolOutcome {
                        tool_use_id: call.id.clone(),
                        content: "done".into(),
                        is_error: false,
                    },
                };
                session
                    .handle(result.clone())
                    .map_err(|e| TestCaseError::fail(format!("a tool result was refused: {e}")))?;
                let before = session.to_bytes();
                let again = session
                    .handle(result)
                    .map_err(|e| TestCaseError::fail(format!("a repeat was refused: {e}")))?;
                prop_assert!(again.is_empty(), "the repeat for {} gave {:?}", call.id, again);
                prop_assert!(
                    session.to_bytes() == before,
                    "the repeat for {} changed the session",
                    call.id
                );
            }
        }
        for input in late {
            let outstanding = session.pending_operation().op();
            let stale = match &input {
                Input::Stream { op, .. } | Input::ToolResult { op, .. } => Some(*op) != outstanding,
                _ => false,
            };
            let before = session.to_bytes();
            let shown = format!("{input:?}");
            match session.handle(input) {
                Err(e) => prop_assert!(
                    session.to_bytes() == before,
                    "refused {} ({}) but changed the session",
                    shown,
                    e
                ),
                Ok(outputs) if stale => {
                    prop_assert!(outputs.is_empty(), "stale {} gave {:?}", shown, outputs);
                    prop_assert!(session.to_bytes() == before, "stale {} changed the session", shown);
                }
                Ok(_) => {}
            }
        }
    }
}
