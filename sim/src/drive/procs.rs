//! Processes the harness started, found and ended by id only.
//!
//! Guarantee: nothing here signals a process it cannot tie to a run. Every process
//! of a run carries the run's marker in its environment (`TURNSIM_DRIVE_RUN=ID`,
//! inherited from the client), which is how a descendant that left the client's
//! process group or session (`setsid`) is still found and cleaned up. A client runs
//! in a process group of its own, so its group id is its pid; a process is
//! identified by pid *and* start time (field 22 of `/proc/PID/stat`), so a recycled
//! pid is never mistaken for it (how a tool's whole process tree is followed is
//! [`super::tree`]'s). The
//! harness's own process group is never signalled. Linux only (`/proc`).
//!
//! The harness makes itself a child subreaper ([`become_subreaper`]): a process of a
//! run whose parent dies is reparented to the harness instead of to pid 1, so it
//! stays below the harness whatever group or session it moved to, and the harness
//! reaps it ([`reap`]) once it is dead, only when it is a process the run tracked or
//! marked and is by pid *and* start time the harness's own zombie (never a client,
//! which its `Child` waits for).
//!
//! Why `unsafe` here, and only here in `drive`: signalling a process or a group by id
//! (`kill`, `killpg`), reading the harness's own group (`getpgrp`), the boot
//! clock (`clock_gettime(CLOCK_BOOTTIME)`), the clock tick (`sysconf`), becoming a
//! subreaper (`prctl`), reaping an orphan (`waitpid`) and a client's signal
//! dispositions before its `exec` (`signal` in a `pre_exec` hook) have no safe form
//! in std, which can only kill or wait for a `Child` it still owns.
//! Each call takes plain integers and no pointer; the checks before each call (a
//! positive pid, a group that is not ours, the same start time) are what keep it
//! from hitting another process.
#![allow(unsafe_code)]

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

/// One live process of the process table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub proc: Proc,
    pub ppid: i32,
}

/// Every live process (zombies left out), read once from `/proc`.
pub fn table() -> Vec<Row> {
    all_pids()
        .into_iter()
        .filter_map(|pid| {
            let (ppid, pgid, start, state, sid) = stat(pid)?;
            (state != 'Z').then_some(Row {
                proc: Proc {
                    pid,
                    pgid,
                    sid,
                    start,
                },
                ppid,
            })
        })
        .collect()
}

/// The harness's own pid.
pub fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(0)
}

/// The harness's own session id.
pub fn own_sid() -> i32 {
    stat(own_pid()).map_or(0, |s| s.4)
}

/// The harness's own process group id.
pub fn own_group() -> i32 {
    own_pgid()
}

/// When `p` started, in milliseconds of the boot clock ([`boot_ms`]'s axis): field
/// 22 of `/proc/PID/stat` counts clock ticks since boot.
pub fn started_ms(p: &Proc) -> u64 {
    // SAFETY: sysconf takes a constant and reads no memory of ours.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100);
    p.start.saturating_mul(1000) / ticks
}

/// Makes the harness the child subreaper of everything it starts: an orphan of a run
/// is reparented to the harness, not to pid 1. True when the kernel accepted it.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) takes integers only and changes only
    // which process adopts this process's orphaned descendants.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Reaps `p` when it is, by pid and start time, a zombie whose parent is the harness
/// (an orphan of the run reparented to it, then dead). A process the harness did not
/// adopt, a live one or another with the same pid is left alone.
pub fn reap(p: &Proc) {
    let Some((ppid, _, start, state, _)) = stat(p.pid) else {
        return;
    };
    if p.pid > 1 && ppid == own_pid() && start == p.start && state == 'Z' {
        // SAFETY: waitpid on one positive pid, a zombie child of ours checked above;
        // a null status pointer is allowed; WNOHANG never blocks.
        unsafe {
            libc::waitpid(p.pid, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
}
