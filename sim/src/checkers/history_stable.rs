//! `history_stable`: messages before a turn's baseline never change, except by an
//! explicit rewind or compaction.
//!
//! Those messages are what the user saw and what every cached prefix holds; a runtime
//! that edits them (a "fix-up" of an old turn, a recovery that rewrites instead of
//! appending) changes the past under the user and the cache.
//!
//! One change is no change: when an earlier turn ended on a user message the model
//! never answered (the turn failed, crashed, or was rewound to it), the next prompt may
//! be appended to that message instead of following it. The Messages API joins
//! consecutive user turns into one, so `[user: p1] [user: p2]` and `[user: p1 p2]` are
//! the same request to the model and the same bytes up to the end of `p1`; engines of
//! other designs (pydantic-ai merges adjacent requests before every call) do exactly
//! this. Only appending to the last earlier message, a user message, is excused; an
//! edit of what was there, or of any message before it, is not.

use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::finding::where_differ;
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, Role, SharedMessage};

#[derive(Default)]
pub struct HistoryStable {
    frozen: Vec<SharedMessage>,
}

impl HistoryStable {
    /// Compares by pointer first; a message equal by bytes but a different allocation
    /// (after a restart every message is new) is adopted, so the next step compares by
    /// pointer again.
    fn verify(&mut self, history: &[SharedMessage]) -> Check {
        if history.len() < self.frozen.len() {
            return Err(format!(
                "the history shrank to {} messages below the {} of earlier turns",
                history.len(),
                self.frozen.len()
            ));
        }
        if same_allocations(&self.frozen, &history[..self.frozen.len()]) {
            return Ok(());
        }
        let last = self.frozen.len().wrapping_sub(1);
        for (i, (a, b)) in self.frozen.iter_mut().zip(history).enumerate() {
            if Arc::ptr_eq(a, b) {
                continue;
            }
            if i == last && appended_to(a, b) {
                // Kept as it was: the next step compares against the original again.
                continue;
            }
            if !same_json(a, b) {
                return Err(format!(
                    "message {i} of an earlier turn changed {}",
                    where_differ(&a.to_json(), &b.to_json())
                ));
            }
            *a = Arc::clone(b);
        }
        Ok(())
    }
}

/// Whether `now` is the user message `was` with content appended: `was`'s blocks
/// (its string content counting as one text block, as the API reads it) are the first
/// blocks of `now`, byte for byte, and `now` has more.
fn appended_to(was: &SharedMessage, now: &SharedMessage) -> bool {
    if was.role != Role::User || now.role != Role::User {
        return false;
    }
    let Content::Blocks(after) = &now.content else {
        return false;
    };
    let before: Vec<Block> = match &was.content {
        Content::Text(t) => vec![Block::Text { text: t.clone() }],
        Content::Blocks(b) => b.clone(),
    };
    after.len() > before.len()
        && same_json(
            &Arc::new(Message::user_blocks(before.clone())),
            &Arc::new(Message::user_blocks(after[..before.len()].to_vec())),
        )
}

/// Whether `a[i]` and `b[i]` are the very same allocation for every `i`: the verdict
/// at almost every step. Without an early exit per message, so the compiler compares
/// several addresses at once; a mismatch is rare and then the caller looks closer.
fn same_allocations(a: &[SharedMessage], b: &[SharedMessage]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .fold(true, |same, (x, y)| same & Arc::ptr_eq(x, y))
}

impl Checker for HistoryStable {
    fn invariant(&self) -> Invariant {
        Invariant::HistoryStable
    }

    fn events(&self) -> u32 {
        use super::on;
        on::TURN_STARTED | on::STEP | on::RESTARTED | on::RESET
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::TurnStarted { baseline } => {
                let verdict = self.verify(ctx.history);
                let cut = (*baseline).min(ctx.history.len());
                // Refilled in place: the allocation is kept from turn to turn.
                self.frozen.clear();
                self.frozen.extend_from_slice(&ctx.history[..cut]);
                Some(verdict)
            }
            Event::Step | Event::Restarted { .. } => Some(self.verify(ctx.history)),
            Event::Reset(_) => {
                self.frozen.clear();
                self.frozen.extend_from_slice(ctx.history);
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(history: &[SharedMessage]) -> Ctx<'_> {
        Ctx {
            step: 1,
            history,
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        }
    }

    fn user(blocks: &[&str]) -> SharedMessage {
        Arc::new(Message::user_blocks(
            blocks.iter().map(|t| Block::text(*t)).collect(),
        ))
    }

    /// The verdict on `now` after a turn that froze `earlier`.
    fn judge(earlier: &[SharedMessage], now: &[SharedMessage]) -> Option<Check> {
        let mut c = HistoryStable::default();
        let baseline = earlier.len();
        assert_eq!(
            c.observe(&ctx(earlier), &Event::TurnStarted { baseline }),
            Some(Ok(()))
        );
        c.observe(&ctx(now), &Event::Step)
    }

    #[test]
    fn a_prompt_appended_to_an_unanswered_user_message_is_no_change() {
        let p1 = Arc::new(Message::user_text("p1"));
        let merged = user(&["p1", "p2"]);
        assert_eq!(judge(&[p1], &[merged]), Some(Ok(())));
        let blocks = user(&["p1"]);
        assert_eq!(judge(&[blocks], &[user(&["p1", "p2", "p3"])]), Some(Ok(())));
    }

    #[test]
    fn an_edit_of_the_unanswered_message_or_of_one_before_it_is_a_change() {
        let edited = judge(&[user(&["p1"])], &[user(&["p1!", "p2"])]);
        assert_eq!(
            edited,
            Some(Err("message 0 of an earlier turn changed at byte 51: was …pe\":\"text\",\"text\":\"p1\"}]}, now …pe\":\"text\",\"text\":\"p1!\"},{\"type\":\"text\",\"text\":\"p2\"}]}".into()))
        );
        let answered = Arc::new(Message::assistant_text("ok"));
        let earlier = [user(&["p1"]), answered.clone(), user(&["p2"])];
        let verdict = judge(&earlier, &[user(&["p1", "x"]), answered, user(&["p2"])]);
        assert!(
            verdict.as_ref().is_some_and(|v| v
                .as_ref()
                .is_err_and(|e| e.starts_with("message 0 of an earlier turn changed"))),
            "{verdict:?}"
        );
        // Not the last earlier message, so not excused.
        let assistant_tail = [user(&["p1"]), Arc::new(Message::assistant_text("a"))];
        let verdict = judge(
            &assistant_tail,
            &[user(&["p1"]), Arc::new(Message::assistant_text("a b"))],
        );
        assert!(verdict.is_some_and(|v| v.is_err()));
    }
}
