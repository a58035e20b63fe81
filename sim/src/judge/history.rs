//! One history judged message by message: every per-message rule, and pairing over
//! chunks, in one pass with bounded memory.
//!
//! Guarantees:
//! - The rules are the judge's own files ([`super::empty`], [`super::tool_ids`],
//!   [`super::markers`], [`super::notes`], [`super::taint`], [`super::pairing`]); this
//!   driver only feeds them, so a request judged live by `turnsim serve`, a request
//!   of a cassette or a recording, and a window of a Claude Code log meet the same
//!   rules.
//! - Memory holds one chunk, not the whole history: the stream is cut before every
//!   message that is not a tool-result message and does not follow a message with tool
//!   calls, so a chunk is one asking message and the results answering it, however
//!   long an unbroken tool loop runs. Cutting there changes no pairing verdict, because
//!   pairing only relates a message to the one before it and nothing is outstanding at
//!   a cut. Id uniqueness, the one rule over the whole history, is kept by
//!   [`super::tool_ids`]; the pairing of a message that reuses an id is judged all the
//!   same (the provider refuses such a request on both counts).

use super::finding::{Findings, Place};
use super::markers::{Markers, Wording, classify};
use super::notes::Notes;
use super::pairing::{End, asks, check_chunk, finding_of, is_results};
use super::rules::request::{Shape, Shown};
use super::tool_ids::ToolIds;
use super::view::Located;
use super::{empty, taint};

/// Checks one history (a window of a log, or one request) message by message.
pub struct HistoryCheck {
    place: Place,
    wording: Wording,
    chunk: Vec<Located>,
    /// The index of each chunk message in the input.
    indices: Vec<usize>,
    count: usize,
    tool_ids: ToolIds,
    markers: Markers,
    notes: Notes,
    /// The history is a whole request as sent, whose last message may be an empty
    /// assistant message (the API allows that one).
    ends_request: bool,
}

impl HistoryCheck {
    /// `place` carries the window or request every finding belongs to.
    pub fn new(place: Place) -> HistoryCheck {
        HistoryCheck {
            place,
            wording: Wording::REFERENCE,
            chunk: Vec::new(),
            indices: Vec::new(),
            count: 0,
            tool_ids: ToolIds::default(),
            markers: Markers::default(),
            notes: Notes::default(),
            ends_request: false,
        }
    }

    /// Checks one whole request as sent (not a window of a log).
    pub fn for_request(place: Place) -> HistoryCheck {
        HistoryCheck {
            ends_request: true,
            ..HistoryCheck::new(place)
        }
    }

    /// Checks the next message of the stream.
    pub fn push(&mut self, m: Located, out: &mut Findings) {
        let i = m.index.unwrap_or(self.count);
        self.count += 1;
        empty::check(i, &m, &self.place, out);
        self.tool_ids.check(i, &m, &self.place, out);
        let kinds = classify(&m.message, &self.wording);
        self.markers.check(i, &m, &kinds, &self.place, out);
        self.notes.check(i, &m, &kinds, &self.place, out);
        taint::check(i, &m, &self.place, out);
        let cut = !self.chunk.is_empty()
            && !is_results(&m.message)
            && !self.chunk.last().is_some_and(|l| asks(&l.message));
        if cut {
            self.flush(None, out);
        }
        self.chunk.push(m);
        self.indices.push(i);
    }

    /// Ends the stream; `end` says how a call still open at the end is judged.
    pub fn finish(mut self, end: End, out: &mut Findings) {
        self.flush(Some(end), out);
    }

    fn flush(&mut self, end: Option<End>, out: &mut Findings) {
        let chunk = std::mem::take(&mut self.chunk);
        let indices = std::mem::take(&mut self.indices);
        check_chunk(&chunk, &indices, end, self.ends_request, &self.place, out);
    }
}

/// Judges one request's messages: every per-message rule, pairing with nothing left
/// open at the end, and the rules about the request as a whole
/// ([`super::rules::request`]) as far as `shown` says what the request is.
pub fn judge_request(messages: &[Located], shown: Shown, place: &Place) -> Findings {
    let mut out = Findings::default();
    let mut check = if shown.whole_request {
        HistoryCheck::for_request(place.clone())
    } else {
        HistoryCheck::new(place.clone())
    };
    let mut shape = Shape::default();
    for (k, m) in messages.iter().enumerate() {
        shape.push(m.index.unwrap_or(k), &m.message);
        check.push(m.clone(), &mut out);
    }
    check.finish(End::Violation, &mut out);
    for b in shape.finish(shown) {
        let located = messages
            .iter()
            .enumerate()
            .find(|(k, m)| m.index.unwrap_or(*k) == b.message);
        if let Some((_, located)) = located {
            out.push(finding_of(&b, located, place));
        }
    }
    out
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::finding::Findings;
    use std::sync::Arc;
    use turnsim_core::{Block, Message};

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

    #[test]
    fn an_unbroken_tool_loop_is_held_one_round_at_a_time() {
        let mut out = Findings::default();
        let mut check = HistoryCheck::new(Place::default());
        let mut most = 0;
        let mut push = |check: &mut HistoryCheck, m: Message, out: &mut Findings| {
            let i = check.count + 1;
            check.push(Located::new(Arc::new(m), i), out);
            most = most.max(check.chunk.len());
        };
        push(&mut check, user("go"), &mut out);
        for k in 0..50 {
            let id = format!("t{k}");
            push(&mut check, calls(&[&id]), &mut out);
            push(&mut check, results(&[&id]), &mut out);
        }
        push(&mut check, Message::assistant_text("done"), &mut out);
        check.finish(End::TurnOpen, &mut out);
        assert_eq!(out.kept, vec![]);
        assert_eq!(most, 2);
    }

    #[test]
    fn a_message_reusing_an_id_still_has_its_pairing_judged() {
        let f = run(
            vec![
                user("go"),
                calls(&["a"]),
                results(&["a"]),
                calls(&["a", "b"]),
                results(&["a"]),
                Message::assistant_text("done"),
            ],
            End::TurnOpen,
        );
        let kinds: Vec<(&str, String, Option<usize>)> = f
            .kept
            .iter()
            .map(|x| (x.check, x.kind.clone(), x.place.message))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("tool_id_unique", "duplicate_tool_use_id".into(), Some(3)),
                ("pairing", "missing_tool_result".into(), Some(3)),
            ]
        );
    }
}
