//! Telling conversations apart, and the normal form requests are compared in.
//!
//! Guarantee: two requests of one agent loop get the same key, and the key is a pure
//! function of the request (the API it was sent to, its first message, whether it
//! carries tools, and an optional header), so a recording judged again later groups
//! requests exactly as the live server did.
//!
//! A conversation is one API's. Requests sent to different APIs (Messages, Chat
//! Completions, Responses, Gemini) never share a conversation, even when they open
//! with the same message: one agent loop speaks one wire format, and comparing a
//! Responses request with a Messages request would name as a changed history what is
//! only another format. The API is read from the route a request came in on (live,
//! and from a recording's `target` or a cassette's address when judged again), never
//! from a field of the body, so a recording made before the API was part of the key
//! is grouped the same way when judged today.
//!
//! Within one API, the rule, in order:
//! 1. A request with an `x-turnsim-conversation` header belongs to the conversation
//!    that header names. A harness that runs several agents with the same opening
//!    message sets it to keep them apart.
//! 2. Otherwise the key is a digest of the first non-`system` message (in normal
//!    form, below) and of whether the request has tools. An agent loop only ever
//!    appends to its history, so its first message never changes; sub-agents,
//!    title generators and summarisers open with a message of their own, or carry no
//!    tools, and so get keys of their own. Session headers some clients send
//!    (`x-claude-code-session-id`, `metadata.user_id`) are deliberately not used:
//!    they are shared by a session's main loop, its sub-agents and its title
//!    requests, which are different histories and must not be compared with each
//!    other. The `system` prompt is not part of the key either, so that a system
//!    prompt that changes inside a loop is seen (and judged) rather than silently
//!    starting a new conversation.
//!
//! The cost of rule 2: two loops that open with byte-identical messages (the same
//! prompt run twice against one server) share a key. The second run's first request
//! is then a prefix of the first run's last one, which the append-only check reads
//! as a rewind (a note, not a violation).
//!
//! Normal form: `cache_control` is removed from every content block (also inside a
//! `tool_result`), from `system` blocks and from tools, because clients move their
//! cache breakpoints forward as a loop grows; string content is written as one text
//! block, because clients convert a string to a block to attach `cache_control`.

use serde_json::{Map, Value};

/// The header that names a conversation explicitly.
pub const CONVERSATION_HEADER: &str = "x-turnsim-conversation";

/// Removes `cache_control` from a block (and the blocks a `tool_result` holds).
fn normal_block(block: &Value) -> Value {
    let Value::Object(map) = block else {
        return block.clone();
    };
    let mut out = Map::with_capacity(map.len());
    for (k, v) in map {
        if k == "cache_control" {
            continue;
        }
        let v = if k == "content" {
            normal_content(v)
        } else {
            v.clone()
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// String content as one text block; blocks without `cache_control`.
pub fn normal_content(content: &Value) -> Value {
    match content {
        Value::String(s) => Value::Array(vec![serde_json::json!({"type": "text", "text": s})]),
        Value::Array(blocks) => Value::Array(blocks.iter().map(normal_block).collect()),
        other => other.clone(),
    }
}

/// A message in normal form: its content normalised, every other field kept.
pub fn normal_message(message: &Value) -> Value {
    let Value::Object(map) = message else {
        return message.clone();
    };
    let mut out = Map::with_capacity(map.len());
    for (k, v) in map {
        let v = if k == "content" {
            normal_content(v)
        } else {
            v.clone()
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// `system` in normal form (absent is `null`).
pub fn normal_system(system: Option<&Value>) -> Value {
    system.map_or(Value::Null, normal_content)
}

/// `tools` in normal form (absent is `[]`).
pub fn normal_tools(tools: Option<&Value>) -> Value {
    match tools {
        Some(Value::Array(ts)) => Value::Array(ts.iter().map(normal_block).collect()),
        Some(other) => other.clone(),
        None => Value::Array(Vec::new()),
    }
}

/// The API a request was sent to: part of its conversation's key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Api {
    /// Anthropic's Messages API (`/v1/messages`).
    #[default]
    Messages,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    Chat,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// Google's Gemini API (`…:generateContent`, `…:streamGenerateContent`).
    Gemini,
}

impl Api {
    /// The API's name in a key.
    pub fn name(self) -> &'static str {
        match self {
            Api::Messages => "messages",
            Api::Chat => "chat",
            Api::Responses => "responses",
            Api::Gemini => "gemini",
        }
    }
}

/// The conversation key of a request (see the module documentation).
pub fn conversation_key(
    api: Api,
    header: Option<&str>,
    messages: &[Value],
    has_tools: bool,
) -> ConversationKey {
    let first = messages
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) != Some("system"))
        .map(|m| normal_message(m).to_string());
    key_of(api, header, first.as_deref(), has_tools)
}

/// The key from its parts: the API, the header, the first non-`system` message in
/// normal form (serialized), whether tools are offered.
pub fn key_of(
    api: Api,
    header: Option<&str>,
    first: Option<&str>,
    has_tools: bool,
) -> ConversationKey {
    if let Some(h) = header {
        return ConversationKey {
            api,
            name: format!("header:{h}"),
        };
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update(if has_tools { b"tools\0" } else { b"plain\0" });
    hasher.update(first.unwrap_or("null").as_bytes());
    let hex = hasher.finalize().to_hex();
    ConversationKey {
        api,
        name: format!("first:{}", &hex[..16]),
    }
}

/// Which conversation a request belongs to: an API and a name within it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConversationKey {
    pub api: Api,
    /// `header:…` or `first:…` (see the module documentation).
    pub name: String,
}

impl ConversationKey {
    /// A seed for this conversation's generator, so a conversation's responses do
    /// not depend on how its requests interleave with other conversations'. It is
    /// drawn from the name alone: the same opening sent to two APIs is two
    /// conversations, each generated from the same seed, so one script (or one
    /// generated session) is the same reply in every format.
    pub fn seed_salt(&self) -> u64 {
        let digest = blake3::hash(self.name.as_bytes());
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest.as_bytes()[..8]);
        u64::from_le_bytes(bytes)
    }
}

impl std::fmt::Display for ConversationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.api.name(), self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cache_control_and_string_form_do_not_change_the_key() {
        let a = [json!({"role": "user", "content": "hi"})];
        let b = [json!({"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
        ]})];
        assert_eq!(
            conversation_key(Api::Messages, None, &a, true),
            conversation_key(Api::Messages, None, &b, true)
        );
    }

    #[test]
    fn tools_header_and_system_entries_decide_the_key() {
        let a = [json!({"role": "user", "content": "hi"})];
        let with_system = [
            json!({"role": "system", "content": "be brief"}),
            json!({"role": "user", "content": "hi"}),
        ];
        assert_ne!(
            conversation_key(Api::Messages, None, &a, true),
            conversation_key(Api::Messages, None, &a, false)
        );
        assert_eq!(
            conversation_key(Api::Messages, None, &a, true),
            conversation_key(Api::Messages, None, &with_system, true)
        );
        assert_eq!(
            conversation_key(Api::Messages, Some("x"), &a, true),
            ConversationKey {
                api: Api::Messages,
                name: "header:x".into()
            }
        );
    }

    #[test]
    fn the_same_opening_sent_to_two_apis_is_two_conversations_with_one_seed() {
        let a = [json!({"role": "user", "content": "hi"})];
        let messages = conversation_key(Api::Messages, None, &a, true);
        let responses = conversation_key(Api::Responses, None, &a, true);
        assert_ne!(messages, responses);
        assert_eq!(messages.name, responses.name);
        assert_eq!(messages.seed_salt(), responses.seed_salt());
        assert_eq!(messages.to_string(), format!("messages:{}", messages.name));
        // An explicit name is one API's too.
        assert_ne!(
            conversation_key(Api::Chat, Some("x"), &a, true),
            conversation_key(Api::Gemini, Some("x"), &a, true)
        );
    }

    #[test]
    fn tool_result_inner_cache_control_is_removed() {
        let m = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
            "content": [{"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}]}]});
        assert_eq!(
            normal_message(&m),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                "content": [{"type": "text", "text": "ok"}]}]})
        );
    }
}
