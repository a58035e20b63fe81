//! Messages and provider replies decoded from fuzz bytes, for the state machine and the
//! session bodies.
//!
//! Guarantee: every byte string decodes to some case (reads past the end yield zeros),
//! and tool ids come from a small shared pool, so duplicates and mismatches arise often
//! enough to exercise the engine's rejection paths as well as its happy path.

use super::*;

const TEXTS: [&str; 9] = [
    "list the files",
    "",
    " ",
    "Sure.",
    "[Request interrupted by user]",
    "[Canceled while the tool call `bash` was running. It may have already started and partially applied its effects.]",
    "[Reply cut off at the output limit. Resume exactly where it stopped.]",
    "line\nbreak",
    "<turn_context>",
];

/// Builds messages, replies and ids from a [`Reader`]. Tool ids are fresh unless the
/// bytes ask for one from a small shared pool, which is how duplicates arise.
pub(super) struct Gen<'a> {
    pub(super) r: Reader<'a>,
    fresh: u32,
}

impl<'a> Gen<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Gen {
            r: Reader::new(data),
            fresh: 0,
        }
    }

    pub(super) fn text(&mut self) -> String {
        match self.r.below(TEXTS.len() + 1) {
            i if i < TEXTS.len() => TEXTS[i].to_string(),
            _ => self.r.text(16),
        }
    }

    pub(super) fn tool_id(&mut self) -> String {
        if self.r.below(4) == 0 {
            format!("toolu_p{}", self.r.below(3))
        } else {
            self.fresh += 1;
            format!("toolu_f{}", self.fresh)
        }
    }

    pub(super) fn input_json(&mut self) -> serde_json::Value {
        match self.r.below(3) {
            0 => serde_json::json!({}),
            1 => serde_json::json!({ "path": self.text() }),
            _ => serde_json::json!({ "cmd": "ls", "n": self.r.byte() }),
        }
    }

    pub(super) fn call(&mut self) -> ToolCall {
        ToolCall {
            id: self.tool_id(),
            name: name(&mut self.r),
            input: self.input_json(),
        }
    }

    pub(super) fn block(&mut self) -> Block {
        match self.r.below(8) {
            0 | 1 => Block::text(self.text()),
            2 => Block::Thinking {
                thinking: self.text(),
                signature: self.text(),
            },
            3 => Block::RedactedThinking { data: self.text() },
            4 | 5 => {
                let c = self.call();
                Block::ToolUse {
                    id: c.id,
                    name: c.name,
                    input: c.input,
                }
            }
            6 => Block::tool_result(self.tool_id(), self.text(), self.r.flag()),
            _ => {
                let mut map = serde_json::Map::new();
                map.insert("type".into(), "image".into());
                map.insert("source".into(), self.text().into());
                Block::Unknown(map)
            }
        }
    }

    pub(super) fn message(&mut self, role: Role) -> Message {
        let content = if self.r.below(4) == 0 {
            Content::Text(self.text())
        } else {
            let n = self.r.below(4);
            Content::Blocks((0..n).map(|_| self.block()).collect())
        };
        Message { role, content }
    }

    /// Mostly a well-formed assistant reply (text, maybe thinking, maybe fresh tool
    /// calls, a fitting stop reason); sometimes any message with any stop reason.
    pub(super) fn reply(&mut self) -> GenerationOutput {
        const STOPS: [StopReason; 6] = [
            StopReason::EndTurn,
            StopReason::ToolUse,
            StopReason::MaxTokens,
            StopReason::StopSequence,
            StopReason::Refusal,
            StopReason::PauseTurn,
        ];
        let usage = self.usage();
        if self.r.below(6) == 0 {
            let role = if self.r.flag() {
                Role::User
            } else {
                Role::Assistant
            };
            let message = self.message(role);
            let stop_reason = STOPS[self.r.below(STOPS.len())];
            return GenerationOutput {
                message,
                stop_reason,
                usage,
            };
        }
        let mut blocks = Vec::new();
        if self.r.below(4) == 0 {
            blocks.push(Block::Thinking {
                thinking: "hmm".into(),
                signature: "sig".into(),
            });
        }
        blocks.push(Block::text(format!("reply {}", self.r.byte())));
        let calls = self.r.below(4);
        for _ in 0..calls {
            let c = self.call();
            blocks.push(Block::ToolUse {
                id: c.id,
                name: c.name,
                input: c.input,
            });
        }
        let stop_reason = match (calls, self.r.below(4)) {
            (0, 0) => StopReason::MaxTokens,
            (0, _) => StopReason::EndTurn,
            (_, 0) => StopReason::EndTurn,
            _ => StopReason::ToolUse,
        };
        GenerationOutput {
            message: Message::assistant_blocks(blocks),
            stop_reason,
            usage,
        }
    }

    /// Token counts stay below 2^32: summing a run's usage is then exact for any run
    /// a fuzz input can describe.
    pub(super) fn usage(&mut self) -> Usage {
        Usage {
            input_tokens: u64::from(self.r.u16()),
            output_tokens: u64::from(self.r.u16()),
        }
    }

    pub(super) fn cause(&mut self) -> CancelCause {
        CancelCause::ALL[self.r.below(CancelCause::ALL.len())]
    }

    /// An operation id: mostly the outstanding one, else a stale, a future or any id.
    pub(super) fn op(
        &mut self,
        outstanding: Option<OperationId>,
        next: OperationId,
        last: u64,
    ) -> OperationId {
        match self.r.below(8) {
            0..=3 => outstanding.unwrap_or(next),
            4 => OperationId(last),
            5 => OperationId(last.saturating_sub(1)),
            6 => next,
            _ => OperationId(self.r.u64()),
        }
    }

    /// Results for `calls`: mostly one per call in call order, else one of the ways
    /// a batch result can be wrong.
    pub(super) fn results(&mut self, calls: &[ToolCall]) -> Vec<ToolOutcome> {
        let mut results: Vec<ToolOutcome> = calls
            .iter()
            .map(|c| ToolOutcome {
                tool_use_id: c.id.clone(),
                content: self.text(),
                is_error: self.r.flag(),
            })
            .collect();
        match self.r.below(10) {
            0 => {
                results.pop();
            }
            1 => results.reverse(),
            2 => {
                if let Some(first) = results.first_mut() {
                    first.tool_use_id = self.tool_id();
                }
            }
            3 => results.push(ToolOutcome {
                tool_use_id: self.tool_id(),
                content: String::new(),
                is_error: false,
            }),
            _ => {}
        }
        results
    }
}
