//! `turnsim check` reads its inputs one element at a time: a line of a log, a message
//! of a JSON document, an interaction of a cassette. Memory is not measured here (an
//! RSS figure is a benchmark's business, see benches/README.md); what is tested is the
//! structure that bounds it: an input many times larger than the element limit is
//! checked, with the same report as under the default limit, and an element over the
//! limit is refused by name, even one that never ends.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use std::process::Command;
use turnsim::check::FileReport;
use turnsim::check::{Format, Limits, check_reader_with};
use turnsim::testing::check::source::InputError;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts")
        .join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).expect("reads")
}

fn check(bytes: &[u8], format: Option<Format>, max: usize) -> Result<FileReport, InputError> {
    check_reader_with(
        "input",
        Cursor::new(bytes.to_vec()),
        format,
        Limits { max_element: max },
    )
}

/// The largest element: the longest line, or the longest message of a JSON array
/// written one message per line.
fn longest_line(bytes: &[u8]) -> usize {
    bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn a_log_many_times_the_limit_is_checked_line_by_line_with_the_same_report() {
    let log = read("claude-code-session-196820da.jsonl");
    let limit = longest_line(&log) + 1;
    assert!(log.len() > 5 * limit, "{} vs {limit}", log.len());
    let bounded = check(&log, None, limit).expect("every line fits");
    let default = check(&log, None, Limits::default().max_element).expect("reads");
    assert_eq!(bounded, default);
    assert_eq!(bounded.stat("messages"), 97);
}

#[test]
fn a_json_array_many_times_the_limit_is_checked_message_by_message_with_the_same_report() {
    // The session's messages as one JSON array, one message per line.
    let log = read("claude-code-session-196820da.jsonl");
    let messages: Vec<String> = log
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "user" || e["type"] == "assistant")
        .filter(|e| e["isSidechain"] != true)
        .map(|e| e["message"].to_string())
        .collect();
    let array = format!("[\n{}\n]\n", messages.join(",\n"));
    let limit = longest_line(array.as_bytes()) + 1;
    assert!(array.len() > 5 * limit, "{} vs {limit}", array.len());
    let bounded = check(array.as_bytes(), None, limit).expect("every message fits");
    let default = check(array.as_bytes(), None, Limits::default().max_element).expect("reads");
    assert_eq!(bounded, default);
    assert_eq!(bounded.stat("messages"), messages.len());
    assert_eq!(bounded.format, "anthropic");
}

#[test]
fn a_cassette_many_times_the_limit_is_checked_interaction_by_interaction() {
    let text = read("crush-vcr-anthropic-parallel_tool_calls.yaml");
    let text = String::from_utf8(text).expect("UTF-8");
    // Each interaction starts with `- id:` at column 0; the largest is the limit.
    let starts: Vec<usize> = text.match_indices("\n- id:").map(|(i, _)| i + 1).collect();
    let mut sizes: Vec<usize> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    sizes.push(text.len() - starts[starts.len() - 1]);
    let limit = sizes.iter().copied().max().expect("interactions") + 1;
    // Three copies: the same traffic again, as conversations the judge already knows.
    let mut tripled = text.clone();
    let items = &text[starts[0]..];
    tripled.push_str(items);
    tripled.push_str(items);
    assert!(tripled.len() > 5 * limit, "{} vs {limit}", tripled.len());
    let bounded = check(tripled.as_bytes(), None, limit).expect("every interaction fits");
    let default = check(tripled.as_bytes(), None, Limits::default().max_element).expect("reads");
    assert_eq!(bounded, default);
    assert_eq!(bounded.stat("requests"), 9);
}

#[test]
fn a_codex_rollout_many_times_the_limit_is_checked_line_by_line_with_the_same_report() {
    let rollout = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/openai/codex-0171-rollout-goal-then-resume.jsonl"),
    )
    .expect("reads");
    let limit = longest_line(&rollout) + 1;
    assert!(rollout.len() > 5 * limit, "{} vs {limit}", rollout.len());
    let bounded = check(&rollout, None, limit).expect("every line fits");
    let default = check(&rollout, None, Limits::default().max_element).expect("reads");
    assert_eq!(bounded, default);
    assert_eq!(bounded.format, "codex");
    assert_eq!(bounded.stat("response_items"), 14);
}

/// Input that never ends: `head`, then `byte` forever.
fn endless(head: &str, byte: u8) -> impl Read + 'static {
    Cursor::new(head.as_bytes().to_vec()).chain(std::io::repeat(byte))
}

fn refused(input: impl Read + 'static, format: Option<Format>) -> InputError {
    check_reader_with(
        "endless",
        input,
        format,
        Limits {
            max_element: 1 << 16,
        },
    )
    .expect_err("an element over the limit")
}

#[test]
fn an_element_that_never_ends_is_refused_at_the_limit_naming_it() {
    let limit =
        "is larger than the limit of 65536 bytes for one element; raise it with --max-element-mib";
    let user = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"go\"}}\n";
    let e = refused(
        endless(&format!("{user}{{\"type\":\"user\",\"x\":\""), b'a'),
        Some(Format::ClaudeJsonl),
    );
    assert_eq!(e, InputError::at(2, format!("the line {limit}")));
    let e = refused(
        endless(
            "[{\"role\":\"user\",\"content\":\"go\"},\n {\"role\":\"user\",\"content\":\"",
            b'a',
        ),
        None,
    );
    assert_eq!(e, InputError::at(2, format!("message 1 {limit}")));
    let e = refused(
        endless("{\"model\":\"m\",\n\"messages\":[\n{\"content\":\"", b'a'),
        None,
    );
    assert_eq!(e, InputError::at(3, format!("message 0 {limit}")));
    // A cassette's interaction made of ever more lines, and one endless line.
    let e = refused(
        endless("interactions:\n- id: 0\n  request:\n    body: |\n", b'\n'),
        None,
    );
    assert_eq!(e, InputError::at(2, format!("the interaction {limit}")));
    let e = refused(
        endless("interactions:\n- id: 0\n  request:\n    body: '", b'a'),
        None,
    );
    assert_eq!(e, InputError::at(4, format!("the line {limit}")));
    // A Codex rollout's output that never ends.
    let e = refused(
        endless(
            "{\"type\":\"session_meta\",\"payload\":{}}\n{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"",
            b'a',
        ),
        Some(Format::Codex),
    );
    assert_eq!(e, InputError::at(2, format!("the line {limit}")));
    let e = refused(endless("event: ping\ndata: ", b'a'), None);
    assert_eq!(e, InputError::at(1, format!("the recording {limit}")));
}

#[test]
fn the_limit_is_a_flag_and_its_error_names_it() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check_bounded");
    std::fs::create_dir_all(&dir).expect("creates the scratch dir");
    let path = dir.join("long-line.jsonl");
    let long = format!(
        "{{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\n",
        "a".repeat(3 << 20)
    );
    std::fs::write(&path, long).expect("writes");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
            .arg("check")
            .args(args)
            .arg(&path)
            .output()
            .expect("runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--max-element-mib", "2"]);
    assert_eq!(code, Some(6), "{stderr}");
    assert!(
        stderr.contains(":1: unreadable: the line is larger than the limit of 2 MiB for one element; raise it with --max-element-mib"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--max-element-mib", "4"]);
    assert_eq!(code, Some(0), "{stderr}");
}
