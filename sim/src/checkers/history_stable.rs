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
//! edit of what was there, or of any message before it, is not. The turn start is
//! judged after the prompt was handled, so a prompt merged so is already in the history
//! the checker sees; what it freezes is that message as it was before the prompt, since
//! a crash before the prompt's record is durable legitimately takes the merge back. The
//! prompt itself must leave the trailing user message earlier turns left (the history
//! just before it) kept or appended to: a prompt that survived a restart and is then
//! replaced by the next one is a change.

use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::finding::where_differ;
use std::sync::Arc;
use turnsim_core::{Block, Content, Message, Role, SharedMessage};

#[derive(Default)]
pub struct HistoryStable {
    frozen: Vec<SharedMessage>,
    /// The history's length and last message at the last event before this one: at a
    /// turn start, the history before the prompt.
    last_seen: (usize, Option<SharedMessage>),
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
        let verdict = match event {
            Event::TurnStarted { baseline } => {
                let mut verdict = self.verify(ctx.history);
                let cut = (*baseline).min(ctx.history.len());
                // Refilled in place: the allocation is kept from turn to turn.
                self.frozen.clear();
                self.frozen.extend_from_slice(&ctx.history[..cut]);
                if let (len, Some(before)) = &self.last_seen
                    && *len == cut
                    && cut > 0
                {
                    let now = &self.frozen[cut - 1];
                    if appended_to(before, now) {
                        // The prompt appended to the last earlier message belongs to
                        // this turn: what is frozen is the message as earlier turns left it.
                        self.frozen[cut - 1] = Arc::clone(before);
                    } else if verdict.is_ok()
                        && before.role == Role::User
                        && now.role == Role::User
                        && !Arc::ptr_eq(before, now)
                        && !same_json(before, now)
                    {
                        // The trailing user message earlier turns left may be appended
                        // to, not rewritten (e.g. a prompt that survived a restart,
                        // replaced by the next one).
                        verdict = Err(format!(
                            "message {} of an earlier turn changed {}",
                            cut - 1,
                            where_differ(&before.to_json(), &now.to_json())
                        ));
                    }
                }
                Some(verdict)
            }
            Event::Step | Event::Restarted { .. } => Some(self.verify(ctx.history)),
            Event::Reset(_) => {
                self.frozen.clear();
                self.frozen.extend_from_slice(ctx.history);
                None
            }
            _ => None,
        };
        self.last_seen = (ctx.history.len(), ctx.history.last().cloned());
        verdict
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
    fn a_merged_prompt_taken_back_by_a_crash_is_no_change() {
        // Turnsim judges the turn start after the prompt was handled: the trailing user
        // message already holds the prompt, and a crash before its record was durable
        // restores the message as it was.
        let answered = Arc::new(Message::assistant_text("ok"));
        let before = [user(&["p1"]), answered.clone(), user(&["result"])];
        let merged = [user(&["p1"]), answered.clone(), user(&["result", "p2"])];
        let mut c = HistoryStable::default();
        assert_eq!(c.observe(&ctx(&before), &Event::Step), Some(Ok(())));
        let start = Event::TurnStarted { baseline: 3 };
        assert_eq!(c.observe(&ctx(&merged), &start), Some(Ok(())));
        let restored = [user(&["p1"]), answered.clone(), user(&["result"])];
        assert_eq!(c.observe(&ctx(&restored), &Event::Step), Some(Ok(())));
        // What was there before the prompt is still held to.
        let cut = [user(&["p1"]), answered, user(&["other"])];
        assert!(
            c.observe(&ctx(&cut), &Event::Step)
                .is_some_and(|v| v.is_err())
        );
    }

    #[test]
    fn a_merged_prompt_that_survived_a_restart_is_held_to_by_the_next_prompt() {
        // The prompt was durable: the restored history still holds it, and the next
        // prompt may append to that message but not replace it.
        let answered = Arc::new(Message::assistant_text("ok"));
        let before = [user(&["p1"]), answered.clone(), user(&["result"])];
        let merged = [user(&["p1"]), answered.clone(), user(&["result", "p2"])];
        let restored = [user(&["p1"]), answered.clone(), user(&["result", "p2"])];
        let start = Event::TurnStarted { baseline: 3 };
        let mut c = HistoryStable::default();
        assert_eq!(c.observe(&ctx(&before), &Event::Step), Some(Ok(())));
        assert_eq!(c.observe(&ctx(&merged), &start), Some(Ok(())));
        assert_eq!(c.observe(&ctx(&restored), &Event::Step), Some(Ok(())));
        let appended = [
            user(&["p1"]),
            answered.clone(),
            user(&["result", "p2", "p3"]),
        ];
        assert_eq!(c.observe(&ctx(&appended), &start), Some(Ok(())));
        let mut c = HistoryStable::default();
        c.observe(&ctx(&before), &Event::Step);
        c.observe(&ctx(&merged), &start);
        c.observe(&ctx(&restored), &Event::Step);
        let replaced = [user(&["p1"]), answered, user(&["result", "p3"])];
        let verdict = c.observe(&ctx(&replaced), &start);
        assert!(
            verdict.as_ref().is_some_and(|v| v
                .as_ref()
                .is_err_and(|e| e.starts_with("message 2 of an earlier turn changed"))),
            "{verdict:?}"
        );
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
