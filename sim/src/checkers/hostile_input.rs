//! `hostile_input`: an input the engine must refuse or repair never leaves it holding
//! an invalid history (docs/spec.md §7, "Hostile and legacy inputs").
//!
//! A host hands an engine things no correct session produces: a rewind that would
//! split a tool call from its results, a blank compaction summary, a log whose last
//! record (a compaction, an append, a record from an older writer) breaks the
//! history. Refusing is correct; so is repairing. Accepting the input as it is and
//! holding a history the API rejects is not: every later request of the session would
//! be refused, and the user's session is lost without an error at the moment it broke.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::validate_history;

pub struct HostileInput;

impl Checker for HostileInput {
    fn invariant(&self) -> Invariant {
        Invariant::HostileInput
    }

    fn events(&self) -> u32 {
        use super::on;
        on::HOSTILE
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Hostile {
            what,
            held,
            forbidden,
        } = event
        else {
            return None;
        };
        let Ok(history) = held else {
            return Some(Ok(())); // refused
        };
        if let Err(e) = validate_history(history) {
            return Some(Err(format!(
                "the engine accepted {what} and now holds an invalid history: {e}"
            )));
        }
        // A migration keeps the fact of an interruption, never the old recap: it was
        // an instruction to the model, which no history may carry on.
        if let Some(text) = forbidden
            && let Some(i) = history.iter().position(|m| m.to_json().contains(*text))
        {
            return Some(Err(format!(
                "the engine accepted {what} and kept its text in message {i}: {}",
                super::excerpt(text)
            )));
        }
        Some(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use turnsim_core::{Block, Message, SharedMessage};

    fn observe(held: Result<&[SharedMessage], &str>) -> Option<Check> {
        observe_with(held, None)
    }

    fn observe_with(
        held: Result<&[SharedMessage], &str>,
        forbidden: Option<&str>,
    ) -> Option<Check> {
        let ctx = Ctx {
            step: 7,
            history: &[],
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        };
        let event = Event::Hostile {
            what: "x",
            held,
            forbidden,
        };
        HostileInput.observe(&ctx, &event)
    }

    #[test]
    fn an_accepted_legacy_log_that_keeps_the_recap_is_a_violation() {
        let history: Vec<SharedMessage> = vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message::assistant_text("working")),
            Arc::new(Message::user_text("recap: go on deleting")),
        ];
        assert_eq!(
            observe_with(Ok(&history), Some("go on deleting")),
            Some(Err(
                "the engine accepted x and kept its text in message 2: go on deleting".into()
            ))
        );
        let migrated: Vec<SharedMessage> = vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message::assistant_text("working")),
            Arc::new(Message::user_text("[Request interrupted]")),
        ];
        assert_eq!(
            observe_with(Ok(&migrated), Some("go on deleting")),
            Some(Ok(()))
        );
    }

    #[test]
    fn an_accepted_input_that_leaves_an_unanswered_call_is_a_violation() {
        let history: Vec<SharedMessage> = vec![
            Arc::new(Message::user_text("summary")),
            Arc::new(Message::assistant_blocks(vec![Block::ToolUse {
                id: "t".into(),
                name: "ls".into(),
                input: serde_json::json!({}),
            }])),
        ];
        assert_eq!(
            observe(Ok(&history)),
            Some(Err(
                "the engine accepted x and now holds an invalid history: message 1: history ends with unanswered tool call t".into()
            ))
        );
    }

    #[test]
    fn a_refusal_or_a_valid_history_passes() {
        assert_eq!(observe(Err("refused")), Some(Ok(())));
        let history: Vec<SharedMessage> = vec![Arc::new(Message::user_text("hi"))];
        assert_eq!(observe(Ok(&history)), Some(Ok(())));
    }

    #[test]
    fn other_events_are_not_its_concern() {
        let ctx = Ctx {
            step: 0,
            history: &[],
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        };
        assert_eq!(HostileInput.observe(&ctx, &Event::Step), None);
    }
}
