//! [`StdioEngine`]: one engine process and the harness's mirror of what it reported.
//!
//! Guarantee: the world sees exactly what the engine's replies said, as if it called
//! an in-process engine: the history is mirrored from deltas (a message the engine
//! keeps stays the same `Arc` here), outputs come in the reply's order, and an engine
//! that breaks the protocol panics inside the world's guard with an error naming the
//! line. Under protocol 2 the state digest is asked for (`digest`) only when the
//! world compares states, and a twin catching up sends its inputs in batches ahead
//! of their replies; both change how many round trips a run costs, never what the
//! world sees, so the run digest is the same under either version.

use super::Pool;
use super::process::{BATCH_BYTES, Process};
use super::wire::{self, Checked, Reply, Snapshot, WireMessages, WireOutput, WireTools};
use crate::engine::Engine;
use std::cell::{Cell, Ref, RefCell};
use std::sync::Arc;
use turnsim_core::{
    Input, Message, OperationId, Output, PendingOperation, Request, SharedMessage, ToolSpec,
};

/// Which reply an error is about; formatted only when there is an error, since
/// every exchange carries one and almost none fails.
#[derive(Clone, Copy)]
pub(super) enum ReplyTo<'a> {
    /// `create`, `restore`, `state` or `digest`.
    Open(&'a str),
    /// The input with this number.
    Input(u64),
}

impl std::fmt::Display for ReplyTo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplyTo::Open(req) => write!(f, "`{req}`"),
            ReplyTo::Input(n) => write!(f, "input {n}"),
        }
    }
}

/// A configuration an `input` carries, shared by the requests after it once the
/// engine accepts it.
type Configure = Option<(String, Arc<[ToolSpec]>)>;

/// One engine process and the harness's mirror of what it reported.
pub struct StdioEngine {
    /// Always `Some` until dropped; in a cell because a v2 `digest` is asked from
    /// `state_bytes`, which borrows the engine immutably.
    process: RefCell<Option<Process>>,
    /// Where the process goes back when the engine is dropped healthy.
    pool: Option<Pool>,
    /// False once the engine broke the protocol or hung: its process is killed.
    healthy: Cell<bool>,
    /// The protocol version its hello announced.
    version: u32,
    history: Vec<SharedMessage>,
    pending: PendingOperation,
    idle: bool,
    /// The last state digest; `None` (v2) until a `digest` asks for it again.
    state: RefCell<Option<String>>,
    fixed_texts: Vec<String>,
    /// The system prompt and tools of the last request, shared by every request
    /// until they change, as an in-process engine shares its configuration.
    prefix: (String, Arc<[ToolSpec]>),
    /// The `tools` text of the last request read, when `prefix.1` was read from it
    /// (not after a configuration, whose tools came from the input): a request
    /// writing the same bytes has the same tools and is not read again.
    tools_text: Option<String>,
    inputs: u64,
    /// The request JSON of each `send` in the last reply applied, exactly as the
    /// engine wrote it on the pipe: the bytes `prefix_stable` judges.
    sent: Vec<(OperationId, Arc<str>)>,
}

impl Drop for StdioEngine {
    fn drop(&mut self) {
        let process = self.process.get_mut().take();
        if let (Some(process), Some(pool), true) = (process, &self.pool, self.healthy.get()) {
            let mut pool = pool.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < super::POOL {
                pool.push(process);
            }
        }
    }
}

/// Reads the line the process last read as a reply to `req` and checks its shape.
fn parse(process: &Process, n: u64, req: &str, version: u32) -> Result<Checked, String> {
    let parsed: Reply = match serde_json::from_str(process.last_line()) {
        Ok(r) => r,
        Err(e) => {
            let expected = format!("a JSON reply to `{req}` ({e})");
            return Err(process.bad_line(n, process.last_line(), &expected));
        }
    };
    parsed
        .check(req, version)
        .map_err(|expected| process.bad_line(n, process.last_line(), &expected))
}

impl StdioEngine {
    pub(super) fn new(
        process: Process,
        pool: Option<Pool>,
        prefix: (String, Arc<[ToolSpec]>),
    ) -> StdioEngine {
        StdioEngine {
            version: process.protocol,
            process: RefCell::new(Some(process)),
            pool,
            healthy: Cell::new(true),
            history: Vec::new(),
            pending: PendingOperation::None,
            idle: true,
            state: RefCell::new(None),
            fixed_texts: Vec::new(),
            prefix,
            tools_text: None,
            inputs: 0,
            sent: Vec::new(),
        }
    }

    pub(super) fn set_fixed_texts(&mut self, texts: Vec<String>) {
        self.fixed_texts = texts;
    }

    fn process(&self) -> Ref<'_, Process> {
        Ref::map(self.process.borrow(), |p| {
            p.as_ref().expect("the process lives as long as the engine")
        })
    }

    fn process_mut(&mut self) -> &mut Process {
        self.process
            .get_mut()
            .as_mut()
            .expect("the process lives as long as the engine")
    }

    /// Marks the engine unhealthy when `r` is an error.
    fn healthy_if<T>(&self, r: Result<T, String>) -> Result<T, String> {
        if r.is_err() {
            self.healthy.set(false);
        }
        r
    }

    /// Sends one request and checks the reply's shape; any error marks the engine
    /// unhealthy.
    pub(super) fn request(&mut self, line: &str, req: &str) -> Result<Checked, String> {
        let version = self.version;
        let process = self.process_mut();
        let r = process
            .exchange(line, &ReplyTo::Open(req))
            .and_then(|n| parse(process, n, req, version));
        self.healthy_if(r)
    }

    /// Reads the reply to an input already sent.
    fn receive(&mut self) -> Result<Checked, String> {
        let version = self.version;
        let process = self.process_mut();
        let r = process
            .receive(&ReplyTo::Open("input"))
            .and_then(|n| parse(process, n, "input", version));
        self.healthy_if(r)
    }

    /// The state digest: the one the last reply carried (v1), or asked for now (v2).
    fn digest(&self) -> Result<String, String> {
        if let Some(s) = self.state.borrow().as_ref() {
            return Ok(s.clone());
        }
        let r = {
            let mut guard = self.process.borrow_mut();
            let process = guard
                .as_mut()
                .expect("the process lives as long as the engine");
            process
                .exchange(wire::DIGEST_LINE, &ReplyTo::Open("digest"))
                .and_then(|n| parse(process, n, "digest", self.version))
        };
        match self.healthy_if(r)? {
            Checked::Digest { state } => {
                *self.state.borrow_mut() = Some(state.clone());
                Ok(state)
            }
            _ => Err(self
                .process()
                .failure("a `digest` reply that is not a digest")),
        }
    }

    /// Applies a snapshot and converts the outputs; `refused` replies apply only
    /// the snapshot. Any error marks the engine unhealthy.
    pub(super) fn apply(
        &mut self,
        snapshot: Snapshot,
        outputs: Vec<WireOutput>,
        reply_to: ReplyTo<'_>,
    ) -> Result<Vec<Output>, String> {
        let r = self.apply_inner(snapshot, outputs, reply_to);
        self.healthy_if(r)
    }

    fn apply_inner(
        &mut self,
        snapshot: Snapshot,
        outputs: Vec<WireOutput>,
        reply_to: ReplyTo<'_>,
    ) -> Result<Vec<Output>, String> {
        let Snapshot {
            history,
            pending,
            idle,
            state,
        } = snapshot;
        if history.keep > self.history.len() {
            return Err(self.process().failure(&format!(
                "engine protocol error in the reply to {reply_to}: history keeps {} messages but only {} were held",
                history.keep,
                self.history.len()
            )));
        }
        self.history.truncate(history.keep);
        self.history
            .extend(history.append.into_iter().map(Arc::new));
        self.pending = pending;
        self.idle = idle;
        *self.state.get_mut() = state;
        self.sent.clear();
        // The bytes of each request as read with it; only a reply whose sends were
        // read the derived way (tag not first) is searched for them afresh.
        let read_with: Option<Vec<(OperationId, Arc<str>)>> = outputs
            .iter()
            .filter_map(|o| match o {
                WireOutput::Send { op, body, .. } => Some(body.clone().map(|b| (*op, b))),
                _ => None,
            })
            .collect();
        if let Some(sent) = read_with {
            self.sent = sent;
        } else {
            let bodies = sent_bodies(self.process().last_line()).map_err(|e| {
                self.process().failure(&format!(
                    "engine protocol error in the reply to {reply_to}: its requests' bytes: {e}"
                ))
            })?;
            let ops = outputs.iter().filter_map(|o| match o {
                WireOutput::Send { op, .. } => Some(*op),
                _ => None,
            });
            self.sent = ops.zip(bodies).collect();
        }
        let mut out = Vec::with_capacity(outputs.len());
        for o in outputs {
            out.push(match o {
                WireOutput::Persist { bytes } => Output::Persist {
                    bytes: wire::base64_decode(&bytes).map_err(|e| {
                        self.process().failure(&format!(
                            "engine protocol error in the reply to {reply_to}: persist bytes: {e}"
                        ))
                    })?,
                },
                WireOutput::TruncateLog { len } => Output::TruncateLog { len },
                WireOutput::Send { op, request, .. } => Output::Send {
                    op,
                    request: self.request_of(request, reply_to)?,
                },
                WireOutput::Dispatch { op, calls } => Output::Dispatch { op, calls },
                WireOutput::Abort { op } => Output::Abort { op },
                WireOutput::TurnEnded { outcome } => Output::TurnEnded { outcome },
                WireOutput::Activity { activity } => Output::Activity { activity },
            });
        }
        Ok(out)
    }

    fn request_of(
        &mut self,
        r: wire::WireRequest,
        reply_to: ReplyTo<'_>,
    ) -> Result<Request, String> {
        let messages = match r.messages {
            WireMessages::Prefix(k) if k <= self.history.len() => self.history[..k].to_vec(),
            WireMessages::Prefix(k) => {
                return Err(self.process().failure(&format!(
                    "engine protocol error in the reply to {reply_to}: a request of the first {k} messages of a history of {}",
                    self.history.len()
                )));
            }
            // Written out: messages equal to the history's at the same index are
            // shared with it, as an in-process engine's would be.
            WireMessages::Full(list) => list
                .into_iter()
                .enumerate()
                .map(|(i, m): (usize, Message)| match self.history.get(i) {
                    Some(h) if **h == m => h.clone(),
                    _ => Arc::new(m),
                })
                .collect(),
        };
        let (tools, text) = match r.tools {
            WireTools::Text(raw) if self.tools_text.as_deref() == Some(raw.get()) => (None, None),
            WireTools::Text(raw) => {
                let tools: Vec<ToolSpec> = serde_json::from_str(raw.get()).map_err(|e| {
                    self.process().failure(&format!(
                        "engine protocol error in the reply to {reply_to}: a request's tools: {e}"
                    ))
                })?;
                (Some(tools), Some(raw.get().to_owned()))
            }
            WireTools::Read(tools) => (Some(tools), None),
        };
        if let Some(tools) = tools {
            if *self.prefix.1 != *tools {
                self.prefix.1 = Arc::from(tools);
            }
            self.tools_text = text;
        }
        if self.prefix.0 != r.system {
            self.prefix.0 = r.system;
        }
        Ok(Request {
            system: self.prefix.0.clone(),
            tools: self.prefix.1.clone(),
            thinking: r.thinking,
            messages,
            cache: r.cache,
        })
    }

    /// Asks the engine for its whole state (`state` request) and checks that it
    /// matches the mirror; for tests and for debugging an adapter.
    pub fn verify(&mut self) -> Result<(), String> {
        let state = self.digest()?;
        match self.request(wire::STATE_LINE, "state")? {
            Checked::Done { snapshot, .. } => {
                let s = snapshot;
                let same_history = s.history.keep == 0
                    && s.history.append.len() == self.history.len()
                    && s.history
                        .append
                        .iter()
                        .zip(&self.history)
                        .all(|(a, b)| a == &**b);
                if !same_history
                    || s.pending != self.pending
                    || s.idle != self.idle
                    || s.state.as_deref() != Some(state.as_str())
                {
                    return Err(self.process().failure(
                        "the engine's `state` reply differs from the history, pending operation, idle flag or state its replies reported",
                    ));
                }
                Ok(())
            }
            _ => Err(self
                .process()
                .failure("a `state` reply that is not a snapshot")),
        }
    }

    /// The `input` line for `input`, numbered, and the configuration it carries.
    fn input_line(&mut self, input: &Input) -> (String, u64, Configure) {
        self.inputs += 1;
        let configure = match input {
            Input::Configure { system, tools, .. } => Some((system.clone(), tools.clone())),
            _ => None,
        };
        (wire::input_line(self.inputs, input), self.inputs, configure)
    }

    /// Reads and applies the reply to input `n`, already sent.
    fn finish(&mut self, n: u64, configure: Configure) -> Result<Vec<Output>, String> {
        let checked = match self.receive() {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        match checked {
            Checked::Done {
                outputs, snapshot, ..
            } => {
                // An accepted configuration is a new one, shared from here on.
                if let Some(prefix) = configure {
                    self.prefix = prefix;
                    self.tools_text = None;
                }
                match self.apply(snapshot, outputs, ReplyTo::Input(n)) {
                    Ok(o) => Ok(o),
                    Err(e) => panic!("{e}"),
                }
            }
            Checked::Refused { why, snapshot } => {
                if let Err(e) = self.apply(snapshot, Vec::new(), ReplyTo::Input(n)) {
                    panic!("{e}");
                }
                Err(why)
            }
            Checked::Failed { .. } | Checked::Digest { .. } => {
                panic!("unreachable: `error` or a digest in an input reply")
            }
        }
    }

    /// Sends lines already numbered; a broken pipe or hang panics, as in `handle`.
    fn send(&mut self, lines: &str) {
        let r = self.process_mut().send(lines, &ReplyTo::Open("input"));
        if let Err(e) = self.healthy_if(r) {
            panic!("{e}");
        }
    }
}

impl Engine for StdioEngine {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        let (line, n, configure) = self.input_line(&input);
        self.send(&line);
        self.finish(n, configure)
    }

    /// Protocol 2: the inputs leave in batches of at most [`BATCH_BYTES`], each batch
    /// in one write, and the replies are read after it, so a twin catching up costs
    /// a round trip per batch instead of one per input. Every reply is applied as
    /// `handle` would apply it.
    fn replay(&mut self, inputs: &mut dyn Iterator<Item = Input>) {
        if self.version < 2 {
            for input in inputs {
                let _ = self.handle(input);
            }
            return;
        }
        let mut batch = String::new();
        let mut queued: Vec<(u64, Configure)> = Vec::new();
        for input in inputs {
            let (line, n, configure) = self.input_line(&input);
            if !batch.is_empty() && batch.len() + line.len() > BATCH_BYTES {
                self.send(&batch);
                batch.clear();
                for (n, configure) in queued.drain(..) {
                    let _ = self.finish(n, configure);
                }
            }
            batch.push_str(&line);
            queued.push((n, configure));
        }
        if !batch.is_empty() {
            self.send(&batch);
            for (n, configure) in queued {
                let _ = self.finish(n, configure);
            }
        }
    }

    fn history(&self) -> &[SharedMessage] {
        &self.history
    }

    fn pending_operation(&self) -> PendingOperation {
        self.pending.clone()
    }

    fn is_idle(&self) -> bool {
        self.idle
    }

    fn state_bytes(&self) -> Vec<u8> {
        let state = match self.digest() {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        // The engine's own digest, plus the mirror's history by identity: a history
        // change shows even if the engine's digest leaves the history out.
        let mut b = Vec::with_capacity(state.len() + 8 * (self.history.len() + 1));
        b.extend_from_slice(state.as_bytes());
        b.extend_from_slice(&(self.history.len() as u64).to_le_bytes());
        for m in &self.history {
            b.extend_from_slice(&(Arc::as_ptr(m) as usize as u64).to_le_bytes());
        }
        b
    }

    fn fixed_texts(&self) -> Vec<String> {
        self.fixed_texts.clone()
    }

    fn request_body(&self, op: OperationId) -> Option<Arc<str>> {
        self.sent
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, body)| Arc::clone(body))
    }
}

/// The `request` of every `send` output in a reply line, in order, as the raw bytes
/// the engine wrote (read by the judge's own reader, never parsed and re-written).
/// The line has already been parsed whole, so each object is read only as far as
/// the member wanted: the history after `outputs` is often most of the line.
fn sent_bodies(line: &str) -> Result<Vec<Arc<str>>, String> {
    use crate::judge::body;
    let Some(outputs) = body::first_member(line, "outputs")? else {
        return Ok(Vec::new());
    };
    let mut bodies = Vec::new();
    for output in body::elements(outputs)? {
        let tag = body::first_member(output, "output")?;
        if tag
            .and_then(|t| serde_json::from_str::<String>(t).ok())
            .as_deref()
            != Some("send")
        {
            continue;
        }
        let request =
            body::first_member(output, "request")?.ok_or("a `send` without a `request`")?;
        bodies.push(Arc::from(request));
    }
    Ok(bodies)
}
