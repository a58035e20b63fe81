//! The OpenAI-speaking built-in profiles: Codex CLI (Responses API), the
//! `openai-agents` Runner, and the `openai` SDK's tool loop in Chat Completions.
//!
//! Guarantee: each is plain [`Profile`] data run by the same code as every other
//! client, and each runs offline: Codex gets its whole provider configuration through
//! `-c` overrides on the command line (no config file, so the isolated HOME needs
//! nothing written into it), with `wire_api = "responses"` and a base URL on loopback;
//! the Python clients get the base URL as an argument and tracing off. Codex's own
//! shell tool is `exec_command` (a `cmd` string); a generated command sleeps well
//! under its 10 s `yield_time_ms`, so it finishes instead of becoming a session.
//! Codex retries a 429 only with `retry-after`, which serve always sends; its stream
//! idle watchdog is 300 s, so it gets no hangs.
//!
//! `codex-tui` is the same provider configuration given to Codex's interactive
//! terminal UI (`codex`, resumed with `codex resume --last`), driven in a pty by
//! [`crate::drive::terminal`] with keys instead of signals.

use super::{Interrupt, Profile, ProviderFault};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

const ALL_SIGNALS: [Interrupt; 3] = [Interrupt::Sigint, Interrupt::Sigterm, Interrupt::Sigkill];

/// The `-c` overrides that point Codex at the server.
fn codex_config() -> Vec<String> {
    let provider = concat!(
        r#"model_providers.turnsim={name="turnsim",base_url="{base_url_v1}","#,
        r#"wire_api="responses",env_key="OPENAI_API_KEY","#,
        r#"request_max_retries=4,stream_max_retries=4}"#
    );
    let mut out = Vec::new();
    for c in [r#"model="gpt-5""#, r#"model_provider="turnsim""#, provider] {
        out.push("-c".to_owned());
        out.push(c.to_owned());
    }
    out
}

/// Codex's interactive UI: what `codex` (headless) runs, minus `exec`, `--json` and
/// the prompt (typed into the UI instead), with the keys a user presses. The custom
/// provider is also what keeps the UI offline: with OpenAI's default provider it
/// opens on a sign-in dialog (ChatGPT or API key) even with `OPENAI_API_KEY` set.
pub fn codex_tui() -> Profile {
    let run = |resume: bool| {
        let mut c = strings(&["codex"]);
        if resume {
            // The interactive resume; `--last` skips the session picker and takes
            // the newest session of this working directory.
            c.extend(strings(&["resume", "--last"]));
        }
        c.extend(codex_config());
        c.extend(strings(&[
            // The TUI asks GitHub for a newer release at start; offline that is
            // only a failed request, but it is not the client under test.
            "-c",
            "check_for_update_on_startup=false",
            // The working directory trusted, as a returning user has answered:
            // inside a git checkout (an `--out` under one) the UI otherwise
            // stops at "Trust this folder?", bypass flag or not.
            "-c",
            r#"projects={"{work}"={trust_level="trusted"}}"#,
            // As headless: no approval prompt holding a command, no sandbox (the
            // harness runs as root, and the tool must write its ledger).
            "--dangerously-bypass-approvals-and-sandbox",
            // The agent runs inside this process (and group), never in a shared
            // background server that outlives the run or serves another one. With
            // an isolated HOME none is running, so this only keeps it that way.
            "--no-daemon",
        ]));
        c
    };
    Profile {
        name: "codex-tui".into(),
        command: run(false),
        resume: run(true),
        interrupts: vec![Interrupt::Esc, Interrupt::CtrlC],
        ..profile("codex")
    }
}

/// The profile for one of `codex`, `openai-agents`, `openai-chat`.
pub fn profile(name: &str) -> Profile {
    match name {
        "codex" => {
            let run = |resume: bool| {
                let mut c = strings(&["codex", "exec"]);
                if resume {
                    c.extend(strings(&["resume", "--last"]));
                }
                c.extend(codex_config());
                c.extend(strings(&[
                    "--skip-git-repo-check",
                    "--dangerously-bypass-approvals-and-sandbox",
                    "--json",
                    "{prompt}",
                ]));
                c
            };
            Profile {
                name: name.into(),
                command: run(false),
                resume: run(true),
                env: vec![("OPENAI_API_KEY".into(), "dummy".into())],
                shell_tool: "exec_command".into(),
                faults: vec![
                    ProviderFault::Overloaded,
                    ProviderFault::RateLimited,
                    ProviderFault::Cut,
                ],
                interrupts: ALL_SIGNALS.to_vec(),
                version: strings(&["codex", "--version"]),
                home_files: Vec::new(),
            }
        }
        "openai-agents" => {
            let run = || {
                strings(&[
                    "python3",
                    "{repo}/scripts/openai_agents_loop.py",
                    "{base_url}",
                    "--session",
                    "{work}/session.db",
                    "--prompt",
                    "{prompt}",
                ])
            };
            Profile {
                name: name.into(),
                command: run(),
                resume: run(),
                env: vec![("OPENAI_AGENTS_DISABLE_TRACING".into(), "1".into())],
                shell_tool: "run_shell".into(),
                faults: vec![ProviderFault::Overloaded, ProviderFault::RateLimited],
                interrupts: ALL_SIGNALS.to_vec(),
                version: strings(&[
                    "python3",
                    "-c",
                    "import agents, importlib.metadata as m; print(m.version('openai-agents'))",
                ]),
                home_files: Vec::new(),
            }
        }
        _ => {
            let run = |resume: bool| {
                let mut c = strings(&[
                    "python3",
                    "{repo}/scripts/openai_tool_loop.py",
                    "{base_url}",
                    "--api",
                    "chat",
                    "--history",
                    "{work}/history.json",
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
                env: Vec::new(),
                shell_tool: "exec_command".into(),
                // A cut stream ends the loop with the SDK's exception (not retried).
                faults: vec![ProviderFault::Overloaded, ProviderFault::RateLimited],
                interrupts: ALL_SIGNALS.to_vec(),
                version: strings(&["python3", "-c", "import openai; print(openai.__version__)"]),
                home_files: Vec::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::profiles::{Vars, argv};

    #[test]
    fn codex_resumes_the_last_session_and_is_pointed_at_the_v1_base_url() {
        let p = profile("codex");
        let v = Vars {
            base_url: "http://127.0.0.1:9".into(),
            prompt: "go".into(),
            home: "/h".into(),
            work: "/w".into(),
            resume: true,
        };
        let args = argv(&p.resume, &v);
        assert_eq!(&args[..4], ["codex", "exec", "resume", "--last"]);
        assert!(
            args.iter()
                .any(|a| a.contains(r#"base_url="http://127.0.0.1:9/v1""#)),
            "{args:?}"
        );
        assert_eq!(args.last().map(String::as_str), Some("go"));
        assert_eq!(p.shell_tool, "exec_command");
    }

    #[test]
    fn codex_tui_resumes_the_last_interactive_session_with_the_same_provider() {
        let p = codex_tui();
        let v = Vars {
            base_url: "http://127.0.0.1:9".into(),
            prompt: "go".into(),
            home: "/h".into(),
            work: "/w".into(),
            resume: true,
        };
        let first = argv(&p.command, &v);
        let resumed = argv(&p.resume, &v);
        assert_eq!(first[0], "codex");
        assert_eq!(&resumed[..3], ["codex", "resume", "--last"]);
        // Interactive: no `exec`, no JSON output, and the prompt is typed, not passed.
        for args in [&first, &resumed] {
            assert!(
                !args
                    .iter()
                    .any(|a| a == "exec" || a == "--json" || a == "go")
            );
            assert!(
                args.iter()
                    .any(|a| a.contains(r#"base_url="http://127.0.0.1:9/v1""#)),
                "{args:?}"
            );
            assert!(args.iter().any(|a| a == "--no-daemon"));
            assert!(
                args.iter()
                    .any(|a| a == r#"projects={"/w"={trust_level="trusted"}}"#),
                "{args:?}"
            );
        }
        assert_eq!(first[1..], resumed[3..]);
        assert_eq!(p.interrupts, [Interrupt::Esc, Interrupt::CtrlC]);
        assert_eq!(p.shell_tool, "exec_command");
        assert_eq!(p.env, profile("codex").env);
    }
}
