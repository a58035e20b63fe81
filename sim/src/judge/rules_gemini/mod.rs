//! What the Gemini API rejects in a `generateContent` / `streamGenerateContent` body, as
//! the judge's own table-driven validator: [`table`] lists every rule with the API's
//! error text and its source; [`judge`] walks a body's `contents` and `tools` as sent.
//!
//! Guarantees:
//! - The judge shares no validation code with what it judges: the walk reads the
//!   body's JSON as sent (either spelling, `functionCall` or `function_call`), not the
//!   wire reader's typed model (`crate::gemini::request`), which refuses some of these
//!   bodies before a rule could name them; it never calls `turnsim_core`.
//! - Pairing is Gemini's: the responses to a model turn's calls are in the very next
//!   content, matched by `id` where call and response both carry one, else by name in
//!   order; each call answered once.
//! - Every breach names a row of [`table::GEMINI`] and the index in `contents` of the
//!   content at fault (`None` for the request as a whole or its tools); breaches come
//!   out in wire order; no hash-map iteration.

pub mod table;

use super::finding::{Finding, Place, Severity, excerpt};
use serde_json::{Map, Value};
use table::rule_of;

/// One breach of a Gemini rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// A kind of [`table::GEMINI`].
    pub kind: &'static str,
    /// The index in `contents`; `None` for the request as a whole or its tools.
    pub at: Option<usize>,
    pub detail: String,
    /// The fields that identify the part or content at fault, as JSON.
    pub excerpt: String,
}

impl Breach {
    /// The breach as a finding of request `request`: the row's family is its `check`,
    /// the content index its `message`, and the text names the row.
    pub fn finding(&self, request: usize) -> Finding {
        let row = rule_of(self.kind);
        let where_ = match self.at {
            Some(i) => format!("contents[{i}]"),
            None => "the request".to_owned(),
        };
        let mut f = Finding::new(
            Severity::Violation,
            row.map_or("request_valid", |r| r.family),
            self.kind,
            Place {
                request: Some(request),
                message: self.at,
                ..Place::default()
            },
            format!(
                "{where_}: {} (rule {})",
                self.detail,
                row.map_or("unlisted", |r| r.id)
            ),
        );
        f.excerpt = excerpt(&self.excerpt);
        f
    }
}

fn get<'a>(o: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    o.get(camel)
        .or_else(|| o.get(snake))
        .filter(|v| !v.is_null())
}

const DATA: [(&str, &str); 7] = [
    ("text", "text"),
    ("inlineData", "inline_data"),
    ("fileData", "file_data"),
    ("functionCall", "function_call"),
    ("functionResponse", "function_response"),
    ("executableCode", "executable_code"),
    ("codeExecutionResult", "code_execution_result"),
];

/// A function call or response part, as the walk reads it.
struct Fn<'a> {
    part: usize,
    name: &'a str,
    id: Option<&'a str>,
}

fn fn_of<'a>(part: usize, v: &'a Value) -> Fn<'a> {
    Fn {
        part,
        name: v.get("name").and_then(Value::as_str).unwrap_or(""),
        id: v.get("id").and_then(Value::as_str),
    }
}

/// What the walk knows of one content.
struct Turn<'a> {
    role: Option<&'a str>,
    calls: Vec<Fn<'a>>,
    responses: Vec<Fn<'a>>,
}

fn brief(f: &Fn<'_>, key: &str) -> String {
    let mut o = Map::new();
    o.insert("name".into(), Value::String(f.name.into()));
    if let Some(id) = f.id {
        o.insert("id".into(), Value::String(id.into()));
    }
    let mut outer = Map::new();
    outer.insert(key.into(), Value::Object(o));
    Value::Object(outer).to_string()
}

fn name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// The path of every schema under `schema` (a declaration's `parameters`, the API's
/// OpenAPI subset) whose type is array and which has no `items`, in document order.
/// Nested schemas are those of `properties`, `items` and `anyOf`; `parametersJsonSchema`
/// (full JSON Schema, where `items` is optional) is not this rule's.
fn arrays_without_items(schema: &Value, path: String) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(schema, path)];
    while let Some((s, path)) = stack.pop() {
        let Some(o) = s.as_object() else { continue };
        let is_array = o
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("array"));
        if is_array && o.get("items").is_none_or(Value::is_null) {
            out.push(path.clone());
        }
        // Pushed in reverse so the stack pops them in document order.
        let mut next = Vec::new();
        if let Some(Value::Object(props)) = o.get("properties") {
            for (k, v) in props {
                next.push((v, format!("{path}.properties[{k}]")));
            }
        }
        if let Some(items) = o.get("items") {
            next.push((items, format!("{path}.items")));
        }
        if let Some(Value::Array(any)) = o.get("anyOf") {
            for (i, v) in any.iter().enumerate() {
                next.push((v, format!("{path}.anyOf[{i}]")));
            }
        }
        stack.extend(next.into_iter().rev());
    }
    out
}

/// The breaches of a Gemini request body `body` (its JSON as sent).
pub fn judge(body: &Value) -> Vec<Breach> {
    let mut out = Vec::new();
    let mut push = |kind, at, detail: String, ex: String| {
        out.push(Breach {
            kind,
            at,
            detail,
            excerpt: ex,
        });
    };
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        for (t, tool) in tools.iter().enumerate() {
            let decls = tool
                .as_object()
                .and_then(|o| get(o, "functionDeclarations", "function_declarations"))
                .and_then(Value::as_array);
            for (d, decl) in decls.into_iter().flatten().enumerate() {
                let name = decl.get("name").and_then(Value::as_str).unwrap_or("");
                if !name_ok(name) {
                    push(
                        "bad_function_name",
                        None,
                        format!(
                            "tools[{t}].functionDeclarations[{d}].name {name:?} is not a valid function name"
                        ),
                        format!("{{\"name\":{}}}", Value::String(name.into())),
                    );
                }
                if let Some(params) = decl.get("parameters") {
                    let at = format!("tools[{t}].functionDeclarations[{d}].parameters");
                    for path in arrays_without_items(params, at) {
                        push(
                            "array_without_items",
                            None,
                            format!("{path} is an array schema with no items"),
                            format!("{{\"name\":{}}}", Value::String(name.into())),
                        );
                    }
                }
            }
        }
    }
    let contents = match body.get("contents") {
        Some(Value::Array(c)) if !c.is_empty() => c,
        _ => {
            push(
                "no_contents",
                None,
                "contents is missing or empty".into(),
                "[]".into(),
            );
            return out;
        }
    };
    let mut turns: Vec<Turn<'_>> = Vec::new();
    for (i, c) in contents.iter().enumerate() {
        let Some(o) = c.as_object() else {
            turns.push(Turn {
                role: None,
                calls: vec![],
                responses: vec![],
            });
            continue;
        };
        let role = o.get("role").and_then(Value::as_str);
        if let Some(r) = role.filter(|r| !matches!(*r, "user" | "model")) {
            push(
                "bad_role",
                Some(i),
                format!("role {r:?} is neither user nor model"),
                format!("{{\"role\":{}}}", Value::String(r.into())),
            );
        }
        let parts = o
            .get("parts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if parts.is_empty() {
            push(
                "empty_parts",
                Some(i),
                "parts is missing or empty".into(),
                format!(
                    "{{\"role\":{}}}",
                    role.map_or(Value::Null, |r| Value::String(r.into()))
                ),
            );
        }
        let mut turn = Turn {
            role,
            calls: vec![],
            responses: vec![],
        };
        for (k, p) in parts.iter().enumerate() {
            let Some(po) = p.as_object() else { continue };
            if !DATA.iter().any(|(c, s)| get(po, c, s).is_some()) {
                push(
                    "part_without_data",
                    Some(i),
                    format!("parts[{k}] carries no data field"),
                    p.to_string(),
                );
            }
            if let Some(call) = get(po, "functionCall", "function_call") {
                let f = fn_of(k, call);
                if f.name.is_empty() {
                    push(
                        "empty_function_name",
                        Some(i),
                        format!("parts[{k}].functionCall has no name"),
                        brief(&f, "functionCall"),
                    );
                }
                if call
                    .get("args")
                    .is_some_and(|a| !a.is_object() && !a.is_null())
                {
                    push(
                        "args_not_object",
                        Some(i),
                        format!("parts[{k}].functionCall.args is not a JSON object"),
                        brief(&f, "functionCall"),
                    );
                }
                turn.calls.push(f);
            }
            if let Some(resp) = get(po, "functionResponse", "function_response") {
                let f = fn_of(k, resp);
                if f.name.is_empty() {
                    push(
                        "empty_function_name",
                        Some(i),
                        format!("parts[{k}].functionResponse has no name"),
                        brief(&f, "functionResponse"),
                    );
                }
                if resp
                    .get("response")
                    .is_some_and(|a| !a.is_object() && !a.is_null())
                {
                    push(
                        "response_not_object",
                        Some(i),
                        format!("parts[{k}].functionResponse.response is not a JSON object"),
                        brief(&f, "functionResponse"),
                    );
                }
                turn.responses.push(f);
            }
        }
        let model = role == Some("model");
        if model && let Some(f) = turn.responses.first() {
            push(
                "response_in_model_turn",
                Some(i),
                format!("parts[{}] is a functionResponse in a model turn", f.part),
                brief(f, "functionResponse"),
            );
        }
        if !model && let Some(f) = turn.calls.first() {
            push(
                "call_in_user_turn",
                Some(i),
                format!(
                    "parts[{}] is a functionCall in a {} turn",
                    f.part,
                    role.unwrap_or("user")
                ),
                brief(f, "functionCall"),
            );
        }
        if model && !turn.calls.is_empty() {
            let prev_model = i > 0 && turns.get(i - 1).is_some_and(|t| t.role == Some("model"));
            if i == 0 || prev_model {
                let why = if i == 0 {
                    "it is the first content"
                } else {
                    "it follows another model turn"
                };
                push(
                    "call_turn_misplaced",
                    Some(i),
                    format!(
                        "a function call turn must follow a user or function-response turn; {why}"
                    ),
                    brief(&turn.calls[0], "functionCall"),
                );
            }
        }
        turns.push(turn);
    }
    pair(&turns, &mut push);
    out.sort_by_key(|b| b.at.map_or(0, |i| i + 1));
    out
}

/// Each model turn's calls against the very next content's responses.
fn pair(turns: &[Turn<'_>], push: &mut impl FnMut(&'static str, Option<usize>, String, String)) {
    for (i, t) in turns.iter().enumerate() {
        let prev = i
            .checked_sub(1)
            .and_then(|p| turns.get(p))
            .filter(|p| p.role == Some("model"));
        let calls: &[Fn<'_>] = prev.map_or(&[], |p| p.calls.as_slice());
        let mut answered = vec![false; calls.len()];
        if t.role != Some("model") {
            for r in &t.responses {
                let by_id = r.id.and_then(|id| {
                    (0..calls.len()).find(|&c| !answered[c] && calls[c].id == Some(id))
                });
                let hit = by_id.or_else(|| {
                    (0..calls.len()).find(|&c| {
                        !answered[c]
                            && calls[c].name == r.name
                            && (calls[c].id.is_none() || r.id.is_none())
                    })
                });
                match hit {
                    Some(c) => answered[c] = true,
                    None => {
                        let why = if calls.is_empty() {
                            "the content before is not a model turn with function calls".to_owned()
                        } else {
                            format!(
                                "no unanswered call of contents[{}] has this {}",
                                i - 1,
                                if r.id.is_some() { "id or name" } else { "name" }
                            )
                        };
                        push(
                            "response_without_call",
                            Some(i),
                            format!(
                                "parts[{}].functionResponse {:?} answers no call: {why}",
                                r.part, r.name
                            ),
                            brief(r, "functionResponse"),
                        );
                    }
                }
            }
        }
        if let Some(p) = prev {
            for (c, call) in p.calls.iter().enumerate() {
                if !answered[c] {
                    push(
                        "unanswered_call",
                        Some(i - 1),
                        format!(
                            "parts[{}].functionCall {:?} has no functionResponse in contents[{i}]",
                            call.part, call.name
                        ),
                        brief(call, "functionCall"),
                    );
                }
            }
        }
    }
    if let Some(last) = turns.last().filter(|t| t.role == Some("model")) {
        let i = turns.len() - 1;
        for call in &last.calls {
            push(
                "unanswered_call",
                Some(i),
                format!(
                    "parts[{}].functionCall {:?} is in the last content: no functionResponse follows",
                    call.part, call.name
                ),
                brief(call, "functionCall"),
            );
        }
    }
}

/// The findings of body `body` as request `request`.
pub fn findings(body: &Value, request: usize) -> Vec<Finding> {
    judge(body).iter().map(|b| b.finding(request)).collect()
}

#[cfg(test)]
mod tests;
