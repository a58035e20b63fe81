//! `no_lost_observation` (generic): the user's prompt and every tool result the
//! engine saved survive failure and restart.
//!
//! A prompt the runtime acknowledged and then lost is a user's instruction silently
//! dropped; a lost result makes the model redo work whose effects already happened.
//! Where a prompt sits in a message is the engine's convention, so finding it asks
//! the profile ([`Conventions::holds_prompt`]); with none, the words must be the
//! whole of some text of a user message, which any wrapping that keeps them keeps. A
//! tool's output likewise: its whole text inside the result answering its call.
//!
//! A tool that answered with blocks (text, an image, a document) is owed each of its
//! blocks, in order and equal (the base64 of an image compared as the string it is),
//! inside the result's own array: blocks joined to one string, an image dropped, the
//! array stringified into a text or the bytes re-encoded are another observation than
//! the tool made.
//!
//! Every saved result (text or blocks) is also judged as soon as the history first
//! holds a `tool_result` for its call, not only at a restart and at the run's end:
//! an engine that truncates or alters a result does so when it writes it, so the
//! failure is shown where it happens (and a shrunk run needs no restart or liveness
//! turn after it).
//!
//! An engine whose profile says it logs each tool result as it arrives
//! (`logs_each_result`, the reference's: docs/spec.md §7, "so a crash before the
//! batch completes does not lose it") is also owed the saving itself: a live result of
//! its open batch that it accepted with no `Persist` and then sent to the model was
//! taken without being saved, and a crash before its batch completed would have lost
//! it (mutant 57 of docs/mutants.md: the results of all but the last call of a
//! parallel batch were never written, and a crash mid-batch answered finished calls
//! with the interrupted stand-in). An engine of another design may save a batch's
//! results when the batch ends, so without the profile's word this is not judged.

use std::sync::Arc;

use super::{Check, Checker, Ctx, Event, Invariant, Observation, excerpt};
use crate::conventions::Conventions;
use turnsim_core::{Block, SharedMessage, ToolResultContent};

pub struct NoLostObservation {
    conventions: Arc<Conventions>,
    kept: Vec<Observation>,
    /// Results saved but not yet seen in the history, by their place in `kept` (a
    /// result is owned once: outputs run to kilobytes): judged when they are.
    due: Vec<usize>,
    /// The profile says each result is logged as it arrives.
    logs_each_result: bool,
    /// Results taken with no `Persist` (only when `logs_each_result`), each with the
    /// step it came at: a request that sends one is the finding.
    taken: Vec<(String, std::sync::Arc<ToolResultContent>, u64)>,
}

impl NoLostObservation {
    pub fn new(conventions: Arc<Conventions>) -> NoLostObservation {
        NoLostObservation {
            logs_each_result: conventions.logs_each_result == Some(true),
            conventions,
            kept: Vec::new(),
            due: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// Judges every due result of blocks the history now answers: the first one
    /// whose every `tool_result` lost or altered a block is the failure.
    fn judge_due(&mut self, history: &[SharedMessage]) -> Check {
        let mut failure = None;
        let kept = &self.kept;
        self.due.retain(|&k| {
            let Some(Observation::ToolResult {
                tool_use_id: id,
                content: want,
            }) = kept.get(k)
            else {
                return false;
            };
            let mut found = history
                .iter()
                .flat_map(|m| m.blocks())
                .filter_map(|b| match b {
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } if tool_use_id == id => Some(content),
                    _ => None,
                })
                .peekable();
            let Some(&first) = found.peek() else {
                return true;
            };
            if failure.is_none() && !found.any(|c| kept_whole(c, want)) {
                failure = Some(match &**want {
                    ToolResultContent::Text(w) => format!(
                        "the saved result of {id} came back altered: the tool's output ({} bytes) is not whole in the history's tool_result ({} bytes of text): {}",
                        w.len(),
                        first.text().len(),
                        excerpt(&json(first))
                    ),
                    ToolResultContent::Blocks(_) => format!(
                        "the saved result of {id} came back altered: the tool gave {}, the history holds {}: {}",
                        shape(want),
                        shape(first),
                        excerpt(&json(first))
                    ),
                });
            }
            false
        });
        failure.map_or(Ok(()), Err)
    }

    fn present(&self, history: &[SharedMessage], results: &Results<'_>, o: &Observation) -> bool {
        match o {
            Observation::Prompt { words } => self.conventions.holds_prompt(history, words),
            Observation::ToolResult {
                tool_use_id,
                content,
            } => results.holds(tool_use_id, content),
            Observation::Taken { .. } => true,
        }
    }

    /// The first result taken without a `Persist` that `messages` send to the model.
    fn sent_unsaved(&self, messages: &[SharedMessage]) -> Option<String> {
        self.taken.iter().find_map(|(id, content, step)| {
            let sent = messages.iter().flat_map(|m| m.blocks()).any(|b| {
                matches!(b, Block::ToolResult { tool_use_id, content: c, .. }
                    if tool_use_id == id && kept_whole(c, content))
            });
            sent.then(|| {
                format!(
                    "the result of {id} was taken at step {step} with no Persist (the profile logs each result as it arrives), and this request sends it to the model: a crash before its batch completed would have lost it"
                )
            })
        })
    }

    /// The first kept observation `history` no longer holds.
    fn first_lost(&self, history: &[SharedMessage]) -> Option<&Observation> {
        let results = Results::of(history, &self.kept);
        self.kept
            .iter()
            .find(|o| !self.present(history, &results, o))
    }
}

/// The `tool_result` blocks of a history by id, gathered once per check: looking each
/// saved result up in them replaces a walk of the whole history per result.
struct Results<'h> {
    by_id: Vec<(&'h str, &'h ToolResultContent)>,
}

impl<'h> Results<'h> {
    /// Gathered only when some kept observation is a tool result.
    fn of(history: &'h [SharedMessage], kept: &[Observation]) -> Results<'h> {
        let mut by_id = Vec::new();
        if kept
            .iter()
            .any(|o| matches!(o, Observation::ToolResult { .. }))
        {
            for m in history {
                for b in m.blocks() {
                    if let Block::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } = b
                    {
                        by_id.push((tool_use_id.as_str(), content));
                    }
                }
            }
            by_id.sort_unstable_by_key(|(id, _)| *id);
        }
        Results { by_id }
    }

    /// Whether some `tool_result` for `id` keeps `content` whole.
    fn holds(&self, id: &str, content: &ToolResultContent) -> bool {
        let from = self.by_id.partition_point(|(i, _)| *i < id);
        self.by_id[from..]
            .iter()
            .take_while(|(i, _)| *i == id)
            .any(|(_, c)| kept_whole(c, content))
    }
}

/// Whether the result `c` in the history keeps what the tool gave: a string's whole
/// text, or each block of an array, in order and equal, inside an array.
fn kept_whole(c: &ToolResultContent, want: &ToolResultContent) -> bool {
    match (want, c) {
        (ToolResultContent::Text(want), _) => text_is(c, want),
        (ToolResultContent::Blocks(want), ToolResultContent::Blocks(got)) => {
            let mut got = got.iter();
            want.iter().all(|w| got.any(|g| g == w))
        }
        (ToolResultContent::Blocks(_), ToolResultContent::Text(_)) => false,
    }
}

/// `a string` or `blocks [text, image]`: what a reader of the failure must compare.
fn shape(c: &ToolResultContent) -> String {
    match c {
        ToolResultContent::Text(_) => "a string".into(),
        ToolResultContent::Blocks(b) => {
            let kinds: Vec<&str> = b.iter().map(Block::kind).collect();
            format!("blocks [{}]", kinds.join(", "))
        }
    }
}

fn json(c: &ToolResultContent) -> String {
    match c {
        ToolResultContent::Text(s) => s.clone(),
        blocks => serde_json::to_string(blocks).unwrap_or_default(),
    }
}

/// Whether the result's text (its text blocks joined) holds the tool's whole output.
/// Wrapping is a design, as for prompts: an engine that renders a failed tool's output
/// as `Error: <output>` (the Vercel AI SDK does) keeps every word of it.
fn text_is(c: &ToolResultContent, want: &str) -> bool {
    match c {
        ToolResultContent::Text(s) => s.contains(want),
        ToolResultContent::Blocks(_) => c.text().contains(want),
    }
}

impl Checker for NoLostObservation {
    fn invariant(&self) -> Invariant {
        Invariant::NoLostObservation
    }

    fn events(&self) -> u32 {
        use super::on;
        on::OBSERVED | on::RESET | on::RESTARTED | on::LIVENESS_END | on::REQUEST
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Observed(Observation::Taken {
                tool_use_id,
                content,
            }) => {
                if self.logs_each_result {
                    self.taken
                        .push((tool_use_id.clone(), content.clone(), ctx.step));
                }
                None
            }
            Event::Request { request, .. } if !self.taken.is_empty() => {
                let found = self.sent_unsaved(&request.messages);
                // Judged once: sent or not, the next request starts a new batch.
                self.taken.clear();
                Some(found.map_or(Ok(()), Err))
            }
            Event::Observed(o) => {
                if matches!(o, Observation::ToolResult { .. }) {
                    self.due.push(self.kept.len());
                }
                self.kept.push(o.clone());
                if self.due.is_empty() {
                    return None;
                }
                Some(self.judge_due(ctx.history))
            }
            Event::Reset(_) => {
                self.due.clear();
                self.taken.clear();
                // A rewind or compaction drops observations on purpose.
                let kept = std::mem::take(&mut self.kept);
                let results = Results::of(ctx.history, &kept);
                self.kept = kept
                    .into_iter()
                    .filter(|o| self.present(ctx.history, &results, o))
                    .collect();
                None
            }
            Event::Restarted { .. } | Event::LivenessEnd { .. } => {
                // A restored engine knows only its log: what it took unsaved is gone.
                self.taken.clear();
                Some(match self.first_lost(ctx.history) {
                    None => Ok(()),
                    Some(Observation::Prompt { words }) => Err(format!(
                        "the acknowledged prompt {} is gone",
                        excerpt(words)
                    )),
                    Some(
                        Observation::ToolResult {
                            tool_use_id,
                            content,
                        }
                        | Observation::Taken {
                            tool_use_id,
                            content,
                        },
                    ) => Err(format!(
                        "the saved result of {tool_use_id} ({}) is gone",
                        excerpt(&json(content))
                    )),
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::{CacheHints, Message, OperationId, Request};

    fn ctx() -> Ctx<'static> {
        Ctx {
            step: 9,
            history: &[],
            fixed_texts: &[],
            prompts: &[],
            host_texts: &[],
        }
    }

    fn request(result: &str) -> Request {
        Request {
            system: String::new(),
            tools: Vec::new().into(),
            thinking: None,
            messages: vec![Arc::new(Message::user_blocks(vec![Block::tool_result(
                "toolu_1", result, false,
            )]))],
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: Vec::new(),
            },
        }
    }

    /// Takes `toolu_1`'s result "out" with no persist, then sends `sent`.
    fn taken_then_sent(c: &mut NoLostObservation, sent: &str) -> Option<Check> {
        let taken = Event::Observed(Observation::Taken {
            tool_use_id: "toolu_1".into(),
            content: Arc::new(ToolResultContent::Text("out".into())),
        });
        assert_eq!(c.observe(&ctx(), &taken), None);
        let r = request(sent);
        c.observe(
            &ctx(),
            &Event::Request {
                op: OperationId(3),
                request: &r,
                seen: 0,
                body: None,
            },
        )
    }

    #[test]
    fn a_result_taken_unsaved_then_sent_fails_a_profile_that_logs_each_result() {
        let mut c = NoLostObservation::new(Arc::new(Conventions::reference()));
        assert_eq!(
            taken_then_sent(&mut c, "out"),
            Some(Err("the result of toolu_1 was taken at step 9 with no Persist (the profile logs each result as it arrives), and this request sends it to the model: a crash before its batch completed would have lost it".into()))
        );
    }

    #[test]
    fn a_result_taken_unsaved_and_not_sent_passes_and_is_judged_once() {
        let mut c = NoLostObservation::new(Arc::new(Conventions::reference()));
        assert_eq!(taken_then_sent(&mut c, "other"), Some(Ok(())));
        assert!(c.taken.is_empty());
    }

    #[test]
    fn an_engine_that_saves_its_batch_at_the_end_is_not_judged_without_the_profiles_word() {
        let mut c = NoLostObservation::new(Arc::new(Conventions::generic()));
        assert_eq!(taken_then_sent(&mut c, "out"), None);
    }
}
