//! Checkpoint recovery: account for the operation outstanding at a crash.
//!
//! Guarantee: nothing is ever reissued. A tool intent without its result may have had
//! external effects, so it is answered as interrupted and named in a note; results
//! persisted before the crash are kept as they were; and the history comes out valid
//! (docs/spec.md §2), so the next request is one the provider accepts.

use super::*;

/// Accounts for the operation that was outstanding when the runtime stopped. Nothing
/// is ever reissued: a tool intent without its result may have had external effects,
/// so it is answered as interrupted and flagged with a note; a generation in flight
/// is simply marked.
pub fn recover_checkpoint(
    history: Vec<SharedMessage>,
    pending: &PendingOperation,
) -> Result<Vec<SharedMessage>, StateError> {
    recover_checkpoint_with_results(history, pending, &[])
}

/// [`recover_checkpoint`] for a runtime that also persisted the results that arrived
/// before the crash: those are kept as they were, and only the calls still without a
/// result are answered as interrupted and named in the note.
pub fn recover_checkpoint_with_results(
    history: Vec<SharedMessage>,
    pending: &PendingOperation,
    finished: &[ToolOutcome],
) -> Result<Vec<SharedMessage>, StateError> {
    let mut history = history;
    match pending {
        PendingOperation::None => Ok(history),
        PendingOperation::Generation { .. } => {
            validate_history(&history)?;
            append_marker(&mut history, InterruptReason::Crash);
            Ok(history)
        }
        PendingOperation::Tools { op, calls } => {
            let asked = history.last().map(|m| m.tool_calls()).unwrap_or_default();
            let asked_ids: Vec<&str> = asked.iter().map(|c| c.id.as_str()).collect();
            let pending_ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
            if asked_ids != pending_ids {
                return Err(StateError::InvalidContext(format!(
                    "pending {op} names calls {pending_ids:?} but the history ends with calls {asked_ids:?}"
                )));
            }
            validate_history_allowing_pending_tools(&history)?;
            let mut blocks = Vec::with_capacity(calls.len());
            let mut unknown = Vec::new();
            for call in calls {
                match finished.iter().find(|r| r.tool_use_id == call.id) {
                    Some(r) => blocks.push(r.clone().into_block()),
                    None => {
                        unknown.push(call.name.clone());
                        blocks.push(Block::tool_result(
                            call.id.clone(),
                            INTERRUPTED_RESULT_TEXT,
                            true,
                        ));
                    }
                }
            }
            history.push(Arc::new(Message::user_blocks(blocks)));
            if !unknown.is_empty() {
                history.push(Arc::new(Message::user_text(tool_in_flight_note_text(
                    RECOVERY_NOTE_PHRASE,
                    &unknown,
                ))));
            }
            append_marker(&mut history, InterruptReason::Crash);
            Ok(history)
        }
    }
}
