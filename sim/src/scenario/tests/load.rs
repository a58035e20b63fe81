//! Unit tests of loading: every kind of bad file gives an error that names it.

use super::*;

#[test]
fn a_wrong_field_name_names_the_file_and_the_field() {
    let err = parse_edited(|v| v["options"]["turn"] = 3.into()).unwrap_err();
    assert_eq!(field_of(&err), "options.turn");
    let text = err.to_string();
    assert!(text.starts_with("scenarios/x.json:"), "{text}");
    assert!(text.contains(": field `options.turn`: unknown field `turn`, expected one of"));
}

#[test]
fn a_wrong_type_reports_file_line_column_field_and_types() {
    let text = "{\n  \"format\": \"turnsim-scenario\",\n  \"version\": 1,\n  \"seed\": 1,\n  \"options\": {\"seed\": 1, \"turns\": \"3\"}\n}\n";
    let err = parse_scenario(text, "scenarios/x.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "scenarios/x.json:5:37: field `options.turns`: invalid type: string \"3\", expected u32"
    );
}

#[test]
fn a_bad_fault_ratio_names_the_fault_field() {
    let err = parse_edited(|v| {
        v["options"]["faults"] = serde_json::json!({"crash": {"num": "x", "den": 1000}});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "options.faults.crash.num");

    let err = parse_edited(|v| {
        v["options"]["faults"] = serde_json::json!({"crash": {"num": 5, "den": 0}});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "options.faults.crash");
    assert!(err.to_string().contains("zero denominator"), "{err}");

    let err = parse_edited(|v| {
        v["options"]["faults"] = serde_json::json!({"crash_hard": {"num": 5, "den": 10}});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "options.faults.crash_hard");
    assert!(
        err.to_string().contains("unknown variant `crash_hard`"),
        "{err}"
    );
}

#[test]
fn a_missing_field_is_named_by_its_full_path() {
    let err = parse_edited(|v| {
        v["options"].as_object_mut().unwrap().remove("turns");
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "options.turns");
    assert!(err.to_string().contains("missing field `turns`"));

    let err = parse_edited(|v| {
        v.as_object_mut().unwrap().remove("seed");
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "seed");
}

#[test]
fn expectation_errors_point_inside_expect() {
    let err = parse_edited(|v| v["expect"] = serde_json::json!({"outcome": "flaky"})).unwrap_err();
    assert_eq!(field_of(&err), "expect.outcome");
    assert!(err.to_string().contains("unknown variant `flaky`"), "{err}");

    let err = parse_edited(|v| v["expect"] = serde_json::json!({})).unwrap_err();
    assert_eq!(field_of(&err), "expect.outcome");

    let err = parse_edited(|v| {
        v["expect"] = serde_json::json!({"outcome": "fail", "invariant": "pairing", "step": -1});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "expect.step");

    let err = parse_edited(|v| {
        v["expect"] = serde_json::json!({"outcome": "fail", "invariant": "pairng", "step": 1});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "expect.invariant");
    assert!(
        err.to_string()
            .contains("unknown variant `pairng`, expected one of `pairing`"),
        "{err}"
    );

    let err = parse_edited(|v| {
        v["expect"] = serde_json::json!({"outcome": "fail", "step": 3});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "expect.invariant");
    assert!(err.to_string().contains("missing field `invariant`"));

    let err = parse_edited(|v| {
        v["expect"] = serde_json::json!({"outcome": "pass", "step": 3});
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "expect.step");
    assert!(
        err.to_string()
            .contains("unknown field `step` for outcome `pass`")
    );
}

#[test]
fn script_errors_point_at_the_response_and_field() {
    let err = parse_edited(|v| {
        v["script"] = serde_json::json!([
            {"kind": "hang"},
            {"kind": "reply", "tool_calls": [{"name": 7}], "stop": "end_turn"}
        ]);
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "script[1].tool_calls[0].name");

    let err = parse_edited(|v| {
        v["script"] = serde_json::json!([{"kind": "reply", "text": "hi"}]);
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "script[0].stop");

    let err = parse_edited(|v| {
        v["script"] = serde_json::json!([{"kind": "hang", "stop": "end_turn"}]);
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "script[0].stop");

    let err = parse_edited(|v| {
        v["script"] = serde_json::json!([{"kind": "error", "error": "timeout"}]);
    })
    .unwrap_err();
    assert_eq!(field_of(&err), "script[0].error");

    let err = parse_edited(|v| v["script"] = serde_json::json!([{"text": "hi"}])).unwrap_err();
    assert_eq!(field_of(&err), "script[0].kind");
}

#[test]
fn a_decision_out_of_range_names_its_index() {
    let err =
        parse_edited(|v| v["decisions"] = serde_json::json!([0, 1, 5_000_000_000u64])).unwrap_err();
    assert_eq!(field_of(&err), "decisions[2]");
}

#[test]
fn a_newer_version_is_reported_as_unsupported_even_with_unknown_fields() {
    let err = parse_edited(|v| {
        v["version"] = 2.into();
        v["brand_new_field"] = true.into();
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            ScenarioError::UnsupportedVersion {
                found: 2,
                supported: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "scenarios/x.json: scenario version 2 is not supported; this turnsim reads version 1"
    );
}

#[test]
fn a_version_of_the_wrong_type_is_a_field_error() {
    let err = parse_edited(|v| v["version"] = "1".into()).unwrap_err();
    assert_eq!(field_of(&err), "version");
}

#[test]
fn a_wrong_format_says_what_was_found() {
    let err = parse_edited(|v| v["format"] = "proptest-regressions".into()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "scenarios/x.json: not a turnsim scenario: `format` is \"proptest-regressions\"; \
         a scenario has \"format\": \"turnsim-scenario\""
    );
    let err = parse_scenario(r#"{"seed": 1}"#, "a.json").unwrap_err();
    assert!(
        matches!(&err, ScenarioError::WrongFormat { found, .. } if found == "it has no `format` field")
    );
    let err = parse_scenario("[1, 2]", "a.json").unwrap_err();
    assert!(
        matches!(&err, ScenarioError::WrongFormat { found, .. } if found == "the file holds an array")
    );
    assert_eq!(err.file(), "a.json");
}

#[test]
fn truncated_json_is_a_syntax_error_at_the_end() {
    let full = serde_json::to_string_pretty(&sample()).unwrap();
    // Trimmed so the cut never ends in a newline, whose empty last line `lines()`
    // would not count.
    let cut = full[..full.len() / 2].trim_end();
    let err = parse_scenario(cut, "cut.json").unwrap_err();
    let ScenarioError::Syntax {
        file,
        line,
        message,
        ..
    } = &err
    else {
        panic!("expected a syntax error, got {err:?}");
    };
    assert_eq!(file, "cut.json");
    assert_eq!(*line, cut.lines().count());
    assert!(message.starts_with("EOF while parsing"), "{message}");
    assert!(err.to_string().starts_with(&format!("cut.json:{line}:")));
}

#[test]
fn text_that_is_not_json_is_a_syntax_error_with_a_position() {
    let err = parse_scenario("seed = 1\n", "s.toml").unwrap_err();
    assert_eq!(err.to_string(), "s.toml:1:1: expected value");
    let err = parse_scenario("{\"format\": \"turnsim-scenario\",}", "t.json").unwrap_err();
    assert!(
        matches!(
            err,
            ScenarioError::Syntax {
                line: 1,
                column: 31,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn an_empty_file_says_it_is_empty() {
    for text in ["", "  \n\t\n"] {
        let err = parse_scenario(text, "e.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "e.json:1:1: the file is empty; a scenario is a JSON object"
        );
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = temp_dir("missing");
    let path = dir.join("nope.json");
    let err = load_scenario(&path).unwrap_err();
    assert!(matches!(err, ScenarioError::Io { op: "read", .. }));
    assert!(
        err.to_string()
            .starts_with(&format!("{}: cannot read: ", path.display()))
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_is_not_utf8_is_a_syntax_error_at_the_bad_byte() {
    let dir = temp_dir("utf8");
    let path = dir.join("bin.json");
    fs::write(&path, b"{\n  \"name\": \"\xff\"\n}").unwrap();
    let err = load_scenario(&path).unwrap_err();
    assert!(
        matches!(
            err,
            ScenarioError::Syntax {
                line: 2,
                column: 12,
                ..
            }
        ),
        "{err:?}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parsing_garbage_never_panics() {
    let full = serde_json::to_string(&sample()).unwrap();
    // Every prefix, and every single-byte corruption at a spread of positions.
    for end in 0..full.len() {
        if full.is_char_boundary(end) {
            let _ = parse_scenario(&full[..end], "p.json");
        }
    }
    let bytes = full.as_bytes();
    for i in (0..bytes.len()).step_by(3) {
        for b in [b'"', b'{', b']', b'0', b'-', b'x', b' '] {
            let mut copy = bytes.to_vec();
            copy[i] = b;
            if let Ok(text) = std::str::from_utf8(&copy) {
                let _ = parse_scenario(text, "p.json");
            }
        }
    }
    let deep = "[".repeat(100_000);
    assert!(parse_scenario(&deep, "deep.json").is_err());
}
