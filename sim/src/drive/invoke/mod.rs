//! One client invocation: start it, send the scheduled signal, watch what outlives
//! it, and clean up.
//!
//! Guarantee: an invocation always ends, and leaves no process of the run behind.
//! It starts with SIGINT, SIGHUP, SIGQUIT and SIGTERM at their default action,
//! whatever the harness inherited ([`procs::default_signals`]), so a signal reaches
//! the client as it would from a terminal.
//! It has a deadline (`timeout`, shortened to [`SIGNAL_GRACE`] once a signal is
//! sent); past it the client's process group is killed and the run records a hang.
//! Once the client has exited, a tool still running is *not* killed at once: the
//! harness waits until it finishes or until its duration plus a margin has passed,
//! so the ledger shows whether and when its effect happened after the client was
//! gone. A tool is its whole process tree ([`super::tree`]): a child it left running
//! after its script ended is the tool's orphan too, with its pid, command line and
//! lifetime. Then the client's group, every process of every tool's tree and every
//! process carrying the run's marker are killed by id and checked gone
//! ([`super::cleanup`]); what had to be killed and what survived are recorded. Every time is milliseconds since the run
//! started on the boot clock ([`procs::boot_ms`]), the clock the tools write.

mod survivors;

use super::cleanup::{self, Killed};
use super::procs;
use super::profiles::{Interrupt, Profile, Vars, argv, substitute};
use super::schedule::Schedule;
use super::terminal::{self, TermLog, Terminal};
use super::tool::{self, Kind};
use super::tree::Tie;
use crate::serve::http::ServeHandle;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a client may take to exit after a signal.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(15);

/// How long an interactive client may take, after a key interrupt, to end its turn
/// and leave on the exit command, with the default hang-up delay; a terminal that
/// waits longer before it hangs up adds the difference.
pub const KEY_GRACE: Duration = Duration::from_secs(60);

fn key_grace(term: Option<&Terminal>) -> Duration {
    let hang_up = term.map_or(terminal::HANG_UP_AFTER, |t| {
        Duration::from_millis(t.hang_up_after_ms)
    });
    KEY_GRACE + hang_up.saturating_sub(terminal::HANG_UP_AFTER)
}

/// How long after a client's exit a tool still running counts as orphaned: time
/// for the client's own clean-up (a kill it sent on its way out) to land.
pub const ORPHAN_GRACE_MS: u64 = 300;

/// Extra wait past an orphan's expected end before the harness kills it.
pub const EVIDENCE_MARGIN_MS: u64 = 2000;

/// A process of a tool's tree alive after its client exited, and how long it lived.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Survivor {
    pub pid: i32,
    /// Its parent when last seen (1, or the harness as subreaper, once reparented).
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub command: String,
    #[serde(flatten)]
    pub tie: Tie,
    /// Its parent is the harness: it was reparented to the harness as subreaper.
    #[serde(default)]
    pub adopted: bool,
    /// When it started (the kernel's start time), run-relative ms.
    pub start_ms: i64,
    /// When the harness first saw it gone, or killed it (run-relative ms).
    pub end_ms: i64,
    /// Still alive when the harness stopped waiting: `end_ms` is the harness's kill.
    pub killed_by_harness: bool,
}

/// A tool still running after its client exited: its script, or any process of its
/// tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orphan {
    pub id: String,
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub command: String,
    pub start_ms: Option<i64>,
    /// When its effect happened (its `effect` line), if it did before clean-up.
    pub effect_ms: Option<i64>,
    /// Still alive when the harness gave up waiting, and killed by it.
    pub killed_by_harness: bool,
    /// Gone before [`ORPHAN_GRACE_MS`] had passed, but its effect line came after the
    /// client's exit: found from the ledger, not from `/proc`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub finished_in_grace: bool,
    /// The script itself had ended by the end of the grace; what ran on was other
    /// processes of its tree (`survivors`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub script_gone: bool,
    /// Every process of the tool's tree alive at the end of the grace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub survivors: Vec<Survivor>,
}

/// Tools whose `effect` line came after the client exited at `end_ms` (run-relative,
/// through `rel`) and that started before it, other than `known`: each ran on after
/// its client was gone, even if it finished before the grace ran out (a client's
/// clean-up can stop a tool, it cannot take back an effect already written). Their
/// identity is the ledger's, as the process is gone.
pub fn effects_after_exit(
    events: &[tool::Event],
    rel: impl Fn(u64) -> i64,
    end_ms: i64,
    known: &[Orphan],
) -> Vec<Orphan> {
    late_effects(events, rel, end_ms, known, false)
}

/// [`effects_after_exit`]; with `owned`, every call of `events` is the invocation's
/// own (by the ledger line of its start), so one whose start was stamped after the
/// exit (a script slow to start under load) counts too.
fn late_effects(
    events: &[tool::Event],
    rel: impl Fn(u64) -> i64,
    end_ms: i64,
    known: &[Orphan],
    owned: bool,
) -> Vec<Orphan> {
    let mut out: Vec<Orphan> = Vec::new();
    for e in events.iter().filter(|e| e.kind == Kind::Effect) {
        let Some(start) = tool::find(events, &e.id, Kind::Start) else {
            continue;
        };
        let seen = known.iter().chain(&out).any(|o| o.id == e.id);
        if seen || rel(e.boot_ms) <= end_ms || (!owned && rel(start.boot_ms) > end_ms) {
            continue;
        }
        out.push(Orphan {
            id: e.id.clone(),
            pid: e.pid,
            pgid: e.pgid,
            sid: e.sid,
            command: format!("the tool script for {} (already gone)", e.id),
            start_ms: Some(rel(start.boot_ms)),
            effect_ms: Some(rel(e.boot_ms)),
            killed_by_harness: false,
            finished_in_grace: true,
            script_gone: false,
            survivors: Vec::new(),
        });
    }
    out
}

/// Adds to `inv`'s orphans every tool the ledger, read again at the end of the run,
/// shows writing its effect after `inv`'s client exited. The watch after an exit reads
/// the ledger once, at the end of its grace; a tool it could not see then (a script
/// slowed by load, its start line not yet written) can still write its effect later,
/// and the timeline, drawn from the final ledger, would show an orphan the verdict
/// missed. The final ledger is the last word for both. `events` are the calls `inv`
/// started, told by the ledger line of their start, not by its coarse timestamp.
pub fn add_late_effects(inv: &mut Invocation, events: &[tool::Event], rel: impl Fn(u64) -> i64) {
    if inv.argv.is_empty() {
        return;
    }
    let late = late_effects(events, rel, inv.end_ms, &inv.orphans, true);
    inv.orphans.extend(late);
}

/// A process of the run that is not a tool, alive after the client exited.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stray {
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub command: String,
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
    pub start_ms: i64,
    pub end_ms: i64,
    pub orphans: Vec<Orphan>,
    pub strays: Vec<Stray>,
    /// What the clean-up found alive and killed.
    pub killed: Vec<Killed>,
    /// Processes that survived the clean-up (should be none).
    pub leftovers: Vec<String>,
    /// The interactive mode: what happened on the terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TermLog>,
}

/// The signal as delivered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    pub interrupt: Interrupt,
    pub at_ms: i64,
    /// Ledger lines written before the signal.
    pub ledger_lines: usize,
    /// Tool calls started and not finished when it was sent.
    pub running: Vec<String>,
    /// Requests the server had received before it.
    pub requests_before: u64,
}

/// What one run shares between its invocations.
pub struct Running<'a> {
    pub ledger: &'a Path,
    pub tracker: super::tree::Tracker,
    pub profile: &'a Profile,
    /// The run directory (the invocations' stdout and stderr go here).
    pub dir: &'a Path,
    pub timeout: Duration,
    pub tool_ms: u32,
    /// The boot clock at the run's start.
    pub t0: u64,
    /// The run's environment marker.
    pub marker: String,
    pub server: &'a ServeHandle,
    /// The interactive mode's terminal, when the run file has one.
    pub terminal: Option<&'a Terminal>,
    /// When the harness first saw each request the server received (index for
    /// index, run-relative ms, to the resolution of its polling).
    pub arrivals: Vec<i64>,
}

impl<'a> Running<'a> {
    /// The terminal this invocation runs in, if any (a resume-only terminal is the
    /// resume's alone).
    pub fn terminal_for(&self, resume: bool) -> Option<&'a Terminal> {
        self.terminal.filter(|t| t.runs(resume))
    }

    pub fn rel(&self, boot: u64) -> i64 {
        i64::try_from(boot).unwrap_or(i64::MAX) - i64::try_from(self.t0).unwrap_or(0)
    }

    pub fn now(&self) -> i64 {
        self.rel(procs::boot_ms())
    }

    /// Notes the arrival of requests the server received since the last look.
    pub fn note_arrivals(&mut self) {
        let seen = usize::try_from(self.server.server.requests_seen()).unwrap_or(usize::MAX);
        let now = self.now();
        while self.arrivals.len() < seen {
            self.arrivals.push(now);
        }
    }
}

/// Environment variables a client must not inherit from the harness: each would point
/// it at another provider, configuration or home than the run's (`OPENAI_BASE_URL`,
/// `CODEX_HOME` for the OpenAI clients, `GOOGLE_GEMINI_BASE_URL` or a Vertex AI
/// switch for gemini-cli, as `ANTHROPIC_BASE_URL` for the others).
fn inherited_out(name: &str) -> bool {
    name.starts_with("ANTHROPIC_")
        || name.starts_with("CLAUDE")
        || name.starts_with("OPENCODE")
        || name.starts_with("OPENAI_")
        || name.starts_with("CODEX_")
        || name.starts_with("QWEN_")
        || name.starts_with("PI_CODING_AGENT")
        || name.starts_with("CLINE_")
        || name.starts_with("GEMINI_")
        || name.starts_with("GOOGLE_")
        || name.starts_with("XDG_")
        || name == procs::RUN_MARKER
}

/// The client's environment: what to remove from the harness's, what to set.
pub(crate) type ClientEnv = (Vec<std::ffi::OsString>, Vec<(String, String)>);

fn client_env(vars: &Vars, run: &Running<'_>) -> ClientEnv {
    let tty = run.terminal_for(vars.resume).is_some();
    env_for(vars, &run.profile.env, &run.marker, tty)
}

/// The environment of a client of a profile with extra environment `profile_env`,
/// run with `vars`, marked `marker`, in a terminal or not: also what
/// [`super::installed`] starts a client's interpreter with, so an import it checks is
/// the import the client makes.
pub(crate) fn env_for(
    vars: &Vars,
    profile_env: &[(String, String)],
    marker: &str,
    tty: bool,
) -> ClientEnv {
    let removed = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_str().is_some_and(inherited_out))
        .collect();
    let home = PathBuf::from(&vars.home);
    let mut set: Vec<(String, String)> = vec![
        ("HOME".into(), vars.home.clone()),
        // The working directory as a shell reports it: a client that reads `PWD`
        // (opencode does) would otherwise work in the harness's directory.
        ("PWD".into(), vars.work.clone()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
        (
            "XDG_STATE_HOME".into(),
            home.join(".local/state").display().to_string(),
        ),
        ("TURNSIM_DRIVE".into(), "1".into()),
        (procs::RUN_MARKER.into(), marker.to_owned()),
    ];
    if tty {
        set.push(("TERM".into(), "xterm-256color".into()));
    }
    for (k, v) in profile_env {
        set.push((k.clone(), substitute(v, vars)));
    }
    (removed, set)
}

fn command(argv: &[String], vars: &Vars, label: &str, run: &Running<'_>) -> Command {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(&vars.work)
        .stdin(Stdio::null())
        .process_group(0);
    procs::default_signals(&mut cmd);
    let (removed, set) = client_env(vars, run);
    for k in removed {
        cmd.env_remove(k);
    }
    cmd.envs(set);
    for (name, out) in [("stdout", true), ("stderr", false)] {
        let f = File::create(run.dir.join(format!("{label}.{name}")));
        let io = f.map_or_else(|_| Stdio::null(), Stdio::from);
        if out {
            cmd.stdout(io);
        } else {
            cmd.stderr(io);
        }
    }
    cmd
}

/// Starts the client in a pty ([`terminal`]); the prompt is typed, not an argument.
fn spawn_terminal(
    argv: &[String],
    vars: &Vars,
    label: &str,
    run: &Running<'_>,
    term: &Terminal,
) -> Result<(std::process::Child, terminal::Session), String> {
    terminal::prepare_home(&term.home_files, Path::new(&vars.home), |s| {
        substitute(s, vars)
    })?;
    let mut cmd = procs::default_signals_pty(
        pty_process::blocking::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&vars.work),
    );
    let (removed, set) = client_env(vars, run);
    for k in removed {
        cmd = cmd.env_remove(k);
    }
    cmd = cmd.envs(set);
    terminal::spawn(
        cmd,
        term,
        &vars.prompt,
        &run.dir.join(format!("{label}.screen")),
    )
    .map_err(|e| format!("{}: {e}", argv[0]))
}

fn send(kind: Interrupt, pgid: i32, term: Option<&mut terminal::Session>, now_ms: i64) {
    match kind {
        // A key goes into the terminal; without one (a profile error) nothing is
        // sent, and the report says the signal was sent to no terminal.
        Interrupt::Esc | Interrupt::CtrlC => {
            if let Some(t) = term {
                t.interrupt(kind == Interrupt::Esc, now_ms);
            }
        }
        // Ctrl+C and a terminal hang-up reach the whole foreground group.
        Interrupt::Sigint => procs::signal_group(pgid, libc::SIGINT),
        Interrupt::Sighup => procs::signal_group(pgid, libc::SIGHUP),
        Interrupt::Sigterm => procs::signal_client(pgid, libc::SIGTERM),
        Interrupt::Sigkill => procs::signal_client(pgid, libc::SIGKILL),
    }
}

/// Runs one invocation to its end (or deadline); with `schedule`, sends its signal.
pub fn invoke(
    args: &[String],
    vars: &Vars,
    label: &str,
    schedule: Option<&Schedule>,
    run: &mut Running<'_>,
) -> (Invocation, Option<Sent>) {
    let argv = argv(args, vars);
    let mut inv = Invocation {
        argv: argv.clone(),
        start_ms: run.now(),
        ..Invocation::default()
    };
    if argv.is_empty() {
        inv.spawn_error = Some("empty command".into());
        return (inv, None);
    }
    let started = Instant::now();
    let home = Path::new(&vars.home);
    let spawned = terminal::prepare_home(&run.profile.home_files, home, |s| substitute(s, vars))
        .map_err(|e| format!("writing the profile's HOME files: {e}"))
        .and_then(|()| match run.terminal_for(vars.resume) {
            Some(term) => spawn_terminal(&argv, vars, label, run, term).map(|(c, s)| (c, Some(s))),
            None => command(&argv, vars, label, run)
                .spawn()
                .map(|c| (c, None))
                .map_err(|e| format!("{}: {e}", argv[0])),
        });
    let (mut child, mut session) = match spawned {
        Ok(c) => c,
        Err(e) => {
            inv.spawn_error = Some(e);
            inv.end_ms = run.now();
            return (inv, None);
        }
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let mut deadline = started + run.timeout;
    let mut sent: Option<Sent> = None;
    let mut due: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(_) => break None,
        }
        run.note_arrivals();
        run.tracker.poll(run.ledger);
        if let Some(t) = session.as_mut() {
            let tool_alive = !run.tracker.alive().is_empty();
            let requests = run.server.server.requests_seen();
            if t.step(run.now(), requests, ledger_lines(run.ledger), tool_alive) {
                procs::signal_group(pgid, libc::SIGHUP);
            }
        }
        if let Some(s) = schedule
            && let Some(kind) = s.interrupt
            && sent.is_none()
        {
            let events = tool::read(run.ledger);
            let starts = events.iter().filter(|e| e.kind == Kind::Start).count();
            if due.is_none() && starts > s.interrupt_at_tool as usize {
                due = Some(Instant::now() + Duration::from_millis(s.interrupt_delay_ms));
            }
            if due.is_some_and(|t| Instant::now() >= t) {
                let requests_before = run.server.server.requests_seen();
                let ledger_lines = ledger_lines(run.ledger);
                let running = tool::running(&tool::read(run.ledger));
                let at_ms = run.now();
                send(kind, pgid, session.as_mut(), at_ms);
                sent = Some(Sent {
                    interrupt: kind,
                    at_ms,
                    ledger_lines,
                    running,
                    requests_before,
                });
                // A key leaves an interactive client running: its turn ends, then
                // the exit command is typed, so it gets the idle time on top.
                let grace = if kind.is_key() {
                    key_grace(run.terminal)
                } else {
                    SIGNAL_GRACE
                };
                deadline = deadline.min(Instant::now() + grace);
            }
        }
        if Instant::now() >= deadline {
            inv.timed_out = true;
            procs::signal_group(pgid, libc::SIGKILL);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    run.note_arrivals();
    inv.end_ms = run.now();
    inv.terminal = session.map(|s| s.log);
    if let Some(st) = status {
        inv.exit_code = st.code();
        inv.killed_by = st.signal();
    }
    survivors::watch_survivors(&mut inv, pgid, run);
    run.note_arrivals();
    let (killed, leftovers) =
        cleanup::clean_up(pgid, &run.tracker, &run.marker, Duration::from_secs(5));
    inv.killed = killed;
    inv.leftovers = leftovers;
    (inv, sent)
}

pub fn ledger_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
