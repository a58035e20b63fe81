//! The Node adapter's example engine (adapters/node) through engine protocol v1:
//! it passes the simulator's invariants, and its planted bug is found, replays with
//! the same digest and shrinks. Skipped, with a line on stderr, when `node` is
//! absent. The claims themselves are in stdio_support/ports.rs, shared with Python.

use crate::stdio_support;

use stdio_support::ports::Port;

const NODE: Port = Port {
    interpreter: "node",
    script: "adapters/node/example_engine.mjs",
    name: "node-example",
    unit_test_args: &["--test"],
    unit_test_summary: "# pass 14\n# fail 0",
};

#[test]
fn node_example_passes_2000_seeds_or_skips_visibly_without_node() {
    NODE.passes_2000_seeds_like_the_reference(
        "node_example_passes_2000_seeds_or_skips_visibly_without_node",
    );
}

#[test]
fn node_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_node() {
    NODE.planted_bug_fails_replays_and_shrinks(
        "node_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_node",
    );
}

#[test]
fn node_adapter_unit_tests_pass_or_skip_visibly_without_node() {
    NODE.unit_tests_pass("node_adapter_unit_tests_pass_or_skip_visibly_without_node");
}

#[test]
fn node_example_runs_each_seed_the_same_twice_or_skips_visibly_without_node() {
    NODE.runs_each_seed_the_same_twice(
        "node_example_runs_each_seed_the_same_twice_or_skips_visibly_without_node",
    );
}
