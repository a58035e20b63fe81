//! go-vcr cassettes (YAML) of Messages API traffic: every request, every conversation
//! across its requests, every recorded response.
//!
//! Guarantees:
//! - Each request is held to the history rules on its own, because the provider
//!   judged each one on its own; in a request that was sent, a tool call left
//!   unanswered at the end is a violation, not a turn in progress. A finding repeated
//!   by later requests of the same conversation (which carry the same prefix) is
//!   reported once.
//! - Append-only (spec §8) is checked across the requests of one conversation: each
//!   request's messages start with the previous request's messages, byte for byte
//!   as serialized JSON, once `cache_control` is removed everywhere it may sit
//!   (system blocks, tools, content blocks, tool-result content): a runtime moves its
//!   cache breakpoints forward on purpose, and that is not a change of content.
//! - A conversation is the requests sharing `system`, `tools` and first message (all
//!   without `cache_control`), so a side request interleaved with the main loop (a
//!   title generator, a summariser) is its own conversation instead of a false
//!   "prefix changed". A request that repeats a conversation's first message under a
//!   different `system` or `tools` is reported as `prefix_changed` (information: the
//!   engine's own `prefix-changed` activity, legitimate between turns). A request
//!   that carries a history but shares even its first message with no earlier
//!   request of the same `system` and `tools` is reported as `new_history`
//!   (information): a compaction and a rewritten first message look the same in
//!   traffic, and calling every compaction a violation would be a false alarm.
//! - Each recorded response must parse into a valid assistant message through the
//!   engine's event model (see [`super::sse`]); when the conversation's next request
//!   carries the reply, it must carry it unchanged (`response_kept`).

use super::anthropic::{RawMessages, load_raw, looks_openai};
use super::findings::{Finding, Findings, Place, Severity};
use super::history::{End, HistoryCheck};
use super::openai;
use super::source::{InputError, Located, path_error};
use super::sse::{self, ReplyError};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use turnsim_core::{Message, SharedMessage};

#[derive(Deserialize)]
struct Cassette {
    #[serde(default)]
    interactions: Vec<Interaction>,
}

#[derive(Deserialize)]
struct Interaction {
    #[serde(default)]
    id: Option<u64>,
    request: HttpRequest,
    #[serde(default)]
    response: Option<HttpResponse>,
}

#[derive(Deserialize)]
struct HttpRequest {
    #[serde(default)]
    body: String,
    #[serde(default)]
    url: String,
}

#[derive(Deserialize)]
struct HttpResponse {
    #[serde(default)]
    body: String,
    #[serde(default)]
    code: Option<u16>,
}

/// Removes `cache_control` wherever the Messages API accepts it.
pub fn strip_cache_control(body: &mut Value) {
    fn strip_blocks(v: Option<&mut Value>) {
        if let Some(Value::Array(blocks)) = v {
            for b in blocks {
                if let Value::Object(o) = b {
                    o.shift_remove("cache_control");
                    // tool_result content blocks may carry one too.
                    strip_blocks(o.get_mut("content"));
                }
            }
        }
    }
    let Value::Object(o) = body else { return };
    strip_blocks(o.get_mut("system"));
    strip_blocks(o.get_mut("tools"));
    if let Some(Value::Array(messages)) = o.get_mut("messages") {
        for m in messages {
            if let Value::Object(m) = m {
                strip_blocks(m.get_mut("content"));
            }
        }
    }
}

/// The lines where the interactions start (`- id:` / `- request:` items), in order.
fn interaction_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- id:") || l.starts_with("- request:"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// What is remembered of a conversation's latest request.
struct Previous {
    request: usize,
    messages: Vec<String>,
    reply: Option<Message>,
}

struct Conversation {
    prefix: String,
    previous: Option<Previous>,
    /// Finding signatures already reported, so later requests do not repeat them.
    seen: BTreeSet<String>,
}

/// The byte position where two strings first differ, as an excerpt of each.
fn difference(a: &str, b: &str) -> (String, String) {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or(a.len().min(b.len()));
    let from = a[..at]
        .char_indices()
        .rev()
        .nth(20)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let tail = |s: &str| s.get(from..).unwrap_or("").to_string();
    (tail(a), tail(b))
}

/// Checks a cassette; `report` receives the findings and counts.
pub fn check(text: &str, report: &mut super::findings::FileReport) -> Result<(), InputError> {
    let cassette: Cassette = {
        let de = serde_norway::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let line = e.inner().location().map(|l| l.line());
            InputError {
                line,
                message: format!("not a go-vcr cassette: {}", path_error(&e)),
            }
        })?
    };
    let lines = interaction_lines(text);
    let mut conversations: Vec<Conversation> = Vec::new();
    let mut by_first: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let (mut requests, mut skipped, mut responses) = (0, 0, 0);
    for (pos, interaction) in cassette.interactions.iter().enumerate() {
        let line = lines.get(pos).copied();
        let id = interaction
            .id
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(pos);
        let at = |message: Option<usize>| Place {
            line,
            request: Some(id),
            message,
            ..Place::default()
        };
        let unreadable = |why: String| InputError {
            line,
            message: format!("interaction {id}: {why}"),
        };
        let req = &interaction.request;
        let is_messages = req.url.contains("/v1/messages")
            || req.url.contains("/chat/completions")
            || req.body.contains("\"messages\"");
        if !is_messages || req.url.contains("/count_tokens") {
            skipped += 1;
            continue;
        }
        let mut body: Value = serde_json::from_str(&req.body)
            .map_err(|e| unreadable(format!("request body is not JSON: {e}")))?;
        strip_cache_control(&mut body);
        let Some(raw_messages) = body.get("messages").and_then(Value::as_array) else {
            return Err(unreadable("request body has no `messages` array".into()));
        };
        requests += 1;
        let (messages, openai) =
            request_messages(raw_messages, line.unwrap_or(0)).map_err(|e| unreadable(e.message))?;
        let serialized: Vec<String> = raw_messages.iter().map(Value::to_string).collect();
        let prefix = format!(
            "{}\n{}",
            body.get("system").unwrap_or(&Value::Null),
            body.get("tools").unwrap_or(&Value::Null)
        );
        let first = serialized.first().cloned().unwrap_or_default();

        // Which conversation this request continues.
        let candidates = by_first.entry(first).or_default();
        let found = candidates
            .iter()
            .copied()
            .find(|&c| conversations.get(c).is_some_and(|x| x.prefix == prefix));
        let c = match found {
            Some(c) => c,
            None => {
                if let Some(&other) = candidates.first() {
                    let earlier = conversations
                        .get(other)
                        .and_then(|x| x.previous.as_ref())
                        .map_or(0, |p| p.request);
                    report.findings.push(Finding::new(
                        Severity::Info,
                        "prefix_changed",
                        "system_or_tools",
                        at(None),
                        format!(
                            "request {id} repeats the first message of request {earlier} with a different system or tools: a new prefix (legitimate between turns, a cache miss within one)"
                        ),
                    ));
                } else if serialized.len() > 1
                    && let Some(earlier) = conversations
                        .iter()
                        .filter(|x| x.prefix == prefix)
                        .filter_map(|x| x.previous.as_ref())
                        .map(|p| p.request)
                        .next_back()
                {
                    // A history that shares not even its first message with any
                    // earlier request of this system and tools: a compaction (a
                    // legitimate reset) or a rewritten first message (a violation).
                    // Nothing in the traffic tells the two apart, so it is said, not
                    // judged.
                    report.findings.push(Finding::new(
                        Severity::Info,
                        "append_only",
                        "new_history",
                        at(Some(0)),
                        format!(
                            "request {id} carries {} messages but its first message is in no earlier request with this system and tools (last: request {earlier}): a compaction or a rewritten first message; not compared",
                            serialized.len()
                        ),
                    ));
                }
                conversations.push(Conversation {
                    prefix,
                    previous: None,
                    seen: BTreeSet::new(),
                });
                candidates.push(conversations.len() - 1);
                conversations.len() - 1
            }
        };
        let Some(conv) = conversations.get_mut(c) else {
            continue;
        };

        // The request alone, as the provider judged it.
        let mut found = Findings::default();
        let mut history = HistoryCheck::new(at(None));
        for m in &messages {
            history.push(Located::new(m.clone(), line.unwrap_or(0)), &mut found);
        }
        history.finish(End::Violation, &mut found);
        for mut f in found.kept {
            let signature = format!(
                "{}/{}/{:?}/{:?}/{}",
                f.check, f.kind, f.place.message, f.place.block, f.detail
            );
            if conv.seen.insert(signature) {
                f.place.line = f.place.line.filter(|&l| l > 0);
                report.findings.push(f);
            }
        }

        // Append-only against the conversation's previous request.
        if let Some(prev) = &conv.previous {
            let p = prev.request;
            if serialized.len() < prev.messages.len() {
                report.findings.push(Finding::new(
                    Severity::Violation,
                    "append_only",
                    "fewer_messages",
                    at(None),
                    format!(
                        "request {id} has {} messages, fewer than the {} of request {p}",
                        serialized.len(),
                        prev.messages.len()
                    ),
                ));
            } else if let Some(i) =
                (0..prev.messages.len()).find(|&i| prev.messages[i] != serialized[i])
            {
                let (was, now) = difference(&prev.messages[i], &serialized[i]);
                report.findings.push(
                    Finding::new(
                        Severity::Violation,
                        "append_only",
                        "message_changed",
                        at(Some(i)),
                        format!(
                            "request {id}: message {i} differs from request {p} (cache_control aside): was …{}",
                            crate::checkers::excerpt(&was)
                        ),
                    )
                    .with_excerpt(&now),
                );
            } else if let (Some(reply), Some(sent)) =
                (&prev.reply, messages.get(prev.messages.len()))
                && sent.role == turnsim_core::Role::Assistant
                && **sent != *reply
            {
                let i = prev.messages.len();
                report.findings.push(
                    Finding::new(
                        Severity::Violation,
                        "response_kept",
                        "reply_changed",
                        at(Some(i)),
                        format!(
                            "request {id}: message {i} is not the reply streamed to request {p}: streamed {}",
                            crate::checkers::excerpt(&reply.to_json())
                        ),
                    )
                    .with_excerpt(&sent.to_json()),
                );
            }
        }

        // The response.
        let reply = match &interaction.response {
            Some(r) if r.code.is_none_or(|c| c == 200) && !r.body.trim().is_empty() => {
                responses += 1;
                if openai {
                    // Chat-completions chunks are not the engine's event model.
                    report.findings.push(Finding::new(
                        Severity::Info,
                        "response",
                        "unsupported",
                        at(None),
                        format!(
                            "response to request {id}: an OpenAI chat-completions response is outside the engine's event model; not judged"
                        ),
                    ));
                    None
                } else {
                    judge_response(&r.body, Some(id), line, &mut report.findings)
                }
            }
            _ => None,
        };
        conv.previous = Some(Previous {
            request: id,
            messages: serialized,
            reply,
        });
    }
    report.stats.insert("requests", requests);
    report.stats.insert("responses", responses);
    report.stats.insert("conversations", conversations.len());
    report.stats.insert("interactions_skipped", skipped);
    Ok(())
}

/// The messages of one request body (already stripped of `cache_control`), parsed by
/// the same loaders as a JSON document: Anthropic messages, or OpenAI messages mapped
/// onto them. Also says whether they were OpenAI's.
fn request_messages(
    raw_messages: &[Value],
    line: usize,
) -> Result<(Vec<SharedMessage>, bool), InputError> {
    let boxed: Vec<Box<RawValue>> = raw_messages
        .iter()
        .map(|v| RawValue::from_string(v.to_string()))
        .collect::<Result<_, _>>()
        .map_err(|e| InputError::whole(e.to_string()))?;
    let raw = RawMessages {
        items: boxed.iter().map(|b| (line, &**b)).collect(),
        body: true,
    };
    let openai = looks_openai(&raw);
    let located = if openai {
        openai::load(&raw)?.0
    } else {
        load_raw(&raw)?
    };
    Ok((located.into_iter().map(|l| l.message).collect(), openai))
}

/// Parses one response (SSE stream or JSON message) and reports what is wrong with
/// it; returns the assistant message when it is valid. `request` is the cassette
/// interaction it answered (none for a standalone recording).
pub fn judge_response(
    body: &str,
    request: Option<usize>,
    line: Option<usize>,
    out: &mut Findings,
) -> Option<Message> {
    let place = Place {
        line,
        request,
        ..Place::default()
    };
    let parsed = if body.trim_start().starts_with('{') {
        serde_json::from_str::<Message>(body).map_err(|e| ReplyError::Syntax {
            line: e.line(),
            why: format!("response body is not a message: {e}"),
        })
    } else {
        sse::parse_stream(body)
    };
    let (severity, kind, why) = match parsed {
        Ok(m) => {
            // The engine accepted it; hold it to the same rules as any message. A
            // reply may end with tool calls (the next request answers them), so an
            // open call is not judged here.
            let mut found = Findings::default();
            let mut history = HistoryCheck::new(place.clone());
            history.push(
                Located::new(Arc::new(Message::user_text("(request)")), 0),
                &mut found,
            );
            history.push(Located::new(Arc::new(m.clone()), 0), &mut found);
            history.finish(End::TurnOpen, &mut found);
            match found
                .kept
                .into_iter()
                .find(|f| f.severity == Severity::Violation)
            {
                Some(f) => (Severity::Violation, "invalid_message", f.detail),
                None => return Some(m),
            }
        }
        Err(ReplyError::Syntax { line: l, why }) => (
            Severity::Violation,
            "syntax",
            format!("line {l} of the body: {why}"),
        ),
        Err(ReplyError::Rejected { why }) => (
            Severity::Violation,
            "rejected",
            format!("the engine rejects it: {why}"),
        ),
        Err(ReplyError::Unsupported { line: l, why }) => (
            Severity::Info,
            "unsupported",
            format!("line {l} of the body: {why} is outside the engine's event model; not judged"),
        ),
        Err(ReplyError::ProviderError { line: l, why }) => (
            Severity::Info,
            "provider_error",
            format!("line {l} of the body: the provider reported {why}"),
        ),
    };
    let whose = match request {
        Some(id) => format!("response to request {id}"),
        None => "response".to_string(),
    };
    out.push(Finding::new(
        severity,
        "response",
        kind,
        place,
        format!("{whose}: {why}"),
    ));
    None
}
