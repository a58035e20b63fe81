//! Live cancel (docs/spec.md §7): during a stream, during tools, while idle; and late or
//! duplicate deliveries afterwards.

mod common;

use common::{
    Driver, Part, block_events, config, jsons_of, outcome, text_reply, the_dispatch, two_tool_reply,
};
use turnsim_core::log::Record;
use turnsim_core::{
    CancelCause, InterruptReason, OperationId, Output, PendingOperation, Session, StreamEvent,
    TurnOutcome, validate_history,
};

const USER_MARKER: &str = r#"{"role":"user","content":"[Request interrupted by user]"}"#;

/// Feeds `events` and asserts each one produces no output and leaves the session
/// byte-identical.
fn assert_ignored_events(d: &mut Driver, op: OperationId, events: &[StreamEvent]) {
    for e in events {
        let before = d.session.to_bytes();
        let log_before = d.log.bytes.clone();
        let out = d.handle(turnsim_core::Input::Stream {
            op,
            event: e.clone(),
        });
        assert_eq!(out, vec![], "event {e:?} produced outputs");
        assert!(
            d.session.to_bytes() == before,
            "event {e:?} changed the session"
        );
        assert!(d.log.bytes == log_before);
    }
}

fn assert_ignored_result(d: &mut Driver, op: OperationId, id: &str, content: &str) {
    let before = d.session.to_bytes();
    let out = d.tool_result(op, outcome(id, content, false));
    assert_eq!(out, vec![], "result for {id} produced outputs");
    assert!(
        d.session.to_bytes() == before,
        "result for {id} changed the session"
    );
}

/// The events of a reply that is cut off: thinking (signed) and text finished, one
/// tool call finished, a second one still streaming its input.
fn interrupted_stream() -> (Vec<StreamEvent>, Vec<StreamEvent>) {
    let mut sent = vec![StreamEvent::MessageStart];
    sent.extend(block_events(
        0,
        &Part::Thinking(vec!["Both tools ", "are needed."], "sig-abc"),
    ));
    sent.extend(block_events(1, &Part::Text(vec!["Let me check ", "both."])));
    sent.extend(block_events(
        2,
        &Part::ToolUse {
            id: "toolu_a",
            name: "glob",
            json: vec!["{\"pattern\":", "\"*.go\"}"],
        },
    ));
    let mut b = block_events(
        3,
        &Part::ToolUse {
            id: "toolu_b",
            name: "ls",
            json: vec!["{\"pa", "th\":\".\"}"],
        },
    );
    // Cut after the block start and the first input chunk.
    let rest: Vec<StreamEvent> = b.split_off(2);
    sent.extend(b);
    let mut late = rest;
    late.push(StreamEvent::MessageDelta {
        stop_reason: turnsim_core::StopReason::ToolUse,
        usage: turnsim_core::Usage {
            input_tokens: 10,
            output_tokens: 10,
        },
    });
    late.push(StreamEvent::MessageStop);
    (sent, late)
}

/// The start of a reply whose one text block has streamed `deltas` so far.
fn text_so_far(deltas: &[&str]) -> Vec<StreamEvent> {
    let mut events = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: turnsim_core::BlockStart::Text,
        },
    ];
    events.extend(deltas.iter().map(|text| StreamEvent::TextDelta {
        index: 0,
        text: (*text).into(),
    }));
    events
}

/// The events of block `index`: a call of `ls` on `/tmp`, finished.
fn ls_tmp(index: usize) -> Vec<StreamEvent> {
    block_events(
        index,
        &Part::ToolUse {
            id: "toolu_x",
            name: "ls",
            json: vec!["{\"path\":", "\"/tmp\"}"],
        },
    )
}

/// A whole reply of one call of `ls` with id `id`.
fn one_ls_call(id: &'static str) -> Vec<StreamEvent> {
    common::reply(
        &[Part::ToolUse {
            id,
            name: "ls",
            json: vec!["{}"],
        }],
        turnsim_core::StopReason::ToolUse,
        1,
    )
}

#[test]
fn cancel_mid_stream_keeps_what_finished_answers_its_tool_calls_and_ends_with_the_marker() {
    let mut d = Driver::default();
    let op = d.prompt("look around");
    let (sent, _) = interrupted_stream();
    d.stream(op, &sent);
    let out = d.cancel(CancelCause::User);

    assert_eq!(
        jsons_of(&d.history()[1..]),
        vec![
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Both tools are needed.","signature":"sig-abc"},{"type":"text","text":"Let me check both."},{"type":"tool_use","id":"toolu_a","name":"glob","input":{"pattern":"*.go"}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"Canceled by user","is_error":true}]}"#,
            USER_MARKER,
        ]
    );
    validate_history(d.history()).expect("valid");
    assert!(d.session.is_idle());
    assert_eq!(d.session.pending_operation(), PendingOperation::None);

    // Abort first; then the appended messages and the end of the turn are persisted
    // before the turn is reported over.
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(out[0], Output::Abort { op });
    assert_eq!(
        common::persisted_records(&out),
        vec![
            Record::Append {
                messages: d.history()[1..].iter().map(|m| (**m).clone()).collect(),
                pending: PendingOperation::None,
            },
            Record::TurnEnd {
                outcome: TurnOutcome::Cancelled {
                    reason: InterruptReason::User
                }
            },
        ]
    );
    assert_eq!(
        out[3],
        Output::TurnEnded {
            outcome: TurnOutcome::Cancelled {
                reason: InterruptReason::User
            }
        }
    );
}

#[test]
fn cancel_mid_stream_keeps_text_that_was_still_streaming() {
    let mut d = Driver::default();
    let op = d.prompt("say hello");
    d.stream(op, &text_so_far(&["Hello, ", "wor"]));
    d.cancel(CancelCause::Host);
    assert_eq!(
        jsons_of(&d.history()[1..]),
        vec![
            r#"{"role":"assistant","content":[{"type":"text","text":"Hello, wor"}]}"#,
            r#"{"role":"user","content":"[Request interrupted: session stopped by the host]"}"#,
        ]
    );
    validate_history(d.history()).expect("valid");
}

#[test]
fn cancel_mid_stream_drops_tool_input_that_did_not_finish() {
    let mut d = Driver::default();
    let op = d.prompt("list");
    let mut events = vec![StreamEvent::MessageStart];
    let mut b = ls_tmp(0);
    b.pop(); // no block stop
    events.extend(b);
    d.stream(op, &events);
    d.cancel(CancelCause::User);
    // Nothing finished, so there is no assistant message and nothing to answer.
    assert_eq!(jsons_of(&d.history()[1..]), vec![USER_MARKER]);
    validate_history(d.history()).expect("valid");
}

#[test]
fn cancel_before_the_stream_starts_appends_only_the_marker() {
    let mut d = Driver::default();
    d.prompt("hi");
    d.cancel(CancelCause::Driver);
    assert_eq!(
        jsons_of(&d.history()[1..]),
        vec![r#"{"role":"user","content":"[Request interrupted: session driver revoked]"}"#]
    );
}

#[test]
fn cancel_mid_tools_keeps_finished_results_answers_the_rest_and_notes_them() {
    let mut d = Driver::default();
    let op = d.prompt("find the go files and list the directory");
    let (tools_op, _) = the_dispatch(&d.stream(op, &two_tool_reply()));
    // The second call finishes first.
    d.tool_result(tools_op, outcome("toolu_ls", "go.mod\nmain.go", false));
    let out = d.cancel(CancelCause::CostCap);

    assert_eq!(
        jsons_of(&d.history()[2..]),
        vec![
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_glob","content":"Canceled (session cost cap reached)","is_error":true},{"type":"tool_result","tool_use_id":"toolu_ls","content":"go.mod\nmain.go"}]}"#,
            r#"{"role":"user","content":"[Canceled (session cost cap reached) while the tool call `glob` was running. It may have already started and partially applied its effects.]"}"#,
            r#"{"role":"user","content":"[Request interrupted: session cost cap reached]"}"#,
        ]
    );
    validate_history(d.history()).expect("valid");
    assert_eq!(out[0], Output::Abort { op: tools_op });
    assert_eq!(
        common::turn_ends(&out),
        vec![TurnOutcome::Cancelled {
            reason: InterruptReason::CostCap
        }]
    );
}

#[test]
fn cancel_mid_tools_with_no_result_in_answers_every_call() {
    let mut d = Driver::default();
    let op = d.prompt("find the go files and list the directory");
    the_dispatch(&d.stream(op, &two_tool_reply()));
    d.cancel(CancelCause::Restart);
    assert_eq!(
        jsons_of(&d.history()[2..]),
        vec![
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_glob","content":"Canceled (runtime restarted)","is_error":true},{"type":"tool_result","tool_use_id":"toolu_ls","content":"Canceled (runtime restarted)","is_error":true}]}"#,
            r#"{"role":"user","content":"[Canceled (runtime restarted) while the tool calls `glob`, `ls` were running. They may have already started and partially applied their effects.]"}"#,
            r#"{"role":"user","content":"[Request interrupted: runtime restarted]"}"#,
        ]
    );
    validate_history(d.history()).expect("valid");
}

#[test]
fn every_cancel_cause_writes_its_own_phrase_and_marker() {
    let expected = [
        (
            CancelCause::User,
            "Canceled by user",
            "[Request interrupted by user]",
        ),
        (
            CancelCause::CostCap,
            "Canceled (session cost cap reached)",
            "[Request interrupted: session cost cap reached]",
        ),
        (
            CancelCause::Restart,
            "Canceled (runtime restarted)",
            "[Request interrupted: runtime restarted]",
        ),
        (
            CancelCause::Host,
            "Canceled (session stopped by the host)",
            "[Request interrupted: session stopped by the host]",
        ),
        (
            CancelCause::Driver,
            "Canceled (session driver revoked)",
            "[Request interrupted: session driver revoked]",
        ),
    ];
    assert_eq!(CancelCause::ALL.len(), expected.len());
    for (cause, phrase, marker) in expected {
        let mut d = Driver::default();
        let op = d.prompt("go");
        the_dispatch(&d.stream(op, &two_tool_reply()));
        d.cancel(cause);
        let h = d.history();
        let results = h[2].blocks();
        assert_eq!(results.len(), 2);
        for r in results {
            let turnsim_core::Block::ToolResult {
                content, is_error, ..
            } = r
            else {
                panic!("not a tool_result: {r:?}");
            };
            assert_eq!(content.text(), phrase);
            assert_eq!(*is_error, Some(true));
        }
        assert_eq!(
            h.last().unwrap().string_content(),
            Some(marker),
            "{cause:?}"
        );
    }
}

#[test]
fn cancel_while_idle_is_a_no_op() {
    let mut d = Driver::default();
    let before = d.session.to_bytes();
    assert_eq!(d.cancel(CancelCause::User), vec![]);
    assert!(d.session.to_bytes() == before);

    let op = d.prompt("hi");
    d.stream(op, &text_reply("hello"));
    let before = d.session.to_bytes();
    let log_before = d.log.bytes.clone();
    for cause in CancelCause::ALL {
        assert_eq!(d.cancel(cause), vec![]);
    }
    assert!(d.session.to_bytes() == before);
    assert!(d.log.bytes == log_before);
    assert_eq!(d.history().len(), 2, "no marker after a finished turn");
}

#[test]
fn a_second_cancel_is_a_no_op() {
    let mut d = Driver::default();
    d.prompt("hi");
    d.cancel(CancelCause::User);
    let before = d.session.to_bytes();
    assert_eq!(d.cancel(CancelCause::Host), vec![]);
    assert!(d.session.to_bytes() == before);
}

#[test]
fn late_stream_events_for_a_cancelled_op_change_nothing() {
    let mut d = Driver::default();
    let op = d.prompt("look around");
    let (sent, late) = interrupted_stream();
    d.stream(op, &sent);
    d.cancel(CancelCause::User);
    assert_ignored_events(&mut d, op, &late);
    // Even a whole replay of the reply, error included, is ignored.
    let mut again = sent.clone();
    again.extend(late);
    again.push(StreamEvent::Error {
        kind: "overloaded_error".into(),
        message: "Overloaded".into(),
    });
    assert_ignored_events(&mut d, op, &again);
}

#[test]
fn late_stream_events_for_an_old_op_do_not_touch_the_live_stream() {
    let mut d = Driver::default();
    let old = d.prompt("one");
    let (sent, late) = interrupted_stream();
    d.stream(old, &sent);
    d.cancel(CancelCause::User);
    let new = d.prompt("two");
    assert!(new > old);
    d.stream(new, &[StreamEvent::MessageStart]);
    assert_ignored_events(&mut d, old, &late);
    assert_ignored_events(&mut d, old, &text_reply("stale"));
    // The live stream still completes normally.
    let mut rest = block_events(0, &Part::Text(vec!["fresh"]));
    rest.extend(text_reply("x").split_off(4)); // message_delta, message_stop
    let out = d.stream(new, &rest);
    assert_eq!(common::turn_ends(&out), vec![TurnOutcome::EndTurn]);
    assert_eq!(
        d.history().last().unwrap().to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"fresh"}]}"#
    );
}

#[test]
fn late_tool_results_for_a_cancelled_op_change_nothing() {
    let mut d = Driver::default();
    let op = d.prompt("go");
    let (tools_op, _) = the_dispatch(&d.stream(op, &two_tool_reply()));
    d.tool_result(tools_op, outcome("toolu_ls", "go.mod", false));
    d.cancel(CancelCause::User);
    assert_ignored_result(&mut d, tools_op, "toolu_glob", "main.go");
    assert_ignored_result(&mut d, tools_op, "toolu_ls", "go.mod");
    // And once a new turn runs its own tools, the old op is still stale.
    let op = d.prompt("again");
    let (new_tools, _) = the_dispatch(&d.stream(op, &one_ls_call("toolu_new")));
    assert_ignored_result(&mut d, tools_op, "toolu_glob", "main.go");
    assert_ignored_result(&mut d, new_tools, "toolu_glob", "not a call of this batch");
    assert_eq!(
        d.session.pending_operation(),
        PendingOperation::Tools {
            op: new_tools,
            calls: vec![turnsim_core::ToolCall {
                id: "toolu_new".into(),
                name: "ls".into(),
                input: serde_json::json!({})
            }]
        }
    );
}

#[test]
fn a_duplicate_tool_result_is_ignored() {
    let mut d = Driver::default();
    let op = d.prompt("go");
    let (tools_op, _) = the_dispatch(&d.stream(op, &two_tool_reply()));
    let first = d.tool_result(tools_op, outcome("toolu_glob", "main.go", false));
    assert_eq!(first.len(), 1, "the first result is persisted: {first:?}");
    assert_ignored_result(&mut d, tools_op, "toolu_glob", "main.go");
    assert_ignored_result(&mut d, tools_op, "toolu_glob", "something else");
    let out = d.tool_result(tools_op, outcome("toolu_ls", "go.mod", false));
    assert_eq!(common::sends(&out).len(), 1);
    assert_eq!(
        d.history()[2].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_glob","content":"main.go"},{"type":"tool_result","tool_use_id":"toolu_ls","content":"go.mod"}]}"#
    );
}

#[test]
fn a_cancelled_turn_restores_from_its_log_to_the_same_history() {
    let mut d = Driver::default();
    let op = d.prompt("go");
    let (tools_op, _) = the_dispatch(&d.stream(op, &two_tool_reply()));
    d.tool_result(tools_op, outcome("toolu_ls", "go.mod", false));
    d.cancel(CancelCause::User);
    let (restored, out) = Session::restore(config(), &d.log.bytes).expect("restores");
    assert_eq!(out, vec![]);
    assert_eq!(jsons_of(restored.history()), jsons_of(d.history()));
}

#[test]
fn cancel_mid_stream_keeps_no_whitespace_only_text() {
    // The provider rejects a text block with no visible text, so what the user saw
    // as blank is not kept (as crash recovery does with a blank draft).
    let mut d = Driver::default();
    let op = d.prompt("list");
    let mut events = vec![StreamEvent::MessageStart];
    events.extend(block_events(0, &Part::Text(vec!["\n\n"])));
    let mut b = ls_tmp(1);
    b.truncate(2); // block start and the first input chunk
    events.extend(b);
    d.stream(op, &events);
    d.cancel(CancelCause::User);
    assert_eq!(jsons_of(&d.history()[1..]), vec![USER_MARKER]);

    let mut d = Driver::default();
    let op = d.prompt("list");
    d.stream(op, &text_so_far(&[" \n "]));
    d.cancel(CancelCause::User);
    assert_eq!(jsons_of(&d.history()[1..]), vec![USER_MARKER]);
}

#[test]
fn a_cancel_keeps_a_streamed_call_that_reused_an_id_under_its_fresh_id() {
    // Turn 1 uses toolu_a. In turn 2 the model streams a call with the same id; the
    // session keeps it as toolu_a-2 (docs/spec.md §6), so a cancel mid-stream answers
    // it like any other finished call.
    let mut d = Driver::default();
    let op = d.prompt("one");
    let (tools_op, _) = the_dispatch(&d.stream(op, &one_ls_call("toolu_a")));
    let (op, _) = common::the_send(&d.tool_result(tools_op, outcome("toolu_a", "x", false)));
    d.stream(op, &text_reply("done"));
    let len = d.history().len();

    let op = d.prompt("two");
    let mut events = vec![StreamEvent::MessageStart];
    events.extend(block_events(0, &Part::Text(vec!["Again."])));
    events.extend(block_events(
        1,
        &Part::ToolUse {
            id: "toolu_a",
            name: "ls",
            json: vec!["{}"],
        },
    ));
    d.stream(op, &events);
    let out = d
        .try_handle(turnsim_core::Input::Cancel {
            cause: CancelCause::User,
        })
        .expect("a cancel is never refused while work is outstanding");
    assert_eq!(out[0], Output::Abort { op });
    assert!(d.session.is_idle());
    assert_eq!(
        jsons_of(&d.history()[len + 1..]),
        vec![
            r#"{"role":"assistant","content":[{"type":"text","text":"Again."},{"type":"tool_use","id":"toolu_a-2","name":"ls","input":{}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a-2","content":"Canceled by user","is_error":true}]}"#,
            USER_MARKER
        ]
    );
    validate_history(d.history()).expect("valid");
}
