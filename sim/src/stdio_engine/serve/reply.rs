//! A reply line of the engine side, written into one buffer.
//!
//! Guarantee: [`ReplyOut::encode`] writes exactly the bytes serde_json writes for
//! the reply as a derived struct (fields in declaration order, absent ones left out,
//! compact), which `tests.rs` pins against that derived form. Why by hand: the
//! `persist` records are most of a reply's bytes, and as a `String` field each one
//! was first encoded into a buffer of its own and then scanned byte by byte for
//! characters to escape, which base64 never has; here it is encoded straight into
//! the line.

use crate::base64;
use serde::Serialize;
use std::sync::Arc;
use turnsim_core::log::TurnOutcome;
use turnsim_core::{
    Activity, CacheHints, OperationId, Output, PendingOperation, SharedMessage, Thinking, ToolCall,
    ToolSpec,
};

#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum MessagesOut<'a> {
    Prefix(usize),
    Full(&'a [SharedMessage]),
}

#[derive(Serialize)]
pub(super) struct RequestOut<'a> {
    system: &'a str,
    tools: &'a [ToolSpec],
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    messages: MessagesOut<'a>,
    cache: &'a CacheHints,
}

#[derive(Serialize)]
#[serde(tag = "output", rename_all = "snake_case")]
pub(super) enum OutputOut<'a> {
    Persist {
        bytes: String,
    },
    TruncateLog {
        len: usize,
    },
    Send {
        op: OperationId,
        request: RequestOut<'a>,
    },
    Dispatch {
        op: OperationId,
        calls: &'a [ToolCall],
    },
    Abort {
        op: OperationId,
    },
    TurnEnded {
        outcome: &'a TurnOutcome,
    },
    Activity {
        activity: &'a Activity,
    },
}

#[derive(Serialize)]
pub(super) struct DeltaOut<'a> {
    pub keep: usize,
    pub append: &'a [SharedMessage],
}

/// A reply; `outputs` says whether it has the field, [`ReplyOut::encode`] is given
/// the outputs themselves.
pub(super) struct ReplyOut<'a> {
    pub reply: &'a str,
    pub outputs: bool,
    pub refused: Option<String>,
    pub error: Option<String>,
    pub history: Option<DeltaOut<'a>>,
    pub pending: Option<PendingOperation>,
    pub idle: Option<bool>,
    pub state: Option<String>,
    pub fixed_texts: Option<Vec<String>>,
}

/// An empty reply of kind `kind`.
pub(super) fn reply(kind: &'static str) -> ReplyOut<'static> {
    ReplyOut {
        reply: kind,
        outputs: false,
        refused: None,
        error: None,
        history: None,
        pending: None,
        idle: None,
        state: None,
        fixed_texts: None,
    }
}

/// `o` as the wire writes it; a `send` names the history prefix (`messages: k`) when
/// its messages are the history's own `Arc`s.
pub(super) fn output_out<'a>(o: &'a Output, history: &[SharedMessage]) -> OutputOut<'a> {
    match o {
        Output::Persist { bytes } => OutputOut::Persist {
            bytes: base64::encode(bytes),
        },
        Output::TruncateLog { len } => OutputOut::TruncateLog { len: *len },
        Output::Send { op, request } => {
            let n = request.messages.len();
            let shared = n <= history.len()
                && request
                    .messages
                    .iter()
                    .zip(history)
                    .all(|(a, b)| Arc::ptr_eq(a, b));
            OutputOut::Send {
                op: *op,
                request: RequestOut {
                    system: &request.system,
                    tools: &request.tools,
                    thinking: request.thinking,
                    messages: if shared {
                        MessagesOut::Prefix(n)
                    } else {
                        MessagesOut::Full(&request.messages)
                    },
                    cache: &request.cache,
                },
            }
        }
        Output::Dispatch { op, calls } => OutputOut::Dispatch { op: *op, calls },
        Output::Abort { op } => OutputOut::Abort { op: *op },
        Output::TurnEnded { outcome } => OutputOut::TurnEnded { outcome },
        Output::Activity { activity } => OutputOut::Activity { activity },
    }
}

/// Appends `value`'s JSON to `buf` through core's writer: serde_json's bytes, with
/// strings checked for escapes a word at a time. On the recorded requests of
/// benches/README.md (fifth round) it costs the same as serde_json's writer, since
/// the long texts of history deltas do need escapes; it is kept so the engine side
/// writes JSON as the log does. `scratch` is the writer's `String`, kept between calls.
fn json<T: Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    scratch: &mut String,
    value: &T,
) -> serde_json::Result<()> {
    scratch.clear();
    turnsim_core::json::write(scratch, value)?;
    buf.extend_from_slice(scratch.as_bytes());
    Ok(())
}

/// `,"key":value` for a present optional field.
fn field<T: Serialize>(
    buf: &mut Vec<u8>,
    scratch: &mut String,
    key: &str,
    value: &Option<T>,
) -> serde_json::Result<()> {
    if let Some(v) = value {
        buf.push(b',');
        buf.push(b'"');
        buf.extend_from_slice(key.as_bytes());
        buf.extend_from_slice(b"\":");
        json(buf, scratch, v)?;
    }
    Ok(())
}

impl ReplyOut<'_> {
    /// Appends the reply's JSON (no newline) to `buf`; `outputs` and `history` are
    /// used only when the reply has an `outputs` field.
    pub fn encode(
        &self,
        buf: &mut Vec<u8>,
        scratch: &mut String,
        outputs: &[Output],
        history: &[SharedMessage],
    ) -> serde_json::Result<()> {
        buf.extend_from_slice(b"{\"reply\":");
        json(buf, scratch, self.reply)?;
        if self.outputs {
            buf.extend_from_slice(b",\"outputs\":[");
            for (i, o) in outputs.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                match o {
                    Output::Persist { bytes } => {
                        buf.extend_from_slice(b"{\"output\":\"persist\",\"bytes\":\"");
                        base64::encode_into(bytes, buf);
                        buf.extend_from_slice(b"\"}");
                    }
                    o => json(buf, scratch, &output_out(o, history))?,
                }
            }
            buf.push(b']');
        }
        field(buf, scratch, "refused", &self.refused)?;
        field(buf, scratch, "error", &self.error)?;
        field(buf, scratch, "history", &self.history)?;
        field(buf, scratch, "pending", &self.pending)?;
        field(buf, scratch, "idle", &self.idle)?;
        field(buf, scratch, "state", &self.state)?;
        field(buf, scratch, "fixed_texts", &self.fixed_texts)?;
        buf.push(b'}');
        Ok(())
    }
}
