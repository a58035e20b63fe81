//! Client profiles: how to start a client, point it at the server, and resume it.
//!
//! Guarantee: a profile is data, not a code path. Every client, built in or custom,
//! is run by the same [`super::run`] code from its [`Profile`]: argument lists and
//! environment values with placeholders, the name of the shell tool the scripted
//! model calls, and the provider faults and signals that make sense for it (a hang
//! costs a client's own watchdog time, so a profile leaves it out when that is long).
//! A profile is serialized whole into every run file, so `--replay` runs exactly the
//! command that was run, whatever the built-ins have become since.
//!
//! Placeholders, substituted in every argument and environment value:
//! `{base_url}` (`http://127.0.0.1:PORT`), `{base_url_v1}` (`…/v1`), `{prompt}`,
//! `{home}`, `{work}` (the client's working directory), `{repo}` (this repository,
//! for its scripts). An argument that is exactly `{resume}` becomes `--resume` in the
//! resume command of a custom profile and disappears in the first one.

mod agents;
pub(crate) mod cline;
mod gemini;
mod openai;
mod opencode;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A provider fault the server plays on one request of the first phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFault {
    /// HTTP 529 overloaded.
    Overloaded,
    /// HTTP 429 with `retry-after: 1`.
    RateLimited,
    /// The stream is cut inside the tool call's input.
    Cut,
    /// Nothing is sent until the client gives up (or the run times out).
    Hang,
}

/// The signal the harness sends during the first phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interrupt {
    /// Ctrl+C: SIGINT to the client's whole process group, as a terminal sends it.
    Sigint,
    /// `kill PID`: SIGTERM to the client process.
    Sigterm,
    /// A closed terminal: SIGHUP to the client's whole process group.
    Sighup,
    /// `kill -9 PID`: SIGKILL to the client process.
    Sigkill,
    /// The Esc key typed into an interactive client's terminal.
    Esc,
    /// Ctrl+C typed into an interactive client's terminal (a byte a TUI in raw mode
    /// reads itself; no signal).
    CtrlC,
}

impl Interrupt {
    pub fn name(self) -> &'static str {
        match self {
            Interrupt::Sigint => "SIGINT",
            Interrupt::Sigterm => "SIGTERM",
            Interrupt::Sighup => "SIGHUP",
            Interrupt::Sigkill => "SIGKILL",
            Interrupt::Esc => "Esc",
            Interrupt::CtrlC => "Ctrl+C",
        }
    }

    /// The signal's number; none for a key.
    pub fn number(self) -> Option<i32> {
        match self {
            Interrupt::Sigint => Some(libc::SIGINT),
            Interrupt::Sigterm => Some(libc::SIGTERM),
            Interrupt::Sighup => Some(libc::SIGHUP),
            Interrupt::Sigkill => Some(libc::SIGKILL),
            Interrupt::Esc | Interrupt::CtrlC => None,
        }
    }

    /// A client can clean up after this one (every signal but SIGKILL, every key).
    pub fn catchable(self) -> bool {
        self != Interrupt::Sigkill
    }

    /// A key typed into the terminal, not a signal.
    pub fn is_key(self) -> bool {
        matches!(self, Interrupt::Esc | Interrupt::CtrlC)
    }
}

/// Everything needed to run one client.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    /// The first invocation: program and arguments.
    pub command: Vec<String>,
    /// The invocation that resumes the session with one more prompt.
    pub resume: Vec<String>,
    /// Extra environment (HOME and the XDG directories are always isolated).
    pub env: Vec<(String, String)>,
    /// The tool the scripted model calls: the client's shell tool.
    pub shell_tool: String,
    /// Provider faults that make sense for this client.
    pub faults: Vec<ProviderFault>,
    /// Signals to draw from, with `None` (no signal) always possible.
    pub interrupts: Vec<Interrupt>,
    /// A command that prints the client's version, for the report.
    #[serde(default)]
    pub version: Vec<String>,
    /// Files written under HOME before every invocation, `(relative path, content)`
    /// with placeholders substituted: configuration a client reads only from a file
    /// (a provider's base URL, which holds the run's port). Empty for most clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub home_files: Vec<(String, String)>,
}

/// The profiles `--client` knows.
pub const BUILT_IN: [&str; 22] = [
    "claude-code",
    "claude-code-tui",
    "codex-tui",
    "test-client-tui",
    "opencode",
    "opencode-tui",
    "python-sdk",
    "pydantic-ai",
    "test-client",
    "custom",
    "codex",
    "openai-agents",
    "openai-chat",
    "claude-agent-sdk",
    "pi",
    "pi-tui",
    "qwen-code",
    "qwen-code-tui",
    "gemini-cli",
    "gemini-cli-tui",
    "cline",
    "cline-tui",
];

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn env(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

const ALL_SIGNALS: [Interrupt; 4] = [
    Interrupt::Sigint,
    Interrupt::Sigterm,
    Interrupt::Sighup,
    Interrupt::Sigkill,
];

/// The repository root this binary was built from (for `scripts/`).
pub fn repo_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The in-repo test client: `TURNSIM_TEST_CLIENT`, else next to the running binary
/// (also one directory up, where cargo puts binaries next to test executables).
pub fn test_client_path() -> PathBuf {
    if let Some(p) = std::env::var_os("TURNSIM_TEST_CLIENT") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let name = "turnsim-test-client";
    let mut dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    for _ in 0..2 {
        let candidate = dir.join(name);
        if candidate.exists() {
            return candidate;
        }
        dir = dir.parent().map(PathBuf::from).unwrap_or_default();
    }
    PathBuf::from(name)
}

/// A built-in profile by name; `custom` takes its command from `command`.
pub fn profile(name: &str, command: &[String]) -> Result<Profile, String> {
    match name {
        // The interactive profiles: the headless one's environment and tool, the
        // TUI's command (the prompt is typed, see `terminal`), keys for signals.
        "claude-code-tui" => {
            let p = headless("claude-code", command)?;
            let tui = |resume: bool| {
                let mut c = strings(&["claude"]);
                if resume {
                    c.push("--continue".into());
                }
                c.push("--dangerously-skip-permissions".into());
                c
            };
            Ok(Profile {
                name: name.into(),
                command: tui(false),
                resume: tui(true),
                // A cut stream is an error the TUI shows and waits on: no signal.
                faults: vec![ProviderFault::Overloaded, ProviderFault::RateLimited],
                interrupts: KEYS.to_vec(),
                ..p
            })
        }
        "codex-tui" => Ok(openai::codex_tui()),
        "test-client-tui" => {
            let mut flags = vec!["--interactive".to_owned()];
            flags.extend(command.iter().cloned());
            let p = headless("test-client", &flags)?;
            let strip = |c: Vec<String>| c.into_iter().filter(|a| a != "{prompt}").collect();
            Ok(Profile {
                name: name.into(),
                command: strip(p.command.clone()),
                resume: strip(p.resume.clone()),
                interrupts: KEYS.to_vec(),
                ..p
            })
        }
        other => agents::profile(other)
            .or_else(|| gemini::profile(other))
            .or_else(|| cline::profile(other))
            .or_else(|| opencode::profile(other))
            .map_or_else(|| headless(other, command), Ok),
    }
}

const KEYS: [Interrupt; 2] = [Interrupt::Esc, Interrupt::CtrlC];

fn headless(name: &str, command: &[String]) -> Result<Profile, String> {
    match name {
        "claude-code" => Ok(Profile {
            name: name.into(),
            command: strings(&[
                "claude",
                "-p",
                "{prompt}",
                "--dangerously-skip-permissions",
                "--output-format",
                "stream-json",
                "--verbose",
            ]),
            resume: strings(&[
                "claude",
                "-p",
                "--continue",
                "{prompt}",
                "--dangerously-skip-permissions",
                "--output-format",
                "stream-json",
                "--verbose",
            ]),
            env: env(&[
                ("ANTHROPIC_BASE_URL", "{base_url}"),
                ("ANTHROPIC_API_KEY", "dummy"),
                ("DISABLE_TELEMETRY", "1"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("DISABLE_AUTOUPDATER", "1"),
                ("DISABLE_ERROR_REPORTING", "1"),
                ("IS_SANDBOX", "1"),
            ]),
            shell_tool: "Bash".into(),
            // Its stream idle watchdog is at least 300 s: no hangs.
            faults: vec![
                ProviderFault::Overloaded,
                ProviderFault::RateLimited,
                ProviderFault::Cut,
            ],
            interrupts: ALL_SIGNALS.to_vec(),
            version: strings(&["claude", "--version"]),
            home_files: Vec::new(),
        }),
        "python-sdk" => {
            let script = "{repo}/scripts/sdk_tool_loop.py";
            let history = "{work}/history.json";
            Ok(Profile {
                name: name.into(),
                command: strings(&[
                    "python3",
                    script,
                    "{base_url}",
                    "--history",
                    history,
                    "--prompt",
                    "{prompt}",
                ]),
                resume: strings(&[
                    "python3",
                    script,
                    "{base_url}",
                    "--history",
                    history,
                    "--resume",
                    "--prompt",
                    "{prompt}",
                ]),
                env: Vec::new(),
                shell_tool: "bash".into(),
                // The loop alternates streaming and not; a cut stream ends it with
                // the SDK's exception, which is the SDK's documented behaviour.
                faults: vec![ProviderFault::Overloaded, ProviderFault::RateLimited],
                interrupts: ALL_SIGNALS.to_vec(),
                version: strings(&[
                    "python3",
                    "-c",
                    "import anthropic; print(anthropic.__version__)",
                ]),
                home_files: Vec::new(),
            })
        }
        "pydantic-ai" => {
            let script = "{repo}/scripts/pydantic_ai_loop.py";
            let history = "{work}/history.json";
            let run = |resume: bool| {
                let mut c = strings(&["python3", script, "{base_url}", "--history", history]);
                if resume {
                    c.push("--resume".into());
                }
                c.extend(strings(&["--prompt", "{prompt}"]));
                c
            };
            Ok(Profile {
                name: name.into(),
                command: run(false),
                resume: run(true),
                env: Vec::new(),
                shell_tool: "bash".into(),
                faults: vec![ProviderFault::Overloaded, ProviderFault::RateLimited],
                interrupts: ALL_SIGNALS.to_vec(),
                version: strings(&[
                    "python3",
                    "-c",
                    "import pydantic_ai; print(pydantic_ai.__version__)",
                ]),
                home_files: Vec::new(),
            })
        }
        "test-client" | "custom" => {
            let base = if name == "test-client" {
                let mut c = vec![
                    test_client_path().display().to_string(),
                    "--base-url".into(),
                    "{base_url}".into(),
                    "--history".into(),
                    "{work}/history.json".into(),
                ];
                c.extend(command.iter().cloned());
                c.extend(strings(&["{resume}", "{prompt}"]));
                c
            } else if command.is_empty() {
                return Err("--client custom needs a command after `--`".into());
            } else {
                command.to_vec()
            };
            Ok(Profile {
                name: name.into(),
                resume: base.clone(),
                command: base,
                env: Vec::new(),
                shell_tool: "bash".into(),
                faults: vec![
                    ProviderFault::Overloaded,
                    ProviderFault::RateLimited,
                    ProviderFault::Cut,
                ],
                interrupts: ALL_SIGNALS.to_vec(),
                version: Vec::new(),
                home_files: Vec::new(),
            })
        }
        "codex" | "openai-agents" | "openai-chat" => Ok(openai::profile(name)),
        other => Err(format!(
            "unknown client {other:?}; expected one of: {}",
            BUILT_IN.join(", ")
        )),
    }
}

/// What to install when a built-in profile's program is missing (the package, from
/// its registry); `None` for `custom`.
pub fn install_hint(name: &str) -> Option<&'static str> {
    if let Some(hint) = agents::install_hint(name)
        .or_else(|| gemini::install_hint(name))
        .or_else(|| cline::install_hint(name))
        .or_else(|| opencode::install_hint(name))
    {
        return Some(hint);
    }
    Some(match name {
        "claude-code" | "claude-code-tui" => {
            "install Claude Code: `npm install @anthropic-ai/claude-code` and put its node_modules/.bin on PATH"
        }
        "codex" | "codex-tui" => {
            "install Codex CLI: `npm install @openai/codex` and put its node_modules/.bin on PATH"
        }
        "python-sdk" => "needs python3 with the `anthropic` package (`pip install anthropic`)",
        "pydantic-ai" => "needs python3 with `pydantic-ai` (`pip install pydantic-ai`)",
        "openai-agents" => "needs python3 with `openai-agents` (`pip install openai-agents`)",
        "openai-chat" => "needs python3 with `openai` (`pip install openai`)",
        "test-client" | "test-client-tui" => {
            "build it: `cargo build --release -p turnsim --features test-client` (or set TURNSIM_TEST_CLIENT)"
        }
        _ => return None,
    })
}

/// The modules a built-in profile's Python script imports from outside the standard
/// library, each with the package that provides it, `(module, pip package)`; empty for
/// a profile that runs no Python script. [`super::installed`] imports each with the
/// profile's interpreter before any run.
pub fn python_imports(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        // scripts/sdk_tool_loop.py
        "python-sdk" => &[("anthropic", "anthropic")],
        // scripts/pydantic_ai_loop.py (its Anthropic model needs the `anthropic` extra,
        // which `pydantic-ai` has and `pydantic-ai-slim` alone has not).
        "pydantic-ai" => &[
            ("pydantic_ai", "pydantic-ai"),
            ("pydantic_ai.messages", "pydantic-ai"),
            ("pydantic_ai.models.anthropic", "pydantic-ai"),
            ("pydantic_ai.providers.anthropic", "pydantic-ai"),
        ],
        // scripts/claude_agent_sdk_loop.py
        "claude-agent-sdk" => &[("claude_agent_sdk", "claude-agent-sdk")],
        // scripts/openai_agents_loop.py
        "openai-agents" => &[("openai", "openai-agents"), ("agents", "openai-agents")],
        // scripts/openai_tool_loop.py
        "openai-chat" => &[("openai", "openai")],
        _ => &[],
    }
}

/// The values placeholders stand for.
#[derive(Clone, Debug)]
pub struct Vars {
    pub base_url: String,
    pub prompt: String,
    pub home: String,
    pub work: String,
    pub resume: bool,
}

/// Substitutes the placeholders in one string.
pub fn substitute(s: &str, v: &Vars) -> String {
    s.replace("{base_url_v1}", &format!("{}/v1", v.base_url))
        .replace("{base_url}", &v.base_url)
        .replace("{prompt}", &v.prompt)
        .replace("{home}", &v.home)
        .replace("{work}", &v.work)
        .replace("{repo}", &repo_dir().display().to_string())
}

/// An argument list with its placeholders substituted (`{resume}` handled).
pub fn argv(args: &[String], v: &Vars) -> Vec<String> {
    args.iter()
        .filter_map(|a| {
            if a == "{resume}" {
                v.resume.then(|| "--resume".to_owned())
            } else {
                Some(substitute(a, v))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_python_profile_checks_sdk_modules_its_script_imports() {
        for name in BUILT_IN {
            let p = profile(name, &["x".to_owned()]).expect("built in");
            let script = p.command.get(1).filter(|a| a.ends_with(".py"));
            let imports = python_imports(name);
            let Some(script) = script else {
                assert!(imports.is_empty(), "{name} runs no Python script");
                continue;
            };
            assert_eq!(p.command[0], "python3", "{name}");
            let path = script.replace("{repo}", &repo_dir().display().to_string());
            let text = std::fs::read_to_string(&path).expect("the script");
            assert!(!imports.is_empty(), "{name}: {path} imports an SDK");
            for (module, _) in imports {
                let imported = text.lines().any(|l| {
                    l.starts_with(&format!("import {module}"))
                        || l.starts_with(&format!("from {module} import"))
                });
                assert!(imported, "{name}: {path} does not import {module}");
            }
        }
    }

    #[test]
    fn every_built_in_resolves_and_placeholders_substitute() {
        for name in BUILT_IN {
            let cmd = vec!["x".to_owned()];
            let p = profile(name, &cmd);
            assert!(p.is_ok(), "{name}: {p:?}");
        }
        assert!(profile("custom", &[]).is_err());
        for name in BUILT_IN {
            assert_eq!(install_hint(name).is_none(), name == "custom", "{name}");
        }
        assert!(profile("nope", &[]).is_err());
        let v = Vars {
            base_url: "http://127.0.0.1:9".into(),
            prompt: "go".into(),
            home: "/h".into(),
            work: "/w".into(),
            resume: false,
        };
        let args = strings(&["a", "{resume}", "{prompt}", "{base_url_v1}"]);
        assert_eq!(argv(&args, &v), ["a", "go", "http://127.0.0.1:9/v1"]);
        let v = Vars { resume: true, ..v };
        assert_eq!(argv(&args, &v)[1], "--resume");
    }
}
