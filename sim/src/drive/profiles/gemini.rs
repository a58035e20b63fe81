//! The gemini-cli profiles (`@google/gemini-cli`, the Gemini API's
//! `streamGenerateContent`): `gemini-cli` headless (`gemini -p`) and `gemini-cli-tui`
//! (its terminal UI in a pty).
//!
//! Guarantee: each runs offline against the run's server and reads nothing of the
//! user's configuration. gemini-cli takes its base URL from `GOOGLE_GEMINI_BASE_URL`
//! and its key from `GEMINI_API_KEY` (a dummy); everything else it needs is in
//! `~/.gemini/settings.json`, written into the isolated HOME before every invocation:
//! the API-key auth selected (without it gemini-cli exits 41, "Invalid auth method
//! selected."), folder trust off (else an untrusted folder exits 55), no update check,
//! no usage statistics, no telemetry (each would reach Google's servers, and none is
//! the client under test). The model is named (`-m`): without it gemini-cli first asks
//! a router model five times before the loop starts, which costs every run seconds
//! and is not the loop under test (docs/real-clients-gemini.md). The resume is
//! `--resume latest`, the newest session of the working directory, which is the
//! resume that sends every function response twice (Finding 1 there): the profile
//! keeps it so `drive` finds that as it would any other fault.

use super::{Interrupt, Profile, ProviderFault};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// gemini-cli's settings, as docs/real-clients-gemini.md's Setup gives them.
const SETTINGS: &str = r#"{"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}}}"#;

/// The model every run names.
pub const MODEL: &str = "gemini-2.5-pro";

/// SIGINT, SIGTERM and SIGKILL, with a resume after each (as the other agents'
/// profiles; SIGHUP is Claude Code's own, and every run here costs two starts of a
/// Node program).
const SIGNALS: [Interrupt; 3] = [Interrupt::Sigint, Interrupt::Sigterm, Interrupt::Sigkill];

/// gemini-cli's program and flags: headless (`-p PROMPT`) or the terminal UI (the
/// prompt typed), first or resumed.
fn gemini(headless: bool, resume: bool) -> Vec<String> {
    let mut c = strings(&["gemini"]);
    if resume {
        c.extend(strings(&["--resume", "latest"]));
    }
    // Every tool call runs without a question (`--dangerously-skip-permissions`).
    c.extend(strings(&["--yolo", "-m", MODEL]));
    if headless {
        c.extend(strings(&[
            "--output-format",
            "stream-json",
            "-p",
            "{prompt}",
        ]));
    }
    c
}

/// The profile for `gemini-cli` or `gemini-cli-tui`; `None` for any other name.
pub fn profile(name: &str) -> Option<Profile> {
    let tui = match name {
        "gemini-cli" => false,
        "gemini-cli-tui" => true,
        _ => return None,
    };
    Some(Profile {
        name: name.into(),
        command: gemini(!tui, false),
        resume: gemini(!tui, true),
        env: vec![
            ("GEMINI_API_KEY".into(), "dummy".into()),
            ("GOOGLE_GEMINI_BASE_URL".into(), "{base_url}".into()),
        ],
        shell_tool: "run_shell_command".into(),
        faults: vec![
            ProviderFault::Overloaded,
            ProviderFault::RateLimited,
            ProviderFault::Cut,
        ],
        interrupts: if tui {
            vec![Interrupt::Esc, Interrupt::CtrlC]
        } else {
            SIGNALS.to_vec()
        },
        version: strings(&["gemini", "--version"]),
        home_files: vec![(".gemini/settings.json".into(), SETTINGS.into())],
    })
}

/// What to install for these profiles.
pub fn install_hint(name: &str) -> Option<&'static str> {
    matches!(name, "gemini-cli" | "gemini-cli-tui").then_some(
        "install gemini-cli: `npm install @google/gemini-cli` (or `sh scripts/clients/install.sh`) and put its node_modules/.bin on PATH",
    )
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
    fn gemini_cli_runs_headless_on_a_named_model_and_resumes_the_latest_session() {
        let p = profile("gemini-cli").expect("built in");
        assert_eq!(
            argv(&p.command, &vars(false)),
            [
                "gemini",
                "--yolo",
                "-m",
                "gemini-2.5-pro",
                "--output-format",
                "stream-json",
                "-p",
                "go"
            ]
        );
        assert_eq!(
            argv(&p.resume, &vars(true))[..3],
            ["gemini", "--resume", "latest"]
        );
        assert_eq!(p.shell_tool, "run_shell_command");
        let env: Vec<(String, String)> = p
            .env
            .iter()
            .map(|(k, v)| (k.clone(), substitute(v, &vars(false))))
            .collect();
        assert!(env.contains(&("GOOGLE_GEMINI_BASE_URL".into(), "http://127.0.0.1:9".into())));
        assert_eq!(p.interrupts, SIGNALS);
    }

    #[test]
    fn the_settings_file_selects_the_api_key_and_turns_off_every_call_home() {
        let p = profile("gemini-cli").expect("built in");
        let (path, content) = &p.home_files[0];
        assert_eq!(path, ".gemini/settings.json");
        let s: serde_json::Value = serde_json::from_str(content).expect("JSON");
        assert_eq!(s["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(s["security"]["folderTrust"]["enabled"], false);
        assert_eq!(s["general"]["enableAutoUpdate"], false);
        assert_eq!(s["privacy"]["usageStatisticsEnabled"], false);
        assert_eq!(s["telemetry"]["enabled"], false);
    }

    #[test]
    fn the_tui_types_its_prompt_and_interrupts_with_keys() {
        let p = profile("gemini-cli-tui").expect("built in");
        let first = argv(&p.command, &vars(false));
        assert!(!first.iter().any(|a| a == "-p" || a == "go"), "{first:?}");
        assert_eq!(first, ["gemini", "--yolo", "-m", "gemini-2.5-pro"]);
        assert_eq!(p.interrupts, [Interrupt::Esc, Interrupt::CtrlC]);
        assert!(profile("gemini").is_none());
        assert!(install_hint("codex").is_none());
        assert!(install_hint("gemini-cli-tui").is_some());
    }
}
