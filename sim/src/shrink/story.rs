//! A shrunk failure told for a maintainer: one line per step that remains, then what
//! broke; and a Rust test that replays it through the public API.
//!
//! Guarantee: the story is read from the trace of the very run the file pins, so it
//! cannot describe a different run; the test snippet embeds the file's JSON verbatim,
//! so it replays exactly what was written.

use std::collections::BTreeMap;

use crate::scenario::{Expectation, Scenario, scenario_to_json};
use crate::world::RunOutcome;

/// `[step    3 t=  30006ms] text` → (3, 30006, text).
fn parse(line: &str) -> Option<(u64, u64, &str)> {
    let rest = line.strip_prefix("[step")?;
    let (head, text) = rest.split_once("] ")?;
    let (step, time) = head.split_once("t=")?;
    let step = step.trim().parse().ok()?;
    let time = time.trim().strip_suffix("ms")?.trim().parse().ok()?;
    Some((step, time, text))
}

/// One line per step of a traced run, then the violation.
pub fn story(outcome: &RunOutcome) -> Vec<String> {
    let mut steps: BTreeMap<u64, (u64, Vec<&str>)> = BTreeMap::new();
    for line in &outcome.trace {
        if let Some((step, time, text)) = parse(line) {
            let entry = steps.entry(step).or_insert((time, Vec::new()));
            entry.1.push(text);
        }
    }
    let mut out = Vec::new();
    for step in 1..=outcome.steps {
        let line = match steps.get(&step) {
            Some((time, texts)) => format!("{step:>3}  t={time}ms  {}", texts.join("; ")),
            None => format!("{step:>3}  (a quiet step: a timer or the host between turns)"),
        };
        out.push(line);
    }
    if let Some(v) = &outcome.violation {
        out.push(format!(
            "  -> {} at step {}: {}",
            v.invariant, v.step, v.message
        ));
    }
    out
}

/// A Rust integration test that replays `scenario` through the public API and
/// asserts its expectation. `factory` is the expression that builds its engine.
pub fn test_snippet(scenario: &Scenario, factory: &str) -> String {
    let json = scenario_to_json(scenario).unwrap_or_default();
    let mut hashes = String::from("#");
    while json.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    let name: String = scenario
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let name = if name.is_empty() {
        "shrunk".to_string()
    } else {
        name
    };
    let check = match &scenario.expect {
        Expectation::Pass => {
            "    assert!(outcome.violation.is_none(), \"{:?}\", outcome.violation);\n".to_string()
        }
        Expectation::Fail { invariant, step } => format!(
            "    let v = outcome.violation.expect(\"the scenario fails\");\n    \
             assert_eq!((v.invariant.to_string(), v.step), ({:?}.to_string(), {step}));\n",
            invariant.to_string()
        ),
    };
    format!(
        "// Replays a shrunk turnsim scenario; keep it as a regression test.\n\
         #[test]\n\
         fn {name}_still_fails_as_shrunk() {{\n    \
         let scenario = turnsim::parse_scenario(\n        r{hashes}\"{json}\"{hashes},\n        \"{name}\",\n    )\n    .expect(\"the scenario parses\");\n    \
         let factory = {factory};\n    \
         let outcome = turnsim::run_scenario(&*factory, &scenario, false);\n\
         {check}}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_line_parses_into_step_time_and_text() {
        assert_eq!(
            parse("[step    3 t=  30006ms] host watchdog cancels silent op#1"),
            Some((3, 30006, "host watchdog cancels silent op#1"))
        );
        assert_eq!(parse("LIVENESS PHASE"), None);
    }
}
