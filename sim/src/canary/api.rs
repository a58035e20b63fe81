//! The planted bugs that break one rule of the Messages API's contract each: the
//! rules of the judge's table (`judge/rules/table.rs`) that no other canary breaks.
//! Each mechanism is one a public runtime shipped (the variant's doc comment in
//! [`Bug`] names where it was seen); the API rejects the request it produces, so the
//! judge's validator behind `pairing` (or the `cache_breakpoints` checker, for the
//! rule the simulator's body-less requests are held to there) must find it.
//!
//! Guarantee: a bug rewrites only what its mechanism names in a request the reference
//! engine built, and rewrites every later request the same way, so what the run
//! finds is the broken rule and not an artefact of planting it. The one bug that
//! removes messages shifts the cache breakpoints with them, so they still name the
//! messages the engine put them on.

use super::Bug;
use std::sync::Arc;
use turnsim_core::{Block, CacheBreakpoint, Content, Message, Request, Role};

/// How many messages `trims_to_assistant_first` keeps at most. Real runtimes count
/// tokens; a budget this small is exceeded by the first tool loop, so a seed shows the
/// cut within a dozen steps.
pub(super) const WINDOW: usize = 2;

/// The text `pads_empty_text` writes where the model streamed no words.
const PAD: &str = " ";

/// The reminder `text_before_results` puts at the head of a message of results.
pub(super) const REMINDER: &str = "Tool results follow.";

/// Rewrites a request the reference engine built, per the bug. `resumed` says the
/// engine was restored from its log.
pub(super) fn rewrite(bug: Bug, resumed: bool, request: &mut Request) {
    match bug {
        Bug::TrimsToAssistantFirst => trim_to_assistant(request),
        Bug::CachesEveryMessage => {
            request.cache.breakpoints = std::iter::once(None)
                .chain((0..request.messages.len()).map(Some))
                .map(|after_message| CacheBreakpoint { after_message })
                .collect();
        }
        _ => {
            for m in request.messages.iter_mut() {
                let blocks = match (bug, m.role) {
                    (Bug::ToolInputAsString, Role::Assistant) => input_as_string(m.blocks()),
                    (Bug::PadsEmptyText, Role::Assistant) if resumed => padded_text(m.blocks()),
                    (Bug::DoublesResultsOnResume, Role::User) if resumed => {
                        doubled_results(m.blocks())
                    }
                    (Bug::TextBeforeResults, Role::User) => reminder_first(m.blocks()),
                    _ => None,
                };
                if let Some(blocks) = blocks {
                    *m = Arc::new(Message {
                        role: m.role,
                        content: Content::Blocks(blocks),
                    });
                }
            }
        }
    }
}

/// `tool_input_as_string`: each call's input goes back as the JSON text it was
/// streamed as, a string where the API wants an object.
fn input_as_string(blocks: &[Block]) -> Option<Vec<Block>> {
    blocks
        .iter()
        .any(|b| matches!(b, Block::ToolUse { .. }))
        .then(|| {
            blocks
                .iter()
                .map(|b| match b {
                    Block::ToolUse { id, name, input } => Block::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input: serde_json::Value::String(input.to_string()),
                    },
                    other => other.clone(),
                })
                .collect()
        })
}

/// `pads_empty_text`: the transcript stored an empty text block before each call
/// (as `replays_empty_text_on_resume`'s does), and the resumed session, to get past
/// the API's refusal of empty text, sends each one as a single space.
fn padded_text(blocks: &[Block]) -> Option<Vec<Block>> {
    if !blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        return None;
    }
    let mut out = Vec::with_capacity(blocks.len() * 2);
    for b in blocks {
        if matches!(b, Block::ToolUse { .. }) {
            out.push(Block::Text { text: PAD.into() });
        }
        out.push(b.clone());
    }
    Some(out)
}

/// `doubles_results_on_resume`: a resumed session sends each tool result twice in
/// its message, once as stored and once as read back from the log.
fn doubled_results(blocks: &[Block]) -> Option<Vec<Block>> {
    let results: Vec<Block> = blocks
        .iter()
        .filter(|b| matches!(b, Block::ToolResult { .. }))
        .cloned()
        .collect();
    if results.is_empty() {
        return None;
    }
    let mut out = results.clone();
    out.extend(blocks.iter().cloned());
    Some(out)
}

/// `text_before_results`: a message of tool results opens with the runtime's
/// reminder, so the results are not the message's first blocks.
fn reminder_first(blocks: &[Block]) -> Option<Vec<Block>> {
    if !matches!(blocks.first(), Some(Block::ToolResult { .. })) {
        return None;
    }
    let mut out = Vec::with_capacity(blocks.len() + 1);
    out.push(Block::Text {
        text: REMINDER.into(),
    });
    out.extend(blocks.iter().cloned());
    Some(out)
}

/// `trims_to_assistant_first`: a request longer than [`WINDOW`] messages keeps its
/// last ones only, cut where an assistant message starts (so no call is parted from
/// its results); the API wants a user message first.
fn trim_to_assistant(request: &mut Request) {
    let len = request.messages.len();
    if len <= WINDOW {
        return;
    }
    let Some(start) = (len - WINDOW..len).find(|&i| request.messages[i].role == Role::Assistant)
    else {
        return;
    };
    request.messages.drain(..start);
    let mut points: Vec<CacheBreakpoint> = Vec::new();
    for p in &request.cache.breakpoints {
        let shifted = match p.after_message {
            None => Some(CacheBreakpoint {
                after_message: None,
            }),
            Some(i) if i >= start => Some(CacheBreakpoint {
                after_message: Some(i - start),
            }),
            Some(_) => None,
        };
        if let Some(s) = shifted.filter(|s| !points.contains(s)) {
            points.push(s);
        }
    }
    request.cache.breakpoints = points;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use turnsim_core::{CacheHints, ToolResultContent};

    fn call(id: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "read".into(),
            input: json!({"path": "a"}),
        }
    }

    fn result(id: &str) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: ToolResultContent::Text("ok".into()),
            is_error: None,
        }
    }

    fn shape(blocks: &[Block]) -> Vec<String> {
        blocks
            .iter()
            .map(|b| match b {
                Block::ToolUse { id, input, .. } => format!("use:{id}:{input}"),
                Block::ToolResult { tool_use_id, .. } => format!("result:{tool_use_id}"),
                Block::Text { text } => format!("text:{text}"),
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn a_call_input_goes_back_as_its_json_text() {
        let out = input_as_string(&[call("a")]).expect("a call");
        assert_eq!(shape(&out), [r#"use:a:"{\"path\":\"a\"}""#]);
        assert_eq!(input_as_string(&[Block::Text { text: "hi".into() }]), None);
    }

    #[test]
    fn a_resumed_transcript_pads_a_space_before_each_call() {
        let out = padded_text(&[call("a"), call("b")]).expect("calls");
        assert_eq!(
            shape(&out),
            [
                "text: ",
                r#"use:a:{"path":"a"}"#,
                "text: ",
                r#"use:b:{"path":"a"}"#
            ]
        );
    }

    #[test]
    fn each_result_is_sent_twice_and_a_message_without_results_is_kept() {
        let out = doubled_results(&[result("a"), result("b")]).expect("results");
        assert_eq!(
            shape(&out),
            ["result:a", "result:b", "result:a", "result:b"]
        );
        assert_eq!(doubled_results(&[Block::Text { text: "hi".into() }]), None);
    }

    #[test]
    fn the_reminder_goes_before_the_results_only_where_results_open_the_message() {
        let out = reminder_first(&[result("a")]).expect("results first");
        assert_eq!(shape(&out), [format!("text:{REMINDER}"), "result:a".into()]);
        assert_eq!(reminder_first(&[Block::Text { text: "hi".into() }]), None);
    }

    fn request(roles: &[Role], breakpoints: &[Option<usize>]) -> Request {
        Request {
            system: String::new(),
            tools: Arc::from(Vec::new()),
            thinking: None,
            messages: roles
                .iter()
                .map(|&role| {
                    Arc::new(Message {
                        role,
                        content: Content::Blocks(vec![Block::Text { text: "x".into() }]),
                    })
                })
                .collect(),
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: breakpoints
                    .iter()
                    .map(|&after_message| CacheBreakpoint { after_message })
                    .collect(),
            },
        }
    }

    #[test]
    fn a_long_request_is_cut_at_an_assistant_message_and_its_breakpoints_follow() {
        use Role::{Assistant as A, User as U};
        let mut r = request(&[U, A, U, A, U], &[None, Some(2), Some(4)]);
        trim_to_assistant(&mut r);
        let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [A, U]);
        let after: Vec<Option<usize>> = r
            .cache
            .breakpoints
            .iter()
            .map(|p| p.after_message)
            .collect();
        assert_eq!(after, [None, Some(1)]);

        let mut short = request(&[U, A], &[None, Some(1)]);
        trim_to_assistant(&mut short);
        assert_eq!(short.messages.len(), 2);
    }

    #[test]
    fn every_message_gets_a_breakpoint() {
        let mut r = request(&[Role::User, Role::Assistant, Role::User], &[None, Some(2)]);
        rewrite(Bug::CachesEveryMessage, false, &mut r);
        let after: Vec<Option<usize>> = r
            .cache
            .breakpoints
            .iter()
            .map(|p| p.after_message)
            .collect();
        assert_eq!(after, [None, Some(0), Some(1), Some(2)]);
    }
}
