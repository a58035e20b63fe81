//! A shrunk failure told for a maintainer: one line per step that remains, then what
//! broke; and a Rust test that replays it through the public API.
//!
//! Guarantee: the story is read from the trace of the very run the file pins, so it
//! cannot describe a different run; the test snippet embeds the file's JSON verbatim,
//! so it replays exactly what was written. The notes say whenever the failure kept is
//! not the one the input file expected, naming both classes when they differ, so a
//! changed failure is never passed off as the old one.

use std::collections::BTreeMap;

use super::Shrunk;
use crate::checkers::Invariant;
use crate::scenario::{Expectation, Scenario, scenario_to_json};
use crate::world::{FailureClass, RunOutcome};

/// `liveness` → `a liveness failure`.
fn class_of(invariant: Invariant) -> &'static str {
    match FailureClass::of(invariant) {
        FailureClass::Correctness => "a correctness failure",
        FailureClass::Liveness => "a liveness failure",
        FailureClass::Panic => "a panic",
        FailureClass::Nondeterminism => "a nondeterminism failure",
    }
}

/// What a maintainer should know about a shrink besides the story: the input failing
/// otherwise than its file says (`expected` is the input's expectation), a budget that
/// ran out, candidates rejected because they failed differently.
pub fn notes(expected: &Expectation, shrunk: &Shrunk) -> Vec<String> {
    let mut out = Vec::new();
    let Expectation::Fail {
        invariant: kept,
        step,
    } = shrunk.scenario.expect
    else {
        return out;
    };
    match expected {
        Expectation::Pass => out.push(format!(
            "the input file expects a pass but fails with {kept} ({}); shrinking kept that failure",
            class_of(kept)
        )),
        Expectation::Fail {
            invariant: was,
            step: at,
        } if *was != kept => {
            let class = if FailureClass::of(*was) == FailureClass::of(kept) {
                format!("the same class, {}", class_of(kept))
            } else {
                format!(
                    "the failure changed class: {}, not {}",
                    class_of(kept),
                    class_of(*was)
                )
            };
            out.push(format!(
                "the input file expects {was} at step {at} but now fails with {kept} ({class}); \
                 shrinking kept {kept}, failing at step {step}"
            ));
        }
        Expectation::Fail { .. } => {}
    }
    if shrunk.stopped_by_time {
        out.push(format!(
            "the time budget ran out after {} replays; `--budget {}` reproduces this result",
            shrunk.runs, shrunk.runs
        ));
    } else if shrunk.stopped_by_replays {
        out.push(
            "the replay budget ran out before a fixpoint; a larger --budget may shrink further"
                .into(),
        );
    }
    if finding_shape(&shrunk.finding_before) != finding_shape(&shrunk.finding_after) {
        out.push(format!(
            "the finding changed while shrinking (the same invariant, {kept}, but another \
             kind of finding): the input's was \"{}\"; the result's is \"{}\"",
            shrunk.finding_before, shrunk.finding_after
        ));
    }
    if shrunk.finding_changed > 0 {
        out.push(format!(
            "{} candidates failed {kept} with another kind of finding and were rejected; \
             the result's finding is the input's kind: \"{}\"",
            shrunk.finding_changed,
            finding_shape(&shrunk.finding_before)
        ));
    }
    if let (n, Some(other)) = shrunk.failed_differently {
        let class = if FailureClass::of(other) == FailureClass::of(kept) {
            String::new()
        } else {
            format!(", {}", class_of(other))
        };
        out.push(format!(
            "{n} candidates failed differently (first: {other}{class}) and were rejected; \
             the result fails as the input did ({kept}, {})",
            class_of(kept)
        ));
    }
    out
}

/// What kind of finding a violation message states, without its particulars: the
/// words outside quotes, numbers blanked, up to the first clause that quotes or
/// details (`request op#N: message N, block N is assistant text the model never
/// said`). Two findings of one kind about other subjects (another step, op, excerpt)
/// have the same shape; a text finding and a tool-call finding do not.
pub(crate) fn finding_shape(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '0'..='9' => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            _ => out.push(c),
        }
    }
    // The kind is said before the first detail: `: ` after the `request op#N:` head.
    let body = out.split_once(": ").map_or(out.as_str(), |(head, rest)| {
        if head.starts_with("request op#") {
            rest
        } else {
            out.as_str()
        }
    });
    body.split(": ").next().unwrap_or(body).trim().to_owned()
}

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
    use crate::options::SimOptions;

    fn shrunk(invariant: Invariant, step: u64) -> Shrunk {
        Shrunk {
            scenario: Scenario::new(
                SimOptions::from_seed(0),
                Expectation::Fail { invariant, step },
            ),
            decisions_before: 40,
            decisions_after: 8,
            steps_before: 30,
            steps_after: step,
            runs: 200,
            stopped_by_time: false,
            stopped_by_replays: false,
            failed_differently: (0, None),
            finding_before: "request op#4: message 1, block 0 is a tool_use \"read_file\" (id \"toolu_2\") the model never completed: its block never finished streaming".into(),
            finding_after: "request op#2: message 1, block 0 is a tool_use \"search\" (id \"toolu_1\") the model never completed: no tool_use block the provider completed has this name and input {}".into(),
            finding_changed: 0,
        }
    }

    #[test]
    fn a_finding_of_another_kind_in_the_same_invariant_is_said_and_one_of_the_same_kind_is_not() {
        let expected = Expectation::Fail {
            invariant: Invariant::ModelWordsExact,
            step: 30,
        };
        let mut s = shrunk(Invariant::ModelWordsExact, 9);
        assert_eq!(
            notes(&expected, &s),
            Vec::<String>::new(),
            "same kind, other call"
        );
        s.finding_after =
            "request op#2: message 1, block 0 is assistant text the model never said: x is neither"
                .into();
        assert_eq!(
            notes(&expected, &s),
            [format!(
                "the finding changed while shrinking (the same invariant, model_words_exact, but \
                 another kind of finding): the input's was \"{}\"; the result's is \"{}\"",
                s.finding_before, s.finding_after
            )]
        );
    }

    #[test]
    fn candidates_rejected_for_another_kind_of_finding_are_counted_with_the_kind_kept() {
        let expected = Expectation::Fail {
            invariant: Invariant::ModelWordsExact,
            step: 30,
        };
        let mut s = shrunk(Invariant::ModelWordsExact, 9);
        s.finding_changed = 3;
        assert_eq!(
            notes(&expected, &s),
            [
                "3 candidates failed model_words_exact with another kind of finding and were \
              rejected; the result's finding is the input's kind: \"message N, block N is a \
              tool_use  (id ) the model never completed\""
            ]
        );
    }

    #[test]
    fn a_failure_kept_as_the_file_expects_it_needs_no_note() {
        let expected = Expectation::Fail {
            invariant: Invariant::Pairing,
            step: 30,
        };
        assert_eq!(
            notes(&expected, &shrunk(Invariant::Pairing, 9)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_failure_of_another_class_than_the_file_expects_is_named_with_both_classes() {
        let expected = Expectation::Fail {
            invariant: Invariant::Liveness,
            step: 30,
        };
        assert_eq!(
            notes(&expected, &shrunk(Invariant::Pairing, 9)),
            [
                "the input file expects liveness at step 30 but now fails with pairing (the \
              failure changed class: a correctness failure, not a liveness failure); \
              shrinking kept pairing, failing at step 9"
            ]
        );
        let expected = Expectation::Fail {
            invariant: Invariant::AppendOnly,
            step: 30,
        };
        assert_eq!(
            notes(&expected, &shrunk(Invariant::Pairing, 9)),
            [
                "the input file expects append_only at step 30 but now fails with pairing (the \
              same class, a correctness failure); shrinking kept pairing, failing at step 9"
            ]
        );
    }

    #[test]
    fn a_file_expecting_a_pass_that_fails_says_so() {
        assert_eq!(
            notes(&Expectation::Pass, &shrunk(Invariant::Liveness, 4)),
            [
                "the input file expects a pass but fails with liveness (a liveness failure); \
              shrinking kept that failure"
            ]
        );
    }

    #[test]
    fn rejected_candidates_of_another_class_are_counted_with_their_class() {
        let expected = Expectation::Fail {
            invariant: Invariant::Pairing,
            step: 30,
        };
        let mut s = shrunk(Invariant::Pairing, 9);
        s.failed_differently = (3, Some(Invariant::Liveness));
        assert_eq!(
            notes(&expected, &s),
            [
                "3 candidates failed differently (first: liveness, a liveness failure) and were \
              rejected; the result fails as the input did (pairing, a correctness failure)"
            ]
        );
        s.failed_differently = (2, Some(Invariant::AppendOnly));
        assert_eq!(
            notes(&expected, &s),
            [
                "2 candidates failed differently (first: append_only) and were rejected; the \
              result fails as the input did (pairing, a correctness failure)"
            ]
        );
    }

    #[test]
    fn a_trace_line_parses_into_step_time_and_text() {
        assert_eq!(
            parse("[step    3 t=  30006ms] host watchdog cancels silent op#1"),
            Some((3, 30006, "host watchdog cancels silent op#1"))
        );
        assert_eq!(parse("LIVENESS PHASE"), None);
    }
}
