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
use crate::state::PendingOperation;

type Error = serde_json::Error;

fn write_pending(out: &mut String, pending: &PendingOperation) -> Result<(), Error> {
    match pending {
        PendingOperation::None => out.push_str("{\"pending\":\"none\"}"),
        PendingOperation::Generation { op } => {
            out.push_str("{\"pending\":\"generation\",\"op\":");
            push_u64(out, op.0);
            out.push('}');
        }
        PendingOperation::Tools { op, calls } => {
            out.push_str("{\"pending\":\"tools\",\"op\":");
            push_u64(out, op.0);
            out.push_str(",\"calls\":");
            write_tool_calls(out, calls)?;
            out.push('}');
        }
    }
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
        } => {
            out.push_str("{\"turn_start\":{\"baseline\":");
            push_u64(out, *baseline as u64);
            out.push_str(",\"messages\":");
            write_messages(out, messages)?;
            out.push_str(",\"pending\":");
            write_pending(out, pending)?;
        }
        Record::Append { messages, pending } => {
            out.push_str("{\"append\":{\"messages\":");
            write_messages(out, messages)?;
            out.push_str(",\"pending\":");
            write_pending(out, pending)?;
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
        Record::ToolResult { op, outcome } => {
            out.push_str("{\"tool_result\":{\"op\":");
            push_u64(out, op.0);
            out.push_str(",\"outcome\":");
            json::write(out, outcome)?;
        }
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
