//! Provider stream events and the partial reply they build.
//!
//! Guarantee: events are applied in the order they arrive and checked against the
//! blocks opened so far (a block started out of order, a delta for a block never
//! started or already stopped, a delta of the wrong kind, tool input that is not JSON
//! are errors, not silent repairs), and a stream cut short keeps only blocks the
//! provider would accept back, so the message the session keeps is one it really sent.

use super::ids::unique_tool_use_id;
use super::*;

/// The opening of a streamed content block.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockStart {
    Text,
    Thinking,
    RedactedThinking { data: String },
    ToolUse { id: String, name: String },
}

/// One provider stream event (the Anthropic event model).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StreamEvent {
    MessageStart,
    BlockStart {
        index: usize,
        block: BlockStart,
    },
    TextDelta {
        index: usize,
        text: String,
    },
    ThinkingDelta {
        index: usize,
        thinking: String,
    },
    SignatureDelta {
        index: usize,
        signature: String,
    },
    InputJsonDelta {
        index: usize,
        partial_json: String,
    },
    BlockStop {
        index: usize,
    },
    MessageDelta {
        stop_reason: StopReason,
        usage: Usage,
    },
    MessageStop,
    Error {
        kind: String,
        message: String,
    },
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct PartialBlock {
    kind: Option<BlockStart>,
    text: String,
    signature: String,
    json: String,
    done: bool,
    /// A stopped tool call's input, parsed once when its `block_stop` checks that it
    /// is JSON, so keeping the block does not parse it again. A function of `json`,
    /// so never written: a block read back without it parses `json`.
    #[serde(skip)]
    input: Option<serde_json::Value>,
}

/// Equal blocks are equal in what streamed; the parsed input is a cache of `json`, so a
/// block read back without it equals the one it was written from.
impl PartialEq for PartialBlock {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.text == other.text
            && self.signature == other.signature
            && self.json == other.json
            && self.done == other.done
    }
}

/// The reply being streamed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Stream {
    pub(super) op: OperationId,
    pub(super) started: bool,
    pub(super) blocks: Vec<PartialBlock>,
    pub(super) stop: Option<(StopReason, Usage)>,
}

impl Stream {
    /// The ids of the `tool_use` blocks opened so far in this reply.
    pub(super) fn tool_use_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match &b.kind {
            Some(BlockStart::ToolUse { id, .. }) => Some(id.as_str()),
            _ => None,
        })
    }

    fn block(&mut self, index: usize) -> Result<&mut PartialBlock, String> {
        match self.blocks.get_mut(index) {
            Some(b) if !b.done => Ok(b),
            Some(_) => Err(format!("delta for block {index} after its stop")),
            None => Err(format!("delta for block {index}, which never started")),
        }
    }

    /// Applies one event; `Ok(Some(text))` is streamed text to persist in the draft.
    fn apply(&mut self, event: &StreamEvent) -> Result<Option<String>, String> {
        match event {
            StreamEvent::MessageStart => {
                if self.started {
                    return Err("message_start twice".into());
                }
                self.started = true;
            }
            StreamEvent::BlockStart { index, block } => {
                if *index != self.blocks.len() {
                    return Err(format!(
                        "block {index} started, expected block {}",
                        self.blocks.len()
                    ));
                }
                self.blocks.push(PartialBlock {
                    kind: Some(block.clone()),
                    ..PartialBlock::default()
                });
            }
            StreamEvent::TextDelta { index, text } => {
                let b = self.block(*index)?;
                if b.kind != Some(BlockStart::Text) {
                    return Err(format!("text delta for block {index}, not a text block"));
                }
                b.text.push_str(text);
                return Ok(Some(text.clone()));
            }
            StreamEvent::ThinkingDelta { index, thinking } => {
                let b = self.block(*index)?;
                if b.kind != Some(BlockStart::Thinking) {
                    return Err(format!("thinking delta for block {index}, not thinking"));
                }
                b.text.push_str(thinking);
            }
            StreamEvent::SignatureDelta { index, signature } => {
                let b = self.block(*index)?;
                if b.kind != Some(BlockStart::Thinking) {
                    return Err(format!("signature delta for block {index}, not thinking"));
                }
                b.signature.push_str(signature);
            }
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                let b = self.block(*index)?;
                if !matches!(b.kind, Some(BlockStart::ToolUse { .. })) {
                    return Err(format!("input delta for block {index}, not a tool_use"));
                }
                b.json.push_str(partial_json);
            }
            StreamEvent::BlockStop { index } => {
                let b = self.block(*index)?;
                if let Some(BlockStart::ToolUse { id, .. }) = &b.kind {
                    let json = if b.json.is_empty() { "{}" } else { &b.json };
                    match serde_json::from_str::<serde_json::Value>(json) {
                        Ok(input) => b.input = Some(input),
                        Err(e) => return Err(format!("tool_use {id}: input is not JSON: {e}")),
                    }
                }
                b.done = true;
            }
            StreamEvent::MessageDelta { stop_reason, usage } => {
                self.stop = Some((*stop_reason, *usage));
            }
            StreamEvent::MessageStop | StreamEvent::Error { .. } => {}
        }
        Ok(None)
    }

    /// The blocks that are kept: finished ones, plus streamed text cut short. Thinking
    /// without its signature and tool input cut short are dropped, since the provider
    /// would reject the first and the second was never a call.
    pub(super) fn kept_blocks(&self, partial: bool) -> Vec<Block> {
        let mut out = Vec::with_capacity(self.blocks.len());
        for b in &self.blocks {
            let Some(kind) = &b.kind else { continue };
            // Text with nothing visible in it is never kept, finished or not: the provider
            // rejects a whitespace-only text block in every later request (models do
            // stream a lone "\n\n" block before a call; a blank crash draft is dropped for
            // the same reason). A reply left with no block at all is an empty reply (§6).
            let visible = !b.text.trim().is_empty();
            let keep_text = visible && (partial || b.done);
            match kind {
                BlockStart::Text if keep_text => out.push(Block::text(b.text.clone())),
                BlockStart::Thinking if b.done && !b.signature.is_empty() => {
                    out.push(Block::Thinking {
                        thinking: b.text.clone(),
                        signature: b.signature.clone(),
                    })
                }
                BlockStart::RedactedThinking { data } if b.done => {
                    out.push(Block::RedactedThinking { data: data.clone() })
                }
                BlockStart::ToolUse { id, name } if b.done => {
                    let json = if b.json.is_empty() { "{}" } else { &b.json };
                    let input = match &b.input {
                        Some(input) => input.clone(),
                        None => serde_json::from_str(json).unwrap_or(serde_json::Value::Null),
                    };
                    out.push(Block::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input,
                    });
                }
                _ => {}
            }
        }
        out
    }

    fn finish(&self) -> Result<GenerationOutput, String> {
        if let Some(i) = self.blocks.iter().position(|b| !b.done) {
            return Err(format!("message_stop before block {i} stopped"));
        }
        let Some((stop_reason, usage)) = self.stop else {
            return Err("message_stop without a stop reason".into());
        };
        Ok(GenerationOutput {
            message: Message::assistant_blocks(self.kept_blocks(false)),
            stop_reason,
            usage,
        })
    }
}

impl Session {
    pub(super) fn stream_event(&mut self, op: OperationId, event: StreamEvent) -> Vec<Output> {
        let mut out = Vec::new();
        let Some(stream) = self.stream.as_mut().filter(|s| s.op == op) else {
            return out; // stale: an operation that is over
        };
        let event = match event {
            StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse { id, name },
            } => {
                let (history, retired) = (self.state.history(), &self.retired_ids);
                let in_reply = |wanted: &str| stream.tool_use_ids().any(|used| used == wanted);
                let id = unique_tool_use_id(&id, history, &in_reply, retired).unwrap_or(id);
                StreamEvent::BlockStart {
                    index,
                    block: BlockStart::ToolUse { id, name },
                }
            }
            other => other,
        };
        if let StreamEvent::Error { kind, message } = &event {
            let why = format!("provider error {kind}: {message}");
            self.fail_generation(op, why, &mut out);
            return out;
        }
        let first_start = matches!(event, StreamEvent::MessageStart) && !stream.started;
        let applied = stream.apply(&event);
        let finished = match (&applied, &event) {
            (Ok(None), StreamEvent::MessageStop) => Some(stream.finish()),
            _ => None,
        };
        if first_start {
            let base_len = self.state.history().len();
            Self::persist(&mut out, &Record::Draft { op, base_len });
        }
        match (applied, finished) {
            (Err(why), _) | (_, Some(Err(why))) => {
                out.clear();
                self.fail_generation(op, format!("stream protocol: {why}"), &mut out);
            }
            (Ok(Some(text)), _) => Self::persist(&mut out, &Record::DraftText { op, text }),
            (Ok(None), Some(Ok(output))) => {
                let len_before = self.state.history().len();
                match self.state.generated(op, output) {
                    Ok(effects) => {
                        self.stream = None;
                        self.commit(len_before, effects, &mut out);
                    }
                    Err(e) => self.fail_generation(op, e.to_string(), &mut out),
                }
            }
            (Ok(None), None) => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_call_read_back_without_its_parsed_input_equals_the_live_one() {
        let live = PartialBlock {
            kind: Some(BlockStart::ToolUse {
                id: "toolu_1".into(),
                name: "read_file".into(),
            }),
            json: "{\"path\":\"a\"}".into(),
            done: true,
            input: Some(serde_json::json!({"path": "a"})),
            ..PartialBlock::default()
        };
        let bytes = serde_json::to_vec(&live).expect("serializes");
        let read: PartialBlock = serde_json::from_slice(&bytes).expect("reads back");
        assert_eq!(read.input, None);
        assert_eq!(read, live);
        let other = PartialBlock {
            json: "{\"path\":\"b\"}".into(),
            ..read
        };
        assert_ne!(other, live);
    }
}
