//! The provided `Engine::state_bytes` (`observable_state_bytes`): an engine that
//! exposes only history, pending operation and idle flag gets a state encoding that
//! sees every change those show, and passes the simulator as the reference does.

use turnsim::testing::world::sim_config;
use turnsim::{Batch, Summary, run_batch};
use turnsim::{Engine, EngineFactory, Reference, observable_state_bytes};
use turnsim_core::{Input, Output, PendingOperation, Session, SessionConfig, SharedMessage};

/// The reference engine behind an adapter that does not write `state_bytes`.
struct Plain(Session);

impl Engine for Plain {
    fn handle(&mut self, input: Input) -> Result<Vec<Output>, String> {
        self.0.handle(input).map_err(|e| e.to_string())
    }
    fn history(&self) -> &[SharedMessage] {
        self.0.history()
    }
    fn pending_operation(&self) -> PendingOperation {
        self.0.pending_operation()
    }
    fn is_idle(&self) -> bool {
        self.0.is_idle()
    }
    fn fixed_texts(&self) -> Vec<String> {
        Engine::fixed_texts(&self.0)
    }
}

struct PlainFactory;

impl EngineFactory for PlainFactory {
    fn name(&self) -> &str {
        "plain"
    }
    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        Box::new(Plain(Session::new(config)))
    }
    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        let (s, outputs) = Session::restore(config, log).map_err(|e| e.to_string())?;
        Ok((Box::new(Plain(s)), outputs))
    }

    // The reference session's own log, so it gets the same hostile inputs.
    fn writes_reference_log(&self) -> bool {
        true
    }
}

fn batch(factory: &dyn EngineFactory) -> Summary {
    run_batch(&Batch {
        factory,
        seeds: (0..500).collect(),
        jobs: 2,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("the batch runs")
    .0
}

#[test]
fn an_engine_without_its_own_state_bytes_passes_as_the_reference_does() {
    let plain = batch(&PlainFactory);
    let reference = batch(&Reference);
    assert_eq!(plain.failures, Vec::new());
    assert_eq!(
        (plain.steps, plain.events, plain.digest),
        (reference.steps, reference.events, reference.digest)
    );
    assert!(
        plain.checks.get("stale_noop").copied().unwrap_or(0) > 0,
        "the default bytes were compared"
    );
}

#[test]
fn observable_state_bytes_change_with_what_the_engine_shows_and_only_then() {
    let mut a = Plain(Session::new(sim_config()));
    let b = Plain(Session::new(sim_config()));
    let fresh = a.state_bytes();
    assert_eq!(fresh, b.state_bytes(), "equal states, equal bytes");
    assert_eq!(fresh, observable_state_bytes(&a));

    let prompt = |text: &str| Input::Prompt {
        text: text.into(),
        now: "2026-01-01T00:00:00Z".into(),
    };
    let outputs = a
        .handle(prompt("fix the build"))
        .expect("idle takes a prompt");
    assert!(!outputs.is_empty());
    let busy = a.state_bytes();
    assert_ne!(busy, fresh, "a new message and a pending request show");
    assert!(!a.is_idle());

    assert!(a.handle(prompt("and the tests")).is_err(), "busy refuses");
    assert_eq!(a.state_bytes(), busy, "a refused input changes nothing");
}
