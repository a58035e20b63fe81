//! The Chat Completions API's rules ([`super::table::CHAT`]) over a body's `messages`
//! as sent.
//!
//! Guarantees:
//! - Pairing is positional, as the API judges it: the tool messages answering an
//!   assistant message's `tool_calls` come right after it (tool messages only), each
//!   call id answered there exactly once; a tool message anywhere else answers
//!   nothing.
//! - One pass, ordered maps; breaches come out in message order, an unanswered call
//!   reported at the assistant message that made it.

use super::{Breach, identity, type_name};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// The breaches of a Chat Completions request whose `messages` is `messages`.
pub fn judge(messages: &Value) -> Vec<Breach> {
    let Value::Array(list) = messages else {
        return Vec::new();
    };
    let mut w = Walk::default();
    if list.is_empty() {
        w.push(
            "empty_messages",
            None,
            "messages is an empty array".into(),
            "[]".into(),
        );
    }
    for (i, m) in list.iter().enumerate() {
        w.message(i, m);
    }
    w.close();
    w.out.sort_by_key(|b| b.at.map_or(0, |i| i + 1));
    w.out
}

/// The assistant message whose calls are being answered.
struct Open {
    at: usize,
    ids: BTreeSet<String>,
    pending: Vec<String>,
    excerpt: String,
}

#[derive(Default)]
struct Walk {
    out: Vec<Breach>,
    open: Option<Open>,
    /// Each call id with the message that made it.
    calls: BTreeMap<String, usize>,
    /// Each answered id with the tool message that answered it.
    answered: BTreeMap<String, usize>,
}

impl Walk {
    fn push(&mut self, kind: &'static str, at: Option<usize>, detail: String, excerpt: String) {
        self.out.push(Breach {
            kind,
            at,
            tool: None,
            detail,
            excerpt,
        });
    }

    /// The open assistant message's calls no tool message answered.
    fn close(&mut self) {
        if let Some(o) = self.open.take()
            && !o.pending.is_empty()
        {
            let detail = format!(
                "the assistant message's tool_calls {} have no tool message before the next message",
                o.pending.join(", ")
            );
            self.push("call_without_tool_message", Some(o.at), detail, o.excerpt);
        }
    }

    fn message(&mut self, i: usize, m: &Value) {
        let role = match m.get("role") {
            Some(Value::String(r)) if ROLES.contains(&r.as_str()) => r.as_str(),
            other => {
                if let Some(r) = other {
                    let detail = format!(
                        "role {r} is not system, developer, user, assistant, tool or function"
                    );
                    self.push("bad_role", Some(i), detail, identity(m));
                }
                self.close();
                return;
            }
        };
        match role {
            "tool" => self.tool(i, m),
            "assistant" => {
                self.close();
                self.assistant(i, m);
            }
            _ => self.close(),
        }
    }

    fn assistant(&mut self, i: usize, m: &Value) {
        let calls = match m.get("tool_calls") {
            Some(Value::Array(c)) => c.as_slice(),
            _ => &[],
        };
        let has_content = m.get("content").is_some_and(|c| !c.is_null());
        let has_function_call = m.get("function_call").is_some_and(|c| !c.is_null());
        if !has_content && calls.is_empty() && !has_function_call {
            let detail = "assistant message has neither content nor tool_calls".to_owned();
            self.push("assistant_without_content", Some(i), detail, identity(m));
        }
        let mut open = Open {
            at: i,
            ids: BTreeSet::new(),
            pending: Vec::new(),
            excerpt: identity(m),
        };
        for (k, c) in calls.iter().enumerate() {
            let kind = c.get("type").and_then(Value::as_str);
            if let Some(t) = c.get("type")
                && !matches!(kind, Some("function" | "custom"))
            {
                let detail = format!("tool_calls[{k}].type is {t}, not \"function\"");
                self.push("bad_tool_call_type", Some(i), detail, identity(c));
            }
            if kind != Some("custom")
                && let Some(a) = c.get("function").and_then(|f| f.get("arguments"))
                && !a.is_string()
            {
                let detail = format!(
                    "tool_calls[{k}].function.arguments is {}, not a string",
                    type_name(a)
                );
                self.push("arguments_not_string", Some(i), detail, identity(c));
            }
            let Some(Value::String(id)) = c.get("id") else {
                continue;
            };
            if let Some(first) = self.calls.get(id) {
                let detail = format!("tool call id {id} is already used by messages[{first}]");
                self.push("duplicate_call_id", Some(i), detail, identity(c));
            } else {
                self.calls.insert(id.clone(), i);
            }
            if open.ids.insert(id.clone()) {
                open.pending.push(id.clone());
            }
        }
        if !open.ids.is_empty() {
            self.open = Some(open);
        }
    }

    fn tool(&mut self, i: usize, m: &Value) {
        let id = m
            .get("tool_call_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(open) = self.open.as_mut() else {
            let detail =
                format!("tool message for {id} follows no assistant message with tool_calls");
            self.push("tool_without_calls", Some(i), detail, identity(m));
            return;
        };
        if !open.ids.contains(&id) {
            let at = open.at;
            let detail =
                format!("tool message answers {id}, which is not a tool call of messages[{at}]");
            self.push("tool_answers_no_call", Some(i), detail, identity(m));
            return;
        }
        open.pending.retain(|p| *p != id);
        if let Some(first) = self.answered.get(&id) {
            let detail = format!("tool_call_id {id} is already answered by messages[{first}]");
            self.push("duplicate_tool_message", Some(i), detail, identity(m));
        } else {
            self.answered.insert(id, i);
        }
    }
}
