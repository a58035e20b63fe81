//! Cassettes (YAML) of recorded API traffic, as go-vcr and vcrpy write them: every
//! request, every conversation across its requests, every recorded response.
//!
//! Guarantees:
//! - Both recorders' layouts are read into one exchange ([`super::vcr_exchange`]), so
//!   a vcrpy cassette (Python's SDK test suites) and a go-vcr one (Go's) of the same
//!   traffic are judged alike; a body vcrpy stored as `!!binary` (compressed or not
//!   UTF-8) is decoded first.
//! - Each request is held to the history rules on its own, because the provider
//!   judged each one on its own; in a request that was sent, a tool call left
//!   unanswered at the end is a violation, not a turn in progress.
//! - Messages and chat-completions bodies are parsed by the same loaders as a JSON
//!   document (Anthropic, or OpenAI mapped onto it), once `cache_control` is removed
//!   everywhere the API accepts it: breakpoints move forward on purpose and are not
//!   content. That holds wherever a provider lets a breakpoint sit: OpenRouter takes
//!   one on a chat message itself and on a `tool_calls[]` entry, so those are set
//!   aside too. Responses API calls are judged as the server judges them
//!   ([`super::vcr_responses`]).
//! - Every request goes through the judge ([`crate::judge::session`]), the same one
//!   `turnsim serve` judges live traffic with: grouped into conversations, held to
//!   append-only and prefix rules across them, and a request the provider refused
//!   (an error status) is not what the next request is compared with. Each recorded
//!   Messages response is judged by the engine (see [`super::response`]).
//! - Interactions that are not API calls (a `GET /v1/models`, `count_tokens`) are
//!   counted and skipped; an API call whose body cannot be read or is not JSON is
//!   unreadable input (exit 6).
//! - Bounded memory: the cassette is read one interaction at a time
//!   ([`super::vcr_split`]); between interactions only the judge's state is kept (the
//!   last accepted request of each conversation, and for the Responses API what each
//!   stored response stands for, as the server keeps it), never the cassette.

use super::anthropic::{RawMessages, looks_openai};
use super::findings::{FileReport, Finding, Place, Severity};
use super::response::judge_response;
use super::source::{InputError, without_position};
use super::vcr_chat::{self, ChatReplies};
use super::vcr_exchange::{Exchange, Interaction, keep_binary_tags};
use super::vcr_responses::Stored;
use super::vcr_split::{Interactions, Piece};
use crate::judge::anthropic::parse_request;
use crate::judge::normal::Api as KeyApi;
use crate::judge::session::{Answered, Judge};
use crate::judge::view::Request;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Cassette {
    #[serde(default)]
    interactions: Vec<Interaction>,
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

/// The YAML reader's positions ("line L column C") in `message`, said as the file's
/// ("line L', column C"): an interaction parsed alone counts its lines from
/// `first_line`.
fn file_positions(message: &str, first_line: usize) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 5..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let tail = &after[digits..];
        match (
            after[..digits].parse::<usize>(),
            tail.strip_prefix(" column "),
        ) {
            (Ok(l), Some(column)) => {
                out.push_str(&format!(
                    "line {}, column ",
                    first_line + l.saturating_sub(1)
                ));
                rest = column;
            }
            _ => {
                out.push_str("line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A YAML error as an input error: `interactions[i]` for the `i`th interaction parsed
/// alone (`first_line` is where its text starts), the whole file otherwise. Where
/// the reader stopped is the error's line and column; positions it names inside its
/// message are the file's too.
fn yaml_error(
    e: &serde_path_to_error::Error<serde_norway::Error>,
    item: Option<(usize, usize)>,
) -> InputError {
    let location = e.inner().location();
    let first_line = item.map_or(1, |(_, l)| l);
    let mut message = e.inner().to_string();
    if let Some(l) = &location {
        let own = format!(" at line {} column {}", l.line(), l.column());
        if let Some(i) = message.find(&own) {
            message.replace_range(i..i + own.len(), "");
        }
    }
    let message = file_positions(&message, first_line);
    let path = e.path().to_string();
    let path = match (item, path.strip_prefix("[0]")) {
        (Some((pos, _)), Some(rest)) => format!("interactions[{pos}]{rest}"),
        _ => path,
    };
    let path = if path == "." || path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    };
    InputError {
        line: location
            .as_ref()
            .map(|l| first_line + l.line().saturating_sub(1)),
        column: location.as_ref().map(|l| l.column()),
        message: format!("not a cassette (go-vcr or vcrpy): {path}{message}"),
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
                    let text = keep_binary_tags(&text);
                    let de = serde_norway::Deserializer::from_str(&text);
                    serde_path_to_error::deserialize(de)
                        .map_err(|e| yaml_error(&e, Some((pos, line))))?
                };
                for interaction in &items {
                    state.interaction(interaction, Some(line), limits.max_element, report)?;
                }
            }
            Piece::Whole(text) => return check_text(&text, limits, report),
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
pub fn check_text(
    text: &str,
    limits: super::source::Limits,
    report: &mut FileReport,
) -> Result<(), InputError> {
    let cassette: Cassette = {
        let tagged = keep_binary_tags(text);
        let de = serde_norway::Deserializer::from_str(&tagged);
        serde_path_to_error::deserialize(de).map_err(|e| yaml_error(&e, None))?
    };
    let lines = interaction_lines(text);
    let mut state = State::default();
    for (pos, interaction) in cassette.interactions.iter().enumerate() {
        state.interaction(
            interaction,
            lines.get(pos).copied(),
            limits.max_element,
            report,
        )?;
    }
    state.finish(report)
}

/// Which API a recorded call speaks, from its method, address and body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    /// Anthropic Messages or OpenAI chat-completions: a `messages` array.
    Messages,
    /// OpenAI Responses: `input` items.
    Responses,
    /// Not a call the judge reads (a `GET`, `count_tokens`, another service).
    Other,
}

fn api_of(ex: &Exchange, body: &str) -> Api {
    let path = ex.url.split(['?', '#']).next().unwrap_or_default();
    let post = ex
        .method
        .as_deref()
        .is_none_or(|m| m.eq_ignore_ascii_case("POST"));
    if !post || path.contains("/count_tokens") {
        Api::Other
    } else if path.ends_with("/responses") {
        Api::Responses
    } else if path.contains("/v1/messages")
        || path.contains("/chat/completions")
        || body.contains("\"messages\"")
    {
        Api::Messages
    } else {
        Api::Other
    }
}

/// The API a `messages` request was sent to, for its conversation's key (a
/// conversation is one API's) and for how its body and reply are read: its address
/// says, else its messages' shape (`openai`).
fn key_api(ex: &Exchange, openai: bool) -> KeyApi {
    let path = ex.url.split(['?', '#']).next().unwrap_or_default();
    if path.contains("/chat/completions") {
        KeyApi::Chat
    } else if path.contains("/v1/messages") || !openai {
        KeyApi::Messages
    } else {
        KeyApi::Chat
    }
}

/// Checks a cassette of vcrpy's JSON serializer, held whole (the caller bounds it).
pub fn check_json(
    text: &str,
    limits: super::source::Limits,
    report: &mut FileReport,
) -> Result<(), InputError> {
    let cassette: Cassette = {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| InputError {
            line: Some(e.inner().line().max(1)),
            column: (e.inner().column() > 0).then(|| e.inner().column()),
            message: format!(
                "not a vcrpy JSON cassette: {}{}",
                super::source::path_prefix(&e),
                without_position(e.inner())
            ),
        })?
    };
    // Each interaction's request opens on its own line in vcrpy's indented output.
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("\"request\":"))
        .map(|(i, _)| i + 1)
        .collect();
    let mut state = State::default();
    for (pos, interaction) in cassette.interactions.iter().enumerate() {
        state.interaction(
            interaction,
            lines.get(pos).copied(),
            limits.max_element,
            report,
        )?;
    }
    state.finish(report)
}

/// What a cassette's check carries from one interaction to the next: the judge
/// (the previous request of each conversation), what the Responses API stored, and
/// the counts.
#[derive(Default)]
struct State {
    judge: Judge,
    stored: Stored,
    /// The Chat replies each conversation is to carry back.
    chat: ChatReplies,
    interactions: usize,
    requests: usize,
    skipped: usize,
    responses: usize,
    /// Requests whose prefix was judged on the cassette's bytes.
    on_bytes: usize,
}

impl State {
    fn interaction(
        &mut self,
        interaction: &Interaction,
        line: Option<usize>,
        max_element: usize,
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
        let ex = interaction.exchange(max_element);
        let text = ex.body.as_deref().unwrap_or_default();
        let api = api_of(&ex, text);
        if api == Api::Other {
            self.skipped += 1;
            return Ok(());
        }
        let text = ex
            .body
            .as_deref()
            .map_err(|why| unreadable(format!("request body: {why}")))?;
        self.requests += 1;
        if api == Api::Responses {
            if crate::judge::body::prefix_of(text.as_bytes(), "instructions").is_some() {
                self.on_bytes += 1;
            }
            return self.stored.judge(&mut self.judge, &ex, text, &at, report);
        }
        let body: Value = serde_json::from_str(text).map_err(|e| {
            unreadable(format!(
                "request body is not JSON: {}, column {} of the body: {}",
                match e.line() {
                    0 => "at its end".to_string(),
                    l => format!("line {l}"),
                },
                e.column(),
                without_position(&e)
            ))
        })?;
        if !body.get("messages").is_some_and(Value::is_array) {
            return Err(unreadable("request body has no `messages` array".into()));
        }
        // A `/chat/completions` address is Chat whatever its messages look like (user
        // strings alone read as either API).
        let chat = (key_api(&ex, false) == KeyApi::Chat).then_some(true);
        let (mut request, openai) =
            request_of(&body, id, &ex.headers, chat).map_err(|e| unreadable(e.message))?;
        // A cassette keeps the request body as sent: its prefix is judged as bytes
        // (chat-completions bodies have no top-level `system`: their system text is a
        // message, judged with the history).
        request.prefix.bytes = crate::judge::body::prefix_of(text.as_bytes(), "system");
        if request.prefix.bytes.is_some() {
            self.on_bytes += 1;
        }
        request.line = line;
        request.api = key_api(&ex, openai);
        // Chat replies are read as Chat's; a Chat body sent to a Messages address
        // got a reply of neither kind that can be trusted.
        let chat = openai && request.api == KeyApi::Chat;
        for m in &mut request.messages {
            m.line = line.unwrap_or(0);
        }
        let judged = self.judge.judge(&request);
        for mut f in judged.fresh().cloned() {
            f.place.line = f.place.line.filter(|&l| l > 0);
            report.findings.push(f);
        }
        let messages = body["messages"].as_array().map(Vec::as_slice);
        if chat {
            let appended = !judged.findings.iter().any(|f| f.check == "append_only");
            let messages = messages.unwrap_or_default();
            let out = &mut report.findings;
            self.chat
                .echo(&judged.key, id, messages, appended, &at, out);
        }
        let sent = messages.map_or(0, <[Value]>::len);
        drop(body);
        let response = ex.response.as_ref();
        let status = response.and_then(|r| r.status);
        let said =
            |why: String| Finding::new(Severity::Info, "response", "unsupported", at.clone(), why);
        let mut chat_reply = None;
        let reply = match response.map(|r| (r.status, &r.body)) {
            Some((status, Ok(body)))
                if status.is_none_or(|c| c == 200) && !body.trim().is_empty() =>
            {
                self.responses += 1;
                if chat {
                    match vcr_chat::read_reply(body) {
                        vcr_chat::Read::Reply(r) => chat_reply = Some(r),
                        vcr_chat::Read::Finding(severity, kind, why) => {
                            let detail = format!("response to request {id}: {why}");
                            let f = Finding::new(severity, "response", kind, at.clone(), detail);
                            report.findings.push(f);
                        }
                    }
                    None
                } else if openai {
                    let why = format!(
                        "response to request {id}: an OpenAI chat-completions body sent to a Messages API address; its reply not judged"
                    );
                    report.findings.push(said(why));
                    None
                } else {
                    judge_response(body, Some(id), line, &mut report.findings)
                }
            }
            Some((status, Err(why))) if status.is_none_or(|c| c == 200) => {
                self.responses += 1;
                let detail = format!("response to request {id}: {why}; not judged");
                report.findings.push(said(detail));
                None
            }
            _ => None,
        };
        if chat {
            self.chat
                .answered(&judged.key, id, sent, status, chat_reply);
        }
        self.judge.answered(
            &judged.key,
            Answered {
                status,
                outcome: None,
                reply,
            },
        );
        Ok(())
    }

    fn finish(self, report: &mut FileReport) -> Result<(), InputError> {
        if self.requests == 0 {
            return Err(InputError::whole(format!(
                "a cassette with no Messages API, chat-completions or Responses API request among its {} interaction(s): nothing to judge",
                self.interactions
            )));
        }
        report.stats.insert("requests", self.requests);
        *report.stats.entry("responses").or_insert(0) += self.responses;
        report
            .stats
            .insert("conversations", self.judge.conversations());
        report.stats.insert("interactions_skipped", self.skipped);
        // Which judgement each request's prefix got: the cassette's bytes, or values
        // (a body that is not one JSON object in UTF-8).
        report.stats.insert("prefix_judged_on_bytes", self.on_bytes);
        report
            .stats
            .insert("prefix_judged_on_values", self.requests - self.on_bytes);
        Ok(())
    }
}

/// The neutral view of one request body: an Anthropic body through the judge's own
/// reader (the one `turnsim serve` uses), OpenAI chat messages through `check`'s
/// mapping ([`vcr_chat::chat_request`]). The address decides which (`chat`), else
/// the messages' shape. Also says whether they were OpenAI's.
fn request_of(
    body: &Value,
    id: usize,
    headers: &BTreeMap<String, String>,
    chat: Option<bool>,
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
    if !chat.unwrap_or_else(|| looks_openai(&raw)) {
        let parsed = parse_request(body.to_string().as_bytes()).map_err(InputError::whole)?;
        return Ok((parsed.view(id, headers), false));
    }
    Ok((vcr_chat::chat_request(body, &raw, id)?, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<FileReport, InputError> {
        let mut report = FileReport::new("t.yaml", "vcr");
        check(
            text.as_bytes(),
            super::super::source::Limits::default(),
            &mut report,
        )
        .map(|()| report)
    }

    #[test]
    fn parser_positions_are_the_files_lines_and_columns() {
        assert_eq!(
            file_positions("x at line 3 column 7, while at line 1 column 2", 10),
            "x at line 12, column 7, while at line 10, column 2"
        );
        assert_eq!(file_positions("online 5 items", 10), "online 5 items");
        // An unterminated quoted body in the first interaction (which starts on line 4).
        let broken = "---\nversion: 2\ninteractions:\n- id: 0\n  request:\n    body: '{}'\n    url: https://api.anthropic.com/v1/messages\n  response:\n    body: 'event: x\n";
        let e = read(broken).expect_err("not YAML");
        assert_eq!(e.line, Some(10));
        assert_eq!(e.column, Some(1));
        assert_eq!(
            e.message,
            "not a cassette (go-vcr or vcrpy): interactions[0].response.body: found unexpected end of stream, while scanning a quoted scalar at line 9, column 11"
        );
    }

    #[test]
    fn a_request_body_that_is_not_json_says_where_in_the_body() {
        let text = "---\nversion: 2\ninteractions:\n- id: 0\n  request:\n    body: '{\"messages\": x}'\n    url: https://api.anthropic.com/v1/messages\n";
        let e = read(text).expect_err("not JSON");
        assert_eq!(e.line, Some(4));
        assert_eq!(
            e.message,
            "interaction 0: request body is not JSON: line 1, column 14 of the body: expected value"
        );
    }
}
