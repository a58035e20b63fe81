//! Messages and provider replies decoded from fuzz bytes, for the state machine and the
//! session bodies.
//!
//! Guarantee: every byte string decodes to some case (draws past the end yield zeros),
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

/// Builds messages, replies and ids from an `Unstructured`. Tool ids are fresh unless
/// the bytes ask for one from a small shared pool, which is how duplicates arise.
pub(super) struct Gen<'a> {
    pub(super) u: Unstructured<'a>,
    fresh: u32,
}

impl<'a> Gen<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Gen {
            u: Unstructured::new(data),
            fresh: 0,
        }
    }

    /// A draw in `0..n`, one byte for `n <= 256`.
    pub(super) fn below(&mut self, n: usize) -> Drawn<usize> {
        below(&mut self.u, n)
    }

    /// True for an odd byte.
    pub(super) fn flag(&mut self) -> Drawn<bool> {
        bool::arbitrary(&mut self.u)
    }

    pub(super) fn name(&mut self) -> Drawn<String> {
        name(&mut self.u)
    }

    pub(super) fn text(&mut self) -> Drawn<String> {
        Ok(match self.below(TEXTS.len() + 1)? {
            i if i < TEXTS.len() => TEXTS[i].to_string(),
            _ => text(&mut self.u, 16)?,
        })
    }

    pub(super) fn tool_id(&mut self) -> Drawn<String> {
        Ok(if self.below(4)? == 0 {
            format!("toolu_p{}", self.below(3)?)
        } else {
            self.fresh += 1;
            format!("toolu_f{}", self.fresh)
        })
    }

    pub(super) fn input_json(&mut self) -> Drawn<serde_json::Value> {
        Ok(match self.below(3)? {
            0 => serde_json::json!({}),
            1 => serde_json::json!({ "path": self.text()? }),
            _ => serde_json::json!({ "cmd": "ls", "n": u8::arbitrary(&mut self.u)? }),
        })
    }

    pub(super) fn call(&mut self) -> Drawn<ToolCall> {
        Ok(ToolCall {
            id: self.tool_id()?,
            name: self.name()?,
            input: self.input_json()?,
        })
    }

    pub(super) fn block(&mut self) -> Drawn<Block> {
        Ok(match self.below(8)? {
            0 | 1 => Block::text(self.text()?),
            2 => Block::Thinking {
                thinking: self.text()?,
                signature: self.text()?,
            },
            3 => Block::RedactedThinking { data: self.text()? },
            4 | 5 => {
                let c = self.call()?;
                Block::ToolUse {
                    id: c.id,
                    name: c.name,
                    input: c.input,
                }
            }
            6 => Block::tool_result(self.tool_id()?, self.text()?, self.flag()?),
            _ => {
                let mut map = serde_json::Map::new();
                map.insert("type".into(), "image".into());
                map.insert("source".into(), self.text()?.into());
                Block::Unknown(map)
            }
        })
    }

    /// A tool's result: mostly a string, sometimes an array of text and image blocks
    /// (the image as an unknown block, the way this crate keeps it).
    pub(super) fn result_content(&mut self) -> Drawn<ToolResultContent> {
        if self.below(4)? != 0 {
            return Ok(ToolResultContent::Text(self.text()?));
        }
        let mut blocks = Vec::new();
        for _ in 0..self.below(3)? {
            blocks.push(if self.flag()? {
                Block::text(self.text()?)
            } else {
                let mut source = serde_json::Map::new();
                source.insert("type".into(), "base64".into());
                source.insert("data".into(), self.text()?.into());
                let mut map = serde_json::Map::new();
                map.insert("type".into(), "image".into());
                map.insert("source".into(), source.into());
                Block::Unknown(map)
            });
        }
        Ok(ToolResultContent::Blocks(blocks))
    }

    pub(super) fn message(&mut self, role: Role) -> Drawn<Message> {
        let content = if self.below(4)? == 0 {
            Content::Text(self.text()?)
        } else {
            let n = self.below(4)?;
            Content::Blocks((0..n).map(|_| self.block()).collect::<Drawn<_>>()?)
        };
        Ok(Message { role, content })
    }

    /// Mostly a well-formed assistant reply (text, maybe thinking, maybe fresh tool
    /// calls, a fitting stop reason); sometimes any message with any stop reason.
    pub(super) fn reply(&mut self) -> Drawn<GenerationOutput> {
        const STOPS: [StopReason; 6] = [
            StopReason::EndTurn,
            StopReason::ToolUse,
            StopReason::MaxTokens,
            StopReason::StopSequence,
            StopReason::Refusal,
            StopReason::PauseTurn,
        ];
        let usage = self.usage()?;
        if self.below(6)? == 0 {
            let role = if self.flag()? {
                Role::User
            } else {
                Role::Assistant
            };
            let message = self.message(role)?;
            let stop_reason = *self.u.choose(&STOPS)?;
            return Ok(GenerationOutput {
                message,
                stop_reason,
                usage,
            });
        }
        let mut blocks = Vec::new();
        if self.below(4)? == 0 {
            blocks.push(Block::Thinking {
                thinking: "hmm".into(),
                signature: "sig".into(),
            });
        }
        blocks.push(Block::text(format!(
            "reply {}",
            u8::arbitrary(&mut self.u)?
        )));
        let calls = self.below(4)?;
        for _ in 0..calls {
            let c = self.call()?;
            blocks.push(Block::ToolUse {
                id: c.id,
                name: c.name,
                input: c.input,
            });
        }
        let stop_reason = match (calls, self.below(4)?) {
            (0, 0) => StopReason::MaxTokens,
            (0, _) => StopReason::EndTurn,
            (_, 0) => StopReason::EndTurn,
            _ => StopReason::ToolUse,
        };
        Ok(GenerationOutput {
            message: Message::assistant_blocks(blocks),
            stop_reason,
            usage,
        })
    }

    /// Token counts stay below 2^32: summing a run's usage is then exact for any run
    /// a fuzz input can describe (so not `Usage::arbitrary`, whose counts are any u64).
    pub(super) fn usage(&mut self) -> Drawn<Usage> {
        Ok(Usage {
            input_tokens: u64::from(u16::arbitrary(&mut self.u)?),
            output_tokens: u64::from(u16::arbitrary(&mut self.u)?),
        })
    }

    pub(super) fn cause(&mut self) -> Drawn<CancelCause> {
        self.u.choose(&CancelCause::ALL).copied()
    }

    /// An operation id: mostly the outstanding one, else a stale, a future or any id.
    pub(super) fn op(
        &mut self,
        outstanding: Option<OperationId>,
        next: OperationId,
        last: u64,
    ) -> Drawn<OperationId> {
        Ok(match self.below(8)? {
            0..=3 => outstanding.unwrap_or(next),
            4 => OperationId(last),
            5 => OperationId(last.saturating_sub(1)),
            6 => next,
            _ => OperationId::arbitrary(&mut self.u)?,
        })
    }

    /// Results for `calls`: mostly one per call in call order, else one of the ways
    /// a batch result can be wrong.
    pub(super) fn results(&mut self, calls: &[ToolCall]) -> Drawn<Vec<ToolOutcome>> {
        let mut results = Vec::with_capacity(calls.len());
        for c in calls {
            results.push(ToolOutcome {
                tool_use_id: c.id.clone(),
                content: self.result_content()?,
                is_error: self.flag()?,
            });
        }
        match self.below(10)? {
            0 => {
                results.pop();
            }
            1 => results.reverse(),
            2 if !results.is_empty() => results[0].tool_use_id = self.tool_id()?,
            3 => results.push(ToolOutcome {
                tool_use_id: self.tool_id()?,
                content: String::new().into(),
                is_error: false,
            }),
            _ => {}
        }
        Ok(results)
    }
}
