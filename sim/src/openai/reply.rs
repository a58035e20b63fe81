//! What the scripted provider answers, before it is put into either wire format.
//!
//! Guarantee: a [`Reply`] fixes every byte-relevant choice — ids, timestamp, how text
//! and arguments are cut into deltas, token counts — so the Responses and Chat writers
//! are pure functions of it. The concatenation of a part's fragments is its full text;
//! the writers never re-split, so a fault that cuts "inside the arguments" cuts exactly
//! where the script said.

use super::neutral::{Item, Part, Reasoning, Role};

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
}

/// One output item of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyItem {
    /// A reasoning item (Responses only; Chat has no place for it and omits it).
    Reasoning {
        id: String,
        summary: Vec<String>,
        encrypted_content: Option<String>,
    },
    /// An assistant text message, as streamed fragments.
    Text { id: String, fragments: Vec<String> },
    /// A function call; `arguments` fragments concatenate to the argument string.
    Call {
        id: String,
        call_id: String,
        name: String,
        fragments: Vec<String>,
    },
}

impl ReplyItem {
    /// The full text or argument string.
    pub fn joined(&self) -> String {
        match self {
            ReplyItem::Reasoning { .. } => String::new(),
            ReplyItem::Text { fragments, .. } | ReplyItem::Call { fragments, .. } => {
                fragments.concat()
            }
        }
    }
}

/// A whole reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// `resp_…` for Responses, `chatcmpl-…` for Chat.
    pub id: String,
    /// The model name reported back (real endpoints report a dated name).
    pub model: String,
    /// Unix seconds, chosen by the caller (virtual time, never the wall clock).
    pub created_at: u64,
    /// The reply ran out of its output budget (the model's `max_tokens` stop): Chat
    /// ends it with `finish_reason: "length"`, Responses with status `incomplete`,
    /// whatever items it holds, calls included.
    pub length_stop: bool,
    pub items: Vec<ReplyItem>,
    pub usage: Usage,
}

impl Reply {
    /// Whether the reply asks the client to run tools.
    pub fn has_calls(&self) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, ReplyItem::Call { .. }))
    }

    /// The reply as neutral items, in output order, as it was sent: what a client that
    /// keeps the conversation must send back (and what a `previous_response_id` stands
    /// for). A reasoning item's `encrypted_content` is only on the wire when the request
    /// asked for it (`include: ["reasoning.encrypted_content"]`), so only then is it part
    /// of the identity a client must echo.
    pub fn to_neutral(&self, include_encrypted_reasoning: bool) -> Vec<Item> {
        self.items
            .iter()
            .map(|item| match item {
                ReplyItem::Reasoning {
                    id,
                    summary,
                    encrypted_content,
                } => Item::Reasoning(Reasoning {
                    id: Some(id.clone()),
                    summary: summary.clone(),
                    encrypted_content: encrypted_content
                        .clone()
                        .filter(|_| include_encrypted_reasoning),
                }),
                ReplyItem::Text { id, .. } => Item::Message {
                    role: Role::Assistant,
                    id: Some(id.clone()),
                    parts: vec![Part::Text(item.joined())],
                },
                ReplyItem::Call {
                    id, call_id, name, ..
                } => Item::ToolCall {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: item.joined(),
                    item_id: Some(id.clone()),
                },
            })
            .collect()
    }
}

/// Cuts `text` into fragments of at most `max_chars` characters (at least one
/// fragment, possibly empty), on character boundaries so every fragment is valid UTF-8.
pub fn split_fragments(text: &str, max_chars: usize) -> Vec<String> {
    let max = max_chars.max(1);
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(max).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_respect_character_boundaries_and_rejoin() {
        let f = split_fragments("40°C ok", 3);
        assert_eq!(f, vec!["40°", "C o", "k"]);
        assert_eq!(f.concat(), "40°C ok");
    }

    #[test]
    fn empty_text_is_one_empty_fragment() {
        assert_eq!(split_fragments("", 4), vec![String::new()]);
    }

    #[test]
    fn neutral_view_of_a_reply_keeps_call_ids_and_joined_arguments() {
        let reply = Reply {
            id: "resp_1".into(),
            model: "m".into(),
            created_at: 0,
            length_stop: false,
            items: vec![ReplyItem::Call {
                id: "fc_1".into(),
                call_id: "call_1".into(),
                name: "sh".into(),
                fragments: vec!["{\"a\"".into(), ":1}".into()],
            }],
            usage: Usage::default(),
        };
        assert_eq!(
            reply.to_neutral(false),
            vec![Item::ToolCall {
                call_id: "call_1".into(),
                name: "sh".into(),
                arguments: "{\"a\":1}".into(),
                item_id: Some("fc_1".into())
            }]
        );
        assert!(reply.has_calls());
    }

    #[test]
    fn encrypted_reasoning_is_part_of_the_identity_only_when_it_was_sent() {
        let reply = Reply {
            id: "resp_1".into(),
            model: "m".into(),
            created_at: 0,
            length_stop: false,
            items: vec![ReplyItem::Reasoning {
                id: "rs_1".into(),
                summary: vec![],
                encrypted_content: Some("E".into()),
            }],
            usage: Usage::default(),
        };
        let sent = |include| match &reply.to_neutral(include)[0] {
            Item::Reasoning(r) => r.encrypted_content.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(sent(false), None);
        assert_eq!(sent(true), Some("E".into()));
    }
}
