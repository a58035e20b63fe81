//! `turnsim serve`'s verdicts: the judge ([`crate::judge`]) applied to each request
//! as it arrives, in the shape the server records and prints.
//!
//! Guarantee: a verdict is the judge's findings on the request, nothing more: the
//! violations are its violations, the notes its information plus what the server
//! passed through (fields and block types it does not know, `system` entries inside
//! `messages`, a client's retry counter). No rule lives here, so `turnsim check`
//! judging a recording or a cassette of the same traffic reaches the same findings.
//! The request's prefix (system, tools, model, `anthropic-beta`) is judged apart from
//! its history, and a request the server refused (400, or an injected error status)
//! is not what the client's next request is compared with.

pub use crate::judge::anthropic::{ParsedRequest, parse_request};
use crate::judge::finding::{Finding, Severity};
use crate::judge::normal::ConversationKey;
use crate::judge::session::{self, Answered};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use turnsim_core::{Block, Message};

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The judge's rule: `pairing`, `tool_id_unique`, `empty`, `append_only`,
    /// `response_kept`, `prefix_changed`, `marker_exact`, `marker_once`, `note_exact`,
    /// `note_once`.
    pub rule: String,
    /// A finer name: the [`HistoryError::kind`] for the history rules.
    pub kind: String,
    /// Index in the request's `messages`, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    pub detail: String,
    pub excerpt: String,
}

impl Violation {
    /// A violation finding as the server records it.
    pub fn of(f: &Finding) -> Violation {
        Violation {
            rule: f.check.to_owned(),
            kind: f.kind.clone(),
            message: f.place.message,
            block: f.place.block,
            detail: f.detail.clone(),
            excerpt: f.excerpt.clone(),
        }
    }

    /// True when the real API refuses a request with this violation.
    pub fn api_rejects(&self) -> bool {
        matches!(
            self.rule.as_str(),
            "pairing" | "tool_id_unique" | "empty" | "request_valid"
        )
    }
}

/// The judgement of one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The request's index among every request the server received (0-based).
    pub request: u64,
    pub conversation: String,
    /// The request's index within its conversation (0-based).
    pub conversation_request: u32,
    pub violations: Vec<Violation>,
    /// Things accepted but worth knowing: retries, rewinds, passed-through fields.
    pub notes: Vec<String>,
    /// Every finding of the judge on this request (not recorded: `turnsim check`
    /// recomputes them from the body).
    #[serde(skip)]
    pub findings: Vec<Finding>,
    /// For each finding: an earlier request of the conversation already had it.
    #[serde(skip)]
    pub repeated: Vec<bool>,
}

impl Verdict {
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// True when the API would refuse the request (the server answered 400).
    pub fn rejected(&self) -> bool {
        self.violations.iter().any(Violation::api_rejects)
    }

    /// One line per violation: `request #N (conversation #k): rule/kind at message i: detail | excerpt`.
    pub fn lines(&self) -> Vec<String> {
        self.violations
            .iter()
            .map(|v| {
                let at = match (v.message, v.block) {
                    (Some(m), Some(b)) => format!(" at message {m}, block {b}"),
                    (Some(m), None) => format!(" at message {m}"),
                    _ => String::new(),
                };
                format!(
                    "request #{} ({} #{}): {}/{}{at}: {} | {}",
                    self.request,
                    self.conversation,
                    self.conversation_request,
                    v.rule,
                    v.kind,
                    v.detail,
                    v.excerpt
                )
            })
            .collect()
    }
}

/// The judge of a stream of requests, grouped by conversation.
#[derive(Default)]
pub struct Judge {
    inner: session::Judge,
}

/// What the judge needs to know about a request besides its body.
pub struct RequestFacts<'a> {
    pub index: u64,
    pub key: &'a ConversationKey,
    /// `x-stainless-retry-count`, when sent.
    pub retry_count: Option<u32>,
    pub parsed: &'a ParsedRequest,
    /// The headers as recorded (names lower-cased): `anthropic-beta` is part of the
    /// request's prefix.
    pub headers: &'a BTreeMap<String, String>,
    /// The findings of the request's own API's validator when it is not a Messages
    /// API request (OpenAI's), which stand in for the Messages API's rules.
    pub api_findings: Option<Vec<Finding>>,
}

/// The status in an answer's outcome as the server words it (`rejected`,
/// `status 529, retry-after 2`).
fn outcome_status(outcome: &str) -> Option<u16> {
    if outcome == "rejected" {
        return Some(400);
    }
    outcome
        .strip_prefix("status ")
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
}

impl Judge {
    /// Tells the judge how the server answered the last request of `key`.
    pub fn set_outcome(&mut self, key: &ConversationKey, outcome: &str) {
        self.set_answer(key, outcome, None);
    }

    /// As [`Judge::set_outcome`], with the reply the client received when it was
    /// complete: the next request of the conversation must carry it unchanged.
    pub fn set_answer(&mut self, key: &ConversationKey, outcome: &str, reply: Option<Message>) {
        self.answered(
            key,
            Answered {
                status: outcome_status(outcome),
                outcome: Some(outcome.to_owned()),
                reply,
            },
        );
    }

    /// Tells the judge how the last request of `key` was answered.
    pub fn answered(&mut self, key: &ConversationKey, answer: Answered) {
        self.inner.answered(key, answer);
    }

    /// Conversations seen so far.
    pub fn conversations(&self) -> usize {
        self.inner.conversations()
    }

    /// Judges one request and makes it the conversation's pending request.
    pub fn judge(&mut self, facts: &RequestFacts<'_>) -> Verdict {
        let index = usize::try_from(facts.index).unwrap_or(usize::MAX);
        let mut request = facts.parsed.view(index, facts.headers);
        request.api_findings = facts.api_findings.clone();
        let judged = self.inner.judge_keyed(&request, facts.key.clone());
        let mut violations = Vec::new();
        let mut notes = Vec::new();
        for f in &judged.findings {
            match f.severity {
                Severity::Violation => violations.push(Violation::of(f)),
                Severity::Info => notes.push(f.detail.clone()),
            }
        }
        if let Some(n) = facts.retry_count.filter(|n| *n > 0) {
            notes.push(format!("retry {n} (x-stainless-retry-count)"));
        }
        notes.extend(pass_through_notes(facts.parsed));
        Verdict {
            request: facts.index,
            conversation: judged.label,
            conversation_request: judged.conversation_request,
            violations,
            notes,
            findings: judged.findings,
            repeated: judged.repeated,
        }
    }
}

fn pass_through_notes(p: &ParsedRequest) -> Vec<String> {
    let mut notes = Vec::new();
    let system_entries: Vec<usize> = p
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("system"))
        .map(|(i, _)| i)
        .collect();
    if !system_entries.is_empty() {
        notes.push(format!(
            "system entries inside messages at {system_entries:?} (passed through)"
        ));
    }
    if !p.unknown_fields.is_empty() {
        notes.push(format!(
            "unknown top-level fields passed through: {}",
            p.unknown_fields.join(", ")
        ));
    }
    let mut unknown_blocks: Vec<&str> = p
        .typed
        .iter()
        .flat_map(|(_, m)| m.blocks().iter())
        .filter(|b| matches!(b, Block::Unknown(_)))
        .map(Block::kind)
        .collect();
    unknown_blocks.sort_unstable();
    unknown_blocks.dedup();
    if !unknown_blocks.is_empty() {
        notes.push(format!(
            "unknown block types passed through: {}",
            unknown_blocks.join(", ")
        ));
    }
    notes
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(body: Value) -> ParsedRequest {
        match parse_request(body.to_string().as_bytes()) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    fn judge_one(j: &mut Judge, index: u64, body: Value) -> Verdict {
        let p = parsed(body);
        let key = ConversationKey {
            api: crate::judge::normal::Api::Messages,
            name: "k".into(),
        };
        j.judge(&RequestFacts {
            index,
            key: &key,
            retry_count: None,
            parsed: &p,
            headers: &BTreeMap::new(),
            api_findings: None,
        })
    }

    #[test]
    fn missing_tool_result_is_flagged_with_the_index_as_sent() {
        let body = json!({"model": "m", "messages": [
            {"role": "system", "content": "beta system entry"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": "no result"}]}
        ]});
        let v = judge_one(&mut Judge::default(), 0, body);
        assert_eq!(v.violations.len(), 1, "{v:?}");
        assert_eq!(v.violations[0].rule, "pairing");
        assert_eq!(v.violations[0].kind, "missing_tool_result");
        assert_eq!(v.violations[0].message, Some(2));
        assert!(v.rejected());
    }

    #[test]
    fn moved_cache_control_is_not_a_change_but_an_edit_is() {
        let mut j = Judge::default();
        let first = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}]});
        let second = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}]},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": [{"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}}]}]});
        let edited = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "A"}]},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}]});
        assert!(judge_one(&mut j, 0, first).is_clean());
        assert!(judge_one(&mut j, 1, second).is_clean());
        let v = judge_one(&mut j, 2, edited);
        assert_eq!(v.violations[0].rule, "append_only");
        assert_eq!(v.violations[0].message, Some(0));
        assert!(!v.rejected());
    }

    #[test]
    fn near_miss_markers_and_notes_are_flagged_foreign_ones_accepted() {
        let body = json!({"messages": [
            {"role": "user", "content": "[Request interrupted by user for tool use]"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "[Request interrupted: do Y instead]"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "[Canceled by user while the tool call `x` ran.]"}
        ]});
        let v = judge_one(&mut Judge::default(), 0, body);
        let rules: Vec<&str> = v.violations.iter().map(|v| v.rule.as_str()).collect();
        assert_eq!(rules, ["marker_exact", "note_exact"]);
    }

    #[test]
    fn the_servers_outcomes_name_the_status_that_refused_a_request() {
        assert_eq!(outcome_status("rejected"), Some(400));
        assert_eq!(outcome_status("status 529, retry-after 2"), Some(529));
        assert_eq!(outcome_status("status 500"), Some(500));
        assert_eq!(outcome_status("complete"), None);
        assert_eq!(outcome_status("cut after 4 events"), None);
    }

    #[test]
    fn malformed_bodies_are_refused_with_a_reason() {
        assert!(parse_request(b"{").is_err());
        assert!(parse_request(b"[]").is_err());
        assert!(parse_request(br#"{"messages": 3}"#).is_err());
        let e = parse_request(
            br#"{"messages": [{"role": "assistant", "content": [{"type": "tool_use"}]}]}"#,
        );
        assert!(e.is_err_and(|e| e.starts_with("messages.0")));
    }
}
