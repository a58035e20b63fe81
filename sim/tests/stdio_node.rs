//! The Node adapter's example engine (adapters/node) through engine protocol v1:
//! it passes the simulator's invariants, and its planted bug is found, replays with
//! the same digest and shrinks. Skipped, with a line on stderr, when `node` is
//! absent.

mod stdio_support;

use stdio_support::{interpreter, root};
use turnsim::stdio_engine::StdioFactory;

fn engine(node: &str) -> String {
    let script = root().join("adapters/node/example_engine.mjs");
    format!("{node} '{}'", script.display())
}

#[test]
fn node_example_passes_2000_seeds_or_skips_visibly_without_node() {
    let test = "node_example_passes_2000_seeds_or_skips_visibly_without_node";
    let Some(node) = interpreter("node", test) else {
        return;
    };
    let factory = StdioFactory::new(&engine(&node)).expect("the example says hello");
    assert_eq!(
        turnsim::engine::EngineFactory::name(&factory),
        "node-example"
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
    assert_eq!(summary.failures, Vec::new(), "node example failures");
}

#[test]
fn node_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_node() {
    let test = "node_planted_bug_fails_replays_and_shrinks_or_skips_visibly_without_node";
    let Some(node) = interpreter("node", test) else {
        return;
    };
    let bug = vec![(
        "TURNSIM_EXAMPLE_BUG".to_string(),
        "orphan_on_cancel".to_string(),
    )];
    let factory = StdioFactory::with_env(&engine(&node), bug).expect("hello");
    stdio_support::find_replay_and_shrink(&factory, "pairing");
}

#[test]
fn node_adapter_unit_tests_pass_or_skip_visibly_without_node() {
    let test = "node_adapter_unit_tests_pass_or_skip_visibly_without_node";
    let Some(node) = interpreter("node", test) else {
        return;
    };
    let out = std::process::Command::new(node)
        .arg("--test")
        .current_dir(root().join("adapters/node"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("# pass 11\n# fail 0"), "{stdout}");
}

#[test]
fn node_example_runs_each_seed_the_same_twice_or_skips_visibly_without_node() {
    let test = "node_example_runs_each_seed_the_same_twice_or_skips_visibly_without_node";
    let Some(program) = interpreter("node", test) else {
        return;
    };
    let factory = StdioFactory::new(&engine(&program)).expect("the example says hello");
    let summary = stdio_support::run_seeds_twice(&factory, 0..300);
    assert_eq!(summary.failures, Vec::new(), "determinism failures");
}
