//! An engine that misbehaves on the pipe fails its run with an error that names the
//! line, quotes it, says what was expected and shows the engine's stderr; a hang is
//! reported as a hang within the timeout. The engines here are `sh` scripts, so
//! these tests need no interpreter beyond the POSIX shell.

use crate::stdio_support;

use std::time::{Duration, Instant};
use turnsim::EngineFactory;
use turnsim::run_seed;
use turnsim::stdio_engine::StdioFactory;
use turnsim::testing::world::sim_config;

const HELLO: &str = r#"{"hello":"turnsim-engine","protocol":1,"engine":"sh"}"#;
const CREATED: &str = r#"{"reply":"create","fixed_texts":[],"history":{"keep":0,"append":[]},"pending":{"pending":"none"},"idle":true,"state":"s"}"#;

/// A command running `script` under `sh`; the script sees HELLO and CREATED as
/// `$1` and `$2`.
fn sh(script: &str) -> String {
    format!("sh -c '{script}' sh '{HELLO}' '{CREATED}'")
}

fn violation_of(factory: &StdioFactory) -> (String, String) {
    let v = run_seed(factory, 0, false)
        .violation
        .expect("the run fails");
    (v.invariant.name().to_string(), v.message)
}

#[test]
fn a_command_that_is_not_an_engine_fails_at_the_hello_naming_line_1_and_the_text() {
    let err = StdioFactory::new("sh -c 'echo hello there'").unwrap_err();
    assert!(
        err.starts_with("engine protocol error at line 1 of its stdout: expected the hello line"),
        "{err}"
    );
    assert!(
        err.ends_with("got: hello there [engine `sh -c 'echo hello there'`; its stderr is empty]"),
        "{err}"
    );
}

#[test]
fn a_missing_program_is_a_start_error_naming_the_command() {
    let err = StdioFactory::new("/nonexistent/engine --flag").unwrap_err();
    assert!(
        err.starts_with("cannot start the engine `/nonexistent/engine --flag`:"),
        "{err}"
    );
}

#[test]
fn another_protocol_version_is_refused_with_both_versions() {
    let err = StdioFactory::new(
        r#"sh -c 'echo "{\"hello\":\"turnsim-engine\",\"protocol\":3,\"engine\":\"x\"}"'"#,
    )
    .unwrap_err();
    assert!(
        err.starts_with("the engine speaks protocol 3; this turnsim speaks protocols 1 to 2"),
        "{err}"
    );
}

#[test]
fn a_line_that_is_not_json_fails_the_run_with_its_number_its_text_and_the_stderr() {
    let f = StdioFactory::new(&sh(
        r#"echo "$1"; read x; echo "$2"; read x; echo oops >&2; echo not json"#,
    ))
    .expect("hello");
    let (invariant, message) = violation_of(&f);
    assert_eq!(invariant, "engine_panic");
    assert!(
        message.contains(
            "engine protocol error at line 3 of its stdout: expected a JSON reply to `input`"
        ),
        "{message}"
    );
    assert!(message.contains("got: not json"), "{message}");
    assert!(
        message.contains("its stderr (last 16384 bytes at most) follows]\noops"),
        "{message}"
    );
}

#[test]
fn a_reply_out_of_turn_names_what_was_expected() {
    let f = StdioFactory::new(&sh(r#"echo "$1"; read x; echo "$2"; read x; echo "$2""#))
        .expect("hello");
    let (invariant, message) = violation_of(&f);
    assert_eq!(invariant, "engine_panic");
    assert!(
        message.contains("line 3 of its stdout: expected a reply to `input` (`\"reply\":\"input\"`), got a reply to `create`; got: {\"reply\":\"create\""),
        "{message}"
    );
}

#[test]
fn an_engine_that_exits_says_so_with_its_status() {
    let f =
        StdioFactory::new(&sh(r#"echo "$1"; read x; echo "$2"; read x; exit 3"#)).expect("hello");
    let (_, message) = violation_of(&f);
    assert!(
        message.contains(
            "the engine closed its stdout instead of answering `input` (it exited: exit status: 3)"
        ),
        "{message}"
    );
}

#[test]
fn a_silent_engine_is_a_hang_reported_within_the_timeout() {
    let f = StdioFactory::new(&sh(r#"echo "$1"; read x; echo "$2"; read x; sleep 30"#))
        .expect("hello")
        .timeout(Duration::from_millis(300));
    let started = Instant::now();
    let (invariant, message) = violation_of(&f);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(invariant, "engine_panic");
    assert!(
        message.starts_with(
            "the engine panicked: engine hang: no reply to `input` within 300 ms (the process was killed)"
        ),
        "{message}"
    );
}

#[test]
fn a_history_delta_keeping_more_than_was_held_is_an_error() {
    let bad = r#"{"reply":"create","fixed_texts":[],"history":{"keep":2,"append":[]},"pending":{"pending":"none"},"idle":true,"state":"s"}"#;
    let f = StdioFactory::new(&format!(
        "sh -c 'echo \"$1\"; read x; echo \"$2\"; sleep 5' sh '{HELLO}' '{bad}'"
    ))
    .expect("hello");
    let err = f.open_engine(sim_config()).err().expect("refused");
    assert!(
        err.starts_with(
            "engine protocol error in the reply to `create`: history keeps 2 messages but only 0 were held"
        ),
        "{err}"
    );
}

#[test]
fn the_reference_through_the_pipe_answers_state_queries_matching_its_replies() {
    let f = StdioFactory::new(&stdio_support::stdio_reference()).expect("hello");
    let mut e = f.open_engine(sim_config()).expect("created");
    e.verify().expect("state after create");
    let input = turnsim_core::Input::Prompt {
        text: "hi".into(),
        now: "t".into(),
    };
    let outputs = turnsim::Engine::handle(&mut e, input).expect("accepted");
    assert_eq!(outputs.len(), 3, "turn start, receipt, send: {outputs:?}");
    e.verify().expect("state after a prompt");
    assert_eq!(turnsim::Engine::history(&e).len(), 1);
}

#[test]
fn a_log_the_engine_cannot_read_is_a_refused_restore_not_a_protocol_error() {
    let f = StdioFactory::new(&stdio_support::stdio_reference()).expect("hello");
    let err = f
        .restore(sim_config(), b"definitely not a log")
        .err()
        .expect("refused");
    assert!(err.starts_with("log corrupt at record 0 (byte 0)"), "{err}");
}

#[test]
fn fresh_processes_give_the_in_process_digests_too() {
    let f = StdioFactory::new(&stdio_support::stdio_reference())
        .expect("hello")
        .fresh_processes(true);
    for seed in 0..40 {
        let direct = run_seed(&turnsim::Reference, seed, false);
        assert_eq!(
            run_seed(&f, seed, false).digest,
            direct.digest,
            "seed {seed}"
        );
    }
}

#[test]
fn an_engine_that_dies_at_create_fails_the_run_at_its_first_input_naming_create() {
    let f = StdioFactory::new(&sh(r#"echo "$1"; read x; echo dying >&2; exit 5"#)).expect("hello");
    let (invariant, message) = violation_of(&f);
    assert_eq!(invariant, "engine_panic");
    assert!(
        message.contains(
            "the engine closed its stdout instead of answering `create` (it exited: exit status: 5)"
        ),
        "{message}"
    );
    assert!(message.ends_with("follows]\ndying"), "{message}");
}

#[test]
fn an_absent_interpreter_is_a_visible_skip() {
    assert_eq!(
        stdio_support::interpreter(
            "no-such-interpreter-here",
            "an_absent_interpreter_is_a_visible_skip"
        ),
        None
    );
}

/// An engine that answers `create`, then each `input` with the next of `replies`
/// (a `send` of a request with these `tools`), then waits.
fn sending_tools(tools: &[&str]) -> StdioFactory {
    let replies: Vec<String> = tools
        .iter()
        .map(|t| {
            format!(
                r#"{{"reply":"input","outputs":[{{"output":"send","op":1,"request":{{"system":"s","tools":{t},"messages":[],"cache":{{"session_key":"k","breakpoints":[]}}}}}}],"history":{{"keep":0,"append":[]}},"pending":{{"pending":"generation","op":1}},"idle":false,"state":"s"}}"#
            )
        })
        .collect();
    let mut script = String::from(r#"echo "$1"; read x; echo "$2";"#);
    let mut args = format!("'{HELLO}' '{CREATED}'");
    for (i, r) in replies.iter().enumerate() {
        script.push_str(&format!(r#" read x; echo "${}";"#, i + 3));
        args.push_str(&format!(" '{r}'"));
    }
    script.push_str(" sleep 5");
    StdioFactory::new(&format!("sh -c '{script}' sh {args}")).expect("hello")
}

fn sent_tools(outputs: &[turnsim_core::Output]) -> std::sync::Arc<[turnsim_core::ToolSpec]> {
    match outputs {
        [turnsim_core::Output::Send { request, .. }] => request.tools.clone(),
        other => panic!("one send expected: {other:?}"),
    }
}

fn prompt() -> turnsim_core::Input {
    turnsim_core::Input::Prompt {
        text: "hi".into(),
        now: "t".into(),
    }
}

#[test]
fn requests_repeating_the_tools_share_one_list_and_other_tools_are_read_afresh() {
    let a = r#"[{"name":"a","description":"d","input_schema":{"type":"object"}}]"#;
    // The same tools spelt with other bytes: read again, equal, so still shared.
    let a_spaced = r#"[ {"name":"a","description":"d","input_schema":{"type":"object"}} ]"#;
    let b = r#"[{"name":"b","description":"d","input_schema":{"type":"object"}}]"#;
    let f = sending_tools(&[a, a, a_spaced, b, b]);
    let mut e = f.open_engine(sim_config()).expect("created");
    let mut lists = Vec::new();
    for _ in 0..5 {
        let outputs = turnsim::Engine::handle(&mut e, prompt()).expect("accepted");
        lists.push(sent_tools(&outputs));
    }
    let names: Vec<&str> = lists.iter().map(|l| l[0].name.as_str()).collect();
    assert_eq!(names, ["a", "a", "a", "b", "b"]);
    assert_eq!(
        lists[0][0].input_schema,
        serde_json::json!({"type": "object"})
    );
    assert!(std::sync::Arc::ptr_eq(&lists[0], &lists[1]));
    assert!(std::sync::Arc::ptr_eq(&lists[1], &lists[2]));
    assert!(!std::sync::Arc::ptr_eq(&lists[2], &lists[3]));
    assert!(std::sync::Arc::ptr_eq(&lists[3], &lists[4]));
}

#[test]
fn a_request_whose_tools_are_not_tool_definitions_is_a_protocol_error_naming_them() {
    let a = r#"[{"name":"a","description":"d","input_schema":{"type":"object"}}]"#;
    // Read once and kept: a later request with other bytes is read afresh and refused.
    let f = sending_tools(&[a, r#"{"name":"a"}"#]);
    let mut e = f.open_engine(sim_config()).expect("created");
    turnsim::Engine::handle(&mut e, prompt()).expect("accepted");
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        turnsim::Engine::handle(&mut e, prompt())
    }))
    .err()
    .and_then(|p| p.downcast::<String>().ok())
    .expect("a protocol error panics the world's guard with its message");
    assert!(
        err.starts_with(
            "engine protocol error in the reply to input 2: a request's tools: invalid type: map, expected a sequence"
        ),
        "{err}"
    );
}
