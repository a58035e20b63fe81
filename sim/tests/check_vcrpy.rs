//! `turnsim check` on cassettes recorded here by vcrpy from the official Python SDKs
//! (anthropic, openai) talking to `turnsim serve` (`sim/tests/data/cassettes/`,
//! `record.sh`): each file's verdict, read by hand from its requests, is asserted
//! exactly, and each cassette's requests replayed through an in-process `turnsim
//! serve` (playing the same script) get the same violations live, so `check` and
//! `serve` agree on every recorded SDK session, and `turnsim check` on the server's
//! own `--record` folder of that replay agrees too (the Responses `item_reference`
//! cassette among them: judged, not flagged). The same Responses traffic laid out
//! as go-vcr writes it is judged the same.

use crate::serve_support;

use serve_support::{send, start_with};
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::Duration;
use turnsim::check::{FileReport, Severity, check_file, check_files, check_reader};
use turnsim::testing::serve::script::parse_serve_script;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cassettes")
        .join(name)
}

fn check(name: &str) -> FileReport {
    check_file(&data(name), None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn stats(r: &FileReport) -> Vec<(&'static str, usize)> {
    r.stats.iter().map(|(k, v)| (*k, *v)).collect()
}

/// (check, kind, request, message) of every violation.
fn violations(r: &FileReport) -> Vec<(&'static str, String, Option<usize>, Option<usize>)> {
    r.findings
        .kept
        .iter()
        .filter(|f| f.severity == Severity::Violation)
        .map(|f| (f.check, f.kind.clone(), f.place.request, f.place.message))
        .collect()
}

const THREE_CLEAN: [(&str, usize); 6] = [
    ("conversations", 1),
    ("interactions_skipped", 0),
    ("prefix_judged_on_bytes", 3),
    ("prefix_judged_on_values", 0),
    ("requests", 3),
    ("responses", 3),
];

#[test]
fn clean_sdk_tool_loops_in_every_api_are_judged_clean() {
    for name in [
        "vcrpy-anthropic-stream.yaml",
        "vcrpy-anthropic-json.yaml",
        "vcrpy-anthropic-gzip.yaml",
        "vcrpy-responses-stream.yaml",
        "vcrpy-responses-chained.yaml",
        "vcrpy-responses-item-reference.yaml",
        "vcrpy-json-responses-stream.json",
    ] {
        let r = check(name);
        assert_eq!(r.format, "vcrpy", "{name}");
        assert_eq!(stats(&r), THREE_CLEAN, "{name}");
        assert_eq!(r.findings.kept, vec![], "{name}");
    }
}

#[test]
fn a_streamed_chat_cassette_is_judged_with_its_replies_read_and_sent_back_unchanged() {
    let r = check("vcrpy-chat-stream.yaml");
    assert_eq!(stats(&r), THREE_CLEAN);
    assert_eq!(r.findings.kept, vec![]);
}

#[test]
fn the_dropped_tool_result_is_found_at_the_request_the_server_refused() {
    let r = check("vcrpy-anthropic-dropped-result.yaml");
    // The third request was refused (400), so only two responses were read.
    assert_eq!(
        stats(&r),
        [
            ("conversations", 1),
            ("interactions_skipped", 0),
            ("prefix_judged_on_bytes", 3),
            ("prefix_judged_on_values", 0),
            ("requests", 3),
            ("responses", 2)
        ]
    );
    assert_eq!(
        violations(&r),
        vec![(
            "pairing",
            "missing_tool_result".to_string(),
            Some(2),
            Some(3)
        )]
    );
    assert_eq!(r.findings.infos, 0);
    assert_eq!(
        r.findings.kept[0].detail,
        "message 3: tool call toolu_18237150_00003 has no tool_result in message 4"
    );
}

#[test]
fn the_rewritten_tool_result_is_an_append_only_violation() {
    let r = check("vcrpy-chat-edited-history.yaml");
    assert_eq!(
        violations(&r),
        vec![(
            "append_only",
            "message_changed".to_string(),
            Some(2),
            Some(3)
        )]
    );
    assert_eq!(r.findings.violations, 1);
}

#[test]
fn reasoning_not_sent_back_is_found_once_in_plain_and_gzip_cassettes() {
    for name in [
        "vcrpy-responses-dropped-reasoning.yaml",
        "vcrpy-responses-gzip-dropped-reasoning.yaml",
    ] {
        let r = check(name);
        assert_eq!(stats(&r), THREE_CLEAN, "{name}");
        assert_eq!(
            violations(&r),
            vec![("reasoning_kept", "dropped".to_string(), Some(1), Some(2))],
            "{name}"
        );
        assert_eq!(r.findings.infos, 0, "{name}");
        assert_eq!(
            r.findings.kept[0].detail,
            "request 1: reasoning item rs_18237150_0001_0 that preceded call call_18237150_00001 was not sent back",
            "{name}"
        );
    }
}

/// The interactions of a vcrpy cassette as go-vcr (v2) lays them out: `url:`, a
/// string body, `code:`. With `edit`, each request body is changed first.
fn as_go_vcr(name: &str, edit: impl Fn(usize, &mut serde_json::Value)) -> String {
    let cassette: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(data(name)).expect("reads")).expect("YAML");
    let quote = |s: &str| serde_json::to_string(s).expect("a string");
    let mut out = String::from("---\nversion: 2\ninteractions:\n");
    let items = cassette["interactions"].as_sequence().expect("a list");
    for (i, item) in items.iter().enumerate() {
        let mut body: serde_json::Value =
            serde_json::from_str(item["request"]["body"].as_str().expect("text")).expect("JSON");
        edit(i, &mut body);
        let uri = item["request"]["uri"].as_str().expect("uri");
        let reply = item["response"]["body"]["string"].as_str().expect("text");
        let code = item["response"]["status"]["code"].as_u64().expect("code");
        out.push_str(&format!(
            "    - id: {i}\n      request:\n        body: {}\n        url: {}\n        method: POST\n      response:\n        body: {}\n        code: {code}\n",
            quote(&body.to_string()),
            quote(uri),
            quote(reply),
        ));
    }
    out
}

#[test]
fn a_go_vcr_cassette_of_the_responses_api_is_judged_like_the_vcrpy_one() {
    for name in [
        "vcrpy-responses-chained.yaml",
        "vcrpy-responses-stream.yaml",
    ] {
        let text = as_go_vcr(name, |_, _| {});
        let r = check_reader("responses.yaml", Cursor::new(text.into_bytes()), None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.format, "vcr", "{name}");
        assert_eq!(stats(&r), THREE_CLEAN, "{name}");
        assert_eq!(r.findings.kept, vec![], "{name}");
    }
    // The second call's output left out of the last request: the call is unanswered.
    let text = as_go_vcr("vcrpy-responses-stream.yaml", |i, body| {
        if i == 2 {
            let input = body["input"].as_array_mut().expect("items");
            let at = input
                .iter()
                .position(|x| {
                    x["call_id"] == "call_18237150_00002" && x["type"] == "function_call_output"
                })
                .expect("the output is there");
            input.remove(at);
        }
    });
    let r = check_reader("responses.yaml", Cursor::new(text.into_bytes()), None).expect("read");
    // The call at input[4] is unanswered, and the history changed where its output
    // stood (input[5]); findings name the input items as sent.
    assert_eq!(
        violations(&r),
        vec![
            (
                "pairing",
                "missing_tool_result".to_string(),
                Some(2),
                Some(4)
            ),
            (
                "append_only",
                "message_changed".to_string(),
                Some(2),
                Some(5)
            ),
        ]
    );
}

#[test]
fn a_continued_response_the_cassette_does_not_hold_is_named_not_judged() {
    // The chained cassette without its first interaction: request 1 continues a
    // response nobody recorded.
    let full = as_go_vcr("vcrpy-responses-chained.yaml", |_, _| {});
    let cut = full.find("    - id: 1\n").expect("a second interaction");
    let text = format!("---\nversion: 2\ninteractions:\n{}", &full[cut..]);
    let r = check_reader("cut.yaml", Cursor::new(text.into_bytes()), None).expect("read");
    assert_eq!(r.findings.violations, 0);
    assert_eq!(
        r.findings.kept[0].detail,
        "request 1 continues resp_18237150_0001, which this cassette holds no readable completed response for: not judged"
    );
    assert_eq!(r.findings.kept[0].kind, "not_judged");
    // Request 2 continues request 1's reply, whose context is not known either.
    assert_eq!(
        r.findings.kept[1].detail,
        "request 2 continues resp_18237150_0002, which this cassette holds no readable completed response for: not judged"
    );
    assert_eq!(r.findings.kept.len(), 2);
}

#[test]
fn no_cut_or_flipped_byte_of_a_cassette_makes_check_panic() {
    use turnsim::check::Format;
    let mut runs = 0;
    for entry in std::fs::read_dir(data("")).expect("lists") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
        if !name.starts_with("vcrpy-") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("reads");
        let mut variants = Vec::new();
        for k in 1..=12 {
            let at = bytes.len() * k / 13;
            variants.push(bytes[..at].to_vec());
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x5a;
            variants.push(flipped);
        }
        for v in variants {
            for format in [None, Some(Format::Vcrpy)] {
                // Judged or unreadable, never a panic.
                let _ = check_reader("mutated.yaml", Cursor::new(v.clone()), format);
                runs += 1;
            }
        }
    }
    assert!(runs >= 12 * 24 * 2, "{runs}");
}

/// A violation as both judges name it: rule, kind and the wire message it points at,
/// with the first request that had it (a later request of the conversation that
/// carries the same history repeats it). Excerpts are left out: for chat-completions
/// `check` quotes the wire message, the server the message it lays out of it (a run
/// of tool messages is one).
type Named = BTreeMap<(String, String, Option<usize>), u64>;

#[test]
fn each_cassette_replayed_through_serve_gets_the_verdicts_check_gives_it() {
    let script = std::fs::read_to_string(data("script.json")).expect("reads");
    for entry in std::fs::read_dir(data("")).expect("lists") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
        if !name.starts_with("vcrpy-") {
            continue;
        }
        let rec = std::env::temp_dir().join(format!(
            "turnsim-vcrpy-record-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&rec);
        let (server, _dir) = start_with(
            parse_serve_script(&script, "script.json").expect("the script loads"),
            name,
            |c| c.record = Some(rec.clone()),
        );
        let cassette: serde_norway::Value =
            serde_norway::from_str(&std::fs::read_to_string(&path).expect("reads")).expect("YAML");
        for item in cassette["interactions"].as_sequence().expect("a list") {
            let uri = item["request"]["uri"].as_str().expect("uri");
            let target = &uri[uri.find("/v1/").expect("an API path")..];
            let body = item["request"]["body"].as_str().expect("a text body");
            let mut headers = vec![("content-type", "application/json")];
            if target.starts_with("/v1/messages") {
                headers.push(("anthropic-version", "2023-06-01"));
            }
            let raw = send(
                server.addr,
                "POST",
                target,
                &headers,
                body.as_bytes(),
                Duration::from_secs(20),
            );
            let recorded = item["response"]["status"]["code"]
                .as_u64()
                .expect("a status");
            assert_eq!(u64::from(raw.status), recorded, "{name}: {target}");
        }
        let mut live = Named::new();
        for v in server.server.verdicts() {
            for x in &v.violations {
                live.entry((x.rule.clone(), x.kind.clone(), x.message))
                    .or_insert(v.request);
            }
        }
        let mut checked = Named::new();
        for f in check(name)
            .findings
            .kept
            .iter()
            .filter(|f| f.severity == Severity::Violation)
        {
            let request = f
                .place
                .request
                .expect("a cassette finding names its request") as u64;
            checked
                .entry((f.check.to_owned(), f.kind.clone(), f.place.message))
                .or_insert(request);
        }
        assert_eq!(checked, live, "{name}");
        // The server's own recording, judged again by `turnsim check DIR`: the same.
        let mut recorded = Named::new();
        let outcome = check_files(std::slice::from_ref(&rec), None);
        assert!(
            outcome.unreadable.is_empty(),
            "{name}: {:?}",
            outcome.unreadable
        );
        assert_eq!(outcome.files.len(), 1, "{name}");
        let report = &outcome.files[0];
        assert_eq!(report.format, "serve-record", "{name}");
        for f in report
            .findings
            .kept
            .iter()
            .filter(|f| f.severity == Severity::Violation)
        {
            let request = f
                .place
                .request
                .expect("a recorded finding names its request") as u64;
            recorded
                .entry((f.check.to_owned(), f.kind.clone(), f.place.message))
                .or_insert(request);
        }
        assert_eq!(recorded, live, "{name}: recording vs live");
        assert_eq!(
            report.findings.counts.get("recording/verdict_changed"),
            None,
            "{name}"
        );
        let _ = std::fs::remove_dir_all(&rec);
    }
}
