//! The summary across runs: per client and signal class, how many runs failed each
//! checker, at what rate, on which seeds; as markdown to paste into an issue and as
//! JSON.
//!
//! Guarantee: the summary is a pure function of the run reports, sorted by client,
//! class, checker and seed, so the same reports give the same summary whatever order
//! parallel runs finished in; a rate is always written with its denominator.

use super::observe::Status;
use super::report::{Outcome, RunReport, class};
use serde::Serialize;
use std::collections::BTreeMap;

/// One (client, class) row group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Group {
    pub client: String,
    pub version: String,
    pub class: String,
    pub runs: u32,
    /// Outcome label → seeds.
    pub outcomes: BTreeMap<String, Vec<u64>>,
    /// Checker → seeds where it failed.
    pub failed: BTreeMap<String, Vec<u64>>,
    /// Checker → seeds where it was informational.
    pub informational: BTreeMap<String, Vec<u64>>,
    /// Checker → (reruns that failed it, reruns), over the failing seeds.
    pub reruns: BTreeMap<String, (u32, u32)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub runs: u32,
    pub failed_runs: u32,
    pub groups: Vec<Group>,
    pub note: String,
}

pub fn summarize(reports: &[RunReport]) -> Summary {
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    let mut sorted: Vec<&RunReport> = reports.iter().collect();
    sorted.sort_by_key(|r| (r.client.clone(), r.seed));
    for r in sorted {
        let g = groups
            .entry((r.client.clone(), class(r)))
            .or_insert_with(|| Group {
                client: r.client.clone(),
                version: r.version.clone(),
                class: class(r),
                ..Group::default()
            });
        g.runs += 1;
        g.outcomes
            .entry(r.outcome.label().to_owned())
            .or_default()
            .push(r.seed);
        for o in &r.observations {
            let into = match o.status {
                Status::Fail => &mut g.failed,
                Status::Info => &mut g.informational,
                _ => continue,
            };
            into.entry(o.name.clone()).or_default().push(r.seed);
        }
        if let Some(re) = &r.reruns {
            for (name, n) in &re.per_checker {
                let e = g.reruns.entry(name.clone()).or_default();
                e.0 += n;
                e.1 += re.runs;
            }
        }
    }
    Summary {
        runs: u32::try_from(reports.len()).unwrap_or(u32::MAX),
        failed_runs: u32::try_from(
            reports
                .iter()
                .filter(|r| r.outcome == Outcome::Fail)
                .count(),
        )
        .unwrap_or(u32::MAX),
        groups: groups.into_values().collect(),
        note: super::report::NONDETERMINISM.into(),
    }
}

fn seeds(s: &[u64]) -> String {
    s.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// The summary as a markdown table per client.
pub fn markdown(s: &Summary) -> String {
    let mut out = format!(
        "# turnsim drive summary\n\n{} run(s), {} failed. {}\n",
        s.runs, s.failed_runs, s.note
    );
    let mut client = String::new();
    for g in &s.groups {
        if g.client != client {
            client.clone_from(&g.client);
            out.push_str(&format!(
                "\n## {} ({})\n\n| class | runs | outcomes | checker | severity | rate | seeds | reruns failing |\n|---|---|---|---|---|---|---|---|\n",
                g.client, g.version
            ));
        }
        let outcomes: Vec<String> = g
            .outcomes
            .iter()
            .map(|(k, v)| format!("{k} {}", v.len()))
            .collect();
        let outcomes = outcomes.join(", ");
        let mut rows: Vec<(String, &str, &Vec<u64>)> = Vec::new();
        for (name, v) in &g.failed {
            rows.push((name.clone(), "failure", v));
        }
        for (name, v) in &g.informational {
            rows.push((name.clone(), "informational", v));
        }
        if rows.is_empty() {
            out.push_str(&format!(
                "| {} | {} | {outcomes} | — | | | | |\n",
                g.class, g.runs
            ));
        }
        for (name, severity, v) in rows {
            let reruns = match g.reruns.get(&name) {
                Some((n, of)) if severity == "failure" => format!("{n}/{of}"),
                _ => String::new(),
            };
            out.push_str(&format!(
                "| {} | {} | {outcomes} | `{name}` | {severity} | {}/{} | {} | {reruns} |\n",
                g.class,
                g.runs,
                v.len(),
                g.runs,
                seeds(v)
            ));
        }
    }
    out
}
