//! The recording: one file per request, and `turnsim check`, which judges one again.
//!
//! Guarantee: every request the server answers is recorded before its response body
//! is sent (so a hung or cut response is recorded too), each file is written
//! atomically ([`crate::scenario::write_atomic`]: a reader sees the whole file or
//! none), and credentials are never written: `x-api-key` and `authorization` are
//! kept only as `"<redacted>"`. A file holds the headers that change how a request is
//! read (API version, betas, retry count, client identity), the body as sent, what
//! the server answered, and the verdict. [`check_dir`] recomputes the verdicts from
//! the bodies alone, in request order, with the same judge the live server used.

use super::conversation::{CONVERSATION_HEADER, conversation_key};
use super::verdict::{Judge, RequestFacts, Verdict, parse_request};
use crate::scenario::write_atomic;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const RECORD_FORMAT: &str = "turnsim-serve-record";
pub const RECORD_VERSION: u32 = 1;

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

/// The verdicts of a recording, recomputed from its bodies, with a note for each
/// recorded verdict that differs from the recomputed one.
pub struct Checked {
    pub verdicts: Vec<Verdict>,
    pub mismatches: Vec<String>,
}

/// Judges a recording again, in request order, exactly as the live server did: the
/// same parser, the same conversation key, the same judge, told each answer as the
/// server told it.
pub fn check_records(records: &[Record]) -> Checked {
    let mut judge = Judge::default();
    let mut verdicts = Vec::new();
    let mut mismatches = Vec::new();
    let mut contexts = BTreeMap::new();
    for r in records {
        let path = r.target.split('?').next().unwrap_or_default();
        let body = match &r.body {
            Value::Null => Vec::new(),
            Value::String(s) => s.clone().into_bytes(),
            v => v.to_string().into_bytes(),
        };
        if r.method == "POST" && matches!(path, "/v1/responses" | "/v1/chat/completions") {
            if let Some(verdict) = super::openai_route::recheck(&mut judge, &mut contexts, r, &body)
            {
                let judged_again = |v: &Verdict| {
                    v.violations
                        .iter()
                        .filter(|x| x.rule != "reasoning_kept")
                        .cloned()
                        .collect::<Vec<_>>()
                };
                if let Some(recorded) = &r.verdict
                    && judged_again(recorded) != verdict.violations
                {
                    mismatches.push(format!(
                        "request #{}: the recording says {} violation(s), judged again {}",
                        r.index,
                        recorded.violations.len(),
                        verdict.violations.len()
                    ));
                }
                let mut verdict = verdict;
                if let Some(recorded) = &r.verdict {
                    verdict.violations.extend(
                        recorded
                            .violations
                            .iter()
                            .filter(|x| x.rule == "reasoning_kept")
                            .cloned(),
                    );
                }
                verdicts.push(verdict);
            }
            super::openai_route::remember(&mut contexts, r, &body);
            continue;
        }
        if r.method != "POST" || path != "/v1/messages" {
            continue;
        }
        let Ok(parsed) = parse_request(&body) else {
            continue;
        };
        let has_tools = !parsed.tools.is_empty() && !parsed.tool_choice_none;
        let key = conversation_key(
            r.headers.get(CONVERSATION_HEADER).map(String::as_str),
            &parsed.messages,
            has_tools,
        );
        let retry_count = r
            .headers
            .get("x-stainless-retry-count")
            .and_then(|v| v.parse().ok());
        let verdict = judge.judge(&RequestFacts {
            index: r.index,
            key: &key,
            retry_count,
            parsed: &parsed,
            headers: &r.headers,
        });
        judge.set_answer(&key, &r.answer.outcome, r.answer.reply.clone());
        if let Some(recorded) = &r.verdict
            && recorded.violations != verdict.violations
        {
            mismatches.push(format!(
                "request #{}: the recording says {} violation(s), judged again {}",
                r.index,
                recorded.violations.len(),
                verdict.violations.len()
            ));
        }
        verdicts.push(verdict);
    }
    Checked {
        verdicts,
        mismatches,
    }
}

/// `turnsim check DIR`: reads and judges a recording.
pub fn check_dir(dir: &Path) -> Result<Checked, String> {
    Ok(check_records(&read_dir(dir)?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
