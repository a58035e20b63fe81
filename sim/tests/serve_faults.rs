//! Every provider fault `turnsim serve` injects is produced on demand, scripted or
//! seeded, and looks on the wire as it does from the real provider.

use crate::serve_support;

use serde_json::json;
use serve_support::*;
use std::time::Duration;
use turnsim::testing::serve::script::Script;
use turnsim::testing::serve::sse::{WireDelta, WireEvent};
use turnsim::{FaultKind, Ratio, SimOptions};

fn first_request() -> serde_json::Value {
    body(&[json!({"role": "user", "content": "go"})], true)
}

#[test]
fn status_529_500_and_429_with_retry_after_are_served_in_script_order() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "status", "status": 529}, {"kind": "status", "status": 500},
                {"kind": "status", "status": 429, "retry_after": 3},
                {"kind": "error", "error": "overloaded"}]"#,
        ),
        "status",
    );
    let expect = [
        (529, "overloaded_error"),
        (500, "api_error"),
        (429, "rate_limit_error"),
        (529, "overloaded_error"),
    ];
    for (status, kind) in expect {
        let raw = post(server.addr, &first_request());
        assert_eq!(raw.status, status);
        let err = raw.json();
        assert_eq!(err["type"], "error");
        assert_eq!(err["error"]["type"], kind, "{err}");
        assert!(err["request_id"].is_string());
        assert_eq!(raw.header("retry-after"), (status == 429).then_some("3"));
    }
    // The script is used up; the next request is answered normally.
    assert_eq!(post(server.addr, &first_request()).status, 200);
    let outcomes: Vec<String> = server
        .server
        .records()
        .iter()
        .map(|r| r.answer.outcome.clone())
        .collect();
    assert_eq!(outcomes[2], "status 429, retry-after 3");
}

#[test]
fn a_cut_inside_a_tool_use_input_is_a_truncated_chunked_body() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "cut", "after_events": 5, "mid_event": true,
                 "reply": {"kind": "reply", "tool_calls": [{"name": "bash"}], "stop": "tool_use"}}]"#,
        ),
        "cut-tool",
    );
    let raw = post(server.addr, &first_request());
    assert_eq!(raw.status, 200);
    assert!(raw.chunked, "a stream goes out chunked");
    assert!(!raw.complete, "the final chunk must be missing");
    let text = raw.text();
    assert!(!text.ends_with("\n\n"), "the body stops inside an event");
    let events = raw.events();
    assert_eq!(events.len(), 5);
    assert!(matches!(events[1], WireEvent::BlockStart { .. }));
    let input: String = events
        .iter()
        .filter_map(|e| match e {
            WireEvent::Delta {
                delta: WireDelta::InputJson(p),
                ..
            } => Some(p.as_str()),
            _ => None,
        })
        .collect();
    assert!(!input.is_empty());
    assert!(
        serde_json::from_str::<serde_json::Value>(&input).is_err(),
        "the tool input is cut short: {input}"
    );
    let tail = &text[text.rfind("\n\n").map_or(0, |i| i + 2)..];
    assert!(
        tail.starts_with("event: content_block_delta\ndata: {"),
        "{tail}"
    );
    let r = &server.server.records()[0];
    assert_eq!(r.answer.outcome, "cut after 5 events and half of the next");
}

#[test]
fn a_cut_between_events_ends_after_whole_events_without_the_final_chunk() {
    let (server, _dir) = start(script(r#"[{"kind": "cut", "after_events": 3}]"#), "cut");
    let raw = post(server.addr, &first_request());
    assert_eq!(raw.status, 200);
    assert!(!raw.complete);
    assert!(raw.text().ends_with("\n\n"));
    assert_eq!(raw.events().len(), 3);
    // Not streamed: the JSON body is cut in half.
    let (server, _dir) = start(
        script(r#"[{"kind": "cut", "after_events": 3}]"#),
        "cut-json",
    );
    let raw = post(
        server.addr,
        &body(&[json!({"role": "user", "content": "go"})], false),
    );
    assert_eq!(raw.status, 200);
    assert!(!raw.complete);
    assert!(serde_json::from_slice::<serde_json::Value>(&raw.body).is_err());
}

#[test]
fn a_slow_stream_waits_before_every_event() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "slow", "delay_ms": 40, "reply": {"kind": "reply", "text": "slow words", "stop": "end_turn"}}]"#,
        ),
        "slow",
    );
    let raw = post(server.addr, &first_request());
    assert!(raw.complete);
    let n = raw.events().len();
    assert!(n >= 7, "{n} events");
    // Every simulator event is preceded by the delay (the ping rides along).
    let floor = Duration::from_millis(40 * (n as u64 - 1));
    assert!(raw.elapsed >= floor, "{:?} < {floor:?}", raw.elapsed);
}

#[test]
fn a_hang_sends_nothing_until_the_client_gives_up_and_the_server_keeps_serving() {
    let (server, _dir) = start(
        script(r#"[{"kind": "hang"}, {"kind": "hang", "after_events": 1}]"#),
        "hang",
    );
    let give_up = Duration::from_millis(700);
    let body = first_request().to_string();
    let send_once = || {
        send(
            server.addr,
            "POST",
            "/v1/messages",
            &[("content-type", "application/json")],
            body.as_bytes(),
            give_up,
        )
    };
    let raw = send_once();
    assert!(raw.timed_out, "the client had to give up");
    assert_eq!(raw.status, 0, "not even a status line");
    // Hang after the stream started: headers and the first events, then silence.
    let raw = send_once();
    assert!(raw.timed_out);
    assert_eq!(raw.status, 200);
    let names: Vec<&str> = raw.events().iter().map(WireEvent::name).collect();
    assert_eq!(names, ["message_start", "ping"]);
    // Meanwhile the server still answers.
    let raw = post(server.addr, &first_request());
    assert_eq!(raw.status, 200);
    assert!(raw.complete);
    let outcomes: Vec<String> = server
        .server
        .records()
        .iter()
        .map(|r| r.answer.outcome.clone())
        .collect();
    assert_eq!(
        outcomes[..2],
        ["hang before headers", "hang after 2 events"]
    );
}

#[test]
fn an_overloaded_error_mid_stream_is_an_sse_error_event() {
    let (server, _dir) = start(
        script(r#"[{"kind": "error", "error": "overloaded", "after_events": 1}]"#),
        "sse-error",
    );
    let raw = post(server.addr, &first_request());
    assert_eq!(raw.status, 200);
    assert!(raw.complete);
    assert!(raw.text().ends_with(
        "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
    ));
}

#[test]
fn a_connection_reset_closes_without_an_answer() {
    let (server, _dir) = start(
        script(r#"[{"kind": "error", "error": "connection_reset"}]"#),
        "reset",
    );
    let raw = post(server.addr, &first_request());
    assert_eq!(raw.status, 0);
    assert!(!raw.timed_out, "closed at once, not hung");
    assert_eq!(post(server.addr, &first_request()).status, 200);
}

fn seeded_with(kind: FaultKind, seed: u64) -> Script {
    let mut options = SimOptions::quiet(seed);
    options.faults.insert(kind, Ratio::ALWAYS);
    options.provider_latency = [0, 5];
    Script {
        seed,
        options,
        faults: true,
        steps: Vec::new(),
    }
}

#[test]
fn seeded_faults_come_from_the_simulator_options() {
    let mut statuses = Vec::new();
    for seed in 0..12 {
        let (server, _dir) = start(
            seeded_with(FaultKind::ProviderErrorBefore, seed),
            "seeded-status",
        );
        let raw = post(server.addr, &first_request());
        assert!(raw.json()["error"]["type"].is_string(), "seed {seed}");
        if raw.status == 429 {
            assert!(raw.header("retry-after").is_some());
        }
        statuses.push(raw.status);
    }
    for s in [529, 500, 429] {
        assert!(statuses.contains(&s), "{s} never drawn in {statuses:?}");
    }
    let (server, _dir) = start(seeded_with(FaultKind::ProviderErrorMid, 5), "seeded-cut");
    let raw = post(server.addr, &first_request());
    assert_eq!(raw.status, 200);
    assert!(!raw.complete, "a seeded mid-stream error is a cut body");
    let (server, _dir) = start(seeded_with(FaultKind::Hang, 5), "seeded-hang");
    let raw = send(
        server.addr,
        "POST",
        "/v1/messages",
        &[],
        first_request().to_string().as_bytes(),
        Duration::from_millis(700),
    );
    assert!(raw.timed_out, "a seeded hang makes the client give up");
}
