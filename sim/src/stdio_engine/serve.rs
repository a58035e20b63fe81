//! The engine side of protocol v1 for a Rust [`EngineFactory`]: read requests from
//! stdin, answer on stdout. `sim/examples/stdio_reference.rs` serves the reference
//! engine this way, so the pipe itself can be tested and timed.
//!
//! Guarantee: the replies carry exactly what the engine's own methods return (outputs
//! in order, history, pending operation, idle flag) and a state digest that changes
//! whenever `state_bytes` does, so a run through the pipe is the run in process: the
//! history delta keeps a message when it is the same `Arc` as before, and a request
//! names the history prefix only when its messages are those very `Arc`s.

use super::wire::{self, Hello};
use crate::engine::{Engine, EngineFactory};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::sync::Arc;
use turnsim_core::log::TurnOutcome;
use turnsim_core::{
    Activity, CacheHints, Input, OperationId, Output, PendingOperation, SessionConfig,
    SharedMessage, ToolCall, ToolSpec,
};

#[derive(Deserialize)]
#[serde(tag = "req", rename_all = "snake_case", deny_unknown_fields)]
enum Req {
    Create { config: SessionConfig },
    Restore { config: SessionConfig, log: String },
    Input { n: u64, input: Input },
    State,
}

#[derive(Serialize)]
#[serde(untagged)]
enum MessagesOut<'a> {
    Prefix(usize),
    Full(&'a [SharedMessage]),
}

#[derive(Serialize)]
struct RequestOut<'a> {
    system: &'a str,
    tools: &'a [ToolSpec],
    messages: MessagesOut<'a>,
    cache: &'a CacheHints,
}

#[derive(Serialize)]
#[serde(tag = "output", rename_all = "snake_case")]
enum OutputOut<'a> {
    Persist {
        bytes: String,
    },
    TruncateLog {
        len: usize,
    },
    Send {
        op: OperationId,
        request: RequestOut<'a>,
    },
    Dispatch {
        op: OperationId,
        calls: &'a [ToolCall],
    },
    Abort {
        op: OperationId,
    },
    TurnEnded {
        outcome: &'a TurnOutcome,
    },
    Activity {
        activity: &'a Activity,
    },
}

#[derive(Serialize)]
struct DeltaOut<'a> {
    keep: usize,
    append: &'a [SharedMessage],
}

#[derive(Serialize)]
struct ReplyOut<'a> {
    reply: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<Vec<OutputOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<DeltaOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending: Option<PendingOperation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idle: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed_texts: Option<Vec<String>>,
}

/// One served engine and the history it last reported.
struct Served {
    engine: Box<dyn Engine>,
    reported: Vec<SharedMessage>,
    inputs: u64,
}

fn output_out<'a>(o: &'a Output, history: &[SharedMessage]) -> OutputOut<'a> {
    match o {
        Output::Persist { bytes } => OutputOut::Persist {
            bytes: wire::base64_encode(bytes),
        },
        Output::TruncateLog { len } => OutputOut::TruncateLog { len: *len },
        Output::Send { op, request } => {
            let n = request.messages.len();
            let shared = n <= history.len()
                && request
                    .messages
                    .iter()
                    .zip(history)
                    .all(|(a, b)| Arc::ptr_eq(a, b));
            OutputOut::Send {
                op: *op,
                request: RequestOut {
                    system: &request.system,
                    tools: &request.tools,
                    messages: if shared {
                        MessagesOut::Prefix(n)
                    } else {
                        MessagesOut::Full(&request.messages)
                    },
                    cache: &request.cache,
                },
            }
        }
        Output::Dispatch { op, calls } => OutputOut::Dispatch { op: *op, calls },
        Output::Abort { op } => OutputOut::Abort { op: *op },
        Output::TurnEnded { outcome } => OutputOut::TurnEnded { outcome },
        Output::Activity { activity } => OutputOut::Activity { activity },
    }
}

impl Served {
    /// A reply carrying the engine's view, with the history as a delta from what was
    /// reported before (`full` reports it all again).
    fn write<'a, W: Write>(
        &'a mut self,
        out: &mut W,
        mut reply: ReplyOut<'a>,
        outputs: &'a [Output],
        full: bool,
    ) -> std::io::Result<()> {
        let history = self.engine.history();
        let keep = if full {
            0
        } else {
            self.reported
                .iter()
                .zip(history)
                .take_while(|(a, b)| Arc::ptr_eq(a, b))
                .count()
        };
        reply.outputs = reply
            .outputs
            .map(|_| outputs.iter().map(|o| output_out(o, history)).collect());
        reply.history = Some(DeltaOut {
            keep,
            append: &history[keep..],
        });
        reply.pending = Some(self.engine.pending_operation());
        reply.idle = Some(self.engine.is_idle());
        reply.state = Some(
            blake3::hash(&self.engine.state_bytes())
                .to_hex()
                .to_string(),
        );
        serde_json::to_writer(&mut *out, &reply)?;
        out.write_all(b"\n")?;
        out.flush()?;
        self.reported = history.to_vec();
        Ok(())
    }
}

fn reply(kind: &'static str) -> ReplyOut<'static> {
    ReplyOut {
        reply: kind,
        outputs: None,
        refused: None,
        error: None,
        history: None,
        pending: None,
        idle: None,
        state: None,
        fixed_texts: None,
    }
}

/// Serves `factory` over protocol v1 until `input` ends. A request that is not
/// valid protocol is an error naming its line; the caller reports it and exits.
pub fn serve<R: BufRead, W: Write>(
    factory: &dyn EngineFactory,
    input: R,
    mut out: W,
) -> Result<(), String> {
    let hello = Hello {
        hello: wire::HELLO.into(),
        protocol: wire::PROTOCOL_VERSION,
        engine: factory.name().to_string(),
    };
    let io = |e: std::io::Error| format!("cannot write a reply: {e}");
    serde_json::to_writer(&mut out, &hello).map_err(|e| e.to_string())?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(io)?;
    let mut served: Option<Served> = None;
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read request {}: {e}", i + 1))?;
        let req: Req = serde_json::from_str(&line)
            .map_err(|e| format!("request line {}: {e}: {line}", i + 1))?;
        match (req, &mut served) {
            (Req::Create { config }, _) => {
                let engine = factory.create(config);
                let mut r = reply("create");
                r.fixed_texts = Some(engine.fixed_texts());
                let mut s = Served {
                    engine,
                    reported: Vec::new(),
                    inputs: 0,
                };
                s.write(&mut out, r, &[], true).map_err(io)?;
                served = Some(s);
            }
            (Req::Restore { config, log }, _) => {
                // A new engine replaces whatever this process served.
                served = None;
                let log = wire::base64_decode(&log)
                    .map_err(|e| format!("request line {}: log: {e}", i + 1))?;
                match factory.restore(config, &log) {
                    Ok((engine, outputs)) => {
                        let mut r = reply("restore");
                        r.fixed_texts = Some(engine.fixed_texts());
                        r.outputs = Some(Vec::new());
                        let mut s = Served {
                            engine,
                            reported: Vec::new(),
                            inputs: 0,
                        };
                        s.write(&mut out, r, &outputs, true).map_err(io)?;
                        served = Some(s);
                    }
                    Err(why) => {
                        let mut r = reply("restore");
                        r.error = Some(why);
                        serde_json::to_writer(&mut out, &r).map_err(|e| e.to_string())?;
                        out.write_all(b"\n")
                            .and_then(|()| out.flush())
                            .map_err(io)?;
                    }
                }
            }
            (Req::Input { n, .. }, Some(s)) if n != s.inputs + 1 => {
                return Err(format!(
                    "request line {}: input {n} out of order; expected input {}",
                    i + 1,
                    s.inputs + 1
                ));
            }
            (Req::Input { input, .. }, Some(s)) => {
                s.inputs += 1;
                match s.engine.handle(input) {
                    Ok(outputs) => {
                        let mut r = reply("input");
                        r.outputs = Some(Vec::new());
                        s.write(&mut out, r, &outputs, false).map_err(io)?;
                    }
                    Err(why) => {
                        let mut r = reply("input");
                        r.refused = Some(why);
                        s.write(&mut out, r, &[], false).map_err(io)?;
                    }
                }
            }
            (Req::State, Some(s)) => s.write(&mut out, reply("state"), &[], true).map_err(io)?,
            (Req::Input { .. } | Req::State, None) => {
                return Err(format!(
                    "request line {}: an input before create or restore",
                    i + 1
                ));
            }
        }
    }
    Ok(())
}
