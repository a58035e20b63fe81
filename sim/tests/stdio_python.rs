//! The Python adapter's example engine (adapters/python) through engine protocol v1:
//! it passes the simulator's invariants, and its planted bug is found, replays with
//! the same digest and shrinks. Skipped, with a line on stderr, when `python3` is
//! absent.

mod stdio_support;

use stdio_support::{interpreter, root};
use turnsim::stdio_engine::StdioFactory;

fn engine(python: &str) -> String {
    let script = root().join("adapters/python/example_engine.py");
    format!("{python} '{}'", script.display())
}

#[test]
fn python_example_passes_2000_seeds_or_skips_visibly_without_python3() {
    let test = "python_example_passes_2000_seeds_or_skips_visibly_without_python3";
    let Some(python) = interpreter("python3", test) else {
        return;
    };
    let factory = StdioFactory::new(&engine(&python)).expect("the example says hello");
    assert_eq!(
        turnsim::engine::EngineFactory::name(&factory),
        "python-example"
    );
    let summary = stdio_support::run_seeds(&factory, 0..2000);
    assert_eq!(summary.seeds, 2000);
    // A faithful port takes the same steps and handles as many events as the
    // reference engine on every seed, so the totals agree exactly.
    let reference = stdio_support::run_reference(0..2000);
    assert_eq!(
        (summary.steps, summary.events),
        (reference.steps, reference.events)
    );
    assert_eq!(summary.failures, Vec::new(), "python example failures");
}

#[test]
fn python_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_python3() {
    let test = "python_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_python3";
    let Some(python) = interpreter("python3", test) else {
        return;
    };
    let bug = vec![(
        "TURNSIM_EXAMPLE_BUG".to_string(),
        "orphan_on_cancel".to_string(),
    )];
    let factory = StdioFactory::with_env(&engine(&python), bug).expect("hello");
    stdio_support::find_replay_and_shrink(&factory, "pairing");
}

#[test]
fn python_adapter_unit_tests_pass_or_skip_visibly_without_python3() {
    let test = "python_adapter_unit_tests_pass_or_skip_visibly_without_python3";
    let Some(python) = interpreter("python3", test) else {
        return;
    };
    let out = std::process::Command::new(python)
        .args(["-m", "unittest", "-q"])
        .current_dir(root().join("adapters/python"))
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Ran 10 tests"), "{stderr}");
}

#[test]
fn python_example_runs_each_seed_the_same_twice_or_skips_visibly_without_python3() {
    let test = "python_example_runs_each_seed_the_same_twice_or_skips_visibly_without_python3";
    let Some(program) = interpreter("python3", test) else {
        return;
    };
    let factory = StdioFactory::new(&engine(&program)).expect("the example says hello");
    let summary = stdio_support::run_seeds_twice(&factory, 0..300);
    assert_eq!(summary.failures, Vec::new(), "determinism failures");
}
