//! The lines of engine protocol v1 (`docs/engine-protocol.md`), typed.
//!
//! Guarantee: every line is parsed against the one shape the protocol allows at that
//! point, and a line that does not fit is an error that says what was expected and
//! quotes what came; nothing is guessed or defaulted. Requests are written in one
//! fixed field order, so the bytes an engine reads depend only on the inputs.

use serde::{Deserialize, Serialize};
use turnsim_core::log::TurnOutcome;
use turnsim_core::{
    Activity, CacheHints, Message, OperationId, PendingOperation, SessionConfig, ToolCall, ToolSpec,
};

/// The protocol version this module speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The value of the `hello` field of an engine's first line.
pub const HELLO: &str = "turnsim-engine";

/// The engine's first line.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub hello: String,
    pub protocol: u32,
    pub engine: String,
}

/// How the history changed: keep the first `keep` messages held so far (the very
/// same messages, not equal copies), then append these.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Delta {
    pub keep: usize,
    pub append: Vec<Message>,
}

/// The messages of a request: the first `n` of the history this reply leaves, or
/// written out in full.
#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum WireMessages {
    Prefix(usize),
    Full(Vec<Message>),
}

/// A request as the engine writes it.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WireRequest {
    pub system: String,
    pub tools: Vec<ToolSpec>,
    pub messages: WireMessages,
    pub cache: CacheHints,
}

/// One output in the `Output` vocabulary; `persist` bytes in base64.
#[derive(Debug, Deserialize, Serialize)]
#[serde(tag = "output", rename_all = "snake_case")]
pub enum WireOutput {
    Persist {
        bytes: String,
    },
    TruncateLog {
        len: usize,
    },
    Send {
        op: OperationId,
        request: WireRequest,
    },
    Dispatch {
        op: OperationId,
        calls: Vec<ToolCall>,
    },
    Abort {
        op: OperationId,
    },
    TurnEnded {
        outcome: TurnOutcome,
    },
    Activity {
        activity: Activity,
    },
}

/// Any reply line; which fields must be present depends on `reply` and is checked by
/// [`Reply::check`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    pub reply: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<WireOutput>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Delta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingOperation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_texts: Option<Vec<String>>,
}

/// The engine's view after a reply: what the harness mirrors.
#[derive(Debug)]
pub struct Snapshot {
    pub history: Delta,
    pub pending: PendingOperation,
    pub idle: bool,
    pub state: String,
}

/// What a well-formed reply says.
#[derive(Debug)]
pub enum Checked {
    /// Accepted: outputs (empty for `create` and `state`) and the engine's view.
    Done {
        outputs: Vec<WireOutput>,
        snapshot: Snapshot,
        fixed_texts: Vec<String>,
    },
    /// An input refused: the engine's view, which must be unchanged.
    Refused { why: String, snapshot: Snapshot },
    /// A `restore` the engine could not do.
    Failed { why: String },
}

impl Reply {
    /// Checks that the reply answers `req` with the fields its kind needs.
    pub fn check(self, req: &str) -> Result<Checked, String> {
        if self.reply != req {
            return Err(format!(
                "a reply to `{req}` (`\"reply\":\"{req}\"`), got a reply to `{}`",
                self.reply
            ));
        }
        if let Some(why) = self.error {
            if req != "restore" {
                return Err(format!(
                    "\"error\" is allowed only in a reply to `restore`, not `{req}`"
                ));
            }
            return Ok(Checked::Failed { why });
        }
        let snapshot = match (self.history, self.pending, self.idle, self.state) {
            (Some(history), Some(pending), Some(idle), Some(state)) => Snapshot {
                history,
                pending,
                idle,
                state,
            },
            (h, p, i, s) => {
                let missing: Vec<&str> = [
                    (h.is_none(), "history"),
                    (p.is_none(), "pending"),
                    (i.is_none(), "idle"),
                    (s.is_none(), "state"),
                ]
                .into_iter()
                .filter_map(|(m, name)| m.then_some(name))
                .collect();
                return Err(format!(
                    "a reply to `{req}` with the fields {}",
                    missing.join(", ")
                ));
            }
        };
        if let Some(why) = self.refused {
            if req != "input" {
                return Err(format!(
                    "\"refused\" is allowed only in a reply to `input`, not `{req}`"
                ));
            }
            if self.outputs.as_ref().is_some_and(|o| !o.is_empty()) {
                return Err("a refused input with no outputs".into());
            }
            return Ok(Checked::Refused { why, snapshot });
        }
        let outputs = match (req, self.outputs) {
            ("input" | "restore", Some(o)) => o,
            ("input" | "restore", None) => {
                return Err(format!("a reply to `{req}` with an \"outputs\" array"));
            }
            (_, None) => Vec::new(),
            (_, Some(o)) if o.is_empty() => o,
            (_, Some(_)) => return Err(format!("a reply to `{req}` without outputs")),
        };
        let fixed_texts = match (req, self.fixed_texts) {
            ("create" | "restore", Some(t)) => t,
            ("create" | "restore", None) => {
                return Err(format!(
                    "a reply to `{req}` with \"fixed_texts\" (an array, maybe empty)"
                ));
            }
            (_, None) => Vec::new(),
            (_, Some(_)) => {
                return Err(format!(
                    "\"fixed_texts\" only in replies to create and restore, not `{req}`"
                ));
            }
        };
        Ok(Checked::Done {
            outputs,
            snapshot,
            fixed_texts,
        })
    }
}

/// The `create` request.
pub fn create_line(config: &SessionConfig) -> String {
    let config = serde_json::to_string(config).unwrap_or_default();
    format!("{{\"req\":\"create\",\"config\":{config}}}\n")
}

/// The `restore` request.
pub fn restore_line(config: &SessionConfig, log: &[u8]) -> String {
    let config = serde_json::to_string(config).unwrap_or_default();
    let log = base64_encode(log);
    format!("{{\"req\":\"restore\",\"config\":{config},\"log\":\"{log}\"}}\n")
}

/// The `input` request; `n` counts the inputs of this process from 1.
pub fn input_line(n: u64, input: &turnsim_core::Input) -> String {
    let input = serde_json::to_string(input).unwrap_or_default();
    format!("{{\"req\":\"input\",\"n\":{n},\"input\":{input}}}\n")
}

/// The `state` request.
pub const STATE_LINE: &str = "{\"req\":\"state\"}\n";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (RFC 4648 §4) with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with padding; anything else is an error naming the first
/// offending character.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "base64 of {} characters (not a multiple of 4)",
            bytes.len()
        ));
    }
    let value = |i: usize, c: u8| -> Result<u32, String> {
        match c {
            b'A'..=b'Z' => Ok(u32::from(c - b'A')),
            b'a'..=b'z' => Ok(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Ok(u32::from(c - b'0') + 52),
            b'+' => Ok(62),
            b'/' => Ok(63),
            _ => Err(format!("base64: unexpected {:?} at {i}", c as char)),
        }
    };
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let chunks = bytes.len() / 4;
    for (k, chunk) in bytes.chunks(4).enumerate() {
        let pad = if k + 1 == chunks {
            chunk.iter().rev().take_while(|&&c| c == b'=').count()
        } else {
            0
        };
        if pad > 2 {
            return Err(format!("base64: {pad} padding characters"));
        }
        let mut n = 0u32;
        for (j, &c) in chunk.iter().enumerate() {
            let v = if j >= 4 - pad {
                0
            } else {
                value(k * 4 + j, c)?
            };
            n = (n << 6) | v;
        }
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length_and_matches_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), coded);
            assert_eq!(base64_decode(coded).unwrap(), plain.as_bytes());
        }
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(base64_decode(&base64_encode(&all)).unwrap(), all);
    }

    #[test]
    fn base64_rejects_bad_characters_and_lengths() {
        assert_eq!(
            base64_decode("Zm9").unwrap_err(),
            "base64 of 3 characters (not a multiple of 4)"
        );
        assert_eq!(
            base64_decode("Zm-v").unwrap_err(),
            "base64: unexpected '-' at 2"
        );
        assert!(base64_decode("Z===").is_err());
    }

    #[test]
    fn a_reply_missing_fields_names_them() {
        let r: Reply = serde_json::from_str(r#"{"reply":"input","outputs":[]}"#).unwrap();
        assert_eq!(
            r.check("input").unwrap_err(),
            "a reply to `input` with the fields history, pending, idle, state"
        );
    }

    #[test]
    fn a_reply_to_the_wrong_request_says_which() {
        let r: Reply = serde_json::from_str(r#"{"reply":"create"}"#).unwrap();
        assert_eq!(
            r.check("input").unwrap_err(),
            "a reply to `input` (`\"reply\":\"input\"`), got a reply to `create`"
        );
    }
}
