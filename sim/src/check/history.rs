//! The history checks on one message stream: pairing, ordering and emptiness (spec §2,
//! through `turnsim_core::validate_history`), tool-id uniqueness, and marker and note
//! exactness and deduplication (spec §4, §5).
//!
//! Guarantees:
//! - The verdict on pairing is `validate_history`'s own, not a second implementation:
//!   the stream is cut into chunks at points where no tool call is outstanding (before
//!   a plain user message that follows no tool calls), and each chunk is validated as
//!   a history. Cutting there changes no verdict, because pairing only relates a
//!   message to the one before it; the one global rule, id uniqueness, is checked
//!   here over the whole window. So memory holds one chunk, not the whole file.
//! - Every violation is reported, not just the first: after a violation the chunk is
//!   validated again from the next message that is not a tool-result message, so one
//!   broken pair does not hide the rest and does not cascade into false reports.
//! - A tool call left open at the very end of a log is "turn open" (information: the
//!   log was captured mid-turn), never corruption; in a request that was actually
//!   sent, the same thing is a violation, since the provider rejects it.

use super::findings::{Finding, Findings, Place, Severity};
use super::markers::{TextKind, classify};
use super::source::Located;
use crate::checkers::pairing::{EmptyPart, empty_part};
use std::collections::{BTreeMap, BTreeSet};
use turnsim_core::{Block, HistoryError, Message, Role, SharedMessage, validate_history};

/// How a tool call still unanswered at the end of the stream is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The end of a log that may have been captured mid-turn: information.
    TurnOpen,
    /// The end of a request that was sent, or of a window a compaction closed: a
    /// violation.
    Violation,
}

/// Checks one history (a window of a log, or one request) message by message.
pub struct HistoryCheck {
    place: Place,
    chunk: Vec<Located>,
    /// Window index of `chunk[0]`.
    chunk_start: usize,
    count: usize,
    /// Where each tool_use id was first used: message index and line.
    tool_ids: BTreeMap<String, (usize, usize)>,
    previous_marker: Option<usize>,
    previous_note: Option<usize>,
}

fn is_results(m: &Message) -> bool {
    m.role == Role::User
        && m.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
}

fn asks(m: &Message) -> bool {
    m.role == Role::Assistant && m.has_tool_use()
}

/// The same error with every message index moved by `by`, so a chunk's verdict (and
/// its `Display`, which names indices) speaks of positions in the whole window.
fn shift(e: HistoryError, by: usize) -> HistoryError {
    use HistoryError as H;
    let s = |i: usize| i.saturating_add(by);
    match e {
        H::MissingToolResult {
            message,
            tool_use_id,
        } => H::MissingToolResult {
            message: s(message),
            tool_use_id,
        },
        H::NoAnsweringMessage {
            message,
            tool_use_id,
        } => H::NoAnsweringMessage {
            message: s(message),
            tool_use_id,
        },
        H::UnansweredAtEnd {
            message,
            tool_use_ids,
        } => H::UnansweredAtEnd {
            message: s(message),
            tool_use_ids,
        },
        H::DuplicateToolResult {
            message,
            block,
            tool_use_id,
        } => H::DuplicateToolResult {
            message: s(message),
            block,
            tool_use_id,
        },
        H::UnexpectedToolResult {
            message,
            block,
            tool_use_id,
        } => H::UnexpectedToolResult {
            message: s(message),
            block,
            tool_use_id,
        },
        H::ToolResultAfterOtherBlock {
            message,
            block,
            tool_use_id,
        } => H::ToolResultAfterOtherBlock {
            message: s(message),
            block,
            tool_use_id,
        },
        H::EmptyAssistantContent { message } => H::EmptyAssistantContent {
            message: s(message),
        },
        H::DuplicateToolUseId {
            message,
            block,
            tool_use_id,
            first_message,
        } => H::DuplicateToolUseId {
            message: s(message),
            block,
            tool_use_id,
            first_message: s(first_message),
        },
        H::ToolUseInUserMessage {
            message,
            block,
            tool_use_id,
        } => H::ToolUseInUserMessage {
            message: s(message),
            block,
            tool_use_id,
        },
    }
}

/// The block of `m` that holds tool_use `id`, if any.
fn tool_use_block(m: &Message, id: &str) -> Option<usize> {
    m.blocks()
        .iter()
        .position(|b| matches!(b, Block::ToolUse { id: i, .. } if i == id))
}

/// `id (name)` for each id, as the asking message names the tools.
fn calls_named(m: &Message, ids: &[String]) -> String {
    ids.iter()
        .map(|id| {
            let name = m.blocks().iter().find_map(|b| match b {
                Block::ToolUse { id: i, name, .. } if i == id => Some(name.as_str()),
                _ => None,
            });
            match name {
                Some(name) => format!("{id} ({name})"),
                None => id.clone(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn block_json(m: &Message, block: Option<usize>) -> String {
    match block.and_then(|b| m.blocks().get(b)) {
        Some(b) => serde_json::to_string(b).unwrap_or_default(),
        None => m.to_json(),
    }
}

impl HistoryCheck {
    /// `place` carries the window or request every finding belongs to.
    pub fn new(place: Place) -> HistoryCheck {
        HistoryCheck {
            place,
            chunk: Vec::new(),
            chunk_start: 0,
            count: 0,
            tool_ids: BTreeMap::new(),
            previous_marker: None,
            previous_note: None,
        }
    }

    /// Messages pushed so far.
    pub fn messages(&self) -> usize {
        self.count
    }

    fn at(&self, line: usize, message: usize, block: Option<usize>) -> Place {
        Place {
            line: Some(line),
            message: Some(message),
            block,
            ..self.place.clone()
        }
    }

    /// Checks the next message of the stream.
    pub fn push(&mut self, m: Located, out: &mut Findings) {
        let index = self.count;
        self.count += 1;
        self.per_message(index, &m, out);
        let cut = !self.chunk.is_empty()
            && m.message.role == Role::User
            && !is_results(&m.message)
            && !self.chunk.last().is_some_and(|l| asks(&l.message));
        if cut {
            self.flush(None, out);
        }
        self.chunk.push(m);
    }

    /// Ends the stream; `end` says how a call still open at the end is judged.
    pub fn finish(mut self, end: End, out: &mut Findings) {
        self.flush(Some(end), out);
    }

    fn per_message(&mut self, i: usize, m: &Located, out: &mut Findings) {
        let msg = &m.message;
        match empty_part(msg) {
            Some(EmptyPart::UserMessage) => out.push(
                Finding::new(
                    Severity::Violation,
                    "empty",
                    "empty_user_message",
                    self.at(m.line, i, None),
                    format!("message {i}: user message has empty content"),
                )
                .with_excerpt(&msg.to_json()),
            ),
            Some(EmptyPart::TextBlock(j)) => out.push(
                Finding::new(
                    Severity::Violation,
                    "empty",
                    "empty_text_block",
                    self.at(m.line_of(Some(j)), i, Some(j)),
                    format!("message {i}, block {j}: text block is empty"),
                )
                .with_excerpt(&msg.to_json()),
            ),
            None => {}
        }
        if msg.role == Role::Assistant {
            for (j, b) in msg.blocks().iter().enumerate() {
                let Block::ToolUse { id, .. } = b else {
                    continue;
                };
                let line = m.line_of(Some(j));
                match self.tool_ids.get(id) {
                    Some(&(first, first_line)) => out.push(
                        Finding::new(
                            Severity::Violation,
                            "tool_id_unique",
                            "duplicate_tool_use_id",
                            self.at(line, i, Some(j)),
                            format!(
                                "message {i}, block {j}: tool_use id {id} is already used by message {first} (line {first_line})"
                            ),
                        )
                        .with_excerpt(&block_json(msg, Some(j))),
                    ),
                    None => {
                        self.tool_ids.insert(id.clone(), (i, line));
                    }
                }
            }
        }
        self.markers_and_notes(i, m, out);
    }

    fn markers_and_notes(&mut self, i: usize, m: &Located, out: &mut Findings) {
        let mut marker = false;
        let mut note = false;
        for (block, kind) in classify(&m.message) {
            let place = self.at(m.line_of(block), i, block);
            match kind {
                TextKind::Marker(reason) => {
                    marker = true;
                    if let Some(p) = self.previous_marker {
                        out.push(
                            Finding::new(
                                Severity::Violation,
                                "marker_once",
                                "doubled_marker",
                                place,
                                format!("messages {p} and {i} are both interruption markers"),
                            )
                            .with_excerpt(reason.marker()),
                        );
                    }
                }
                TextKind::Note => {
                    note = true;
                    if let Some(p) = self.previous_note {
                        out.push(
                            Finding::new(
                                Severity::Violation,
                                "note_once",
                                "doubled_note",
                                place,
                                format!("messages {p} and {i} are both tool-in-flight notes"),
                            )
                            .with_excerpt(m.message.string_content().unwrap_or_default()),
                        );
                    }
                }
                TextKind::ForeignMarker { text, runtime } => {
                    let (kind, detail) = match runtime {
                        Some(r) => (
                            "claude_code",
                            format!(
                                "message {i}: {r}'s own interruption marker form, not one of turnsim's seven (a foreign marker, not a violation)"
                            ),
                        ),
                        None => (
                            "unrecognised",
                            format!(
                                "message {i}: a marker-like text block of an unrecognised form (turnsim writes markers only as string content)"
                            ),
                        ),
                    };
                    out.push(
                        Finding::new(Severity::Info, "foreign_marker", kind, place, detail)
                            .with_excerpt(text),
                    );
                }
                TextKind::NearMarker(text) => out.push(
                    Finding::new(
                        Severity::Violation,
                        "marker_exact",
                        "near_marker",
                        place,
                        format!(
                            "message {i} looks like an interruption marker but is not one of the seven"
                        ),
                    )
                    .with_excerpt(text),
                ),
                TextKind::NearNote(text) => out.push(
                    Finding::new(
                        Severity::Violation,
                        "note_exact",
                        "near_note",
                        place,
                        format!(
                            "message {i} is worded like a tool-in-flight note but is not one the note generator writes"
                        ),
                    )
                    .with_excerpt(text),
                ),
            }
        }
        self.previous_marker = marker.then_some(i);
        self.previous_note = note.then_some(i);
    }

    fn flush(&mut self, end: Option<End>, out: &mut Findings) {
        let chunk = std::mem::take(&mut self.chunk);
        let base = self.chunk_start;
        self.chunk_start += chunk.len();
        let messages: Vec<SharedMessage> = chunk.iter().map(|l| l.message.clone()).collect();
        let mut start = 0;
        while start < messages.len() {
            let Err(e) = validate_history(&messages[start..]) else {
                break;
            };
            let e = shift(e, base + start);
            let at = e.message_index().saturating_sub(base);
            self.report(&e, &chunk, base, end, out);
            // Resynchronise after the message at fault, skipping the tool-result
            // messages that answered it: validated alone they would all look orphaned.
            let mut next = at + 1;
            while next < messages.len() && is_results(&messages[next]) {
                next += 1;
            }
            start = next;
        }
    }

    fn report(
        &self,
        e: &HistoryError,
        chunk: &[Located],
        base: usize,
        end: Option<End>,
        out: &mut Findings,
    ) {
        let index = e.message_index();
        let Some(at) = chunk.get(index.saturating_sub(base)) else {
            return;
        };
        let msg = &at.message;
        // Findings about an unanswered call point at the tool_use block that asked.
        let block = e
            .block_index()
            .or_else(|| e.tool_use_id().and_then(|id| tool_use_block(msg, id)));
        let place = self.at(at.line_of(block), index, block);
        let excerpt = block_json(msg, block);
        let (severity, check, kind, detail) = match e {
            // Reported over the whole window by `per_message`.
            HistoryError::DuplicateToolUseId { .. } => return,
            HistoryError::UnansweredAtEnd { tool_use_ids, .. } if end == Some(End::TurnOpen) => (
                Severity::Info,
                "turn_open",
                "unanswered_at_end",
                format!(
                    "message {index}: the log ends with unanswered tool {} {}: captured mid-turn, not corruption",
                    if tool_use_ids.len() == 1 {
                        "call"
                    } else {
                        "calls"
                    },
                    calls_named(msg, tool_use_ids)
                ),
            ),
            HistoryError::MissingToolResult { .. }
                if end == Some(End::TurnOpen) && self.partial_batch_at_end(index, chunk, base) =>
            {
                let asked = msg.tool_calls().len();
                let answered = chunk.last().map(|l| l.message.blocks().len()).unwrap_or(0);
                (
                    Severity::Info,
                    "turn_open",
                    "partial_results_at_end",
                    format!(
                        "message {index}: the log ends while its tool batch runs ({answered} of {asked} results so far): captured mid-turn, not corruption"
                    ),
                )
            }
            HistoryError::EmptyAssistantContent { .. } => {
                (Severity::Violation, "empty", e.kind(), e.to_string())
            }
            _ => (Severity::Violation, "pairing", e.kind(), e.to_string()),
        };
        out.push(Finding::new(severity, check, kind, place, detail).with_excerpt(&excerpt));
    }

    /// True when the asking message at `index` is answered by the stream's last
    /// message, which holds only results for calls it asked, each once: the log was
    /// cut while the batch's results were still arriving.
    fn partial_batch_at_end(&self, index: usize, chunk: &[Located], base: usize) -> bool {
        let (Some(asker), Some(last)) = (chunk.get(index.saturating_sub(base)), chunk.last())
        else {
            return false;
        };
        if base + chunk.len() != index + 2 {
            return false;
        }
        let asked: BTreeSet<String> = asker
            .message
            .tool_calls()
            .into_iter()
            .map(|c| c.id)
            .collect();
        let mut seen = BTreeSet::new();
        last.message.role == Role::User
            && !last.message.blocks().is_empty()
            && last.message.blocks().iter().all(|b| match b {
                Block::ToolResult { tool_use_id, .. } => {
                    asked.contains(tool_use_id) && seen.insert(tool_use_id.clone())
                }
                _ => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn user(text: &str) -> Message {
        Message::user_text(text)
    }

    fn calls(ids: &[&str]) -> Message {
        Message::assistant_blocks(
            ids.iter()
                .map(|id| Block::ToolUse {
                    id: id.to_string(),
                    name: "Bash".into(),
                    input: serde_json::json!({}),
                })
                .collect(),
        )
    }

    fn results(ids: &[&str]) -> Message {
        Message::user_blocks(
            ids.iter()
                .map(|id| Block::tool_result(*id, "ok", false))
                .collect(),
        )
    }

    fn run(messages: Vec<Message>, end: End) -> Findings {
        let mut out = Findings::default();
        let mut check = HistoryCheck::new(Place::default());
        for (i, m) in messages.into_iter().enumerate() {
            check.push(Located::new(Arc::new(m), i + 1), &mut out);
        }
        check.finish(end, &mut out);
        out
    }

    fn summary(f: &Findings) -> Vec<(String, &'static str, String, Option<usize>)> {
        f.kept
            .iter()
            .map(|x| {
                (
                    x.severity.as_str().to_string(),
                    x.check,
                    x.kind.clone(),
                    x.place.message,
                )
            })
            .collect()
    }

    #[test]
    fn a_clean_history_has_no_findings() {
        let f = run(
            vec![
                user("go"),
                calls(&["a", "b"]),
                results(&["b", "a"]),
                Message::assistant_text("done"),
                user("next"),
                calls(&["c"]),
                results(&["c"]),
                Message::assistant_text("ok"),
            ],
            End::TurnOpen,
        );
        assert_eq!(f.kept, vec![]);
    }

    #[test]
    fn a_dangling_call_at_the_end_of_a_log_is_turn_open_not_a_violation() {
        let f = run(vec![user("go"), calls(&["a"])], End::TurnOpen);
        assert_eq!(
            summary(&f),
            vec![(
                "info".into(),
                "turn_open",
                "unanswered_at_end".into(),
                Some(1)
            )]
        );
        assert_eq!(f.violations, 0);
        assert_eq!(
            f.kept[0].detail,
            "message 1: the log ends with unanswered tool call a (Bash): captured mid-turn, not corruption"
        );
    }

    #[test]
    fn a_dangling_call_at_the_end_of_a_sent_request_is_a_violation() {
        let f = run(vec![user("go"), calls(&["a"])], End::Violation);
        assert_eq!(
            summary(&f),
            vec![(
                "violation".into(),
                "pairing",
                "unanswered_at_end".into(),
                Some(1)
            )]
        );
    }

    #[test]
    fn a_log_cut_while_results_arrive_is_turn_open() {
        let f = run(
            vec![user("go"), calls(&["a", "b"]), results(&["b"])],
            End::TurnOpen,
        );
        assert_eq!(
            summary(&f),
            vec![(
                "info".into(),
                "turn_open",
                "partial_results_at_end".into(),
                Some(1)
            )]
        );
    }

    #[test]
    fn words_instead_of_results_at_the_end_are_a_violation_not_a_turn_open() {
        let f = run(
            vec![user("go"), calls(&["a"]), user("never mind")],
            End::TurnOpen,
        );
        assert_eq!(
            summary(&f),
            vec![(
                "violation".into(),
                "pairing",
                "missing_tool_result".into(),
                Some(1)
            )]
        );
        let f = run(
            vec![user("go"), calls(&["a", "b"]), results(&["a", "zz"])],
            End::TurnOpen,
        );
        assert_eq!(f.violations, 1);
    }

    #[test]
    fn every_violation_is_reported_without_cascading() {
        let f = run(
            vec![
                user("go"),
                calls(&["a", "b"]),
                results(&["a"]),
                Message::assistant_text("hm"),
                user("again"),
                calls(&["c"]),
                user("stop"),
                Message::assistant_blocks(vec![]),
                results(&["zz"]),
            ],
            End::TurnOpen,
        );
        assert_eq!(
            summary(&f),
            vec![
                (
                    "violation".into(),
                    "pairing",
                    "missing_tool_result".into(),
                    Some(1)
                ),
                (
                    "violation".into(),
                    "pairing",
                    "missing_tool_result".into(),
                    Some(5)
                ),
                (
                    "violation".into(),
                    "empty",
                    "empty_assistant_content".into(),
                    Some(7)
                ),
            ]
        );
        // The orphaned result right after the empty message is skipped by the
        // resynchronisation, and indices are the window's, not the chunk's.
        assert_eq!(
            f.kept[1].detail,
            "message 5: tool call c has no tool_result in message 6"
        );
    }

    #[test]
    fn tool_ids_are_unique_across_chunks() {
        let f = run(
            vec![
                user("go"),
                calls(&["a"]),
                results(&["a"]),
                Message::assistant_text("done"),
                user("next"),
                calls(&["a"]),
                results(&["a"]),
            ],
            End::TurnOpen,
        );
        assert_eq!(
            summary(&f),
            vec![(
                "violation".into(),
                "tool_id_unique",
                "duplicate_tool_use_id".into(),
                Some(5)
            )]
        );
        assert_eq!(
            f.kept[0].detail,
            "message 5, block 0: tool_use id a is already used by message 1 (line 2)"
        );
    }

    #[test]
    fn doubled_markers_and_empty_parts_are_reported() {
        let f = run(
            vec![
                user("go"),
                Message::assistant_text("x"),
                user("[Request interrupted by user]"),
                user("[Request interrupted: runtime restarted]"),
                user(""),
                Message::assistant_blocks(vec![Block::text("")]),
            ],
            End::TurnOpen,
        );
        assert_eq!(
            summary(&f),
            vec![
                (
                    "violation".into(),
                    "marker_once",
                    "doubled_marker".into(),
                    Some(3)
                ),
                (
                    "violation".into(),
                    "empty",
                    "empty_user_message".into(),
                    Some(4)
                ),
                (
                    "violation".into(),
                    "empty",
                    "empty_text_block".into(),
                    Some(5)
                ),
            ]
        );
    }
}
