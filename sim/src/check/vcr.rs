//! go-vcr cassettes (YAML) of Messages API traffic: every request, every conversation
//! across its requests, every recorded response.
//!
//! Guarantees:
//! - Each request is held to the history rules on its own, because the provider
//!   judged each one on its own; in a request that was sent, a tool call left
//!   unanswered at the end is a violation, not a turn in progress.
//! - Request messages are parsed by the same loaders as a JSON document (Anthropic,
//!   or OpenAI mapped onto it), once `cache_control` is removed everywhere the API
//!   accepts it: breakpoints move forward on purpose and are not content. That holds
//!   wherever a provider lets a breakpoint sit: OpenRouter takes one on a chat
//!   message itself and on a `tool_calls[]` entry, so those are set aside too.
//! - Every request goes through the judge ([`crate::judge::session`]), the same one
//!   `turnsim serve` judges live traffic with: grouped into conversations, held to
//!   append-only and prefix rules across them, and a request the provider refused
//!   (an error status) is not what the next request is compared with. Each recorded
//!   response is judged by the engine (see [`super::response`]).
//! - Interactions that are not Messages (or chat-completions) calls are counted and
//!   skipped; a Messages call whose body is not JSON is unreadable input (exit 2).
//! - Bounded memory: the cassette is read one interaction at a time
//!   ([`super::vcr_split`]); between interactions only the judge's state is kept (the
//!   last accepted request of each conversation), never the cassette.

use super::anthropic::{RawMessages, looks_openai};
use super::findings::{FileReport, Finding, Place, Severity};
use super::openai;
use super::response::judge_response;
use super::source::{InputError, Located, path_error};
use super::vcr_split::{Interactions, Piece};
use crate::judge::anthropic::parse_request;
use crate::judge::normal::{normal_message, normal_tools};
use crate::judge::rules_openai::chat;
use crate::judge::rules_openai::table::Api;
use crate::judge::session::{Answered, Judge};
use crate::judge::view::{Prefix, Request};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

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
    /// Header name to its values, as go-vcr writes them; read leniently (a cassette
    /// may hold them in another shape), since only `anthropic-beta` is used.
    #[serde(default)]
    headers: Option<Value>,
}

/// The request's headers, names lower-cased, several values joined by commas.
fn headers_of(req: &HttpRequest) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(map)) = &req.headers {
        for (name, v) in map {
            let value = match v {
                Value::Array(vs) => vs
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(","),
                Value::String(s) => s.clone(),
                _ => continue,
            };
            out.insert(name.to_ascii_lowercase(), value);
        }
    }
    out
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

/// A chat message without the breakpoints OpenRouter accepts outside content parts
/// (on the message and on each `tool_calls[]` entry); the judge's normal form sets
/// aside those inside content.
fn without_chat_breakpoints(message: &Value) -> Value {
    let mut m = message.clone();
    if let Value::Object(o) = &mut m {
        o.shift_remove("cache_control");
        if let Some(Value::Array(calls)) = o.get_mut("tool_calls") {
            for call in calls {
                if let Value::Object(c) = call {
                    c.shift_remove("cache_control");
                }
            }
        }
    }
    m
}

/// The lines where the interactions start (`- id:` / `- request:` items), in order.
fn interaction_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- id:") || l.starts_with("- request:"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// A YAML error as an input error: `interactions[i]` for the `i`th interaction parsed
/// alone (`first_line` is where its text starts), the whole file otherwise.
fn yaml_error(
    e: &serde_path_to_error::Error<serde_norway::Error>,
    item: Option<(usize, usize)>,
) -> InputError {
    let line = e.inner().location().map(|l| l.line());
    let (line, path) = match item {
        Some((pos, first_line)) => {
            let path = path_error(e);
            let path = match path.strip_prefix("[0]") {
                Some(rest) => format!("interactions[{pos}]{rest}"),
                None => path,
            };
            (line.map(|l| first_line + l.saturating_sub(1)), path)
        }
        None => (line, path_error(e)),
    };
    InputError {
        line,
        column: None,
        message: format!("not a go-vcr cassette: {path}"),
    }
}

/// Checks a cassette read from `reader`, one interaction at a time
/// ([`super::vcr_split`]); `report` receives the findings and counts.
pub fn check(
    reader: impl std::io::BufRead,
    limits: super::source::Limits,
    report: &mut FileReport,
) -> Result<(), InputError> {
    let mut state = State::default();
    let mut pieces = Interactions::new(reader, limits);
    for piece in pieces.by_ref() {
        match piece? {
            Piece::Interaction { line, text } => {
                let pos = state.interactions;
                let items: Vec<Interaction> = {
                    let de = serde_norway::Deserializer::from_str(&text);
                    serde_path_to_error::deserialize(de)
                        .map_err(|e| yaml_error(&e, Some((pos, line))))?
                };
                for interaction in &items {
                    state.interaction(interaction, Some(line), report)?;
                }
            }
            Piece::Whole(text) => return check_text(&text, report),
        }
    }
    #[derive(Deserialize)]
    struct Outside {
        #[serde(default)]
        #[allow(dead_code)]
        interactions: Option<serde::de::IgnoredAny>,
    }
    let de = serde_norway::Deserializer::from_str(pieces.outside());
    let _: Outside = serde_path_to_error::deserialize(de).map_err(|e| yaml_error(&e, None))?;
    state.finish(report)
}

/// Checks a cassette held whole: a layout [`super::vcr_split`] does not cut.
pub fn check_text(text: &str, report: &mut FileReport) -> Result<(), InputError> {
    let cassette: Cassette = {
        let de = serde_norway::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| yaml_error(&e, None))?
    };
    let lines = interaction_lines(text);
    let mut state = State::default();
    for (pos, interaction) in cassette.interactions.iter().enumerate() {
        state.interaction(interaction, lines.get(pos).copied(), report)?;
    }
    state.finish(report)
}

/// What a cassette's check carries from one interaction to the next: the judge
/// (the previous request of each conversation) and the counts.
#[derive(Default)]
struct State {
    judge: Judge,
    interactions: usize,
    requests: usize,
    skipped: usize,
    responses: usize,
    /// Skipped interactions that were OpenAI Responses API calls (`/v1/responses`).
    responses_api: usize,
}

impl State {
    fn interaction(
        &mut self,
        interaction: &Interaction,
        line: Option<usize>,
        report: &mut FileReport,
    ) -> Result<(), InputError> {
        let pos = self.interactions;
        self.interactions += 1;
        let id = interaction
            .id
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(pos);
        let at = Place {
            line,
            request: Some(id),
            ..Place::default()
        };
        let unreadable = |why: String| InputError {
            line,
            column: None,
            message: format!("interaction {id}: {why}"),
        };
        let req = &interaction.request;
        let is_messages = req.url.contains("/v1/messages")
            || req.url.contains("/chat/completions")
            || req.body.contains("\"messages\"");
        if !is_messages || req.url.contains("/count_tokens") {
            self.skipped += 1;
            if req.url.contains("/v1/responses") {
                self.responses_api += 1;
            }
            return Ok(());
        }
        let body: Value = serde_json::from_str(&req.body)
            .map_err(|e| unreadable(format!("request body is not JSON: {e}")))?;
        if !body.get("messages").is_some_and(Value::is_array) {
            return Err(unreadable("request body has no `messages` array".into()));
        }
        self.requests += 1;
        let (mut request, openai) =
            request_of(&body, id, &headers_of(req)).map_err(|e| unreadable(e.message))?;
        drop(body);
        request.line = line;
        for m in &mut request.messages {
            m.line = line.unwrap_or(0);
        }
        let judged = self.judge.judge(&request);
        for mut f in judged.fresh().cloned() {
            f.place.line = f.place.line.filter(|&l| l > 0);
            report.findings.push(f);
        }
        let response = interaction.response.as_ref();
        let reply = match response {
            Some(r) if r.code.is_none_or(|c| c == 200) && !r.body.trim().is_empty() => {
                self.responses += 1;
                if openai {
                    // Chat-completions chunks are not the engine's event model.
                    report.findings.push(Finding::new(
                        Severity::Info,
                        "response",
                        "unsupported",
                        at.clone(),
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
        self.judge.answered(
            &judged.key,
            Answered {
                status: response.and_then(|r| r.code),
                outcome: None,
                reply,
            },
        );
        Ok(())
    }

    fn finish(self, report: &mut FileReport) -> Result<(), InputError> {
        if self.requests == 0 && self.responses_api > 0 {
            return Err(super::detect::unsupported_error(&format!(
                "a go-vcr cassette of the OpenAI Responses API ({} of its {} interaction(s) call /v1/responses)",
                self.responses_api, self.interactions
            )));
        }
        if self.requests == 0 {
            return Err(InputError::whole(format!(
                "a go-vcr cassette with no Messages API or chat-completions request among its {} interaction(s): nothing to judge",
                self.interactions
            )));
        }
        report.stats.insert("requests", self.requests);
        report.stats.insert("responses", self.responses);
        report
            .stats
            .insert("conversations", self.judge.conversations());
        report.stats.insert("interactions_skipped", self.skipped);
        Ok(())
    }
}

/// The neutral view of one request body: an Anthropic body through the judge's own
/// reader (the one `turnsim serve` uses), OpenAI chat messages through `check`'s
/// mapping. Also says whether they were OpenAI's.
fn request_of(
    body: &Value,
    id: usize,
    headers: &BTreeMap<String, String>,
) -> Result<(Request, bool), InputError> {
    let raw_messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let boxed: Vec<Box<RawValue>> = raw_messages
        .iter()
        .map(|v| RawValue::from_string(v.to_string()))
        .collect::<Result<_, _>>()
        .map_err(|e| InputError::whole(e.to_string()))?;
    let raw = RawMessages {
        items: boxed.iter().map(|b| (0, &**b)).collect(),
    };
    if !looks_openai(&raw) {
        let parsed = parse_request(body.to_string().as_bytes()).map_err(InputError::whole)?;
        return Ok((parsed.view(id, headers), false));
    }
    let (located, _) = openai::load(&raw)?;
    let role = |v: &Value| v.get("role").and_then(Value::as_str).map(str::to_owned);
    let request = Request {
        id,
        line: None,
        prefix: Prefix {
            system: Value::Null.to_string(),
            tools: normal_tools(body.get("tools")).to_string(),
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            betas: Vec::new(),
        },
        normal: raw_messages
            .iter()
            .map(|m| normal_message(&without_chat_breakpoints(m)).to_string())
            .collect(),
        opening: raw_messages
            .iter()
            .position(|m| !matches!(role(m).as_deref(), Some("system" | "developer"))),
        messages: located
            .into_iter()
            .map(|l: Located| Located::new(l.message, 0))
            .collect(),
        has_tools: body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty()),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        conversation: None,
        // Chat Completions messages mapped onto these types: the Messages API's
        // request-level rules do not apply to them.
        shown: Default::default(),
        cache_marked: None,
        // What Chat Completions rejects, judged by its own rules on the body as sent.
        api_findings: Some(
            chat::judge(body.get("messages").unwrap_or(&Value::Null))
                .iter()
                .map(|b| b.finding(Api::Chat, id))
                .collect(),
        ),
    };
    Ok((request, true))
}
