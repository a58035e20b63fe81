//! The oracle: one small checker per invariant, each in a file of its own.
//!
//! Guarantee: every checker sees every event of the run in order, through one
//! [`Checker::observe`] call per event, and a violation names its invariant and the
//! step where it broke. Checkers judge only what crosses the engine's interface
//! (requests, dispatches, outputs, the history it reports), so they judge a user's
//! engine exactly as they judge the reference engine.

mod api_view;
mod append_only;
mod at_most_once;
mod cache_breakpoints;
mod compaction_applied;
pub mod determinism;
mod directives_kept;
mod durable_live;
mod history_stable;
mod hostile_input;
mod liveness;
mod logical_order;
pub(crate) mod marker_once;
mod no_lost_observation;
mod note_exact;
pub(crate) mod pairing;
pub(crate) mod prefix_memo;
mod prefix_reported;
mod prefix_stable;
mod recovery_idempotent;
pub(crate) mod same_json;
mod stale_noop;
mod thinking_intact;
mod tool_order;
mod twin_agrees;

mod interrupted_turn;
mod interruption_recorded;
mod label_matches;
mod model_ends_turn;
mod model_words_exact;
mod quiet_after_cancel;
mod reply_never_fails;
mod shown_survives;
pub(crate) use hostile_input::invalid as invalid_history;
pub use interrupted_turn::{InterruptionWording, interruption_wording};

pub use crate::invariant::{INVARIANT_NAMES, Invariant, UnknownInvariant};
pub use crate::judge::finding::excerpt;

use crate::conventions::{CheckKind, Conventions, Selection};
use std::collections::BTreeMap;
use std::sync::Arc;
use turnsim_core::log::TurnOutcome;
use turnsim_core::{
    Activity, CancelCause, OperationId, Output, PendingOperation, Request, SharedMessage,
    StreamEvent, ToolCall, ToolResultContent,
};

/// Every invariant's name, as reports and scenario files spell it.
pub const INVARIANTS: [&str; INVARIANT_NAMES.len()] = INVARIANT_NAMES;

pub type Check = Result<(), String>;

/// What the world tells its checkers about itself, fixed for a run and handed to
/// their constructors: a checker's verdict depends on its events and on these, never
/// on a global that some other part of the process happened to set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldFacts {
    /// The mark the world's model puts in every text it writes
    /// ([`crate::judge::taint::MODEL_MARK`] in the simulator).
    pub model_mark: &'static str,
    /// The cap on truncated replies resumed in a row that the world configured the
    /// engine's session with.
    pub max_truncated_resumes: u32,
}

/// What every checker may read at the moment of an event.
pub struct Ctx<'a> {
    pub step: u64,
    /// The engine's history now (empty while it is down).
    pub history: &'a [SharedMessage],
    /// User-role texts the engine authors besides markers and notes.
    pub fixed_texts: &'a [String],
    /// Every prompt the user sent in this run.
    pub prompts: &'a [String],
    /// Texts the host handed the engine to place in the history (the compaction
    /// summaries it accepted): the host's words, not the model's, wherever they sit.
    pub host_texts: &'a [String],
}

#[cfg(test)]
impl Ctx<'static> {
    /// Step `step` of a run whose engine holds nothing yet, with no texts of its own.
    pub(crate) fn empty(step: u64) -> Ctx<'static> {
        Ctx {
            step,
            history: &[],
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        }
    }
}

/// Why the history was replaced or cut on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetKind {
    Rewind,
    Compaction,
}

/// Something acknowledged to the user: it must survive any crash after this point.
#[derive(Clone, Debug, PartialEq)]
pub enum Observation {
    Prompt {
        words: String,
    },
    ToolResult {
        tool_use_id: String,
        /// Shared: a tool's output (up to tens of KiB) is kept by more than one
        /// checker, and each kept it as a copy of its own.
        content: std::sync::Arc<ToolResultContent>,
    },
    /// Not acknowledged: a live result of the open batch the engine accepted with no
    /// `Persist` among its outputs, so it holds the result without having saved it.
    /// Owed nothing across a crash; judged only against a profile that logs each
    /// result as it arrives (`logs_each_result`).
    Taken {
        tool_use_id: String,
        content: std::sync::Arc<ToolResultContent>,
    },
}

/// What an engine shows through [`crate::engine::Engine`] at one moment: the history
/// it holds, its pending operation and whether it is idle. Read by the world itself,
/// so a verdict on it does not rest on the engine's report of its own state.
#[derive(Clone, Debug)]
pub struct Held {
    pub history: Vec<SharedMessage>,
    pub pending: PendingOperation,
    pub idle: bool,
}

/// One event of the run, as the checkers see it.
pub enum Event<'a> {
    /// A prompt was accepted; messages before `baseline` belong to earlier turns.
    TurnStarted {
        baseline: usize,
        /// The history just before the prompt (`baseline` messages), as earlier turns
        /// left it: the engine may have joined the prompt to its last message.
        before: &'a [SharedMessage],
    },
    Request {
        op: OperationId,
        request: &'a Request,
        /// Leading messages that are the very allocations of the previous request's,
        /// already judged there; a checker of single messages may skip them.
        seen: usize,
        /// The bytes the request went on the wire as, when the engine wrote them
        /// itself (a subprocess engine's JSON); `None`: an in-process engine, whose
        /// request goes out as core's serializer writes [`Request`].
        body: Option<&'a str>,
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
    /// `before`/`after` are the engine's own state bytes; `held` is what the world
    /// read through the interface before and after (not for an input accepted while
    /// busy, whose history is compared by the world itself).
    Noop {
        what: &'a str,
        before: &'a [u8],
        after: &'a [u8],
        outputs: &'a [Output],
        held: Option<(&'a Held, &'a Held)>,
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
    /// The engine was handed an input it must refuse or repair (a hostile or legacy
    /// input); `held` is the history it holds after accepting it, or its refusal.
    Hostile {
        what: &'a str,
        held: Result<&'a [SharedMessage], &'a str>,
        /// A text an engine that accepts the input must not keep (the older format's
        /// recap, which a migration drops).
        forbidden: Option<&'a str>,
    },
    /// An idle engine was handed a host input the spec says it accepts (a rewind
    /// docs/spec.md §6 allows), to a profile that says it does (`accepts_rewinds`);
    /// `refused` is its refusal, if it refused.
    OwedInput {
        what: &'a str,
        refused: Option<&'a str>,
    },
    /// A cancel was accepted while a turn was open, before its outputs are carried out;
    /// `running` are the tool-use ids the ledger had started and not finished then.
    CancelAccepted {
        cause: CancelCause,
        running: &'a [String],
        /// The operation whose stream or tools were live when the cancel came, when
        /// the outputs of the cancel do not abort it: it runs on after the user said
        /// stop.
        left_running: Option<OperationId>,
    },
    /// The process died, before the restart; `running` as for a cancel, and
    /// `turn_end_in_flight` when the output list the crash cut short held a turn's end
    /// (so the log may or may not say the turn ended).
    Crashed {
        running: &'a [String],
        turn_end_in_flight: bool,
    },
    /// A live provider event, just before the engine gets it: what the model said
    /// (thinking, signature and tool-input deltas are not reported).
    Streamed {
        op: OperationId,
        event: &'a StreamEvent,
    },
    /// How the engine says the turn ended, just before `TurnEnded`; `injected` counts
    /// the provider and tool faults the world injected in the run so far.
    TurnOutcome {
        outcome: &'a TurnOutcome,
        injected: u64,
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
    /// A list of outputs persisted a `Receipt` record (the reference log format): what
    /// the engine says the request it is about to send carries.
    Receipt {
        op: OperationId,
        digest: &'a str,
    },
    /// The engine reported an activity to the host.
    Activity {
        activity: &'a Activity,
    },
    /// A live fragment of a tool call's input JSON, just before the engine gets it:
    /// kept apart from [`Event::Streamed`] so the checkers that judge what the user
    /// saw are not called for it.
    InputStreamed {
        op: OperationId,
        event: &'a StreamEvent,
    },
    /// Two fresh twins of the engine were handed the same configure, one with the
    /// host's tools in the host's order, one in reverse, then the same prompt: the
    /// request each sent with its bytes when the engine wrote them
    /// ([`crate::engine::Engine::request_body`]), or why there is none.
    ToolOrderTwins {
        host: &'a TwinRequest,
        permuted: &'a TwinRequest,
    },
}

/// A twin's first request and its bytes, or why it sent none.
pub type TwinRequest = Result<(Request, Option<Arc<str>>), String>;

pub trait Checker: Send {
    fn invariant(&self) -> Invariant;
    /// Generic (every correct engine keeps it) or convention (asks the profile).
    fn kind(&self) -> CheckKind {
        CheckKind::Generic
    }
    /// `None` when the event is not this checker's concern (not counted as a check).
    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check>;
    /// The kinds of event (a union of [`on`] bits) this checker may act on. For any
    /// other kind `observe` must return `None` and change nothing, so [`Checks`] does
    /// not call it: with two dozen checkers and most of them reading one or two kinds,
    /// the calls that only answer `None` were a large share of the checking cost.
    fn events(&self) -> u32 {
        on::ALL
    }
}

/// One bit per kind of [`Event`], for [`Checker::events`].
pub mod on {
    pub const TURN_STARTED: u32 = 1 << 0;
    pub const REQUEST: u32 = 1 << 1;
    pub const DISPATCHED: u32 = 1 << 2;
    pub const STEP: u32 = 1 << 3;
    pub const NOOP: u32 = 1 << 4;
    pub const OBSERVED: u32 = 1 << 5;
    pub const RESTARTED: u32 = 1 << 6;
    pub const RESET: u32 = 1 << 7;
    pub const TURN_ENDED: u32 = 1 << 8;
    pub const LIVENESS_END: u32 = 1 << 9;
    pub const HOSTILE: u32 = 1 << 10;
    pub const CANCEL_ACCEPTED: u32 = 1 << 11;
    pub const CRASHED: u32 = 1 << 12;
    pub const STREAMED: u32 = 1 << 13;
    pub const TURN_OUTCOME: u32 = 1 << 14;
    pub const THINKING_STREAMED: u32 = 1 << 15;
    pub const RECONFIGURED: u32 = 1 << 16;
    pub const DURABLE: u32 = 1 << 17;
    pub const TWIN: u32 = 1 << 18;
    pub const RECEIPT: u32 = 1 << 19;
    pub const ACTIVITY: u32 = 1 << 20;
    pub const INPUT_STREAMED: u32 = 1 << 21;
    pub const TOOL_ORDER: u32 = 1 << 22;
    pub const OWED_INPUT: u32 = 1 << 23;
    /// Every kind: the default, for a checker that reads many.
    pub const ALL: u32 = u32::MAX;
}

impl Event<'_> {
    /// This event's kind, as an [`on`] bit.
    pub fn kind_bit(&self) -> u32 {
        match self {
            Event::TurnStarted { .. } => on::TURN_STARTED,
            Event::Request { .. } => on::REQUEST,
            Event::Dispatched { .. } => on::DISPATCHED,
            Event::Step => on::STEP,
            Event::Noop { .. } => on::NOOP,
            Event::Observed(_) => on::OBSERVED,
            Event::Restarted { .. } => on::RESTARTED,
            Event::Reset(_) => on::RESET,
            Event::TurnEnded => on::TURN_ENDED,
            Event::LivenessEnd { .. } => on::LIVENESS_END,
            Event::Hostile { .. } => on::HOSTILE,
            Event::CancelAccepted { .. } => on::CANCEL_ACCEPTED,
            Event::Crashed { .. } => on::CRASHED,
            Event::Streamed { .. } => on::STREAMED,
            Event::TurnOutcome { .. } => on::TURN_OUTCOME,
            Event::ThinkingStreamed { .. } => on::THINKING_STREAMED,
            Event::Reconfigured => on::RECONFIGURED,
            Event::Durable { .. } => on::DURABLE,
            Event::Twin { .. } => on::TWIN,
            Event::Receipt { .. } => on::RECEIPT,
            Event::Activity { .. } => on::ACTIVITY,
            Event::InputStreamed { .. } => on::INPUT_STREAMED,
            Event::ToolOrderTwins { .. } => on::TOOL_ORDER,
            Event::OwedInput { .. } => on::OWED_INPUT,
        }
    }
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
    /// Checks made by `list[i]`, by position: a count per event must not cost a
    /// lookup by name.
    counts: Vec<u64>,
    /// Positions in `list` of the checkers whose `events()` include each kind of
    /// event, grouped by kind: for the kind whose [`on`] bit is at position `b`, they
    /// are `by_kind[starts[b]..starts[b + 1]]`, in `list`'s order, so the first
    /// violation reported is the same as when every checker is asked. An event visits
    /// only its own checkers instead of testing two dozen masks; one allocation per
    /// run, as `Checks` is built per seed.
    by_kind: Vec<usize>,
    starts: [usize; u32::BITS as usize + 1],
}

impl Checks {
    /// Every checker, holding the engine to the reference engine's profile.
    pub fn new(facts: WorldFacts) -> Checks {
        Checks::with(&Conventions::reference(), &Selection::all(), facts)
    }

    /// The selected checkers, holding the engine to `conventions`.
    pub fn with(conventions: &Conventions, selection: &Selection, facts: WorldFacts) -> Checks {
        let list: Vec<Box<dyn Checker>> = Checks::registry(Arc::new(conventions.clone()), facts)
            .into_iter()
            .filter(|c| selection.runs(c.invariant()))
            .collect();
        let counts = vec![0; list.len()];
        let masks: Vec<u32> = list.iter().map(|c| c.events()).collect();
        let (by_kind, starts) = Checks::index(&masks);
        Checks {
            list,
            counts,
            by_kind,
            starts,
        }
    }

    /// `by_kind` and `starts` for checkers whose `events()` are `masks`: a counting
    /// sort by kind that visits only the bits set, as `Checks` is built per seed.
    fn index(masks: &[u32]) -> (Vec<usize>, [usize; u32::BITS as usize + 1]) {
        let set_bits = |mut m: u32| {
            std::iter::from_fn(move || {
                let bit = m.trailing_zeros() as usize;
                m &= m.checked_sub(1)?;
                Some(bit)
            })
        };
        let mut starts = [0; u32::BITS as usize + 1];
        for &m in masks {
            for bit in set_bits(m) {
                starts[bit + 1] += 1;
            }
        }
        for bit in 0..u32::BITS as usize {
            starts[bit + 1] += starts[bit];
        }
        // Checkers are placed in `list`'s order within each kind.
        let mut next = starts;
        let mut by_kind = vec![0; starts[u32::BITS as usize]];
        for (i, &m) in masks.iter().enumerate() {
            for bit in set_bits(m) {
                by_kind[next[bit]] = i;
                next[bit] += 1;
            }
        }
        (by_kind, starts)
    }

    /// These checkers with every event delivered to every one of them, masks ignored.
    /// Slower and meant for the mask audit (`tests/checker_masks.rs`): a mask that
    /// leaves out a kind its checker acts on makes the masked and the unmasked checks
    /// disagree (a verdict, a step, a message or a count), and the audit requires them
    /// to agree on every event stream it can produce.
    pub fn unmasked(mut self) -> Checks {
        (self.by_kind, self.starts) = Checks::index(&vec![on::ALL; self.list.len()]);
        self
    }

    fn registry(c: Arc<Conventions>, facts: WorldFacts) -> Vec<Box<dyn Checker>> {
        let reference_wording = c.name == crate::conventions::REFERENCE_NAME;
        let shown = c.shown;
        let labels = if reference_wording {
            label_matches::Labels::Reference
        } else {
            c.may_have_run
                .clone()
                .map_or(label_matches::Labels::Off, label_matches::Labels::Answers)
        };
        let reports = if reference_wording {
            prefix_reported::Reports::Receipts
        } else {
            c.prefix_changed.clone().map_or(
                prefix_reported::Reports::Off,
                prefix_reported::Reports::Activity,
            )
        };
        let canonical_tools = c.canonical_tools == Some(true);
        vec![
            Box::<pairing::Pairing>::default(),
            Box::<append_only::AppendOnly>::default(),
            Box::<history_stable::HistoryStable>::default(),
            Box::new(marker_once::MarkerOnce::new(c.clone())),
            Box::new(note_exact::NoteExact::new(c.clone(), facts.model_mark)),
            Box::<at_most_once::AtMostOnce>::default(),
            Box::new(no_lost_observation::NoLostObservation::new(c.clone())),
            Box::new(stale_noop::StaleNoop),
            Box::new(recovery_idempotent::RecoveryIdempotent),
            Box::new(cache_breakpoints::CacheBreakpoints::new(c)),
            Box::new(liveness::Liveness),
            // The exact part reads the reference wording (`interruption_wording`); its
            // generic core judges every other engine.
            Box::new(interruption_recorded::InterruptionRecorded::new(
                reference_wording,
            )),
            // Labels and prefix reports are read in the wording the profile gives.
            Box::new(label_matches::LabelMatches::new(labels)),
            Box::<quiet_after_cancel::QuietAfterCancel>::default(),
            Box::new(shown_survives::ShownSurvives::new(shown)),
            Box::<reply_never_fails::ReplyNeverFails>::default(),
            Box::new(model_ends_turn::ModelEndsTurn::new(
                facts.max_truncated_resumes,
            )),
            Box::<hostile_input::HostileInput>::default(),
            Box::new(logical_order::LogicalOrder),
            Box::<thinking_intact::ThinkingIntact>::default(),
            Box::<prefix_stable::PrefixStable>::default(),
            Box::new(durable_live::DurableLive),
            Box::new(twin_agrees::TwinAgrees),
            Box::new(prefix_reported::PrefixReported::new(reports)),
            Box::new(model_words_exact::ModelWordsExact::new(facts.model_mark)),
            Box::new(tool_order::ToolOrder::new(canonical_tools)),
            Box::<directives_kept::DirectivesKept>::default(),
            Box::<compaction_applied::CompactionApplied>::default(),
        ]
    }

    /// Every checker a run can select, by name, with its kind, in the order they run.
    pub fn catalogue() -> Vec<(&'static str, CheckKind)> {
        // The facts shape verdicts, not which checkers exist.
        let facts = WorldFacts {
            model_mark: "",
            max_truncated_resumes: 0,
        };
        Checks::registry(Arc::new(Conventions::generic()), facts)
            .iter()
            .map(|c| (c.invariant().name(), c.kind()))
            .collect()
    }

    /// Every checker a run can select, by name.
    pub fn names() -> Vec<&'static str> {
        Checks::catalogue().into_iter().map(|(n, _)| n).collect()
    }

    pub fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Result<(), Violation> {
        let kind = event.kind_bit().trailing_zeros() as usize;
        for &i in &self.by_kind[self.starts[kind]..self.starts[kind + 1]] {
            let c = &mut self.list[i];
            if let Some(result) = c.observe(ctx, event) {
                self.counts[i] += 1;
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
    pub fn counts(&self) -> BTreeMap<&'static str, u64> {
        // Put in name order first (by a rank, not by comparing names), so the map is
        // built in one pass instead of by a search per entry: this runs once per seed.
        let rank = crate::invariant::name_ranks();
        let mut pairs: Vec<(Invariant, u64)> = self
            .list
            .iter()
            .zip(&self.counts)
            .map(|(c, &n)| (c.invariant(), n))
            .collect();
        pairs.sort_by_key(|&(inv, _)| rank[inv as usize]);
        pairs.dedup_by(|later, first| {
            let same = later.0 == first.0;
            if same {
                first.1 += later.1;
            }
            same
        });
        pairs.into_iter().map(|(inv, n)| (inv.name(), n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_runs_exactly_the_checked_invariants_in_their_order() {
        let names: Vec<&str> = Invariant::CHECKED.iter().map(|i| i.name()).collect();
        assert_eq!(Checks::names(), names);
    }
}
