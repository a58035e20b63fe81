//! The observations: small named checkers over what a driven run left behind.
//!
//! Guarantee: a checker reads only the run's [`Facts`] (the server's records and
//! verdicts, the ledger the tool commands wrote, how each invocation ended and what
//! outlived it), never the client's own account of what it did, so a client is
//! judged black-box by what it sent and what its tools did. Histories are judged by
//! structure ([`super::history`]), never by words. Each checker passes, fails with
//! its evidence (times since the run started, pids, sessions, exit codes), is
//! informational (what nothing could have prevented: a tool orphaned by SIGKILL),
//! or says why it does not apply; none panics on anything a client sent.

use super::evidence::orphan_evidence;
use super::exit_status::explain_exit;
use super::history::{ledger_id, resumed_request, tool_results, tool_use_ids, user_texts};
use super::invoke::Invocation;
use super::run::Facts;
use super::tool::{self, Kind};
use crate::serve::record::PLAYED_PLAIN;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Every checker's name, in report order.
pub const CHECKERS: [&str; 8] = [
    "verdicts_clean",
    "no_hang",
    "at_most_once",
    "no_effect_after_cancel",
    "orphaned_tool",
    "stray_process",
    "no_lost_observation",
    "started_call_represented",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    /// Seen and reported, not a client bug (with the reason in the details).
    Info,
    NotApplicable,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    pub name: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

fn obs(name: &str, fails: Vec<String>) -> Observation {
    Observation {
        name: name.into(),
        status: if fails.is_empty() {
            Status::Pass
        } else {
            Status::Fail
        },
        details: fails,
    }
}

/// Fails become informational, with `why` first.
fn informational(mut o: Observation, why: &str) -> Observation {
    if o.status == Status::Fail {
        o.status = Status::Info;
        o.details.insert(0, why.to_owned());
    }
    o
}

fn not_applicable(name: &str, why: &str) -> Observation {
    Observation {
        name: name.into(),
        status: Status::NotApplicable,
        details: vec![why.into()],
    }
}

/// Runs every checker.
pub fn observe(f: &Facts) -> Vec<Observation> {
    vec![
        verdicts_clean(f),
        no_hang(f),
        at_most_once(f),
        no_effect_after_cancel(f),
        orphaned_tool(f),
        stray_process(f),
        no_lost_observation(f),
        started_call_represented(f),
    ]
}

/// Serve's verdicts: every request the client sent was valid.
pub fn verdicts_clean(f: &Facts) -> Observation {
    let fails = f
        .records
        .iter()
        .filter_map(|r| r.verdict.as_ref())
        .flat_map(|v| v.lines())
        .collect();
    obs("verdicts_clean", fails)
}

/// Every invocation ended (on its own or after a signal) before its deadline.
pub fn no_hang(f: &Facts) -> Observation {
    let mut fails = Vec::new();
    for (label, inv) in [("first", &f.first), ("resumed", &f.resumed)] {
        if inv.timed_out {
            fails.push(format!(
                "the {label} invocation started at +{} ms did not end by +{} ms; killed",
                inv.start_ms, inv.end_ms
            ));
        }
    }
    obs("no_hang", fails)
}

/// No tool-use id started twice.
pub fn at_most_once(f: &Facts) -> Observation {
    let mut starts: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for e in f.events.iter().filter(|e| e.kind == Kind::Start) {
        starts
            .entry(&e.id)
            .or_default()
            .push(i64::try_from(e.boot_ms).unwrap_or(i64::MAX));
    }
    let fails = starts
        .into_iter()
        .filter(|(_, t)| t.len() > 1)
        .map(|(id, t)| {
            let at: Vec<String> = t.iter().map(|t| format!("+{t} ms")).collect();
            format!(
                "tool call {id} started {} times, at {}",
                t.len(),
                at.join(", ")
            )
        })
        .collect();
    obs("at_most_once", fails)
}

/// How long a client may take to stop its tool after a key.
const KEY_GRACE_MS: i64 = 1000;

/// After SIGINT, SIGTERM or SIGHUP the first invocation started no tool and sent
/// no request: a cancelled client stops working.
pub fn no_effect_after_cancel(f: &Facts) -> Observation {
    let name = "no_effect_after_cancel";
    let Some(sent) = &f.sent else {
        return not_applicable(name, "no signal was sent");
    };
    if !sent.interrupt.catchable() {
        return not_applicable(name, "SIGKILL ends the client at once");
    }
    let sig = sent.interrupt.name();
    let mut fails = Vec::new();
    let end = f.ledger_first.min(f.ledger.len());
    let from = sent.ledger_lines.min(end);
    for e in tool::events(&f.ledger[from..end]) {
        if e.kind == Kind::Start {
            let at = f
                .events
                .iter()
                .find(|x| x.id == e.id && x.kind == Kind::Start);
            fails.push(format!(
                "tool call {} started at +{} ms, after {sig} at +{} ms",
                e.id,
                at.map_or(0, |x| x.boot_ms),
                sent.at_ms
            ));
        }
    }
    // A key leaves the client running, so no orphan check sees a tool it let run
    // on: a call running at the key must not write its effect after it (a second
    // of grace for the client to act on the key).
    if sent.interrupt.is_key() {
        for id in &sent.running {
            if let Some(e) = f
                .events
                .iter()
                .find(|e| &e.id == id && e.kind == Kind::Effect)
                .filter(|e| {
                    i64::try_from(e.boot_ms).unwrap_or(i64::MAX) > sent.at_ms + KEY_GRACE_MS
                })
            {
                fails.push(format!(
                    "tool call {id} was running at {sig} (+{} ms) and wrote its effect at +{} ms, while the client was still up",
                    sent.at_ms, e.boot_ms
                ));
            }
        }
    }
    // After a key the UI is still up and may ask the model for things of its own
    // (a suggestion for the next prompt, a title): a request that declares no
    // tools cannot go on with the cancelled turn, so it is reported, not failed.
    // Records carry their order, not their time: a request between the signal and
    // the resume may come from a child that outlived the client's exit (the Agent
    // SDK's Claude Code), so the line says what is known, not "before the exit".
    let mut side = Vec::new();
    for r in f
        .records
        .iter()
        .filter(|r| r.index >= sent.requests_before && r.index < f.resume_request)
    {
        let line = format!(
            "request #{} ({} {}) sent after {sig} at +{} ms and before the resumed invocation (the first invocation exited at +{} ms)",
            r.index, r.method, r.target, sent.at_ms, f.first.end_ms
        );
        if sent.interrupt.is_key() && r.answer.played == PLAYED_PLAIN {
            side.push(format!(
                "{line}: it declared no tools (the UI's own request)"
            ));
        } else {
            fails.push(line);
        }
    }
    if side.is_empty() {
        return obs(name, fails);
    }
    let mut o = obs(name, fails);
    if o.status == Status::Pass {
        o.status = Status::Info;
        o.details.push(format!(
            "informational: {} request(s) without tools after the key, none going on with the turn",
            side.len()
        ));
    }
    o.details.extend(side);
    o
}

fn sigkilled(f: &Facts) -> bool {
    f.sent.as_ref().is_some_and(|s| !s.interrupt.catchable())
}

const AFTER_KILL: &str = "informational: after SIGKILL nothing in the client can end its children";

const AFTER_TIMEOUT: &str = "informational: the harness SIGKILLed the client's group at its deadline (see no_hang); nothing in the client could end its children after that";

/// Orphans of a first invocation that ended by SIGKILL (the schedule's, or the
/// harness's at the deadline) are informational.
fn killed_first(f: &Facts, o: Observation) -> Observation {
    if sigkilled(f) {
        informational(o, AFTER_KILL)
    } else if f.first.timed_out {
        informational(o, AFTER_TIMEOUT)
    } else {
        o
    }
}

/// No process of a tool's tree (its script, a wrapper, anything they started)
/// still running after its client exited (informational after a SIGKILL).
pub fn orphaned_tool(f: &Facts) -> Observation {
    let name = "orphaned_tool";
    let first: Vec<String> = f
        .first
        .orphans
        .iter()
        .map(|o| orphan_evidence(f, "first", &f.first, o))
        .collect();
    let first = killed_first(f, obs(name, first));
    let mut resumed: Vec<String> = f
        .resumed
        .orphans
        .iter()
        .map(|o| orphan_evidence(f, "resumed", &f.resumed, o))
        .collect();
    for inv in [&f.first, &f.resumed] {
        resumed.extend(
            inv.leftovers
                .iter()
                .map(|l| format!("{l} survived the harness's clean-up")),
        );
    }
    merge(name, first, resumed)
}

/// `first` (maybe informational) joined with failures that are never informational.
fn merge(name: &str, first: Observation, fails: Vec<String>) -> Observation {
    if fails.is_empty() {
        return first;
    }
    let mut details = fails;
    details.extend(first.details);
    Observation {
        name: name.into(),
        status: Status::Fail,
        details,
    }
}

/// No process of the run other than a tool (found by the run's marker in its
/// environment, in any group or session) alive after its client exited.
pub fn stray_process(f: &Facts) -> Observation {
    let name = "stray_process";
    let describe = |label: &str, inv: &Invocation| -> Vec<String> {
        inv.strays
            .iter()
            .map(|s| {
                format!(
                    "pid {} (pgid {}, sid {}, `{}`) was alive {} ms after the {label} invocation exited at +{} ms",
                    s.pid,
                    s.pgid,
                    s.sid,
                    s.command,
                    super::invoke::ORPHAN_GRACE_MS,
                    inv.end_ms
                )
            })
            .collect()
    };
    let first = killed_first(f, obs(name, describe("first", &f.first)));
    merge(name, first, describe("resumed", &f.resumed))
}

/// The ledger lines written before the interruption (or before the first
/// invocation ended, without one).
fn before_cut(f: &Facts) -> &[String] {
    let end = f
        .sent
        .as_ref()
        .map_or(f.ledger_first, |s| s.ledger_lines)
        .min(f.ledger.len());
    &f.ledger[..end]
}

/// The resumed request keeps the user's prompts and every completed tool result.
pub fn no_lost_observation(f: &Facts) -> Observation {
    let name = "no_lost_observation";
    if f.resumed.spawn_error.is_some() {
        return not_applicable(name, "the resume command could not start");
    }
    let Some(body) = resumed_request(f) else {
        return obs(
            name,
            vec!["the resumed client sent no tool-bearing request".into()],
        );
    };
    let mut fails = Vec::new();
    let texts = user_texts(&body).join("\n");
    for marker in ["[turnsim-drive prompt 1]", "[turnsim-drive prompt 2]"] {
        if !texts.contains(marker) {
            fails.push(format!("the resumed request lost the prompt {marker}"));
        }
    }
    let results: Vec<String> = tool_results(&body).keys().map(|k| ledger_id(k)).collect();
    for e in tool::events(before_cut(f)) {
        if e.kind == Kind::Finish && !results.contains(&e.id) {
            fails.push(format!(
                "tool call {} finished before the interruption, but the resumed request has no result for it",
                e.id
            ));
        }
    }
    obs(name, fails)
}

/// After a signal, every call the first invocation started and had not finished
/// when the signal came is in the resumed history: its `tool_use` block and a
/// `tool_result` for its id (an error result is the interruption record).
pub fn started_call_represented(f: &Facts) -> Observation {
    let name = "started_call_represented";
    let Some(sent) = &f.sent else {
        return not_applicable(name, "no signal was sent");
    };
    let first = tool::events(&f.ledger[..f.ledger_first.min(f.ledger.len())]);
    let done: Vec<String> = tool::events(before_cut(f))
        .into_iter()
        .filter(|e| e.kind == Kind::Finish)
        .map(|e| e.id)
        .collect();
    let cut: Vec<String> = first
        .iter()
        .filter(|e| e.kind == Kind::Start && !done.contains(&e.id))
        .map(|e| e.id.clone())
        .collect();
    if cut.is_empty() {
        return not_applicable(
            name,
            "no call was running when the signal came or started after it",
        );
    }
    let Some(body) = resumed_request(f) else {
        return obs(
            name,
            vec!["the resumed client sent no tool-bearing request".into()],
        );
    };
    let uses: Vec<String> = tool_use_ids(&body).iter().map(|i| ledger_id(i)).collect();
    let results: BTreeMap<String, bool> = tool_results(&body)
        .into_iter()
        .map(|(k, v)| (ledger_id(&k), v))
        .collect();
    let sig = sent.interrupt.name();
    let mut fails = Vec::new();
    for id in cut {
        let started = f
            .events
            .iter()
            .find(|e| e.id == id && e.kind == Kind::Start)
            .map_or(0, |e| e.boot_ms);
        let has_use = uses.contains(&id);
        let has_result = results.contains_key(&id);
        if !has_use || !has_result {
            let missing = match (has_use, has_result) {
                (false, false) => "neither its tool_use nor a tool_result",
                (true, false) => "its tool_use but no tool_result",
                _ => "a tool_result but not its tool_use",
            };
            // A call the client started after the signal was not running when it
            // came; saying so matters to a maintainer reading the timeline.
            let when = if i64::try_from(started).is_ok_and(|s| s > sent.at_ms) {
                ", after"
            } else {
                " and was running at"
            };
            fails.push(format!(
                "tool call {id} started at +{started} ms{when} {sig} (+{} ms); the client ended ({}); the resumed request holds {missing}",
                sent.at_ms,
                explain_exit(f.first.exit_code, f.first.killed_by)
            ));
        }
    }
    let o = obs(name, fails);
    if sigkilled(f) {
        informational(
            o,
            "informational: after SIGKILL the client had no chance to record the call's end",
        )
    } else {
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::invoke::{Orphan, Sent};
    use crate::drive::profiles::{Interrupt, profile};
    use crate::drive::schedule::Schedule;

    fn facts(signal: Interrupt, timed_out: bool) -> Facts {
        let p = profile("test-client", &[]).expect("built-in profile");
        let orphan = Orphan {
            id: "toolu_1".into(),
            pid: 40,
            pgid: 39,
            sid: 39,
            command: "sh tool.sh toolu_1".into(),
            start_ms: Some(100),
            effect_ms: Some(6100),
            killed_by_harness: false,
            finished_in_grace: false,
            script_gone: false,
            survivors: Vec::new(),
        };
        Facts {
            schedule: Schedule::from_seed(0, &p, 6000, &Default::default()),
            first: Invocation {
                exit_code: Some(143),
                timed_out,
                end_ms: 1500,
                orphans: vec![orphan],
                ..Invocation::default()
            },
            resumed: Invocation::default(),
            sent: Some(Sent {
                interrupt: signal,
                at_ms: 1400,
                ledger_lines: 2,
                running: vec!["toolu_1".into()],
                requests_before: 2,
            }),
            ledger_first: 2,
            ledger: Vec::new(),
            events: Vec::new(),
            resume_request: 3,
            records: Vec::new(),
            request_ms: Vec::new(),
        }
    }

    #[test]
    fn an_orphan_fails_with_its_evidence_unless_a_sigkill_or_the_deadline_ended_the_client() {
        let o = orphaned_tool(&facts(Interrupt::Sigterm, false));
        assert_eq!(o.status, Status::Fail);
        assert_eq!(
            o.details,
            [
                "SIGTERM sent at +1400 ms; the first invocation exited at +1500 ms (exit 143 = 128 + 15: the conventional code after SIGTERM); tool toolu_1 (pid 40, pgid 39, sid 39, `sh tool.sh toolu_1`) started at +100 ms, was still running 300 ms after that, and wrote its effect at +6100 ms, 4600 ms after the client exited"
            ]
        );
        let o = orphaned_tool(&facts(Interrupt::Sigkill, false));
        assert_eq!(o.status, Status::Info);
        assert_eq!(o.details[0], AFTER_KILL);
        let o = orphaned_tool(&facts(Interrupt::Sigint, true));
        assert_eq!(o.status, Status::Info);
        assert_eq!(o.details[0], AFTER_TIMEOUT);
    }

    #[test]
    fn a_child_that_outlived_its_script_and_the_client_fails_with_its_pid_command_and_lifetime() {
        use crate::drive::invoke::Survivor;
        use crate::drive::tree::Tie;
        let mut f = facts(Interrupt::Sigterm, false);
        let o = &mut f.first.orphans[0];
        o.effect_ms = None;
        o.killed_by_harness = true;
        o.script_gone = true;
        o.survivors = vec![Survivor {
            pid: 41,
            ppid: 1,
            pgid: 39,
            sid: 39,
            command: "sleep 6.000".into(),
            tie: Tie::Child { parent: 40 },
            adopted: false,
            start_ms: 105,
            end_ms: 8100,
            killed_by_harness: true,
        }];
        let o = orphaned_tool(&f);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(
            o.details,
            [
                "SIGTERM sent at +1400 ms; the first invocation exited at +1500 ms (exit 143 = 128 + 15: the conventional code after SIGTERM); tool toolu_1 (script pid 40) started at +100 ms, its script had ended, but its process tree was still running 300 ms after the exit, and had not written its effect when the harness killed it; alive 300 ms after the exit: pid 41 (`sleep 6.000`, started by pid 40 of the tool, parent now pid 1, pgid 39, sid 39) started at +105 ms and ran until the harness killed it at +8100 ms, 7995 ms in all"
            ]
        );
    }

    #[test]
    fn an_orphan_gone_within_the_grace_fails_and_says_it_was_running_at_the_exit() {
        let mut f = facts(Interrupt::Sigterm, false);
        f.first.orphans[0].effect_ms = Some(1650);
        f.first.orphans[0].finished_in_grace = true;
        let o = orphaned_tool(&f);
        assert_eq!(o.status, Status::Fail);
        assert!(
            o.details[0].ends_with(
                "started at +100 ms, was running when the client exited, and wrote its effect at +1650 ms, 150 ms after the client exited"
            ),
            "{}",
            o.details[0]
        );
    }

    #[test]
    fn a_call_started_after_the_signal_is_said_to_have_started_after_it() {
        let mut f = facts(Interrupt::Sigterm, false);
        // toolu_1 ran before the SIGTERM (+1400 ms); toolu_2 began 50 ms after it.
        f.ledger = vec![
            "start toolu_1 t=1100 pid=40 pgid=39 sid=39 ppid=39".into(),
            "pid toolu_1 40".into(),
            "start toolu_2 t=2450 pid=50 pgid=49 sid=49 ppid=49".into(),
            "pid toolu_2 50".into(),
        ];
        f.ledger_first = 4;
        f.events = tool::events(&f.ledger)
            .into_iter()
            .map(|mut e| {
                e.boot_ms -= 1000;
                e
            })
            .collect();
        let record = serde_json::json!({
            "format": "turnsim-serve-record", "version": 1, "index": 3, "method": "POST",
            "target": "/v1/messages", "headers": {},
            "body": {"model": "m", "max_tokens": 1,
                     "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
                     "messages": [{"role": "user", "content": "Go on."}]},
            "answer": {"status": 200, "stream": true, "played": "generated", "outcome": "complete"}
        });
        f.records = vec![serde_json::from_value(record).expect("a record")];
        let o = started_call_represented(&f);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(
            o.details,
            [
                "tool call toolu_1 started at +100 ms and was running at SIGTERM (+1400 ms); the client ended (exit 143 = 128 + 15: the conventional code after SIGTERM); the resumed request holds neither its tool_use nor a tool_result",
                "tool call toolu_2 started at +1450 ms, after SIGTERM (+1400 ms); the client ended (exit 143 = 128 + 15: the conventional code after SIGTERM); the resumed request holds neither its tool_use nor a tool_result",
            ]
        );
    }
}
