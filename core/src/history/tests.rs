//! Unit tests for history validation: each rule of docs/spec.md §2 broken once, and the
//! "first violation" order checked where two violations compete.

use super::*;
use crate::interrupt::InterruptReason;
use crate::message::{Content, ToolResultContent};
use crate::note::tool_in_flight_note_text;
use std::sync::Arc;

fn shared(m: Message) -> SharedMessage {
    Arc::new(m)
}

fn user(text: &str) -> SharedMessage {
    shared(Message::user_text(text))
}

fn assistant(text: &str) -> SharedMessage {
    shared(Message::assistant_text(text))
}

fn tool_use(id: &str) -> Block {
    Block::ToolUse {
        id: id.to_string(),
        name: "bash".to_string(),
        input: serde_json::json!({}),
    }
}

fn calls(ids: &[&str]) -> SharedMessage {
    shared(Message::assistant_blocks(
        ids.iter().map(|id| tool_use(id)).collect(),
    ))
}

fn result(id: &str) -> Block {
    Block::tool_result(id, "ok", false)
}

fn results(ids: &[&str]) -> SharedMessage {
    shared(Message::user_blocks(
        ids.iter().map(|id| result(id)).collect(),
    ))
}

fn err(history: &[SharedMessage]) -> HistoryError {
    match validate_history(history) {
        Err(e) => e,
        Ok(()) => panic!("expected an error for {history:?}"),
    }
}

#[test]
fn the_empty_history_is_valid() {
    assert_eq!(validate_history(&[]), Ok(()));
    assert_eq!(validate_history_allowing_pending_tools(&[]), Ok(()));
}

#[test]
fn a_rich_valid_history_validates() {
    let user_marker = InterruptReason::User.marker();
    let note = tool_in_flight_note_text("Canceled by user", &["bash".to_string()]);
    let history = vec![
        user("list the files and their sizes"),
        shared(Message::assistant_blocks(vec![
            Block::Thinking {
                thinking: "two calls".into(),
                signature: "sig".into(),
            },
            Block::RedactedThinking { data: "xyz".into() },
            Block::text("Checking."),
            tool_use("t1"),
            tool_use("t2"),
            tool_use("t3"),
        ])),
        // Parallel batch answered out of order, one as an error, then other blocks.
        shared(Message::user_blocks(vec![
            Block::tool_result("t3", "boom", true),
            result("t1"),
            Block::ToolResult {
                tool_use_id: "t2".into(),
                content: ToolResultContent::Blocks(vec![Block::text("4 KB")]),
                is_error: Some(false),
            },
            Block::text("also, be brief"),
        ])),
        shared(Message {
            role: Role::Assistant,
            content: Content::Text("a.txt is 4 KB.".into()),
        }),
        user("now delete them"),
        calls(&["t4"]),
        shared(Message::user_blocks(vec![Block::tool_result(
            "t4",
            "Canceled by user",
            true,
        )])),
        user(&note),
        user(user_marker),
        user("never mind"),
        assistant("OK."),
    ];
    assert_eq!(validate_history(&history), Ok(()));
    assert_eq!(validate_history_allowing_pending_tools(&history), Ok(()));
}

#[test]
fn unknown_blocks_and_consecutive_user_messages_are_accepted() {
    let mut image = serde_json::Map::new();
    image.insert("type".into(), serde_json::json!("image"));
    let history = vec![
        user("a"),
        user("b"),
        calls(&["t1"]),
        shared(Message::user_blocks(vec![
            result("t1"),
            Block::Unknown(image),
        ])),
        assistant("done"),
    ];
    assert_eq!(validate_history(&history), Ok(()));
}

#[test]
fn missing_tool_result_names_the_asking_message_and_the_id() {
    let e = err(&[user("go"), calls(&["t1", "t2"]), results(&["t1"])]);
    assert_eq!(
        e,
        HistoryError::MissingToolResult {
            message: 1,
            tool_use_id: "t2".into()
        }
    );
    assert_eq!(e.kind(), "missing_tool_result");
    assert_eq!(e.message_index(), 1);
    assert_eq!(e.block_index(), None);
    assert_eq!(e.tool_use_id(), Some("t2"));
    assert_eq!(
        e.to_string(),
        "message 1: tool call t2 has no tool_result in message 2"
    );
}

#[test]
fn a_user_string_message_after_tool_calls_misses_every_result() {
    let e = err(&[user("go"), calls(&["t1"]), user("stop")]);
    assert_eq!(
        e,
        HistoryError::MissingToolResult {
            message: 1,
            tool_use_id: "t1".into()
        }
    );
}

#[test]
fn a_result_two_messages_late_is_missing_where_it_was_due() {
    let e = err(&[user("go"), calls(&["t1"]), user("wait"), results(&["t1"])]);
    assert_eq!(
        e,
        HistoryError::MissingToolResult {
            message: 1,
            tool_use_id: "t1".into()
        }
    );
}

#[test]
fn tool_calls_followed_by_an_assistant_message_have_no_answering_message() {
    let e = err(&[user("go"), calls(&["t1", "t2"]), assistant("hm")]);
    assert_eq!(
        e,
        HistoryError::NoAnsweringMessage {
            message: 1,
            tool_use_id: "t1".into()
        }
    );
    assert_eq!(e.kind(), "no_answering_message");
    assert_eq!(e.message_index(), 1);
    assert_eq!(
        e.to_string(),
        "message 1: tool call t1 is followed by assistant message 2 instead of a user message answering it"
    );
    // Allowing a pending batch at the end does not allow one in the middle.
    assert_eq!(
        validate_history_allowing_pending_tools(&[user("go"), calls(&["t1"]), assistant("hm")]),
        Err(HistoryError::NoAnsweringMessage {
            message: 1,
            tool_use_id: "t1".into()
        })
    );
}

#[test]
fn unanswered_calls_at_the_end_are_rejected_unless_a_batch_is_pending() {
    let history = vec![user("go"), calls(&["t1", "t2"])];
    let e = err(&history);
    assert_eq!(
        e,
        HistoryError::UnansweredAtEnd {
            message: 1,
            tool_use_ids: vec!["t1".into(), "t2".into()]
        }
    );
    assert_eq!(e.kind(), "unanswered_at_end");
    assert_eq!(e.message_index(), 1);
    assert_eq!(e.tool_use_id(), Some("t1"));
    assert_eq!(
        e.to_string(),
        "message 1: history ends with unanswered tool calls t1, t2"
    );
    assert_eq!(
        err(&[user("go"), calls(&["t1"])]).to_string(),
        "message 1: history ends with unanswered tool call t1"
    );
    assert_eq!(validate_history_allowing_pending_tools(&history), Ok(()));
}

#[test]
fn allowing_pending_tools_still_checks_everything_else() {
    let history = vec![
        shared(Message::assistant_blocks(vec![])),
        user("go"),
        calls(&["t1"]),
    ];
    assert_eq!(
        validate_history_allowing_pending_tools(&history),
        Err(HistoryError::EmptyAssistantContent { message: 0 })
    );
    let history = vec![user("go"), calls(&["t1"]), results(&["t1"]), calls(&["t1"])];
    assert_eq!(
        validate_history_allowing_pending_tools(&history),
        Err(HistoryError::DuplicateToolUseId {
            message: 3,
            block: 0,
            tool_use_id: "t1".into(),
            first_message: 1
        })
    );
}

#[test]
fn a_second_result_for_the_same_call_is_a_duplicate() {
    let e = err(&[user("go"), calls(&["t1"]), results(&["t1", "t1"])]);
    assert_eq!(
        e,
        HistoryError::DuplicateToolResult {
            message: 2,
            block: 1,
            tool_use_id: "t1".into()
        }
    );
    assert_eq!(e.kind(), "duplicate_tool_result");
    assert_eq!(e.block_index(), Some(1));
    assert_eq!(
        e.to_string(),
        "message 2, block 1: tool_result for t1 answers it a second time"
    );
}

#[test]
fn a_result_for_an_id_that_was_not_asked_is_unexpected() {
    let e = err(&[user("go"), calls(&["t1"]), results(&["t1", "toolu_x"])]);
    assert_eq!(
        e,
        HistoryError::UnexpectedToolResult {
            message: 2,
            block: 1,
            tool_use_id: "toolu_x".into()
        }
    );
    assert_eq!(e.kind(), "unexpected_tool_result");
    assert_eq!(
        e.to_string(),
        "message 2, block 1: tool_result for toolu_x answers no tool call of message 1"
    );
}

#[test]
fn a_result_for_a_call_of_an_earlier_round_is_unexpected() {
    let e = err(&[
        user("go"),
        calls(&["t1"]),
        results(&["t1"]),
        calls(&["t2"]),
        results(&["t2", "t1"]),
    ]);
    assert_eq!(
        e,
        HistoryError::UnexpectedToolResult {
            message: 4,
            block: 1,
            tool_use_id: "t1".into()
        }
    );
}

#[test]
fn a_result_anywhere_else_is_unexpected() {
    let e = err(&[results(&["t1"])]);
    assert_eq!(
        e,
        HistoryError::UnexpectedToolResult {
            message: 0,
            block: 0,
            tool_use_id: "t1".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "message 0, block 0: tool_result for t1 answers no tool call (no message precedes it)"
    );

    let e = err(&[
        user("go"),
        assistant("hi"),
        shared(Message::user_blocks(vec![Block::text("x"), result("t9")])),
    ]);
    assert_eq!(
        e,
        HistoryError::UnexpectedToolResult {
            message: 2,
            block: 1,
            tool_use_id: "t9".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "message 2, block 1: tool_result for t9 answers no tool call of message 1"
    );

    let e = err(&[
        user("go"),
        calls(&["t1"]),
        results(&["t1"]),
        shared(Message::assistant_blocks(vec![
            Block::text("x"),
            result("t1"),
        ])),
    ]);
    assert_eq!(
        e,
        HistoryError::UnexpectedToolResult {
            message: 3,
            block: 1,
            tool_use_id: "t1".into()
        }
    );
}

#[test]
fn results_must_come_before_any_other_block() {
    let e = err(&[
        user("go"),
        calls(&["t1", "t2"]),
        shared(Message::user_blocks(vec![
            result("t1"),
            Block::text("and"),
            result("t2"),
        ])),
    ]);
    assert_eq!(
        e,
        HistoryError::ToolResultAfterOtherBlock {
            message: 2,
            block: 2,
            tool_use_id: "t2".into()
        }
    );
    assert_eq!(e.kind(), "tool_result_after_other_block");
    assert_eq!(
        e.to_string(),
        "message 2, block 2: tool_result for t2 comes after a block that is not a tool_result"
    );
}

#[test]
fn empty_assistant_content_is_rejected_for_string_and_array() {
    for empty in [
        Message {
            role: Role::Assistant,
            content: Content::Text(String::new()),
        },
        Message::assistant_blocks(vec![]),
    ] {
        let e = err(&[user("go"), shared(empty)]);
        assert_eq!(e, HistoryError::EmptyAssistantContent { message: 1 });
        assert_eq!(e.kind(), "empty_assistant_content");
        assert_eq!(e.tool_use_id(), None);
        assert_eq!(
            e.to_string(),
            "message 1: assistant message has empty content"
        );
    }
}

#[test]
fn tool_use_ids_are_unique_across_the_history() {
    let e = err(&[
        user("go"),
        calls(&["t1"]),
        results(&["t1"]),
        shared(Message::assistant_blocks(vec![
            Block::text("again"),
            tool_use("t1"),
        ])),
        results(&["t1"]),
    ]);
    assert_eq!(
        e,
        HistoryError::DuplicateToolUseId {
            message: 3,
            block: 1,
            tool_use_id: "t1".into(),
            first_message: 1
        }
    );
    assert_eq!(e.kind(), "duplicate_tool_use_id");
    assert_eq!(
        e.to_string(),
        "message 3, block 1: tool_use id t1 is already used by message 1"
    );

    let e = err(&[user("go"), calls(&["t1", "t1"]), results(&["t1"])]);
    assert_eq!(
        e,
        HistoryError::DuplicateToolUseId {
            message: 1,
            block: 1,
            tool_use_id: "t1".into(),
            first_message: 1
        }
    );
    assert_eq!(
        e.to_string(),
        "message 1, block 1: tool_use id t1 is already used earlier in this message"
    );
}

#[test]
fn a_tool_use_in_a_user_message_is_rejected() {
    let e = err(&[shared(Message::user_blocks(vec![
        Block::text("run"),
        tool_use("t1"),
    ]))]);
    assert_eq!(
        e,
        HistoryError::ToolUseInUserMessage {
            message: 0,
            block: 1,
            tool_use_id: "t1".into()
        }
    );
    assert_eq!(e.kind(), "tool_use_in_user_message");
    assert_eq!(
        e.to_string(),
        "message 0, block 1: tool_use t1 in a user message"
    );
}

#[test]
fn the_first_violation_in_message_order_is_reported() {
    let e = err(&[
        user("go"),
        shared(Message::assistant_blocks(vec![])),
        results(&["t9"]),
        calls(&["t1"]),
    ]);
    assert_eq!(e, HistoryError::EmptyAssistantContent { message: 1 });

    // Within a message, the lowest block wins.
    let e = err(&[
        user("go"),
        calls(&["t1", "t2"]),
        shared(Message::user_blocks(vec![
            result("t1"),
            result("t1"),
            result("t2"),
            result("t7"),
        ])),
    ]);
    assert_eq!(e.kind(), "duplicate_tool_result");
    assert_eq!(e.block_index(), Some(1));
}

#[test]
fn a_missing_answer_is_reported_before_errors_inside_the_answering_message() {
    let e = err(&[
        user("go"),
        calls(&["t1", "t2"]),
        shared(Message::user_blocks(vec![result("t9"), result("t1")])),
    ]);
    assert_eq!(
        e,
        HistoryError::MissingToolResult {
            message: 1,
            tool_use_id: "t2".into()
        }
    );
}

#[test]
fn an_unasked_id_is_reported_before_its_position() {
    let e = err(&[
        user("go"),
        calls(&["t1"]),
        shared(Message::user_blocks(vec![
            result("t1"),
            Block::text("x"),
            result("t9"),
        ])),
    ]);
    assert_eq!(e.kind(), "unexpected_tool_result");
    assert_eq!(e.block_index(), Some(2));
}

#[test]
fn kinds_are_distinct_snake_case_names() {
    let all = [
        HistoryError::MissingToolResult {
            message: 0,
            tool_use_id: String::new(),
        },
        HistoryError::NoAnsweringMessage {
            message: 0,
            tool_use_id: String::new(),
        },
        HistoryError::UnansweredAtEnd {
            message: 0,
            tool_use_ids: vec![],
        },
        HistoryError::DuplicateToolResult {
            message: 0,
            block: 0,
            tool_use_id: String::new(),
        },
        HistoryError::UnexpectedToolResult {
            message: 0,
            block: 0,
            tool_use_id: String::new(),
        },
        HistoryError::ToolResultAfterOtherBlock {
            message: 0,
            block: 0,
            tool_use_id: String::new(),
        },
        HistoryError::EmptyAssistantContent { message: 0 },
        HistoryError::DuplicateToolUseId {
            message: 0,
            block: 0,
            tool_use_id: String::new(),
            first_message: 0,
        },
        HistoryError::ToolUseInUserMessage {
            message: 0,
            block: 0,
            tool_use_id: String::new(),
        },
    ];
    let kinds: Vec<&str> = all.iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds,
        vec![
            "missing_tool_result",
            "no_answering_message",
            "unanswered_at_end",
            "duplicate_tool_result",
            "unexpected_tool_result",
            "tool_result_after_other_block",
            "empty_assistant_content",
            "duplicate_tool_use_id",
            "tool_use_in_user_message",
        ]
    );
    // Display of extreme indices never overflows.
    let e = HistoryError::MissingToolResult {
        message: usize::MAX,
        tool_use_id: "t".into(),
    };
    assert!(
        e.to_string()
            .starts_with(&format!("message {}", usize::MAX))
    );
}
