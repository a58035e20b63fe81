//! `compaction_applied`: a compaction the engine accepted reaches the model: the
//! next request shows the host's summary, verbatim, somewhere in what it sends.
//!
//! The host compacts because the context is too long or too costly; an engine that
//! says yes and then sends the old history unchanged (or sends a new one without the
//! summary) leaves the host believing the context was replaced while the model never
//! hears what the summary kept. Nothing else notices: the directives are all still
//! there, the history still pairs, the prefix even stays warm. Where the engine puts
//! the summary (an assistant message as the reference does, a user message, the
//! system prompt) is its own design, so any text of the request counts; only its
//! absence is a violation. A refused compaction asks nothing (`stale_noop` judges
//! that the refusal left the engine as it was), and a blank summary is a hostile
//! input `hostile_input` judges, so only a compaction that brought a new host text
//! is followed here. A rewind after the compaction that took the summary back out
//! of the history on purpose cancels the demand. A compaction of an empty history
//! asks nothing either: there is nothing to replace, and an engine may accept it as
//! the no-op it is.

use super::{Check, Checker, Ctx, Event, Invariant, ResetKind};
use crate::judge::finding::excerpt;
use turnsim_core::{Block, Content, Request, SharedMessage};

#[derive(Default)]
pub struct CompactionApplied {
    /// How many host texts earlier compactions brought.
    seen: usize,
    /// The summary the next request must show.
    pending: Option<String>,
    /// The history's length at the end of the last step or restart: what a
    /// compaction in this step replaces.
    before: usize,
}

fn in_messages(messages: &[SharedMessage], words: &str) -> bool {
    messages.iter().any(|m| match &m.content {
        Content::Text(t) => t.contains(words),
        Content::Blocks(blocks) => blocks
            .iter()
            .any(|b| matches!(b, Block::Text { text } if text.contains(words))),
    })
}

fn shown(request: &Request, words: &str) -> bool {
    request.system.contains(words) || in_messages(&request.messages, words)
}

impl Checker for CompactionApplied {
    fn invariant(&self) -> Invariant {
        Invariant::CompactionApplied
    }

    fn events(&self) -> u32 {
        use super::on;
        on::RESET | on::REQUEST | on::STEP | on::RESTARTED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Step | Event::Restarted { .. } => {
                self.before = ctx.history.len();
                None
            }
            Event::Reset(ResetKind::Compaction) => {
                if ctx.host_texts.len() > self.seen {
                    self.seen = ctx.host_texts.len();
                    self.pending = (self.before > 0)
                        .then(|| ctx.host_texts.last().cloned())
                        .flatten();
                }
                None
            }
            Event::Reset(ResetKind::Rewind) => {
                if let Some(s) = &self.pending
                    && !in_messages(ctx.history, s)
                {
                    self.pending = None;
                }
                None
            }
            Event::Request { op, request, .. } => {
                let summary = self.pending.take()?;
                Some(if shown(request, &summary) {
                    Ok(())
                } else {
                    Err(format!(
                        "request {op}, the first after a compaction the engine accepted, does not show the host's summary \"{}\" in any text it sends (the system prompt or any message): the compaction was accepted but never reached the model",
                        excerpt(&summary)
                    ))
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
    use turnsim_core::{CacheHints, Message, OperationId};

    fn ctx<'a>(history: &'a [SharedMessage], host: &'a [String]) -> Ctx<'a> {
        Ctx {
            step: 0,
            history,
            fixed_texts: &[],
            prompts: &[],
            host_texts: host,
        }
    }

    fn request(system: &str, texts: &[&str]) -> Request {
        Request {
            system: system.into(),
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

    /// A step ends with a history of one message, so a compaction has something to
    /// replace.
    fn step(c: &mut CompactionApplied) {
        let h = [Arc::new(Message::user_text("the old first prompt"))];
        c.observe(&ctx(&h, &[]), &Event::Step);
    }

    fn send(c: &mut CompactionApplied, r: &Request) -> Option<Check> {
        c.observe(
            &ctx(&[], &[]),
            &Event::Request {
                op: OperationId(7),
                request: r,
                seen: 0,
                body: None,
            },
        )
    }

    #[test]
    fn an_accepted_compaction_whose_summary_the_next_request_lacks_is_a_violation() {
        let mut c = CompactionApplied::default();
        step(&mut c);
        let host = ["summary of 12 messages".to_owned()];
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
        let e = send(
            &mut c,
            &request("sys", &["the old first prompt", "old reply"]),
        )
        .unwrap()
        .unwrap_err();
        assert!(e.contains("request op#7"), "{e}");
        assert!(e.contains("\"summary of 12 messages\""), "{e}");
        // Only the first request after the compaction is judged.
        assert_eq!(send(&mut c, &request("sys", &[])), None);
    }

    #[test]
    fn a_summary_in_any_message_or_in_the_system_prompt_passes() {
        let host = ["summary of 3 messages".to_owned()];
        for r in [
            request("sys", &["notice", "summary of 3 messages", "next prompt"]),
            request("sys\n\nsummary of 3 messages", &["next prompt"]),
        ] {
            let mut c = CompactionApplied::default();
            step(&mut c);
            c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
            assert_eq!(send(&mut c, &r), Some(Ok(())));
        }
    }

    #[test]
    fn a_compaction_that_brought_no_new_host_text_asks_nothing() {
        // The hostile blank summary: no host text is added, so the last compaction's
        // summary, already shown, is not asked for again.
        let mut c = CompactionApplied::default();
        step(&mut c);
        let host = ["summary of 3 messages".to_owned()];
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
        assert_eq!(
            send(&mut c, &request("", &["summary of 3 messages"])),
            Some(Ok(()))
        );
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
        assert_eq!(send(&mut c, &request("", &["new"])), None);
    }

    #[test]
    fn a_compaction_of_an_empty_history_asks_nothing() {
        let mut c = CompactionApplied::default();
        c.observe(&ctx(&[], &[]), &Event::Step);
        let host = ["summary of 0 messages".to_owned()];
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
        assert_eq!(send(&mut c, &request("", &["first prompt"])), None);
    }

    #[test]
    fn a_rewind_that_took_the_summary_back_cancels_the_demand() {
        let mut c = CompactionApplied::default();
        step(&mut c);
        let host = ["summary of 3 messages".to_owned()];
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Rewind));
        assert_eq!(send(&mut c, &request("", &["a new prompt"])), None);
        // A rewind that kept it changes nothing.
        let mut c = CompactionApplied::default();
        step(&mut c);
        c.observe(&ctx(&[], &host), &Event::Reset(ResetKind::Compaction));
        let kept = [Arc::new(Message::user_text("summary of 3 messages"))];
        c.observe(&ctx(&kept, &host), &Event::Reset(ResetKind::Rewind));
        assert!(matches!(send(&mut c, &request("", &["x"])), Some(Err(_))));
    }
}
