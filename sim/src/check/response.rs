//! Judging one recorded Messages API response: the SSE stream (or JSON message) a
//! provider returned must become a valid assistant message.
//!
//! Guarantee: the verdict is the engine's own. A stream goes through
//! [`super::sse`], which feeds it to a real `Session`; a message the engine accepts is
//! then held to the same per-message and pairing rules as any message of a history
//! (an open tool call is fine: the next request answers it). What the engine's event
//! model cannot represent, and errors the provider itself reported, are information,
//! never a violation: they say nothing about the runtime under test.

use super::findings::{Finding, Findings, Place, Severity};
use super::source::Located;
use super::sse::{self, ReplyError};
use crate::judge::history::HistoryCheck;
use crate::judge::pairing::End;
use std::sync::Arc;
use turnsim_core::Message;

/// Parses one response (SSE stream or JSON message) and reports what is wrong with
/// it; returns the assistant message when it is valid. `request` is the cassette
/// interaction it answered (none for a standalone recording).
pub fn judge_response(
    body: &str,
    request: Option<usize>,
    line: Option<usize>,
    out: &mut Findings,
) -> Option<Message> {
    let place = Place {
        line,
        request,
        ..Place::default()
    };
    let parsed = if body.trim_start().starts_with('{') {
        serde_json::from_str::<Message>(body).map_err(|e| ReplyError::Syntax {
            line: e.line(),
            why: format!("response body is not a message: {e}"),
        })
    } else {
        sse::parse_stream(body)
    };
    let (severity, kind, why) = match parsed {
        Ok(m) => {
            // The engine accepted it; hold it to the same rules as any message. A
            // reply may end with tool calls (the next request answers them), so an
            // open call is not judged here.
            let mut found = Findings::default();
            let mut history = HistoryCheck::new(place.clone());
            history.push(
                Located::new(Arc::new(Message::user_text("(request)")), 0),
                &mut found,
            );
            history.push(Located::new(Arc::new(m.clone()), 0), &mut found);
            history.finish(End::TurnOpen, &mut found);
            match found
                .kept
                .into_iter()
                .find(|f| f.severity == Severity::Violation)
            {
                Some(f) => (Severity::Violation, "invalid_message", f.detail),
                None => return Some(m),
            }
        }
        Err(ReplyError::Syntax { line: l, why }) => (
            Severity::Violation,
            "syntax",
            format!("line {l} of the body: {why}"),
        ),
        Err(ReplyError::Rejected { why }) => (
            Severity::Violation,
            "rejected",
            format!("the engine rejects it: {why}"),
        ),
        Err(ReplyError::Unsupported { line: l, why }) => (
            Severity::Info,
            "unsupported",
            format!("line {l} of the body: {why} is outside the engine's event model; not judged"),
        ),
        Err(ReplyError::ProviderError { line: l, why }) => (
            Severity::Info,
            "provider_error",
            format!("line {l} of the body: the provider reported {why}"),
        ),
    };
    let whose = match request {
        Some(id) => format!("response to request {id}"),
        None => "response".to_string(),
    };
    out.push(Finding::new(
        severity,
        "response",
        kind,
        place,
        format!("{whose}: {why}"),
    ));
    None
}
