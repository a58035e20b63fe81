//! What the interruption checkers share: when a turn counts as interrupted (a cancel
//! the engine accepted, a crash while it was open), when its record is due, and the
//! one place the reference engine's wording of an interruption is read.
//!
//! Guarantee: the interruption is learnt from the world's side (the cancel it
//! delivered, the crash it caused), never from the engine's report of itself; the
//! record is judged once, when the engine says the turn is over (its `TurnEnded`, or
//! the restart when the restored engine ends nothing), against the turn's own
//! messages only. [`interruption_wording`] is the only function here that knows how
//! an engine words an interruption, so a conventions profile replaces exactly it.

use super::{Ctx, Event, on};
use crate::judge::tool_names::copied_into_note;
use turnsim_core::note::{UNRECOGNISED_TOOL, tool_in_flight_note_label};
use turnsim_core::{CancelCause, InterruptReason, Message, Role};

/// What an engine-written user message says about an interruption.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InterruptionWording<'m> {
    /// The turn was interrupted for this reason (a marker).
    Record(InterruptReason),
    /// These calls may have run and their effects are unknown (a tool-in-flight
    /// note); each name as the note renders it.
    MayHaveRun(Vec<&'m str>),
}

/// How the reference engine words an interruption (docs/spec.md §4 and §5): a
/// marker, or a tool-in-flight note, as string content of a user message.
///
/// The one point of contact with an engine's wording: the conventions profile
/// (issue 11) will supply its own for other engines.
pub fn interruption_wording(m: &Message) -> Option<InterruptionWording<'_>> {
    if m.role != Role::User {
        return None;
    }
    let text = m.string_content()?;
    if let Some(reason) = InterruptReason::from_marker(text) {
        return Some(InterruptionWording::Record(reason));
    }
    let label = tool_in_flight_note_label(text)?;
    // The label is a note the generator writes, so its list sits between the fixed
    // head and tail and its items are separated by ", ".
    let (_, after) = label.split_once(" while the tool call")?;
    let list = after
        .strip_prefix("s ")
        .or_else(|| after.strip_prefix(' '))?;
    let list = list
        .split_once(" was running.")
        .or_else(|| list.split_once(" were running."))?
        .0;
    let names = list
        .split(", ")
        .map(|item| {
            item.strip_prefix('`')
                .and_then(|n| n.strip_suffix('`'))
                .unwrap_or(item)
        })
        .collect();
    Some(InterruptionWording::MayHaveRun(names))
}

/// How a note renders a tool name the model chose, by the judge's own name rule
/// (not the engine's, which a bug would change together with the note).
pub(super) fn rendered(name: &str) -> &str {
    if copied_into_note(name) {
        name
    } else {
        UNRECOGNISED_TOOL
    }
}

/// An interrupted turn whose record is due now.
#[derive(Clone, Debug)]
pub(super) struct Due {
    /// Messages from here on belong to the turn.
    pub baseline: usize,
    pub cancel: Option<CancelCause>,
    pub crashed: bool,
    /// False when the crash cut short the output list that ended the turn, so the log
    /// may say it ended before anything interrupted it (the model's last reply was
    /// complete): then a record may be missing, but never doubled.
    pub strict: bool,
}

impl Due {
    /// The reasons a record of this turn may give.
    pub fn reasons(&self) -> Vec<InterruptReason> {
        let mut r: Vec<InterruptReason> = self.cancel.iter().map(|c| c.reason()).collect();
        if self.crashed {
            r.push(InterruptReason::Crash);
        }
        r
    }
}

/// The kinds of event [`TurnWatch::follow`] reads: to any other it answers `None`
/// and changes nothing, so a checker that reads nothing else may take this as its
/// [`Checker::events`](super::Checker::events).
pub(super) const WATCHED: u32 =
    on::TURN_STARTED | on::CANCEL_ACCEPTED | on::CRASHED | on::TURN_ENDED | on::RESTARTED;

/// Follows the open turn through cancels and crashes.
#[derive(Clone, Debug, Default)]
pub(super) struct TurnWatch {
    baseline: Option<usize>,
    cancel: Option<CancelCause>,
    crashed: bool,
    turn_end_cut: bool,
}

impl TurnWatch {
    /// Follows one event; returns the turn whose record is due at it, if any.
    pub fn follow(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Due> {
        match event {
            Event::TurnStarted { baseline, .. } => {
                *self = TurnWatch {
                    baseline: Some(*baseline),
                    ..TurnWatch::default()
                };
                None
            }
            Event::CancelAccepted { cause, .. } => {
                if self.baseline.is_some() && self.cancel.is_none() {
                    self.cancel = Some(*cause);
                }
                None
            }
            Event::Crashed {
                turn_end_in_flight, ..
            } => {
                if self.baseline.is_some() {
                    self.crashed = true;
                    self.turn_end_cut |= *turn_end_in_flight;
                }
                None
            }
            Event::TurnEnded => {
                let baseline = self.baseline.take()?;
                (self.cancel.is_some() || self.crashed)
                    .then(|| self.due(baseline, !self.turn_end_cut))
            }
            Event::Restarted { .. } => {
                let baseline = self.baseline?;
                if !self.crashed {
                    return None;
                }
                self.baseline = None;
                // The turn's prompt never reached the log: there is no turn to close.
                (ctx.history.len() > baseline).then(|| self.due(baseline, !self.turn_end_cut))
            }
            _ => None,
        }
    }

    fn due(&self, baseline: usize, strict: bool) -> Due {
        Due {
            baseline,
            cancel: self.cancel,
            crashed: self.crashed,
            strict,
        }
    }
}
