//! Provider tool-use ids (docs/spec.md §6): a provider that numbers calls per reply
//! repeats ids across replies; the session keeps every id it ever kept unique, and
//! leaves ids the provider never repeats untouched.

mod common;

use common::{Driver, FakeLog, Part, config, outcome, reply, text_reply, the_dispatch, the_send};
use turnsim_core::{Block, Input, Session, StopReason, TurnOutcome, validate_history};

fn exec(id: &'static str) -> Part {
    Part::ToolUse {
        id,
        name: "ls",
        json: vec!["{\"path\":\".\"}"],
    }
}

/// Runs one turn whose first reply calls tools with `ids`, answers them, and ends the
/// turn with text; returns the ids the session dispatched.
fn turn_with_calls(d: &mut Driver, prompt: &str, ids: &[&'static str]) -> Vec<String> {
    let op = d.prompt(prompt);
    let parts: Vec<Part> = ids.iter().map(|id| exec(id)).collect();
    let out = d.stream(op, &reply(&parts, StopReason::ToolUse, 5));
    let (tools_op, calls) = the_dispatch(&out);
    let mut last = Vec::new();
    for c in &calls {
        last = d.tool_result(tools_op, outcome(&c.id, "ok", false));
    }
    let (op, request) = the_send(&last);
    validate_history(&request.messages).expect("every request is one the API accepts");
    let out = d.stream(op, &text_reply("done"));
    assert_eq!(common::turn_ends(&out), vec![TurnOutcome::EndTurn]);
    calls.into_iter().map(|c| c.id).collect()
}

fn history_ids(d: &Driver) -> Vec<String> {
    d.history()
        .iter()
        .flat_map(|m| m.blocks().to_vec())
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id),
            _ => None,
        })
        .collect()
}

#[test]
fn ids_the_provider_never_repeats_are_kept_verbatim() {
    let mut d = Driver::default();
    assert_eq!(
        turn_with_calls(&mut d, "one", &["toolu_a", "toolu_b"]),
        ["toolu_a", "toolu_b"]
    );
    assert_eq!(turn_with_calls(&mut d, "two", &["toolu_c"]), ["toolu_c"]);
}

#[test]
fn an_id_repeated_in_a_later_turn_is_renamed_and_the_turn_succeeds() {
    let mut d = Driver::default();
    assert_eq!(
        turn_with_calls(&mut d, "one", &["exec_0", "exec_1"]),
        ["exec_0", "exec_1"]
    );
    assert_eq!(
        turn_with_calls(&mut d, "two", &["exec_0", "exec_1"]),
        ["exec_0-2", "exec_1-2"]
    );
    assert_eq!(turn_with_calls(&mut d, "three", &["exec_0"]), ["exec_0-3"]);
    assert_eq!(
        history_ids(&d),
        ["exec_0", "exec_1", "exec_0-2", "exec_1-2", "exec_0-3"]
    );
    validate_history(d.history()).expect("valid");
}

#[test]
fn an_id_repeated_within_one_reply_is_renamed_at_its_second_use() {
    let mut d = Driver::default();
    assert_eq!(
        turn_with_calls(&mut d, "one", &["exec_0", "exec_0", "exec_0-2"]),
        ["exec_0", "exec_0-2", "exec_0-2-2"]
    );
}

#[test]
fn an_id_a_rewind_or_a_compaction_dropped_stays_taken_and_restore_agrees() {
    let mut d = Driver::default();
    turn_with_calls(&mut d, "one", &["exec_0"]);
    d.handle(Input::Rewind { index: 0 });
    assert_eq!(turn_with_calls(&mut d, "two", &["exec_0"]), ["exec_0-2"]);
    d.handle(Input::Compact {
        summary: "the story so far".into(),
    });
    assert_eq!(history_ids(&d), Vec::<String>::new());
    let (restored, _) = Session::restore(config(), &d.log.bytes).expect("a clean log restores");
    // The run's usage is not in the log; everything else, the retired ids included,
    // must agree.
    let retired = |s: &Session| {
        let v: serde_json::Value = serde_json::from_slice(&s.to_bytes()).expect("json");
        v["retired_ids"].clone()
    };
    assert_eq!(
        retired(&restored),
        serde_json::json!(["exec_0", "exec_0-2"])
    );
    assert_eq!(retired(&restored), retired(&d.session));
    assert_eq!(restored.history(), d.session.history());
    assert_eq!(turn_with_calls(&mut d, "three", &["exec_0"]), ["exec_0-3"]);
}

#[test]
fn a_restored_session_renames_a_repeated_id_exactly_as_the_live_one() {
    let mut live = Driver::default();
    turn_with_calls(&mut live, "one", &["exec_0"]);
    let (restored, _) = Session::restore(config(), &live.log.bytes).expect("a clean log restores");
    let mut again = Driver {
        session: restored,
        log: FakeLog::from_bytes(&live.log.bytes),
        outputs: Vec::new(),
    };
    assert_eq!(turn_with_calls(&mut live, "two", &["exec_0"]), ["exec_0-2"]);
    assert_eq!(
        turn_with_calls(&mut again, "two", &["exec_0"]),
        ["exec_0-2"]
    );
    assert!(live.session.to_bytes() == again.session.to_bytes());
}

#[test]
fn tool_calls_under_end_turn_or_max_tokens_are_dispatched_like_tool_use() {
    for stop in [StopReason::EndTurn, StopReason::MaxTokens] {
        let mut d = Driver::default();
        let op = d.prompt("one");
        let out = d.stream(op, &reply(&[exec("toolu_a")], stop, 5));
        let (_, calls) = the_dispatch(&out);
        assert_eq!(calls.len(), 1, "{stop:?}");
        assert_eq!(calls[0].id, "toolu_a");
        assert_eq!(common::turn_ends(&out), vec![], "{stop:?}");
    }
}

#[test]
fn a_stream_cut_after_a_finished_tool_call_fails_the_turn_and_dispatches_nothing() {
    let mut d = Driver::default();
    let op = d.prompt("one");
    let mut events = reply(&[exec("toolu_a")], StopReason::ToolUse, 5);
    events.truncate(events.len() - 2);
    events.push(turnsim_core::StreamEvent::Error {
        kind: "connection_reset".into(),
        message: "connection reset by peer".into(),
    });
    let out = d.stream(op, &events);
    assert_eq!(common::dispatches(&out), vec![]);
    assert!(matches!(
        common::turn_ends(&out).as_slice(),
        [TurnOutcome::Failed { .. }]
    ));
    assert_eq!(history_ids(&d), Vec::<String>::new());
    validate_history(d.history()).expect("valid");
}
