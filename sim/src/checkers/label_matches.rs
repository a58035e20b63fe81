//! `label_matches`: every tool call that had started and not finished when a cancel
//! or a crash struck is answered as "may have run, effects unknown", and after a live
//! cancel no other call is (issue 17, item 2).
//!
//! The world's tool ledger is the truth: it knows which executions started and which
//! finished. A call that ran but is labelled as never run makes the model retry a
//! payment or a deploy whose effects already happened; a call labelled as possibly
//! run that finished (or never started) sends it to inspect and undo work that is
//! fine. After a crash the engine cannot know whether an intent it logged was
//! dispatched, so there only the calls that ran must be labelled; extra names are
//! honest uncertainty.
//!
//! How a label is read is the engine's wording: the reference profile's notes name
//! the calls (`interruption_wording`); a profile file gives the text of the
//! `tool_result` by which its engine answers a call that may have run
//! (`labels.may_have_run`), and then each call is labelled by its own answer. With
//! neither, the checker judges nothing and the run summary says why.

use super::interrupted_turn::{
    InterruptionWording, TurnWatch, WATCHED, interruption_wording, rendered,
};
use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use crate::conventions::TextSet;
use std::collections::BTreeMap;
use turnsim_core::{Block, SharedMessage};

/// Where a run's labels are read.
#[derive(Default)]
pub enum Labels {
    /// No wording known: nothing is judged.
    #[default]
    Off,
    /// The reference engine's tool-in-flight notes.
    Reference,
    /// A profile's `tool_result` texts for a call that may have run.
    Answers(TextSet),
}

#[derive(Default)]
pub struct LabelMatches {
    watch: TurnWatch,
    /// Tool-use ids running when the turn was interrupted, from the ledger.
    running: Vec<String>,
    labels: Labels,
}

impl LabelMatches {
    pub fn new(labels: Labels) -> LabelMatches {
        LabelMatches {
            labels,
            ..LabelMatches::default()
        }
    }

    /// The names of the calls the turn labels as possibly run, as the labels render
    /// them.
    fn labelled<'h>(&self, turn: &'h [SharedMessage]) -> BTreeMap<&'h str, usize> {
        match &self.labels {
            Labels::Off => BTreeMap::new(),
            Labels::Reference => counts(turn.iter().flat_map(|m| match interruption_wording(m) {
                Some(InterruptionWording::MayHaveRun(names)) => names,
                _ => Vec::new(),
            })),
            Labels::Answers(texts) => counts(turn.iter().flat_map(|m| {
                m.blocks().iter().filter_map(|b| match b {
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } if texts.matches(&content.text()) => call_name(turn, tool_use_id),
                    _ => None,
                })
            })),
        }
    }
}

/// The name a turn's `tool_use` with this id carries, the latest one first.
fn call_name<'h>(turn: &'h [SharedMessage], id: &str) -> Option<&'h str> {
    turn.iter().rev().find_map(|m| {
        m.blocks().iter().find_map(|b| match b {
            Block::ToolUse { id: i, name, .. } if i == id => Some(name.as_str()),
            _ => None,
        })
    })
}

/// Whether some `tool_result` of the turn answers the call with this id.
fn answered(turn: &[SharedMessage], id: &str) -> bool {
    turn.iter().any(|m| {
        m.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id))
    })
}

fn counts<'a>(names: impl Iterator<Item = &'a str>) -> BTreeMap<&'a str, usize> {
    let mut c = BTreeMap::new();
    for n in names {
        *c.entry(n).or_default() += 1;
    }
    c
}

impl Checker for LabelMatches {
    fn invariant(&self) -> Invariant {
        Invariant::LabelMatches
    }

    fn kind(&self) -> super::CheckKind {
        super::CheckKind::Convention
    }

    /// Every kind read here (a turn's start, a cancel, a crash) is one the turn watch
    /// reads too; every other kind answers `None` and changes nothing.
    fn events(&self) -> u32 {
        WATCHED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        if matches!(self.labels, Labels::Off) {
            return None;
        }
        match event {
            Event::TurnStarted { .. } => self.running.clear(),
            Event::CancelAccepted { running, .. } | Event::Crashed { running, .. } => {
                for id in running.iter() {
                    if !self.running.contains(id) {
                        self.running.push(id.clone());
                    }
                }
            }
            _ => {}
        }
        let due = self.watch.follow(ctx, event)?;
        let turn = ctx.history.get(due.baseline..).unwrap_or_default();
        // Calls whose tool_use did not survive are pairing's concern, not a label's.
        // A note renders a name as it writes it; an answer is found by its call's id.
        let render: fn(&str) -> &str = match self.labels {
            Labels::Reference => rendered,
            _ => |name| name,
        };
        // Where labels are answers, a call nothing answers has no label to judge: that
        // is pairing's finding, named as what it is.
        let answers = matches!(self.labels, Labels::Answers(_));
        let ran = counts(
            self.running
                .iter()
                .filter(|id| !answers || answered(turn, id))
                .filter_map(|id| call_name(turn, id))
                .map(render),
        );
        let labelled = self.labelled(turn);
        self.running.clear();
        for (name, n) in &ran {
            let have = labelled.get(name).copied().unwrap_or(0);
            if have < *n {
                return Some(Err(format!(
                    "{n} call(s) of {} were running when the turn was interrupted, but only {have} are labelled as possibly run",
                    excerpt(name)
                )));
            }
        }
        if !due.crashed {
            for (name, n) in &labelled {
                let truth = ran.get(name).copied().unwrap_or(0);
                if *n > truth {
                    return Some(Err(format!(
                        "{n} call(s) of {} are labelled as possibly run, but the ledger had {truth} running when the cancel was accepted",
                        excerpt(name)
                    )));
                }
            }
        }
        Some(Ok(()))
    }
}
