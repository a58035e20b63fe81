//! Delivering a planned response in OpenAI's formats: the simulator's events read into
//! an [`openai::reply::Reply`], then written as a Responses event stream or JSON, or as
//! Chat Completions chunks or JSON, with the plan's fault carried out in that format.
//!
//! Guarantee: the same plan gives the same fault in every format. An HTTP error is
//! OpenAI's error body and status (a 429 always with `retry-after`, which Codex needs
//! before it retries; the simulator's 529 is OpenAI's 503); a reset and a hang are the
//! transport's; a cut keeps what the plan streamed before its reset — a call cut inside
//! its arguments ends inside them, a reply whose items all finished ends after the last
//! `output_item.done` and before `response.completed` (Chat: before the finish chunk),
//! and a scripted cut counts this format's own SSE records. A `max_tokens` stop stays
//! a length stop with its calls (Chat `finish_reason: "length"`, Responses status
//! `incomplete` for `max_output_tokens`), as the same stop is `max_tokens` on
//! `/v1/messages`: one script, one reply, in every format. Bytes are a pure function
//! of the plan and the ids, as for Messages.

use super::delivery::{cut_parts, first_answer, unanswered, whole_body};
use super::record::Answer;
use super::shape::{Delivery, Shaped};
use super::{Part, Reply, ReplyBody, StreamEnd};
use crate::openai::api_error::{ApiFailure, ErrorResponse, error_response};
use crate::openai::reply::{Reply as OaReply, ReplyItem, Usage};
use crate::openai::responses_stream::{self, Echo};
use crate::openai::sse::SseEvent;
use crate::openai::{chat_stream, reply::split_fragments};
use turnsim_core::{BlockStart, StopReason, StreamEvent};

/// Which OpenAI format to write.
pub(super) enum Format<'a> {
    Responses(&'a Echo),
    Chat { include_usage: bool },
}

/// An OpenAI error response as the transport sends it.
pub(super) fn error_reply(e: &ErrorResponse, request_id: &str) -> Reply {
    let mut reply = Reply::json(e.status, e.body.clone().into_bytes(), request_id);
    reply
        .headers
        .push(("x-request-id".into(), request_id.into()));
    reply.headers.extend(e.headers.iter().cloned());
    reply
}

/// The reply `id` the plan's events stand for (item ids made from `item_tag`), and for each item whether its block
/// finished (a cut plan ends inside its last one).
pub(super) fn reply_from(
    events: &[StreamEvent],
    id: &str,
    item_tag: &str,
    model: &str,
    input_tokens: u64,
) -> (OaReply, Vec<bool>) {
    let mut items: Vec<ReplyItem> = Vec::new();
    let mut done: Vec<bool> = Vec::new();
    let mut slot: Vec<(usize, usize)> = Vec::new();
    let mut output_tokens = 0;
    let mut length_stop = false;
    let find = |slot: &[(usize, usize)], index: usize| {
        slot.iter()
            .rev()
            .find(|(b, _)| *b == index)
            .map(|(_, i)| *i)
    };
    for e in events {
        match e {
            StreamEvent::BlockStart { index, block } => {
                let n = items.len();
                let item = match block {
                    BlockStart::Text => ReplyItem::Text {
                        id: format!("msg_{item_tag}_{n}"),
                        fragments: Vec::new(),
                    },
                    BlockStart::Thinking | BlockStart::RedactedThinking { .. } => {
                        ReplyItem::Reasoning {
                            id: format!("rs_{item_tag}_{n}"),
                            summary: Vec::new(),
                            encrypted_content: Some(format!("turnsim-reasoning-{item_tag}-{n}")),
                        }
                    }
                    BlockStart::ToolUse { id: tool_id, name } => {
                        let rest = tool_id.trim_start_matches("toolu_");
                        ReplyItem::Call {
                            id: format!("fc_{rest}"),
                            call_id: format!("call_{rest}"),
                            name: name.clone(),
                            fragments: Vec::new(),
                        }
                    }
                };
                items.push(item);
                done.push(false);
                slot.push((*index, n));
            }
            StreamEvent::TextDelta { index, text } => {
                if let Some(ReplyItem::Text { fragments, .. }) =
                    find(&slot, *index).and_then(|i| items.get_mut(i))
                {
                    fragments.extend(split_fragments(text, 24));
                }
            }
            StreamEvent::ThinkingDelta { index, thinking } => {
                if let Some(ReplyItem::Reasoning { summary, .. }) =
                    find(&slot, *index).and_then(|i| items.get_mut(i))
                {
                    match summary.last_mut() {
                        Some(s) => s.push_str(thinking),
                        None => summary.push(thinking.clone()),
                    }
                }
            }
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                if let Some(ReplyItem::Call { fragments, .. }) =
                    find(&slot, *index).and_then(|i| items.get_mut(i))
                {
                    fragments.push(partial_json.clone());
                }
            }
            StreamEvent::BlockStop { index } => {
                if let Some(i) = find(&slot, *index) {
                    done[i] = true;
                }
            }
            StreamEvent::MessageDelta { usage, stop_reason } => {
                output_tokens = usage.output_tokens;
                length_stop = *stop_reason == StopReason::MaxTokens;
            }
            _ => {}
        }
    }
    let reply = OaReply {
        id: id.to_owned(),
        model: model.to_owned(),
        created_at: 1_700_000_000,
        length_stop,
        items,
        usage: Usage {
            input_tokens,
            cached_tokens: 0,
            output_tokens,
            reasoning_tokens: 0,
        },
    };
    (reply, done)
}

fn stream_reply(parts: Vec<Part>, end: StreamEnd, request_id: &str) -> Reply {
    Reply {
        status: 200,
        headers: vec![
            (
                "content-type".into(),
                "text/event-stream; charset=utf-8".into(),
            ),
            ("cache-control".into(), "no-cache".into()),
            ("x-request-id".into(), request_id.into()),
        ],
        body: ReplyBody::Stream { parts, end },
    }
}

/// Where a plan cut by its reset ends in `events`: inside the last item when it did
/// not finish (before its first `…done` record), else just before the completion.
fn natural_cut(events: &[SseEvent], reply: &OaReply, done: &[bool], chat: bool) -> usize {
    let finish_at = if chat {
        events
            .iter()
            .position(|e| e.data.contains("\"finish_reason\":\"") || e.data == "[DONE]")
            .unwrap_or(events.len())
    } else {
        events.len().saturating_sub(1)
    };
    let unfinished = done.last() == Some(&false);
    match (unfinished, reply.items.last(), chat) {
        (true, Some(last), false) => {
            let id = match last {
                ReplyItem::Reasoning { id, .. }
                | ReplyItem::Text { id, .. }
                | ReplyItem::Call { id, .. } => id,
            };
            let needle = format!("\"item_id\":\"{id}\"");
            events
                .iter()
                .position(|e| {
                    let kind = e.event.as_deref().unwrap_or("");
                    (kind.ends_with(".done") && e.data.contains(&needle))
                        || (kind == "response.output_item.done" && e.data.contains(id.as_str()))
                })
                .unwrap_or(finish_at)
        }
        _ => finish_at,
    }
}

/// Turns a plan into OpenAI bytes.
pub(super) fn deliver_openai(
    shaped: &Shaped,
    reply: &OaReply,
    done: &[bool],
    format: &Format<'_>,
    stream: bool,
    request_id: &str,
) -> (Reply, Answer) {
    let mut answer = first_answer(shaped, stream);
    let failed_midway = shaped
        .events
        .iter()
        .any(|e| matches!(e, StreamEvent::Error { .. }));
    let http = |failure: ApiFailure, status: u16, retry: Option<u32>, answer: &mut Answer| {
        answer.status = status;
        answer.outcome = match retry {
            Some(s) => format!("status {status}, retry-after {s}"),
            None => format!("status {status}"),
        };
        error_reply(&error_response(&failure), request_id)
    };
    match shaped.delivery {
        Delivery::Http {
            status,
            retry_after,
        } => {
            let (failure, status, retry) = match status {
                429 => {
                    let s = retry_after.unwrap_or(1);
                    let ms = Some(u64::from(s) * 1000);
                    (ApiFailure::RateLimited { retry_after_ms: ms }, 429, Some(s))
                }
                529 | 503 => (
                    ApiFailure::Overloaded {
                        retry_after_ms: retry_after.map(|s| u64::from(s) * 1000),
                    },
                    503,
                    retry_after,
                ),
                _ => (ApiFailure::ServerError, 500, None),
            };
            return (http(failure, status, retry, &mut answer), answer);
        }
        Delivery::Reset => return unanswered(ReplyBody::Reset, answer),
        Delivery::Hang if shaped.events.is_empty() || !stream => {
            return unanswered(ReplyBody::Hang, answer);
        }
        _ => {}
    }
    if failed_midway && !stream {
        let reply = http(ApiFailure::ServerError, 500, None, &mut answer);
        return (reply, answer);
    }
    let calls = |n_items: usize| -> Vec<String> {
        reply
            .items
            .iter()
            .take(n_items)
            .zip(done)
            .filter(|(_, d)| **d)
            .filter_map(|(i, _)| match i {
                ReplyItem::Call { call_id, .. } => Some(call_id.clone()),
                _ => None,
            })
            .collect()
    };
    // How the reply ended, in this format's words: a budget stop is a length stop
    // even when the reply holds calls, as the APIs report it.
    let stop = match (format, reply.length_stop) {
        (Format::Chat { .. }, true) => "length",
        (Format::Responses(_), true) => "max_output_tokens",
        _ if reply.has_calls() => "tool_calls",
        _ => "stop",
    };
    if !stream {
        let body = match format {
            Format::Responses(echo) => responses_stream::response_json(reply, echo),
            Format::Chat { .. } => chat_stream::completion_json(reply),
        }
        .into_bytes();
        answer.tool_use_ids = calls(reply.items.len());
        answer.stop_reason = Some(stop.into());
        let out = whole_body(body, &shaped.delivery, request_id, &mut answer);
        return (out, answer);
    }
    let chat = matches!(format, Format::Chat { .. });
    let mut events = match format {
        Format::Responses(echo) if failed_midway => {
            responses_stream::failed_events(reply, echo, "server_error", "injected by turnsim")
        }
        Format::Responses(echo) => responses_stream::stream_events(reply, echo),
        Format::Chat { include_usage } => chat_stream::stream_chunks(reply, *include_usage),
    };
    if failed_midway && chat {
        // Chat has no failure event: the API ends the stream with an error record.
        let keep = natural_cut(&events, reply, done, true);
        events.truncate(keep);
        events.push(SseEvent {
            event: None,
            data: r#"{"error":{"message":"The server had an error while processing your request (injected by turnsim).","type":"server_error","param":null,"code":null}}"#.into(),
        });
        answer.outcome = format!("error record after {keep} chunks");
    } else if failed_midway {
        answer.outcome = "response.failed".into();
    }
    let total_delay: u64 = shaped.delays.iter().sum();
    let each = total_delay / (events.len().max(1) as u64);
    let mut parts: Vec<Part> = events
        .iter()
        .map(|e| Part {
            delay_ms: each,
            bytes: e.encode().into_bytes(),
        })
        .collect();
    let mut items_sent = reply.items.len();
    let end = match shaped.delivery {
        Delivery::Cut { after, mid_event } => {
            let mut keep = match after {
                Some(a) => (a as usize).min(parts.len()),
                None => natural_cut(&events, reply, done, chat),
            };
            let half = if mid_event {
                let target = if after.is_none() && keep == parts.len() {
                    keep.saturating_sub(1)
                } else {
                    keep
                };
                keep = target;
                parts
                    .get(target)
                    .map(|p| p.bytes[..p.bytes.len() / 2].to_vec())
            } else {
                None
            };
            cut_parts(&mut parts, keep, half, &mut answer);
            // Items whose finishing record went out before the cut.
            items_sent = (0..reply.items.len())
                .take_while(|i| {
                    let marker = if chat {
                        "\"finish_reason\":\"".to_owned()
                    } else {
                        format!("\"output_index\":{i},\"sequence_number\"")
                    };
                    events[..keep].iter().any(|e| {
                        e.data.contains(&marker)
                            && (chat || e.event.as_deref() == Some("response.output_item.done"))
                    })
                })
                .count();
            StreamEnd::Cut
        }
        Delivery::Hang => {
            // What the plan streamed before it hangs: never a completion.
            let keep = natural_cut(&events, reply, done, chat);
            parts.truncate(keep);
            answer.outcome = format!("hang after {keep} events");
            items_sent = 0;
            StreamEnd::Hang
        }
        _ => StreamEnd::Complete,
    };
    answer.tool_use_ids = calls(items_sent);
    if matches!(end, StreamEnd::Complete) && !failed_midway {
        answer.stop_reason = Some(stop.into());
    }
    (stream_reply(parts, end, request_id), answer)
}
