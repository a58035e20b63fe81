//! A gemini-cli conversation (its session file's message records) laid out as the
//! Gemini API `contents` it stands for, and judged by the one judge with the Gemini
//! API's rules.
//!
//! Guarantees:
//! - The layout is the wire's, as gemini-cli 0.61 sends it (observed against `turnsim
//!   serve`): a `user` record's `content` parts; a `gemini` record's text parts, then
//!   a `functionCall` part per `toolCalls[]` entry (id, name, args), unless its
//!   `content` already holds the calls; consecutive records of one role merged into
//!   one content (the session context and the first prompt go out as one user
//!   content of two parts). `info`, `error` and `warning` records are what the user
//!   saw, never sent: skipped and counted.
//! - A call's response is read where the file keeps what was sent: the `user` record
//!   of `functionResponse` parts that follows the call's record. Only when no such
//!   record follows (files written before gemini-cli kept one) is the response
//!   rebuilt from `toolCalls[].result`, so a response is never counted twice by this
//!   reader; one the file itself holds twice (gemini-cli 0.61's `--resume` writes both
//!   copies into the history it rewrites) is judged as the wire would carry it.
//! - Judging is the judge's: [`crate::judge::rules_gemini`] says what the Gemini API
//!   refuses, and the history rules that are not the Messages API's (markers, notes,
//!   model text in user turns) run over the same contents laid through the neutral
//!   view, as `turnsim serve` judges a live Gemini request. A log is not a request: a
//!   call left without a response in the last content is information (turn open),
//!   the log of a client killed mid-tool.

use super::codex::judge_conversation;
use crate::judge::finding::{Finding, Findings, Place, Severity};
use crate::judge::pairing::End;
use crate::judge::rules_gemini;
use crate::judge::session::MESSAGES_API_FAMILIES;
use crate::openai::neutral::Entry;
use serde_json::{Map, Value, json};

/// One message record of the file, with the line that last wrote it.
#[derive(Clone, Debug)]
pub struct Record {
    pub line: Option<usize>,
    pub value: Value,
}

impl Record {
    pub fn id(&self) -> Option<&str> {
        self.value.get("id").and_then(Value::as_str)
    }

    fn kind(&self) -> &str {
        self.value.get("type").and_then(Value::as_str).unwrap_or("")
    }
}

/// One content of the laid-out conversation and the line of its first record.
struct Content {
    role: &'static str,
    parts: Vec<Value>,
    line: Option<usize>,
}

/// gemini-cli's `PartListUnion` as parts: a string is a text part, an array's
/// strings are text parts, an object is one part.
fn parts_of(content: Option<&Value>) -> Vec<Value> {
    match content {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) if s.is_empty() => Vec::new(),
        Some(Value::String(s)) => vec![json!({ "text": s })],
        Some(Value::Array(a)) => a
            .iter()
            .map(|p| match p {
                Value::String(s) => json!({ "text": s }),
                other => other.clone(),
            })
            .collect(),
        Some(other) => vec![other.clone()],
    }
}

fn has(parts: &[Value], key: &str) -> bool {
    parts.iter().any(|p| p.get(key).is_some())
}

/// What the records of one window hold besides the contents.
#[derive(Default)]
pub struct Layout {
    pub notices: usize,
    pub rebuilt_responses: usize,
}

/// Lays out a window's records as `contents`.
fn lay(records: &[Record], layout: &mut Layout) -> Vec<Content> {
    let mut out: Vec<Content> = Vec::new();
    let sent: Vec<&Record> = records
        .iter()
        .filter(|r| {
            let notice = matches!(r.kind(), "info" | "error" | "warning");
            layout.notices += usize::from(notice);
            !notice
        })
        .collect();
    let mut push = |role: &'static str, parts: Vec<Value>, line: Option<usize>| {
        if parts.is_empty() && role == "model" {
            return;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => out.push(Content { role, parts, line }),
        }
    };
    for (i, r) in sent.iter().enumerate() {
        let content = parts_of(r.value.get("content"));
        if r.kind() != "gemini" {
            push("user", content, r.line);
            continue;
        }
        let calls: &[Value] = r
            .value
            .get("toolCalls")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let mut parts = content;
        if !has(&parts, "functionCall") {
            for c in calls {
                let mut call = Map::new();
                for key in ["id", "name", "args"] {
                    if let Some(v) = c.get(key) {
                        call.insert(key.into(), v.clone());
                    }
                }
                parts.push(json!({ "functionCall": call }));
            }
        }
        push("model", parts, r.line);
        let answered = sent.get(i + 1).is_some_and(|n| {
            n.kind() == "user" && has(&parts_of(n.value.get("content")), "functionResponse")
        });
        if !answered {
            let rebuilt: Vec<Value> = calls.iter().flat_map(rebuilt_response).collect();
            layout.rebuilt_responses += rebuilt.len();
            if !rebuilt.is_empty() {
                push("user", rebuilt, r.line);
            }
        }
    }
    out
}

/// A call's response from its `result`, as the file's older writers kept it.
fn rebuilt_response(call: &Value) -> Vec<Value> {
    match call.get("result") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![json!({"functionResponse": {
            "id": call.get("id"), "name": call.get("name"), "response": {"output": s}}})],
        Some(Value::Array(a)) => parts_of(Some(&Value::Array(a.clone()))),
        Some(other) => vec![other.clone()],
    }
}

/// Judges one window's records; returns the number of contents judged.
pub fn judge_window(
    records: &[Record],
    window: usize,
    layout: &mut Layout,
    out: &mut Findings,
) -> usize {
    let contents = lay(records, layout);
    if contents.is_empty() {
        return 0;
    }
    let body = json!({
        "contents": contents
            .iter()
            .map(|c| json!({"role": c.role, "parts": c.parts}))
            .collect::<Vec<_>>()
    });
    let line_of = |i: Option<usize>| i.and_then(|i| contents.get(i)).and_then(|c| c.line);
    let last = contents.len() - 1;
    for b in rules_gemini::judge(&body) {
        let mut f = b.finding(0);
        f.place = Place {
            line: line_of(b.at),
            window: Some(window),
            message: b.at,
            ..Place::default()
        };
        if b.kind == "unanswered_call" && b.at == Some(last) {
            f.severity = Severity::Info;
            f.check = "turn_open";
            f.detail = format!(
                "{} (turn open: the log ends with the call, captured mid-turn or its client ended while the tool ran)",
                f.detail
            );
        }
        out.push(f);
    }
    history_rules(&body, &contents, window, out);
    contents.len()
}

/// The judge's history rules that are not the Messages API's, over the contents laid
/// through the neutral view; a body the wire reader refuses has been judged by the
/// Gemini rules above, and is said to have skipped these.
fn history_rules(body: &Value, contents: &[Content], window: usize, out: &mut Findings) {
    let bytes = body.to_string().into_bytes();
    let conv = match crate::gemini::request::parse(&bytes) {
        Ok(req) => req.to_neutral("gemini-cli"),
        Err(e) => return skipped(window, &e.to_string(), out),
    };
    let entries: Vec<Entry> = conv
        .entries
        .into_iter()
        .map(|e| Entry {
            source: contents.get(e.source).and_then(|c| c.line).unwrap_or(0),
            item: e.item,
        })
        .collect();
    let mut raw = Findings::default();
    if let Err(e) = judge_conversation(entries, window, End::TurnOpen, &mut raw) {
        return skipped(window, &e.message, out);
    }
    for f in raw.kept {
        if !MESSAGES_API_FAMILIES.contains(&f.check) {
            out.push(f);
        }
    }
}

fn skipped(window: usize, why: &str, out: &mut Findings) {
    out.push(Finding::new(
        Severity::Info,
        "request_valid",
        "history_not_judged",
        Place {
            window: Some(window),
            ..Place::default()
        },
        format!(
            "window {window}: the history rules were not run ({why}); the Gemini API's rules were"
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(line: usize, v: Value) -> Record {
        Record {
            line: Some(line),
            value: v,
        }
    }

    fn call(id: &str) -> Value {
        json!({"id": id, "name": "run_shell_command", "args": {"command": "ls"},
               "result": [{"functionResponse": {"id": id, "name": "run_shell_command",
                           "response": {"output": "ok"}}}]})
    }

    fn answer(id: &str) -> Value {
        json!([{"functionResponse": {"id": id, "name": "run_shell_command", "response": {"output": "ok"}}}])
    }

    #[test]
    fn a_response_recorded_beside_its_call_and_as_a_user_record_is_laid_once() {
        let records = [
            rec(
                2,
                json!({"id": "a", "type": "user", "content": [{"text": "ctx"}]}),
            ),
            rec(
                3,
                json!({"id": "b", "type": "user", "content": [{"text": "go"}]}),
            ),
            rec(
                7,
                json!({"id": "c", "type": "gemini", "content": "Running.", "toolCalls": [call("x")]}),
            ),
            rec(
                8,
                json!({"id": "d", "type": "user", "content": answer("x")}),
            ),
            rec(9, json!({"id": "e", "type": "info", "content": "note"})),
            rec(10, json!({"id": "f", "type": "gemini", "content": "Done."})),
        ];
        let mut layout = Layout::default();
        let contents = lay(&records, &mut layout);
        let shape: Vec<(&str, usize, Option<usize>)> = contents
            .iter()
            .map(|c| (c.role, c.parts.len(), c.line))
            .collect();
        assert_eq!(
            shape,
            [
                ("user", 2, Some(2)),
                ("model", 2, Some(7)),
                ("user", 1, Some(8)),
                ("model", 1, Some(10))
            ]
        );
        assert_eq!((layout.notices, layout.rebuilt_responses), (1, 0));
        let mut out = Findings::default();
        assert_eq!(
            judge_window(&records, 0, &mut Layout::default(), &mut out),
            4
        );
        assert_eq!(out.kept, Vec::new());
    }

    #[test]
    fn a_file_without_response_records_has_its_responses_rebuilt_from_the_results() {
        let records = [
            rec(1, json!({"id": "b", "type": "user", "content": "go"})),
            rec(
                2,
                json!({"id": "c", "type": "gemini", "content": "", "toolCalls": [call("x")]}),
            ),
            rec(3, json!({"id": "f", "type": "gemini", "content": "Done."})),
        ];
        let mut layout = Layout::default();
        let contents = lay(&records, &mut layout);
        assert_eq!(contents.len(), 4);
        assert_eq!(layout.rebuilt_responses, 1);
        assert_eq!(
            contents[2].parts,
            answer("x").as_array().cloned().unwrap_or_default()
        );
    }

    #[test]
    fn a_response_the_file_holds_twice_is_a_pairing_violation_at_its_content() {
        // The history gemini-cli 0.61's --resume rewrites: the call's response as it
        // rebuilt it, then the user record it had kept.
        let records = [
            rec(13, json!({"id": "b", "type": "user", "content": "go"})),
            rec(
                13,
                json!({"id": "c", "type": "gemini", "content": [{"text": "Running."},
                {"functionCall": {"id": "x", "name": "run_shell_command", "args": {}}}],
                "toolCalls": [call("x")]}),
            ),
            rec(
                13,
                json!({"id": "c_response", "type": "user", "content": answer("x")}),
            ),
            rec(
                13,
                json!({"id": "d", "type": "user", "content": answer("x")}),
            ),
            rec(13, json!({"id": "f", "type": "gemini", "content": "Done."})),
        ];
        let mut out = Findings::default();
        judge_window(&records, 1, &mut Layout::default(), &mut out);
        let kinds: Vec<(&str, &str, Option<usize>, Severity)> = out
            .kept
            .iter()
            .map(|f| (f.check, f.kind.as_str(), f.place.message, f.severity))
            .collect();
        assert_eq!(
            kinds,
            [(
                "pairing",
                "response_without_call",
                Some(2),
                Severity::Violation
            )]
        );
        assert_eq!(out.kept[0].place.line, Some(13));
        assert_eq!(out.kept[0].place.window, Some(1));
    }

    #[test]
    fn a_call_open_at_the_end_of_the_log_is_information_not_a_violation() {
        let mut open = call("x");
        open["result"] = Value::Null;
        let records = [
            rec(1, json!({"id": "b", "type": "user", "content": "go"})),
            rec(
                2,
                json!({"id": "c", "type": "gemini", "content": "Running.", "toolCalls": [open]}),
            ),
        ];
        let mut out = Findings::default();
        judge_window(&records, 0, &mut Layout::default(), &mut out);
        assert_eq!(out.violations, 0, "{:?}", out.kept);
        assert_eq!(out.infos, 1);
        assert_eq!(out.kept[0].check, "turn_open");
        assert_eq!(out.kept[0].kind, "unanswered_call");
        assert_eq!(out.kept[0].place.line, Some(2));
    }
}
