//! `stale_noop`: a stale or duplicate delivery, or a refused input, changes nothing.
//!
//! Late completions of cancelled operations are routine in a real runtime (a stream
//! that was already in the socket buffer, a tool that finished as it was killed); if
//! one is applied, it writes into a turn that has moved on.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::Output;

pub struct StaleNoop;

fn kind(o: &Output) -> &'static str {
    match o {
        Output::Persist { .. } => "persist",
        Output::TruncateLog { .. } => "truncate_log",
        Output::Send { .. } => "send",
        Output::Dispatch { .. } => "dispatch",
        Output::Abort { .. } => "abort",
        Output::TurnEnded { .. } => "turn_ended",
        Output::Activity { .. } => "activity",
    }
}

impl Checker for StaleNoop {
    fn invariant(&self) -> Invariant {
        Invariant::StaleNoop
    }

    fn events(&self) -> u32 {
        use super::on;
        on::NOOP
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Noop {
            what,
            before,
            after,
            outputs,
        } = event
        else {
            return None;
        };
        Some(if !outputs.is_empty() {
            let kinds: Vec<&str> = outputs.iter().map(kind).collect();
            Err(format!("{what} produced outputs: {}", kinds.join(", ")))
        } else if before != after {
            Err(format!("{what} changed the engine state"))
        } else {
            Ok(())
        })
    }
}
