//! The tool schemas of a seed with `schema_edit` on, and the host's edit of one.
//!
//! Guarantee: a seed whose `schema_edit` rate is zero keeps the base configuration's
//! four flat schemas and draws nothing here, so its run is what it was before the
//! option. With the rate non-zero every tool has a schema of its own that holds what
//! real tool schemas hold (nested objects, arrays of strings and of objects under
//! `enum`, `required` and `anyOf`, integers, fractions, `0.0` and `-0.0`), and each
//! edit changes one schema's bytes in one of three ways that keep most of its value:
//! one object's keys reversed (the same value, other bytes), one zero's sign flipped
//! (`0.0` and `-0.0` compare equal, and are other bytes), one `enum` member renamed.
//! Every schema holds each kind of target inside an array (and a reversible object and
//! a zero outside one too), so every edit kind can land inside an array.
//!
//! Why: a prefix change that edits only the system prompt never exercises the way an
//! engine compares tool lists (a memo of the prefix digest keyed by value hides a
//! reordered or re-signed schema, and the host's change goes unreported). The host
//! keeps its system prompt in such an edit, so only the schema's bytes tell the change.

use crate::decide::Decider;
use serde_json::{Map, Number, Value, json};
use turnsim_core::ToolSpec;

/// How a host edit changes one schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaEdit {
    /// One object's keys in reverse order.
    Reverse,
    /// One `0.0` made `-0.0`, or back.
    ZeroSign,
    /// One `enum` member renamed (a `2` appended, or taken off again).
    EnumMember,
}

impl SchemaEdit {
    pub const ALL: [SchemaEdit; 3] = [
        SchemaEdit::Reverse,
        SchemaEdit::ZeroSign,
        SchemaEdit::EnumMember,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            SchemaEdit::Reverse => "keys reversed",
            SchemaEdit::ZeroSign => "zero sign flipped",
            SchemaEdit::EnumMember => "enum member renamed",
        }
    }
}

/// The schema of one tool of a rich-schema seed: `field` is a property only it has,
/// `modes` its `enum`.
fn rich_schema(field: &str, modes: [&str; 3]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "mode": {"type": "string", "enum": modes, "default": modes[0]},
            field: {
                "type": "object",
                "properties": {
                    "offset": {"type": "integer", "minimum": 0.0, "default": 1},
                    "scale": {"type": "number", "multipleOf": 1.5, "maximum": -0.0}
                },
                "required": ["offset"]
            },
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 4}
        },
        "required": ["path", "mode"],
        "anyOf": [
            {"required": ["path"], "minProperties": 1, "maxProperties": 4.0},
            {"type": "object", "not": {"required": ["tags"]}, "minProperties": 0.0}
        ]
    })
}

/// The base tools with a schema each of its own (names and descriptions unchanged).
pub fn rich_tools(base: &[ToolSpec]) -> Vec<ToolSpec> {
    const FIELDS: [(&str, [&str; 3]); 4] = [
        ("range", ["text", "lines", "bytes"]),
        ("backup", ["create", "append", "replace"]),
        ("limits", ["quick", "full", "watch"]),
        ("window", ["literal", "regex", "fuzzy"]),
    ];
    base.iter()
        .enumerate()
        .map(|(i, t)| {
            let (field, modes) = FIELDS[i % FIELDS.len()];
            ToolSpec {
                input_schema: rich_schema(field, modes),
                ..t.clone()
            }
        })
        .collect()
}

/// The places in `v` an edit of `kind` can land, as paths of keys and indexes.
fn targets(v: &Value, kind: SchemaEdit, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let hit = match (kind, v) {
        (SchemaEdit::Reverse, Value::Object(m)) => m.len() > 1,
        (SchemaEdit::ZeroSign, Value::Number(n)) => n.as_f64() == Some(0.0) && n.is_f64(),
        (SchemaEdit::EnumMember, Value::String(_)) => {
            matches!(path.get(path.len().wrapping_sub(2)), Some(Step::Key(k)) if k == "enum")
        }
        _ => false,
    };
    if hit {
        out.push(path.clone());
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Step::Key(k.clone()));
                targets(x, kind, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                path.push(Step::Index(i));
                targets(x, kind, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// The host's edit: one schema of `tools` changed by a drawn kind at a drawn place.
/// Returns the edited list and what was done, for the trace (the tool, the kind and
/// the place as a JSON pointer). `None` when the drawn schema has no place for the
/// drawn kind (a flat schema).
pub fn edit_one(d: &mut Decider, tools: &[ToolSpec]) -> Option<(Vec<ToolSpec>, String)> {
    let tool = d.below(tools.len() as u32) as usize;
    let kind = SchemaEdit::ALL[d.below(SchemaEdit::ALL.len() as u32) as usize];
    let mut places = Vec::new();
    targets(
        &tools.get(tool)?.input_schema,
        kind,
        &mut Vec::new(),
        &mut places,
    );
    if places.is_empty() {
        return None;
    }
    let place = &places[d.below(places.len() as u32) as usize];
    let mut edited = tools.to_vec();
    let target = at(&mut edited[tool].input_schema, place)?;
    match (kind, &*target) {
        (SchemaEdit::Reverse, Value::Object(m)) => {
            let reversed: Map<String, Value> = m
                .iter()
                .rev()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            *target = Value::Object(reversed);
        }
        (SchemaEdit::ZeroSign, Value::Number(n)) => {
            let flipped = -n.as_f64().unwrap_or(0.0);
            *target = Value::Number(Number::from_f64(flipped)?);
        }
        (SchemaEdit::EnumMember, Value::String(s)) => {
            let renamed = match s.strip_suffix('2') {
                Some(back) => back.to_owned(),
                None => [s.as_str(), "2"].concat(),
            };
            *target = Value::String(renamed);
        }
        _ => return None,
    }
    let pointer: String = place
        .iter()
        .map(|s| match s {
            Step::Key(k) => format!("/{k}"),
            Step::Index(i) => format!("/{i}"),
        })
        .collect();
    let what = format!("{} {} at {pointer:?}", edited[tool].name, kind.name());
    Some((edited, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Vec<ToolSpec> {
        ["read_file", "write_file", "run_shell", "search"]
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
            })
            .collect()
    }

    #[test]
    fn every_rich_schema_has_each_edit_kind_inside_an_array_and_the_first_two_outside_one() {
        for t in rich_tools(&base()) {
            for kind in SchemaEdit::ALL {
                let mut places = Vec::new();
                targets(&t.input_schema, kind, &mut Vec::new(), &mut places);
                let in_array = |p: &Vec<Step>| p.iter().any(|s| matches!(s, Step::Index(_)));
                assert!(places.iter().any(in_array), "{} {kind:?}", t.name);
                // An enum member is an array's by definition.
                let outside = kind == SchemaEdit::EnumMember || places.iter().any(|p| !in_array(p));
                assert!(outside, "{} {kind:?}", t.name);
            }
        }
    }

    #[test]
    fn an_edit_changes_one_schema_in_bytes_and_a_reverse_or_sign_flip_keeps_its_value() {
        let tools = rich_tools(&base());
        let mut kinds = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let mut d = Decider::from_seed(seed);
            let (edited, what) = edit_one(&mut d, &tools).expect("a rich schema has room");
            let changed: Vec<usize> = (0..tools.len())
                .filter(|&i| {
                    serde_json::to_string(&tools[i].input_schema).unwrap()
                        != serde_json::to_string(&edited[i].input_schema).unwrap()
                })
                .collect();
            assert_eq!(changed.len(), 1, "seed {seed}: {what}");
            let i = changed[0];
            let same_value = tools[i].input_schema == edited[i].input_schema;
            let kind = SchemaEdit::ALL
                .into_iter()
                .find(|k| what.contains(k.name()))
                .unwrap();
            assert_eq!(
                same_value,
                kind != SchemaEdit::EnumMember,
                "seed {seed}: {what}"
            );
            kinds.insert(kind.name());
        }
        assert_eq!(kinds.len(), 3);
    }

    #[test]
    fn zeros_serialize_with_their_sign() {
        let t = &rich_tools(&base())[0];
        let text = serde_json::to_string(&t.input_schema).unwrap();
        assert!(text.contains("\"maximum\":-0.0"), "{text}");
        assert!(text.contains("\"minimum\":0.0"), "{text}");
        assert!(text.contains("\"multipleOf\":1.5"), "{text}");
    }
}
