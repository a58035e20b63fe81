//! A client pointed at `turnsim serve` completes a tool loop offline, streamed and
//! not, and every request is recorded with a clean verdict.

use crate::serve_support;

use serde_json::json;
use serve_support::*;
use turnsim::testing::serve::recheck::check_dir;
use turnsim::testing::serve::record::read_dir;
use turnsim::testing::serve::script::Script;
use turnsim::testing::serve::tools::{LedgerLine, read_ledger};

const SCRIPTED_LOOP: &str = r#"[
    {"kind": "reply", "text": "Running both.", "tool_calls": [{"name": "bash"}, {"name": "bash"}], "stop": "tool_use"},
    {"kind": "reply", "tool_calls": [{"name": "read_file"}], "stop": "tool_use"},
    {"kind": "reply", "thinking": "all ran", "text": "Done.", "stop": "end_turn"}
]"#;

fn scripted_loop_runs(stream: bool) {
    let (server, dir) = start(script(SCRIPTED_LOOP), "loop");
    let run = tool_loop(server.addr, stream, "Run the checks.", 10);
    assert_eq!(run.requests, 3);
    assert_eq!(run.stop_reason, "end_turn");
    // The two shell calls ran the server's harmless commands: each wrote its start
    // and finish line, keyed by its tool-use id.
    let ids: Vec<String> = run.messages[1]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids.len(), 2);
    let ledger = read_ledger(&dir.join("ledger"));
    for id in &ids {
        assert!(
            ledger.contains(&LedgerLine::Start(id.clone())),
            "{ledger:?}"
        );
        assert!(
            ledger.contains(&LedgerLine::Finish(id.clone())),
            "{ledger:?}"
        );
    }
    // The file tool's path points into the scratch directory.
    let read = &run.messages[3]["content"][0];
    assert_eq!(read["name"], "read_file");
    assert!(
        read["input"]["path"]
            .as_str()
            .is_some_and(|p| p.starts_with(&dir.join("scratch").display().to_string())),
        "{read}"
    );
    assert!(
        read["input"].get("limit").is_none(),
        "optional fields stay unset"
    );
    let verdicts = server.server.verdicts();
    assert_eq!(verdicts.len(), 3);
    assert!(
        violations(&verdicts).is_empty(),
        "{:?}",
        violations(&verdicts)
    );
    assert!(verdicts.iter().all(|v| v.conversation == "c1"));
}

#[test]
fn a_streamed_scripted_tool_loop_runs_the_ledger_commands_with_clean_verdicts() {
    scripted_loop_runs(true);
}

#[test]
fn a_non_streamed_scripted_tool_loop_runs_the_ledger_commands_with_clean_verdicts() {
    scripted_loop_runs(false);
}

#[test]
fn a_seeded_tool_loop_ends_on_its_own_with_clean_verdicts() {
    let mut total = 0;
    for seed in [3, 11, 42] {
        let (server, _dir) = start(Script::seeded(seed, false), "seeded");
        let run = tool_loop(server.addr, seed % 2 == 0, "Fix the parser.", 30);
        assert_ne!(run.stop_reason, "tool_use", "seed {seed} never wrapped up");
        let verdicts = server.server.verdicts();
        assert_eq!(verdicts.len(), run.requests);
        assert!(
            violations(&verdicts).is_empty(),
            "seed {seed}: {:?}",
            violations(&verdicts)
        );
        total += run.requests;
    }
    assert!(total > 3, "no seed asked for a tool at all");
}

#[test]
fn the_same_seed_and_requests_give_the_same_bytes() {
    let bodies: Vec<Vec<u8>> = (0..2)
        .map(|_| {
            let (server, _dir) = start(Script::seeded(9, false), "determinism");
            let first = post(
                server.addr,
                &body(&[json!({"role": "user", "content": "same prompt"})], true),
            );
            first.body
        })
        .collect();
    assert!(!bodies[0].is_empty());
    // The ledger path differs between the two servers' workspaces; everything else
    // must match byte for byte.
    let strip = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .split("turnsim-serve-test-")
            .map(|s| {
                s.split_once("-determinism")
                    .map_or(s, |(_, r)| r)
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join("")
    };
    assert_eq!(strip(&bodies[0]), strip(&bodies[1]));
}

#[test]
fn every_request_is_recorded_with_its_verdict_and_check_agrees() {
    let rec = temp_dir("record");
    let (server, _dir) = start_with(script(SCRIPTED_LOOP), "record", |c| {
        c.record = Some(rec.clone());
    });
    let run = tool_loop(server.addr, true, "Run the checks.", 10);
    assert_eq!(run.requests, 3);
    let records = read_dir(&rec).expect("recording reads back");
    assert_eq!(records.len(), 3);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.index, i as u64);
        assert_eq!(r.target, "/v1/messages?beta=true");
        assert_eq!(
            r.headers.get("x-api-key").map(String::as_str),
            Some("<redacted>")
        );
        assert_eq!(
            r.headers.get("anthropic-version").map(String::as_str),
            Some("2023-06-01")
        );
        assert!(r.body["messages"].is_array());
        let v = r
            .verdict
            .as_ref()
            .expect("a messages request has a verdict");
        assert!(v.is_clean(), "{v:?}");
    }
    assert_eq!(records[0].answer.tool_use_ids.len(), 2);
    assert_eq!(records[0].answer.stop_reason.as_deref(), Some("tool_use"));
    let text = std::fs::read_to_string(rec.join("000000.json")).unwrap_or_default();
    assert!(
        !text.contains("sk-test-not-a-secret"),
        "a credential was recorded"
    );
    let checked = check_dir(&rec).expect("check reads the recording");
    assert_eq!(checked.verdicts.len(), 3);
    assert!(checked.mismatches.is_empty(), "{:?}", checked.mismatches);
}

#[test]
fn requests_without_tools_get_a_short_answer_and_do_not_consume_the_script() {
    let (server, _dir) = start(script(SCRIPTED_LOOP), "title");
    let title = json!({"model": "claude-haiku-4-5", "max_tokens": 40, "stream": true,
        "system": "Generate a title.", "messages": [{"role": "user", "content": "Run the checks."}]});
    for _ in 0..3 {
        let raw = post(server.addr, &title);
        assert_eq!(raw.status, 200);
        let msg = turnsim::testing::serve::sse::message_json(&raw.events());
        assert_eq!(msg["content"][0]["text"], turnsim::serve::PLAIN_ANSWER);
        assert_eq!(msg["stop_reason"], "end_turn");
    }
    assert_eq!(server.server.steps_left(), 3);
    let run = tool_loop(server.addr, true, "Run the checks.", 10);
    assert_eq!(
        run.requests, 3,
        "the script was played whole after the titles"
    );
    // The title requests are a conversation of their own (no tools).
    let convs: Vec<String> = server
        .server
        .verdicts()
        .iter()
        .map(|v| v.conversation.clone())
        .collect();
    assert_eq!(convs, ["c1", "c1", "c1", "c2", "c2", "c2"]);
}
