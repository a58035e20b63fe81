//! Never a silent pass: every class of input `turnsim check` cannot judge is an error
//! naming what it is or what was expected, with the exit code of unreadable input; a
//! folder of transcripts checks each file; a `serve --record` folder is judged as one.

use crate::check_support;
use crate::serve_support;

use serde_json::{Value, json};
use serve_support::*;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use turnsim::testing::check::report::exit;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts")
        .join(name)
}

/// A fresh scratch folder for one case.
fn folder(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("check_inputs")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creates the scratch dir");
    dir
}

fn file(name: &str, text: &str) -> PathBuf {
    let path = folder(name).join(name);
    std::fs::write(&path, text).expect("writes");
    path
}

/// Runs `turnsim check ARGS`: (exit code, stdout, stderr).
fn check(args: &[&Path]) -> (i32, String, String) {
    check_support::check(args)
}

fn check_with(flags: &[&str], path: &Path) -> (i32, String, String) {
    check_support::check(flags.iter().map(OsStr::new).chain([path.as_os_str()]))
}

fn assert_unreadable(path: &Path, says: &str) {
    let (code, _, stderr) = check(&[path]);
    assert_eq!(code, exit::UNREADABLE, "{}: {stderr}", path.display());
    let want = format!("{}: unreadable: {says}", path.display());
    assert!(stderr.starts_with(&want), "want {want:?}, got {stderr:?}");
}

#[test]
fn json_that_holds_no_messages_is_an_error_naming_what_was_expected() {
    let nothing = "nothing to judge: none of its";
    assert_unreadable(&file("object.json", "{\"a\":1}\n"), nothing);
    assert_unreadable(
        &file(
            "lines.jsonl",
            "{\"x\":1}\n{\"y\":[2]}\n{\"type\":\"summary\"}\n",
        ),
        nothing,
    );
    let empty = "nothing to judge: the document holds no messages";
    assert_unreadable(&file("array.json", "[]"), empty);
    assert_unreadable(
        &file("body.json", "{\"model\":\"m\",\"messages\":[]}"),
        empty,
    );
}

#[test]
fn formats_once_only_recognised_are_judged_and_other_files_say_what_they_are() {
    let rollout = concat!(
        "{\"timestamp\":\"2025-10-01T10:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"0199\",\"cwd\":\"/w\",\"originator\":\"codex_exec\"}}\n",
        "{\"timestamp\":\"2025-10-01T10:00:00.100Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}}\n",
    );
    // A Codex rollout is judged now (see check_codex.rs).
    let report = turnsim::check::check_file(&file("rollout.jsonl", rollout), None).expect("judged");
    assert_eq!(report.format, "codex");
    assert_eq!(report.stat("response_items"), 1);
    assert_unreadable(
        &file(
            "other.yaml",
            "---\nversion: 2\ninteractions:\n- id: 0\n  request:\n    url: https://example.com/v1/files\n    body: ''\n",
        ),
        "a cassette with no Messages API, chat-completions or Responses API request among its 1 interaction(s)",
    );
    // go-vcr cassettes of the Responses API and vcrpy cassettes are judged now (see
    // check_vcrpy.rs), and so are gemini-cli session files (check_corpus.rs): a file of
    // that shape is read as one, never taken for a broken file of another format.
    let gemini = file(
        "session-2026-12-02T10-00-abcd.json",
        "{\n  \"sessionId\": \"92f6\",\n  \"projectHash\": \"a33c\",\n  \"messages\": [{\"id\": \"m1\", \"type\": \"user\", \"content\": \"hi\"}]\n}\n",
    );
    let (code, stdout, stderr) = check(&[&gemini]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("session-2026-12-02T10-00-abcd.json: gemini-cli (contents 1,"),
        "{stdout}"
    );
}

#[test]
fn empty_folders_and_folders_of_documentation_are_errors() {
    assert_unreadable(&folder("empty"), "an empty folder: nothing to check");
    let docs = folder("docs");
    std::fs::write(docs.join("README.md"), "# notes\n").expect("writes");
    assert_unreadable(&docs, "no transcript in this folder (1 entry skipped)");
}

#[test]
fn a_folder_of_transcripts_checks_each_file_and_honours_json_and_format() {
    let dir = folder("transcripts");
    for name in [
        "claude-code-session-9eda1058.jsonl",
        "claude-code-viewer-1af7fc5e.jsonl",
        "crush-vcr-anthropic-parallel_tool_calls.yaml",
        "SOURCES.md",
    ] {
        std::fs::copy(data(name), dir.join(name)).expect("copies");
    }
    let (code, stdout, _) = check(&[&dir]);
    assert_eq!(code, exit::CLEAN, "{stdout}");
    assert!(
        stdout.contains("checked 3 files: 3 clean, 0 with violations, 0 unreadable"),
        "{stdout}"
    );
    assert!(
        stdout.contains("SOURCES.md: skipped (documentation, not a transcript)"),
        "{stdout}"
    );
    let (code, stdout, _) = check_with(&["--json"], &dir);
    assert_eq!(code, exit::CLEAN);
    let report: Value = serde_json::from_str(&stdout).expect("--json prints JSON");
    let formats: Vec<&str> = report["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["format"].as_str())
        .collect();
    assert_eq!(formats, ["claude-jsonl", "claude-jsonl", "vcr"]);
    assert_eq!(report["skipped"].as_array().map(Vec::len), Some(1));
    // --format applies to every file: the cassette is not a Claude Code log.
    let (code, _, stderr) = check_with(&["--format", "claude-jsonl"], &dir);
    assert_eq!(code, exit::UNREADABLE);
    assert!(
        stderr.contains("crush-vcr-anthropic-parallel_tool_calls.yaml:1: unreadable"),
        "{stderr}"
    );
    // A violation in one file fails the folder.
    std::fs::write(
        dir.join("broken.json"),
        r#"[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]},{"role":"user","content":"no"}]"#,
    )
    .expect("writes");
    let (code, stdout, _) = check(&[&dir]);
    assert_eq!(code, exit::VIOLATIONS, "{stdout}");
}

#[test]
fn a_serve_recording_is_judged_as_one_input_and_an_unjudgeable_one_is_an_error() {
    let rec = folder("recording");
    let (server, _dir) = start_with(
        script(r#"[{"kind": "reply", "text": "Done.", "stop": "end_turn"}]"#),
        "check-inputs",
        |c| c.record = Some(rec.clone()),
    );
    let messages = vec![json!({"role": "user", "content": "Hello."})];
    assert_eq!(post(server.addr, &body(&messages, true)).status, 200);
    let (code, stdout, _) = check_with(&["--json"], &rec);
    assert_eq!(code, exit::CLEAN, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).expect("--json prints JSON");
    assert_eq!(report["files"][0]["format"], "serve-record");
    assert_eq!(report["files"][0]["stats"]["requests"], 1);
    let (code, stdout, _) = check_with(&["--format", "serve-record"], &rec);
    assert_eq!(code, exit::CLEAN, "{stdout}");
    // A recording of requests none of which is a Messages call.
    let other = folder("recording-without-messages");
    let (server, _dir) = start_with(script("[]"), "check-inputs-2", |c| {
        c.record = Some(other.clone())
    });
    let raw = send(
        server.addr,
        "GET",
        "/v1/models",
        &[],
        b"",
        std::time::Duration::from_secs(10),
    );
    assert_eq!(raw.status, 200);
    assert_unreadable(
        &other,
        "a `turnsim serve --record` folder with no judgeable POST /v1/messages request among its 1 record(s)",
    );
    assert_unreadable(
        &file("not-a-folder.json", "{\"messages\":[]}"),
        "nothing to judge",
    );
    let (code, _, stderr) = check_with(
        &["--format", "serve-record"],
        &file("forced.json", "{\"a\":1}"),
    );
    assert_eq!(code, exit::UNREADABLE);
    assert!(stderr.contains("--format serve-record names a `turnsim serve --record` folder"));
}
