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
//! A reply that starts a block twice, or streams a delta for a block after its
//! `block_stop`, is malformed: nothing it streams from there on is the model's words,
//! and what came before is a cut reply's, so an engine that goes on building the reply
//! (rather than failing it) is found here.
//!
//! Blocks that came from elsewhere are set aside: the host's compaction summaries
//! (`Ctx::host_texts`) and whatever an accepted outside history carried
//! (`Event::Hostile`). Before the provider has streamed anything in the run there is
//! no record to compare with, and nothing is judged.

use super::same_json::same_value;
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
    /// Completed calls: name, then each input it was called with, beside its
    /// [`fingerprint`] (compared first, so an input is compared whole only with the
    /// inputs that may equal it).
    calls: BTreeMap<String, Vec<(u64, Value)>>,
    /// Replies not (yet) whole, block by block: the open one and every cut one, in the
    /// order they started (the one streaming now is the last: looked up from the end,
    /// every streamed event finds it at once).
    open: Vec<(OperationId, Vec<(usize, Said)>)>,
    /// Whether the provider streamed anything in this run.
    streamed_any: bool,
    /// The reply that started a block twice, if the last malformed one is still
    /// streaming: nothing it streams after that is the model's (only one reply streams
    /// live at once).
    void: Option<OperationId>,
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
        if self.void == Some(op) {
            return;
        }
        let at = match self.open.iter().rposition(|(o, _)| *o == op) {
            Some(at) => at,
            None => {
                self.open.push((op, Vec::new()));
                self.open.len() - 1
            }
        };
        let blocks = &mut self.open[at].1;
        match event {
            // A block started again at its index: the stream is malformed, and nothing
            // from here on is the model's. What streamed before stays a cut reply's (a
            // crash before the engine's failure was durable leaves its draft, spec.md
            // §7), and the world restarts a block only before the reply's first
            // `block_stop`, so no block of it was filed as whole.
            StreamEvent::BlockStart { index, .. } if blocks.iter().any(|(i, _)| i == index) => {
                self.void = Some(op);
            }
            // A delta for a block that already stopped (the `late_delta` shape): the
            // stream is malformed from here on, as above. The block stays filed as it
            // was whole: an engine cancelled before this event keeps it.
            StreamEvent::TextDelta { index, .. } | StreamEvent::InputJsonDelta { index, .. }
                if block_at(blocks, *index).is_some_and(|s| s.done) =>
            {
                self.void = Some(op);
            }
            StreamEvent::BlockStart { index, block } => {
                let kind = match block {
                    // Room for a usual block's text: its deltas then land without
                    // the half dozen doublings an empty string grows through.
                    BlockStart::Text => Kind::Text(String::with_capacity(256)),
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
                        // Model texts come from a small vocabulary and repeat: a
                        // copy only for a text not filed yet.
                        Kind::Text(t) if !self.texts.contains(t.as_str()) => {
                            self.texts.insert(t.clone());
                        }
                        Kind::Text(_) => {}
                        Kind::Call { name, json, .. } => {
                            if let Some(input) = parsed(json) {
                                let inputs = self.calls.entry(name.clone()).or_default();
                                let print = fingerprint(&input);
                                if !holds(inputs, print, &input) {
                                    inputs.push((print, input));
                                }
                            }
                        }
                        Kind::Other => {}
                    }
                }
            }
            StreamEvent::MessageStop => {
                // Whole: its blocks are filed; one text block per reply is a design.
                if let Some(at) = self.open.iter().rposition(|(o, _)| *o == op) {
                    let (_, blocks) = self.open.remove(at);
                    let mut texts = blocks.iter().filter_map(|(_, s)| match &s.kind {
                        Kind::Text(t) => Some(t.as_str()),
                        _ => None,
                    });
                    if let (Some(first), Some(second)) = (texts.next(), texts.next()) {
                        let mut joined = [first, second].concat();
                        texts.for_each(|t| joined.push_str(t));
                        if !self.texts.contains(&joined) {
                            self.texts.insert(joined);
                        }
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
        self.open.iter().any(|(_, blocks)| {
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
            .iter()
            .flat_map(|(_, b)| b)
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
            .is_some_and(|inputs| holds(inputs, fingerprint(input), input))
            || self
                .foreign_calls
                .iter()
                .any(|(n, i)| n == name && i == input)
        {
            return Ok(());
        }
        let cut_same_id = self.open.iter().flat_map(|(_, b)| b).any(|(_, s)| {
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

/// Whether `inputs` holds a value equal to `input`, whose fingerprint is `print`.
/// Equal values are nearly always spelt alike too (the same keys in the same order),
/// which [`same_value`] sees in one walk; `Value`'s own `==` looks each key up in the
/// other map (a hash per key), and decides the rest (keys in another order, `0.0`
/// against `-0.0`). `same_value` never calls unequal values equal: the same bytes
/// parse to the same value.
fn holds(inputs: &[(u64, Value)], print: u64, input: &Value) -> bool {
    inputs
        .iter()
        .any(|(p, v)| *p == print && (same_value(v, input) || v == input))
}

/// A hash of a JSON value that agrees with `Value`'s equality: equal values get equal
/// fingerprints (an object's entries are summed, so their order does not count, as it
/// does not for `==`; `0.0` and `-0.0` hash alike, as they compare equal). Unequal
/// values may collide; [`holds`] still compares them whole. Why: a tool is called with
/// many inputs in a run, and comparing each dispatched or requested call with every one
/// of them (an object's keys looked up one by one) was most of this checker's cost.
fn fingerprint(v: &Value) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    fn mix(h: u64, x: u64) -> u64 {
        (h.rotate_left(23) ^ x).wrapping_mul(K)
    }
    fn bytes(b: &[u8]) -> u64 {
        let mut h = mix(K, b.len() as u64);
        let mut words = b.chunks_exact(8);
        for w in &mut words {
            h = mix(
                h,
                u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
            );
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        mix(h, u64::from_le_bytes(last))
    }
    match v {
        Value::Null => 1,
        Value::Bool(b) => 2 + u64::from(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                mix(4, u)
            } else if let Some(i) = n.as_i64() {
                mix(5, i as u64)
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                mix(6, if f == 0.0 { 0 } else { f.to_bits() })
            }
        }
        Value::String(s) => mix(7, bytes(s.as_bytes())),
        Value::Array(items) => items
            .iter()
            .fold(mix(8, items.len() as u64), |h, x| mix(h, fingerprint(x))),
        Value::Object(map) => {
            let sum = map.iter().fold(0u64, |acc, (k, x)| {
                acc.wrapping_add(mix(bytes(k.as_bytes()), fingerprint(x)))
            });
            mix(mix(9, map.len() as u64), sum)
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_inputs_get_equal_fingerprints_whatever_their_key_order() {
        let a: Value = serde_json::from_str(
            r#"{"path":"src/a.rs","n":[1,-2,0.0,null,true],"o":{"x":"y","z":{}}}"#,
        )
        .unwrap();
        let b: Value = serde_json::from_str(
            r#"{"o":{"z":{},"x":"y"},"n":[1,-2,-0.0,null,true],"path":"src/a.rs"}"#,
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn inputs_that_differ_anywhere_get_different_fingerprints() {
        let base = json!({"path": "src/module_12.rs", "note": "look", "n": [1, 2]});
        let others = [
            json!({"path": "src/module_13.rs", "note": "look", "n": [1, 2]}),
            json!({"path": "src/module_12.rs", "note": "look", "n": [2, 1]}),
            json!({"path": "src/module_12.rs", "note": "look", "n": [1, 2.0]}),
            json!({"path": "src/module_12.rs", "note": "look"}),
            json!({"path": "src/module_12.rs", "note": "look", "m": [1, 2]}),
            json!(["src/module_12.rs", "look", [1, 2]]),
        ];
        for other in others {
            assert_ne!(base, other);
            assert_ne!(fingerprint(&base), fingerprint(&other), "{other}");
        }
    }

    #[test]
    fn holds_finds_an_equal_input_and_only_an_equal_one() {
        let said = json!({"path": "a", "note": "b"});
        let inputs = vec![(fingerprint(&said), said.clone())];
        assert!(holds(
            &inputs,
            fingerprint(&said),
            &json!({"note": "b", "path": "a"})
        ));
        let other = json!({"path": "a", "note": "c"});
        assert!(!holds(&inputs, fingerprint(&other), &other));
        // A colliding fingerprint alone is not enough: the values are compared too.
        assert!(!holds(&inputs, fingerprint(&said), &other));
    }

    #[test]
    fn holds_answers_as_value_equality_when_the_spelling_differs() {
        // Keys in another order, and `-0.0` against `0.0`: equal values that
        // `same_value` (same bytes) calls different, so `==` decides.
        let said = json!({"path": "a", "n": 0.0});
        let inputs = vec![(fingerprint(&said), said.clone())];
        let respelt: Value = serde_json::from_str(r#"{"n":-0.0,"path":"a"}"#).unwrap();
        assert!(!same_value(&said, &respelt));
        assert_eq!(said, respelt);
        assert!(holds(&inputs, fingerprint(&respelt), &respelt));
        let other = json!({"path": "a", "n": 1.0});
        assert!(!holds(&inputs, fingerprint(&other), &other));
    }
}
