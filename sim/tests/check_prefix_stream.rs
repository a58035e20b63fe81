//! `turnsim check --prefix` streams both files: on large generated pairs many times
//! the element limit, its verdicts are pinned (what matched, what was added, where a
//! change is), for JSON arrays, request bodies, OpenAI chat documents and a Claude Code
//! log against a JSON array; a message over the limit is refused by name. Memory
//! itself is a benchmark's figure (benches/README.md, `/usr/bin/time -v` on 200 MB
//! pairs), not a test's.

use std::path::{Path, PathBuf};
use turnsim::check::{Limits, check_prefix_with};
use turnsim::testing::check::report::Outcome;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check-prefix-stream");
    std::fs::create_dir_all(&dir).expect("the scratch folder is made");
    dir.join(name)
}

/// Round `i` of a tool loop: an assistant call and the user's result, each about
/// `size` bytes of text.
fn round(i: usize, size: usize) -> [String; 2] {
    let text = format!("{i:08} ").repeat(size / 9 + 1);
    [
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}},{{"type":"tool_use","id":"toolu_{i:08}","name":"read_file","input":{{"path":"src/{i}.rs"}}}}]}}"#
        ),
        format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i:08}","content":"{text}"}}]}}"#
        ),
    ]
}

/// A prompt and `rounds` rounds, one message per line, the `changed` round's result
/// text altered.
fn messages(rounds: usize, changed: Option<usize>) -> Vec<String> {
    let mut out = vec![r#"{"role":"user","content":"fix the parser"}"#.to_string()];
    for i in 0..rounds {
        let [call, mut result] = round(i, 200);
        if changed == Some(i) {
            result = result.replacen("content\":\"", "content\":\"CHANGED ", 1);
        }
        out.push(call);
        out.push(result);
    }
    out
}

fn array(ms: &[String]) -> String {
    format!("[\n{}\n]\n", ms.join(",\n"))
}

fn write(name: &str, text: &str) -> PathBuf {
    let path = scratch(name);
    std::fs::write(&path, text).expect("the input is written");
    path
}

/// Every finding as `kind@message index (line): text`, and the stats, of the one
/// report; or the unreadable file's error.
fn verdict(o: &Outcome) -> Vec<String> {
    let mut out: Vec<String> = o
        .unreadable
        .iter()
        .map(|u| format!("unreadable {:?}: {}", u.line, u.message))
        .collect();
    for f in &o.files {
        for x in &f.findings.kept {
            out.push(format!(
                "{}@{:?} ({:?}): {}",
                x.kind, x.place.message, x.place.line, x.detail
            ));
        }
        for (k, v) in &f.stats {
            out.push(format!("{k} {v}"));
        }
        out.push(format!("format {}", f.format));
    }
    out
}

/// The limit: a little over the largest message, far under each file.
fn limits() -> Limits {
    Limits {
        max_element: 4 << 10,
    }
}

#[test]
fn a_large_array_extended_by_more_rounds_is_a_clean_prefix() {
    let a = write("extends-a.json", &array(&messages(20_000, None)));
    let b = write("extends-b.json", &array(&messages(25_000, None)));
    assert!(std::fs::metadata(&b).expect("written").len() > 1000 * 4096);
    let o = check_prefix_with(&a, &b, None, limits());
    assert_eq!(
        verdict(&o),
        [
            "messages_added 10000",
            "messages_matched 40001",
            "format anthropic"
        ]
    );
    assert_eq!(o.exit_code(), 0);
}

#[test]
fn a_large_array_changed_near_its_end_names_the_message_and_its_line() {
    let a = write("changed-a.json", &array(&messages(20_000, None)));
    let b = write("changed-b.json", &array(&messages(25_000, Some(19_990))));
    let o = check_prefix_with(&a, &b, None, limits());
    let v = verdict(&o);
    // The prompt is message 0 on line 2; round i's result is message 2i + 2.
    assert!(
        v[0].starts_with("message_differs@Some(39982) (Some(39984)): message 39982 differs from "),
        "{v:?}"
    );
    assert_eq!(
        v[1..],
        [
            "messages_added 0",
            "messages_matched 39982",
            "format anthropic"
        ]
    );
    assert_eq!(o.exit_code(), 1);
}

#[test]
fn a_request_body_against_the_longer_array_it_grew_into() {
    let ms = messages(5_000, None);
    let body = format!(
        "{{\"model\":\"m\",\"system\":\"s\",\"messages\":{},\"max_tokens\":1}}",
        array(&ms[..9_001])
    );
    let a = write("body-a.json", &body);
    let b = write("body-b.json", &array(&ms));
    let o = check_prefix_with(&a, &b, None, limits());
    assert_eq!(
        verdict(&o),
        [
            "messages_added 1000",
            "messages_matched 9001",
            "format anthropic"
        ]
    );
    // And the other way round B is shorter: it ends before message 9001.
    let o = check_prefix_with(&b, &a, None, limits());
    assert_eq!(o.files[0].findings.kept[0].kind, "shorter");
    assert_eq!(o.files[0].findings.kept[0].place.message, Some(9001));
}

/// Round `i` in OpenAI chat form: the assistant's call and the tool's answer.
fn openai_messages(rounds: usize) -> Vec<String> {
    let mut out = vec![
        r#"{"role":"system","content":"be brief"}"#.to_string(),
        r#"{"role":"user","content":"fix the parser"}"#.to_string(),
    ];
    for i in 0..rounds {
        out.push(format!(
            r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{i}","type":"function","function":{{"name":"read_file","arguments":"{{}}"}}}}]}}"#
        ));
        out.push(format!(
            r#"{{"role":"tool","tool_call_id":"call_{i}","content":"{}"}}"#,
            "x".repeat(300)
        ));
    }
    out
}

#[test]
fn an_openai_document_is_compared_as_openai_even_when_its_first_messages_look_anthropic() {
    // The system message that marks the document as OpenAI's comes last in `a`'s
    // order of evidence: strip it, and only the `tool` messages say so.
    let ms = openai_messages(10_000);
    let a = write("openai-a.json", &array(&ms[1..15_000]));
    let b = write("openai-b.json", &array(&ms[1..]));
    let o = check_prefix_with(&a, &b, None, limits());
    assert_eq!(
        verdict(&o),
        [
            "messages_added 5002",
            "messages_matched 14999",
            "format openai"
        ]
    );
}

#[test]
fn a_claude_code_log_is_a_prefix_of_the_json_array_of_its_messages() {
    let ms = messages(3_000, None);
    let log: String = ms
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let kind = if m.starts_with(r#"{"role":"user""#) {
                "user"
            } else {
                "assistant"
            };
            format!(
                "{{\"type\":\"{kind}\",\"uuid\":\"u{i}\",\"sessionId\":\"s\",\"message\":{m}}}\n"
            )
        })
        .collect();
    let a = write("log-a.jsonl", &log);
    let b = write("log-b.json", &array(&messages(3_500, None)));
    let o = check_prefix_with(&a, &b, None, limits());
    assert_eq!(
        verdict(&o),
        [
            "messages_added 1000",
            "messages_matched 6001",
            "format anthropic"
        ]
    );
}

#[test]
fn a_message_over_the_limit_is_refused_by_name_before_any_comparison() {
    let mut ms = messages(100, None);
    ms[51] = round(25, 10_000)[1].clone();
    let a = write("over-a.json", &array(&ms));
    let b = write("over-b.json", &array(&messages(200, None)));
    let o = check_prefix_with(&a, &b, None, limits());
    assert_eq!(
        verdict(&o),
        [
            "unreadable Some(53): message 51 is larger than the limit of 4096 bytes for one element; raise it with --max-element-mib"
        ]
    );
    assert_eq!(o.exit_code(), 6);
}
