//! `directives_kept`: after a compaction, every directive the user gave is still in
//! front of the model, verbatim, in the next request.
//!
//! A compaction replaces the history with a summary the host wrote; the user's own
//! instructions ("never touch the tests", "answer in French") are exactly what a
//! summary paraphrases, shortens or drops, and an agent that loses them after a
//! compaction goes on against the user's words with nothing to show it. The engine
//! may keep them in the history or repeat them in the context it builds for each turn
//! (the reference engine's `<conversation_thread>`), but their words must reach the
//! model as the user wrote them, in a user-role text: a summary (the host's words,
//! placed where it likes) never stands in for them.
//!
//! Which directives: the prompts the engine acknowledged (`Observed`: accepted and
//! persisted), minus those a rewind took back on purpose (a rewind keeps only what its
//! history still shows). A prompt lost to a crash before it was acknowledged is not
//! one. Judged generically: a directive's words appear whole inside some text of a
//! user-role message, whatever wraps them.

use super::{Check, Checker, Ctx, Event, Invariant, Observation, ResetKind};
use crate::judge::finding::excerpt;
use turnsim_core::{Block, Content, Role, SharedMessage};

#[derive(Default)]
pub struct DirectivesKept {
    /// The directives standing now, oldest first.
    given: Vec<String>,
    /// The directives the next request must show: those standing at a compaction.
    pending: Vec<String>,
}

/// Whether `words` appear whole inside some user-role text of `messages`.
fn shown(messages: &[SharedMessage], words: &str) -> bool {
    messages.iter().any(|m| {
        m.role == Role::User
            && match &m.content {
                Content::Text(t) => t.contains(words),
                Content::Blocks(blocks) => blocks
                    .iter()
                    .any(|b| matches!(b, Block::Text { text } if text.contains(words))),
            }
    })
}

impl Checker for DirectivesKept {
    fn invariant(&self) -> Invariant {
        Invariant::DirectivesKept
    }

    fn events(&self) -> u32 {
        use super::on;
        on::OBSERVED | on::RESET | on::REQUEST
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Observed(Observation::Prompt { words }) => {
                self.given.push(words.clone());
                None
            }
            Event::Reset(ResetKind::Rewind) => {
                // Taken back on purpose: only what the history still shows stands.
                self.given.retain(|d| shown(ctx.history, d));
                self.pending.retain(|d| shown(ctx.history, d));
                None
            }
            Event::Reset(ResetKind::Compaction) => {
                self.pending.clone_from(&self.given);
                None
            }
            Event::Request { op, request, .. } if !self.pending.is_empty() => {
                let pending = std::mem::take(&mut self.pending);
                // The latest first: it is the one the model must above all still see.
                let lost = pending.iter().rev().find(|d| !shown(&request.messages, d));
                Some(match lost {
                    None => Ok(()),
                    Some(d) => Err(format!(
                        "request {op}, the first after a compaction, does not show the user's directive \"{}\" verbatim in any user-role text (of {} directive(s) given before it)",
                        excerpt(d),
                        pending.len()
                    )),
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use turnsim_core::{CacheHints, Message, OperationId, Request};

    fn ctx(history: &[SharedMessage]) -> Ctx<'_> {
        Ctx {
            step: 0,
            history,
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        }
    }

    fn request(texts: &[&str]) -> Request {
        Request {
            system: String::new(),
            tools: Vec::new().into(),
            thinking: None,
            messages: texts
                .iter()
                .map(|t| Arc::new(Message::user_text(*t)))
                .collect(),
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: Vec::new(),
            },
        }
    }

    fn given(c: &mut DirectivesKept, words: &str) {
        c.observe(
            &ctx(&[]),
            &Event::Observed(Observation::Prompt {
                words: words.into(),
            }),
        );
    }

    fn send(c: &mut DirectivesKept, r: &Request) -> Option<Check> {
        c.observe(
            &ctx(&[]),
            &Event::Request {
                op: OperationId(4),
                request: r,
                seen: 0,
                body: None,
            },
        )
    }

    #[test]
    fn a_directive_the_compacted_request_drops_is_a_violation() {
        let mut c = DirectivesKept::default();
        given(&mut c, "never touch the tests");
        given(&mut c, "answer in French");
        c.observe(&ctx(&[]), &Event::Reset(ResetKind::Compaction));
        let e = send(
            &mut c,
            &request(&["summary", "<d>never touch the tests</d>"]),
        )
        .unwrap()
        .unwrap_err();
        assert!(e.contains("\"answer in French\""), "{e}");
        // Only the first request after the compaction is judged.
        assert_eq!(send(&mut c, &request(&[])), None);
    }

    #[test]
    fn directives_repeated_in_a_turn_context_pass() {
        let mut c = DirectivesKept::default();
        given(&mut c, "never touch the tests");
        c.observe(&ctx(&[]), &Event::Reset(ResetKind::Compaction));
        let r = request(&["<ctx><directive>never touch the tests</directive></ctx>"]);
        assert_eq!(send(&mut c, &r), Some(Ok(())));
    }

    #[test]
    fn a_directive_a_rewind_took_back_is_not_required() {
        let mut c = DirectivesKept::default();
        given(&mut c, "first");
        given(&mut c, "second");
        let kept = [Arc::new(Message::user_text("first"))];
        c.observe(&ctx(&kept), &Event::Reset(ResetKind::Rewind));
        c.observe(&ctx(&[]), &Event::Reset(ResetKind::Compaction));
        assert_eq!(send(&mut c, &request(&["first"])), Some(Ok(())));
    }
}
