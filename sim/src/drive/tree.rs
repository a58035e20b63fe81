//! The whole process tree of every tool call, followed from the call's start to the
//! end of the run.
//!
//! Guarantee: a process a tool started is tied to that tool as long as the run lasts,
//! even after its parent died and it was reparented (to the harness, a subreaper, or
//! to pid 1) or moved to a group or session of its own, so the orphan check sees a
//! tool's children and not only the tool's script. A tool's tree starts at the
//! script the ledger names (`pid ID PID`, once `/proc/PID/cmdline` names this run's
//! ledger), and holds:
//! - its wrappers: the ancestors whose command line names the ledger and the call's
//!   id (the client's `sh -c` around the script);
//! - every process whose parent was a live process of the tree when the harness
//!   looked (sampled at every poll, 20 ms apart while a client runs);
//! - every process in a process group or session a process of the tree leads, for
//!   as long as that group or session has stayed non-empty since the harness first
//!   saw it (a group that emptied is closed: its id may be reused by anything).
//!
//! Each process is identified by pid *and* start time; what it last looked like
//! (parent, group, command line) and when the harness first saw it gone are kept,
//! so a report can say what ran on after the client, from when to when. A child that
//! forks and whose parent exits between two looks, and that also leaves every group
//! and session of the tree, is not tied to the tool here; the run's environment
//! marker ([`super::procs::marked`]) still finds it as a stray.

use super::procs::{self, Proc, Row};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How a process belongs to its tool's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "tie")]
pub enum Tie {
    /// The script the ledger names.
    Script,
    /// An ancestor of the script that names the ledger and the call (a `sh -c`).
    Wrapper,
    /// Started by `parent`, a process of the tree.
    Child { parent: i32 },
    /// In the process group `pgid`, led by a process of the tree.
    Group { pgid: i32 },
    /// In the session `sid`, led by a process of the tree.
    Session { sid: i32 },
}

impl Tie {
    /// In words, for the evidence.
    pub fn describe(self) -> String {
        match self {
            Tie::Script => "the tool's script".into(),
            Tie::Wrapper => "a wrapper naming the call".into(),
            Tie::Child { parent } => format!("started by pid {parent} of the tool"),
            Tie::Group { pgid } => format!("in the tool's process group {pgid}"),
            Tie::Session { sid } => format!("in the tool's session {sid}"),
        }
    }
}

/// One process of a tool's tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The tool call (ledger id) it belongs to.
    pub id: String,
    /// Its identity; group and session as last seen.
    pub proc: Proc,
    pub tie: Tie,
    /// Its parent when last seen alive (1 or the harness after a reparenting).
    pub ppid: i32,
    /// Its command line when last seen alive.
    pub command: String,
    /// The boot clock when the harness first saw it gone.
    pub gone_ms: Option<u64>,
}

impl Member {
    /// Alive now (same pid and start time, not a zombie).
    pub fn alive(&self) -> bool {
        procs::alive(&self.proc)
    }
}

/// A group or session led by a process of a tree, while it stays non-empty.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Led {
    id: String,
    number: i32,
    session: bool,
    open: bool,
}

/// Every tool's tree, as far as the run has seen.
#[derive(Debug, Default)]
pub struct Tracker {
    pub members: Vec<Member>,
    led: Vec<Led>,
}

impl Tracker {
    /// Looks again when something could have changed: a new `pid` line in the
    /// ledger, or a process of a tree still alive at the last look.
    pub fn poll(&mut self, ledger: &Path) {
        let fresh = self.fresh_scripts(ledger);
        if fresh.is_empty() && self.members.iter().all(|m| m.gone_ms.is_some()) {
            return;
        }
        self.look(ledger, &fresh);
    }

    /// Looks at the whole process table even when every known process is gone (a
    /// group of the tree may still hold one it never saw).
    pub fn poll_all(&mut self, ledger: &Path) {
        let fresh = self.fresh_scripts(ledger);
        self.look(ledger, &fresh);
    }

    /// Ledger `pid` lines whose process is not tracked yet.
    fn fresh_scripts(&self, ledger: &Path) -> Vec<(String, i32)> {
        crate::serve::tools::read_ledger_pids(ledger)
            .into_iter()
            .filter_map(|(id, pid)| Some((id, i32::try_from(pid).ok()?)))
            .filter(|(_, pid)| !self.members.iter().any(|m| m.proc.pid == *pid))
            .collect()
    }

    fn look(&mut self, ledger: &Path, fresh: &[(String, i32)]) {
        let now = procs::boot_ms();
        let table = procs::table();
        let row = |pid: i32| table.iter().find(|r| r.proc.pid == pid);
        for m in self.members.iter_mut().filter(|m| m.gone_ms.is_none()) {
            match row(m.proc.pid).filter(|r| r.proc.start == m.proc.start) {
                Some(r) => {
                    m.proc = r.proc;
                    m.ppid = r.ppid;
                    let c = procs::cmdline(r.proc.pid);
                    if !c.is_empty() {
                        m.command = c;
                    }
                }
                None => m.gone_ms = Some(now),
            }
        }
        let needle = ledger.display().to_string();
        for (id, pid) in fresh {
            let Some(r) = row(*pid).filter(|_| procs::cmdline_contains(*pid, &needle)) else {
                continue;
            };
            self.add(id, r, Tie::Script);
            // Up through the wrappers: ancestors that name this call and this ledger.
            let mut up = r.ppid;
            while let Some(parent) = row(up).filter(|p| {
                p.proc.pid > 1
                    && procs::cmdline_contains(p.proc.pid, &needle)
                    && procs::cmdline_contains(p.proc.pid, id)
                    && !self.members.iter().any(|m| m.proc.pid == p.proc.pid)
            }) {
                self.add(id, parent, Tie::Wrapper);
                up = parent.ppid;
            }
        }
        // Groups and sessions: a closed one (emptied since) never reopens.
        for l in &mut self.led {
            l.open = l.open
                && table.iter().any(|r| {
                    if l.session {
                        r.proc.sid == l.number
                    } else {
                        r.proc.pgid == l.number
                    }
                });
        }
        let own = [procs::own_pid(), procs::own_group(), procs::own_sid()];
        loop {
            let mut added = false;
            for r in &table {
                if own.contains(&r.proc.pid) || self.members.iter().any(|m| m.proc == r.proc) {
                    continue;
                }
                let parent = self.members.iter().find(|m| {
                    m.gone_ms.is_none()
                        && m.proc.pid == r.ppid
                        && row(r.ppid).is_some_and(|p| p.proc.start == m.proc.start)
                });
                let led = |session: bool, n: i32| {
                    self.led
                        .iter()
                        .find(|l| {
                            l.open && l.session == session && l.number == n && !own.contains(&n)
                        })
                        .map(|l| l.id.clone())
                };
                let tied = if let Some(p) = parent {
                    Some((p.id.clone(), Tie::Child { parent: p.proc.pid }))
                } else if let Some(id) = led(false, r.proc.pgid) {
                    Some((id, Tie::Group { pgid: r.proc.pgid }))
                } else {
                    led(true, r.proc.sid).map(|id| (id, Tie::Session { sid: r.proc.sid }))
                };
                if let Some((id, tie)) = tied {
                    self.add(&id, r, tie);
                    added = true;
                }
            }
            if !added {
                break;
            }
        }
    }

    fn add(&mut self, id: &str, r: &Row, tie: Tie) {
        let p = r.proc;
        for (session, number) in [(false, p.pgid), (true, p.sid)] {
            let leads = number == p.pid;
            if leads
                && !self
                    .led
                    .iter()
                    .any(|l| l.session == session && l.number == number)
            {
                self.led.push(Led {
                    id: id.to_owned(),
                    number,
                    session,
                    open: true,
                });
            }
        }
        self.members.push(Member {
            id: id.to_owned(),
            proc: p,
            tie,
            ppid: r.ppid,
            command: procs::cmdline(p.pid),
            gone_ms: None,
        });
    }

    /// The processes of every tree alive now.
    pub fn alive(&self) -> Vec<&Member> {
        self.members.iter().filter(|m| m.alive()).collect()
    }

    /// The tool call `pid` belongs to, if it is a process of a tree.
    pub fn tool_of(&self, p: &Proc) -> Option<&str> {
        self.members
            .iter()
            .find(|m| m.proc.pid == p.pid && m.proc.start == p.start)
            .map(|m| m.id.as_str())
    }

    /// SIGKILLs every live process of every tree, and the groups they lead.
    pub fn kill_all(&self) {
        for m in self.alive() {
            if m.proc.pgid == m.proc.pid {
                procs::signal_group(m.proc.pgid, libc::SIGKILL);
            }
            procs::signal(&m.proc, libc::SIGKILL);
        }
    }

    /// Reaps the processes of every tree that died as the harness's (adopted) children.
    pub fn reap_all(&self) {
        for m in &self.members {
            procs::reap(&m.proc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn until(what: &str, mut f: impl FnMut() -> bool) {
        let end = Instant::now() + Duration::from_secs(10);
        while !f() {
            assert!(Instant::now() < end, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_child_left_by_a_script_that_exits_stays_in_the_tree_with_the_call_it_came_from() {
        let dir = std::env::temp_dir().join(format!("turnsim-tree-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ledger = dir.join("ledger");
        std::fs::write(&ledger, "").expect("ledger");
        // As `turnsim drive` does: what the script leaves is reparented to us.
        assert!(procs::become_subreaper());
        // The script writes its pid line, starts a child in the background and waits
        // until told to go; then it exits and the child runs on without a parent.
        let go = dir.join("go");
        let script = format!(
            "echo \"pid toolu_7 $$\" >> '{}'; sleep 30 & while [ ! -e '{}' ]; do sleep 0.02; done; exit 0",
            ledger.display(),
            go.display()
        );
        let mut sh = Command::new("sh")
            .args(["-c", &script, "toolu_7"])
            .stdin(Stdio::null())
            .spawn()
            .expect("sh runs");
        let mut t = Tracker::default();
        until("the script and its child", || {
            t.poll(&ledger);
            t.members.iter().any(|m| m.command == "sleep 30")
        });
        std::fs::write(&go, "").expect("go");
        let _ = sh.wait();
        until("the script gone", || {
            t.poll(&ledger);
            t.members
                .iter()
                .any(|m| m.tie == Tie::Script && m.gone_ms.is_some())
        });
        let alive = t.alive();
        assert_eq!(alive.len(), 1, "{:?}", t.members);
        let child = alive[0].clone();
        assert_eq!(child.id, "toolu_7");
        assert!(matches!(child.tie, Tie::Child { .. }), "{child:?}");
        assert_eq!(child.ppid, procs::own_pid(), "reparented to the subreaper");
        assert_eq!(t.tool_of(&child.proc), Some("toolu_7"));
        t.kill_all();
        until("the child gone", || !child.alive());
        // Killed, it is our zombie until reaped; then /proc has no entry for it.
        t.reap_all();
        assert!(!std::path::Path::new(&format!("/proc/{}", child.proc.pid)).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
