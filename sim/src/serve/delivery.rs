//! Delivering a planned response as bytes: an HTTP error, a reset, a hang, a
//! non-streamed message or an SSE stream, cut where the plan says.
//!
//! Guarantee: the bytes are a pure function of the plan and the message id (padding
//! is hashed from the id, not drawn), so a recording replays byte for byte.

use super::shape::{Delivery, Shaped};
use super::*;

fn http_error(status: u16) -> (&'static str, &'static str) {
    match status {
        529 => ("overloaded_error", "Overloaded"),
        429 => (
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
        500 => ("api_error", "Internal server error"),
        400 => ("invalid_request_error", "Invalid request"),
        401 => ("authentication_error", "invalid x-api-key"),
        403 => ("permission_error", "Permission denied"),
        404 => ("not_found_error", "Not found"),
        413 => (
            "request_too_large",
            "Request exceeds the maximum allowed size",
        ),
        _ => ("api_error", "Error"),
    }
}

/// Padding the API puts before an event's closing brace: 0..16 spaces, a function of
/// the message id and the event's position (so it draws nothing).
fn padding(message_id: &str, i: usize) -> usize {
    let mut h = blake3::Hasher::new();
    h.update(message_id.as_bytes());
    h.update(&(i as u64).to_le_bytes());
    usize::from(h.finalize().as_bytes()[0] % 16)
}

/// What every delivery records before it knows how the response ends: status 200,
/// `complete`, nothing of the reply yet.
pub(super) fn first_answer(shaped: &Shaped, stream: bool) -> Answer {
    Answer {
        status: 200,
        stream,
        played: shaped.played.clone(),
        outcome: "complete".into(),
        tool_use_ids: Vec::new(),
        stop_reason: None,
        response_id: None,
        output: Vec::new(),
        reply: None,
    }
}

/// No answer at all, not even a status line: `ReplyBody::Reset` closes the connection,
/// `ReplyBody::Hang` holds it open. Both wire formats fail this way alike.
pub(super) fn unanswered(body: ReplyBody, mut answer: Answer) -> (Reply, Answer) {
    answer.status = 0;
    answer.outcome = match body {
        ReplyBody::Reset => "reset: connection closed without an answer",
        _ => "hang before headers",
    }
    .into();
    let reply = Reply {
        status: 0,
        headers: Vec::new(),
        body,
    };
    (reply, answer)
}

/// A non-streamed body with status 200: all of it, or under a cut its first half
/// before the connection closes (and the outcome says so).
pub(super) fn whole_body(
    body: Vec<u8>,
    delivery: &Delivery,
    request_id: &str,
    answer: &mut Answer,
) -> Reply {
    let mut reply = Reply::json(200, Vec::new(), request_id);
    if let Delivery::Cut { .. } = delivery {
        let half = body.len() / 2;
        answer.outcome = format!("cut after {half} of {} body bytes", body.len());
        reply.body = ReplyBody::Stream {
            parts: vec![Part {
                delay_ms: 0,
                bytes: body[..half].to_vec(),
            }],
            end: StreamEnd::Cut,
        };
    } else {
        reply.body = ReplyBody::Full(body);
    }
    reply
}

/// Cuts a stream after `keep` parts and, for a cut mid-event, adds `half` of the next
/// part's bytes; the outcome says where.
pub(super) fn cut_parts(
    parts: &mut Vec<Part>,
    keep: usize,
    half: Option<Vec<u8>>,
    answer: &mut Answer,
) {
    parts.truncate(keep);
    answer.outcome = format!("cut after {keep} events");
    if let Some(bytes) = half {
        answer.outcome.push_str(" and half of the next");
        parts.push(Part { delay_ms: 0, bytes });
    }
}

/// Turns a plan into bytes.
pub(super) fn deliver(
    shaped: &Shaped,
    meta: &MessageMeta,
    stream: bool,
    request_id: &str,
) -> (Reply, Answer) {
    let wire = to_wire_indexed(&shaped.events, meta);
    let mut answer = first_answer(shaped, stream);
    let ids_in = |events: &[(usize, WireEvent)]| -> Vec<String> {
        events
            .iter()
            .filter_map(|(_, e)| match e {
                WireEvent::BlockStart {
                    block: WireBlock::ToolUse { id, .. },
                    ..
                } => Some(id.clone()),
                _ => None,
            })
            .collect()
    };
    let stop_in = |events: &[(usize, WireEvent)]| -> Option<String> {
        events.iter().find_map(|(_, e)| match e {
            WireEvent::MessageDelta { stop_reason, .. } => Some(stop_reason.clone()),
            _ => None,
        })
    };
    let http = |status: u16, retry_after: Option<u32>, answer: &mut Answer| {
        let (kind, message) = http_error(status);
        let mut reply = Reply::json(status, error_body(kind, message, request_id), request_id);
        if let Some(s) = retry_after {
            reply.headers.push(("retry-after".into(), s.to_string()));
        }
        answer.status = status;
        answer.outcome = match retry_after {
            Some(s) => format!("status {status}, retry-after {s}"),
            None => format!("status {status}"),
        };
        reply
    };
    match shaped.delivery {
        Delivery::Http {
            status,
            retry_after,
        } => {
            let reply = http(status, retry_after, &mut answer);
            return (reply, answer);
        }
        Delivery::Reset => return unanswered(ReplyBody::Reset, answer),
        Delivery::Hang if wire.is_empty() || !stream => {
            return unanswered(ReplyBody::Hang, answer);
        }
        _ => {}
    }
    if !stream {
        let events: Vec<WireEvent> = wire.iter().map(|(_, e)| e.clone()).collect();
        if events.iter().any(|e| matches!(e, WireEvent::Error { .. })) {
            let reply = http(529, None, &mut answer);
            return (reply, answer);
        }
        let body = message_json(&events).to_string().into_bytes();
        answer.tool_use_ids = ids_in(&wire);
        answer.stop_reason = stop_in(&wire);
        let reply = whole_body(body, &shaped.delivery, request_id, &mut answer);
        return (reply, answer);
    }
    let mut parts: Vec<Part> = wire
        .iter()
        .enumerate()
        .map(|(i, (source, e))| {
            // A plan's delay belongs to the first wire event made from its event.
            let first_of_source = i == 0 || wire[i - 1].0 != *source;
            let delay_ms = if first_of_source {
                shaped.delays.get(*source).copied().unwrap_or(0)
            } else {
                0
            };
            Part {
                delay_ms,
                bytes: encode(e, padding(&meta.id, i)),
            }
        })
        .collect();
    let mut sent = wire.len();
    let end = match shaped.delivery {
        Delivery::Cut { after, mid_event } => {
            let mut keep = after.map_or(parts.len(), |a| (a as usize).min(parts.len()));
            let mut half = None;
            if mid_event {
                // Half of the next event (or, when the plan already ends at the cut,
                // of its last one).
                let target = if after.is_some() {
                    keep
                } else {
                    keep.saturating_sub(1)
                };
                if let Some(p) = parts.get(target) {
                    half = Some(p.bytes[..p.bytes.len() / 2].to_vec());
                    keep = target;
                }
            }
            sent = keep;
            cut_parts(&mut parts, keep, half, &mut answer);
            StreamEnd::Cut
        }
        Delivery::Hang => {
            answer.outcome = format!("hang after {} events", parts.len());
            StreamEnd::Hang
        }
        _ => StreamEnd::Complete,
    };
    answer.tool_use_ids = ids_in(&wire[..sent]);
    answer.stop_reason = stop_in(&wire[..sent]);
    let reply = Reply {
        status: 200,
        headers: vec![
            (
                "content-type".into(),
                "text/event-stream; charset=utf-8".into(),
            ),
            ("cache-control".into(), "no-cache".into()),
            ("request-id".into(), request_id.into()),
        ],
        body: ReplyBody::Stream { parts, end },
    };
    (reply, answer)
}
