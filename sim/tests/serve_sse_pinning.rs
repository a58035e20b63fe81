//! The SSE bytes are the real API's, pinned against streams recorded from it
//! (`tests/data/crush_parallel_tool_calls/`, from the crush go-vcr cassette), and the
//! recorded requests pass the server's verdicts.

use crate::serve_support;

use serde_json::Value;
use serve_support::*;
use turnsim::testing::serve::sse::{
    MessageMeta, WireDelta, WireEvent, encode, parse_event, to_wire,
};
use turnsim_core::{BlockStart, StopReason, StreamEvent, Usage};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/crush_parallel_tool_calls"
);

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}/{name}")).expect("test data is present")
}

/// Splits a recorded stream into its events, each with its `\n\n`.
fn frames(stream: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = stream;
    while let Some(end) = rest.find("\n\n") {
        out.push(&rest[..end + 2]);
        rest = &rest[end + 2..];
    }
    assert!(rest.is_empty(), "trailing bytes: {rest:?}");
    out
}

#[test]
fn the_encoder_reproduces_every_recorded_stream_byte_for_byte() {
    for n in 0..3 {
        let recorded = read(&format!("response-{n}.sse"));
        let mut rebuilt = Vec::new();
        let mut count = 0;
        for frame in frames(&recorded) {
            let (event, pad) = parse_event(frame).unwrap_or_else(|| {
                panic!("response-{n}: an event this encoder cannot express: {frame}")
            });
            rebuilt.extend(encode(&event, pad));
            count += 1;
        }
        assert!(count >= 8);
        assert_eq!(
            String::from_utf8_lossy(&rebuilt),
            recorded,
            "response-{n} differs"
        );
    }
}

/// The sequence of event kinds, one letter each, repeated deltas collapsed.
fn grammar(events: &[WireEvent]) -> String {
    let mut s = String::new();
    for e in events {
        let c = match e {
            WireEvent::MessageStart { .. } => 'S',
            WireEvent::Ping => 'p',
            WireEvent::BlockStart { .. } => '[',
            WireEvent::Delta {
                delta: WireDelta::InputJson(p),
                ..
            } if p.is_empty() => '0',
            WireEvent::Delta { .. } => 'd',
            WireEvent::BlockStop { .. } => ']',
            WireEvent::MessageDelta { .. } => 'D',
            WireEvent::MessageStop => 'E',
            WireEvent::Error { .. } => '!',
        };
        if !(c == 'd' && s.ends_with('d')) {
            s.push(c);
        }
    }
    s
}

fn recorded_events(n: usize) -> Vec<WireEvent> {
    frames(&read(&format!("response-{n}.sse")))
        .into_iter()
        .filter_map(|f| parse_event(f).map(|(e, _)| e))
        .collect()
}

#[test]
fn generated_streams_follow_the_recorded_event_order() {
    let meta = MessageMeta {
        id: "msg_test".into(),
        model: "claude-sonnet-4-6".into(),
        input_tokens: 10,
    };
    let tool = |index: usize, id: &str, name: &str, input: &str| {
        vec![
            StreamEvent::BlockStart {
                index,
                block: BlockStart::ToolUse {
                    id: id.into(),
                    name: name.into(),
                },
            },
            StreamEvent::InputJsonDelta {
                index,
                partial_json: input.into(),
            },
            StreamEvent::BlockStop { index },
        ]
    };
    // The shape of response-1: two tool calls, no text.
    let mut events = vec![StreamEvent::MessageStart];
    events.extend(tool(0, "toolu_a", "glob", r#"{"pattern": "**/*.go"}"#));
    events.extend(tool(
        1,
        "toolu_b",
        "ls",
        r#"{"path": "/tmp/crush-test/TestCoderAgent"}"#,
    ));
    events.push(StreamEvent::MessageDelta {
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 0,
            output_tokens: 110,
        },
    });
    events.push(StreamEvent::MessageStop);
    assert_eq!(
        grammar(&to_wire(&events, &meta)),
        grammar(&recorded_events(1))
    );
    // The shape of response-0 and -2: one text block.
    let text = vec![
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::Text,
        },
        StreamEvent::TextDelta {
            index: 0,
            text: "**".into(),
        },
        StreamEvent::TextDelta {
            index: 0,
            text: "Go files".into(),
        },
        StreamEvent::BlockStop { index: 0 },
        StreamEvent::MessageDelta {
            stop_reason: StopReason::EndTurn,
            usage: Usage {
                input_tokens: 0,
                output_tokens: 27,
            },
        },
        StreamEvent::MessageStop,
    ];
    assert_eq!(
        grammar(&to_wire(&text, &meta)),
        grammar(&recorded_events(2))
    );
    assert_eq!(grammar(&recorded_events(0)), grammar(&recorded_events(2)));
}

#[test]
fn the_server_streams_a_scripted_two_tool_reply_in_the_recorded_order() {
    let (server, _dir) = start(
        script(
            r#"[{"kind": "reply", "tool_calls": [{"name": "bash"}, {"name": "read_file"}], "stop": "tool_use"}]"#,
        ),
        "pin-live",
    );
    let raw = post(
        server.addr,
        &body(
            &[serde_json::json!({"role": "user", "content": "go"})],
            true,
        ),
    );
    assert_eq!(
        raw.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(grammar(&raw.events()), grammar(&recorded_events(1)));
    // Every frame the server sent parses back and re-encodes to the same bytes.
    let text = raw.text();
    let mut rebuilt = Vec::new();
    for frame in frames(&text) {
        let (event, pad) = parse_event(frame).expect("server frames parse");
        rebuilt.extend(encode(&event, pad));
    }
    assert_eq!(String::from_utf8_lossy(&rebuilt), text);
}

#[test]
fn the_recorded_crush_requests_pass_the_verdicts_but_the_reply_they_carry_back() {
    let (server, _dir) = start(script("[]"), "pin-requests");
    for n in 0..3 {
        let body: Value = serde_json::from_str(&read(&format!("request-{n}.json"))).expect("json");
        let raw = post(server.addr, &body);
        assert_eq!(raw.status, 200, "request-{n}: {}", raw.text());
    }
    let verdicts = server.server.verdicts();
    // Canned requests: the reply the agent's second request carries back is the one
    // the original recording's provider streamed, not the one this server did, so
    // `response_kept` (which compares with what this server sent) flags exactly that
    // message; nothing else may be flagged.
    let found = violations(&verdicts);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "request #2 (c2 #1): response_kept/reply_changed at message 1: request 2: message 1 is not the reply streamed to request 1"
        ),
        "{found:?}"
    );
    // The title request is a conversation of its own; the agent's two requests are
    // one loop, where only cache_control moved.
    let convs: Vec<&str> = verdicts.iter().map(|v| v.conversation.as_str()).collect();
    assert_eq!(convs, ["c1", "c2", "c2"]);
    assert_eq!(verdicts[2].conversation_request, 1);
}
