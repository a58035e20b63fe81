//! gemini-cli session files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, and the
//! older whole-JSON `session-*.json`), read record by record as gemini-cli 0.61 reads
//! them back, and judged window by window ([`super::gemini_contents`]).
//!
//! The JSONL form, as gemini-cli 0.61 writes it (its chat recording service, read in
//! its bundled source and observed against `turnsim serve`): a metadata record
//! (`sessionId`, `projectHash`, `startTime`…); message records (a string `id`, a `type`
//! of `user`, `gemini`, `info`, `error` or `warning`), appended again whole each time
//! a message changes (its tool calls, its token counts), the last one standing;
//! `{"$set": {…}}` metadata updates, where a `messages` array replaces the whole
//! history (the session context at start, the history rewritten on `--resume`); and
//! `{"$rewindTo": ID}`, which drops that message and everything after it.
//!
//! Guarantees:
//! - No record is dropped in silence. A line that is not JSON, or a JSON value of no
//!   kind gemini-cli writes, is a finding at its line (gemini-cli itself skips such a
//!   line on resume, so what it held is lost: a violation for a line that is not
//!   JSON, information for a record of an unknown kind) and the rest is judged.
//! - A file from which nothing can be judged (no metadata record with `sessionId` and
//!   `projectHash`, no message) is an error naming what was expected.
//! - Each history is judged once: a `$set` of `messages` or a `$rewindTo` ends the
//!   window read so far (judged as it stood) and starts the next; a finding a later
//!   window repeats (the same rule, content and detail) is reported once.
//! - Memory: a line is read within the element limit; what is held is the current
//!   window's message records, which is what gemini-cli itself holds and what a
//!   resumed request carries anyway.

use super::gemini_contents::{Layout, Record, judge_window};
use super::source::{InputError, Limits, read_line_capped, utf8};
use crate::judge::finding::{FileReport, Finding, Findings, Place, Severity};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::BufRead;

/// What the reader has seen, and the windows judged so far.
struct Reader {
    window: Vec<Record>,
    windows: usize,
    contents: usize,
    seen: BTreeSet<String>,
    layout: Layout,
    findings: Findings,
    metadata: bool,
    messages: usize,
    other: usize,
}

impl Reader {
    fn new() -> Reader {
        Reader {
            window: Vec::new(),
            windows: 0,
            contents: 0,
            seen: BTreeSet::new(),
            layout: Layout::default(),
            findings: Findings::default(),
            metadata: false,
            messages: 0,
            other: 0,
        }
    }

    /// A message record: the last record of an id stands, in the place of the first.
    fn message(&mut self, line: Option<usize>, value: Value) {
        self.messages += 1;
        let record = Record { line, value };
        let id = record.id().map(str::to_owned);
        match self.window.iter_mut().find(|r| r.id() == id.as_deref()) {
            Some(r) => *r = record,
            None => self.window.push(record),
        }
    }

    /// Judges the window as it stands; the next one starts from `next`.
    fn close(&mut self, next: Vec<Record>) {
        let records = std::mem::replace(&mut self.window, next);
        let mut raw = Findings::default();
        let n = judge_window(&records, self.windows, &mut self.layout, &mut raw);
        if n == 0 {
            return;
        }
        for f in raw.kept {
            let signature = format!("{}/{}/{:?}/{}", f.check, f.kind, f.place.message, f.detail);
            if self.seen.insert(signature) {
                self.findings.push(f);
            }
        }
        self.windows += 1;
        self.contents = n;
    }

    /// Reads one record (`line` is its line, `None` in a whole-JSON file).
    fn record(&mut self, line: Option<usize>, v: Value) {
        let odd = |what: &str| {
            Finding::new(
                Severity::Info,
                "gemini_cli",
                "unknown_record",
                Place {
                    line,
                    ..Place::default()
                },
                format!("{what}: not a record gemini-cli writes (a message, metadata, `$set` or `$rewindTo`); skipped, as gemini-cli skips it"),
            )
            .with_excerpt(&v.to_string())
        };
        let Some(o) = v.as_object() else {
            let f = odd("a JSON value that is not an object");
            self.findings.push(f);
            return;
        };
        if let Some(to) = o.get("$rewindTo").and_then(Value::as_str) {
            let keep = match self.window.iter().position(|r| r.id() == Some(to)) {
                Some(i) => self.window[..i].to_vec(),
                None => Vec::new(),
            };
            self.close(keep);
        } else if o.get("id").is_some_and(Value::is_string) {
            self.message(line, v);
        } else if let Some(set) = o.get("$set").filter(|s| s.is_object()) {
            if let Some(messages) = set.get("messages").and_then(Value::as_array) {
                self.close(Vec::new());
                for m in messages {
                    self.message(line, m.clone());
                }
            } else {
                self.other += 1;
            }
        } else if o.get("sessionId").is_some_and(Value::is_string)
            && o.get("projectHash").is_some_and(Value::is_string)
        {
            self.metadata = true;
            for m in o
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.message(line, m.clone());
            }
        } else {
            let f = odd("an object");
            self.findings.push(f);
        }
    }

    fn finish(mut self, lines: usize, report: &mut FileReport) -> Result<(), InputError> {
        if !self.metadata {
            return Err(InputError::whole(format!(
                "not a gemini-cli session file: none of its {lines} line(s) is the session's metadata record (an object with string `sessionId` and `projectHash`)"
            )));
        }
        self.close(Vec::new());
        if self.messages == 0 || self.windows == 0 {
            return Err(InputError::whole(
                "nothing to judge: the gemini-cli session holds no user or gemini message",
            ));
        }
        for f in self.findings.kept {
            report.findings.push(f);
        }
        report.stats.insert("lines", lines);
        report.stats.insert("message_records", self.messages);
        report.stats.insert("other_records", self.other);
        report.stats.insert("windows", self.windows);
        report.stats.insert("contents", self.contents);
        report.stats.insert("notices_skipped", self.layout.notices);
        report
            .stats
            .insert("responses_rebuilt", self.layout.rebuilt_responses);
        Ok(())
    }
}

/// Judges a JSONL session file read line by line.
pub fn check(
    mut reader: impl BufRead,
    limits: Limits,
    report: &mut FileReport,
) -> Result<(), InputError> {
    let mut r = Reader::new();
    let mut lines = 0;
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
        let text =
            utf8(&buf).map_err(|_| InputError::at(line_no, "not UTF-8 text (binary data?)"))?;
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(text.trim_end()) {
            Ok(v) => r.record(Some(line_no), v),
            Err(e) => r.findings.push(
                Finding::new(
                    Severity::Violation,
                    "gemini_cli",
                    "unreadable_record",
                    Place {
                        line: Some(line_no),
                        ..Place::default()
                    },
                    format!(
                        "line {line_no} is not JSON ({e}): gemini-cli skips it when it reads the session back, so what it held is lost to a resume"
                    ),
                )
                .with_excerpt(text),
            ),
        }
    }
    r.finish(lines, report)
}

/// Judges a whole-JSON session file (`{sessionId, projectHash, messages: […]}`, the
/// form gemini-cli wrote before JSONL and still reads), already read within the limit.
pub fn check_json(text: &str, report: &mut FileReport) -> Result<(), InputError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        InputError::at(
            e.line(),
            format!("not a gemini-cli session file (JSON): {e}"),
        )
    })?;
    let mut r = Reader::new();
    r.record(None, v);
    r.finish(text.lines().count(), report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn run(text: &str) -> Result<FileReport, InputError> {
        let mut report = FileReport::new("t", "gemini-cli");
        check(Cursor::new(text.to_owned()), Limits::default(), &mut report)?;
        Ok(report)
    }

    const META: &str =
        r#"{"sessionId":"s","projectHash":"p","startTime":"t","lastUpdated":"t","kind":"main"}"#;

    #[test]
    fn an_updated_message_counts_once_and_an_odd_line_is_a_finding_at_its_line() {
        let text = [
            META,
            r#"{"id":"u","type":"user","content":[{"text":"go"}]}"#,
            r#"{"id":"g","type":"gemini","content":"Running."}"#,
            r#"{"$set":{"lastUpdated":"t2"}}"#,
            r#"{"id":"g","type":"gemini","content":"Running.","toolCalls":[{"id":"x","name":"sh","args":{}}]}"#,
            r#"{"id":"r","type":"user","content":[{"functionResponse":{"id":"x","name":"sh","response":{"output":"ok"}}}]}"#,
            r#"{"id":"d","type":"gemini","cont"#,
            r#"[1,2]"#,
            r#"{"id":"e","type":"gemini","content":"Done."}"#,
        ]
        .join("\n");
        let report = run(&text).expect("judged");
        let found: Vec<(&str, &str, Option<usize>, Severity)> = report
            .findings
            .kept
            .iter()
            .map(|f| (f.check, f.kind.as_str(), f.place.line, f.severity))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "gemini_cli",
                    "unreadable_record",
                    Some(7),
                    Severity::Violation
                ),
                ("gemini_cli", "unknown_record", Some(8), Severity::Info),
            ]
        );
        assert_eq!(report.stat("contents"), 4);
        assert_eq!(report.stat("windows"), 1);
        assert_eq!(report.stat("message_records"), 5);
    }

    #[test]
    fn a_rewind_judges_the_branch_left_and_goes_on_from_the_prefix() {
        let text = [
            META,
            r#"{"id":"u","type":"user","content":"go"}"#,
            r#"{"id":"g","type":"gemini","content":"","toolCalls":[{"id":"x","name":"sh","args":{}}]}"#,
            r#"{"$rewindTo":"g"}"#,
            r#"{"id":"h","type":"gemini","content":"Fine."}"#,
        ]
        .join("\n");
        let report = run(&text).expect("judged");
        assert_eq!(report.stat("windows"), 2);
        // The call left open by the rewind is information in the branch it ends.
        assert_eq!(report.findings.violations, 0, "{:?}", report.findings.kept);
        assert_eq!(report.findings.kept.len(), 1);
        assert_eq!(report.findings.kept[0].check, "turn_open");
        assert_eq!(report.findings.kept[0].place.window, Some(0));
        assert_eq!(report.stat("contents"), 2);
    }

    #[test]
    fn a_file_without_the_sessions_metadata_or_messages_is_an_error_naming_them() {
        let e = run(r#"{"id":"u","type":"user","content":"go"}"#).expect_err("refused");
        assert!(e.message.contains("`sessionId` and `projectHash`"), "{e}");
        let e = run(META).expect_err("refused");
        assert!(e.message.contains("no user or gemini message"), "{e}");
    }

    #[test]
    fn the_whole_json_form_is_read_as_one_window() {
        let text = r#"{"sessionId":"s","projectHash":"p","messages":[
            {"id":"u","type":"user","content":"go"},
            {"id":"g","type":"gemini","content":"ok","toolCalls":[{"id":"x","name":"sh","args":{},"result":"done"}]},
            {"id":"h","type":"gemini","content":"Done."}]}"#;
        let mut report = FileReport::new("t", "gemini-cli");
        check_json(text, &mut report).expect("judged");
        assert_eq!(report.findings.kept, Vec::new());
        assert_eq!(report.stat("contents"), 4);
        assert_eq!(report.stat("responses_rebuilt"), 1);
    }
}
