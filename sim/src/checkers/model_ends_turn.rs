//! `model_ends_turn`: the turn ends when the model says so, and only then (issue 17,
//! item 10). After a complete reply without tool calls the engine sends nothing more
//! and dispatches nothing, unless the reply was cut off at the output limit; and it
//! continues cut-off replies at most its configured cap in a row.
//!
//! An engine that sends its continuation prompt after every finished reply, or keeps
//! resuming a reply that never stops growing, burns tokens and puts words in the
//! model's mouth; its prompt is a permitted fixed text and its loop is bounded, so no
//! other checker objects. The world knows each reply it streamed, so it judges the
//! engine's next move against what the model actually said.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::state::StopReason;

pub struct ModelEndsTurn {
    /// The engine's cap on resumed truncated replies, as the world configured it.
    cap: u32,
    reply: Option<Reply>,
    /// Truncated replies resumed in a row in this turn.
    resumed: u32,
}

#[derive(Clone, Copy, Default)]
struct Reply {
    calls: bool,
    /// Whether any text it streamed is more than whitespace. A reply without calls
    /// and without words said nothing an engine can keep (the API refuses blank text
    /// back), so it did not end the turn: an engine may ask again, as the API's own
    /// advice for an empty `end_turn` reply is to prompt the model to continue.
    words: bool,
    stop: Option<StopReason>,
    complete: bool,
}

impl ModelEndsTurn {
    /// `cap`: the session's `max_truncated_resumes`, as the world configured it.
    pub fn new(cap: u32) -> ModelEndsTurn {
        ModelEndsTurn {
            cap,
            reply: None,
            resumed: 0,
        }
    }

    /// The reply that ended without calls, if the last one did.
    fn finished(&self) -> Option<Reply> {
        self.reply.filter(|r| r.complete && !r.calls && r.words)
    }
}

impl Checker for ModelEndsTurn {
    fn invariant(&self) -> Invariant {
        Invariant::ModelEndsTurn
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_STARTED
            | on::TURN_ENDED
            | on::CRASHED
            | on::STREAMED
            | on::REQUEST
            | on::DISPATCHED
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { .. } => {
                self.reply = None;
                self.resumed = 0;
                None
            }
            Event::TurnEnded | Event::Crashed { .. } => {
                self.reply = None;
                None
            }
            Event::Streamed { event, .. } => {
                match event {
                    StreamEvent::MessageStart => self.reply = Some(Reply::default()),
                    StreamEvent::BlockStart {
                        block: BlockStart::ToolUse { .. },
                        ..
                    } => {
                        if let Some(r) = &mut self.reply {
                            r.calls = true;
                        }
                    }
                    StreamEvent::TextDelta { text, .. } if !text.trim().is_empty() => {
                        if let Some(r) = &mut self.reply {
                            r.words = true;
                        }
                    }
                    StreamEvent::MessageDelta { stop_reason, .. } => {
                        if let Some(r) = &mut self.reply {
                            r.stop = Some(*stop_reason);
                        }
                    }
                    StreamEvent::MessageStop => {
                        if let Some(r) = &mut self.reply {
                            r.complete = true;
                        }
                    }
                    StreamEvent::Error { .. } => self.reply = None,
                    _ => {}
                }
                None
            }
            Event::Request { op, .. } => {
                let previous = self.reply.take();
                match previous {
                    Some(r) if r.complete && r.calls => self.resumed = 0,
                    _ => {}
                }
                let r = previous.filter(|r| r.complete && !r.calls && r.words)?;
                Some(match r.stop {
                    Some(StopReason::MaxTokens) if self.resumed < self.cap => {
                        self.resumed += 1;
                        Ok(())
                    }
                    Some(StopReason::MaxTokens) => Err(format!(
                        "request {op} resumes a truncated reply after {} resumes in a row; the cap is {}",
                        self.resumed, self.cap
                    )),
                    stop => Err(format!(
                        "request {op} follows a reply without tool calls that ended the turn (stop {stop:?})"
                    )),
                })
            }
            Event::Dispatched { op, call, .. } => {
                let r = self.finished()?;
                Some(Err(format!(
                    "tool {} was dispatched for {op} after a reply without tool calls (stop {:?})",
                    call.id, r.stop
                )))
            }
            _ => None,
        }
    }
}
