//! The simulator and `turnsim check` are one oracle: a pairing failure the simulator
//! finds, exported with `turnsim replay --export-transcript`, is flagged by `check`;
//! and the reference engine's own requests give `check` no violation.

use std::io::Cursor;
use std::path::PathBuf;
use turnsim::Reference;
use turnsim::check::{check_file, check_reader};
use turnsim::cli::main_with;
use turnsim::run_seed;
use turnsim::testing::check::export::request_body;
use turnsim::{Bug, Canary};

fn args(list: &[&str]) -> Vec<String> {
    std::iter::once("turnsim")
        .chain(list.iter().copied())
        .map(str::to_string)
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creates the scratch dir");
    dir
}

#[test]
fn a_pairing_failure_exported_from_a_replay_is_flagged_by_check() {
    let dir = scratch("check_export_pairing");
    let out = dir.join("failures");
    let out_s = out.to_str().expect("utf-8 path");
    // The canary answers a cancel by dropping the results of the calls it cut.
    let code = main_with(args(&[
        "run",
        "--engine",
        "cancel_orphans_tool_use",
        "--seeds",
        "0..100",
        "--quiet",
        "--jobs",
        "1",
        "--out",
        out_s,
    ]));
    assert_eq!(code, 1, "the canary fails with a correctness violation");
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&out)
        .expect("scenarios written")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with("-pairing.json"))
        .collect();
    scenarios.sort();
    assert!(
        !scenarios.is_empty(),
        "a pairing failure among seeds 0..100"
    );
    for scenario in scenarios {
        let transcript = scenario.with_extension("transcript.json");
        let code = main_with(args(&[
            "replay",
            scenario.to_str().expect("utf-8 path"),
            "--export-transcript",
            transcript.to_str().expect("utf-8 path"),
        ]));
        assert_eq!(
            code,
            1,
            "{}: the replay reproduces the failure",
            scenario.display()
        );
        let report = check_file(&transcript, None).expect("the export is readable");
        assert_eq!(report.format, "anthropic");
        let pairing: Vec<_> = report.findings.of("pairing");
        assert!(
            !pairing.is_empty(),
            "{}: {:?}",
            transcript.display(),
            report.findings.kept
        );
        assert!(pairing.iter().all(|f| f.place.line.is_some()));
        let code = main_with(args(&["check", transcript.to_str().expect("utf-8 path")]));
        assert_eq!(code, 1, "{}", transcript.display());
    }
}

#[test]
fn check_names_the_same_violation_the_simulator_found() {
    let canary = Canary(Bug::CancelOrphansToolUse);
    let (outcome, violation) = (0..100)
        .map(|seed| run_seed(&canary, seed, false))
        .find_map(|o| {
            let v = o.violation.clone()?;
            (v.invariant == "pairing").then_some((o, v))
        })
        .expect("a pairing failure among seeds 0..100");
    let request = outcome
        .last_request
        .as_ref()
        .expect("the request at the violation");
    let report = check_reader(
        "exported.json",
        Cursor::new(request_body(request).into_bytes()),
        None,
    )
    .expect("readable");
    let first = report.findings.of("pairing")[0];
    // The simulator says "request op#N would be rejected: <the HistoryError>"; check
    // says the HistoryError itself.
    let (_, said) = violation
        .message
        .split_once("would be rejected: ")
        .expect("the pairing checker's wording");
    assert_eq!(first.detail, said);
}

#[test]
fn the_reference_engines_requests_give_check_no_violation() {
    let mut checked = 0;
    for seed in 0..40 {
        let outcome = run_seed(&Reference, seed, false);
        assert!(outcome.violation.is_none(), "seed {seed}");
        let Some(request) = &outcome.last_request else {
            continue;
        };
        let report = check_reader(
            &format!("seed-{seed}.json"),
            Cursor::new(request_body(request).into_bytes()),
            None,
        )
        .expect("readable");
        let violations: Vec<_> = report
            .findings
            .kept
            .iter()
            .filter(|f| f.severity.as_str() == "violation")
            .collect();
        assert!(violations.is_empty(), "seed {seed}: {violations:?}");
        checked += 1;
    }
    assert!(checked > 30, "{checked} requests checked");
}

#[test]
fn exporting_writes_the_request_body_atomically_and_says_where() {
    let dir = scratch("check_export_body");
    let canary = Canary(Bug::CancelOrphansToolUse);
    let outcome = run_seed(&canary, 32, false);
    let path = dir.join("t.json");
    let n = turnsim::testing::check::export::export_transcript(&outcome, &path).expect("writes");
    let text = std::fs::read_to_string(&path).expect("reads");
    let body: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let keys: Vec<&String> = body.as_object().expect("an object").keys().collect();
    assert_eq!(keys, vec!["system", "tools", "messages"]);
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(n));
    // No temporary file is left next to it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("lists")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().to_string()))
        .collect();
    assert_eq!(names, vec!["t.json".to_string()]);
}
