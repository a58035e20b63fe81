//! `turnsim serve`'s scripted thinking is each reply's own: with thinking on, every
//! reply of a conversation opens with a block whose text and signature no other reply
//! has, the same on every run of the script. So a client that carries one reply's
//! block in another reply's message is caught (`response_kept/reply_changed`), where
//! with one block for every reply it would pass.

use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;

/// Two tool-calling replies and an end, scripted without thinking (drive's replies are).
const TWO_CALLS: &str = r#"[
    {"kind": "reply", "text": "Checking 1.", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"},
    {"kind": "reply", "text": "Checking 2.", "tool_calls": [{"name": "bash", "input": {"command": "true"}}], "stop": "tool_use"},
    {"kind": "reply", "text": "Done.", "stop": "end_turn"}
]"#;

fn thinking_on(messages: &[Value]) -> Value {
    let mut b = body(messages, true);
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    b["max_tokens"] = json!(2048);
    b
}

/// The first two replies of the script, each with its results, as a client builds the
/// loop: `[prompt, reply 1, results 1, reply 2, results 2]`.
fn two_steps(addr: std::net::SocketAddr) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": "Run the checks."})];
    for step in 1..=2 {
        let raw = post(addr, &thinking_on(&messages));
        assert_eq!(raw.status, 200, "step {step}: {}", raw.text());
        let reply = assistant_message(&raw, true);
        let results = run_tools(&reply);
        messages.push(reply);
        messages.push(results);
    }
    messages
}

#[test]
fn every_scripted_reply_opens_with_a_thinking_block_no_other_reply_carries() {
    let (server, _dir) = start(script(TWO_CALLS), "thinking-per-reply");
    let messages = two_steps(server.addr);
    let (first, second) = (&messages[1]["content"][0], &messages[3]["content"][0]);
    assert_eq!(first["type"], "thinking");
    assert_eq!(second["type"], "thinking");
    assert_eq!(first["thinking"], "Planning the next step (reply 1).");
    assert_eq!(second["thinking"], "Planning the next step (reply 2).");
    let (s1, s2) = (
        first["signature"].as_str().expect("signed"),
        second["signature"].as_str().expect("signed"),
    );
    assert!(s1.starts_with("sig_") && s1.ends_with("_0001"), "{s1}");
    assert_eq!(s2, format!("{}_0002", &s1[..s1.len() - 5]));

    // The same script on a fresh server signs the same way: no clock, no draw.
    let (again, _dir) = start(script(TWO_CALLS), "thinking-per-reply-again");
    let replayed = two_steps(again.addr);
    assert_eq!(replayed[1]["content"][0], *first);
    assert_eq!(replayed[3]["content"][0], *second);
}

#[test]
fn a_thinking_block_moved_into_another_replys_message_is_a_changed_reply() {
    // Honest: both replies sent back as streamed, the loop's last request is clean.
    let (server, _dir) = start(script(TWO_CALLS), "thinking-kept");
    let messages = two_steps(server.addr);
    let raw = post(server.addr, &thinking_on(&messages));
    assert_eq!(raw.status, 200, "{}", raw.text());
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 3);
    assert!(
        violations(&verdicts).is_empty(),
        "{:?}",
        violations(&verdicts)
    );

    // Moved: the second reply carries the first reply's block (a client that kept one
    // block per session, say): its own text and call are intact, its thinking is not.
    let (server, _dir) = start(script(TWO_CALLS), "thinking-moved");
    let mut messages = two_steps(server.addr);
    let first_block = messages[1]["content"][0].clone();
    messages[3]["content"][0] = first_block;
    let _ = post(server.addr, &thinking_on(&messages));
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 3);
    let lines = violations(&verdicts);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("request #2 (c1 #2): response_kept/reply_changed at message 3: "),
        "{lines:?}"
    );
    assert!(lines[0].contains("(reply 2)"), "{lines:?}");
}
