//! The test client's wire: one HTTP/1.1 exchange, and the four request formats it
//! can speak (`--api messages|chat|responses|gemini`).
//!
//! Guarantee: the client's history is always kept in Anthropic's shape (user and
//! assistant messages, `tool_use` and `tool_result` blocks), and a format is only a
//! translation at the edge: a request body is built from that history, and a reply
//! is read back into Anthropic `content` blocks and a `stop_reason`. So every
//! planted fault behaves the same in every format, and `turnsim drive`'s OpenAI
//! paths (its history reader, `repro.py`'s replies) are tested against a client
//! whose behaviour is known. An OpenAI call's `call_id` is used as the `tool_use` id
//! as it is, so what the client sends back is exactly what it was given. A Gemini
//! call comes without an id (as Google's API sends it): the client names it, as
//! gemini-cli does, after the ledger id its command carries (else its name and
//! place), and sends that id back on the call and its `functionResponse`. Replies
//! are requested without streaming (the SSE framing is exercised by the SDK tests).

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Which API the client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Api {
    #[default]
    Messages,
    Chat,
    Responses,
    Gemini,
}

impl Api {
    pub fn parse(s: &str) -> Result<Api, String> {
        match s {
            "messages" => Ok(Api::Messages),
            "chat" => Ok(Api::Chat),
            "responses" => Ok(Api::Responses),
            "gemini" => Ok(Api::Gemini),
            other => Err(format!(
                "--api {other:?}: expected messages, chat, responses or gemini"
            )),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Api::Messages => "/v1/messages",
            Api::Chat => "/v1/chat/completions",
            Api::Responses => "/v1/responses",
            Api::Gemini => "/v1beta/models/gemini-2.5-pro:generateContent",
        }
    }
}

const SHELL_SCHEMA: &str =
    r#"{"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}"#;
const SHELL_DESCRIPTION: &str = "Run a shell command.";

/// The request body for `messages` (Anthropic-shaped) in `api`'s format.
pub fn body(api: Api, messages: &[Value]) -> Result<String, String> {
    let schema: Value = serde_json::from_str(SHELL_SCHEMA).map_err(|e| e.to_string())?;
    let v = match api {
        Api::Messages => json!({"model": "claude-sonnet-4-6", "max_tokens": 1024,
            "tools": [{"name": "bash", "description": SHELL_DESCRIPTION, "input_schema": schema}],
            "messages": messages}),
        Api::Chat => json!({"model": "gpt-5",
            "tools": [{"type": "function", "function": {"name": "bash",
                "description": SHELL_DESCRIPTION, "parameters": schema}}],
            "messages": chat_messages(messages)}),
        Api::Responses => json!({"model": "gpt-5",
            "tools": [{"type": "function", "name": "bash", "description": SHELL_DESCRIPTION,
                "parameters": schema}],
            "input": response_items(messages)}),
        Api::Gemini => json!({
            "tools": [{"functionDeclarations": [{"name": "bash",
                "description": SHELL_DESCRIPTION, "parameters": schema}]}],
            "contents": gemini_contents(messages)}),
    };
    Ok(v.to_string())
}

fn blocks(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn is(b: &Value, kind: &str) -> bool {
    str_of(b, "type") == kind
}

fn text_of(m: &Value) -> String {
    blocks(m)
        .iter()
        .filter(|b| is(b, "text"))
        .map(|b| str_of(b, "text"))
        .collect::<Vec<_>>()
        .join("")
}

fn arguments(b: &Value) -> String {
    b.get("input").map_or_else(|| "{}".into(), Value::to_string)
}

/// Chat Completions messages: a user message's results become `tool` messages
/// (before its text, as they answer the previous turn's calls).
fn chat_messages(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        let text = text_of(m);
        if str_of(m, "role") == "assistant" {
            let calls: Vec<Value> = blocks(m)
                .iter()
                .filter(|b| is(b, "tool_use"))
                .map(|b| {
                    json!({"id": str_of(b, "id"), "type": "function",
                    "function": {"name": str_of(b, "name"), "arguments": arguments(b)}})
                })
                .collect();
            let mut a = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                a["tool_calls"] = Value::Array(calls);
            }
            out.push(a);
            continue;
        }
        for b in blocks(m).iter().filter(|b| is(b, "tool_result")) {
            out.push(
                json!({"role": "tool", "tool_call_id": str_of(b, "tool_use_id"),
                "content": str_of(b, "content")}),
            );
        }
        if !text.is_empty() {
            out.push(json!({"role": "user", "content": text}));
        }
    }
    out
}

/// Responses input items, in the same order as the Chat messages.
fn response_items(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        let text = text_of(m);
        if str_of(m, "role") == "assistant" {
            if !text.is_empty() {
                out.push(json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]}));
            }
            for b in blocks(m).iter().filter(|b| is(b, "tool_use")) {
                out.push(json!({"type": "function_call", "call_id": str_of(b, "id"),
                    "name": str_of(b, "name"), "arguments": arguments(b)}));
            }
            continue;
        }
        for b in blocks(m).iter().filter(|b| is(b, "tool_result")) {
            out.push(json!({"type": "function_call_output",
                "call_id": str_of(b, "tool_use_id"), "output": str_of(b, "content")}));
        }
        if !text.is_empty() {
            out.push(json!({"role": "user", "content": text}));
        }
    }
    out
}

/// Gemini contents: a user message's results become `functionResponse` parts (named
/// after the call they answer), before its text.
fn gemini_contents(messages: &[Value]) -> Vec<Value> {
    let mut names = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for m in messages {
        let mut parts = Vec::new();
        let text = text_of(m);
        if str_of(m, "role") == "assistant" {
            if !text.is_empty() {
                parts.push(json!({"text": text}));
            }
            for b in blocks(m).iter().filter(|b| is(b, "tool_use")) {
                names.insert(str_of(b, "id").to_owned(), str_of(b, "name").to_owned());
                parts.push(
                    json!({"functionCall": {"id": str_of(b, "id"), "name": str_of(b, "name"),
                    "args": b.get("input").cloned().unwrap_or_else(|| json!({}))}}),
                );
            }
            out.push(json!({"role": "model", "parts": parts}));
            continue;
        }
        for b in blocks(m).iter().filter(|b| is(b, "tool_result")) {
            let id = str_of(b, "tool_use_id");
            let name = names.get(id).map_or("bash", String::as_str);
            parts.push(json!({"functionResponse": {"id": id, "name": name,
                "response": {"output": str_of(b, "content")}}}));
        }
        if !text.is_empty() {
            parts.push(json!({"text": text}));
        }
        if !parts.is_empty() {
            out.push(json!({"role": "user", "parts": parts}));
        }
    }
    out
}

/// The id the client gives a Gemini call that came without one: the ledger id in its
/// arguments (`toolu_…`), else its name and place in the reply.
fn gemini_call_id(call: &Value, place: usize) -> String {
    if let Some(id) = call.get("id").and_then(Value::as_str) {
        return id.to_owned();
    }
    let args = call.get("args").map(Value::to_string).unwrap_or_default();
    args.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| w.starts_with("toolu_"))
        .map_or_else(
            || format!("{}_{place}", str_of(call, "name")),
            |w| format!("gemini_{w}"),
        )
}

fn tool_use(id: &str, name: &str, args: &str) -> Value {
    let input: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// A 200 reply read into Anthropic `content` blocks and a `stop_reason` (`tool_use`
/// when the model called a tool, else `end_turn`).
pub fn read_reply(api: Api, v: &Value) -> (Value, String) {
    let mut content = Vec::new();
    match api {
        Api::Messages => {
            let stop = str_of(v, "stop_reason").to_owned();
            return (v.get("content").cloned().unwrap_or(json!([])), stop);
        }
        Api::Chat => {
            let msg = v.pointer("/choices/0/message").unwrap_or(&Value::Null);
            let text = str_of(msg, "content");
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for c in msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let f = c.get("function").unwrap_or(&Value::Null);
                content.push(tool_use(
                    str_of(c, "id"),
                    str_of(f, "name"),
                    str_of(f, "arguments"),
                ));
            }
        }
        Api::Responses => {
            for item in v
                .get("output")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match str_of(item, "type") {
                    "message" => {
                        for part in item
                            .get("content")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            if is(part, "output_text") {
                                content.push(json!({"type": "text", "text": str_of(part, "text")}));
                            }
                        }
                    }
                    "function_call" => content.push(tool_use(
                        str_of(item, "call_id"),
                        str_of(item, "name"),
                        str_of(item, "arguments"),
                    )),
                    _ => {}
                }
            }
        }
        Api::Gemini => {
            let parts = v
                .pointer("/candidates/0/content/parts")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            for (k, part) in parts.iter().enumerate() {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    content.push(json!({"type": "text", "text": text}));
                }
                if let Some(call) = part.get("functionCall") {
                    let args = call
                        .get("args")
                        .map_or_else(|| "{}".into(), Value::to_string);
                    content.push(tool_use(
                        &gemini_call_id(call, k),
                        str_of(call, "name"),
                        &args,
                    ));
                }
            }
        }
    }
    let called = content.iter().any(|b| is(b, "tool_use"));
    let stop = if called { "tool_use" } else { "end_turn" };
    (Value::Array(content), stop.to_owned())
}

/// One HTTP/1.1 exchange; `Err` for anything a retry may fix.
pub fn post(base_url: &str, api: Api, body: &[u8]) -> Result<(u16, Value, Option<u64>), String> {
    let hostport = base_url
        .strip_prefix("http://")
        .ok_or("only http:// base URLs")?
        .trim_end_matches('/');
    let mut s = TcpStream::connect(hostport).map_err(|e| e.to_string())?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(60)));
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: {hostport}\r\ncontent-type: application/json\r\nx-api-key: dummy\r\nauthorization: Bearer dummy\r\nanthropic-version: 2023-06-01\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        api.path(),
        body.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|()| s.write_all(body))
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no response head")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let rest = &raw[split + 4..];
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    let header = |name: &str| {
        head.lines().find_map(|l| {
            l.strip_prefix(&format!("{name}:"))
                .map(|v| v.trim().to_owned())
        })
    };
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        dechunk(rest).ok_or("truncated chunked body")?
    } else {
        let n: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(rest.len());
        rest.get(..n).ok_or("truncated body")?.to_vec()
    };
    let retry_after = header("retry-after").and_then(|v| v.parse().ok());
    let v = serde_json::from_slice(&body).map_err(|e| format!("body: {e}"))?;
    Ok((status, v, retry_after))
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).ok()?;
        b = &b[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}
