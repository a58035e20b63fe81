//! The rules about a request as a whole, that no window of it can judge: which role
//! opens it, what thinking requires of the turn it ends in, and text blocks that
//! hold only whitespace (a Messages API rule: judged only on a whole Messages request,
//! never on another API's messages mapped onto these types, which accept them).
//!
//! Guarantees:
//! - Streaming and small: [`Shape`] keeps a few indices, not messages' contents
//!   beyond what it judges, so a caller that judged an accepted prefix can carry its
//!   shape on and push only the messages appended since.
//! - A rule that needs to know whether thinking is on applies only when the request
//!   says so ([`Shown::thinking`]); a request that does not show it is not judged by
//!   a guess.

use super::walk::{Breach, Kind};
use turnsim_core::{Block, Message, Role};

/// What a request shows besides its messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// The messages judged are a whole Messages API request as sent (not a window of
    /// a log, nor another API's messages mapped onto these types).
    pub whole_request: bool,
    /// The request's `thinking` setting, when it shows one: `Some(false)` for a body
    /// without `thinking` or with it disabled.
    pub thinking: Option<bool>,
}

/// Where the request stands, message by message.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    count: usize,
    /// The first message's index and role, once seen.
    first: Option<(usize, Role)>,
    /// The first assistant message after the last user message that holds no
    /// tool_result: where the assistant's current turn began, and its first block's
    /// type.
    turn_start: Option<(usize, String)>,
    /// The last message: its index, role, and whether it is a user message of results
    /// only.
    last: Option<(usize, Role, bool)>,
    /// The first thinking block (message, block) of the current turn's assistant
    /// messages. The API's "final position" is that whole turn, a tool loop included
    /// (its error names an assistant message followed by tool results), not only a
    /// request's last message.
    turn_thinking: Option<(usize, usize)>,
    /// An assistant message already opened the current turn.
    in_turn: bool,
    /// The first text block that holds only whitespace: (message, block).
    blank: Option<(usize, usize)>,
}

impl Shape {
    /// Takes message `i` (messages come in order).
    pub fn push(&mut self, i: usize, m: &Message) {
        if self.count == 0 {
            self.first = Some((i, m.role));
        }
        self.count += 1;
        let results_only = m.role == Role::User
            && !m.blocks().is_empty()
            && m.blocks()
                .iter()
                .all(|b| matches!(b, Block::ToolResult { .. }));
        let has_results = m
            .blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }));
        match m.role {
            Role::User if !has_results => {
                self.in_turn = false;
                self.turn_start = None;
                self.turn_thinking = None;
            }
            Role::User => {}
            Role::Assistant if !self.in_turn => {
                self.in_turn = true;
                let found = m
                    .blocks()
                    .first()
                    .map(|b| b.kind().to_owned())
                    .unwrap_or_else(|| "text".to_owned());
                self.turn_start = Some((i, found));
            }
            Role::Assistant => {}
        }
        if m.role == Role::Assistant
            && self.turn_thinking.is_none()
            && let Some(j) = m
                .blocks()
                .iter()
                .position(|b| matches!(b, Block::Thinking { .. } | Block::RedactedThinking { .. }))
        {
            self.turn_thinking = Some((i, j));
        }
        self.last = Some((i, m.role, results_only));
        if self.blank.is_none()
            && let Some(j) = m.blocks().iter().position(
                |b| matches!(b, Block::Text { text } if !text.is_empty() && text.trim().is_empty()),
            )
        {
            self.blank = Some((i, j));
        }
    }

    /// The breaches of the request-level rules, in message order, once every message
    /// has been pushed. Nothing unless `shown` says this is a whole request.
    pub fn finish(&self, shown: Shown) -> Vec<Breach> {
        let mut out = Vec::new();
        if !shown.whole_request {
            return out;
        }
        if let Some((first, Role::Assistant)) = self.first {
            out.push(Breach {
                message: first,
                block: None,
                kind: Kind::FirstMessageNotUser,
            });
        }
        // The request ends inside the assistant's turn: with its last message, or with
        // the results of a tool loop that turn opened.
        let open_turn = matches!(
            self.last,
            Some((_, Role::Assistant, _) | (_, Role::User, true))
        );
        match (shown.thinking, &self.last, &self.turn_start) {
            (Some(true), Some((_, Role::User, true)), Some((start, found)))
                if found != "thinking" && found != "redacted_thinking" =>
            {
                out.push(Breach {
                    message: *start,
                    block: Some(0),
                    kind: Kind::ThinkingDropped {
                        found: found.clone(),
                    },
                });
            }
            (Some(false), _, _) if open_turn => {
                if let Some((message, block)) = self.turn_thinking {
                    out.push(Breach {
                        message,
                        block: Some(block),
                        kind: Kind::ThinkingWhileOff,
                    });
                }
            }
            _ => {}
        }
        if let Some((message, block)) = self.blank {
            out.push(Breach {
                message,
                block: Some(block),
                kind: Kind::BlankTextBlock,
            });
        }
        out.sort_by_key(|b| b.message);
        out
    }
}
