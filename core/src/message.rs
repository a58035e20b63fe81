//! The wire format: Anthropic Messages JSON, typed.
//!
//! Guarantee: a message loaded from JSON serializes back to the same shape. String
//! content stays a string and block content stays an array, because a transcript that
//! changes shape on load would change the bytes the provider cached. Unknown block
//! types are kept verbatim (never silently dropped), so a newer transcript still
//! round-trips and a checker can still see every block.
//!
//! History is held as `Vec<SharedMessage>`: appending never rebuilds the messages
//! before it, which `Arc::ptr_eq` makes observable in tests.

mod de;

use serde::{Deserialize, Serialize, Serializer};
use std::sync::Arc;

/// A message shared between the history, requests and checkpoints without copying.
pub type SharedMessage = Arc<Message>;

/// Who wrote a message.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// `{"role": …, "content": STRING | [BLOCK, …]}`.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Content,
}

/// Message content: the wire allows a bare string or an array of blocks, and the two
/// are kept apart so a round trip never changes which one a message used.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

/// A content block, tagged by `"type"` on the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        is_error: Option<bool>,
    },
    /// A block whose `"type"` this crate does not know, kept as it was loaded.
    Unknown(serde_json::Map<String, serde_json::Value>),
}

/// `tool_result` content: a string, or an array of blocks (text on the wire today;
/// other kinds are kept as [`Block::Unknown`]).
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    Text(String),
    Blocks(Vec<Block>),
}

impl From<String> for ToolResultContent {
    fn from(s: String) -> Self {
        ToolResultContent::Text(s)
    }
}

impl From<&str> for ToolResultContent {
    fn from(s: &str) -> Self {
        ToolResultContent::Text(s.to_owned())
    }
}

impl ToolResultContent {
    /// True for `""` and `[]`: a result that shows the model nothing.
    pub fn is_empty(&self) -> bool {
        match self {
            ToolResultContent::Text(s) => s.is_empty(),
            ToolResultContent::Blocks(b) => b.is_empty(),
        }
    }

    /// The text a reader sees: the string, or the text blocks joined.
    pub fn text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
        }
    }
}

/// The serializing half of [`Block`]'s serde: known types, borrowed, tag first.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownBlock<'a> {
    Text {
        text: std::borrow::Cow<'a, str>,
    },
    Thinking {
        thinking: std::borrow::Cow<'a, str>,
        signature: std::borrow::Cow<'a, str>,
    },
    RedactedThinking {
        data: std::borrow::Cow<'a, str>,
    },
    ToolUse {
        id: std::borrow::Cow<'a, str>,
        name: std::borrow::Cow<'a, str>,
        input: std::borrow::Cow<'a, serde_json::Value>,
    },
    ToolResult {
        tool_use_id: std::borrow::Cow<'a, str>,
        content: std::borrow::Cow<'a, ToolResultContent>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}

/// The block types this crate reads into their own variants.
const KNOWN_TYPES: [&str; 5] = [
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
];

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::borrow::Cow::Borrowed as B;
        let known = match self {
            Block::Text { text } => KnownBlock::Text { text: B(text) },
            Block::Thinking {
                thinking,
                signature,
            } => KnownBlock::Thinking {
                thinking: B(thinking),
                signature: B(signature),
            },
            Block::RedactedThinking { data } => KnownBlock::RedactedThinking { data: B(data) },
            Block::ToolUse { id, name, input } => KnownBlock::ToolUse {
                id: B(id),
                name: B(name),
                input: B(input),
            },
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => KnownBlock::ToolResult {
                tool_use_id: B(tool_use_id),
                content: B(content),
                is_error: *is_error,
            },
            Block::Unknown(map) => return map.serialize(s),
        };
        known.serialize(s)
    }
}

impl Block {
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text { text: text.into() }
    }

    /// A `tool_result` with string content.
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: ToolResultContent::Text(content.into()),
            is_error: is_error.then_some(true),
        }
    }

    /// The wire `"type"` of this block.
    pub fn kind(&self) -> &str {
        match self {
            Block::Text { .. } => "text",
            Block::Thinking { .. } => "thinking",
            Block::RedactedThinking { .. } => "redacted_thinking",
            Block::ToolUse { .. } => "tool_use",
            Block::ToolResult { .. } => "tool_result",
            Block::Unknown(map) => map
                .get("type")
                .and_then(|t| t.as_str())
                .unwrap_or("unknown"),
        }
    }
}

/// One tool call the model asked for, as the engine dispatches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: serde_json::Value,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: Content::Text(text.into()),
        }
    }

    pub fn assistant_text(text: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: Content::Blocks(vec![Block::text(text)]),
        }
    }

    pub fn user_blocks(blocks: Vec<Block>) -> Message {
        Message {
            role: Role::User,
            content: Content::Blocks(blocks),
        }
    }

    pub fn assistant_blocks(blocks: Vec<Block>) -> Message {
        Message {
            role: Role::Assistant,
            content: Content::Blocks(blocks),
        }
    }

    /// The blocks of this message; string content has none.
    pub fn blocks(&self) -> &[Block] {
        match &self.content {
            Content::Text(_) => &[],
            Content::Blocks(b) => b,
        }
    }

    /// The string content, when the content is a string.
    pub fn string_content(&self) -> Option<&str> {
        match &self.content {
            Content::Text(s) => Some(s),
            Content::Blocks(_) => None,
        }
    }

    /// True for `""` and `[]`, which the provider rejects on assistant messages.
    pub fn is_empty(&self) -> bool {
        match &self.content {
            Content::Text(s) => s.is_empty(),
            Content::Blocks(b) => b.is_empty(),
        }
    }

    /// The tool calls of this message, in order.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.blocks()
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { id, name, input } => Some(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    pub fn has_tool_use(&self) -> bool {
        self.blocks()
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
    }
}

/// Parses an array of messages, as a transcript or request body holds them.
pub fn parse_messages(json: &str) -> Result<Vec<SharedMessage>, serde_json::Error> {
    let messages: Vec<Message> = serde_json::from_str(json)?;
    Ok(messages.into_iter().map(Arc::new).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(json: &str) -> String {
        let m: Message = serde_json::from_str(json).expect("parses");
        serde_json::to_string(&m).expect("serializes")
    }

    #[test]
    fn string_content_stays_a_string() {
        let j = r#"{"role":"user","content":"hello"}"#;
        assert_eq!(round_trip(j), j);
    }

    #[test]
    fn block_content_stays_an_array() {
        let j = r#"{"role":"user","content":[{"type":"text","text":"hello"}]}"#;
        assert_eq!(round_trip(j), j);
    }

    #[test]
    fn tool_result_is_error_round_trips_and_absent_stays_absent() {
        let j = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"boom","is_error":true},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"ok"}]}]}"#;
        assert_eq!(round_trip(j), j);
    }

    #[test]
    fn thinking_signature_and_redacted_thinking_round_trip() {
        let j = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig=="},{"type":"redacted_thinking","data":"xyz"},{"type":"tool_use","id":"toolu_1","name":"ls","input":{"path":"."}}]}"#;
        assert_eq!(round_trip(j), j);
    }

    #[test]
    fn unknown_block_types_are_kept_verbatim() {
        let j = r#"{"role":"user","content":[{"type":"image","source":{"data":"AAAA","type":"base64"}}]}"#;
        let m: Message = serde_json::from_str(j).expect("parses");
        assert_eq!(m.blocks()[0].kind(), "image");
        assert_eq!(serde_json::to_string(&m).expect("serializes"), j);
    }

    #[test]
    fn malformed_known_block_is_an_error_not_an_unknown_block() {
        let j = r#"{"role":"assistant","content":[{"type":"tool_use","name":"ls","input":{}}]}"#;
        let err = serde_json::from_str::<Message>(j).expect_err("missing id");
        assert!(
            err.to_string().contains("malformed `tool_use` block"),
            "{err}"
        );
    }

    #[test]
    fn block_without_type_is_an_error() {
        let j = r#"{"role":"user","content":[{"text":"x"}]}"#;
        let err = serde_json::from_str::<Message>(j).expect_err("no type");
        assert!(err.to_string().contains("no `type` field"), "{err}");
    }

    #[test]
    fn tool_calls_are_listed_in_order() {
        let m = Message::assistant_blocks(vec![
            Block::text("a"),
            Block::ToolUse {
                id: "1".into(),
                name: "x".into(),
                input: serde_json::json!({}),
            },
            Block::ToolUse {
                id: "2".into(),
                name: "y".into(),
                input: serde_json::json!({"a": 1}),
            },
        ]);
        let ids: Vec<String> = m.tool_calls().into_iter().map(|c| c.id).collect();
        assert_eq!(ids, vec!["1".to_string(), "2".to_string()]);
    }
}
