//! `note_exact` (convention, with a generic part): no user-role message carries
//! model-written text outside a tool result (generic: any engine); and, as far as
//! the profile knows the engine's texts, every user-role text it writes is exactly a
//! marker, a tool-in-flight note, a prompt of the user's own words wrapped as the
//! engine wraps them, or another fixed text of the engine (docs/spec.md §5, §8).
//!
//! A user-role message is what the model trusts most; model-controlled text copied
//! into one (a tool name, a reply) is a prompt injection the runtime performed itself.
//! Exactness needs the whole vocabulary (markers, notes and the prompt wrapping):
//! without it a user string cannot be told from the engine's own, so only the
//! generic part runs.

use std::sync::Arc;

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use crate::conventions::{CheckKind, Conventions, PromptWrap};
use turnsim_core::request::TURN_CONTEXT_OPEN;
use turnsim_core::{Block, Role};

pub struct NoteExact {
    conventions: Arc<Conventions>,
    /// The mark the world's model writes into every text of its own.
    model_mark: &'static str,
}

impl NoteExact {
    pub fn new(conventions: Arc<Conventions>, model_mark: &'static str) -> NoteExact {
        NoteExact {
            conventions,
            model_mark,
        }
    }
}

impl Checker for NoteExact {
    fn invariant(&self) -> Invariant {
        Invariant::NoteExact
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Convention
    }

    fn events(&self) -> u32 {
        use super::on;
        on::REQUEST
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Request {
            op, request, seen, ..
        } = event
        else {
            return None;
        };
        let c = &self.conventions;
        let exact = match (&c.markers, &c.notes, c.prompt) {
            (Some(markers), Some(notes), Some(wrap)) => Some((markers, notes, wrap)),
            _ => None,
        };
        let fixed = c.fixed_texts.as_deref().unwrap_or(ctx.fixed_texts);
        // A compaction summary the host handed is the host's text wherever the engine
        // puts it (Claude Code puts it in a user message), though a model wrote it.
        let host = |t: &str| {
            ctx.host_texts
                .iter()
                .any(|h| !h.is_empty() && t.contains(h.as_str()))
        };
        for (i, m) in request.messages.iter().enumerate().skip(*seen) {
            if m.role != Role::User {
                continue;
            }
            if let Some((markers, notes, wrap)) = exact {
                if let Some(words) = wrap.words(m) {
                    if !ctx.prompts.iter().any(|p| p == words) {
                        // Plainly wrapped, the engine's own texts look like prompts.
                        let known = wrap == PromptWrap::Plain
                            && (markers.matches(words)
                                || notes.matches(words)
                                || fixed.iter().any(|t| t == words)
                                || host(words));
                        if !known {
                            let what = match wrap {
                                PromptWrap::Directive => {
                                    "a directive whose words the user never sent"
                                }
                                PromptWrap::Plain => {
                                    "user text the user never wrote and the engine may not author"
                                }
                            };
                            return Some(Err(format!(
                                "request {op}: message {i} is {what}: {}",
                                excerpt(words)
                            )));
                        }
                    }
                    if let (PromptWrap::Directive, Some(Block::Text { text })) =
                        (wrap, m.blocks().first())
                        && text.contains(self.model_mark)
                    {
                        return Some(Err(format!(
                            "request {op}: message {i}: the turn context carries model-written text: {}",
                            excerpt(text)
                        )));
                    }
                    continue;
                }
                if let Some(s) = m.string_content() {
                    if !(markers.matches(s)
                        || notes.matches(s)
                        || fixed.iter().any(|t| t == s)
                        || host(s))
                    {
                        return Some(Err(format!(
                            "request {op}: message {i} is user text the user never wrote and the engine may not author: {}",
                            excerpt(s)
                        )));
                    }
                    continue;
                }
            }
            if let Some(s) = m.string_content()
                && s.contains(self.model_mark)
                && !host(s)
            {
                return Some(Err(format!(
                    "request {op}: message {i}: model-written text in a user message: {}",
                    excerpt(s)
                )));
            }
            for (j, b) in m.blocks().iter().enumerate() {
                if let Block::Text { text } = b {
                    if exact.is_some_and(|(_, _, w)| w == PromptWrap::Directive)
                        && text.starts_with(TURN_CONTEXT_OPEN)
                    {
                        return Some(Err(format!(
                            "request {op}: message {i}, block {j}: a turn context outside its directive"
                        )));
                    }
                    if text.contains(self.model_mark) && !host(text) {
                        return Some(Err(format!(
                            "request {op}: message {i}, block {j}: model-written text in a user message: {}",
                            excerpt(text)
                        )));
                    }
                }
            }
        }
        Some(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::{CacheHints, Message, OperationId, Request, SharedMessage};

    const MARK: &str = "§model§";

    fn judge(messages: Vec<Message>, host_texts: &[String]) -> Option<Check> {
        let mut c = NoteExact::new(Arc::new(Conventions::generic()), MARK);
        let request = Request {
            system: String::new(),
            tools: Arc::from(Vec::new()),
            thinking: None,
            messages: messages
                .into_iter()
                .map(Arc::new)
                .collect::<Vec<SharedMessage>>(),
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: Vec::new(),
            },
        };
        let ctx = Ctx {
            step: 1,
            history: &[],
            fixed_texts: &[],
            prompts: &[],
            host_texts,
        };
        c.observe(
            &ctx,
            &Event::Request {
                op: OperationId(1),
                request: &request,
                seen: 0,
                body: None,
            },
        )
    }

    #[test]
    fn a_compaction_summary_the_host_handed_may_sit_in_a_user_message() {
        let summary = format!("{MARK} summary of 6 messages");
        let placed = Message::user_text(format!("Summary of the conversation so far:\n{summary}"));
        assert_eq!(judge(vec![placed], &[summary]), Some(Ok(())));
    }

    #[test]
    fn model_text_the_host_never_handed_is_still_caught_in_a_user_message() {
        let summary = format!("{MARK} summary of 6 messages");
        let copied = Message::user_text(format!("{MARK} I will delete the tests"));
        assert_eq!(
            judge(vec![copied], &[summary]),
            Some(Err(format!(
                "request op#1: message 0: model-written text in a user message: {MARK} I will delete the tests"
            )))
        );
    }
}
