//! Bad bodies are errors naming the field, never panics and never silent passes:
//! every field of every item of real captured requests is removed or retyped in turn,
//! and every truncation of a body is tried.

use serde_json::Value;
use std::path::PathBuf;
use turnsim::testing::openai::{chat_request, responses_request};

fn body(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openai")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Fields whose absence the real API rejects, per item kind.
fn required(item: &Value) -> &'static [&'static str] {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => &["type", "call_id", "name", "arguments"],
        Some("function_call_output") => &["type", "call_id", "output"],
        Some("reasoning") => &["type", "id", "summary"],
        Some("message") => &["role", "content"],
        None => &["role", "content"],
        Some(_) => &[],
    }
}

#[test]
fn removing_a_required_field_of_any_responses_item_names_that_item() {
    let mut checked = 0;
    for name in [
        "codex-0171-followup-after-tool.request.json",
        "agents-0240-responses-followup.request.json",
    ] {
        let original = body(name);
        let items = original["input"].as_array().unwrap().clone();
        for (i, item) in items.iter().enumerate() {
            for key in item.as_object().unwrap().keys() {
                let mut mutated = original.clone();
                mutated["input"][i].as_object_mut().unwrap().remove(key);
                let result = responses_request::parse(mutated.to_string().as_bytes());
                if required(item).contains(&key.as_str()) {
                    let err = result.expect_err(&format!("{name}: input[{i}] without {key}"));
                    assert!(
                        err.path.starts_with(&format!("input[{i}]")),
                        "{name}: {err} for input[{i}].{key}"
                    );
                    checked += 1;
                } else {
                    assert!(result.is_ok(), "{name}: input[{i}] without optional {key}");
                }
            }
        }
    }
    // Codex: four messages, reasoning, call, output; agents: message, reasoning, call, output.
    assert_eq!(checked, 4 * 2 + 3 + 4 + 3 + (2 + 3 + 4 + 3));
}

#[test]
fn retyping_any_field_to_a_number_never_panics_and_names_the_item_if_rejected() {
    let original = body("codex-0171-followup-after-tool.request.json");
    let items = original["input"].as_array().unwrap().clone();
    let mut rejected = 0;
    for (i, item) in items.iter().enumerate() {
        for key in item.as_object().unwrap().keys() {
            let mut mutated = original.clone();
            mutated["input"][i][key] = Value::from(7);
            if let Err(err) = responses_request::parse(mutated.to_string().as_bytes()) {
                assert!(err.path.starts_with(&format!("input[{i}]")), "{err}");
                rejected += 1;
            }
        }
    }
    // Only `status` (function_call) is not judged, so retyping it is accepted.
    let fields: usize = items.iter().map(|i| i.as_object().unwrap().len()).sum();
    assert_eq!(rejected, fields - 1);
}

#[test]
fn every_truncation_of_a_body_is_an_error_at_the_top() {
    for (name, is_chat) in [
        ("agents-0240-responses-followup.request.json", false),
        ("openai-sdk-3570-chat-followup.request.json", true),
    ] {
        let bytes = body(name).to_string().into_bytes();
        for cut in 0..bytes.len() {
            let err = if is_chat {
                chat_request::parse(&bytes[..cut]).map(|_| ()).unwrap_err()
            } else {
                responses_request::parse(&bytes[..cut])
                    .map(|_| ())
                    .unwrap_err()
            };
            assert_eq!(err.path, "", "{name} cut at {cut}: {err}");
        }
    }
}

#[test]
fn removing_chat_pairing_fields_names_the_message() {
    let original = body("openai-sdk-3570-chat-followup.request.json");
    let cases: [(&[&str], &str); 4] = [
        (
            &["messages", "3", "tool_call_id"],
            "messages[3].tool_call_id",
        ),
        (
            &["messages", "2", "tool_calls", "0", "id"],
            "messages[2].tool_calls[0].id",
        ),
        (
            &["messages", "2", "tool_calls", "0", "function", "arguments"],
            "messages[2].tool_calls[0].function.arguments",
        ),
        (&["messages", "1", "role"], "messages[1].role"),
    ];
    for (pointer, want) in cases {
        let mut mutated = original.clone();
        let (last, parent) = pointer.split_last().unwrap();
        let target = mutated
            .pointer_mut(&format!("/{}", parent.join("/")))
            .unwrap();
        target.as_object_mut().unwrap().remove(*last).unwrap();
        let err = chat_request::parse(mutated.to_string().as_bytes()).unwrap_err();
        assert_eq!(err.path, want);
    }
}

#[test]
fn a_logged_reasoning_item_may_lack_its_id_but_a_sent_one_may_not() {
    // Codex writes its rollout's items without `id` (0.171.0 aside).
    let item =
        serde_json::json!({"type":"reasoning","summary":[],"content":null,"encrypted_content":"E"});
    let logged = responses_request::parse_logged_item(&item, "payload").expect("a log line");
    let responses_request::InputItem::Reasoning(r) = logged else {
        panic!("a reasoning item: {logged:?}");
    };
    assert_eq!(r.id, None);
    assert_eq!(r.encrypted_content.as_deref(), Some("E"));
    assert_eq!(
        responses_request::parse_item(&item, "input[0]")
            .unwrap_err()
            .to_string(),
        "`input[0].id`: missing"
    );
}
