//! Scenario files: a run saved as JSON so that it can be replayed, shrunk, reviewed
//! and kept as a regression test (in the spirit of proptest's persisted failures).
//!
//! Guarantee: loading never panics, whatever the bytes, and every error names the file
//! and says where and what: the line and column, and for a well-formed JSON file that
//! does not fit the schema, the path of the offending field (`options.turns`,
//! `script[2].tool_calls[0].name`). Saving is atomic: a reader sees either the old
//! file or the complete new one, never a half-written scenario.
//!
//! Why format and version are checked before the full parse: a file from a newer
//! turnsim may carry fields this one does not know, and "unsupported version 2" is
//! the useful answer there, not "unknown field". Those two fields are read from a
//! generic JSON value first; only a version-1 turnsim scenario reaches the strict,
//! `deny_unknown_fields` parse.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::options::SimOptions;

pub const SCENARIO_FORMAT: &str = "turnsim-scenario";
pub const SCENARIO_VERSION: u32 = 1;

/// The engine a scenario runs against when the file does not say.
pub const REFERENCE_ENGINE: &str = "reference";

fn reference() -> String {
    REFERENCE_ENGINE.to_owned()
}

/// One saved run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Always [`SCENARIO_FORMAT`]; tells a scenario apart from any other JSON file.
    pub format: String,
    /// Always [`SCENARIO_VERSION`] when written by this turnsim.
    pub version: u32,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub seed: u64,
    /// `"reference"` or the name of a canary engine (a deliberately broken variant).
    #[serde(default = "reference")]
    pub engine: String,
    /// The options the run used. Stored rather than re-derived from `seed`, so that a
    /// change to the option tables does not silently change what an old file means.
    pub options: SimOptions,
    /// The decision list; empty means "every choice is the least eventful one".
    #[serde(default)]
    pub decisions: Vec<u32>,
    pub expect: Expectation,
    /// Digest of the run's trace, when the file pins the exact run and not only its
    /// verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_digest: Option<String>,
    /// A human-readable slice of the trace around the failure.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
    /// Provider responses to play instead of generated ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub script: Vec<ScriptedResponse>,
}

impl Scenario {
    /// A scenario of the current format and version against the reference engine,
    /// with no decisions, name or script yet.
    pub fn new(options: SimOptions, expect: Expectation) -> Self {
        Scenario {
            format: SCENARIO_FORMAT.to_owned(),
            version: SCENARIO_VERSION,
            name: String::new(),
            description: String::new(),
            seed: options.seed,
            engine: reference(),
            options,
            decisions: Vec::new(),
            expect,
            trace_digest: None,
            excerpt: String::new(),
            script: Vec::new(),
        }
    }
}

/// What replaying the scenario must produce.
//
// Serialised by the derive (internally tagged); deserialised through a flat raw
// struct, because serde buffers internally tagged enums before parsing them, which
// hides the field path and position of any error inside from `serde_path_to_error`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "outcome",
    rename_all = "snake_case",
    try_from = "RawExpectation"
)]
pub enum Expectation {
    Pass,
    Fail { invariant: String, step: u64 },
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Pass,
    Fail,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpectation {
    outcome: Outcome,
    invariant: Option<String>,
    step: Option<u64>,
}

impl TryFrom<RawExpectation> for Expectation {
    type Error = String;

    fn try_from(raw: RawExpectation) -> Result<Self, String> {
        match raw.outcome {
            Outcome::Pass => {
                only_fields(
                    "outcome `pass`",
                    "`outcome`",
                    &[
                        ("invariant", raw.invariant.is_some()),
                        ("step", raw.step.is_some()),
                    ],
                )?;
                Ok(Expectation::Pass)
            }
            Outcome::Fail => Ok(Expectation::Fail {
                invariant: raw.invariant.ok_or("missing field `invariant`")?,
                step: raw.step.ok_or("missing field `step`")?,
            }),
        }
    }
}

/// Rejects the first present field that `what` does not take, in serde's wording so
/// that the error's field path can be completed the same way as serde's own.
fn only_fields(what: &str, allowed: &str, present: &[(&str, bool)]) -> Result<(), String> {
    match present.iter().find(|(_, is_present)| *is_present) {
        Some((name, _)) => Err(format!(
            "unknown field `{name}` for {what}, expected {allowed}"
        )),
        None => Ok(()),
    }
}

/// A provider response taken from the scenario instead of the seed. Responses are
/// consumed in request order; once they run out, the seed's generator takes over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    try_from = "RawScriptedResponse"
)]
pub enum ScriptedResponse {
    Reply {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ScriptedCall>,
        stop: ScriptedStop,
    },
    /// The stream fails after `after_events` events (0: before it starts).
    Error {
        error: ScriptedError,
        #[serde(default)]
        after_events: u32,
    },
    /// The stream stops sending after `after_events` events and never finishes.
    Hang {
        #[serde(default)]
        after_events: u32,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ScriptedKind {
    Reply,
    Error,
    Hang,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScriptedResponse {
    kind: ScriptedKind,
    thinking: Option<String>,
    text: Option<String>,
    tool_calls: Option<Vec<ScriptedCall>>,
    stop: Option<ScriptedStop>,
    error: Option<ScriptedError>,
    after_events: Option<u32>,
}

impl TryFrom<RawScriptedResponse> for ScriptedResponse {
    type Error = String;

    fn try_from(raw: RawScriptedResponse) -> Result<Self, String> {
        match raw.kind {
            ScriptedKind::Reply => {
                only_fields(
                    "kind `reply`",
                    "`kind`, `thinking`, `text`, `tool_calls` or `stop`",
                    &[
                        ("error", raw.error.is_some()),
                        ("after_events", raw.after_events.is_some()),
                    ],
                )?;
                Ok(ScriptedResponse::Reply {
                    thinking: raw.thinking,
                    text: raw.text.unwrap_or_default(),
                    tool_calls: raw.tool_calls.unwrap_or_default(),
                    stop: raw.stop.ok_or("missing field `stop`")?,
                })
            }
            ScriptedKind::Error => {
                only_fields(
                    "kind `error`",
                    "`kind`, `error` or `after_events`",
                    &reply_fields(&raw),
                )?;
                Ok(ScriptedResponse::Error {
                    error: raw.error.ok_or("missing field `error`")?,
                    after_events: raw.after_events.unwrap_or(0),
                })
            }
            ScriptedKind::Hang => {
                let mut present = reply_fields(&raw).to_vec();
                present.push(("error", raw.error.is_some()));
                only_fields("kind `hang`", "`kind` or `after_events`", &present)?;
                Ok(ScriptedResponse::Hang {
                    after_events: raw.after_events.unwrap_or(0),
                })
            }
        }
    }
}

fn reply_fields(raw: &RawScriptedResponse) -> [(&'static str, bool); 4] {
    [
        ("thinking", raw.thinking.is_some()),
        ("text", raw.text.is_some()),
        ("tool_calls", raw.tool_calls.is_some()),
        ("stop", raw.stop.is_some()),
    ]
}

/// One tool call in a scripted reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    /// The tool input; `{}` when absent, since a tool_use block's input is an object.
    #[serde(default = "empty_object")]
    pub input: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedStop {
    EndTurn,
    ToolUse,
    MaxTokens,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedError {
    Overloaded,
    ConnectionReset,
}

/// Why a scenario could not be loaded or saved. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot {op}: {source}")]
    Io {
        file: String,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    /// Not JSON at all: cut short, stray characters, not UTF-8, or empty.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON that does not fit the scenario schema. `field` is the dotted path of the
    /// offending value, e.g. `options.faults.crash.num` or `script[0].stop`.
    #[error("{file}:{line}:{column}: {}{message}", field_prefix(.field))]
    Field {
        file: String,
        field: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON, but not a turnsim scenario; `found` says what was there instead.
    #[error(
        "{file}: not a turnsim scenario: {found}; a scenario has \"format\": \"{SCENARIO_FORMAT}\""
    )]
    WrongFormat { file: String, found: String },
    #[error(
        "{file}: scenario version {found} is not supported; this turnsim reads version {supported}"
    )]
    UnsupportedVersion {
        file: String,
        found: u64,
        supported: u32,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("field `{field}`: ")
    }
}

impl ScenarioError {
    /// The file the error is about, as given by the caller.
    pub fn file(&self) -> &str {
        match self {
            ScenarioError::Io { file, .. }
            | ScenarioError::Syntax { file, .. }
            | ScenarioError::Field { file, .. }
            | ScenarioError::WrongFormat { file, .. }
            | ScenarioError::UnsupportedVersion { file, .. } => file,
        }
    }
}

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

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Pass => f.write_str("pass"),
            Expectation::Fail { invariant, step } => {
                write!(f, "fail: {invariant} at step {step}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{FaultKind, Ratio};

    fn sample() -> Scenario {
        let mut s = Scenario::new(
            SimOptions::from_seed(42),
            Expectation::Fail {
                invariant: "transcript_is_prefix_closed".to_owned(),
                step: 17,
            },
        );
        s.name = "torn write loses a tool result".to_owned();
        s.description = "found by seed 42".to_owned();
        s.decisions = vec![0, 3, 1, 0, 7];
        s.trace_digest = Some("ab12".to_owned());
        s.excerpt = "step 17: crash\n".to_owned();
        s.script = vec![
            ScriptedResponse::Reply {
                thinking: Some("hmm".to_owned()),
                text: "let me look".to_owned(),
                tool_calls: vec![ScriptedCall {
                    name: "ls".to_owned(),
                    input: serde_json::json!({"path": "."}),
                }],
                stop: ScriptedStop::ToolUse,
            },
            ScriptedResponse::Error {
                error: ScriptedError::ConnectionReset,
                after_events: 2,
            },
            ScriptedResponse::Hang { after_events: 0 },
        ];
        s
    }

    /// A minimal valid file with `edit` applied to its JSON before it is parsed.
    fn parse_edited(edit: impl FnOnce(&mut Value)) -> Result<Scenario, ScenarioError> {
        let mut v =
            serde_json::to_value(Scenario::new(SimOptions::quiet(1), Expectation::Pass)).unwrap();
        edit(&mut v);
        parse_scenario(
            &serde_json::to_string_pretty(&v).unwrap(),
            "scenarios/x.json",
        )
    }

    fn field_of(err: &ScenarioError) -> &str {
        match err {
            ScenarioError::Field { field, .. } => field,
            other => panic!("expected a field error, got {other:?}"),
        }
    }

    /// A fresh directory for one test, removed by the test when it passes.
    fn temp_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "turnsim-scenario-test-{}-{test}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_scenario_survives_a_save_and_load_round_trip() {
        let dir = temp_dir("round_trip");
        let path = dir.join("nested/deeper/s.json");
        let s = sample();
        save_scenario(&path, &s).unwrap();
        assert_eq!(load_scenario(&path).unwrap(), s);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
        assert!(text.starts_with("{\n  \"format\": \"turnsim-scenario\",\n  \"version\": 1,"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn saved_text_packs_plain_arrays_and_indents_the_rest() {
        let mut s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
        s.decisions = (0..1000).map(|i| (i * 7919) % 100_003).collect();
        s.script = sample().script;
        let text = scenario_to_json(&s).unwrap();
        assert!(text.lines().all(|l| l.len() <= PACKED_WIDTH), "{text}");
        assert!(text.contains("\n    \"provider_latency\": ["), "{text}");
        assert!(text.contains(&format!(
            "\n    \"tool_latency\": [{}, {}],\n",
            s.options.tool_latency[0], s.options.tool_latency[1]
        )));
        assert!(
            text.contains("\n  \"decisions\": [\n    0, 7919, 15838,"),
            "{text}"
        );
        assert!(text.contains("\n  \"script\": [\n    {\n      \"kind\": \"reply\",\n"));
        let Ratio { num, den } = s.options.tool_call;
        assert!(
            text.contains(&format!(
                "\n    \"tool_call\": {{\"num\": {num}, \"den\": {den}}},\n"
            )),
            "{text}"
        );
        assert!(
            text.contains("\n  \"expect\": {\"outcome\": \"pass\"},\n"),
            "{text}"
        );
        assert!(text.contains("\"input\": {\"path\": \".\"}"), "{text}");
        assert!(
            text.contains("\n    {\"kind\": \"hang\", \"after_events\": 0}\n"),
            "{text}"
        );
        assert!(text.ends_with("\n}\n"));
        let decision_lines = text
            .lines()
            .skip_while(|l| !l.starts_with("  \"decisions\""))
            .take_while(|l| !l.starts_with("  ]"))
            .count();
        assert!(decision_lines < 80, "{decision_lines} lines");
        // The packed text is ordinary JSON: the same value as serde's own rendering.
        let ours: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(ours, serde_json::to_value(&s).unwrap());
        assert_eq!(parse_scenario(&text, "p.json").unwrap(), s);
    }

    #[test]
    fn saved_text_keeps_empty_containers_and_escapes_keys_and_strings() {
        let mut s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
        s.name = "quote \" and newline \n".to_owned();
        s.script = vec![ScriptedResponse::Reply {
            thinking: None,
            text: String::new(),
            tool_calls: vec![ScriptedCall {
                name: "odd".to_owned(),
                input: serde_json::json!({"k\"ey": [], "e": {}, "a": [[1, 2], "x"]}),
            }],
            stop: ScriptedStop::ToolUse,
        }];
        let text = scenario_to_json(&s).unwrap();
        assert!(
            text.contains("\"name\": \"quote \\\" and newline \\n\","),
            "{text}"
        );
        assert!(text.contains("\"k\\\"ey\": [],"), "{text}");
        assert!(text.contains("\"e\": {},"), "{text}");
        assert!(text.contains("\"faults\": {}\n"), "{text}");
        assert_eq!(parse_scenario(&text, "e.json").unwrap(), s);
    }

    #[test]
    fn a_minimal_scenario_fills_in_the_defaults() {
        let options = serde_json::to_string(&SimOptions::quiet(5)).unwrap();
        let text = format!(
            r#"{{"format":"turnsim-scenario","version":1,"seed":5,"options":{options},"expect":{{"outcome":"pass"}}}}"#
        );
        let s = parse_scenario(&text, "m.json").unwrap();
        assert_eq!(s, Scenario::new(SimOptions::quiet(5), Expectation::Pass));
        assert_eq!(s.engine, "reference");
    }

    #[test]
    fn empty_optional_fields_are_left_out_when_saved() {
        let s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
        let v = serde_json::to_value(&s).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "format",
                "version",
                "name",
                "description",
                "seed",
                "engine",
                "options",
                "decisions",
                "expect"
            ]
        );
        assert_eq!(v["expect"], serde_json::json!({"outcome": "pass"}));
    }

    #[test]
    fn scripted_responses_serialize_with_their_kind_tag() {
        let v = serde_json::to_value(sample().script).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"kind": "reply", "thinking": "hmm", "text": "let me look",
                 "tool_calls": [{"name": "ls", "input": {"path": "."}}], "stop": "tool_use"},
                {"kind": "error", "error": "connection_reset", "after_events": 2},
                {"kind": "hang", "after_events": 0}
            ])
        );
    }

    #[test]
    fn a_tool_call_without_input_gets_an_empty_object() {
        let s = parse_edited(|v| {
            v["script"] = serde_json::json!([
                {"kind": "reply", "tool_calls": [{"name": "ls"}], "stop": "tool_use"},
                {"kind": "error", "error": "overloaded"},
                {"kind": "hang"}
            ]);
        })
        .unwrap();
        assert_eq!(
            s.script,
            vec![
                ScriptedResponse::Reply {
                    thinking: None,
                    text: String::new(),
                    tool_calls: vec![ScriptedCall {
                        name: "ls".to_owned(),
                        input: serde_json::json!({}),
                    }],
                    stop: ScriptedStop::ToolUse,
                },
                ScriptedResponse::Error {
                    error: ScriptedError::Overloaded,
                    after_events: 0,
                },
                ScriptedResponse::Hang { after_events: 0 },
            ]
        );
    }

    #[test]
    fn a_wrong_field_name_names_the_file_and_the_field() {
        let err = parse_edited(|v| v["options"]["turn"] = 3.into()).unwrap_err();
        assert_eq!(field_of(&err), "options.turn");
        let text = err.to_string();
        assert!(text.starts_with("scenarios/x.json:"), "{text}");
        assert!(text.contains(": field `options.turn`: unknown field `turn`, expected one of"));
    }

    #[test]
    fn a_wrong_type_reports_file_line_column_field_and_types() {
        let text = "{\n  \"format\": \"turnsim-scenario\",\n  \"version\": 1,\n  \"seed\": 1,\n  \"options\": {\"seed\": 1, \"turns\": \"3\"}\n}\n";
        let err = parse_scenario(text, "scenarios/x.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "scenarios/x.json:5:37: field `options.turns`: invalid type: string \"3\", expected u32"
        );
    }

    #[test]
    fn a_bad_fault_ratio_names_the_fault_field() {
        let err = parse_edited(|v| {
            v["options"]["faults"] = serde_json::json!({"crash": {"num": "x", "den": 1000}});
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "options.faults.crash.num");

        let err = parse_edited(|v| {
            v["options"]["faults"] = serde_json::json!({"crash": {"num": 5, "den": 0}});
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "options.faults.crash");
        assert!(err.to_string().contains("zero denominator"), "{err}");

        let err = parse_edited(|v| {
            v["options"]["faults"] = serde_json::json!({"crash_hard": {"num": 5, "den": 10}});
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "options.faults.crash_hard");
        assert!(
            err.to_string().contains("unknown variant `crash_hard`"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_field_is_named_by_its_full_path() {
        let err = parse_edited(|v| {
            v["options"].as_object_mut().unwrap().remove("turns");
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "options.turns");
        assert!(err.to_string().contains("missing field `turns`"));

        let err = parse_edited(|v| {
            v.as_object_mut().unwrap().remove("seed");
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "seed");
    }

    #[test]
    fn expectation_errors_point_inside_expect() {
        let err =
            parse_edited(|v| v["expect"] = serde_json::json!({"outcome": "flaky"})).unwrap_err();
        assert_eq!(field_of(&err), "expect.outcome");
        assert!(err.to_string().contains("unknown variant `flaky`"), "{err}");

        let err = parse_edited(|v| v["expect"] = serde_json::json!({})).unwrap_err();
        assert_eq!(field_of(&err), "expect.outcome");

        let err = parse_edited(|v| {
            v["expect"] = serde_json::json!({"outcome": "fail", "invariant": "x", "step": -1});
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "expect.step");

        let err = parse_edited(|v| {
            v["expect"] = serde_json::json!({"outcome": "fail", "step": 3});
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "expect.invariant");
        assert!(err.to_string().contains("missing field `invariant`"));

        let err = parse_edited(|v| {
            v["expect"] = serde_json::json!({"outcome": "pass", "step": 3});
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "expect.step");
        assert!(
            err.to_string()
                .contains("unknown field `step` for outcome `pass`")
        );
    }

    #[test]
    fn script_errors_point_at_the_response_and_field() {
        let err = parse_edited(|v| {
            v["script"] = serde_json::json!([
                {"kind": "hang"},
                {"kind": "reply", "tool_calls": [{"name": 7}], "stop": "end_turn"}
            ]);
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "script[1].tool_calls[0].name");

        let err = parse_edited(|v| {
            v["script"] = serde_json::json!([{"kind": "reply", "text": "hi"}]);
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "script[0].stop");

        let err = parse_edited(|v| {
            v["script"] = serde_json::json!([{"kind": "hang", "stop": "end_turn"}]);
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "script[0].stop");

        let err = parse_edited(|v| {
            v["script"] = serde_json::json!([{"kind": "error", "error": "timeout"}]);
        })
        .unwrap_err();
        assert_eq!(field_of(&err), "script[0].error");

        let err = parse_edited(|v| v["script"] = serde_json::json!([{"text": "hi"}])).unwrap_err();
        assert_eq!(field_of(&err), "script[0].kind");
    }

    #[test]
    fn a_decision_out_of_range_names_its_index() {
        let err = parse_edited(|v| v["decisions"] = serde_json::json!([0, 1, 5_000_000_000u64]))
            .unwrap_err();
        assert_eq!(field_of(&err), "decisions[2]");
    }

    #[test]
    fn a_newer_version_is_reported_as_unsupported_even_with_unknown_fields() {
        let err = parse_edited(|v| {
            v["version"] = 2.into();
            v["brand_new_field"] = true.into();
        })
        .unwrap_err();
        assert!(
            matches!(
                err,
                ScenarioError::UnsupportedVersion {
                    found: 2,
                    supported: 1,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "scenarios/x.json: scenario version 2 is not supported; this turnsim reads version 1"
        );
    }

    #[test]
    fn a_version_of_the_wrong_type_is_a_field_error() {
        let err = parse_edited(|v| v["version"] = "1".into()).unwrap_err();
        assert_eq!(field_of(&err), "version");
    }

    #[test]
    fn a_wrong_format_says_what_was_found() {
        let err = parse_edited(|v| v["format"] = "proptest-regressions".into()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "scenarios/x.json: not a turnsim scenario: `format` is \"proptest-regressions\"; \
             a scenario has \"format\": \"turnsim-scenario\""
        );
        let err = parse_scenario(r#"{"seed": 1}"#, "a.json").unwrap_err();
        assert!(
            matches!(&err, ScenarioError::WrongFormat { found, .. } if found == "it has no `format` field")
        );
        let err = parse_scenario("[1, 2]", "a.json").unwrap_err();
        assert!(
            matches!(&err, ScenarioError::WrongFormat { found, .. } if found == "the file holds an array")
        );
        assert_eq!(err.file(), "a.json");
    }

    #[test]
    fn truncated_json_is_a_syntax_error_at_the_end() {
        let full = serde_json::to_string_pretty(&sample()).unwrap();
        let cut = &full[..full.len() / 2];
        let err = parse_scenario(cut, "cut.json").unwrap_err();
        let ScenarioError::Syntax {
            file,
            line,
            message,
            ..
        } = &err
        else {
            panic!("expected a syntax error, got {err:?}");
        };
        assert_eq!(file, "cut.json");
        assert_eq!(*line, cut.lines().count());
        assert!(message.starts_with("EOF while parsing"), "{message}");
        assert!(err.to_string().starts_with(&format!("cut.json:{line}:")));
    }

    #[test]
    fn text_that_is_not_json_is_a_syntax_error_with_a_position() {
        let err = parse_scenario("seed = 1\n", "s.toml").unwrap_err();
        assert_eq!(err.to_string(), "s.toml:1:1: expected value");
        let err = parse_scenario("{\"format\": \"turnsim-scenario\",}", "t.json").unwrap_err();
        assert!(
            matches!(
                err,
                ScenarioError::Syntax {
                    line: 1,
                    column: 31,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn an_empty_file_says_it_is_empty() {
        for text in ["", "  \n\t\n"] {
            let err = parse_scenario(text, "e.json").unwrap_err();
            assert_eq!(
                err.to_string(),
                "e.json:1:1: the file is empty; a scenario is a JSON object"
            );
        }
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let dir = temp_dir("missing");
        let path = dir.join("nope.json");
        let err = load_scenario(&path).unwrap_err();
        assert!(matches!(err, ScenarioError::Io { op: "read", .. }));
        assert!(
            err.to_string()
                .starts_with(&format!("{}: cannot read: ", path.display()))
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_that_is_not_utf8_is_a_syntax_error_at_the_bad_byte() {
        let dir = temp_dir("utf8");
        let path = dir.join("bin.json");
        fs::write(&path, b"{\n  \"name\": \"\xff\"\n}").unwrap();
        let err = load_scenario(&path).unwrap_err();
        assert!(
            matches!(
                err,
                ScenarioError::Syntax {
                    line: 2,
                    column: 12,
                    ..
                }
            ),
            "{err:?}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parsing_garbage_never_panics() {
        let full = serde_json::to_string(&sample()).unwrap();
        // Every prefix, and every single-byte corruption at a spread of positions.
        for end in 0..full.len() {
            if full.is_char_boundary(end) {
                let _ = parse_scenario(&full[..end], "p.json");
            }
        }
        let bytes = full.as_bytes();
        for i in (0..bytes.len()).step_by(3) {
            for b in [b'"', b'{', b']', b'0', b'-', b'x', b' '] {
                let mut copy = bytes.to_vec();
                copy[i] = b;
                if let Ok(text) = std::str::from_utf8(&copy) {
                    let _ = parse_scenario(text, "p.json");
                }
            }
        }
        let deep = "[".repeat(100_000);
        assert!(parse_scenario(&deep, "deep.json").is_err());
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temp_file() {
        let dir = temp_dir("atomic");
        let path = dir.join("out.json");
        write_atomic(&path, b"old contents that are longer").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["out.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_creates_missing_parent_directories() {
        let dir = temp_dir("parents");
        let path = dir.join("a/b/c.json");
        write_atomic(&path, b"x").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"x");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_to_a_directory_fails_and_cleans_up() {
        let dir = temp_dir("onto_dir");
        let target = dir.join("sub");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("keep"), b"k").unwrap();
        assert!(write_atomic(&target, b"x").is_err());
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["sub"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn saved_options_keep_their_faults() {
        let mut s = Scenario::new(SimOptions::quiet(3), Expectation::Pass);
        s.options
            .faults
            .insert(FaultKind::Hang, Ratio::new(60, 1000));
        let dir = temp_dir("faults");
        let path = dir.join("f.json");
        save_scenario(&path, &s).unwrap();
        let back = load_scenario(&path).unwrap();
        assert_eq!(
            back.options.fault(FaultKind::Hang),
            Some(Ratio::new(60, 1000))
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn expectation_displays_its_verdict() {
        assert_eq!(Expectation::Pass.to_string(), "pass");
        let fail = Expectation::Fail {
            invariant: "no_lost_tool_result".to_owned(),
            step: 9,
        };
        assert_eq!(fail.to_string(), "fail: no_lost_tool_result at step 9");
    }
}
