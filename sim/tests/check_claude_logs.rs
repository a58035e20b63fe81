//! `turnsim check` on Claude Code logs shaped as real sessions leave them, each
//! hand-made in `tests/data/transcripts/handmade-claude-*.jsonl` with its verdict
//! asserted whole: a sub-agent's own log, a block the API would refuse that must not
//! hide the findings after it, and a session rewound twice.

use std::path::{Path, PathBuf};
use turnsim::check::{FileReport, check_file, check_reader};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts")
        .join(name)
}

fn check(name: &str) -> FileReport {
    check_file(&data(name), None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (severity, check, kind, line, window) of a finding.
type Pin = (String, &'static str, String, Option<usize>, Option<usize>);

fn pins(r: &FileReport) -> Vec<Pin> {
    r.findings
        .kept
        .iter()
        .map(|f| {
            (
                format!("{:?}", f.severity),
                f.check,
                f.kind.clone(),
                f.place.line,
                f.place.window,
            )
        })
        .collect()
}

fn stats(r: &FileReport, keys: &[&str]) -> Vec<usize> {
    keys.iter().map(|k| r.stat(k)).collect()
}

#[test]
fn a_sub_agent_log_of_only_sidechain_lines_is_judged_as_that_agents_conversation() {
    let r = check("handmade-claude-agent-sidechain.jsonl");
    assert_eq!(r.format, "claude-jsonl");
    assert_eq!(pins(&r), vec![]);
    assert_eq!(
        stats(&r, &["messages", "sidechain_log", "sidechain_skipped"]),
        vec![4, 1, 0]
    );
}

#[test]
fn a_sub_agent_log_is_judged_not_merely_read() {
    let text = std::fs::read_to_string(data("handmade-claude-agent-sidechain.jsonl"))
        .unwrap()
        .replace(
            r#""tool_use_id":"toolu_s1""#,
            r#""tool_use_id":"toolu_elsewhere""#,
        );
    let r =
        check_reader("agent.jsonl", std::io::Cursor::new(text.into_bytes()), None).expect("reads");
    // The judge reports the call left unanswered; the stray result in the same pair
    // is the same fault, not a second one.
    assert_eq!(
        pins(&r),
        vec![(
            "Violation".into(),
            "pairing",
            "missing_tool_result".into(),
            Some(2),
            Some(0)
        ),]
    );
}

#[test]
fn a_thinking_block_without_signature_is_a_finding_at_its_line_and_the_missing_result_is_still_found()
 {
    let r = check("handmade-claude-thinking-without-signature.jsonl");
    assert_eq!(
        pins(&r),
        vec![
            (
                "Violation".into(),
                "unreadable",
                "block".into(),
                Some(2),
                Some(0)
            ),
            (
                "Violation".into(),
                "pairing",
                "missing_tool_result".into(),
                Some(3),
                Some(0)
            ),
        ]
    );
    let refused = &r.findings.kept[0];
    assert_eq!(refused.place.block, Some(0));
    assert!(
        refused.detail.starts_with(
            "message.content[0]: malformed `thinking` block: missing field `signature`"
        ),
        "{}",
        refused.detail
    );
    assert!(
        refused.excerpt.contains("Run them with go test."),
        "{}",
        refused.excerpt
    );
    // The refused block is left out; the message keeps the block that read.
    assert_eq!(stats(&r, &["messages"]), vec![4]);
}

#[test]
fn a_rewound_session_is_judged_branch_by_branch() {
    // Rewound to its first prompt while a call was open (line 3, a second root), then
    // to the reply before its last prompt (line 9). In file order the open call would
    // be a missing result; on its own branch it is a turn left open.
    let r = check("handmade-claude-forked-session.jsonl");
    assert_eq!(
        pins(&r),
        vec![(
            "Info".into(),
            "turn_open",
            "unanswered_at_end".into(),
            Some(2),
            Some(0)
        )]
    );
    assert_eq!(
        stats(&r, &["branches", "windows", "messages"]),
        vec![2, 3, 10]
    );
}
