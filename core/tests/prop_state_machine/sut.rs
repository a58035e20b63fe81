//! The system under test: `TurnState` driven by the model's transitions and compared
//! after each one.
//!
//! Guarantee: after every transition the phase, outstanding operation, history length
//! and next id equal the model's; a refused call leaves `to_bytes()` identical; and the
//! history is valid (allowing a pending batch, fully when idle).

use super::*;

pub(crate) fn refusal_of(e: &StateError) -> Refusal {
    match e {
        StateError::UnexpectedCompletion { op, outstanding } => Refusal::Unexpected {
            op: op.0,
            outstanding: outstanding.map(|o| o.0),
        },
        StateError::Busy { outstanding } => Refusal::Busy(outstanding.0),
        StateError::EmptyHistory => Refusal::EmptyHistory,
        StateError::InvalidResponse(_) => Refusal::InvalidResponse,
        StateError::InvalidContext(_) => Refusal::InvalidContext,
        StateError::InvalidHistory(h) => Refusal::InvalidHistory(h.clone()),
        StateError::RewindOutOfRange { index, len } => Refusal::RewindOutOfRange {
            index: *index,
            len: *len,
        },
    }
}

pub(crate) fn effects_of(effects: &[Effect]) -> Vec<Eff> {
    effects
        .iter()
        .map(|e| match e {
            Effect::Generate { op } => Eff::Generate(op.0),
            Effect::ExecuteTools { op, calls } => {
                Eff::Execute(op.0, calls.iter().map(|c| c.id.clone()).collect())
            }
            Effect::Finished { reason } => Eff::Finished(*reason),
        })
        .collect()
}

pub(crate) fn observed(result: Result<Vec<Effect>, StateError>) -> Expect {
    match result {
        Ok(effects) => Expect::Effects(effects_of(&effects)),
        Err(e) => Expect::Refused(refusal_of(&e)),
    }
}

pub(crate) fn observed_unit(result: Result<(), StateError>) -> Expect {
    match result {
        Ok(()) => Expect::Done,
        Err(e) => Expect::Refused(refusal_of(&e)),
    }
}

pub(crate) struct TurnStateTest;

impl StateMachineTest for TurnStateTest {
    type SystemUnderTest = TurnState;
    type Reference = TurnModel;

    fn init_test(m: &Model) -> TurnState {
        TurnState::new(m.initial.clone())
    }

    fn apply(mut sut: TurnState, m: &Model, t: Transition) -> TurnState {
        let before = sut.to_bytes();
        let got = match t {
            Transition::AppendInput(message) => observed_unit(sut.append_input(message)),
            Transition::Start => observed(sut.start()),
            Transition::Generated { op, output } => {
                observed(sut.generated(OperationId(op), output))
            }
            Transition::GenerationFailed { op } => observed(sut.generation_failed(OperationId(op))),
            Transition::ToolsCompleted {
                op,
                results,
                cancelled,
            } => observed(sut.tools_completed(OperationId(op), results, cancelled)),
            Transition::CancelGeneration { op, partial, cause } => {
                observed(sut.cancel_generation(OperationId(op), partial, cause))
            }
            Transition::CancelTools {
                op,
                finished,
                cause,
            } => observed(sut.cancel_tools(OperationId(op), &finished, cause)),
            Transition::Rewind(index) => observed_unit(sut.rewind(index)),
            Transition::ReplaceContext(context) => {
                observed_unit(sut.replace_context(context.history()))
            }
            Transition::Restart => {
                let pending = sut.pending_operation();
                let history = recover_checkpoint(sut.history().to_vec(), &pending)
                    .unwrap_or_else(|e| panic!("recovery of {pending:?} failed: {e}"));
                let last_op = sut.next_op().0.checked_sub(1).filter(|&o| o > 0);
                sut = TurnState::recovered(history, last_op.map(OperationId));
                Expect::Done
            }
        };
        assert_eq!(got, m.expect, "the engine and the model disagree");
        if let Expect::Refused(_) = got {
            assert!(
                sut.to_bytes() == before,
                "a refused call changed the state:\nbefore {}\nafter  {}",
                String::from_utf8_lossy(&before),
                String::from_utf8_lossy(&sut.to_bytes())
            );
        }
        sut
    }

    fn check_invariants(sut: &TurnState, m: &Model) {
        let phase = match sut.pending_operation() {
            PendingOperation::None => Phase::Idle,
            PendingOperation::Generation { op } => Phase::Generating(op.0),
            PendingOperation::Tools { op, calls } => {
                Phase::Tools(op.0, calls.into_iter().map(|c| c.id).collect())
            }
        };
        assert_eq!(phase, m.phase, "phase and outstanding operation");
        assert_eq!(sut.is_idle(), m.phase == Phase::Idle);
        assert_eq!(sut.next_op(), OperationId(m.next_op), "next operation id");
        assert_eq!(sut.usage(), m.usage, "usage of the run");
        let shapes: Vec<Shape> = sut.history().iter().map(|x| shape_of(x)).collect();
        assert_eq!(shapes.len(), m.messages.len(), "history length");
        assert_eq!(shapes, m.messages, "history shape");
        for message in sut.history() {
            assert_eq!(is_marker_message(message), shape_of(message).marker);
        }
        if let Err(e) = validate_history_allowing_pending_tools(sut.history()) {
            panic!("the history is invalid: {e}");
        }
        if m.phase == Phase::Idle
            && let Err(e) = validate_history(sut.history())
        {
            panic!("the history is invalid while idle: {e}");
        }
    }
}
