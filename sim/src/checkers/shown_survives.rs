//! `shown_survives`: text and tool calls streamed to the user before a cancel or a
//! crash are in the history afterwards (issue 17, item 4).
//!
//! The user watched the reply stream; a history without it makes the model's next
//! reply contradict what the user saw, or redo work the user already read about.
//! Streamed text counts as shown once the engine received it and every output of that
//! delivery was carried out (a crash in between may lose it); blank text is exempt
//! (docs/spec.md §4, §7: the provider refuses a whitespace-only text block), and each
//! shown text must survive trimmed, as part of the turn's assistant text. Tool calls
//! are required after a live cancel only: crash recovery drafts text, never calls,
//! and no call of an unfinished reply was dispatched. When the crash cut short the
//! output list that ended the turn, the turn may have ended (failed, keeping nothing
//! of the generation) before it, so nothing is required. Only the generation that was
//! interrupted counts: a reply that failed with a provider error keeps nothing of
//! itself (docs/spec.md §6), so an engine that retries it owes the user none of its
//! text, whatever later happens to the retry. The same holds for a reply with a tool
//! call whose input JSON does not parse at its `block_stop` (a `max_tokens` stop inside
//! it): no engine can keep that call, and failing the whole generation is allowed. Nor
//! for a reply that starts a block twice or streams a delta for a block after its
//! `block_stop` (a malformed stream, failed whole).

use super::interrupted_turn::{Due, TurnWatch, WATCHED};
use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use crate::conventions::{CheckKind, Shown};
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::{Block, Content, Role};

#[derive(Default)]
pub struct ShownSurvives {
    /// What the profile says the engine keeps beyond every engine's due; `None`:
    /// only completed blocks after a cancel are required, nothing after a crash.
    shown: Option<Shown>,
    watch: TurnWatch,
    /// Text blocks shown in this turn, by reply then block index.
    texts: Vec<String>,
    /// Whether each of `texts` completed (its `block_stop` streamed).
    finished: Vec<bool>,
    /// Where the current reply's blocks start in `texts`.
    reply_start: usize,
    /// Tool blocks (index, id, name) started in this turn, and where the current
    /// reply's start: kept for the whole turn, so a finished call is recorded by its
    /// position here instead of copying its id and name a second time.
    tool_blocks: Vec<(usize, String, String)>,
    reply_tools: usize,
    /// Tool calls whose input finished streaming, as positions in `tool_blocks`.
    calls: Vec<usize>,
    /// The last delivery, until its step ends: a crash in it undoes it.
    undo: Option<Undo>,
    /// The input JSON of the tool call streaming now, to see whether it parses at its
    /// `block_stop`.
    input: String,
    /// Blocks the current reply started, and whether it started one twice (then it is
    /// malformed, and nothing it shows is owed).
    started: usize,
    void: bool,
    /// Blocks of the current reply that stopped (the world's blocks stop in order): a
    /// delta for one of them makes the reply malformed too.
    stopped: usize,
}

enum Undo {
    Text { slot: usize, len: usize },
    Call,
}

impl ShownSurvives {
    pub fn new(shown: Option<Shown>) -> ShownSurvives {
        ShownSurvives {
            shown,
            ..ShownSurvives::default()
        }
    }

    fn slot(&mut self, index: usize) -> usize {
        let slot = self.reply_start + index;
        if self.texts.len() <= slot {
            self.texts.resize(slot + 1, String::new());
            self.finished.resize(slot + 1, false);
        }
        slot
    }

    /// What a live provider event shows the user. Out of line, so the end of a step
    /// (this checker's most frequent event) costs a call of a small function.
    #[inline(never)]
    fn streamed(&mut self, event: &StreamEvent) {
        self.undo = None;
        match event {
            StreamEvent::MessageStart => {
                self.reply_start = self.texts.len();
                self.reply_tools = self.tool_blocks.len();
                self.started = 0;
                self.stopped = 0;
                self.void = false;
            }
            _ if self.void => {}
            // A malformed stream: an engine fails the reply whole (docs/spec.md §7).
            StreamEvent::BlockStart { index, .. } if *index < self.started => {
                self.forget_reply();
                self.void = true;
            }
            StreamEvent::TextDelta { index, .. } if *index < self.stopped => {
                self.forget_reply();
                self.void = true;
            }
            StreamEvent::TextDelta { index, text } => {
                let slot = self.slot(*index);
                let len = self.texts[slot].len();
                self.texts[slot].push_str(text);
                self.undo = Some(Undo::Text { slot, len });
            }
            StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse { id, name },
            } => {
                self.started = index + 1;
                self.input.clear();
                self.tool_blocks.push((*index, id.clone(), name.clone()))
            }
            StreamEvent::BlockStart { index, .. } => self.started = index + 1,
            // A failed generation: what it showed is not owed (a retrying engine sends
            // a new request; a failing one ends the turn).
            StreamEvent::Error { .. } => self.forget_reply(),
            // A call whose input does not parse cannot be kept, and an engine may fail
            // its whole generation for it (docs/spec.md, Streaming).
            StreamEvent::BlockStop { index }
                if !self.input.is_empty()
                    && self.tool_blocks[self.reply_tools..]
                        .iter()
                        .any(|(i, _, _)| i == index)
                    && serde_json::from_str::<serde::de::IgnoredAny>(&self.input).is_err() =>
            {
                self.input.clear();
                self.forget_reply();
            }
            StreamEvent::BlockStop { index } => {
                self.input.clear();
                self.stopped = self.stopped.max(index + 1);
                if let Some(done) = self.finished.get_mut(self.reply_start + index) {
                    *done = true;
                }
                if let Some(p) = self.tool_blocks[self.reply_tools..]
                    .iter()
                    .position(|(i, _, _)| i == index)
                {
                    self.calls.push(self.reply_tools + p);
                    self.undo = Some(Undo::Call);
                }
            }
            _ => {}
        }
    }

    /// The reply streaming now keeps nothing of itself.
    fn forget_reply(&mut self) {
        self.texts.truncate(self.reply_start);
        self.finished.truncate(self.reply_start);
        self.calls.retain(|&p| p < self.reply_tools);
        self.tool_blocks.truncate(self.reply_tools);
    }

    /// The record check of an interrupted turn whose record is due.
    #[inline(never)]
    fn judge(&self, ctx: &Ctx<'_>, due: &Due) -> Check {
        if !due.strict {
            // The crash cut short the list that ended the turn: it may have ended
            // first, and a failed generation keeps nothing of itself (spec.md §6).
            return Ok(());
        }
        let turn = ctx.history.get(due.baseline..).unwrap_or_default();
        let mut said = String::new();
        for m in turn.iter().filter(|m| m.role == Role::Assistant) {
            match &m.content {
                Content::Text(s) => said.push_str(s),
                Content::Blocks(blocks) => {
                    for b in blocks {
                        if let Block::Text { text } = b {
                            said.push_str(text);
                        }
                    }
                }
            }
        }
        let shown = self.shown.unwrap_or(Shown {
            unfinished_blocks: false,
            across_crash: false,
        });
        if due.crashed && !shown.across_crash {
            // What survives a crash is each design's own: no calls are owed after a
            // crash either (see below), so nothing is.
            return Ok(());
        }
        let lost_text = self
            .texts
            .iter()
            .zip(&self.finished)
            .filter(|(_, done)| **done || shown.unfinished_blocks || due.crashed)
            .map(|(t, _)| t.trim())
            .find(|t| !t.is_empty() && !said.contains(t));
        if let Some(t) = lost_text {
            return Err(format!(
                "text the user saw streamed is not in the history after the interruption: {}",
                excerpt(t)
            ));
        }
        if !due.crashed {
            // A call is kept under the provider's id, or, when the provider reused an
            // id, under one the engine gave it (docs/spec.md §7): then the turn must
            // still hold as many calls of that tool as the user saw.
            let uses = |pred: &dyn Fn(&str, &str) -> bool| {
                turn.iter()
                    .flat_map(|m| m.blocks().iter())
                    .filter(|b| matches!(b, Block::ToolUse { id, name, .. } if pred(id, name)))
                    .count()
            };
            let calls = || {
                self.calls.iter().map(|&p| {
                    let (_, id, name) = &self.tool_blocks[p];
                    (id.as_str(), name.as_str())
                })
            };
            let lost_call = calls().find(|(id, name)| {
                uses(&|i, _| i == *id) == 0
                    && uses(&|_, n| n == *name) < calls().filter(|(_, n)| n == name).count()
            });
            if let Some((id, _)) = lost_call {
                return Err(format!(
                    "the tool call {id} the user saw streamed is not in the history after the cancel"
                ));
            }
        }
        Ok(())
    }
}

impl Checker for ShownSurvives {
    fn invariant(&self) -> Invariant {
        Invariant::ShownSurvives
    }

    /// Completed blocks after a cancel are every engine's due; unfinished ones, and
    /// text across a crash, the profile's.
    fn kind(&self) -> CheckKind {
        CheckKind::Convention
    }

    /// The kinds read here (a turn's start, the end of a step, a crash, what streamed)
    /// and those the turn watch reads; every other kind answers `None` below.
    fn events(&self) -> u32 {
        use super::on;
        WATCHED | on::STEP | on::STREAMED | on::INPUT_STREAMED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { .. } => {
                self.texts.clear();
                self.finished.clear();
                self.calls.clear();
                self.tool_blocks.clear();
                self.reply_start = 0;
                self.reply_tools = 0;
                self.undo = None;
            }
            // A step's end and a streamed event never close a turn (`TurnWatch::follow`
            // answers `None` to both): leave before the record check. These two kinds
            // are most of this checker's events.
            Event::Step => {
                self.undo = None;
                return None;
            }
            Event::Streamed { event, .. } => {
                self.streamed(event);
                return None;
            }
            Event::InputStreamed {
                event: StreamEvent::InputJsonDelta { index, .. },
                ..
            } if *index < self.stopped && !self.void => {
                // Input for a call that already stopped: malformed, as above.
                self.undo = None;
                self.forget_reply();
                self.void = true;
                return None;
            }
            Event::InputStreamed {
                event: StreamEvent::InputJsonDelta { partial_json, .. },
                ..
            } => {
                self.input.push_str(partial_json);
                return None;
            }
            Event::Crashed { .. } => match self.undo.take() {
                Some(Undo::Text { slot, len }) => self.texts[slot].truncate(len),
                Some(Undo::Call) => {
                    self.calls.pop();
                }
                None => {}
            },
            _ => {}
        }
        let due = self.watch.follow(ctx, event)?;
        Some(self.judge(ctx, &due))
    }
}
