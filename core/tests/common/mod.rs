//! Shared helpers for the integration tests: a fake durable log that carries out
//! `Output::Persist` / `Output::TruncateLog`, a scripted driver that hands a
//! [`Session`] prompts, stream events and tool results and collects what comes out,
//! and small builders for messages and provider streams.
//!
//! Not every test file uses every helper.
#![allow(dead_code)]

use std::sync::Arc;
use turnsim_core::log::{FRAME_HEADER, Record, decode_log};
use turnsim_core::{
    Block, BlockStart, CancelCause, Input, Message, OperationId, Output, Request, Session,
    SessionConfig, SessionError, SharedMessage, StopReason, StreamEvent, ToolCall, ToolOutcome,
    TurnOutcome, Usage,
};

/// A fixed instant, as a caller would read it from its clock.
pub const NOW: &str = "2025-06-01T12:00:00Z";

// ---------------------------------------------------------------- messages

pub fn shared(m: Message) -> SharedMessage {
    Arc::new(m)
}

pub fn user(text: &str) -> SharedMessage {
    shared(Message::user_text(text))
}

pub fn assistant(text: &str) -> SharedMessage {
    shared(Message::assistant_text(text))
}

pub fn tool_use(id: &str, name: &str, input: serde_json::Value) -> Block {
    Block::ToolUse {
        id: id.to_string(),
        name: name.to_string(),
        input,
    }
}

pub fn outcome(id: &str, content: &str, is_error: bool) -> ToolOutcome {
    ToolOutcome {
        tool_use_id: id.to_string(),
        content: content.into(),
        is_error,
    }
}

/// The history as one JSON string, for exact comparison.
pub fn json_of(messages: &[SharedMessage]) -> String {
    turnsim_core::messages_to_json(messages)
}

/// The JSON of each message, one string per message.
pub fn jsons_of(messages: &[SharedMessage]) -> Vec<String> {
    messages.iter().map(|m| m.to_json()).collect()
}

// ---------------------------------------------------------------- the fake log

/// An in-memory append-only log that carries out the session's log outputs in order.
#[derive(Clone, Debug, Default)]
pub struct FakeLog {
    pub bytes: Vec<u8>,
}

impl FakeLog {
    pub fn from_bytes(bytes: &[u8]) -> FakeLog {
        FakeLog {
            bytes: bytes.to_vec(),
        }
    }

    pub fn apply(&mut self, output: &Output) {
        match output {
            Output::Persist { bytes } => self.bytes.extend_from_slice(bytes),
            Output::TruncateLog { len } => {
                assert!(
                    *len <= self.bytes.len(),
                    "TruncateLog to {len} on a log of {} bytes",
                    self.bytes.len()
                );
                self.bytes.truncate(*len);
            }
            _ => {}
        }
    }

    pub fn apply_all(&mut self, outputs: &[Output]) {
        for o in outputs {
            self.apply(o);
        }
    }

    pub fn records(&self) -> Vec<Record> {
        decode_log(&self.bytes)
            .expect("the fake log decodes")
            .records
    }
}

/// The byte offsets where records start, plus the end of the log, read from the frame
/// headers directly (`len: u32 LE` then two checksums then the payload).
pub fn record_boundaries(log: &[u8]) -> Vec<usize> {
    let mut at = 0usize;
    let mut out = vec![0];
    while at < log.len() {
        let len = u32::from_le_bytes(log[at..at + 4].try_into().expect("4 bytes")) as usize;
        at += FRAME_HEADER + len;
        assert!(at <= log.len(), "the log ends inside a record");
        out.push(at);
    }
    out
}

/// The records a list of outputs asks to persist, decoded, in order.
pub fn persisted_records(outputs: &[Output]) -> Vec<Record> {
    let mut bytes = Vec::new();
    for o in outputs {
        if let Output::Persist { bytes: b } = o {
            bytes.extend_from_slice(b);
        }
    }
    decode_log(&bytes)
        .expect("persisted records decode")
        .records
}

// ---------------------------------------------------------------- outputs

pub fn sends(outputs: &[Output]) -> Vec<(OperationId, Request)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send { op, request } => Some((*op, request.clone())),
            _ => None,
        })
        .collect()
}

pub fn dispatches(outputs: &[Output]) -> Vec<(OperationId, Vec<ToolCall>)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Dispatch { op, calls } => Some((*op, calls.clone())),
            _ => None,
        })
        .collect()
}

pub fn turn_ends(outputs: &[Output]) -> Vec<TurnOutcome> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::TurnEnded { outcome } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

/// The one `Send` in `outputs`.
pub fn the_send(outputs: &[Output]) -> (OperationId, Request) {
    let s = sends(outputs);
    assert_eq!(s.len(), 1, "expected exactly one Send in {outputs:?}");
    s.into_iter().next().expect("one")
}

/// The one `Dispatch` in `outputs`.
pub fn the_dispatch(outputs: &[Output]) -> (OperationId, Vec<ToolCall>) {
    let d = dispatches(outputs);
    assert_eq!(d.len(), 1, "expected exactly one Dispatch in {outputs:?}");
    d.into_iter().next().expect("one")
}

// ---------------------------------------------------------------- streams

/// One content block of a scripted reply.
#[derive(Clone, Debug)]
pub enum Part {
    /// Text streamed in these chunks.
    Text(Vec<&'static str>),
    /// Thinking streamed in these chunks, then its signature.
    Thinking(Vec<&'static str>, &'static str),
    /// A tool call whose input JSON streams in these chunks.
    ToolUse {
        id: &'static str,
        name: &'static str,
        json: Vec<&'static str>,
    },
}

/// The events of one block at `index`: start, deltas, stop.
pub fn block_events(index: usize, part: &Part) -> Vec<StreamEvent> {
    let mut ev = Vec::new();
    match part {
        Part::Text(chunks) => {
            ev.push(StreamEvent::BlockStart {
                index,
                block: BlockStart::Text,
            });
            for c in chunks {
                ev.push(StreamEvent::TextDelta {
                    index,
                    text: c.to_string(),
                });
            }
        }
        Part::Thinking(chunks, signature) => {
            ev.push(StreamEvent::BlockStart {
                index,
                block: BlockStart::Thinking,
            });
            for c in chunks {
                ev.push(StreamEvent::ThinkingDelta {
                    index,
                    thinking: c.to_string(),
                });
            }
            ev.push(StreamEvent::SignatureDelta {
                index,
                signature: signature.to_string(),
            });
        }
        Part::ToolUse { id, name, json } => {
            ev.push(StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse {
                    id: id.to_string(),
                    name: name.to_string(),
                },
            });
            for c in json {
                ev.push(StreamEvent::InputJsonDelta {
                    index,
                    partial_json: c.to_string(),
                });
            }
        }
    }
    ev.push(StreamEvent::BlockStop { index });
    ev
}

/// A whole reply: message start, every block, the stop reason with usage, message stop.
pub fn reply(parts: &[Part], stop: StopReason, output_tokens: u64) -> Vec<StreamEvent> {
    let mut ev = vec![StreamEvent::MessageStart];
    for (i, p) in parts.iter().enumerate() {
        ev.extend(block_events(i, p));
    }
    ev.push(StreamEvent::MessageDelta {
        stop_reason: stop,
        usage: Usage {
            input_tokens: 100,
            output_tokens,
        },
    });
    ev.push(StreamEvent::MessageStop);
    ev
}

pub fn text_reply(text: &'static str) -> Vec<StreamEvent> {
    reply(&[Part::Text(vec![text])], StopReason::EndTurn, 10)
}

// ---------------------------------------------------------------- the driver

/// A scripted runtime: hands inputs to a session, carries out its log outputs on a
/// [`FakeLog`], and keeps every output in order.
pub struct Driver {
    pub session: Session,
    pub log: FakeLog,
    pub outputs: Vec<Output>,
}

pub fn config() -> SessionConfig {
    SessionConfig {
        system: "You are a careful coding agent.".into(),
        tools: vec![
            turnsim_core::ToolSpec {
                name: "glob".into(),
                description: "Find files by pattern.".into(),
                input_schema: serde_json::json!({"type":"object","properties":{"pattern":{"type":"string"}}}),
            },
            turnsim_core::ToolSpec {
                name: "ls".into(),
                description: "List a directory.".into(),
                input_schema: serde_json::json!({"type":"object","properties":{"path":{"type":"string"}}}),
            },
        ].into(),
        session_key: "sess-1".into(),
        stance: "act on the user's words; ask when unsure".into(),
        max_truncated_resumes: 3,
        thinking: None,
    }
}

impl Default for Driver {
    fn default() -> Self {
        Driver::new(config())
    }
}

impl Driver {
    pub fn new(config: SessionConfig) -> Driver {
        Driver {
            session: Session::new(config),
            log: FakeLog::default(),
            outputs: Vec::new(),
        }
    }

    pub fn try_handle(&mut self, input: Input) -> Result<Vec<Output>, SessionError> {
        let out = self.session.handle(input)?;
        self.log.apply_all(&out);
        self.outputs.extend(out.iter().cloned());
        Ok(out)
    }

    pub fn handle(&mut self, input: Input) -> Vec<Output> {
        self.try_handle(input)
            .expect("the session accepts the input")
    }

    /// Starts a turn and returns the op of the request it sends.
    pub fn prompt(&mut self, text: &str) -> OperationId {
        let out = self.handle(Input::Prompt {
            text: text.into(),
            now: NOW.into(),
        });
        self.the_send_of(&out)
    }

    fn the_send_of(&self, out: &[Output]) -> OperationId {
        the_send(out).0
    }

    /// Feeds events of `op` one by one; returns all outputs.
    pub fn stream(&mut self, op: OperationId, events: &[StreamEvent]) -> Vec<Output> {
        let mut all = Vec::new();
        for e in events {
            all.extend(self.handle(Input::Stream {
                op,
                event: e.clone(),
            }));
        }
        all
    }

    pub fn tool_result(&mut self, op: OperationId, outcome: ToolOutcome) -> Vec<Output> {
        self.handle(Input::ToolResult { op, outcome })
    }

    pub fn cancel(&mut self, cause: CancelCause) -> Vec<Output> {
        self.handle(Input::Cancel { cause })
    }

    pub fn history(&self) -> &[SharedMessage] {
        self.session.history()
    }

    pub fn all_sends(&self) -> Vec<(OperationId, Request)> {
        sends(&self.outputs)
    }
}

/// The reply of the whole-turn script: text, then two parallel tool calls.
pub fn two_tool_reply() -> Vec<StreamEvent> {
    reply(
        &[
            Part::Text(vec!["I'll run both ", "in parallel."]),
            Part::ToolUse {
                id: "toolu_glob",
                name: "glob",
                json: vec!["{\"pattern\":", "\"**/*.go\"}"],
            },
            Part::ToolUse {
                id: "toolu_ls",
                name: "ls",
                json: vec!["{\"path\":\".\"}"],
            },
        ],
        StopReason::ToolUse,
        40,
    )
}

/// The final reply of the whole-turn script.
pub fn final_reply() -> Vec<StreamEvent> {
    reply(
        &[Part::Text(vec![
            "Found main.go; ",
            "the directory holds go.mod and main.go.",
        ])],
        StopReason::EndTurn,
        25,
    )
}

/// Scripts a whole turn (prompt, a streamed reply with text and two parallel tool
/// calls, both results, the final streamed text) and returns the driver.
pub fn whole_turn() -> Driver {
    let mut d = Driver::default();
    let op1 = d.prompt("find the go files and list the directory");
    let out = d.stream(op1, &two_tool_reply());
    let (op2, calls) = the_dispatch(&out);
    assert_eq!(calls.len(), 2);
    d.tool_result(op2, outcome("toolu_glob", "main.go", false));
    let out = d.tool_result(op2, outcome("toolu_ls", "go.mod\nmain.go", false));
    let (op3, _) = the_send(&out);
    let out = d.stream(op3, &final_reply());
    assert_eq!(turn_ends(&out), vec![TurnOutcome::EndTurn]);
    d
}
