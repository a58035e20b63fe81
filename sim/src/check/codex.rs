//! Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) judged as
//! one conversation: every `response_item` line read with the Responses API's own item
//! reader, laid onto the judge's message model like a request, and judged by the same
//! history rules.
//!
//! Guarantee: no line is skipped silently. A `response_item` whose payload is not a
//! valid item is an error naming its line; other line types (`session_meta`,
//! `event_msg`, `turn_context`, …) are counted, and `session_meta`'s base instructions
//! become the conversation's instructions. A `compacted` line starts a new window, as
//! a compaction does in a Claude Code log. A rollout is a log, not a request: a call
//! left without an output is information, never a violation, because Codex writes to
//! the rollout only what it received and ran — after SIGTERM the rollout ends with the
//! call (the shell was killed), and on resume Codex sends a synthesised `"aborted"`
//! output that it never writes back, so the rollout alone cannot tell a client bug from
//! that repair; the requests themselves (`serve --record`) are what to judge for it.

use super::source::InputError;
use crate::judge::anthropic::parse_request;
use crate::judge::finding::{FileReport, Findings, Place, Severity};
use crate::judge::history::HistoryCheck;
use crate::judge::openai::{Origin, lay};
use crate::judge::pairing::End;
use crate::judge::view::Located;
use crate::openai::neutral::{Conversation, Entry, Prefix, Wire};
use crate::openai::responses_request::{neutral_item, parse_item};
use serde_json::Value;
use std::io::BufRead;

/// One window of the rollout: its entries (source = line number) and instructions.
fn judge_window(
    entries: Vec<Entry>,
    instructions: Option<String>,
    window: usize,
    out: &mut Findings,
) -> Result<usize, InputError> {
    judge_conversation(entries, instructions, window, End::TurnOpen, out)
}

/// Judges one `POST /v1/responses` body read from a file: its `input` items are a
/// request that was sent, so a call without its output is a violation there. A finding's
/// line is the `input` index.
pub fn check_responses_request(text: &str, report: &mut FileReport) -> Result<(), InputError> {
    let req = crate::openai::responses_request::parse(text.as_bytes())
        .map_err(|e| InputError::whole(e.to_string()))?;
    let conv = req.to_neutral();
    let mut raw = Findings::default();
    let n = judge_conversation(
        conv.entries,
        req.instructions.clone(),
        0,
        End::Violation,
        &mut raw,
    )?;
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

fn judge_conversation(
    entries: Vec<Entry>,
    instructions: Option<String>,
    window: usize,
    end: End,
    out: &mut Findings,
) -> Result<usize, InputError> {
    let conv = Conversation {
        wire: Wire::Responses,
        prefix: Prefix {
            model: "codex".into(),
            instructions,
            tools: Vec::new(),
        },
        entries,
        continues: None,
    };
    let laid = lay(&conv, &[], &[], false, false);
    let parsed = parse_request(laid.body.to_string().as_bytes()).map_err(InputError::whole)?;
    let place = Place {
        window: Some(window),
        ..Place::default()
    };
    let mut check = HistoryCheck::new(place);
    let line_of = |o: Option<Origin>| match o {
        Some(Origin::Sent(line)) => line,
        _ => 0,
    };
    let mut raw = Findings::default();
    for (i, message) in &parsed.typed {
        let blocks = laid.origins.get(*i).map_or(0, Vec::len);
        let mut m = Located::new(message.clone(), line_of(laid.origin(Some(*i), None)));
        m.block_lines = (0..blocks)
            .map(|b| line_of(laid.origin(Some(*i), Some(b))))
            .collect();
        check.push(m, &mut raw);
    }
    check.finish(end, &mut raw);
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
    Ok(parsed.typed.len())
}

/// Judges a rollout read line by line.
pub fn check(reader: impl BufRead, report: &mut FileReport) -> Result<(), InputError> {
    let mut entries = Vec::new();
    let mut instructions = None;
    let (mut lines, mut items, mut other, mut messages, mut window) = (0, 0, 0, 0, 0);
    for (n, line) in reader.lines().enumerate() {
        let line_no = n + 1;
        let line = line.map_err(|e| InputError::at(line_no, format!("cannot read: {e}")))?;
        lines += 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)
            .map_err(|e| InputError::at(line_no, format!("not a JSON object: {e}")))?;
        let payload = v.get("payload").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                instructions = payload
                    .get("base_instructions")
                    .and_then(|b| b.get("text").or(Some(b)))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or(instructions);
            }
            Some("response_item") => {
                let item = parse_item(payload, &format!("line {line_no}: payload"))
                    .map_err(|e| InputError::at(line_no, e.to_string()))?;
                entries.push(Entry {
                    source: line_no,
                    item: neutral_item(&item),
                });
                items += 1;
            }
            Some("compacted") => {
                messages += judge_window(
                    std::mem::take(&mut entries),
                    instructions.clone(),
                    window,
                    &mut report.findings,
                )?;
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
    messages += judge_window(entries, instructions, window, &mut report.findings)?;
    report.stats.insert("lines", lines);
    report.stats.insert("response_items", items);
    report.stats.insert("other_lines", other);
    report.stats.insert("messages", messages);
    report.stats.insert("windows", window + 1);
    Ok(())
}
