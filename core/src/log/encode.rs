//! A record's JSON payload, written by hand.
//!
//! Guarantee: `write_record` appends exactly `serde_json::to_vec(record)` (the derived
//! serde impls on [`Record`] and its parts remain the definition; `tests/log_codec.rs`
//! compares the two on generated records of every kind). Why: a record is written on
//! every engine step, and most of its strings are the constant keys of the record and
//! its messages; written as literals they cost nothing to escape. Rare parts (tool
//! specs, activities, outcomes) go through the generic writer.

use super::Record;
use crate::json::{self, push_u64, write_messages, write_str, write_tool_calls};
use crate::message::Message;
use crate::state::{OperationId, PendingView, ToolOutcome};
use std::borrow::Borrow;

type Error = serde_json::Error;

fn write_pending(out: &mut String, pending: PendingView<'_>) -> Result<(), Error> {
    match pending {
        PendingView::None => out.push_str("{\"pending\":\"none\"}"),
        PendingView::Generation(op) => {
            out.push_str("{\"pending\":\"generation\",\"op\":");
            push_u64(out, op.0);
            out.push('}');
        }
        PendingView::Tools(op, calls) => {
            out.push_str("{\"pending\":\"tools\",\"op\":");
            push_u64(out, op.0);
            out.push_str(",\"calls\":");
            write_tool_calls(out, calls)?;
            out.push('}');
        }
    }
    Ok(())
}

/// Appends the record of messages appended as JSON: `Record::TurnStart` when a
/// `baseline` is given, `Record::Append` otherwise, from borrowed parts (the engine
/// writes one at every step, from its shared history and its state).
pub(super) fn write_appended<M: Borrow<Message>>(
    out: &mut String,
    baseline: Option<usize>,
    messages: &[M],
    pending: PendingView<'_>,
) -> Result<(), Error> {
    match baseline {
        Some(baseline) => {
            out.push_str("{\"turn_start\":{\"baseline\":");
            push_u64(out, baseline as u64);
            out.push_str(",\"messages\":");
        }
        None => out.push_str("{\"append\":{\"messages\":"),
    }
    write_messages(out, messages)?;
    out.push_str(",\"pending\":");
    write_pending(out, pending)?;
    out.push_str("}}");
    Ok(())
}

/// Appends a `Record::ToolResult` of `op` and a borrowed `outcome` as JSON.
pub(super) fn write_tool_result(
    out: &mut String,
    op: OperationId,
    outcome: &ToolOutcome,
) -> Result<(), Error> {
    out.push_str("{\"tool_result\":{\"op\":");
    push_u64(out, op.0);
    out.push_str(",\"outcome\":");
    json::write(out, outcome)?;
    out.push_str("}}");
    Ok(())
}

/// Appends `record` as JSON: `{"variant":{fields in declaration order}}`.
pub(super) fn write_record(out: &mut String, record: &Record) -> Result<(), Error> {
    match record {
        Record::Configure {
            system,
            tools,
            thinking,
        } => {
            out.push_str("{\"configure\":{\"system\":");
            write_str(out, system);
            out.push_str(",\"tools\":");
            json::write(out, tools)?;
            if let Some(thinking) = thinking {
                out.push_str(",\"thinking\":");
                json::write(out, thinking)?;
            }
        }
        Record::TurnStart {
            baseline,
            messages,
            pending,
        } => return write_appended(out, Some(*baseline), messages, pending.as_view()),
        Record::Append { messages, pending } => {
            return write_appended(out, None, messages, pending.as_view());
        }
        Record::Draft { op, base_len } => {
            out.push_str("{\"draft\":{\"op\":");
            push_u64(out, op.0);
            out.push_str(",\"base_len\":");
            push_u64(out, *base_len as u64);
        }
        Record::DraftText { op, text } => {
            out.push_str("{\"draft_text\":{\"op\":");
            push_u64(out, op.0);
            out.push_str(",\"text\":");
            write_str(out, text);
        }
        Record::ToolResult { op, outcome } => return write_tool_result(out, *op, outcome),
        Record::Receipt { op, digest } => {
            out.push_str("{\"receipt\":{\"op\":");
            push_u64(out, op.0);
            out.push_str(",\"digest\":");
            write_str(out, digest);
        }
        Record::Activity { activity } => {
            out.push_str("{\"activity\":{\"activity\":");
            json::write(out, activity)?;
        }
        Record::Reset {
            messages,
            compacted,
        } => {
            out.push_str("{\"reset\":{\"messages\":");
            write_messages(out, messages)?;
            out.push_str(",\"compacted\":");
            json::write(out, compacted)?;
        }
        Record::Rewind { len } => {
            out.push_str("{\"rewind\":{\"len\":");
            push_u64(out, *len as u64);
        }
        Record::TurnEnd { outcome } => {
            out.push_str("{\"turn_end\":{\"outcome\":");
            json::write(out, outcome)?;
        }
        Record::LegacyAbortContext { text } => {
            out.push_str("{\"legacy_abort_context\":{\"text\":");
            write_str(out, text);
        }
    }
    out.push_str("}}");
    Ok(())
}
