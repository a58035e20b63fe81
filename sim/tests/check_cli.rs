//! The `turnsim check` command line: exit codes (0 clean, 1 violations, 2 usage, 6 unreadable),
//! messages that name the file and line, `--json`, `--format`, and no panic on any
//! input.

use crate::check_support;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use turnsim::check::{Format, check_reader};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts")
        .join(name)
}

fn scratch(test: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    std::fs::create_dir_all(&dir).expect("creates the scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("writes");
    path
}

/// Runs the built binary: (exit code, stdout, stderr).
fn turnsim(args: &[&str]) -> (i32, String, String) {
    check_support::check(args)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The first `n` lines of a real log.
fn head(name: &str, n: usize) -> String {
    let text = std::fs::read_to_string(data(name)).expect("reads");
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_truncated_line_is_unreadable_and_named_by_file_and_line() {
    let mut text = head("claude-code-claude-incremental-subagents-turn-1.jsonl", 5);
    let sixth = head("claude-code-claude-incremental-subagents-turn-1.jsonl", 6);
    let sixth = sixth.lines().last().expect("line 6");
    text.push_str(&sixth[..sixth.len() / 2]);
    let path = scratch("truncated", "cut.jsonl", text.as_bytes());
    let (code, stdout, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6, "{stdout}{stderr}");
    // Where in line 6 the parser stopped is its column, not a second "line 1".
    let want = format!(
        "{}:6:1024: unreadable: line 6, column 1024: ",
        path.display()
    );
    assert!(stderr.starts_with(&want), "{stderr}");
    assert!(stderr.contains("EOF while parsing"), "{stderr}");
}

#[test]
fn wrong_types_are_unreadable_with_the_line_and_the_json_path() {
    let mut text = head("claude-code-session-9eda1058.jsonl", 2);
    text.push_str(r#"{"type":"user","message":{"role":"user","content":42}}"#);
    text.push('\n');
    let path = scratch("wrong_types", "types.jsonl", text.as_bytes());
    let (code, _, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6);
    assert!(
        stderr.starts_with(&format!(
            "{}:3:52: unreadable: line 3, column 52: message.content: invalid type: integer `42`, expected content: a string or an array of blocks",
            path.display()
        )),
        "{stderr}"
    );
    // A role that is not one, in a JSON document.
    let path = scratch(
        "wrong_types",
        "role.json",
        b"[\n  {\"role\": \"user\", \"content\": \"a\"},\n  {\"role\": \"robot\", \"content\": \"b\"}\n]\n",
    );
    let (code, _, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6);
    assert!(
        stderr.starts_with(&format!(
            "{}:3: unreadable: messages[1]: role",
            path.display()
        )),
        "{stderr}"
    );
}

#[test]
fn binary_bytes_are_unreadable_with_the_line() {
    let mut bytes = head("claude-code-viewer-1af7fc5e.jsonl", 3).into_bytes();
    bytes.extend_from_slice(&[0x00, 0x9f, 0x92, 0x96, 0xff, b'\n']);
    let path = scratch("binary", "mixed.jsonl", &bytes);
    let (code, _, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6);
    assert!(
        stderr.starts_with(&format!("{}:4: unreadable: ", path.display())),
        "{stderr}"
    );
    let path = scratch(
        "binary",
        "blob.bin",
        &[0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00],
    );
    let (code, _, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6);
    assert_eq!(
        stderr,
        format!(
            "{}:1: unreadable: binary data (a NUL byte), not a transcript\n",
            path.display()
        )
    );
}

#[test]
fn violations_exit_1_and_print_file_line_message_check_and_excerpt() {
    let text = "[\n  {\"role\": \"user\", \"content\": \"go\"},\n  {\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"t1\", \"name\": \"ls\", \"input\": {}}]},\n  {\"role\": \"user\", \"content\": \"never mind\"}\n]\n";
    let path = scratch("violations", "broken.json", text.as_bytes());
    let (code, stdout, _) = turnsim(&[s(&path)]);
    assert_eq!(code, 1);
    let p = path.display();
    assert_eq!(
        stdout,
        format!(
            "{p}:3: violation pairing/missing_tool_result: message 1: tool call t1 has no tool_result in message 2\n    | {{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"ls\",\"input\":{{}}}}\n{p}: anthropic (messages 3, windows 1): 1 violation(s), 0 info [pairing/missing_tool_result 1]: VIOLATIONS\n"
        )
    );
}

#[test]
fn json_output_is_machine_readable_and_carries_the_exit_code() {
    let (code, stdout, _) = turnsim(&[
        "--json",
        s(&data(
            "claude-code-claude-incremental-subagents-turn-1.jsonl",
        )),
        s(&data("claude-code-viewer-1af7fc5e.jsonl")),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["violations"], 0);
    let f = &v["files"][0]["findings"][0];
    assert_eq!(f["severity"], "info");
    assert_eq!(f["check"], "turn_open");
    assert_eq!(f["kind"], "unanswered_at_end");
    assert_eq!(
        (f["line"].as_u64(), f["message"].as_u64()),
        (Some(25), Some(13))
    );
    assert_eq!(v["files"][1]["stats"]["messages"], 15);

    let path = scratch("json", "bad.jsonl", b"{\"type\":\"summary\"}\n{\n");
    let (code, stdout, _) = turnsim(&["--json", s(&path)]);
    assert_eq!(code, 6);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["unreadable"][0]["line"], 2);
    assert_eq!(v["exit_code"], 6);
}

#[test]
fn format_can_be_forced_and_a_wrong_one_is_unreadable() {
    let log = data("claude-code-viewer-1af7fc5e.jsonl");
    assert_eq!(turnsim(&["--format", "claude-jsonl", s(&log)]).0, 0);
    let (code, _, stderr) = turnsim(&["--format", "anthropic", s(&log)]);
    assert_eq!(code, 6, "{stderr}");
    assert!(
        stderr.contains(
            "1af7fc5e.jsonl:1:411: unreadable: line 1, column 411: missing field `messages`"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = turnsim(&["--format", "yaml", s(&log)]);
    assert_eq!(code, 2, "clap rejects an unknown format: {stderr}");
}

#[test]
fn openai_messages_are_held_to_the_same_rules() {
    let text = r#"{"model": "m", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "user", "content": "and?"}
    ]}"#;
    let path = scratch("openai", "chat.json", text.as_bytes());
    let (code, stdout, _) = turnsim(&[s(&path)]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(":4: violation pairing/missing_tool_result: message 1: tool call c2 has no tool_result in message 2"),
        "{stdout}"
    );
    assert!(
        stdout.contains(": openai (instructions_skipped 1, messages 4, windows 1)"),
        "{stdout}"
    );
}

#[test]
fn prefix_takes_exactly_two_files_usage_errors_are_exit_2_and_a_missing_file_exit_6() {
    let one = data("claude-code-viewer-1af7fc5e.jsonl");
    assert_eq!(turnsim(&["--prefix", s(&one)]).0, 2);
    assert_eq!(turnsim(&[]).0, 2);
    let (code, _, stderr) = turnsim(&[s(Path::new("/nonexistent/transcript.jsonl"))]);
    assert_eq!(code, 6);
    assert!(
        stderr.starts_with("/nonexistent/transcript.jsonl: unreadable: cannot open"),
        "{stderr}"
    );
}

/// Deterministic mutations of every data file: truncations and byte changes at
/// spread-out positions, read as every format. Whatever the verdict, it is one.
#[test]
fn no_input_makes_check_panic() {
    let formats = [
        None,
        Some(Format::Anthropic),
        Some(Format::ClaudeJsonl),
        Some(Format::Vcr),
        Some(Format::OpenAi),
        Some(Format::Recording),
    ];
    let mut runs = 0;
    for entry in std::fs::read_dir(data("")).expect("lists") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("reads");
        // The big log gets fewer cuts: each one re-reads up to 767 KB.
        let points = if bytes.len() > 300_000 { 12 } else { 48 };
        let mut variants: Vec<Vec<u8>> = Vec::new();
        for k in 1..=points {
            let at = bytes.len() * k / (points + 1);
            variants.push(bytes[..at].to_vec());
            for flip in [0x00u8, b'"', b'{', b']', b'\n', 0xff] {
                let mut v = bytes.clone();
                v[at] = flip;
                variants.push(v);
            }
        }
        for (i, v) in variants.into_iter().enumerate() {
            let format = formats[i % formats.len()];
            let _ = check_reader("mutant", Cursor::new(v), format);
            runs += 1;
        }
    }
    assert!(runs > 1000, "{runs}");
}

#[test]
fn a_position_inside_a_log_line_is_said_as_that_lines_column() {
    // Line 2 is cut inside a string: serde counts from the start of the line it was
    // given, which is line 2 of the file, never "line 1".
    let text = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"cut}}\n";
    let path = scratch("column", "cut.jsonl", text.as_bytes());
    let (code, _, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "{}:2:56: unreadable: line 2, column 56: message: EOF while parsing a string",
            path.display()
        )
    );
    // A Codex rollout line the same way.
    let text = "{\"type\":\"session_meta\",\"payload\":{}}\n{\"type\":\"response_item\",\"payload\":{\"type\":\n";
    let path = scratch("column", "rollout.jsonl", text.as_bytes());
    let (code, _, stderr) = turnsim(&[s(&path)]);
    assert_eq!(code, 6);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "{}:2:42: unreadable: line 2, column 42: not a JSON object: EOF while parsing a value",
            path.display()
        )
    );
}
