//! A `POST /v1/responses` body, parsed into a typed model and mapped to the neutral
//! [`Conversation`](super::neutral::Conversation).
//!
//! Guarantee: every item shape real clients were seen sending parses (Codex 0.171.0's
//! typed items with client-made ids and `"content": null` on echoed reasoning,
//! openai-agents' type-less `{"role","content"}` messages, function and namespace and
//! `web_search` tools — captures in `sim/tests/data/openai/`), and anything the real
//! API would reject as malformed is a [`WireError`] naming the field. Unknown item or
//! content-part types are errors, not skipped: a conversation never loses an item.
//!
//! A `function_call_output` may carry `name`/`namespace` and no `call_id`: the
//! published schema (the `openai` SDK 3.57.0's generated `ResponseInputItemParam`
//! types) makes `call_id` optional and names "the tool that produced the output".
//! Codex 0.171.0 sends one for its goal context (`agent.goal_objective`). Such an
//! item answers no call, so it becomes a [`InputItem::NamedOutput`], judged as the
//! client's own context, never as an orphaned result; one with neither `call_id` nor
//! `name` cannot be attributed to anything and is an error naming `call_id`.

use super::field::{
    WireError, as_array, as_object, as_str, index, join, opt_array, opt_bool, opt_str, parse_body,
    req_str, type_name,
};
use super::neutral::{Conversation, Entry, Item, Part, Prefix, Reasoning, Role, Tool, Wire};
use serde_json::{Map, Value};

/// Input item types that are valid on the wire but not modelled by the neutral view.
const OPAQUE_ITEM_TYPES: &[&str] = &[
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "image_generation_call",
    "code_interpreter_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "compaction",
];

/// One parsed `input` item.
#[derive(Debug, Clone, PartialEq)]
pub enum InputItem {
    Message {
        id: Option<String>,
        role: Role,
        content: Vec<Part>,
    },
    FunctionCall {
        id: Option<String>,
        call_id: String,
        name: String,
        arguments: String,
        namespace: Option<String>,
    },
    FunctionCallOutput {
        id: Option<String>,
        call_id: String,
        output: Vec<Part>,
    },
    /// A `function_call_output` without `call_id`, attributed to a tool by name.
    NamedOutput {
        id: Option<String>,
        name: String,
        namespace: Option<String>,
        output: Vec<Part>,
    },
    CustomToolCall {
        id: Option<String>,
        call_id: String,
        name: String,
        input: String,
    },
    CustomToolCallOutput {
        id: Option<String>,
        call_id: String,
        output: Vec<Part>,
    },
    Reasoning(Reasoning),
    ItemReference {
        id: String,
    },
    Opaque {
        kind: String,
        id: Option<String>,
    },
}

/// A parsed Responses request.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponsesRequest {
    pub model: String,
    pub instructions: Option<String>,
    pub input: Vec<InputItem>,
    pub previous_response_id: Option<String>,
    pub tools: Vec<Tool>,
    /// `tools` as sent, echoed back in the response object as the API does.
    pub tools_raw: Vec<Value>,
    pub tool_choice: Option<Value>,
    pub parallel_tool_calls: Option<bool>,
    pub stream: bool,
    pub store: Option<bool>,
    pub include: Vec<String>,
}

impl ResponsesRequest {
    /// Whether the client asked for reasoning items' `encrypted_content`.
    pub fn wants_encrypted_reasoning(&self) -> bool {
        self.include
            .iter()
            .any(|s| s == "reasoning.encrypted_content")
    }

    /// The neutral view of this request.
    pub fn to_neutral(&self) -> Conversation {
        let entries = self
            .input
            .iter()
            .enumerate()
            .map(|(source, item)| Entry {
                source,
                item: neutral_item(item),
            })
            .collect();
        Conversation {
            wire: Wire::Responses,
            prefix: Prefix {
                model: self.model.clone(),
                instructions: self.instructions.clone(),
                tools: self.tools.clone(),
            },
            entries,
            continues: self.previous_response_id.clone(),
        }
    }
}

/// The neutral view of one input item (also how a Codex rollout `response_item`
/// payload, which has the same shapes, is read).
pub fn neutral_item(item: &InputItem) -> Item {
    match item.clone() {
        InputItem::Message { id, role, content } => Item::Message {
            role,
            id,
            parts: content,
        },
        InputItem::FunctionCall {
            id,
            call_id,
            name,
            arguments,
            namespace,
        } => Item::ToolCall {
            call_id,
            name: match namespace {
                Some(ns) => format!("{ns}.{name}"),
                None => name,
            },
            arguments,
            item_id: id,
        },
        InputItem::CustomToolCall {
            id,
            call_id,
            name,
            input,
        } => Item::ToolCall {
            call_id,
            name,
            arguments: input,
            item_id: id,
        },
        InputItem::FunctionCallOutput {
            id,
            call_id,
            output,
        }
        | InputItem::CustomToolCallOutput {
            id,
            call_id,
            output,
        } => Item::ToolResult {
            call_id,
            output,
            item_id: id,
        },
        InputItem::NamedOutput {
            id,
            name,
            namespace,
            output,
        } => Item::NamedOutput {
            name: match namespace {
                Some(ns) => format!("{ns}.{name}"),
                None => name,
            },
            output,
            item_id: id,
        },
        InputItem::Reasoning(r) => Item::Reasoning(r),
        InputItem::ItemReference { id } => Item::Reference { id },
        InputItem::Opaque { kind, id } => Item::Opaque { kind, id },
    }
}

/// Parses a Responses request body.
pub fn parse(body: &[u8]) -> Result<ResponsesRequest, WireError> {
    let obj = parse_body(body)?;
    let model = req_str(&obj, "", "model")?;
    let input = match obj.get("input") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![InputItem::Message {
            id: None,
            role: Role::User,
            content: vec![Part::Text(s.clone())],
        }],
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| parse_item(v, &index("input", i)))
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(WireError::new(
                "input",
                format!("expected a string or an array, got {}", type_name(v)),
            ));
        }
    };
    let tools_raw = opt_array(&obj, "", "tools")?.cloned().unwrap_or_default();
    let mut tools = Vec::new();
    for (i, t) in tools_raw.iter().enumerate() {
        parse_tool(t, &index("tools", i), None, &mut tools)?;
    }
    let include = opt_array(&obj, "", "include")?
        .map(|arr| {
            arr.iter()
                .enumerate()
                .map(|(i, v)| as_str(v, &index("include", i)).map(str::to_string))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    Ok(ResponsesRequest {
        model,
        instructions: opt_str(&obj, "", "instructions")?,
        input,
        previous_response_id: opt_str(&obj, "", "previous_response_id")?,
        tools,
        tools_raw,
        tool_choice: obj.get("tool_choice").cloned(),
        parallel_tool_calls: opt_bool(&obj, "", "parallel_tool_calls")?,
        stream: opt_bool(&obj, "", "stream")?.unwrap_or(false),
        store: opt_bool(&obj, "", "store")?,
        include,
    })
}

fn parse_role(obj: &Map<String, Value>, path: &str) -> Result<Role, WireError> {
    let role = req_str(obj, path, "role")?;
    match role.as_str() {
        "system" => Ok(Role::System),
        "developer" => Ok(Role::Developer),
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        other => Err(WireError::new(
            join(path, "role"),
            format!("unknown role `{other}` (expected system, developer, user or assistant)"),
        )),
    }
}

/// Parses one input item; `path` names it in errors (`input[3]`, or a rollout line).
pub fn parse_item(value: &Value, path: &str) -> Result<InputItem, WireError> {
    parse_item_from(value, path, Ids::Sent)
}

/// Whether a reasoning item must carry its `id`: a request names the item it echoes
/// (`Sent`); a Codex rollout saves items without ids (its item types skip serializing
/// them, 0.171.0 aside), so there an id-less reasoning item is a faithful line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ids {
    Sent,
    Logged,
}

/// [`parse_item`] for a `response_item` of a Codex rollout.
pub fn parse_logged_item(value: &Value, path: &str) -> Result<InputItem, WireError> {
    parse_item_from(value, path, Ids::Logged)
}

fn parse_item_from(value: &Value, path: &str, ids: Ids) -> Result<InputItem, WireError> {
    let obj = as_object(value, path)?;
    let id = opt_str(obj, path, "id")?;
    let kind = match obj.get("type") {
        // The SDKs' "easy" message form carries no type.
        None if obj.contains_key("role") => "message".to_string(),
        None => return Err(WireError::new(join(path, "type"), "missing")),
        Some(v) => as_str(v, &join(path, "type"))?.to_string(),
    };
    match kind.as_str() {
        "message" => Ok(InputItem::Message {
            id,
            role: parse_role(obj, path)?,
            content: parse_content(obj.get("content"), &join(path, "content"))?,
        }),
        "function_call" => Ok(InputItem::FunctionCall {
            id,
            call_id: req_str(obj, path, "call_id")?,
            name: req_str(obj, path, "name")?,
            arguments: req_str(obj, path, "arguments")?,
            namespace: opt_str(obj, path, "namespace")?,
        }),
        "function_call_output" => parse_function_call_output(obj, path, id),
        "custom_tool_call" => Ok(InputItem::CustomToolCall {
            id,
            call_id: req_str(obj, path, "call_id")?,
            name: req_str(obj, path, "name")?,
            input: req_str(obj, path, "input")?,
        }),
        "custom_tool_call_output" => Ok(InputItem::CustomToolCallOutput {
            id,
            call_id: req_str(obj, path, "call_id")?,
            output: parse_output(obj, path)?,
        }),
        "reasoning" => Ok(InputItem::Reasoning(parse_reasoning(obj, path, ids)?)),
        "item_reference" => Ok(InputItem::ItemReference {
            id: req_str(obj, path, "id")?,
        }),
        other if OPAQUE_ITEM_TYPES.contains(&other) => Ok(InputItem::Opaque {
            kind: other.to_string(),
            id,
        }),
        other => Err(WireError::new(
            join(path, "type"),
            format!("unknown input item type `{other}`"),
        )),
    }
}

fn parse_function_call_output(
    obj: &Map<String, Value>,
    path: &str,
    id: Option<String>,
) -> Result<InputItem, WireError> {
    let output = parse_output(obj, path)?;
    if let Some(call_id) = opt_str(obj, path, "call_id")? {
        return Ok(InputItem::FunctionCallOutput {
            id,
            call_id,
            output,
        });
    }
    match opt_str(obj, path, "name")? {
        Some(name) => Ok(InputItem::NamedOutput {
            id,
            name,
            namespace: opt_str(obj, path, "namespace")?,
            output,
        }),
        None => Err(WireError::new(
            join(path, "call_id"),
            "missing (an output needs the call_id it answers, or the name of the tool that produced it)",
        )),
    }
}

fn parse_reasoning(obj: &Map<String, Value>, path: &str, ids: Ids) -> Result<Reasoning, WireError> {
    let id = match ids {
        Ids::Sent => Some(req_str(obj, path, "id")?),
        Ids::Logged => opt_str(obj, path, "id")?,
    };
    let summary_path = join(path, "summary");
    let summary = match obj.get("summary") {
        None => return Err(WireError::new(summary_path, "missing")),
        Some(v) => as_array(v, &summary_path)?
            .iter()
            .enumerate()
            .map(|(i, part)| {
                let p = index(&summary_path, i);
                let part = as_object(part, &p)?;
                let kind = req_str(part, &p, "type")?;
                if kind != "summary_text" {
                    return Err(WireError::new(
                        join(&p, "type"),
                        format!("expected `summary_text`, got `{kind}`"),
                    ));
                }
                req_str(part, &p, "text")
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    // `content` (reasoning text) is accepted as null or an array and not judged: Codex
    // adds `"content": null` to every reasoning item it echoes.
    match obj.get("content") {
        None | Some(Value::Null) | Some(Value::Array(_)) => {}
        Some(v) => {
            return Err(WireError::new(
                join(path, "content"),
                format!("expected null or an array, got {}", type_name(v)),
            ));
        }
    }
    Ok(Reasoning {
        id,
        summary,
        encrypted_content: opt_str(obj, path, "encrypted_content")?,
    })
}

fn parse_output(obj: &Map<String, Value>, path: &str) -> Result<Vec<Part>, WireError> {
    let out_path = join(path, "output");
    match obj.get("output") {
        None => Err(WireError::new(out_path, "missing")),
        Some(v) => parse_content(Some(v), &out_path),
    }
}

/// Message content or tool output: a string, or an array of typed parts.
pub(crate) fn parse_content(value: Option<&Value>, path: &str) -> Result<Vec<Part>, WireError> {
    match value {
        None => Err(WireError::new(path, "missing")),
        Some(Value::String(s)) => Ok(vec![Part::Text(s.clone())]),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(i, p)| parse_part(p, &index(path, i)))
            .collect(),
        Some(v) => Err(WireError::new(
            path,
            format!("expected a string or an array, got {}", type_name(v)),
        )),
    }
}

fn parse_part(value: &Value, path: &str) -> Result<Part, WireError> {
    let obj = as_object(value, path)?;
    let kind = req_str(obj, path, "type")?;
    match kind.as_str() {
        "input_text" | "output_text" | "text" | "summary_text" => {
            Ok(Part::Text(req_str(obj, path, "text")?))
        }
        "refusal" => Ok(Part::Refusal(req_str(obj, path, "refusal")?)),
        "input_image" | "input_file" | "input_audio" | "image_url" | "file" => Ok(Part::Other {
            kind,
            raw: value.clone(),
        }),
        other => Err(WireError::new(
            join(path, "type"),
            format!("unknown content part type `{other}`"),
        )),
    }
}

fn parse_tool(
    value: &Value,
    path: &str,
    namespace: Option<&str>,
    out: &mut Vec<Tool>,
) -> Result<(), WireError> {
    let obj = as_object(value, path)?;
    let kind = req_str(obj, path, "type")?;
    match kind.as_str() {
        "function" => out.push(Tool::Function {
            name: req_str(obj, path, "name")?,
            namespace: namespace.map(str::to_string),
        }),
        "custom" => out.push(Tool::Custom {
            name: req_str(obj, path, "name")?,
        }),
        "namespace" if namespace.is_none() => {
            let name = req_str(obj, path, "name")?;
            let inner = match opt_array(obj, path, "tools")? {
                Some(tools) => tools,
                None => return Err(WireError::new(join(path, "tools"), "missing")),
            };
            for (i, t) in inner.iter().enumerate() {
                parse_tool(t, &index(&join(path, "tools"), i), Some(&name), out)?;
            }
        }
        "namespace" => {
            return Err(WireError::new(
                join(path, "type"),
                "a namespace cannot nest another namespace",
            ));
        }
        // Hosted tools (web_search, file_search, code_interpreter, …) carry no name.
        _ => out.push(Tool::Hosted { kind }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_input_is_one_user_message() {
        let req = parse(br#"{"model":"m","input":"hi"}"#).unwrap();
        assert_eq!(
            req.input,
            vec![InputItem::Message {
                id: None,
                role: Role::User,
                content: vec![Part::Text("hi".into())]
            }]
        );
        assert!(!req.stream);
    }

    #[test]
    fn function_call_without_call_id_is_rejected_naming_the_item() {
        let body = br#"{"model":"m","input":[{"role":"user","content":"x"},
            {"type":"function_call","name":"f","arguments":"{}"}]}"#;
        let err = parse(body).unwrap_err();
        assert_eq!(err.to_string(), "`input[1].call_id`: missing");
    }

    #[test]
    fn an_output_without_call_id_is_attributed_to_its_namespaced_tool() {
        // Codex 0.171.0's goal context item, as it sent it on resume.
        let body = br#"{"model":"m","input":[{"type":"function_call_output",
            "id":"fco_1","name":"goal_objective","namespace":"agent","output":"o"}]}"#;
        let req = parse(body).unwrap();
        assert_eq!(
            req.to_neutral().entries[0].item,
            Item::NamedOutput {
                name: "agent.goal_objective".into(),
                output: vec![Part::Text("o".into())],
                item_id: Some("fco_1".into())
            }
        );
    }

    #[test]
    fn an_output_with_neither_call_id_nor_name_is_rejected_naming_call_id() {
        let body = br#"{"model":"m","input":[{"type":"function_call_output","output":"o"}]}"#;
        let err = parse(body).unwrap_err();
        assert_eq!(err.path, "input[0].call_id");
    }

    #[test]
    fn unknown_item_type_is_an_error_not_a_skip() {
        let err = parse(br#"{"model":"m","input":[{"type":"frobnicate"}]}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`input[0].type`: unknown input item type `frobnicate`"
        );
    }

    #[test]
    fn reasoning_echo_with_null_content_keeps_its_identity() {
        let body = br#"{"model":"m","input":[{"type":"reasoning","id":"rs_1",
            "summary":[{"type":"summary_text","text":"s"}],"content":null,"encrypted_content":"E"}]}"#;
        let req = parse(body).unwrap();
        assert_eq!(
            req.input,
            vec![InputItem::Reasoning(Reasoning {
                id: Some("rs_1".into()),
                summary: vec!["s".into()],
                encrypted_content: Some("E".into())
            })]
        );
    }

    #[test]
    fn namespace_tools_flatten_with_their_namespace() {
        let body = br#"{"model":"m","tools":[{"type":"namespace","name":"ns",
            "tools":[{"type":"function","name":"a"}]},{"type":"web_search"}]}"#;
        let req = parse(body).unwrap();
        assert_eq!(
            req.tools,
            vec![
                Tool::Function {
                    name: "a".into(),
                    namespace: Some("ns".into())
                },
                Tool::Hosted {
                    kind: "web_search".into()
                }
            ]
        );
    }

    #[test]
    fn bad_message_role_names_the_role_field() {
        let err = parse(br#"{"model":"m","input":[{"role":"tool","content":"x"}]}"#).unwrap_err();
        assert_eq!(err.path, "input[0].role");
    }

    #[test]
    fn stream_of_wrong_type_is_rejected() {
        let err = parse(br#"{"model":"m","stream":1}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`stream`: expected a boolean, got a number"
        );
    }
}
