//! Tool calls aimed at the client's own tools, and the ledger that shows what ran.
//!
//! Guarantee: an input built here is harmless and observable. It fills only the
//! properties the tool's `input_schema` requires (an optional property such as
//! "disable the sandbox" or "run in background" is never set), paths point into the
//! server's scratch directory, URLs at a closed loopback port, and a shell-like tool
//! (one with a `command` or `cmd` string, or a `commands` list of strings as cline's
//! `run_commands`) gets a command that only appends `start ID` and `finish ID` lines
//! to the ledger file, sleeps in between (a window in which a client can be
//! cancelled), and prints a line; a list gets that one command as its only item. The tool-use id is in every line, so
//! the harness can tell from the ledger which calls the client ran, ran twice, or
//! cut off, whatever the client itself reports.
//!
//! Deterministic: an input is a function of the schema, the id and the draws it
//! makes from the conversation's decider.

use crate::decide::Decider;
use crate::judge::taint::MODEL_MARK;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use turnsim_core::ToolSpec;

/// Where generated inputs may point: the ledger and a scratch directory for paths.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub ledger: PathBuf,
    pub scratch: PathBuf,
    /// Longest sleep a shell command may contain, in milliseconds.
    pub max_sleep_ms: u32,
    /// Shortest sleep (0 by default; `turnsim drive` raises it so that a signal can
    /// land while the tool runs). With 0 the draws are those of earlier versions.
    pub min_sleep_ms: u32,
    /// A script that replaces the inline ledger command (`turnsim drive` writes one
    /// with timestamped `start`/`effect`/`finish` lines): the command becomes
    /// `sh SCRIPT ID LEDGER SLEEP_MS`. `None` keeps the inline command.
    pub tool_script: Option<PathBuf>,
}

/// The deepest schema nesting followed; deeper required objects get `{}`.
const MAX_DEPTH: usize = 6;

/// True when the tool takes a command: a shell the client runs for the model.
pub fn is_shell_like(tool: &ToolSpec) -> bool {
    shell_field(tool).is_some()
}

/// Where a shell-like tool takes its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellField {
    /// A string property: `command` (Claude Code's Bash) or `cmd` (Codex's
    /// `exec_command`).
    Text(&'static str),
    /// A list of strings, each a command the client runs (cline's `run_commands`
    /// takes `commands`); the call gets one.
    List(&'static str),
}

impl ShellField {
    pub fn name(self) -> &'static str {
        match self {
            ShellField::Text(n) | ShellField::List(n) => n,
        }
    }

    /// The input value that carries `command`.
    pub fn value(self, command: String) -> Value {
        match self {
            ShellField::Text(_) => Value::String(command),
            ShellField::List(_) => Value::Array(vec![Value::String(command)]),
        }
    }
}

fn is_string(schema: &Value) -> bool {
    schema
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(|t| t == "string")
}

/// The property a shell-like tool takes its command in (a string first, then a
/// list of strings).
pub fn shell_field(tool: &ToolSpec) -> Option<ShellField> {
    let props = tool.input_schema.get("properties")?;
    let text = ["command", "cmd"]
        .into_iter()
        .find(|name| props.get(*name).is_some_and(is_string))
        .map(ShellField::Text);
    text.or_else(|| {
        let list = props.get("commands")?;
        let is_list = list.get("type").and_then(Value::as_str) == Some("array")
            && list.get("items").is_some_and(is_string);
        is_list.then_some(ShellField::List("commands"))
    })
}

/// Single-quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The shell command for call `id`: ledger lines around a sleep, then one output line.
/// Ids only ever hold `[A-Za-z0-9_]`, anything else is replaced. After the `start`
/// line comes `pid ID PID`, the shell's own pid, so a harness can find (and clean up)
/// a tool that outlives its client.
pub fn ledger_command(id: &str, ledger: &Path, sleep_ms: u32) -> String {
    let id: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let ledger = shell_quote(&ledger.display().to_string());
    format!(
        "echo 'start {id}' >> {ledger} && echo \"pid {id} $$\" >> {ledger} && sleep {}.{:03} && echo 'finish {id}' >> {ledger} && echo 'turnsim ran {id}'",
        sleep_ms / 1000,
        sleep_ms % 1000
    )
}

/// The command for call `id` that runs `script` with the id, the ledger and the sleep.
pub fn script_command(script: &Path, id: &str, ledger: &Path, sleep_ms: u32) -> String {
    let id: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!(
        "sh {} {id} {} {sleep_ms}",
        shell_quote(&script.display().to_string()),
        shell_quote(&ledger.display().to_string())
    )
}

/// The input for a call of `name` with id `id`, built from the tool's schema in
/// `tools` (`{}` for a name the client did not declare).
pub fn make_input(
    d: &mut Decider,
    tools: &[ToolSpec],
    name: &str,
    id: &str,
    ws: &Workspace,
) -> Value {
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        return Value::Object(Map::new());
    };
    let mut input = match value_for(d, &tool.input_schema, "", id, ws, 0) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(field) = shell_field(tool) {
        let lo = ws.min_sleep_ms.min(ws.max_sleep_ms);
        let steps = (ws.max_sleep_ms - lo) / 100;
        let sleep = lo + d.below(steps + 1) * 100;
        let command = match &ws.tool_script {
            Some(script) => script_command(script, id, &ws.ledger, sleep),
            None => ledger_command(id, &ws.ledger, sleep),
        };
        input.insert(field.name().into(), field.value(command));
    }
    Value::Object(input)
}

fn value_for(
    d: &mut Decider,
    schema: &Value,
    prop: &str,
    id: &str,
    ws: &Workspace,
    depth: usize,
) -> Value {
    if let Some(v) = schema.get("const") {
        return v.clone();
    }
    if let Some(v) = schema.get("default") {
        return v.clone();
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.is_empty()
    {
        let i = d.below(u32::try_from(options.len()).unwrap_or(u32::MAX)) as usize;
        return options.get(i).cloned().unwrap_or(Value::Null);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(options)) = schema.get(key)
            && let Some(first) = options.first()
        {
            return value_for(d, first, prop, id, ws, depth + 1);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // `["string", "null"]`: the first non-null type.
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let mut map = Map::new();
            if depth >= MAX_DEPTH {
                return Value::Object(map);
            }
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props = schema.get("properties");
            for name in required {
                let sub = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                let v = value_for(d, sub, name, id, ws, depth + 1);
                map.insert(name.to_owned(), v);
            }
            Value::Object(map)
        }
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = schema.get("items").unwrap_or(&Value::Null);
            let items = (0..min.min(3))
                .map(|_| value_for(d, item, prop, id, ws, depth + 1))
                .collect();
            Value::Array(items)
        }
        "integer" | "number" => {
            let lo = schema.get("minimum").and_then(Value::as_i64).unwrap_or(1);
            Value::from(lo.max(0))
        }
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        _ => Value::String(string_for(prop, id, ws)),
    }
}

fn string_for(prop: &str, id: &str, ws: &Workspace) -> String {
    let p = prop.to_ascii_lowercase();
    if p.contains("path") || p.contains("file") || p.contains("dir") || p == "cwd" {
        ws.scratch.join(format!("{id}.txt")).display().to_string()
    } else if p.contains("url") || p.contains("uri") {
        // Port 9 (discard) on loopback: nothing listens, nothing leaves the machine.
        format!("http://127.0.0.1:9/turnsim/{id}")
    } else if p.contains("pattern") || p.contains("glob") || p.contains("query") {
        format!("turnsim-{id}")
    } else {
        format!("{MODEL_MARK} turnsim {id}")
    }
}

/// One line of the ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerLine {
    Start(String),
    Finish(String),
}

/// The `pid ID PID` lines of the ledger: which shell ran which call.
pub fn read_ledger_pids(path: &Path) -> Vec<(String, u32)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut it = l.strip_prefix("pid ")?.split(' ');
            let id = it.next()?;
            let pid = it.next()?.trim().parse().ok()?;
            Some((id.to_owned(), pid))
        })
        .collect()
}

/// Reads the ledger; a missing file is an empty ledger, unknown lines are skipped.
pub fn read_ledger(path: &Path) -> Vec<LedgerLine> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            if let Some(id) = l.strip_prefix("start ") {
                Some(LedgerLine::Start(id.to_owned()))
            } else {
                l.strip_prefix("finish ")
                    .map(|id| LedgerLine::Finish(id.to_owned()))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> Workspace {
        Workspace {
            ledger: PathBuf::from("/tmp/it's/ledger"),
            scratch: PathBuf::from("/tmp/scratch"),
            max_sleep_ms: 500,
            min_sleep_ms: 0,
            tool_script: None,
        }
    }

    fn tool(name: &str, schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: schema,
        }
    }

    #[test]
    fn shell_tool_gets_a_ledger_command_and_only_required_fields() {
        let tools = [tool(
            "Bash",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout": {"type": "number"},
                    "dangerouslyDisableSandbox": {"type": "boolean"}
                },
                "required": ["command"]
            }),
        )];
        let mut d = Decider::from_seed(1);
        let v = make_input(&mut d, &tools, "Bash", "toolu_00001", &ws());
        let map = v.as_object().cloned().unwrap_or_default();
        assert_eq!(map.len(), 1, "{v}");
        let cmd = v["command"].as_str().unwrap_or_default();
        assert!(cmd.starts_with("echo 'start toolu_00001' >> '/tmp/it'\\''s/ledger'"));
        assert!(cmd.contains("echo 'finish toolu_00001'"));
    }

    #[test]
    fn a_list_of_commands_gets_one_ledger_command_as_its_only_item() {
        // cline's `run_commands`, as cline 3.0.65 declares it.
        let tools = [tool(
            "run_commands",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "commands": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["commands"],
                "additionalProperties": false
            }),
        )];
        assert_eq!(shell_field(&tools[0]), Some(ShellField::List("commands")));
        let mut d = Decider::from_seed(1);
        let v = make_input(&mut d, &tools, "run_commands", "toolu_00001", &ws());
        let list = v["commands"].as_array().cloned().unwrap_or_default();
        assert_eq!(v.as_object().map(Map::len), Some(1), "{v}");
        assert_eq!(list.len(), 1, "{v}");
        let cmd = list[0].as_str().unwrap_or_default();
        assert!(
            cmd.starts_with("echo 'start toolu_00001' >> '/tmp/it'\\''s/ledger'"),
            "{cmd}"
        );
        assert!(cmd.contains("echo \"pid toolu_00001 $$\""), "{cmd}");
        assert!(cmd.contains("echo 'finish toolu_00001'"), "{cmd}");
        // A list of something else is no shell.
        let numbers = tool(
            "pick",
            serde_json::json!({"type": "object", "properties": {
                "commands": {"type": "array", "items": {"type": "integer"}}}}),
        );
        assert_eq!(shell_field(&numbers), None);
    }

    #[test]
    fn paths_point_into_scratch_and_enums_pick_a_listed_value() {
        let tools = [tool(
            "edit",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "mode": {"enum": ["a", "b"]},
                    "count": {"type": "integer", "minimum": 2},
                    "items": {"type": "array", "minItems": 1, "items": {"type": "string"}}
                },
                "required": ["file_path", "mode", "count", "items"]
            }),
        )];
        let mut d = Decider::from_seed(3);
        let v = make_input(&mut d, &tools, "edit", "toolu_7", &ws());
        assert_eq!(v["file_path"], "/tmp/scratch/toolu_7.txt");
        assert!(v["mode"] == "a" || v["mode"] == "b");
        assert_eq!(v["count"], 2);
        assert_eq!(v["items"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn unknown_tool_gets_an_empty_object() {
        let mut d = Decider::from_seed(0);
        assert_eq!(
            make_input(&mut d, &[], "nope", "t", &ws()),
            serde_json::json!({})
        );
    }
}
