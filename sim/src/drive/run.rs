//! One driven run: a server, a client, a seeded interruption, a resume, and the facts
//! the observations judge.
//!
//! Guarantee: a run always ends, and leaves no process behind. Every client
//! invocation has a deadline (`timeout`, shortened to a grace period once a signal is
//! sent); past it the client's process group is killed and the run records a hang.
//! After each invocation the client's group and every tool process the ledger named
//! are killed by id ([`super::procs`]) and `/proc` is checked until none is left;
//! what survives is reported. The schedule is a pure function of the seed and the
//! profile (drawn through [`Decider`]), and is saved with the profile in the run
//! file, so `--replay` repeats the same schedule; the client itself is not
//! deterministic, which is why a failing schedule is rerun and measured.
//!
//! The server's script is built as typed [`Step`]s, so a schedule cannot produce a
//! step the server would refuse; signals go through [`super::procs`], the one file of
//! `drive` with `unsafe`.

use super::procs::{self, Tracker};
use super::profiles::{Interrupt, Profile, ProviderFault, Vars, argv, substitute};
use crate::decide::Decider;
use crate::scenario::{ScriptedCall, ScriptedResponse, ScriptedStop};
use crate::serve::ServeConfig;
use crate::serve::record::Record;
use crate::serve::script::{Script, Step};
use crate::serve::tools::{LedgerLine, read_ledger};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const RUN_FORMAT: &str = "turnsim-drive-run";
pub const RUN_VERSION: u32 = 1;

/// The first prompt; the marker in brackets lets the checks find it in any history.
pub const PROMPT_1: &str =
    "Run the project's checks one step at a time with the shell tool. [turnsim-drive prompt 1]";
/// The prompt sent with the resume command.
pub const PROMPT_2: &str =
    "Continue: run one more check and summarise what ran. [turnsim-drive prompt 2]";

/// Shortest and longest sleep of a scripted tool call: long enough for a signal to
/// land while it runs, short enough for CI.
pub const TOOL_SLEEP_MS: (u32, u32) = (800, 1200);

/// How long a client may take to exit after a signal.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(15);

/// What happens in one run, drawn from its seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    pub seed: u64,
    /// A provider fault on one tool-bearing request of the first phase.
    pub fault: Option<ProviderFault>,
    /// Which request (0-based, among the first phase's tool-bearing ones).
    pub fault_at: u32,
    /// Tool rounds the scripted model asks for in the first phase.
    pub rounds: u32,
    pub interrupt: Option<Interrupt>,
    /// The signal follows the `start` line of this tool call (0-based, ledger order).
    pub interrupt_at_tool: u32,
    /// ... after this many milliseconds.
    pub interrupt_delay_ms: u64,
}

impl Schedule {
    pub fn from_seed(seed: u64, profile: &Profile) -> Schedule {
        let mut d = Decider::from_seed(seed);
        let fault = if profile.faults.is_empty() || d.below(3) == 0 {
            None
        } else {
            let n = u32::try_from(profile.faults.len()).unwrap_or(u32::MAX);
            profile.faults.get(d.below(n) as usize).copied()
        };
        let fault_at = d.below(2);
        let rounds = d.range(2, 3);
        let interrupt = if profile.interrupts.is_empty() || d.below(5) == 0 {
            None
        } else {
            let n = u32::try_from(profile.interrupts.len()).unwrap_or(u32::MAX);
            profile.interrupts.get(d.below(n) as usize).copied()
        };
        let interrupt_at_tool = d.below(rounds);
        let interrupt_delay_ms = u64::from(d.below(3)) * 100;
        Schedule {
            seed,
            fault,
            fault_at,
            rounds,
            interrupt,
            interrupt_at_tool,
            interrupt_delay_ms,
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        let fault = match self.fault {
            Some(f) => format!("{f:?} on tool request #{}", self.fault_at),
            None => "no provider fault".into(),
        };
        let signal = match self.interrupt {
            Some(i) => format!(
                "{} {} ms after tool #{} starts",
                i.name(),
                self.interrupt_delay_ms,
                self.interrupt_at_tool
            ),
            None => "no signal".into(),
        };
        format!(
            "seed {}: {} tool rounds, {fault}, {signal}, then resume with one more prompt",
            self.seed, self.rounds
        )
    }
}

/// The run file: everything `turnsim drive --replay` needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFile {
    pub format: String,
    pub version: u32,
    pub profile: Profile,
    pub schedule: Schedule,
    pub timeout_secs: u64,
}

impl RunFile {
    pub fn new(profile: Profile, schedule: Schedule, timeout_secs: u64) -> RunFile {
        RunFile {
            format: RUN_FORMAT.into(),
            version: RUN_VERSION,
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
        Ok(f)
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::scenario::write_atomic(path, format!("{text}\n").as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// How one client invocation ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invocation {
    pub argv: Vec<String>,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub killed_by: Option<i32>,
    /// It did not end before its deadline; the harness killed it.
    pub timed_out: bool,
    /// It could not be started.
    pub spawn_error: Option<String>,
    pub millis: u64,
    /// Tool processes still running 300 ms after it exited: `ID pid N`.
    pub orphans: Vec<String>,
    /// Processes that survived the clean-up (should be none).
    pub leftovers: Vec<String>,
}

/// The signal as delivered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    pub interrupt: Interrupt,
    /// Ledger lines written before the signal.
    pub ledger_lines: usize,
    /// Tool calls started and not finished when it was sent.
    pub running: Vec<String>,
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
    /// The ledger's lines (`start ID`, `pid ID N`, `finish ID`) at the end.
    pub ledger: Vec<String>,
    /// Index of the first request of the resumed invocation.
    pub resume_request: u64,
    pub records: Vec<Record>,
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

/// Environment variables a client must not inherit from the harness.
fn inherited_out(name: &str) -> bool {
    name.starts_with("ANTHROPIC_")
        || name.starts_with("CLAUDE")
        || name.starts_with("OPENCODE")
        || name.starts_with("XDG_")
}

struct Running<'a> {
    ledger: &'a Path,
    tracker: Tracker,
    profile: &'a Profile,
    /// The run directory (the invocations' stdout and stderr go here).
    dir: &'a Path,
    timeout: Duration,
}

/// Runs one invocation to its end (or deadline); with `interrupt`, sends the signal
/// as the schedule says.
fn invoke(
    args: &[String],
    vars: &Vars,
    label: &str,
    interrupt: Option<&Schedule>,
    run: &mut Running<'_>,
) -> (Invocation, Option<Sent>) {
    let (profile, dir, timeout) = (run.profile, run.dir, run.timeout);
    let argv = argv(args, vars);
    let mut inv = Invocation {
        argv: argv.clone(),
        ..Invocation::default()
    };
    let Some((program, rest)) = argv.split_first() else {
        inv.spawn_error = Some("empty command".into());
        return (inv, None);
    };
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .current_dir(&vars.work)
        .stdin(Stdio::null())
        .process_group(0);
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(inherited_out) {
            cmd.env_remove(&k);
        }
    }
    let home = PathBuf::from(&vars.home);
    cmd.env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("TURNSIM_DRIVE", "1");
    for (k, v) in &profile.env {
        cmd.env(k, substitute(v, vars));
    }
    for (name, set) in [("stdout", true), ("stderr", false)] {
        match File::create(dir.join(format!("{label}.{name}"))) {
            Ok(f) if set => {
                cmd.stdout(f);
            }
            Ok(f) => {
                cmd.stderr(f);
            }
            Err(_) => {
                if set {
                    cmd.stdout(Stdio::null());
                } else {
                    cmd.stderr(Stdio::null());
                }
            }
        }
    }
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            inv.spawn_error = Some(format!("{program}: {e}"));
            return (inv, None);
        }
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let mut deadline = started + timeout;
    let mut sent: Option<Sent> = None;
    let mut due: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(_) => break None,
        }
        run.tracker.poll(run.ledger);
        if let Some(s) = interrupt
            && let Some(kind) = s.interrupt
            && sent.is_none()
        {
            let ledger = read_ledger(run.ledger);
            let starts = ledger
                .iter()
                .filter(|l| matches!(l, LedgerLine::Start(_)))
                .count();
            if due.is_none() && starts > s.interrupt_at_tool as usize {
                due = Some(Instant::now() + Duration::from_millis(s.interrupt_delay_ms));
            }
            if due.is_some_and(|t| Instant::now() >= t) {
                let ledger = read_ledger(run.ledger);
                let running = running_ids(&ledger);
                match kind {
                    Interrupt::Sigint => procs::signal_group(pgid, libc::SIGINT),
                    Interrupt::Sigterm => procs::signal_client(pgid, libc::SIGTERM),
                    Interrupt::Sigkill => procs::signal_client(pgid, libc::SIGKILL),
                }
                sent = Some(Sent {
                    interrupt: kind,
                    ledger_lines: ledger_lines(run.ledger),
                    running,
                });
                deadline = deadline.min(Instant::now() + SIGNAL_GRACE);
            }
        }
        if Instant::now() >= deadline {
            inv.timed_out = true;
            procs::signal_group(pgid, libc::SIGKILL);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    inv.millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if let Some(st) = status {
        inv.exit_code = st.code();
        inv.killed_by = st.signal();
    }
    // A tool still running a moment after its client exited is an orphan.
    run.tracker.poll(run.ledger);
    std::thread::sleep(Duration::from_millis(300));
    run.tracker.poll(run.ledger);
    inv.orphans = run
        .tracker
        .alive()
        .iter()
        .filter(|(id, p)| procs::cmdline_contains(p.pid, id))
        .map(|(id, p)| format!("{id} pid {}", p.pid))
        .collect();
    inv.leftovers = procs::clean_up(pgid, &run.tracker, Duration::from_secs(5));
    (inv, sent)
}

fn ledger_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Tool calls started and not finished.
pub fn running_ids(ledger: &[LedgerLine]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in ledger {
        match l {
            LedgerLine::Start(id) => out.push(id.clone()),
            LedgerLine::Finish(id) => out.retain(|x| x != id),
        }
    }
    out
}

/// Runs one schedule in `dir` (created; emptied first).
pub fn run_schedule(file: &RunFile, dir: &Path) -> Result<Facts, String> {
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
    let mut config = ServeConfig::new(Script::seeded(s.seed, false), &serve_dir);
    config.record = Some(dir.join("record"));
    config.workspace.min_sleep_ms = TOOL_SLEEP_MS.0;
    config.workspace.max_sleep_ms = TOOL_SLEEP_MS.1;
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
    let mut running = Running {
        ledger: &ledger,
        tracker: Tracker::default(),
        profile,
        dir,
        timeout,
    };
    let (first, sent) = invoke(&profile.command, &vars, "first", Some(s), &mut running);
    let ledger_first = ledger_lines(&ledger);
    let resume_request = handle.server.requests_seen();
    handle
        .server
        .replace_steps(resume_steps(&profile.shell_tool));
    vars.prompt = PROMPT_2.into();
    vars.resume = true;
    let (resumed, _) = invoke(&profile.resume, &vars, "resumed", None, &mut running);
    let records = handle.server.records();
    handle.stop();
    Ok(Facts {
        schedule: s.clone(),
        first,
        resumed,
        sent,
        ledger_first,
        ledger: std::fs::read_to_string(&ledger)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect(),
        resume_request,
        records,
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
