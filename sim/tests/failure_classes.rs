//! Each failure class is reported as such: an engine that panics, an engine that
//! never ends a turn, and an engine whose runs differ between two tries of one seed.

use std::sync::atomic::{AtomicU64, Ordering};
use turnsim::testing::report::{exit, exit_code};
use turnsim::testing::world::FailureClass;
use turnsim::{Engine, EngineFactory};
use turnsim::{check_determinism, run_seed};
use turnsim_core::{Input, Output, PendingOperation, Session, SessionConfig, SharedMessage};

#[derive(Clone, Copy)]
enum Flaw {
    /// Panics on the first tool result.
    Panics,
    /// Ignores every cancel, so a hung stream never ends.
    IgnoresCancel,
    /// Adds a process-wide counter to its first prompt, so two runs differ.
    Nondeterministic,
}

static RUNS: AtomicU64 = AtomicU64::new(0);

struct Flawed {
    flaw: Flaw,
    inner: Session,
}

impl Engine for Flawed {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        match (self.flaw, &input) {
            (Flaw::Panics, Input::ToolResult { .. }) => panic!("planted panic"),
            (Flaw::IgnoresCancel, Input::Cancel { .. }) => return Ok(Vec::new()),
            (Flaw::Nondeterministic, Input::Prompt { text, now })
                if self.inner.history().is_empty() =>
            {
                let n = RUNS.fetch_add(1, Ordering::Relaxed);
                let input = Input::Prompt {
                    text: text.clone(),
                    now: format!("{now} run {n}"),
                };
                return self.inner.handle(input).map_err(|e| e.to_string());
            }
            _ => {}
        }
        self.inner.handle(input).map_err(|e| e.to_string())
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

struct Factory(Flaw);

impl EngineFactory for Factory {
    fn name(&self) -> &str {
        "flawed"
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
        let (inner, out) = Session::restore(config, log).map_err(|e| e.to_string())?;
        Ok((
            Box::new(Flawed {
                flaw: self.0,
                inner,
            }),
            out,
        ))
    }
}

fn first_failure(
    f: &Factory,
    seeds: std::ops::Range<u64>,
) -> (u64, turnsim::testing::checkers::Violation) {
    for seed in seeds {
        if let Some(v) = run_seed(f, seed, false).violation {
            return (seed, v);
        }
    }
    panic!("no seed failed");
}

#[test]
fn an_engine_panic_is_its_own_failure_class_with_exit_code_4() {
    let (_, v) = first_failure(&Factory(Flaw::Panics), 0..200);
    assert_eq!(v.invariant, "engine_panic");
    assert_eq!(v.message, "the engine panicked: planted panic");
    assert_eq!(
        exit_code(Some(FailureClass::of(v.invariant))),
        exit::ENGINE_PANIC
    );
}

#[test]
fn a_turn_that_never_ends_is_a_liveness_failure_not_a_hung_harness() {
    let (seed, v) = first_failure(&Factory(Flaw::IgnoresCancel), 0..500);
    assert_eq!(v.invariant, "liveness", "seed {seed}: {}", v.message);
    assert_eq!(
        exit_code(Some(FailureClass::of(v.invariant))),
        exit::LIVENESS
    );
}

#[test]
fn a_nondeterministic_engine_is_caught_at_its_first_differing_step() {
    let f = Factory(Flaw::Nondeterministic);
    let first = run_seed(&f, 5, false);
    let v = check_determinism(&f, &first).expect("two runs differ");
    assert_eq!(v.invariant, "determinism");
    assert_eq!(v.step, 1, "{}", v.message);
    assert_eq!(
        exit_code(Some(FailureClass::of(v.invariant))),
        exit::NONDETERMINISM
    );
}
