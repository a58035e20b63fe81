//! One driven run: a server, a client, a seeded interruption, a resume, and the facts
//! the observations judge.
//!
//! Guarantee: a run always ends, and leaves no process behind: each invocation is
//! run, watched and cleaned up by [`super::invoke`]. The schedule is a pure function of the seed and the
//! profile (drawn through [`Decider`]), and is saved with the profile in the run
//! file, so `--replay` repeats the same schedule; the client itself is not
//! deterministic, which is why a failing schedule is rerun and measured.
//!
//! The server's script is built as typed [`Step`]s, so a schedule cannot produce a
//! step the server would refuse; signals go through [`super::procs`], the one file of
//! `drive` with `unsafe`.

use super::invoke::{Invocation, Running, Sent, add_late_effects, invoke, ledger_lines};
use super::procs;
use super::profiles::{Profile, ProviderFault, Vars};
pub use super::schedule::{DriveOptions, Schedule};
use super::terminal::Terminal;
use super::tool::{self, Event};
use super::tree::Tracker;
use crate::scenario::{ScriptedCall, ScriptedResponse, ScriptedStop};
use crate::serve::ServeConfig;
use crate::serve::record::Record;
use crate::serve::script::{Script, Step};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub const RUN_FORMAT: &str = "turnsim-drive-run";
/// 2: tool duration in the schedule, the signal's delay spread over it, SIGHUP.
pub const RUN_VERSION: u32 = 2;

/// The first prompt; the marker in brackets lets the checks find it in any history.
pub const PROMPT_1: &str =
    "Run the project's checks one step at a time with the shell tool. [turnsim-drive prompt 1]";
/// The prompt sent with the resume command.
pub const PROMPT_2: &str =
    "Continue: run one more check and summarise what ran. [turnsim-drive prompt 2]";

/// Tells apart the markers of runs started by one harness process.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// The run file: everything `turnsim drive --replay` needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFile {
    pub format: String,
    pub version: u32,
    pub profile: Profile,
    pub schedule: Schedule,
    pub timeout_secs: u64,
    /// The interactive mode: the client runs in a pty ([`super::terminal`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<Terminal>,
}

impl RunFile {
    pub fn new(profile: Profile, schedule: Schedule, timeout_secs: u64) -> RunFile {
        RunFile {
            format: RUN_FORMAT.into(),
            version: RUN_VERSION,
            terminal: super::terminals::for_client(&profile.name),
            profile,
            schedule,
            timeout_secs,
        }
    }

    pub fn load(path: &Path) -> Result<RunFile, String> {
        let origin = path.display();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{origin}: cannot read: {e}"))?;
        let f: RunFile = serde_json::from_str(&text).map_err(|e| format!("{origin}: {e}"))?;
        if f.format != RUN_FORMAT {
            return Err(format!(
                "{origin}: not a drive run file (format {RUN_FORMAT})"
            ));
        }
        if f.version != RUN_VERSION {
            return Err(format!(
                "{origin}: version {} is not supported; this turnsim reads version {RUN_VERSION}",
                f.version
            ));
        }
        if f.profile.command.is_empty() || f.profile.resume.is_empty() {
            return Err(format!("{origin}: the profile has an empty command"));
        }
        if f.terminal.as_ref().is_none_or(|t| !t.runs(false))
            && let Some(k) = f.schedule.interrupt.filter(|i| i.is_key())
        {
            return Err(format!(
                "{origin}: the schedule types {} but the first invocation runs in no terminal",
                k.name()
            ));
        }
        Ok(f)
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::scenario::write_atomic(path, format!("{text}\n").as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Everything observed in one run.
#[derive(Clone, Debug)]
pub struct Facts {
    pub schedule: Schedule,
    pub first: Invocation,
    pub resumed: Invocation,
    pub sent: Option<Sent>,
    /// Ledger lines after the first invocation.
    pub ledger_first: usize,
    /// The ledger's lines at the end ([`super::tool`] says what they hold).
    pub ledger: Vec<String>,
    /// The ledger's events, times since the run started.
    pub events: Vec<Event>,
    /// Index of the first request of the resumed invocation.
    pub resume_request: u64,
    pub records: Vec<Record>,
    /// When the harness first saw each request arrive (run-relative ms), index for
    /// index with the server's requests.
    pub request_ms: Vec<i64>,
}

impl Facts {
    /// Whether call `id` started in the first invocation: its `start` line is among
    /// the ledger lines written before the resumed one began.
    pub fn started_first(&self, id: &str) -> bool {
        tool::started(&self.ledger[..self.ledger_first.min(self.ledger.len())])
            .iter()
            .any(|s| s == id)
    }
}

/// A scripted reply: `text`, then either one call of the shell tool (`stop_tool`) or
/// the end of the turn.
fn reply(text: &str, shell: &str, stop_tool: bool) -> ScriptedResponse {
    let (tool_calls, stop) = if stop_tool {
        let call = ScriptedCall {
            name: shell.to_owned(),
            input: Value::Object(serde_json::Map::new()),
        };
        (vec![call], ScriptedStop::ToolUse)
    } else {
        (Vec::new(), ScriptedStop::EndTurn)
    };
    ScriptedResponse::Reply {
        thinking: None,
        text: text.to_owned(),
        tool_calls,
        stop,
    }
}

/// The step that plays a provider fault before the reply `text` would have come.
fn fault_step(fault: ProviderFault, text: &str, shell: &str) -> Step {
    match fault {
        ProviderFault::Overloaded => Step::Status {
            status: 529,
            retry_after: None,
        },
        ProviderFault::RateLimited => Step::Status {
            status: 429,
            retry_after: Some(1),
        },
        // Five events in is inside the tool call's input: the cut lands mid-call.
        ProviderFault::Cut => Step::Cut {
            after_events: 5,
            mid_event: true,
            reply: Some(reply(text, shell, true)),
        },
        ProviderFault::Hang => Step::Sim(ScriptedResponse::Hang { after_events: 0 }),
    }
}

/// The first phase's script: `rounds` shell calls, the fault before one, then done.
pub fn first_steps(s: &Schedule, shell: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0..s.rounds {
        let text = format!("Running check {}.", i + 1);
        if i == s.fault_at
            && let Some(f) = s.fault
        {
            steps.push(fault_step(f, &text, shell));
        }
        steps.push(Step::Sim(reply(&text, shell, true)));
    }
    steps.push(Step::Sim(reply("All checks ran.", shell, false)));
    steps
}

/// The resumed phase's script: one shell call, then done.
pub fn resume_steps(shell: &str) -> Vec<Step> {
    vec![
        Step::Sim(reply("One more check.", shell, true)),
        Step::Sim(reply("Summary: every check ran.", shell, false)),
    ]
}

/// Runs one schedule in `dir` (created; emptied first).
pub fn run_schedule(file: &RunFile, dir: &Path) -> Result<Facts, String> {
    // The client runs in `work/`: a relative run directory would be resolved from
    // there, so its HOME, history and tool script would point nowhere (`--out runs`
    // made every opencode run fail before its first tool). Absolute from here on.
    let abs = std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = abs.as_path();
    let _ = std::fs::remove_dir_all(dir);
    let profile = &file.profile;
    let s = &file.schedule;
    let home = dir.join("home");
    let work = dir.join("work");
    let serve_dir = dir.join("serve");
    for d in [
        &home,
        &work,
        &serve_dir.join("scratch"),
        &dir.join("record"),
    ] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    file.save(&dir.join("run.json"))?;
    let timeout = Duration::from_secs(file.timeout_secs.max(1));
    let script = dir.join("tool.sh");
    tool::write_script(&script)?;
    let mut config = ServeConfig::new(Script::seeded(s.seed, false), &serve_dir);
    config.record = Some(dir.join("record"));
    config.workspace.min_sleep_ms = s.tool_ms;
    config.workspace.max_sleep_ms = s.tool_ms;
    config.workspace.tool_script = Some(script);
    config.hang_limit_ms = file.timeout_secs.saturating_mul(1000);
    let ledger = config.workspace.ledger.clone();
    let handle = crate::serve::http::spawn(config, 0).map_err(|e| format!("serve: {e}"))?;
    handle
        .server
        .replace_steps(first_steps(s, &profile.shell_tool));
    let mut vars = Vars {
        base_url: handle.base_url(),
        prompt: PROMPT_1.into(),
        home: home.display().to_string(),
        work: work.display().to_string(),
        resume: false,
    };
    // Orphans of the run's processes are reparented to the harness, not to pid 1:
    // they stay below it (and are reaped by it) whatever group or session they left
    // for. Refused only by a kernel without it (before 3.4), which changes nothing
    // else: the trees and the marker still find them.
    procs::become_subreaper();
    let t0 = procs::boot_ms();
    let mut running = Running {
        ledger: &ledger,
        tracker: Tracker::default(),
        profile,
        dir,
        timeout,
        tool_ms: s.tool_ms,
        t0,
        marker: format!(
            "{}-{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed),
            s.seed
        ),
        server: &handle,
        terminal: file.terminal.as_ref(),
        arrivals: Vec::new(),
    };
    let (mut first, sent) = invoke(&profile.command, &vars, "first", Some(s), &mut running);
    let ledger_first = ledger_lines(&ledger);
    let resume_request = handle.server.requests_seen();
    handle
        .server
        .replace_steps(resume_steps(&profile.shell_tool));
    vars.prompt = PROMPT_2.into();
    vars.resume = true;
    let (mut resumed, _) = invoke(&profile.resume, &vars, "resumed", None, &mut running);
    let records = handle.server.records();
    let lines: Vec<String> = std::fs::read_to_string(&ledger)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut events = tool::events(&lines);
    // A call belongs to the invocation whose ledger lines hold its start, not to the
    // one its timestamp falls in: `/proc/uptime` truncates to 10 ms, so a call the
    // resumed client starts within 10 ms of its launch can read as started before.
    let first_ids = tool::started(&lines[..ledger_first.min(lines.len())]);
    let (of_first, of_resumed): (Vec<tool::Event>, Vec<tool::Event>) = events
        .iter()
        .cloned()
        .partition(|e| first_ids.contains(&e.id));
    add_late_effects(&mut first, &of_first, |b| running.rel(b));
    add_late_effects(&mut resumed, &of_resumed, |b| running.rel(b));
    for e in &mut events {
        e.boot_ms = e.boot_ms.saturating_sub(t0);
    }
    let request_ms = std::mem::take(&mut running.arrivals);
    drop(running);
    handle.stop();
    Ok(Facts {
        schedule: s.clone(),
        first,
        resumed,
        sent,
        ledger_first,
        ledger: lines,
        events,
        resume_request,
        records,
        request_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::script::parse_step;
    use serde_json::json;

    fn schedule(fault: ProviderFault) -> Schedule {
        Schedule {
            seed: 0,
            fault: Some(fault),
            fault_at: 1,
            rounds: 2,
            interrupt: None,
            interrupt_at_tool: 0,
            interrupt_delay_ms: 0,
            tool_ms: 1000,
        }
    }

    fn parsed(v: serde_json::Value) -> Step {
        parse_step(&v).expect("a valid serve-script step")
    }

    #[test]
    fn typed_steps_are_the_serve_script_steps_they_stand_for() {
        let call = json!({"kind": "reply", "text": "Running check 2.",
            "tool_calls": [{"name": "bash"}], "stop": "tool_use"});
        for (fault, step) in [
            (
                ProviderFault::Overloaded,
                json!({"kind": "status", "status": 529}),
            ),
            (
                ProviderFault::RateLimited,
                json!({"kind": "status", "status": 429, "retry_after": 1}),
            ),
            (
                ProviderFault::Cut,
                json!({"kind": "cut", "after_events": 5, "mid_event": true, "reply": call}),
            ),
            (
                ProviderFault::Hang,
                json!({"kind": "hang", "after_events": 0}),
            ),
        ] {
            let steps = first_steps(&schedule(fault), "bash");
            assert_eq!(
                steps,
                vec![
                    parsed(json!({"kind": "reply", "text": "Running check 1.",
                        "tool_calls": [{"name": "bash"}], "stop": "tool_use"})),
                    parsed(step),
                    parsed(call.clone()),
                    parsed(json!({"kind": "reply", "text": "All checks ran.", "stop": "end_turn"})),
                ],
                "{fault:?}"
            );
        }
        assert_eq!(
            resume_steps("Bash"),
            vec![
                parsed(json!({"kind": "reply", "text": "One more check.",
                    "tool_calls": [{"name": "Bash"}], "stop": "tool_use"})),
                parsed(json!({"kind": "reply", "text": "Summary: every check ran.",
                    "stop": "end_turn"})),
            ]
        );
    }
}
