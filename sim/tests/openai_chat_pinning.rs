//! Pins the Chat Completions writer against real recorded OpenAI traffic: crush's
//! go-vcr cassette of `gpt-5` with two parallel tool calls (charmbracelet/crush @
//! dfe3aa90, `internal/agent/testdata/TestCoderAgent/openai-gpt-5/
//! parallel_tool_calls.yaml`, copied unchanged into `sim/tests/data/openai/`).
//!
//! Each recorded stream is turned into a [`Reply`] (its ids, timestamp, model, fragments
//! and token counts) and written back by `chat_stream::stream_chunks`; the result must
//! equal the recording chunk for chunk once the random `obfuscation` padding is
//! removed — byte for byte for the text stream, as JSON values for the tool stream,
//! whose non-final chunks put `usage` before `choices` (the API is not consistent
//! about it; our writer always puts `choices` first, as in its text and final chunks).
//! Interaction 0 (a `gpt-4o` title request) is not compared: its chunks carry
//! `logprobs` and a fingerprint that a `gpt-5` stand-in does not send.

use serde_json::Value;
use std::path::PathBuf;
use turnsim::testing::openai::chat_request;
use turnsim::testing::openai::chat_stream::stream_chunks;
use turnsim::testing::openai::reply::{Reply, ReplyItem, Usage};

struct Interaction {
    request: String,
    response: String,
}

fn cassette() -> Vec<Interaction> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openai/crush-vcr-openai-gpt-5-parallel_tool_calls.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: Value = serde_norway::from_str(&text).unwrap();
    doc["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| Interaction {
            request: i["request"]["body"].as_str().unwrap().to_string(),
            response: i["response"]["body"].as_str().unwrap().to_string(),
        })
        .collect()
}

/// The `data:` payloads of a recorded stream.
fn records(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            r.strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data record: {r:?}"))
                .to_string()
        })
        .collect()
}

/// A recorded chunk without its trailing `"obfuscation"` member (textually, so the
/// remaining bytes are exactly the API's).
fn without_obfuscation(chunk: &str) -> String {
    match chunk.rfind(",\"obfuscation\":") {
        Some(at) => format!("{}}}", &chunk[..at]),
        None => chunk.to_string(),
    }
}

/// Rebuilds the reply a recorded stream carried.
fn reply_of(records: &[String]) -> Reply {
    let first: Value = serde_json::from_str(&records[0]).unwrap();
    let mut text: Vec<String> = Vec::new();
    let mut calls: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut usage = Usage::default();
    for rec in records.iter().filter(|r| r.as_str() != "[DONE]") {
        let v: Value = serde_json::from_str(rec).unwrap();
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            usage = Usage {
                input_tokens: u["prompt_tokens"].as_u64().unwrap(),
                cached_tokens: u["prompt_tokens_details"]["cached_tokens"]
                    .as_u64()
                    .unwrap(),
                output_tokens: u["completion_tokens"].as_u64().unwrap(),
                reasoning_tokens: u["completion_tokens_details"]["reasoning_tokens"]
                    .as_u64()
                    .unwrap(),
            };
        }
        let Some(delta) = v["choices"].get(0).map(|c| &c["delta"]) else {
            continue;
        };
        if delta.get("role").is_none()
            && let Some(t) = delta["content"].as_str()
        {
            text.push(t.to_string());
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            if let Some(id) = tc["id"].as_str() {
                let name = tc["function"]["name"].as_str().unwrap();
                calls.push((id.to_string(), name.to_string(), Vec::new()));
            } else {
                let frag = tc["function"]["arguments"].as_str().unwrap();
                calls.last_mut().unwrap().2.push(frag.to_string());
            }
        }
    }
    let mut items = Vec::new();
    if !text.is_empty() {
        items.push(ReplyItem::Text {
            id: "msg_unused_in_chat".into(),
            fragments: text,
        });
    }
    for (call_id, name, fragments) in calls {
        items.push(ReplyItem::Call {
            id: format!("fc_{call_id}"),
            call_id,
            name,
            fragments,
        });
    }
    Reply {
        id: first["id"].as_str().unwrap().to_string(),
        model: first["model"].as_str().unwrap().to_string(),
        created_at: first["created"].as_u64().unwrap(),
        length_stop: false,
        items,
        usage,
    }
}

#[test]
fn text_stream_matches_the_recording_byte_for_byte() {
    let recorded = records(&cassette()[2].response);
    let ours: Vec<String> = stream_chunks(&reply_of(&recorded), true)
        .into_iter()
        .map(|e| e.data)
        .collect();
    let expected: Vec<String> = recorded.iter().map(|r| without_obfuscation(r)).collect();
    assert_eq!(ours.len(), 15);
    assert_eq!(ours, expected);
}

#[test]
fn parallel_tool_call_stream_matches_the_recording_chunk_for_chunk() {
    let recorded = records(&cassette()[1].response);
    let ours = stream_chunks(&reply_of(&recorded), true);
    assert_eq!(ours.len(), recorded.len());
    for (i, (our, rec)) in ours.iter().zip(&recorded).enumerate() {
        if rec == "[DONE]" {
            assert_eq!(our.data, "[DONE]");
            continue;
        }
        let mut want: Value = serde_json::from_str(rec).unwrap();
        want.as_object_mut().unwrap().remove("obfuscation");
        let got: Value = serde_json::from_str(&our.data).unwrap();
        assert_eq!(got, want, "chunk {i}");
    }
}

#[test]
fn recorded_stream_shape_has_two_calls_and_a_usage_chunk() {
    let recorded = records(&cassette()[1].response);
    let reply = reply_of(&recorded);
    let names: Vec<&str> = reply
        .items
        .iter()
        .filter_map(|i| match i {
            ReplyItem::Call { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["glob", "ls"]);
    assert_eq!(reply.usage.input_tokens, 10637);
    assert_eq!(recorded.last().map(String::as_str), Some("[DONE]"));
}

#[test]
fn recorded_requests_parse_and_the_follow_up_answers_both_calls() {
    let all = cassette();
    let calls = chat_request::parse(all[1].request.as_bytes()).unwrap();
    assert_eq!(calls.tools.len(), 11);
    assert!(calls.stream && calls.include_usage);
    let follow_up = chat_request::parse(all[2].request.as_bytes())
        .unwrap()
        .to_neutral();
    assert_eq!(follow_up.call_ids().len(), 2);
    assert_eq!(follow_up.call_ids(), follow_up.result_ids());
    let title = chat_request::parse(all[0].request.as_bytes()).unwrap();
    assert!(title.tools.is_empty());
}
