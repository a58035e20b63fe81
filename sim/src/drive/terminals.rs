//! The terminals of the built-in interactive profiles: for each TUI, the text that
//! says it takes input, the text it draws while a turn is open, how it is left, and
//! the first-run answers written into HOME.
//!
//! Guarantee: a terminal is data, read by the one driver in [`super::terminal`]; it
//! is serialized whole into every run file, so `--replay` drives a client the way
//! it was driven, whatever these entries have become since. Every entry names what
//! was seen on the client's own screen that it relies on.

use super::terminal::{Terminal, default_hang_up_ms};

/// The terminal of an interactive built-in profile (none for a headless one).
pub fn for_client(name: &str) -> Option<Terminal> {
    match name {
        "claude-code-tui" => Some(Terminal {
            // The status line once the prompt box is up (bypass mode, see below).
            ready: "bypass permissions on".into(),
            submit: "\r".into(),
            exit: "/exit".into(),
            busy: None,
            hang_up_after_ms: default_hang_up_ms(),
            home_files: vec![
                // Onboarding done (else it checks api.anthropic.com and stops), the
                // key approved, the working directory trusted.
                (
                    ".claude.json".into(),
                    r#"{"hasCompletedOnboarding":true,"theme":"dark","customApiKeyResponses":{"approved":["dummy"],"rejected":[]},"projects":{"{work}":{"hasTrustDialogAccepted":true,"hasCompletedProjectOnboarding":true}}}"#.into(),
                ),
                // The bypass-permissions warning already accepted.
                (
                    ".claude/settings.json".into(),
                    r#"{"skipDangerousModePermissionPrompt":true}"#.into(),
                ),
            ],
            esc_presses: 1,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        "codex-tui" => Some(Terminal {
            // The status line under the prompt box (model and reasoning effort),
            // drawn once the session has started and the box takes input.
            ready: "gpt-5 default".into(),
            submit: "\r".into(),
            exit: "/quit".into(),
            busy: None,
            hang_up_after_ms: default_hang_up_ms(),
            // Nothing to answer here: the profile's `-c` overrides give the
            // provider (no sign-in dialog) and trust the working directory (no
            // trust-this-folder question); the API key comes from the environment.
            home_files: Vec::new(),
            esc_presses: 1,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        "pi-tui" => Some(Terminal {
            // The key hints pi draws above its editor once it takes input.
            ready: "escape interrupt".into(),
            submit: "\r".into(),
            exit: "/quit".into(),
            busy: None,
            hang_up_after_ms: default_hang_up_ms(),
            // The provider's file is the profile's (headless needs it too).
            home_files: Vec::new(),
            esc_presses: 1,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        "qwen-code-tui" => Some(Terminal {
            // The input box's placeholder.
            ready: "Type your message".into(),
            submit: "\r".into(),
            exit: "/quit".into(),
            // The spinner line, "(12s · 40 tokens · esc to cancel)", redrawn while a
            // request or a tool runs and while a cancel winds down.
            busy: Some("esc to cancel".into()),
            // "Agent powering down. Goodbye!" comes at once, the process goes
            // later: more than 15 s after `/quit` on a loaded machine
            // (docs/real-clients-openai.md), so a hang-up at 15 s would cut its
            // own exit short.
            hang_up_after_ms: 60_000,
            // The provider is on the command line; settings are the profile's.
            home_files: Vec::new(),
            esc_presses: 1,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        "gemini-cli-tui" => Some(Terminal {
            // The input box's placeholder, drawn once gemini-cli takes input (seen
            // offline against a closed port: no dialog comes first with the
            // profile's settings file).
            ready: "Type your message".into(),
            submit: "\r".into(),
            exit: "/quit".into(),
            // The loading line, "(esc to cancel, 3s)", drawn while the stream state
            // is `responding`: a request, a tool or a retry in flight.
            busy: Some("esc to cancel".into()),
            hang_up_after_ms: default_hang_up_ms(),
            // The settings file is the profile's (headless needs it too).
            home_files: Vec::new(),
            esc_presses: 1,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        // cline's UI, for `cline-tui` and for the resume of headless `cline` (its
        // only resume, so that terminal is the resume's alone).
        "cline" | "cline-tui" => Some(Terminal {
            // The status line under the input box, drawn once it takes input (with
            // or without `--id`).
            ready: "Auto-approve all enabled".into(),
            submit: "\r".into(),
            exit: "/quit".into(),
            // Its notices already shown: else a "Try ClinePass" dialog takes the
            // first key typed (ids and file read in the bundled source of 3.0.65).
            home_files: vec![(
                ".cline/data/settings/cli-notices.json".into(),
                r#"{"shown":{"cline-cli-cline-pass-intro":true,"cline-cli-desktop-launch":true}}"#
                    .into(),
            )],
            esc_presses: 1,
            rows: 40,
            cols: 120,
            // No busy text known: its runs (before the busy rule existed) needed none.
            busy: None,
            hang_up_after_ms: default_hang_up_ms(),
            resume_only: name == "cline",
        }),
        "opencode-tui" => Some(Terminal {
            // The footer's key hints under the input box, drawn once it takes input,
            // on the home screen and on a continued session's screen alike (the
            // home screen's placeholder, "Ask anything…", is not drawn on the latter).
            ready: "ctrl+p commands".into(),
            submit: "\r".into(),
            exit: "/exit".into(),
            // The footer's "esc interrupt" is drawn once per turn (the UI redraws
            // only cells that change); what it redraws many times a second while a
            // turn is open is the spinner left of it, a row of ■ and ⬝ cells.
            busy: Some("⬝".into()),
            hang_up_after_ms: default_hang_up_ms(),
            // The provider is in the profile's environment; no first-run dialog.
            home_files: Vec::new(),
            // The first Esc of a turn only arms ("esc again to interrupt", for a few
            // seconds); the second interrupts. Ctrl+C leaves the UI.
            esc_presses: 2,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        "test-client-tui" => Some(Terminal {
            ready: "turnsim-test-client>".into(),
            submit: "\r".into(),
            exit: "/exit".into(),
            busy: Some("turnsim-test-client: working".into()),
            hang_up_after_ms: default_hang_up_ms(),
            home_files: Vec::new(),
            esc_presses: 1,
            rows: 40,
            cols: 120,
            resume_only: false,
        }),
        _ => None,
    }
}
