//! The observations: small named checkers over what a driven run left behind.
//!
//! Guarantee: a checker reads only the run's [`Facts`] (the server's records and
//! verdicts, the ledger the tool commands wrote, how each invocation ended), never
//! the client's own account of what it did, so a client is judged black-box by what
//! it sent and what its tools did. Each checker passes, fails with details, or says
//! why it does not apply to this run; none panics on anything a client sent.

use super::profiles::Interrupt;
use super::run::{Facts, running_ids};
use crate::serve::tools::LedgerLine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every checker's name, in report order.
pub const CHECKERS: [&str; 7] = [
    "verdicts_clean",
    "no_hang",
    "at_most_once",
    "no_effect_after_cancel",
    "orphaned_tool",
    "no_lost_observation",
    "interruption_visible",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
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

fn not_applicable(name: &str, why: &str) -> Observation {
    Observation {
        name: name.into(),
        status: Status::NotApplicable,
        details: vec![why.into()],
    }
}

fn parse(lines: &[String]) -> Vec<LedgerLine> {
    lines
        .iter()
        .filter_map(|l| {
            if let Some(id) = l.strip_prefix("start ") {
                Some(LedgerLine::Start(id.to_owned()))
            } else {
                l.strip_prefix("finish ")
                    .map(|id| LedgerLine::Finish(id.to_owned()))
            }
        })
        .collect()
}

/// Runs every checker.
pub fn observe(f: &Facts) -> Vec<Observation> {
    vec![
        verdicts_clean(f),
        no_hang(f),
        at_most_once(f),
        no_effect_after_cancel(f),
        orphaned_tool(f),
        no_lost_observation(f),
        interruption_visible(f),
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
                "the {label} invocation did not end within {} ms; killed",
                inv.millis
            ));
        }
        if let Some(e) = &inv.spawn_error {
            fails.push(format!("the {label} invocation could not start: {e}"));
        }
    }
    obs("no_hang", fails)
}

/// No tool-use id started twice.
pub fn at_most_once(f: &Facts) -> Observation {
    let mut starts: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &f.ledger {
        if let Some(id) = l.strip_prefix("start ") {
            *starts.entry(id).or_default() += 1;
        }
    }
    let fails = starts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, n)| format!("tool call {id} started {n} times"))
        .collect();
    obs("at_most_once", fails)
}

/// No tool started between the signal and the end of the first invocation.
pub fn no_effect_after_cancel(f: &Facts) -> Observation {
    let Some(sent) = &f.sent else {
        return not_applicable("no_effect_after_cancel", "no signal was sent");
    };
    let end = f.ledger_first.min(f.ledger.len());
    let from = sent.ledger_lines.min(end);
    let fails = f.ledger[from..end]
        .iter()
        .filter_map(|l| l.strip_prefix("start "))
        .map(|id| format!("tool call {id} started after {}", sent.interrupt.name()))
        .collect();
    obs("no_effect_after_cancel", fails)
}

/// No tool still running after its client exited.
pub fn orphaned_tool(f: &Facts) -> Observation {
    let mut fails = Vec::new();
    for (label, inv) in [("first", &f.first), ("resumed", &f.resumed)] {
        for o in &inv.orphans {
            fails.push(format!(
                "tool {o} still running after the {label} invocation exited"
            ));
        }
        for o in &inv.leftovers {
            fails.push(format!("{o} survived the harness's clean-up"));
        }
    }
    obs("orphaned_tool", fails)
}

/// The first tool-bearing request of the resumed invocation.
fn resumed_request(f: &Facts) -> Option<&Value> {
    f.records
        .iter()
        .filter(|r| r.index >= f.resume_request && r.method == "POST")
        .filter(|r| r.target.split('?').next() == Some("/v1/messages"))
        .map(|r| &r.body)
        .find(|b| {
            b.get("tools")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty())
        })
}

fn blocks(m: &Value) -> Vec<&Value> {
    match m.get("content") {
        Some(Value::Array(b)) => b.iter().collect(),
        Some(c @ Value::String(_)) => vec![c],
        _ => Vec::new(),
    }
}

fn text_of(b: &Value) -> String {
    match b {
        Value::String(s) => s.clone(),
        Value::Object(_) => match b.get("type").and_then(Value::as_str) {
            Some("text") => b
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            Some("tool_result") => match b.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => {
                    parts.iter().map(text_of).collect::<Vec<_>>().join(" ")
                }
                _ => String::new(),
            },
            _ => String::new(),
        },
        _ => String::new(),
    }
}

fn user_texts(body: &Value) -> Vec<String> {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                .flat_map(blocks)
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"))
                .map(text_of)
                .collect()
        })
        .unwrap_or_default()
}

fn tool_results(body: &Value) -> BTreeMap<String, (bool, String)> {
    let mut out = BTreeMap::new();
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for b in blocks(m) {
            if b.get("type").and_then(Value::as_str) == Some("tool_result")
                && let Some(id) = b.get("tool_use_id").and_then(Value::as_str)
            {
                let is_error = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                out.insert(id.to_owned(), (is_error, text_of(b)));
            }
        }
    }
    out
}

/// The ledger lines that count as written before the interruption (or before the
/// first invocation ended, without one).
fn before_cut(f: &Facts) -> &[String] {
    let end = f
        .sent
        .as_ref()
        .map_or(f.ledger_first, |s| s.ledger_lines)
        .min(f.ledger.len());
    &f.ledger[..end]
}

/// The resumed request keeps the user's prompt and every completed tool result.
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
    let texts = user_texts(body).join("\n");
    for marker in ["[turnsim-drive prompt 1]", "[turnsim-drive prompt 2]"] {
        if !texts.contains(marker) {
            fails.push(format!("the resumed request lost the prompt {marker}"));
        }
    }
    let results = tool_results(body);
    for l in parse(before_cut(f)) {
        if let LedgerLine::Finish(id) = l
            && !results.contains_key(&id)
        {
            fails.push(format!(
                "tool call {id} finished before the interruption, but the resumed request has no result for it"
            ));
        }
    }
    obs(name, fails)
}

const MARKER_WORDS: [&str; 6] = [
    "interrupt",
    "cancel",
    "abort",
    "kill",
    "stopped",
    "terminat",
];

fn has_marker_word(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    MARKER_WORDS.iter().any(|w| s.contains(w))
}

/// After a SIGINT during a tool, the model can see the turn was interrupted.
pub fn interruption_visible(f: &Facts) -> Observation {
    let name = "interruption_visible";
    let Some(sent) = f.sent.as_ref().filter(|s| s.interrupt == Interrupt::Sigint) else {
        return not_applicable(name, "no SIGINT was sent");
    };
    let first_lines = &f.ledger[..f.ledger_first.min(f.ledger.len())];
    let still_running = running_ids(&parse(first_lines));
    let interrupted: Vec<&String> = sent
        .running
        .iter()
        .filter(|id| still_running.contains(id))
        .collect();
    if interrupted.is_empty() {
        return not_applicable(name, "no tool was cut off by the SIGINT");
    }
    let Some(body) = resumed_request(f) else {
        return obs(
            name,
            vec!["the resumed client sent no tool-bearing request".into()],
        );
    };
    let results = tool_results(body);
    let texts = user_texts(body);
    let mut fails = Vec::new();
    for id in interrupted {
        let in_result = results
            .get(id)
            .is_some_and(|(is_error, text)| *is_error || has_marker_word(text));
        let in_text = texts.iter().any(|t| has_marker_word(t));
        if !in_result && !in_text {
            fails.push(format!(
                "tool call {id} was cut off by SIGINT, and the resumed request shows no interruption (no error result for it, no marker text)"
            ));
        }
    }
    obs(name, fails)
}
