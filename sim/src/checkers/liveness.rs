//! `liveness`: once faults stop, every open turn ends within the step bound and the
//! next prompt gets a valid request and an end.
//!
//! A turn that never ends is a hung agent: the user waits forever, and a harness that
//! hangs with it finds nothing. A hang is a failure here, reported with its seed.

use super::{Check, Checker, Ctx, Event, Invariant};

pub struct Liveness;

impl Checker for Liveness {
    fn invariant(&self) -> Invariant {
        Invariant::Liveness
    }

    fn events(&self) -> u32 {
        use super::on;
        on::LIVENESS_END
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::LivenessEnd { turn_open, detail } = event else {
            return None;
        };
        Some(if *turn_open {
            Err(detail.clone())
        } else {
            Ok(())
        })
    }
}
