//! Writing a [`Reply`] as the Responses API does: the streamed SSE event sequence, the
//! non-streaming JSON, and `response.failed` / `error` events.
//!
//! Guarantee: for a given reply and request echo the bytes are fixed, and their shape
//! follows real recorded traffic: charmbracelet/fantasy's go-vcr cassettes
//! `providertests/testdata/TestOpenAIResponsesCommon/openai-gpt-5/tool_streaming.yaml`
//! (real `api.openai.com` streams, read, not copied). From it: the event order
//! (`response.created`, `response.in_progress`, per item `output_item.added` … deltas …
//! `output_item.done`, then `response.completed`), every event object's key order
//! (`type` first, the rest alphabetical, which puts `sequence_number` last except before
//! `text`), the item shapes (`id, type, status, …`), the response object's key order and
//! the `usage` shape. Two things are left out on purpose: `obfuscation` (random padding
//! the API adds to deltas; no client reads it and it would break determinism) and the
//! many response-object fields that only echo sampling settings we do not model.
//! Reasoning items put `encrypted_content` between `type` and `summary`, as the
//! recorded `TestOpenAIResponsesWithSummaryThinking/openai-gpt-5/thinking-streaming.yaml`
//! stream of the same repository shows it, and only when the request's `include` asked
//! for it; summary parts stream as `reasoning_summary_part.added`, `…_text.delta`,
//! `…_text.done`, `…_part.done` with `summary_index`, as there (one delta per part).
//! Codex 0.171.0 builds items only from `response.output_item.done` and needs
//! `response.completed` (NOTES of the investigation); both are always written.

use super::reply::{Reply, ReplyItem, Usage};
use super::responses_request::ResponsesRequest;
use super::sse::SseEvent;
use serde_json::{Value, json};

/// The request fields a response object echoes back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Echo {
    pub instructions: Option<String>,
    pub previous_response_id: Option<String>,
    pub store: bool,
    pub tools: Vec<Value>,
    pub tool_choice: Option<Value>,
    pub parallel_tool_calls: bool,
    pub include_encrypted_reasoning: bool,
}

impl Echo {
    pub fn from_request(req: &ResponsesRequest) -> Self {
        Echo {
            instructions: req.instructions.clone(),
            previous_response_id: req.previous_response_id.clone(),
            // The API stores responses unless told not to.
            store: req.store.unwrap_or(true),
            tools: req.tools_raw.clone(),
            tool_choice: req.tool_choice.clone(),
            parallel_tool_calls: req.parallel_tool_calls.unwrap_or(true),
            include_encrypted_reasoning: req.wants_encrypted_reasoning(),
        }
    }
}

/// The `usage` object.
pub fn usage_json(u: &Usage) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        "total_tokens": u.input_tokens + u.output_tokens,
    })
}

fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text})
}

fn summary_part(text: &str) -> Value {
    json!({"type": "summary_text", "text": text})
}

/// An output item as it appears when finished (`output_item.done`, `output`).
pub fn item_json(item: &ReplyItem, echo: &Echo) -> Value {
    match item {
        ReplyItem::Reasoning {
            id,
            summary,
            encrypted_content,
        } => {
            let mut obj = serde_json::Map::new();
            obj.insert("id".into(), json!(id));
            obj.insert("type".into(), json!("reasoning"));
            if let (true, Some(enc)) = (echo.include_encrypted_reasoning, encrypted_content) {
                obj.insert("encrypted_content".into(), json!(enc));
            }
            let parts: Vec<Value> = summary.iter().map(|s| summary_part(s)).collect();
            obj.insert("summary".into(), Value::Array(parts));
            Value::Object(obj)
        }
        ReplyItem::Text { id, .. } => json!({
            "id": id, "type": "message", "status": "completed",
            "content": [text_part(&item.joined())], "role": "assistant",
        }),
        ReplyItem::Call {
            id, call_id, name, ..
        } => json!({
            "id": id, "type": "function_call", "status": "completed",
            "arguments": item.joined(), "call_id": call_id, "name": name,
        }),
    }
}

/// Output item `i` of `reply` as it stands when finished: as [`item_json`], except
/// that the last item of a reply stopped by its budget is `incomplete`, as the API
/// marks the message or call it was writing when `max_output_tokens` ran out (the
/// items before it finished and stay `completed`).
pub fn output_item_json(reply: &Reply, i: usize, echo: &Echo) -> Value {
    let mut v = item_json(&reply.items[i], echo);
    if reply.length_stop && i + 1 == reply.items.len() && v.get("status").is_some() {
        v["status"] = json!("incomplete");
    }
    v
}

/// An output item as announced by `output_item.added`: nothing produced yet.
fn item_started_json(item: &ReplyItem, echo: &Echo) -> Value {
    match item {
        ReplyItem::Reasoning {
            id,
            encrypted_content,
            ..
        } => item_json(
            &ReplyItem::Reasoning {
                id: id.clone(),
                summary: vec![],
                encrypted_content: encrypted_content.clone(),
            },
            echo,
        ),
        ReplyItem::Text { id, .. } => json!({
            "id": id, "type": "message", "status": "in_progress", "content": [], "role": "assistant",
        }),
        ReplyItem::Call {
            id, call_id, name, ..
        } => json!({
            "id": id, "type": "function_call", "status": "in_progress",
            "arguments": "", "call_id": call_id, "name": name,
        }),
    }
}

/// Lifecycle state of a response object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    InProgress,
    Completed,
    /// Ended by the output budget: status `incomplete`, reason `max_output_tokens`.
    Incomplete,
    Failed,
}

/// How a reply that was not cut or failed ends: `completed`, or `incomplete` when it
/// ran out of its budget (the API's `response.incomplete` with `incomplete_details:
/// {"reason": "max_output_tokens"}`, whatever items it holds, calls included).
fn end_status(reply: &Reply) -> Status {
    if reply.length_stop {
        Status::Incomplete
    } else {
        Status::Completed
    }
}

fn response_object(reply: &Reply, echo: &Echo, status: Status, error: Option<Value>) -> Value {
    let ended = matches!(status, Status::Completed | Status::Incomplete);
    let output: Vec<Value> = if ended {
        (0..reply.items.len())
            .map(|i| output_item_json(reply, i, echo))
            .collect()
    } else {
        vec![]
    };
    json!({
        "id": reply.id,
        "object": "response",
        "created_at": reply.created_at,
        "status": match status {
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Incomplete => "incomplete",
            Status::Failed => "failed",
        },
        "background": false,
        "completed_at": if status == Status::Completed { json!(reply.created_at) } else { Value::Null },
        "error": error.unwrap_or(Value::Null),
        "incomplete_details": if status == Status::Incomplete {
            json!({"reason": "max_output_tokens"})
        } else {
            Value::Null
        },
        "instructions": echo.instructions,
        "max_output_tokens": null,
        "model": reply.model,
        "output": output,
        "parallel_tool_calls": echo.parallel_tool_calls,
        "previous_response_id": echo.previous_response_id,
        "store": echo.store,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": echo.tool_choice.clone().unwrap_or_else(|| json!("auto")),
        "tools": echo.tools,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": if ended { usage_json(&reply.usage) } else { Value::Null },
        "user": null,
        "metadata": {},
    })
}

/// The non-streaming response body.
pub fn response_json(reply: &Reply, echo: &Echo) -> String {
    response_object(reply, echo, end_status(reply), None).to_string()
}

/// Numbers events as they are pushed.
struct Seq {
    events: Vec<SseEvent>,
}

impl Seq {
    /// `fields` are the event's members after `type`, alphabetical, without
    /// `sequence_number`, which is slotted into its alphabetical place.
    fn push(&mut self, kind: &str, fields: Vec<(&str, Value)>) {
        let n = self.events.len();
        let mut obj = serde_json::Map::new();
        obj.insert("type".into(), json!(kind));
        let mut placed = false;
        for (k, v) in fields {
            if !placed && k > "sequence_number" {
                obj.insert("sequence_number".into(), json!(n));
                placed = true;
            }
            obj.insert(k.into(), v);
        }
        if !placed {
            obj.insert("sequence_number".into(), json!(n));
        }
        self.events.push(SseEvent {
            event: Some(kind.to_string()),
            data: Value::Object(obj).to_string(),
        });
    }
}

fn opening(reply: &Reply, echo: &Echo) -> Seq {
    let mut seq = Seq { events: vec![] };
    let start = response_object(reply, echo, Status::InProgress, None);
    seq.push("response.created", vec![("response", start.clone())]);
    seq.push("response.in_progress", vec![("response", start)]);
    seq
}

/// The full streamed event sequence of a successful reply.
pub fn stream_events(reply: &Reply, echo: &Echo) -> Vec<SseEvent> {
    let mut seq = opening(reply, echo);
    for (i, item) in reply.items.iter().enumerate() {
        let oi = json!(i);
        seq.push(
            "response.output_item.added",
            vec![
                ("item", item_started_json(item, echo)),
                ("output_index", oi.clone()),
            ],
        );
        match item {
            ReplyItem::Reasoning { id, summary, .. } => {
                for (si, text) in summary.iter().enumerate() {
                    let common = |extra: Vec<(&'static str, Value)>| {
                        let mut f = vec![("item_id", json!(id)), ("output_index", oi.clone())];
                        f.extend(extra);
                        f.sort_by(|a, b| a.0.cmp(b.0));
                        f
                    };
                    seq.push(
                        "response.reasoning_summary_part.added",
                        common(vec![
                            ("part", summary_part("")),
                            ("summary_index", json!(si)),
                        ]),
                    );
                    seq.push(
                        "response.reasoning_summary_text.delta",
                        common(vec![("delta", json!(text)), ("summary_index", json!(si))]),
                    );
                    seq.push(
                        "response.reasoning_summary_text.done",
                        common(vec![("summary_index", json!(si)), ("text", json!(text))]),
                    );
                    seq.push(
                        "response.reasoning_summary_part.done",
                        common(vec![
                            ("part", summary_part(text)),
                            ("summary_index", json!(si)),
                        ]),
                    );
                }
            }
            ReplyItem::Text { id, fragments } => {
                let base = |extra: Vec<(&'static str, Value)>| {
                    let mut f = vec![
                        ("content_index", json!(0)),
                        ("item_id", json!(id)),
                        ("output_index", oi.clone()),
                    ];
                    f.extend(extra);
                    f.sort_by(|a, b| a.0.cmp(b.0));
                    f
                };
                seq.push(
                    "response.content_part.added",
                    base(vec![("part", text_part(""))]),
                );
                for frag in fragments {
                    seq.push(
                        "response.output_text.delta",
                        base(vec![("delta", json!(frag)), ("logprobs", json!([]))]),
                    );
                }
                let full = item.joined();
                seq.push(
                    "response.output_text.done",
                    base(vec![("logprobs", json!([])), ("text", json!(full))]),
                );
                seq.push(
                    "response.content_part.done",
                    base(vec![("part", text_part(&full))]),
                );
            }
            ReplyItem::Call { id, fragments, .. } => {
                for frag in fragments {
                    seq.push(
                        "response.function_call_arguments.delta",
                        vec![
                            ("delta", json!(frag)),
                            ("item_id", json!(id)),
                            ("output_index", oi.clone()),
                        ],
                    );
                }
                seq.push(
                    "response.function_call_arguments.done",
                    vec![
                        ("arguments", json!(item.joined())),
                        ("item_id", json!(id)),
                        ("output_index", oi.clone()),
                    ],
                );
            }
        }
        seq.push(
            "response.output_item.done",
            vec![
                ("item", output_item_json(reply, i, echo)),
                ("output_index", oi),
            ],
        );
    }
    let status = end_status(reply);
    let done = response_object(reply, echo, status, None);
    let last = if status == Status::Incomplete {
        "response.incomplete"
    } else {
        "response.completed"
    };
    seq.push(last, vec![("response", done)]);
    seq.events
}

/// A stream that fails after it started: `response.created`, `response.in_progress`,
/// then `response.failed` carrying `{code, message}` (how the API reports a server
/// error or rate limit that happens after the 200 was sent).
pub fn failed_events(reply: &Reply, echo: &Echo, code: &str, message: &str) -> Vec<SseEvent> {
    let mut seq = opening(reply, echo);
    let error = json!({"code": code, "message": message});
    let failed = response_object(reply, echo, Status::Failed, Some(error));
    seq.push("response.failed", vec![("response", failed)]);
    seq.events
}

/// A bare `error` event numbered `sequence_number`.
pub fn error_event(sequence_number: usize, code: &str, message: &str) -> SseEvent {
    let data = json!({
        "type": "error", "code": code, "message": message, "param": null,
        "sequence_number": sequence_number,
    });
    SseEvent {
        event: Some("error".into()),
        data: data.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_reply() -> Reply {
        Reply {
            id: "resp_1".into(),
            model: "gpt-5-2025-08-07".into(),
            created_at: 100,
            length_stop: false,
            items: vec![ReplyItem::Call {
                id: "fc_1".into(),
                call_id: "call_1".into(),
                name: "sh".into(),
                fragments: vec!["{\"c".into(), "\":1}".into()],
            }],
            usage: Usage::default(),
        }
    }

    #[test]
    fn call_stream_has_the_recorded_event_order() {
        let kinds: Vec<String> = stream_events(&call_reply(), &Echo::default())
            .into_iter()
            .map(|e| e.event.unwrap())
            .collect();
        assert_eq!(
            kinds,
            vec![
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
    }

    #[test]
    fn argument_delta_keys_are_type_first_then_alphabetical() {
        let ev = &stream_events(&call_reply(), &Echo::default())[3];
        assert_eq!(
            ev.data,
            r#"{"type":"response.function_call_arguments.delta","delta":"{\"c","item_id":"fc_1","output_index":0,"sequence_number":3}"#
        );
    }

    #[test]
    fn a_budget_stop_leaves_the_last_item_incomplete_in_the_stream_and_the_body() {
        let mut r = call_reply();
        r.items.insert(
            0,
            ReplyItem::Text {
                id: "msg_1".into(),
                fragments: vec!["Hi".into()],
            },
        );
        r.length_stop = true;
        let evs = stream_events(&r, &Echo::default());
        let last: Value = serde_json::from_str(&evs[evs.len() - 1].data).unwrap();
        assert_eq!(last["type"], "response.incomplete");
        let statuses: Vec<&Value> = last["response"]["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| &i["status"])
            .collect();
        assert_eq!(statuses, [&json!("completed"), &json!("incomplete")]);
        let done: Vec<Value> = evs
            .iter()
            .filter(|e| e.event.as_deref() == Some("response.output_item.done"))
            .map(|e| serde_json::from_str::<Value>(&e.data).unwrap()["item"]["status"].clone())
            .collect();
        assert_eq!(done, [json!("completed"), json!("incomplete")]);
        let body: Value = serde_json::from_str(&response_json(&r, &Echo::default())).unwrap();
        assert_eq!(body["output"][1]["status"], "incomplete");
        assert_eq!(body["output"][0]["status"], "completed");
        let whole: Value =
            serde_json::from_str(&response_json(&call_reply(), &Echo::default())).unwrap();
        assert_eq!(whole["output"][0]["status"], "completed");
    }

    #[test]
    fn encrypted_reasoning_is_written_only_when_included() {
        let item = ReplyItem::Reasoning {
            id: "rs_1".into(),
            summary: vec![],
            encrypted_content: Some("E".into()),
        };
        let plain = item_json(&item, &Echo::default()).to_string();
        assert_eq!(plain, r#"{"id":"rs_1","type":"reasoning","summary":[]}"#);
        let echo = Echo {
            include_encrypted_reasoning: true,
            ..Echo::default()
        };
        assert_eq!(
            item_json(&item, &echo).to_string(),
            r#"{"id":"rs_1","type":"reasoning","encrypted_content":"E","summary":[]}"#
        );
    }

    #[test]
    fn failed_stream_ends_with_response_failed_carrying_the_code() {
        let evs = failed_events(&call_reply(), &Echo::default(), "server_error", "boom");
        assert_eq!(evs.len(), 3);
        let last: Value = serde_json::from_str(&evs[2].data).unwrap();
        assert_eq!(last["response"]["status"], "failed");
        assert_eq!(last["response"]["error"]["code"], "server_error");
        assert_eq!(last["sequence_number"], 2);
    }
}
