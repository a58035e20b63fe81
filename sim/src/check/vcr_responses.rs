//! The OpenAI Responses API calls of a cassette (`POST …/responses`), judged as
//! `turnsim serve` judges them live.
//!
//! Guarantees:
//! - The same reading and the same rules as the server: the body through
//!   [`crate::openai::responses_request`], `item_reference`s resolved to the items
//!   they name, laid onto the judge's message model ([`crate::judge::openai::lay`]),
//!   judged by the one judge in cassette order, and reasoning items held to
//!   [`crate::judge::reasoning_kept`] against the replies the cassette recorded
//!   (where the server holds its own replies). A finding names `input[i]` as sent.
//! - A request that continues a stored response (`previous_response_id`) is judged
//!   with everything that id stands for, rebuilt from the cassette: the requests
//!   before it and the output items each recorded response holds. When the cassette
//!   holds no readable completed response for that id, the request is not judged,
//!   and says so (information), rather than judged on half a history.
//! - Each recorded response is read, JSON or SSE: a body that is not one, or a stream
//!   that never completes, is a `response` violation, as for Messages replies; a
//!   provider error (status, `error` event, `response.failed`) is information.

use super::findings::{FileReport, Finding, Place, Severity};
use super::source::InputError;
use super::vcr_exchange::Exchange;
use crate::judge::anthropic::parse_request;
use crate::judge::openai::{Origin, lay};
use crate::judge::reasoning_kept::{ReasoningOf, reasoning_lost, remember_reasoning};
use crate::judge::session::{Answered, Judge};
use crate::openai::neutral::Item;
use crate::openai::responses_request::{self, neutral_item, parse_item};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What the cassette's Responses traffic stored so far, as the server keeps it.
#[derive(Default)]
pub struct Stored {
    /// A completed response's id → its full context.
    contexts: BTreeMap<String, Vec<Item>>,
    /// Every item with an id in a completed response's context, by id.
    items: BTreeMap<String, Item>,
    reasoning_of: ReasoningOf,
    /// Reasoning findings already reported (a later request repeats the same loss).
    reported: BTreeSet<String>,
}

/// One recorded reply, read.
enum Reply {
    /// Completed (or incomplete) with an id and output items.
    Done { id: String, output: Vec<Item> },
    /// Said of the reply, with its severity; nothing to store.
    Finding(Severity, &'static str, String),
}

/// The `data:` payloads of an SSE body, in order.
pub(super) fn sse_data(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    for line in body.lines().chain(std::iter::once("")) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                out.push(data.join("\n"));
                data.clear();
            }
        } else if let Some(d) = line.strip_prefix("data:") {
            data.push(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    out
}

/// The response object a body stands for: the JSON body, or the one an SSE stream's
/// terminal event carries.
fn response_object(body: &str) -> Result<Value, Reply> {
    let syntax = |why: String| Reply::Finding(Severity::Violation, "syntax", why);
    if body.trim_start().starts_with('{') {
        return serde_json::from_str(body).map_err(|e| syntax(format!("not JSON: {e}")));
    }
    for (n, data) in sse_data(body).iter().enumerate() {
        if data.trim() == "[DONE]" {
            continue;
        }
        let event: Value = serde_json::from_str(data)
            .map_err(|e| syntax(format!("event {n} of the stream is not JSON: {e}")))?;
        match event.get("type").and_then(Value::as_str) {
            Some("response.completed" | "response.incomplete") => {
                return Ok(event.get("response").cloned().unwrap_or(Value::Null));
            }
            Some("response.failed" | "error") => {
                return Err(Reply::Finding(
                    Severity::Info,
                    "provider_error",
                    format!(
                        "the stream reports an error: {}",
                        super::findings::excerpt(data)
                    ),
                ));
            }
            _ => {}
        }
    }
    Err(Reply::Finding(
        Severity::Violation,
        "unfinished",
        "the stream ends without `response.completed` (or `response.incomplete`)".into(),
    ))
}

fn read_reply(body: &str) -> Reply {
    let object = match response_object(body) {
        Ok(o) => o,
        Err(r) => return r,
    };
    if let Some(error) = object.get("error").filter(|e| !e.is_null()) {
        return Reply::Finding(
            Severity::Info,
            "provider_error",
            format!("the response reports an error: {error}"),
        );
    }
    let Some(id) = object.get("id").and_then(Value::as_str) else {
        return Reply::Finding(
            Severity::Violation,
            "syntax",
            "the response has no `id`".into(),
        );
    };
    let items = object.get("output").and_then(Value::as_array);
    let mut output = Vec::new();
    for (i, v) in items.into_iter().flatten().enumerate() {
        match parse_item(v, &format!("output[{i}]")) {
            Ok(item) => output.push(neutral_item(&item)),
            Err(e) => {
                return Reply::Finding(Severity::Violation, "invalid_item", e.to_string());
            }
        }
    }
    Reply::Done {
        id: id.to_owned(),
        output,
    }
}

impl Stored {
    /// Judges one Responses call (`body` is its request text) and reads its response.
    pub fn judge(
        &mut self,
        judge: &mut Judge,
        ex: &Exchange,
        body: &str,
        at: &Place,
        report: &mut FileReport,
    ) -> Result<(), InputError> {
        let id = at.request.unwrap_or_default();
        let unreadable = |why: String| InputError {
            line: at.line,
            column: None,
            message: format!("interaction {id}: {why}"),
        };
        let req = responses_request::parse(body.as_bytes())
            .map_err(|e| unreadable(format!("not a Responses API request: {e}")))?;
        let info = |kind: &str, detail: String| {
            Finding::new(
                Severity::Info,
                "request",
                kind.to_owned(),
                at.clone(),
                detail,
            )
        };
        let context = match &req.previous_response_id {
            None => Vec::new(),
            Some(prev) => match self.contexts.get(prev) {
                Some(c) => c.clone(),
                None => {
                    report.findings.push(info(
                        "not_judged",
                        format!(
                            "request {id} continues {prev}, which this cassette holds no readable completed response for: not judged"
                        ),
                    ));
                    return Ok(());
                }
            },
        };
        let raw: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let thinking = raw.get("reasoning").is_some_and(Value::is_object);
        let mut conv = req.to_neutral();
        conv.resolve_references(|r| self.items.get(r).cloned());
        let laid = lay(&conv, &context, &req.tools_raw, req.stream, thinking);
        let mut parsed = parse_request(laid.body.to_string().as_bytes())
            .map_err(|e| unreadable(format!("its items could not be laid out: {e}")))?;
        // Laid out from an OpenAI body: the Messages API's own rules do not apply.
        parsed.messages_api = false;
        let mut request = parsed.view(id, &ex.headers);
        // A cassette keeps the request body as sent: its prefix is judged as bytes.
        request.prefix.bytes = crate::judge::body::prefix_of(body.as_bytes(), "instructions");
        request.line = at.line;
        request.api = crate::judge::normal::Api::Responses;
        let judged = judge.judge(&request);
        for f in judged.fresh() {
            // An empty text is valid in OpenAI's formats.
            if f.check == "empty" {
                continue;
            }
            let mut f = f.clone();
            match laid.origin(f.place.message, f.place.block) {
                Some(Origin::Sent(i)) => f.place.message = Some(i),
                Some(Origin::Context) => {
                    f.place.message = None;
                    f.detail = format!("in the context of previous_response_id: {}", f.detail);
                }
                None => {}
            }
            f.place.block = None;
            f.place.line = at.line;
            f.detail = f.detail.replace("messages.", "input.");
            report.findings.push(f);
        }
        for u in &laid.unjudged {
            report
                .findings
                .push(info("not_judged", format!("request {id}: not judged: {u}")));
        }
        for lost in reasoning_lost(&self.reasoning_of, &context, &conv) {
            if !self
                .reported
                .insert(format!("{}/{}", lost.kind, lost.excerpt))
            {
                continue;
            }
            let place = Place {
                message: lost.source,
                ..at.clone()
            };
            report.findings.push(
                Finding::new(
                    Severity::Violation,
                    "reasoning_kept",
                    lost.kind,
                    place,
                    format!("request {id}: {}", lost.detail),
                )
                .with_excerpt(&lost.excerpt),
            );
        }
        let status = ex.response.as_ref().and_then(|r| r.status);
        judge.answered(
            &judged.key,
            Answered {
                status,
                outcome: None,
                reply: None,
            },
        );
        let Some(answer) = &ex.response else {
            return Ok(());
        };
        if status.is_some_and(|s| s != 200) {
            return Ok(());
        }
        let reply = match &answer.body {
            Ok(text) if text.trim().is_empty() => return Ok(()),
            Ok(text) => read_reply(text),
            Err(why) => Reply::Finding(Severity::Info, "unsupported", format!("{why}; not read")),
        };
        *report.stats.entry("responses").or_insert(0) += 1;
        match reply {
            Reply::Done {
                id: reply_id,
                output,
            } => {
                remember_reasoning(&mut self.reasoning_of, &output);
                let mut full = context;
                full.extend(conv.entries.into_iter().map(|e| e.item));
                full.extend(output);
                for item in &full {
                    if let Some(item_id) = item.item_id() {
                        self.items.insert(item_id.to_owned(), item.clone());
                    }
                }
                self.contexts.insert(reply_id, full);
            }
            Reply::Finding(severity, kind, why) => report.findings.push(Finding::new(
                severity,
                "response",
                kind,
                at.clone(),
                format!("response to request {id}: {why}"),
            )),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_read_from_its_terminal_event() {
        let body = "event: response.created\ndata: {\"type\":\"response.created\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"output\":[{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{}\"}]}}\n\n";
        match read_reply(body) {
            Reply::Done { id, output } => {
                assert_eq!(id, "resp_1");
                assert_eq!(output.len(), 1);
            }
            Reply::Finding(_, kind, why) => panic!("{kind}: {why}"),
        }
    }

    #[test]
    fn a_stream_cut_before_it_completes_is_a_violation_and_a_failure_information() {
        let cut = "event: response.created\ndata: {\"type\":\"response.created\"}\n\n";
        assert!(matches!(
            read_reply(cut),
            Reply::Finding(Severity::Violation, "unfinished", _)
        ));
        let failed = "data: {\"type\":\"response.failed\",\"response\":{}}\n\n";
        assert!(matches!(
            read_reply(failed),
            Reply::Finding(Severity::Info, "provider_error", _)
        ));
        assert!(matches!(
            read_reply("{\"id\": 3"),
            Reply::Finding(Severity::Violation, "syntax", _)
        ));
    }
}
