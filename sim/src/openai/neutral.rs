//! The protocol-neutral view of one request's conversation that both OpenAI formats
//! map into (and that the judge will read, whatever the wire format).
//!
//! Guarantee: the mapping keeps, in wire order, everything the judge's rules look at —
//! who said what, every tool call with its call id, name and argument string, every
//! tool result with the call id it answers, every reasoning item with its identity —
//! and invents nothing. Each item remembers the index of the wire item it came from
//! (`input[i]` or `messages[i]`), so a finding can quote the client's own bytes.
//! Items the view does not model are kept as [`Item::Opaque`] with their type name,
//! never dropped, so "nothing to judge" can never be mistaken for "clean".
//!
//! System and developer messages stay in the ordered list (Codex sends two developer
//! messages first, aider a trailing system message; their position is data). The
//! [`Prefix`] holds only what sits outside the list: model, top-level `instructions`,
//! tools.

use serde_json::Value;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// System and developer messages instruct; they are not conversation turns.
    pub fn is_instruction(self) -> bool {
        matches!(self, Role::System | Role::Developer)
    }
}

/// One content part of a message or tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `input_text`, `output_text`, `text`, or a bare string content.
    Text(String),
    /// An assistant refusal (`refusal` part or Chat's `refusal` field).
    Refusal(String),
    /// Anything else (images, files, audio): its `type` and the part as sent, so the
    /// judge can still compare it byte for byte across requests.
    Other { kind: String, raw: Value },
}

/// One reasoning item's identity: what a client must send back unchanged.
///
/// Codex echoes a reasoning item with an extra `"content": null`; the identity is
/// judged on these three fields only, never on bytes, so that echo is not a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reasoning {
    /// `None` only for an item read from a log that does not keep ids (a Codex
    /// rollout): a request's reasoning item always names the item it echoes.
    pub id: Option<String>,
    /// The summary texts in order.
    pub summary: Vec<String>,
    pub encrypted_content: Option<String>,
}

/// One entry of the ordered conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Message {
        role: Role,
        /// Client-made or server-made item id (`msg_…`), when the wire carries one.
        id: Option<String>,
        parts: Vec<Part>,
    },
    ToolCall {
        call_id: String,
        name: String,
        /// The argument string exactly as sent (it need not be valid JSON: a client
        /// must still answer a call whose arguments it could not parse).
        arguments: String,
        /// The `fc_…` item id (Responses) when present.
        item_id: Option<String>,
    },
    ToolResult {
        call_id: String,
        output: Vec<Part>,
        /// The client-made item id (Codex's `fco_…`) when present.
        item_id: Option<String>,
    },
    /// A tool output that answers no call: a Responses `function_call_output` with
    /// `name` (and `namespace`) instead of `call_id`, which the published schema
    /// allows. `name` is `namespace.name` when namespaced.
    NamedOutput {
        name: String,
        output: Vec<Part>,
        item_id: Option<String>,
    },
    Reasoning(Reasoning),
    /// A Responses `item_reference`: stands for an earlier item by id.
    Reference {
        id: String,
    },
    /// A valid item type this view does not model (web search calls, computer use…).
    Opaque {
        kind: String,
        id: Option<String>,
    },
}

/// An item with the index of the wire element it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Index into `input` (Responses) or `messages` (Chat). A Chat assistant message
    /// with text and two calls gives three entries sharing one index.
    pub source: usize,
    pub item: Item,
}

/// A tool the request declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tool {
    Function {
        name: String,
        /// The enclosing Responses `namespace` tool, for nested function tools.
        namespace: Option<String>,
    },
    /// A Responses `custom` (free-form) tool.
    Custom { name: String },
    /// A hosted tool (`web_search`, `file_search`, …) by its type.
    Hosted { kind: String },
}

/// What sits outside the ordered list and must stay stable within a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefix {
    pub model: String,
    /// Responses top-level `instructions` (Chat has none: its system text is a message).
    pub instructions: Option<String>,
    pub tools: Vec<Tool>,
}

/// Which wire format a conversation was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Responses,
    ChatCompletions,
    /// The Gemini API's `contents` (read by `crate::gemini`).
    Gemini,
}

/// One request's conversation, format-neutral.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub wire: Wire,
    pub prefix: Prefix,
    pub entries: Vec<Entry>,
    /// Responses `previous_response_id`: the entries continue that response's context,
    /// which the judge must rebuild from what it served.
    pub continues: Option<String>,
}

impl Item {
    /// The item's own id on the wire (`msg_…`, `fc_…`, `rs_…`…), which an
    /// `item_reference` names.
    pub fn item_id(&self) -> Option<&str> {
        match self {
            Item::Message { id, .. } => id.as_deref(),
            Item::ToolCall { item_id, .. }
            | Item::ToolResult { item_id, .. }
            | Item::NamedOutput { item_id, .. } => item_id.as_deref(),
            Item::Reasoning(r) => r.id.as_deref(),
            Item::Opaque { id, .. } => id.as_deref(),
            Item::Reference { .. } => None,
        }
    }
}

impl Conversation {
    /// Replaces each `item_reference` whose id `known` resolves by the item it stands
    /// for, as the Responses API does for stored items; a reference nothing resolves
    /// stays (the judge lists it as not judged). Returns how many were resolved.
    pub fn resolve_references(&mut self, known: impl Fn(&str) -> Option<Item>) -> usize {
        let mut resolved = 0;
        for entry in &mut self.entries {
            if let Item::Reference { id } = &entry.item
                && let Some(item) = known(id)
            {
                entry.item = item;
                resolved += 1;
            }
        }
        resolved
    }

    /// The leading run of system/developer messages' texts, in order: the
    /// instructions a chat client put in front of the turns.
    pub fn leading_instructions(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for entry in &self.entries {
            match &entry.item {
                Item::Message { role, parts, .. } if role.is_instruction() => {
                    out.extend(parts.iter().filter_map(|p| match p {
                        Part::Text(t) => Some(t.as_str()),
                        _ => None,
                    }));
                }
                _ => break,
            }
        }
        out
    }

    /// Call ids of tool calls, in order.
    pub fn call_ids(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter_map(|e| match &e.item {
                Item::ToolCall { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Call ids answered by tool results, in order.
    pub fn result_ids(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter_map(|e| match &e.item {
                Item::ToolResult { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Reasoning items, in order.
    pub fn reasoning(&self) -> Vec<&Reasoning> {
        self.entries
            .iter()
            .filter_map(|e| match &e.item {
                Item::Reasoning(r) => Some(r),
                _ => None,
            })
            .collect()
    }
}

/// The text of a list of parts, refusals and non-text parts left out.
pub fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: Role, text: &str) -> Item {
        Item::Message {
            role,
            id: None,
            parts: vec![Part::Text(text.into())],
        }
    }

    fn conv(items: Vec<Item>) -> Conversation {
        Conversation {
            wire: Wire::Responses,
            prefix: Prefix {
                model: "m".into(),
                instructions: None,
                tools: vec![],
            },
            entries: items
                .into_iter()
                .enumerate()
                .map(|(source, item)| Entry { source, item })
                .collect(),
            continues: None,
        }
    }

    #[test]
    fn leading_instructions_stop_at_the_first_turn() {
        let c = conv(vec![
            msg(Role::Developer, "a"),
            msg(Role::System, "b"),
            msg(Role::User, "u"),
            msg(Role::System, "trailing"),
        ]);
        assert_eq!(c.leading_instructions(), vec!["a", "b"]);
    }

    #[test]
    fn call_and_result_ids_come_out_in_wire_order() {
        let c = conv(vec![
            Item::ToolCall {
                call_id: "c1".into(),
                name: "n".into(),
                arguments: "{}".into(),
                item_id: None,
            },
            Item::ToolCall {
                call_id: "c2".into(),
                name: "n".into(),
                arguments: "{}".into(),
                item_id: None,
            },
            Item::ToolResult {
                call_id: "c2".into(),
                output: vec![],
                item_id: None,
            },
        ]);
        assert_eq!(c.call_ids(), vec!["c1", "c2"]);
        assert_eq!(c.result_ids(), vec!["c2"]);
    }
}
