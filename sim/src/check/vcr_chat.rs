//! The Chat Completions replies of a cassette: each recorded reply read (one JSON
//! `chat.completion`, or the SSE `chat.completion.chunk`s of a stream), and the next
//! request of its conversation held to carrying it back as the model wrote it.
//!
//! Guarantees:
//! - A reply is read the way a client assembles it: the `content` deltas of choice 0
//!   joined, each `tool_calls[]` entry gathered by its `index` (id and name from the
//!   chunk that names them, `arguments` fragments concatenated). A stream that ends
//!   with neither a `finish_reason` nor `data: [DONE]` (some providers send only the
//!   latter) is a `response/unfinished` violation, a body or chunk
//!   that is not JSON a `response/syntax` violation, and an `error` the provider sent
//!   information, as for Messages and Responses replies.
//! - The echo is compared as the Chat API's own bytes, not as the judge's message
//!   model: a call's `arguments` is the string the model wrote, so a client that
//!   parses and re-serialises it (keys reordered, spaces dropped) has changed the
//!   model's words, which the mapping onto `tool_use` inputs would hide. Text is
//!   compared as text: a string and the same words as text parts are the same reply,
//!   and an absent, `null` or empty `content` are all no text.
//! - Only what the model wrote is compared (text, each call's id, name and
//!   arguments); fields a provider adds beside them (`refusal`, reasoning fields,
//!   annotations) are not, since clients routinely drop them and the API accepts that.
//! - A Chat request is laid onto the judge's messages by `check`'s OpenAI mapping
//!   ([`super::openai`]) and judged by Chat Completions' own rules on the body as
//!   sent; its history is compared in normal form without the breakpoints OpenRouter
//!   lets sit on a message and on a `tool_calls[]` entry (they move; not content).
//! - A reply is the previous one only for a request the provider accepted: a refused
//!   request leaves the last accepted reply in place, as the judge does with requests.

use super::anthropic::RawMessages;
use super::findings::{Finding, Findings, Place, Severity, excerpt};
use super::openai;
use super::source::{InputError, Located};
use super::vcr_responses::sse_data;
use crate::judge::normal::{Api as KeyApi, ConversationKey, normal_message, normal_tools};
use crate::judge::rules_openai::table::Api as RulesApi;
use crate::judge::rules_openai::{chat, tools};
use crate::judge::view::{Prefix, Request};
use serde_json::Value;
use std::collections::BTreeMap;

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

/// The judge's view of one Chat Completions request body (`raw`: its messages).
pub fn chat_request(body: &Value, raw: &RawMessages<'_>, id: usize) -> Result<Request, InputError> {
    let raw_messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let (located, _) = openai::load(raw)?;
    let role = |v: &Value| v.get("role").and_then(Value::as_str).map(str::to_owned);
    Ok(Request {
        id,
        line: None,
        prefix: Prefix {
            system: Value::Null.to_string(),
            tools: normal_tools(body.get("tools")).to_string(),
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            betas: Vec::new(),
            bytes: None,
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
        api: KeyApi::Chat,
        // Chat Completions messages mapped onto these types: the Messages API's
        // request-level rules do not apply to them.
        shown: Default::default(),
        cache_marked: None,
        tool_breaches: Vec::new(),
        // What Chat Completions rejects, judged by its own rules on the body as sent.
        api_findings: Some(
            chat::judge(body.get("messages").unwrap_or(&Value::Null))
                .iter()
                .chain(&tools::judge(body, RulesApi::Chat))
                .map(|b| b.finding(RulesApi::Chat, id))
                .collect(),
        ),
    })
}

/// What the model wrote in one reply, as the Chat API carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatReply {
    pub text: String,
    /// `(id, name, arguments)` of each call, in order.
    pub calls: Vec<(String, String, String)>,
}

/// A recorded reply, read: what the model wrote, or what is said of the reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    Reply(ChatReply),
    Finding(Severity, &'static str, String),
}

/// The text of a `content`: a string, or the `text` of its parts joined.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for k in path {
        cur = &cur[*k];
    }
    cur.as_str().unwrap_or_default()
}

/// The calls of a message's `tool_calls`, in order.
fn calls_of(message: &Value) -> Vec<(String, String, String)> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                str_at(c, &["id"]).to_owned(),
                str_at(c, &["function", "name"]).to_owned(),
                str_at(c, &["function", "arguments"]).to_owned(),
            )
        })
        .collect()
}

/// What the model wrote in a chat message (a reply's `message`, or an assistant
/// message a client sent back).
pub fn reply_of(message: &Value) -> ChatReply {
    ChatReply {
        text: text_of(message.get("content")),
        calls: calls_of(message),
    }
}

fn provider_error(what: &str, error: &Value) -> Read {
    Read::Finding(
        Severity::Info,
        "provider_error",
        format!(
            "the {what} reports an error: {}",
            excerpt(&error.to_string())
        ),
    )
}

/// Reads a recorded Chat Completions reply, JSON or SSE.
pub fn read_reply(body: &str) -> Read {
    let syntax = |why: String| Read::Finding(Severity::Violation, "syntax", why);
    if body.trim_start().starts_with('{') {
        let v: Value = match serde_json::from_str(body) {
            Ok(v) => v,
            Err(e) => return syntax(format!("not JSON: {e}")),
        };
        if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
            return provider_error("response", error);
        }
        return match v.pointer("/choices/0/message") {
            Some(m) => Read::Reply(reply_of(m)),
            None => syntax("the response has no `choices[0].message`".into()),
        };
    }
    let mut reply = ChatReply::default();
    // Calls by their `index` in the stream, in the order they first appear.
    let mut slots: Vec<u64> = Vec::new();
    let mut finished = false;
    for (n, data) in sse_data(body).iter().enumerate() {
        if data.trim() == "[DONE]" {
            finished = true;
            continue;
        }
        let chunk: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => return syntax(format!("chunk {n} of the stream is not JSON: {e}")),
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return provider_error("stream", error);
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
                finished = true;
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            reply.text.push_str(&text_of(delta.get("content")));
            for call in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                let k = match slots.iter().position(|&i| i == index) {
                    Some(k) => k,
                    None => {
                        slots.push(index);
                        reply.calls.push(Default::default());
                        slots.len() - 1
                    }
                };
                let slot = &mut reply.calls[k];
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    slot.0 = id.to_owned();
                }
                slot.1.push_str(str_at(call, &["function", "name"]));
                slot.2.push_str(str_at(call, &["function", "arguments"]));
            }
        }
    }
    if !finished {
        return Read::Finding(
            Severity::Violation,
            "unfinished",
            "the stream ends with neither a `finish_reason` nor `[DONE]`".into(),
        );
    }
    Read::Reply(reply)
}

/// The last accepted request of a conversation and the reply it got.
struct Kept {
    request: usize,
    sent: usize,
    reply: Option<ChatReply>,
}

/// The replies each Chat conversation of a cassette is to carry back.
#[derive(Default)]
pub struct ChatReplies {
    last: BTreeMap<ConversationKey, Kept>,
}

/// Where `now` first differs from `was`, in words, with the two sides.
fn difference(was: &ChatReply, now: &ChatReply) -> Option<(String, String, String)> {
    if was.text != now.text {
        return Some(("its text".into(), was.text.clone(), now.text.clone()));
    }
    for (i, (w, n)) in was.calls.iter().zip(&now.calls).enumerate() {
        for (what, a, b) in [
            ("id", &w.0, &n.0),
            ("name", &w.1, &n.1),
            ("arguments", &w.2, &n.2),
        ] {
            if a != b {
                return Some((format!("tool_calls[{i}].{what}"), a.clone(), b.clone()));
            }
        }
    }
    (was.calls.len() != now.calls.len()).then(|| {
        (
            "its tool_calls".into(),
            format!("{} call(s)", was.calls.len()),
            format!("{} call(s)", now.calls.len()),
        )
    })
}

impl ChatReplies {
    /// Holds request `id`'s messages (as sent) to the reply its conversation's last
    /// accepted request got: the first message it adds, when the model's, must be
    /// that reply. `appended`: the judge found the request only appends to that one.
    pub fn echo(
        &self,
        key: &ConversationKey,
        id: usize,
        messages: &[Value],
        appended: bool,
        at: &Place,
        out: &mut Findings,
    ) {
        let Some(Kept {
            request,
            sent,
            reply: Some(reply),
        }) = self.last.get(key)
        else {
            return;
        };
        let Some(carried) = messages.get(*sent).filter(|_| appended) else {
            return;
        };
        if carried.get("role").and_then(Value::as_str) != Some("assistant") {
            return;
        }
        if let Some((what, was, now)) = difference(reply, &reply_of(carried)) {
            out.push(
                Finding::new(
                    Severity::Violation,
                    "response_kept",
                    "reply_changed",
                    Place {
                        message: Some(*sent),
                        ..at.clone()
                    },
                    format!(
                        "request {id}: message {sent} is not the reply recorded for request {request}: {what} was …{}",
                        excerpt(&was)
                    ),
                )
                .with_excerpt(&now),
            );
        }
    }

    /// Request `id` of `key`, with `sent` messages, was answered: with `status` (none
    /// recorded: accepted) and the reply read from it, if any.
    pub fn answered(
        &mut self,
        key: &ConversationKey,
        id: usize,
        sent: usize,
        status: Option<u16>,
        reply: Option<ChatReply>,
    ) {
        if status.is_some_and(|s| s != 200) {
            return;
        }
        self.last.insert(
            key.clone(),
            Kept {
                request: id,
                sent,
                reply,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> ConversationKey {
        ConversationKey {
            api: crate::judge::normal::Api::Chat,
            name: "first:go".into(),
        }
    }

    fn reply(r: Read) -> ChatReply {
        match r {
            Read::Reply(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_stream_is_assembled_as_a_client_assembles_it() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Run\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ning.\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"p\\\": \"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\n",
            "data: [DONE]\n\n",
        );
        assert_eq!(
            reply(read_reply(body)),
            ChatReply {
                text: "Running.".into(),
                calls: vec![("c1".into(), "ls".into(), "{\"p\": 1}".into())],
            }
        );
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_unfinished_and_an_error_is_information() {
        let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        assert_eq!(
            read_reply(cut),
            Read::Finding(
                Severity::Violation,
                "unfinished",
                "the stream ends with neither a `finish_reason` nor `[DONE]`".into()
            )
        );
        let error = "{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}";
        assert!(matches!(
            read_reply(error),
            Read::Finding(Severity::Info, "provider_error", _)
        ));
        assert!(matches!(
            read_reply("data: {oops\n\n"),
            Read::Finding(Severity::Violation, "syntax", _)
        ));
    }

    #[test]
    fn arguments_are_compared_as_the_models_bytes_and_text_as_text() {
        let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\": 1}"}}]},
            "finish_reason": "tool_calls"}]});
        let recorded = reply(read_reply(&body.to_string()));
        let key = key();
        let mut replies = ChatReplies::default();
        replies.answered(&key, 0, 1, None, Some(recorded));
        let user = json!({"role": "user", "content": "go"});
        let judge = |carried: Value| {
            let mut out = Findings::default();
            replies.echo(
                &key,
                1,
                &[user.clone(), carried],
                true,
                &Place::default(),
                &mut out,
            );
            out.kept
                .iter()
                .map(|f| f.detail.clone())
                .collect::<Vec<_>>()
        };
        let same = json!({"role": "assistant", "content": [{"type": "text", "text": "Hi"}],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\": 1}"}}]});
        assert_eq!(judge(same), Vec::<String>::new());
        let reserialised = json!({"role": "assistant", "content": "Hi",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\":1}"}}]});
        assert_eq!(
            judge(reserialised),
            [
                "request 1: message 1 is not the reply recorded for request 0: tool_calls[0].arguments was …{\"p\": 1}"
            ]
        );
        let dropped = json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"p\": 1}"}}]});
        assert_eq!(
            judge(dropped),
            ["request 1: message 1 is not the reply recorded for request 0: its text was …Hi"]
        );
    }

    #[test]
    fn a_refused_request_leaves_the_accepted_reply_in_place() {
        let key = key();
        let mut replies = ChatReplies::default();
        let said = ChatReply {
            text: "A".into(),
            calls: vec![],
        };
        replies.answered(&key, 0, 1, Some(200), Some(said));
        replies.answered(&key, 1, 3, Some(429), None);
        let mut out = Findings::default();
        let messages = [
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": "B"}),
        ];
        replies.echo(&key, 2, &messages, true, &Place::default(), &mut out);
        assert_eq!(out.kept.len(), 1);
        assert_eq!(out.kept[0].place.message, Some(1));
    }
}
