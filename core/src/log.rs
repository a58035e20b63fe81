//! The durable log: append-only records, each framed with its length and checksums.
//!
//! Guarantee: recovery reads back exactly the records that were completely written,
//! in order. A torn final record (a crash in the middle of an append) is detected and
//! dropped; it is the only thing ever dropped. A damaged record anywhere before the
//! end is reported as corruption with its index and byte offset, never skipped, since
//! silently losing a middle record would lose a user's prompt or a tool's result.
//!
//! Frame: `len: u32 LE | crc32(len) : u32 LE | crc32(payload): u32 LE | payload`.
//! The header has its own checksum so a damaged length is reported as corruption
//! instead of being mistaken for a record that runs past the end of the file.

use crate::message::Message;
use crate::request::{Activity, ToolSpec};
use crate::state::{OperationId, PendingOperation};
use serde::{Deserialize, Serialize};

mod encode;
mod pending;

/// Bytes of a frame header.
pub const FRAME_HEADER: usize = 12;

/// Records larger than this are refused when read, so a damaged header can never make
/// recovery allocate gigabytes.
pub const MAX_RECORD: usize = 64 << 20;

/// How a turn ended, as persisted and reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TurnOutcome {
    EndTurn,
    MaxTokens,
    Cancelled {
        reason: crate::interrupt::InterruptReason,
    },
    Failed {
        reason: String,
    },
    /// Found on restart: the turn was cut short by a crash and recovered.
    Crashed,
}

/// One durable record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// Externally tagged (`{"turn_start": {...}}`): the kind comes first, so recovery
// decodes each record in one pass instead of buffering it to find an inner tag.
#[serde(rename_all = "snake_case")]
pub enum Record {
    /// The host changed the system prompt or the tools, and switched thinking when
    /// `thinking` is there (left out otherwise, so a log written before the field
    /// reads, and a configure that did not switch writes, the bytes it always did).
    Configure {
        system: String,
        tools: std::sync::Arc<[ToolSpec]>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<crate::request::Thinking>,
    },
    /// A turn starts: its directive (and anything else appended with it) and the
    /// generation it asks for, in one record, so no crash can keep the turn without its
    /// prompt or the prompt without its turn. Messages from `baseline` on belong to it.
    TurnStart {
        baseline: usize,
        messages: Vec<Message>,
        #[serde(deserialize_with = "crate::log::pending::deserialize")]
        pending: PendingOperation,
    },
    /// Messages appended, and the operation outstanding afterwards. One record, so no
    /// crash can separate a tool call from the intent to run it.
    Append {
        messages: Vec<Message>,
        #[serde(deserialize_with = "crate::log::pending::deserialize")]
        pending: PendingOperation,
    },
    /// A reply started streaming for a history of `base_len` messages.
    Draft {
        op: OperationId,
        base_len: usize,
    },
    /// More streamed text of the reply in progress.
    DraftText {
        op: OperationId,
        text: String,
    },
    /// One tool result arrived; saved at once so a crash before the batch completes
    /// does not lose it.
    ToolResult {
        op: OperationId,
        outcome: crate::state::ToolOutcome,
    },
    /// A request was sent.
    Receipt {
        op: OperationId,
        digest: String,
    },
    Activity {
        activity: Activity,
    },
    /// Compaction: the history is replaced; `compacted` are the directives it hid.
    Reset {
        messages: Vec<Message>,
        compacted: Vec<String>,
    },
    /// The history was truncated to `len` messages.
    Rewind {
        len: usize,
    },
    TurnEnd {
        outcome: TurnOutcome,
    },
    /// Read, never written: the older session format's free-text recap of an
    /// interrupted turn (`{"record":"abort_context","text":…}` in that format's
    /// shape). Restoring migrates it as docs/spec.md §4 "Legacy sessions" says: the
    /// recap is dropped and the `Unknown` marker appended, so an older session loads
    /// instead of being refused, and no instruction written for the model survives.
    LegacyAbortContext {
        text: String,
    },
}

/// The older session format's shape of its one record this format still reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacyRecord {
    record: LegacyKind,
    text: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum LegacyKind {
    AbortContext,
}

/// A log that cannot be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("log corrupt at record {record} (byte {offset}): {what}")]
    Corrupt {
        record: usize,
        offset: usize,
        what: String,
    },
}

/// Frames one record.
///
/// The payload is written straight into the frame after a placeholder header, which
/// is filled in afterwards: the same bytes as `encode_frame(&serde_json::to_vec(record))`
/// (`encode::write_record` and [`crate::json`] reproduce serde_json's bytes exactly) without a
/// second buffer and a copy of the payload. Records are written on every engine step,
/// and the whole-simulator fuzz target pays for each.
pub fn encode_record(record: &Record) -> Vec<u8> {
    framed(|out| encode::write_record(out, record))
}

/// The frame of a `Record::TurnStart` (with a `baseline`) or `Record::Append` of
/// `messages` and `pending`: the bytes `encode_record` gives for that record, written
/// from borrowed parts, so the engine does not copy the messages it appended (tool
/// output runs to kilobytes) and a batch's calls only to write them.
pub(crate) fn encode_appended<M: std::borrow::Borrow<crate::message::Message>>(
    baseline: Option<usize>,
    messages: &[M],
    pending: crate::state::PendingView<'_>,
) -> Vec<u8> {
    framed(|out| encode::write_appended(out, baseline, messages, pending))
}

/// The frame of a `Record::ToolResult` of `op` and `outcome`, written from the borrowed
/// outcome (its output runs to kilobytes): the bytes `encode_record` gives.
pub(crate) fn encode_tool_result(op: OperationId, outcome: &crate::state::ToolOutcome) -> Vec<u8> {
    framed(|out| encode::write_tool_result(out, op, outcome))
}

/// A frame around the payload `write` appends.
fn framed(write: impl FnOnce(&mut String) -> Result<(), serde_json::Error>) -> Vec<u8> {
    // The placeholder is NUL characters, which keep the buffer a valid `String` until
    // it becomes bytes and the header is written over them.
    const PLACEHOLDER: &str = "\0\0\0\0\0\0\0\0\0\0\0\0";
    const _: () = assert!(PLACEHOLDER.len() == FRAME_HEADER);
    // Most records fit in 1 KiB, so they are written without growing the buffer.
    let mut out = String::with_capacity(1024);
    out.push_str(PLACEHOLDER);
    if write(&mut out).is_err() {
        // Unreachable for these types (no map has a non-string key); framed empty, as
        // before, so a log never holds half a record.
        return encode_frame(&[]);
    }
    let mut out = out.into_bytes();
    let len = ((out.len() - FRAME_HEADER) as u32).to_le_bytes();
    let payload_crc = crc32fast::hash(&out[FRAME_HEADER..]).to_le_bytes();
    out[..4].copy_from_slice(&len);
    out[4..8].copy_from_slice(&crc32fast::hash(&len).to_le_bytes());
    out[8..FRAME_HEADER].copy_from_slice(&payload_crc);
    out
}

/// Frames a payload.
pub fn encode_frame(payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_le_bytes();
    let mut out = Vec::with_capacity(FRAME_HEADER + payload.len());
    out.extend_from_slice(&len);
    out.extend_from_slice(&crc32fast::hash(&len).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// What a log read back holds.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedLog {
    pub records: Vec<Record>,
    /// Bytes of the complete records; anything after is a torn tail to truncate
    /// before appending again.
    pub valid_len: usize,
    /// Bytes of the torn final record that was dropped (0 when none).
    pub torn_bytes: usize,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a log into frame payloads. Never panics on any bytes.
pub fn decode_frames(bytes: &[u8]) -> Result<(Vec<&[u8]>, usize), LogError> {
    let mut frames = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let corrupt = |what: String| LogError::Corrupt {
            record: frames.len(),
            offset: at,
            what,
        };
        let (Some(len), Some(hcrc), Some(pcrc)) = (
            u32_at(bytes, at),
            u32_at(bytes, at + 4),
            u32_at(bytes, at + 8),
        ) else {
            break; // a header cut short: torn final record
        };
        if crc32fast::hash(&len.to_le_bytes()) != hcrc {
            return Err(corrupt("header checksum mismatch".into()));
        }
        let len = len as usize;
        if len > MAX_RECORD {
            return Err(corrupt(format!(
                "record of {len} bytes exceeds the {MAX_RECORD}-byte limit"
            )));
        }
        let start = at + FRAME_HEADER;
        let Some(payload) = bytes.get(start..start + len) else {
            break; // payload cut short: torn final record
        };
        if crc32fast::hash(payload) != pcrc {
            if start + len == bytes.len() {
                break; // the last record, damaged while it was written
            }
            return Err(corrupt("payload checksum mismatch".into()));
        }
        frames.push(payload);
        at = start + len;
    }
    Ok((frames, at))
}

/// Reads back every complete record.
pub fn decode_log(bytes: &[u8]) -> Result<DecodedLog, LogError> {
    let (frames, valid_len) = decode_frames(bytes)?;
    let mut offset = 0usize;
    let mut records = Vec::with_capacity(frames.len());
    for (i, payload) in frames.iter().enumerate() {
        let corrupt = |what: String| LogError::Corrupt {
            record: i,
            offset,
            what,
        };
        // Checked as UTF-8 once, whole, and then parsed as text: serde_json's byte
        // reader would check every string again on its own.
        let text = std::str::from_utf8(payload)
            .map_err(|e| corrupt(format!("undecodable record: {e}")))?;
        let record = match serde_json::from_str(text) {
            Ok(r) => r,
            // Only a payload this format cannot read is tried in the older shape, so a
            // current record never pays for the second parse.
            Err(e) => match serde_json::from_str::<LegacyRecord>(text) {
                Ok(LegacyRecord {
                    record: LegacyKind::AbortContext,
                    text,
                }) => Record::LegacyAbortContext { text },
                Err(_) => return Err(corrupt(format!("undecodable record: {e}"))),
            },
        };
        records.push(record);
        offset += FRAME_HEADER + payload.len();
    }
    Ok(DecodedLog {
        records,
        valid_len,
        torn_bytes: bytes.len() - valid_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut log = encode_record(&Record::Configure {
            system: "s".into(),
            tools: Vec::new().into(),
            thinking: None,
        });
        log.extend(encode_record(&Record::Rewind { len: 3 }));
        log.extend(encode_record(&Record::TurnEnd {
            outcome: TurnOutcome::EndTurn,
        }));
        log
    }

    #[test]
    fn every_complete_record_reads_back_in_order() {
        let d = decode_log(&sample()).expect("decodes");
        assert_eq!(
            d.records,
            vec![
                Record::Configure {
                    system: "s".into(),
                    tools: Vec::new().into(),
                    thinking: None,
                },
                Record::Rewind { len: 3 },
                Record::TurnEnd {
                    outcome: TurnOutcome::EndTurn
                }
            ]
        );
        assert_eq!(d.torn_bytes, 0);
    }

    #[test]
    fn a_torn_final_record_is_dropped_at_every_byte() {
        let log = sample();
        let last_start = log.len()
            - encode_record(&Record::TurnEnd {
                outcome: TurnOutcome::EndTurn,
            })
            .len();
        for cut in last_start..log.len() {
            let d = decode_log(&log[..cut]).expect("a tear is not corruption");
            assert_eq!(d.records.len(), 2, "cut at {cut}");
            assert_eq!(d.valid_len, last_start);
            assert_eq!(d.torn_bytes, cut - last_start);
        }
    }

    #[test]
    fn a_damaged_middle_record_is_corruption_naming_its_index_and_offset() {
        let mut log = sample();
        let first = encode_record(&Record::Configure {
            system: "s".into(),
            tools: Vec::new().into(),
            thinking: None,
        })
        .len();
        log[first + FRAME_HEADER + 2] ^= 0x40;
        assert_eq!(
            decode_log(&log),
            Err(LogError::Corrupt {
                record: 1,
                offset: first,
                what: "payload checksum mismatch".into()
            })
        );
    }

    #[test]
    fn a_damaged_length_is_corruption_not_a_tear() {
        let mut log = sample();
        log[0] ^= 0x01;
        let err = decode_log(&log).expect_err("corrupt");
        assert_eq!(
            err.to_string(),
            "log corrupt at record 0 (byte 0): header checksum mismatch"
        );
    }

    #[test]
    fn a_record_is_framed_as_the_exact_bytes_of_its_json_payload() {
        // Every kind of byte serde_json treats differently: escaped by name, escaped
        // as \u00XX, and passed through (DEL, multi-byte UTF-8).
        let record = Record::DraftText {
            op: OperationId(7),
            text: "q\" b\\ t\t n\0 d\u{7f} \u{e9}\u{2028}\u{1f980}".into(),
        };
        let payload = "{\"draft_text\":{\"op\":7,\"text\":\
                       \"q\\\" b\\\\ t\\t n\\u0000 d\u{7f} \u{e9}\u{2028}\u{1f980}\"}}";
        let framed = encode_record(&record);
        assert_eq!(framed, encode_frame(payload.as_bytes()));
        assert_eq!(
            framed,
            encode_frame(&serde_json::to_vec(&record).expect("serializes"))
        );
    }

    #[test]
    fn a_record_written_from_borrowed_parts_is_the_owned_records_bytes() {
        use crate::message::{Block, ToolCall};
        use crate::state::ToolOutcome;
        use std::sync::Arc;
        let calls = vec![ToolCall {
            id: "toolu_1".into(),
            name: "read_file".into(),
            input: serde_json::json!({"path": "a \"b\"", "n": [1, 2.5]}),
        }];
        let messages = vec![
            Message::user_text("fix it"),
            Message::assistant_blocks(vec![Block::ToolUse {
                id: "toolu_1".into(),
                name: "read_file".into(),
                input: calls[0].input.clone(),
            }]),
        ];
        let shared: Vec<Arc<Message>> = messages.iter().cloned().map(Arc::new).collect();
        let pending = PendingOperation::Tools {
            op: OperationId(4),
            calls,
        };
        let start = Record::TurnStart {
            baseline: 3,
            messages: messages.clone(),
            pending: pending.clone(),
        };
        assert_eq!(
            encode_appended(Some(3), &shared, pending.as_view()),
            encode_record(&start)
        );
        let append = Record::Append {
            messages,
            pending: PendingOperation::Generation { op: OperationId(5) },
        };
        let generation = PendingOperation::Generation { op: OperationId(5) };
        assert_eq!(
            encode_appended(None, &shared, generation.as_view()),
            encode_record(&append)
        );
        let outcome = ToolOutcome::text("toolu_1", "line\n".repeat(3), true);
        let result = Record::ToolResult {
            op: OperationId(4),
            outcome: outcome.clone(),
        };
        assert_eq!(
            encode_tool_result(OperationId(4), &outcome),
            encode_record(&result)
        );
        assert_eq!(
            encode_record(&result),
            encode_frame(&serde_json::to_vec(&result).expect("serializes"))
        );
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        for n in 0..64u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect();
            let _ = decode_log(&bytes);
        }
    }
}
