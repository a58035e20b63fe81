//! Running the simulator on your own engine.
//!
//! Implement [`Engine`] for an adapter around your runtime's turn logic (inputs in,
//! outputs out, no I/O of its own), and [`EngineFactory`] to create it fresh or restore
//! it from the bytes its log kept. Here the "own" engine is an adapter around
//! `turnsim_core::Session` that also counts the inputs it saw, standing in for yours.

use turnsim::engine::{Engine, EngineFactory};
use turnsim::runner::{Batch, run_batch};
use turnsim_core::{Input, Output, PendingOperation, Session, SessionConfig, SharedMessage};

struct MyEngine {
    inner: Session,
    inputs_seen: u64,
}

impl Engine for MyEngine {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        // Your engine: map `input` to your runtime's events and its effects to `Output`s.
        let outputs = self.inner.handle(input).map_err(|e| e.to_string())?;
        // Count only accepted inputs that did something: a stale delivery must leave
        // the engine unchanged, and `stale_noop` compares `state_bytes` around it.
        if !outputs.is_empty() {
            self.inputs_seen += 1;
        }
        Ok(outputs)
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
        let mut b = self.inner.to_bytes();
        b.extend_from_slice(&self.inputs_seen.to_le_bytes());
        b
    }

    fn fixed_texts(&self) -> Vec<String> {
        Engine::fixed_texts(&self.inner)
    }
}

struct MyFactory;

impl EngineFactory for MyFactory {
    fn name(&self) -> &str {
        "my-engine"
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        Box::new(MyEngine {
            inner: Session::new(config),
            inputs_seen: 0,
        })
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let (inner, outputs) = Session::restore(config, log).map_err(|e| e.to_string())?;
        Ok((
            Box::new(MyEngine {
                inner,
                inputs_seen: 0,
            }),
            outputs,
        ))
    }
}

fn main() {
    let (summary, _) = run_batch(&Batch {
        factory: &MyFactory,
        seeds: (0..2_000).collect(),
        jobs: 2,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("worker threads start");
    println!(
        "{} seeds, {} failures, digest {}",
        summary.seeds,
        summary.failures.len(),
        summary.digest
    );
    for (seed, v) in &summary.failures {
        println!(
            "seed {seed}: {} at step {}: {}",
            v.invariant, v.step, v.message
        );
    }
    if !summary.failures.is_empty() {
        std::process::exit(1);
    }
}
