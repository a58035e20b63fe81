//! Tool-use ids the session keeps: unique across the whole history (docs/spec.md §6,
//! "Provider tool-use ids").
//!
//! Guarantee: an id the provider streams is kept verbatim when no `tool_use` in the
//! history, earlier in the same reply, or taken out of the history by a rewind, a
//! compaction or a repair carries it, and is otherwise replaced by the first free
//! `{id}-{k}` (k = 2, 3, …). Retired ids stay taken because a runtime may key its tool
//! ledger (idempotency, audit) on the id: a second, different call under an id that
//! already ran would read as a repeat of the first. Several OpenAI-compatible and local providers
//! number calls per reply (`exec_0`, `exec_1`, …) and repeat them across replies and
//! after a rewind, a compaction or a restart; the Messages API refuses a request whose
//! history holds one id twice, so keeping such ids verbatim would end the session. The
//! replacement is a pure function of the history and the reply so far, so a restored
//! session and a replayed run choose the same id, and the ids a provider never repeats
//! are untouched (byte for byte the same history as before this rule existed).

use crate::message::{Block, SharedMessage};
use std::collections::BTreeSet;

/// The ids of the `tool_use` blocks in `messages`, which are leaving the history.
pub(super) fn retiring(messages: &[SharedMessage]) -> Vec<String> {
    messages
        .iter()
        .flat_map(|m| m.blocks())
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// Whether `id` is already the id of a `tool_use` in `history`, in the reply being
/// streamed (`in_reply` answers for it), or among the `retired` ones.
fn taken(
    id: &str,
    history: &[SharedMessage],
    in_reply: &dyn Fn(&str) -> bool,
    retired: &BTreeSet<String>,
) -> bool {
    retired.contains(id)
        || in_reply(id)
        || history.iter().any(|m| {
            m.blocks()
                .iter()
                .any(|b| matches!(b, Block::ToolUse { id: used, .. } if used == id))
        })
}

/// The id the session keeps for a `tool_use` the provider opened with `id`, or `None`
/// when `id` itself is free. `in_reply` says whether an earlier `tool_use` of the reply
/// being streamed carries an id (a question, so this file needs nothing of the stream).
pub(super) fn unique_tool_use_id(
    id: &str,
    history: &[SharedMessage],
    in_reply: &dyn Fn(&str) -> bool,
    retired: &BTreeSet<String>,
) -> Option<String> {
    if !taken(id, history, in_reply, retired) {
        return None;
    }
    // Terminates: each candidate is distinct and the ids taken are finitely many.
    (2u64..)
        .map(|k| format!("{id}-{k}"))
        .find(|candidate| !taken(candidate, history, in_reply, retired))
}
