//! Claude Code session logs (JSONL): entries in, the API messages the provider saw out.
//!
//! Guarantees:
//! - Streaming: the file is read one line at a time through `BufRead`, holding back at
//!   most an assistant message whose blocks may still arrive and the results answering
//!   it; a rewound session's window is kept too ([`super::claude_branch`]).
//! - The messages are the ones the provider saw, not the log's entries: the lines of
//!   one API message (same `message.id`, one block per line) are merged into one
//!   message, consecutive tool-result lines are merged into the one user message that
//!   answered the batch, and entries that are not messages (`summary`, `system`,
//!   `file-history-snapshot`, `queue-operation`, …) are skipped without breaking the
//!   pairing across them.
//! - One conversation per file: a main log's sidechain entries (a sub-agent's own
//!   conversation) were never part of its requests and are skipped; a file whose
//!   first message is a sidechain's (Claude Code writes each sub-agent to its own
//!   `agent-*.jsonl`, every line `isSidechain: true`) is that sub-agent's
//!   conversation, judged as such.
//! - Branches: entries name their parent (`parentUuid`); an entry that goes on from
//!   an earlier message than the latest one starts a branch ([`Item::Branch`]), judged
//!   as its own history (see [`super::claude_branch`] for what is not a fork).
//! - A compaction boundary (`system` entry with subtype `compact_boundary`, or a
//!   compact-summary user entry not preceded by one) starts a new window.
//! - Every line is valid JSON of the right shape or the whole file is unreadable: a
//!   truncated line, a wrong type or binary bytes is an [`InputError`] naming the line.
//!   In [`ClaudeJsonl::judging`] mode a block the API would refuse is the exception:
//!   it becomes an [`Item::Unreadable`] finding at its line and the rest is judged
//!   ([`super::claude_entry::salvage`]). A line longer than [`Limits::max_element`] is
//!   refused before it is all read.

use super::claude_branch::Tree;
use super::claude_entry::{ApiMessage, Unreadable, is_message, quick, salvage, slow};
use super::source::{InputError, Item, Limits, Located, read_line_capped, utf8};
use crate::judge::finding::{Finding, Place, Severity};
use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, Role};

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
    /// Message entries of the other chain: a main log's sidechain entries (a
    /// subagent's conversation), or a sub-agent log's entries that are not its own.
    pub sidechain: usize,
    /// The file is a sub-agent's own log: its first message is a sidechain's.
    pub sidechain_log: bool,
    /// Message lines merged into an earlier message.
    pub merged: usize,
    /// Branches started (a rewound session going on from an earlier message).
    pub branches: usize,
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
    /// Whether the judged chain is a sidechain, once the first message says.
    sidechain: Option<bool>,
    /// Judging, not comparing: a refused block is a finding and branches are
    /// followed.
    judging: bool,
    tree: Tree,
    pub stats: Stats,
}

impl<R: BufRead> ClaudeJsonl<R> {
    pub fn new(reader: R) -> ClaudeJsonl<R> {
        ClaudeJsonl::with_limits(reader, Limits::default())
    }

    /// A reader refusing lines over `limits`, for comparing logs (`--prefix`): the
    /// messages in file order, and a block that cannot be read an error.
    pub fn with_limits(reader: R, limits: Limits) -> ClaudeJsonl<R> {
        ClaudeJsonl {
            limits,
            reader,
            buf: Vec::new(),
            pending: Vec::new(),
            ready: VecDeque::new(),
            after_boundary: true,
            done: false,
            sidechain: None,
            judging: false,
            tree: Tree::default(),
            stats: Stats::default(),
        }
    }

    /// A reader for judging: a block the API would refuse is an [`Item::Unreadable`]
    /// finding and the rest is judged, and each branch is its own history.
    pub fn judging(reader: R, limits: Limits) -> ClaudeJsonl<R> {
        ClaudeJsonl {
            judging: true,
            ..ClaudeJsonl::with_limits(reader, limits)
        }
    }

    fn flush(&mut self) {
        for p in self.pending.drain(..) {
            let m = p.into_located();
            self.tree.handed_out(&m);
            self.ready.push_back(Item::Message(m));
        }
    }

    fn boundary(&mut self, line: usize) {
        self.flush();
        self.tree.clear();
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
        let mut unread = Vec::new();
        let (head, message) = match quick(text) {
            Some(read) => read,
            None => match slow(text, line) {
                Ok(read) => read,
                Err(refused) if self.judging => {
                    let (head, message, problems) = salvage(text, line, refused)?;
                    unread = problems;
                    (head, message)
                }
                Err(refused) => return Err(refused),
            },
        };
        self.stats.entries += 1;
        let kind = head.kind.as_deref().unwrap_or("");
        if kind == "system" && head.subtype.as_deref() == Some("compact_boundary") {
            self.boundary(line);
            self.tree.place(head.uuid.as_deref(), None);
            return Ok(true);
        }
        let side = head.is_sidechain == Some(true);
        let message_entry = is_message(head.kind.as_deref());
        if message_entry && *self.sidechain.get_or_insert(side) != side {
            self.stats.sidechain += 1;
            return Ok(true);
        }
        self.stats.sidechain_log = self.sidechain == Some(true);
        if !unread.is_empty() {
            self.unreadable(line, unread);
        }
        let Some(message) = message else {
            if !message_entry {
                self.stats.skipped += 1;
            }
            // An entry that is not a message hangs where the branch is.
            if self.judging && self.sidechain.is_none_or(|chain| chain == side) {
                let last = self.pending.len().checked_sub(1);
                self.tree.place(head.uuid.as_deref(), last);
            }
            return Ok(true);
        };
        if head.is_compact_summary == Some(true) {
            self.boundary(line);
        }
        self.after_boundary = false;
        if self.judging && !starts_with_result(&message) {
            let continues = message.role == Role::Assistant
                && message.id.is_some()
                && self.pending.first().is_some_and(|p| p.id == message.id);
            let parent = head.parent_uuid.as_deref();
            let forks = self
                .tree
                .forks(head.uuid.as_deref(), parent, self.pending.len());
            if !continues && forks {
                // What was being assembled ends the branch it belongs to.
                self.flush();
                let prefix = self.tree.branch(parent);
                self.ready.push_back(Item::Branch { line, prefix });
                self.stats.branches += 1;
            }
        }
        let k = self.take(message, line);
        if self.judging {
            self.tree.place(head.uuid.as_deref(), k);
        }
        Ok(true)
    }

    /// What the API would refuse in the message at `line`, as findings there.
    fn unreadable(&mut self, line: usize, problems: Vec<Unreadable>) {
        for p in problems {
            let place = Place {
                line: Some(line),
                block: Some(p.block),
                ..Place::default()
            };
            self.ready.push_back(Item::Unreadable(Finding::new(
                Severity::Violation,
                "unreadable",
                "block",
                place,
                format!(
                    "{}: the Messages API refuses a request carrying it (400 invalid_request_error); the rest is judged without it",
                    p.why
                ),
            )
            .with_excerpt(&p.text)));
        }
    }

    /// Merges or queues one message entry; the index of the pending message it
    /// joined (`None` when it was handed out at once).
    fn take(&mut self, m: ApiMessage, line: usize) -> Option<usize> {
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
                    return Some(0);
                }
                self.flush();
                self.pending.push(Pending::new(m, line));
                Some(0)
            }
            Role::User if starts_with_result(&m) => {
                if let Some(last) = self.pending.last_mut()
                    && last.message.role == Role::User
                {
                    last.extend(m.content, line);
                    self.stats.merged += 1;
                    return Some(self.pending.len() - 1);
                }
                // After the assistant message it answers, or alone (and then orphaned,
                // which the pairing check reports).
                self.pending.push(Pending::new(m, line));
                Some(self.pending.len() - 1)
            }
            Role::User => {
                self.flush();
                let located = Pending::new(m, line).into_located();
                self.tree.handed_out(&located);
                self.ready.push_back(Item::Message(located));
                None
            }
        }
    }
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
                other => panic!("not read in file order: {other:?}"),
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
    fn a_main_logs_sidechain_entries_are_not_its_conversation() {
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"id":"s","role":"assistant","content":[{"type":"text","text":"sub"}]}}"#;
        let main =
            r#"{"type":"user","isSidechain":false,"message":{"role":"user","content":"go"}}"#;
        let text = [main, side].join("\n");
        let mut reader = ClaudeJsonl::new(text.as_bytes());
        assert_eq!(reader.by_ref().count(), 1);
        assert_eq!(reader.stats.sidechain, 1);
        assert!(!reader.stats.sidechain_log);
    }

    #[test]
    fn a_file_that_opens_with_a_sidechain_is_that_sidechains_conversation() {
        let side =
            r#"{"type":"user","isSidechain":true,"message":{"role":"user","content":"find it"}}"#;
        let main =
            r#"{"type":"user","isSidechain":false,"message":{"role":"user","content":"go"}}"#;
        let text = [side, main].join("\n");
        let mut reader = ClaudeJsonl::new(text.as_bytes());
        let lines: Vec<usize> = reader
            .by_ref()
            .map(|i| match i.expect("reads") {
                Item::Message(m) => m.line,
                other => panic!("a message: {other:?}"),
            })
            .collect();
        assert_eq!(lines, vec![1]);
        assert_eq!(reader.stats.sidechain, 1);
        assert!(reader.stats.sidechain_log);
    }

    fn entry(uuid: &str, parent: Option<&str>, message: &str) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        let role = if message.contains("assistant") {
            "assistant"
        } else {
            "user"
        };
        format!(r#"{{"type":"{role}","uuid":"{uuid}","parentUuid":{parent},"message":{message}}}"#)
    }

    #[test]
    fn a_branch_replays_the_prefix_it_goes_on_from_and_results_naming_their_call_are_no_fork() {
        let u = |t: &str| format!(r#"{{"role":"user","content":"{t}"}}"#);
        let a = |id: &str, t: &str| {
            format!(
                r#"{{"id":"{id}","role":"assistant","content":[{{"type":"text","text":"{t}"}}]}}"#
            )
        };
        let call = |id: &str, t: &str| {
            format!(
                r#"{{"id":"{id}","role":"assistant","content":[{{"type":"tool_use","id":"{t}","name":"ls","input":{{}}}}]}}"#
            )
        };
        let res = |t: &str| {
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{t}","content":"x"}}]}}"#
            )
        };
        let text = [
            entry("a", None, &u("go")),
            entry("b", Some("a"), &call("m1", "t1")),
            entry("c", Some("b"), &call("m1", "t2")),
            // Parallel results name the line of the call they answer.
            entry("d", Some("b"), &res("t1")),
            entry("e", Some("c"), &res("t2")),
            entry("f", Some("e"), &a("m2", "done")),
            entry("g", Some("f"), &u("more")),
            entry("h", Some("g"), &a("m3", "ok")),
            // Rewound to the reply before "more".
            entry("i", Some("f"), &u("other")),
        ]
        .join("\n");
        let got: Vec<String> = ClaudeJsonl::judging(text.as_bytes(), Limits::default())
            .map(|i| match i.expect("reads") {
                Item::Message(m) => format!("m{}", m.line),
                Item::Branch { line, prefix } => format!(
                    "branch{line}<{}>",
                    prefix
                        .iter()
                        .map(|m| m.line.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            got,
            vec!["m1", "m2", "m4", "m6", "m7", "m8", "branch9<1,2,4,6>", "m9"]
        );
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
