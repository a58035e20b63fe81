//! One cassette, three APIs: `go-vcr-corpus-mixed-apis.yaml` (recorded here by
//! `cassettes/go-vcr/record.sh mixed`) holds a Messages, a Chat Completions and a
//! Responses tool loop, each opening with the same user message, against one
//! server. Each is a conversation of its own: a request is never compared with
//! another API's, so the same words in another wire format are not a changed
//! history. Chat replies are read like the others: a client that sends back the
//! model's call arguments in other bytes has changed the model's words. And the
//! address decides the API: a `/chat/completions` body is Chat even when its
//! messages alone would read as the Messages API's.

use std::io::Cursor;
use std::path::Path;
use turnsim::check::{FileReport, check_file, check_reader};

fn mixed_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cassettes/go-vcr/go-vcr-corpus-mixed-apis.yaml");
    std::fs::read_to_string(path).expect("reads")
}

fn check_text(text: String) -> FileReport {
    check_reader("altered.yaml", Cursor::new(text.into_bytes()), None).expect("readable")
}

fn kinds(r: &FileReport) -> Vec<(&'static str, String, Option<usize>, Option<usize>)> {
    r.findings
        .kept
        .iter()
        .map(|f| (f.check, f.kind.clone(), f.place.request, f.place.message))
        .collect()
}

#[test]
fn three_apis_opening_with_the_same_message_are_three_clean_conversations() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cassettes/go-vcr/go-vcr-corpus-mixed-apis.yaml");
    let r = check_file(&path, None).expect("reads");
    assert_eq!(kinds(&r), vec![]);
    assert_eq!(
        (
            r.stat("requests"),
            r.stat("responses"),
            r.stat("conversations")
        ),
        (7, 7, 3)
    );
    // The same first message in each API's own form, in every request.
    let cassette: serde_norway::Value = serde_norway::from_str(&mixed_text()).expect("YAML");
    let opening = (0..7)
        .filter(|&i| {
            let body = cassette["interactions"][i]["request"]["body"].as_str();
            body.is_some_and(|b| b.contains("What is the weather in Lyon?"))
        })
        .count();
    assert_eq!(opening, 7);
}

#[test]
fn chat_arguments_sent_back_in_other_bytes_are_a_changed_reply_of_that_conversation_only() {
    // Request 4 sends back request 3's call; its arguments re-serialised with a space,
    // as a client that parses and re-writes them would.
    let mut cassette: serde_norway::Value = serde_norway::from_str(&mixed_text()).expect("YAML");
    let was = r#""arguments":"{\"city\":\"§model§ turnsim toolu_18237150_00001\"}""#;
    let now = r#""arguments":"{\"city\": \"§model§ turnsim toolu_18237150_00001\"}""#;
    let bodies: Vec<String> = (0..7)
        .map(|i| {
            cassette["interactions"][i]["request"]["body"]
                .as_str()
                .expect("a body")
                .to_owned()
        })
        .collect();
    let sending: Vec<usize> = (0..7).filter(|&i| bodies[i].contains(was)).collect();
    // Request 4 (Chat) and request 6 (Responses, its own `function_call` item) carry
    // the same arguments string; only the Chat one is altered.
    assert_eq!(sending, [4, 6]);
    cassette["interactions"][4]["request"]["body"] = bodies[4].replace(was, now).into();
    let altered = serde_norway::to_string(&cassette).expect("YAML");
    let r = check_text(altered);
    assert_eq!(
        kinds(&r),
        vec![(
            "response_kept",
            "reply_changed".to_string(),
            Some(4),
            Some(2)
        )]
    );
    assert_eq!(
        r.findings.kept[0].detail,
        "request 4: message 2 is not the reply recorded for request 3: tool_calls[0].arguments was …{\"city\":\"§model§ turnsim toolu_18237150_00001\"}"
    );
    assert_eq!(r.stat("conversations"), 3);
}

/// A one-interaction go-vcr cassette posting `body` to `url`, answered by `reply`.
fn one_call(url: &str, body: &serde_json::Value, reply: &str) -> String {
    let quote = |s: &str| serde_json::to_string(s).expect("a string");
    format!(
        "---\nversion: 1\ninteractions:\n- request:\n    body: {}\n    url: {url}\n    method: POST\n  response:\n    body: {}\n    code: 200\n",
        quote(&body.to_string()),
        quote(reply)
    )
}

#[test]
fn the_address_decides_chat_for_messages_that_read_as_either_api() {
    // User strings alone: the shape says nothing. An empty user text is refused by
    // the Messages API, accepted by Chat Completions.
    let body = serde_json::json!({"model": "m", "messages": [
        {"role": "user", "content": ""}]});
    let chat_reply = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#;
    let chat = check_text(one_call(
        "https://api.openai.com/v1/chat/completions",
        &body,
        chat_reply,
    ));
    assert_eq!(kinds(&chat), vec![]);
    assert_eq!(chat.stat("responses"), 1);
    let messages_reply = r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}"#;
    let messages = check_text(one_call(
        "https://api.anthropic.com/v1/messages",
        &body,
        messages_reply,
    ));
    assert_eq!(
        kinds(&messages).first().map(|k| (k.0, k.1.as_str())),
        Some(("empty", "empty_user_message"))
    );
}
