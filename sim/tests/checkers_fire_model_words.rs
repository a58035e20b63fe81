//! `model_words_exact` fires on model words altered on their way back (a text, a
//! call's input) and on a call salvaged from a cut stream, dispatched or replayed, and
//! passes the words exactly as streamed, a cut reply's kept prefix, and texts that are
//! not the model's.

use crate::checkers_support;

use checkers_support::{Fixture, directive, request, shared};
use serde_json::json;
use turnsim::testing::checkers::Event;
use turnsim::testing::provider::MODEL_MARK;
use turnsim_core::session::{BlockStart, StreamEvent};
use turnsim_core::{Block, Message, OperationId, SharedMessage, ToolCall};

/// A fixture judging with this checker alone: the requests here are cut down to the
/// blocks under test, which other checkers would refuse for reasons of their own.
fn alone() -> Fixture {
    let only = turnsim::conventions::Selection {
        only: Some(vec![turnsim::testing::checkers::Invariant::ModelWordsExact]),
        skip: Vec::new(),
    };
    let mut f = Fixture::new();
    f.judged_by(&turnsim::conventions::Conventions::generic(), &only);
    f
}

/// Streams `events` live as reply `op`, tool-input fragments apart as the world does.
fn stream(f: &mut Fixture, op: u64, events: &[StreamEvent]) {
    for event in events {
        let op = OperationId(op);
        let e = match event {
            StreamEvent::InputJsonDelta { .. } => Event::InputStreamed { op, event },
            _ => Event::Streamed { op, event },
        };
        f.observe(&[], e).expect("streaming is no check");
    }
}

fn text_reply(text: &str, whole: bool) -> Vec<StreamEvent> {
    let mut events = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: text[..text.len() / 2].into(),
        },
        StreamEvent::TextDelta {
            index: 0,
            text: text[text.len() / 2..].into(),
        },
    ];
    if whole {
        events.extend([
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::MessageStop,
        ]);
    }
    events
}

/// A reply calling `read_file` whose input streams in two pieces, `stop` saying
/// whether its block finished.
fn call_reply(stop: bool) -> Vec<StreamEvent> {
    let mut events = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::ToolUse {
                id: "toolu_1".into(),
                name: "read_file".into(),
            },
        },
        StreamEvent::InputJsonDelta {
            index: 0,
            partial_json: "{\"path\":\"src/".into(),
        },
        StreamEvent::InputJsonDelta {
            index: 0,
            partial_json: "a.rs\"}".into(),
        },
    ];
    if stop {
        events.extend([
            StreamEvent::BlockStop { index: 0 },
            StreamEvent::MessageStop,
        ]);
    }
    events
}

fn said(text: &str) -> Vec<SharedMessage> {
    vec![
        directive("fix it"),
        shared(Message::assistant_blocks(vec![Block::Text {
            text: text.into(),
        }])),
        directive("fix it"),
    ]
}

fn called(input: serde_json::Value) -> Vec<SharedMessage> {
    vec![
        directive("fix it"),
        shared(Message::assistant_blocks(vec![Block::ToolUse {
            id: "toolu_1".into(),
            name: "read_file".into(),
            input,
        }])),
        shared(Message::user_blocks(vec![Block::tool_result(
            "toolu_1", "ok", false,
        )])),
    ]
}

fn words() -> String {
    format!("{MODEL_MARK}Looking at the parser.")
}

#[test]
fn a_model_text_sent_back_altered_is_found_with_where_it_differs() {
    let mut f = alone();
    stream(&mut f, 1, &text_reply(&words(), true));
    let altered = format!("{MODEL_MARK}Looking at the parser");
    let err = f
        .send(2, &request("s", said(&altered)))
        .expect_err("trimmed");
    assert_eq!(
        err,
        format!(
            "model_words_exact@7: request op#2: message 1, block 0 is assistant text the model never said: {MODEL_MARK}Looking at the parser is neither a text block the provider streamed nor what was kept of a cut one; against the closest text the model said, at byte {}: was …Looking at the parser., now …Looking at the parser",
            altered.len()
        )
    );
}

#[test]
fn a_model_text_sent_back_as_streamed_passes() {
    let mut f = alone();
    stream(&mut f, 1, &text_reply(&words(), true));
    f.send(2, &request("s", said(&words())))
        .expect("the words as streamed");
}

#[test]
fn a_prefix_of_a_completed_text_is_not_the_model_s_words() {
    let mut f = alone();
    stream(&mut f, 1, &text_reply(&words(), true));
    let half = &words()[..words().len() / 2];
    let err = f.send(2, &request("s", said(half))).expect_err("cut short");
    assert!(err.starts_with("model_words_exact@7: request op#2: message 1, block 0 is assistant text the model never said"), "{err}");
}

#[test]
fn a_cut_reply_s_kept_prefix_passes() {
    let mut f = alone();
    stream(&mut f, 1, &text_reply(&words(), false));
    let half = &words()[..words().len() / 2];
    f.send(2, &request("s", said(half)))
        .expect("the part of a cut reply the engine received");
}

#[test]
fn text_without_the_model_s_mark_is_the_engine_s_own_and_not_judged() {
    let mut f = alone();
    stream(&mut f, 1, &text_reply(&words(), true));
    f.send(2, &request("s", said("[the engine's own words]")))
        .expect("not the model's words");
}

#[test]
fn a_call_replayed_with_other_input_than_streamed_is_found() {
    let mut f = alone();
    stream(&mut f, 1, &call_reply(true));
    let err = f
        .send(2, &request("s", called(json!({"path": "src/b.rs"}))))
        .expect_err("other input");
    assert_eq!(
        err,
        "model_words_exact@7: request op#2: message 1, block 0 is a tool_use \"read_file\" (id \"toolu_1\") the model never completed: no tool_use block the provider completed has this name and input {\"path\":\"src/b.rs\"}"
    );
    let mut f = alone();
    stream(&mut f, 1, &call_reply(true));
    f.send(2, &request("s", called(json!({"path": "src/a.rs"}))))
        .expect("the call as streamed, whatever its id");
}

#[test]
fn a_call_salvaged_from_a_cut_stream_is_found_replayed_and_dispatched() {
    let mut f = alone();
    stream(&mut f, 1, &call_reply(false));
    let err = f
        .send(2, &request("s", called(json!({"path": "src/"}))))
        .expect_err("salvaged");
    assert_eq!(
        err,
        "model_words_exact@7: request op#2: message 1, block 0 is a tool_use \"read_file\" (id \"toolu_1\") the model never completed: its block never finished streaming (no block_stop), so its input {\"path\":\"src/\"} is salvaged from a cut stream, not what the model asked for"
    );
    let mut f = alone();
    stream(&mut f, 1, &call_reply(false));
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "read_file".into(),
        input: json!({"path": "src/"}),
    };
    let err = f
        .observe(
            &[],
            Event::Dispatched {
                op: OperationId(1),
                call: &call,
                starts: 1,
            },
        )
        .expect_err("dispatched salvaged");
    assert!(
        err.starts_with("model_words_exact@7: op#1 dispatched tool \"read_file\" (id \"toolu_1\") with input the model never completed: its block never finished streaming"),
        "{err}"
    );
}

#[test]
fn nothing_is_judged_before_the_provider_streamed_anything() {
    let mut f = alone();
    f.send(2, &request("s", called(json!({"path": "src/b.rs"}))))
        .expect("no record to compare with");
    assert_eq!(f.counts()["model_words_exact"], 0);
}

#[test]
fn a_delta_appended_to_its_block_after_the_block_stop_of_a_cut_reply_is_found_and_the_whole_block_passes()
 {
    // A proxy replays the text's last delta after its `block_stop`, and the stream is
    // cut there: the reply is malformed from the late delta on, and an engine that
    // appends it sends back words never said, even as a cut reply's kept prefix.
    let mut events = text_reply(&words(), true);
    let late = events[3].clone();
    events.pop();
    events.push(late);
    let mut f = alone();
    stream(&mut f, 1, &events);
    let half = &words()[words().len() / 2..];
    let appended = format!("{}{half}", words());
    let err = f
        .send(2, &request("s", said(&appended)))
        .expect_err("the late delta appended");
    assert!(
        err.starts_with("model_words_exact@7: request op#2: message 1, block 0 is assistant text the model never said"),
        "{err}"
    );
    // What stopped before the late delta is the model's (a cancel before it keeps it).
    let mut f = alone();
    stream(&mut f, 1, &events);
    f.send(2, &request("s", said(&words())))
        .expect("the block as it stopped");
}

#[test]
fn input_appended_to_a_call_after_its_block_stop_is_found() {
    let mut events = call_reply(true);
    let late = events[3].clone();
    events.insert(events.len() - 1, late);
    let mut f = alone();
    stream(&mut f, 1, &events);
    let err = f
        .send(2, &request("s", called(serde_json::Value::Null)))
        .expect_err("the late input appended does not parse");
    assert_eq!(
        err,
        "model_words_exact@7: request op#2: message 1, block 0 is a tool_use \"read_file\" (id \"toolu_1\") the model never completed: no tool_use block the provider completed has this name and input null"
    );
}
