//! Planted bugs for measuring the shrinker: the reference engine wrapped so that it
//! misbehaves in one realistic way each (cancel paths, crash recovery, compaction,
//! ordering, busy input, cache hints, panics). Kept out of the canary set on purpose:
//! these exist to give the shrinker failures of many shapes, not to gate the harness.

#![allow(dead_code)]

use crate::flawed_support::Misbehaviour;
use turnsim::run_seed;
use turnsim::{Engine, EngineFactory};
use turnsim::{Expectation, Scenario};
use turnsim_core::{Block, Input, Message, Output, PendingOperation, Role, Session, SharedMessage};

/// One planted bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Planted {
    /// Cancel path: a cancel that arrives while a reply streams is ignored.
    CancelIgnoredWhileStreaming,
    /// Crash recovery: restore reads all but the last byte of the log.
    RestoreDropsLastByte,
    /// Crash recovery: a tool result is applied but never persisted.
    ToolResultNotPersisted,
    /// Compaction-like trimming: requests of more than four messages silently lose two
    /// early messages.
    RequestDropsEarlyMessages,
    /// Ordering: tool results are sent in reverse order.
    ToolResultsReversed,
    /// Ordering: the first call of a batch is dispatched twice.
    DispatchDuplicated,
    /// Cache hints: the last breakpoint is placed one message late.
    BreakpointOffByOne,
    /// Panic: an empty tool output hits an unwrap.
    PanicOnEmptyToolOutput,
    /// Busy input: a prompt during a turn cancels the turn and starts over.
    BusyPromptRestartsTurn,
    /// Markers / rewind: a rewind is applied, then reported as refused.
    RewindRefusedAfterApplying,
    /// Compaction and recovery: a compaction is applied but not persisted.
    CompactionNotPersisted,
    /// Cancel path: a cancel during tools aborts the batch but never reports the turn
    /// ended, so the host waits forever.
    CancelForgetsTurnEnd,
}

impl Planted {
    pub const ALL: [Planted; 12] = [
        Planted::CancelIgnoredWhileStreaming,
        Planted::RestoreDropsLastByte,
        Planted::ToolResultNotPersisted,
        Planted::RequestDropsEarlyMessages,
        Planted::ToolResultsReversed,
        Planted::DispatchDuplicated,
        Planted::BreakpointOffByOne,
        Planted::PanicOnEmptyToolOutput,
        Planted::BusyPromptRestartsTurn,
        Planted::RewindRefusedAfterApplying,
        Planted::CompactionNotPersisted,
        Planted::CancelForgetsTurnEnd,
    ];
}

fn is_results(m: &Message) -> bool {
    m.role == Role::User
        && m.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
}

impl Planted {
    fn rewrite(self, out: &mut Output) {
        match (self, out) {
            (Planted::RequestDropsEarlyMessages, Output::Send { request, .. })
                if request.messages.len() > 4 =>
            {
                request.messages.drain(1..3);
            }
            (Planted::ToolResultsReversed, Output::Send { request, .. }) => {
                if let Some(last) = request.messages.last_mut()
                    && is_results(last)
                    && last.blocks().len() > 1
                {
                    let mut blocks = last.blocks().to_vec();
                    blocks.reverse();
                    let m: SharedMessage = std::sync::Arc::new(Message::user_blocks(blocks));
                    *last = m;
                }
            }
            (Planted::BreakpointOffByOne, Output::Send { request, .. }) => {
                if let Some(b) = request.cache.breakpoints.last_mut()
                    && let Some(i) = b.after_message
                {
                    b.after_message = Some(i + 1);
                }
            }
            (Planted::DispatchDuplicated, Output::Dispatch { calls, .. }) => {
                if let Some(first) = calls.first().cloned() {
                    calls.push(first);
                }
            }
            _ => {}
        }
    }
}

impl Misbehaviour for Planted {
    const NAME: &'static str = "planted";

    fn handle(self, inner: &mut Session, input: Input) -> Result<Vec<Output>, String> {
        let pending = inner.pending_operation();
        match (&self, &input) {
            (Planted::CancelIgnoredWhileStreaming, Input::Cancel { .. })
                if matches!(pending, PendingOperation::Generation { .. }) =>
            {
                return Ok(Vec::new());
            }
            (Planted::PanicOnEmptyToolOutput, Input::ToolResult { outcome, .. })
                if outcome.content.is_empty() =>
            {
                let text = outcome.content.text();
                let first_line: Option<&str> = text.lines().next();
                let _ = first_line.expect("a tool always prints something");
            }
            (Planted::BusyPromptRestartsTurn, Input::Prompt { .. }) if !inner.is_idle() => {
                let cause = turnsim_core::CancelCause::User;
                let mut out = Engine::handle(inner, Input::Cancel { cause })?;
                out.extend(Engine::handle(inner, input)?);
                return Ok(out);
            }
            (Planted::RewindRefusedAfterApplying, Input::Rewind { .. }) => {
                let _ = Engine::handle(inner, input)?;
                return Err("rewind refused".into());
            }
            _ => {}
        }
        let kind = match &input {
            Input::ToolResult { .. } => 1,
            Input::Compact { .. } => 2,
            Input::Cancel { .. } => 3,
            _ => 0,
        };
        let mut outputs = Engine::handle(inner, input)?;
        match (self, kind) {
            (Planted::ToolResultNotPersisted, 1) | (Planted::CompactionNotPersisted, 2) => {
                outputs.retain(|o| !matches!(o, Output::Persist { .. }));
            }
            (Planted::CancelForgetsTurnEnd, 3)
                if matches!(pending, PendingOperation::Tools { .. }) =>
            {
                outputs.retain(|o| !matches!(o, Output::TurnEnded { .. }));
            }
            _ => {}
        }
        for o in &mut outputs {
            self.rewrite(o);
        }
        Ok(outputs)
    }

    fn log(self, log: &[u8]) -> &[u8] {
        match self {
            Planted::RestoreDropsLastByte => &log[..log.len().saturating_sub(1)],
            _ => log,
        }
    }
}

/// The first failing seed below `limit`, as a scenario that replays it.
pub fn first_failure(factory: &dyn EngineFactory, limit: u64) -> Option<Scenario> {
    failures(factory, 0..limit).next()
}

/// The failing seeds of `seeds`, in order, as scenarios that expect their failure.
pub fn failures(
    factory: &dyn EngineFactory,
    seeds: std::ops::Range<u64>,
) -> impl Iterator<Item = Scenario> + '_ {
    seeds.filter_map(|seed| {
        let o = run_seed(factory, seed, false);
        let v = o.violation?;
        let options = turnsim::SimOptions::from_seed(seed);
        let mut s = Scenario::new(
            options,
            Expectation::Fail {
                invariant: v.invariant,
                step: v.step,
            },
        );
        s.decisions = o.decisions;
        Some(s)
    })
}
