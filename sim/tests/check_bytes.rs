//! `check` judges bytes where the file keeps bytes: a serve recording and a cassette
//! hold the request bodies as sent, so `system` and `tools` are compared as bytes
//! (as the simulator's `prefix_stable` compares an engine's), and `serve` live and
//! `check DIR` on its recording give the same verdict. The report says which
//! judgement the prefix got.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::time::Duration;
use turnsim::testing::check::{FileReport, Severity, check_file, check_files};

/// The same tools as `client_tools()`, written with spaces after `:` and `,`.
fn spaced(v: &Value) -> String {
    v.to_string().replace("\":", "\": ").replace(",\"", ", \"")
}

/// A request body whose `tools` are written as `tools`, the rest compact.
fn body_with_tools(messages: &[Value], tools: &str) -> String {
    let mut head = json!({"model": "claude-sonnet-4-6", "max_tokens": 1024,
                          "system": "You are a test agent."})
    .to_string();
    head.pop();
    format!(
        "{head},\"tools\":{tools},\"messages\":{}}}",
        Value::Array(messages.to_vec())
    )
}

fn post_raw(addr: std::net::SocketAddr, body: &str) -> Raw {
    send(
        addr,
        "POST",
        "/v1/messages",
        &[
            ("content-type", "application/json"),
            ("anthropic-version", "2023-06-01"),
            ("x-api-key", "sk-test-not-a-secret"),
        ],
        body.as_bytes(),
        Duration::from_secs(10),
    )
}

fn violations(report: &FileReport) -> Vec<String> {
    report
        .findings
        .kept
        .iter()
        .filter(|f| f.severity == Severity::Violation)
        .map(|f| format!("{}/{}", f.check, f.kind))
        .collect()
}

#[test]
fn serve_and_check_judge_the_same_tools_in_other_bytes_as_one_violation() {
    let rec = temp_dir("bytes-rec");
    let steps = r#"[
        {"kind": "reply", "text": "Hi.", "stop": "end_turn"},
        {"kind": "reply", "text": "Again.", "stop": "end_turn"}
    ]"#;
    let (server, _dir) = start_with(script(steps), "bytes", |c| c.record = Some(rec.clone()));
    let tools = client_tools();
    let mut messages = vec![json!({"role": "user", "content": "Say hi."})];
    let first = post_raw(server.addr, &body_with_tools(&messages, &tools.to_string()));
    assert_eq!(first.status, 200, "{}", first.text());
    messages.push(assistant_message(&first, false));
    messages.push(json!({"role": "user", "content": "Again."}));
    // The same values, written with other spacing: the cache misses for nothing.
    let second = post_raw(server.addr, &body_with_tools(&messages, &spaced(&tools)));
    assert_eq!(second.status, 200, "{}", second.text());
    let live = server.server.verdicts();
    assert!(live[0].violations.is_empty(), "{:?}", live[0].violations);
    let kinds: Vec<String> = live[1]
        .violations
        .iter()
        .map(|v| format!("{}/{}", v.rule, v.kind))
        .collect();
    assert_eq!(kinds, ["prefix_changed/tools_bytes_changed"]);
    // The recording judged again: the same verdict, on the same bytes.
    let mut outcome = check_files(std::slice::from_ref(&rec), None);
    assert!(outcome.unreadable.is_empty(), "{:?}", outcome.unreadable);
    let report = outcome.files.remove(0);
    assert_eq!(report.format, "serve-record");
    assert_eq!(violations(&report), ["prefix_changed/tools_bytes_changed"]);
    assert_eq!(
        report.findings.counts.get("recording/verdict_changed"),
        None
    );
    assert_eq!(report.stat("prefix_judged_on_bytes"), 2);
    assert_eq!(report.stat("prefix_judged_on_values"), 0);
    // A recording from before bytes were kept (version 1) is judged on values, and
    // says so: the bytes verdict is then the recording's own, not judged again.
    for entry in std::fs::read_dir(&rec).expect("records") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let mut r: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("a record");
        r["version"] = json!(1);
        r.as_object_mut().expect("object").remove("raw_body");
        std::fs::write(&path, r.to_string()).expect("write");
    }
    let report = check_files(std::slice::from_ref(&rec), None)
        .files
        .remove(0);
    assert_eq!(report.stat("prefix_judged_on_bytes"), 0);
    assert_eq!(report.stat("prefix_judged_on_values"), 2);
    let _ = std::fs::remove_dir_all(&rec);
}

/// A vcrpy cassette of two Messages calls, the second with `tools` as `tools2`.
fn cassette(tools1: &str, tools2: &str) -> String {
    let reply = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}}"#;
    let first = vec![json!({"role": "user", "content": "Say hi."})];
    let mut second = first.clone();
    second.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Hi."}]}));
    second.push(json!({"role": "user", "content": "Again."}));
    let interaction = |body: String| {
        format!(
            "- request:\n    body: '{body}'\n    method: POST\n    uri: https://api.anthropic.com/v1/messages\n  response:\n    body:\n      string: '{reply}'\n    status:\n      code: 200\n      message: OK\n"
        )
    };
    format!(
        "interactions:\n{}{}version: 1\n",
        interaction(body_with_tools(&first, tools1)),
        interaction(body_with_tools(&second, tools2))
    )
}

#[test]
fn a_cassette_s_tools_are_judged_as_the_bytes_it_kept() {
    let dir = temp_dir("bytes-vcr");
    let tools = client_tools();
    let path = dir.join("cassette.yaml");
    std::fs::write(&path, cassette(&tools.to_string(), &spaced(&tools))).expect("write");
    let report = check_file(&path, None).expect("the cassette reads");
    assert_eq!(report.format, "vcrpy");
    assert_eq!(violations(&report), ["prefix_changed/tools_bytes_changed"]);
    assert_eq!(report.stat("prefix_judged_on_bytes"), 2);
    // The same bytes twice (a moved breakpoint aside): clean.
    let mut moved = tools.clone();
    moved[1]
        .as_object_mut()
        .expect("a tool")
        .remove("cache_control");
    moved[0]["cache_control"] = json!({"type": "ephemeral"});
    std::fs::write(&path, cassette(&tools.to_string(), &moved.to_string())).expect("write");
    let report = check_file(&path, None).expect("the cassette reads");
    assert_eq!(violations(&report), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_and_check_judge_a_chat_request_s_respaced_tools_alike() {
    let rec = temp_dir("bytes-chat-rec");
    let steps = r#"[
        {"kind": "reply", "text": "Hi.", "stop": "end_turn"},
        {"kind": "reply", "text": "Again.", "stop": "end_turn"}
    ]"#;
    let (server, _dir) = start_with(script(steps), "bytes-chat", |c| {
        c.record = Some(rec.clone())
    });
    let tools = json!([{"type": "function", "function": {"name": "exec_command",
        "description": "Runs a command", "parameters": {"type": "object",
        "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}]);
    let chat = |messages: &[Value], tools: &str| {
        format!(
            "{{\"model\":\"gpt-5\",\"tools\":{tools},\"messages\":{}}}",
            Value::Array(messages.to_vec())
        )
    };
    let post_chat = |body: String| {
        send(
            server.addr,
            "POST",
            "/v1/chat/completions",
            &[
                ("content-type", "application/json"),
                ("authorization", "Bearer dummy"),
            ],
            body.as_bytes(),
            Duration::from_secs(10),
        )
    };
    let mut messages = vec![json!({"role": "user", "content": "Say hi."})];
    let first = post_chat(chat(&messages, &tools.to_string()));
    assert_eq!(first.status, 200, "{}", first.text());
    messages.push(json!({"role": "assistant", "content": "Hi."}));
    messages.push(json!({"role": "user", "content": "Again."}));
    let second = post_chat(chat(&messages, &spaced(&tools)));
    assert_eq!(second.status, 200, "{}", second.text());
    let live = server.server.verdicts();
    let kinds: Vec<String> = live[1]
        .violations
        .iter()
        .map(|v| format!("{}/{}", v.rule, v.kind))
        .collect();
    assert_eq!(kinds, ["prefix_changed/tools_bytes_changed"]);
    let report = check_files(std::slice::from_ref(&rec), None)
        .files
        .remove(0);
    assert_eq!(violations(&report), ["prefix_changed/tools_bytes_changed"]);
    assert_eq!(
        report.findings.counts.get("recording/verdict_changed"),
        None
    );
    assert_eq!(report.stat("prefix_judged_on_bytes"), 2);
    let _ = std::fs::remove_dir_all(&rec);
}
