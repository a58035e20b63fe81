//! Every scenario in `scenarios/` replays as it expects: the same outcome (a pass, or
//! the same invariant at the same step) and the same trace digest.

use std::path::PathBuf;
use turnsim::cli::factory;
use turnsim::load_scenario;
use turnsim::{matches_expectation, run_scenario};

fn scenario_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_committed_scenario_replays_as_it_expects() {
    let files = scenario_files();
    assert!(
        files.len() >= 12 + 15,
        "one per invariant and per fault kind: {files:?}"
    );
    let mut problems = Vec::new();
    for file in &files {
        let scenario = load_scenario(file).unwrap_or_else(|e| panic!("{e}"));
        let factory =
            factory(&scenario.engine).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let outcome = run_scenario(&*factory, &scenario, false);
        if let Err(e) = matches_expectation(&scenario.expect, &outcome) {
            problems.push(format!("{}: {e}", file.display()));
        }
        if scenario.trace_digest.as_deref() != Some(outcome.digest.as_str()) {
            problems.push(format!(
                "{}: trace digest {} differs from the recorded {:?}",
                file.display(),
                outcome.digest,
                scenario.trace_digest
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn there_is_a_scenario_for_every_invariant_and_every_fault_kind() {
    let names: Vec<String> = scenario_files()
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    for inv in turnsim::testing::checkers::INVARIANTS {
        if inv == "engine_panic" {
            continue;
        }
        assert!(names.contains(&format!("invariant-{inv}.json")), "{inv}");
    }
    for kind in turnsim::FaultKind::ALL {
        assert!(
            names.contains(&format!("fault-{}.json", kind.name())),
            "{}",
            kind.name()
        );
    }
}
