//! `turnsim check` on the six real public transcripts in `tests/data/transcripts/`
//! (sources in its SOURCES.md): every file loads, and its findings are pinned here.

use std::path::{Path, PathBuf};
use turnsim::check::FileReport;
use turnsim::check::{check_file, check_prefix};
use turnsim::testing::check::claude_jsonl::ClaudeJsonl;
use turnsim::testing::check::source::Item;
use turnsim_core::{Block, Role};

const TURN_1: &str = "claude-code-claude-incremental-subagents-turn-1.jsonl";
const TURN_2: &str = "claude-code-claude-incremental-subagents-turn-2.jsonl";
const LONG: &str = "claude-code-session-196820da.jsonl";
const INTERRUPTED: &str = "claude-code-session-9eda1058.jsonl";
const VIEWER: &str = "claude-code-viewer-1af7fc5e.jsonl";
const CRUSH: &str = "crush-vcr-anthropic-parallel_tool_calls.yaml";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts")
        .join(name)
}

fn check(name: &str) -> FileReport {
    check_file(&data(name), None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (severity, check, kind, line, message, block) of every finding.
type Pin = (
    &'static str,
    &'static str,
    String,
    Option<usize>,
    Option<usize>,
    Option<usize>,
);

/// A file, its format, some of its stats and all of its findings.
type Expected = (
    &'static str,
    &'static str,
    Vec<(&'static str, usize)>,
    Vec<Pin>,
);

fn pins(r: &FileReport) -> Vec<Pin> {
    r.findings
        .kept
        .iter()
        .map(|f| {
            (
                f.severity.as_str(),
                f.check,
                f.kind.clone(),
                f.place.line,
                f.place.message,
                f.place.block,
            )
        })
        .collect()
}

fn stats(r: &FileReport, keys: &[&str]) -> Vec<(String, usize)> {
    keys.iter().map(|k| (k.to_string(), r.stat(k))).collect()
}

fn cli(args: &[&str]) -> i32 {
    let mut argv = vec!["turnsim".to_string(), "check".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    turnsim::cli::main_with(argv)
}

#[test]
fn every_shared_transcript_loads_with_its_pinned_shape_and_findings() {
    let expected: [Expected; 6] = [
        (
            TURN_1,
            "claude-jsonl",
            vec![
                ("lines", 25),
                ("messages", 14),
                ("windows", 1),
                ("entries_skipped", 2),
                ("lines_merged", 9),
            ],
            vec![(
                "info",
                "turn_open",
                "unanswered_at_end".into(),
                Some(25),
                Some(13),
                Some(1),
            )],
        ),
        (
            TURN_2,
            "claude-jsonl",
            vec![
                ("lines", 50),
                ("messages", 22),
                ("windows", 1),
                ("entries_skipped", 5),
                ("lines_merged", 23),
            ],
            vec![],
        ),
        (
            LONG,
            "claude-jsonl",
            vec![
                ("lines", 233),
                ("messages", 97),
                ("windows", 1),
                ("entries_skipped", 19),
                ("lines_merged", 117),
            ],
            vec![],
        ),
        (
            INTERRUPTED,
            "claude-jsonl",
            vec![
                ("lines", 40),
                ("messages", 12),
                ("windows", 1),
                ("entries_skipped", 21),
                ("lines_merged", 7),
            ],
            vec![(
                "info",
                "foreign_marker",
                "claude_code".into(),
                Some(22),
                Some(3),
                Some(0),
            )],
        ),
        (
            VIEWER,
            "claude-jsonl",
            vec![
                ("lines", 29),
                ("messages", 15),
                ("windows", 1),
                ("entries_skipped", 0),
                ("lines_merged", 14),
            ],
            vec![],
        ),
        (
            CRUSH,
            "vcr",
            vec![
                ("requests", 3),
                ("conversations", 2),
                ("responses", 3),
                ("interactions_skipped", 0),
            ],
            vec![],
        ),
    ];
    for (name, format, want_stats, want_findings) in expected {
        let r = check(name);
        assert_eq!(r.format, format, "{name}");
        let keys: Vec<&str> = want_stats.iter().map(|(k, _)| *k).collect();
        let want: Vec<(String, usize)> = want_stats
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        assert_eq!(stats(&r, &keys), want, "{name}");
        assert_eq!(pins(&r), want_findings, "{name}");
        assert_eq!(r.findings.violations, 0, "{name}");
        assert_eq!(r.findings.suppressed, 0, "{name}");
    }
}

#[test]
fn the_open_bash_call_at_the_end_of_turn_1_is_turn_open_not_a_violation() {
    let r = check(TURN_1);
    let f = &r.findings.kept[0];
    assert_eq!(f.check, "turn_open");
    assert_eq!(
        f.detail,
        "message 13: the log ends with unanswered tool call toolu_bdrk_01NNGBKLENmr7j3TfUKZW7rz (Bash): captured mid-turn, not corruption"
    );
    assert!(
        f.excerpt.starts_with(
            r#"{"type":"tool_use","id":"toolu_bdrk_01NNGBKLENmr7j3TfUKZW7rz","name":"Bash""#
        ),
        "{}",
        f.excerpt
    );
    // 7 uses, 6 results: the one open call is the only thing said.
    assert_eq!(r.findings.infos, 1);
    assert_eq!(cli(&[data(TURN_1).to_str().unwrap_or_default()]), 0);
}

#[test]
fn turn_1_is_a_prefix_of_turn_2_and_not_the_other_way_round() {
    let (a, b) = (data(TURN_1), data(TURN_2));
    let forward = check_prefix(&a, &b, None);
    assert!(forward.unreadable.is_empty());
    let r = &forward.files[0];
    assert_eq!(r.extends.as_deref(), a.to_str());
    assert_eq!(pins(r), vec![]);
    assert_eq!(
        stats(r, &["messages_matched", "messages_added"]),
        vec![
            ("messages_matched".into(), 14),
            ("messages_added".into(), 8)
        ]
    );
    assert_eq!(forward.exit_code(), 0);

    let backward = check_prefix(&b, &a, None);
    assert_eq!(
        pins(&backward.files[0]),
        vec![(
            "violation",
            "prefix",
            "shorter".into(),
            None,
            Some(14),
            None
        )]
    );
    assert_eq!(backward.exit_code(), 1);

    let (sa, sb) = (
        a.to_str().unwrap_or_default(),
        b.to_str().unwrap_or_default(),
    );
    assert_eq!(cli(&["--prefix", sa, sb]), 0);
    assert_eq!(cli(&["--prefix", sb, sa]), 1);
    // Two different sessions: the first message already differs.
    let other = check_prefix(&data(INTERRUPTED), &b, None);
    assert_eq!(
        pins(&other.files[0]),
        vec![(
            "violation",
            "prefix",
            "message_differs".into(),
            Some(3),
            Some(0),
            None
        )]
    );
}

#[test]
fn the_clean_sessions_give_no_false_alarm() {
    for name in [TURN_2, LONG, VIEWER, CRUSH] {
        let r = check(name);
        assert_eq!(r.findings.kept, vec![], "{name}");
        assert_eq!(cli(&[data(name).to_str().unwrap_or_default()]), 0, "{name}");
    }
    assert_eq!(
        cli(&[
            data(TURN_2).to_str().unwrap_or_default(),
            data(LONG).to_str().unwrap_or_default(),
            data(VIEWER).to_str().unwrap_or_default(),
            data(CRUSH).to_str().unwrap_or_default(),
        ]),
        0
    );
}

#[test]
fn claude_codes_interruption_form_is_found_and_reported_as_a_foreign_marker() {
    let r = check(INTERRUPTED);
    let f = &r.findings.kept[0];
    assert_eq!(f.severity.as_str(), "info");
    assert_eq!(
        (f.check, f.kind.as_str()),
        ("foreign_marker", "claude_code")
    );
    assert_eq!(f.excerpt, "[Request interrupted by user for tool use]");
    assert_eq!(
        f.detail,
        "message 3: Claude Code's own interruption marker form, not one of turnsim's seven (a foreign marker, not a violation)"
    );
    // The Write call before it is answered: the marker sits after a complete pair.
    assert_eq!(r.findings.violations, 0);
}

#[test]
fn the_viewers_split_api_messages_are_merged_as_the_provider_saw_them() {
    let file = std::fs::File::open(data(VIEWER)).expect("opens");
    let items: Vec<Item> = ClaudeJsonl::new(std::io::BufReader::new(file))
        .collect::<Result<_, _>>()
        .expect("loads");
    let messages: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            Item::Message(m) => Some(m),
            Item::Boundary { .. } => None,
            other => panic!("not in a linear log read in file order: {other:?}"),
        })
        .collect();
    assert_eq!(messages.len(), 15);
    // Lines 6-10: one assistant message (same message.id), five tool calls in order.
    let calls = messages[4];
    assert_eq!(calls.message.role, Role::Assistant);
    assert_eq!(calls.line, 6);
    assert_eq!(calls.block_lines, vec![6, 7, 8, 9, 10]);
    let ids: Vec<String> = calls
        .message
        .tool_calls()
        .into_iter()
        .map(|c| c.id[c.id.len() - 8..].to_string())
        .collect();
    assert_eq!(
        ids,
        vec!["7BW4KbPx", "EZLHM2zY", "pHHs81PK", "P6Md9hRW", "kc7SBXUi"]
    );
    // Lines 11-15: one user message answering all five, in the order written.
    let answers = messages[5];
    assert_eq!((answers.message.role, answers.line), (Role::User, 11));
    let answered: Vec<String> = answers
        .message
        .blocks()
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => {
                Some(tool_use_id[tool_use_id.len() - 8..].to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        answered,
        vec!["EZLHM2zY", "pHHs81PK", "7BW4KbPx", "P6Md9hRW", "kc7SBXUi"]
    );
    // Lines 3-4: text then a tool call, one message.
    assert_eq!(messages[2].block_lines, vec![3, 4]);
    // Roles alternate after the two opening user lines: every merge happened.
    for pair in messages[2..].windows(2) {
        assert_ne!(pair[0].message.role, pair[1].message.role);
    }
}
