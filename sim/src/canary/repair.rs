//! The reply a failed stream leaves behind, for the canary whose repair after a failed
//! turn keeps what it should drop (`unrepaired_failed_reply`, issue 25).
//!
//! Guarantee: [`Leftover::kept`] holds exactly the blocks of the streaming reply that
//! the provider completed (`block_stop` seen; thinking with its signature, tool input
//! that parses as a JSON object), in stream order, so what the planted bug sends back is
//! the model's own words and only the missing repair can be objected to.
//!
//! Why: the reference engine keeps nothing of a failed reply, so its repair
//! (docs/spec.md §3) never has a tail to pop and a mutant that skips it changes
//! nothing. Many runtimes keep the part of a failed reply that finished streaming, as
//! the reference does on a cancel; for them the repair is what keeps the next request
//! valid, and this is how they break it.

use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::{Block, Message};

#[derive(Default)]
struct Part {
    start: Option<BlockStart>,
    text: String,
    signature: String,
    json: String,
    done: bool,
}

/// The blocks of the reply streaming now.
#[derive(Default)]
pub(crate) struct Leftover {
    parts: Vec<Part>,
}

impl Leftover {
    /// Follows one event of the live reply.
    pub(crate) fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::MessageStart => self.parts.clear(),
            StreamEvent::BlockStart { block, .. } => self.parts.push(Part {
                start: Some(block.clone()),
                ..Part::default()
            }),
            StreamEvent::TextDelta { index, text }
            | StreamEvent::ThinkingDelta {
                index,
                thinking: text,
            } => {
                if let Some(p) = self.parts.get_mut(*index) {
                    p.text.push_str(text);
                }
            }
            StreamEvent::SignatureDelta { index, signature } => {
                if let Some(p) = self.parts.get_mut(*index) {
                    p.signature.push_str(signature);
                }
            }
            StreamEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                if let Some(p) = self.parts.get_mut(*index) {
                    p.json.push_str(partial_json);
                }
            }
            StreamEvent::BlockStop { index } => {
                if let Some(p) = self.parts.get_mut(*index) {
                    p.done = true;
                }
            }
            _ => {}
        }
    }

    /// The reply's completed blocks as an assistant message, or `None` when none
    /// completed (the only tail this repair drops is an empty one).
    pub(crate) fn kept(&self) -> Option<Message> {
        let blocks: Vec<Block> = self
            .parts
            .iter()
            .filter(|p| p.done)
            .filter_map(|p| match p.start.as_ref()? {
                BlockStart::Text if !p.text.is_empty() => Some(Block::text(p.text.clone())),
                BlockStart::Thinking if !p.signature.is_empty() => Some(Block::Thinking {
                    thinking: p.text.clone(),
                    signature: p.signature.clone(),
                }),
                BlockStart::RedactedThinking { data } => {
                    Some(Block::RedactedThinking { data: data.clone() })
                }
                BlockStart::ToolUse { id, name } => {
                    let json = if p.json.is_empty() { "{}" } else { &p.json };
                    let input: serde_json::Value = serde_json::from_str(json).ok()?;
                    input.is_object().then(|| Block::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input,
                    })
                }
                _ => None,
            })
            .collect();
        (!blocks.is_empty()).then(|| Message::assistant_blocks(blocks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(events: &[StreamEvent]) -> Leftover {
        let mut l = Leftover::default();
        for e in events {
            l.apply(e);
        }
        l
    }

    fn call(index: usize, json: &str) -> Vec<StreamEvent> {
        vec![
            StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse {
                    id: format!("toolu_{index}"),
                    name: "read_file".into(),
                },
            },
            StreamEvent::InputJsonDelta {
                index,
                partial_json: json.into(),
            },
            StreamEvent::BlockStop { index },
        ]
    }

    #[test]
    fn a_reply_cut_after_a_finished_call_leaves_its_text_and_that_call() {
        let mut events = vec![
            StreamEvent::MessageStart,
            StreamEvent::BlockStart {
                index: 0,
                block: BlockStart::Text,
            },
            StreamEvent::TextDelta {
                index: 0,
                text: "on it".into(),
            },
            StreamEvent::BlockStop { index: 0 },
        ];
        events.extend(call(1, r#"{"path":"a"}"#));
        // The second call's input is cut before its stop: never a call.
        events.extend(call(2, r#"{"pa"#).into_iter().take(2));
        let kept = stream(&events).kept().expect("two blocks completed");
        assert_eq!(
            turnsim_core::json::messages_to_json(&[std::sync::Arc::new(kept)]),
            r#"[{"role":"assistant","content":[{"type":"text","text":"on it"},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"}}]}]"#
        );
    }

    #[test]
    fn a_reply_cut_before_any_block_stopped_leaves_nothing() {
        let mut events = vec![StreamEvent::MessageStart];
        events.extend(call(0, r#"{"path":"a"}"#).into_iter().take(2));
        assert_eq!(stream(&events).kept(), None);
        // A call whose stop came with input that is not JSON is no call either.
        let mut events = vec![StreamEvent::MessageStart];
        events.extend(call(0, r#"{"path":"#));
        assert_eq!(stream(&events).kept(), None);
    }
}
