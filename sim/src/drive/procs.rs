//! Processes the harness started, found and ended by id only.
//!
//! Guarantee: nothing here signals a process it cannot tie to a run. Every process
//! of a run carries the run's marker in its environment (`TURNSIM_DRIVE_RUN=ID`,
//! inherited from the client), which is how a descendant that left the client's
//! process group or session (`setsid`) is still found and cleaned up. A client runs
//! in a process group of its own, so its group id is its pid; a tool process is
//! known from the ledger's `pid ID PID` line and only tracked once `/proc/PID/cmdline`
//! names this run's ledger path, and it is then identified by pid *and* start time
//! (field 22 of `/proc/PID/stat`), so a recycled pid is never mistaken for it. The
//! harness's own process group is never signalled. Linux only (`/proc`).
//!
//! Why `unsafe` here, and only here in `drive`: signalling a process or a group by id
//! (`kill`, `killpg`), reading the harness's own group (`getpgrp`), the boot
//! clock (`clock_gettime(CLOCK_BOOTTIME)`) and a client's signal dispositions before
//! its `exec` (`signal` in a `pre_exec` hook) have no safe form in std, which can only kill a `Child` it still owns, and only with SIGKILL.
//! Each call takes plain integers and no pointer; the checks before each call (a
//! positive pid, a group that is not ours, the same start time) are what keep it
//! from hitting another process.
#![allow(unsafe_code)]

use std::path::Path;

/// A process seen alive, by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub start: u64,
}

/// The environment variable that marks every process of one run.
pub const RUN_MARKER: &str = "TURNSIM_DRIVE_RUN";

/// `CLOCK_BOOTTIME` in milliseconds: the clock the tool script reads from
/// `/proc/uptime`, so the harness's events and the tools' lines share one axis.
pub fn boot_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; CLOCK_BOOTTIME always exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &raw mut ts) };
    if rc != 0 {
        return 0;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs * 1000 + nanos / 1_000_000
}

/// `(ppid, pgid, starttime, state, sid)` of a live process, from `/proc/PID/stat`.
fn stat(pid: i32) -> Option<(i32, i32, u64, char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: split after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); ppid is field 4, pgid 5, starttime 22.
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let pgid = fields.get(2)?.parse().ok()?;
    let sid = fields.get(3)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, pgid, start, state, sid))
}

/// The process `pid` as it is now, if alive (a zombie counts as gone).
pub fn lookup(pid: i32) -> Option<Proc> {
    let (_, pgid, start, state, sid) = stat(pid)?;
    (state != 'Z').then_some(Proc {
        pid,
        pgid,
        sid,
        start,
    })
}

/// The command line of `pid`, arguments joined by spaces (empty when gone).
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Every live process whose environment holds `TURNSIM_DRIVE_RUN=marker`.
pub fn marked(marker: &str) -> Vec<Proc> {
    let needle = format!("{RUN_MARKER}={marker}");
    let own = i32::try_from(std::process::id()).unwrap_or(0);
    all_pids()
        .into_iter()
        .filter(|&pid| pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|b| b.split(|&c| c == 0).any(|var| var == needle.as_bytes()))
        })
        .filter_map(lookup)
        .collect()
}

/// True while the same process (pid and start time) is alive.
pub fn alive(p: &Proc) -> bool {
    lookup(p.pid).is_some_and(|now| now.start == p.start)
}

/// True when `/proc/PID/cmdline` contains `needle`.
pub fn cmdline_contains(pid: i32, needle: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).contains(needle))
        .unwrap_or(false)
}

/// Every live process whose process group is `pgid`.
pub fn group_members(pgid: i32) -> Vec<Proc> {
    all_pids()
        .into_iter()
        .filter_map(lookup)
        .filter(|p| p.pgid == pgid)
        .collect()
}

/// Live descendants of `pid` (children, grandchildren…).
pub fn descendants(pid: i32) -> Vec<Proc> {
    let all: Vec<(i32, i32)> = all_pids()
        .into_iter()
        .filter_map(|p| stat(p).map(|(ppid, ..)| (p, ppid)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for (child, ppid) in &all {
            if *ppid == parent && !out.iter().any(|p: &Proc| p.pid == *child) {
                if let Some(p) = lookup(*child) {
                    out.push(p);
                }
                frontier.push(*child);
            }
        }
    }
    out
}

fn own_pgid() -> i32 {
    // SAFETY: getpgrp has no preconditions.
    unsafe { libc::getpgrp() }
}

/// Sends `sig` to one process, by pid, if it is still the same process.
pub fn signal(p: &Proc, sig: i32) {
    if p.pid > 1 && alive(p) {
        // SAFETY: kill with a positive pid only signals that process.
        unsafe {
            libc::kill(p.pid, sig);
        }
    }
}

/// Sends `sig` (SIGTERM, SIGKILL) to a client process the harness started, by its pid
/// (a client runs as the leader of its own group, so its pid is its group id).
pub fn signal_client(pid: i32, sig: i32) {
    if pid > 1 && pid != own_pgid() {
        // SAFETY: kill with a positive pid signals that one process, our child.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Sends `sig` to process group `pgid`, unless it is the harness's own (or init's).
pub fn signal_group(pgid: i32, sig: i32) {
    if pgid > 1 && pgid != own_pgid() {
        // SAFETY: killpg with a positive group id only signals that group.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }
}

/// The signals a client starts with at their default action. A disposition of
/// `SIG_IGN` survives `exec`, so a harness started in the background (`cmd &` in a
/// script ignores SIGINT and SIGQUIT) or under `nohup` (SIGHUP) would hand its
/// clients an ignored SIGINT or SIGHUP: a client that relies on the default action
/// would then seem to ignore the signal the run sends. A user's terminal starts a
/// client with the defaults, so the run does too. (std already resets SIGPIPE and
/// the signal mask in the child.)
const DEFAULT_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTERM];

/// Runs in the child between `fork` and `exec`.
fn reset_signals() -> std::io::Result<()> {
    for sig in DEFAULT_SIGNALS {
        // SAFETY: signal(2) is async-signal-safe, and SIG_DFL is a constant.
        if unsafe { libc::signal(sig, libc::SIG_DFL) } == libc::SIG_ERR {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Makes `cmd` start with the [`DEFAULT_SIGNALS`] at their default action.
pub fn default_signals(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the hook only calls signal(2) (async-signal-safe), allocates nothing.
    unsafe {
        cmd.pre_exec(reset_signals);
    }
}

/// [`default_signals`] for a client started in a pty.
pub fn default_signals_pty(cmd: pty_process::blocking::Command) -> pty_process::blocking::Command {
    // SAFETY: as in `default_signals`; pty-process runs it after its own setsid.
    unsafe { cmd.pre_exec(reset_signals) }
}

/// Tool processes named by the ledger, tracked while a run lasts.
#[derive(Debug, Default)]
pub struct Tracker {
    /// (tool-use id, process) of every tool shell seen alive, and its descendants.
    pub tools: Vec<(String, Proc)>,
}

impl Tracker {
    /// Reads the ledger's pid lines and records the processes still alive that are
    /// this run's (their command line names `ledger`), with their descendants.
    pub fn poll(&mut self, ledger: &Path) {
        let needle = ledger.display().to_string();
        for (id, pid) in crate::serve::tools::read_ledger_pids(ledger) {
            let Ok(pid) = i32::try_from(pid) else {
                continue;
            };
            let known = self.tools.iter().any(|(_, p)| p.pid == pid);
            if !known
                && cmdline_contains(pid, &needle)
                && let Some(p) = lookup(pid)
            {
                self.tools.push((id.clone(), p));
            }
            if let Some(root) = self.tools.iter().find(|(_, p)| p.pid == pid).map(|t| t.1)
                && alive(&root)
            {
                for d in descendants(pid) {
                    if !self.tools.iter().any(|(_, p)| p.pid == d.pid) {
                        self.tools.push((id.clone(), d));
                    }
                }
            }
        }
    }

    /// The tracked processes still alive.
    pub fn alive(&self) -> Vec<(String, Proc)> {
        self.tools
            .iter()
            .filter(|(_, p)| alive(p))
            .cloned()
            .collect()
    }

    /// SIGKILLs every tracked process and its group.
    pub fn kill_all(&self) {
        for (_, p) in &self.tools {
            signal_group(p.pgid, libc::SIGKILL);
            signal(p, libc::SIGKILL);
        }
    }
}

/// A process the clean-up had to end, as it was before the kill.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Killed {
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub command: String,
    /// The tool call it belongs to, when the ledger named it (or its ancestor).
    pub tool: Option<String>,
}

/// Kills a client's process group, every tracked tool and every process carrying
/// the run's `marker`, then waits (up to `patience`) until none is alive. Returns
/// what it found alive and killed, and what survived.
pub fn clean_up(
    client_pgid: i32,
    tracker: &Tracker,
    marker: &str,
    patience: std::time::Duration,
) -> (Vec<Killed>, Vec<String>) {
    let deadline = std::time::Instant::now() + patience;
    let mut killed: Vec<Killed> = Vec::new();
    loop {
        let mut found: Vec<Proc> = group_members(client_pgid);
        found.extend(tracker.alive().iter().map(|(_, p)| *p));
        found.extend(marked(marker));
        for p in &found {
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(Killed {
                    pid: p.pid,
                    pgid: p.pgid,
                    sid: p.sid,
                    command: cmdline(p.pid),
                    tool: tracker
                        .tools
                        .iter()
                        .find(|(_, t)| t.pid == p.pid)
                        .map(|(id, _)| id.clone()),
                });
            }
            signal(p, libc::SIGKILL);
        }
        signal_group(client_pgid, libc::SIGKILL);
        tracker.kill_all();
        let mut left: Vec<String> = group_members(client_pgid)
            .iter()
            .map(|p| format!("pid {} (client group {client_pgid})", p.pid))
            .collect();
        left.extend(
            tracker
                .alive()
                .iter()
                .map(|(id, p)| format!("pid {} (tool {id})", p.pid)),
        );
        left.extend(
            marked(marker)
                .iter()
                .map(|p| format!("pid {} (marked {marker})", p.pid)),
        );
        left.sort();
        left.dedup();
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return (killed, left);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
