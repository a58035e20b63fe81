//! `stale_noop`: a stale or duplicate delivery, or a refused input, changes nothing.
//!
//! Late completions of cancelled operations are routine in a real runtime (a stream
//! that was already in the socket buffer, a tool that finished as it was killed); if
//! one is applied, it writes into a turn that has moved on.
//!
//! Judged on two kinds of evidence, and either failing is a finding: the engine's
//! own state bytes (`Engine::state_bytes`, which may show state the interface does
//! not), and what the world read through the interface itself before and after
//! ([`Held`]: the history, message by message, the pending operation, the idle
//! flag). The second does not rest on the engine's report: a state report broken to
//! a constant (mutant 10 of docs/mutants.md) hid any change while it was the only
//! evidence.

use super::{Check, Checker, Ctx, Event, Held, Invariant};
use turnsim_core::Output;

/// What of the held state differs, by the judge's own comparison: each message by
/// identity or, failing that, by value; the pending operation and idle flag by value.
fn changed(before: &Held, after: &Held) -> Option<String> {
    let (b, a) = (&before.history, &after.history);
    if b.len() != a.len() {
        return Some(format!(
            "the history went from {} to {} messages",
            b.len(),
            a.len()
        ));
    }
    if let Some(i) = b
        .iter()
        .zip(a)
        .position(|(x, y)| !std::sync::Arc::ptr_eq(x, y) && x != y)
    {
        return Some(format!("history message {i} changed"));
    }
    if before.pending != after.pending {
        return Some(format!(
            "the pending operation went from {:?} to {:?}",
            before.pending, after.pending
        ));
    }
    if before.idle != after.idle {
        return Some(format!(
            "the engine went from {} to {}",
            idle_word(before.idle),
            idle_word(after.idle)
        ));
    }
    None
}

fn idle_word(idle: bool) -> &'static str {
    if idle { "idle" } else { "busy" }
}

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
            held,
        } = event
        else {
            return None;
        };
        Some(if !outputs.is_empty() {
            let kinds: Vec<&str> = outputs.iter().map(kind).collect();
            Err(format!("{what} produced outputs: {}", kinds.join(", ")))
        } else if let Some(change) = held.and_then(|(b, a)| changed(b, a)) {
            Err(format!("{what} changed what the engine holds: {change}"))
        } else if before != after {
            Err(format!("{what} changed the engine state"))
        } else {
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use turnsim_core::{Message, PendingOperation, SharedMessage};

    fn held(history: &[SharedMessage], idle: bool) -> Held {
        Held {
            history: history.to_vec(),
            pending: PendingOperation::None,
            idle,
        }
    }

    fn judge(before: &Held, after: &Held) -> Option<Check> {
        let ctx = Ctx::empty(1);
        // Equal state bytes: the engine reports no change.
        StaleNoop.observe(
            &ctx,
            &Event::Noop {
                what: "a stale tool result",
                before: &[0],
                after: &[0],
                outputs: &[],
                held: Some((before, after)),
            },
        )
    }

    #[test]
    fn a_stale_delivery_that_drops_a_message_fails_whatever_the_engine_reports() {
        let h: Vec<SharedMessage> = vec![
            Arc::new(Message::user_text("hi")),
            Arc::new(Message::assistant_text("ok")),
        ];
        assert_eq!(
            judge(&held(&h, true), &held(&h[..1], true)),
            Some(Err(
                "a stale tool result changed what the engine holds: the history went from 2 to 1 messages".into()
            ))
        );
    }

    #[test]
    fn a_stale_delivery_that_edits_a_message_or_the_idle_flag_fails() {
        let h: Vec<SharedMessage> = vec![Arc::new(Message::user_text("hi"))];
        let edited: Vec<SharedMessage> = vec![Arc::new(Message::user_text("hi!"))];
        assert_eq!(
            judge(&held(&h, true), &held(&edited, true)),
            Some(Err(
                "a stale tool result changed what the engine holds: history message 0 changed"
                    .into()
            ))
        );
        assert_eq!(
            judge(&held(&h, true), &held(&h, false)),
            Some(Err(
                "a stale tool result changed what the engine holds: the engine went from idle to busy".into()
            ))
        );
    }

    #[test]
    fn an_equal_copy_of_the_history_is_no_change() {
        let h: Vec<SharedMessage> = vec![Arc::new(Message::user_text("hi"))];
        let copy: Vec<SharedMessage> = vec![Arc::new(Message::user_text("hi"))];
        assert_eq!(judge(&held(&h, true), &held(&copy, true)), Some(Ok(())));
    }
}
