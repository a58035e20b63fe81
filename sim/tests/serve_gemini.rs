//! `turnsim serve` speaking the Gemini API: `:streamGenerateContent?alt=sse` and
//! `:generateContent` answer a tool loop from the same scripted provider, a broken
//! history is named with its rule and content index (and refused with the API's 400
//! when asked), the model probes and `:countTokens` answer in Gemini's shapes, unknown
//! paths and unreadable bodies get Gemini's error body, and a recording is judged again
//! to the same verdicts.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::net::SocketAddr;
use std::time::Duration;

const STREAM: &str = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
const WHOLE: &str = "/v1beta/models/gemini-2.5-pro:generateContent";

fn post_to(addr: SocketAddr, path: &str, body: &Value) -> Raw {
    send(
        addr,
        "POST",
        path,
        &[
            ("content-type", "application/json"),
            ("x-goog-api-key", "dummy"),
        ],
        body.to_string().as_bytes(),
        Duration::from_secs(10),
    )
}

fn get(addr: SocketAddr, path: &str) -> Raw {
    send(
        addr,
        "GET",
        path,
        &[("x-goog-api-key", "dummy")],
        b"",
        Duration::from_secs(10),
    )
}

/// The `data:` payloads of an SSE body.
fn chunks(raw: &Raw) -> Vec<Value> {
    raw.text()
        .split("\n\n")
        .filter_map(|rec| rec.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

fn body(contents: &[Value]) -> Value {
    json!({
        "contents": contents,
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [{"functionDeclarations": [{"name": "run_shell_command", "description": "Runs a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]}],
        "generationConfig": {"temperature": 0}
    })
}

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

/// The model's content as a client keeps it: every streamed part, in order.
fn model_content(chunks: &[Value]) -> Value {
    let parts: Vec<Value> = chunks
        .iter()
        .flat_map(|c| {
            c["candidates"][0]["content"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    json!({"role": "model", "parts": parts})
}

fn answers(model: &Value) -> Value {
    let parts: Vec<Value> = model["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.get("functionCall"))
        .map(|c| json!({"functionResponse": {"name": c["name"], "response": {"output": "ok"}}}))
        .collect();
    json!({"role": "user", "parts": parts})
}

const CALL_THEN_TEXT: &str = r#"[
    {"kind": "reply", "text": "Running it.", "tool_calls": [{"name": "run_shell_command"}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"}
]"#;

#[test]
fn a_streamed_tool_loop_answers_in_sse_chunks_and_is_judged_clean() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "gm-loop");
    let mut contents = vec![user("Run it.")];
    let first = post_to(server.addr, STREAM, &body(&contents));
    assert_eq!(first.status, 200, "{}", first.text());
    assert!(
        first
            .header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    let c = chunks(&first);
    assert!(c.len() >= 2, "{}", first.text());
    assert!(
        !first.text().contains("event:"),
        "Gemini's SSE has no event lines"
    );
    let last = c.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert!(last["usageMetadata"]["totalTokenCount"].as_u64().unwrap() > 0);
    assert!(
        c[..c.len() - 1]
            .iter()
            .all(|x| x["candidates"][0].get("finishReason").is_none())
    );
    let model = model_content(&c);
    let call = model["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|p| p.get("functionCall"))
        .cloned()
        .unwrap();
    assert_eq!(call["name"], "run_shell_command");
    assert!(call["args"]["command"].is_string(), "{call}");
    assert!(
        call.get("id").is_none(),
        "the Gemini API sends calls without ids"
    );
    contents.push(model.clone());
    contents.push(answers(&model));
    let second = post_to(server.addr, STREAM, &body(&contents));
    assert_eq!(second.status, 200);
    let text: String = chunks(&second)
        .iter()
        .filter_map(|x| {
            x["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "Done.");
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 2);
    assert!(
        verdicts.iter().all(|v| v.is_clean()),
        "{:#?}",
        verdicts.iter().flat_map(|v| v.lines()).collect::<Vec<_>>()
    );
    assert_eq!(
        verdicts[0].conversation, verdicts[1].conversation,
        "one conversation"
    );
}

#[test]
fn generate_content_returns_one_json_with_the_call_and_stop() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "gm-whole");
    let raw = post_to(server.addr, WHOLE, &body(&[user("Run it.")]));
    assert_eq!(raw.status, 200);
    let v = raw.json();
    let parts = v["candidates"][0]["content"]["parts"].as_array().unwrap();
    assert_eq!(parts[0], json!({"text": "Running it."}));
    assert_eq!(parts[1]["functionCall"]["name"], "run_shell_command");
    assert_eq!(v["candidates"][0]["content"]["role"], "model");
    assert_eq!(v["candidates"][0]["finishReason"], "STOP");
    assert_eq!(v["modelVersion"], "gemini-2.5-pro");
}

#[test]
fn an_unanswered_call_is_named_with_its_content_index_and_rule() {
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "gm-unanswered", |c| {
        c.reject_invalid = false
    });
    let first = post_to(server.addr, WHOLE, &body(&[user("Run it.")]));
    let model = first.json()["candidates"][0]["content"].clone();
    let broken = body(&[user("Run it."), model, user("Never mind.")]);
    assert_eq!(
        post_to(server.addr, WHOLE, &broken).status,
        200,
        "served, as without --reject-invalid"
    );
    let v = &server.server.verdicts()[1];
    assert_eq!(v.violations.len(), 1, "{:#?}", v.lines());
    let x = &v.violations[0];
    assert_eq!(
        (x.rule.as_str(), x.kind.as_str(), x.message),
        ("pairing", "unanswered_call", Some(1))
    );
    assert!(
        x.detail
            .contains("\"run_shell_command\" has no functionResponse in contents[2]"),
        "{}",
        x.detail
    );
    assert!(
        x.detail.ends_with("(rule responses_answer_calls)"),
        "{}",
        x.detail
    );
}

#[test]
fn a_broken_history_gets_the_apis_400_body_by_default() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "gm-reject");
    let broken = body(&[
        user("a"),
        json!({"role": "assistant", "parts": [{"text": "b"}]}),
        user("c"),
    ]);
    let raw = post_to(server.addr, STREAM, &broken);
    assert_eq!(raw.status, 400);
    let e = raw.json();
    assert_eq!(e["error"]["code"], 400);
    assert_eq!(e["error"]["status"], "INVALID_ARGUMENT");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("role \"assistant\" is neither user nor model"),
        "{e}"
    );
    assert_eq!(server.server.verdicts()[0].violations[0].kind, "bad_role");
}

#[test]
fn a_history_that_breaks_no_rule_is_not_refused() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "gm-near");
    let raw = post_to(
        server.addr,
        STREAM,
        &body(&[
            user("a"),
            json!({"role": "model", "parts": [{"text": "b"}]}),
            user("c"),
        ]),
    );
    assert_eq!(raw.status, 200);
    assert!(server.server.verdicts()[0].is_clean());
}

#[test]
fn models_and_count_tokens_answer_in_geminis_shapes() {
    let (server, _dir) = start(script("[]"), "gm-models");
    let list = get(server.addr, "/v1beta/models").json();
    let names: Vec<&str> = list["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"models/gemini-2.5-pro"), "{names:?}");
    let one = get(server.addr, "/v1beta/models/gemini-2.5-flash").json();
    assert_eq!(one["name"], "models/gemini-2.5-flash");
    assert!(
        one["supportedGenerationMethods"]
            .as_array()
            .unwrap()
            .contains(&json!("streamGenerateContent"))
    );
    let count = post_to(
        server.addr,
        "/v1beta/models/gemini-2.5-pro:countTokens",
        &json!({"contents": [user("hello")]}),
    );
    assert_eq!(count.status, 200);
    assert!(count.json()["totalTokens"].as_u64().unwrap() >= 1);
    assert!(server.server.verdicts().is_empty(), "probes are not judged");
}

#[test]
fn unknown_paths_and_unreadable_bodies_get_geminis_error_body() {
    let (server, _dir) = start(script("[]"), "gm-errors");
    let unknown = post_to(
        server.addr,
        "/v1beta/models/gemini-2.5-pro:embedContent",
        &json!({}),
    );
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["status"], "NOT_FOUND");
    let bad = post_to(
        server.addr,
        WHOLE,
        &json!({"contents": [{"role": "user", "parts": {"text": "x"}}]}),
    );
    assert_eq!(bad.status, 400);
    let e = bad.json();
    assert_eq!(e["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(
        e["error"]["message"],
        "* GenerateContentRequest.contents[0].parts: expected an array, got an object"
    );
    // Read, but refused by a rule the reader leaves to the judge: a verdict names it.
    let empty = post_to(server.addr, WHOLE, &json!({"contents": []}));
    assert_eq!(empty.status, 400, "refused like the API");
    assert_eq!(empty.json()["error"]["status"], "INVALID_ARGUMENT");
    let v = server.server.verdicts();
    assert_eq!(v.last().unwrap().violations[0].kind, "no_contents");
}

#[test]
fn a_recording_of_gemini_traffic_is_judged_again_to_the_same_verdicts() {
    let rec = temp_dir("gm-rec");
    let (server, _dir) = start_with(script(CALL_THEN_TEXT), "gm-record", |c| {
        c.record = Some(rec.clone());
        c.reject_invalid = false;
    });
    let first = post_to(server.addr, STREAM, &body(&[user("Run it.")]));
    let model = model_content(&chunks(&first));
    // The second request sends the response twice: a violation both judges must name.
    let mut twice = answers(&model);
    let dup = twice["parts"][0].clone();
    twice["parts"].as_array_mut().unwrap().push(dup);
    assert_eq!(
        post_to(server.addr, STREAM, &body(&[user("Run it."), model, twice])).status,
        200
    );
    let live = server.server.verdicts();
    assert_eq!(
        live[1]
            .violations
            .iter()
            .map(|v| v.kind.as_str())
            .collect::<Vec<_>>(),
        vec!["response_without_call"]
    );
    let again = turnsim::testing::serve::recheck::check_dir(&rec).expect("the recording reads");
    assert!(again.mismatches.is_empty(), "{:?}", again.mismatches);
    assert_eq!(again.verdicts.len(), 2);
    assert_eq!(again.verdicts[1].violations, live[1].violations);
}

#[test]
fn an_earlier_turn_edited_in_a_later_request_is_an_append_only_violation() {
    let (server, _dir) = start(script(CALL_THEN_TEXT), "gm-append");
    let first = post_to(server.addr, WHOLE, &body(&[user("Run it.")]));
    let model = first.json()["candidates"][0]["content"].clone();
    let history = vec![user("Run it."), model.clone(), answers(&model)];
    let second = post_to(server.addr, WHOLE, &body(&history));
    let reply = second.json()["candidates"][0]["content"].clone();
    let mut edited = model.clone();
    edited["parts"][0]["text"] = json!("Something else.");
    let third = body(&[
        user("Run it."),
        edited,
        answers(&model),
        reply,
        user("More."),
    ]);
    assert_eq!(post_to(server.addr, WHOLE, &third).status, 200);
    let v = server.server.verdicts();
    assert!(v[1].is_clean(), "{:#?}", v[1].lines());
    let append: Vec<_> = v[2]
        .violations
        .iter()
        .filter(|x| x.rule == "append_only")
        .collect();
    assert_eq!(append.len(), 1, "{:#?}", v[2].lines());
    assert_eq!(append[0].message, Some(1), "the edited model turn");
}
