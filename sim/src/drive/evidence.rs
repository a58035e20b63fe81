//! The evidence an `orphaned_tool` finding carries, in words a maintainer can check
//! against `ps` and the run's files: when the signal went, when the tool started and
//! wrote its effect, and every process of its tree still alive after the client
//! exited, with how it belongs to the tool and how long it lived.
//!
//! Guarantee: the text is built from the run's [`Facts`] alone (the harness's own
//! observations of the process table and the ledger), never from the client.

use super::exit_status::explain_exit;
use super::invoke::{Invocation, Orphan, Survivor};
use super::run::Facts;

pub(super) fn orphan_evidence(f: &Facts, label: &str, inv: &Invocation, o: &Orphan) -> String {
    let signal = match (&f.sent, label) {
        (Some(s), "first") => format!("{} sent at +{} ms; ", s.interrupt.name(), s.at_ms),
        _ => String::new(),
    };
    let started = o
        .start_ms
        .map_or("started at an unknown time".to_owned(), |t| {
            format!("started at +{t} ms")
        });
    let effect = match o.effect_ms {
        Some(t) if t > inv.end_ms => format!(
            "wrote its effect at +{t} ms, {} ms after the client exited",
            t - inv.end_ms
        ),
        Some(t) => format!("wrote its effect at +{t} ms, before the client exited"),
        None if o.killed_by_harness => {
            "had not written its effect when the harness killed it".to_owned()
        }
        None => "ended without writing its effect".to_owned(),
    };
    let running = if o.finished_in_grace {
        "was running when the client exited".to_owned()
    } else if o.script_gone {
        format!(
            "its script had ended, but its process tree was still running {} ms after the exit",
            super::invoke::ORPHAN_GRACE_MS
        )
    } else {
        format!(
            "was still running {} ms after that",
            super::invoke::ORPHAN_GRACE_MS
        )
    };
    let script = if o.script_gone {
        format!("script pid {}", o.pid)
    } else {
        format!(
            "pid {}, pgid {}, sid {}, `{}`",
            o.pid, o.pgid, o.sid, o.command
        )
    };
    let mut text = format!(
        "{signal}the {label} invocation exited at +{} ms ({}); tool {} ({script}) {started}, {running}, and {effect}",
        inv.end_ms,
        explain_exit(inv.exit_code, inv.killed_by),
        o.id,
    );
    // The tree is listed when it holds more than the script, or the script is gone.
    let shown: Vec<&Survivor> = o
        .survivors
        .iter()
        .filter(|s| o.script_gone || s.pid != o.pid)
        .collect();
    if !shown.is_empty() {
        let listed: Vec<String> = shown.iter().map(|s| survivor_evidence(s)).collect();
        text.push_str(&format!(
            "; alive {} ms after the exit: {}",
            super::invoke::ORPHAN_GRACE_MS,
            listed.join("; ")
        ));
    }
    text
}

/// One process of an orphaned tool's tree: who it is, how it belongs to the tool,
/// and its lifetime.
fn survivor_evidence(s: &Survivor) -> String {
    let end = if s.killed_by_harness {
        format!("until the harness killed it at +{} ms", s.end_ms)
    } else {
        format!("until it exited by +{} ms", s.end_ms)
    };
    let parent = if s.adopted {
        format!("parent now the harness (pid {}, its subreaper)", s.ppid)
    } else {
        format!("parent now pid {}", s.ppid)
    };
    format!(
        "pid {} (`{}`, {}, {parent}, pgid {}, sid {}) started at +{} ms and ran {end}, {} ms in all",
        s.pid,
        s.command,
        s.tie.describe(),
        s.pgid,
        s.sid,
        s.start_ms,
        s.end_ms - s.start_ms
    )
}
