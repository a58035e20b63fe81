//! The opencode profiles (`opencode-ai` on npm, Anthropic Messages): `opencode`
//! headless (`opencode run`) and `opencode-tui` (its terminal UI in a pty).
//!
//! Guarantee: both run offline against the run's server with a dummy key and read
//! nothing of the user's configuration, and both run the same configuration, so a
//! difference between the modes is the mode's. opencode takes its whole provider from
//! `OPENCODE_CONFIG_CONTENT` (the anthropic provider with the server's `/v1` as its
//! base URL), and the `OPENCODE_DISABLE_*` switches keep it from fetching the model
//! list, updating itself, sharing, downloading language servers, loading the default
//! plugins or reading Claude Code's files: none can work offline and none is the
//! client under test. `--pure` leaves out external plugins. The TUI is the same
//! program without `run`; its prompt is typed (see [`crate::drive::terminal`]) and
//! its resume is `--continue`, the newest session of the working directory, as
//! headless.

use super::{Interrupt, Profile, ProviderFault};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The provider configuration, as the headless profile has run it since the first
/// round (docs/real-clients.md).
const CONFIG: &str = r#"{"$schema":"https://opencode.ai/config.json","model":"anthropic/claude-sonnet-4-5","provider":{"anthropic":{"options":{"baseURL":"{base_url_v1}","apiKey":"dummy"}}}}"#;

const FAULTS: [ProviderFault; 3] = [
    ProviderFault::Overloaded,
    ProviderFault::RateLimited,
    ProviderFault::Cut,
];

fn env() -> Vec<(String, String)> {
    [
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_SHARE", "1"),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
        ("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
        ("ANTHROPIC_API_KEY", "dummy"),
        ("OPENCODE_CONFIG_CONTENT", CONFIG),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

/// opencode's program and flags: headless (`run --format json PROMPT`) or the
/// terminal UI (the prompt typed), first or resumed.
fn opencode(headless: bool, resume: bool) -> Vec<String> {
    let mut c = strings(&["opencode"]);
    if headless {
        c.push("run".into());
    }
    c.push("--pure".into());
    if headless {
        c.extend(strings(&["--format", "json"]));
    }
    if resume {
        c.push("--continue".into());
    }
    if headless {
        c.push("{prompt}".into());
    }
    c
}

/// The profile for `opencode` or `opencode-tui`; `None` for any other name.
pub fn profile(name: &str) -> Option<Profile> {
    let tui = match name {
        "opencode" => false,
        "opencode-tui" => true,
        _ => return None,
    };
    Some(Profile {
        name: name.into(),
        command: opencode(!tui, false),
        resume: opencode(!tui, true),
        env: env(),
        shell_tool: "bash".into(),
        faults: FAULTS.to_vec(),
        interrupts: if tui {
            vec![Interrupt::Esc, Interrupt::CtrlC]
        } else {
            vec![
                Interrupt::Sigint,
                Interrupt::Sigterm,
                Interrupt::Sighup,
                Interrupt::Sigkill,
            ]
        },
        version: strings(&["opencode", "--version"]),
        home_files: Vec::new(),
    })
}

/// What to install for these profiles.
pub fn install_hint(name: &str) -> Option<&'static str> {
    matches!(name, "opencode" | "opencode-tui").then_some(
        "install opencode: `npm install opencode-ai` (or `sh scripts/clients/install.sh`) and put its node_modules/.bin on PATH",
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
    fn opencode_runs_headless_with_the_prompt_and_resumes_the_last_session() {
        let p = profile("opencode").expect("built in");
        assert_eq!(
            argv(&p.command, &vars(false)),
            ["opencode", "run", "--pure", "--format", "json", "go"]
        );
        assert_eq!(
            argv(&p.resume, &vars(true)),
            [
                "opencode",
                "run",
                "--pure",
                "--format",
                "json",
                "--continue",
                "go"
            ]
        );
        assert_eq!(p.shell_tool, "bash");
        assert_eq!(p.interrupts.len(), 4);
    }

    #[test]
    fn the_provider_points_at_the_v1_base_url_of_the_run() {
        let p = profile("opencode-tui").expect("built in");
        let (_, config) = p
            .env
            .iter()
            .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
            .expect("config");
        let c: serde_json::Value =
            serde_json::from_str(&substitute(config, &vars(false))).expect("JSON");
        assert_eq!(
            c["provider"]["anthropic"]["options"]["baseURL"],
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(c["model"], "anthropic/claude-sonnet-4-5");
        assert_eq!(p.env, profile("opencode").expect("built in").env);
    }

    #[test]
    fn the_tui_types_its_prompt_resumes_with_continue_and_interrupts_with_keys() {
        let p = profile("opencode-tui").expect("built in");
        assert_eq!(argv(&p.command, &vars(false)), ["opencode", "--pure"]);
        assert_eq!(
            argv(&p.resume, &vars(true)),
            ["opencode", "--pure", "--continue"]
        );
        assert_eq!(p.interrupts, [Interrupt::Esc, Interrupt::CtrlC]);
        assert!(profile("opencode-cli").is_none());
        assert!(install_hint("opencode-tui").is_some());
        assert!(install_hint("pi").is_none());
    }
}
