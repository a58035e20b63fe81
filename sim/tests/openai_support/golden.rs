//! The replies behind the golden files in `sim/tests/data/openai/golden/`, shared by
//! the pinning tests. Contents are ours; shapes are cited in the writer modules.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::path::PathBuf;
use turnsim::testing::openai::api_error::{ApiFailure, error_response};
use turnsim::testing::openai::reply::{Reply, ReplyItem, Usage, split_fragments};
use turnsim::testing::openai::responses_stream::{
    Echo, failed_events, response_json, stream_events,
};
use turnsim::testing::openai::sse::encode_all;
use turnsim::testing::openai::{chat_stream, models, responses_request};

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/openai/golden")
}

fn usage() -> Usage {
    Usage {
        input_tokens: 120,
        cached_tokens: 64,
        output_tokens: 30,
        reasoning_tokens: 16,
    }
}

/// A reasoning item then one shell call, its arguments in three fragments.
pub fn call_reply() -> Reply {
    Reply {
        id: "resp_ts0000000000000001".into(),
        model: "gpt-5-2025-08-07".into(),
        created_at: 1_800_000_000,
        length_stop: false,
        items: vec![
            ReplyItem::Reasoning {
                id: "rs_ts0000000000000001".into(),
                summary: vec![],
                encrypted_content: Some("ts-encrypted-0001".into()),
            },
            ReplyItem::Call {
                id: "fc_ts0000000000000001".into(),
                call_id: "call_ts0000000000000001".into(),
                name: "exec_command".into(),
                fragments: vec!["{\"cmd\":".into(), "\"echo hi".into(), "\"}".into()],
            },
        ],
        usage: usage(),
    }
}

/// A reasoning item with one summary, then a text answer in three fragments.
pub fn text_reply() -> Reply {
    Reply {
        id: "resp_ts0000000000000002".into(),
        model: "gpt-5-2025-08-07".into(),
        created_at: 1_800_000_001,
        length_stop: false,
        items: vec![
            ReplyItem::Reasoning {
                id: "rs_ts0000000000000002".into(),
                summary: vec!["**Checking** the output".into()],
                encrypted_content: Some("ts-encrypted-0002".into()),
            },
            ReplyItem::Text {
                id: "msg_ts0000000000000002".into(),
                fragments: split_fragments("The command printed hi — done.", 12),
            },
        ],
        usage: usage(),
    }
}

/// Two parallel calls (Chat's shape in crush's cassette).
pub fn parallel_reply() -> Reply {
    Reply {
        id: "chatcmpl-ts0000000000000003".into(),
        model: "gpt-5-2025-08-07".into(),
        created_at: 1_800_000_002,
        length_stop: false,
        items: vec![
            ReplyItem::Call {
                id: "fc_a".into(),
                call_id: "call_ts000000000000000a".into(),
                name: "run_shell".into(),
                fragments: split_fragments("{\"command\":\"echo a\"}", 5),
            },
            ReplyItem::Call {
                id: "fc_b".into(),
                call_id: "call_ts000000000000000b".into(),
                name: "run_shell".into(),
                fragments: split_fragments("{\"command\":\"echo b\"}", 5),
            },
        ],
        usage: usage(),
    }
}

/// The echo of a Codex-like request: one function tool, `store:false`, encrypted
/// reasoning included.
pub fn responses_echo() -> Echo {
    let body = json!({
        "model": "gpt-5", "stream": true, "input": "run it",
        "tools": [{"type": "function", "name": "exec_command", "description": "Run a command",
                   "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                                  "required": ["cmd"]}, "strict": false}],
        "tool_choice": "auto", "parallel_tool_calls": true, "store": false,
        "include": ["reasoning.encrypted_content"],
    });
    let req = responses_request::parse(body.to_string().as_bytes()).unwrap();
    Echo::from_request(&req)
}

fn errors() -> String {
    let failures = [
        (
            "bad_request",
            ApiFailure::BadRequest {
                message: "`input[1].call_id`: missing".into(),
                param: Some("input[1].call_id".into()),
                code: None,
            },
        ),
        ("unauthorized", ApiFailure::Unauthorized),
        (
            "model_not_found",
            ApiFailure::ModelNotFound {
                model: "gpt-nope".into(),
            },
        ),
        (
            "rate_limited",
            ApiFailure::RateLimited {
                retry_after_ms: Some(200),
            },
        ),
        ("quota", ApiFailure::QuotaExceeded),
        ("server_error", ApiFailure::ServerError),
        (
            "overloaded",
            ApiFailure::Overloaded {
                retry_after_ms: Some(100),
            },
        ),
    ];
    let list: Vec<Value> = failures
        .iter()
        .map(|(name, f)| {
            let r = error_response(f);
            let headers: serde_json::Map<String, Value> = r
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            json!({"name": name, "status": r.status, "headers": headers, "body": r.body})
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&list).unwrap();
    out.push('\n');
    out
}

/// Every golden file: name and the exact bytes our writers produce.
pub fn all_goldens() -> Vec<(&'static str, String)> {
    let echo = responses_echo();
    vec![
        (
            "responses-tool-stream.sse",
            encode_all(&stream_events(&call_reply(), &echo)),
        ),
        (
            "responses-text-stream.sse",
            encode_all(&stream_events(&text_reply(), &echo)),
        ),
        ("responses-text.json", response_json(&text_reply(), &echo)),
        ("responses-tool.json", response_json(&call_reply(), &echo)),
        (
            "responses-failed-stream.sse",
            encode_all(&failed_events(
                &call_reply(),
                &echo,
                "server_error",
                "injected failure",
            )),
        ),
        (
            "chat-tool-stream.sse",
            encode_all(&chat_stream::stream_chunks(&parallel_reply(), true)),
        ),
        (
            "chat-text-stream.sse",
            encode_all(&chat_stream::stream_chunks(&text_reply(), false)),
        ),
        (
            "chat-tool.json",
            chat_stream::completion_json(&parallel_reply()),
        ),
        ("errors.json", errors()),
        ("models.json", models::models_json(&["gpt-5", "gpt-5-mini"])),
    ]
}
