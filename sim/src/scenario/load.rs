//! Loading scenario files: bytes to a checked [`Scenario`].
//!
//! Guarantee: loading never panics, whatever the bytes, and every error says where
//! (line, column, field path) and what. Format and version are read first from a
//! generic JSON value, so a newer file is reported as an unsupported version rather
//! than as an unknown field.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::{SCENARIO_FORMAT, SCENARIO_VERSION, Scenario, ScenarioError};

/// Reads and parses the scenario at `path`.
pub fn load_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let bytes = fs::read(path).map_err(|source| ScenarioError::Io {
        file: file.clone(),
        op: "read",
        source,
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|err| {
        let (line, column) = line_column(&bytes[..err.valid_up_to()]);
        ScenarioError::Syntax {
            file: file.clone(),
            line,
            column,
            message: "the file is not valid UTF-8".to_owned(),
        }
    })?;
    parse_scenario(text, &file)
}

/// The 1-based line and column just past `prefix`, counting bytes like serde_json.
fn line_column(prefix: &[u8]) -> (usize, usize) {
    let line = 1 + prefix.iter().filter(|&&b| b == b'\n').count();
    let line_start = prefix
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, prefix.len() - line_start + 1)
}

/// Parses scenario JSON; `origin` names the source (usually the path) in errors.
pub fn parse_scenario(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    if text.trim().is_empty() {
        return Err(ScenarioError::Syntax {
            file: origin.to_owned(),
            line: 1,
            column: 1,
            message: "the file is empty; a scenario is a JSON object".to_owned(),
        });
    }
    let value: Value =
        serde_json::from_str(text).map_err(|err| json_error(origin, String::new(), &err))?;
    check_format_and_version(&value, origin)?;

    // Parsed again from the text rather than from `value`, because only the text
    // deserializer knows line and column numbers.
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let field = field_path(err.path(), err.inner());
        json_error(origin, field, err.inner())
    })
}

fn check_format_and_version(value: &Value, origin: &str) -> Result<(), ScenarioError> {
    let wrong_format = |found: String| ScenarioError::WrongFormat {
        file: origin.to_owned(),
        found,
    };
    let Value::Object(map) = value else {
        return Err(wrong_format(format!("the file holds {}", describe(value))));
    };
    match map.get("format") {
        None => return Err(wrong_format("it has no `format` field".to_owned())),
        Some(Value::String(s)) if s == SCENARIO_FORMAT => {}
        Some(other) => return Err(wrong_format(format!("`format` is {other}"))),
    }
    // A version that is not an unsigned integer is left to the full parse, which
    // reports it as a field error with its position.
    if let Some(found) = map.get("version").and_then(Value::as_u64)
        && found != u64::from(SCENARIO_VERSION)
    {
        return Err(ScenarioError::UnsupportedVersion {
            file: origin.to_owned(),
            found,
            supported: SCENARIO_VERSION,
        });
    }
    Ok(())
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The dotted path of the failing value. serde reports a missing field at the
/// struct that lacks it, and our own per-kind checks report a field at the object
/// that holds it, so the field's name is appended to make the path point at it.
fn field_path(path: &serde_path_to_error::Path, err: &serde_json::Error) -> String {
    let mut field = path.to_string();
    if field == "." {
        field.clear();
    }
    let message = err.to_string();
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split('`').next());
    if let Some(name) = named {
        let last = path.iter().next_back().map(|segment| segment.to_string());
        if last.as_deref() != Some(name) {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(name);
        }
    }
    field
}

fn json_error(origin: &str, field: String, err: &serde_json::Error) -> ScenarioError {
    let (line, column) = (err.line(), err.column());
    // serde_json's Display appends the position, which our own prefix already shows.
    let text = err.to_string();
    let message = text
        .strip_suffix(&format!(" at line {line} column {column}"))
        .unwrap_or(&text)
        .to_owned();
    match err.classify() {
        serde_json::error::Category::Data => ScenarioError::Field {
            file: origin.to_owned(),
            field,
            line,
            column,
            message,
        },
        _ => ScenarioError::Syntax {
            file: origin.to_owned(),
            line,
            column,
            message,
        },
    }
}
