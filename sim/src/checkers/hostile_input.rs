//! `hostile_input`: an input the engine must refuse or repair never leaves it holding
//! an invalid history (docs/spec.md §7, "Hostile and legacy inputs").
//!
//! A host hands an engine things no correct session produces: a rewind that would
//! split a tool call from its results, a blank compaction summary, a log whose last
//! record (a compaction, an append, a record from an older writer) breaks the
//! history. Refusing is correct; so is repairing. Accepting the input as it is and
//! holding a history the API rejects is not: every later request of the session would
//! be refused, and the user's session is lost without an error at the moment it broke.
//!
//! A finding names what happened. Hostile inputs come between turns, often right
//! after a turn a cancel or a crash cut short, before any request could show that
//! the interruption itself left the history invalid; a log-borne input is restored
//! on top of that log. So the history each interrupted turn leaves is kept here, and
//! when it was already invalid the finding blames the interruption (its cause and
//! step), not the input that happened to come next.
//!
//! The converse, for an engine whose profile says it rewinds (`accepts_rewinds`, the
//! reference's): a rewind the spec allows (docs/spec.md §6: idle, to an index no
//! larger than the history, not splitting a call from its results; the world decides
//! this from the history it reads, not from the engine) is not refused. Refusing one
//! leaves the host unable to undo a turn the spec says it may undo; while every rewind
//! was delivered as one the engine may refuse, an off-by-one that refused the rewind
//! to exactly the history's length (mutant 13 of docs/mutants.md) went unjudged.

use super::{Check, Checker, Ctx, Event, Invariant, on};
use crate::judge::empty::{EmptyPart, empty_part};
use crate::judge::rules::request::{Shape, Shown};
use crate::judge::rules::walk::first_breach;
use turnsim_core::{CancelCause, SharedMessage};

/// What the API would reject in `history` if it were sent as it stands (no final
/// empty assistant message allowed, no call left unanswered), by the judge's own
/// validator: the reference engine's `validate_history` is the engine's, and a bug in
/// it must not hide the same bug from this checker (issue 25, part 1; mutants 14 and
/// 22 of docs/mutants.md survived while this checker called it).
pub(crate) fn invalid(history: &[SharedMessage]) -> Option<String> {
    if let Some(b) = first_breach(history, 0, false) {
        return Some(b.to_string());
    }
    for (i, m) in history.iter().enumerate() {
        match empty_part(m) {
            Some(EmptyPart::UserMessage) => {
                return Some(format!("message {i} is an empty user message"));
            }
            Some(EmptyPart::TextBlock(j)) => {
                return Some(format!("message {i}, block {j} is an empty text block"));
            }
            None => {}
        }
    }
    let mut shape = Shape::default();
    for (i, m) in history.iter().enumerate() {
        shape.push(i, m);
    }
    let shown = Shown {
        whole_request: true,
        thinking: None,
    };
    shape
        .finish(shown)
        .into_iter()
        .next()
        .map(|b| b.to_string())
}

#[derive(Default)]
pub struct HostileInput {
    /// The interruption of the open turn: which, and the step it came at.
    cut: Option<String>,
    /// The last interrupted turn's end left this invalid history: the interruption,
    /// and what is wrong. Cleared when a turn starts (its request is then judged).
    broken: Option<(String, String)>,
}

fn cause_name(c: CancelCause) -> &'static str {
    match c {
        CancelCause::User => "user",
        CancelCause::CostCap => "cost_cap",
        CancelCause::Restart => "restart",
        CancelCause::Host => "host",
        CancelCause::Driver => "driver",
    }
}

impl Checker for HostileInput {
    fn invariant(&self) -> Invariant {
        Invariant::HostileInput
    }

    /// The hostile inputs, and the turn events that say what the history was before
    /// one came; those answer `None` and count no check.
    fn events(&self) -> u32 {
        on::HOSTILE
            | on::OWED_INPUT
            | on::TURN_STARTED
            | on::CANCEL_ACCEPTED
            | on::CRASHED
            | on::TURN_ENDED
            | on::RESTARTED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { .. } => {
                self.cut = None;
                self.broken = None;
                return None;
            }
            Event::CancelAccepted { cause, .. } => {
                if self.cut.is_none() {
                    self.cut = Some(format!(
                        "the cancel ({}) at step {}",
                        cause_name(*cause),
                        ctx.step
                    ));
                }
                return None;
            }
            Event::Crashed { .. } => {
                self.cut = Some(format!("the crash at step {}", ctx.step));
                return None;
            }
            Event::TurnEnded | Event::Restarted { .. } => {
                if let Some(cut) = self.cut.take() {
                    self.broken = invalid(ctx.history).map(|e| (cut, e));
                }
                return None;
            }
            Event::OwedInput { what, refused } => {
                return Some(match refused {
                    None => Ok(()),
                    Some(refusal) => Err(format!(
                        "the engine refused {what} ({refusal}), with {} messages held",
                        ctx.history.len()
                    )),
                });
            }
            _ => {}
        }
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
        if let Some(e) = invalid(history) {
            if let Some((cut, before)) = &self.broken {
                return Some(Err(format!(
                    "{cut} left the history invalid ({before}) when it ended the turn, before any hostile input; found when the engine accepted {what}, which then held: {e}"
                )));
            }
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
        let ctx = Ctx::empty(7);
        let event = Event::Hostile {
            what: "x",
            held,
            forbidden,
        };
        HostileInput::default().observe(&ctx, &event)
    }

    fn owed(refused: Option<&str>) -> Option<Check> {
        let ctx = Ctx::empty(7);
        let event = Event::OwedInput {
            what: "a rewind the spec allows",
            refused,
        };
        HostileInput::default().observe(&ctx, &event)
    }

    #[test]
    fn a_refused_rewind_the_spec_allows_is_a_violation_and_an_accepted_one_passes() {
        assert_eq!(
            owed(Some("cannot rewind to message 0")),
            Some(Err(
                "the engine refused a rewind the spec allows (cannot rewind to message 0), with 0 messages held".into()
            ))
        );
        assert_eq!(owed(None), Some(Ok(())));
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
    fn an_accepted_log_ending_in_a_result_no_call_asked_for_is_a_violation() {
        // What mutant 22 of docs/mutants.md let the engine accept while this checker
        // asked the engine's own validator: judged here by the judge's rules.
        let history: Vec<SharedMessage> = vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message::assistant_text("done")),
            Arc::new(Message::user_blocks(vec![Block::tool_result(
                "t9", "ok", false,
            )])),
        ];
        let Some(Err(e)) = observe(Ok(&history)) else {
            panic!("an orphan tool_result must be found")
        };
        assert!(
            e.starts_with(
                "the engine accepted x and now holds an invalid history: message 2, block 0:"
            ),
            "{e}"
        );
        assert!(e.contains("t9"), "{e}");
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
        assert_eq!(HostileInput::default().observe(&ctx, &Event::Step), None);
    }

    #[test]
    fn a_history_a_cancel_left_invalid_is_blamed_on_the_cancel_not_the_hostile_input() {
        let broken: Vec<SharedMessage> = vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message::assistant_blocks(vec![Block::ToolUse {
                id: "t".into(),
                name: "ls".into(),
                input: serde_json::json!({}),
            }])),
        ];
        let at = |step: u64, history: &[SharedMessage]| (step, history.to_vec());
        let mut c = HostileInput::default();
        let mut feed = |(step, history): (u64, Vec<SharedMessage>), event: &Event<'_>| {
            let ctx = Ctx {
                step,
                history: &history,
                fixed_texts: &[],
                prompts: &[],
                host_texts: &[],
            };
            c.observe(&ctx, event)
        };
        let started = Event::TurnStarted {
            baseline: 0,
            before: &[],
        };
        assert_eq!(feed(at(1, &[]), &started), None);
        let cancel = Event::CancelAccepted {
            cause: CancelCause::User,
            running: &[],
            left_running: None,
        };
        assert_eq!(feed(at(57, &broken), &cancel), None);
        assert_eq!(feed(at(58, &broken), &Event::TurnEnded), None);
        let hostile = Event::Hostile {
            what: "a compaction record whose summary leaves a tool_use unanswered",
            held: Ok(&broken),
            forbidden: None,
        };
        assert_eq!(
            feed(at(60, &broken), &hostile),
            Some(Err(
                "the cancel (user) at step 57 left the history invalid (message 1: history ends with unanswered tool call t) when it ended the turn, before any hostile input; found when the engine accepted a compaction record whose summary leaves a tool_use unanswered, which then held: message 1: history ends with unanswered tool call t".into()
            ))
        );
        // A turn that starts afterwards is judged by its own request: the blame resets.
        assert_eq!(feed(at(61, &[]), &started), None);
        assert_eq!(
            feed(at(62, &broken), &hostile),
            Some(Err(
                "the engine accepted a compaction record whose summary leaves a tool_use unanswered and now holds an invalid history: message 1: history ends with unanswered tool call t".into()
            ))
        );
    }
}
