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

use std::sync::Arc;

use super::{Check, Checker, Ctx, Event, Invariant, Observation, excerpt};
use crate::conventions::Conventions;
use turnsim_core::{Block, SharedMessage, ToolResultContent};

pub struct NoLostObservation {
    conventions: Arc<Conventions>,
    kept: Vec<Observation>,
    /// Results saved but not yet seen in the history: judged when they are.
    due: Vec<(String, ToolResultContent)>,
}

impl NoLostObservation {
    pub fn new(conventions: Arc<Conventions>) -> NoLostObservation {
        NoLostObservation {
            conventions,
            kept: Vec::new(),
            due: Vec::new(),
        }
    }

    /// Judges every due result of blocks the history now answers: the first one
    /// whose every `tool_result` lost or altered a block is the failure.
    fn judge_due(&mut self, history: &[SharedMessage]) -> Check {
        let mut failure = None;
        self.due.retain(|(id, want)| {
            let found: Vec<&ToolResultContent> = history
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
                .collect();
            if found.is_empty() {
                return true;
            }
            if failure.is_none() && !found.iter().any(|c| kept_whole(c, want)) {
                failure = Some(match want {
                    ToolResultContent::Text(w) => format!(
                        "the saved result of {id} came back altered: the tool's output ({} bytes) is not whole in the history's tool_result ({} bytes of text): {}",
                        w.len(),
                        found[0].text().len(),
                        excerpt(&json(found[0]))
                    ),
                    ToolResultContent::Blocks(_) => format!(
                        "the saved result of {id} came back altered: the tool gave {}, the history holds {}: {}",
                        shape(want),
                        shape(found[0]),
                        excerpt(&json(found[0]))
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
        }
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
        on::OBSERVED | on::RESET | on::RESTARTED | on::LIVENESS_END
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Observed(o) => {
                self.kept.push(o.clone());
                if let Observation::ToolResult {
                    tool_use_id,
                    content,
                } = o
                {
                    self.due.push((tool_use_id.clone(), content.clone()));
                }
                if self.due.is_empty() {
                    return None;
                }
                Some(self.judge_due(ctx.history))
            }
            Event::Reset(_) => {
                self.due.clear();
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
                Some(match self.first_lost(ctx.history) {
                    None => Ok(()),
                    Some(Observation::Prompt { words }) => Err(format!(
                        "the acknowledged prompt {} is gone",
                        excerpt(words)
                    )),
                    Some(Observation::ToolResult {
                        tool_use_id,
                        content,
                    }) => Err(format!(
                        "the saved result of {tool_use_id} ({}) is gone",
                        excerpt(&json(content))
                    )),
                })
            }
            _ => None,
        }
    }
}
