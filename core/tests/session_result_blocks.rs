//! Tool results that hold blocks (docs/spec.md, tool results): an outcome's content
//! is a string or an array of blocks, and it reaches the `tool_result`, the next
//! request and the log exactly as the tool gave it, through any crash and restore.

mod common;

use common::{
    Driver, config, final_reply, jsons_of, outcome, the_dispatch, the_send, two_tool_reply,
};
use turnsim_core::{Session, ToolOutcome, ToolResultContent};

/// An image block whose keys are in an order no serializer would pick (`source`
/// before `type`, `data` before `media_type`): kept, it proves the bytes are kept.
const IMAGE: &str =
    r#"{"source":{"data":"iVBORw0KGgo=","type":"base64","media_type":"image/png"},"type":"image"}"#;

fn blocks_outcome() -> ToolOutcome {
    let json = format!(
        r#"[{{"type":"text","text":"main.go"}},{IMAGE},{{"type":"text","text":"1 match"}}]"#
    );
    ToolOutcome {
        tool_use_id: "toolu_glob".into(),
        content: serde_json::from_str::<ToolResultContent>(&json).expect("blocks parse"),
        is_error: false,
    }
}

/// The results message the turn below must produce, byte for byte.
fn expected_results() -> String {
    format!(
        r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_glob","content":[{{"type":"text","text":"main.go"}},{IMAGE},{{"type":"text","text":"1 match"}}]}},{{"type":"tool_result","tool_use_id":"toolu_ls","content":"go.mod"}}]}}"#
    )
}

/// A whole turn whose first result is an array of blocks and whose second is a string.
fn turn() -> (Driver, String) {
    let mut d = Driver::default();
    let op = d.prompt("find the go files and list the directory");
    let out = d.stream(op, &two_tool_reply());
    let (tools, _) = the_dispatch(&out);
    d.tool_result(tools, blocks_outcome());
    let out = d.tool_result(tools, outcome("toolu_ls", "go.mod", false));
    let (next, request) = the_send(&out);
    let body = request.messages_json();
    d.stream(next, &final_reply());
    (d, body)
}

#[test]
fn a_blocks_outcome_goes_into_the_tool_result_as_given_and_a_string_stays_a_string() {
    let (d, _) = turn();
    assert_eq!(jsons_of(d.history())[2], expected_results());
}

#[test]
fn the_next_request_carries_the_blocks_byte_for_byte() {
    let (_, body) = turn();
    assert!(
        body.contains(&expected_results()),
        "the request lost or reshaped the blocks: {body}"
    );
}

#[test]
fn a_restore_from_the_log_gives_back_the_blocks_byte_for_byte() {
    let (d, _) = turn();
    let (restored, _) = Session::restore(config(), &d.log.bytes).expect("restores");
    assert_eq!(jsons_of(restored.history()), jsons_of(d.history()));
    assert_eq!(jsons_of(restored.history())[2], expected_results());
}

#[test]
fn an_outcome_round_trips_through_its_serde_as_the_same_shape() {
    let blocks = blocks_outcome();
    let json = serde_json::to_string(&blocks).expect("serializes");
    assert_eq!(
        json,
        format!(
            r#"{{"tool_use_id":"toolu_glob","content":[{{"type":"text","text":"main.go"}},{IMAGE},{{"type":"text","text":"1 match"}}],"is_error":false}}"#
        )
    );
    assert_eq!(
        serde_json::from_str::<ToolOutcome>(&json).expect("reads"),
        blocks
    );
    let text = ToolOutcome::text("toolu_ls", "go.mod", false);
    assert_eq!(
        serde_json::to_string(&text).expect("serializes"),
        r#"{"tool_use_id":"toolu_ls","content":"go.mod","is_error":false}"#
    );
}
