//! What a traced run keeps besides its trace lines, for pictures of it: every request
//! the engine sent, every write to the durable log, and the engine's history at the
//! start of the last step and at the end.
//!
//! Guarantee: the recording is filled only when the run keeps a trace, reads what the
//! world already holds (a request is recorded by cloning its `Arc`s, never by
//! serializing it) and draws no decision and feeds nothing into the trace digest, so a
//! traced run is the same run, step for step, as an untraced one. Each entry carries
//! the number of trace lines written before it, which places it among those lines
//! exactly, without matching any text.

use super::World;
use turnsim_core::{OperationId, Request, SharedMessage};

/// One request the engine sent.
#[derive(Clone, Debug)]
pub struct SentRequest {
    pub step: u64,
    /// Virtual milliseconds.
    pub t: u64,
    pub op: OperationId,
    /// Trace lines written before this request's own line (`engine sends …`), so the
    /// line is `trace[line]`.
    pub line: usize,
    pub request: Request,
}

/// One append to the durable log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogWrite {
    pub step: u64,
    pub t: u64,
    /// Trace lines written before it.
    pub line: usize,
    pub bytes: usize,
    /// The log's length after the append.
    pub len: usize,
}

/// Everything a traced run records for its picture ([`super::RunOutcome::recording`]).
#[derive(Clone, Debug, Default)]
pub struct Recording {
    pub requests: Vec<SentRequest>,
    pub log_writes: Vec<LogWrite>,
    /// The step whose start `history_before` was taken at (0: before any step).
    pub before_step: u64,
    /// The engine's history when the last step began.
    pub history_before: Vec<SharedMessage>,
    /// The engine's history when the run ended (at the violation, when there is one).
    pub history_after: Vec<SharedMessage>,
}

impl World<'_> {
    fn lines(&self) -> usize {
        self.trace.as_ref().map_or(0, Vec::len)
    }

    /// At the start of a step, after its number is counted.
    pub(super) fn record_step_start(&mut self) {
        if self.recording.is_some() {
            let history = self.engine.history().to_vec();
            let step = self.steps;
            if let Some(r) = &mut self.recording {
                r.before_step = step;
                r.history_before = history;
            }
        }
    }

    /// Just before the request's trace line is written.
    pub(super) fn record_request(&mut self, op: OperationId, request: &Request) {
        let (step, t, line) = (self.steps, self.sched.now(), self.lines());
        if let Some(r) = &mut self.recording {
            r.requests.push(SentRequest {
                step,
                t,
                op,
                line,
                request: request.clone(),
            });
        }
    }

    /// After an append of `bytes` bytes and its sync.
    pub(super) fn record_log_write(&mut self, bytes: usize) {
        let (step, t, line, len) = (
            self.steps,
            self.sched.now(),
            self.lines(),
            self.disk.durable().len(),
        );
        if let Some(r) = &mut self.recording {
            r.log_writes.push(LogWrite {
                step,
                t,
                line,
                bytes,
                len,
            });
        }
    }

    /// When the run ends.
    pub(super) fn record_end(&mut self) -> Recording {
        match self.recording.take() {
            Some(mut r) => {
                r.history_after = self.engine.history().to_vec();
                r
            }
            None => Recording::default(),
        }
    }
}
