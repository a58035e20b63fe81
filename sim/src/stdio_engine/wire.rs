//! The lines of engine protocol v1 and v2 (`docs/engine-protocol.md`), typed.
//!
//! Guarantee: every line is parsed against the one shape the protocol allows at that
//! point, and a line that does not fit is an error that says what was expected and
//! quotes what came; nothing is guessed or defaulted. Requests are written in one
//! fixed field order, so the bytes an engine reads depend only on the inputs.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::sync::Arc;
use turnsim_core::log::TurnOutcome;
use turnsim_core::{
    Activity, CacheHints, Message, OperationId, PendingOperation, SessionConfig, Thinking,
    ToolCall, ToolSpec,
};

/// The newest protocol version this module speaks; the harness tells engines so in
/// `TURNSIM_PROTOCOL` and accepts any version from [`OLDEST_PROTOCOL`] up to it.
pub const PROTOCOL_VERSION: u32 = 2;

/// The oldest protocol version still spoken (v1 engines keep working unchanged).
pub const OLDEST_PROTOCOL: u32 = 1;

/// The value of the `hello` field of an engine's first line.
pub const HELLO: &str = "turnsim-engine";

/// The engine's first line.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub hello: String,
    pub protocol: u32,
    pub engine: String,
    /// [`REFERENCE_LOG`] when the engine's durable log is the reference engine's
    /// record format; absent (the usual case) when the log is the engine's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Optional requests the engine serves beyond the required ones: [`IMPORT`] when
    /// it takes a history from outside. Absent in a hello written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepts: Vec<String>,
}

/// The `accepts` entry of an engine that serves `import` requests.
pub const IMPORT: &str = "import";

/// The `log` value of a hello whose engine writes the reference engine's log records,
/// so the log-borne hostile inputs (records of that format) apply to it.
pub const REFERENCE_LOG: &str = "turnsim-reference";

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
    pub tools: WireTools,
    /// Absent: thinking off (docs/engine-protocol.md §7), as the API reads a body
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    pub messages: WireMessages,
    pub cache: CacheHints,
}

/// A request's `tools`: as the engine wrote them when the request was read from its
/// own text (the usual way, [`WireRequest::from_text`]), read into [`ToolSpec`]s by the
/// mirror only when they are not the bytes of the last request's (an engine writes
/// the same list with every request, and reading its schemas into values again and
/// comparing them was a quarter of the harness's work per reply); already read when
/// the request came inside an object read whole (its tag not first), where the text
/// is not at hand.
#[derive(Debug)]
pub enum WireTools {
    Text(Box<RawValue>),
    Read(Vec<ToolSpec>),
}

impl<'de> Deserialize<'de> for WireTools {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WireTools, D::Error> {
        Vec::<ToolSpec>::deserialize(d).map(WireTools::Read)
    }
}

impl Serialize for WireTools {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WireTools::Text(raw) => raw.serialize(s),
            WireTools::Read(tools) => tools.serialize(s),
        }
    }
}

/// [`WireRequest`] with its tools kept as text: the same fields and rules.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireRequestText {
    system: String,
    tools: Box<RawValue>,
    #[serde(default)]
    thinking: Option<Thinking>,
    messages: WireMessages,
    cache: CacheHints,
}

impl WireRequest {
    /// Reads a request from its own text, keeping its tools as written.
    pub fn from_text(text: &str) -> Result<WireRequest, serde_json::Error> {
        let r: WireRequestText = serde_json::from_str(text)?;
        Ok(WireRequest {
            system: r.system,
            tools: WireTools::Text(r.tools),
            thinking: r.thinking,
            messages: r.messages,
            cache: r.cache,
        })
    }
}

/// One output in the `Output` vocabulary; `persist` bytes in base64. Read by
/// [`super::tagged::output`].
#[derive(Debug, Serialize)]
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
        /// The request's bytes exactly as the engine wrote them (what
        /// `prefix_stable` judges), when read with it; not a wire field.
        #[serde(skip)]
        body: Option<Arc<str>>,
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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::tagged::pending::optional"
    )]
    pub pending: Option<PendingOperation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_texts: Option<Vec<String>>,
}

/// The engine's view after a reply: what the harness mirrors. `state` is always
/// there in v1; in v2 only the replies to `state` carry it (`digest` asks for it).
#[derive(Debug)]
pub struct Snapshot {
    pub history: Delta,
    pub pending: PendingOperation,
    pub idle: bool,
    pub state: Option<String>,
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
    /// The reply to a v2 `digest`: the state digest alone.
    Digest { state: String },
}

impl Reply {
    /// Checks that the reply answers `req` with the fields its kind needs under
    /// protocol `version`.
    pub fn check(self, req: &str, version: u32) -> Result<Checked, String> {
        if self.reply != req {
            return Err(format!(
                "a reply to `{req}` (`\"reply\":\"{req}\"`), got a reply to `{}`",
                self.reply
            ));
        }
        if req == "digest" {
            return match self {
                Reply {
                    state: Some(state),
                    outputs: None,
                    refused: None,
                    error: None,
                    history: None,
                    pending: None,
                    idle: None,
                    fixed_texts: None,
                    ..
                } => Ok(Checked::Digest { state }),
                _ => Err("a reply to `digest` with the field state and no other".into()),
            };
        }
        if let Some(why) = self.error {
            if !matches!(req, "restore" | "import") {
                return Err(format!(
                    "\"error\" is allowed only in a reply to `restore` or `import`, not `{req}`"
                ));
            }
            return Ok(Checked::Failed { why });
        }
        // v2 leaves the digest to `digest` requests, except in a full resync.
        let state_here = version < 2 || req == "state";
        if !state_here && self.state.is_some() {
            return Err(format!(
                "a reply to `{req}` without \"state\" (protocol 2 sends it only in replies to digest and state)"
            ));
        }
        let snapshot = match (self.history, self.pending, self.idle, self.state) {
            (Some(history), Some(pending), Some(idle), state) if state.is_some() || !state_here => {
                Snapshot {
                    history,
                    pending,
                    idle,
                    state,
                }
            }
            (h, p, i, s) => {
                let missing: Vec<&str> = [
                    (h.is_none(), "history"),
                    (p.is_none(), "pending"),
                    (i.is_none(), "idle"),
                    (s.is_none() && state_here, "state"),
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
            ("input" | "restore" | "import", Some(o)) => o,
            ("input" | "restore" | "import", None) => {
                return Err(format!("a reply to `{req}` with an \"outputs\" array"));
            }
            (_, None) => Vec::new(),
            (_, Some(o)) if o.is_empty() => o,
            (_, Some(_)) => return Err(format!("a reply to `{req}` without outputs")),
        };
        let fixed_texts = match (req, self.fixed_texts) {
            ("create" | "restore" | "import", Some(t)) => t,
            ("create" | "restore" | "import", None) => {
                return Err(format!(
                    "a reply to `{req}` with \"fixed_texts\" (an array, maybe empty)"
                ));
            }
            (_, None) => Vec::new(),
            (_, Some(_)) => {
                return Err(format!(
                    "\"fixed_texts\" only in replies to create, restore and import, not `{req}`"
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

/// The `import` request: a new engine holding `history`, brought from outside.
pub fn import_line(config: &SessionConfig, history: &[Message]) -> String {
    let config = serde_json::to_string(config).unwrap_or_default();
    let history = serde_json::to_string(history).unwrap_or_default();
    format!("{{\"req\":\"import\",\"config\":{config},\"history\":{history}}}\n")
}

/// The `input` request; `n` counts the inputs of this process from 1.
pub fn input_line(n: u64, input: &turnsim_core::Input) -> String {
    // Written in place with core's writer (serde_json's bytes, strings checked for
    // escapes a word at a time): this runs once per simulated input, and serde_json's
    // byte-at-a-time escaping of the stream's text was most of the harness's cost of
    // writing it.
    let mut line = String::with_capacity(256);
    line.push_str("{\"req\":\"input\",\"n\":");
    turnsim_core::json::push_u64(&mut line, n);
    line.push_str(",\"input\":");
    let start = line.len();
    if turnsim_core::json::write(&mut line, input).is_err() {
        // Cannot happen (inputs have string keys only); the engine would refuse
        // the line, never see a half-written one.
        line.truncate(start);
        line.push_str("null");
    }
    line.push_str("}\n");
    line
}

/// The `state` request.
pub const STATE_LINE: &str = "{\"req\":\"state\"}\n";

/// The v2 `digest` request: the state digest alone.
pub const DIGEST_LINE: &str = "{\"req\":\"digest\"}\n";

pub use crate::base64::{decode as base64_decode, encode as base64_encode};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_missing_fields_names_them() {
        let r = || -> Reply { serde_json::from_str(r#"{"reply":"input","outputs":[]}"#).unwrap() };
        assert_eq!(
            r().check("input", 1).unwrap_err(),
            "a reply to `input` with the fields history, pending, idle, state"
        );
        assert_eq!(
            r().check("input", 2).unwrap_err(),
            "a reply to `input` with the fields history, pending, idle"
        );
    }

    #[test]
    fn a_reply_to_the_wrong_request_says_which() {
        let r: Reply = serde_json::from_str(r#"{"reply":"create"}"#).unwrap();
        assert_eq!(
            r.check("input", 1).unwrap_err(),
            "a reply to `input` (`\"reply\":\"input\"`), got a reply to `create`"
        );
    }

    #[test]
    fn protocol_2_keeps_the_digest_to_digest_and_state_replies() {
        let line = r#"{"reply":"input","outputs":[],"history":{"keep":0,"append":[]},"pending":{"pending":"none"},"idle":true,"state":"1"}"#;
        let r: Reply = serde_json::from_str(line).unwrap();
        assert!(matches!(r.check("input", 1), Ok(Checked::Done { .. })));
        let r: Reply = serde_json::from_str(line).unwrap();
        assert_eq!(
            r.check("input", 2).unwrap_err(),
            "a reply to `input` without \"state\" (protocol 2 sends it only in replies to digest and state)"
        );
        let r: Reply = serde_json::from_str(r#"{"reply":"digest","state":"7"}"#).unwrap();
        assert!(matches!(r.check("digest", 2), Ok(Checked::Digest { state }) if state == "7"));
        let r: Reply =
            serde_json::from_str(r#"{"reply":"digest","state":"7","idle":true}"#).unwrap();
        assert_eq!(
            r.check("digest", 2).unwrap_err(),
            "a reply to `digest` with the field state and no other"
        );
    }

    #[test]
    fn a_hello_may_offer_import_and_one_without_accepts_reads_as_before() {
        let offered: Hello = serde_json::from_str(
            r#"{"hello":"turnsim-engine","protocol":1,"engine":"e","accepts":["import"]}"#,
        )
        .unwrap();
        assert_eq!(offered.accepts, vec![IMPORT.to_string()]);
        let plain: Hello =
            serde_json::from_str(r#"{"hello":"turnsim-engine","protocol":1,"engine":"e"}"#)
                .unwrap();
        assert!(plain.accepts.is_empty());
        let err = serde_json::from_str::<Hello>(
            r#"{"hello":"turnsim-engine","protocol":1,"engine":"e","imports":true}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `imports`"), "{err}");
    }

    #[test]
    fn an_import_is_answered_like_a_restore_and_only_it_and_restore_may_fail() {
        let refused: Reply =
            serde_json::from_str(r#"{"reply":"import","error":"unanswered call"}"#).unwrap();
        assert!(matches!(
            refused.check("import", 1),
            Ok(Checked::Failed { why }) if why == "unanswered call"
        ));
        let no_texts = r#"{"reply":"import","outputs":[],"history":{"keep":0,"append":[]},"pending":{"pending":"none"},"idle":true,"state":"1"}"#;
        assert_eq!(
            serde_json::from_str::<Reply>(no_texts)
                .unwrap()
                .check("import", 1)
                .unwrap_err(),
            "a reply to `import` with \"fixed_texts\" (an array, maybe empty)"
        );
        let failed_create: Reply =
            serde_json::from_str(r#"{"reply":"create","error":"no"}"#).unwrap();
        assert_eq!(
            failed_create.check("create", 1).unwrap_err(),
            "\"error\" is allowed only in a reply to `restore` or `import`, not `create`"
        );
        let line = import_line(&SessionConfig::default(), &[Message::user_text("hi")]);
        assert!(
            line.starts_with("{\"req\":\"import\",\"config\":{"),
            "{line}"
        );
        assert!(
            line.ends_with(",\"history\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n"),
            "{line}"
        );
    }

    #[test]
    fn an_input_line_is_serde_jsons_bytes_for_every_kind_of_input_and_text() {
        let texts = [
            "plain",
            "",
            "quote \" and backslash \\ inside",
            "control \u{1}\u{1f}\t\n\r\u{8}\u{c} bytes",
            "§ non-ASCII ✓ and \u{2028}\u{7f}",
            "a long run of text with nothing to escape, well over one word wide",
        ];
        for text in texts {
            let t = serde_json::to_string(text).unwrap();
            for input in [
                format!(r#"{{"input":"prompt","text":{t},"now":{t}}}"#),
                format!(
                    r#"{{"input":"stream","op":3,"event":{{"event":"text_delta","index":1,"text":{t}}}}}"#
                ),
                format!(
                    r#"{{"input":"stream","op":3,"event":{{"event":"input_json_delta","index":0,"partial_json":{t}}}}}"#
                ),
                r#"{"input":"stream","op":3,"event":{"event":"message_stop"}}"#.to_string(),
                format!(
                    r#"{{"input":"tool_result","op":2,"outcome":{{"tool_use_id":{t},"content":{t},"is_error":true}}}}"#
                ),
                r#"{"input":"cancel","cause":"user"}"#.to_string(),
                format!(r#"{{"input":"compact","summary":{t}}}"#),
                r#"{"input":"rewind","index":4}"#.to_string(),
                format!(
                    r#"{{"input":"configure","system":{t},"tools":[{{"name":{t},"description":{t},"input_schema":{{"type":"object","k":[1,-2,0.5,null,true,{t}]}}}}]}}"#
                ),
            ] {
                let input: turnsim_core::Input =
                    serde_json::from_str(&input).unwrap_or_else(|e| panic!("{input}: {e}"));
                let expected = format!(
                    "{{\"req\":\"input\",\"n\":907,\"input\":{}}}\n",
                    serde_json::to_string(&input).unwrap()
                );
                assert_eq!(input_line(907, &input), expected);
            }
        }
    }
}
