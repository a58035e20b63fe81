//! OpenAI's two formats (Responses `input` items, Chat Completions `messages`) as the
//! judge reads them: the protocol-neutral [`crate::openai::neutral::Conversation`]
//! laid onto the judge's own message model, so the rules that judge Messages API
//! traffic (pairing, duplicate ids, append-only history, prefix changes) judge OpenAI
//! traffic too, unchanged.
//!
//! Guarantee: the layout invents and drops nothing the rules read. Runs of items of one
//! side become one message of that side, in wire order: assistant text, reasoning and
//! function calls are the assistant's; user text and function-call outputs the user's;
//! system and developer messages stay `system` entries at their place. A call's
//! `call_id` is the tool-use id and its output's `call_id` the tool-result id, so
//! "every call answered by the very next user message" is exactly OpenAI's "every
//! `function_call` has its `function_call_output`, and a Chat `tool` message follows
//! its assistant message". A reasoning item is a thinking block whose signature is its
//! identity (id, summary, encrypted content — never its bytes, so Codex's extra
//! `"content": null` is no change). Every message and block remembers the wire index it
//! came from, so a finding names `input[i]` or `messages[i]` as the client sent them;
//! items from a `previous_response_id` context have no wire index and say so.
//! Item references and item types the view does not model are listed in
//! [`Laid::unjudged`], never judged as if absent silently.

use crate::openai::neutral::{Conversation, Item, Part, Reasoning, Role, text_of};
use serde_json::{Value, json};

/// Where a block of the laid-out messages came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `input[i]` / `messages[i]` of the request as sent.
    Sent(usize),
    /// The context a `previous_response_id` stands for.
    Context,
}

/// A conversation laid onto the judge's message model.
#[derive(Clone, Debug)]
pub struct Laid {
    /// An Anthropic Messages body (`model`, `system`, `tools`, `messages`, `thinking`)
    /// that [`super::anthropic::parse_request`] reads.
    pub body: Value,
    /// For each laid message, the origin of each of its blocks (one entry for a
    /// `system` entry).
    pub origins: Vec<Vec<Origin>>,
    /// `kind at input[i]` of each item not judged (references, opaque items).
    pub unjudged: Vec<String>,
}

impl Laid {
    /// The wire index a finding at laid message `message`, block `block` points at.
    pub fn origin(&self, message: Option<usize>, block: Option<usize>) -> Option<Origin> {
        let blocks = self.origins.get(message?)?;
        blocks.get(block.unwrap_or(0)).or(blocks.first()).cloned()
    }
}

/// The sides a neutral item falls on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    System,
    User,
    Assistant,
}

fn part_block(p: &Part) -> Value {
    match p {
        Part::Text(t) | Part::Refusal(t) => json!({"type": "text", "text": t}),
        Part::Other { kind, raw } => json!({"type": "text", "text": format!("<{kind}> {raw}")}),
    }
}

/// A reasoning item's identity, as the signature of its thinking block.
pub fn reasoning_signature(r: &Reasoning) -> String {
    json!({"id": r.id, "summary": r.summary, "encrypted_content": r.encrypted_content}).to_string()
}

/// A call's arguments as a tool-use `input`: the parsed object, or the raw string
/// kept under `arguments` when it is not a JSON object (a client must still answer it).
fn call_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({"arguments": arguments}),
    }
}

fn item_block(item: &Item) -> Option<(Side, Value)> {
    Some(match item {
        Item::Message { role, parts, .. } => {
            let side = match role {
                Role::System | Role::Developer => Side::System,
                Role::User => Side::User,
                Role::Assistant => Side::Assistant,
            };
            if side == Side::System {
                return Some((side, json!(text_of(parts))));
            }
            // One block per message part would split a message's text; the judge reads
            // one text block per message, which is what the wire means.
            let text = match parts.as_slice() {
                [one] => return Some((side, part_block(one))),
                _ => parts
                    .iter()
                    .map(|p| part_block(p)["text"].as_str().unwrap_or("").to_owned())
                    .collect::<String>(),
            };
            (side, json!({"type": "text", "text": text}))
        }
        Item::ToolCall {
            call_id,
            name,
            arguments,
            ..
        } => (
            Side::Assistant,
            json!({"type": "tool_use", "id": call_id, "name": name, "input": call_input(arguments)}),
        ),
        Item::ToolResult {
            call_id, output, ..
        } => (
            Side::User,
            json!({"type": "tool_result", "tool_use_id": call_id, "content": text_of(output)}),
        ),
        // An output that answers no call is context the client supplies: judged as the
        // user's text (order, append-only), never paired.
        Item::NamedOutput { name, output, .. } => (
            Side::User,
            json!({"type": "text", "text": format!("[{name} output] {}", text_of(output))}),
        ),
        Item::Reasoning(r) => (
            Side::Assistant,
            json!({"type": "thinking", "thinking": r.summary.join("\n"), "signature": reasoning_signature(r)}),
        ),
        Item::Reference { .. } | Item::Opaque { .. } => return None,
    })
}

fn item_name(item: &Item) -> String {
    match item {
        Item::Reference { id } => format!("item_reference {id}"),
        Item::Opaque { kind, id } => match id {
            Some(id) => format!("{kind} {id}"),
            None => kind.clone(),
        },
        _ => "item".into(),
    }
}

/// The client's function tools as the judge's tool list: name, description, schema,
/// read from `tools` as sent (Responses' flat shape or Chat's `function` wrapper).
pub fn function_tools(raw_tools: &[Value]) -> Vec<Value> {
    raw_tools
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f.get("name").and_then(Value::as_str)?;
            Some(json!({
                "name": name,
                "description": f.get("description").and_then(Value::as_str).unwrap_or(""),
                "input_schema": f.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
            }))
        })
        .collect()
}

/// Lays `context` (items a `previous_response_id` stands for) then `conv`'s entries
/// onto the judge's message model.
pub fn lay(
    conv: &Conversation,
    context: &[Item],
    raw_tools: &[Value],
    stream: bool,
    thinking: bool,
) -> Laid {
    let mut messages: Vec<Value> = Vec::new();
    let mut origins: Vec<Vec<Origin>> = Vec::new();
    let mut layer = Layer::default();
    let all = context.iter().map(|i| (Origin::Context, i)).chain(
        conv.entries
            .iter()
            .map(|e| (Origin::Sent(e.source), &e.item)),
    );
    let mut emit = |m: Value, o: Vec<Origin>| {
        messages.push(m);
        origins.push(o);
    };
    for (origin, item) in all {
        layer.push(origin, item, &mut emit);
    }
    let unjudged = layer.finish(&mut emit);
    let mut body = json!({
        "model": conv.prefix.model,
        "messages": messages,
        "tools": function_tools(raw_tools),
        "stream": stream,
    });
    if let Some(i) = &conv.prefix.instructions {
        body["system"] = json!(i);
    }
    if thinking {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    }
    Laid {
        body,
        origins,
        unjudged,
    }
}

/// The layout of [`lay`] one item at a time, for a reader that must not hold the whole
/// conversation (a Codex rollout): a laid message is handed on as soon as the next
/// item shows it is complete, so what is held is one message, however long the
/// conversation. [`lay`] is this same layer run over a whole conversation.
#[derive(Default)]
pub struct Layer {
    /// The message still open to more blocks of its side, with its blocks' origins.
    held: Option<(Value, Vec<Origin>)>,
    open: Option<Side>,
    /// Whether the last block laid (of a user or assistant message) is a tool result.
    ends_in_result: bool,
    unjudged: Vec<String>,
}

impl Layer {
    /// Lays one item; every message it completes goes to `emit`, in order.
    pub fn push(&mut self, origin: Origin, item: &Item, emit: &mut impl FnMut(Value, Vec<Origin>)) {
        let Some((side, block)) = item_block(item) else {
            let at = match origin {
                Origin::Sent(i) => format!("input[{i}]"),
                Origin::Context => "the previous response's context".into(),
            };
            self.unjudged.push(format!("{} at {at}", item_name(item)));
            return;
        };
        if side == Side::System {
            if let Some((m, o)) = self.held.take() {
                emit(m, o);
            }
            emit(json!({"role": "system", "content": block}), vec![origin]);
            self.open = None;
            self.ends_in_result = false;
            return;
        }
        let is_result = block["type"] == "tool_result";
        // A user message after tool results starts its own laid message: on the wire
        // it is a new item appended after them (a prompt after an interrupted turn),
        // and joining it to their message would make that append look like an edit.
        let after_results = matches!(item, Item::Message { .. }) && self.ends_in_result;
        self.ends_in_result = is_result;
        if self.open == Some(side)
            && !after_results
            && let Some((m, o)) = self.held.as_mut()
            && let Some(Value::Array(blocks)) = m.get_mut("content")
        {
            blocks.push(block);
            o.push(origin);
            return;
        }
        if let Some((m, o)) = self.held.take() {
            emit(m, o);
        }
        let role = if side == Side::User {
            "user"
        } else {
            "assistant"
        };
        self.held = Some((json!({"role": role, "content": [block]}), vec![origin]));
        self.open = Some(side);
    }

    /// Hands on the message still held; returns `kind at input[i]` of each item not
    /// judged.
    pub fn finish(mut self, emit: &mut impl FnMut(Value, Vec<Origin>)) -> Vec<String> {
        if let Some((m, o)) = self.held.take() {
            emit(m, o);
        }
        self.unjudged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::anthropic::parse_request;
    use crate::openai::responses_request;

    fn laid(body: &str) -> Laid {
        let req = responses_request::parse(body.as_bytes()).unwrap();
        lay(&req.to_neutral(), &[], &req.tools_raw, true, false)
    }

    #[test]
    fn calls_and_outputs_become_tool_use_and_tool_result_of_adjacent_messages() {
        let l = laid(
            r#"{"model":"m","input":[
            {"type":"message","role":"developer","content":[{"type":"input_text","text":"d"}]},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"u"}]},
            {"type":"reasoning","id":"rs_1","summary":[],"content":null},
            {"type":"function_call","call_id":"c1","name":"sh","arguments":"{\"cmd\":\"ls\"}"},
            {"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
        );
        let m = l.body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0]["role"], "system");
        assert_eq!(m[2]["content"][1]["id"], "c1");
        assert_eq!(m[2]["content"][1]["input"]["cmd"], "ls");
        assert_eq!(m[3]["content"][0]["tool_use_id"], "c1");
        assert_eq!(l.origin(Some(2), Some(1)), Some(Origin::Sent(3)));
        let parsed = parse_request(l.body.to_string().as_bytes()).unwrap();
        assert_eq!(parsed.typed.len(), 3);
    }

    #[test]
    fn echoed_reasoning_with_content_null_has_the_same_signature() {
        let a = laid(
            r#"{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"content":null}]}"#,
        );
        let b = laid(r#"{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]}]}"#);
        assert_eq!(a.body["messages"], b.body["messages"]);
    }

    #[test]
    fn a_named_output_follows_the_tool_result_as_user_text_and_pairs_nothing() {
        let l = laid(
            r#"{"model":"m","input":[
            {"type":"message","role":"user","content":[{"type":"input_text","text":"u"}]},
            {"type":"function_call","call_id":"c1","name":"create_goal","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"ok"},
            {"type":"function_call_output","name":"goal_objective","namespace":"agent","output":"g"}]}"#,
        );
        let m = l.body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[2]["content"][0]["tool_use_id"], "c1");
        assert_eq!(
            m[2]["content"][1],
            json!({"type": "text", "text": "[agent.goal_objective output] g"})
        );
        assert!(l.unjudged.is_empty());
    }

    #[test]
    fn a_prompt_after_tool_results_is_its_own_message_so_appending_it_edits_nothing() {
        let before = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"u"}]},
            {"type":"function_call","call_id":"c1","name":"sh","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"ok"}"#;
        let a = laid(&format!(r#"{{"model":"m","input":[{before}]}}"#));
        let b = laid(&format!(
            r#"{{"model":"m","input":[{before},
            {{"type":"message","role":"user","content":[{{"type":"input_text","text":"more"}}]}}]}}"#
        ));
        let (ma, mb) = (
            a.body["messages"].as_array().unwrap(),
            b.body["messages"].as_array().unwrap(),
        );
        assert_eq!(mb.len(), ma.len() + 1);
        assert_eq!(mb[..ma.len()], ma[..]);
        assert_eq!(mb[ma.len()]["content"][0]["text"], "more");
    }

    #[test]
    fn references_are_listed_as_unjudged() {
        let l = laid(r#"{"model":"m","input":[{"type":"item_reference","id":"msg_9"}]}"#);
        assert_eq!(l.unjudged, vec!["item_reference msg_9 at input[0]"]);
    }
}
