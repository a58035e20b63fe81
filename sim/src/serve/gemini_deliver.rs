//! Delivering a planned response in the Gemini API's format: the simulator's events
//! read into the same [`crate::openai::reply::Reply`] the OpenAI routes use, then
//! written by [`crate::gemini::response`] as one `GenerateContentResponse` or a run of
//! SSE chunks, with the plan's fault carried out the Gemini way.
//!
//! Guarantee: the same plan gives the same fault in every format. An HTTP error is the
//! Gemini error body with its status word (429 `RESOURCE_EXHAUSTED` with
//! `retry-after`, the simulator's 529 as 503 `UNAVAILABLE`, else 500 `INTERNAL`); a
//! reset and a hang are the transport's; a natural cut ends after the chunks of the
//! items that finished (a call goes out whole in one chunk, so a call is either sent or
//! not) and before the closing chunk; a scripted cut counts this format's records; a
//! failure mid-stream ends the stream with an error record, as the API does. Bytes are
//! a pure function of the plan and the ids.

use super::delivery::{cut_parts, first_answer, unanswered, whole_body};
use super::record::Answer;
use super::shape::{Delivery, Shaped};
use super::{Part, Reply, ReplyBody, StreamEnd};
use crate::gemini::error::error_json;
use crate::gemini::response::{Meta, chunks, finish_reason, record, response_json};
use crate::openai::reply::{Reply as OaReply, ReplyItem};
use turnsim_core::StreamEvent;

/// A Gemini error reply.
pub(super) fn gemini_error(code: u16, message: &str, request_id: &str) -> Reply {
    let mut reply = Reply::json(code, error_json(code, message).into_bytes(), request_id);
    reply
        .headers
        .push(("x-request-id".into(), request_id.into()));
    reply
}

fn stream_reply(parts: Vec<Part>, end: StreamEnd, request_id: &str) -> Reply {
    Reply {
        status: 200,
        headers: vec![
            ("content-type".into(), "text/event-stream".into()),
            ("cache-control".into(), "no-cache".into()),
            ("x-request-id".into(), request_id.into()),
        ],
        body: ReplyBody::Stream { parts, end },
    }
}

/// Turns a plan into Gemini bytes.
pub(super) fn deliver_gemini(
    shaped: &Shaped,
    reply: &OaReply,
    done: &[bool],
    meta: &Meta,
    stream: bool,
    request_id: &str,
) -> (Reply, Answer) {
    let mut answer = first_answer(shaped, stream);
    let failed_midway = shaped
        .events
        .iter()
        .any(|e| matches!(e, StreamEvent::Error { .. }));
    let fail = |code: u16, retry: Option<u32>, answer: &mut Answer| {
        answer.status = code;
        answer.outcome = match retry {
            Some(s) => format!("status {code}, retry-after {s}"),
            None => format!("status {code}"),
        };
        let message = match code {
            429 => "Resource has been exhausted (e.g. check quota). (injected by turnsim)",
            503 => "The model is overloaded. Please try again later. (injected by turnsim)",
            _ => "An internal error has occurred. (injected by turnsim)",
        };
        let mut out = gemini_error(code, message, request_id);
        if let Some(s) = retry {
            out.headers.push(("retry-after".into(), s.to_string()));
        }
        out
    };
    match shaped.delivery {
        Delivery::Http {
            status,
            retry_after,
        } => {
            let (code, retry) = match status {
                429 => (429, Some(retry_after.unwrap_or(1))),
                529 | 503 => (503, retry_after),
                _ => (500, None),
            };
            return (fail(code, retry, &mut answer), answer);
        }
        Delivery::Reset => return unanswered(ReplyBody::Reset, answer),
        Delivery::Hang if shaped.events.is_empty() || !stream => {
            return unanswered(ReplyBody::Hang, answer);
        }
        _ => {}
    }
    if failed_midway && !stream {
        return (fail(500, None, &mut answer), answer);
    }
    let calls = |sent: &dyn Fn(usize) -> bool| -> Vec<String> {
        reply
            .items
            .iter()
            .enumerate()
            .filter(|(i, _)| sent(*i) && done.get(*i).copied().unwrap_or(false))
            .filter_map(|(_, item)| match item {
                ReplyItem::Call { call_id, .. } => Some(call_id.clone()),
                _ => None,
            })
            .collect()
    };
    if !stream {
        let body = response_json(reply, meta).into_bytes();
        answer.tool_use_ids = calls(&|_| true);
        answer.stop_reason = Some(finish_reason(reply).into());
        let out = whole_body(body, &shaped.delivery, request_id, &mut answer);
        return (out, answer);
    }
    let chunked = chunks(reply, meta);
    // The first chunk of an item that did not finish: a natural cut ends before it (and
    // before the closing chunk when every item finished).
    let unfinished = chunked
        .iter()
        .position(|(item, _)| item.is_some_and(|i| !done.get(i).copied().unwrap_or(true)));
    let natural = unfinished.unwrap_or(chunked.len().saturating_sub(1));
    let mut records: Vec<String> = chunked.iter().map(|(_, c)| record(c)).collect();
    if failed_midway {
        records.truncate(natural);
        let err = error_json(500, "An internal error has occurred. (injected by turnsim)");
        let err: serde_json::Value = serde_json::from_str(&err).unwrap_or_default();
        records.push(record(&err));
        answer.outcome = format!("error record after {natural} chunks");
    }
    let total_delay: u64 = shaped.delays.iter().sum();
    let each = total_delay / (records.len().max(1) as u64);
    let mut parts: Vec<Part> = records
        .into_iter()
        .map(|r| Part {
            delay_ms: each,
            bytes: r.into_bytes(),
        })
        .collect();
    let mut kept = if failed_midway {
        natural
    } else {
        chunked.len()
    };
    let end = match shaped.delivery {
        Delivery::Cut { after, mid_event } => {
            let mut keep = match after {
                Some(a) => (a as usize).min(parts.len()),
                None => natural,
            };
            let half = if mid_event {
                if after.is_none() && keep == parts.len() {
                    keep = keep.saturating_sub(1);
                }
                parts
                    .get(keep)
                    .map(|p| p.bytes[..p.bytes.len() / 2].to_vec())
            } else {
                None
            };
            cut_parts(&mut parts, keep, half, &mut answer);
            kept = keep;
            StreamEnd::Cut
        }
        Delivery::Hang => {
            parts.truncate(natural);
            answer.outcome = format!("hang after {natural} events");
            kept = 0;
            StreamEnd::Hang
        }
        _ => StreamEnd::Complete,
    };
    let sent: Vec<usize> = chunked[..kept.min(chunked.len())]
        .iter()
        .filter_map(|(i, _)| *i)
        .collect();
    answer.tool_use_ids = calls(&|i| sent.contains(&i));
    if matches!(end, StreamEnd::Complete) && !failed_midway {
        answer.stop_reason = Some(finish_reason(reply).into());
    }
    (stream_reply(parts, end, request_id), answer)
}
