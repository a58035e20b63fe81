//! Reports of driven runs: what was injected, what each checker said, how the client
//! ended, and how to run it again.
//!
//! Guarantee: a run's outcome is never better than what it tested. A run whose
//! scheduled signal was never sent is NOT EXERCISED (with the reason), not PASS; a
//! run whose client could not start or whose install is broken is an ENVIRONMENT
//! error, not a client failure; findings nothing could have prevented (SIGKILL) are
//! INFO. Every report says that the client is not deterministic, names the run file
//! `turnsim drive --replay` takes, gives every event a time (milliseconds since the
//! run started) and every exit code its meaning, and for a failing run states how
//! many of its reruns failed any checker, so a finding comes with its measured rate.

use super::exit_status::explain_exit;
use super::invoke::{Invocation, Sent};
use super::observe::{Observation, Status};
use super::run::Facts;
use super::schedule::Schedule;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const NONDETERMINISM: &str = "The client is not deterministic: the schedule (faults, signal, timing) is a function of the seed, but the client's own timing, retries and choices are not. A failing schedule is rerun to measure how often it fails.";

/// A run's outcome, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The client could not be run (not installed, broken install).
    Environment,
    Fail,
    /// The scheduled signal was never sent: the run did not test it.
    NotExercised,
    /// Only informational findings.
    Info,
    Pass,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Environment => "ENVIRONMENT",
            Outcome::Fail => "FAIL",
            Outcome::NotExercised => "NOT EXERCISED",
            Outcome::Info => "INFO",
            Outcome::Pass => "PASS",
        }
    }
}

/// How the reruns of a failing schedule went; each rerun has its own report.json.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reruns {
    pub runs: u32,
    /// Reruns in which any checker failed.
    pub failed: u32,
    /// Per checker that failed in the run or any rerun: in how many reruns it failed.
    pub per_checker: Vec<(String, u32)>,
    pub dirs: Vec<PathBuf>,
}

/// One run's report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    pub dir: PathBuf,
    pub client: String,
    pub version: String,
    pub seed: u64,
    pub schedule: String,
    pub scheduled: Schedule,
    pub outcome: Outcome,
    /// Why the outcome is NOT EXERCISED or ENVIRONMENT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub signal_sent: Option<Sent>,
    pub first: Invocation,
    pub resumed: Invocation,
    /// Every request the server received (HEAD probes and 404s included).
    pub requests: usize,
    /// Of those, the model requests `turnsim check` judges (POST `/v1/messages`,
    /// `/v1/responses`, `/v1/chat/completions`, a Gemini generate call); the rest,
    /// by method and path.
    #[serde(default)]
    pub requests_judged: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests_other: Vec<(String, usize)>,
    pub observations: Vec<Observation>,
    pub replay: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reruns: Option<Reruns>,
    pub note: String,
}

/// The signal class of a run: the signal sent, or `none`.
pub fn class(r: &RunReport) -> String {
    match (&r.signal_sent, r.scheduled.interrupt) {
        (Some(s), _) => s.interrupt.name().to_owned(),
        (None, Some(i)) => format!("{} (not sent)", i.name()),
        (None, None) => "none".to_owned(),
    }
}

/// A client could not be run at all: not an observation about the client.
fn environment_problem(f: &Facts) -> Option<String> {
    for (label, inv) in [("first", &f.first), ("resumed", &f.resumed)] {
        if let Some(e) = &inv.spawn_error {
            return Some(format!("the {label} command could not start: {e}"));
        }
        if let Some(c @ (126 | 127)) = inv.exit_code {
            return Some(format!(
                "the {label} command exited {c} ({}): the client or something it runs is not installed or not executable; see {label}.stderr",
                explain_exit(Some(c), None)
            ));
        }
    }
    None
}

/// The requests `turnsim check` does not judge (a client's `HEAD /` reachability
/// probe, a token count, anything answered 404), counted by method and path.
fn other_requests(f: &Facts) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for r in &f.records {
        if super::history::judged_route(&r.method, &r.target) {
            continue;
        }
        let path = r.target.split('?').next().unwrap_or_default();
        let what = format!("{} {path}", r.method);
        match out.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => out.push((what, 1)),
        }
    }
    out
}

/// Why a scheduled signal was not sent.
fn not_sent_reason(f: &Facts) -> Option<String> {
    let kind = f.schedule.interrupt?;
    if f.sent.is_some() {
        return None;
    }
    let starts = super::tool::events(&f.ledger[..f.ledger_first.min(f.ledger.len())])
        .iter()
        .filter(|e| e.kind == super::tool::Kind::Start)
        .count();
    let s = &f.schedule;
    let when = if starts > s.interrupt_at_tool as usize {
        format!(
            "{} ms after tool call {} started",
            s.interrupt_delay_ms,
            s.interrupt_at_tool + 1
        )
    } else {
        format!(
            "after tool call {} started ({starts} tool call(s) started)",
            s.interrupt_at_tool + 1
        )
    };
    Some(format!(
        "{} was scheduled {when}, but the client exited first, at +{} ms ({})",
        kind.name(),
        f.first.end_ms,
        explain_exit(f.first.exit_code, f.first.killed_by)
    ))
}

impl RunReport {
    pub fn new(
        dir: &Path,
        client: &str,
        version: &str,
        facts: &Facts,
        observations: Vec<Observation>,
    ) -> RunReport {
        let env = environment_problem(facts);
        let not_sent = not_sent_reason(facts);
        let others = other_requests(facts);
        let worst = observations
            .iter()
            .map(|o| o.status)
            .min_by_key(|s| match s {
                Status::Fail => 0,
                Status::Info => 1,
                _ => 2,
            });
        let (outcome, reason) = if env.is_some() {
            (Outcome::Environment, env)
        } else if worst == Some(Status::Fail) {
            (Outcome::Fail, not_sent)
        } else if not_sent.is_some() {
            (Outcome::NotExercised, not_sent)
        } else if worst == Some(Status::Info) {
            (Outcome::Info, None)
        } else {
            (Outcome::Pass, None)
        };
        RunReport {
            dir: dir.to_path_buf(),
            client: client.into(),
            version: version.into(),
            seed: facts.schedule.seed,
            schedule: facts.schedule.describe(),
            scheduled: facts.schedule.clone(),
            outcome,
            reason,
            signal_sent: facts.sent.clone(),
            first: facts.first.clone(),
            resumed: facts.resumed.clone(),
            requests: facts.records.len(),
            requests_judged: facts.records.len() - others.iter().map(|(_, n)| n).sum::<usize>(),
            requests_other: others,
            observations,
            replay: format!("turnsim drive --replay {}", dir.join("run.json").display()),
            reruns: None,
            note: NONDETERMINISM.into(),
        }
    }

    /// The checkers that failed.
    pub fn failing(&self) -> Vec<String> {
        self.observations
            .iter()
            .filter(|o| o.status == Status::Fail)
            .map(|o| o.name.clone())
            .collect()
    }

    pub fn save(&self) -> Result<(), String> {
        let path = self.dir.join("report.json");
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::scenario::write_atomic(&path, format!("{text}\n").as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The report as text; times are milliseconds since the run started.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} {} ({}) {}\n",
            self.outcome.label(),
            self.client,
            self.version,
            self.schedule
        );
        if let Some(r) = &self.reason {
            out.push_str(&format!("  why: {r}\n"));
        }
        for (label, inv) in [("first", &self.first), ("resumed", &self.resumed)] {
            out.push_str(&format!("  +{:>6} ms {label} started\n", inv.start_ms));
            if label == "first"
                && let Some(s) = &self.signal_sent
            {
                out.push_str(&format!(
                    "  +{:>6} ms {} sent while {} ran\n",
                    s.at_ms,
                    s.interrupt.name(),
                    if s.running.is_empty() {
                        "no tool".to_owned()
                    } else {
                        s.running.join(", ")
                    }
                ));
            }
            out.push_str(&format!(
                "  +{:>6} ms {label} {}\n",
                inv.end_ms,
                ending(inv)
            ));
            for k in &inv.killed {
                out.push_str(&format!(
                    "  {:>10} clean-up killed pid {} (pgid {}, sid {}{}) `{}`\n",
                    "",
                    k.pid,
                    k.pgid,
                    k.sid,
                    k.tool
                        .as_ref()
                        .map_or(String::new(), |t| format!(", tool {t}")),
                    k.command
                ));
            }
        }
        out.push_str(&format!("  requests: {}", self.requests));
        if !self.requests_other.is_empty() {
            let others: Vec<String> = self
                .requests_other
                .iter()
                .map(|(what, n)| format!("{n} {what}"))
                .collect();
            out.push_str(&format!(
                " ({} model requests, which `turnsim check` judges; not judged: {})",
                self.requests_judged,
                others.join(", ")
            ));
        }
        out.push('\n');
        for o in &self.observations {
            let status = match o.status {
                Status::Pass => "ok",
                Status::Fail => "FAIL",
                Status::Info => "info",
                Status::NotApplicable => "n/a",
            };
            out.push_str(&format!("  {status:4} {}\n", o.name));
            if matches!(o.status, Status::Fail | Status::Info) {
                for d in &o.details {
                    out.push_str(&format!("         {d}\n"));
                }
            }
        }
        if let Some(r) = &self.reruns {
            out.push_str(&format!(
                "  reruns: failed (any checker) in {} of {}",
                r.failed, r.runs
            ));
            for (name, n) in &r.per_checker {
                out.push_str(&format!("; {name} {n}/{}", r.runs));
            }
            out.push('\n');
        }
        out.push_str(&format!("  files: {}\n", self.dir.display()));
        out.push_str(&format!("  replay: {}\n", self.replay));
        out
    }
}

/// How an invocation ended, in words.
pub fn ending(inv: &Invocation) -> String {
    if let Some(e) = &inv.spawn_error {
        return format!("could not start: {e}");
    }
    if inv.timed_out {
        return "timed out, killed by the harness".to_owned();
    }
    format!("ended: {}", explain_exit(inv.exit_code, inv.killed_by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_explained_by_their_signal() {
        assert_eq!(
            explain_exit(Some(143), None),
            "exit 143 = 128 + 15: the conventional code after SIGTERM"
        );
        assert_eq!(
            explain_exit(Some(130), None),
            "exit 130 = 128 + 2: the conventional code after SIGINT"
        );
        assert_eq!(explain_exit(None, Some(9)), "killed by signal 9 (SIGKILL)");
        assert_eq!(explain_exit(Some(127), None), "exit 127: command not found");
        assert_eq!(explain_exit(Some(3), None), "exit 3");
    }
}
