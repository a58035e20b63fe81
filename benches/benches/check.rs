//! `turnsim check` throughput: a Claude Code session log, the same conversation as a
//! JSON array of messages, and as a go-vcr cassette, each generated in memory from a
//! fixed pattern (no files, no randomness), read through `check_reader` as the CLI
//! reads a file.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::io::Read;
use std::sync::Arc;
use turnsim::check::{Limits, check_reader_with};

// The allocator the `turnsim` binary ships with (sim/src/main.rs), so benches time
// what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WORDS: [&str; 12] = [
    "the", "file", "read", "write", "function", "error", "value", "test", "build", "module",
    "path", "output",
];

/// `n` words of prose, varied by `seed`.
fn prose(seed: usize, n: usize) -> String {
    (0..n)
        .map(|i| WORDS[(seed * 7 + i * 5 + i / 3) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// A conversation of about `bytes` bytes: prompts, then tool loops of one to three
/// calls with results of 100 to 7,000 bytes, then an answer.
fn conversation(bytes: usize) -> Vec<Value> {
    let (mut out, mut size, mut k) = (Vec::new(), 0, 0);
    while size < bytes {
        out.push(json!({"role": "user", "content": prose(k, 5 + k % 50)}));
        for step in 0..(3 + k % 20) {
            let ids: Vec<String> = (0..1 + step % 3)
                .map(|j| format!("toolu_{:012}", k + j))
                .collect();
            k += ids.len();
            let mut blocks = vec![json!({"type": "text", "text": prose(k, 3 + k % 30)})];
            blocks.extend(ids.iter().map(|id| {
                json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": prose(k, 6)}})
            }));
            out.push(json!({"role": "assistant", "content": blocks}));
            let results: Vec<Value> = ids
                .iter()
                .enumerate()
                .map(|(j, id)| {
                    json!({"type": "tool_result", "tool_use_id": id, "content": prose(k + j, 20 + (k * 37 + j) % 1200)})
                })
                .collect();
            out.push(json!({"role": "user", "content": results}));
            size += out[out.len() - 2].to_string().len() + out[out.len() - 1].to_string().len();
        }
        out.push(json!({"role": "assistant", "content": [{"type": "text", "text": prose(k, 40)}]}));
    }
    out
}

/// The conversation as Claude Code writes it: one entry per line with its metadata,
/// an assistant message's blocks on lines of their own.
fn claude_jsonl(messages: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for (n, m) in messages.iter().enumerate() {
        let base = json!({
            "parentUuid": format!("{:08x}-aaaa-bbbb-cccc-000000000000", n),
            "isSidechain": false, "userType": "external", "cwd": "/home/user/repo",
            "sessionId": "196820da-1026-4b6f-a513-a6aae42da1a6", "version": "2.0.76",
            "gitBranch": "main", "type": m["role"],
            "uuid": format!("{:08x}-aaaa-bbbb-cccc-000000000001", n),
            "timestamp": "2026-01-08T20:53:23.476Z",
        });
        let lines: Vec<Value> = match m["content"].as_array() {
            Some(blocks) if m["role"] == "assistant" => blocks
                .iter()
                .map(|b| json!({"id": format!("msg_{n:010}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [b], "stop_reason": null, "usage": {"input_tokens": 3, "output_tokens": 12}}))
                .collect(),
            _ => vec![m.clone()],
        };
        for message in lines {
            let mut e = base.clone();
            e["message"] = message;
            out.push_str(&e.to_string());
            out.push('\n');
        }
    }
    out.into_bytes()
}

/// The conversation as a cassette: one request per model call, each carrying the
/// history so far, answered by a short SSE stream.
fn cassette(messages: &[Value]) -> Vec<u8> {
    let reply = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let mut out = String::from("---\nversion: 2\ninteractions:\n");
    for (id, end) in (1..=messages.len())
        .filter(|&i| messages[i - 1]["role"] == "user")
        .enumerate()
    {
        let body =
            json!({"model": "m", "max_tokens": 100, "stream": true, "messages": &messages[..end]});
        out.push_str(&format!(
            "- id: {id}\n  request:\n    body: {}\n    url: https://api.anthropic.com/v1/messages\n    method: POST\n  response:\n    body: |+\n",
            Value::String(body.to_string())
        ));
        for line in reply.lines() {
            out.push_str(&format!("      {line}\n"));
        }
        out.push_str("    code: 200\n");
    }
    out.into_bytes()
}

/// A reader over shared bytes, so an iteration does not copy its input first.
struct Shared(Arc<Vec<u8>>, usize);

impl Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.0[self.1..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.1 += n;
        Ok(n)
    }
}

fn bench(c: &mut Criterion) {
    let messages = conversation(4 << 20);
    let inputs = [
        ("claude_jsonl", claude_jsonl(&messages)),
        (
            "json_array",
            serde_json::to_vec_pretty(&messages).expect("serializes"),
        ),
        ("cassette", cassette(&messages[..messages.len().min(120)])),
    ];
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    for (name, bytes) in inputs {
        let bytes = Arc::new(bytes);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let r =
                    check_reader_with(name, Shared(Arc::clone(&bytes), 0), None, Limits::default())
                        .expect("checks");
                std::hint::black_box(r)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
