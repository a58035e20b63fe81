//! Writing a [`Reply`] as Chat Completions does: the streamed `chat.completion.chunk`
//! sequence ending in `data: [DONE]`, and the non-streaming `chat.completion` JSON.
//!
//! Guarantee: for a given reply the bytes are fixed and their shape follows real
//! recorded traffic, crush's go-vcr cassette of `gpt-5` (`../shared/transcripts/
//! crush-vcr-openai-gpt-5-parallel_tool_calls.yaml`, pinned by
//! `sim/tests/openai_chat_pinning.rs`): compact `data: {json}\n\n` records; chunk keys
//! `id, object, created, model, service_tier, system_fingerprint, choices` then
//! `usage: null` when `include_usage` was asked; choices without `logprobs` (as gpt-5
//! sends them); a first delta `{"role":"assistant","content":"","refusal":null}` for a
//! text reply or `{"role":"assistant","content":null}` for a call-only reply; each call
//! opening with `index, id, type, function{name, arguments:""}` and continuing with
//! `index, function{arguments}` fragments; a `delta:{}` chunk with `finish_reason`; a
//! `choices:[]` usage chunk when asked; `[DONE]`. Left out: `obfuscation` (random
//! padding, see responses_stream). Reasoning items have no place in Chat and are not
//! written. The non-streaming body has no recording here; it follows OpenAI's API
//! reference for `chat.completion`, in the same key order as the chunks.

use super::reply::{Reply, ReplyItem, Usage};
use super::sse::SseEvent;
use serde_json::{Value, json};

/// The Chat `usage` object, as the cassette's final chunk shows it.
pub fn usage_json(u: &Usage) -> Value {
    json!({
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": u.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    })
}

/// Why the reply ended: a reply that ran out of its budget is `length` even when it
/// holds calls (OpenAI's reference: `length` when the token limit was reached; a
/// call cut there may be incomplete, which `tool_calls` would hide).
fn finish_reason(reply: &Reply) -> &'static str {
    if reply.length_stop {
        "length"
    } else if reply.has_calls() {
        "tool_calls"
    } else {
        "stop"
    }
}

fn chunk(reply: &Reply, include_usage: bool, choices: Value, usage: Value) -> SseEvent {
    let mut obj = json!({
        "id": reply.id,
        "object": "chat.completion.chunk",
        "created": reply.created_at,
        "model": reply.model,
        "service_tier": "default",
        "system_fingerprint": null,
        "choices": choices,
    });
    if include_usage {
        obj["usage"] = usage;
    }
    SseEvent {
        event: None,
        data: obj.to_string(),
    }
}

fn delta_chunk(reply: &Reply, include_usage: bool, delta: Value) -> SseEvent {
    let choices = json!([{"index": 0, "delta": delta, "finish_reason": null}]);
    chunk(reply, include_usage, choices, Value::Null)
}

/// The full streamed chunk sequence, `[DONE]` included.
pub fn stream_chunks(reply: &Reply, include_usage: bool) -> Vec<SseEvent> {
    let starts_with_text = reply
        .items
        .iter()
        .find(|i| !matches!(i, ReplyItem::Reasoning { .. }))
        .is_some_and(|i| matches!(i, ReplyItem::Text { .. }));
    let first = if starts_with_text {
        json!({"role": "assistant", "content": "", "refusal": null})
    } else {
        json!({"role": "assistant", "content": null})
    };
    let mut out = vec![delta_chunk(reply, include_usage, first)];
    let mut call_index = 0usize;
    for item in &reply.items {
        match item {
            ReplyItem::Reasoning { .. } => {}
            ReplyItem::Text { fragments, .. } => {
                for frag in fragments {
                    out.push(delta_chunk(reply, include_usage, json!({"content": frag})));
                }
            }
            ReplyItem::Call {
                call_id,
                name,
                fragments,
                ..
            } => {
                let open = json!({"tool_calls": [{
                    "index": call_index, "id": call_id, "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]});
                out.push(delta_chunk(reply, include_usage, open));
                for frag in fragments.iter().filter(|f| !f.is_empty()) {
                    let more = json!({"tool_calls": [{
                        "index": call_index, "function": {"arguments": frag},
                    }]});
                    out.push(delta_chunk(reply, include_usage, more));
                }
                call_index += 1;
            }
        }
    }
    let finish = json!([{"index": 0, "delta": {}, "finish_reason": finish_reason(reply)}]);
    out.push(chunk(reply, include_usage, finish, Value::Null));
    if include_usage {
        out.push(chunk(reply, true, json!([]), usage_json(&reply.usage)));
    }
    out.push(SseEvent {
        event: None,
        data: "[DONE]".into(),
    });
    out
}

/// The non-streaming `chat.completion` body.
pub fn completion_json(reply: &Reply) -> String {
    let text: String = reply
        .items
        .iter()
        .filter(|i| matches!(i, ReplyItem::Text { .. }))
        .map(ReplyItem::joined)
        .collect();
    let has_text = reply
        .items
        .iter()
        .any(|i| matches!(i, ReplyItem::Text { .. }));
    let calls: Vec<Value> = reply
        .items
        .iter()
        .filter_map(|i| match i {
            ReplyItem::Call { call_id, name, .. } => Some(json!({
                "id": call_id, "type": "function",
                "function": {"name": name, "arguments": i.joined()},
            })),
            _ => None,
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if has_text { json!(text) } else { Value::Null },
        "refusal": null,
        "annotations": [],
    });
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": reply.id,
        "object": "chat.completion",
        "created": reply.created_at,
        "model": reply.model,
        "choices": [{
            "index": 0, "message": message, "logprobs": null,
            "finish_reason": finish_reason(reply),
        }],
        "usage": usage_json(&reply.usage),
        "service_tier": "default",
        "system_fingerprint": null,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_reply() -> Reply {
        Reply {
            id: "chatcmpl-1".into(),
            model: "gpt-5-2025-08-07".into(),
            created_at: 7,
            length_stop: false,
            items: vec![ReplyItem::Text {
                id: "msg_1".into(),
                fragments: vec!["Hi".into(), "!".into()],
            }],
            usage: Usage::default(),
        }
    }

    #[test]
    fn without_include_usage_chunks_carry_no_usage_key() {
        let chunks = stream_chunks(&text_reply(), false);
        assert_eq!(chunks.len(), 5);
        assert!(!chunks[1].data.contains("usage"));
        assert_eq!(chunks[4].data, "[DONE]");
    }

    #[test]
    fn text_reply_finishes_with_stop_and_a_usage_chunk_when_asked() {
        let chunks = stream_chunks(&text_reply(), true);
        let finish: Value = serde_json::from_str(&chunks[3].data).unwrap();
        assert_eq!(finish["choices"][0]["finish_reason"], "stop");
        let usage: Value = serde_json::from_str(&chunks[4].data).unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["total_tokens"], 0);
    }

    #[test]
    fn non_streaming_text_reply_has_content_and_no_tool_calls_key() {
        let body: Value = serde_json::from_str(&completion_json(&text_reply())).unwrap();
        assert_eq!(body["choices"][0]["message"]["content"], "Hi!");
        assert!(body["choices"][0]["message"].get("tool_calls").is_none());
    }
}
