//! What outlived a client: after it exited, the harness keeps watching each tool's
//! process tree (and every process carrying the run's marker) for a grace period and
//! then until each tool finished or its time was up, and records every survivor with
//! its pid, command, tie to the tool and lifetime.
//!
//! Guarantee: a process is a tool's survivor only by what the harness saw of the
//! process table ([`super::super::tree`]), never by what the client reported.

use super::super::procs;
use super::super::tool::{self, Kind};
use super::super::tree::{Member, Tie};
use super::{
    EVIDENCE_MARGIN_MS, Invocation, ORPHAN_GRACE_MS, Orphan, Running, Stray, Survivor,
    effects_after_exit,
};
use std::time::Duration;

/// After the client exited: which tools and other processes outlived it, and what
/// the tools did before they finished or the harness stopped waiting.
pub(super) fn watch_survivors(inv: &mut Invocation, pgid: i32, run: &mut Running<'_>) {
    run.tracker.poll_all(run.ledger);
    std::thread::sleep(Duration::from_millis(ORPHAN_GRACE_MS));
    run.tracker.poll_all(run.ledger);
    let alive: Vec<Member> = run.tracker.alive().into_iter().cloned().collect();
    let mut strays: Vec<procs::Proc> = procs::marked(&run.marker);
    strays.extend(procs::group_members(pgid));
    strays.retain(|p| run.tracker.tool_of(p).is_none());
    strays.sort_by_key(|p| p.pid);
    strays.dedup_by_key(|p| p.pid);
    inv.strays = strays
        .iter()
        .map(|p| Stray {
            pid: p.pid,
            pgid: p.pgid,
            sid: p.sid,
            command: procs::cmdline(p.pid),
        })
        .collect();
    // One orphan per call with a process of its tree alive, in start order.
    let mut ids: Vec<String> = Vec::new();
    for m in &alive {
        if !ids.contains(&m.id) {
            ids.push(m.id.clone());
        }
    }
    let mut orphans: Vec<Orphan> = ids
        .iter()
        .map(|id| {
            let script = run
                .tracker
                .members
                .iter()
                .find(|m| &m.id == id && m.tie == Tie::Script);
            let live = |m: &&Member| &m.id == id;
            Orphan {
                id: id.clone(),
                pid: script.map_or(0, |m| m.proc.pid),
                pgid: script.map_or(0, |m| m.proc.pgid),
                sid: script.map_or(0, |m| m.proc.sid),
                command: script.map_or_else(String::new, |m| m.command.clone()),
                start_ms: None,
                effect_ms: None,
                killed_by_harness: false,
                finished_in_grace: false,
                script_gone: !alive.iter().any(|m| &m.id == id && m.tie == Tie::Script),
                survivors: alive
                    .iter()
                    .filter(live)
                    .map(|m| survivor(m, run))
                    .collect(),
            }
        })
        .collect();
    let ended = effects_after_exit(
        &tool::read(run.ledger),
        |b| run.rel(b),
        inv.end_ms,
        &orphans,
    );
    if orphans.is_empty() {
        inv.orphans = ended;
        return;
    }
    // Wait for what ran on, so its effect (or its end) shows: until each call's
    // duration plus a margin has passed since it started, at most that long from now.
    let events = tool::read(run.ledger);
    let tool_ms = u64::from(run.tool_ms);
    let exit_boot = procs::boot_ms();
    let until = ids
        .iter()
        .filter_map(|id| tool::find(&events, id, Kind::Start))
        .map(|e| e.boot_ms + tool_ms + EVIDENCE_MARGIN_MS)
        .max()
        .unwrap_or(exit_boot + tool_ms + EVIDENCE_MARGIN_MS)
        .min(exit_boot + tool_ms + EVIDENCE_MARGIN_MS);
    while procs::boot_ms() < until && alive.iter().any(Member::alive) {
        run.tracker.poll(run.ledger);
        std::thread::sleep(Duration::from_millis(50));
    }
    run.tracker.poll_all(run.ledger);
    let now = run.now();
    let events = tool::read(run.ledger);
    for o in &mut orphans {
        o.start_ms = tool::find(&events, &o.id, Kind::Start).map(|e| run.rel(e.boot_ms));
        o.effect_ms = tool::find(&events, &o.id, Kind::Effect).map(|e| run.rel(e.boot_ms));
        for s in &mut o.survivors {
            let m = run.tracker.members.iter().find(|m| m.proc.pid == s.pid);
            match m.and_then(|m| m.gone_ms) {
                Some(gone) => s.end_ms = run.rel(gone),
                None => {
                    s.end_ms = now;
                    s.killed_by_harness = true;
                }
            }
        }
        o.killed_by_harness = o.survivors.iter().any(|s| s.killed_by_harness);
    }
    orphans.extend(ended);
    inv.orphans = orphans;
}

/// A live process of a tree as evidence (its end filled in once the wait is over).
fn survivor(m: &Member, run: &Running<'_>) -> Survivor {
    Survivor {
        pid: m.proc.pid,
        ppid: m.ppid,
        pgid: m.proc.pgid,
        sid: m.proc.sid,
        command: m.command.clone(),
        tie: m.tie,
        adopted: m.ppid == procs::own_pid(),
        start_ms: run.rel(procs::started_ms(&m.proc)),
        end_ms: run.now(),
        killed_by_harness: false,
    }
}
