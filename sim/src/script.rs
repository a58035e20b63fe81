//! Scripted provider responses: what a scenario file or `turnsim serve --scenario` plays
//! instead of the seed's generated replies.
//!
//! Guarantee: a scripted response reads only the fields its kind takes; any other is an
//! error in serde's own wording (so the scenario loader can give its field path), never
//! a field silently ignored. The types live below the provider that plays them and
//! the scenario files that store them, so the provider does not depend on the file
//! format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Rejects the first present field that `what` does not take, in serde's wording so
/// that the error's field path can be completed the same way as serde's own.
pub(crate) fn only_fields(
    what: &str,
    allowed: &str,
    present: &[(&str, bool)],
) -> Result<(), String> {
    match present.iter().find(|(_, is_present)| *is_present) {
        Some((name, _)) => Err(format!(
            "unknown field `{name}` for {what}, expected {allowed}"
        )),
        None => Ok(()),
    }
}

/// A provider response taken from the scenario instead of the seed. Responses are
/// consumed in request order; once they run out, the seed's generator takes over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    try_from = "RawScriptedResponse"
)]
pub enum ScriptedResponse {
    Reply {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ScriptedCall>,
        stop: ScriptedStop,
    },
    /// The stream fails after `after_events` events (0: before it starts).
    Error {
        error: ScriptedError,
        #[serde(default)]
        after_events: u32,
    },
    /// The stream stops sending after `after_events` events and never finishes.
    Hang {
        #[serde(default)]
        after_events: u32,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ScriptedKind {
    Reply,
    Error,
    Hang,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScriptedResponse {
    kind: ScriptedKind,
    thinking: Option<String>,
    text: Option<String>,
    tool_calls: Option<Vec<ScriptedCall>>,
    stop: Option<ScriptedStop>,
    error: Option<ScriptedError>,
    after_events: Option<u32>,
}

impl TryFrom<RawScriptedResponse> for ScriptedResponse {
    type Error = String;

    fn try_from(raw: RawScriptedResponse) -> Result<Self, String> {
        match raw.kind {
            ScriptedKind::Reply => {
                only_fields(
                    "kind `reply`",
                    "`kind`, `thinking`, `text`, `tool_calls` or `stop`",
                    &[
                        ("error", raw.error.is_some()),
                        ("after_events", raw.after_events.is_some()),
                    ],
                )?;
                Ok(ScriptedResponse::Reply {
                    thinking: raw.thinking,
                    text: raw.text.unwrap_or_default(),
                    tool_calls: raw.tool_calls.unwrap_or_default(),
                    stop: raw.stop.ok_or("missing field `stop`")?,
                })
            }
            ScriptedKind::Error => {
                only_fields(
                    "kind `error`",
                    "`kind`, `error` or `after_events`",
                    &reply_fields(&raw),
                )?;
                Ok(ScriptedResponse::Error {
                    error: raw.error.ok_or("missing field `error`")?,
                    after_events: raw.after_events.unwrap_or(0),
                })
            }
            ScriptedKind::Hang => {
                let mut present = reply_fields(&raw).to_vec();
                present.push(("error", raw.error.is_some()));
                only_fields("kind `hang`", "`kind` or `after_events`", &present)?;
                Ok(ScriptedResponse::Hang {
                    after_events: raw.after_events.unwrap_or(0),
                })
            }
        }
    }
}

fn reply_fields(raw: &RawScriptedResponse) -> [(&'static str, bool); 4] {
    [
        ("thinking", raw.thinking.is_some()),
        ("text", raw.text.is_some()),
        ("tool_calls", raw.tool_calls.is_some()),
        ("stop", raw.stop.is_some()),
    ]
}

/// One tool call in a scripted reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    /// The tool input; `{}` when absent, since a tool_use block's input is an object.
    #[serde(default = "empty_object")]
    pub input: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedStop {
    EndTurn,
    ToolUse,
    MaxTokens,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedError {
    Overloaded,
    ConnectionReset,
}
