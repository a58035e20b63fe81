//! Reports of driven runs: what was injected, what each checker said, how the client
//! ended, and how to run it again.
//!
//! Guarantee: every report says that the client is not deterministic (the schedule
//! is; the client's timing, retries and choices are not), names the run file that
//! `turnsim drive --replay` takes, and for a failing run states how many of its reruns
//! failed again, so a finding comes with its measured flake rate instead of a claim
//! that it reproduces.

use super::observe::{Observation, Status};
use super::run::{Facts, Invocation, Sent};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const NONDETERMINISM: &str = "The client is not deterministic: the schedule (faults, signal, timing) is a function of the seed, but the client's own timing, retries and choices are not. A failing schedule is rerun to measure how often it fails.";

/// How the reruns of a failing schedule went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reruns {
    pub runs: u32,
    /// Reruns in which at least one of the originally failing checkers failed again.
    pub failed: u32,
    /// Per originally failing checker: how many reruns it failed in.
    pub per_checker: Vec<(String, u32)>,
}

/// One run's report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    pub dir: PathBuf,
    pub client: String,
    pub version: String,
    pub schedule: String,
    pub signal_sent: Option<Sent>,
    pub first: Invocation,
    pub resumed: Invocation,
    pub requests: usize,
    pub observations: Vec<Observation>,
    pub replay: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reruns: Option<Reruns>,
    pub note: String,
}

impl RunReport {
    pub fn new(
        dir: &Path,
        client: &str,
        version: &str,
        facts: &Facts,
        observations: Vec<Observation>,
    ) -> RunReport {
        RunReport {
            dir: dir.to_path_buf(),
            client: client.into(),
            version: version.into(),
            schedule: facts.schedule.describe(),
            signal_sent: facts.sent.clone(),
            first: facts.first.clone(),
            resumed: facts.resumed.clone(),
            requests: facts.records.len(),
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

    /// The report as text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let verdict = if self.failing().is_empty() {
            "PASS"
        } else {
            "FAIL"
        };
        out.push_str(&format!(
            "{verdict} {} ({}) {}\n",
            self.client, self.version, self.schedule
        ));
        match &self.signal_sent {
            Some(s) => out.push_str(&format!(
                "  signal: {} sent while {} ran\n",
                s.interrupt.name(),
                if s.running.is_empty() {
                    "no tool".to_owned()
                } else {
                    s.running.join(", ")
                }
            )),
            None => out.push_str("  signal: none sent\n"),
        }
        for (label, inv) in [("first", &self.first), ("resumed", &self.resumed)] {
            out.push_str(&format!("  {label}: {}\n", ending(inv)));
        }
        out.push_str(&format!("  requests: {}\n", self.requests));
        for o in &self.observations {
            let status = match o.status {
                Status::Pass => "ok",
                Status::Fail => "FAIL",
                Status::NotApplicable => "n/a",
            };
            out.push_str(&format!("  {status:4} {}", o.name));
            if o.status == Status::Fail {
                out.push('\n');
                for d in &o.details {
                    out.push_str(&format!("         {d}\n"));
                }
            } else {
                out.push('\n');
            }
        }
        if let Some(r) = &self.reruns {
            out.push_str(&format!(
                "  reruns: failed again in {} of {}",
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
    let how = if inv.timed_out {
        "timed out, killed".to_owned()
    } else if let Some(c) = inv.exit_code {
        format!("exit {c}")
    } else if let Some(s) = inv.killed_by {
        format!("killed by signal {s}")
    } else {
        "ended".to_owned()
    };
    format!("{how} after {} ms", inv.millis)
}
