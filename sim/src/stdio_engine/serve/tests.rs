//! The pipe's engine side under test: one reply line is one write, and a reply
//! carries the state digest only when asked, moving only when the state does.

use super::{Line, serve};
use crate::Reference;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::rc::Rc;

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
        scratch: String::new(),
    };
    let long = "x".repeat(100_000);
    line.send(&serde_json::json!({ "reply": "state", "state": long }))
        .unwrap();
    assert_eq!((line.out.writes, line.out.flushes), (0, 0));
    line.flush().unwrap();
    assert_eq!((line.out.writes, line.out.flushes), (1, 1));
    assert_eq!(
        line.out.bytes,
        format!("{{\"reply\":\"state\",\"state\":\"{long}\"}}\n").into_bytes()
    );
}

/// Output shared with the input below, so a read can see how much was written.
struct Shared(Rc<RefCell<Counting>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// Input that arrives in these chunks, one per read, noting at each read how many
/// writes the output had seen.
struct Chunks {
    chunks: VecDeque<Vec<u8>>,
    out: Rc<RefCell<Counting>>,
    writes_at_reads: Vec<usize>,
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.writes_at_reads.push(self.out.borrow().writes);
        let Some(chunk) = self.chunks.pop_front() else {
            return Ok(0);
        };
        assert!(chunk.len() <= buf.len(), "a chunk fits one read");
        buf[..chunk.len()].copy_from_slice(&chunk);
        Ok(chunk.len())
    }
}

#[test]
fn replies_to_requests_read_together_leave_in_one_write_before_the_next_read() {
    let config =
        r#"{"system":"s","tools":[],"session_key":"k","stance":"st","max_truncated_resumes":3}"#;
    let input = |n: u64| {
        format!(r#"{{"req":"input","n":{n},"input":{{"input":"prompt","text":"hi","now":"t0"}}}}"#)
    };
    let chunks = [
        format!("{{\"req\":\"create\",\"config\":{config}}}\n"),
        format!("{}\n{}\n{}\n", input(1), input(2), input(3)),
        "{\"req\":\"digest\"}\n".to_string(),
    ];
    let out = Rc::new(RefCell::new(Counting::default()));
    let mut reader = Chunks {
        chunks: chunks.iter().map(|c| c.clone().into_bytes()).collect(),
        out: out.clone(),
        writes_at_reads: Vec::new(),
    };
    super::serve_version(
        &Reference,
        std::io::BufReader::new(&mut reader),
        Shared(out.clone()),
        2,
    )
    .unwrap();
    // The hello before the first read, the create's reply before the second, the
    // batch's three replies in one write before the third, the digest's at the end.
    assert_eq!(reader.writes_at_reads, [1, 2, 3, 4]);
    let out = out.borrow();
    assert_eq!(out.writes, 4);
    let replies: Vec<String> = String::from_utf8(out.bytes.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["reply"].to_string())
        .collect();
    assert_eq!(
        replies,
        [
            "null",
            "\"create\"",
            "\"input\"",
            "\"input\"",
            "\"input\"",
            "\"digest\""
        ]
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

/// The reply as a derived struct: what `ReplyOut::encode` must write byte for byte.
#[derive(serde::Serialize)]
struct Derived<'a> {
    reply: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<Vec<super::reply::OutputOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<super::reply::DeltaOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending: Option<turnsim_core::PendingOperation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idle: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed_texts: Option<Vec<String>>,
}

#[test]
fn a_reply_written_by_hand_is_the_derived_reply_byte_for_byte() {
    use super::reply::{DeltaOut, output_out, reply};
    use crate::engine::EngineFactory;
    use turnsim_core::{Input, OperationId, Output};
    let config = serde_json::from_str(
        r#"{"system":"s \"quoted\"\n","tools":[{"name":"read_file","description":"Read.","input_schema":{"type":"object"}}],"session_key":"k","stance":"st","max_truncated_resumes":3}"#,
    )
    .unwrap();
    let mut engine = Reference.create(config);
    let mut outputs = engine
        .handle(Input::Prompt {
            text: "hi \u{1F600} \\ \"there\"".into(),
            now: "t0".into(),
        })
        .unwrap();
    assert!(outputs.iter().any(|o| matches!(o, Output::Send { .. })));
    outputs.extend([
        Output::Persist { bytes: vec![] },
        Output::Persist {
            bytes: vec![0, 1, 2, 254, 255],
        },
        Output::TruncateLog { len: 3 },
        Output::Abort { op: OperationId(7) },
    ]);
    let history = engine.history();
    // (outputs field, refused, error, the engine's view, fixed_texts)
    type Case = (
        bool,
        Option<String>,
        Option<String>,
        bool,
        Option<Vec<String>>,
    );
    let cases: Vec<Case> = vec![
        (true, None, None, true, Some(vec!["a\"b".into()])),
        (false, Some("no \"way\"".into()), None, true, None),
        (false, None, Some("bad log".into()), false, None),
        (true, None, None, false, None),
    ];
    for (with_outputs, refused, error, with_view, fixed_texts) in cases {
        let mut r = reply("input");
        r.outputs = with_outputs;
        r.refused = refused.clone();
        r.error = error.clone();
        r.fixed_texts = fixed_texts.clone();
        if with_view {
            r.history = Some(DeltaOut {
                keep: 0,
                append: history,
            });
            r.pending = Some(engine.pending_operation());
            r.idle = Some(engine.is_idle());
            r.state = Some("12".into());
        }
        let mut got = Vec::new();
        r.encode(&mut got, &mut String::new(), &outputs, history)
            .unwrap();
        let derived = Derived {
            reply: "input",
            outputs: with_outputs.then(|| outputs.iter().map(|o| output_out(o, history)).collect()),
            refused,
            error,
            history: with_view.then_some(DeltaOut {
                keep: 0,
                append: history,
            }),
            pending: with_view.then(|| engine.pending_operation()),
            idle: with_view.then(|| engine.is_idle()),
            state: with_view.then(|| "12".to_string()),
            fixed_texts,
        };
        assert_eq!(
            String::from_utf8(got).unwrap(),
            serde_json::to_string(&derived).unwrap()
        );
    }
}

#[test]
fn an_input_read_tag_first_is_the_derived_input() {
    use super::input::WireInput;
    use turnsim_core::Input;
    let lines = [
        r#"{"input":"prompt","text":"hi \"x\"","now":"t0"}"#,
        r#"{"input":"prompt","text":"hi","now":"t0","extra":[1,{"a":2}]}"#,
        r#"{"text":"hi","input":"prompt","now":"t0"}"#,
        r#"{"input":"prompt","text":"hi"}"#,
        r#"{"input":"prompt","input":"prompt","text":"hi","now":"t0"}"#,
        r#"{"input":"prompt","text":"a","text":"b","now":"t0"}"#,
        r#"{"input":"nope"}"#,
        r#"{"input":7}"#,
        r#"{}"#,
        r#"["prompt","hi","t0"]"#,
        r#""prompt""#,
        r#"{"input":"stream","op":3,"event":{"event":"message_start"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"message_start","x":1}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"message_stop"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"block_start","index":0,"block":{"type":"tool_use","id":"t","name":"n"}}}"#,
        r#"{"input":"stream","op":3,"event":{"index":0,"event":"text_delta","text":"x"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"text_delta","index":0,"text":"x\u00e9"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"text_delta","index":-1,"text":"x"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"thinking_delta","index":1,"thinking":"t"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"signature_delta","index":1,"signature":"s"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"input_json_delta","index":1,"partial_json":"{\"a"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"block_stop","index":1}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"block_stop","index":1,"event":"block_stop"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"message_delta","stop_reason":"end_turn","usage":{"input_tokens":0,"output_tokens":80}}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"error","kind":"overloaded","message":"m"}}"#,
        r#"{"input":"stream","op":3,"event":{"event":"huh"}}"#,
        r#"{"input":"stream","event":{"event":"message_stop"}}"#,
        r#"{"input":"tool_result","op":99,"outcome":{"tool_use_id":"x","content":"c","is_error":false}}"#,
        r#"{"input":"cancel","cause":"cost_cap"}"#,
        r#"{"input":"cancel","cause":"nope"}"#,
        r#"{"input":"compact","summary":"s"}"#,
        r#"{"input":"rewind","index":2}"#,
        r#"{"input":"configure","system":"s","tools":[{"name":"a","description":"d","input_schema":{"type":"object"}}]}"#,
        r#"{"input":"configure","system":"s","tools":[],"thinking":{"type":"disabled"}}"#,
        r#"{"input":"configure","system":"s","tools":[],"thinking":{"type":"enabled","budget_tokens":512}}"#,
        r#"{"input":"configure","system":"s","tools":[],"thinking":null}"#,
        r#"{"input":"configure","system":"s","tools":[],"thinking":{"type":"sometimes"}}"#,
    ];
    for line in lines {
        let derived = serde_json::from_str::<Input>(line);
        let fast = serde_json::from_str::<WireInput>(line).map(|w| w.0);
        match (&derived, &fast) {
            (Ok(d), Ok(f)) => assert_eq!(d, f, "{line}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{line}: derived {derived:?}, tag first {fast:?}"),
        }
    }
}

#[test]
fn a_configure_carries_thinking_only_when_it_switches_it() {
    use turnsim_core::{Input, Thinking};
    let configure = |thinking| Input::Configure {
        system: "s".into(),
        tools: Vec::new().into(),
        thinking,
    };
    // Without a switch the line is the one a version-1 engine always read, so an
    // engine written before the field reads every configure the harness sends it then.
    assert_eq!(
        crate::stdio_engine::wire::input_line(1, &configure(None)),
        "{\"req\":\"input\",\"n\":1,\"input\":{\"input\":\"configure\",\"system\":\"s\",\"tools\":[]}}\n"
    );
    assert_eq!(
        crate::stdio_engine::wire::input_line(2, &configure(Some(Thinking::Disabled))),
        concat!(
            r#"{"req":"input","n":2,"input":{"input":"configure","system":"s","tools":[],"#,
            r#""thinking":{"type":"disabled"}}}"#,
            "\n"
        )
    );
}
