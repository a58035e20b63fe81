//! The Python adapter's example engine (adapters/python) through engine protocol v1:
//! it passes the simulator's invariants, and its planted bug is found, replays with
//! the same digest and shrinks. Skipped, with a line on stderr, when `python3` is
//! absent. The claims themselves are in stdio_support/ports.rs, shared with Node.

use crate::stdio_support;

use stdio_support::ports::Port;

const PYTHON: Port = Port {
    interpreter: "python3",
    script: "adapters/python/example_engine.py",
    name: "python-example",
    unit_test_args: &["-m", "unittest", "-q"],
    unit_test_summary: "Ran 17 tests",
};

#[test]
fn python_example_passes_2000_seeds_or_skips_visibly_without_python3() {
    PYTHON.passes_2000_seeds_like_the_reference(
        "python_example_passes_2000_seeds_or_skips_visibly_without_python3",
    );
}

#[test]
fn python_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_python3() {
    PYTHON.planted_bug_fails_replays_and_shrinks(
        "python_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_python3",
    );
}

#[test]
fn python_adapter_unit_tests_pass_or_skip_visibly_without_python3() {
    PYTHON.unit_tests_pass("python_adapter_unit_tests_pass_or_skip_visibly_without_python3");
}

#[test]
fn python_example_runs_each_seed_the_same_twice_or_skips_visibly_without_python3() {
    PYTHON.runs_each_seed_the_same_twice(
        "python_example_runs_each_seed_the_same_twice_or_skips_visibly_without_python3",
    );
}
