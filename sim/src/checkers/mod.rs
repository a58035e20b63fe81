//! The oracle: one small checker per invariant, each in a file of its own.
//!
//! Guarantee: every checker sees every event of the run in order, through one
//! [`Checker::observe`] call per event, and a violation names its invariant and the
//! step where it broke. Checkers judge only what crosses the engine's interface
//! (requests, dispatches, outputs, the history it reports), so they judge a user's
//! engine exactly as they judge the reference engine.

mod append_only;
mod at_most_once;
mod cache_breakpoints;
pub mod determinism;
mod durable_live;
mod history_stable;
mod invariant;
mod liveness;
mod logical_order;
pub(crate) mod marker_once;
mod no_lost_observation;
mod note_exact;
pub(crate) mod pairing;
mod prefix_stable;
mod recovery_idempotent;
mod stale_noop;
mod thinking_intact;
mod twin_agrees;

pub use invariant::{INVARIANT_NAMES, Invariant, UnknownInvariant};

use std::collections::BTreeMap;
use turnsim_core::{OperationId, Output, Request, SharedMessage, ToolCall};

/// Every invariant's name, as reports and scenario files spell it.
pub const INVARIANTS: [&str; Invariant::ALL.len()] = INVARIANT_NAMES;

pub type Check = Result<(), String>;

/// What every checker may read at the moment of an event.
pub struct Ctx<'a> {
    pub step: u64,
    /// The engine's history now (empty while it is down).
    pub history: &'a [SharedMessage],
    /// User-role texts the engine authors besides markers and notes.
    pub fixed_texts: &'a [String],
    /// Every prompt the user sent in this run.
    pub prompts: &'a [String],
}

/// Why the history was replaced or cut on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetKind {
    Rewind,
    Compaction,
}

/// Something acknowledged to the user: it must survive any crash after this point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    Prompt {
        words: String,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
    },
}

/// One event of the run, as the checkers see it.
pub enum Event<'a> {
    /// A prompt was accepted; messages before `baseline` belong to earlier turns.
    TurnStarted {
        baseline: usize,
    },
    Request {
        op: OperationId,
        request: &'a Request,
        /// Leading messages that are the very allocations of the previous request's,
        /// already judged there; a checker of single messages may skip them.
        seen: usize,
    },
    /// A tool started; `starts` counts its starts in the whole run, this one included.
    Dispatched {
        op: OperationId,
        call: &'a ToolCall,
        starts: usize,
    },
    /// After every step.
    Step,
    /// A delivery that must change nothing: stale, duplicate, or a refused input.
    Noop {
        what: &'a str,
        before: &'a [u8],
        after: &'a [u8],
        outputs: &'a [Output],
    },
    Observed(Observation),
    /// The engine was restored after a crash and its outputs carried out; `again` is a
    /// second restore from the resulting log: its history and its outputs.
    Restarted {
        again: Result<(Vec<SharedMessage>, &'a [Output]), String>,
    },
    Reset(ResetKind),
    TurnEnded,
    /// The end of the liveness phase.
    LivenessEnd {
        turn_open: bool,
        detail: String,
    },
    /// The provider streamed a thinking block that completed with its signature.
    ThinkingStreamed {
        thinking: &'a str,
        signature: &'a str,
    },
    /// The host's configuration change (system, tools) was accepted.
    Reconfigured,
    /// After a list of outputs that wrote to the log was carried out, a fresh engine
    /// was restored from the durable log: its history, whether it was idle, and the
    /// outputs its restore asked for. `live_idle` is whether the live engine is idle.
    Durable {
        restored: Result<(Vec<SharedMessage>, bool, &'a [Output]), String>,
        live_idle: bool,
    },
    /// After a delivery that had to change nothing (`after`), the live engine and a
    /// twin that never saw it were given the same input; what each returned.
    Twin {
        after: &'a str,
        live: &'a Result<Vec<Output>, String>,
        twin: &'a Result<Vec<Output>, String>,
    },
}

pub trait Checker: Send {
    fn invariant(&self) -> Invariant;
    /// `None` when the event is not this checker's concern (not counted as a check).
    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check>;
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: Invariant,
    pub step: u64,
    pub message: String,
}

/// All checkers of a run, with how often each one checked.
pub struct Checks {
    list: Vec<Box<dyn Checker>>,
    counts: BTreeMap<&'static str, u64>,
}

impl Default for Checks {
    fn default() -> Self {
        Checks::new()
    }
}

impl Checks {
    pub fn new() -> Checks {
        let list: Vec<Box<dyn Checker>> = vec![
            Box::new(pairing::Pairing),
            Box::<append_only::AppendOnly>::default(),
            Box::<history_stable::HistoryStable>::default(),
            Box::new(marker_once::MarkerOnce),
            Box::new(note_exact::NoteExact),
            Box::new(at_most_once::AtMostOnce),
            Box::<no_lost_observation::NoLostObservation>::default(),
            Box::new(stale_noop::StaleNoop),
            Box::new(recovery_idempotent::RecoveryIdempotent),
            Box::<cache_breakpoints::CacheBreakpoints>::default(),
            Box::new(liveness::Liveness),
            Box::new(logical_order::LogicalOrder),
            Box::<thinking_intact::ThinkingIntact>::default(),
            Box::<prefix_stable::PrefixStable>::default(),
            Box::new(durable_live::DurableLive),
            Box::new(twin_agrees::TwinAgrees),
        ];
        let counts = list.iter().map(|c| (c.invariant().name(), 0)).collect();
        Checks { list, counts }
    }

    pub fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Result<(), Violation> {
        for c in self.list.iter_mut() {
            if let Some(result) = c.observe(ctx, event) {
                if let Some(n) = self.counts.get_mut(c.invariant().name()) {
                    *n += 1;
                }
                if let Err(message) = result {
                    return Err(Violation {
                        invariant: c.invariant(),
                        step: ctx.step,
                        message,
                    });
                }
            }
        }
        Ok(())
    }

    /// Checks made per invariant.
    pub fn counts(&self) -> &BTreeMap<&'static str, u64> {
        &self.counts
    }
}

/// A short, one-line excerpt of a text for reports.
pub fn excerpt(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { '⏎' } else { c })
        .collect();
    if one_line.chars().count() > 80 {
        let cut: String = one_line.chars().take(77).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}
