//! Engines in any language: a subprocess that speaks engine protocol v1 or v2
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
//!   touch the pipe. Under v2 the digest is left out of the replies and
//!   `state_bytes` asks for it (`digest`), since the world compares states around a
//!   few deliveries only, and a twin catching up sends its inputs in batches.
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

pub mod affinity;
mod mirror;
pub(crate) mod process;
pub(crate) mod serve;
pub(crate) mod tagged;
pub(crate) mod wire;

// The façade: an engine written in Rust serving itself over the stdio protocol.
pub use mirror::StdioEngine;
pub use serve::{serve, serve_version};

use crate::engine::{Engine, EngineFactory};
use mirror::ReplyTo;
use process::Process;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use turnsim_core::{Input, Output, PendingOperation, SessionConfig, SharedMessage};
use wire::Checked;

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
    /// The hello said the engine serves `import`.
    imports: bool,
    /// The protocol version the first process's hello announced.
    protocol: u32,
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
        StdioFactory::with_env_timeout(command, env, DEFAULT_TIMEOUT)
    }

    /// [`StdioFactory::with_env`] with the per-request timeout already set, so the
    /// first process's hello is held to it too: an interpreter that imports a large
    /// framework can take longer than the default to say hello on a loaded machine.
    pub fn with_env_timeout(
        command: &str,
        env: Vec<(String, String)>,
        timeout: Duration,
    ) -> Result<StdioFactory, String> {
        let mut f = StdioFactory {
            command: command.to_string(),
            name: String::new(),
            env,
            timeout,
            fresh: false,
            pool: Arc::default(),
            reference_log: false,
            imports: false,
            protocol: wire::OLDEST_PROTOCOL,
        };
        let (process, hello) = f.start()?;
        f.name = hello.engine;
        f.protocol = process.protocol;
        f.reference_log = hello.log.as_deref() == Some(wire::REFERENCE_LOG);
        f.imports = hello.accepts.iter().any(|a| a == wire::IMPORT);
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
                        // Pooled by another worker, maybe on another CPU: a new
                        // process inherits its spawner's CPU, a pooled one is moved.
                        affinity::follow(p.pid());
                        return Ok(p);
                    }
                    Some(_) => continue,
                    None => break,
                }
            }
        }
        self.start().map(|(p, _)| p)
    }

    /// Sets the per-request timeout; an engine slower than this is a hang.
    pub fn timeout(mut self, timeout: Duration) -> StdioFactory {
        self.timeout = timeout;
        self
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    /// The protocol version the engine answered in (1 or 2).
    pub fn protocol(&self) -> u32 {
        self.protocol
    }

    fn start(&self) -> Result<(Process, wire::Hello), String> {
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
        if !(wire::OLDEST_PROTOCOL..=wire::PROTOCOL_VERSION).contains(&hello.protocol) {
            return Err(p.failure(&format!(
                "the engine speaks protocol {}; this turnsim speaks protocols {} to {}",
                hello.protocol,
                wire::OLDEST_PROTOCOL,
                wire::PROTOCOL_VERSION
            )));
        }
        p.protocol = hello.protocol;
        Ok((p, hello))
    }

    /// Starts a process and sends it `create`, `restore` or `import`.
    fn open(
        &self,
        config: &SessionConfig,
        request: &str,
        what: &str,
    ) -> Result<(StdioEngine, Vec<Output>), Opened> {
        let process = self.take().map_err(Opened::Broken)?;
        let mut engine = StdioEngine::new(
            process,
            (!self.fresh).then(|| self.pool.clone()),
            (config.system.clone(), config.tools.clone()),
        );
        match engine.request(request, what) {
            Ok(Checked::Done {
                outputs,
                snapshot,
                fixed_texts,
            }) => {
                engine.set_fixed_texts(fixed_texts);
                let outputs = engine.apply(snapshot, outputs, ReplyTo::Open(what));
                outputs.map(|o| (engine, o)).map_err(Opened::Broken)
            }
            // The process answered in protocol: it can serve another engine.
            // (A refused `import` is answered the same way.)
            Ok(Checked::Failed { why }) => Err(Opened::Refused(why)),
            Ok(Checked::Refused { .. } | Checked::Digest { .. }) => {
                Err(Opened::Broken("unreachable refusal".into()))
            }
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

    fn imports(&self) -> bool {
        self.imports
    }

    fn import(
        &self,
        config: SessionConfig,
        history: Vec<turnsim_core::Message>,
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        if !self.imports {
            // Never sent to an engine that did not offer it: a v1 engine would take an
            // unknown request as a protocol error.
            return Err(format!(
                "the engine {} does not import histories",
                self.name
            ));
        }
        let line = wire::import_line(&config, &history);
        match self.open(&config, &line, "import") {
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
