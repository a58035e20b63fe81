//! `recovery_idempotent`: restoring from the log that recovery left changes nothing
//! more (docs/spec.md §7).
//!
//! A runtime can crash again during or right after recovery; if recovering twice
//! differs from recovering once, each crash adds another marker, note or result.

use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant};
use turnsim_core::Output;

pub struct RecoveryIdempotent;

impl Checker for RecoveryIdempotent {
    fn invariant(&self) -> Invariant {
        Invariant::RecoveryIdempotent
    }

    fn events(&self) -> u32 {
        use super::on;
        on::RESTARTED
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Restarted { again } = event else {
            return None;
        };
        Some(match again {
            Err(e) => Err(format!(
                "a second restore from the recovered log failed: {e}"
            )),
            Ok((history, outputs)) => {
                if let Some(o) = outputs.iter().find(|o| {
                    matches!(
                        o,
                        Output::Persist { .. }
                            | Output::TruncateLog { .. }
                            | Output::Send { .. }
                            | Output::Dispatch { .. }
                    )
                }) {
                    Err(format!("a second restore still had work to do: {o:?}")
                        .chars()
                        .take(200)
                        .collect())
                } else if history.len() != ctx.history.len()
                    || history
                        .iter()
                        .zip(ctx.history)
                        .any(|(a, b)| !same_json(a, b))
                {
                    Err(format!(
                        "a second restore gave a different history ({} messages, first restore {})",
                        history.len(),
                        ctx.history.len()
                    ))
                } else {
                    Ok(())
                }
            }
        })
    }
}
