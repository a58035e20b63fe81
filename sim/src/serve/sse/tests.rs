//! Byte-level tests of the wire encoding against what the real API sends.

use super::*;
use turnsim_core::{BlockStart, StreamEvent};

#[test]
fn ping_is_spaced_and_never_padded() {
    assert_eq!(
        encode(&WireEvent::Ping, 7),
        b"event: ping\ndata: {\"type\": \"ping\"}\n\n".to_vec()
    );
}

#[test]
fn padding_goes_before_the_final_brace() {
    let bytes = encode(&WireEvent::BlockStop { index: 1 }, 3);
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1   }\n\n"
    );
}

#[test]
fn tool_input_is_split_into_small_pieces_after_an_empty_one() {
    let meta = MessageMeta {
        id: "msg_1".into(),
        model: "m".into(),
        input_tokens: 3,
    };
    let events = [
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::ToolUse {
                id: "toolu_1".into(),
                name: "ls".into(),
            },
        },
        StreamEvent::InputJsonDelta {
            index: 0,
            partial_json: r#"{"path":"/tmp/some/longer/path"}"#.into(),
        },
        StreamEvent::BlockStop { index: 0 },
    ];
    let wire = to_wire(&events, &meta);
    assert!(matches!(wire[1], WireEvent::BlockStart { .. }));
    assert_eq!(wire[2], WireEvent::Ping);
    let pieces: Vec<String> = wire
        .iter()
        .filter_map(|e| match e {
            WireEvent::Delta {
                delta: WireDelta::InputJson(p),
                ..
            } => Some(p.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(pieces[0], "");
    assert!(pieces.iter().all(|p| p.len() <= INPUT_PIECE_MAX));
    assert_eq!(pieces.concat(), r#"{"path":"/tmp/some/longer/path"}"#);
    let msg = message_json(&wire);
    assert_eq!(msg["content"][0]["input"]["path"], "/tmp/some/longer/path");
}

#[test]
fn a_tool_use_block_has_the_same_fields_in_json_as_when_streamed() {
    let meta = MessageMeta {
        id: "msg_1".into(),
        model: "m".into(),
        input_tokens: 3,
    };
    let events = [
        StreamEvent::MessageStart,
        StreamEvent::BlockStart {
            index: 0,
            block: BlockStart::ToolUse {
                id: "toolu_1".into(),
                name: "ls".into(),
            },
        },
        StreamEvent::InputJsonDelta {
            index: 0,
            partial_json: r#"{"path":"/tmp"}"#.into(),
        },
        StreamEvent::BlockStop { index: 0 },
    ];
    let wire = to_wire(&events, &meta);
    let streamed = String::from_utf8(encode(&wire[1], 0)).expect("utf-8");
    let start: serde_json::Value = serde_json::from_str(
        streamed
            .lines()
            .nth(1)
            .and_then(|l| l.strip_prefix("data: "))
            .expect("a data line"),
    )
    .expect("json");
    let block = &message_json(&wire)["content"][0];
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v.as_object().expect("object").keys().cloned().collect()
    };
    assert_eq!(keys(block), keys(&start["content_block"]));
    assert_eq!(keys(block), ["type", "id", "name", "input", "caller"]);
    assert_eq!(block["caller"], serde_json::json!({"type": "direct"}));
    assert_eq!(block["input"], serde_json::json!({"path": "/tmp"}));
}

#[test]
fn every_encoded_event_parses_back_with_its_padding() {
    let events = [
        WireEvent::MessageStart {
            id: "msg_x".into(),
            model: "claude".into(),
            usage: StartUsage::estimate(9),
        },
        WireEvent::Ping,
        WireEvent::BlockStart {
            index: 0,
            block: WireBlock::Thinking,
        },
        WireEvent::Delta {
            index: 0,
            delta: WireDelta::Thinking("hm \"q\"\n".into()),
        },
        WireEvent::Delta {
            index: 0,
            delta: WireDelta::Signature("sig".into()),
        },
        WireEvent::BlockStop { index: 0 },
        WireEvent::MessageDelta {
            stop_reason: "end_turn".into(),
            usage: DeltaUsage {
                input_tokens: 9,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 0,
                output_tokens: 4,
            },
        },
        WireEvent::MessageStop,
        WireEvent::Error {
            kind: "overloaded_error".into(),
            message: "Overloaded".into(),
        },
    ];
    for (i, e) in events.iter().enumerate() {
        let pad = if is_padded(e) { i } else { 0 };
        let bytes = encode(e, pad);
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(parse_event(&text), Some((e.clone(), pad)), "{text}");
    }
}
