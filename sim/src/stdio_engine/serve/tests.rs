//! The pipe's engine side under test: one reply line is one write, and a reply
//! carries the state digest only when asked, moving only when the state does.

use super::{Line, serve};
use crate::Reference;
use std::io::Write;

#[derive(Default)]
struct Counting {
    writes: usize,
    flushes: usize,
    bytes: Vec<u8>,
}

impl Write for Counting {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.writes += 1;
        self.bytes.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.flushes += 1;
        Ok(())
    }
}

#[test]
fn one_reply_is_written_with_one_write_however_long() {
    let mut line = Line {
        out: Counting::default(),
        buf: Vec::new(),
    };
    let long = "x".repeat(100_000);
    line.send(&serde_json::json!({ "reply": "state", "state": long }))
        .unwrap();
    assert_eq!((line.out.writes, line.out.flushes), (1, 1));
    assert_eq!(
        line.out.bytes,
        format!("{{\"reply\":\"state\",\"state\":\"{long}\"}}\n").into_bytes()
    );
}

#[test]
fn protocol_2_replies_carry_the_digest_only_when_asked() {
    let config =
        r#"{"system":"s","tools":[],"session_key":"k","stance":"st","max_truncated_resumes":3}"#;
    let requests = [
        format!(r#"{{"req":"create","config":{config}}}"#),
        r#"{"req":"digest"}"#.into(),
        r#"{"req":"input","n":1,"input":{"input":"prompt","text":"hi","now":"t0"}}"#.into(),
        r#"{"req":"digest"}"#.into(),
        r#"{"req":"input","n":2,"input":{"input":"tool_result","op":99,"outcome":{"tool_use_id":"x","content":"c","is_error":false}}}"#.into(),
        r#"{"req":"digest"}"#.into(),
    ]
    .join("\n");
    let mut out = Vec::new();
    super::serve_version(&Reference, requests.as_bytes(), &mut out, 2).unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["protocol"], 2);
    let states: Vec<(String, Option<String>)> = lines[1..]
        .iter()
        .map(|v| {
            (
                v["reply"].as_str().unwrap().to_string(),
                v.get("state").map(|s| s.as_str().unwrap().to_string()),
            )
        })
        .collect();
    let s = |r: &str, d: Option<&str>| (r.to_string(), d.map(str::to_string));
    assert_eq!(
        states,
        [
            s("create", None),
            s("digest", Some("1")),
            s("input", None),
            s("digest", Some("2")),
            s("input", None),
            s("digest", Some("2")),
        ]
    );
    let mut out = Vec::new();
    assert_eq!(
        serve(&Reference, requests.as_bytes(), &mut out).unwrap_err(),
        "request line 2: `digest` is a protocol 2 request; this engine speaks protocol 1"
    );
}

#[test]
fn the_state_digest_stays_for_a_stale_input_and_moves_for_a_live_one() {
    let config =
        r#"{"system":"s","tools":[],"session_key":"k","stance":"st","max_truncated_resumes":3}"#;
    let requests = [
        format!(r#"{{"req":"create","config":{config}}}"#),
        r#"{"req":"input","n":1,"input":{"input":"prompt","text":"hi","now":"t0"}}"#.into(),
        r#"{"req":"input","n":2,"input":{"input":"tool_result","op":99,"outcome":{"tool_use_id":"x","content":"c","is_error":false}}}"#.into(),
        r#"{"req":"input","n":3,"input":{"input":"stream","op":1,"event":{"event":"message_start"}}}"#.into(),
        // Tag not first: read through the derived path, same request.
        r#"{"n":4,"input":{"input":"stream","op":1,"event":{"event":"block_start","index":0,"block":{"type":"text"}}},"req":"input"}"#.into(),
    ]
    .join("\n");
    let mut out = Vec::new();
    serve(&Reference, requests.as_bytes(), &mut out).unwrap();
    let states: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["state"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(states, ["1", "2", "2", "3", "4"]);
}
