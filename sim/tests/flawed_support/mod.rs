//! The reference engine wrapped so that it misbehaves in one planted way, for the
//! tests that need a failing engine (failure classes, exit codes, the shrinker).
//!
//! Guarantee: everything but the flaw is the reference session's own. History,
//! pending operation, idle flag, state bytes and fixed texts are read from the wrapped
//! session, and a restore reads the log the flaw lets it read, so a failure a test
//! provokes comes from the flaw and from nothing else in the wrapper.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use turnsim::{Engine, EngineFactory};
use turnsim_core::{Input, Output, PendingOperation, Session, SessionConfig, SharedMessage};

/// One way of misbehaving.
pub trait Misbehaviour: Copy + Send + Sync + 'static {
    /// The name the factory reports.
    const NAME: &'static str;
    /// Handles `input` on behalf of `inner`, misbehaving where the flaw says.
    fn handle(self, inner: &mut Session, input: Input) -> Result<Vec<Output>, String>;
    /// The part of a log a restore reads: all of it unless the flaw drops some.
    fn log(self, log: &[u8]) -> &[u8] {
        log
    }
}

struct Flawed<M> {
    flaw: M,
    inner: Session,
}

impl<M: Misbehaviour> Engine for Flawed<M> {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        self.flaw.handle(&mut self.inner, input)
    }

    fn history(&self) -> &[SharedMessage] {
        self.inner.history()
    }

    fn pending_operation(&self) -> PendingOperation {
        self.inner.pending_operation()
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    fn state_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }

    fn fixed_texts(&self) -> Vec<String> {
        Engine::fixed_texts(&self.inner)
    }
}

/// A factory of engines with one flaw.
#[derive(Clone, Copy, Debug)]
pub struct Factory<M>(pub M);

impl<M: Misbehaviour> EngineFactory for Factory<M> {
    fn name(&self) -> &str {
        M::NAME
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        Box::new(Flawed {
            flaw: self.0,
            inner: Session::new(config),
        })
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let (inner, outputs) =
            Session::restore(config, self.0.log(log)).map_err(|e| e.to_string())?;
        Ok((
            Box::new(Flawed {
                flaw: self.0,
                inner,
            }),
            outputs,
        ))
    }
}

/// The flaws of the failure classes: one per class a run can end in.
#[derive(Clone, Copy, Debug)]
pub enum Flaw {
    /// Panics on the first tool result.
    Panics,
    /// Refuses every cancel, so a hung stream never ends. (An engine that accepted a
    /// cancel and aborted nothing would be found first by `quiet_after_cancel`.)
    IgnoresCancel,
    /// Adds a process-wide counter to its first prompt, so two runs differ.
    Nondeterministic,
}

static RUNS: AtomicU64 = AtomicU64::new(0);

impl Misbehaviour for Flaw {
    const NAME: &'static str = "flawed";

    fn handle(self, inner: &mut Session, input: Input) -> Result<Vec<Output>, String> {
        let input = match (self, input) {
            (Flaw::Panics, Input::ToolResult { .. }) => panic!("planted panic"),
            (Flaw::IgnoresCancel, Input::Cancel { .. }) => {
                return Err("this engine refuses every cancel".into());
            }
            (Flaw::Nondeterministic, Input::Prompt { text, now }) if inner.history().is_empty() => {
                let n = RUNS.fetch_add(1, Ordering::Relaxed);
                Input::Prompt {
                    text,
                    now: format!("{now} run {n}"),
                }
            }
            (_, input) => input,
        };
        inner.handle(input).map_err(|e| e.to_string())
    }
}
