//! A template: your own engine under turnsim, as a binary with `run`, `replay`,
//! `shrink`, `options` and `check`.
//!
//! To start from it: `cargo new my-engine-sim`, add `turnsim` and `turnsim-core` as
//! dependencies (the same version or path), copy this file to `src/main.rs`, and
//! replace `MyEngine`'s body with an adapter around your runtime's turn logic. Then
//! `cargo run --release -- run --seeds 0..10000` tests it, and a failure prints the
//! `replay` and `shrink` commands of that same binary.
//!
//! What the adapter must give (docs/own-engine.md says why each is needed): inputs in
//! and outputs out with no I/O of its own; the bytes it persists and a `restore` from
//! them; its history; its pending operation and idle flag. `state_bytes` has a
//! default built from those; override it, as here, when the engine keeps more.
//!
//! The checks judge properties every correct engine keeps. Where your engine's own
//! wording differs from the reference engine's (its interruption markers, notes,
//! resume prompts), give turnsim a conventions profile for it: see
//! docs/invariants.md, "Conventions and profiles".
//!
//! Here the "own" engine is an adapter around `turnsim_core::Session` that also
//! counts the inputs it acted on, standing in for yours; `my-engine-planted` is the
//! same engine with one planted bug (it counts stale deliveries too), there to show
//! a failure found, replayed and shrunk. Delete it in your crate.
//! `cargo run --release -p turnsim --example own_engine -- run --engine
//! my-engine-planted --seeds 0..500` finds it.

use turnsim::{Engine, EngineFactory, observable_state_bytes};
use turnsim_core::{Input, Output, PendingOperation, Session, SessionConfig, SharedMessage};

struct MyEngine {
    inner: Session,
    inputs_acted_on: u64,
    planted_bug: bool,
}

impl Engine for MyEngine {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        // Your engine: map `input` to your runtime's events and its effects to `Output`s.
        let outputs = self.inner.handle(input).map_err(|e| e.to_string())?;
        // A stale delivery (a completion for an operation that is over) must leave the
        // engine unchanged, and `stale_noop` compares `state_bytes` around it. The
        // planted bug counts it anyway.
        if !outputs.is_empty() || self.planted_bug {
            self.inputs_acted_on += 1;
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
        // What history, pending operation and idle flag show, plus the counter they
        // do not show: a change to it must be visible too.
        let mut b = observable_state_bytes(self);
        b.extend_from_slice(&self.inputs_acted_on.to_le_bytes());
        b
    }

    fn fixed_texts(&self) -> Vec<String> {
        // The user-role texts your engine writes besides markers and notes.
        Engine::fixed_texts(&self.inner)
    }
}

struct MyFactory {
    planted_bug: bool,
}

impl EngineFactory for MyFactory {
    /// Recorded in every scenario file and resolved on replay: keep it stable.
    fn name(&self) -> &str {
        if self.planted_bug {
            "my-engine-planted"
        } else {
            "my-engine"
        }
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        Box::new(MyEngine {
            inner: Session::new(config),
            inputs_acted_on: 0,
            planted_bug: self.planted_bug,
        })
    }

    /// After a simulated crash: rebuild from exactly the bytes your engine persisted
    /// (its `Output::Persist`s, minus any `Output::TruncateLog`), nothing else.
    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let (inner, outputs) = Session::restore(config, log).map_err(|e| e.to_string())?;
        let engine = MyEngine {
            inner,
            inputs_acted_on: 0,
            planted_bug: self.planted_bug,
        };
        Ok((Box::new(engine), outputs))
    }
}

fn main() {
    // With one engine, `turnsim::cli::main_for(MyFactory { planted_bug: false })`
    // is the whole of `main`.
    turnsim::cli::App::new()
        .engine(MyFactory { planted_bug: false })
        .engine(MyFactory { planted_bug: true })
        .main()
}
