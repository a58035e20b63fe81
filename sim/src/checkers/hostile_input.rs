//! `hostile_input`: an input the engine must refuse or repair never leaves it holding
//! an invalid history (docs/spec.md §7, "Hostile and legacy inputs").
//!
//! A host hands an engine things no correct session produces: a rewind that would
//! split a tool call from its results, a blank compaction summary, a log whose last
//! record (a compaction, an append, a record from an older writer) breaks the
//! history. Refusing is correct; so is repairing. Accepting the input as it is and
//! holding a history the API rejects is not: every later request of the session would
//! be refused, and the user's session is lost without an error at the moment it broke.

use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::validate_history;

pub struct HostileInput;

impl Checker for HostileInput {
    fn invariant(&self) -> Invariant {
        Invariant::HostileInput
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Hostile { what, held } = event else {
            return None;
        };
        let Ok(history) = held else {
            return Some(Ok(())); // refused
        };
        Some(validate_history(history).map_err(|e| {
            format!("the engine accepted {what} and now holds an invalid history: {e}")
        }))
    }
}
