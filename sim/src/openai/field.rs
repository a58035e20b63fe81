//! Reading untyped JSON bodies field by field, with errors that name the field.
//!
//! Guarantee: every accessor either returns the value of the documented type or a
//! [`WireError`] whose `path` is the JSON path of the offending field (for example
//! `input[3].call_id`), so a client author reading serve's 400 or a `check` finding can
//! find the byte at fault. serde's derive would report only "invalid type" with a
//! column, which is useless on a 47 kB Codex body.

use serde_json::{Map, Value};

/// A body that does not fit the wire format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}`: {problem}")]
pub struct WireError {
    /// JSON path of the field at fault (`""` for the whole body).
    pub path: String,
    /// What is wrong with it, in words.
    pub problem: String,
}

impl WireError {
    pub fn new(path: impl Into<String>, problem: impl Into<String>) -> Self {
        WireError {
            path: path.into(),
            problem: problem.into(),
        }
    }
}

/// JSON type name used in error messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Joins a parent path and a key.
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Joins a parent path and an array index.
pub fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// Parses a request body into a JSON object.
pub fn parse_body(body: &[u8]) -> Result<Map<String, Value>, WireError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| WireError::new("", format!("body is not valid JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(WireError::new(
            "",
            format!("body must be a JSON object, got {}", type_name(&other)),
        )),
    }
}

/// An object at `path`.
pub fn as_object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, WireError> {
    value.as_object().ok_or_else(|| {
        WireError::new(
            path,
            format!("expected an object, got {}", type_name(value)),
        )
    })
}

/// An array at `path`.
pub fn as_array<'a>(value: &'a Value, path: &str) -> Result<&'a Vec<Value>, WireError> {
    value
        .as_array()
        .ok_or_else(|| WireError::new(path, format!("expected an array, got {}", type_name(value))))
}

/// A string at `path`.
pub fn as_str<'a>(value: &'a Value, path: &str) -> Result<&'a str, WireError> {
    value
        .as_str()
        .ok_or_else(|| WireError::new(path, format!("expected a string, got {}", type_name(value))))
}

/// A required string member.
pub fn req_str(obj: &Map<String, Value>, parent: &str, key: &str) -> Result<String, WireError> {
    let path = join(parent, key);
    match obj.get(key) {
        None => Err(WireError::new(path, "missing")),
        Some(v) => as_str(v, &path).map(str::to_string),
    }
}

/// An optional string member; JSON `null` counts as absent, as the API treats it.
pub fn opt_str(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<String>, WireError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => as_str(v, &join(parent, key)).map(|s| Some(s.to_string())),
    }
}

/// An optional boolean member; `null` counts as absent.
pub fn opt_bool(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<bool>, WireError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(WireError::new(
            join(parent, key),
            format!("expected a boolean, got {}", type_name(v)),
        )),
    }
}

/// An optional array member; `null` counts as absent.
pub fn opt_array<'a>(
    obj: &'a Map<String, Value>,
    parent: &str,
    key: &str,
) -> Result<Option<&'a Vec<Value>>, WireError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => as_array(v, &join(parent, key)).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_required_string_names_the_full_path() {
        let obj = json!({"a": 1});
        let err = req_str(obj.as_object().unwrap(), "input[2]", "call_id").unwrap_err();
        assert_eq!(err.to_string(), "`input[2].call_id`: missing");
    }

    #[test]
    fn wrong_type_names_the_type_found() {
        let obj = json!({"stream": "yes"});
        let err = opt_bool(obj.as_object().unwrap(), "", "stream").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`stream`: expected a boolean, got a string"
        );
    }

    #[test]
    fn null_optional_members_read_as_absent() {
        let obj = json!({"previous_response_id": null});
        let got = opt_str(obj.as_object().unwrap(), "", "previous_response_id").unwrap();
        assert_eq!(got, None);
    }

    #[test]
    fn non_object_body_is_rejected_with_its_type() {
        let err = parse_body(b"[1]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "``: body must be a JSON object, got an array"
        );
    }
}
