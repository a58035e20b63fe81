//! Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) judged as
//! one conversation: every `response_item` line read with the Responses API's own item
//! reader, laid onto the judge's message model like a request, and judged by the same
//! history rules.
//!
//! Guarantee: no line is skipped silently. A `response_item` whose payload is not a
//! valid item is an error naming its line; other line types (`event_msg`,
//! `turn_context`, …) are counted, and `session_meta` (the base instructions, which
//! no history rule reads) is passed over. A `compacted` line starts a new window, as
//! a compaction does in a Claude Code log. A rollout is a log, not a request: a call
//! left without an output is information, never a violation, because Codex writes to
//! the rollout only what it received and ran — after SIGTERM the rollout ends with the
//! call (the shell was killed), and on resume Codex sends a synthesised `"aborted"`
//! output that it never writes back, so the rollout alone cannot tell a client bug from
//! that repair; the requests themselves (`serve --record`) are what to judge for it.
//!
//! Bounded memory: a line longer than the element limit is refused by number before
//! it is all read, and a window is judged as its items arrive (one laid message held),
//! so a rollout of any length needs the memory of its longest line.

use super::source::{InputError, Limits, read_line_capped, utf8};
use crate::judge::finding::{FileReport, Findings, Place, Severity};
use crate::judge::history::HistoryCheck;
use crate::judge::openai::{Layer, Origin};
use crate::judge::pairing::End;
use crate::judge::view::Located;
use crate::openai::neutral::Entry;
use crate::openai::responses_request::{neutral_item, parse_logged_item};
use serde_json::Value;
use std::io::BufRead;
use std::sync::Arc;
use turnsim_core::Message;

/// Judges one `POST /v1/responses` body read from a file: its `input` items are a
/// request that was sent, so a call without its output is a violation there. A finding's
/// line is the `input` index.
pub fn check_responses_request(text: &str, report: &mut FileReport) -> Result<(), InputError> {
    let req = crate::openai::responses_request::parse(text.as_bytes())
        .map_err(|e| InputError::whole(e.to_string()))?;
    let conv = req.to_neutral();
    let mut raw = Findings::default();
    let n = judge_conversation(conv.entries, 0, End::Violation, &mut raw)?;
    for mut f in raw.kept {
        // What a previous response stands for is not in the file: an output whose call
        // is there cannot be judged from here.
        if req.previous_response_id.is_some() && f.check == "pairing" {
            f.severity = Severity::Info;
        }
        report.findings.push(f);
    }
    report.stats.insert("input_items", req.input.len());
    report.stats.insert("messages", n);
    if let Some(id) = req.previous_response_id {
        report.findings.push(crate::judge::finding::Finding::new(
            Severity::Info,
            "pairing",
            "previous_response_id",
            Place::default(),
            format!("continues {id}: the context it stands for is not in this file, so calls answered there are not judged"),
        ));
    }
    Ok(())
}

/// One conversation judged as its items arrive: each item laid onto the judge's
/// message model ([`Layer`]), each completed message read as the Messages API reads
/// it and pushed into the history rules, so a rollout's window is never held whole.
struct WindowJudge {
    layer: Layer,
    check: HistoryCheck,
    /// Laid messages so far (a `system` entry counts: findings name laid indices).
    laid: usize,
    /// User and assistant messages judged.
    messages: usize,
    raw: Findings,
}

impl WindowJudge {
    fn new(window: usize) -> WindowJudge {
        let place = Place {
            window: Some(window),
            ..Place::default()
        };
        WindowJudge {
            layer: Layer::default(),
            check: HistoryCheck::new(place),
            laid: 0,
            messages: 0,
            raw: Findings::default(),
        }
    }

    fn push(&mut self, entry: &Entry) -> Result<(), InputError> {
        let mut done = Vec::new();
        self.layer
            .push(Origin::Sent(entry.source), &entry.item, &mut |m, o| {
                done.push((m, o))
            });
        for (m, o) in done {
            self.judge(m, o)?;
        }
        Ok(())
    }

    /// One laid message: a `system` entry is instructions, not history; a user or
    /// assistant message is read with the judge's own message type and judged.
    fn judge(&mut self, laid: Value, origins: Vec<Origin>) -> Result<(), InputError> {
        let i = self.laid;
        self.laid += 1;
        if laid.get("role").and_then(Value::as_str) == Some("system") {
            return Ok(());
        }
        let message: Message = serde_json::from_value(laid)
            .map_err(|e| InputError::whole(format!("messages.{i}: {e}")))?;
        let line_of = |o: Option<&Origin>| match o {
            Some(Origin::Sent(line)) => *line,
            _ => 0,
        };
        let mut m = Located::new(Arc::new(message), line_of(origins.first()));
        m.block_lines = origins.iter().map(|o| line_of(Some(o))).collect();
        self.messages += 1;
        self.check.push(m, &mut self.raw);
        Ok(())
    }

    /// Ends the conversation; `end` says how a call still open at its end is judged.
    /// Returns the messages judged.
    fn finish(mut self, end: End, out: &mut Findings) -> Result<usize, InputError> {
        let mut done = Vec::new();
        let layer = std::mem::take(&mut self.layer);
        layer.finish(&mut |m, o| done.push((m, o)));
        for (m, o) in done {
            self.judge(m, o)?;
        }
        let mut raw = self.raw;
        self.check.finish(end, &mut raw);
        for mut f in raw.kept {
            if end == End::TurnOpen
                && f.check == "pairing"
                && f.severity == Severity::Violation
                && f.kind.contains("missing")
            {
                f.severity = Severity::Info;
                f.detail = format!(
                    "{} (a rollout is a log: after SIGTERM Codex leaves the call without an output and, on resume, sends a synthesised \"aborted\" output it does not write here; judge the requests for the wire)",
                    f.detail
                );
            }
            out.push(f);
        }
        Ok(self.messages)
    }
}

pub(crate) fn judge_conversation(
    entries: Vec<Entry>,
    window: usize,
    end: End,
    out: &mut Findings,
) -> Result<usize, InputError> {
    let mut judge = WindowJudge::new(window);
    for e in &entries {
        judge.push(e)?;
    }
    judge.finish(end, out)
}

/// Judges a rollout read line by line, each window as its lines arrive: what is held
/// is one line (at most `limits.max_element` bytes) and one laid message.
pub fn check(
    mut reader: impl BufRead,
    limits: Limits,
    report: &mut FileReport,
) -> Result<(), InputError> {
    let mut judge = WindowJudge::new(0);
    let (mut lines, mut items, mut other, mut messages, mut window) = (0, 0, 0, 0, 0);
    let mut buf = Vec::new();
    loop {
        let line_no = lines + 1;
        let more =
            read_line_capped(&mut reader, &mut buf, limits.max_element).map_err(|e| match e {
                Some(e) => InputError::at(line_no, format!("cannot read: {e}")),
                None => limits.exceeded(line_no, "the line"),
            })?;
        if !more {
            break;
        }
        lines = line_no;
        let line =
            utf8(&buf).map_err(|_| InputError::at(line_no, "not UTF-8 text (binary data?)"))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line.trim_end())
            .map_err(|e| InputError::in_line(line_no, "not a JSON object: ", &e))?;
        let payload = v.get("payload").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            // The session's base instructions are not history: nothing the rules judge.
            Some("session_meta") => {}
            Some("response_item") => {
                let item = parse_logged_item(payload, &format!("line {line_no}: payload"))
                    .map_err(|e| InputError::at(line_no, e.to_string()))?;
                judge.push(&Entry {
                    source: line_no,
                    item: neutral_item(&item),
                })?;
                items += 1;
            }
            Some("compacted") => {
                let done = std::mem::replace(&mut judge, WindowJudge::new(window + 1));
                messages += done.finish(End::TurnOpen, &mut report.findings)?;
                window += 1;
            }
            Some(_) => other += 1,
            None => return Err(InputError::at(line_no, "a rollout line without a `type`")),
        }
    }
    if items == 0 {
        return Err(InputError::whole(format!(
            "nothing to judge: none of its {lines} line(s) is a `response_item`"
        )));
    }
    messages += judge.finish(End::TurnOpen, &mut report.findings)?;
    report.stats.insert("lines", lines);
    report.stats.insert("response_items", items);
    report.stats.insert("other_lines", other);
    report.stats.insert("messages", messages);
    report.stats.insert("windows", window + 1);
    Ok(())
}
