//! `no_lost_observation` on saved tool results: a result altered on its way into the
//! history (blocks joined, stringified, an image dropped, base64 re-encoded; a text
//! truncated) is found as soon as the history holds it; the same blocks with keys in
//! another order or a block before them, and a text inside a wrapper, pass.

use crate::checkers_support;

use checkers_support::{Fixture, directive, shared};
use turnsim::testing::checkers::{Event, Observation};
use turnsim_core::{Block, Message, SharedMessage, ToolResultContent};

const IMAGE: &str =
    r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}"#;

fn content(json: &str) -> ToolResultContent {
    serde_json::from_str(json).expect("content parses")
}

/// What the tool gave: a text block and an image.
fn given() -> ToolResultContent {
    content(&format!(
        r#"[{{"type":"text","text":"output of screenshot for t1"}},{IMAGE}]"#
    ))
}

fn history_with(result: ToolResultContent) -> Vec<SharedMessage> {
    vec![
        directive("take a screenshot"),
        shared(Message::assistant_blocks(vec![Block::ToolUse {
            id: "t1".into(),
            name: "screenshot".into(),
            input: serde_json::json!({}),
        }])),
        shared(Message::user_blocks(vec![Block::ToolResult {
            tool_use_id: "t1".into(),
            content: result,
            is_error: None,
        }])),
    ]
}

fn observed() -> Event<'static> {
    Event::Observed(Observation::ToolResult {
        tool_use_id: "t1".into(),
        content: given().into(),
    })
}

fn judged(result: ToolResultContent) -> Result<(), String> {
    Fixture::new().observe(&history_with(result), observed())
}

#[test]
fn a_result_of_blocks_stringified_into_one_text_is_found_when_the_history_holds_it() {
    let stringified = serde_json::to_string(&given()).expect("serializes");
    let err = judged(ToolResultContent::Text(stringified)).expect_err("stringified");
    assert!(
        err.starts_with("no_lost_observation@7: the saved result of t1 came back altered"),
        "{err}"
    );
}

#[test]
fn text_blocks_joined_to_one_string_are_found() {
    let err = judged(ToolResultContent::Text(
        "output of screenshot for t1".into(),
    ))
    .expect_err("joined, image lost");
    assert!(err.contains("came back altered"), "{err}");
}

#[test]
fn a_dropped_image_is_found() {
    let err = judged(content(
        r#"[{"type":"text","text":"output of screenshot for t1"}]"#,
    ))
    .expect_err("image dropped");
    assert!(err.contains("came back altered"), "{err}");
}

#[test]
fn base64_re_encoded_is_found() {
    // The same bytes in URL-safe base64 without padding: equal bytes, other text.
    let reencoded = IMAGE.replace("iVBORw0KGgo=", "iVBORw0KGgo");
    let err = judged(content(&format!(
        r#"[{{"type":"text","text":"output of screenshot for t1"}},{reencoded}]"#
    )))
    .expect_err("re-encoded");
    assert!(err.contains("came back altered"), "{err}");
}

#[test]
fn the_same_blocks_with_keys_reordered_and_a_block_before_them_pass() {
    let reordered = r#"{"source":{"data":"iVBORw0KGgo=","media_type":"image/png","type":"base64"},"type":"image"}"#;
    judged(content(&format!(
        r#"[{{"type":"text","text":"Result:"}},{{"type":"text","text":"output of screenshot for t1"}},{reordered}]"#
    )))
    .expect("every block kept, in order");
}

#[test]
fn a_result_the_history_does_not_hold_yet_waits_and_is_judged_when_it_does() {
    let mut f = Fixture::new();
    // The first result of a batch: acknowledged, not yet in the history.
    f.observe(&[directive("take a screenshot")], observed())
        .expect("nothing to judge yet");
    let other = Event::Observed(Observation::ToolResult {
        tool_use_id: "t2".into(),
        content: ToolResultContent::Text("ok".into()).into(),
    });
    let err = f
        .observe(&history_with(ToolResultContent::Text("[]".into())), other)
        .expect_err("judged once the history holds it");
    assert!(
        err.contains("the saved result of t1 came back altered"),
        "{err}"
    );
}

/// A text output the tool gave, as `no_lost_observation` was told of it.
fn observed_text(text: &str) -> Event<'static> {
    Event::Observed(Observation::ToolResult {
        tool_use_id: "t1".into(),
        content: ToolResultContent::Text(text.into()).into(),
    })
}

#[test]
fn a_text_result_truncated_on_its_way_into_the_history_is_found_when_the_history_holds_it() {
    let output = "line 1\nline 2\nline 3\n";
    let truncated = ToolResultContent::Text("line 1\n[output truncated]".into());
    let err = Fixture::new()
        .observe(&history_with(truncated), observed_text(output))
        .expect_err("truncated");
    assert_eq!(
        err,
        "no_lost_observation@7: the saved result of t1 came back altered: the tool's output (21 bytes) is not whole in the history's tool_result (25 bytes of text): line 1⏎[output truncated]"
    );
}

#[test]
fn a_text_result_kept_whole_inside_a_wrapper_passes_when_the_history_holds_it() {
    let output = "line 1\nline 2\n";
    let wrapped = ToolResultContent::Text(format!("Error: {output}"));
    assert_eq!(
        Fixture::new().observe(&history_with(wrapped), observed_text(output)),
        Ok(())
    );
}
