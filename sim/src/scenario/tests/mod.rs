//! Unit tests of the scenario model and its saved text; the loading errors are in
//! `load`.

use super::*;
use crate::options::{FaultKind, Ratio};
use serde_json::Value;
use std::fs;
use std::path::PathBuf;

mod load;

fn sample() -> Scenario {
    let mut s = Scenario::new(
        SimOptions::from_seed(42),
        Expectation::Fail {
            invariant: Invariant::HistoryStable,
            step: 17,
        },
    );
    s.name = "torn write loses a tool result".to_owned();
    s.description = "found by seed 42".to_owned();
    s.decisions = vec![0, 3, 1, 0, 7];
    s.trace_digest = Some("ab12".to_owned());
    s.excerpt = "step 17: crash\n".to_owned();
    s.script = vec![
        ScriptedResponse::Reply {
            thinking: Some("hmm".to_owned()),
            text: "let me look".to_owned(),
            tool_calls: vec![ScriptedCall {
                name: "ls".to_owned(),
                input: serde_json::json!({"path": "."}),
            }],
            stop: ScriptedStop::ToolUse,
        },
        ScriptedResponse::Error {
            error: ScriptedError::ConnectionReset,
            after_events: 2,
        },
        ScriptedResponse::Hang { after_events: 0 },
    ];
    s
}

/// A minimal valid file with `edit` applied to its JSON before it is parsed.
fn parse_edited(edit: impl FnOnce(&mut Value)) -> Result<Scenario, ScenarioError> {
    let mut v =
        serde_json::to_value(Scenario::new(SimOptions::quiet(1), Expectation::Pass)).unwrap();
    edit(&mut v);
    parse_scenario(
        &serde_json::to_string_pretty(&v).unwrap(),
        "scenarios/x.json",
    )
}

fn field_of(err: &ScenarioError) -> &str {
    match err {
        ScenarioError::Field { field, .. } => field,
        other => panic!("expected a field error, got {other:?}"),
    }
}

/// A fresh directory for one test, removed by the test when it passes.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "turnsim-scenario-test-{}-{test}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_scenario_survives_a_save_and_load_round_trip() {
    let dir = temp_dir("round_trip");
    let path = dir.join("nested/deeper/s.json");
    let s = sample();
    save_scenario(&path, &s).unwrap();
    assert_eq!(load_scenario(&path).unwrap(), s);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    assert!(text.starts_with("{\n  \"format\": \"turnsim-scenario\",\n  \"version\": 1,"));
    fs::remove_dir_all(&dir).unwrap();
}

/// Found by the `scenario_parse` fuzz target in CI: serde_json's default float parser
/// may land one ulp off, so `5200E-86` loaded as 5.1999999999999994e-83, was saved
/// that way, and loaded again as 5.2e-83: a replayed scenario no longer held the tool
/// input it was saved with. The workspace enables `float_roundtrip`.
#[test]
fn a_float_in_a_scripted_tool_input_survives_save_and_load() {
    let mut s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
    s.script = vec![ScriptedResponse::Reply {
        thinking: None,
        text: String::new(),
        tool_calls: vec![ScriptedCall {
            name: "run_shell".to_owned(),
            input: serde_json::from_str(r#"{"x": 5200E-86}"#).unwrap(),
        }],
        stop: ScriptedStop::ToolUse,
    }];
    let ScriptedResponse::Reply { tool_calls, .. } = &s.script[0] else {
        unreachable!()
    };
    assert_eq!(tool_calls[0].input["x"].as_f64(), Some(5.2e-83));
    let saved = scenario_to_json(&s).unwrap();
    assert!(saved.contains("\"x\": 5.2e-83"), "{saved}");
    let again = parse_scenario(&saved, "scenarios/x.json").unwrap();
    assert_eq!(again, s);
    assert_eq!(scenario_to_json(&again).unwrap(), saved);
}

#[test]
fn saved_text_packs_plain_arrays_and_indents_the_rest() {
    let mut s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
    s.decisions = (0..1000).map(|i| (i * 7919) % 100_003).collect();
    s.script = sample().script;
    let text = scenario_to_json(&s).unwrap();
    assert!(text.lines().all(|l| l.len() <= PACKED_WIDTH), "{text}");
    assert!(text.contains("\n    \"provider_latency\": ["), "{text}");
    assert!(text.contains(&format!(
        "\n    \"tool_latency\": [{}, {}],\n",
        s.options.tool_latency[0], s.options.tool_latency[1]
    )));
    assert!(
        text.contains("\n  \"decisions\": [\n    0, 7919, 15838,"),
        "{text}"
    );
    assert!(text.contains("\n  \"script\": [\n    {\n      \"kind\": \"reply\",\n"));
    let Ratio { num, den } = s.options.tool_call;
    assert!(
        text.contains(&format!(
            "\n    \"tool_call\": {{\"num\": {num}, \"den\": {den}}},\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("\n  \"expect\": {\"outcome\": \"pass\"},\n"),
        "{text}"
    );
    assert!(text.contains("\"input\": {\"path\": \".\"}"), "{text}");
    assert!(
        text.contains("\n    {\"kind\": \"hang\", \"after_events\": 0}\n"),
        "{text}"
    );
    assert!(text.ends_with("\n}\n"));
    let decision_lines = text
        .lines()
        .skip_while(|l| !l.starts_with("  \"decisions\""))
        .take_while(|l| !l.starts_with("  ]"))
        .count();
    assert!(decision_lines < 80, "{decision_lines} lines");
    // The packed text is ordinary JSON: the same value as serde's own rendering.
    let ours: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(ours, serde_json::to_value(&s).unwrap());
    assert_eq!(parse_scenario(&text, "p.json").unwrap(), s);
}

#[test]
fn saved_text_keeps_empty_containers_and_escapes_keys_and_strings() {
    let mut s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
    s.name = "quote \" and newline \n".to_owned();
    s.script = vec![ScriptedResponse::Reply {
        thinking: None,
        text: String::new(),
        tool_calls: vec![ScriptedCall {
            name: "odd".to_owned(),
            input: serde_json::json!({"k\"ey": [], "e": {}, "a": [[1, 2], "x"]}),
        }],
        stop: ScriptedStop::ToolUse,
    }];
    let text = scenario_to_json(&s).unwrap();
    assert!(
        text.contains("\"name\": \"quote \\\" and newline \\n\","),
        "{text}"
    );
    assert!(text.contains("\"k\\\"ey\": [],"), "{text}");
    assert!(text.contains("\"e\": {},"), "{text}");
    assert!(
        text.contains("\"faults\": {},\n    \"stream\": {\n"),
        "{text}"
    );
    assert_eq!(parse_scenario(&text, "e.json").unwrap(), s);
}

#[test]
fn a_minimal_scenario_fills_in_the_defaults() {
    let options = serde_json::to_string(&SimOptions::quiet(5)).unwrap();
    let text = format!(
        r#"{{"format":"turnsim-scenario","version":1,"seed":5,"options":{options},"expect":{{"outcome":"pass"}}}}"#
    );
    let s = parse_scenario(&text, "m.json").unwrap();
    assert_eq!(s, Scenario::new(SimOptions::quiet(5), Expectation::Pass));
    assert_eq!(s.engine, "reference");
}

#[test]
fn empty_optional_fields_are_left_out_when_saved() {
    let s = Scenario::new(SimOptions::quiet(1), Expectation::Pass);
    let v = serde_json::to_value(&s).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "format",
            "version",
            "name",
            "description",
            "seed",
            "engine",
            "options",
            "decisions",
            "expect"
        ]
    );
    assert_eq!(v["expect"], serde_json::json!({"outcome": "pass"}));
}

#[test]
fn scripted_responses_serialize_with_their_kind_tag() {
    let v = serde_json::to_value(sample().script).unwrap();
    assert_eq!(
        v,
        serde_json::json!([
            {"kind": "reply", "thinking": "hmm", "text": "let me look",
             "tool_calls": [{"name": "ls", "input": {"path": "."}}], "stop": "tool_use"},
            {"kind": "error", "error": "connection_reset", "after_events": 2},
            {"kind": "hang", "after_events": 0}
        ])
    );
}

#[test]
fn a_tool_call_without_input_gets_an_empty_object() {
    let s = parse_edited(|v| {
        v["script"] = serde_json::json!([
            {"kind": "reply", "tool_calls": [{"name": "ls"}], "stop": "tool_use"},
            {"kind": "error", "error": "overloaded"},
            {"kind": "hang"}
        ]);
    })
    .unwrap();
    assert_eq!(
        s.script,
        vec![
            ScriptedResponse::Reply {
                thinking: None,
                text: String::new(),
                tool_calls: vec![ScriptedCall {
                    name: "ls".to_owned(),
                    input: serde_json::json!({}),
                }],
                stop: ScriptedStop::ToolUse,
            },
            ScriptedResponse::Error {
                error: ScriptedError::Overloaded,
                after_events: 0,
            },
            ScriptedResponse::Hang { after_events: 0 },
        ]
    );
}

#[test]
fn saved_options_keep_their_faults() {
    let mut s = Scenario::new(SimOptions::quiet(3), Expectation::Pass);
    s.options
        .faults
        .insert(FaultKind::Hang, Ratio::new(60, 1000));
    let dir = temp_dir("faults");
    let path = dir.join("f.json");
    save_scenario(&path, &s).unwrap();
    let back = load_scenario(&path).unwrap();
    assert_eq!(
        back.options.fault(FaultKind::Hang),
        Some(Ratio::new(60, 1000))
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn expectation_displays_its_verdict() {
    assert_eq!(Expectation::Pass.to_string(), "pass");
    let fail = Expectation::Fail {
        invariant: Invariant::NoLostObservation,
        step: 9,
    };
    assert_eq!(fail.to_string(), "fail: no_lost_observation at step 9");
}

#[test]
fn a_scenario_stores_its_judging_and_reads_it_back_checked() {
    use crate::conventions::file::ProfileFile;
    use crate::conventions::{Judging, Selection};
    let plain = Scenario::new(SimOptions::from_seed(3), Expectation::Pass);
    assert!(!scenario_to_json(&plain).unwrap().contains("judging"));
    let mut s = plain.clone();
    s.judging = Judging {
        checks: Selection {
            only: None,
            skip: vec![crate::invariant::Invariant::CacheBreakpoints],
        },
        conventions: Some(
            ProfileFile::parse(
                r#"{"format": "turnsim-conventions", "name": "mine", "prompt": "plain"}"#,
                "p",
            )
            .unwrap(),
        ),
    };
    let json = scenario_to_json(&s).unwrap();
    assert_eq!(parse_scenario(&json, "s.json").unwrap(), s);
    let bad = json.replace("\"prompt\": \"plain\"", "\"notes\": {\"exact\": [\"\"]}");
    assert_ne!(bad, json);
    let err = parse_scenario(&bad, "s.json").unwrap_err().to_string();
    assert!(err.contains("judging.conventions.notes.exact[0]"), "{err}");
    assert!(
        err.contains("an empty text, which would match every message"),
        "{err}"
    );
}
