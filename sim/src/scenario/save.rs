//! Saving scenario files: the committed, reviewable text of a run.
//!
//! Guarantee: the written text is a pure function of the scenario (a replay of a pinned
//! file gives the same bytes), and a reader sees either the old file or the complete
//! new one, never a half-written scenario.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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
    write_atomic(path, text.as_bytes()).map_err(io_error)
}

/// The text `save_scenario` writes: pretty JSON and a trailing newline, where an
/// object or array of plain values (a ratio, the expectation, a latency pair) stays
/// on one line when it fits, and a longer array of plain values (the decision list)
/// is packed onto lines of less than [`PACKED_WIDTH`] columns.
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

/// Distinguishes temp files of concurrent writers within one process (e.g. rayon
/// workers saving scenarios into the same directory).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces `path` with `bytes` so that a reader or a crash sees the old file or the
/// new one, never a mix: write a temp file in the same directory (a rename is only
/// atomic within one file system), fsync it, rename it over `path`, then fsync the
/// directory so the rename itself is durable (best-effort: not every platform can
/// open a directory). Creates missing parent directories.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    fs::create_dir_all(&dir)?;
    let temp = dir.join(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = write_and_sync(&temp, bytes).and_then(|()| fs::rename(&temp, path));
    if let Err(err) = written {
        // Best-effort cleanup; the write error is the one worth reporting.
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn write_and_sync(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
