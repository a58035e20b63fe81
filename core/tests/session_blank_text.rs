//! A finished reply's whitespace-only text block (docs/spec.md §7, Streaming): the
//! provider refuses such a block in every later request, so the session never keeps one,
//! whether the reply finished or a cancel cut it.

mod common;

use common::{Driver, Part, jsons_of, outcome, reply, the_dispatch, the_send, turn_ends};
use turnsim_core::{StopReason, TurnOutcome};

#[test]
fn a_blank_text_block_before_a_call_is_not_kept_and_never_sent_back() {
    let mut d = Driver::default();
    let op = d.prompt("list");
    let events = reply(
        &[
            Part::Text(vec!["\n", "\n"]),
            Part::ToolUse {
                id: "toolu_ls",
                name: "ls",
                json: vec![r#"{"path":"/tmp"}"#],
            },
        ],
        StopReason::ToolUse,
        12,
    );
    let (tools_op, calls) = the_dispatch(&d.stream(op, &events));
    assert_eq!(calls.len(), 1);
    let (_, request) = the_send(&d.tool_result(tools_op, outcome("toolu_ls", "a.txt", false)));
    let sent = serde_json::to_string(&request.messages).expect("serialises");
    assert!(!sent.contains(r#""text":"\n\n""#), "{sent}");
    let assistant: Vec<String> = jsons_of(d.history())
        .into_iter()
        .filter(|m| m.starts_with(r#"{"role":"assistant""#))
        .collect();
    assert_eq!(
        assistant,
        vec![
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_ls","name":"ls","input":{"path":"/tmp"}}]}"#
        ]
    );
}

#[test]
fn a_reply_of_blank_text_alone_is_an_empty_reply_and_fails_the_turn() {
    let mut d = Driver::default();
    let len = d.history().len();
    let op = d.prompt("hello");
    let out = d.stream(
        op,
        &reply(&[Part::Text(vec![" \n "])], StopReason::EndTurn, 3),
    );
    assert_eq!(
        turn_ends(&out),
        vec![TurnOutcome::Failed {
            reason: "invalid response: the generated message has empty content".into()
        }]
    );
    assert!(
        jsons_of(&d.history()[len..])
            .iter()
            .all(|m| !m.starts_with(r#"{"role":"assistant""#)),
        "{:?}",
        jsons_of(d.history())
    );
}
