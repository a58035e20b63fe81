//! Property suite for the turn state machine (docs/spec.md §6), as a `proptest-state-machine`
//! reference model.
//!
//! Guarantee kept: `TurnState` behaves like a small model of the spec (phase,
//! outstanding operation, history length and shape, next operation id, usage) under
//! any sequence of calls drawn from the current state, including stale, duplicate and
//! never-issued completions, calls while busy, malformed responses, rewinds, context
//! replacements and restarts. After every transition: the same phase, outstanding
//! operation, history length and next id as the model; every call the model says must
//! fail fails with the model's error and leaves `to_bytes()` identical; and the history
//! is valid (allowing a pending batch, and fully valid when idle). Why: a runtime acts on
//! the effects and trusts the history; one transition that mutates on a refused call,
//! reuses an id or leaves the history unsendable breaks every later request.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};
use std::sync::Arc;
use turnsim_core::strategies::{cancel_cause, text, tool_name, valid_history};
use turnsim_core::{
    Block, CancelCause, Effect, FinishReason, GenerationOutput, HistoryError, InterruptReason,
    Message, OperationId, PendingOperation, Role, SharedMessage, StateError, StopReason,
    ToolOutcome, TurnState, Usage, is_marker_message, recover_checkpoint, validate_history,
    validate_history_allowing_pending_tools,
};

mod choices;
mod model;
mod reference;
mod sut;

use choices::*;
use model::*;
use reference::*;
use sut::*;

prop_state_machine! {
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/proptest-regressions/prop_state_machine.txt"
        )))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_turn_state_machine_follows_its_reference_model(sequential 1..48 => TurnStateTest);
}
