//! Repair after a failed turn (docs/spec.md §3).
//!
//! Guarantee: repair only pops, only messages the failed turn itself appended
//! (index `>= turn_baseline`), and only while the last message could not end a
//! history the provider accepts. So the prompt that started the turn, everything
//! the user saw before it, and every completed step of the turn survive; what goes
//! is exactly the dangling tail (an empty reply, or tool calls nobody answered) that
//! would make the next request fail. Popping never rebuilds a kept message, so the
//! cached prefix stays byte-identical.

use crate::message::{Block, Content, Message, Role, SharedMessage};

/// Whether `message` may be the last message of a history: any user message; an
/// assistant message with non-empty string content; an assistant message with a
/// non-empty block array that holds no `tool_use` (a `tool_use` at the end would be
/// a call that nobody answers).
pub fn is_valid_trailing_message(message: &Message) -> bool {
    match message.role {
        Role::User => true,
        Role::Assistant => match &message.content {
            Content::Text(text) => !text.is_empty(),
            Content::Blocks(blocks) => {
                !blocks.is_empty() && !blocks.iter().any(|b| matches!(b, Block::ToolUse { .. }))
            }
        },
    }
}

/// Pops trailing messages appended by the failed turn (index `>= turn_baseline`)
/// while the last one is not a valid trailing message. A baseline past the end
/// removes nothing. Idempotent: after one call the tail is valid or at the
/// baseline, and a second call stops at the same place.
pub fn repair_history_after_failure(messages: &mut Vec<SharedMessage>, turn_baseline: usize) {
    while messages.len() > turn_baseline
        && messages
            .last()
            .is_some_and(|last| !is_valid_trailing_message(last))
    {
        messages.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::messages_to_json;
    use std::sync::Arc;

    fn shared(m: Message) -> SharedMessage {
        Arc::new(m)
    }

    fn tool_use(id: &str) -> Block {
        Block::ToolUse {
            id: id.to_string(),
            name: "bash".to_string(),
            input: serde_json::json!({"cmd": "ls"}),
        }
    }

    fn assistant_string(text: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: Content::Text(text.to_string()),
        }
    }

    /// One finished turn (messages 0..2), then the prompt of the failing turn at 2.
    fn before_failing_turn() -> Vec<SharedMessage> {
        vec![
            shared(Message::user_text("hi")),
            shared(Message::assistant_text("hello")),
            shared(Message::user_text("list the files")),
        ]
    }

    fn assert_same_prefix(before: &[SharedMessage], after: &[SharedMessage]) {
        for (a, b) in before.iter().zip(after) {
            assert!(Arc::ptr_eq(a, b));
        }
    }

    #[test]
    fn valid_trailing_messages_are_exactly_the_spec_list() {
        assert!(is_valid_trailing_message(&Message::user_text("")));
        assert!(is_valid_trailing_message(&Message::user_blocks(vec![])));
        assert!(is_valid_trailing_message(&Message::user_blocks(vec![
            Block::tool_result("t1", "ok", false)
        ])));
        assert!(is_valid_trailing_message(&assistant_string("partial")));
        assert!(is_valid_trailing_message(&assistant_string(" ")));
        assert!(is_valid_trailing_message(&Message::assistant_text(
            "partial"
        )));
        assert!(is_valid_trailing_message(&Message::assistant_blocks(vec![
            Block::Thinking {
                thinking: "hmm".into(),
                signature: "sig".into()
            }
        ])));

        assert!(!is_valid_trailing_message(&assistant_string("")));
        assert!(!is_valid_trailing_message(&Message::assistant_blocks(
            vec![]
        )));
        assert!(!is_valid_trailing_message(&Message::assistant_blocks(
            vec![tool_use("t1")]
        )));
        assert!(!is_valid_trailing_message(&Message::assistant_blocks(
            vec![Block::text("running it"), tool_use("t1")]
        )));
    }

    #[test]
    fn the_prompt_that_started_the_turn_is_never_removed() {
        let mut history = before_failing_turn();
        let before = history.clone();
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), 3);
        assert_same_prefix(&before, &history);

        history.push(shared(assistant_string("")));
        history.push(shared(Message::assistant_blocks(vec![tool_use("t1")])));
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), 3);
        assert_eq!(history[2].string_content(), Some("list the files"));
        assert_same_prefix(&before, &history);
    }

    #[test]
    fn partial_assistant_text_survives() {
        let mut history = before_failing_turn();
        history.push(shared(Message::assistant_text("Here are the fi")));
        let before = history.clone();
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), 4);
        assert_same_prefix(&before, &history);
    }

    #[test]
    fn completed_tool_rounds_survive_and_the_unanswered_call_goes() {
        let mut history = before_failing_turn();
        history.push(shared(Message::assistant_blocks(vec![tool_use("t1")])));
        history.push(shared(Message::user_blocks(vec![Block::tool_result(
            "t1", "a.txt", false,
        )])));
        history.push(shared(Message::assistant_blocks(vec![
            Block::text("one more"),
            tool_use("t2"),
        ])));
        let before = history.clone();
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), 5);
        assert_same_prefix(&before[..5], &history);
        assert_eq!(
            messages_to_json(&history[3..]),
            r#"[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"bash","input":{"cmd":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt"}]}]"#
        );
    }

    #[test]
    fn a_trailing_assistant_with_unanswered_tool_use_is_removed() {
        let mut history = before_failing_turn();
        history.push(shared(Message::assistant_blocks(vec![
            Block::text("let me look"),
            tool_use("t1"),
        ])));
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), 3);
    }

    #[test]
    fn empty_assistant_string_and_array_are_removed() {
        for empty in [assistant_string(""), Message::assistant_blocks(vec![])] {
            let mut history = before_failing_turn();
            history.push(shared(empty));
            repair_history_after_failure(&mut history, 2);
            assert_eq!(history.len(), 3);
        }
    }

    #[test]
    fn nothing_below_the_baseline_is_removed_even_if_invalid() {
        let mut history = before_failing_turn();
        history.push(shared(Message::assistant_blocks(vec![tool_use("t1")])));
        history.push(shared(assistant_string("")));
        let before = history.clone();
        repair_history_after_failure(&mut history, 4);
        assert_eq!(history.len(), 4);
        assert_same_prefix(&before, &history);

        let mut history = before.clone();
        repair_history_after_failure(&mut history, 5);
        assert_eq!(history.len(), 5);
        repair_history_after_failure(&mut history, 100);
        assert_eq!(history.len(), 5);
    }

    #[test]
    fn repair_stops_at_the_first_valid_trailing_message() {
        let mut history = before_failing_turn();
        history.push(shared(Message::assistant_text("partial")));
        history.push(shared(Message::assistant_blocks(vec![tool_use("t1")])));
        history.push(shared(assistant_string("")));
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), 4);
        assert_eq!(history[3].blocks(), &[Block::text("partial")]);
    }

    #[test]
    fn repair_is_idempotent() {
        let mut history = before_failing_turn();
        history.push(shared(Message::assistant_text("partial")));
        history.push(shared(Message::assistant_blocks(vec![tool_use("t1")])));
        repair_history_after_failure(&mut history, 2);
        let once = history.clone();
        repair_history_after_failure(&mut history, 2);
        assert_eq!(history.len(), once.len());
        assert_same_prefix(&once, &history);
    }

    #[test]
    fn an_empty_history_stays_empty() {
        let mut history = Vec::new();
        repair_history_after_failure(&mut history, 0);
        assert!(history.is_empty());
    }
}
