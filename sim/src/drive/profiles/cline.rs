//! The cline profiles (`cline` on npm, OpenAI Chat Completions through its
//! `openai-compatible` provider): `cline` headless (`cline --json PROMPT`) and
//! `cline-tui` (its terminal UI in a pty).
//!
//! Guarantee: each runs offline against the run's server with a dummy key and
//! nothing of the user's configuration. cline takes a provider's base URL only from
//! `~/.cline/data/settings/providers.json` (what `cline auth -b` writes), so the
//! profile writes that file into the isolated HOME before every invocation with the
//! run's port; `-P openai-compatible` is on every command line, since without it a
//! run goes to the default provider (api.cline.bot) whatever the file says.
//!
//! `CLINE_SESSION_BACKEND_MODE=local` is set on purpose: by default (`auto`) a
//! headless run starts a hub daemon, detached (its own session, parent pid 1), on a
//! fixed port (25463) shared by every HOME, that outlives the run; every run would
//! leave it as a stray and runs in parallel would share one. `local` keeps a headless
//! run in its own process. The terminal UI starts the hub even so (cline 3.0.65):
//! `stray_process` reports it, as a daemon by design (docs/real-clients-openai.md).
//!
//! cline has no headless resume (`--json --id` refuses a prompt), so the resume of
//! both profiles is the terminal UI on the newest session, whose id `cline history
//! --json` gives at run time: a `sh -c` wrapper reads it and `exec`s
//! `cline --tui --id ID`, typed into like any TUI (the headless profile's terminal is
//! resume-only: `crate::drive::terminals::for_client`).

use super::{Interrupt, Profile, ProviderFault};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The model named on every command line (the server answers any).
pub const MODEL: &str = "gpt-4o";

/// cline's provider file, as `cline auth -p openai-compatible -k dummy -m gpt-4o -b
/// URL` writes it; `updatedAt` is part of what it writes.
const PROVIDERS: &str = r#"{"version":1,"lastUsedProvider":"openai-compatible","providers":{"openai-compatible":{"settings":{"provider":"openai-compatible","apiKey":"dummy","model":"gpt-4o","baseUrl":"{base_url_v1}"},"updatedAt":"2026-01-01T00:00:00.000Z","tokenSource":"manual"}}}"#;

/// Picks the newest session's id from `cline history --json` on stdin (node is there:
/// cline's launcher is a node program).
const NEWEST: &str = "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const a=JSON.parse(s||'[]');a.sort((x,y)=>String(y.startedAt).localeCompare(String(x.startedAt)));process.stdout.write(a.length?String(a[0].sessionId):'')})";

/// SIGINT, SIGTERM and SIGKILL, with a resume after each (as the other agents').
const SIGNALS: [Interrupt; 3] = [Interrupt::Sigint, Interrupt::Sigterm, Interrupt::Sigkill];

fn provider_flags() -> Vec<String> {
    strings(&["-P", "openai-compatible", "-m", MODEL])
}

/// The resume: the terminal UI on the newest session, its id read at run time.
fn resume() -> Vec<String> {
    let script = format!(
        "id=$(cline history --json | node -e \"{NEWEST}\") && [ -n \"$id\" ] || {{ echo 'turnsim: cline history lists no session to resume' >&2; exit 3; }}; exec cline --tui --id \"$id\" -P openai-compatible -m {MODEL}"
    );
    vec!["sh".into(), "-c".into(), script]
}

/// The profile for `cline` or `cline-tui`; `None` for any other name.
pub fn profile(name: &str) -> Option<Profile> {
    let tui = match name {
        "cline" => false,
        "cline-tui" => true,
        _ => return None,
    };
    let mut command = strings(&["cline"]);
    if tui {
        command.push("--tui".into());
    } else {
        command.push("--json".into());
    }
    command.extend(provider_flags());
    if !tui {
        // Auto-approve is cline's default in both modes: every tool runs unasked.
        command.push("{prompt}".into());
    }
    Some(Profile {
        name: name.into(),
        command,
        resume: resume(),
        env: vec![("CLINE_SESSION_BACKEND_MODE".into(), "local".into())],
        shell_tool: "run_commands".into(),
        faults: if tui {
            // An error in the TUI is shown and waited on: no stream cut there.
            vec![ProviderFault::Overloaded, ProviderFault::RateLimited]
        } else {
            vec![
                ProviderFault::Overloaded,
                ProviderFault::RateLimited,
                ProviderFault::Cut,
            ]
        },
        interrupts: if tui {
            vec![Interrupt::Esc, Interrupt::CtrlC]
        } else {
            SIGNALS.to_vec()
        },
        version: strings(&["cline", "--version"]),
        home_files: vec![(
            ".cline/data/settings/providers.json".into(),
            PROVIDERS.into(),
        )],
    })
}

/// What to install for these profiles.
pub fn install_hint(name: &str) -> Option<&'static str> {
    matches!(name, "cline" | "cline-tui").then_some(
        "install cline: `npm install cline@3.0.65` (or `sh scripts/clients/install.sh`) and put its node_modules/.bin on PATH",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::profiles::{Vars, argv, substitute};

    fn vars(resume: bool) -> Vars {
        Vars {
            base_url: "http://127.0.0.1:9".into(),
            prompt: "go now".into(),
            home: "/h".into(),
            work: "/w".into(),
            resume,
        }
    }

    #[test]
    fn headless_cline_names_the_openai_compatible_provider_and_takes_the_prompt() {
        let p = profile("cline").expect("built in");
        assert_eq!(
            argv(&p.command, &vars(false)),
            [
                "cline",
                "--json",
                "-P",
                "openai-compatible",
                "-m",
                "gpt-4o",
                "go now"
            ]
        );
        assert_eq!(p.shell_tool, "run_commands");
        assert_eq!(
            p.env,
            [("CLINE_SESSION_BACKEND_MODE".to_owned(), "local".to_owned())]
        );
        assert_eq!(p.interrupts, SIGNALS);
        assert!(p.faults.contains(&ProviderFault::Cut));
    }

    #[test]
    fn the_providers_file_holds_the_runs_v1_url_and_an_update_time() {
        let p = profile("cline").expect("built in");
        assert_eq!(p.home_files.len(), 1);
        let (path, content) = &p.home_files[0];
        assert_eq!(path, ".cline/data/settings/providers.json");
        let v: serde_json::Value =
            serde_json::from_str(&substitute(content, &vars(false))).expect("JSON");
        let entry = &v["providers"]["openai-compatible"];
        assert_eq!(entry["settings"]["baseUrl"], "http://127.0.0.1:9/v1");
        assert_eq!(entry["settings"]["provider"], "openai-compatible");
        assert_eq!(entry["settings"]["model"], "gpt-4o");
        assert_eq!(entry["updatedAt"], "2026-01-01T00:00:00.000Z");
        assert_eq!(v["lastUsedProvider"], "openai-compatible");
    }

    #[test]
    fn the_resume_reads_the_newest_session_id_and_opens_the_tui_on_it() {
        let p = profile("cline").expect("built in");
        let r = argv(&p.resume, &vars(true));
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[..2], ["sh", "-c"]);
        assert!(
            r[2].starts_with("id=$(cline history --json | node -e "),
            "{r:?}"
        );
        assert!(
            r[2].ends_with("exec cline --tui --id \"$id\" -P openai-compatible -m gpt-4o"),
            "{r:?}"
        );
        // The typed prompt is no argument of the resume.
        assert!(!r[2].contains("go now"));
        assert_eq!(profile("cline-tui").expect("built in").resume, p.resume);
    }

    #[test]
    fn the_tui_types_its_prompt_interrupts_with_keys_and_its_dialog_is_answered() {
        let p = profile("cline-tui").expect("built in");
        assert_eq!(
            argv(&p.command, &vars(false)),
            ["cline", "--tui", "-P", "openai-compatible", "-m", "gpt-4o"]
        );
        assert_eq!(p.interrupts, [Interrupt::Esc, Interrupt::CtrlC]);
        assert!(!p.faults.contains(&ProviderFault::Cut));
        let t = crate::drive::terminals::for_client("cline-tui").expect("a terminal");
        assert!(t.runs(false) && t.runs(true));
        let headless = crate::drive::terminals::for_client("cline").expect("a terminal");
        assert!(!headless.runs(false) && headless.runs(true));
        assert_eq!(t.exit, "/quit");
        assert_eq!(t.ready, "Auto-approve all enabled");
        let (path, content) = &t.home_files[0];
        assert_eq!(path, ".cline/data/settings/cli-notices.json");
        let v: serde_json::Value = serde_json::from_str(content).expect("JSON");
        assert_eq!(v["shown"]["cline-cli-cline-pass-intro"], true);
        assert!(profile("cline-cli").is_none());
        assert!(install_hint("cline-tui").is_some() && install_hint("codex").is_none());
    }
}
