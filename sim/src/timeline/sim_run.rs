//! The picture of one simulated run: its trace lines on six lanes, its requests
//! opening the messages they carried, its log writes, and its violation beside the
//! two things that violation compares.
//!
//! Guarantee: the picture is a function of the [`RunOutcome`] alone (its trace, its
//! [`crate::world::Recording`] and its violation), so replaying a scenario draws the
//! same bytes every time. Requests and log writes come from the recording, placed
//! among the trace lines by their line numbers, not by matching text; only the lane
//! and the short label of a line are read from its words ([`super::trace_line`]). A
//! run kept without a trace still draws (its lanes, its violation), with nothing on
//! them.

use super::trace_line::{self, ENGINE, FAULTS, LANES, LOG};
use super::{Alarm, Compare, Kind, Mark, Panel, Picture, Scale, html};
use crate::checkers::{Invariant, Violation};
use crate::world::{RunOutcome, SentRequest};
use std::collections::BTreeMap;
use std::path::Path;
use turnsim_core::{Request, SharedMessage};

fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("(not serializable: {e})"))
}

/// A request as text, a line per part: what the violation's two sides show.
pub fn request_text(r: &Request) -> String {
    let mut out = format!(
        "system: {}\ntools: {}\ncache: {}\n",
        json(&r.system),
        json(&*r.tools),
        json(&r.cache)
    );
    out.push_str(&history_text(&r.messages));
    out
}

/// A history as text, a line per message.
pub fn history_text(h: &[SharedMessage]) -> String {
    h.iter()
        .enumerate()
        .map(|(i, m)| format!("messages[{i}]: {}\n", json(&**m)))
        .collect()
}

/// The request at the violation and the one before it.
fn request_pair(reqs: &[SentRequest]) -> Option<Compare> {
    let [.., before, last] = reqs else {
        return None;
    };
    Some(Compare {
        what: format!(
            "The last request ({} at step {}) and the one it should extend ({} at step {}).",
            last.op, last.step, before.op, before.step
        ),
        left_name: format!("{} (step {}), the earlier request", before.op, before.step),
        left: request_text(&before.request),
        right_name: format!("{} (step {}), at the violation", last.op, last.step),
        right: request_text(&last.request),
    })
}

/// What the violation compares, where the run recorded it: two requests for the
/// invariants about a request and its predecessor; else the history before and after
/// the violating step when it changed; else the step's request and the one before it.
fn compare(o: &RunOutcome, v: &Violation) -> Option<Compare> {
    let rec = &o.recording;
    let about_requests = matches!(
        v.invariant,
        Invariant::AppendOnly | Invariant::PrefixStable | Invariant::PrefixReported
    );
    if about_requests && let Some(c) = request_pair(&rec.requests) {
        return Some(c);
    }
    let (before, after) = (
        history_text(&rec.history_before),
        history_text(&rec.history_after),
    );
    let history = Compare {
        what: format!(
            "The engine's history at the start of step {} and at the violation.",
            rec.before_step
        ),
        left_name: format!("history at the start of step {}", rec.before_step),
        left: before,
        right_name: "history at the violation".into(),
        right: after,
    };
    if history.left != history.right {
        return Some(history);
    }
    let sent_now = rec.requests.last().is_some_and(|r| r.step == v.step);
    if sent_now && let Some(c) = request_pair(&rec.requests) {
        return Some(c);
    }
    (rec.before_step > 0).then_some(history)
}

/// The short account of a run drawn under the title.
pub fn facts(o: &RunOutcome) -> Vec<String> {
    let verdict = match &o.violation {
        Some(v) => format!("{} at step {}: {}", v.invariant, v.step, v.message),
        None => format!("pass after {} steps", o.steps),
    };
    let faults: Vec<String> = o
        .faults
        .iter()
        .map(|(k, n)| format!("{} ×{n}", k.name()))
        .collect();
    vec![
        verdict,
        format!(
            "seed {}, {} steps, {} requests, {} tool executions, faults: {}",
            o.seed,
            o.steps,
            o.recording.requests.len(),
            o.tool_executions,
            if faults.is_empty() {
                "none".to_owned()
            } else {
                faults.join(", ")
            }
        ),
        format!("trace digest {}", o.digest),
    ]
}

/// The picture of `o`, titled `title`.
pub fn picture_of_run(title: &str, o: &RunOutcome) -> Picture {
    let mut p = Picture::new(title, "virtual milliseconds", Scale::Ordinal, &LANES);
    p.facts = facts(o);
    let lines = trace_line::read(&o.trace);
    let requests: BTreeMap<usize, usize> = o
        .recording
        .requests
        .iter()
        .enumerate()
        .map(|(k, r)| (r.line, k))
        .collect();
    for (i, line) in lines.iter().enumerate() {
        let lane = trace_line::lane(&line.text);
        let request = requests.get(&i).copied();
        let kind = match (lane, request) {
            (_, Some(_)) => Kind::Request,
            (FAULTS, None) => Kind::Fault,
            _ => Kind::Event,
        };
        let shape = if line.parsed {
            ""
        } else {
            " (unreadable line)"
        };
        p.marks.push(Mark {
            lane: if request.is_some() { ENGINE } else { lane },
            t: i64::try_from(line.t).unwrap_or(i64::MAX),
            order: 2 * i as u64 + 2,
            label: trace_line::label(&line.text),
            detail: format!("step {}, t={} ms{shape}: {}", line.step, line.t, line.text),
            kind,
            panel: request.map(|k| format!("req-{k}")),
        });
    }
    for w in &o.recording.log_writes {
        p.marks.push(Mark {
            lane: LOG,
            t: i64::try_from(w.t).unwrap_or(i64::MAX),
            order: 2 * w.line as u64 + 1,
            label: String::new(),
            detail: format!(
                "step {}, t={} ms: persist {} bytes (log now {} bytes)",
                w.step, w.t, w.bytes, w.len
            ),
            kind: Kind::Event,
            panel: None,
        });
    }
    for (k, r) in o.recording.requests.iter().enumerate() {
        p.panels.push(Panel {
            id: format!("req-{k}"),
            heading: format!(
                "{} at step {}, t={} ms: {} messages",
                r.op,
                r.step,
                r.t,
                r.request.messages.len()
            ),
            body: request_text(&r.request),
        });
    }
    if let Some(v) = &o.violation {
        // After the last line of the violating step (or of the last step before it).
        let at = lines.iter().rposition(|l| l.step <= v.step);
        let (t, order) = match at {
            Some(i) => (lines[i].t, 2 * i as u64 + 3),
            None => (0, 0),
        };
        p.alarms.push(Alarm {
            t: i64::try_from(t).unwrap_or(i64::MAX),
            order,
            name: v.invariant.to_string(),
            message: format!("step {}: {}", v.step, v.message),
            compare: compare(o, v),
        });
    }
    p
}

/// Writes `picture` to `path` as HTML, atomically.
pub fn write_picture(path: &Path, picture: &Picture) -> Result<(), String> {
    crate::atomic::write_atomic(path, html(picture).as_bytes()).map_err(|e| e.to_string())
}
