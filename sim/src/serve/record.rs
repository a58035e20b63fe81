//! The recording: one file per request.
//!
//! Guarantee: every request the server answers is recorded before its response body
//! is sent (so a hung or cut response is recorded too), each file is written
//! atomically ([`crate::scenario::write_atomic`]: a reader sees the whole file or
//! none), and credentials are never written: `x-api-key` and `authorization` are
//! kept only as `"<redacted>"`. A file holds the headers that change how a request is
//! read (API version, betas, retry count, client identity), the body as sent, what
//! the server answered, and the verdict. `super::recheck` recomputes the verdicts from
//! the bodies alone, in request order, with the same judge the live server used.

use super::conversation::CONVERSATION_HEADER;
use super::verdict::Verdict;
use crate::scenario::write_atomic;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const RECORD_FORMAT: &str = "turnsim-serve-record";
/// Version 2 keeps the body's bytes: `body` re-serialized is the bytes the client
/// sent, or `raw_body` holds them. Version 1 kept values only.
pub const RECORD_VERSION: u32 = 2;

/// Headers worth keeping; anything else a client sends is left out.
pub const KEPT_HEADERS: [&str; 16] = [
    "anthropic-version",
    "anthropic-beta",
    "anthropic-dangerous-direct-browser-access",
    "x-stainless-retry-count",
    "x-stainless-timeout",
    "x-stainless-lang",
    "x-stainless-package-version",
    "x-stainless-runtime",
    "x-stainless-helper-method",
    "user-agent",
    "content-type",
    "accept",
    "x-app",
    "x-claude-code-session-id",
    CONVERSATION_HEADER,
    "idempotency-key",
];

/// Headers whose value is a credential.
pub const SECRET_HEADERS: [&str; 2] = ["x-api-key", "authorization"];

/// `Answer::played` of a request that declared no tools (a title, a summary, a
/// suggestion a UI asks for): answered with a short text, the script untouched.
pub const PLAYED_PLAIN: &str = "plain reply (no tools)";

/// What the server answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub status: u16,
    pub stream: bool,
    /// What was played: a script step, `generated`, `plain reply`, an endpoint.
    pub played: String,
    /// How the response ended: `complete`, `cut after N events`, `hang`, `reset`…
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_use_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// A completed Responses reply: its id and output items as sent, so a recording
    /// judged again can rebuild what a `previous_response_id` stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<Value>,
    /// A complete Messages reply as the client received it (the streamed events put
    /// together), so that a recording judged again holds the next request to the
    /// same rule as the live judge did: the reply is sent back as streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<turnsim_core::Message>,
}

/// One recorded request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub format: String,
    pub version: u32,
    /// The request's index among all requests the server received (0-based).
    pub index: u64,
    pub method: String,
    /// Path and query as sent (`/v1/messages?beta=true`).
    pub target: String,
    pub headers: BTreeMap<String, String>,
    /// The body: JSON when it parses, else the text (lossy UTF-8), else null.
    pub body: Value,
    /// The body as sent, when `body` written compactly is not those bytes (spacing,
    /// escapes, number forms): `check` judges the request's prefix on the bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_body: Option<String>,
    pub answer: Answer,
    /// For `POST /v1/messages` bodies that parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// The headers a record keeps, names lower-cased, credentials redacted.
pub fn kept_headers(headers: &[(String, String)]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        if SECRET_HEADERS.contains(&name.as_str()) {
            out.insert(name, "<redacted>".to_owned());
        } else if KEPT_HEADERS.contains(&name.as_str()) {
            out.insert(name, value.clone());
        }
    }
    out
}

/// The body as a record holds it.
pub fn body_value(body: &[u8]) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

/// The bytes to keep beside [`body_value`]: `None` when the value written compactly
/// gives the same bytes back (most clients write compact JSON), else the body as
/// text (a body that is not UTF-8 is kept lossily, as `body` keeps it).
pub fn raw_body(body: &[u8]) -> Option<String> {
    let value = body_value(body);
    let rebuilt = match &value {
        Value::Null => String::new(),
        Value::String(s) if serde_json::from_slice::<Value>(body).is_err() => s.clone(),
        v => v.to_string(),
    };
    (rebuilt.as_bytes() != body).then(|| String::from_utf8_lossy(body).into_owned())
}

/// The body of `record` as the client sent it, when the record kept its bytes
/// (version 2 on); `None` for an older record, which kept values only.
pub fn sent_bytes(record: &Record) -> Option<Vec<u8>> {
    if record.version < 2 {
        return None;
    }
    if let Some(raw) = &record.raw_body {
        return Some(raw.clone().into_bytes());
    }
    Some(match &record.body {
        Value::Null => Vec::new(),
        Value::String(s) => s.clone().into_bytes(),
        v => v.to_string().into_bytes(),
    })
}

/// The file of request `index` in `dir`.
pub fn record_path(dir: &Path, index: u64) -> PathBuf {
    dir.join(format!("{index:06}.json"))
}

/// Writes one record atomically.
pub fn write_record(dir: &Path, record: &Record) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
    text.push('\n');
    write_atomic(&record_path(dir, record.index), text.as_bytes())
}

/// Reads every record in `dir`, in request order.
pub fn read_dir(dir: &Path) -> Result<Vec<Record>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot read: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    let mut records = Vec::with_capacity(paths.len());
    for p in paths {
        let text = std::fs::read_to_string(&p)
            .map_err(|e| format!("{}: cannot read: {e}", p.display()))?;
        let record: Record =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        if record.format != RECORD_FORMAT {
            return Err(format!("{}: not a turnsim serve record", p.display()));
        }
        records.push(record);
    }
    records.sort_by_key(|r| r.index);
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_the_bytes_its_value_would_not_give_back() {
        let compact = br#"{"tools":[{"name":"a"}],"messages":[]}"#;
        assert_eq!(raw_body(compact), None);
        let spaced = br#"{"tools": [{"name": "a"}], "system": "A"}"#;
        assert_eq!(
            raw_body(spaced).as_deref(),
            Some(std::str::from_utf8(spaced).unwrap())
        );
        let record = |version, raw: &[u8]| Record {
            format: RECORD_FORMAT.into(),
            version,
            index: 0,
            method: "POST".into(),
            target: "/v1/messages".into(),
            headers: BTreeMap::new(),
            body: body_value(raw),
            raw_body: raw_body(raw),
            answer: Answer {
                status: 200,
                stream: false,
                played: "generated".into(),
                outcome: "complete".into(),
                tool_use_ids: Vec::new(),
                stop_reason: None,
                response_id: None,
                output: Vec::new(),
                reply: None,
            },
            verdict: None,
        };
        assert_eq!(
            sent_bytes(&record(2, compact)).as_deref(),
            Some(&compact[..])
        );
        assert_eq!(sent_bytes(&record(2, spaced)).as_deref(), Some(&spaced[..]));
        assert_eq!(sent_bytes(&record(1, spaced)), None);
    }

    #[test]
    fn credentials_are_redacted_and_noise_dropped() {
        let h = kept_headers(&[
            ("X-Api-Key".into(), "sk-secret".into()),
            ("authorization".into(), "Bearer x".into()),
            ("anthropic-version".into(), "2023-06-01".into()),
            ("cookie".into(), "c".into()),
        ]);
        assert_eq!(h.get("x-api-key").map(String::as_str), Some("<redacted>"));
        assert_eq!(
            h.get("authorization").map(String::as_str),
            Some("<redacted>")
        );
        assert_eq!(
            h.get("anthropic-version").map(String::as_str),
            Some("2023-06-01")
        );
        assert!(!h.contains_key("cookie"));
        assert!(!h.values().any(|v| v.contains("secret")));
    }
}
