//! A `generateContent` / `streamGenerateContent` request body, read field by field, and
//! its conversation in the protocol-neutral view.
//!
//! Guarantees:
//! - The reader refuses only what has no meaning (a body that is not an object, a
//!   `contents` that is not an array, a part that is not an object, a function name
//!   that is not a string), each with the JSON path at fault. What the API refuses but
//!   can still be read (an unknown role, an empty `parts`, `args` that is not an
//!   object) is kept as sent, for the judge's rules (`judge::rules_gemini`) to name.
//! - Both spellings the API accepts are read (`functionCall` and `function_call`…).
//! - The neutral view keeps every part in wire order with the index of its `contents`
//!   entry. Gemini pairs a function response with a call of the model turn right
//!   before it by `id` when both carry one, else by `name` in order; the view gives
//!   each call a call id (its own `id`, or one made from its name and place) and each
//!   response the id of the call it answers, so the judge's pairing rule reads
//!   Gemini's pairing as it reads OpenAI's. A response that answers no call of the
//!   turn before keeps an id of its own and stays unpaired.

use super::WireError;
use crate::openai::field::{
    as_array as array, as_object as object, index, join, parse_body, type_name,
};
use crate::openai::neutral::{
    Conversation, Entry, Item, Part as NPart, Prefix, Reasoning, Role, Tool, Wire,
};
use serde_json::{Map, Value, json};

/// One part of a content, as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `text`; `thought: true` marks a thought summary. `thoughtSignature` as sent.
    Text {
        text: String,
        thought: bool,
        signature: Option<String>,
    },
    /// `functionCall {name, args, id?}`; `args` kept as sent (the API wants an object).
    Call {
        name: String,
        args: Value,
        id: Option<String>,
        signature: Option<String>,
    },
    /// `functionResponse {name, response, id?}`.
    Response {
        name: String,
        response: Value,
        id: Option<String>,
    },
    /// Anything else (`inlineData`, `fileData`, `executableCode`…, or a part with no
    /// data at all, kind `(no data)`), kept whole.
    Other { kind: String, raw: Value },
}

/// One entry of `contents`.
#[derive(Debug, Clone, PartialEq)]
pub struct Content {
    /// `role` as sent (`None` when absent; the API reads that as `user`).
    pub role: Option<String>,
    pub parts: Vec<Part>,
}

impl Content {
    /// Whether the model wrote this content.
    pub fn is_model(&self) -> bool {
        self.role.as_deref() == Some("model")
    }
}

/// A declared function.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub description: String,
    /// `parameters` (or `parametersJsonSchema`), `{"type":"object"}` when absent.
    pub parameters: Value,
}

/// A request body.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub contents: Vec<Content>,
    /// The text of `systemInstruction`'s parts.
    pub system: Option<String>,
    pub functions: Vec<Function>,
    /// Tools that are not function declarations (`googleSearch`, `codeExecution`…).
    pub hosted: Vec<String>,
    /// `toolConfig.functionCallingConfig.mode` is `NONE`.
    pub calling_none: bool,
    /// `generationConfig.thinkingConfig.includeThoughts`.
    pub include_thoughts: bool,
}

/// A field under either of the API's spellings.
fn field<'a>(o: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    o.get(camel)
        .or_else(|| o.get(snake))
        .filter(|v| !v.is_null())
}

fn opt_string(
    o: &Map<String, Value>,
    camel: &str,
    snake: &str,
    at: &str,
) -> Result<Option<String>, WireError> {
    match field(o, camel, snake) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(WireError::new(
            join(at, camel),
            format!("expected a string, got {}", type_name(v)),
        )),
    }
}

/// The data fields a part may carry, in both spellings.
const DATA: [(&str, &str); 7] = [
    ("text", "text"),
    ("functionCall", "function_call"),
    ("functionResponse", "function_response"),
    ("inlineData", "inline_data"),
    ("fileData", "file_data"),
    ("executableCode", "executable_code"),
    ("codeExecutionResult", "code_execution_result"),
];

/// Reads one part.
pub fn parse_part(v: &Value, at: &str) -> Result<Part, WireError> {
    let o = object(v, at)?;
    let signature = opt_string(o, "thoughtSignature", "thought_signature", at)?;
    if let Some(t) = o.get("text") {
        let Value::String(text) = t else {
            return Err(WireError::new(
                join(at, "text"),
                format!("expected a string, got {}", type_name(t)),
            ));
        };
        let thought = match o.get("thought") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(x) => {
                return Err(WireError::new(
                    join(at, "thought"),
                    format!("expected a boolean, got {}", type_name(x)),
                ));
            }
        };
        return Ok(Part::Text {
            text: text.clone(),
            thought,
            signature,
        });
    }
    if let Some(c) = field(o, "functionCall", "function_call") {
        let at = join(at, "functionCall");
        let c = object(c, &at)?;
        let name = opt_string(c, "name", "name", &at)?.unwrap_or_default();
        return Ok(Part::Call {
            name,
            args: c.get("args").cloned().unwrap_or(json!({})),
            id: opt_string(c, "id", "id", &at)?,
            signature,
        });
    }
    if let Some(r) = field(o, "functionResponse", "function_response") {
        let at = join(at, "functionResponse");
        let r = object(r, &at)?;
        return Ok(Part::Response {
            name: opt_string(r, "name", "name", &at)?.unwrap_or_default(),
            response: r.get("response").cloned().unwrap_or(Value::Null),
            id: opt_string(r, "id", "id", &at)?,
        });
    }
    let kind = DATA
        .iter()
        .find(|(c, s)| field(o, c, s).is_some())
        .map_or("(no data)", |(c, _)| c);
    Ok(Part::Other {
        kind: kind.to_owned(),
        raw: v.clone(),
    })
}

fn parse_content(v: &Value, at: &str) -> Result<Content, WireError> {
    let o = object(v, at)?;
    let role = opt_string(o, "role", "role", at)?;
    let parts = match o.get("parts") {
        None | Some(Value::Null) => Vec::new(),
        Some(p) => {
            let at = join(at, "parts");
            array(p, &at)?
                .iter()
                .enumerate()
                .map(|(i, p)| parse_part(p, &index(&at, i)))
                .collect::<Result<_, _>>()?
        }
    };
    Ok(Content { role, parts })
}

fn parse_tools(v: &Value, req: &mut Request) -> Result<(), WireError> {
    for (i, t) in array(v, "tools")?.iter().enumerate() {
        let at = index("tools", i);
        let o = object(t, &at)?;
        for (key, val) in o {
            if !matches!(
                key.as_str(),
                "functionDeclarations" | "function_declarations"
            ) {
                req.hosted.push(key.clone());
                continue;
            }
            let at = join(&at, key);
            for (j, d) in array(val, &at)?.iter().enumerate() {
                let at = index(&at, j);
                let d = object(d, &at)?;
                let name = opt_string(d, "name", "name", &at)?
                    .ok_or_else(|| WireError::new(join(&at, "name"), "expected a function name"))?;
                req.functions.push(Function {
                    name,
                    description: opt_string(d, "description", "description", &at)?
                        .unwrap_or_default(),
                    parameters: field(d, "parameters", "parameters")
                        .or_else(|| field(d, "parametersJsonSchema", "parameters_json_schema"))
                        .cloned()
                        .unwrap_or(json!({"type": "object"})),
                });
            }
        }
    }
    Ok(())
}

/// Reads a request body.
pub fn parse(body: &[u8]) -> Result<Request, WireError> {
    let o = parse_body(body)?;
    let contents = match o.get("contents") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => array(v, "contents")?
            .iter()
            .enumerate()
            .map(|(i, c)| parse_content(c, &index("contents", i)))
            .collect::<Result<_, _>>()?,
    };
    let mut req = Request {
        contents,
        system: None,
        functions: Vec::new(),
        hosted: Vec::new(),
        calling_none: false,
        include_thoughts: false,
    };
    if let Some(s) = field(&o, "systemInstruction", "system_instruction") {
        req.system = Some(match s {
            Value::String(s) => s.clone(),
            other => {
                let c = parse_content(other, "systemInstruction")?;
                c.parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Text { text, .. } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        });
    }
    if let Some(t) = o.get("tools").filter(|v| !v.is_null()) {
        parse_tools(t, &mut req)?;
    }
    let mode = field(&o, "toolConfig", "tool_config")
        .and_then(|t| {
            field(
                t.as_object()?,
                "functionCallingConfig",
                "function_calling_config",
            )
        })
        .and_then(|f| f.get("mode"))
        .and_then(Value::as_str);
    req.calling_none = mode.is_some_and(|m| m.eq_ignore_ascii_case("none"));
    req.include_thoughts = field(&o, "generationConfig", "generation_config")
        .and_then(|g| field(g.as_object()?, "thinkingConfig", "thinking_config"))
        .and_then(|t| field(t.as_object()?, "includeThoughts", "include_thoughts"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(req)
}

/// The call id the neutral view gives a call without an `id` of its own.
pub fn made_call_id(name: &str, content: usize, part: usize) -> String {
    format!("gemini:{name}@contents[{content}].parts[{part}]")
}

/// A call of the model turn before, for pairing.
struct Open {
    id: Option<String>,
    name: String,
    call_id: String,
    answered: bool,
}

impl Request {
    /// The declared functions in the judge's tool shape (`{type: function, name,
    /// description, parameters}`), what `judge::openai::function_tools` reads.
    pub fn tools_as_functions(&self) -> Vec<Value> {
        self.functions
            .iter()
            .map(|f| json!({"type": "function", "name": f.name, "description": f.description, "parameters": f.parameters}))
            .collect()
    }

    /// The conversation in the neutral view, `model` named by the request's path.
    pub fn to_neutral(&self, model: &str) -> Conversation {
        let mut entries = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        for (i, c) in self.contents.iter().enumerate() {
            let model_turn = c.is_model();
            let role = if model_turn {
                Role::Assistant
            } else {
                Role::User
            };
            let mut run: Vec<NPart> = Vec::new();
            let flush = |run: &mut Vec<NPart>, entries: &mut Vec<Entry>| {
                if !run.is_empty() {
                    let parts = std::mem::take(run);
                    entries.push(Entry {
                        source: i,
                        item: Item::Message {
                            role,
                            id: None,
                            parts,
                        },
                    });
                }
            };
            let mut calls: Vec<Open> = Vec::new();
            for (k, p) in c.parts.iter().enumerate() {
                match p {
                    Part::Text {
                        text,
                        thought: false,
                        ..
                    } => run.push(NPart::Text(text.clone())),
                    Part::Other { kind, raw } => run.push(NPart::Other {
                        kind: kind.clone(),
                        raw: raw.clone(),
                    }),
                    Part::Text {
                        text,
                        thought: true,
                        signature,
                    } => {
                        flush(&mut run, &mut entries);
                        let r = Reasoning {
                            id: None,
                            summary: vec![text.clone()],
                            encrypted_content: signature.clone(),
                        };
                        entries.push(Entry {
                            source: i,
                            item: Item::Reasoning(r),
                        });
                    }
                    Part::Call { name, args, id, .. } => {
                        flush(&mut run, &mut entries);
                        let call_id = id.clone().unwrap_or_else(|| made_call_id(name, i, k));
                        calls.push(Open {
                            id: id.clone(),
                            name: name.clone(),
                            call_id: call_id.clone(),
                            answered: false,
                        });
                        entries.push(Entry {
                            source: i,
                            item: Item::ToolCall {
                                call_id,
                                name: name.clone(),
                                arguments: args.to_string(),
                                item_id: None,
                            },
                        });
                    }
                    Part::Response { name, response, id } => {
                        flush(&mut run, &mut entries);
                        let by_id = id.as_ref().and_then(|rid| {
                            open.iter_mut()
                                .find(|o| !o.answered && o.id.as_ref() == Some(rid))
                        });
                        let matched = match by_id {
                            Some(o) => Some(o),
                            None => open.iter_mut().find(|o| {
                                !o.answered && o.name == *name && (o.id.is_none() || id.is_none())
                            }),
                        };
                        let call_id = match matched {
                            Some(o) => {
                                o.answered = true;
                                o.call_id.clone()
                            }
                            None => id.clone().unwrap_or_else(|| {
                                format!("gemini:{name}@contents[{i}].parts[{k}]:response")
                            }),
                        };
                        let output = vec![NPart::Text(response.to_string())];
                        entries.push(Entry {
                            source: i,
                            item: Item::ToolResult {
                                call_id,
                                output,
                                item_id: None,
                            },
                        });
                    }
                }
            }
            flush(&mut run, &mut entries);
            // Only the calls of the turn just before can be answered.
            open = if model_turn { calls } else { Vec::new() };
        }
        let mut tools: Vec<Tool> = self
            .functions
            .iter()
            .map(|f| Tool::Function {
                name: f.name.clone(),
                namespace: None,
            })
            .collect();
        tools.extend(self.hosted.iter().map(|k| Tool::Hosted { kind: k.clone() }));
        Conversation {
            wire: Wire::Gemini,
            prefix: Prefix {
                model: model.to_owned(),
                instructions: self.system.clone(),
                tools,
            },
            entries,
            continues: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Request {
        parse(body.as_bytes()).unwrap()
    }

    #[test]
    fn a_call_without_id_is_answered_by_name_and_a_response_with_a_client_id_still_pairs() {
        let r = read(
            r#"{"contents":[
            {"role":"user","parts":[{"text":"go"}]},
            {"role":"model","parts":[{"functionCall":{"name":"ls","args":{"p":"."}}},{"functionCall":{"name":"cat","args":{}}}]},
            {"role":"user","parts":[{"functionResponse":{"id":"cat-17","name":"cat","response":{"output":"x"}}},
                                    {"functionResponse":{"name":"ls","response":{"output":"y"}}}]}]}"#,
        );
        let c = r.to_neutral("gemini-2.5-pro");
        assert_eq!(
            c.call_ids(),
            vec![
                "gemini:ls@contents[1].parts[0]",
                "gemini:cat@contents[1].parts[1]"
            ]
        );
        assert_eq!(
            c.result_ids(),
            vec![
                "gemini:cat@contents[1].parts[1]",
                "gemini:ls@contents[1].parts[0]"
            ]
        );
        assert_eq!(c.entries[3].source, 2);
    }

    #[test]
    fn ids_on_both_sides_pair_by_id_and_a_response_to_no_call_keeps_its_own_id() {
        let r = read(
            r#"{"contents":[
            {"role":"model","parts":[{"functionCall":{"id":"a","name":"ls"}}]},
            {"role":"user","parts":[{"functionResponse":{"id":"b","name":"ls","response":{}}}]}]}"#,
        );
        let c = r.to_neutral("m");
        assert_eq!(c.call_ids(), vec!["a"]);
        assert_eq!(c.result_ids(), vec!["b"]);
    }

    #[test]
    fn a_response_two_turns_late_answers_nothing() {
        let r = read(
            r#"{"contents":[
            {"role":"model","parts":[{"functionCall":{"name":"ls"}}]},
            {"role":"user","parts":[{"text":"hm"}]},
            {"role":"user","parts":[{"functionResponse":{"name":"ls","response":{}}}]}]}"#,
        );
        let c = r.to_neutral("m");
        assert_eq!(
            c.result_ids(),
            vec!["gemini:ls@contents[2].parts[0]:response"]
        );
    }

    #[test]
    fn thoughts_become_reasoning_and_snake_case_is_read() {
        let r = read(
            r#"{"system_instruction":{"parts":[{"text":"Be brief."}]},
                "tools":[{"function_declarations":[{"name":"ls","parameters":{"type":"object"}}]},{"googleSearch":{}}],
                "generation_config":{"thinking_config":{"include_thoughts":true}},
                "contents":[{"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"c2ln"},{"text":"a"},{"text":"b"},{"inline_data":{"mimeType":"image/png","data":"AA=="}}]}]}"#,
        );
        assert_eq!(r.system.as_deref(), Some("Be brief."));
        assert!(r.include_thoughts);
        assert_eq!(r.hosted, vec!["googleSearch"]);
        let c = r.to_neutral("m");
        assert_eq!(c.reasoning()[0].encrypted_content.as_deref(), Some("c2ln"));
        match &c.entries[1].item {
            Item::Message {
                role: Role::Assistant,
                parts,
                ..
            } => {
                assert_eq!(parts.len(), 3);
                assert!(matches!(&parts[2], NPart::Other { kind, .. } if kind == "inlineData"));
            }
            other => panic!("expected the model's text, got {other:?}"),
        }
    }

    #[test]
    fn bad_bodies_name_the_field_expected() {
        let cases = [
            (r#"[]"#, ""),
            (r#"{"contents":{}}"#, "contents"),
            (r#"{"contents":[{"parts":{}}]}"#, "contents[0].parts"),
            (r#"{"contents":[{"parts":["hi"]}]}"#, "contents[0].parts[0]"),
            (
                r#"{"contents":[{"parts":[{"text":3}]}]}"#,
                "contents[0].parts[0].text",
            ),
            (
                r#"{"contents":[{"parts":[{"functionCall":{"name":7}}]}]}"#,
                "contents[0].parts[0].functionCall.name",
            ),
            (
                r#"{"contents":[],"tools":[{"functionDeclarations":[{}]}]}"#,
                "tools[0].functionDeclarations[0].name",
            ),
        ];
        for (body, path) in cases {
            let e = parse(body.as_bytes()).unwrap_err();
            assert_eq!(e.path, path, "{body}");
            assert!(
                e.problem.starts_with("expected")
                    || e.problem.contains("JSON")
                    || e.problem.contains("object"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_part_without_data_is_kept_as_such() {
        let r = read(r#"{"contents":[{"role":"user","parts":[{"thoughtSignature":"x"}]}]}"#);
        assert!(matches!(&r.contents[0].parts[0], Part::Other { kind, .. } if kind == "(no data)"));
    }
}
