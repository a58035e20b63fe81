//! Profiles for coding agents that speak a wire serve answers through a setting of
//! their own: the Claude Agent SDK (a Python program over Claude Code), pi
//! (`@mariozechner/pi-coding-agent`, Anthropic Messages) and qwen-code
//! (`@qwen-code/qwen-code`, OpenAI Chat Completions).
//!
//! Guarantee: each runs offline against the run's server with a dummy key and
//! nothing of the user's configuration. The Agent SDK program gets the base URL as
//! an argument and hands it to Claude Code in the environment; qwen-code gets the
//! whole provider on its command line; pi reads custom providers only from
//! `~/.pi/agent/models.json`, so its profile writes that file into the isolated
//! HOME before every invocation (a [`Profile::home_files`] entry: the port changes
//! per run). The interactive variants (`pi-tui`, `qwen-code-tui`) run the same
//! program and configuration in a pty with keys for signals; their terminals are in
//! [`crate::drive::terminals::for_client`].

use super::{Interrupt, Profile, ProviderFault};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn env(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Every signal but SIGHUP (the issue asks for SIGINT, SIGTERM and SIGKILL with a
/// resume; SIGHUP is Claude Code's own profile's, and these runs are long).
const SIGNALS: [Interrupt; 3] = [Interrupt::Sigint, Interrupt::Sigterm, Interrupt::Sigkill];

const FAULTS: [ProviderFault; 3] = [
    ProviderFault::Overloaded,
    ProviderFault::RateLimited,
    ProviderFault::Cut,
];

/// The provider pi is pointed at: a custom one speaking the Messages API, so no
/// built-in model (and none of its defaults) is involved. The key is a literal.
const PI_MODELS: &str = r#"{"providers":{"turnsim":{"baseUrl":"{base_url}","api":"anthropic-messages","apiKey":"dummy","models":[{"id":"claude-sonnet-4-5","name":"turnsim"}]}}}"#;

/// qwen-code's settings: no usage statistics (sent to a collector by default) and
/// no update check; neither can work offline and neither is the client under test.
const QWEN_SETTINGS: &str = r#"{"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}"#;

/// pi's program and provider flags, for either mode (`--offline`: no start-up
/// network operations, such as its version check).
fn pi(print: bool, resume: bool) -> Vec<String> {
    let mut c = strings(&["pi", "--offline"]);
    if print {
        c.extend(strings(&["-p", "--mode", "json"]));
    }
    if resume {
        c.push("--continue".into());
    }
    c.extend(strings(&[
        "--provider",
        "turnsim",
        "--model",
        "claude-sonnet-4-5",
    ]));
    if print {
        c.push("{prompt}".into());
    }
    c
}

/// qwen-code's program and provider flags, for either mode.
fn qwen(headless: bool, resume: bool) -> Vec<String> {
    let mut c = strings(&[
        "qwen",
        "--auth-type",
        "openai",
        "--openai-api-key",
        "dummy",
        "--openai-base-url",
        "{base_url_v1}",
        "--model",
        "qwen3-coder-plus",
        // Every tool call runs without a question, as `--dangerously-skip-permissions`.
        "--yolo",
    ]);
    if resume {
        c.push("--continue".into());
    }
    if headless {
        c.extend(strings(&["--output-format", "stream-json", "{prompt}"]));
    }
    c
}

/// The profile for one of `claude-agent-sdk`, `pi`, `pi-tui`, `qwen-code`,
/// `qwen-code-tui`; `None` for any other name.
pub fn profile(name: &str) -> Option<Profile> {
    Some(match name {
        "claude-agent-sdk" => {
            let run = |resume: bool| {
                let mut c = strings(&[
                    "python3",
                    "{repo}/scripts/claude_agent_sdk_loop.py",
                    "{base_url}",
                ]);
                if resume {
                    c.push("--resume".into());
                }
                c.extend(strings(&["--prompt", "{prompt}"]));
                c
            };
            Profile {
                name: name.into(),
                command: run(false),
                resume: run(true),
                // As the claude-code profile: the SDK's Claude Code inherits these.
                env: env(&[
                    ("DISABLE_TELEMETRY", "1"),
                    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                    ("DISABLE_AUTOUPDATER", "1"),
                    ("DISABLE_ERROR_REPORTING", "1"),
                    ("IS_SANDBOX", "1"),
                ]),
                shell_tool: "Bash".into(),
                faults: FAULTS.to_vec(),
                interrupts: SIGNALS.to_vec(),
                version: strings(&[
                    "python3",
                    "-c",
                    "import claude_agent_sdk as s; print(s.__version__, 'Claude Code', s._cli_version.__cli_version__)",
                ]),
                home_files: Vec::new(),
            }
        }
        "pi" | "pi-tui" => {
            let tui = name == "pi-tui";
            Profile {
                name: name.into(),
                command: pi(!tui, false),
                resume: pi(!tui, true),
                env: env(&[("PI_TELEMETRY", "0"), ("PI_SKIP_VERSION_CHECK", "1")]),
                shell_tool: "bash".into(),
                faults: FAULTS.to_vec(),
                // In pi's editor Ctrl+C clears the input; Esc is its interrupt key.
                interrupts: if tui {
                    vec![Interrupt::Esc]
                } else {
                    SIGNALS.to_vec()
                },
                // pi prints its version on stderr.
                version: strings(&["sh", "-c", "pi --version 2>&1"]),
                home_files: vec![(".pi/agent/models.json".into(), PI_MODELS.into())],
            }
        }
        "qwen-code" | "qwen-code-tui" => {
            let tui = name == "qwen-code-tui";
            Profile {
                name: name.into(),
                command: qwen(!tui, false),
                resume: qwen(!tui, true),
                env: env(&[("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")]),
                shell_tool: "run_shell_command".into(),
                faults: FAULTS.to_vec(),
                interrupts: if tui {
                    vec![Interrupt::Esc, Interrupt::CtrlC]
                } else {
                    SIGNALS.to_vec()
                },
                version: strings(&["qwen", "--version"]),
                home_files: vec![(".qwen/settings.json".into(), QWEN_SETTINGS.into())],
            }
        }
        _ => return None,
    })
}

/// What to install for one of these profiles.
pub fn install_hint(name: &str) -> Option<&'static str> {
    Some(match name {
        "claude-agent-sdk" => {
            "needs python3 with `claude-agent-sdk` (`pip install claude-agent-sdk`; it bundles Claude Code)"
        }
        "pi" | "pi-tui" => {
            "install pi: `npm install @mariozechner/pi-coding-agent` and put its node_modules/.bin on PATH"
        }
        "qwen-code" | "qwen-code-tui" => {
            "install qwen-code: `npm install @qwen-code/qwen-code` and put its node_modules/.bin on PATH (it needs node >= 22 first on PATH)"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::profiles::{Vars, argv, substitute};

    fn vars(resume: bool) -> Vars {
        Vars {
            base_url: "http://127.0.0.1:9".into(),
            prompt: "go".into(),
            home: "/h".into(),
            work: "/w".into(),
            resume,
        }
    }

    #[test]
    fn the_agent_sdk_program_gets_the_base_url_and_resumes_with_a_flag() {
        let p = profile("claude-agent-sdk").expect("built in");
        let first = argv(&p.command, &vars(false));
        let resumed = argv(&p.resume, &vars(true));
        assert_eq!(first[0], "python3");
        assert!(
            first[1].ends_with("/scripts/claude_agent_sdk_loop.py"),
            "{first:?}"
        );
        assert_eq!(first[2..], ["http://127.0.0.1:9", "--prompt", "go"]);
        assert_eq!(
            resumed[2..],
            ["http://127.0.0.1:9", "--resume", "--prompt", "go"]
        );
        assert_eq!(p.shell_tool, "Bash");
        assert!(p.env.contains(&("IS_SANDBOX".into(), "1".into())));
        assert_eq!(p.interrupts, SIGNALS);
    }

    #[test]
    fn pi_reads_the_servers_port_from_a_models_file_written_into_home() {
        let p = profile("pi").expect("built in");
        assert_eq!(
            argv(&p.command, &vars(false)),
            [
                "pi",
                "--offline",
                "-p",
                "--mode",
                "json",
                "--provider",
                "turnsim",
                "--model",
                "claude-sonnet-4-5",
                "go"
            ]
        );
        assert_eq!(argv(&p.resume, &vars(true))[5], "--continue");
        assert_eq!(p.home_files.len(), 1);
        let (path, content) = &p.home_files[0];
        assert_eq!(path, ".pi/agent/models.json");
        let models: serde_json::Value =
            serde_json::from_str(&substitute(content, &vars(false))).expect("JSON");
        let provider = &models["providers"]["turnsim"];
        assert_eq!(provider["baseUrl"], "http://127.0.0.1:9");
        assert_eq!(provider["api"], "anthropic-messages");
        assert_eq!(provider["models"][0]["id"], "claude-sonnet-4-5");
        assert_eq!(p.shell_tool, "bash");
    }

    #[test]
    fn pis_models_file_is_written_under_home_with_the_runs_port() {
        let home = std::env::temp_dir().join(format!("turnsim-agents-home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let p = profile("pi").expect("built in");
        let v = vars(false);
        crate::drive::terminal::prepare_home(&p.home_files, &home, |s| substitute(s, &v))
            .expect("written");
        let text = std::fs::read_to_string(home.join(".pi/agent/models.json")).expect("file");
        let _ = std::fs::remove_dir_all(&home);
        assert!(text.contains(r#""baseUrl":"http://127.0.0.1:9""#), "{text}");
        assert!(!text.contains("{base_url}"), "{text}");
    }

    #[test]
    fn pi_tui_types_the_prompt_and_interrupts_with_esc_only() {
        let p = profile("pi-tui").expect("built in");
        let first = argv(&p.command, &vars(false));
        let resumed = argv(&p.resume, &vars(true));
        assert!(!first.iter().any(|a| a == "-p" || a == "go"), "{first:?}");
        assert_eq!(resumed[2], "--continue");
        assert_eq!(p.interrupts, [Interrupt::Esc]);
        assert_eq!(p.home_files, profile("pi").expect("built in").home_files);
    }

    #[test]
    fn qwen_code_is_pointed_at_the_v1_base_url_on_its_command_line() {
        let p = profile("qwen-code").expect("built in");
        let first = argv(&p.command, &vars(false));
        let at = first
            .iter()
            .position(|a| a == "--openai-base-url")
            .expect("flag");
        assert_eq!(first[at + 1], "http://127.0.0.1:9/v1");
        assert_eq!(first.last().map(String::as_str), Some("go"));
        assert!(first.iter().any(|a| a == "--yolo"));
        let resumed = argv(&p.resume, &vars(true));
        assert!(resumed.iter().any(|a| a == "--continue"), "{resumed:?}");
        assert_eq!(p.shell_tool, "run_shell_command");
        let tui = profile("qwen-code-tui").expect("built in");
        let typed = argv(&tui.command, &vars(false));
        assert!(!typed.iter().any(|a| a == "go" || a == "stream-json"));
        assert_eq!(tui.interrupts, [Interrupt::Esc, Interrupt::CtrlC]);
        assert_eq!(tui.home_files[0].0, ".qwen/settings.json");
    }

    #[test]
    fn other_names_are_not_these_profiles() {
        assert!(profile("codex").is_none());
        assert!(install_hint("codex").is_none());
    }
}
