//! A thinking switch from the host (docs/spec.md §7 `Configure`, §8 "Thinking switched"):
//! it applies to the requests after it, only between turns, and a restore replays it.

mod common;

use common::{
    Driver, config, final_reply, outcome, persisted_records, the_dispatch, the_send, two_tool_reply,
};
use turnsim_core::log::Record;
use turnsim_core::{Input, Session, SessionConfig, SessionError, Thinking};

const ON: Thinking = Thinking::Enabled {
    budget_tokens: 2048,
};

fn thinking_config() -> SessionConfig {
    SessionConfig {
        thinking: Some(ON),
        ..config()
    }
}

fn switch(d: &Driver, thinking: Option<Thinking>) -> Input {
    let c = d.session.config();
    Input::Configure {
        system: c.system.clone(),
        tools: c.tools.clone(),
        thinking,
    }
}

/// One whole turn with a tool round; returns the requests' thinking settings.
fn turn_with_tools(d: &mut Driver, words: &str) -> Vec<Option<Thinking>> {
    let op = d.prompt(words);
    let first = d.all_sends().last().map(|(_, r)| r.thinking).unwrap();
    // A second turn replays the same ids, which the session renames: answer its own.
    let (tools, calls) = the_dispatch(&d.stream(op, &two_tool_reply()));
    d.tool_result(tools, outcome(&calls[0].id, "main.go", false));
    let (next, request) = the_send(&d.tool_result(tools, outcome(&calls[1].id, "main.go", false)));
    d.stream(next, &final_reply());
    vec![first, request.thinking]
}

#[test]
fn a_switch_off_between_turns_leaves_thinking_out_of_every_later_request() {
    let mut d = Driver::new(thinking_config());
    assert_eq!(turn_with_tools(&mut d, "one"), vec![Some(ON), Some(ON)]);
    let out = d.handle(switch(&d, Some(Thinking::Disabled)));
    assert_eq!(
        persisted_records(&out),
        vec![Record::Configure {
            system: config().system,
            tools: config().tools,
            thinking: Some(Thinking::Disabled),
        }]
    );
    assert_eq!(d.session.config().thinking, None);
    let tools = turn_with_tools(&mut d, "two");
    assert_eq!(tools, vec![None, None]);
    // Off is the field left out: the request is the bytes of a session that never thought.
    let (_, last) = d.all_sends().pop().unwrap();
    assert!(
        !last.to_json().contains("\"thinking\""),
        "{}",
        last.to_json()
    );
}

#[test]
fn a_switch_on_turns_thinking_on_from_the_next_turn() {
    let mut d = Driver::default();
    assert_eq!(turn_with_tools(&mut d, "one"), vec![None, None]);
    d.handle(switch(&d, Some(ON)));
    assert_eq!(turn_with_tools(&mut d, "two"), vec![Some(ON), Some(ON)]);
}

#[test]
fn a_configure_without_thinking_leaves_it_and_writes_the_record_it_always_wrote() {
    let mut d = Driver::new(thinking_config());
    let out = d.handle(switch(&d, None));
    assert_eq!(d.session.config().thinking, Some(ON));
    let Some(turnsim_core::Output::Persist { bytes }) = out.first() else {
        panic!("no record: {out:?}");
    };
    let payload = String::from_utf8_lossy(&bytes[12..]).into_owned();
    assert!(
        payload.starts_with("{\"configure\":{\"system\":"),
        "{payload}"
    );
    assert!(!payload.contains("thinking"), "{payload}");
}

#[test]
fn a_switch_inside_a_tool_loop_is_refused_and_changes_nothing() {
    let mut d = Driver::new(thinking_config());
    let op = d.prompt("one");
    let (tools, _) = the_dispatch(&d.stream(op, &two_tool_reply()));
    let before = d.session.to_bytes();
    let refused = d.session.handle(switch(&d, Some(Thinking::Disabled)));
    assert!(
        matches!(refused, Err(SessionError::Busy { .. })),
        "{refused:?}"
    );
    assert_eq!(d.session.to_bytes(), before);
    d.tool_result(tools, outcome("toolu_glob", "main.go", false));
    let (_, request) = the_send(&d.tool_result(tools, outcome("toolu_ls", "main.go", false)));
    assert_eq!(request.thinking, Some(ON));
}

#[test]
fn a_restore_replays_a_thinking_switch_whatever_config_it_is_given() {
    let mut d = Driver::new(thinking_config());
    turn_with_tools(&mut d, "one");
    d.handle(switch(&d, Some(Thinking::Disabled)));
    // The host restarts with the configuration it created the session with.
    let (restored, out) = Session::restore(thinking_config(), &d.log.bytes).unwrap();
    assert_eq!(out, vec![]);
    assert_eq!(restored.config().thinking, None);
    let mut again = Driver {
        session: restored,
        log: d.log.clone(),
        outputs: Vec::new(),
    };
    assert_eq!(turn_with_tools(&mut again, "two"), vec![None, None]);
    // And a switch back on is replayed after it, in log order.
    again.handle(switch(&again, Some(ON)));
    let (on, _) = Session::restore(config(), &again.log.bytes).unwrap();
    assert_eq!(on.config().thinking, Some(ON));
}
