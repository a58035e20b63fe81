//! The pure rewrites of [`super::coverage`]'s bugs: what each does to a message list
//! or a request the reference engine built.
//!
//! Guarantee: each is a function of its arguments alone, so a bug rewrites every
//! later request (and, where it rewrites the history, the history) the same way,
//! and what the run finds is the mechanism, not an artefact of planting it. The one
//! rewrite that adds messages moves the cache breakpoints with them, so they still
//! name the messages the engine put them on.

use std::sync::Arc;
use turnsim_core::request::{TURN_CONTEXT_OPEN, directive_words};
use turnsim_core::{
    Block, Content, Message, Request, Role, SharedMessage, ToolResultContent, is_marker_message,
};

/// What `clears_old_tool_results` leaves of a tool result of an earlier turn.
pub(super) const CLEARED: &str = "[earlier tool output cleared to save context]";

/// How many bytes of a tool's output `truncates_tool_output` keeps. Real runtimes
/// keep tens of thousands; a budget this small is reached by the world's long
/// outputs, so a seed shows the cut.
pub(super) const OUTPUT_BUDGET: usize = 1024;

/// The note `truncates_tool_output` puts where it cut.
const CUT_NOTE: &str = "\n[output truncated]";

/// `clears_old_tool_results`: every tool result before the latest prompt has its
/// content replaced by [`CLEARED`], in the history and in every request.
pub(super) fn cleared_old_results(messages: &[SharedMessage]) -> Vec<SharedMessage> {
    let last_prompt = messages
        .iter()
        .rposition(|m| directive_words(m).is_some())
        .unwrap_or(0);
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let old = |b: &Block| {
                matches!(b, Block::ToolResult { content, .. }
                    if !matches!(content, ToolResultContent::Text(t) if t == CLEARED))
            };
            if i >= last_prompt || m.role != Role::User || !m.blocks().iter().any(old) {
                return Arc::clone(m);
            }
            let blocks = m
                .blocks()
                .iter()
                .map(|b| match b {
                    Block::ToolResult {
                        tool_use_id,
                        is_error,
                        ..
                    } => Block::ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        content: ToolResultContent::Text(CLEARED.into()),
                        is_error: *is_error,
                    },
                    other => other.clone(),
                })
                .collect();
            Arc::new(Message::user_blocks(blocks))
        })
        .collect()
}

/// `truncates_tool_output`: the output cut to [`OUTPUT_BUDGET`] bytes (at a character
/// boundary), with a note saying so.
pub(super) fn truncated(output: &str) -> String {
    if output.len() <= OUTPUT_BUDGET {
        return output.to_owned();
    }
    let mut end = OUTPUT_BUDGET;
    while !output.is_char_boundary(end) {
        end -= 1;
    }
    [&output[..end], CUT_NOTE].concat()
}

/// `keeps_empty_cut_reply`: before each marker at an index of `markers` that follows
/// a user message (nothing of the cut reply was kept), the assistant message of the
/// cut reply goes out with no blocks.
pub(super) fn empty_replies(request: &mut Request, markers: &[usize]) {
    let mut at: Vec<usize> = markers
        .iter()
        .copied()
        .filter(|&i| {
            i >= 1
                && request
                    .messages
                    .get(i)
                    .is_some_and(|m| is_marker_message(m))
                && request.messages[i - 1].role == Role::User
        })
        .collect();
    at.sort_unstable();
    at.dedup();
    for &i in at.iter().rev() {
        request.messages.insert(
            i,
            Arc::new(Message {
                role: Role::Assistant,
                content: Content::Blocks(Vec::new()),
            }),
        );
    }
    for p in &mut request.cache.breakpoints {
        if let Some(k) = p.after_message {
            p.after_message = Some(k + at.iter().filter(|&&i| i <= k).count());
        }
    }
}

/// `sends_output_text_blocks`: the assistant's text blocks go out as the
/// `output_text` items the runtime stores them as.
pub(super) fn output_text(messages: &mut [SharedMessage]) {
    for m in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        if !m.blocks().iter().any(|b| matches!(b, Block::Text { .. })) {
            continue;
        }
        let blocks = m
            .blocks()
            .iter()
            .map(|b| match b {
                Block::Text { text } => {
                    let mut item = serde_json::Map::new();
                    item.insert("type".into(), "output_text".into());
                    item.insert("text".into(), text.as_str().into());
                    Block::Unknown(item)
                }
                other => other.clone(),
            })
            .collect();
        *m = Arc::new(Message {
            role: Role::Assistant,
            content: Content::Blocks(blocks),
        });
    }
}

/// `calls_beside_results_on_resume`: each user message of results gets, before each
/// result, the call it answers (copied from the assistant message before it, which
/// keeps it too).
pub(super) fn calls_beside_results(messages: &mut [SharedMessage]) {
    for i in 1..messages.len() {
        let (before, rest) = messages.split_at_mut(i);
        let m = &mut rest[0];
        let calls = before[i - 1].blocks();
        if m.role != Role::User
            || !m
                .blocks()
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
        {
            continue;
        }
        let mut out = Vec::with_capacity(m.blocks().len() * 2);
        for b in m.blocks() {
            if let Block::ToolResult { tool_use_id, .. } = b
                && let Some(call) = calls
                    .iter()
                    .find(|c| matches!(c, Block::ToolUse { id, .. } if id == tool_use_id))
            {
                out.push(call.clone());
            }
            out.push(b.clone());
        }
        *m = Arc::new(Message::user_blocks(out));
    }
}

/// `turn_context_quotes_reply`: the turn context of each prompt ends with the last
/// text of the assistant message before it, so the model "knows where it left off".
pub(super) fn quote_last_reply(messages: &mut [SharedMessage]) {
    for d in 1..messages.len() {
        if directive_words(&messages[d]).is_none() {
            continue;
        }
        let said = messages[..d]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .and_then(|m| {
                m.blocks().iter().rev().find_map(|b| match b {
                    Block::Text { text } if !text.is_empty() => Some(text.clone()),
                    _ => None,
                })
            });
        let Some(said) = said else {
            continue;
        };
        let mut blocks = messages[d].blocks().to_vec();
        if let Some(Block::Text { text }) = blocks.first_mut()
            && text.starts_with(TURN_CONTEXT_OPEN)
        {
            text.push_str("\nYou last said: ");
            text.push_str(&said);
        }
        messages[d] = Arc::new(Message::user_blocks(blocks));
    }
}

/// `thinking_stored_as_line`: each thinking block goes back as the line the runtime
/// displayed, its text ending in a newline, with the signature it streamed with.
pub(super) fn thinking_as_line(messages: &mut [SharedMessage]) {
    for m in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        if !m
            .blocks()
            .iter()
            .any(|b| matches!(b, Block::Thinking { .. }))
        {
            continue;
        }
        let blocks = m
            .blocks()
            .iter()
            .map(|b| match b {
                Block::Thinking {
                    thinking,
                    signature,
                } => Block::Thinking {
                    thinking: [thinking.as_str(), "\n"].concat(),
                    signature: signature.clone(),
                },
                other => other.clone(),
            })
            .collect();
        *m = Arc::new(Message {
            role: Role::Assistant,
            content: Content::Blocks(blocks),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use turnsim_core::{CacheBreakpoint, CacheHints};

    fn call(id: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "read".into(),
            input: json!({"path": "a"}),
        }
    }

    fn result(id: &str, text: &str) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: ToolResultContent::Text(text.into()),
            is_error: None,
        }
    }

    fn text(t: &str) -> Block {
        Block::Text { text: t.into() }
    }

    fn prompt(words: &str) -> SharedMessage {
        Arc::new(Message::user_blocks(vec![
            text(&format!("{TURN_CONTEXT_OPEN}now</turn_context>")),
            text(words),
        ]))
    }

    fn assistant(blocks: Vec<Block>) -> SharedMessage {
        Arc::new(Message::assistant_blocks(blocks))
    }

    fn user(blocks: Vec<Block>) -> SharedMessage {
        Arc::new(Message::user_blocks(blocks))
    }

    fn result_text(m: &Message) -> Vec<String> {
        m.blocks()
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { content, .. } => Some(content.text()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn only_results_before_the_latest_prompt_are_cleared() {
        let h = vec![
            prompt("one"),
            assistant(vec![call("a")]),
            user(vec![result("a", "first")]),
            assistant(vec![text("done")]),
            prompt("two"),
            assistant(vec![call("b")]),
            user(vec![result("b", "second")]),
        ];
        let out = cleared_old_results(&h);
        assert_eq!(result_text(&out[2]), [CLEARED]);
        assert_eq!(result_text(&out[6]), ["second"]);
        assert!(Arc::ptr_eq(&out[6], &h[6]));
        assert_eq!(cleared_old_results(&out), out);
    }

    #[test]
    fn an_output_over_the_budget_is_cut_at_a_character_boundary() {
        let long = "é".repeat(OUTPUT_BUDGET);
        let cut = truncated(&long);
        assert_eq!(
            cut,
            ["é".repeat(OUTPUT_BUDGET / 2).as_str(), CUT_NOTE].concat()
        );
        assert_eq!(truncated("short"), "short");
    }

    #[test]
    fn an_empty_assistant_message_goes_before_a_marker_that_follows_a_user_message() {
        let marker = Arc::new(Message::user_text("[Request interrupted by user]"));
        let mut r = Request {
            system: String::new(),
            tools: Arc::from(Vec::new()),
            thinking: None,
            messages: vec![prompt("one"), marker.clone(), prompt("two")],
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: vec![
                    CacheBreakpoint {
                        after_message: None,
                    },
                    CacheBreakpoint {
                        after_message: Some(0),
                    },
                    CacheBreakpoint {
                        after_message: Some(2),
                    },
                ],
            },
        };
        empty_replies(&mut r, &[1, 2]);
        let shape: Vec<(Role, usize)> = r
            .messages
            .iter()
            .map(|m| (m.role, m.blocks().len()))
            .collect();
        assert_eq!(
            shape,
            [
                (Role::User, 2),
                (Role::Assistant, 0),
                (Role::User, 0),
                (Role::User, 2)
            ]
        );
        let after: Vec<Option<usize>> = r
            .cache
            .breakpoints
            .iter()
            .map(|p| p.after_message)
            .collect();
        assert_eq!(after, [None, Some(0), Some(3)]);
    }

    #[test]
    fn assistant_text_goes_out_as_output_text_and_user_text_stays() {
        let mut m = vec![prompt("hi"), assistant(vec![text("hello"), call("a")])];
        output_text(&mut m);
        assert_eq!(m[0], prompt("hi"));
        let kinds: Vec<&str> = m[1].blocks().iter().map(Block::kind).collect();
        assert_eq!(kinds, ["output_text", "tool_use"]);
    }

    #[test]
    fn each_result_is_preceded_by_its_call_and_the_assistant_keeps_it() {
        let mut m = vec![
            prompt("hi"),
            assistant(vec![call("a"), call("b")]),
            user(vec![result("a", "x"), result("b", "y")]),
        ];
        calls_beside_results(&mut m);
        let kinds: Vec<&str> = m[2].blocks().iter().map(Block::kind).collect();
        assert_eq!(
            kinds,
            ["tool_use", "tool_result", "tool_use", "tool_result"]
        );
        assert_eq!(m[1].blocks().len(), 2);
    }

    #[test]
    fn the_turn_context_quotes_the_reply_before_the_prompt() {
        let mut m = vec![
            prompt("one"),
            assistant(vec![text("I did it")]),
            prompt("two"),
        ];
        quote_last_reply(&mut m);
        assert_eq!(m[0], prompt("one"));
        let Block::Text { text } = &m[2].blocks()[0] else {
            panic!("a text block");
        };
        assert!(text.ends_with("\nYou last said: I did it"), "{text}");
        assert_eq!(directive_words(&m[2]), Some("two"));
    }

    #[test]
    fn thinking_goes_back_with_a_newline_and_its_signature() {
        let thought = Block::Thinking {
            thinking: "plan".into(),
            signature: "sig".into(),
        };
        let mut m = vec![prompt("hi"), assistant(vec![thought, call("a")])];
        thinking_as_line(&mut m);
        let Block::Thinking {
            thinking,
            signature,
        } = &m[1].blocks()[0]
        else {
            panic!("a thinking block");
        };
        assert_eq!((thinking.as_str(), signature.as_str()), ("plan\n", "sig"));
    }
}
