//! Claude Code session logs (JSONL): entries in, the API messages the provider saw out.
//!
//! Guarantees:
//! - Streaming in bounded memory: the file is read one line at a time through
//!   `BufRead`, and at most two messages are held back (an assistant message whose
//!   blocks may still arrive, and the tool results answering it).
//! - The messages are the ones the provider saw, not the log's entries: the lines of
//!   one API message (same `message.id`, one block per line) are merged into one
//!   message, consecutive tool-result lines are merged into the one user message that
//!   answered the batch, and entries that are not messages (`summary`, `system`,
//!   `file-history-snapshot`, `queue-operation`, …) are skipped without breaking the
//!   pairing across them. Sidechain entries (a subagent's own conversation) are
//!   skipped too: they were never part of this conversation's requests.
//! - A compaction boundary (`system` entry with subtype `compact_boundary`, or a
//!   compact-summary user entry not preceded by one) starts a new window.
//! - Every line is valid JSON of the right shape or the whole file is unreadable: a
//!   truncated line, a wrong type or binary bytes is an [`InputError`] naming the line.
//!   A line longer than [`Limits::max_element`] is refused before it is all read.
//! - One pass per line on the common path: an entry is parsed once, its `message`
//!   kept as raw text and parsed only when it is a message. The path-tracking parse
//!   (which names the field at fault) runs only when that fails, so every error is
//!   the one it always was, worded the same.

use super::source::{InputError, Item, Limits, Located, path_error, read_line_capped, utf8};
use serde::Deserialize;
use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, Role};

/// The fields of an entry that decide what it is; everything else is skipped unparsed.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
}

/// An entry read in one pass: [`Head`]'s fields and the message, unparsed.
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default)]
    message: Option<&'a serde_json::value::RawValue>,
}

/// A line's head, and its message when the head says it is one.
type Parsed = (Head, Option<ApiMessage>);

fn is_message(kind: Option<&str>) -> bool {
    matches!(kind, Some("user" | "assistant"))
}

/// The common path: one parse of the entry, one of its message. `None` when either
/// fails, and [`slow`] says why.
fn quick(text: &str) -> Option<Parsed> {
    let mut de = serde_json::Deserializer::from_str(text);
    let e = Entry::deserialize(&mut de).ok()?;
    de.end().ok()?;
    let head = Head {
        kind: e.kind,
        subtype: e.subtype,
        is_sidechain: e.is_sidechain,
        is_compact_summary: e.is_compact_summary,
    };
    if !is_message(head.kind.as_deref()) {
        return Some((head, None));
    }
    let message = serde_json::from_str::<ApiMessage>(e.message?.get()).ok()?;
    Some((head, Some(message)))
}

/// The path-tracking parse, field by field, as the reader has always parsed a line.
fn slow(text: &str, line: usize) -> Result<Parsed, InputError> {
    let head: Head = parse(text, line)?;
    if !is_message(head.kind.as_deref()) {
        return Ok((head, None));
    }
    let entry: WithMessage = parse(text, line)?;
    Ok((head, Some(entry.message)))
}

#[derive(Deserialize)]
struct WithMessage {
    message: ApiMessage,
}

#[derive(Deserialize)]
struct ApiMessage {
    #[serde(default)]
    id: Option<String>,
    role: Role,
    content: Content,
}

/// A message still being assembled from lines.
struct Pending {
    message: Message,
    id: Option<String>,
    line: usize,
    block_lines: Vec<usize>,
}

impl Pending {
    fn new(message: ApiMessage, line: usize) -> Pending {
        let block_lines = vec![line; message.content_blocks()];
        Pending {
            message: Message {
                role: message.role,
                content: message.content,
            },
            id: message.id,
            line,
            block_lines,
        }
    }

    fn into_located(self) -> Located {
        let same_line = self.block_lines.iter().all(|&l| l == self.line);
        Located {
            message: Arc::new(self.message),
            line: self.line,
            block_lines: if same_line {
                Vec::new()
            } else {
                self.block_lines
            },
            index: None,
        }
    }

    /// Appends the blocks of a later line of the same message. A line that repeats
    /// the blocks so far and adds more (a cumulative write) contributes only the new
    /// ones, so no block is counted twice.
    fn extend(&mut self, content: Content, line: usize) {
        let mut incoming = into_blocks(content);
        let existing = into_blocks(std::mem::replace(
            &mut self.message.content,
            Content::Blocks(Vec::new()),
        ));
        if incoming.len() > existing.len() && incoming[..existing.len()] == existing[..] {
            incoming.drain(..existing.len());
        }
        // String content became one block, which came from the message's first line.
        self.block_lines.resize(existing.len(), self.line);
        self.block_lines
            .extend(std::iter::repeat_n(line, incoming.len()));
        let mut blocks = existing;
        blocks.extend(incoming);
        self.message.content = Content::Blocks(blocks);
    }
}

impl ApiMessage {
    fn content_blocks(&self) -> usize {
        match &self.content {
            Content::Text(_) => 0,
            Content::Blocks(b) => b.len(),
        }
    }
}

/// String content joins a block list as a text block: only happens when one message's
/// lines mix the two shapes, which the provider would also have seen as blocks.
fn into_blocks(content: Content) -> Vec<Block> {
    match content {
        Content::Text(s) if s.is_empty() => Vec::new(),
        Content::Text(s) => vec![Block::Text { text: s }],
        Content::Blocks(b) => b,
    }
}

fn starts_with_result(m: &ApiMessage) -> bool {
    m.role == Role::User
        && matches!(&m.content, Content::Blocks(b) if matches!(b.first(), Some(Block::ToolResult { .. })))
}

/// Counts of what was read, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub lines: usize,
    pub entries: usize,
    /// Entries that are not messages.
    pub skipped: usize,
    /// Sidechain message entries (a subagent's conversation).
    pub sidechain: usize,
    /// Message lines merged into an earlier message.
    pub merged: usize,
}

/// The message stream of one Claude Code log.
pub struct ClaudeJsonl<R> {
    reader: R,
    buf: Vec<u8>,
    /// At most an assistant message and the tool results answering it.
    pending: Vec<Pending>,
    ready: VecDeque<Item>,
    /// The last item handed out (or queued) was a boundary: a compact summary right
    /// after one opens no second window.
    after_boundary: bool,
    done: bool,
    limits: Limits,
    pub stats: Stats,
}

impl<R: BufRead> ClaudeJsonl<R> {
    pub fn new(reader: R) -> ClaudeJsonl<R> {
        ClaudeJsonl::with_limits(reader, Limits::default())
    }

    /// A reader refusing lines over `limits`.
    pub fn with_limits(reader: R, limits: Limits) -> ClaudeJsonl<R> {
        ClaudeJsonl {
            limits,
            reader,
            buf: Vec::new(),
            pending: Vec::new(),
            ready: VecDeque::new(),
            after_boundary: true,
            done: false,
            stats: Stats::default(),
        }
    }

    fn flush(&mut self) {
        for p in self.pending.drain(..) {
            self.ready.push_back(Item::Message(p.into_located()));
        }
    }

    fn boundary(&mut self, line: usize) {
        self.flush();
        if !self.after_boundary {
            self.ready.push_back(Item::Boundary { line });
        }
        self.after_boundary = true;
    }

    /// Reads one line into the queue; false at the end of the file.
    fn read_line(&mut self) -> Result<bool, InputError> {
        let line = self.stats.lines + 1;
        let more = read_line_capped(&mut self.reader, &mut self.buf, self.limits.max_element)
            .map_err(|e| match e {
                Some(e) => InputError::at(line, format!("cannot read: {e}")),
                None => self.limits.exceeded(line, "the line"),
            })?;
        if !more {
            return Ok(false);
        }
        self.stats.lines = line;
        let text =
            utf8(&self.buf).map_err(|_| InputError::at(line, "not UTF-8 text (binary data?)"))?;
        let text = text.trim();
        if text.is_empty() {
            return Ok(true);
        }
        if !text.starts_with('{') {
            return Err(InputError::at(
                line,
                format!(
                    "expected a JSON object (one log entry per line), found {}",
                    crate::checkers::excerpt(text)
                ),
            ));
        }
        let (head, message) = match quick(text) {
            Some(read) => read,
            None => slow(text, line)?,
        };
        self.stats.entries += 1;
        let kind = head.kind.as_deref().unwrap_or("");
        if kind == "system" && head.subtype.as_deref() == Some("compact_boundary") {
            self.boundary(line);
            return Ok(true);
        }
        let Some(message) = message else {
            self.stats.skipped += 1;
            return Ok(true);
        };
        if head.is_sidechain == Some(true) {
            self.stats.sidechain += 1;
            return Ok(true);
        }
        if head.is_compact_summary == Some(true) {
            self.boundary(line);
        }
        self.after_boundary = false;
        self.take(message, line);
        Ok(true)
    }

    /// Merges or queues one message entry.
    fn take(&mut self, m: ApiMessage, line: usize) {
        match m.role {
            Role::Assistant => {
                // A later line of the pending assistant message, even after some of
                // its tool results were already written.
                if let (Some(id), Some(first)) = (&m.id, self.pending.first_mut())
                    && first.message.role == Role::Assistant
                    && first.id.as_ref() == Some(id)
                {
                    first.extend(m.content, line);
                    self.stats.merged += 1;
                    return;
                }
                self.flush();
                self.pending.push(Pending::new(m, line));
            }
            Role::User if starts_with_result(&m) => {
                if let Some(last) = self.pending.last_mut()
                    && last.message.role == Role::User
                {
                    last.extend(m.content, line);
                    self.stats.merged += 1;
                    return;
                }
                // After the assistant message it answers, or alone (and then orphaned,
                // which the pairing check reports).
                self.pending.push(Pending::new(m, line));
            }
            Role::User => {
                self.flush();
                self.ready
                    .push_back(Item::Message(Pending::new(m, line).into_located()));
            }
        }
    }
}

fn parse<'a, T: Deserialize<'a>>(text: &'a str, line: usize) -> Result<T, InputError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| InputError::at(line, path_error(&e)))?;
    de.end().map_err(|e| InputError::at(line, e.to_string()))?;
    Ok(value)
}

impl<R: BufRead> Iterator for ClaudeJsonl<R> {
    type Item = Result<Item, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            match self.read_line() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    self.flush();
                }
                Err(e) => {
                    self.done = true;
                    self.pending.clear();
                    self.ready.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Result<Vec<Item>, InputError> {
        ClaudeJsonl::new(text.as_bytes()).collect()
    }

    fn messages(text: &str) -> Vec<(usize, String)> {
        items(text)
            .expect("loads")
            .into_iter()
            .map(|i| match i {
                Item::Message(l) => (l.line, l.message.to_json()),
                Item::Boundary { line } => (line, "BOUNDARY".into()),
            })
            .collect()
    }

    const A1: &str = r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]}}"#;
    const A2: &str = r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]}}"#;
    const A3: &str = r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"ls","input":{}}]}}"#;
    const R1: &str = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]}}"#;
    const R2: &str = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"b"}]}}"#;
    const SNAP: &str = r#"{"type":"file-history-snapshot","messageId":"x","snapshot":{}}"#;

    #[test]
    fn lines_of_one_api_message_and_parallel_results_are_merged() {
        let text = [A1, A2, SNAP, A3, R2, SNAP, R1].join("\n");
        assert_eq!(
            messages(&text),
            vec![
                (
                    1,
                    r#"{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"ls","input":{}},{"type":"tool_use","id":"t2","name":"ls","input":{}}]}"#.to_string()
                ),
                (
                    5,
                    r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"b"},{"type":"tool_result","tool_use_id":"t1","content":"a"}]}"#.to_string()
                ),
            ]
        );
        let Item::Message(first) = &items(&text).expect("loads")[0] else {
            panic!("a message");
        };
        assert_eq!(first.block_lines, vec![1, 2, 4]);
        assert_eq!(first.line_of(Some(2)), 4);
    }

    #[test]
    fn an_assistant_line_after_some_results_still_joins_its_message() {
        let text = [A2, R1, A3, R2].join("\n");
        let got = messages(&text);
        assert_eq!(got.len(), 2);
        assert!(got[0].1.contains("t1") && got[0].1.contains("t2"));
        assert!(
            got[1].1.contains(r#""tool_use_id":"t1""#)
                && got[1].1.contains(r#""tool_use_id":"t2""#)
        );
    }

    #[test]
    fn a_cumulative_line_adds_only_its_new_blocks() {
        let both = r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"ls","input":{}}]}}"#;
        let got = messages(&[A1, both].join("\n"));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1.matches("tool_use").count(), 1);
        assert_eq!(got[0].1.matches(r#""text":"hi""#).count(), 1);
    }

    #[test]
    fn a_compaction_boundary_starts_a_new_window() {
        let user = r#"{"type":"user","message":{"role":"user","content":"go"}}"#;
        let boundary =
            r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted"}"#;
        let summary = r#"{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"}}"#;
        let got = messages(&[user, A1, boundary, summary, user].join("\n"));
        let shape: Vec<&str> = got
            .iter()
            .map(|(_, j)| if j == "BOUNDARY" { "|" } else { "m" })
            .collect();
        assert_eq!(shape, vec!["m", "m", "|", "m", "m"]);
        // A compact summary with no boundary entry before it opens a window too.
        let got = messages(&[user, A1, summary].join("\n"));
        assert_eq!(got[2].1, "BOUNDARY");
    }

    #[test]
    fn sidechain_entries_are_not_this_conversation() {
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"id":"s","role":"assistant","content":[{"type":"text","text":"sub"}]}}"#;
        let mut reader = ClaudeJsonl::new(side.as_bytes());
        assert!(reader.next().is_none());
        assert_eq!(reader.stats.sidechain, 1);
    }

    #[test]
    fn unreadable_lines_name_their_line() {
        let cases = [
            (
                format!("{SNAP}\n{{\"type\":\"user\",\"message\":{{\"role\":\"us"),
                2,
                "EOF",
            ),
            (format!("{SNAP}\n{{\"type\":5}}"), 2, "type"),
            (
                format!(
                    "{SNAP}\n{SNAP}\n{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":7}}}}"
                ),
                3,
                "message.content",
            ),
            (format!("{SNAP}\n[1,2]"), 2, "expected a JSON object"),
        ];
        for (text, line, needle) in cases {
            let e = items(&text).expect_err("unreadable");
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.contains(needle), "{e}");
        }
        let mut bytes = format!("{SNAP}\n").into_bytes();
        bytes.extend_from_slice(&[0xff, 0xfe, 0x00, b'\n']);
        let e = ClaudeJsonl::new(bytes.as_slice())
            .collect::<Result<Vec<_>, _>>()
            .expect_err("binary");
        assert_eq!(e, InputError::at(2, "not UTF-8 text (binary data?)"));
    }
}
