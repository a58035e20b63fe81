//! `at_most_once`: no tool-use id is executed twice, across any number of crashes.
//!
//! A tool's effects (a file written, a payment sent) happen when it starts; a runtime
//! that re-runs a pending call after a restart repeats them.

use super::{Check, Checker, Ctx, Event, Invariant};

pub struct AtMostOnce;

impl Checker for AtMostOnce {
    fn invariant(&self) -> Invariant {
        Invariant::AtMostOnce
    }

    fn events(&self) -> u32 {
        use super::on;
        on::DISPATCHED
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Dispatched { op, call, starts } = event else {
            return None;
        };
        Some(if *starts > 1 {
            Err(format!(
                "tool call {} ({}) started {starts} times; this start by {op}",
                call.id, call.name
            ))
        } else {
            Ok(())
        })
    }
}
