//! `turnsim serve` answers like the real APIs where a client can tell: a scripted
//! reply's thinking is played only to a request that asked for thinking.

mod serve_support;

use serde_json::{Value, json};
use serve_support::*;

const THINKING_TWICE: &str = r#"[
    {"kind": "reply", "thinking": "Planning.", "text": "Hi.", "stop": "end_turn"},
    {"kind": "reply", "thinking": "Planning.", "text": "Hi.", "stop": "end_turn"},
    {"kind": "reply", "thinking": "Planning.", "text": "Hi.", "stop": "end_turn"}
]"#;

fn block_types(message: &Value) -> Vec<String> {
    message["content"]
        .as_array()
        .expect("content")
        .iter()
        .map(|b| b["type"].as_str().expect("a type").to_owned())
        .collect()
}

#[test]
fn a_scripted_thinking_block_is_played_only_to_a_request_that_asked_for_thinking() {
    let (server, _dir) = start(script(THINKING_TWICE), "unasked-thinking");
    // Not asked, JSON and streamed: no thinking block.
    for (prompt, stream) in [("Say hi.", false), ("Say hi, streamed.", true)] {
        let raw = post(
            server.addr,
            &body(&[json!({"role": "user", "content": prompt})], stream),
        );
        assert_eq!(raw.status, 200, "{prompt}");
        assert_eq!(
            block_types(&assistant_message(&raw, stream)),
            ["text"],
            "{prompt}"
        );
    }
    // Asked: the script's thinking is there, first.
    let mut b = body(
        &[json!({"role": "user", "content": "Think, then say hi."})],
        false,
    );
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    b["max_tokens"] = json!(2048);
    let raw = post(server.addr, &b);
    assert_eq!(raw.status, 200);
    let message = assistant_message(&raw, false);
    assert_eq!(block_types(&message), ["thinking", "text"]);
    assert_eq!(message["content"][0]["thinking"], "Planning.");
}
