//! `history_stable`: messages before a turn's baseline never change, except by an
//! explicit rewind or compaction.
//!
//! Those messages are what the user saw and what every cached prefix holds; a runtime
//! that edits them (a "fix-up" of an old turn, a recovery that rewrites instead of
//! appending) changes the past under the user and the cache.
//!
//! Judged as the API reads a request: consecutive user messages are one message (the
//! Messages API joins them), and a user message's string content is one text block.
//! So `[user: p1] [user: p2]` and `[user: p1 p2]` are the same history, and an engine
//! may keep either (pydantic-ai merges adjacent requests when a run starts). The last
//! message earlier turns left may grow when it is a user message the model never
//! answered (the turn failed, crashed, or was rewound to it): the next prompt joins it.
//! An edit of what was there, or of any message before it, is a change.
//!
//! What is frozen at a turn start is the history just before the prompt, not after it:
//! the prompt step is judged like any other (it may only append, or join the last user
//! message), and a crash before the prompt's record is durable legitimately takes a
//! joined prompt back, which must not read as an edit of the message it joined.

use super::api_view::{appended_to, as_one, joined, same_run};
use super::same_json::same_json;
use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::finding::where_differ;
use std::sync::Arc;
use turnsim_core::SharedMessage;

#[derive(Default)]
pub struct HistoryStable {
    frozen: Vec<SharedMessage>,
}

impl HistoryStable {
    /// Compares by pointer first: the verdict at almost every step. Otherwise compares
    /// message by message as the API reads them; a message equal by bytes but a
    /// different allocation (after a restart every message is new) is adopted, so the
    /// next step compares by pointer again.
    fn verify(&mut self, history: &[SharedMessage]) -> Check {
        let n = self.frozen.len();
        if history.len() >= n && same_allocations(&self.frozen, &history[..n]) {
            return Ok(());
        }
        let (was, now) = (joined(&self.frozen), joined(history));
        if now.len() < was.len() {
            return Err(format!(
                "the history shrank to {} messages below the {} of earlier turns",
                history.len(),
                n
            ));
        }
        let last = was.len().wrapping_sub(1);
        for (i, (w, h)) in was.iter().zip(&now).enumerate() {
            let (w, h) = (&self.frozen[w.clone()], &history[h.clone()]);
            if same_run(w, h) {
                continue;
            }
            let (a, b) = (as_one(w), as_one(h));
            if same_json(&a, &b) || (i == last && appended_to(&a, &b)) {
                continue;
            }
            return Err(format!(
                "message {} of an earlier turn changed {}",
                now[i].start,
                where_differ(&a.to_json(), &b.to_json())
            ));
        }
        // Adopted up to the first message that differs as stored (a joined or grown
        // one), which is compared again at the next step.
        for (a, b) in self.frozen.iter_mut().zip(history) {
            if !Arc::ptr_eq(a, b) {
                if !same_json(a, b) {
                    break;
                }
                *a = Arc::clone(b);
            }
        }
        Ok(())
    }
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
            Event::TurnStarted { before, .. } => {
                // What earlier turns froze, then the prompt step against all they left.
                let older = self.verify(ctx.history);
                // Refilled in place: the allocation is kept from turn to turn.
                self.frozen.clear();
                self.frozen.extend_from_slice(before);
                Some(older.and_then(|()| self.verify(ctx.history)))
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
    use turnsim_core::{Block, Message};

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
            c.observe(
                &ctx(earlier),
                &Event::TurnStarted {
                    baseline,
                    before: earlier
                }
            ),
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

    /// The verdicts of a prompt step from `before` to `after`, then of `later` steps.
    fn prompt_then(
        before: &[SharedMessage],
        after: &[SharedMessage],
        later: &[&[SharedMessage]],
    ) -> Vec<Option<Check>> {
        let mut c = HistoryStable::default();
        let mut out = vec![c.observe(
            &ctx(after),
            &Event::TurnStarted {
                baseline: before.len(),
                before,
            },
        )];
        out.extend(later.iter().map(|h| c.observe(&ctx(h), &Event::Step)));
        out
    }

    #[test]
    fn a_prompt_joined_to_the_last_message_then_taken_back_by_a_crash_is_no_change() {
        let answered = Arc::new(Message::assistant_text("calls"));
        let results = user(&["result"]);
        let before = [user(&["p1"]), answered.clone(), results.clone()];
        let joined = [user(&["p1"]), answered.clone(), user(&["result", "p3"])];
        // The crash came before the prompt's record was durable.
        let restored = [user(&["p1"]), answered, user(&["result"])];
        assert_eq!(
            prompt_then(&before, &joined, &[&restored]),
            vec![Some(Ok(())), Some(Ok(()))]
        );
    }

    #[test]
    fn consecutive_user_messages_kept_joined_or_apart_are_the_same_history() {
        let a1 = Arc::new(Message::assistant_text("a1"));
        let a2 = Arc::new(Message::assistant_text("a2"));
        let before = [
            user(&["p1"]),
            a1.clone(),
            Arc::new(Message::user_text("p2")),
            user(&["p4"]),
            a2.clone(),
            user(&["result"]),
        ];
        // As pydantic-ai keeps it once the next run starts: the two requests joined,
        // the closing results appended, the prompt its own message.
        let after = [
            user(&["p1"]),
            a1,
            user(&["p2", "p4"]),
            a2,
            user(&["result", "interrupted"]),
            user(&["p5"]),
        ];
        assert_eq!(
            prompt_then(&before, &after, &[&after]),
            vec![Some(Ok(())), Some(Ok(()))]
        );
    }

    #[test]
    fn a_prompt_that_replaces_the_message_earlier_turns_left_is_a_change() {
        let verdicts = prompt_then(&[user(&["p1"])], &[user(&["p2"])], &[]);
        assert_eq!(
            verdicts,
            vec![Some(Err("message 0 of an earlier turn changed at byte 50: was …ype\":\"text\",\"text\":\"p1\"}]}, now …ype\":\"text\",\"text\":\"p2\"}]}".into()))]
        );
        let a = Arc::new(Message::assistant_text("a"));
        let rewritten = prompt_then(
            &[user(&["p1"]), a],
            &[
                user(&["p1"]),
                Arc::new(Message::assistant_text("b")),
                user(&["p2"]),
            ],
            &[],
        );
        assert!(
            rewritten[0].as_ref().is_some_and(|v| v
                .as_ref()
                .is_err_and(|e| e.starts_with("message 1 of an earlier turn changed"))),
            "{rewritten:?}"
        );
    }

    #[test]
    fn a_shrunk_history_is_a_change_even_when_its_user_messages_are_joined() {
        let verdicts = prompt_then(
            &[
                user(&["p1"]),
                Arc::new(Message::assistant_text("a")),
                user(&["r"]),
            ],
            &[user(&["p1", "r"])],
            &[],
        );
        assert_eq!(
            verdicts,
            vec![Some(Err(
                "the history shrank to 1 messages below the 3 of earlier turns".into()
            ))]
        );
    }
}
