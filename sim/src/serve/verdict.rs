//! The per-request oracle: what the simulator's checkers judge, applied to the
//! requests a real client sends.
//!
//! Guarantee: a verdict is a pure function of the request and of the previous request
//! of the same conversation, so `turnsim check` reaches the same verdicts from a
//! recording as the live server did. Every violation names its rule, the request
//! index, the message (and block) index in the request as sent, and an excerpt.
//!
//! Rules (the spec sections they come from):
//! - `pairing` (§2 rules 1-3, 6), `duplicate_id` (§2 rule 5), `empty_content` (§2
//!   rule 4, empty user messages and empty text blocks): checked with
//!   [`turnsim_core::validate_history`], the same code the simulator's `pairing`
//!   checker uses. The real API refuses such a request, so the server answers it with
//!   the API's 400 and the violation is marked `rejected`.
//! - `append_only` (§8): the messages of the previous request of the conversation are
//!   a prefix of this request's, compared in the normal form of
//!   [`super::conversation`] (so a moved `cache_control` is not a change); `system`
//!   and `tools` do not change while a tool loop continues. A shorter request that is
//!   a prefix of the previous one is a rewind: a note.
//! - `marker_exact`, `marker_once` (§4), `note_exact` (§5): user text that looks like
//!   one of our interruption markers or tool-in-flight notes is exactly one, and no
//!   two markers follow each other. A client that does not use our wording is not
//!   judged by it: only text opening like ours (`[Request interrupted`, `[Canceled`)
//!   is checked, and Claude Code's own `[Request interrupted by user for tool use]`
//!   is accepted.
//!
//! Accepted and passed through, with a note: `{"role":"system"}` entries inside
//! `messages` (skipped by the history rules), unknown top-level fields, unknown block
//! types, retries of the same request, a non-streaming retry after a cut stream.

use super::conversation::{ConversationKey, normal_message, normal_system, normal_tools};
use crate::provider::MODEL_TAINT;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use turnsim_core::{
    Block, HistoryError, Message, Role, SharedMessage, ToolSpec, is_interruption_marker,
    tool_in_flight_note_label, validate_history,
};

/// Claude Code's own marker for a cancel during tool use; not one of ours, accepted.
pub const FOREIGN_MARKERS: [&str; 1] = ["[Request interrupted by user for tool use]"];

/// Top-level request fields this server reads or knows to be harmless.
const KNOWN_FIELDS: [&str; 17] = [
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "max_tokens",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "thinking",
    "service_tier",
    "container",
    "mcp_servers",
    "betas",
];

/// A `POST /v1/messages` body, read leniently: what the server needs, the rest kept.
#[derive(Clone, Debug)]
pub struct ParsedRequest {
    pub model: String,
    pub stream: bool,
    /// `messages` exactly as sent.
    pub messages: Vec<Value>,
    pub system: Option<Value>,
    pub tools_raw: Option<Value>,
    /// The client's own tools (server tools such as web search have a `type` and no
    /// schema, and are not called by this server).
    pub tools: Vec<ToolSpec>,
    /// The client asked for extended thinking.
    pub thinking: bool,
    /// `tool_choice: {"type": "none"}`.
    pub tool_choice_none: bool,
    /// The user and assistant messages, typed, with their index in `messages`.
    pub typed: Vec<(usize, SharedMessage)>,
    /// Top-level fields this server does not know, passed through.
    pub unknown_fields: Vec<String>,
    /// Length of the body in bytes, for the token estimate.
    pub body_len: usize,
}

/// Reads a request body; the error is the message of the API's 400.
pub fn parse_request(body: &[u8]) -> Result<ParsedRequest, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the request body is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the request body must be a JSON object".into());
    };
    let messages = match map.get("messages") {
        Some(Value::Array(m)) => m.clone(),
        Some(_) => return Err("messages: Input should be a valid list".into()),
        None => return Err("messages: Field required".into()),
    };
    let mut typed = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        match m.get("role").and_then(Value::as_str) {
            Some("system") => {
                if !matches!(m.get("content"), Some(Value::String(_) | Value::Array(_))) {
                    return Err(format!(
                        "messages.{i}.content: a string or an array of blocks is required"
                    ));
                }
            }
            Some("user" | "assistant") => {
                let message: Message =
                    serde_json::from_value(m.clone()).map_err(|e| format!("messages.{i}: {e}"))?;
                typed.push((i, Arc::new(message)));
            }
            Some(other) => {
                return Err(format!(
                    "messages.{i}.role: unexpected role {other:?}; expected \"user\" or \"assistant\""
                ));
            }
            None => return Err(format!("messages.{i}.role: Field required")),
        }
    }
    let tools_raw = map.get("tools").cloned();
    let mut tools = Vec::new();
    match &tools_raw {
        None | Some(Value::Null) => {}
        Some(Value::Array(ts)) => {
            for (i, t) in ts.iter().enumerate() {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    return Err(format!("tools.{i}.name: Field required"));
                };
                let custom = t
                    .get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|k| k == "custom");
                if custom {
                    tools.push(ToolSpec {
                        name: name.to_owned(),
                        description: t
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        input_schema: t.get("input_schema").cloned().unwrap_or(Value::Null),
                    });
                }
            }
        }
        Some(_) => return Err("tools: Input should be a valid list".into()),
    }
    let thinking = map
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t != "disabled");
    let tool_choice_none = map
        .get("tool_choice")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        == Some("none");
    let unknown_fields = map
        .keys()
        .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(ParsedRequest {
        model: map
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("claude-sonnet-4-6")
            .to_owned(),
        stream: map.get("stream").and_then(Value::as_bool).unwrap_or(false),
        messages,
        system: map.get("system").cloned(),
        tools_raw,
        tools,
        thinking,
        tool_choice_none,
        typed,
        unknown_fields,
        body_len: body.len(),
    })
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// `pairing`, `duplicate_id`, `empty_content`, `append_only`, `marker_exact`,
    /// `marker_once` or `note_exact`.
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
    /// True when the real API refuses a request with this violation.
    pub fn api_rejects(&self) -> bool {
        matches!(
            self.rule.as_str(),
            "pairing" | "duplicate_id" | "empty_content"
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

/// A one-line excerpt of at most `max` characters.
pub fn excerpt(s: &str, max: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > max {
        let cut: String = one_line.chars().take(max.saturating_sub(3)).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

const EXCERPT: usize = 200;

/// What the judge keeps of the previous request of a conversation.
#[derive(Clone, Debug)]
struct Snapshot {
    request: u64,
    system: Value,
    tools: Value,
    messages: Vec<Value>,
    stream: bool,
}

#[derive(Clone, Debug, Default)]
struct Loop {
    requests: u32,
    last: Option<Snapshot>,
    /// How the server answered the last request (`complete`, `cut`, `status 529`…).
    last_outcome: Option<String>,
}

/// The judge of a stream of requests, grouped by conversation.
#[derive(Clone, Debug, Default)]
pub struct Judge {
    loops: BTreeMap<ConversationKey, Loop>,
    labels: BTreeMap<ConversationKey, String>,
}

/// What the judge needs to know about a request besides its body.
pub struct RequestFacts<'a> {
    pub index: u64,
    pub key: &'a ConversationKey,
    /// `x-stainless-retry-count`, when sent.
    pub retry_count: Option<u32>,
    pub parsed: &'a ParsedRequest,
}

impl Judge {
    /// A short, stable name for a conversation: `c1`, `c2`… in order of first request.
    pub fn label(&mut self, key: &ConversationKey) -> String {
        let next = self.labels.len() + 1;
        self.labels
            .entry(key.clone())
            .or_insert_with(|| format!("c{next}"))
            .clone()
    }

    /// Tells the judge how the server answered the last request of `key`.
    pub fn set_outcome(&mut self, key: &ConversationKey, outcome: &str) {
        if let Some(l) = self.loops.get_mut(key) {
            l.last_outcome = Some(outcome.to_owned());
        }
    }

    /// Judges one request and makes it the conversation's previous request.
    pub fn judge(&mut self, facts: &RequestFacts<'_>) -> Verdict {
        let label = self.label(facts.key);
        let state = self.loops.entry(facts.key.clone()).or_default();
        let p = facts.parsed;
        let mut violations = history_violations(p);
        let mut notes = Vec::new();
        violations.extend(marker_violations(p));
        let snapshot = Snapshot {
            request: facts.index,
            system: normal_system(p.system.as_ref()),
            tools: normal_tools(p.tools_raw.as_ref()),
            messages: p.messages.iter().map(normal_message).collect(),
            stream: p.stream,
        };
        if let Some(prev) = &state.last {
            append_only(
                prev,
                &snapshot,
                state.last_outcome.as_deref(),
                &mut violations,
                &mut notes,
            );
        }
        if let Some(n) = facts.retry_count.filter(|n| *n > 0) {
            notes.push(format!("retry {n} (x-stainless-retry-count)"));
        }
        notes.extend(pass_through_notes(p));
        let verdict = Verdict {
            request: facts.index,
            conversation: label,
            conversation_request: state.requests,
            violations,
            notes,
        };
        state.requests += 1;
        state.last = Some(snapshot);
        state.last_outcome = None;
        verdict
    }
}

fn raw_index(p: &ParsedRequest, typed_index: usize) -> usize {
    p.typed.get(typed_index).map_or(typed_index, |(i, _)| *i)
}

/// The history error with its message indices mapped to the request as sent.
fn remap(p: &ParsedRequest, e: HistoryError) -> HistoryError {
    let m = |i: usize| raw_index(p, i);
    match e {
        HistoryError::MissingToolResult {
            message,
            tool_use_id,
        } => HistoryError::MissingToolResult {
            message: m(message),
            tool_use_id,
        },
        HistoryError::NoAnsweringMessage {
            message,
            tool_use_id,
        } => HistoryError::NoAnsweringMessage {
            message: m(message),
            tool_use_id,
        },
        HistoryError::UnansweredAtEnd {
            message,
            tool_use_ids,
        } => HistoryError::UnansweredAtEnd {
            message: m(message),
            tool_use_ids,
        },
        HistoryError::DuplicateToolResult {
            message,
            block,
            tool_use_id,
        } => HistoryError::DuplicateToolResult {
            message: m(message),
            block,
            tool_use_id,
        },
        HistoryError::UnexpectedToolResult {
            message,
            block,
            tool_use_id,
        } => HistoryError::UnexpectedToolResult {
            message: m(message),
            block,
            tool_use_id,
        },
        HistoryError::ToolResultAfterOtherBlock {
            message,
            block,
            tool_use_id,
        } => HistoryError::ToolResultAfterOtherBlock {
            message: m(message),
            block,
            tool_use_id,
        },
        HistoryError::EmptyAssistantContent { message } => HistoryError::EmptyAssistantContent {
            message: m(message),
        },
        HistoryError::DuplicateToolUseId {
            message,
            block,
            tool_use_id,
            first_message,
        } => HistoryError::DuplicateToolUseId {
            message: m(message),
            block,
            tool_use_id,
            first_message: m(first_message),
        },
        HistoryError::ToolUseInUserMessage {
            message,
            block,
            tool_use_id,
        } => HistoryError::ToolUseInUserMessage {
            message: m(message),
            block,
            tool_use_id,
        },
    }
}

fn message_excerpt(p: &ParsedRequest, index: usize) -> String {
    p.messages
        .get(index)
        .map_or_else(String::new, |m| excerpt(&m.to_string(), EXCERPT))
}

/// §2 through the core validator, then empty user messages and empty text blocks.
fn history_violations(p: &ParsedRequest) -> Vec<Violation> {
    let mut out = Vec::new();
    let history: Vec<SharedMessage> = p.typed.iter().map(|(_, m)| m.clone()).collect();
    if let Err(e) = validate_history(&history) {
        let e = remap(p, e);
        let rule = match e {
            HistoryError::DuplicateToolUseId { .. } => "duplicate_id",
            HistoryError::EmptyAssistantContent { .. } => "empty_content",
            _ => "pairing",
        };
        out.push(Violation {
            rule: rule.into(),
            kind: e.kind().into(),
            message: Some(e.message_index()),
            block: e.block_index(),
            detail: e.to_string(),
            excerpt: message_excerpt(p, e.message_index()),
        });
    }
    for (i, m) in &p.typed {
        if m.role == Role::User && m.is_empty() {
            out.push(Violation {
                rule: "empty_content".into(),
                kind: "empty_user_message".into(),
                message: Some(*i),
                block: None,
                detail: format!("message {i}: user message has empty content"),
                excerpt: message_excerpt(p, *i),
            });
        }
        for (j, b) in m.blocks().iter().enumerate() {
            if matches!(b, Block::Text { text } if text.is_empty()) {
                out.push(Violation {
                    rule: "empty_content".into(),
                    kind: "empty_text_block".into(),
                    message: Some(*i),
                    block: Some(j),
                    detail: format!("message {i}, block {j}: text block is empty"),
                    excerpt: message_excerpt(p, *i),
                });
            }
        }
    }
    out
}

/// The text a user message stands for when it is one piece of text.
fn sole_text(m: &Message) -> Option<&str> {
    if let Some(s) = m.string_content() {
        return Some(s);
    }
    match m.blocks() {
        [Block::Text { text }] => Some(text),
        _ => None,
    }
}

fn is_our_marker_message(m: &Message) -> bool {
    m.role == Role::User && sole_text(m).is_some_and(is_interruption_marker)
}

/// §4 and §5 where the client uses our wording.
fn marker_violations(p: &ParsedRequest) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut previous_marker = false;
    for (i, m) in &p.typed {
        let marker = is_our_marker_message(m);
        if marker && previous_marker {
            out.push(Violation {
                rule: "marker_once".into(),
                kind: "consecutive_markers".into(),
                message: Some(*i),
                block: None,
                detail: format!("message {i} is a second interruption marker in a row"),
                excerpt: message_excerpt(p, *i),
            });
        }
        previous_marker = marker;
        if m.role != Role::User {
            continue;
        }
        let Some(text) = sole_text(m) else { continue };
        if text.starts_with("[Request interrupted")
            && !is_interruption_marker(text)
            && !FOREIGN_MARKERS.contains(&text)
        {
            out.push(Violation {
                rule: "marker_exact".into(),
                kind: "not_a_marker".into(),
                message: Some(*i),
                block: None,
                detail: format!(
                    "message {i} looks like an interruption marker but is not exactly one of the seven"
                ),
                excerpt: excerpt(text, EXCERPT),
            });
        }
        if text.starts_with("[Cancel") && tool_in_flight_note_label(text).is_none() {
            out.push(Violation {
                rule: "note_exact".into(),
                kind: "not_a_note".into(),
                message: Some(*i),
                block: None,
                detail: format!(
                    "message {i} looks like a tool-in-flight note but is not exactly the generated wording"
                ),
                excerpt: excerpt(text, EXCERPT),
            });
        }
    }
    out
}

/// Where two JSON texts first differ, shown with some context from each.
fn diff_excerpt(was: &str, now: &str) -> String {
    let at = was
        .char_indices()
        .zip(now.chars())
        .find(|((_, a), b)| a != b)
        .map_or_else(|| was.len().min(now.len()), |((i, _), _)| i);
    let start = at.saturating_sub(40);
    let window = |s: &str| {
        let mut from = start.min(s.len());
        while !s.is_char_boundary(from) {
            from -= 1;
        }
        excerpt(&s[from..], 90)
    };
    format!("was …{} / now …{}", window(was), window(now))
}

fn append_only(
    prev: &Snapshot,
    cur: &Snapshot,
    prev_outcome: Option<&str>,
    violations: &mut Vec<Violation>,
    notes: &mut Vec<String>,
) {
    let shared = prev.messages.len().min(cur.messages.len());
    let changed = (0..shared).find(|&i| prev.messages[i] != cur.messages[i]);
    if let Some(i) = changed {
        violations.push(Violation {
            rule: "append_only".into(),
            kind: "message_changed".into(),
            message: Some(i),
            block: None,
            detail: format!(
                "message {i} differs from message {i} of request #{} (cache_control aside)",
                prev.request
            ),
            excerpt: diff_excerpt(&prev.messages[i].to_string(), &cur.messages[i].to_string()),
        });
        return;
    }
    if cur.messages.len() < prev.messages.len() {
        notes.push(format!(
            "rewind: the {} messages are a prefix of request #{}'s {}",
            cur.messages.len(),
            prev.request,
            prev.messages.len()
        ));
    } else if cur.messages.len() == prev.messages.len() {
        let mut note = format!("same messages as request #{}", prev.request);
        if prev.stream && !cur.stream {
            note.push_str(", now without streaming");
            if let Some(o) = prev_outcome {
                note.push_str(&format!(" (after: {o})"));
            }
        }
        notes.push(note);
    }
    // The loop continues when the first new message is the model's tool calls.
    let continues_loop = cur.messages.len() > prev.messages.len()
        && cur.messages[prev.messages.len()]
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            });
    for (what, a, b) in [
        ("system", &prev.system, &cur.system),
        ("tools", &prev.tools, &cur.tools),
    ] {
        if a == b {
            continue;
        }
        if continues_loop {
            violations.push(Violation {
                rule: "append_only".into(),
                kind: format!("{what}_changed"),
                message: None,
                block: None,
                detail: format!(
                    "`{what}` differs from request #{} while the tool loop continues",
                    prev.request
                ),
                excerpt: diff_excerpt(&a.to_string(), &b.to_string()),
            });
        } else {
            notes.push(format!(
                "prefix changed between turns: `{what}` differs from request #{}",
                prev.request
            ));
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
    for (i, m) in &p.typed {
        if m.role != Role::User {
            continue;
        }
        let leaked = match sole_text(m) {
            Some(t) => t.contains(MODEL_TAINT),
            None => m
                .blocks()
                .iter()
                .any(|b| matches!(b, Block::Text { text } if text.contains(MODEL_TAINT))),
        };
        if leaked {
            notes.push(format!(
                "message {i}: model-written text (it carries {MODEL_TAINT}) in a user message outside a tool_result"
            ));
        }
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
        let key = ConversationKey("k".into());
        j.judge(&RequestFacts {
            index,
            key: &key,
            retry_count: None,
            parsed: &p,
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
