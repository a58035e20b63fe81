//! Saving scenario files: the committed, reviewable text of a run.
//!
//! Guarantee: the written text is a pure function of the scenario (a replay of a pinned
//! file gives the same bytes), and a reader sees either the old file or the complete
//! new one, never a half-written scenario.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::{Scenario, ScenarioError};

/// Writes `s` as pretty JSON with a trailing newline, atomically.
pub fn save_scenario(path: &Path, s: &Scenario) -> Result<(), ScenarioError> {
    let io_error = |source| ScenarioError::Io {
        file: path.display().to_string(),
        op: "write",
        source,
    };
    let text = scenario_to_json(s).map_err(|e| io_error(io::Error::other(e)))?;
    crate::atomic::write_atomic(path, text.as_bytes()).map_err(|e| io_error(e.source))
}

/// The text `save_scenario` writes: pretty JSON and a trailing newline, where an
/// object or array of plain values (a ratio, the expectation, a latency pair) stays
/// on one line when it fits, and a longer array of plain values (the decision list)
/// is packed onto lines of less than `PACKED_WIDTH` columns.
///
/// Why not `to_string_pretty`: a decision list runs to thousands of entries, and one
/// line per entry makes scenario files, which are committed and reviewed, mostly
/// brackets and indentation. Any JSON reader reads the packed form the same.
pub fn scenario_to_json(s: &Scenario) -> Result<String, serde_json::Error> {
    let value = serde_json::to_value(s)?;
    let mut out = String::new();
    write_pretty(&mut out, &value, 0);
    out.push('\n');
    Ok(out)
}

/// Packed arrays wrap before this column.
pub const PACKED_WIDTH: usize = 100;

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    if let Some(line) = one_line(value) {
        let column = out.len() - out.rfind('\n').map_or(0, |i| i + 1);
        // +1 leaves room for the comma that may follow.
        if column + line.len() < PACKED_WIDTH {
            out.push_str(&line);
            return;
        }
    }
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_pretty(out, item, depth + 1);
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() && !items.iter().all(is_plain) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Array(items) if !items.is_empty() => {
            // Plain values too many for one line: packed, several to a line.
            out.push('[');
            let start = (depth + 1) * 2;
            let mut line_len = PACKED_WIDTH;
            for (i, item) in items.iter().enumerate() {
                let part = item.to_string();
                let last = i + 1 == items.len();
                let needed = part.len() + usize::from(!last);
                if line_len + 1 + needed > PACKED_WIDTH {
                    out.push('\n');
                    indent(out, depth + 1);
                    line_len = start;
                } else {
                    out.push(' ');
                    line_len += 1;
                }
                out.push_str(&part);
                if !last {
                    out.push(',');
                }
                line_len += needed;
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        // Scalars, `{}` and `[]`: serde_json's compact form is already canonical.
        other => out.push_str(&other.to_string()),
    }
}

fn is_plain(value: &Value) -> bool {
    !value.is_object() && !value.is_array()
}

/// The one-line form of an object or array whose members are all plain values.
fn one_line(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) if map.values().all(is_plain) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(key, item)| format!("{}: {item}", Value::String(key.clone())))
                .collect();
            Some(format!("{{{}}}", entries.join(", ")))
        }
        Value::Array(items) if items.iter().all(is_plain) => {
            let parts: Vec<String> = items.iter().map(Value::to_string).collect();
            Some(format!("[{}]", parts.join(", ")))
        }
        _ => None,
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// [`crate::atomic::write_atomic`] with the plain OS error, for callers that name the
/// path in their own message.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    crate::atomic::write_atomic(path, bytes).map_err(|e| e.source)
}
