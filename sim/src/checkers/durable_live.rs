//! `durable_live`: after every list of outputs that wrote to the log, the durable log
//! restores to the history the live engine holds.
//!
//! A record written late, written wrong or never written is invisible while the
//! process lives and loses work only when a crash lands in the window it left open.
//! Restoring a fresh engine after each write catches the write that opened the window,
//! at the step that wrote it. Mid-turn a restore recovers the open turn (a marker,
//! answers for calls in flight), so the live history must be a prefix of the restored
//! one; between turns there is nothing to recover, so the two must be equal, the
//! restored engine idle, and its restore must ask for no work. Both are compared as the
//! API reads them (`api_view`): a log that keeps two consecutive user messages joined
//! where the live engine holds them apart restores the same conversation.

use super::api_view::{appended_to, as_one, joined, same_run};
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
        let stored_alike = history.len() >= live.len()
            && (0..live.len()).all(|i| same_json(&history[i], &live[i]));
        let (restored_runs, live_runs) = (joined(history), joined(live));
        if !stored_alike && let Err(e) = same_as_read(history, live, *live_idle) {
            return Some(Err(e));
        }
        if *live_idle {
            if !idle {
                return Some(Err(
                    "the live engine is between turns, the restored one has a turn open".into(),
                ));
            }
            if restored_runs.len() != live_runs.len() {
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

/// The restored history against the live one, as the API reads them: the live one is
/// the restored one, or (mid-turn, where a restore recovers the open turn) a prefix of
/// it whose last user message the recovery may have grown.
fn same_as_read(
    history: &[turnsim_core::SharedMessage],
    live: &[turnsim_core::SharedMessage],
    live_idle: bool,
) -> Check {
    let (r, l) = (joined(history), joined(live));
    if r.len() < l.len() {
        return Err(format!(
            "the durable log restores {} messages, the live engine holds {}",
            history.len(),
            live.len()
        ));
    }
    let last = l.len().wrapping_sub(1);
    for (i, (a, b)) in r.iter().zip(&l).enumerate() {
        let (a, b) = (&history[a.clone()], &live[b.clone()]);
        if same_run(a, b) {
            continue;
        }
        let (a, b) = (as_one(a), as_one(b));
        if same_json(&a, &b) || (!live_idle && i == last && appended_to(&b, &a)) {
            continue;
        }
        return Err(format!(
            "message {} differs between the restored and the live engine {} (was: restored, now: live)",
            l[i].start,
            where_differ(&a.to_json(), &b.to_json())
        ));
    }
    Ok(())
}
