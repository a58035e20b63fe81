//! The `state_transitions` body: any sequence of calls on a [`TurnState`].
//!
//! Guarantee: after every call the state is checked against the spec's invariants
//! (history valid, operation ids strictly increasing, an error leaves the state
//! byte-identical), so a transition that breaks one is reported at the call that did.

use super::*;

/// The state-machine invariants that hold after every transition, accepted or not.
fn check_state(st: &TurnState, issued: Option<u64>) {
    match st.pending_operation() {
        PendingOperation::Tools { calls, .. } => {
            if let Err(e) = validate_history_allowing_pending_tools(st.history()) {
                panic!("history invalid while tools run: {e}");
            }
            let asked = st
                .history()
                .last()
                .map(|m| m.tool_calls())
                .unwrap_or_default();
            assert_eq!(
                asked, calls,
                "the pending batch is not the last message's calls"
            );
        }
        PendingOperation::None | PendingOperation::Generation { .. } => {
            if let Err(e) = validate_history(st.history()) {
                panic!("history invalid with no tool batch pending: {e}");
            }
        }
    }
    if let Some(issued) = issued {
        assert!(
            st.next_op().0 > issued,
            "next op {} is not above the last issued {issued}",
            st.next_op()
        );
    }
}

/// The effects of an accepted transition: fresh ids above every id issued before,
/// and the pending operation the last effect announces.
fn check_effects(st: &TurnState, effects: &[Effect], issued: &mut Option<u64>) {
    for effect in effects {
        let op = match effect {
            Effect::Generate { op } | Effect::ExecuteTools { op, .. } => *op,
            Effect::Finished { .. } => continue,
        };
        if let Some(prev) = *issued {
            assert!(
                op.0 > prev,
                "{op} issued after op#{prev}: ids must increase"
            );
        }
        *issued = Some(op.0);
    }
    let expected = match effects.last() {
        Some(Effect::Generate { op }) => PendingOperation::Generation { op: *op },
        Some(Effect::ExecuteTools { op, calls }) => PendingOperation::Tools {
            op: *op,
            calls: calls.clone(),
        },
        Some(Effect::Finished { .. }) | None => PendingOperation::None,
    };
    assert_eq!(
        st.pending_operation(),
        expected,
        "pending after {effects:?}"
    );
}

/// What one step did, for the checks that follow it.
enum Call {
    /// A completion for `op`: rejected as unexpected unless `op` is outstanding, and
    /// append-only when accepted.
    Completion(OperationId, Result<Vec<Effect>, StateError>),
    /// Input that needs an idle state.
    Input(Result<(), StateError>),
    Start(Result<Vec<Effect>, StateError>),
}

/// `state_transitions`: a sequence of calls decoded from the bytes, stale and
/// duplicate ids included, into one [`TurnState`]. After every call: no panic, a
/// rejected call leaves the serialized state unchanged, ids strictly increase, an
/// accepted completion only appends, and the history stays valid.
pub fn state_transitions(data: &[u8]) {
    drawn(transitions(&mut Gen::new(data)));
}

fn transitions(g: &mut Gen<'_>) -> Drawn<()> {
    let mut st = TurnState::default().with_max_truncated_resumes(g.below(4)? as u32);
    let mut issued: Option<u64> = None;
    for _ in 0..64 {
        if g.u.is_empty() {
            break;
        }
        let before = st.to_bytes();
        let before_history: Vec<SharedMessage> = st.history().to_vec();
        let outstanding = st.pending_operation().op();
        let last = issued.unwrap_or(0);
        let call = match g.below(10)? {
            0 | 1 => Call::Start(st.start()),
            2 | 3 => {
                let op = g.op(outstanding, st.next_op(), last)?;
                let output = g.reply()?;
                Call::Completion(op, st.generated(op, output))
            }
            4 => {
                let op = g.op(outstanding, st.next_op(), last)?;
                Call::Completion(op, st.generation_failed(op))
            }
            5 => {
                let op = g.op(outstanding, st.next_op(), last)?;
                let calls = match st.pending_operation() {
                    PendingOperation::Tools { calls, .. } => calls,
                    _ => Vec::new(),
                };
                let results = g.results(&calls)?;
                let cancelled = g.below(4)? == 0;
                Call::Completion(op, st.tools_completed(op, results, cancelled))
            }
            6 => {
                let op = g.op(outstanding, st.next_op(), last)?;
                let cause = g.cause()?;
                match st.pending_operation() {
                    PendingOperation::Tools { calls, .. } if g.flag()? => {
                        let mask = u8::arbitrary(&mut g.u)?;
                        let finished: Vec<ToolOutcome> = g
                            .results(&calls)?
                            .into_iter()
                            .enumerate()
                            .filter(|(i, _)| mask & (1 << (i % 8)) != 0)
                            .map(|(_, r)| r)
                            .collect();
                        Call::Completion(op, st.cancel_tools(op, &finished, cause))
                    }
                    _ => {
                        let partial = match g.below(3)? {
                            0 => None,
                            1 => Some(g.reply()?.message),
                            _ => Some(g.message(Role::Assistant)?),
                        };
                        Call::Completion(op, st.cancel_generation(op, partial, cause))
                    }
                }
            }
            7 => {
                let role = if g.below(6)? == 0 {
                    Role::Assistant
                } else {
                    Role::User
                };
                let message = g.message(role)?;
                Call::Input(st.append_input(message))
            }
            8 => {
                let index = g.below(st.history().len() + 2)?;
                Call::Input(st.rewind(index))
            }
            _ => {
                let history: Vec<SharedMessage> = match g.below(4)? {
                    0 => st.history().to_vec(),
                    1 => {
                        let cut = g.below(st.history().len() + 1)?;
                        st.history()[..cut].to_vec()
                    }
                    2 => Vec::new(),
                    _ => {
                        let n = g.below(4)?;
                        let mut history = Vec::with_capacity(n);
                        for i in 0..n {
                            let role = if i % 2 == 0 {
                                Role::User
                            } else {
                                Role::Assistant
                            };
                            history.push(Arc::new(g.message(role)?));
                        }
                        history
                    }
                };
                Call::Input(st.replace_context(history))
            }
        };
        let rejected = match &call {
            Call::Completion(_, r) | Call::Start(r) => r.is_err(),
            Call::Input(r) => r.is_err(),
        };
        if rejected {
            assert!(st.to_bytes() == before, "a rejected call changed the state");
        }
        match call {
            Call::Completion(op, result) => {
                if Some(op) != outstanding {
                    assert!(
                        matches!(result, Err(StateError::UnexpectedCompletion { .. })),
                        "a completion for {op} with {outstanding:?} outstanding gave {result:?}"
                    );
                }
                if let Ok(effects) = result {
                    let history = st.history();
                    assert!(
                        history.len() >= before_history.len()
                            && before_history
                                .iter()
                                .zip(history)
                                .all(|(a, b)| Arc::ptr_eq(a, b)),
                        "an accepted completion rewrote earlier messages"
                    );
                    check_effects(&st, &effects, &mut issued);
                }
            }
            Call::Start(result) => {
                if let Some(outstanding) = outstanding {
                    assert_eq!(result, Err(StateError::Busy { outstanding }));
                }
                if let Ok(effects) = result {
                    check_effects(&st, &effects, &mut issued);
                }
            }
            Call::Input(result) => {
                if let Some(outstanding) = outstanding {
                    assert_eq!(result, Err(StateError::Busy { outstanding }));
                }
            }
        }
        check_state(&st, issued);
    }
    Ok(())
}
