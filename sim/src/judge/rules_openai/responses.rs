//! The Responses API's rules ([`super::table::RESPONSES`]) over a body's `input` as
//! sent, with the items the request stands on: the response `previous_response_id`
//! names (its request and output items) and the stored items `item_reference`s name.
//!
//! Guarantees:
//! - Pairing is by `call_id` over the whole request, in wire order: an output answers
//!   a call seen before it (in the referenced response or earlier in the input), each
//!   call has exactly one output somewhere in the request. That is the API's rule;
//!   unlike the Messages API it does not ask for the output in the very next item.
//! - What cannot be known is not judged as if known: an `item_reference` nothing
//!   resolves could stand for any call or output, so with one in the input no output
//!   is called orphaned and no call unanswered, and a reasoning item it follows is not
//!   judged. Bodies the wire reader refuses (an item that is not an object, a string
//!   `input`) are judged for what they show, never guessed at.

use super::{Breach, identity, type_name};
use crate::openai::neutral::{Item, Role};
use serde_json::Value;
use std::collections::BTreeMap;

/// The prefix of each item type's id.
const PREFIX: [(&str, &str); 3] = [
    ("message", "msg"),
    ("function_call", "fc"),
    ("reasoning", "rs"),
];

/// Item types the model produces: what may follow a reasoning item.
const MODEL_ITEMS: [&str; 15] = [
    "function_call",
    "custom_tool_call",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "image_generation_call",
    "code_interpreter_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "tool_search_call",
];

const ROLES: [&str; 4] = ["user", "assistant", "system", "developer"];
const ASSISTANT_PARTS: [&str; 2] = ["output_text", "refusal"];
const INPUT_PARTS: [&str; 4] = ["input_text", "input_image", "input_file", "input_audio"];
const OUTPUT_PARTS: [&str; 3] = ["input_text", "input_image", "input_file"];

/// The breaches of a Responses request whose `input` is `input`, continuing
/// `context` (the items `previous_response_id` stands for, empty without one), with
/// `resolve` naming what a stored item id stands for.
pub fn judge(
    input: &Value,
    context: &[Item],
    resolve: &dyn Fn(&str) -> Option<Item>,
) -> Vec<Breach> {
    let mut w = Walk::default();
    for item in context {
        w.context_item(item);
    }
    if let Value::Array(items) = input {
        for (i, v) in items.iter().enumerate() {
            w.item(i, v, items.get(i + 1), resolve);
        }
    }
    w.finish()
}

#[derive(Default)]
struct Walk {
    out: Vec<Breach>,
    /// Each call id with where its call is and what identifies it.
    calls: BTreeMap<String, (Option<usize>, String)>,
    /// Each answered call id with where its output is.
    answered: BTreeMap<String, Option<usize>>,
    /// Each item id with where it is.
    ids: BTreeMap<String, Option<usize>>,
    /// An item_reference nothing resolves was met.
    unresolved: bool,
}

fn kind_of(v: &Value) -> Option<&str> {
    match v.get("type") {
        Some(Value::String(t)) => Some(t),
        None if v.get("role").is_some() => Some("message"),
        _ => None,
    }
}

fn place(at: Option<usize>) -> String {
    match at {
        Some(i) => format!("input[{i}]"),
        None => "the previous response".to_owned(),
    }
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

    fn context_item(&mut self, item: &Item) {
        match item {
            Item::ToolCall { call_id, name, .. } => {
                let ex = serde_json::json!({"call_id": call_id, "name": name}).to_string();
                self.calls.entry(call_id.clone()).or_insert((None, ex));
            }
            Item::ToolResult { call_id, .. } => {
                self.answered.entry(call_id.clone()).or_insert(None);
            }
            _ => {}
        }
        if let Some(id) = item.item_id() {
            self.ids.entry(id.to_owned()).or_insert(None);
        }
    }

    fn item(
        &mut self,
        i: usize,
        v: &Value,
        next: Option<&Value>,
        resolve: &dyn Fn(&str) -> Option<Item>,
    ) {
        let Some(kind) = kind_of(v) else {
            return;
        };
        if kind != "item_reference"
            && let Some(Value::String(id)) = v.get("id")
        {
            self.item_id(i, kind, id, v);
        }
        match kind {
            "message" => self.message(i, v),
            "function_call" | "custom_tool_call" => self.call(i, kind, v),
            "function_call_output" | "custom_tool_call_output" => self.output(i, v),
            "reasoning" => self.reasoning(i, v, next, resolve),
            "item_reference" => {
                let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
                match resolve(id) {
                    Some(Item::ToolCall { call_id, .. }) => self.call_id(i, &call_id, v),
                    Some(Item::ToolResult { call_id, .. }) => self.answers(i, &call_id, v),
                    Some(Item::Reasoning(_)) => self.reasoning(i, v, next, resolve),
                    Some(_) => {}
                    None => self.unresolved = true,
                }
            }
            _ => {}
        }
    }

    fn item_id(&mut self, i: usize, kind: &str, id: &str, v: &Value) {
        if let Some((_, prefix)) = PREFIX.iter().find(|(k, _)| *k == kind)
            && !id.starts_with(prefix)
        {
            let detail = format!("{kind} id {id:?} does not begin with {prefix:?}");
            self.push("bad_item_id", Some(i), detail, identity(v));
        } else if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            let detail = format!(
                "{kind} id {id:?} holds a character other than letters, digits, '_' and '-'"
            );
            self.push("bad_item_id", Some(i), detail, identity(v));
        }
        match self.ids.get(id) {
            Some(first) => {
                let detail = format!("item id {id} is already used by {}", place(*first));
                self.push("duplicate_item_id", Some(i), detail, identity(v));
            }
            None => {
                self.ids.insert(id.to_owned(), Some(i));
            }
        }
    }

    fn message(&mut self, i: usize, v: &Value) {
        let role = match v.get("role") {
            Some(Value::String(r)) if ROLES.contains(&r.as_str()) => r.as_str(),
            Some(r) => {
                let detail =
                    format!("message role {r} is not user, assistant, system or developer");
                self.push("bad_role", Some(i), detail, identity(v));
                return;
            }
            None => return,
        };
        let allowed: &[&str] = if role == "assistant" {
            &ASSISTANT_PARTS
        } else {
            &INPUT_PARTS
        };
        self.parts(
            i,
            v.get("content"),
            allowed,
            "part_not_for_role",
            &format!("a {role} message"),
            v,
        );
    }

    /// Judges the part types of `content` (a string is always accepted).
    fn parts(
        &mut self,
        i: usize,
        content: Option<&Value>,
        allowed: &[&str],
        kind: &'static str,
        what: &str,
        v: &Value,
    ) {
        let Some(Value::Array(parts)) = content else {
            return;
        };
        for (k, p) in parts.iter().enumerate() {
            if let Some(Value::String(t)) = p.get("type")
                && !allowed.contains(&t.as_str())
            {
                let detail = format!(
                    "{what} holds a {t:?} part at content[{k}] (it takes {})",
                    allowed.join(", ")
                );
                self.push(kind, Some(i), detail, identity(v));
                return;
            }
        }
    }

    fn call(&mut self, i: usize, kind: &str, v: &Value) {
        for field in ["call_id", "name"] {
            if v.get(field).and_then(Value::as_str) == Some("") {
                let detail = format!("{kind} has an empty {field}");
                self.push("empty_call_field", Some(i), detail, identity(v));
            }
        }
        let args = if kind == "function_call" {
            "arguments"
        } else {
            "input"
        };
        if let Some(a) = v.get(args).filter(|a| !a.is_string()) {
            let detail = format!("{kind} {args} is {}, not a string", type_name(a));
            self.push("arguments_not_string", Some(i), detail, identity(v));
        }
        if let Some(Value::String(id)) = v.get("call_id")
            && !id.is_empty()
        {
            self.call_id(i, id, v);
        }
    }

    fn call_id(&mut self, i: usize, id: &str, v: &Value) {
        match self.calls.get(id) {
            Some((first, _)) => {
                let detail = format!(
                    "call_id {id} is already the call_id of the function_call at {}",
                    place(*first)
                );
                self.push("duplicate_call_id", Some(i), detail, identity(v));
            }
            None => {
                self.calls.insert(id.to_owned(), (Some(i), identity(v)));
            }
        }
    }

    fn output(&mut self, i: usize, v: &Value) {
        let what = "a function_call_output";
        self.parts(
            i,
            v.get("output"),
            &OUTPUT_PARTS,
            "output_part_not_allowed",
            what,
            v,
        );
        match v.get("call_id") {
            Some(Value::String(id)) if id.is_empty() => {
                let detail = "function_call_output has an empty call_id".to_owned();
                self.push("empty_call_field", Some(i), detail, identity(v));
            }
            Some(Value::String(id)) => self.answers(i, id, v),
            // An output attributed by `name` answers no call (the wire reader's
            // NamedOutput): nothing to pair.
            _ => {}
        }
    }

    fn answers(&mut self, i: usize, id: &str, v: &Value) {
        if !self.calls.contains_key(id) {
            if !self.unresolved {
                let detail = format!(
                    "function_call_output answers call_id {id}, which no function_call before it has"
                );
                self.push("output_without_call", Some(i), detail, identity(v));
            }
            return;
        }
        match self.answered.get(id) {
            Some(first) => {
                let detail = format!(
                    "call_id {id} is already answered by the function_call_output at {}",
                    place(*first)
                );
                self.push("duplicate_output", Some(i), detail, identity(v));
            }
            None => {
                self.answered.insert(id.to_owned(), Some(i));
            }
        }
    }

    fn reasoning(
        &mut self,
        i: usize,
        v: &Value,
        next: Option<&Value>,
        resolve: &dyn Fn(&str) -> Option<Item>,
    ) {
        let follower = match next {
            None => Err("ends the input".to_owned()),
            Some(n) => match kind_of(n) {
                Some("message") => match n.get("role").and_then(Value::as_str) {
                    Some("assistant") => Ok(()),
                    other => Err(format!(
                        "is followed by a {} message",
                        other.unwrap_or("role-less")
                    )),
                },
                Some(k) if MODEL_ITEMS.contains(&k) => Ok(()),
                Some("item_reference") => {
                    let id = n.get("id").and_then(Value::as_str).unwrap_or_default();
                    match resolve(id) {
                        None
                        | Some(Item::ToolCall { .. } | Item::Reasoning(_) | Item::Opaque { .. }) => {
                            Ok(())
                        }
                        Some(Item::Message {
                            role: Role::Assistant,
                            ..
                        }) => Ok(()),
                        Some(_) => Err(format!(
                            "is followed by a reference to {id}, which the model did not produce"
                        )),
                    }
                }
                Some(k) => Err(format!("is followed by a {k}")),
                None => Ok(()),
            },
        };
        if let Err(why) = follower {
            let id = v.get("id").and_then(Value::as_str).unwrap_or("(no id)");
            let detail = format!("reasoning item {id} {why}, not by the item it preceded");
            self.push("reasoning_without_follower", Some(i), detail, identity(v));
        }
    }

    fn finish(mut self) -> Vec<Breach> {
        if !self.unresolved {
            let open: Vec<(String, Option<usize>, String)> = self
                .calls
                .iter()
                .filter(|(id, _)| !self.answered.contains_key(*id))
                .map(|(id, (at, ex))| (id.clone(), *at, ex.clone()))
                .collect();
            for (id, at, ex) in open {
                let detail = format!("function_call {id} has no function_call_output");
                self.push("call_without_output", at, detail, ex);
            }
        }
        self.out.sort_by_key(|b| b.at.map_or(0, |i| i + 1));
        self.out
    }
}
