//! The five canaries' pinned scenarios shrink to at most 12 steps, and the shrunk file
//! fails exactly as it reports.

use turnsim::load_scenario;
use turnsim::testing::shrink::story;
use turnsim::{Budget, shrink_with};
use turnsim::{matches_expectation, run_scenario};

/// The five canaries issue 12 holds to this bound; the later canaries' scenarios are
/// replayed by `scenarios.rs` and shrunk by `canaries.rs`.
const FIVE: [&str; 5] = [
    "cancel_orphans_tool_use",
    "marker_twice",
    "restart_redispatches",
    "stale_completion_applied",
    "tail_on_tool_result",
];

#[test]
fn every_canary_shrinks_to_at_most_12_steps() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut seen = 0;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| FIVE.iter().any(|c| n == format!("canary-{c}.json")))
        })
        .collect();
    names.sort();
    for path in names {
        let scenario = load_scenario(&path).expect("the canary scenario loads");
        let factory = turnsim::cli::factory(&scenario.engine).expect("a canary engine");
        let shrunk = shrink_with(&*factory, &scenario, Budget::replays(20_000)).expect("shrinks");
        let out = run_scenario(&*factory, &shrunk.scenario, true);
        assert_eq!(matches_expectation(&shrunk.scenario.expect, &out), Ok(()));
        assert!(
            shrunk.steps_after <= 12,
            "{}: {} -> {} steps:\n{}",
            path.display(),
            shrunk.steps_before,
            shrunk.steps_after,
            story::story(&out).join("\n")
        );
        seen += 1;
    }
    assert_eq!(seen, 5);
}
