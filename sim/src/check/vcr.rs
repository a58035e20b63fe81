//! go-vcr cassettes (YAML) of Messages API traffic: every request, every conversation
//! across its requests, every recorded response.
//!
//! Guarantees:
//! - Each request is held to the history rules on its own, because the provider
//!   judged each one on its own; in a request that was sent, a tool call left
//!   unanswered at the end is a violation, not a turn in progress.
//! - Request messages are parsed by the same loaders as a JSON document (Anthropic,
//!   or OpenAI mapped onto it), once `cache_control` is removed everywhere the API
//!   accepts it: breakpoints move forward on purpose and are not content.
//! - Requests are grouped into conversations and held to append-only across them
//!   (see [`super::conversation`]); each recorded response is judged by the engine
//!   (see [`super::response`]).
//! - Interactions that are not Messages (or chat-completions) calls are counted and
//!   skipped; a Messages call whose body is not JSON is unreadable input (exit 2).

use super::anthropic::{RawMessages, load_raw, looks_openai};
use super::conversation::{Conversations, Sent};
use super::findings::{FileReport, Finding, Findings, Place, Severity};
use super::history::{End, HistoryCheck};
use super::openai;
use super::response::judge_response;
use super::source::{InputError, Located, path_error};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use turnsim_core::SharedMessage;

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

/// Checks a cassette; `report` receives the findings and counts.
pub fn check(text: &str, report: &mut FileReport) -> Result<(), InputError> {
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
    let mut conversations = Conversations::default();
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
        let sent = Sent {
            id,
            prefix: format!(
                "{}\n{}",
                body.get("system").unwrap_or(&Value::Null),
                body.get("tools").unwrap_or(&Value::Null)
            ),
            serialized: raw_messages.iter().map(Value::to_string).collect(),
            messages,
        };
        let c = conversations.continued_by(&sent, &at(None), &mut report.findings);
        let Some(conv) = conversations.get_mut(c) else {
            continue;
        };

        // The request alone, as the provider judged it; a finding a later request
        // repeats (it carries the same prefix) is reported once.
        let mut found = Findings::default();
        let mut history = HistoryCheck::new(at(None));
        for m in &sent.messages {
            history.push(Located::new(m.clone(), line.unwrap_or(0)), &mut found);
        }
        history.finish(End::Violation, &mut found);
        conv.report_once(found, &mut report.findings);
        conv.append_only(&sent, &at(None), &mut report.findings);

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
        conv.remember(sent, reply);
    }
    report.stats.insert("requests", requests);
    report.stats.insert("responses", responses);
    report.stats.insert("conversations", conversations.count());
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
