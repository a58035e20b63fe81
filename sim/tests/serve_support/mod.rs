//! Shared by the `serve_*` tests: a server on an ephemeral loopback port, and a small
//! HTTP/1.1 client written on a bare `TcpStream`, so the tests see the exact bytes on
//! the wire (chunk framing included: a cut body is one without the final chunk).
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use turnsim::serve::{ServeConfig, Verdict};
use turnsim::testing::serve::http::{ServeHandle, spawn};
use turnsim::testing::serve::script::{Script, parse_serve_script};
use turnsim::testing::serve::sse::{WireEvent, message_json, parse_event};

static DIRS: AtomicU32 = AtomicU32::new(0);

/// A fresh, empty directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "turnsim-serve-test-{}-{}-{name}",
        std::process::id(),
        DIRS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scratch")).expect("temp dir");
    dir
}

/// A server for `script` with its workspace in a fresh directory.
pub fn start(script: Script, name: &str) -> (ServeHandle, PathBuf) {
    start_with(script, name, |_| {})
}

pub fn start_with(
    script: Script,
    name: &str,
    tweak: impl FnOnce(&mut ServeConfig),
) -> (ServeHandle, PathBuf) {
    let dir = temp_dir(name);
    let mut config = ServeConfig::new(script, &dir);
    config.workspace.max_sleep_ms = 100;
    config.hang_limit_ms = 3_000;
    tweak(&mut config);
    let handle = spawn(config, 0).expect("server starts on an ephemeral port");
    (handle, dir)
}

/// A serve script from its steps (JSON array text), seed 1, no seeded faults.
pub fn script(steps: &str) -> Script {
    let text = format!(
        r#"{{"format": "turnsim-serve-script", "version": 1, "seed": 1, "steps": {steps}}}"#
    );
    parse_serve_script(&text, "test").expect("test script parses")
}

/// What came back, as bytes on the wire.
#[derive(Debug, Default)]
pub struct Raw {
    /// 0 when no status line arrived.
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// The body ended properly: the final zero-length chunk, or `content-length` bytes.
    pub complete: bool,
    pub chunked: bool,
    /// The read timed out before the server closed.
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Raw {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The SSE events of a streamed body (a trailing partial event is left out).
    pub fn events(&self) -> Vec<WireEvent> {
        sse_events(&self.text())
    }
}

pub fn sse_events(text: &str) -> Vec<WireEvent> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(end) = rest.find("\n\n") {
        if let Some((e, _)) = parse_event(&rest[..end + 1]) {
            out.push(e);
        }
        rest = &rest[end + 2..];
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Sends one request with `connection: close` and reads until the server closes or
/// `timeout` passes without a byte.
pub fn send(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Raw {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).expect("connect to the server");
    s.set_read_timeout(Some(timeout)).expect("read timeout");
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write head");
    s.write_all(body).expect("write body");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut timed_out = false;
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                timed_out = true;
                break;
            }
            Err(_) => break,
        }
    }
    let mut raw = Raw {
        timed_out,
        elapsed: started.elapsed(),
        ..Raw::default()
    };
    let Some(end) = find(&buf, b"\r\n\r\n") else {
        return raw;
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    raw.status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    raw.headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &buf[end + 4..];
    raw.chunked = raw
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    if raw.chunked {
        let mut at = 0;
        while let Some(eol) = find(&rest[at..], b"\r\n") {
            let size_text = String::from_utf8_lossy(&rest[at..at + eol]).into_owned();
            let Ok(size) = usize::from_str_radix(size_text.trim(), 16) else {
                break;
            };
            at += eol + 2;
            if size == 0 {
                raw.complete = true;
                break;
            }
            let avail = (rest.len() - at).min(size);
            raw.body.extend_from_slice(&rest[at..at + avail]);
            if avail < size {
                break;
            }
            at += size + 2;
        }
    } else {
        let len: usize = raw
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(rest.len());
        raw.body = rest[..len.min(rest.len())].to_vec();
        raw.complete = rest.len() >= len;
    }
    raw
}

/// `POST /v1/messages` with a JSON body.
pub fn post(addr: SocketAddr, body: &Value) -> Raw {
    post_with(addr, body, &[])
}

pub fn post_with(addr: SocketAddr, body: &Value, headers: &[(&str, &str)]) -> Raw {
    let mut all = vec![
        ("content-type", "application/json"),
        ("anthropic-version", "2023-06-01"),
        ("x-api-key", "sk-test-not-a-secret"),
    ];
    all.extend_from_slice(headers);
    send(
        addr,
        "POST",
        "/v1/messages?beta=true",
        &all,
        body.to_string().as_bytes(),
        Duration::from_secs(20),
    )
}

/// A shell tool and a file tool, as a client declares them.
pub fn client_tools() -> Value {
    json!([
        {"name": "bash", "description": "Run a shell command",
         "input_schema": {"type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
            "required": ["command"]}},
        {"name": "read_file", "description": "Read a file",
         "input_schema": {"type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"]},
         "cache_control": {"type": "ephemeral"}}
    ])
}

/// The assistant message a response carries, as a client would send it back.
pub fn assistant_message(raw: &Raw, stream: bool) -> Value {
    let message = if stream {
        message_json(&raw.events())
    } else {
        raw.json()
    };
    let content: Vec<Value> = message["content"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|b| match b["type"].as_str() {
            Some("tool_use") => {
                json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["input"]})
            }
            _ => b,
        })
        .collect();
    json!({"role": "assistant", "content": content})
}

/// Runs the tool calls of an assistant message: `bash` through `sh -c`, anything else
/// answered with an error. Returns the user message of tool results.
pub fn run_tools(assistant: &Value) -> Value {
    let mut results = Vec::new();
    for b in assistant["content"].as_array().into_iter().flatten() {
        if b["type"] != "tool_use" {
            continue;
        }
        let id = b["id"].clone();
        let (content, is_error) = match (b["name"].as_str(), b["input"]["command"].as_str()) {
            (Some("bash"), Some(cmd)) => {
                match std::process::Command::new("sh").arg("-c").arg(cmd).output() {
                    Ok(o) => (
                        String::from_utf8_lossy(&o.stdout).trim().to_owned(),
                        !o.status.success(),
                    ),
                    Err(e) => (format!("cannot run sh: {e}"), true),
                }
            }
            (name, _) => (format!("no such tool: {name:?}"), true),
        };
        let content = if content.is_empty() {
            "(no output)".to_owned()
        } else {
            content
        };
        results.push(json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error}));
    }
    json!({"role": "user", "content": results})
}

/// A request body of the loop so far.
pub fn body(messages: &[Value], stream: bool) -> Value {
    json!({
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a test agent.", "cache_control": {"type": "ephemeral"}}],
        "tools": client_tools(),
        "messages": messages,
    })
}

/// The outcome of [`tool_loop`].
pub struct LoopRun {
    pub messages: Vec<Value>,
    pub requests: usize,
    pub stop_reason: String,
}

/// A well-behaved client: send, run the tools, send the results, until the model
/// stops asking for tools (or `max` requests). `max_tokens` gets a "continue".
pub fn tool_loop(addr: SocketAddr, stream: bool, prompt: &str, max: usize) -> LoopRun {
    let mut messages = vec![json!({"role": "user", "content": prompt})];
    let mut stop_reason = String::new();
    let mut requests = 0;
    while requests < max {
        let raw = post(addr, &body(&messages, stream));
        requests += 1;
        assert_eq!(raw.status, 200, "request {requests}: {}", raw.text());
        assert!(raw.complete, "request {requests}: body cut short");
        let assistant = assistant_message(&raw, stream);
        stop_reason = if stream {
            message_json(&raw.events())["stop_reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        } else {
            raw.json()["stop_reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        messages.push(assistant.clone());
        match stop_reason.as_str() {
            "tool_use" => messages.push(run_tools(&assistant)),
            "max_tokens" => messages.push(json!({"role": "user", "content": "Please continue."})),
            _ => break,
        }
    }
    LoopRun {
        messages,
        requests,
        stop_reason,
    }
}

/// Every violation of every verdict, one line each.
pub fn violations(verdicts: &[Verdict]) -> Vec<String> {
    verdicts.iter().flat_map(Verdict::lines).collect()
}

/// `POST path` with a JSON body and an API key header, as an OpenAI or Gemini client sends it.
pub fn post_to(addr: SocketAddr, path: &str, body: &Value) -> Raw {
    send(
        addr,
        "POST",
        path,
        &[
            ("content-type", "application/json"),
            ("authorization", "Bearer dummy"),
        ],
        body.to_string().as_bytes(),
        Duration::from_secs(10),
    )
}

/// The `data:` payloads of an SSE body (complete records only; `[DONE]` left out).
pub fn data(raw: &Raw) -> Vec<Value> {
    raw.text()
        .split("\n\n")
        .filter_map(|rec| rec.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}
