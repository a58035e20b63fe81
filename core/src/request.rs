//! Request assembly (docs/spec.md §8).
//!
//! Guarantee: within a turn every request is the previous one with messages appended.
//! `system`, `tools` and every earlier message serialize to the same bytes, because
//! the request is built from the history as it is (shared `Arc`s, never rebuilt) and
//! the turn context is written once into the turn's directive message and persisted
//! with it. The provider's prompt cache keys on those bytes; one changed byte early in
//! the prefix costs the whole cached prefix.

use crate::message::{Block, Content, Message, Role, SharedMessage, messages_to_json};
use serde::{Deserialize, Serialize};

/// A tool the model may call, as the provider's `tools` array holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// A cache breakpoint: after the stable prefix (`None`) or after message `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheBreakpoint {
    pub after_message: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheHints {
    pub session_key: String,
    pub breakpoints: Vec<CacheBreakpoint>,
}

/// One request to the provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub system: String,
    pub tools: std::sync::Arc<[ToolSpec]>,
    pub messages: Vec<SharedMessage>,
    pub cache: CacheHints,
}

impl Request {
    /// The serialized request; equal bytes are what the append-only property compares.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The serialized `system` and `tools`: the stable prefix.
    pub fn prefix_json(&self) -> String {
        prefix_json(&self.system, &self.tools)
    }

    pub fn messages_json(&self) -> String {
        messages_to_json(&self.messages)
    }
}

/// Breakpoints after the stable prefix, after the previous turn's last message (when
/// there is one) and on the request's last message. Equal positions appear once.
pub fn cache_breakpoints(turn_baseline: usize, message_count: usize) -> Vec<CacheBreakpoint> {
    let mut points = vec![CacheBreakpoint {
        after_message: None,
    }];
    let mut push = |i: usize| {
        let p = CacheBreakpoint {
            after_message: Some(i),
        };
        if !points.contains(&p) {
            points.push(p);
        }
    };
    if turn_baseline > 0 {
        push(turn_baseline - 1);
    }
    if message_count > 0 {
        push(message_count - 1);
    }
    points
}

fn prefix_json(system: &str, tools: &[ToolSpec]) -> String {
    #[derive(Serialize)]
    struct Prefix<'a> {
        system: &'a str,
        tools: &'a [ToolSpec],
    }
    serde_json::to_string(&Prefix { system, tools }).unwrap_or_default()
}

/// A stable digest (BLAKE3, hex) of `system` + `tools`; equal prefixes, equal digests,
/// on every platform and version.
pub fn prefix_digest(system: &str, tools: &[ToolSpec]) -> String {
    blake3::hash(prefix_json(system, tools).as_bytes())
        .to_hex()
        .to_string()
}

/// What the engine keeps of each request it sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub op: crate::state::OperationId,
    pub digest: String,
}

/// Something the engine reports to the host besides the turn itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    pub kind: String,
    pub data: std::collections::BTreeMap<String, String>,
}

pub const PREFIX_CHANGED: &str = "prefix-changed";

/// The `prefix-changed` activity for a new receipt, when its digest differs from the
/// previous receipt's. A first receipt has nothing to differ from.
pub fn prefix_change(previous: Option<&Receipt>, current: &Receipt) -> Option<Activity> {
    let previous = previous?;
    (previous.digest != current.digest).then(|| Activity {
        kind: PREFIX_CHANGED.to_string(),
        data: [
            ("previous".to_string(), previous.digest.clone()),
            ("current".to_string(), current.digest.clone()),
        ]
        .into_iter()
        .collect(),
    })
}

pub const TURN_CONTEXT_OPEN: &str = "<turn_context>";

/// The turn context block: the instant the caller passed in, the stance, and the
/// directives a compaction hid from the model. Computed once per turn.
pub fn turn_context_block(now: &str, stance: &str, hidden_directives: &[String]) -> String {
    let mut s = String::new();
    s.push_str(TURN_CONTEXT_OPEN);
    s.push_str("\n<now>");
    s.push_str(now);
    s.push_str("</now>\n<stance>");
    s.push_str(stance);
    s.push_str("</stance>\n");
    if !hidden_directives.is_empty() {
        s.push_str("<conversation_thread>\n");
        for d in hidden_directives {
            s.push_str("<directive>");
            s.push_str(d);
            s.push_str("</directive>\n");
        }
        s.push_str("</conversation_thread>\n");
    }
    s.push_str("</turn_context>");
    s
}

/// The turn's directive: the context block first, the user's own words last, so the
/// user's words are the last thing the model reads.
pub fn directive_message(context_block: String, words: String) -> Message {
    Message::user_blocks(vec![Block::text(context_block), Block::text(words)])
}

/// The user's words, when `message` is a directive.
pub fn directive_words(message: &Message) -> Option<&str> {
    if message.role != Role::User {
        return None;
    }
    match &message.content {
        Content::Blocks(blocks) => match blocks.as_slice() {
            [Block::Text { text: tail }, Block::Text { text: words }]
                if tail.starts_with(TURN_CONTEXT_OPEN) =>
            {
                Some(words)
            }
            _ => None,
        },
        Content::Text(_) => None,
    }
}

/// Directives hidden by compaction that are not still verbatim in `visible` (as a
/// text block or string content of some message). The current turn's own directive is
/// visible, so it is never repeated.
pub fn hidden_directives(compacted: &[String], visible: &[SharedMessage]) -> Vec<String> {
    let present = |d: &str| {
        visible.iter().any(|m| match &m.content {
            Content::Text(s) => s == d,
            Content::Blocks(blocks) => blocks
                .iter()
                .any(|b| matches!(b, Block::Text { text } if text == d)),
        })
    };
    let mut out: Vec<String> = Vec::new();
    for d in compacted {
        if !present(d) && !out.contains(d) {
            out.push(d.clone());
        }
    }
    out
}

/// The fixed user text that opens a compacted history; the summary follows as an
/// assistant message, so no summarised (model-written) text lands in a user message.
pub const COMPACTION_NOTICE: &str = "[Earlier conversation compacted; a summary follows.]";

/// The history a compaction reset leaves: the notice, then the summary.
pub fn compacted_history(summary: &str) -> Vec<SharedMessage> {
    vec![
        std::sync::Arc::new(Message::user_text(COMPACTION_NOTICE)),
        std::sync::Arc::new(Message::assistant_text(summary)),
    ]
}
