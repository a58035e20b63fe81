//! The wire format (docs/spec.md §1): Anthropic Messages JSON, typed, round-trips exactly.

mod common;

use serde_json::Value;
use turnsim_core::{
    Block, Content, Message, Role, ToolResultContent, parse_messages, validate_history,
};

/// Parses one message and serializes it back.
fn round_trip(json: &str) -> String {
    let m: Message = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
    serde_json::to_string(&m).expect("serializes")
}

#[test]
fn string_content_stays_a_string_and_block_content_stays_an_array() {
    for json in [
        r#"{"role":"user","content":"hello"}"#,
        r#"{"role":"user","content":[{"type":"text","text":"hello"}]}"#,
        r#"{"role":"assistant","content":"hi there"}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"hi there"}]}"#,
        r#"{"role":"user","content":""}"#,
        r#"{"role":"assistant","content":[]}"#,
    ] {
        assert_eq!(round_trip(json), json);
    }
    let m: Message = serde_json::from_str(r#"{"role":"user","content":"hello"}"#).unwrap();
    assert_eq!(m.content, Content::Text("hello".into()));
    let m: Message =
        serde_json::from_str(r#"{"role":"user","content":[{"type":"text","text":"hello"}]}"#)
            .unwrap();
    assert_eq!(m.content, Content::Blocks(vec![Block::text("hello")]));
}

#[test]
fn tool_result_is_error_round_trips_as_true_false_or_absent() {
    let cases = [
        (
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"boom","is_error":true}]}"#,
            Some(true),
        ),
        (
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fine","is_error":false}]}"#,
            Some(false),
        ),
        (
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fine"}]}"#,
            None,
        ),
    ];
    for (json, expected) in cases {
        assert_eq!(round_trip(json), json);
        let m: Message = serde_json::from_str(json).unwrap();
        let [Block::ToolResult { is_error, .. }] = m.blocks() else {
            panic!("{json}");
        };
        assert_eq!(*is_error, expected, "{json}");
    }
}

#[test]
fn tool_result_content_keeps_string_or_block_array() {
    let string =
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a\nb"}]}"#;
    let blocks = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}"#;
    assert_eq!(round_trip(string), string);
    assert_eq!(round_trip(blocks), blocks);
    let m: Message = serde_json::from_str(blocks).unwrap();
    let [Block::ToolResult { content, .. }] = m.blocks() else {
        panic!("not a tool_result");
    };
    assert_eq!(
        *content,
        ToolResultContent::Blocks(vec![Block::text("a"), Block::text("b")])
    );
    assert_eq!(content.text(), "ab");
}

#[test]
fn thinking_keeps_its_signature_and_redacted_thinking_its_data() {
    let json = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think.","signature":"EqQBCkYIARgCKkD+sig=="},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},{"type":"text","text":"Done."}]}"#;
    assert_eq!(round_trip(json), json);
    let m: Message = serde_json::from_str(json).unwrap();
    assert_eq!(
        m.blocks(),
        [
            Block::Thinking {
                thinking: "Let me think.".into(),
                signature: "EqQBCkYIARgCKkD+sig==".into()
            },
            Block::RedactedThinking {
                data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT".into()
            },
            Block::text("Done."),
        ]
    );
}

#[test]
fn tool_use_keeps_its_input_exactly() {
    let json = r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"edit","input":{"path":"b.rs","old":"x","new":"y","opts":{"z":1,"a":[true,null,2.5]}}}]}"#;
    assert_eq!(round_trip(json), json);
}

#[test]
fn unknown_block_types_are_kept_verbatim() {
    let json = r#"{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"rust serde"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.invalid/","title":"Example"}]},{"type":"text","text":"Found it."}]}"#;
    assert_eq!(round_trip(json), json);
    let m: Message = serde_json::from_str(json).unwrap();
    assert_eq!(
        m.blocks().iter().map(|b| b.kind()).collect::<Vec<_>>(),
        vec!["server_tool_use", "web_search_tool_result", "text"]
    );
    assert!(matches!(m.blocks()[0], Block::Unknown(_)));
}

#[test]
fn unknown_blocks_inside_a_tool_result_are_kept_verbatim() {
    let json = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"screenshot:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}"#;
    assert_eq!(round_trip(json), json);
    let m: Message = serde_json::from_str(json).unwrap();
    let [Block::ToolResult { content, .. }] = m.blocks() else {
        panic!("not a tool_result");
    };
    let ToolResultContent::Blocks(inner) = content else {
        panic!("not blocks");
    };
    assert_eq!(inner[1].kind(), "image");
    assert_eq!(content.text(), "screenshot:");
}

#[test]
fn a_block_with_no_type_is_rejected_with_a_clear_error() {
    let err = serde_json::from_str::<Message>(r#"{"role":"user","content":[{"text":"hi"}]}"#)
        .expect_err("no type");
    assert!(
        err.to_string().starts_with("block has no `type` field"),
        "{err}"
    );
}

// ------------------------------------------------------------------ a real request body

/// The `messages` array of a real Messages API request body: copied from a recorded
/// cassette (interaction `id: 2`, the first request whose messages hold a `tool_use`;
/// the recording is charmbracelet/crush @ 076cb1c4,
/// internal/agent/testdata/TestCoderAgent/anthropic-sonnet/parallel_tool_calls.yaml),
/// decoded from the YAML string and pretty-printed. Content is unchanged.
const CRUSH_MESSAGES: &str = include_str!("data/crush-messages.json");

/// Removes every `cache_control` key: a request-level hint the typed blocks do not
/// keep (the engine sets its own cache breakpoints, see `CacheHints`).
fn without_cache_control(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(without_cache_control);
        }
        Value::Array(items) => items.iter_mut().for_each(without_cache_control),
        _ => {}
    }
}

#[test]
fn the_crush_request_messages_round_trip_structurally() {
    let messages = parse_messages(CRUSH_MESSAGES).expect("the real request body parses");
    assert_eq!(messages.len(), 3);
    let back: Value = serde_json::to_value(&messages).unwrap();
    let mut original: Value = serde_json::from_str(CRUSH_MESSAGES).unwrap();
    // The recording does carry cache_control (two blocks): the comparison below is
    // everything else, exactly.
    assert_eq!(CRUSH_MESSAGES.matches("\"cache_control\"").count(), 2);
    without_cache_control(&mut original);
    assert_eq!(back, original);
    // Serializing the parsed form again is stable byte for byte.
    let once = serde_json::to_string(&messages).unwrap();
    let twice = serde_json::to_string(&parse_messages(&once).unwrap()).unwrap();
    assert_eq!(twice, once);
}

#[test]
fn the_crush_request_messages_parse_into_the_expected_typed_shape() {
    let messages = parse_messages(CRUSH_MESSAGES).unwrap();
    assert_eq!(
        messages.iter().map(|m| m.role).collect::<Vec<_>>(),
        vec![Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(
        messages
            .iter()
            .map(|m| m.blocks().iter().map(|b| b.kind()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        vec![
            vec!["text", "text"],
            vec!["tool_use", "tool_use"],
            vec!["tool_result", "tool_result"],
        ]
    );
    let calls = messages[1].tool_calls();
    assert_eq!(
        calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.input.to_string()))
            .collect::<Vec<_>>(),
        vec![
            (
                "toolu_01QYv5XJsq3fV1NnHGH5qE1j",
                "glob",
                r#"{"pattern":"**/*.go"}"#.to_string()
            ),
            (
                "toolu_01RZ13pSVWhjBKJJQfzAcEmP",
                "ls",
                r#"{"path":"/tmp/crush-test/TestCoderAgent/anthropic-sonnet/parallel_tool_calls"}"#
                    .to_string()
            ),
        ]
    );
    let results: Vec<(&str, &ToolResultContent, Option<bool>)> = messages[2]
        .blocks()
        .iter()
        .map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => (tool_use_id.as_str(), content, *is_error),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        results,
        vec![
            (
                "toolu_01QYv5XJsq3fV1NnHGH5qE1j",
                &ToolResultContent::Blocks(vec![Block::text(
                    "/tmp/crush-test/TestCoderAgent/anthropic-sonnet/parallel_tool_calls/main.go"
                )]),
                None
            ),
            (
                "toolu_01RZ13pSVWhjBKJJQfzAcEmP",
                &ToolResultContent::Blocks(vec![Block::text(
                    "\n- /tmp/crush-test/TestCoderAgent/anthropic-sonnet/parallel_tool_calls/\n  - go.mod\n  - main.go\n"
                )]),
                None
            ),
        ]
    );
}

#[test]
fn the_crush_request_messages_are_a_valid_history() {
    let messages = parse_messages(CRUSH_MESSAGES).unwrap();
    assert_eq!(validate_history(&messages), Ok(()));
    // Without its answer, the same history ends with unanswered calls.
    assert_eq!(
        validate_history(&messages[..2])
            .expect_err("unanswered")
            .kind(),
        "unanswered_at_end"
    );
}

#[test]
fn a_sent_request_carries_its_messages_in_the_wire_shape() {
    let mut d = common::Driver::default();
    d.prompt("hi");
    let (_, request) = common::the_send(&d.outputs);
    let v: Value = serde_json::from_str(&request.to_json()).unwrap();
    let expected: Value = serde_json::from_str(&format!(
        r#"[{{"role":"user","content":[{{"type":"text","text":"<turn_context>\n<now>{}</now>\n<stance>act on the user's words; ask when unsure</stance>\n</turn_context>"}},{{"type":"text","text":"hi"}}]}}]"#,
        common::NOW
    ))
    .unwrap();
    assert_eq!(v["messages"], expected);
    assert_eq!(v["system"], "You are a careful coding agent.");
    assert_eq!(v["tools"][0]["name"], "glob");
    assert_eq!(
        v["cache"],
        serde_json::json!({"session_key":"sess-1","breakpoints":[{"after_message":null},{"after_message":0}]})
    );
    // The messages parse back as a valid history.
    let again = parse_messages(&v["messages"].to_string()).unwrap();
    assert_eq!(validate_history(&again), Ok(()));
    assert_eq!(
        again.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
        request
            .messages
            .iter()
            .map(|m| m.to_json())
            .collect::<Vec<_>>()
    );
}
