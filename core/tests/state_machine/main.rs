//! The turn state machine (docs/spec.md §6), driven directly through `TurnState`.

#[path = "../common/mod.rs"]
mod common;

mod context;
mod recovery;
mod transitions;

use common::{assistant, json_of, outcome, shared, tool_use, user};
use serde_json::json;
use std::sync::Arc;
use turnsim_core::state::{INTERRUPTED_RESULT_TEXT, TRUNCATION_RESUME_TEXT};
use turnsim_core::{
    Block, Effect, FinishReason, GenerationOutput, HistoryError, InterruptReason, Message,
    OperationId, PendingOperation, SharedMessage, StateError, StopReason, ToolCall, TurnState,
    Usage, recover_checkpoint, tool_in_flight_note_text, validate_history,
};

pub(crate) fn op(n: u64) -> OperationId {
    OperationId(n)
}

pub(crate) fn generation(
    message: Message,
    stop_reason: StopReason,
    output_tokens: u64,
) -> GenerationOutput {
    GenerationOutput {
        message,
        stop_reason,
        usage: Usage {
            input_tokens: 1000,
            output_tokens,
        },
    }
}

pub(crate) fn text_gen(text: &str, stop: StopReason, output_tokens: u64) -> GenerationOutput {
    generation(Message::assistant_text(text), stop, output_tokens)
}

/// An assistant message that calls `bash` once per id, in order.
pub(crate) fn calling(ids: &[&str]) -> Message {
    Message::assistant_blocks(
        ids.iter()
            .map(|id| tool_use(id, "bash", json!({"cmd": format!("echo {id}")})))
            .collect(),
    )
}

pub(crate) fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: "bash".to_string(),
        input: json!({"cmd": format!("echo {id}")}),
    }
}

/// A state with one user prompt whose run has started; returns the generation's op.
pub(crate) fn started(prompt: &str) -> (TurnState, OperationId) {
    let mut s = TurnState::new(vec![user(prompt)]);
    let effects = s.start().expect("starts");
    let [Effect::Generate { op }] = effects.as_slice() else {
        panic!("start returned {effects:?}");
    };
    (s, *op)
}

/// A state that is running the tool batch `ids` (ops: generation 1, tools 2).
pub(crate) fn running_tools(ids: &[&str]) -> TurnState {
    let (mut s, g) = started("run the tools");
    let effects = s
        .generated(g, generation(calling(ids), StopReason::ToolUse, 5))
        .expect("generated");
    assert_eq!(
        effects,
        vec![Effect::ExecuteTools {
            op: op(2),
            calls: ids.iter().map(|id| call(id)).collect()
        }]
    );
    s
}

/// Asserts that `f` fails with `expected` and leaves the state byte-identical.
pub(crate) fn refused<T: std::fmt::Debug>(
    s: &mut TurnState,
    expected: StateError,
    f: impl FnOnce(&mut TurnState) -> Result<T, StateError>,
) {
    let before = s.to_bytes();
    let got = f(s);
    assert_eq!(got.map(|_| ()).expect_err("refused"), expected);
    assert_eq!(
        String::from_utf8(s.to_bytes()).expect("utf-8"),
        String::from_utf8(before).expect("utf-8"),
        "a refused call changed the state"
    );
}

pub(crate) fn effect_ops(effects: &[Effect]) -> Vec<OperationId> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Generate { op } | Effect::ExecuteTools { op, .. } => Some(*op),
            Effect::Finished { .. } => None,
        })
        .collect()
}

pub(crate) fn one_tool_round() -> TurnState {
    let mut s = running_tools(&["a"]);
    s.tools_completed(op(2), vec![outcome("a", "A", false)], false)
        .unwrap();
    s.generated(op(3), text_gen("done", StopReason::EndTurn, 1))
        .unwrap();
    s
}
