//! `twin_agrees`: after a delivery that had to change nothing, the engine behaves
//! exactly as a twin that never received it.
//!
//! `stale_noop` trusts the engine's own `state_bytes()`; an engine that reports
//! constant bytes, or leaves out the field a stale delivery touched, blinds it. This
//! judges from outside: the world rebuilds a twin from the same start and the same
//! inputs minus the stale, duplicate or refused ones, then hands both the same next
//! inputs; their outputs (and refusals) must serialize to the same bytes.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use turnsim_core::Output;

pub struct TwinAgrees;

fn show(r: &Result<Vec<Output>, String>) -> Vec<String> {
    match r {
        Ok(outputs) => outputs
            .iter()
            .map(|o| serde_json::to_string(o).unwrap_or_else(|e| format!("unserializable: {e}")))
            .collect(),
        Err(refusal) => vec![format!("refused: {refusal}")],
    }
}

impl Checker for TwinAgrees {
    fn invariant(&self) -> Invariant {
        Invariant::TwinAgrees
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TWIN
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Twin { after, live, twin } = event else {
            return None;
        };
        if live == twin {
            return Some(Ok(()));
        }
        let (l, t) = (show(live), show(twin));
        if l == t {
            return Some(Ok(()));
        }
        let i = l.iter().zip(&t).take_while(|(a, b)| a == b).count();
        let (a, b) = (
            l.get(i).map_or("(nothing)", String::as_str),
            t.get(i).map_or("(nothing)", String::as_str),
        );
        // Show both from a little before the first byte that differs.
        let from = a
            .char_indices()
            .zip(b.chars())
            .find(|((_, x), y)| x != y)
            .map_or(0, |((k, _), _)| k);
        let mut from = from.saturating_sub(20);
        while !a.is_char_boundary(from) {
            from -= 1;
        }
        let tail = |s: &str| excerpt(s.get(from..).unwrap_or(s));
        Some(Err(format!(
            "after {after}, output {i} differs from a twin that never saw it: …{} vs twin …{}",
            tail(a),
            tail(b)
        )))
    }
}
