//! Request assembly (docs/spec.md §8), observed through the requests a `Session` sends.

mod common;

use common::{
    Driver, NOW, Part, final_reply, outcome, reply, text_reply, the_dispatch, the_send,
    two_tool_reply,
};
use std::collections::BTreeMap;
use turnsim_core::log::Record;
use turnsim_core::request::directive_words;
use turnsim_core::{
    Activity, Block, CacheBreakpoint, Input, Message, Output, Request, Role, StopReason, ToolSpec,
    prefix_digest, validate_history,
};

const STANCE: &str = "act on the user's words; ask when unsure";

/// The turn context block the session must write for `NOW`, with no hidden directives.
fn plain_context() -> String {
    format!("<turn_context>\n<now>{NOW}</now>\n<stance>{STANCE}</stance>\n</turn_context>")
}

fn bp(points: &[Option<usize>]) -> Vec<CacheBreakpoint> {
    points
        .iter()
        .map(|p| CacheBreakpoint { after_message: *p })
        .collect()
}

fn system_json(r: &Request) -> String {
    serde_json::to_string(&r.system).unwrap()
}

fn tools_json(r: &Request) -> String {
    serde_json::to_string(&r.tools).unwrap()
}

fn messages_json(r: &Request, upto: usize) -> String {
    serde_json::to_string(&r.messages[..upto]).unwrap()
}

/// Two turns, each with one tool round: four requests in all.
fn two_turns_with_tools() -> (Driver, Vec<Request>) {
    let mut d = Driver::default();
    let op1 = d.prompt("find the go files and list the directory");
    let (op2, _) = the_dispatch(&d.stream(op1, &two_tool_reply()));
    d.tool_result(op2, outcome("toolu_glob", "main.go", false));
    let (op3, _) = the_send(&d.tool_result(op2, outcome("toolu_ls", "go.mod\nmain.go", false)));
    d.stream(op3, &final_reply());

    let op4 = d.prompt("now count the lines of main.go");
    let (op5, _) = the_dispatch(&d.stream(
        op4,
        &reply(
            &[Part::ToolUse {
                id: "toolu_wc",
                name: "bash",
                json: vec!["{\"cmd\":\"wc -l main.go\"}"],
            }],
            StopReason::ToolUse,
            12,
        ),
    ));
    let (op6, _) = the_send(&d.tool_result(op5, outcome("toolu_wc", "42 main.go", false)));
    d.stream(op6, &text_reply("main.go has 42 lines."));
    let requests: Vec<Request> = d.all_sends().into_iter().map(|(_, r)| r).collect();
    assert_eq!(requests.len(), 4);
    validate_history(d.history()).expect("valid");
    (d, requests)
}

#[test]
fn the_turn_context_block_precedes_the_users_words_in_the_directive() {
    let mut d = Driver::default();
    let op = d.prompt("list the files");
    let request = &d.all_sends()[0].1;
    assert_eq!(request.messages.len(), 1);
    assert_eq!(
        *request.messages[0],
        Message::user_blocks(vec![
            Block::text(plain_context()),
            Block::text("list the files"),
        ])
    );
    assert_eq!(
        request.messages[0].to_json(),
        r#"{"role":"user","content":[{"type":"text","text":"<turn_context>\n<now>2025-06-01T12:00:00Z</now>\n<stance>act on the user's words; ask when unsure</stance>\n</turn_context>"},{"type":"text","text":"list the files"}]}"#
    );
    assert_eq!(op.0, 1);
}

#[test]
fn the_directive_is_byte_identical_in_every_request_of_its_turn_and_of_later_turns() {
    let (_, requests) = two_turns_with_tools();
    let first = requests[0].messages[0].to_json();
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.messages[0].to_json(), first, "request {i}");
    }
    // Turn 2's directive is message 4 of its first request and stays the same after.
    let second = requests[2].messages[4].to_json();
    assert_eq!(
        directive_words(&requests[2].messages[4]),
        Some("now count the lines of main.go")
    );
    assert_eq!(requests[3].messages[4].to_json(), second);
}

#[test]
fn the_turn_context_never_appears_on_a_tool_result_message() {
    let (_, requests) = two_turns_with_tools();
    let last = requests.last().unwrap();
    let carrying: Vec<usize> = last
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.to_json().contains("<turn_context>"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(carrying, vec![0, 4], "only the two directives carry it");
    for r in &requests {
        for m in &r.messages {
            let answers_tools = m
                .blocks()
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }));
            if answers_tools {
                assert!(!m.to_json().contains("<turn_context>"), "{}", m.to_json());
            }
        }
    }
    // The tool-result messages are exactly the results, nothing added.
    assert_eq!(
        last.messages[2].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_glob","content":"main.go"},{"type":"tool_result","tool_use_id":"toolu_ls","content":"go.mod\nmain.go"}]}"#
    );
    assert_eq!(
        last.messages[6].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wc","content":"42 main.go"}]}"#
    );
}

#[test]
fn each_request_carries_the_previous_one_as_a_byte_identical_prefix() {
    let (_, requests) = two_turns_with_tools();
    for pair in requests.windows(2) {
        let (prev, next) = (&pair[0], &pair[1]);
        assert!(next.messages.len() > prev.messages.len());
        assert_eq!(system_json(next), system_json(prev));
        assert_eq!(tools_json(next), tools_json(prev));
        assert_eq!(
            messages_json(next, prev.messages.len()),
            messages_json(prev, prev.messages.len())
        );
    }
    assert_eq!(
        requests
            .iter()
            .map(|r| r.messages.len())
            .collect::<Vec<_>>(),
        vec![1, 3, 5, 7]
    );
}

#[test]
fn every_request_carries_the_configured_system_tools_and_session_key() {
    let (d, requests) = two_turns_with_tools();
    for r in &requests {
        assert_eq!(r.system, "You are a careful coding agent.");
        assert_eq!(r.tools, d.session.config().tools);
        assert_eq!(r.cache.session_key, "sess-1");
    }
}

#[test]
fn first_turn_breakpoints_are_the_prefix_and_the_last_message() {
    let mut d = Driver::default();
    d.prompt("hi");
    assert_eq!(d.all_sends()[0].1.cache.breakpoints, bp(&[None, Some(0)]));
}

#[test]
fn second_turn_breakpoints_mark_the_previous_turns_end_and_the_last_message() {
    let mut d = Driver::default();
    let op = d.prompt("hi");
    d.stream(op, &text_reply("hello"));
    d.prompt("how are you?");
    let request = &d.all_sends()[1].1;
    assert_eq!(
        request.messages.iter().map(|m| m.role).collect::<Vec<_>>(),
        vec![Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(request.cache.breakpoints, bp(&[None, Some(1), Some(2)]));
}

#[test]
fn breakpoints_within_a_turn_follow_the_last_message() {
    let (_, requests) = two_turns_with_tools();
    assert_eq!(
        requests
            .iter()
            .map(|r| r.cache.breakpoints.clone())
            .collect::<Vec<_>>(),
        vec![
            bp(&[None, Some(0)]),
            bp(&[None, Some(2)]),
            bp(&[None, Some(3), Some(4)]),
            bp(&[None, Some(3), Some(6)]),
        ]
    );
}

fn prefix_changes(outputs: &[Output]) -> Vec<Activity> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Activity { activity } if activity.kind == "prefix-changed" => {
                Some(activity.clone())
            }
            _ => None,
        })
        .collect()
}

fn logged_activities(d: &Driver) -> Vec<Activity> {
    d.log
        .records()
        .into_iter()
        .filter_map(|r| match r {
            Record::Activity { activity } => Some(activity),
            _ => None,
        })
        .collect()
}

fn simple_turn(d: &mut Driver, words: &str) {
    let op = d.prompt(words);
    d.stream(op, &text_reply("ok"));
}

#[test]
fn a_changed_system_prefix_is_recorded_exactly_once() {
    let mut d = Driver::default();
    let tools: Vec<ToolSpec> = d.session.config().tools.to_vec();
    let old = prefix_digest("You are a careful coding agent.", &tools);
    let new = prefix_digest("You are a terse coding agent.", &tools);
    assert_ne!(old, new);

    simple_turn(&mut d, "one");
    d.handle(Input::Configure {
        system: "You are a terse coding agent.".into(),
        tools: tools.clone().into(),
        thinking: None,
    });
    // Turn 2 sends two requests with the new prefix: only the first differs.
    let op = d.prompt("two");
    let (tools_op, _) = the_dispatch(&d.stream(
        op,
        &reply(
            &[Part::ToolUse {
                id: "toolu_1",
                name: "ls",
                json: vec!["{}"],
            }],
            StopReason::ToolUse,
            3,
        ),
    ));
    let (op, _) = the_send(&d.tool_result(tools_op, outcome("toolu_1", "a.txt", false)));
    d.stream(op, &text_reply("done"));
    simple_turn(&mut d, "three");

    let expected = Activity {
        kind: "prefix-changed".into(),
        data: BTreeMap::from([
            ("previous".to_string(), old.clone()),
            ("current".to_string(), new.clone()),
        ]),
    };
    assert_eq!(prefix_changes(&d.outputs), vec![expected.clone()]);
    assert_eq!(logged_activities(&d), vec![expected]);
    let sends = d.all_sends();
    assert_eq!(sends.len(), 4);
    assert_eq!(sends[0].1.system, "You are a careful coding agent.");
    assert!(
        sends[1..]
            .iter()
            .all(|(_, r)| r.system == "You are a terse coding agent.")
    );
}

#[test]
fn a_repeated_system_prefix_records_no_activity() {
    let mut d = Driver::default();
    let cfg = d.session.config().clone();
    simple_turn(&mut d, "one");
    d.handle(Input::Configure {
        system: cfg.system.clone(),
        tools: cfg.tools.clone(),
        thinking: None,
    });
    simple_turn(&mut d, "two");
    simple_turn(&mut d, "three");
    assert_eq!(prefix_changes(&d.outputs), vec![]);
    assert_eq!(logged_activities(&d), vec![]);
}

#[test]
fn changed_tools_change_the_prefix_too() {
    let mut d = Driver::default();
    let cfg = d.session.config().clone();
    simple_turn(&mut d, "one");
    let fewer = cfg.tools[..1].to_vec();
    d.handle(Input::Configure {
        system: cfg.system.clone(),
        tools: fewer.clone().into(),
        thinking: None,
    });
    simple_turn(&mut d, "two");
    let changes = prefix_changes(&d.outputs);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].data["previous"],
        prefix_digest(&cfg.system, &cfg.tools)
    );
    assert_eq!(
        changes[0].data["current"],
        prefix_digest(&cfg.system, &fewer)
    );
}

// ------------------------------------------------------------------ compaction

/// The directive's context block in the last request sent.
fn last_context_block(d: &Driver) -> String {
    let sends = d.all_sends();
    let r = &sends.last().unwrap().1;
    match r.messages.last().unwrap().blocks() {
        [Block::Text { text }, Block::Text { .. }] => text.clone(),
        other => panic!("not a directive: {other:?}"),
    }
}

#[test]
fn a_directive_hidden_by_compaction_resurfaces_in_the_next_turns_conversation_thread() {
    let mut d = Driver::default();
    simple_turn(&mut d, "fix the bug in parser.rs");
    simple_turn(&mut d, "and keep the public API");
    d.handle(Input::Compact {
        summary: "We fixed the parser bug without changing the API.".into(),
    });
    let op = d.prompt("now add tests");
    assert_eq!(
        last_context_block(&d),
        format!(
            "<turn_context>\n<now>{NOW}</now>\n<stance>{STANCE}</stance>\n<conversation_thread>\n<directive>fix the bug in parser.rs</directive>\n<directive>and keep the public API</directive>\n</conversation_thread>\n</turn_context>"
        )
    );
    // The request is the compacted history plus the new directive.
    let r = &d.all_sends()[2].1;
    assert_eq!(
        r.messages[..2]
            .iter()
            .map(|m| m.to_json())
            .collect::<Vec<_>>(),
        vec![
            r#"{"role":"user","content":"[Earlier conversation compacted; a summary follows.]"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"We fixed the parser bug without changing the API."}]}"#,
        ]
    );
    assert_eq!(directive_words(&r.messages[2]), Some("now add tests"));
    d.stream(op, &text_reply("ok"));
    validate_history(d.history()).expect("valid");
}

#[test]
fn the_current_turns_own_directive_is_never_repeated_in_the_thread() {
    let mut d = Driver::default();
    simple_turn(&mut d, "fix the bug in parser.rs");
    d.handle(Input::Compact {
        summary: "We looked at the parser.".into(),
    });
    d.prompt("fix the bug in parser.rs");
    assert_eq!(last_context_block(&d), plain_context());
}

#[test]
fn a_hidden_directive_that_is_visible_again_is_not_repeated() {
    let mut d = Driver::default();
    simple_turn(&mut d, "fix the bug in parser.rs");
    simple_turn(&mut d, "run the tests");
    d.handle(Input::Compact {
        summary: "We fixed the parser.".into(),
    });
    // The user says it again: from now on it is verbatim in the request.
    simple_turn(&mut d, "fix the bug in parser.rs");
    d.prompt("commit");
    assert_eq!(
        last_context_block(&d),
        format!(
            "<turn_context>\n<now>{NOW}</now>\n<stance>{STANCE}</stance>\n<conversation_thread>\n<directive>run the tests</directive>\n</conversation_thread>\n</turn_context>"
        )
    );
}

#[test]
fn hidden_directives_survive_a_restart() {
    let mut d = Driver::default();
    simple_turn(&mut d, "fix the bug in parser.rs");
    d.handle(Input::Compact {
        summary: "We fixed the parser.".into(),
    });
    let (session, out) =
        turnsim_core::Session::restore(common::config(), &d.log.bytes).expect("restores");
    assert_eq!(out, vec![]);
    let mut d = Driver {
        session,
        log: d.log.clone(),
        outputs: Vec::new(),
    };
    d.prompt("now add tests");
    assert_eq!(
        last_context_block(&d),
        format!(
            "<turn_context>\n<now>{NOW}</now>\n<stance>{STANCE}</stance>\n<conversation_thread>\n<directive>fix the bug in parser.rs</directive>\n</conversation_thread>\n</turn_context>"
        )
    );
    assert_eq!(
        d.all_sends()[0].1.cache.breakpoints,
        bp(&[None, Some(1), Some(2)])
    );
}
