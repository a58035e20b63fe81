//! The one interface the simulator drives: the sans-IO surface of
//! [`turnsim_core::Session`].
//!
//! Guarantee: the simulator touches an engine only through [`Engine`] and
//! [`EngineFactory`], so any engine that speaks `Input`/`Output` can be tested, and the
//! reference engine gets no privileged access the user's engine would not. An engine
//! never sees the world's clock or RNG: everything it learns arrives as an input.

mod judged;
use crate::conventions::{Conventions, Selection};
pub use judged::Judged;
use turnsim_core::{
    Input, Message, Output, PendingOperation, Session, SessionConfig, SharedMessage,
};

/// An engine under test.
pub trait Engine {
    /// Handles one input; an `Err` is a refused input (e.g. busy), which must leave
    /// the engine unchanged.
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String>;
    /// Handles `inputs` in order for a caller that keeps only the engine they leave
    /// (a twin catching up with the live engine): each is handled as by `handle`,
    /// and the outputs and refusals are dropped. Provided: one `handle` each; a
    /// subprocess engine speaking protocol 2 sends them in batches, one round trip
    /// per batch instead of per input.
    fn replay(&mut self, inputs: &mut dyn Iterator<Item = Input>) {
        for input in inputs {
            let _ = self.handle(input);
        }
    }
    /// The history the engine holds now.
    fn history(&self) -> &[SharedMessage];
    /// The operation outstanding now, as the engine's durable intent would say.
    fn pending_operation(&self) -> PendingOperation;
    /// True between turns.
    fn is_idle(&self) -> bool;
    /// The engine's complete state as bytes; equal bytes, equal states. Compared
    /// around stale deliveries and refused inputs, within one run only, so an engine
    /// may stand for a message by its identity (e.g. its `Arc`'s address) instead of
    /// its contents when it never rebuilds messages.
    ///
    /// Provided: [`observable_state_bytes`], what the other methods show. Override it
    /// to add state they do not show (counters, retry bookkeeping, a queued input):
    /// `stale_noop`, which compares them around stale deliveries and refused inputs,
    /// sees only a change the bytes carry.
    fn state_bytes(&self) -> Vec<u8> {
        observable_state_bytes(self)
    }
    /// User-role texts the engine authors besides markers and notes (e.g. a
    /// truncation resume prompt); `note_exact` accepts exactly these.
    fn fixed_texts(&self) -> Vec<String> {
        Vec::new()
    }
    /// The bytes of the request it gave as `op` in the outputs it returned last, when
    /// it wrote them itself: a subprocess engine's request JSON as it came down the
    /// pipe. The provider's prompt cache keys on bytes, so this is what
    /// `prefix_stable` judges. Provided: `None`, an engine that hands over a
    /// [`turnsim_core::Request`], whose wire bytes are what core's serializer writes
    /// for it ([`turnsim_core::Request::to_json`]).
    fn request_body(&self, op: turnsim_core::OperationId) -> Option<std::sync::Arc<str>> {
        let _ = op;
        None
    }
}

/// The state every engine shows through [`Engine`]: each history message by content
/// (length-prefixed JSON, so no two histories encode alike), the pending operation
/// and the idle flag. A stand-in for [`Engine::state_bytes`] for an engine with no
/// encoding of its own; it misses whatever the engine keeps beyond these.
pub fn observable_state_bytes<E: Engine + ?Sized>(engine: &E) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut field = |b: Vec<u8>| {
        bytes.extend_from_slice(&(b.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&b);
    };
    let history = engine.history();
    field((history.len() as u64).to_le_bytes().to_vec());
    for m in history {
        // A `Message` is plain data (strings, numbers, JSON values): it encodes.
        field(serde_json::to_vec(&**m).unwrap_or_default());
    }
    field(serde_json::to_vec(&engine.pending_operation()).unwrap_or_default());
    field(vec![u8::from(engine.is_idle())]);
    bytes
}

/// Makes engines: fresh, or restored from the bytes the log kept after a crash.
pub trait EngineFactory: Sync {
    /// A short name used in reports and scenario files.
    fn name(&self) -> &str;
    fn create(&self, config: SessionConfig) -> Box<dyn Engine>;
    /// Restores from a log; the outputs are carried out before any new input.
    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String>;
    /// The engine's conventions (its wording and layout) that convention checkers
    /// hold it to; by default none, so only generic properties are judged.
    fn conventions(&self) -> Conventions {
        Conventions::generic()
    }
    /// The checkers that judge its runs; by default all of them.
    fn selection(&self) -> Selection {
        Selection::all()
    }
    /// Whether its durable log is the reference engine's record format. Only then are
    /// the log-borne hostile inputs (records of that format appended to its log)
    /// handed: to an engine with a log of its own they are foreign bytes it drops as a
    /// torn tail, which tests nothing, so the run counts them as not applicable.
    fn writes_reference_log(&self) -> bool {
        false
    }
    /// Whether it takes a history from outside through [`EngineFactory::import`] (a
    /// subprocess engine says so in its hello). Only then are the hostile inputs that
    /// need a log of the reference format handed to an engine of another log as
    /// imported histories; an engine that does not import counts them as not
    /// applicable, never as passes.
    fn imports(&self) -> bool {
        false
    }
    /// A new engine holding `history`, a conversation the host brought from
    /// elsewhere: refused (`Err`, the reason) or accepted, repaired as the engine
    /// sees fit; it must never hold a history the API rejects. The outputs are carried
    /// out before any new input.
    fn import(
        &self,
        _config: SessionConfig,
        _history: Vec<Message>,
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        Err(format!(
            "the engine {} does not import histories",
            self.name()
        ))
    }
}

impl Engine for Session {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        Session::handle(self, input).map_err(|e| e.to_string())
    }

    fn history(&self) -> &[SharedMessage] {
        Session::history(self)
    }

    fn pending_operation(&self) -> PendingOperation {
        Session::pending_operation(self)
    }

    fn is_idle(&self) -> bool {
        Session::is_idle(self)
    }

    fn state_bytes(&self) -> Vec<u8> {
        // Identity, not content, for the history: compared within one run only, and
        // this engine never rebuilds a message, so any change shows.
        self.fingerprint()
    }

    fn fixed_texts(&self) -> Vec<String> {
        vec![
            turnsim_core::state::TRUNCATION_RESUME_TEXT.to_string(),
            turnsim_core::request::COMPACTION_NOTICE.to_string(),
        ]
    }
}

/// The reference engine, `turnsim-core`'s `Session`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reference;

impl EngineFactory for Reference {
    fn writes_reference_log(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        "reference"
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        Box::new(Session::new(config))
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let (session, outputs) = Session::restore(config, log).map_err(|e| e.to_string())?;
        Ok((Box::new(session), outputs))
    }

    fn imports(&self) -> bool {
        true
    }

    /// The reference engine takes a whole history only as a log: a configure record,
    /// then the history appended, restored as after a crash (so it is held to the
    /// same validation a restore applies).
    fn import(
        &self,
        config: SessionConfig,
        history: Vec<Message>,
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let mut log = turnsim_core::encode_record(&turnsim_core::Record::Configure {
            system: config.system.clone(),
            tools: config.tools.clone(),
            thinking: None,
        });
        log.extend(turnsim_core::encode_record(&turnsim_core::Record::Append {
            messages: history,
            pending: PendingOperation::None,
        }));
        self.restore(config, &log)
    }

    fn conventions(&self) -> Conventions {
        Conventions::reference()
    }
}
