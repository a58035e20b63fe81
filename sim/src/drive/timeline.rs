//! The picture of one driven run (`timeline.html` in its directory): the client's two
//! invocations, each tool process, the signal or keys sent, the requests served and
//! what ran on after the client exited, on the wall clock.
//!
//! Guarantee: everything drawn is something the run observed, at the time it observed
//! it: the harness's own times for the client and the signal, the ledger's
//! timestamps (the same boot clock, [`super::tool`]) for each tool's start, effect and
//! finish, and the harness's first sight of each request (to its polling interval).
//! A tool whose effect or finish came after its client exited is drawn red from the
//! exit on, with an alarm at its effect: an orphan is visible at a glance. So is every
//! other process of a tool's tree (a child its script left running) alive after the
//! exit: a red span in the tool's lane, from the exit to when it exited or was killed,
//! with its pid, command line and start, and an alarm. The picture
//! is a function of the run's facts and observations, so equal facts draw equal bytes.

use super::exit_status::explain_exit;
use super::invoke::Invocation;
use super::observe::{Observation, Status};
use super::report::ending;
use super::run::Facts;
use super::tool::{Event, Kind as Ledger};
use crate::timeline::{Alarm, Kind, Mark, Panel, Picture, Scale, Span};
use std::path::Path;

const CLIENT: usize = 0;
const SIGNALS: usize = 1;
const REQUESTS: usize = 2;
/// Tools get a lane each from here on; the last lane is [`AFTER_EXIT`]'s.
const FIRST_TOOL: usize = 3;

/// The lane of processes the clean-up found.
const AFTER_EXIT: &str = "left after exit";

/// Tool call ids in the order they started.
fn tool_ids(events: &[Event]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for e in events {
        if !ids.contains(&e.id) {
            ids.push(e.id.clone());
        }
    }
    ids
}

/// The invocation a tool started in, by the ledger line of its start (the same rule
/// the verdict's orphan check uses): its timestamp has 10 ms resolution, too coarse
/// for a call the resumed client starts within milliseconds of its launch.
fn owner<'a>(f: &'a Facts, id: &str) -> &'a Invocation {
    if f.resumed.argv.is_empty() || f.started_first(id) {
        &f.first
    } else {
        &f.resumed
    }
}

fn at(e: &Event) -> i64 {
    i64::try_from(e.boot_ms).unwrap_or(i64::MAX)
}

fn invocation(p: &mut Picture, inv: &Invocation, name: &str) {
    if inv.argv.is_empty() && inv.spawn_error.is_none() {
        return;
    }
    p.spans.push(Span {
        lane: CLIENT,
        from: inv.start_ms,
        to: inv.end_ms.max(inv.start_ms),
        label: name.to_owned(),
        detail: format!(
            "{name} invocation, +{} ms to +{} ms: {}\n{}",
            inv.start_ms,
            inv.end_ms,
            inv.argv.join(" "),
            ending(inv)
        ),
        bad: false,
    });
    let kind = if inv.timed_out || inv.spawn_error.is_some() {
        Kind::Bad
    } else {
        Kind::Exit
    };
    let label = match (inv.exit_code, inv.killed_by) {
        (_, Some(s)) => format!("killed {s}"),
        (Some(c), _) => format!("exit {c}"),
        _ => "end".to_owned(),
    };
    p.mark(
        CLIENT,
        inv.end_ms,
        kind,
        &label,
        format!(
            "{name} client {} at +{} ms ({})",
            ending(inv),
            inv.end_ms,
            explain_exit(inv.exit_code, inv.killed_by)
        ),
    );
    if let Some(t) = &inv.terminal {
        for (ms, what) in [
            (t.ready_ms, "the client showed its prompt"),
            (t.prompt_ms, "the prompt was typed and submitted"),
            (t.exit_ms, "the exit command was typed"),
            (t.hung_up_ms, "the harness hung up the terminal"),
        ] {
            if let Some(ms) = ms {
                p.mark(SIGNALS, ms, Kind::Event, "", format!("+{ms} ms: {what}"));
            }
        }
    }
    let after = p.lanes.len() - 1;
    for k in &inv.killed {
        let tool = k.tool.as_deref().unwrap_or("not a tool");
        p.mark(
            after,
            inv.end_ms,
            Kind::Bad,
            "killed",
            format!(
                "alive after the {name} client exited; killed by the clean-up: pid {} ({tool}): {}",
                k.pid, k.command
            ),
        );
    }
    for s in &inv.strays {
        p.mark(
            after,
            inv.end_ms,
            Kind::Bad,
            "stray",
            format!(
                "a process of the run alive after the {name} client exited: pid {} pgid {}: {}",
                s.pid, s.pgid, s.command
            ),
        );
    }
    for l in &inv.leftovers {
        p.mark(
            after,
            inv.end_ms,
            Kind::Bad,
            "survived",
            format!("survived the clean-up after the {name} client: {l}"),
        );
    }
}

fn tool_lane(p: &mut Picture, f: &Facts, lane: usize, id: &str) {
    let events: Vec<&Event> = f.events.iter().filter(|e| e.id == id).collect();
    let find = |k: Ledger| events.iter().find(|e| e.kind == k).map(|e| at(e));
    let Some(start) = find(Ledger::Start) else {
        return;
    };
    let inv = owner(f, id);
    let exit = inv.end_ms;
    let end = find(Ledger::Finish)
        .or(find(Ledger::Effect))
        .unwrap_or_else(|| exit.max(start));
    let pid = events.first().map_or(0, |e| e.pid);
    let ran_on = end > exit && !inv.argv.is_empty();
    p.spans.push(Span {
        lane,
        from: start,
        to: end.min(exit).max(start),
        label: String::new(),
        detail: format!("tool {id} (pid {pid}), +{start} ms to +{end} ms"),
        bad: false,
    });
    if ran_on {
        p.spans.push(Span {
            lane,
            from: exit.max(start),
            to: end,
            label: "ran on after the client exited".into(),
            detail: format!(
                "tool {id} (pid {pid}) ran on from the client's exit at +{exit} ms to +{end} ms"
            ),
            bad: true,
        });
    }
    for e in &events {
        let t = at(e);
        let late = t > exit && !inv.argv.is_empty();
        let (kind, label, what) = match e.kind {
            Ledger::Start => (Kind::Event, "start", "started"),
            Ledger::Effect if late => (Kind::Bad, "effect", "wrote its effect"),
            Ledger::Effect => (Kind::Effect, "effect", "wrote its effect"),
            Ledger::Finish => (Kind::Event, "", "finished"),
        };
        let when = if late {
            format!(", {} ms after the client exited", t - exit)
        } else {
            String::new()
        };
        p.mark(
            lane,
            t,
            kind,
            label,
            format!(
                "+{t} ms: tool {id} {what}{when} (pid {} pgid {} sid {} ppid {})",
                e.pid, e.pgid, e.sid, e.ppid
            ),
        );
        if e.kind == Ledger::Effect && late {
            p.alarms.push(Alarm {
                t,
                order: u64::MAX,
                name: "orphan".into(),
                message: format!(
                    "tool {id} (pid {}) wrote its effect at +{t} ms, {} ms after its client exited at +{exit} ms",
                    e.pid,
                    t - exit
                ),
                compare: None,
            });
        }
    }
}

/// The processes of each orphaned tool's tree that outlived `inv`'s client, in the
/// tool's lane (the script itself is drawn from the ledger by [`tool_lane`]).
fn survivors(p: &mut Picture, inv: &Invocation, name: &str, ids: &[String]) {
    for o in &inv.orphans {
        let Some(k) = ids.iter().position(|id| *id == o.id) else {
            continue;
        };
        let lane = FIRST_TOOL + k;
        for s in o
            .survivors
            .iter()
            .filter(|s| o.script_gone || s.pid != o.pid)
        {
            let how = if s.killed_by_harness {
                "killed by the harness"
            } else {
                "exited"
            };
            let what = format!(
                "pid {} `{}` of tool {} ({}; parent now pid {}{}, pgid {}, sid {}), started at +{} ms, alive after the {name} client exited at +{} ms, {how} at +{} ms",
                s.pid,
                s.command,
                o.id,
                s.tie.describe(),
                s.ppid,
                if s.adopted { " (the harness)" } else { "" },
                s.pgid,
                s.sid,
                s.start_ms,
                inv.end_ms,
                s.end_ms
            );
            p.spans.push(Span {
                lane,
                from: inv.end_ms.max(s.start_ms),
                to: s.end_ms.max(inv.end_ms),
                label: format!("pid {} ran on", s.pid),
                detail: what.clone(),
                bad: true,
            });
            p.mark(lane, s.end_ms, Kind::Bad, how, what.clone());
            p.alarms.push(Alarm {
                t: inv.end_ms,
                order: u64::MAX,
                name: "orphan".into(),
                message: what,
                compare: None,
            });
        }
    }
}

/// The picture of a driven run.
pub fn picture(f: &Facts, observations: &[Observation], client: &str) -> Picture {
    let ids = tool_ids(&f.events);
    let mut lanes: Vec<String> = vec![
        "client".into(),
        "signals and keys".into(),
        "requests served".into(),
    ];
    lanes.extend(ids.iter().map(|id| format!("tool {id}")));
    lanes.push(AFTER_EXIT.into());
    let lane_refs: Vec<&str> = lanes.iter().map(String::as_str).collect();
    let mut p = Picture::new(
        format!("turnsim drive: {client}, seed {}", f.schedule.seed),
        "milliseconds since the run started (wall clock)",
        Scale::Linear,
        &lane_refs,
    );
    p.facts.push(format!("schedule: {}", f.schedule.describe()));
    for o in observations {
        if o.status == Status::Fail {
            p.facts
                .push(format!("FAIL {}: {}", o.name, o.details.join("; ")));
        }
    }
    invocation(&mut p, &f.first, "first");
    invocation(&mut p, &f.resumed, "resumed");
    if let Some(s) = &f.sent {
        p.mark(
            SIGNALS,
            s.at_ms,
            Kind::Signal,
            s.interrupt.name(),
            format!(
                "+{} ms: {} sent; {} requests before it, tools running: {}",
                s.at_ms,
                s.interrupt.name(),
                s.requests_before,
                if s.running.is_empty() {
                    "none".to_owned()
                } else {
                    s.running.join(", ")
                }
            ),
        );
    }
    for (i, r) in f.records.iter().enumerate() {
        let Some(&t) = f.request_ms.get(i) else {
            continue;
        };
        let verdict = r.verdict.as_ref().map_or(String::new(), |v| {
            let rules: Vec<&str> = v.violations.iter().map(|x| x.rule.as_str()).collect();
            if rules.is_empty() {
                "; judged clean".to_owned()
            } else {
                format!("; violations: {}", rules.join(", "))
            }
        });
        let id = format!("req-{}", r.index);
        p.marks.push(Mark {
            lane: REQUESTS,
            t,
            order: p.marks.len() as u64,
            label: format!("#{}", r.index),
            detail: format!(
                "+{t} ms: request #{} {} {}: answered {} ({}, {}){verdict}",
                r.index, r.method, r.target, r.answer.status, r.answer.played, r.answer.outcome
            ),
            kind: if verdict.contains("violations") {
                Kind::Bad
            } else {
                Kind::Request
            },
            panel: Some(id.clone()),
        });
        let body = r.body.get("messages").unwrap_or(&r.body);
        p.panels.push(Panel {
            id,
            heading: format!("request #{} at +{t} ms: {} {}", r.index, r.method, r.target),
            body: serde_json::to_string_pretty(body).unwrap_or_default(),
        });
    }
    for (k, id) in ids.iter().enumerate() {
        tool_lane(&mut p, f, FIRST_TOOL + k, id);
    }
    survivors(&mut p, &f.first, "first", &ids);
    survivors(&mut p, &f.resumed, "resumed", &ids);
    p
}

/// Writes the run's picture to `dir/timeline.html`, atomically.
pub fn write(
    dir: &Path,
    f: &Facts,
    observations: &[Observation],
    client: &str,
) -> Result<(), String> {
    let picture = picture(f, observations, client);
    crate::timeline::write_picture(&dir.join("timeline.html"), &picture)
}

#[cfg(test)]
mod tests {
    use super::picture;
    use crate::drive::invoke::Invocation;
    use crate::drive::profiles::profile;
    use crate::drive::run::Facts;
    use crate::drive::schedule::Schedule;
    use crate::drive::tool;

    /// The first client exits at +3365; the resumed one starts at +3682 and launches
    /// its call 4 ms later, which the ledger's 10 ms clock stamps +3680.
    fn facts(resumed_call_line: &str) -> Facts {
        let p = profile("test-client", &[]).expect("built-in profile");
        let line = |s: &str| s.to_owned();
        let ledger = vec![
            line("start toolu_1 t=1000 pid=40 pgid=39 sid=30 ppid=39"),
            line("effect toolu_1 t=2500 pid=40 pgid=39 sid=30 ppid=39"),
            line("finish toolu_1 t=2500 pid=40 pgid=39 sid=30 ppid=39"),
            line(resumed_call_line),
            line("effect toolu_2 t=5180 pid=50 pgid=49 sid=30 ppid=49"),
            line("finish toolu_2 t=5180 pid=50 pgid=49 sid=30 ppid=49"),
        ];
        let events = tool::events(&ledger);
        let client = |start_ms, end_ms| Invocation {
            argv: vec!["client".into()],
            exit_code: Some(0),
            start_ms,
            end_ms,
            ..Invocation::default()
        };
        Facts {
            schedule: Schedule::from_seed(0, &p, 1500, &Default::default()),
            first: client(0, 3365),
            resumed: client(3682, 5214),
            sent: None,
            ledger_first: 3,
            ledger,
            events,
            resume_request: 2,
            records: Vec::new(),
            request_ms: Vec::new(),
        }
    }

    #[test]
    fn a_call_the_resumed_client_started_is_its_own_whatever_the_coarse_clock_says() {
        let f = facts("start toolu_2 t=3680 pid=50 pgid=49 sid=30 ppid=49");
        assert!(!f.started_first("toolu_2"));
        assert_eq!(picture(&f, &[], "test").alarms.len(), 0);
    }

    #[test]
    fn a_call_started_in_the_first_invocation_whose_effect_came_after_its_exit_is_an_alarm() {
        let mut f = facts("start toolu_2 t=3300 pid=50 pgid=49 sid=30 ppid=49");
        f.ledger_first = 4;
        assert!(f.started_first("toolu_2"));
        let alarms = picture(&f, &[], "test").alarms;
        assert_eq!(alarms.len(), 1);
        assert_eq!(
            alarms[0].message,
            "tool toolu_2 (pid 50) wrote its effect at +5180 ms, 1815 ms after its client exited at +3365 ms"
        );
    }
}
