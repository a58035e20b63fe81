//! The end of every invocation: whatever of the run is still alive is killed by id,
//! checked gone, and (when the harness adopted it) reaped.
//!
//! Guarantee: nothing of a run outlives its clean-up unnoticed. The client's process
//! group, every process of every tool's tree ([`super::tree`]) and every process
//! carrying the run's marker are SIGKILLed by id until none is alive or the patience
//! runs out; what had to be killed is recorded as it was before the kill, and what
//! survived is named. Nothing else is signalled ([`super::procs`] refuses the
//! harness's own group and a recycled pid).

use super::procs::{self, Proc};
use super::tree::Tracker;

/// A process the clean-up had to end, as it was before the kill.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Killed {
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub command: String,
    /// The tool call it belongs to, when it is in a tool's process tree.
    pub tool: Option<String>,
}

/// Kills a client's process group, every tracked tool process and every process
/// carrying the run's `marker`, then waits (up to `patience`) until none is alive.
/// Returns what it found alive and killed, and what survived.
pub fn clean_up(
    client_pgid: i32,
    tracker: &Tracker,
    marker: &str,
    patience: std::time::Duration,
) -> (Vec<Killed>, Vec<String>) {
    let deadline = std::time::Instant::now() + patience;
    let mut killed: Vec<Killed> = Vec::new();
    let mut adopted: Vec<Proc> = Vec::new();
    loop {
        let mut found: Vec<Proc> = procs::group_members(client_pgid);
        found.extend(tracker.alive().iter().map(|m| m.proc));
        let marked = procs::marked(marker);
        for p in &marked {
            if !adopted.contains(p) {
                adopted.push(*p);
            }
        }
        found.extend(marked);
        for p in &found {
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(Killed {
                    pid: p.pid,
                    pgid: p.pgid,
                    sid: p.sid,
                    command: procs::cmdline(p.pid),
                    tool: tracker.tool_of(p).map(str::to_owned),
                });
            }
            procs::signal(p, libc::SIGKILL);
        }
        procs::signal_group(client_pgid, libc::SIGKILL);
        tracker.kill_all();
        tracker.reap_all();
        for p in &adopted {
            procs::reap(p);
        }
        let mut left: Vec<String> = procs::group_members(client_pgid)
            .iter()
            .map(|p| format!("pid {} (client group {client_pgid})", p.pid))
            .collect();
        left.extend(
            tracker
                .alive()
                .iter()
                .map(|m| format!("pid {} (tool {})", m.proc.pid, m.id)),
        );
        left.extend(
            procs::marked(marker)
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
