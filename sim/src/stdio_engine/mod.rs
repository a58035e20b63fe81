//! Engines in any language: a subprocess that speaks engine protocol v1
//! (`docs/engine-protocol.md`) over stdin/stdout, driven through the same
//! [`Engine`]/[`EngineFactory`] interface as a Rust engine.
//!
//! Guarantees:
//! - Deterministic: the bytes sent to the engine depend only on the inputs the world
//!   delivers, and everything the world sees (outputs, history, pending operation,
//!   state) comes from the engine's replies; so the same seed and the same engine
//!   build give the same run digest. The history is mirrored from deltas: a message
//!   the engine keeps stays the same `Arc` here, so request hashing and the
//!   append-only checks see exactly what they see for an in-process engine.
//! - One round trip per world call: the reply to each input carries the outputs, the
//!   history delta, the pending operation, the idle flag and the engine's state
//!   digest, so `history`, `pending_operation`, `is_idle` and `state_bytes` never
//!   touch the pipe.
//! - An engine that misbehaves fails the run, never the harness: a line that is not
//!   the expected reply, a dead process or a reply later than the timeout panics with
//!   an error naming the line, the offending JSON, what was expected and the engine's
//!   stderr; the world turns that panic into the run's `engine_panic` violation.
//! - Nothing survives a simulated crash but the log. An engine that breaks the
//!   protocol or hangs is killed. A healthy engine's process, once the world drops
//!   the engine, is kept for the next `create`/`restore`, which by the protocol
//!   replaces everything the process held (starting an interpreter costs more than a
//!   whole run); [`StdioFactory::fresh_processes`] starts a new process for every
//!   engine instead, for an engine that cannot honour that rule.

pub(crate) mod base64;
pub(crate) mod process;
pub(crate) mod serve;
pub(crate) mod tagged;
pub(crate) mod wire;

// The façade: an engine written in Rust serving itself over the stdio protocol.
pub use serve::serve;

use crate::engine::{Engine, EngineFactory};
use process::Process;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnsim_core::{
    Input, Message, Output, PendingOperation, Request, SessionConfig, SharedMessage, ToolSpec,
};
use wire::{Checked, Reply, Snapshot, WireMessages, WireOutput};

/// The default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// Processes kept for reuse, at most this many.
const POOL: usize = 16;

type Pool = Arc<Mutex<Vec<Process>>>;

/// Makes engines by starting `command`.
pub struct StdioFactory {
    command: String,
    name: String,
    env: Vec<(String, String)>,
    timeout: Duration,
    fresh: bool,
    pool: Pool,
    /// The hello said the log is the reference engine's record format.
    reference_log: bool,
}

impl std::fmt::Debug for StdioFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioFactory")
            .field("command", &self.command)
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .field("fresh", &self.fresh)
            .finish()
    }
}

impl StdioFactory {
    /// Starts `command` once to read its hello (name and protocol version), so a
    /// command that is not an engine fails here, before any run.
    pub fn new(command: &str) -> Result<StdioFactory, String> {
        StdioFactory::with_env(command, Vec::new())
    }

    /// [`StdioFactory::new`] with extra environment variables for every process
    /// (e.g. a flag that plants a bug).
    pub fn with_env(command: &str, env: Vec<(String, String)>) -> Result<StdioFactory, String> {
        let mut f = StdioFactory {
            command: command.to_string(),
            name: String::new(),
            env,
            timeout: DEFAULT_TIMEOUT,
            fresh: false,
            pool: Arc::default(),
            reference_log: false,
        };
        let (process, name, log) = f.start()?;
        f.name = name;
        f.reference_log = log.as_deref() == Some(wire::REFERENCE_LOG);
        f.give_back(process);
        Ok(f)
    }

    /// Starts a new process for every engine (never reuses one), as a real crash
    /// would; slower by the interpreter's start-up per engine.
    pub fn fresh_processes(mut self, fresh: bool) -> StdioFactory {
        self.fresh = fresh;
        if fresh {
            self.pool.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        self
    }

    fn give_back(&self, process: Process) {
        if !self.fresh {
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < POOL {
                pool.push(process);
            }
        }
    }

    fn take(&self) -> Result<Process, String> {
        if !self.fresh {
            loop {
                let pooled = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
                match pooled {
                    Some(mut p) if p.is_running() => {
                        p.set_timeout(self.timeout);
                        return Ok(p);
                    }
                    Some(_) => continue,
                    None => break,
                }
            }
        }
        self.start().map(|(p, _, _)| p)
    }

    /// Sets the per-request timeout; an engine slower than this is a hang.
    pub fn timeout(mut self, timeout: Duration) -> StdioFactory {
        self.timeout = timeout;
        self
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    fn start(&self) -> Result<(Process, String, Option<String>), String> {
        let mut p = Process::start(&self.command, &self.env, self.timeout)?;
        let n = p.exchange("", &"the hello line")?;
        let expected =
            "the hello line {\"hello\":\"turnsim-engine\",\"protocol\":1,\"engine\":NAME}";
        let hello: wire::Hello = match serde_json::from_str(p.last_line()) {
            Ok(h) => h,
            Err(e) => return Err(p.bad_line(n, p.last_line(), &format!("{expected} ({e})"))),
        };
        if hello.hello != wire::HELLO || hello.engine.is_empty() {
            return Err(p.bad_line(n, p.last_line(), expected));
        }
        if hello.protocol != wire::PROTOCOL_VERSION {
            return Err(p.failure(&format!(
                "the engine speaks protocol {}; this turnsim speaks protocol {}",
                hello.protocol,
                wire::PROTOCOL_VERSION
            )));
        }
        Ok((p, hello.engine, hello.log))
    }

    /// Starts a process and sends it `create` or `restore`.
    fn open(
        &self,
        config: &SessionConfig,
        request: &str,
        what: &str,
    ) -> Result<(StdioEngine, Vec<Output>), Opened> {
        let process = self.take().map_err(Opened::Broken)?;
        let mut engine = StdioEngine {
            process: Some(process),
            pool: (!self.fresh).then(|| self.pool.clone()),
            healthy: true,
            history: Vec::new(),
            pending: PendingOperation::None,
            idle: true,
            state: String::new(),
            fixed_texts: Vec::new(),
            prefix: (config.system.clone(), config.tools.clone()),
            inputs: 0,
        };
        match engine.request(request, what) {
            Ok(Checked::Done {
                outputs,
                snapshot,
                fixed_texts,
            }) => {
                engine.fixed_texts = fixed_texts;
                let outputs = engine.apply(snapshot, outputs, ReplyTo::Open(what));
                outputs.map(|o| (engine, o)).map_err(Opened::Broken)
            }
            // The process answered in protocol: it can serve another engine.
            Ok(Checked::Failed { why }) => Err(Opened::Refused(why)),
            Ok(Checked::Refused { .. }) => Err(Opened::Broken("unreachable refusal".into())),
            Err(e) => Err(Opened::Broken(e)),
        }
    }
}

enum Opened {
    /// The engine said no (a `restore` it cannot do).
    Refused(String),
    /// The engine broke the protocol or could not start.
    Broken(String),
}

impl StdioFactory {
    /// A fresh engine as its concrete type (for [`StdioEngine::verify`]); an error
    /// instead of a deferred panic when the process cannot start or set up.
    pub fn open_engine(&self, config: SessionConfig) -> Result<StdioEngine, String> {
        let line = wire::create_line(&config);
        match self.open(&config, &line, "create") {
            Ok((engine, _)) => Ok(engine),
            Err(Opened::Refused(why) | Opened::Broken(why)) => Err(why),
        }
    }
}

impl EngineFactory for StdioFactory {
    fn name(&self) -> &str {
        &self.name
    }

    fn writes_reference_log(&self) -> bool {
        self.reference_log
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        let line = wire::create_line(&config);
        match self.open(&config, &line, "create") {
            Ok((engine, _)) => Box::new(engine),
            // `create` cannot fail in the trait; the first input reports it, inside
            // the world's panic guard, as this run's failure.
            Err(Opened::Refused(why) | Opened::Broken(why)) => Box::new(Broken(why)),
        }
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let line = wire::restore_line(&config, log);
        match self.open(&config, &line, "restore") {
            Ok((engine, outputs)) => Ok((Box::new(engine), outputs)),
            Err(Opened::Refused(why)) => Err(why),
            Err(Opened::Broken(why)) => panic!("{why}"),
        }
    }
}

/// An engine whose process could not be started or set up.
struct Broken(String);

impl Engine for Broken {
    fn handle(&mut self, _: Input) -> Result<Vec<Output>, String> {
        panic!("{}", self.0)
    }
    fn history(&self) -> &[SharedMessage] {
        &[]
    }
    fn pending_operation(&self) -> PendingOperation {
        PendingOperation::None
    }
    fn is_idle(&self) -> bool {
        true
    }
    fn state_bytes(&self) -> Vec<u8> {
        Vec::new()
    }
}

/// Which reply an error is about; formatted only when there is an error, since
/// every exchange carries one and almost none fails.
#[derive(Clone, Copy)]
enum ReplyTo<'a> {
    /// `create`, `restore` or `state`.
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

/// One engine process and the harness's mirror of what it reported.
pub struct StdioEngine {
    /// Always `Some` until dropped.
    process: Option<Process>,
    /// Where the process goes back when the engine is dropped healthy.
    pool: Option<Pool>,
    /// False once the engine broke the protocol or hung: its process is killed.
    healthy: bool,
    history: Vec<SharedMessage>,
    pending: PendingOperation,
    idle: bool,
    state: String,
    fixed_texts: Vec<String>,
    /// The system prompt and tools of the last request, shared by every request
    /// until they change, as an in-process engine shares its configuration.
    prefix: (String, Arc<[ToolSpec]>),
    inputs: u64,
}

impl Drop for StdioEngine {
    fn drop(&mut self) {
        if let (Some(process), Some(pool), true) = (self.process.take(), &self.pool, self.healthy) {
            let mut pool = pool.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < POOL {
                pool.push(process);
            }
        }
    }
}

impl StdioEngine {
    fn process(&self) -> &Process {
        self.process
            .as_ref()
            .expect("the process lives as long as the engine")
    }

    /// Sends one request and checks the reply's shape; any error marks the engine
    /// unhealthy.
    fn request(&mut self, line: &str, req: &str) -> Result<Checked, String> {
        let r = self.exchange(line, req);
        if r.is_err() {
            self.healthy = false;
        }
        r
    }

    fn exchange(&mut self, line: &str, req: &str) -> Result<Checked, String> {
        let process = self
            .process
            .as_mut()
            .expect("the process lives as long as the engine");
        let n = process.exchange(line, &ReplyTo::Open(req))?;
        let p = &*process;
        let parsed: Reply = match serde_json::from_str(p.last_line()) {
            Ok(r) => r,
            Err(e) => {
                let expected = format!("a JSON reply to `{req}` ({e})");
                return Err(p.bad_line(n, p.last_line(), &expected));
            }
        };
        parsed
            .check(req)
            .map_err(|expected| p.bad_line(n, p.last_line(), &expected))
    }

    /// Applies a snapshot and converts the outputs; `refused` replies apply only
    /// the snapshot. Any error marks the engine unhealthy.
    fn apply(
        &mut self,
        snapshot: Snapshot,
        outputs: Vec<WireOutput>,
        reply_to: ReplyTo<'_>,
    ) -> Result<Vec<Output>, String> {
        let r = self.apply_inner(snapshot, outputs, reply_to);
        if r.is_err() {
            self.healthy = false;
        }
        r
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
        self.state = state;
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
                WireOutput::Send { op, request } => Output::Send {
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
        if self.prefix.0 != r.system || *self.prefix.1 != *r.tools {
            self.prefix = (r.system, Arc::from(r.tools));
        }
        Ok(Request {
            system: self.prefix.0.clone(),
            tools: self.prefix.1.clone(),
            messages,
            cache: r.cache,
        })
    }

    /// Asks the engine for its whole state (`state` request) and checks that it
    /// matches the mirror; for tests and for debugging an adapter.
    pub fn verify(&mut self) -> Result<(), String> {
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
                    || s.state != self.state
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
}

impl Engine for StdioEngine {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        self.inputs += 1;
        let n = self.inputs;
        let configure = match &input {
            Input::Configure { system, tools } => Some((system.clone(), tools.clone())),
            _ => None,
        };
        let line = wire::input_line(n, &input);
        let checked = match self.request(&line, "input") {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        match checked {
            Checked::Done {
                outputs, snapshot, ..
            } => {
                // An accepted configuration is a new one, shared from here on.
                if let Some((system, tools)) = configure {
                    self.prefix = (system, Arc::from(tools));
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
            Checked::Failed { .. } => panic!("unreachable: `error` in an input reply"),
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
        // The engine's own digest, plus the mirror's history by identity: a history
        // change shows even if the engine's digest leaves the history out.
        let mut b = Vec::with_capacity(self.state.len() + 8 * (self.history.len() + 1));
        b.extend_from_slice(self.state.as_bytes());
        b.extend_from_slice(&(self.history.len() as u64).to_le_bytes());
        for m in &self.history {
            b.extend_from_slice(&(Arc::as_ptr(m) as usize as u64).to_le_bytes());
        }
        b
    }

    fn fixed_texts(&self) -> Vec<String> {
        self.fixed_texts.clone()
    }
}
