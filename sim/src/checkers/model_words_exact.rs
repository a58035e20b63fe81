//! `model_words_exact`: what an engine sends back as the model's own words is what
//! the model said, byte for byte, or is absent (issue 25, part 3).
//!
//! A request's assistant messages claim to be the model's output. A text altered on
//! the way back (trimmed, scrubbed, re-encoded, a word dropped) makes the model read a
//! history it never wrote, and the prefix the provider cached for it no longer
//! matches; a tool call replayed with input the model never finished, or with input
//! rebuilt from a cut stream, tells the model it asked for something it did not, and
//! a dispatched one runs it. The rule needs no wording, so it is generic: it compares
//! against the provider's own record of what it streamed live to this engine.
//!
//! What counts as the model's words: an assistant text block that carries the world's
//! model mark (text without it is the engine's own), and every `tool_use` block and
//! every dispatched call. What it may equal:
//! - a text: a text block the provider completed (`block_stop` streamed), or all the
//!   completed text blocks of one reply joined (an engine may keep one text block per
//!   reply); of a reply whose stream was cut, any prefix of one of its text blocks or
//!   of its texts joined (the spec's kept draft of a cancel or a crash, which may have
//!   lost its tail to a torn write);
//! - a call: the name and the input of a `tool_use` block the provider completed, the
//!   input being the whole streamed JSON parsed. Ids are not compared: an engine may
//!   rename a provider's repeated id (`at_most_once` judges ids).
//!
//! Cost: each completed block is filed once, when its `block_stop` streams (a text
//! in a set, a call's input parsed once), and a whole reply's joined text when its
//! `message_stop` does; only replies still open or cut are kept block by block. A
//! request then costs a lookup per assistant block it adds, not a walk of the run.
//!
//! Blocks that came from elsewhere are set aside: the host's compaction summaries
//! (`Ctx::host_texts`) and whatever an accepted outside history carried
//! (`Event::Hostile`). Before the provider has streamed anything in the run there is
//! no record to compare with, and nothing is judged.

use super::{Check, Checker, Ctx, Event, Invariant, excerpt};
use crate::judge::finding::where_differ;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::{Block, OperationId, Role};

#[derive(Default)]
pub struct ModelWordsExact {
    mark: &'static str,
    /// Texts of completed blocks, and the joined texts of whole replies.
    texts: BTreeSet<String>,
    /// Completed calls: name, then each input it was called with.
    calls: BTreeMap<String, Vec<Value>>,
    /// Replies not (yet) whole, block by block: the open one and every cut one.
    open: BTreeMap<OperationId, Vec<(usize, Said)>>,
    /// Whether the provider streamed anything in this run.
    streamed_any: bool,
    /// Texts and calls an accepted outside history brought in. Each hostile input
    /// hands the whole history it left, so these are kept without repeats.
    foreign_texts: BTreeSet<String>,
    foreign_calls: Vec<(String, Value)>,
}

struct Said {
    kind: Kind,
    done: bool,
}

enum Kind {
    Text(String),
    Call {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

impl ModelWordsExact {
    pub fn new(mark: &'static str) -> ModelWordsExact {
        ModelWordsExact {
            mark,
            ..ModelWordsExact::default()
        }
    }

    fn streamed(&mut self, op: OperationId, event: &StreamEvent) {
        self.streamed_any = true;
        let blocks = self.open.entry(op).or_default();
        match event {
            StreamEvent::BlockStart { index, block } => {
                let kind = match block {
                    BlockStart::Text => Kind::Text(String::new()),
                    BlockStart::ToolUse { id, name } => Kind::Call {
                        id: id.clone(),
                        name: name.clone(),
                        json: String::new(),
                    },
                    _ => Kind::Other,
                };
                blocks.push((*index, Said { kind, done: false }));
            }
            StreamEvent::TextDelta { index, text } => {
                if let Some(Said {
                    kind: Kind::Text(t),
                    ..
                }) = block_at(blocks, *index)
                {
                    t.push_str(text);
                }
            }
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                if let Some(Said {
                    kind: Kind::Call { json, .. },
                    ..
                }) = block_at(blocks, *index)
                {
                    json.push_str(partial_json);
                }
            }
            StreamEvent::BlockStop { index } => {
                if let Some(said) = block_at(blocks, *index) {
                    said.done = true;
                    match &said.kind {
                        Kind::Text(t) => {
                            self.texts.insert(t.clone());
                        }
                        Kind::Call { name, json, .. } => {
                            if let Some(input) = parsed(json) {
                                let inputs = self.calls.entry(name.clone()).or_default();
                                if !inputs.contains(&input) {
                                    inputs.push(input);
                                }
                            }
                        }
                        Kind::Other => {}
                    }
                }
            }
            StreamEvent::MessageStop => {
                // Whole: its blocks are filed; one text block per reply is a design.
                if let Some(blocks) = self.open.remove(&op) {
                    let mut joined = String::new();
                    let mut texts = 0;
                    for (_, s) in &blocks {
                        if let Kind::Text(t) = &s.kind {
                            joined.push_str(t);
                            texts += 1;
                        }
                    }
                    if texts > 1 {
                        self.texts.insert(joined);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether `text` is what the model said: a completed block or a whole reply's
    /// texts joined, or a prefix of what a reply not whole streamed.
    fn text_said(&self, text: &str) -> bool {
        if self.texts.contains(text) {
            return true;
        }
        self.open.values().any(|blocks| {
            let mut joined = String::new();
            for (_, s) in blocks {
                if let Kind::Text(t) = &s.kind {
                    if t.starts_with(text) {
                        return true;
                    }
                    joined.push_str(t);
                }
            }
            joined.starts_with(text)
        })
    }

    /// The streamed text sharing the longest prefix with `text`, for the report.
    fn closest_text(&self, text: &str) -> Option<&str> {
        let common = |t: &str| {
            t.bytes()
                .zip(text.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let open = self
            .open
            .values()
            .flatten()
            .filter_map(|(_, s)| match &s.kind {
                Kind::Text(t) => Some(t.as_str()),
                _ => None,
            });
        self.texts
            .iter()
            .map(String::as_str)
            .chain(open)
            .max_by_key(|t| common(t))
    }

    /// `Ok` when a completed block called `name` with `input`; otherwise what the
    /// record says of it.
    fn call_said(&self, id: &str, name: &str, input: &Value) -> Result<(), String> {
        if self
            .calls
            .get(name)
            .is_some_and(|inputs| inputs.contains(input))
            || self
                .foreign_calls
                .iter()
                .any(|(n, i)| n == name && i == input)
        {
            return Ok(());
        }
        let cut_same_id = self.open.values().flatten().any(|(_, s)| {
            !s.done && matches!(&s.kind, Kind::Call { id: streamed, .. } if streamed == id)
        });
        if cut_same_id {
            Err(format!(
                "its block never finished streaming (no block_stop), so its input {} is salvaged from a cut stream, not what the model asked for",
                excerpt(&input.to_string())
            ))
        } else {
            Err(format!(
                "no tool_use block the provider completed has this name and input {}",
                excerpt(&input.to_string())
            ))
        }
    }

    fn judge_request(
        &self,
        ctx: &Ctx<'_>,
        op: OperationId,
        request: &turnsim_core::Request,
        seen: usize,
    ) -> Check {
        for (i, m) in request.messages.iter().enumerate().skip(seen) {
            if m.role != Role::Assistant {
                continue;
            }
            for (j, b) in m.blocks().iter().enumerate() {
                match b {
                    Block::Text { text, .. } => {
                        if self.mark.is_empty()
                            || !text.contains(self.mark)
                            || ctx.host_texts.iter().any(|h| h == text)
                            || self.foreign_texts.contains(text.as_str())
                            || self.text_said(text)
                        {
                            continue;
                        }
                        let closest = match self.closest_text(text) {
                            Some(said) => format!(
                                "; against the closest text the model said, {}",
                                where_differ(said, text)
                            ),
                            None => String::new(),
                        };
                        return Err(format!(
                            "request {op}: message {i}, block {j} is assistant text the model never said: {} is neither a text block the provider streamed nor what was kept of a cut one{closest}",
                            excerpt(text)
                        ));
                    }
                    Block::ToolUse { id, name, input } => {
                        if let Err(why) = self.call_said(id, name, input) {
                            return Err(format!(
                                "request {op}: message {i}, block {j} is a tool_use {name:?} (id {id:?}) the model never completed: {why}"
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

/// The latest block streamed at `index` (an index is reused only by a new reply).
fn block_at(blocks: &mut [(usize, Said)], index: usize) -> Option<&mut Said> {
    blocks
        .iter_mut()
        .rev()
        .find(|(i, _)| *i == index)
        .map(|(_, s)| s)
}

/// The input a whole streamed JSON text parses to; no delta at all is `{}`.
fn parsed(json: &str) -> Option<Value> {
    if json.is_empty() {
        return Some(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(json).ok()
}

impl Checker for ModelWordsExact {
    fn invariant(&self) -> Invariant {
        Invariant::ModelWordsExact
    }

    fn events(&self) -> u32 {
        use super::on;
        on::STREAMED | on::INPUT_STREAMED | on::REQUEST | on::DISPATCHED | on::HOSTILE
    }

    fn observe(&mut self, ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match event {
            Event::Streamed { op, event } => {
                self.streamed(*op, event);
                None
            }
            Event::InputStreamed { op, event } => {
                self.streamed(*op, event);
                None
            }
            Event::Hostile { held: Ok(held), .. } => {
                for m in held.iter().filter(|m| m.role == Role::Assistant) {
                    for b in m.blocks() {
                        match b {
                            Block::Text { text, .. }
                                if !self.foreign_texts.contains(text.as_str()) =>
                            {
                                self.foreign_texts.insert(text.clone());
                            }
                            Block::ToolUse { name, input, .. }
                                if !self
                                    .foreign_calls
                                    .iter()
                                    .any(|(n, i)| n == name && i == input) =>
                            {
                                self.foreign_calls.push((name.clone(), input.clone()));
                            }
                            _ => {}
                        }
                    }
                }
                None
            }
            _ if !self.streamed_any => None,
            Event::Request {
                op, request, seen, ..
            } => Some(self.judge_request(ctx, *op, request, *seen)),
            Event::Dispatched { op, call, .. } => Some(
                self.call_said(&call.id, &call.name, &call.input)
                    .map_err(|why| {
                        format!(
                            "{op} dispatched tool {:?} (id {:?}) with input the model never completed: {why}",
                            call.name, call.id
                        )
                    }),
            ),
            _ => None,
        }
    }
}
