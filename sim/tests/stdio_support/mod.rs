//! Shared by the `stdio_*` tests: finding the engines they start, and skipping with a
//! visible reason when an interpreter is absent.

#![allow(dead_code)]

pub mod ports;

use std::path::{Path, PathBuf};
use std::process::Command;
use turnsim::stdio_engine::StdioFactory;
use turnsim::{Batch, Summary, run_batch};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("sim/ has a parent")
        .to_path_buf()
}

/// The `stdio_reference` example binary of this test's profile, built if missing
/// (`cargo test --test all` builds no examples).
pub fn stdio_reference() -> String {
    let exe = std::env::current_exe().expect("the test knows its path");
    // target/<profile>/deps/<test> → target/<profile>/examples/stdio_reference
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps");
    let bin = profile_dir.join("examples").join("stdio_reference");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "turnsim", "--example", "stdio_reference"]);
        if profile_dir.ends_with("release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo runs");
        assert!(
            status.success(),
            "building the stdio_reference example failed"
        );
    }
    bin.to_string_lossy().into_owned()
}

/// `program` when it runs (`--version` succeeds); otherwise prints why the calling
/// test is skipped, on stderr even when output is captured, and returns `None`.
pub fn interpreter(program: &str, test: &str) -> Option<String> {
    match Command::new(program).arg("--version").output() {
        Ok(o) if o.status.success() => Some(program.to_string()),
        _ => {
            // Straight to the process's stderr: `eprintln!` would be captured by the
            // test harness and never shown for a test that passes.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: `{program}` is not installed or does not run"
            );
            None
        }
    }
}

/// Runs `seeds` on the in-process reference engine with two jobs.
pub fn run_reference(seeds: std::ops::Range<u64>) -> Summary {
    run_batch(&Batch {
        factory: &turnsim::Reference,
        seeds: seeds.collect(),
        jobs: 2,
        check_determinism: false,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("the batch runs")
    .0
}

/// Runs `seeds` on `factory` with two jobs.
pub fn run_seeds(factory: &StdioFactory, seeds: std::ops::Range<u64>) -> Summary {
    run_batch_of(factory, seeds, false)
}

/// Runs every seed of `seeds` twice on `factory` (two jobs, so the processes serve
/// the seeds in no fixed order) and checks the two runs agree step by step.
pub fn run_seeds_twice(factory: &StdioFactory, seeds: std::ops::Range<u64>) -> Summary {
    run_batch_of(factory, seeds, true)
}

fn run_batch_of(factory: &StdioFactory, seeds: std::ops::Range<u64>, twice: bool) -> Summary {
    run_batch(&Batch {
        factory,
        seeds: seeds.collect(),
        jobs: 2,
        check_determinism: twice,
        stop: &|| false,
        progress: &|_, _| {},
    })
    .expect("the batch runs")
    .0
}

/// Finds the first failing seed below 500, checks it fails `invariant`, replays it as
/// a scenario with the same digest, and shrinks it to a scenario that still fails
/// the same way with no more decisions.
pub fn find_replay_and_shrink(factory: &StdioFactory, invariant: &str) {
    use turnsim::shrink;
    use turnsim::{Expectation, Scenario};
    use turnsim::{run_scenario, run_seed};
    let failing = (0..500)
        .map(|seed| run_seed(factory, seed, false))
        .find(|o| o.violation.is_some())
        .expect("the planted bug is found within 500 seeds");
    let v = failing.violation.clone().expect("a violation");
    assert_eq!(v.invariant, invariant, "{}", v.message);
    let mut scenario = Scenario::new(
        turnsim::SimOptions::from_seed(failing.seed),
        Expectation::Fail {
            invariant: v.invariant,
            step: v.step,
        },
    );
    scenario.engine = turnsim::EngineFactory::name(factory).to_string();
    scenario.decisions = failing.decisions.clone();
    let replayed = run_scenario(factory, &scenario, false);
    assert_eq!(replayed.digest, failing.digest, "replay digest");
    assert_eq!(replayed.violation, failing.violation);
    let shrunk = shrink(factory, &scenario, 300).expect("shrinks");
    eprintln!(
        "seed {} fails {invariant}; shrunk from {} decisions ({} steps) to {} ({} steps) in {} runs",
        failing.seed,
        shrunk.decisions_before,
        shrunk.steps_before,
        shrunk.decisions_after,
        shrunk.steps_after,
        shrunk.runs
    );
    assert!(
        shrunk.decisions_after < shrunk.decisions_before,
        "shrinking removed decisions"
    );
    let again = run_scenario(factory, &shrunk.scenario, false);
    assert_eq!(
        again.violation.map(|v| v.invariant.name()),
        Some(invariant),
        "the shrunk scenario fails the same invariant"
    );
}
