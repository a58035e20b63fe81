//! `durable_live`: after every list of outputs that wrote to the log, the durable log
//! restores to the history the live engine holds.
//!
//! A record written late, written wrong or never written is invisible while the
//! process lives and loses work only when a crash lands in the window it left open.
//! Restoring a fresh engine after each write catches the write that opened the window,
//! at the step that wrote it. Mid-turn a restore recovers the open turn (a marker,
//! answers for calls in flight), so the live history must be a prefix of the restored
//! one; between turns there is nothing to recover, so the two must be equal, the
//! restored engine idle, and its restore must ask for no work.

use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::finding::where_differ;
use turnsim_core::Output;

pub struct DurableLive;

impl Checker for DurableLive {
    fn invariant(&self) -> Invariant {
        Invariant::DurableLive
    }

    fn events(&self) -> u32 {
        use super::on;
        on::DURABLE
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Durable {
            restored,
            live_idle,
        } = event
        else {
            return None;
        };
        let (history, idle, outputs) = match restored {
            Err(e) => return Some(Err(format!("the durable log does not restore: {e}"))),
            Ok(r) => r,
        };
        let live = ctx.history;
        if history.len() < live.len() {
            return Some(Err(format!(
                "the durable log restores {} messages, the live engine holds {}",
                history.len(),
                live.len()
            )));
        }
        if let Some(i) = (0..live.len()).find(|&i| !same_json(&history[i], &live[i])) {
            return Some(Err(format!(
                "message {i} differs between the restored and the live engine {} (was: restored, now: live)",
                where_differ(&history[i].to_json(), &live[i].to_json())
            )));
        }
        if *live_idle {
            if !idle {
                return Some(Err(
                    "the live engine is between turns, the restored one has a turn open".into(),
                ));
            }
            if history.len() != live.len() {
                return Some(Err(format!(
                    "between turns the durable log restores {} messages, the live engine holds {}",
                    history.len(),
                    live.len()
                )));
            }
            if let Some(o) = outputs.iter().find(|o| {
                matches!(
                    o,
                    Output::Persist { .. } | Output::Send { .. } | Output::Dispatch { .. }
                )
            }) {
                let text: String = format!("{o:?}").chars().take(120).collect();
                return Some(Err(format!(
                    "between turns a restore still had work to do: {text}"
                )));
            }
        }
        Some(Ok(()))
    }
}
