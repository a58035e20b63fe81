//! The reproduction script a failing run writes (`repro.py`, no turnsim needed)
//! answers a thinking-on Messages request as serve does: its reply opens with a
//! signed thinking block, each reply's own, streamed or not; a request without
//! thinking gets none; and a scheduled cut still lands inside the call when the block
//! is added. Checked with a small stdlib client put in place of the run's client.

use crate::drive_support;

use drive_support::*;
use serde_json::{Value, json};
use turnsim::testing::drive::profiles::Interrupt;

/// A client that sends four tool-bearing Messages requests and writes what it got
/// back: thinking on and streamed, on and JSON, off and JSON, on and streamed again
/// (the script's cut); each line of the output names the SSE events it read or holds
/// the JSON reply.
const CLIENT: &str = r#"
import json, sys, urllib.request
base, out = sys.argv[1], sys.argv[2]
tools = [{"name": "bash", "description": "Run a command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]
def post(thinking, stream):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 2048, "stream": stream, "tools": tools,
            "messages": [{"role": "user", "content": "go"}]}
    if thinking:
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    req = urllib.request.Request(base + "/v1/messages", json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        text = urllib.request.urlopen(req, timeout=10).read().decode()
    except Exception as e:
        return {"error": str(e)}
    if not stream:
        return json.loads(text)
    events, blocks = [], []
    for rec in text.split("\n\n"):
        data = [l[6:] for l in rec.splitlines() if l.startswith("data: ")]
        if not data:
            continue
        d = json.loads(data[0])
        events.append(d["type"] + ("/" + d["content_block"]["type"] if d["type"] == "content_block_start" else ""))
        if d["type"] == "content_block_start":
            blocks.append(dict(d["content_block"]))
        elif d["type"] == "content_block_delta":
            delta = d["delta"]
            b = blocks[d["index"]]
            if delta["type"] == "thinking_delta":
                b["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                b["signature"] += delta["signature"]
            elif delta["type"] == "text_delta":
                b["text"] += delta["text"]
    return {"events": events, "content": blocks}
with open(out, "w") as f:
    for thinking, stream in ((True, True), (True, False), (False, False), (True, True)):
        f.write(json.dumps(post(thinking, stream)) + "\n")
"#;

/// The run's `repro.py` with its client, steps and checks replaced: the client
/// above, three tool-calling replies and a cut inside the fourth one's call (five of
/// the script's events: the message start, the text block whole, the call's start),
/// no signal, no check.
fn edited(script: &str, client: &std::path::Path, out: &std::path::Path) -> String {
    let start = script.find("r'''").expect("config opens") + 4;
    let end = start + script[start..].find("'''").expect("config closes");
    let mut cfg: Value = serde_json::from_str(&script[start..end]).expect("config JSON");
    let command = json!([
        "python3",
        client.display().to_string(),
        "{base_url}",
        out.display().to_string()
    ]);
    cfg["command"] = command.clone();
    cfg["resume"] = command;
    let call = json!({"kind": "reply", "text": "Checking.", "tool": true});
    let mut cut = call.clone();
    cut["kind"] = json!("cut");
    cut["after_events"] = json!(5);
    cfg["first_steps"] = json!([call, call, call, cut]);
    cfg["signal"] = Value::Null;
    cfg["checks"] = json!([]);
    format!("{}{}{}", &script[..start], cfg, &script[end..])
}

#[test]
fn repro_opens_each_thinking_on_reply_with_its_own_signed_block_and_cuts_where_serve_does() {
    let p = test_client(&["--drop-started-call"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "repro-thinking");
    let script = std::fs::read_to_string(r.dir.join("repro.py")).expect("repro.py written");
    let dir = temp_dir("repro-thinking-client");
    std::fs::create_dir_all(&dir).expect("a scratch dir");
    let (client, out) = (dir.join("client.py"), dir.join("replies.jsonl"));
    std::fs::write(&client, CLIENT).expect("client written");
    let edited_path = dir.join("repro-edited.py");
    std::fs::write(&edited_path, edited(&script, &client, &out)).expect("script written");
    let run = std::process::Command::new("python3")
        .arg(&edited_path)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    let replies: Vec<Value> = std::fs::read_to_string(&out)
        .expect("the client wrote its replies")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a reply line"))
        .collect();
    assert_eq!(replies.len(), 4, "{replies:?}");
    let types = |r: &Value| -> Vec<String> {
        r["content"]
            .as_array()
            .expect("content")
            .iter()
            .map(|b| b["type"].as_str().expect("type").to_owned())
            .collect()
    };
    // Streamed, thinking on: a whole signed block first.
    assert_eq!(types(&replies[0]), ["thinking", "text", "tool_use"]);
    assert_eq!(
        replies[0]["content"][0]["thinking"],
        "Planning the next step (reply 1)."
    );
    assert_eq!(replies[0]["content"][0]["signature"], "sig_repro_0001");
    // JSON, thinking on: the next reply's own block.
    assert_eq!(types(&replies[1]), ["thinking", "text", "tool_use"]);
    assert_eq!(
        replies[1]["content"][0]["thinking"],
        "Planning the next step (reply 2)."
    );
    assert_eq!(replies[1]["content"][0]["signature"], "sig_repro_0002");
    // Thinking off: none.
    assert_eq!(types(&replies[2]), ["text", "tool_use"]);
    // The cut, with the block added: the script's five events and the block's four,
    // so the stream ends on the call's start, as it would without thinking.
    assert_eq!(
        replies[3]["events"],
        json!([
            "message_start",
            "content_block_start/thinking",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start/text",
            "content_block_delta",
            "content_block_stop",
            "content_block_start/tool_use"
        ])
    );
    assert_eq!(replies[3]["content"][0]["signature"], "sig_repro_0003");
}
