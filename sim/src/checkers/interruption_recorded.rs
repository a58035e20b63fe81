//! `interruption_recorded`: a turn that a cancel or a crash cut short leaves exactly
//! one interruption record, for its cause, after the turn's last message (issue 17,
//! item 1).
//!
//! A model that is not told its turn was stopped reads the half-finished work as its
//! own choice and carries on from it, or apologises for a reply it never finished;
//! two records tell it one interruption happened twice. `marker_once` catches only a
//! doubled or near-miss marker, never a missing one: this checker asks at every
//! interrupted turn's end.
//!
//! Two parts. The generic core holds every engine, whatever its wording: after a turn
//! the user (or host) cancelled, something the engine wrote itself follows the turn's
//! last model message, so the model hears of the cancel. What the engine wrote is
//! told apart without reading any wording, by what it is not: a user-role text that
//! holds none of the user's prompts, or a `tool_result` that is not the output a tool
//! returned (a cancelled call answered by the engine). A turn whose every message after
//! the model's last is the prompt or a tool's own output has no record. The exact part
//! (one record, for its cause, after everything else) reads the reference wording and
//! judges only under that profile, where it replaces the generic core (it asks more).

use std::collections::BTreeMap;

use super::interrupted_turn::{Due, InterruptionWording, TurnWatch, WATCHED, interruption_wording};
use super::{Check, Checker, Ctx, Event, Invariant, Observation, on};
use std::sync::Arc;
use turnsim_core::{Block, Content, Role, SharedMessage, ToolResultContent};

type Outputs = BTreeMap<String, Arc<ToolResultContent>>;

/// Whether two results read as the same text (a string, or text blocks joined), without
/// joining them when both are strings.
fn same_text(a: &ToolResultContent, b: &ToolResultContent) -> bool {
    match (a, b) {
        (ToolResultContent::Text(x), ToolResultContent::Text(y)) => x == y,
        _ => a.text() == b.text(),
    }
}

#[derive(Default)]
pub struct InterruptionRecorded {
    watch: TurnWatch,
    /// Off unless the run's profile is one whose wording `interruption_wording` reads
    /// (the reference's): another engine's records cannot be told apart by cause.
    active: bool,
    /// What each tool returned, by tool-use id, as the world delivered and the engine
    /// saved it: a `tool_result` whose text is exactly this one's is the tool's, not
    /// the engine's. Shared with the world's observation, not copied.
    outputs: BTreeMap<String, Arc<ToolResultContent>>,
}

impl InterruptionRecorded {
    pub fn new(active: bool) -> InterruptionRecorded {
        InterruptionRecorded {
            active,
            ..InterruptionRecorded::default()
        }
    }
}

impl Checker for InterruptionRecorded {
    fn invariant(&self) -> Invariant {
        Invariant::InterruptionRecorded
    }

    fn kind(&self) -> super::CheckKind {
        super::CheckKind::Convention
    }

    /// The turn watch's events, and the tools' outputs for the generic core.
    fn events(&self) -> u32 {
        WATCHED | on::OBSERVED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        if let Event::Observed(Observation::ToolResult {
            tool_use_id,
            content,
        }) = event
        {
            self.outputs
                .insert(tool_use_id.clone(), Arc::clone(content));
            return None;
        }
        let due = self.watch.follow(ctx, event)?;
        if !self.active {
            // The exact part below implies this one; it runs where it cannot.
            return Some(generic(ctx, &due, &self.outputs));
        }
        let turn = ctx.history.get(due.baseline..).unwrap_or_default();
        let mut records = Vec::new();
        let mut last_content = None;
        for (i, m) in turn.iter().enumerate() {
            match interruption_wording(m) {
                Some(InterruptionWording::Record(reason)) => records.push((i, reason)),
                Some(InterruptionWording::MayHaveRun(_)) => {}
                None => last_content = Some(i),
            }
        }
        let why = match (due.cancel, due.crashed) {
            (Some(cause), false) => format!("cancelled ({cause:?})"),
            (Some(cause), true) => format!("cancelled ({cause:?}) and then crashed"),
            _ => "cut short by a crash".to_string(),
        };
        let at = |i: usize| due.baseline + i;
        Some(match records.as_slice() {
            [] if due.strict => Err(format!(
                "the turn from message {} was {why} but its history holds no interruption record",
                due.baseline
            )),
            [] => Ok(()),
            [(i, reason)] => {
                if !due.reasons().contains(reason) {
                    Err(format!(
                        "the turn from message {} was {why} but message {} records {reason:?}",
                        due.baseline,
                        at(*i)
                    ))
                } else if last_content.is_some_and(|c| c > *i) {
                    Err(format!(
                        "the interruption record at message {} comes before the turn's message {}",
                        at(*i),
                        at(last_content.unwrap_or_default())
                    ))
                } else {
                    Ok(())
                }
            }
            [(i, _), (j, _), ..] => Err(format!(
                "the turn from message {} was {why} once but messages {} and {} both record it",
                due.baseline,
                at(*i),
                at(*j)
            )),
        })
    }
}

/// The generic core: after a turn that only a cancel cut short (a crash's record is the
/// engine's convention: what survives a crash is its own design), something the engine
/// wrote follows the turn's last model message.
fn generic(ctx: &Ctx<'_>, due: &Due, outputs: &Outputs) -> Check {
    let Some(cause) = due.cancel.filter(|_| due.strict && !due.crashed) else {
        return Ok(());
    };
    let turn = ctx.history.get(due.baseline..).unwrap_or_default();
    if turn.is_empty() {
        // The engine withdrew the whole turn: no half-done work is left to mislead.
        return Ok(());
    }
    let said_by_user = |t: &str| {
        ctx.prompts
            .iter()
            .any(|p| !p.is_empty() && t.contains(p.as_str()))
    };
    let (from, skip) = match turn.iter().rposition(|m| m.role == Role::Assistant) {
        Some(i) => (i + 1, 0),
        // No model message: the record follows the prompt, in its message or after.
        None => (0, prompt_blocks(&turn[0], &said_by_user)),
    };
    let recorded = turn[from..].iter().enumerate().any(|(k, m)| {
        let skip = if k == 0 { skip } else { 0 };
        engine_wrote(m, skip, &said_by_user, outputs)
    });
    if recorded {
        Ok(())
    } else {
        Err(format!(
            "the turn from message {} was cancelled ({cause:?}) but nothing the engine wrote follows its last model message: every message after it is the user's prompt or a tool's own output, so the model is never told the turn was stopped",
            due.baseline
        ))
    }
}

/// How many leading blocks of the turn's first message are the prompt and what goes
/// before it (the engine's wrapping of it): a record must come after them.
fn prompt_blocks(m: &SharedMessage, said_by_user: &dyn Fn(&str) -> bool) -> usize {
    match &m.content {
        Content::Text(_) => 1,
        Content::Blocks(blocks) => blocks
            .iter()
            .rposition(|b| matches!(b, Block::Text { text } if said_by_user(text)))
            .map_or(0, |i| i + 1),
    }
}

/// Whether user message `m` holds, past its first `skip` blocks, anything the engine
/// wrote: a text holding no prompt, or a tool result that is not its tool's output.
fn engine_wrote(
    m: &SharedMessage,
    skip: usize,
    said_by_user: &dyn Fn(&str) -> bool,
    outputs: &Outputs,
) -> bool {
    if m.role != Role::User {
        return false;
    }
    match &m.content {
        Content::Text(t) => skip == 0 && !said_by_user(t),
        Content::Blocks(blocks) => blocks.iter().skip(skip).any(|b| match b {
            Block::Text { text } => !said_by_user(text),
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } => !outputs
                .get(tool_use_id)
                .is_some_and(|o| same_text(o, content)),
            _ => false,
        }),
    }
}
