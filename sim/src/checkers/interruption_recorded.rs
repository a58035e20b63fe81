//! `interruption_recorded`: a turn that a cancel or a crash cut short leaves exactly
//! one interruption record, for its cause, after the turn's last message (issue 17,
//! item 1).
//!
//! A model that is not told its turn was stopped reads the half-finished work as its
//! own choice and carries on from it, or apologises for a reply it never finished;
//! two records tell it one interruption happened twice. `marker_once` catches only a
//! doubled or near-miss marker, never a missing one: this checker asks at every
//! interrupted turn's end.

use super::interrupted_turn::{InterruptionWording, TurnWatch, WATCHED, interruption_wording};
use super::{Check, Checker, Ctx, Event, Invariant};

#[derive(Default)]
pub struct InterruptionRecorded {
    watch: TurnWatch,
    /// Off unless the run's profile is one whose wording `interruption_wording` reads
    /// (the reference's): another engine's records cannot be told apart by cause.
    active: bool,
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

    /// Only the turn watch reads events here; every other kind answers `None`.
    fn events(&self) -> u32 {
        WATCHED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        if !self.active {
            return None;
        }
        let due = self.watch.follow(ctx, event)?;
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
