//! The engine side of protocols v1 and v2 for a Rust [`EngineFactory`]: read
//! requests from stdin, answer on stdout. `sim/examples/stdio_reference.rs` serves
//! the reference engine this way, so the pipe itself can be tested and timed.
//!
//! Guarantee: the replies carry exactly what the engine's own methods return (outputs
//! in order, history, pending operation, idle flag) and a state digest that changes
//! whenever `state_bytes` does, so a run through the pipe is the run in process: the
//! history delta keeps a message when it is the same `Arc` as before, and a request
//! names the history prefix only when its messages are those very `Arc`s.

use super::tagged::{self, First, variant_fields};
use super::wire::{self, Hello};
use crate::engine::{Engine, EngineFactory};
use reply::{DeltaOut, ReplyOut, reply};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::sync::Arc;
use turnsim_core::{Input, Message, Output, SessionConfig, SharedMessage};

mod input;
mod reply;

use input::WireInput;

enum Req {
    Create {
        config: SessionConfig,
    },
    Restore {
        config: SessionConfig,
        log: String,
    },
    Import {
        config: SessionConfig,
        history: Vec<Message>,
    },
    Input {
        n: u64,
        input: Input,
    },
    State,
    Digest,
}

/// The derived reading, for requests whose `req` is not the first field.
#[derive(Deserialize)]
#[serde(
    remote = "Req",
    tag = "req",
    rename_all = "snake_case",
    deny_unknown_fields
)]
enum DerivedReq {
    Create {
        config: SessionConfig,
    },
    Restore {
        config: SessionConfig,
        log: String,
    },
    Import {
        config: SessionConfig,
        history: Vec<Message>,
    },
    Input {
        n: u64,
        input: Input,
    },
    State,
    Digest,
}

variant_fields!(
    "req",
    #[serde(deny_unknown_fields)]
    CreateFields {
        config: SessionConfig
    }
);
variant_fields!(
    "req",
    #[serde(deny_unknown_fields)]
    RestoreFields {
        config: SessionConfig,
        log: String
    }
);
variant_fields!(
    "req",
    #[serde(deny_unknown_fields)]
    ImportFields {
        config: SessionConfig,
        history: Vec<Message>
    }
);
variant_fields!(
    "req",
    #[serde(deny_unknown_fields)]
    InputFields {
        n: u64,
        input: WireInput
    }
);
variant_fields!(
    "req",
    #[serde(deny_unknown_fields)]
    StateFields {}
);
variant_fields!(
    "req",
    #[serde(deny_unknown_fields)]
    DigestFields {}
);

struct ReqVisitor;

impl<'de> serde::de::Visitor<'de> for ReqVisitor {
    type Value = Req;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("internally tagged enum Req")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Req, A::Error> {
        const T: &str = "req";
        Ok(match tagged::first(map, T)? {
            First::Whole(v) => return DerivedReq::deserialize(v).map_err(serde::de::Error::custom),
            First::Tag(t, rest) => match t.as_str() {
                "create" => Req::Create {
                    config: tagged::fields::<CreateFields, _>(rest, T)?.config,
                },
                "restore" => {
                    let f: RestoreFields = tagged::fields(rest, T)?;
                    Req::Restore {
                        config: f.config,
                        log: f.log,
                    }
                }
                "import" => {
                    let f: ImportFields = tagged::fields(rest, T)?;
                    Req::Import {
                        config: f.config,
                        history: f.history,
                    }
                }
                "input" => {
                    let f: InputFields = tagged::fields(rest, T)?;
                    Req::Input {
                        n: f.n,
                        input: f.input.0,
                    }
                }
                "state" => {
                    tagged::fields::<StateFields, _>(rest, T)?;
                    Req::State
                }
                "digest" => {
                    tagged::fields::<DigestFields, _>(rest, T)?;
                    Req::Digest
                }
                _ => {
                    return Err(serde::de::Error::unknown_variant(
                        &t,
                        &["create", "restore", "import", "input", "state", "digest"],
                    ));
                }
            },
        })
    }
}

impl<'de> Deserialize<'de> for Req {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Req, D::Error> {
        d.deserialize_map(ReqVisitor)
    }
}

/// One served engine and the history it last reported.
struct Served {
    engine: Box<dyn Engine>,
    reported: Vec<SharedMessage>,
    inputs: u64,
    /// `state_bytes` as last reported, and its number: the digest is that number,
    /// bumped whenever the bytes differ from the last reply's. The harness compares
    /// digests only between consecutive replies of one engine (§9), so this is
    /// exact, and it spares hashing the whole state on every reply.
    state: Vec<u8>,
    state_no: u64,
}

impl Served {
    fn new(engine: Box<dyn Engine>) -> Served {
        Served {
            engine,
            reported: Vec::new(),
            inputs: 0,
            state: Vec::new(),
            state_no: 0,
        }
    }
}

impl Served {
    /// The state digest: a number bumped whenever `state_bytes` differ from the last
    /// digest's.
    fn digest(&mut self) -> String {
        let state = self.engine.state_bytes();
        if state != self.state || self.state_no == 0 {
            self.state_no += 1;
            self.state = state;
        }
        self.state_no.to_string()
    }

    /// A reply carrying the engine's view, with the history as a delta from what was
    /// reported before (`full` reports it all again); the digest too when
    /// `with_state` (every reply in v1, only `state` replies in v2).
    fn write<'a, W: Write>(
        &'a mut self,
        out: &mut Line<W>,
        mut reply: ReplyOut<'a>,
        outputs: &'a [Output],
        full: bool,
        with_state: bool,
    ) -> std::io::Result<()> {
        reply.state = with_state.then(|| self.digest());
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
        reply.history = Some(DeltaOut {
            keep,
            append: &history[keep..],
        });
        reply.pending = Some(self.engine.pending_operation());
        reply.idle = Some(self.engine.is_idle());
        out.send_reply(&reply, outputs, history)?;
        self.reported.clear();
        self.reported.extend_from_slice(history);
        Ok(())
    }
}

/// The reply stream: each line is serialised whole into one buffer, and the
/// buffer leaves in one write just before the engine would wait for a request
/// ([`Requests::fill`]), so the harness's single read finds every reply complete,
/// a long reply is never split into buffer-sized writes, and the replies to a batch
/// of inputs sent ahead (protocol 2) leave together instead of one write each.
struct Line<W> {
    out: W,
    buf: Vec<u8>,
    scratch: String,
}

impl<W: Write> Line<W> {
    fn send<T: Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        let start = self.buf.len();
        if let Err(e) = serde_json::to_writer(&mut self.buf, value) {
            self.buf.truncate(start);
            return Err(e.into());
        }
        self.buf.push(b'\n');
        Ok(())
    }

    fn send_reply(
        &mut self,
        reply: &ReplyOut<'_>,
        outputs: &[Output],
        history: &[SharedMessage],
    ) -> std::io::Result<()> {
        let start = self.buf.len();
        if let Err(e) = reply.encode(&mut self.buf, &mut self.scratch, outputs, history) {
            // Nothing of a reply that could not be written whole leaves.
            self.buf.truncate(start);
            return Err(e.into());
        }
        self.buf.push(b'\n');
        Ok(())
    }

    /// Writes every reply so far, in one write, and flushes.
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.out.flush()
    }
}

/// The request lines, read ahead of their handling: whatever one read of the pipe
/// brought is kept here, so the server knows whether another request is already
/// waiting (then its reply can share the write) or the next read may block (then
/// the replies so far must leave first, or the harness and the engine wait on each
/// other).
struct Requests<R> {
    input: R,
    read: Vec<u8>,
    /// Where the next line starts in `read`.
    at: usize,
    /// Lines handed out so far.
    lines: usize,
    eof: bool,
}

impl<R: BufRead> Requests<R> {
    fn new(input: R) -> Requests<R> {
        Requests {
            input,
            read: Vec::with_capacity(16 * 1024),
            at: 0,
            lines: 0,
            eof: false,
        }
    }

    /// The next line (without `\n` or `\r\n`) if it is already read, or the last,
    /// unterminated one at the end of the input; `None` when a read is needed.
    fn buffered(&mut self) -> Option<Result<&str, String>> {
        let rest = &self.read[self.at..];
        let (line, used) = match memchr::memchr(b'\n', rest) {
            Some(end) => (&rest[..end], end + 1),
            None if self.eof && !rest.is_empty() => (rest, rest.len()),
            None => return None,
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        self.at += used;
        self.lines += 1;
        Some(std::str::from_utf8(line).map_err(|_| {
            format!(
                "cannot read request {}: stream did not contain valid UTF-8",
                self.lines
            )
        }))
    }

    /// Reads more input (this may block); false at the end of the input.
    fn fill(&mut self) -> Result<bool, String> {
        if self.eof {
            return Ok(false);
        }
        self.read.drain(..self.at);
        self.at = 0;
        let got = self
            .input
            .fill_buf()
            .map_err(|e| format!("cannot read request {}: {e}", self.lines + 1))?;
        let n = got.len();
        self.read.extend_from_slice(got);
        self.input.consume(n);
        self.eof = n == 0;
        Ok(true)
    }
}

/// Serves `factory` over protocol v1 until `input` ends. A request that is not
/// valid protocol is an error naming its line; the caller reports it and exits.
pub fn serve<R: BufRead, W: Write>(
    factory: &dyn EngineFactory,
    input: R,
    out: W,
) -> Result<(), String> {
    serve_version(factory, input, out, 1)
}

/// [`serve`] under protocol `version` (1 or 2; the harness says the newest it
/// speaks in `TURNSIM_PROTOCOL`). Version 2 computes the state digest only when a
/// `digest` or `state` request asks for it.
pub fn serve_version<R: BufRead, W: Write>(
    factory: &dyn EngineFactory,
    input: R,
    out: W,
    version: u32,
) -> Result<(), String> {
    if !(wire::OLDEST_PROTOCOL..=wire::PROTOCOL_VERSION).contains(&version) {
        return Err(format!(
            "protocol {version} is not served; protocols {} to {} are",
            wire::OLDEST_PROTOCOL,
            wire::PROTOCOL_VERSION
        ));
    }
    let v1 = version == 1;
    let hello = Hello {
        hello: wire::HELLO.into(),
        protocol: version,
        engine: factory.name().to_string(),
        log: factory
            .writes_reference_log()
            .then(|| wire::REFERENCE_LOG.to_string()),
        accepts: if factory.imports() {
            vec![wire::IMPORT.to_string()]
        } else {
            Vec::new()
        },
    };
    let io = |e: std::io::Error| format!("cannot write a reply: {e}");
    let mut out = Line {
        out,
        buf: Vec::with_capacity(64 * 1024),
        scratch: String::with_capacity(4 * 1024),
    };
    out.send(&hello).map_err(io)?;
    let mut requests = Requests::new(input);
    let served = serve_lines(factory, &mut requests, &mut out, v1);
    // Whatever was answered leaves, also when a request was refused as an error.
    let flushed = out.flush().map_err(io);
    served.and(flushed)
}

/// Answers request lines until the input ends.
fn serve_lines<R: BufRead, W: Write>(
    factory: &dyn EngineFactory,
    requests: &mut Requests<R>,
    out: &mut Line<W>,
    v1: bool,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot write a reply: {e}");
    let mut served: Option<Served> = None;
    loop {
        // The 0-based number of the line about to be read.
        let i = requests.lines;
        let line = match requests.buffered() {
            Some(line) => line?,
            None => {
                out.flush().map_err(io)?;
                if requests.fill()? {
                    continue;
                }
                return Ok(());
            }
        };
        let req: Req = serde_json::from_str(line)
            .map_err(|e| format!("request line {}: {e}: {line}", i + 1))?;
        match (req, &mut served) {
            (Req::Create { config }, _) => {
                let engine = factory.create(config);
                let mut r = reply("create");
                r.fixed_texts = Some(engine.fixed_texts());
                let mut s = Served::new(engine);
                s.write(out, r, &[], true, v1).map_err(io)?;
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
                        r.outputs = true;
                        let mut s = Served::new(engine);
                        s.write(out, r, &outputs, true, v1).map_err(io)?;
                        served = Some(s);
                    }
                    Err(why) => {
                        let mut r = reply("restore");
                        r.error = Some(why);
                        out.send_reply(&r, &[], &[]).map_err(io)?;
                    }
                }
            }
            (Req::Import { config, history }, _) => {
                served = None;
                if !factory.imports() {
                    return Err(format!(
                        "request line {}: import, which this engine's hello did not offer",
                        i + 1
                    ));
                }
                match factory.import(config, history) {
                    Ok((engine, outputs)) => {
                        let mut r = reply("import");
                        r.fixed_texts = Some(engine.fixed_texts());
                        r.outputs = true;
                        let mut s = Served::new(engine);
                        s.write(out, r, &outputs, true, v1).map_err(io)?;
                        served = Some(s);
                    }
                    Err(why) => {
                        let mut r = reply("import");
                        r.error = Some(why);
                        out.send_reply(&r, &[], &[]).map_err(io)?;
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
                        r.outputs = true;
                        s.write(out, r, &outputs, false, v1).map_err(io)?;
                    }
                    Err(why) => {
                        let mut r = reply("input");
                        r.refused = Some(why);
                        s.write(out, r, &[], false, v1).map_err(io)?;
                    }
                }
            }
            (Req::State, Some(s)) => s.write(out, reply("state"), &[], true, true).map_err(io)?,
            (Req::Digest, _) if v1 => {
                return Err(format!(
                    "request line {}: `digest` is a protocol 2 request; this engine speaks protocol 1",
                    i + 1
                ));
            }
            (Req::Digest, Some(s)) => {
                let mut r = reply("digest");
                r.state = Some(s.digest());
                out.send_reply(&r, &[], &[]).map_err(io)?;
            }
            (Req::Input { .. } | Req::State | Req::Digest, None) => {
                return Err(format!(
                    "request line {}: an input before create or restore",
                    i + 1
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests;
